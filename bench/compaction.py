#!/usr/bin/env python3
"""The compaction audit on the planted corpus beside its trivial references (docs/audits-evaluation.md).

    python bench/compaction.py

Ingests fixtures/compaction and fixtures/compaction-clauses (sessions written by fixtures/make_compaction.py with
their labels), runs `report --only compaction`, and prints, per folder: the planted dropped-and-needed facts the
audit finds at their positions and the losses it reports that were not planted; and two references: "every held
fact needed again after the compaction is lost" (the same extraction, the summary and the kept messages not read)
and "nothing is lost".
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def planted(labels: Path) -> set[tuple[str, int, str, int, int]]:
    return {
        (sid, k["position"], f["kind"], f["fact_position"], f["needed_at"])
        for sid, s in json.loads(labels.read_text(encoding="utf-8")).items()
        for k in s["compactions"]
        for f in k["facts"]
        if f["needed_at"] is not None
    }


def reference(db: Path) -> set[tuple[str, int, str, int, int]]:
    """Every fact held at a compaction whose next mention after it is a need, called lost."""
    from forensics.analyzers.compaction.audit_all import _extracted
    from forensics.analyzers.compaction.facts import NEEDS, SOURCES
    from forensics.analyzers.schema import defaults
    from forensics.warehouse import open_warehouse

    out = set()
    with open_warehouse(db) as wh:
        logged = {
            c
            for (c,) in wh.con.execute(
                "SELECT DISTINCT conversation_id FROM events WHERE kind = 'compaction'"
            ).fetchall()
        }
        for c, facts in _extracted(wh.con, defaults(), logged):
            prev = -1
            for k in sorted(c.compactions, key=lambda k: k.position):
                for f in facts:
                    before = [m for m in f.mentions if prev <= m.position < k.position and m.channel in SOURCES]
                    after = [m for m in f.mentions if m.position >= k.position and m.channel in NEEDS[f.kind]]
                    if before and after:
                        out.add((c.native_id, k.position, f.kind, before[-1].position, after[0].position))
                prev = k.position
    return out


def main() -> None:
    cli = [sys.executable, "-m", "forensics"]
    for folder in ("compaction", "compaction-clauses"):
        src = ROOT / "fixtures" / folder
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "w.duckdb"
            subprocess.run([*cli, "ingest", str(src), "--db", str(db)], check=True, capture_output=True)
            subprocess.run(
                [*cli, "report", "--db", str(db), "--out", str(Path(tmp) / "r"), "--only", "compaction"],
                check=True,
                capture_output=True,
            )
            import duckdb

            con = duckdb.connect(str(db), read_only=True)
            got = {
                tuple(r)
                for r in con.execute(
                    "SELECT native_id, event_position, kind, fact_position, needed_at "
                    "FROM compaction_facts WHERE needed_at IS NOT NULL"
                ).fetchall()
            }
            con.close()
            want, ref = planted(src / "labels.json"), reference(db)
            print(
                f"{folder}: planted {len(want)}; the audit finds {len(got & want)}, {len(got - want)} not planted; "
                f"reference 'needed again = lost' finds {len(ref & want)} among {len(ref)} "
                f"(precision {len(ref & want) / max(len(ref), 1):.2f}); reference 'nothing lost' finds 0"
            )


if __name__ == "__main__":
    main()
