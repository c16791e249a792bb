#!/usr/bin/env python3
"""Benchmark: the skill-trigger replay (`report --only skills`, `tune --triggers`) beside the cheapest report.

    python bench/skills.py [--copies 300] [--plain 6] [--repeat 3]

Builds (once, cached in bench/.cache/skills-*) a Claude Code corpus: ``--copies`` copies of the sessions of
fixtures/make_skill_sessions.py, each with fresh ids, and ``--plain`` ordinary sessions of
fixtures/make_claude_code.py per copy (requests that load no skill), ingested into one warehouse. Then times,
round-robin, each in its own process: ``report --only baseline`` (the baseline table, one pass of SQL: the floor a
report costs), ``report --only skills --triggers`` and ``tune --triggers``. Prints medians, their ratio to the
floor, and checks the answers scale with the corpus: every figure is ``copies`` times the fixture's, and the
proposed phrases are the fixture's, each gaining ``2 x copies`` hits.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from measure import Sample, run  # noqa: E402  (bench/ is a folder of scripts, not a package)

CACHE = HERE / ".cache"
TABLE = ROOT / "fixtures" / "skills" / "skill_triggers.json"
FORENSICS = [sys.executable, "-m", "forensics"]


def script(name: str):  # fixtures/ is not a package: load a generator by path
    spec = importlib.util.spec_from_file_location(name, ROOT / "fixtures" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def build(copies: int, plain: int) -> Path:
    """The warehouse of the corpus; reused when already built from the same generators and shape."""
    folder = CACHE / f"skills-{copies}x{plain}"
    stamp, db = folder / "corpus.json", folder / "w.duckdb"
    want = {
        "copies": copies,
        "plain": plain,
        "generators": [(ROOT / "fixtures" / f).read_text() for f in ("make_skill_sessions.py", "make_claude_code.py")],
    }
    if stamp.exists() and db.exists() and json.loads(stamp.read_text()) == want:
        return db
    shutil.rmtree(folder, ignore_errors=True)
    skills, cc = script("make_skill_sessions"), script("make_claude_code")
    projects = folder / "projects"
    for i in range(copies):
        ns = uuid.uuid5(uuid.NAMESPACE_URL, f"forensics-bench-skills/{i}")
        skills.write_sessions(projects / f"copy{i:04d}", ns)
        for j in range(plain):
            cc.write_session(
                projects / f"copy{i:04d}",
                "plain",
                ns,
                f"-home-dev-plain{j}",
                cc.T0 + timedelta(days=i % 30, minutes=j),
                turns=6,
                size=1200,
            )
    subprocess.run([*FORENSICS, "ingest", str(projects), "--db", str(db)], check=True, stdout=subprocess.DEVNULL)
    stamp.write_text(json.dumps(want))
    return db


def answers(db: Path, out: Path) -> dict:
    subprocess.run(
        [
            *FORENSICS,
            "report",
            "--db",
            str(db),
            "--only",
            "skills",
            "--triggers",
            str(TABLE),
            "--out",
            str(out),
            "--format",
            "json",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return json.loads((out / "metrics.json").read_text())["sections"]["skills"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=300)
    ap.add_argument("--plain", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    db = build(args.copies, args.plain)
    out = db.parent / "report"
    steps = {
        "report --only baseline (floor)": [
            *FORENSICS,
            "report",
            "--db",
            str(db),
            "--only",
            "baseline",
            "--out",
            str(out),
            "--format",
            "json",
        ],
        "report --only skills --triggers": [
            *FORENSICS,
            "report",
            "--db",
            str(db),
            "--only",
            "skills",
            "--triggers",
            str(TABLE),
            "--out",
            str(out),
            "--format",
            "json",
        ],
        "tune --triggers": [*FORENSICS, "tune", "--db", str(db), "--triggers", str(TABLE)],
    }
    samples: dict[str, list[Sample]] = {k: [] for k in steps}
    for _ in range(args.repeat):
        for name, argv_ in steps.items():
            samples[name].append(run(argv_))
    got, one = answers(db, out), answers_of_fixture(out.parent / "fixture")
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    messages, requests = con.execute(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM skill_routing)"
    ).fetchone()
    con.close()
    print(
        f"corpus: {args.copies} copies of the skill fixture + {args.plain} plain sessions each: {messages:,} "
        f"messages, {got['requests']:,} requests, {requests:,} routing rows"
    )
    base = samples["report --only baseline (floor)"]
    floor, floor_cpu = statistics.median(s.seconds for s in base), statistics.median(s.cpu_s for s in base)
    print(f"{'step':34} {'median s':>9} {'cpu s':>7} {'peak MB':>8} {'÷ floor':>8} {'cpu ÷ floor':>12}")
    for name, ss in samples.items():  # on a shared machine CPU seconds drift less than wall time
        med, cpu = statistics.median(s.seconds for s in ss), statistics.median(s.cpu_s for s in ss)
        print(
            f"{name:34} {med:9.2f} {cpu:7.2f} {max(s.tree_rss_mb for s in ss):8.0f} {med / floor:8.2f} "
            f"{cpu / floor_cpu:12.2f}"
        )
    scaled = all(
        got["skills"][k][f] == args.copies * one["skills"][k][f]
        for k in one["skills"]
        for f in ("router", "model", "hits", "router_only", "model_only")
    )
    same = [(p["skill"], p["phrase"], p["hits_gained"]) for p in got["proposals"]] == [
        (p["skill"], p["phrase"], p["hits_gained"] * args.copies) for p in one["proposals"]
    ]
    print(f"figures = {args.copies} x the fixture's: {scaled}; the same proposals, hits x {args.copies}: {same}")
    return 0 if scaled and same else 1


def answers_of_fixture(folder: Path) -> dict:
    """The same report on the fixture itself (one copy), for the scaling check."""
    db = folder / "w.duckdb"
    if not db.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [*FORENSICS, "ingest", str(ROOT / "fixtures" / "skills" / "projects"), "--db", str(db)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return answers(db, folder / "report")


if __name__ == "__main__":
    sys.exit(main())
