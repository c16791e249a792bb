"""Two runs of the same task side by side (docs/outcomes.md#run-diff): where they first did something different, and a
step-by-step alignment of what each did.

A run's steps are its tool calls on the main path, in order, each as (tool name, arguments as canonical
JSON: keys sorted, no whitespace). The first divergence is the first index at which the step lists differ
(the length of the shorter list when one is a prefix of the other). The alignment is a minimal-edit one:
a step is ``same`` (name and arguments equal, cost 0), ``changed`` (same tool, other arguments, cost 1),
``only_a`` or ``only_b`` (cost 1 each); ties go to the diagonal, and where A and B each have a step of
their own A's comes first, so it is deterministic.
Positions are those of the assistant messages holding the steps, so `forensics show` opens them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import duckdb

from forensics.kernel.errors import ForensicsError

SAID_CHARS = 400  # of the text beside a step, for the reader (the diff compares the steps only)


@dataclass(frozen=True)
class Step:
    name: str
    arguments: str  # canonical JSON
    position: int


@dataclass(frozen=True)
class Run:
    """One conversation as the diff sees it."""

    conversation_id: str
    native_id: str
    model: str | None
    success: bool | None
    task: str | None
    steps: list[Step] = field(default_factory=list)
    said: dict[int, str] = field(default_factory=dict)  # position -> the text of the message holding a step


@dataclass(frozen=True)
class Aligned:
    a: int | None  # index into A's steps
    b: int | None
    op: str  # same, changed, only_a, only_b


@dataclass(frozen=True)
class RunDiff:
    a: Run
    b: Run
    divergence: int
    aligned: list[Aligned]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of docs/outcomes.md#run-diff (`forensics diff --format json`)."""

        def pos(run: Run, i: int | None) -> int | None:
            return run.steps[i].position if i is not None and i < len(run.steps) else None

        return {
            "a": self.a.conversation_id,
            "b": self.b.conversation_id,
            "steps": [len(self.a.steps), len(self.b.steps)],
            "first_divergence": {
                "index": self.divergence,
                "a_position": pos(self.a, self.divergence),
                "b_position": pos(self.b, self.divergence),
            },
            "aligned": [{"a": pos(self.a, x.a), "b": pos(self.b, x.b), "op": x.op} for x in self.aligned],
        }


def canonical(arguments: str | None) -> str:
    """Arguments as canonical JSON; text that is not JSON is a JSON string."""
    if arguments is None:
        return "null"
    try:
        value = json.loads(arguments)
    except ValueError:
        value = arguments
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def resolve(con: duckdb.DuckDBPyConnection, key: str) -> str:
    """A conversation id from a conversation id or a native id held by exactly one conversation."""
    rows = con.execute(
        "SELECT conversation_id, native_id, model FROM conversations WHERE conversation_id = ? "
        "OR native_id = ? ORDER BY model, conversation_id",
        [key, key],
    ).fetchall()
    exact = [r for r in rows if r[0] == key]
    if exact:
        return key
    if not rows:
        raise ForensicsError(
            f'no conversation {key!r}; `forensics query "SELECT conversation_id, native_id, model '
            'FROM conversations"` lists them'
        )
    if len(rows) > 1:
        raise ForensicsError(
            f"{key!r} names {len(rows)} conversations; use a conversation id: "
            + ", ".join(f"{c} ({m or 'no model'})" for c, _, m in rows[:10])
        )
    return str(rows[0][0])


def load_run(con: duckdb.DuckDBPyConnection, cid: str) -> Run:
    head = con.execute(
        "SELECT c.native_id, c.model, o.success, json_extract_string(o.detail, '$.task') "
        "FROM conversations c LEFT JOIN conversation_outcomes o USING (conversation_id) "
        "WHERE c.conversation_id = ?",
        [cid],
    ).fetchone()
    if head is None:
        raise ForensicsError(f"no conversation {cid!r}")
    steps = [
        Step(str(n), canonical(a), int(p))
        for n, a, p in con.execute(
            "SELECT coalesce(name, ''), arguments, position FROM tool_calls WHERE conversation_id = ? AND position "
            "IS NOT NULL ORDER BY position, call_index",
            [cid],
        ).fetchall()
    ]
    said = dict(
        con.execute(
            "SELECT position, left(content, ?) FROM messages WHERE conversation_id = ? AND position "
            "IN (SELECT unnest(?::INTEGER[]))",
            [SAID_CHARS, cid, sorted({s.position for s in steps})],
        ).fetchall()
    )
    return Run(cid, head[0], head[1], head[2], head[3], steps, said)


