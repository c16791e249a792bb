"""`forensics tune --triggers FILE --holdout`: the proposed phrases judged on conversations they were not cut from,
beside the trivial routers (the do-no-harm rule of docs/definitions.md#topic-switches, applied to routers).

The conversations are split in two by a hash of their id. Phrases are proposed on one half and the router is
replayed on the other, then the halves swap, and the counts of both are added: every conversation is judged
once, by phrases that never saw it. Four routers are replayed on each held-out half:

- ``mark nothing``: an empty table (no fire, no false fire; every load a miss);
- ``mark everything``: every skill the fitting half loaded fires on every request (at most one per message, the
  most loaded first, as the router would with a phrase every message holds);
- ``table``: the table as it is;
- ``table + proposed``: the table with the phrases proposed on the other half.

A proposal does no harm when ``table + proposed`` gains at least as many hits net of false fires as the table
alone; a router is worth running only when its net is above mark nothing's (0) and its F1 above mark everything's.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import duckdb

from forensics.analyzers.base import Context
from forensics.analyzers.skills import TriggerTable, analyse, read_table
from forensics.analyzers.skills.replay import gather, tally
from forensics.config import Config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.selection import Selection
from forensics.warehouse import open_warehouse

FOLDS = 2
ROUTERS = ("mark nothing", "mark everything", "table", "table + proposed")


@dataclass
class Score:
    hits: int = 0
    false_fires: int = 0
    misses: int = 0

    @property
    def precision(self) -> float | None:
        return self.hits / (self.hits + self.false_fires) if self.hits + self.false_fires else None

    @property
    def recall(self) -> float | None:
        return self.hits / (self.hits + self.misses) if self.hits + self.misses else None

    @property
    def f1(self) -> float:
        return 2 * self.hits / (2 * self.hits + self.false_fires + self.misses) if self.hits else 0.0

    @property
    def net(self) -> int:  # hits gained net of the false fires paid: mark nothing's is 0
        return self.hits - self.false_fires

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "hits": self.hits,
            "false_fires": self.false_fires,
            "misses": self.misses,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "net": self.net,
        }


@dataclass
class Holdout:
    table: TriggerTable
    conversations: list[int]  # per fold, the held-out conversations that hold a request
    requests: list[int]  # per fold, their requests
    proposed: list[list[tuple[str, str]]]  # per fold, the (skill, phrase) fitted on the other half
    scores: dict[str, Score] = field(default_factory=lambda: {r: Score() for r in ROUTERS})

    @property
    def no_harm(self) -> bool:
        return self.scores["table + proposed"].net >= self.scores["table"].net


def fold_of(native_id: str) -> int:
    """Which half a conversation is held out in, from the id its source gave it (a session id): stable across
    runs, machines, versions and checkouts. The warehouse's conversation_id hashes the source's path, so the
    same files copied elsewhere would be split differently."""
    return int(hashlib.sha256(native_id.encode()).hexdigest()[:8], 16) % FOLDS


def holdout(db: str | os.PathLike[str], cfg: Config, path: str | os.PathLike[str]) -> Holdout:
    """Fit on one half of ``db``'s conversations, replay the four routers on the other, both ways (read-only)."""
    table = read_table(path)
    with open_warehouse(db, read_only=True) as wh:
        ids = wh.con.execute(
            "SELECT conversation_id, coalesce(native_id, conversation_id) FROM conversations ORDER BY 1"
        ).fetchall()
        halves = [tuple(c for c, native in ids if fold_of(native) == k) for k in range(FOLDS)]
        if not all(halves):  # an empty Selection is every conversation: it would judge on what it fitted
            raise ForensicsError(f"{db}: --holdout needs conversations in both halves ({len(ids)} in the warehouse)")
        out = Holdout(table, [], [], [])
        for k, held in enumerate(halves):
            fit = tuple(c for j, half in enumerate(halves) if j != k for c in half)
            _fold(wh.con, cfg, table, fit, held, out)
    return out


def _fold(
    con: duckdb.DuckDBPyConnection,
    cfg: Config,
    table: TriggerTable,
    fit: tuple[str, ...],
    held: tuple[str, ...],
    out: Holdout,
) -> None:
    _, rows, proposals = analyse(Context.open(con, cfg, Selection(conversations=fit)), table)
    loads = tally(rows, list(table.skills))
    fitted = {s: list(ps) for s, ps in table.skills.items()}
    for p in proposals:
        fitted.setdefault(p.skill, []).append(p.phrase)
    busiest = sorted(
        (s for s, c in loads.items() if c["model"] + c["already_loaded"]),
        key=lambda s: (-(loads[s]["model"] + loads[s]["already_loaded"]), s),
    )
    routers = {
        "mark nothing": {},
        "mark everything": {s: [""] for s in busiest},
        "table": table.skills,
        "table + proposed": fitted,
    }
    Context.open(con, cfg, Selection(conversations=held))
    for name, skills in routers.items():
        rp = gather(con, TriggerTable(table.path, skills, {}))
        rows = rp.rows()
        score = out.scores[name]
        score.hits += sum(r.verdict == "hit" for r in rows)
        score.false_fires += sum(r.verdict == "router_only" for r in rows)
        score.misses += sum(r.verdict == "model_only" for r in rows)
    out.conversations.append(rp.conversations)
    out.requests.append(rp.requests)
    out.proposed.append([(p.skill, p.phrase) for p in proposals])


def render(h: Holdout) -> str:
    """The held-out scoring as `forensics tune --triggers --holdout` prints it: what each half proposed, then every
    router's hits, false fires, misses, precision, recall and F1 beside the trivial routers."""
    lines = [
        f"held out: {FOLDS} halves by session id ({' + '.join(map(str, h.conversations))} conversations, "
        f"{' + '.join(map(str, h.requests))} requests); phrases proposed on one half, scored on the other"
    ]
    for k, got in enumerate(h.proposed):
        said = ", ".join(f"{s} += {p!r}" for s, p in got) or "nothing"
        lines.append(f"  half {k + 1}, scored with what the other proposed: {said}")
    head = ("router", "hits", "false fires", "misses", "precision", "recall", "F1", "net")
    rows = [head] + [
        (name, str(s.hits), str(s.false_fires), str(s.misses), _f(s.precision), _f(s.recall), _f(s.f1), str(s.net))
        for name, s in h.scores.items()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines += [
        "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows
    ]
    s, t, every = h.scores["table + proposed"], h.scores["table"], h.scores["mark everything"]
    lines.append(
        f"table + proposed: net {s.net:+d} against the table's {t.net:+d} "
        f"({'no harm' if h.no_harm else 'HARM: the proposals lose held-out hits net of false fires'}); "
        f"against mark nothing's 0 and mark everything's F1 {_f(every.f1)}: "
        + ("beats both" if s.net > 0 and s.f1 > every.f1 else "does NOT beat both")
    )
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"
