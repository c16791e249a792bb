"""The full mutation sweep (issue 45, part 5; tests/mutations.py): every class on every format's fixtures, each
mutated file ingested alone into a fresh warehouse.

    python -m bench.mutations               # counts per format and per class, then every problem
    python -m bench.mutations --only cline  # one format (or several, comma-separated)

A problem is a failed source (one bad record failed the whole file), a silent import (imported with nothing
imported, quarantined or skipped, or messages read and not accounted for), a loss (fewer messages than the good
file with nothing quarantined, skipped or nulled to say why), a crash of the run or a quarantine row without
its bytes or reason. The trivial reference: the good files themselves, each ingested the same way.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.hostile_corpus import SOURCES  # noqa: E402
from tests.mutations import Outcome, sweep  # noqa: E402

KINDS = ("failed", "silent", "lost", "crashed", "other")


def _kind(o: Outcome) -> str:
    return o.how if o.how in KINDS[:-1] else "other"


def table(outcomes: list[Outcome], key: str) -> list[str]:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        k = o.case.fmt if key == "format" else o.case.mutation
        rows[k]["files"] += 1
        if o.problem:
            rows[k][_kind(o)] += 1
            rows[k]["problems"] += 1
    width = max(len(k) for k in rows) if rows else 6
    out = [f"{key:<{width}}  files  problems  " + "  ".join(KINDS)]
    for k in sorted(rows):
        c = rows[k]
        out.append(
            f"{k:<{width}}  {c['files']:>5}  {c['problems']:>8}  " + "  ".join(f"{c[x]:>{len(x)}}" for x in KINDS)
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.mutations", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="formats to sweep, comma-separated (default: every format)")
    args = ap.parse_args(argv)
    sources = SOURCES
    if args.only:
        wanted = set(args.only.split(","))
        sources = [s for s in SOURCES if s[0] in wanted]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutations-") as tmp:
        outcomes = sweep(Path(tmp), sources)
    mutated = [o for o in outcomes if o.case.mutation != "none"]
    bad = [o for o in outcomes if o.problem]
    print(
        f"mutation sweep: {len(sources)} fixtures of {len({f for f, _ in sources})} formats, {len(mutated)} mutated files"
    )
    print(
        f"  failed sources {sum(o.how == 'failed' for o in bad)}, silent imports {sum(o.how == 'silent' for o in bad)}, "
        f"losses {sum(o.how == 'lost' for o in bad)}, other problems "
        f"{sum(_kind(o) in ('crashed', 'other') for o in bad)}; the good files' own problems "
        f"{sum(o.case.mutation == 'none' for o in bad)}; {time.monotonic() - t0:.0f} s"
    )
    print()
    print("\n".join(table(mutated, "format")))
    print()
    print("\n".join(table(mutated, "class")))
    if bad:
        print()
        for o in bad:
            print(f"{o.case.fmt} {o.case.mutation} {o.case.fixture}: {o.problem}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