def first_divergence(a: list[Step], b: list[Step]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if (x.name, x.arguments) != (y.name, y.arguments):
            return i
    return min(len(a), len(b))


def align(a: list[Step], b: list[Step]) -> list[Aligned]:
    """A minimal-edit alignment of two step lists (see the module docstring for costs and ties)."""
    n, m = len(a), len(b)
    inf = n + m + 1
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                cost[i][j] = i + j
                continue
            diag = _sub(a[i - 1], b[j - 1])
            cost[i][j] = min(
                cost[i - 1][j - 1] + diag if diag is not None else inf, cost[i - 1][j] + 1, cost[i][j - 1] + 1
            )
    out: list[Aligned] = []
    i, j = n, m
    while i or j:
        diag = _sub(a[i - 1], b[j - 1]) if i and j else None
        if diag is not None and cost[i][j] == cost[i - 1][j - 1] + diag:
            out.append(Aligned(i - 1, j - 1, "same" if diag == 0 else "changed"))
            i, j = i - 1, j - 1
        elif j and cost[i][j] == cost[i][j - 1] + 1:  # walking back: B's step last, so A's comes first
            out.append(Aligned(None, j - 1, "only_b"))
            j -= 1
        else:
            out.append(Aligned(i - 1, None, "only_a"))
            i -= 1
    return out[::-1]


def _sub(x: Step, y: Step) -> int | None:
    """Cost of pairing two steps: 0 same, 1 same tool with other arguments, None (not allowed) other tools."""
    if x.name != y.name:
        return None
    return 0 if x.arguments == y.arguments else 1


def diff(con: duckdb.DuckDBPyConnection, a: str, b: str) -> RunDiff:
    return between(load_run(con, resolve(con, a)), load_run(con, resolve(con, b)))


def between(a: Run, b: Run) -> RunDiff:
    return RunDiff(a, b, first_divergence(a.steps, b.steps), align(a.steps, b.steps))


def for_task(con: duckdb.DuckDBPyConnection, key: str) -> tuple[list[Run], RunDiff | None]:
    """The runs of one task, and a passed one diffed against a failed one (None without both outcomes)."""
    runs = task_runs(con, key)
    chosen = pair(runs)
    return runs, between(*chosen) if chosen else None


def task_runs(con: duckdb.DuckDBPyConnection, key: str) -> list[Run]:
    """The runs of one task: those whose outcome names it (``detail.task``: tau-bench's task_id, a SWE-bench
    instance, an Inspect sample id, a MINT or AgentBench task key), by model and native id."""
    cids = [
        r[0]
        for r in con.execute(
            "SELECT o.conversation_id FROM conversation_outcomes o JOIN conversations c USING (conversation_id) "
            "WHERE json_extract_string(o.detail, '$.task') = ? ORDER BY c.model, c.native_id, o.conversation_id",
            [key],
        ).fetchall()
    ]
    if not cids:
        raise ForensicsError(
            f'no run of task {key!r} has an outcome; `forensics query "SELECT DISTINCT '
            "json_extract_string(detail, '$.task') FROM conversation_outcomes\"` lists the tasks"
        )
    return [load_run(con, c) for c in cids]


def pair(runs: list[Run]) -> tuple[Run, Run] | None:
    """A passed and a failed run of one task: of all such pairs, the one whose steps agree longest before
    they diverge (the most telling contrast), then the first in list order; None without both outcomes."""
    passed = [r for r in runs if r.success is True]
    failed = [r for r in runs if r.success is False]
    if not passed or not failed:
        return None
    return max(((p, f) for p in passed for f in failed), key=lambda pf: first_divergence(pf[0].steps, pf[1].steps))
