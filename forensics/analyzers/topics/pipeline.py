"""The topic analysis over a whole warehouse: each message tokenized once and kept, both cores, bounded memory.

Tokenizing (jieba, and its HMM tagger for names) was nine tenths of the analysis: redone by every report,
it made a million-message report take minutes and hold every message in memory. Now the first report
computes the terms of the messages that lack them (``signals.prepare``) on both cores and keeps them in the
warehouse table ``message_terms``; later reports, and a report after an incremental ingest, read them back
and tokenize only what is new. A row is valid while its conversation keeps its fingerprint (a re-imported,
changed conversation is recomputed) and its ``key`` (tokenizer mode, judged roles, TERMS_VERSION) is the
current one. The inference then runs conversation chunks on both cores with the warehouse's IDF and the corpus topic model
(``corpus.py``, fitted once per report on a sample of the stored words), and only the per-message verdicts
come back.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.reuse import code_digest
from forensics.analyzers.topics import corpus, store, work
from forensics.analyzers.topics.corpus import CorpusTopics
from forensics.analyzers.topics.infer import infer, segment_labels, topic_keywords
from forensics.analyzers.topics.model import Model
from forensics.analyzers.topics.signals import CLOSING_CHARS, Idf, Message, features, prepare
from forensics.analyzers.topics.store import Verdicts
from forensics.kernel.arrow import relation_frame, stream, string_lists
from forensics.kernel.workers import default_workers, run_ordered
from forensics.text import engine
from forensics.text.cues import Cues
from forensics.text.prose import unwrapped
from forensics.text.tokenizer import SEGMENTER

TABLE = "message_terms"
# this report's rows of ``messages_sql`` for the conversations whose terms it cut (``fill``), kept until its judge pass
# has read them: a first report ran the query twice over every conversation, once to cut the terms and once to judge
ROWS = "topic_rows"
TERMS_VERSION = 7  # bump when what prepare derives changes (3: cut from scrubbed text; 4: person turns only; 5: no
# prompt logs; 6: an opening sentence must be closed to open lightly; 7: a long reply keeps its close): every
# cached row is recomputed
CONTEXT_CHARS = 2000  # of an assistant message's text: its gist and its close (CLOSING_CHARS: where it asks or
# proposes what next); long answers would dominate the profile
TARGET_KEYS = ("path", "file_path", "file", "query", "pattern", "command", "url")
# per task: big enough that pickling is cheap beside the work, small for memory (each worker holds a chunk's tokens
# as Python lists; 10,000 made the two workers and the frames in flight the first report's peak: docs/scale.md)
CHUNK_MESSAGES = 5_000
AHEAD = 1  # tasks in flight per worker (``run_ordered``): each holds its chunk's frame and its result here
PARALLEL_MIN_MESSAGES = 40_000  # below this, starting worker processes costs more than it saves
_log = logging.getLogger("forensics.report")  # the report's progress lines (shown on a terminal)
# A message that is a slash command (aider logs /add, /clear, /ls as "#### /add ..." user lines; any tool that
# logs its commands as user text) or aider's "!cmd" shell escape, except the commands that carry a message to
# the model (aider's /ask, /code, /architect, /context).
HANDOFF_CHARS = 200  # a repeated reply this long is a hand-off; "hi" answered with "hi" is people talking
TOOL_COMMAND = r"^\s*(?:/[a-z][\w-]*(?:\s|$)|!\S)"
TOOL_MESSAGE = r"^\s*/(?:ask|code|architect|context)\s+\S"  # RE2 (DuckDB): no look-ahead, so a second pattern
LISTS = ("tokens", "names", "target_tokens", "words", "keywords")
COLUMNS = (
    "conversation_id VARCHAR, fingerprint VARCHAR, position INTEGER, key VARCHAR, "
    + ", ".join(f"{c} VARCHAR[]" for c in LISTS)
    + ", opens_lightly BOOLEAN"
)


def messages_sql(where: str = "", rows: str = "") -> str:
    """The assistant messages and the person's messages (docs/definitions.md#whose-turn-it-is: ``origin = 'person'``) of the main paths,
    with their tool calls' targets; ``where`` (an SQL condition on ``conversation_id``) restricts both.

    What the harness wrote on the user role (continue prompts, notices, environment context) and tool output
    carried there are no one's request: never judged, never a cue, never context. Nor is a user message that
    repeats the assistant's reply before it word for word: aider's architect mode hands the architect's reply
    to its editor model as a user message (``ArchitectCoder.reply_completed``), the person did not type it.
    Nor a command to the tool itself (TOOL_COMMAND): the person drives the tool, they do not talk about a
    subject. A person's message is read by its own words (``person_text``): a template's body or the IDE
    context before a prompt is no cue. Nor a prompt log (Gemini CLI's logs.json, Codex's and Claude Code's history.jsonl, Cursor's prompt
    history: the person's prompts of many sessions without one reply): with no answer between two prompts there
    is no conversation whose topic could switch, so nothing of it is judged."""
    cond = f"AND {where}" if where else ""
    mcond = cond + (f" AND {rows}" if rows else "")  # ``rows``: a condition on the messages' row ids alone
    return f"""
WITH targets AS (  -- per call its targets in TARGET_KEYS order, calls in order: a deterministic list
    SELECT conversation_id, position, list(forensics_scrubbed(v) ORDER BY call_index, k) AS targets
    FROM (SELECT conversation_id, position, call_index, unnest(range(1, {len(TARGET_KEYS) + 1})) AS k,
                 unnest(json_extract_string(arguments, [{", ".join(f"'$.{k}'" for k in TARGET_KEYS)}])) AS v
          FROM tool_calls WHERE json_valid(arguments) AND position IS NOT NULL {cond}) t
    WHERE v IS NOT NULL
    GROUP BY ALL)
SELECT m.conversation_id, m.position, m.native_id, m.role,
       CASE WHEN m.role = 'assistant' AND length(m.scrubbed) > {CONTEXT_CHARS}
            THEN left(m.scrubbed, {CONTEXT_CHARS - CLOSING_CHARS}) || chr(10) || right(m.scrubbed, {CLOSING_CHARS})
            ELSE m.scrubbed END AS content,
       coalesce(t.targets, []) AS targets
FROM (SELECT *, forensics_scrubbed(CASE WHEN origin = 'person' THEN person_text ELSE content END) AS scrubbed,
             last_value(CASE WHEN role = 'assistant' THEN trim(content) END IGNORE NULLS) OVER (
          PARTITION BY conversation_id ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reply
      FROM messages WHERE on_main_path AND role IN ('user', 'assistant') {mcond}) m
LEFT JOIN targets t USING (conversation_id, position)
WHERE m.conversation_id IN (SELECT conversation_id FROM messages WHERE role = 'assistant' AND on_main_path {mcond})
  AND (m.role = 'assistant' OR (m.origin = 'person' AND m.person_text <> ''
                               AND (length(trim(m.content)) < {HANDOFF_CHARS} OR trim(m.content) IS DISTINCT FROM m.reply)
                               AND (NOT regexp_matches(m.person_text, '{TOOL_COMMAND}')
                                    OR regexp_matches(m.person_text, '{TOOL_MESSAGE}'))))
ORDER BY m.conversation_id, m.position
"""


@dataclass(frozen=True)
class Settings:
    """What a worker needs to judge a chunk of conversations (sent once per task: small and picklable)."""

    mode: str
    roles: frozenset[str]
    model: Model  # the judging mode's model, with the corpus topic model's signals
    lexical: Model  # the same mode fitted without them: for a corpus too small for its own topic model
    cues: Cues
    lexicon: Mapping[str, list[str]]
    min_confidence: float
    keep_tokens: bool  # return the judged messages' tokens (the label evaluation's TF-IDF baseline needs them)
    embed: bool = False  # the model uses sentence embeddings (the optional extra): encode each chunk's texts
    work: Model | None = None  # the request scorer for conversations where the assistant works (``work.py``)


@dataclass
class Analysis:
    """A whole warehouse's analysis: the corpus topic model it used (None: too small for one), every
    conversation's verdicts in conversation_id order (the ones not stored are computed as they are read), and how
    many were read back (``store``)."""

    corpus: CorpusTopics | None
    verdicts: Iterator[Verdicts]
    conversations: int = 0
    reused: int = 0
    refitted: bool = True  # the corpus state was computed by this report (not read back)


def analyze(con: duckdb.DuckDBPyConnection, s: Settings, workers: int | None = None) -> Analysis:
    """Every conversation's verdicts: the stored ones of unchanged conversations under the same settings and
    corpus state, the others computed on both cores and stored."""
    workers = workers or default_workers()
    rows = Kept()
    state = _prepared(con, s, workers, rows)
    # the code too (``reuse.code_digest``, as every kept result): verdicts judged by another release, or by an edited
    # judge, are judged again; the corpus state is kept across code (its terms depend on the segmenter alone)
    key = store.digest({"settings": replace(s, keep_tokens=False), "corpus": state.identity, "code": code_digest()})
    kept = store.valid(con, key)
    todo = _chunks(
        con,
        f"SELECT conversation_id, count(*) FROM {TABLE} WHERE conversation_id NOT IN "
        "(SELECT unnest($ids::VARCHAR[])) GROUP BY 1 ORDER BY 1",
        {"ids": kept},
    )
    fingerprints = dict(con.execute("SELECT conversation_id, fingerprint FROM conversations").fetchall())
    reused = store.load(con, kept, TABLE if s.keep_tokens else None)

    def computed() -> Iterator[Verdicts]:
        # the chunks come in the warehouse's row order (``_Chunks``): their verdicts are sorted by conversation once
        # all are judged (the section keeps every one anyway)
        done: list[Verdicts] = []
        tasks = ((_judge, (_chunk_rows(con, chunk, joined=True, kept=rows), s), None) for chunk in todo)
        for _, result, error in run_ordered(
            tasks,
            workers,
            sum(n for _, n in todo.sizes) >= PARALLEL_MIN_MESSAGES,
            init=(_set_state, (state.messages, state.df, state.model)),
            preload=(SEGMENTER, __name__),
            ahead=AHEAD,
        ):
            if error is not None:
                raise error
            store.save(con, key, fingerprints, result)
            done += result
        rows.drop(con)
        done.sort(key=lambda v: v.conversation_id)
        yield from done

    _log.info(
        "%-14s corpus state %s; %d of %d conversations' verdicts reused",
        "topics",
        "fitted" if state.refitted else "reused",
        len(reused),
        len(reused) + len(todo.sizes),
    )
    return Analysis(
        state.model,
        heapq.merge(reused, computed(), key=lambda v: v.conversation_id),
        len(reused) + len(todo.sizes),
        len(reused),
        state.refitted,
    )


def signals(con: duckdb.DuckDBPyConnection, s: Settings) -> Iterator[tuple[str, list[Message], list[Any]]]:
    """Every conversation's messages and their signals (``signals.features``), in this process: what the
    judging model is fitted on (``bench/topics.py --fit``), computed exactly as a report computes it."""
    state = _prepared(con, s, default_workers())
    _set_state(state.messages, state.df, state.model)
    assert _IDF is not None
    chunks = _chunks(con, f"SELECT conversation_id, count(*) FROM {TABLE} GROUP BY 1 ORDER BY 1", by_rows=False)
    for chunk in chunks:
        for cid, msgs in conversation_messages(_chunk_rows(con, chunk, joined=True), s.roles):
            yield cid, msgs, features(msgs, _IDF, s.cues, _CORPUS)


def _prepared(con: duckdb.DuckDBPyConnection, s: Settings, workers: int, rows: Kept | None = None) -> store.CorpusState:
    """Terms stored for every message, then what every worker needs: the message count, the document
    frequencies and the corpus topic model (``store.corpus_state``: read back while its input holds). ``rows``: keep
    the rows read to cut the terms for the judge pass (else none are kept)."""
    key = f"{s.mode}|{','.join(sorted(s.roles))}|v{TERMS_VERSION}|{engine.ENGINE}"  # a new segmenter recomputes
    fill(con, key, s.mode, s.roles, workers, rows)

    def count() -> tuple[int, Counter[str]]:
        n = con.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0]
        return n, Counter(
            dict(
                con.execute(
                    f"SELECT t, count(*) FROM (SELECT unnest(list_distinct(tokens)) AS t FROM {TABLE}) GROUP BY 1"
                ).fetchall()
            )
        )

    return store.corpus_state(con, f"{key}|{store.digest(s.cues)}", TABLE, count, lambda: fit_corpus(con, s.cues))


def fit_corpus(con: duckdb.DuckDBPyConnection, cues: Cues) -> CorpusTopics | None:
    """The corpus's topic model, fitted on the judged messages (their stored words) of a stable sample of
    conversations, on their topical words only (``Cues.topical``: no social or register words, so it learns
    subjects, not how people talk); social-only messages are left out, as the signals leave them out."""
    sizes = con.execute(f"SELECT conversation_id, count(*) FROM {TABLE} WHERE len(words) > 0 GROUP BY 1").fetchall()
    picked, total = [], 0
    for cid, n in sorted(sizes, key=lambda r: corpus.sample_order(r[0])):
        if total >= corpus.FIT_UNITS:
            break
        picked.append(cid)
        total += n
    rows = con.execute(
        f"SELECT conversation_id, words FROM {TABLE} WHERE len(words) > 0 AND conversation_id IN "
        "(SELECT unnest($ids::VARCHAR[])) ORDER BY conversation_id, position",
        {"ids": picked},
    ).fetchall()
    convs: dict[str, list[list[str]]] = {}
    for cid, words in rows:
        if not cues.social_only(words):
            convs.setdefault(cid, []).append(cues.topical(words))
    return corpus.fit(convs.values())


def fill(
    con: duckdb.DuckDBPyConnection, key: str, mode: str, roles: frozenset[str], workers: int, rows: Kept | None = None
) -> None:
    """Compute and store the terms of the messages that lack valid ones (each chunk commits on its own: an
    interrupted report keeps what it finished, whole conversations). ``rows``: keep each chunk's rows of
    ``messages_sql`` there (``Kept``), for the judge pass to read instead of running the query again."""
    have = con.execute(
        "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) FROM "
        "duckdb_columns() WHERE table_name = ? AND schema_name = 'main'",
        [TABLE],
    ).fetchall()[0][0]
    if have is not None and have != COLUMNS:  # written by another version of this cache: start over
        con.execute(f"DROP TABLE {TABLE}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({COLUMNS})")
    con.execute(
        f"DELETE FROM {TABLE} t WHERE key <> ? OR NOT EXISTS (SELECT 1 FROM conversations c WHERE "
        "c.conversation_id = t.conversation_id AND c.fingerprint IS NOT DISTINCT FROM t.fingerprint)",
        [key],
    )
    # a conversation without an assistant message on its main path has no judged rows (``messages_sql``): not
    # left out here, it would be prepared again by every report
    todo = _chunks(
        con,
        "SELECT conversation_id, count(*) FROM messages WHERE on_main_path AND role IN "
        f"('user', 'assistant') AND conversation_id NOT IN (SELECT conversation_id FROM {TABLE}) "
        "AND conversation_id IN (SELECT conversation_id FROM messages WHERE role = 'assistant' AND "
        "on_main_path) GROUP BY 1 ORDER BY 1",
    )
    total = sum(n for _, n in todo.sizes)

    def read(chunk: Chunk) -> pl.DataFrame:
        frame = _chunk_rows(con, chunk, joined=False)
        if rows is not None:
            rows.add(con, frame)
        return frame

    tasks = ((_prepare, (read(chunk), mode, roles), None) for chunk in todo)
    for _, result, error in run_ordered(
        tasks, workers, total >= PARALLEL_MIN_MESSAGES, preload=(SEGMENTER, __name__), ahead=AHEAD
    ):
        if error is not None:
            raise error
        _terms = stream(result)  # noqa: F841 - read by the replacement scan below
        con.execute(
            f"INSERT INTO {TABLE} SELECT t.conversation_id, c.fingerprint, t.position, ?, "
            f"{', '.join(f't.{c}' for c in LISTS)}, t.opens_lightly FROM _terms t "
            "JOIN conversations c USING (conversation_id)",
            [key],
        )


@dataclass(frozen=True)
class Chunk:
    """Conversations judged together, and the range of ``messages`` row ids their rows lie in."""

    ids: list[str]
    first: int
    last: int


class _Chunks:
    """Conversation ids in groups of about CHUNK_MESSAGES messages (a conversation is never split), each with the
    range of row ids its messages lie in: in the order the rows are stored (``by_rows``; a conversation's rows are
    stored together, its id is a hash), so that each chunk's query reads its own range of the table, not all of it
    once per chunk; else in id order."""

    def __init__(self, sizes: list[tuple[str, int]], ranges: dict[str, tuple[int, int]], by_rows: bool) -> None:
        self.sizes = sizes
        self.ranges = ranges
        self.by_rows = by_rows

    def __iter__(self) -> Iterator[Chunk]:
        order = (
            sorted(self.sizes, key=lambda s: (self.ranges.get(s[0], (-1, -1)), s[0])) if self.by_rows else self.sizes
        )
        group: list[str] = []
        count = 0
        for cid, n in order:
            group.append(cid)
            count += n
            if count >= CHUNK_MESSAGES:
                yield self._chunk(group)
                group, count = [], 0
        if group:
            yield self._chunk(group)

    def _chunk(self, ids: list[str]) -> Chunk:
        held = [self.ranges[c] for c in ids if c in self.ranges]  # (none: a conversation without messages)
        return Chunk(ids, min((lo for lo, _ in held), default=0), max((hi for _, hi in held), default=-1))


def _chunks(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None, by_rows: bool = True
) -> _Chunks:
    sizes = [(cid, int(n)) for cid, n in con.execute(sql, params).fetchall()]
    ranges = {
        cid: (int(lo), int(hi))
        for cid, lo, hi in con.execute(
            "SELECT conversation_id, min(rowid), max(rowid) FROM messages WHERE conversation_id IN "
            "(SELECT unnest($ids::VARCHAR[])) GROUP BY 1",
            {"ids": [cid for cid, _ in sizes]},
        ).fetchall()
    }
    return _Chunks(sizes, ranges, by_rows)


class Kept:
    """The rows of ``messages_sql`` a report read to cut terms (``fill``), in the temporary table ROWS, for its judge
    pass: each with its number in the table (``i``, in the order added), each conversation with the range of numbers
    its rows hold. The judge pass reads a chunk's rows there when every conversation of the chunk is kept (a first
    report: all of them), else from ``messages_sql`` as before; the same rows, since the report writes no message."""

    def __init__(self) -> None:
        self.ranges: dict[str, tuple[int, int]] = {}
        self.count = 0

    def add(self, con: duckdb.DuckDBPyConnection, frame: pl.DataFrame) -> None:
        if not self.count:
            con.execute(f"DROP TABLE IF EXISTS {ROWS}")
        if not frame.height:
            return
        _rows = stream(frame.with_row_index("i", offset=self.count))  # noqa: F841 - read by the replacement scan
        if self.count:
            con.execute(f"INSERT INTO {ROWS} SELECT * FROM _rows")
        else:
            con.execute(f"CREATE TEMP TABLE {ROWS} AS SELECT * FROM _rows")
        for cid, lo, hi in (
            frame.with_row_index("i", offset=self.count)
            .group_by("conversation_id", maintain_order=True)
            .agg(pl.col("i").min().alias("lo"), pl.col("i").max().alias("hi"))
            .iter_rows()
        ):
            self.ranges[cid] = (lo, hi)
        self.count += frame.height

    def covers(self, ids: list[str]) -> bool:
        return bool(self.count) and all(c in self.ranges for c in ids)

    def drop(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.count:
            con.execute(f"DROP TABLE IF EXISTS {ROWS}")
        self.ranges, self.count = {}, 0


def _chunk_rows(con: duckdb.DuckDBPyConnection, chunk: Chunk, joined: bool, kept: Kept | None = None) -> pl.DataFrame:
    terms = f"{', '.join(f'k.{c}' for c in LISTS)}, k.opens_lightly"
    if joined and kept is not None and kept.covers(chunk.ids):  # the rows the terms were cut from, kept (``Kept``)
        held = [kept.ranges[c] for c in chunk.ids]
        return relation_frame(
            con.sql(
                f"SELECT q.conversation_id, q.position, q.native_id, q.role, q.content, q.targets, {terms} "
                f"FROM {ROWS} q JOIN {TABLE} k USING (conversation_id, position) WHERE q.i BETWEEN $lo AND $hi AND "
                "q.conversation_id IN (SELECT unnest($ids::VARCHAR[])) ORDER BY q.conversation_id, q.position",
                params={"ids": chunk.ids, "lo": min(lo for lo, _ in held), "hi": max(hi for _, hi in held)},
            )
        )
    sql = messages_sql("conversation_id IN (SELECT unnest($ids::VARCHAR[]))", "rowid BETWEEN $first AND $last")
    if joined:  # with each message's stored terms
        sql = (
            f"SELECT q.*, {terms} FROM ({sql}) q JOIN {TABLE} k "
            "USING (conversation_id, position) ORDER BY q.conversation_id, q.position"
        )
    return relation_frame(con.sql(sql, params={"ids": chunk.ids, "first": chunk.first, "last": chunk.last}))


def conversation_messages(rows: pl.DataFrame, roles: frozenset[str]) -> Iterator[tuple[str, list[Message]]]:
    """The rows of a chunk as each conversation's Messages, in order (columns converted whole: row dicts
    cost a tenth of the inference)."""
    col = {name: rows[name].to_list() for name in rows.columns}
    cached = "tokens" in col
    cid: str | None = None
    msgs: list[Message] = []
    for i, c in enumerate(col["conversation_id"]):
        if c != cid:
            if cid is not None:
                yield cid, msgs
            cid, msgs = c, []
        role = col["role"][i]
        text = col["content"][i] or ""
        m = Message(
            col["position"][i],
            role,
            unwrapped(text) if role == "user" else text,
            role in roles,
            col["targets"][i] or [],
            native=col["native_id"][i],
        )
        if cached:
            m.tokens, m.names, m.target_tokens = col["tokens"][i], set(col["names"][i]), col["target_tokens"][i]
            m.words, m.keywords, m.opens_lightly = col["words"][i], col["keywords"][i], col["opens_lightly"][i]
        msgs.append(m)
    if cid is not None:
        yield cid, msgs


def _prepare(rows: pl.DataFrame, mode: str, roles: frozenset[str]) -> pl.DataFrame:
    """Worker: the terms of a chunk's messages, one row each."""
    out: dict[str, list[Any]] = {"conversation_id": [], "position": [], **{c: [] for c in LISTS}, "opens_lightly": []}
    for cid, msgs in conversation_messages(rows, roles):
        prepare(msgs, mode)
        for m in msgs:
            out["conversation_id"].append(cid)
            out["position"].append(m.position)
            for c, v in zip(LISTS, (m.tokens, sorted(m.names), m.target_tokens, m.words, m.keywords)):
                out[c].append(v)
            out["opens_lightly"].append(m.opens_lightly)
    return pl.DataFrame(
        [
            pl.Series("conversation_id", out["conversation_id"], dtype=pl.String),
            pl.Series("position", out["position"], dtype=pl.Int32),
            *(string_lists(c, out[c]) for c in LISTS),
            pl.Series("opens_lightly", out["opens_lightly"], dtype=pl.Boolean),
        ]
    )


