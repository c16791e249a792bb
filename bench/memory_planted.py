#!/usr/bin/env python3
"""The decision-memory audit's `decision_unrecorded` on the planted set of fixtures/make_memory_planted.py (dev and
held-out), beside two trivial references: mark nothing, and mark every person turn holding a choice word.

    python bench/memory_planted.py            (writes the planted set first when it is missing)

Prints, per split and form, found/total and the traps flagged (false findings).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHOICE = re.compile(r"(?i)\b(use|using|go with|choose|pick|switch|decided?|select)\b|用|选|定|换|改")


def audit(db: Path, work: Path) -> set[tuple[str, int]]:
    from click.testing import CliRunner

    from forensics import ingest
    from forensics.cli import cli

    wh = work / f"{db.stem}.duckdb"
    ingest([db], db=wh)
    r = CliRunner().invoke(
        cli,
        ["report", "--db", str(wh), "--only", "memory", "--out", str(work / db.stem), "--format", "json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.stderr
    con = duckdb.connect(str(wh), read_only=True)
    try:
        rows = con.execute(
            "SELECT c.native_id, f.position FROM memory_findings f JOIN conversations c "
            "USING (conversation_id) WHERE f.kind = 'decision_unrecorded'"
        ).fetchall()
    finally:
        con.close()
    return {(str(n), int(p)) for n, p in rows}


def score(marked: set[tuple[str, int]], labels: dict) -> tuple[Counter, Counter, int]:
    total, found = Counter(), Counter()
    for f in labels["findings"]:
        total[f["form"]] += 1
        found[f["form"]] += (f["conversation"], f["position"]) in marked
    false = sum((t["conversation"], t["position"]) in marked for t in labels["traps"])
    return found, total, false


def main() -> None:
    labels = json.loads((ROOT / "fixtures/labels/memory-planted.labels.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        for split in ("dev", "heldout"):
            lab = labels[split]
            every = {
                (m["conversation"], m["position"])
                for m in lab["findings"] + lab["traps"]
                if m["role"] == "user" and CHOICE.search(m["text"])
            }
            marked = {(c, p) for c, p in audit(ROOT / f"fixtures/memory-planted/{split}.db", Path(tmp))}
            print(f"{split}: {len(lab['findings'])} planted, {len(lab['traps'])} traps")
            for name, m in (("audit", marked), ("mark nothing", set()), ("every choice word", every)):
                found, total, false = score(m, lab)
                forms = ", ".join(f"{k} {found[k]}/{total[k]}" for k in sorted(total))
                print(
                    f"  {name:18} found {sum(found.values())}/{sum(total.values())} ({forms}); traps flagged "
                    f"{false}/{len(lab['traps'])}"
                )


if __name__ == "__main__":
    main()
