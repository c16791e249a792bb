#!/usr/bin/env python3
"""Benchmark: `forensics ingest` of a Claude Code corpus beside `claude-dt` and `ccusage`, measured in one run.

    python bench/claude_code.py [--sessions 2000] [--days 20] [--skip-dt] [--skip-ccusage]

Builds (once, cached in bench/.cache/) a corpus laid out like ``~/.claude/projects``: the fixture sessions of
fixtures/make_claude_code.py replicated with fresh uuids, message ids and request ids per copy, spread over
``--days`` days. Installs the two public tools into bench/.cache when missing (claude-dt from PyPI into its
own venv, ccusage from npm), then times, each in a subprocess:

- ``forensics ingest`` of the corpus into a fresh warehouse, then again (unchanged corpus);
- ``dt ingest`` with HOME pointed at the corpus (claude-dt reads ``~/.claude/projects``), then again;
- ``ccusage daily --json --offline`` with HOME and CLAUDE_CONFIG_DIR pointed at the corpus.

Prints wall time, peak RSS (getrusage of the child), the ratios against the issue's targets, and whether the
token totals agree: ours (usage once per message.id + requestId) against ccusage's and claude-dt's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
CCUSAGE_VERSION = "20.0.24"  # the newest ccusage whose linux-x64 native binary the npm registry here serves
SHAPE = {"turns": (4, 15), "bytes": (1100, 3600)}  # per plain session: ~110 KB on average, as the corpus
TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def generator():  # fixtures/ is not a package: load the fixture generator by path
    spec = importlib.util.spec_from_file_location("make_claude_code", ROOT / "fixtures" / "make_claude_code.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def build_corpus(home: Path, sessions: int, days: int) -> Path:
    """``home/.claude/projects`` with ``sessions`` sessions; reused when already built with the same shape."""
    projects = home / ".claude" / "projects"
    stamp = home / "corpus.json"
    want = {
        "sessions": sessions,
        "days": days,
        "shape": SHAPE,
        "generator": (ROOT / "fixtures" / "make_claude_code.py").read_text(),
    }
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return projects
    shutil.rmtree(home, ignore_errors=True)
    gen = generator()
    rng = random.Random(2000)
    for i in range(sessions):
        ns = uuid.uuid5(uuid.NAMESPACE_URL, f"forensics-bench/{i}")  # fresh ids for every copy
        t = gen.T0 + timedelta(days=i % days, minutes=7 * (i // days))
        project = f"-home-dev-project{i % 25:02d}"
        kind = "main" if i % 10 == 0 else "sidechain" if i % 10 == 1 else "plain"
        gen.write_session(
            projects, kind, ns, project, t, turns=rng.randint(*SHAPE["turns"]), size=rng.randint(*SHAPE["bytes"])
        )
    stamp.write_text(json.dumps(want))
    return projects


@dataclass
class Run:
    seconds: float
    rss_mb: float
    out: str
    error: str = ""


def timed(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Wall time and peak RSS of one child process: wait4 gives that child's own resource usage (the
    process-wide RUSAGE_CHILDREN maximum would hide a smaller child behind a bigger one)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    error = "" if p.returncode == 0 else f"exit {p.returncode}: {(stderr or stdout).strip().splitlines()[-1:]}"
    return Run(seconds, usage.ru_maxrss / 1024, stdout, error)


def install_dt() -> tuple[Path | None, str]:
    venv = CACHE / "dt-venv"
    dt = venv / "bin" / "dt"
    if not dt.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        p = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "claude-dt"], capture_output=True, text=True)
        if p.returncode != 0:
            return None, "pip install claude-dt failed: " + p.stderr.strip().splitlines()[-1]
    return dt, ""


def install_ccusage() -> tuple[Path | None, str]:
    folder = CACHE / "npm"
    bin_ = folder / "node_modules" / ".bin" / "ccusage"
    if not shutil.which("npm"):
        return None, "npm is not installed on this machine"
    if not bin_.exists():
        folder.mkdir(parents=True, exist_ok=True)
        p = subprocess.run(
            ["npm", "install", "--no-fund", "--no-audit", "--silent", f"ccusage@{CCUSAGE_VERSION}"],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            return None, "npm install ccusage failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return bin_, ""


def our_tokens(db: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:  # once per response across files too, as ccusage deduplicates globally
        row = con.execute(
            "SELECT " + ", ".join(f"sum({k})" for k in TOKENS) + " FROM (SELECT DISTINCT ON "
            "(coalesce(message_id, conversation_id || seq), request_id) * FROM message_usage)"
        ).fetchone()
        counts = con.execute(
            "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM tool_calls), "
            "(SELECT count(*) FROM conversations)"
        ).fetchone()
    finally:
        con.close()
    return {
        **dict(zip(TOKENS, map(int, row))),
        "messages": counts[0],
        "tool_calls": counts[1],
        "conversations": counts[2],
    }


def expected_counts(projects: Path) -> dict[str, int]:
    """Messages and tool calls counted straight from the files, independently of the importer."""
    msgs = calls = 0
    for f in projects.rglob("*.jsonl"):
        seen = set()
        for line in f.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            m = rec.get("message")
            if rec.get("type") not in ("user", "assistant") or not isinstance(m, dict):
                continue
            key = (m.get("id"), rec.get("requestId")) if rec["type"] == "assistant" and m.get("id") else rec["uuid"]
            msgs += key not in seen
            seen.add(key)
            if isinstance(m.get("content"), list) and rec["type"] == "assistant":
                calls += sum(b.get("type") == "tool_use" for b in m["content"])
    return {"messages": msgs, "tool_calls": calls}


def ccusage_tokens(out: str) -> dict[str, int]:
    t = json.loads(out)["totals"]
    return dict(zip(TOKENS, (t["inputTokens"], t["outputTokens"], t["cacheCreationTokens"], t["cacheReadTokens"])))


def dt_tokens(home: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(home / ".dt" / "dt.duckdb"), read_only=True)
    try:  # its per-line message rows (sub-agent lines included): what its session totals are summed from
        row = con.execute(
            "SELECT sum(input_tokens), sum(output_tokens), sum(cache_create_tokens), "
            "sum(cache_read_tokens) FROM messages"
        ).fetchone()
    finally:
        con.close()
    return dict(zip(TOKENS, map(int, row)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--days", type=int, default=20)
    ap.add_argument("--skip-dt", action="store_true", help="claude-dt takes many minutes on the full corpus")
    ap.add_argument("--dt-again", action="store_true", help="also time claude-dt's second run (it re-parses all)")
    ap.add_argument("--skip-ccusage", action="store_true")
    a = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    home = CACHE / f"home-{a.sessions}"
    t0 = time.perf_counter()
    projects = build_corpus(home, a.sessions, a.days)
    files = list(projects.rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(
        f"corpus: {a.sessions} sessions, {len(files)} transcript files, {mb:.0f} MB in {projects} "
        f"(built or checked in {time.perf_counter() - t0:.1f}s)"
    )
    print(f"\n{'step':44} {'wall s':>8} {'MB/s':>7} {'peak RSS MB':>12}  error", flush=True)
    rows: list[tuple[str, Run]] = []

    def measure(name: str, cmd: list[str], env: dict[str, str]) -> Run:
        r = timed(cmd, env)
        rows.append((name, r))
        print(f"{name:44} {r.seconds:8.2f} {mb / r.seconds:7.1f} {r.rss_mb:12.0f}  {r.error}", flush=True)
        return r

    db = CACHE / "bench.duckdb"
    for suffix in ("", ".wal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    env = {"PYTHONPATH": str(ROOT), "CI": "true"}
    ingest = [sys.executable, "-m", "forensics", "ingest", str(projects), "--db", str(db), "--json"]
    first = measure("forensics ingest (first)", ingest, env)
    measure("forensics ingest (again, unchanged)", ingest, env)
    measure("  floor: python -c 'import forensics.cli'", [sys.executable, "-c", "import forensics.cli"], env)
    inside = timed(
        [
            sys.executable,
            "-c",
            "import sys, time; from forensics import ingest; t = time.perf_counter(); "
            "ingest([sys.argv[1]], db=sys.argv[2]); print(time.perf_counter() - t)",
            str(projects),
            str(db),
        ],
        env,
    )
    if not inside.error:
        print(f"{'  of which forensics.ingest() itself':44} {float(inside.out):8.2f}", flush=True)
    ours = our_tokens(db) if not first.error else {}
    cc: dict[str, int] = {}
    if not a.skip_ccusage:
        bin_, why = install_ccusage()
        if bin_ is None:
            print(f"ccusage: not measured: {why}")
        else:
            run = measure(
                f"ccusage {CCUSAGE_VERSION} daily --json --offline",
                [str(bin_), "daily", "--json", "--offline"],
                {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
            )
            cc = ccusage_tokens(run.out) if not run.error else {}
    dt: dict[str, int] = {}
    if not a.skip_dt:
        bin_, why = install_dt()
        if bin_ is None:
            print(f"claude-dt: not measured: {why}")
        else:
            shutil.rmtree(home / ".dt", ignore_errors=True)
            run = measure("dt ingest (claude-dt, first)", [str(bin_), "ingest"], {"HOME": str(home)})
            if a.dt_again:
                measure("dt ingest (claude-dt, again)", [str(bin_), "ingest"], {"HOME": str(home)})
            dt = dt_tokens(home) if not run.error else {}
    report(rows, ours, cc, dt, expected_counts(projects))


def report(rows: list[tuple[str, Run]], ours: dict, cc: dict, dt: dict, want: dict) -> None:
    t = {name: r.seconds for name, r in rows if not r.error}
    first, again = t.get("forensics ingest (first)"), t.get("forensics ingest (again, unchanged)")
    cc_s = next((s for n, s in t.items() if n.startswith("ccusage")), None)
    dt_s = t.get("dt ingest (claude-dt, first)")
    print("\nratios (same run)                                   measured   target")
    if first and dt_s:
        print(f"  dt ingest / forensics ingest                      {dt_s / first:8.1f}x  >= 50x")
    if first and cc_s:
        print(f"  forensics ingest / ccusage                        {first / cc_s:8.1f}x  <= 5x")
    if first and again:
        print(f"  re-ingest unchanged / first ingest                {100 * again / first:7.2f}%  <= 2%")
    rss = rows[0][1].rss_mb
    print(f"  forensics peak RSS                                {rss:7.0f} MB  <= 500 MB")
    print("\ntokens       " + "".join(f"{k:>30}" for k in TOKENS))
    for name, d in (("forensics", ours), ("ccusage", cc), ("claude-dt", dt)):
        if d:
            print(f"{name:13}" + "".join(f"{d[k]:>30,}" for k in TOKENS))
    if ours and cc:
        same = all(ours[k] == cc[k] for k in TOKENS)
        print(f"forensics == ccusage on every token total: {same}")
    if ours and dt:
        over = [100 * (dt[k] - ours[k]) / ours[k] for k in TOKENS if ours[k]]
        print("claude-dt over-reports by " + ", ".join(f"{o:+.0f}%" for o in over) + " (it counts every line)")
    if ours:
        print(
            f"messages {ours['messages']:,} (counted from the files: {want['messages']:,}), tool calls "
            f"{ours['tool_calls']:,} (from the files: {want['tool_calls']:,}), conversations {ours['conversations']:,}"
        )


if __name__ == "__main__":
    main()
