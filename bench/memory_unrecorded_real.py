#!/usr/bin/env python3
"""Precision probe: what the decision-memory audit's `decision_unrecorded` readers flag on real agent logs, which
carry no decision records (so the audit itself stays idle on them). Each conversation is taken as its own
decision-memory project with nothing recorded; every statement of a decision the readers find is printed.

    python bench/memory_unrecorded_real.py WAREHOUSE [OUT.jsonl]   (a warehouse of ../shared/data/agent-logs)

Works on a copy; run it with another checkout first on PYTHONPATH to compare versions.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb


def main() -> None:
    from forensics.analyzers.memory.rules import find
    from forensics.analyzers.schema import defaults
    from forensics.kernel.selection import SELECTED

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "w.duckdb"
        shutil.copy(sys.argv[1], db)
        con = duckdb.connect(str(db))
        con.execute("UPDATE conversations SET project = conversation_id")
        con.execute(f"CREATE TEMP TABLE {SELECTED} AS SELECT conversation_id FROM conversations")
        hits = [h for h in find(con, defaults(), []) if h.kind == "decision_unrecorded"]
        rows = []
        for h in hits:
            role, text = con.execute(
                "SELECT role, content FROM messages WHERE conversation_id = ? AND position = ? AND on_main_path",
                [h.conversation_id, h.position],
            ).fetchone() or ("", "")
            rows.append({"conversation": h.native_id, "position": h.position, "role": role, "detail": h.detail})
        con.close()
    print(f"{len(rows)} decision_unrecorded on {sys.argv[1]}")
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
