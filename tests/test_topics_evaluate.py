"""Evaluation metrics against figures computed by hand on fixtures/labels/three.dialogues.jsonl.

d1: 6 turns, shifts {2, 4}, predicted {2, 3}; d2: 4 turns, shift {3}, predicted {2};
d3: 8 turns, shift {4}, predicted {4, 5}. k = half the mean reference segment length: 1, 1, 2.
"""

from __future__ import annotations

import pytest

from forensics.analyzers.topics.evaluate import (
    mark_all,
    mark_none,
    mark_random,
    pk_windowdiff,
    reference,
    score,
    tuned_threshold,
    window_k,
)
from forensics.analyzers.topics.labels import read_labels
from forensics.kernel.errors import ForensicsError
from tests.conftest import FIXTURES

THREE = FIXTURES / "labels" / "three.dialogues.jsonl"
PRED = {"d1": {2, 3}, "d2": {2}, "d3": {4, 5}}


@pytest.fixture()
def refs():
    labels = read_labels(THREE)
    sizes = {"d1": 6, "d2": 4, "d3": 8}
    return [reference(k, range(sizes[k]), labels.shifts[k]) for k in ("d1", "d2", "d3")]


def test_labels_are_read_from_the_turns(refs) -> None:
    assert [sorted(r.shifts) for r in refs] == [[2, 4], [3], [4]]
    assert [window_k(r) for r in refs] == [1, 1, 2]


def test_exact_and_within_one_precision_recall_f1(refs) -> None:
    s = score(refs, PRED)
    assert (s.predicted, s.reference, s.tp, s.tp_within1) == (5, 4, 2, 4)
    assert s.precision == pytest.approx(2 / 5)
    assert s.recall == pytest.approx(2 / 4)
    assert s.f1 == pytest.approx(4 / 9)
    assert s.precision_within1 == pytest.approx(4 / 5)
    assert s.recall_within1 == pytest.approx(1.0)
    assert s.f1_within1 == pytest.approx(8 / 9)


def test_pk_and_windowdiff_per_dialogue(refs) -> None:
    d1, d2, d3 = refs
    assert pk_windowdiff(d1, PRED["d1"]) == pytest.approx((2 / 5, 2 / 5))
    assert pk_windowdiff(d2, PRED["d2"]) == pytest.approx((2 / 3, 2 / 3))
    # two predicted boundaries in one window of k=2: Pk forgives it, WindowDiff does not
    assert pk_windowdiff(d3, PRED["d3"]) == pytest.approx((1 / 6, 2 / 6))


def test_pk_and_windowdiff_are_averaged_over_dialogues(refs) -> None:
    s = score(refs, PRED)
    assert s.pk == pytest.approx((2 / 5 + 2 / 3 + 1 / 6) / 3)
    assert s.windowdiff == pytest.approx((2 / 5 + 2 / 3 + 2 / 6) / 3)


def test_marking_nothing_scores_the_windows_that_straddle_a_boundary(refs) -> None:
    s = score(refs, mark_none(refs))
    assert (s.predicted, s.f1) == (0, 0.0)
    assert s.pk == pytest.approx((2 / 5 + 1 / 3 + 2 / 6) / 3)


def test_marking_every_turn_finds_every_shift(refs) -> None:
    s = score(refs, mark_all(refs))
    assert (s.predicted, s.tp) == (5 + 3 + 7, 4)
    assert s.recall == 1.0


def test_random_baseline_is_seeded() -> None:
    many = [reference(f"x{i}", range(20), [5, 12]) for i in range(50)]
    a, b = mark_random(many), mark_random(many)
    assert a == b
    marked = sum(len(v) for v in a.values())
    assert 60 <= marked <= 150  # base rate 2/19: about 105 of 950


def test_a_shift_on_an_unjudged_turn_counts_on_the_next_judged_one() -> None:
    assert reference("x", [0, 2, 4], [3]).shifts == {4}
    assert reference("x", [0, 2], [3]).shifts == set()  # nothing judged after it
    assert reference("x", [2, 4], [1]).shifts == set()  # the first judged turn opens the dialogue


def test_tuned_threshold_picks_the_best_exact_f1(refs) -> None:
    values = {
        "d1": {1: 0.1, 2: 0.9, 3: 0.5, 4: 0.8, 5: 0.2},
        "d2": {1: 0.3, 2: 0.4, 3: 0.6},
        "d3": {i: 0.05 for i in range(1, 8)} | {4: 0.7},
    }
    th, s = tuned_threshold(refs, values, higher_is_switch=True)
    assert th == 0.6 and (s.predicted, s.tp) == (4, 4)


def test_labels_with_only_ids_and_indices(tmp_path) -> None:
    f = tmp_path / "l.jsonl"
    f.write_text('{"dialogue_id": "a", "shifts": [3, 9]}\n{"id": "b", "topic_shifts": []}\n', encoding="utf-8")
    labels = read_labels(f)
    assert labels.shifts == {"a": [3, 9], "b": []} and not labels.has_turns


def test_bad_labels_are_one_line_errors(tmp_path) -> None:
    f = tmp_path / "l.jsonl"
    f.write_text('{"dialogue_id": "a", "shifts": "3"}\n', encoding="utf-8")
    with pytest.raises(ForensicsError, match="shifts: a list"):
        read_labels(f)
    with pytest.raises(ForensicsError, match="cannot read labels"):
        read_labels(tmp_path / "missing.jsonl")
