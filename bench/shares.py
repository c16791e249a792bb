"""Where a report's CPU goes: each analyzer's CPU seconds (its process and every worker it ran) and share of the
whole report, beside the imports, the tuners, the charts left to wait for, the writing's parts (``build.step``) and the rest

    python bench/shares.py --db WAREHOUSE [--out DIR] [--format md,html,json] [--copy]

``--copy`` reports on a copy of the warehouse (a first report stays first). CPU seconds, not wall: on a machine
others load they are what compares. The charts are drawn in a side process beside the analyzers after the heaviest
one, so their CPU is counted in those analyzers' rows; a ``--format json`` run draws none, and the difference of
the two runs is what the charts cost.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"(\S+)\s+([\d.]+) s\s+([\d.]+) CPU s")


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)  # the analyzers' lines (INFO) and the other parts' (DEBUG: ``build.step``)
        self.rows: list[tuple[str, float, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        m = LINE.match(record.getMessage())
        if m:
            self.rows.append((m[1], float(m[2]), float(m[3])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=None, help="report folder (default: a temporary one)")
    ap.add_argument("--format", default="md,html,json")
    ap.add_argument("--only", default=None)
    ap.add_argument("--copy", action="store_true", help="report on a copy of --db")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="shares-"))
    db = args.db
    if args.copy:
        db = tmp / "copy.duckdb"
        shutil.copy(args.db, db)
    out = args.out or tmp / "out"

    from forensics.kernel import cputime

    t0, c0 = time.perf_counter(), cputime.tree_seconds()
    from forensics import api  # the report's imports are what api.report imports on first use

    handler = Lines()
    log = logging.getLogger("forensics.report")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    from forensics.analyzers.schema import load_config  # noqa: F401  (api.report's own imports, counted as imports)
    from forensics.report import build, render  # noqa: F401
    from forensics.tuning import advise  # noqa: F401

    t1, c1 = time.perf_counter(), cputime.tree_seconds()
    api.report(db, out, args.format.split(","), args.only)
    t2, c2 = time.perf_counter(), cputime.tree_seconds()
    total_cpu, total_wall = c2 - c0, t2 - t0
    rows = [("imports", t1 - t0, c1 - c0), *handler.rows]
    rows.append(("the rest", t2 - t1 - sum(w for _, w, _ in handler.rows), c2 - c1 - sum(c for *_, c in handler.rows)))
    print(f"{'step':20} {'wall s':>8} {'CPU s':>8} {'CPU share':>10}")
    for name, wall, cpu in sorted(rows, key=lambda r: -r[2]):
        print(f"{name:20} {wall:8.2f} {cpu:8.2f} {100 * cpu / total_cpu:9.1f} %")
    print(f"{'total':20} {total_wall:8.2f} {total_cpu:8.2f}   (load {os.getloadavg()[0]:.1f})")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
