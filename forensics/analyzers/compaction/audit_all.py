"""The audit run over a selection: every logged compaction judged (on both cores past a size), and the
``compaction_pairs`` cache the replay and `forensics tune` read, filled."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import orjson
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.compaction import pairs
from forensics.analyzers.compaction.audit import Row, audit
from forensics.analyzers.compaction.facts import Fact, Messages, extract
from forensics.analyzers.compaction.load import Compaction, Conversation, batches, selected
from forensics.analyzers.compaction.rules import Rules, rules
from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.compaction.signs import REDISCOVERY_WINDOW, kept
from forensics.config import Config
from forensics.kernel.workers import default_workers, run_ordered
from forensics.text.tokenizer import SEGMENTER

PARALLEL_MIN_MESSAGES = 40_000  # below this, starting worker processes costs more than it saves


@dataclass
class Event:
    """One logged compaction with its counts."""

    conversation_id: str
    native_id: str
    event: int
    compaction: Compaction
    rows: list[Row] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {
            "summary": self.compaction.summary_state
            if self.compaction.summary_state != "opaque"
            else f"opaque ({self.compaction.opaque})",
            **tally(self.rows),
            "lost_high": sum(r.lost and r.severity == "high" for r in self.rows),
        }


def tally(rows: list[Row]) -> dict[str, int]:
    """Facts held, kept, dropped, unjudged, opaque, and lost (dropped and needed again)."""
    st = [r.status for r in rows]
    return {
        "held": len(st),
        "kept": st.count("kept"),
        "dropped": st.count("dropped"),
        "unjudged": st.count("unjudged"),
        "opaque": st.count("opaque"),
        "lost": sum(r.lost for r in rows),
    }


@dataclass
class Audit:
    events: list[Event] = field(default_factory=list)
    signs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # not found, then search (signs.SQL's rows)
    off_path_events: int = 0

    @property
    def rows(self) -> list[Row]:
        return [r for e in self.events for r in e.rows]


def run_audit(con: duckdb.DuckDBPyConnection, cfg: Config) -> Audit:
    """Audit the selection's logged compactions and make sure ``compaction_pairs`` covers the selection. A
    conversation's events, their facts and signs depend on its own rows and the config alone: an unchanged one's are
    read back from the warehouse (``reuse_compaction_audit``, ``reuse_compaction_signs``), in the order a first
    report audits them (by native id, then id)."""
    out = Audit()
    for s in kept(con, int(cfg[REDISCOVERY_WINDOW])).iter_rows(named=True):
        out.signs.setdefault(s["conversation_id"], []).append(s)
    audited = reuse.rows(con, cfg, KEPT, lambda: _encoded(_audited(con, cfg, out.signs)))
    fill_pairs(con, cfg)  # the conversations reused, or none logged: their pairs (none to compute once filled)
    for (native, cid), off_path, events in sorted(_decoded(audited), key=lambda a: a[0]):
        out.off_path_events += off_path
        out.events += [Event(cid, native, i, k, rows) for i, k, rows in events]
    return out


KEPT = "compaction_audit"  # per conversation with a logged compaction: its events and their facts' rows, as JSON
KEPT_COLUMNS: dict[str, Any] = {"conversation_id": pl.String, "audit": pl.String}


def _audited(
    con: duckdb.DuckDBPyConnection, cfg: Config, signs_of: dict[str, list[dict[str, Any]]]
) -> Iterator[tuple[Conversation, list[tuple[int, Compaction, list[Row]]]]]:
    """Each selected conversation with a logged compaction, its compactions in position order with their rows."""
    r = rules(cfg)
    logged = {
        cid
        for (cid,) in con.execute(
            f"SELECT DISTINCT conversation_id FROM events JOIN {selected(con)} "
            "USING (conversation_id) WHERE kind = 'compaction'"
        ).fetchall()
    }
    for c, facts in _extracted(con, cfg, logged):
        signs = [(s["at"], s["positions"], s["detail"]) for s in signs_of.get(c.conversation_id, [])]
        rows = audit(c, facts, r, int(CompactionSettings.of(cfg).keep_recent), signs)
        events = sorted(c.compactions, key=lambda k: k.position)
        yield c, [(i, k, [x for x in rows if x.event == i]) for i, k in enumerate(events, 1)]


def _encoded(audited: Iterator[tuple[Conversation, list[tuple[int, Compaction, list[Row]]]]]) -> pl.DataFrame:
    ids, texts = [], []
    for c, events in audited:
        ids.append(c.conversation_id)
        texts.append(
            orjson.dumps(
                {
                    "native_id": c.native_id,
                    "off_path_events": c.off_path_events,
                    "events": [
                        {
                            "event": i,
                            "compaction": {**vars(k), "answers": sorted(k.answers)},
                            "rows": [vars(x) for x in rows],
                        }
                        for i, k, rows in events
                    ],
                }
            ).decode()
        )
    return pl.DataFrame({"conversation_id": ids, "audit": texts}, schema=KEPT_COLUMNS)


def _decoded(
    kept_rows: pl.DataFrame,
) -> Iterator[tuple[tuple[str, str], int, list[tuple[int, Compaction, list[Row]]]]]:
    """((native id, conversation id), off-path events, events) per audited conversation."""
    for cid, text in kept_rows.select("conversation_id", "audit").iter_rows():
        a = orjson.loads(text)
        events = [
            (
                e["event"],
                Compaction(**{**e["compaction"], "answers": frozenset(e["compaction"]["answers"])}),
                [Row(**x) for x in e["rows"]],
            )
            for e in a["events"]
        ]
        yield (a["native_id"], cid), a["off_path_events"], events


def fill_pairs(con: duckdb.DuckDBPyConnection, cfg: Config) -> None:
    """Make sure ``compaction_pairs`` covers the selection (what the replay and `forensics tune` read)."""
    for _ in _extracted(con, cfg, set()):
        pass


def _extracted(
    con: duckdb.DuckDBPyConnection, cfg: Config, also: set[str]
) -> Iterator[tuple[Conversation, list[Fact]]]:
    """Each conversation in ``also`` with its facts; the pairs of those that lack them are computed (on both cores
    for a large warehouse) and stored."""
    r = rules(cfg)
    key = pairs.rules_key(r)
    todo = set(pairs.prepare(con, key))
    n = (
        con.execute(
            "SELECT count(*) FROM messages WHERE conversation_id IN (SELECT unnest(?::VARCHAR[]))", [sorted(todo)]
        ).fetchall()[0][0]
        if todo
        else 0
    )
    audited: list[tuple[Conversation, list[Fact]]] = []
    local: dict[str, list[pairs.Pair]] = {}

    def tasks() -> Iterator[tuple[Any, tuple[Any, ...], None]]:
        for batch in batches(con, r, sorted(todo | also)):
            for c in batch:
                if c.conversation_id in also:
                    audited.append((c, extract(c.msgs, r)))
                    if c.conversation_id in todo:
                        local[c.conversation_id] = pairs.of(audited[-1][1])
            yield (
                _pairs_of,
                (
                    [
                        (c.conversation_id, c.msgs)
                        for c in batch
                        if c.conversation_id in todo and c.conversation_id not in also
                    ],
                    r,
                ),
                None,
            )

    for _, result, error in run_ordered(
        tasks(), default_workers(), n >= PARALLEL_MIN_MESSAGES, preload=(SEGMENTER, __name__)
    ):
        if error is not None:
            raise error
        pairs.store(con, key, result)
    pairs.store(con, key, local)
    yield from audited


def _pairs_of(batch: list[tuple[str, Messages]], r: Rules) -> dict[str, list[pairs.Pair]]:
    """Worker: the pairs of a batch of conversations."""
    return {cid: pairs.of(extract(msgs, r)) for cid, msgs in batch}
