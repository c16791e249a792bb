"""What failed runs did differently (forensics/analyzers/failures/contrast.py): where tasks repeat, every feature is
compared within task, with its interval, never pooled over tasks."""

from __future__ import annotations

import math

from forensics.analyzers.failures.contrast import contrast, differences
from forensics.analyzers.outcomes import Graded, mantel_haenszel


def _runs(spec: list[tuple[str, bool, bool]]) -> list[Graded]:
    """(task, failed, has the feature "x") → graded runs."""
    return [Graded(f"c{i}", f, t, frozenset({"x"} if x else ())) for i, (t, f, x) in enumerate(spec)]


def test_a_feature_only_failed_runs_show_is_compared_within_task_not_pooled() -> None:
    # ten tasks, each one failed and one passed run; "x" in the failed run of six of them, in no passed run.
    # Pooled, the ratio has an empty cell (6/10 against 0/10); within task it is the Mantel–Haenszel ratio with
    # half a run added to each cell of the six tasks that hold it: (6 × 1.5 × 2 / 4) / (6 × 0.5 × 2 / 4) = 3
    spec = [(f"t{i}", True, i < 6) for i in range(10)] + [(f"t{i}", False, False) for i in range(10)]
    (d,) = differences(_runs(spec))
    assert d.within_task and (d.failed, d.passed) == (6, 0)
    assert math.isclose(d.lift, 3.0)
    assert 1 < d.low < 3 < d.high  # an interval, excluding 1 here


def test_a_feature_of_hard_tasks_is_no_difference_within_task() -> None:
    # "x" marks every run of the hard tasks (mostly failed) and none of the easy ones: pooled it looks like a
    # cause of failure (8 of 12 failed runs against 4 of 12 passed: 2.0), within task it is 1, not stated
    hard = [(f"h{i}", True, True) for i in range(4)] * 2 + [(f"h{i}", False, True) for i in range(4)]
    easy = [(f"e{i}", False, False) for i in range(4)] * 2 + [(f"e{i}", True, False) for i in range(4)]
    (d,) = differences(_runs(hard + easy))
    assert d.within_task and math.isclose(d.lift, 1.0) and d.low <= 1 <= d.high and not d.stated


def test_a_feature_in_no_task_with_both_outcomes_is_not_tested_where_tasks_repeat() -> None:
    mixed = [(f"t{i}", f, False) for i in range(3) for f in (True, False)]
    alone = [(f"u{i}", True, True) for i in range(5)]  # tasks whose runs all failed, each with "x"
    got = contrast(_runs(mixed + alone))
    assert got.tested == [] and got.untested == 1


def test_without_repeated_tasks_the_runs_are_compared_overall() -> None:
    spec = [(f"t{i}", i < 10, i < 5) for i in range(20)]
    (d,) = differences(_runs(spec))
    assert not d.within_task and (d.failed, d.passed) == (5, 0)


def test_mantel_haenszel_without_a_zero_cell_is_untouched_by_the_correction() -> None:
    spec = [(f"t{i}", True, i % 2 == 0) for i in range(8)] + [(f"t{i}", False, i % 4 == 0) for i in range(8)]
    tasks: dict[str, list[Graded]] = {}
    for g in _runs(spec):
        tasks.setdefault(str(g.task), []).append(g)
    plain = mantel_haenszel("x", tasks.values())
    assert plain is not None and math.isclose(plain[0], 2.0)
