"""Every figure of the failure analysis (docs/definitions.md#failure-analysis) beside its trivial references, dev and held-out:

    python -m bench.failures [SHARED] [--hand PATH] [--tau PATH] [--no-ranking] [--dev]
        (SHARED: ../shared beside the repo, or $FORENSICS_SHARED; --hand: the Who&When Hand-Crafted runs converted by
        ``python -m bench.whowhen_hand``, or $FORENSICS_WHOWHEN_HAND; --tau: AgentRx's labeled tau-bench failures
        converted by ``python -m bench.agentrx_tau``, or $FORENSICS_AGENTRX_TAU; both kept outside the repository,
        each skipped in one line when absent; --dev: the dev halves only, no ranking, while developing)

1. *Where it went wrong* on ``data/failures/whowhen.jsonl``: the decisive step's exact, ±1 and ±3 accuracy and
   the agent's accuracy, beside the first step, the first reply, the last step, a random step (its expected
   accuracy, exact), the step before the first error and the agent with the most messages; then the same on the
   58 Magentic-One runs of Who&When Hand-Crafted and the 29 tau-bench retail runs of AgentRx when given (one line
   saying so when not). The method
   reads the warehouse only
   (the file ingested as OpenAI chat, every run marked failed by a labels file of ids); ``label`` is read here,
   to score, and ``ground_truth`` never. Halves: a stable hash of source and id (``dev`` / ``held-out``); AgentRx's
   balanced by the root cause's agent (``stratified_halves``: within each agent, by that hash, alternately).
2. *Failure signatures* on the same runs: how they ended, clusters, the share of runs in a cluster of 2+.
3. *Ranking* and *what failed runs did differently* on every folder of ``data/outcomes``: the report's run
   ranking with the report's defaults (every analyzer runs, so the problems of docs/definitions.md#failure-analysis and the ends of
   ``signature.BAD_ENDS`` count; ``outcomes.run_scores``) beside length in messages and in characters, tool
   calls, errors and random, overall and within task, with 95 % intervals (Hanley–McNeil; within task, a
   bootstrap over tasks); halves by task (a stable hash of the task key), and the mean over the folders per half.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from forensics.analyzers import outcomes as oc  # noqa: E402
from forensics.analyzers.failures import messages, signature  # noqa: E402
from forensics.analyzers.signature import error_line, is_output  # noqa: E402
from forensics.cli import cli  # noqa: E402

if TYPE_CHECKING:
    import polars

HALVES = ("dev", "held-out", "all")


def half(key: str) -> str:
    return "dev" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def stratified_halves(recs: list[dict], stratum: str) -> dict[str, str]:
    """Halves balanced by a label (``label[stratum]``, the root cause's agent): within each stratum the runs ordered
    by the sha256 of ``source:id``, alternately dev and held-out, the first dev (a stratum of odd size puts one more
    in dev). Decided from the labels only, before any result on them was read (AgentRx: the plain hash put 1 of the 8
    runs whose root cause is the customer in dev)."""
    by: dict[str, list[str]] = {}
    for r in recs:
        by.setdefault(str(r["label"][stratum]), []).append(f"{r['source']}:{r['id']}")
    out = {}
    for keys in by.values():
        for i, k in enumerate(sorted(keys, key=lambda k: hashlib.sha256(k.encode()).hexdigest())):
            out[k] = "dev" if i % 2 == 0 else "held-out"
    return out


def run_cli(*args: str) -> None:
    """One forensics command, its own output kept out of the tables."""
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        try:
            cli.main(list(args), standalone_mode=False)
        except SystemExit as e:
            if e.code:
                raise


def located(path: Path, work: Path, stratum: str | None = None) -> list[dict]:
    """Each labeled run of ``path`` with its decisive step, its label and the trivial baselines' steps.
    ``stratum``: a label field to balance the halves by (``stratified_halves``); else the plain hash (``half``)."""
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    halves = stratified_halves(recs, stratum) if stratum else {}
    db = work / f"{path.stem}.duckdb"
    labels = work / f"{path.stem}-failed.csv"
    labels.write_text("id,success\n" + "".join(f"{r['id']},false\n" for r in recs))
    run_cli("ingest", str(path), "--db", str(db))
    run_cli("outcomes", str(labels), "--db", str(db))
    con = duckdb.connect(str(db), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    msgs = messages(con, list(ids.values()))
    rows = []
    for r in recs:
        ms = msgs[ids[r["id"]]]
        sig = signature(ids[r["id"]], ms, True)
        d = sig.decisive
        assert d is not None and d.position is not None
        # messages.seq is the step: every message of the file at its index (a system prompt is kept as the
        # conversation's, not as a message, so its index 0 has no row)
        n = len(r["messages"])
        assert [m.position for m in ms] == list(range(n - len(ms), n)), r["id"]
        by_pos = {m.position: m.name for m in ms}
        names = [by_pos.get(i) for i in range(n)]
        first_err = next((m.position for m in ms if is_output(m) and error_line(m.text, m.error)), None)
        first_reply = next((m.position for m in ms if m.role == "assistant" and m.origin != "person"), 0)
        before_err = max(0, first_err - 1) if first_err is not None else n - 1
        most = Counter(m.name for m in ms if m.role == "assistant").most_common(1)[0][0]
        rows.append(
            {
                "half": halves.get(f"{r['source']}:{r['id']}") or half(f"{r['source']}:{r['id']}"),
                "n": n,
                "step": r["label"]["mistake_step"],
                "agent": r["label"]["mistake_agent"],
                "names": names,
                "ours": d.position,
                "our_agent": d.agent,
                "rule": d.rule,
                "before_err": before_err,
                "first_reply": first_reply,
                "most": most,
                "sig": sig,
                "id": r["id"],
                "msgs": ms,
            }
        )
    con.close()
    return rows


def where(path: Path, work: Path, title: str, stratum: str | None = None, halves: tuple[str, ...] = HALVES) -> None:
    """The table of where it went wrong, per half (``halves``: only ``("dev",)`` while developing)."""
    rows = located(path, work, stratum)
    print(f"## Where it went wrong ({path.name}, {len(rows)} {title})\n")
    print("| method | half | runs | exact | ±1 | ±3 | agent |\n|---|---|---|---|---|---|---|")
    for h in halves:
        sub = [x for x in rows if h == "all" or x["half"] == h]
        for name, pick in (
            ("decisive step (ours)", lambda x: (x["ours"], x["our_agent"])),
            ("first step", lambda x: (0, x["names"][0])),
            ("first reply", lambda x: (x["first_reply"], x["names"][x["first_reply"]])),
            ("last step", lambda x: (x["n"] - 1, x["names"][-1])),
            ("step before the first error", lambda x: (x["before_err"], x["names"][x["before_err"]])),
            ("agent with the most messages", lambda x: (None, x["most"])),
        ):
            got = [pick(x) for x in sub]
            acc = [_share(sub, got, k) for k in (0, 1, 3)]
            agent = sum(g[1] == x["agent"] for g, x in zip(got, sub)) / len(sub)
            print(
                f"| {name} | {h} | {len(sub)} | "
                + " | ".join("–" if a is None else f"{a:.1%}" for a in acc)
                + f" | {agent:.1%} |"
            )
        rnd = [
            sum(sum(1 for p in range(x["n"]) if abs(p - x["step"]) <= k) / x["n"] for x in sub) / len(sub)
            for k in (0, 1, 3)
        ]
        ragent = sum(sum(n == x["agent"] for n in x["names"]) / x["n"] for x in sub) / len(sub)
        print(
            f"| random step (expected) | {h} | {len(sub)} | "
            + " | ".join(f"{a:.1%}" for a in rnd)
            + f" | {ragent:.1%} |"
        )
    shown = [x for x in rows if "all" in halves or x["half"] in halves]
    print("\nRules that chose the step:", dict(Counter(x["rule"] for x in shown).most_common()))
    sigs = [x["sig"] for x in shown]  # the runs of the halves shown (--dev: the dev half's)
    clusters = Counter(s.cluster for s in sigs)
    print("\n## Failure signatures (the same runs)\n")
    print("How they ended:", dict(Counter(s.ended for s in sigs).most_common()))
    print(
        f"Runs with a recurring error template: {sum(s.error_template is not None for s in sigs)} of {len(sigs)}; "
        f"signatures: {len(clusters)}; runs in a signature shared by 2 or more: "
        f"{sum(n for n in clusters.values() if n > 1)} of {len(sigs)}"
    )
    print("Largest:", "; ".join(f"{k} ({n})" for k, n in clusters.most_common(6)))


def _share(sub: list[dict], got: list[tuple[int | None, str | None]], k: int) -> float | None:
    if got[0][0] is None:
        return None
    return sum(abs(g[0] - x["step"]) <= k for g, x in zip(got, sub) if g[0] is not None) / len(sub)


def _cell(a: float | None, lo: float | None = None, hi: float | None = None) -> str:
    if a is None:
        return "–"
    return f"{a:.3f}" if lo is None or hi is None else f"{a:.3f} ({lo:.2f}–{hi:.2f})"


RANKING_HEAD = (
    "| set | half | runs | failed | ranking (95 %) | by messages (95 %) | by characters written | by tool calls | "
    "by errors | random | within task (95 %) [pairs] | within, by messages | within, by characters | "
    "within, by tool calls | within, by errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def ranking_row(
    name: str, h: str, df: polars.DataFrame, problems: dict[str, set[str]], cited: dict[str, oc.RunErrors] | None = None
) -> tuple[str, float | None]:
    """One row of the ranking table: the report's run ranking (``outcomes.run_scores``) beside each trivial ranking
    and random, overall (Hanley–McNeil intervals for the ranking and the messages) and within task (pairs of runs of
    one task with different outcomes; the ranking's interval a bootstrap over tasks); and the ranking's AUC."""
    failed = [not s for s in df["success"].to_list()]
    pos, neg = sum(failed), len(failed) - sum(failed)
    score = oc.run_scores(df, problems, cited)
    tasks = df["task"].to_list()
    a = oc.auc(score, failed)
    lo, hi = oc.auc_interval(a, pos, neg) if a is not None else (None, None)
    refs = [oc.auc([float(v) for v in df[c]], failed) for c in MEASURES]
    mlo, mhi = oc.auc_interval(refs[0], pos, neg) if refs[0] is not None else (None, None)
    w, pairs = oc.auc_within(score, failed, tasks)
    wlo, whi = oc.auc_within_interval(score, failed, tasks) if w is not None else (None, None)
    within = [oc.auc_within([float(v) for v in df[c]], failed, tasks)[0] for c in MEASURES]
    line = (
        f"| {name} | {h} | {len(df)} | {pos} | {_cell(a, lo, hi)} | {_cell(refs[0], mlo, mhi)} | "
        + " | ".join(_cell(r) for r in refs[1:])
        + " | 0.500 | "
        + ("–" if w is None else f"{_cell(w, wlo, whi)} [{pairs}]")
        + " | "
        + " | ".join(_cell(x) for x in within)
        + " |"
    )
    return line, a


def ranking(shared: Path, work: Path) -> None:
    """The report's own ranking, with its defaults (every analyzer, so the problems of docs/definitions.md#failure-analysis count), per half."""
    import polars as pl

    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    print("\n## Ranking (data/outcomes): AUC for failure, overall and within task, 95 % intervals\n")
    print(RANKING_HEAD.replace("| set |", "| folder |"))
    means: dict[str, list[float]] = {}
    for folder in sorted(p for p in (shared / "data" / "outcomes").iterdir() if p.is_dir()):
        db = work / f"{folder.name}.duckdb"
        run_cli("ingest", str(folder), "--db", str(db))
        run_cli("report", "--db", str(db), "--format", "json", "--out", str(work / folder.name))
        con = duckdb.connect(str(db))
        ctx = Context.open(con, load_config(None), Selection())
        runs = oc._runs(ctx)
        problems = oc.problem_kind_sets(ctx, runs, [])
        cited = oc.cited_errors(ctx, runs)
        con.close()
        for h in ("dev", "held-out", "all"):
            df = runs if h == "all" else runs.filter(pl.Series([half(str(t)) == h for t in runs["task"]]))
            if not len(df):
                continue
            line, a = ranking_row(folder.name, h, df, problems, cited)
            if a is not None:
                means.setdefault(h, []).append(a)
            print(line)
        rev = json.loads((work / folder.name / "metrics.json").read_text())["sections"]["outcomes"]["grade_revealing"]
        print(
            f"|  | grade-revealing: {rev['messages']} messages in {rev['runs']} runs; {rev['end_states']} runs "
            "end on an unanswered call | | | | | | | | | | | |"
        )
    for h, got in means.items():
        print(f"\nMean AUC of the ranking over the folders, {h}: {sum(got) / len(got):.3f} (target 0.70)", end="")
    print()
    print("\n## Signatures and features that tell failed from passed runs (95 % interval of the lift excluding 1)\n")
    print("| folder | what | failed | passed | lift (95 %) | compared |\n|---|---|---|---|---|---|")
    for folder in sorted(p for p in (shared / "data" / "outcomes").iterdir() if p.is_dir()):
        f = json.loads((work / folder.name / "metrics.json").read_text())["sections"]["failures"]
        for c in f.get("clusters", []):
            if c["lift_low"] is not None and (c["lift_low"] > 1 or c["lift_high"] < 1) and not c["harness_end"]:
                print(
                    f"| {folder.name} | cluster: {c['name']} | {c['failed']} | {c['passed']} | "
                    f"{c['lift']:.2f} ({c['lift_low']:.2f}–{c['lift_high']:.2f}) | "
                    f"{'within task' if c.get('within_task') else 'overall'} |"
                )
        for d in f.get("differences", []):
            print(
                f"| {folder.name} | feature: {d['feature']} | {d['failed']} | {d['passed']} | {d['lift']:.2f} "
                f"({d['lift_low']:.2f}–{d['lift_high']:.2f}) | {'within task' if d['within_task'] else 'overall'} |"
            )
        print(
            f"| {folder.name} | ({f.get('features_tested', 0)} features tested, "
            f"{f.get('features_untested', 0)} in no task with both outcomes not compared; "
            f"{f.get('grade_revealing_end_states', 0)} runs with an end the harness decides, not used) | | | | |"
        )


# the labeled failures of other systems, never read while the rules were written: --flag → (title, env, converter,
# the label field the halves are balanced by, or None for the plain hash)
NEVER_SEEN = {
    "--hand": ("failed Magentic-One runs, Who&When Hand-Crafted", "FORENSICS_WHOWHEN_HAND", "bench.whowhen_hand", None),
    "--tau": ("failed tau-bench retail runs, AgentRx", "FORENSICS_AGENTRX_TAU", "bench.agentrx_tau", "mistake_agent"),
}
MEASURES = ["messages", "assistant_chars", "tool_calls", "tool_errors"]


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m bench.failures", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "shared", nargs="?", help="the shared folder (default ../shared beside the repo, $FORENSICS_SHARED)"
    )
    ap.add_argument(
        "--hand",
        help="Who&When Hand-Crafted runs converted by bench/whowhen_hand.py (default $FORENSICS_WHOWHEN_HAND)",
    )
    ap.add_argument(
        "--tau",
        help="AgentRx's labeled tau-bench failures converted by bench/agentrx_tau.py (default $FORENSICS_AGENTRX_TAU)",
    )
    ap.add_argument("--no-ranking", action="store_true", help="only where it went wrong (the ranking takes minutes)")
    ap.add_argument(
        "--dev", action="store_true", help="where it went wrong on the dev halves only (while developing); no ranking"
    )
    a = ap.parse_args()
    shared = Path(a.shared or os.environ.get("FORENSICS_SHARED", ROOT.parent / "shared"))
    if not (shared / "data" / "failures" / "whowhen.jsonl").exists():
        sys.exit(f"error: {shared}/data/failures/whowhen.jsonl not found (pass SHARED or set FORENSICS_SHARED)")
    hand = a.hand or os.environ.get("FORENSICS_WHOWHEN_HAND")
    tau = a.tau or os.environ.get("FORENSICS_AGENTRX_TAU")
    for flag, given in (("--hand", a.hand), ("--tau", a.tau)):
        if given and not Path(given).is_file():
            ap.error(f"{flag} {given}: no such file (make it with python -m {NEVER_SEEN[flag][2]} GIT_DIR OUT)")
    with tempfile.TemporaryDirectory() as tmp:
        shown = ("dev",) if a.dev else HALVES
        where(
            shared / "data" / "failures" / "whowhen.jsonl",
            Path(tmp),
            "failed AG2 group chats, Algorithm-Generated",
            halves=shown,
        )
        for flag, path in (("--hand", hand), ("--tau", tau)):
            title, env, maker, stratum = NEVER_SEEN[flag]
            if path and Path(path).is_file():
                print()
                where(Path(path), Path(tmp), title, stratum, shown)
            else:
                print(
                    f"\n{title}: skipped ({'$' + env + '=' + path + ' is no file' if path else 'no ' + flag + ' PATH or $' + env}; "
                    f"make it with python -m {maker} GIT_DIR OUT)"
                )
        if not (a.no_ranking or a.dev):
            ranking(shared, Path(tmp))


if __name__ == "__main__":
    main()
