"""`python -m bench.graded_runs`: bad usage is one line on stderr and exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("module", "name", "error"),
    [("bench.graded_runs", "no-such-runs", "not a folder"), ("bench.ranking_lobo", "no.duckdb", "no such warehouse")],
)
def test_a_missing_input_is_bad_usage(tmp_path: Path, module: str, name: str, error: str) -> None:
    missing = tmp_path / name
    done = subprocess.run([sys.executable, "-m", module, str(missing)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    script = module.split(".")[1] + ".py"
    assert done.stderr.strip().splitlines()[-1] == f"{script}: error: {error}: {missing}"
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_ranking_lobo_scores_the_reports_form_as_the_report_does() -> None:
    """The bench's family holds the report's own form; scored by the bench it orders runs as outcomes.run_scores
    does (ties of length included: equal runs of two models, errors breaking a tie)."""
    import polars as pl

    from bench.ranking_lobo import FIRST, OWN, scores
    from forensics.analyzers import outcomes as oc

    df = pl.DataFrame(
        {
            "conversation_id": [f"c{i}" for i in range(8)],
            "model": ["a", "a", "a", "a", "b", "b", "b", "b"],
            "messages": [4, 10, 10, 22, 4, 10, 10, 30],
            "assistant_chars": [100, 900, 900, 400, 100, 2000, 2000, 50],
            "tool_calls": [1, 4, 4, 10, 1, 4, 4, 14],
            "tool_errors": [0, 2, 0, 5, 0, 1, 3, 9],
        }
    )
    kinds = {"c3": {"loop"}, "c7": {"loop", "ended: gave_up"}}
    report = oc.run_scores(df, kinds)
    bench = scores(df, kinds, *OWN)
    assert pl.Series(report).rank("dense").to_list() == pl.Series(bench).rank("dense").to_list()
    assert max(bench) == bench[7] and bench[1] != bench[2]  # two problems first; errors break the tie of c1, c2
    # a kind on every run (loop and redundant work count once) tells none apart: length orders them, as without it
    every = {f"c{i}": {"redundant_work"} for i in range(8)} | {"c7": {"loop"}}
    assert pl.Series(oc.run_scores(df, every)).rank().to_list() == pl.Series(oc.run_scores(df, {})).rank().to_list()
    first = scores(df, {"c0": {"loop"}, "c1": {"loop"}, "c2": {"loop"}, "c3": {"loop"}}, "mean", OWN[1], 1.0, "count")
    top = scores(df, {"c0": {"lost_focus"}}, "mean", OWN[1], FIRST, "rarity")
    assert max(top) == top[0]  # first: the shortest run with a problem above every run without
    assert min(first[:4]) > max(first[4:])  # a problem in half the runs still counts 1 where each counts 1


def test_ranking_lobo_caps_rarity_and_mutes_the_kinds_silent_on_the_other_benchmarks() -> None:
    """The capped weighing counts a kind in at most the square root of the runs whole (twice its rarity, at most 1);
    a kind found no more often on the failed than on the passed runs of the other benchmarks' dev halves weighs
    nothing under a "+ signal" weighing (``silent``), and only there."""
    import polars as pl

    from bench.ranking_lobo import SIGNAL, scores, silent

    n = 16
    df = pl.DataFrame(
        {
            "conversation_id": [f"c{i}" for i in range(n)],
            "model": ["a"] * n,
            "messages": list(range(1, n + 1)),
            "assistant_chars": list(range(1, n + 1)),
            "tool_calls": [1] * n,
            "tool_errors": [0] * n,
            "success": [i % 2 == 0 for i in range(n)],
        }
    )
    # redundant work in 4 of 16 runs (= the square root): rarity log(4)/log(16) = 0.5, capped 1; "limit" on one run: 1 either way
    kinds = {f"c{i}": {"redundant_work"} for i in range(4)} | {"c4": {"ended: limit"}}
    rarity = scores(df, kinds, "mean", ("messages",), 1.0, "rarity")
    capped = scores(df, kinds, "mean", ("messages",), 1.0, "capped")
    length = scores(df, {}, "mean", ("messages",), 1.0, "count")
    assert [round(a - b, 6) for a, b in zip(rarity[:5], length[:5])] == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert [round(a - b, 6) for a, b in zip(capped[:5], length[:5])] == [1.0, 1.0, 1.0, 1.0, 1.0]
    # elsewhere redundant work marks 1 of 2 failed and 1 of 2 passed runs (no signal); "limit" only a failed one
    other = pl.DataFrame({"conversation_id": ["x", "y", "z", "w"], "success": [False, False, True, True]})
    mute = silent([(other, {"x": {"redundant_work"}, "z": {"redundant_work"}, "y": {"ended: limit"}})])
    assert mute == frozenset({"redundant_work"})
    muted = scores(df, kinds, "mean", ("messages",), 1.0, "capped" + SIGNAL, mute)
    assert [round(a - b, 6) for a, b in zip(muted[:5], length[:5])] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert scores(df, kinds, "mean", ("messages",), 1.0, "capped", mute) == capped
