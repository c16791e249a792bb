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
from dataclasses import dataclass

from forensics.analyzers.outcomes import Graded, compared, mixed_tasks

MIN_RUNS = 5


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
        r_, lo, hi = compared(feature, strata, a, n_fail, b, n_pass)
        if r_ is None or lo is None or hi is None:
            untested += 1  # where tasks repeat: in no task with both outcomes
        else:
            out.append(Difference(feature, a, b, r_, lo, hi, bool(strata)))
    tested = sorted(out, key=lambda d: (not d.stated, -abs(math.log(d.lift)) if d.lift > 0 else 0.0, d.feature))
    return Contrast(tested, untested)


def tool_bigrams(names: list[str]) -> set[str]:
    return {f"tools: {a} → {b}" for a, b in zip(names, names[1:])}
