"""`python bench/serve.py [WAREHOUSE]`: `forensics serve` answering on the million-message warehouse (issue 16).

Uses the warehouse `make bench` builds (bench/.cache/sqlite.duckdb; copied to serve.duckdb, then reported once
so the explorer has the report's findings), starts `forensics serve` as a user does, and times real HTTP
requests from this process: the conversations page (default sort, a metric sort, a finding-kind filter) and the
transcript of the conversation closest to 300 messages. Medians of --repeat requests, each beside the floor
measured in the same run: opening the warehouse read-only and reading that conversation's messages, what any
page has to do at the least. Also the size of report.html and how many messages it embeds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
LIMIT_S = 1.0  # the target: each page answered in under a second


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[float, int]:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as r:
        size = len(r.read())
    return time.perf_counter() - t, size


def _floor(db: Path, cid: str) -> float:
    """Open read-only (with the masking macros) and read one conversation's main path: the least a page does."""
    code = (
        "import sys,time; from forensics.warehouse import open_warehouse\n"
        "t=time.perf_counter()\n"
        "with open_warehouse(sys.argv[1], read_only=True) as wh:\n"
        "    wh.con.execute('SELECT position, forensics_masked(content) FROM messages WHERE conversation_id = ? "
        "AND on_main_path ORDER BY position', [sys.argv[2]]).fetchall()\n"
        "print(time.perf_counter()-t)"
    )
    return float(subprocess.run([PY, "-c", code, str(db), cid], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse", nargs="?", default=str(HERE / ".cache" / "sqlite.duckdb"))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--reported", action="store_true", help="WAREHOUSE has been reported already: use it as it is")
    args = ap.parse_args()
    src = Path(args.warehouse)
    if not src.exists():
        sys.exit(f"{src}: no warehouse; `make bench` builds it (or pass one)")
    db, out = src.with_name("serve.duckdb"), src.with_name("serve-report")
    if args.reported:  # a warehouse a report has already run on (its report.html beside it, in report/)
        db, out = src, src.with_name("report")
    if not db.exists():
        shutil.copy(src, db)
    if not (out / "report.html").exists():
        t = time.perf_counter()
        subprocess.run(
            [PY, "-m", "forensics", "report", "--db", str(db), "--out", str(out)],
            check=True,
            env={**os.environ, "CI": "true"},
            stdout=subprocess.DEVNULL,
        )
        print(f"report (once, for the explorer's findings): {time.perf_counter() - t:.1f} s")
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    messages, conversations = con.execute("SELECT count(*), count(DISTINCT conversation_id) FROM messages").fetchall()[
        0
    ]
    cid, n = con.execute(
        "SELECT conversation_id, count(*) AS n FROM messages WHERE on_main_path GROUP BY 1 "
        "ORDER BY abs(n - 300), 1 LIMIT 1"
    ).fetchall()[0]
    big, nbig = con.execute(
        "SELECT conversation_id, count(*) AS n FROM messages WHERE on_main_path GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1"
    ).fetchall()[0]
    a, b = (
        r[0]
        for r in con.execute(
            "SELECT conversation_id FROM tool_calls GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2"
        ).fetchall()
    )
    con.close()
    port = _port()
    proc = subprocess.Popen(
        [PY, "-m", "forensics", "serve", "--db", str(db), "--port", str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        proc.stderr.readline()
        base = f"http://127.0.0.1:{port}"
        for _ in range(400):
            try:
                _get(base + "/queries")
                break
            except OSError:
                time.sleep(0.05)
        pages = [
            ("conversations", "/conversations"),
            ("conversations by messages", "/conversations?sort=messages"),
            ("conversations with no_focus", "/conversations?kind=no_focus"),
            ("findings", "/findings"),
            ("overview", "/"),
            (f"transcript ({n} messages)", f"/c/{cid}"),
            (f"transcript window at {nbig // 2} of {nbig}", f"/c/{big}?at={nbig // 2}"),
            ("conversations by agent, outcome", "/conversations?agent=sqlite&outcome=unknown"),
            ("conversations by tokens", "/conversations?sort=tokens_in"),
            ("search a common word", "/search?q=error"),
            ("search a rare word", "/search?q=zqxjkv"),
            ("search a regular expression", "/search?q=err(or|ors)%5Cb&mode=regex"),
            ("search from message 500,001", "/search?q=error&after=500000"),
            ("run diff of the 2 longest runs", f"/diff?a={a}&b={b}"),
            ("diff: tasks", "/diff"),
        ]
        floor = statistics.median(_floor(db, cid) for _ in range(args.repeat))
        html = (out / "report.html").read_text()
        embedded = len(re.findall(r'"p":\d+', html))
        print(
            f"forensics serve on {db.name}: {messages} messages, {conversations} conversations; medians of "
            f"{args.repeat} requests"
        )
        print(f"{'page':32} {'median s':>9} {'÷ floor':>8} {'KB':>7}  verdict (< {LIMIT_S:g} s)")
        print(f"{'floor: open + read one path':32} {floor:9.3f} {1:8.2f} {'':>7}")
        results = {}
        for name, path in pages:
            times, size = [], 0
            for _ in range(args.repeat):
                t, size = _get(base + path)
                times.append(t)
            med = statistics.median(times)
            results[name] = med
            print(f"{name:32} {med:9.3f} {med / floor:8.2f} {size / 1024:7.0f}  {'met' if med < LIMIT_S else 'MISSED'}")
        print(f"report.html: {len(html.encode()) / 1e6:.2f} MB, {embedded} messages embedded of {messages}")
        (HERE / "results").mkdir(exist_ok=True)
        (HERE / "results" / "serve.json").write_text(
            json.dumps(
                {
                    "messages": messages,
                    "floor_s": floor,
                    "pages_s": results,
                    "report_html_bytes": len(html.encode()),
                    "embedded_messages": embedded,
                },
                indent=2,
            )
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
