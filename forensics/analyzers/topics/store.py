"""What a topic report keeps for the next one: the corpus state and every conversation's verdicts (issue 28).

A report on an unchanged warehouse used to redo everything but the tokenizing: the corpus topic model's fit, the
document frequencies, and the signals and inference of every judged message, three quarters of a full report.
Two derived tables (``forensics.warehouse.derived``) now keep them:

- ``topic_corpus`` (one row): the corpus state every verdict depends on, the message count and document
  frequencies (the IDF) and the fitted topic model, with the input they were computed from (each conversation's
  fingerprint and judged-role message count) and its identity (a digest of that input and of the settings that
  shape it). The state is reused as it is while its input is unchanged; on a warehouse of at least
  ``REUSE_MIN_MESSAGES`` messages it is also kept while the messages of conversations added, changed or removed
  since its fit are at most ``REFIT_SHARE`` of the messages it was fitted on (a day of new logs does not move a
  corpus's word statistics). A smaller warehouse refits on any change: there a fit costs about a second, and a
  report equals a report of a fresh warehouse.
- ``topic_verdicts``: per conversation, its judged messages' verdicts (topic, confidence, score, raw marker,
  drivers, segment label, topic keywords; a row without a position says the conversation was judged, for one
  with no judged message), keyed by the conversation's fingerprint and by a digest of the settings that shape
  them (tokenizer, roles, both models' weights and operating point, cues, lexicon, minimum confidence, embedding)
  , of the corpus state's identity and of the package's code (``reuse.code_digest``: another release or an edited
  judge judges again). A report judges only the conversations without a valid row; a refit corpus state changes the
  key, so every conversation is judged again.

Everything here can be recomputed from the imported rows: a table of another shape is dropped and rebuilt.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl

from forensics.analyzers.topics.corpus import Chain, CorpusTopics
from forensics.analyzers.topics.infer import Judged
from forensics.kernel.arrow import relation_frame
from forensics.warehouse import derived

CORPUS_TABLE = "topic_corpus"
VERDICT_TABLE = "topic_verdicts"
REUSE_MIN_MESSAGES = 40_000  # below this, any change to the corpus refits its state (cheap there; exact)
REFIT_SHARE = 0.05  # above it, the corpus state is kept while the messages that moved are at most this share
VERSION = 8  # bump when what a verdict or the corpus state holds changes: every stored row is recomputed (2: issue 43
# round 6: a marker across a content-free turn, pasted output, short work conversations; 3: a booking of the thing in
# play and a retried search continue, shift6; 4: a request to run or check the work continues, open chat is not
# judged (its reason in the header row's topic), shift7; 5: a marker across a content-free turn in every user-mode
# conversation, woz7; 6: a reply that found nothing said with "n't" ("there isn't one") is read as such, and a search
# asked for again after "nothing found; anything else?" continues, found7; 7: a question about the work at hand
# continues (in the work's own words), a check naming a new file is judged, pk8 re-landed as topic9; 8: a turn after
# which the tool calls touch only what they touched just before it continues where the judge is unsure, topics12)

VERDICT_SCHEMA = pl.Schema(
    {
        "conversation_id": pl.String(),
        "fingerprint": pl.String(),
        "key": pl.String(),
        "position": pl.Int32(),
        "topic": pl.String(),
        "confidence": pl.Float64(),
        "score": pl.Float64(),
        "marker": pl.Boolean(),
        "drivers": pl.List(pl.String),
        "label": pl.List(pl.String),
        "keywords": pl.List(pl.String),
    }
)
CORPUS_SCHEMA = pl.Schema(
    {
        "key": pl.String(),
        "identity": pl.String(),
        "conversations": pl.List(pl.String),
        "fingerprints": pl.List(pl.String),
        "sizes": pl.List(pl.Int64),
        "messages": pl.Int64(),
        "terms": pl.List(pl.String),
        "frequencies": pl.List(pl.Int64),
        "model": pl.Binary(),
    }
)


@dataclass(frozen=True)
class CorpusState:
    """What every verdict depends on beyond its own conversation: the IDF's counts and the corpus topic model."""

    messages: int
    df: Counter[str]
    model: CorpusTopics | None
    identity: str
    refitted: bool  # computed by this report (False: read back from the warehouse)


