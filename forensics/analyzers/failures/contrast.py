"""What failed runs did differently (docs/definitions.md#failure-analysis): features of graded runs compared between failed and passed ones.

Features of a run: ``problem: <kind>`` (a finding in ``problem_findings``, docs/definitions.md#problems-a-reviewer-flags, when the table exists),
``ended: <how>`` (its end, except the ends the harness decides: ``signature.GRADE_REVEALING_ENDS``, counted
instead), ``error: <template>`` (an error template it shows at least once) and ``tools: <a> → <b>`` (two tool
calls in a row, by name). All are read on the messages before any grade-revealing text.

The lift of a feature is the share of failed runs that have it over the share of passed runs that have it.
Where tasks repeat (some task has a failed and a passed run), runs are compared within their task: the
Mantel–Haenszel ratio over tasks, with the Greenland–Robins 95 % interval, so a feature common in hard tasks
is not taken for a cause of failure; otherwise the crude ratio with Katz's interval (``outcomes.lift``). Where
tasks repeat every feature is compared within task, never overall: where no passed (or no failed) run of a task
with both outcomes has the feature, the ratio has no estimate, and half a run is added to each cell of every such
task that holds the feature and has an empty cell (the correction meta-analyses make for a zero cell); a feature
found in no task with both outcomes says nothing within task and is not tested (``Contrast.untested``). A feature
seen in fewer than ``MIN_RUNS`` runs is not tested, and only a feature whose interval excludes 1 is stated as a
difference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from forensics.analyzers.outcomes import Z, lift

MIN_RUNS = 5


@dataclass(frozen=True)
class Graded:
    conversation_id: str
    failed: bool
    task: str | None
    features: frozenset[str]


@dataclass(frozen=True)
class Difference:
    feature: str
    failed: int  # failed runs with it
    passed: int
    lift: float
    low: float
    high: float
    within_task: bool  # Mantel–Haenszel over tasks

    @property
    def stated(self) -> bool:
        return self.low > 1 or self.high < 1


def differences(runs: list[Graded]) -> list[Difference]:
    """Every feature seen in at least MIN_RUNS runs and comparable, strongest evidence first (see the module
    docstring)."""
    return contrast(runs).tested


@dataclass(frozen=True)
class Contrast:
    tested: list[Difference]
    untested: int  # features seen in MIN_RUNS runs or more, but in no task with both outcomes where tasks repeat


def contrast(runs: list[Graded]) -> Contrast:
    """The features compared between failed and passed runs (``differences``) and how many could not be compared
    within task where tasks repeat."""
    n_fail = sum(r.failed for r in runs)
    n_pass = len(runs) - n_fail
    if not n_fail or not n_pass:
        return Contrast([], 0)
    strata = mixed_tasks(runs)
    seen: dict[str, int] = {}
    for r in runs:
        for f in r.features:
            seen[f] = seen.get(f, 0) + 1
    out, untested = [], 0
    for feature, n in seen.items():
        if n < MIN_RUNS:
            continue
        a = sum(r.failed and feature in r.features for r in runs)
        b = n - a
        if not strata:
            r_, lo, hi = lift(a, n_fail, b, n_pass)
            out.append(Difference(feature, a, b, r_, lo, hi, False))
            continue
        got = mantel_haenszel(feature, strata) or mantel_haenszel(feature, strata, ZERO_CELL)
        if got is None:
            untested += 1
        else:
            out.append(Difference(feature, a, b, *got, True))
    tested = sorted(out, key=lambda d: (not d.stated, -abs(math.log(d.lift)) if d.lift > 0 else 0.0, d.feature))
    return Contrast(tested, untested)


ZERO_CELL = 0.5  # added to each cell of a task with an empty cell, where the ratio has no estimate without it


def mantel_haenszel(
    feature: str, strata: Iterable[list[Graded]], zero_cell: float = 0.0
) -> tuple[float, float, float] | None:
    """(ratio, low, high): the Mantel–Haenszel ratio of the shares of failed and passed runs with the feature,
    over tasks, with the Greenland–Robins interval; None when a sum is 0 (no estimate). ``zero_cell``: added to
    each of the four cells of a task that holds the feature and has an empty cell (a task without it tells
    nothing of it and is left as it is)."""
    num = den = var_num = 0.0
    for runs in strata:
        n1: float = sum(r.failed for r in runs)
        n2: float = len(runs) - n1
        a: float = sum(r.failed and feature in r.features for r in runs)
        b: float = sum(not r.failed and feature in r.features for r in runs)
        if zero_cell and a + b and 0 in (a, b, n1 - a, n2 - b):
            a, b, n1, n2 = a + zero_cell, b + zero_cell, n1 + 2 * zero_cell, n2 + 2 * zero_cell
        total = n1 + n2
        num += a * n2 / total
        den += b * n1 / total
        var_num += (n1 * n2 * (a + b) - a * b * total) / (total * total)
    if num <= 0 or den <= 0:
        return None
    ratio = num / den
    se = math.sqrt(max(var_num, 0.0) / (num * den))
    return ratio, ratio * math.exp(-Z * se), ratio * math.exp(Z * se)


def mixed_tasks(runs: list[Graded]) -> list[list[Graded]]:
    """The tasks with both a failed and a passed run (the only ones that compare within a task)."""
    by: dict[str, list[Graded]] = {}
    for r in runs:
        if r.task is not None:
            by.setdefault(r.task, []).append(r)
    return [g for g in by.values() if len({r.failed for r in g}) == 2]


def tool_bigrams(names: list[str]) -> set[str]:
    return {f"tools: {a} → {b}" for a, b in zip(names, names[1:])}