_IDF: Idf | None = None
_CORPUS: CorpusTopics | None = None


def _set_state(n: int, df: Counter[str], model: CorpusTopics | None) -> None:
    """Worker initializer: the warehouse's document frequencies and the corpus topic model, sent once per process."""
    global _IDF, _CORPUS
    _IDF, _CORPUS = Idf.from_counts(n, df), model


def _judge(rows: pl.DataFrame, s: Settings) -> list[Verdicts]:
    """Worker: infer every conversation of a chunk."""
    assert _IDF is not None, "the pool initializer sets the IDF"
    out = []
    convs = list(conversation_messages(rows, s.roles))
    vectors = _vectors(convs) if s.embed else {}
    with corpus.one_thread():
        for cid, msgs in convs:
            model = s.model if _CORPUS is not None else s.lexical
            judged = infer(msgs, _IDF, model, s.cues, _CORPUS, s.lexicon, s.min_confidence, vectors.get(cid), s.work)
            tokens = {m.position: m.tokens for m in msgs if m.judged} if s.keep_tokens else None
            declined = work.declines(msgs) if s.work is not None else None
            out.append(
                Verdicts(
                    cid, judged, topic_keywords(msgs, judged), segment_labels(msgs, judged, _IDF), tokens, declined
                )
            )
    return out


def _vectors(convs: list[tuple[str, list[Message]]]) -> dict[str, list[Any]]:
    """Sentence vectors of every message with text (None without), one encoder pass over the chunk."""
    from forensics.analyzers.topics import embedding

    flat = [(cid, i, m.text) for cid, msgs in convs for i, m in enumerate(msgs) if m.text.strip()]
    out: dict[str, list[Any]] = {cid: [None] * len(msgs) for cid, msgs in convs}
    for (cid, i, _), v in zip(flat, embedding.embed([t for _, _, t in flat])):
        out[cid][i] = v
    return out
