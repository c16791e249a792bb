"""The report's run ranking on graded runs of other agents (docs/failures-evaluation.md#graded-runs-of-other-agents):

    python -m bench.graded_runs FOLDER [FOLDER...] [--db-dir DIR]

Each FOLDER is ingested into its own warehouse (kept in DIR when given, so a second call reuses it) and the
report runs on it with its defaults (every analyzer). Then, per agent and model (the format and the model the
runs name) and for the whole folder, per half of the tasks (a stable hash of the task key, as bench/failures.py):
the AUC for failure of the report's ranking (``outcomes.run_scores``) beside length in messages and in
characters the agent wrote, tool calls, tool errors and random; within task (pairs of runs of one task with
different outcomes: other models on one instance, other trials of one task). Then what moves the ranking: per
problem kind (``outcomes.problem_kind_sets``), the failed and passed runs it is found in, and the failed runs
it scores 0. The grade is read here only to score.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from bench.failures import RANKING_HEAD, half, ranking_row, run_cli
from forensics.analyzers import outcomes as oc

if TYPE_CHECKING:
    import polars


def _rows(name: str, df: polars.DataFrame, kinds: dict[str, set[str]], cited: dict[str, oc.RunErrors]) -> list[str]:
    import polars as pl

    out = []
    for h in ("dev", "held-out", "all"):
        sub = df if h == "all" else df.filter(pl.Series([half(str(t)) == h for t in df["task"]]))
        pos = sum(not s for s in sub["success"].to_list())
        if not len(sub) or pos in (0, len(sub)):
            continue
        out.append(ranking_row(name, h, sub, kinds, cited)[0])
    return out


def measure(folder: Path, work: Path) -> None:
    import polars as pl

    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    db = work / f"{folder.name}.duckdb"
    if not db.exists():
        run_cli("ingest", str(folder), "--db", str(db))
        run_cli("report", "--db", str(db), "--format", "json", "--out", str(work / f"{folder.name}-report"))
    con = duckdb.connect(str(db))
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    kinds = oc.problem_kind_sets(ctx, runs, [])
    cited = oc.cited_errors(ctx, runs)
    con.close()
    print(f"\n## {folder}\n")
    print(RANKING_HEAD.replace("| set |", "| agent / model |"))
    groups = sorted({(a, m) for a, m in zip(runs["agent"].to_list(), runs["model"].to_list())})
    for agent, model in groups:
        sub = runs.filter((runs["agent"] == agent) & (runs["model"] == model))
        for line in _rows(f"{agent} / {model}", sub, kinds, cited):
            print(line)
    if len(groups) > 1:
        for line in _rows("all", runs, kinds, cited):
            print(line)
    silent = [("ended: no_reply" in kinds.get(c, ())) for c in runs["conversation_id"].to_list()]
    if any(silent):  # trials whose agent never started: the ranking puts them first; the rest judged apart
        acted = runs.filter(pl.Series([not x for x in silent]))
        for line in _rows(f"runs the agent replied in ({sum(silent)} without a reply left out)", acted, kinds, cited):
            print(line)
    ids = runs["conversation_id"].to_list()
    failed = dict(zip(ids, [not s for s in runs["success"].to_list()]))
    nf = sum(failed.values())
    npass = len(ids) - nf
    counts: Counter[tuple[str, bool]] = Counter()
    for c in ids:
        for k in kinds.get(c, ()):
            counts[(k, failed[c])] += 1
    print(f"\nProblem kinds (runs: {nf} failed, {npass} passed):\n")
    print("| kind | failed runs | passed runs | share of failed | share of passed |\n|---|---|---|---|---|")
    for k in sorted({k for k, _ in counts}):
        f, p = counts[(k, True)], counts[(k, False)]
        print(f"| {k} | {f} | {p} | {f / max(nf, 1):.1%} | {p / max(npass, 1):.1%} |")
    zero_f = sum(1 for c in ids if failed[c] and not kinds.get(c))
    zero_p = sum(1 for c in ids if not failed[c] and not kinds.get(c))
    print(f"\nRuns with no problem: failed {zero_f} of {nf}, passed {zero_p} of {npass}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--db-dir", type=Path, help="keep (and reuse) each folder's warehouse and report here")
    args = ap.parse_args()
    missing = [str(f) for f in args.folders if not f.is_dir()]
    if missing:
        ap.error(f"not a folder: {', '.join(missing)}")  # exit 2, as for any bad usage
    with tempfile.TemporaryDirectory() as tmp:
        work = args.db_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for folder in args.folders:
            measure(folder, work)


if __name__ == "__main__":
    main()