@dataclass
class Verdicts:
    """One conversation's result: its judged messages, keywords per topic, segment labels, and (when the label
    evaluation asks) its judged messages' tokens."""

    conversation_id: str
    judged: list[Judged]
    keywords: dict[str, list[str]]
    labels: dict[int, list[str]]  # judged position -> its segment's label terms
    tokens: dict[int, list[str]] | None = None
    declined: str | None = None  # why it is not judged (``work.declines``: "open chat"), kept in its header row


def digest(value: Any) -> str:  # noqa: ANN401 - settings: a dataclass (nested ones too) or JSON-able values
    """A stable digest of settings: sets sorted, so it is the same on every run whatever the string hashing."""

    def default(o: Any) -> Any:  # noqa: ANN401
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        raise TypeError(type(o).__name__)

    plain = asdict(value) if is_dataclass(value) and not isinstance(value, type) else value
    raw = orjson.dumps(plain, default=default, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(raw + f"|v{VERSION}".encode(), digest_size=16).hexdigest()


def corpus_state(
    con: duckdb.DuckDBPyConnection,
    key: str,
    table: str,
    count: Callable[[], tuple[int, Counter[str]]],
    fit: Callable[[], CorpusTopics | None],
) -> CorpusState:
    """The corpus state for the terms in ``table`` under ``key``: the stored one when its input is unchanged, or
    moved by at most REFIT_SHARE on a large warehouse; else ``count`` and ``fit`` anew, stored for next time."""
    rows = con.execute(f"SELECT conversation_id, fingerprint, count(*) FROM {table} GROUP BY ALL ORDER BY 1").fetchall()
    now = {cid: (fp, int(n)) for cid, fp, n in rows}
    identity = digest({"key": key, "input": rows})
    stored = _stored_state(con, key)
    if stored is not None:
        state, before = stored
        if state.identity == identity or _close(before, now):
            return state
    n, df = count()
    model = fit()
    derived.replace_rows(
        con,
        CORPUS_TABLE,
        pl.DataFrame(
            {
                "key": [key],
                "identity": [identity],
                "conversations": [list(now)],
                "fingerprints": [[fp for fp, _ in now.values()]],
                "sizes": [[k for _, k in now.values()]],
                "messages": [n],
                "terms": [list(df)],
                "frequencies": [list(df.values())],
                "model": [_dump(model)],
            },
            schema=CORPUS_SCHEMA,
        ),
        "true",
    )
    return CorpusState(n, df, model, identity, refitted=True)


def _close(before: dict[str, tuple[str | None, int]], now: dict[str, tuple[str | None, int]]) -> bool:
    """The input moved by at most REFIT_SHARE of the messages the state was fitted on, on a large warehouse."""
    total = sum(n for _, n in before.values())
    if total < REUSE_MIN_MESSAGES:
        return False
    moved = sum(n for cid, (fp, n) in now.items() if cid not in before or before[cid][0] != fp)
    moved += sum(n for cid, (fp, n) in before.items() if cid not in now or now[cid][0] != fp)
    return moved <= REFIT_SHARE * total


def _stored_state(
    con: duckdb.DuckDBPyConnection,
    key: str,
) -> tuple[CorpusState, dict[str, tuple[str | None, int]]] | None:
    if not derived.columns(con, CORPUS_TABLE):
        return None
    try:
        rows = con.execute(
            f"SELECT identity, conversations, fingerprints, sizes, messages, terms, frequencies, "
            f"model FROM {CORPUS_TABLE} WHERE key = ?",
            [key],
        ).fetchall()
    except duckdb.BinderException:  # written by another version: fitted anew (and the table rebuilt)
        return None
    if not rows:
        return None
    identity, cids, fps, sizes, n, terms, freqs, model = rows[0]
    state = CorpusState(int(n), Counter(dict(zip(terms, freqs))), _load(model), identity, refitted=False)
    return state, {c: (f, int(k)) for c, f, k in zip(cids, fps, sizes)}


def _dump(model: CorpusTopics | None) -> bytes | None:
    if model is None:
        return None
    arrays: dict[str, Any] = {
        "vocabulary": np.array(sorted(model.vocabulary, key=model.vocabulary.__getitem__)),
        "units": np.array(model.units),
    }
    for i, c in enumerate(model.chains):
        arrays.update({f"{k}{i}": getattr(c, k) for k in ("log_emission", "start", "transition", "same")})
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _load(raw: bytes | None) -> CorpusTopics | None:
    if raw is None:
        return None
    z = np.load(io.BytesIO(raw), allow_pickle=False)
    chains = tuple(
        Chain(*(z[f"{k}{i}"] for k in ("log_emission", "start", "transition", "same")))
        for i in range(sum(1 for f in z.files if f.startswith("same")))
    )
    return CorpusTopics({str(w): i for i, w in enumerate(z["vocabulary"])}, chains, int(z["units"]))


def valid(con: duckdb.DuckDBPyConnection, key: str) -> list[str]:
    """Drop the verdicts of another key or fingerprint; the conversations whose verdicts are left, in order."""
    derived.append_rows(
        con, VERDICT_TABLE, pl.DataFrame(schema=VERDICT_SCHEMA)
    )  # the table, rebuilt if of another shape
    con.execute(
        f"DELETE FROM {VERDICT_TABLE} v WHERE key <> ? OR NOT EXISTS (SELECT 1 FROM conversations c WHERE "
        "c.conversation_id = v.conversation_id AND c.fingerprint IS NOT DISTINCT FROM v.fingerprint)",
        [key],
    )
    return [c for (c,) in con.execute(f"SELECT DISTINCT conversation_id FROM {VERDICT_TABLE} ORDER BY 1").fetchall()]


def save(
    con: duckdb.DuckDBPyConnection, key: str, fingerprints: dict[str, str | None], verdicts: Iterable[Verdicts]
) -> None:
    """Store conversations' verdicts (their raw markers: ``topic.marker_enabled`` applies when they are read)."""
    cols: dict[str, list[Any]] = {name: [] for name in VERDICT_SCHEMA}
    for v in verdicts:
        rows: Sequence[tuple[Any, ...]] = [(None, v.declined, None, None, None, [], None, None)] + [
            (
                j.position,
                j.topic,
                j.confidence,
                j.score,
                j.marker,
                j.drivers,
                v.labels.get(j.position),
                v.keywords.get(j.topic) if j.topic else None,
            )
            for j in v.judged
        ]
        for r in rows:
            for name, value in zip(list(VERDICT_SCHEMA), (v.conversation_id, fingerprints[v.conversation_id], key, *r)):
                cols[name].append(value)
    derived.append_rows(con, VERDICT_TABLE, pl.DataFrame(cols, schema=VERDICT_SCHEMA))


def load(con: duckdb.DuckDBPyConnection, ids: list[str], terms: str | None = None) -> list[Verdicts]:
    """The stored verdicts of ``ids`` (valid ones: see ``valid``), in conversation order; with the judged
    messages' tokens read from the ``terms`` table when one is named."""
    rows = relation_frame(
        con.sql(
            f"SELECT conversation_id, position, topic, confidence, score, marker, drivers, label, keywords "
            f"FROM {VERDICT_TABLE} WHERE conversation_id IN (SELECT unnest($ids::VARCHAR[])) "
            "ORDER BY conversation_id, position NULLS FIRST",
            params={"ids": ids},
        )
    )
    col = {name: rows[name].to_list() for name in rows.columns}
    out: list[Verdicts] = []
    for i, cid in enumerate(col["conversation_id"]):
        pos = col["position"][i]
        if pos is None:
            out.append(Verdicts(cid, [], {}, {}, declined=col["topic"][i]))
            continue
        cur, topic = out[-1], col["topic"][i]
        cur.judged.append(
            Judged(pos, topic, col["confidence"][i], col["score"][i], col["marker"][i], col["drivers"][i])
        )
        if col["label"][i] is not None:
            cur.labels[pos] = col["label"][i]
        if topic is not None and col["keywords"][i] is not None:
            cur.keywords[topic] = col["keywords"][i]
    if terms is not None:
        tokens: dict[str, dict[int, list[str]]] = {v.conversation_id: {} for v in out}
        for cid, pos, toks in con.execute(
            f"SELECT v.conversation_id, v.position, t.tokens FROM {VERDICT_TABLE} v JOIN {terms} t USING "
            "(conversation_id, position) WHERE v.conversation_id IN (SELECT unnest($ids::VARCHAR[])) "
            "ORDER BY 1, 2",
            {"ids": ids},
        ).fetchall():
            tokens[cid][pos] = toks
        for v in out:
            v.tokens = tokens[v.conversation_id]
    return out
