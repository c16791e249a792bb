#!/usr/bin/env python3
"""Benchmark: decision memory at scale, beside reading the same rows with sqlite3, measured in one run.

    python bench/memory.py [--projects 400]

Builds (once, cached in bench/.cache/) a harness database laid out like the decision-memory format's (docs/formats.md#decision-memory-harness-databases-decision-memory): the fixture projects of
fixtures/make_memory.py replicated ``--projects`` times (each copy its own project, messages, decisions and
vectors, shifted in time), plus the fixture's questions for every copy. Then times, each in a subprocess:

- ``read_rows``: the anchor, every row of the three tables fetched with sqlite3 (what any importer must do);
- ``ingest``: ``forensics ingest`` into a fresh warehouse;
- ``findings``: ``forensics report --only memory --format json`` (the four rules);
- ``replay``: the same with ``--questions`` (retrieval at the config's values and the whole sweep).

Prints wall time, CPU time and peak memory of each step and its ratio to the anchor.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run  # noqa: E402 - bench/ is not a package

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "memory"
FIX = ROOT / "fixtures"
READ = """import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for t in ("conversation_messages", "decision_events", "decision_embeddings"):
    for _ in con.execute(f"SELECT * FROM {t}"):
        pass
"""


def build(projects: int) -> tuple[Path, Path]:
    """The replicated harness database and its question file; reused when built with the same shape."""
    db, questions, stamp = CACHE / "harness.db", CACHE / "questions.jsonl", CACHE / "shape.json"
    want = {"projects": projects, "generator": (FIX / "make_memory.py").read_text(encoding="utf-8")}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return db, questions
    shutil.rmtree(CACHE, ignore_errors=True)
    CACHE.mkdir(parents=True)
    spec = importlib.util.spec_from_file_location("make_memory", FIX / "make_memory.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    (CACHE / "one").mkdir()
    gen.make_harness(CACHE / "one")  # the fixture once, then copied row by row under new projects and ids
    src = sqlite3.connect(CACHE / "one" / "harness.db")
    msgs = src.execute(
        "SELECT id, project_id, conversation_id, role, content, created_at FROM conversation_messages"
    ).fetchall()
    decs = src.execute("SELECT * FROM decision_events").fetchall()
    vecs = src.execute("SELECT * FROM decision_embeddings").fetchall()
    out = sqlite3.connect(db)
    out.executescript(gen.SEED_SCHEMA)
    n_msg, n_dec = len(msgs), len(decs)
    qlines = (FIX / "labels" / "memory.questions.jsonl").read_text(encoding="utf-8").splitlines()
    with open(questions, "w", encoding="utf-8") as f:
        for k in range(projects):
            tag = f"-{k:04d}"
            out.executemany(
                "INSERT INTO conversation_messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(mid + k * n_msg, f"{p}{tag}|{c}|{mid}", p + tag, c, r, t, ts) for mid, p, c, r, t, ts in msgs],
            )
            out.executemany(
                "INSERT INTO decision_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(d[0] + k * n_dec, d[1] + tag, d[2], d[3] + k * n_msg, *d[4:]) for d in decs],
            )
            out.executemany(
                "INSERT INTO decision_embeddings VALUES (?, ?, ?, ?)", [(v[0] + k * n_dec, *v[1:]) for v in vecs]
            )
            for line in qlines:
                q = json.loads(line)
                q["project_id"] += tag
                q["expected"] = [e + k * n_dec for e in q["expected"]]
                f.write(json.dumps(q, ensure_ascii=False) + "\n")
    out.commit()
    out.close()
    src.close()
    stamp.write_text(json.dumps(want))
    return db, questions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=int, default=400)
    a = ap.parse_args()
    db, questions = build(a.projects)
    con = sqlite3.connect(db)
    rows = [
        con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("conversation_messages", "decision_events", "decision_embeddings")
    ]
    con.close()
    wh = CACHE / "w.duckdb"
    wh.unlink(missing_ok=True)
    fx = [sys.executable, "-m", "forensics"]
    steps = [
        ("read_rows", [sys.executable, "-c", READ, str(db)]),
        ("ingest", [*fx, "ingest", str(db), "--db", str(wh)]),
        (
            "findings",
            [*fx, "report", "--db", str(wh), "--only", "memory", "--format", "json", "--out", str(CACHE / "r1")],
        ),
        (
            "replay",
            [
                *fx,
                "report",
                "--db",
                str(wh),
                "--only",
                "memory",
                "--format",
                "json",
                "--out",
                str(CACHE / "r2"),
                "--questions",
                str(questions),
            ],
        ),
    ]
    print(
        f"decision memory: {a.projects} projects, {rows[0]} messages, {rows[1]} decisions, {rows[2]} vectors, "
        f"{sum(1 for _ in open(questions, encoding='utf-8'))} questions"
    )
    print(f"{'step':10} {'s':>8} {'÷ read':>8} {'CPU s':>8} {'tree MB':>8}")
    anchor = None
    for name, argv in steps:
        s = run(argv)
        if s.returncode:
            raise SystemExit(f"{name} failed ({s.returncode})")
        anchor = anchor or s.seconds
        print(f"{name:10} {s.seconds:8.2f} {s.seconds / anchor:8.1f} {s.cpu_s:8.2f} {s.tree_rss_mb:8.0f}")
    m = json.loads((CACHE / "r2" / "metrics.json").read_text())["sections"]["memory"]
    print(f"findings {m['findings']}; recall@k {m['retrieval']['recall_at_k']:.3f}, MRR {m['retrieval']['mrr']:.3f}")


if __name__ == "__main__":
    main()
