"""The yardsticks `bench/run.py` measures beside `forensics`, each runnable on its own.

- ``naive DB``: the seed's own approach: sqlite3 + json.loads per conversation + a Python loop counting the
  docs/definitions.md#baseline-metrics baseline metrics (as ``gen_corpus.py figures()`` defines them). Ingest and report must beat it.
- ``read_json DIR``: DuckDB's own JSON reader over the session folder computing the same counts: the floor
  for JSONL (nothing parses JSON faster here).
- ``io DB``: fetch every ``messages`` string from SQLite and nothing else: the floor for SQLite.

Each prints one JSON line of totals so a run can check that the anchors and the warehouse agree.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

CONTINUE_WORDS = ("继续", "continue", "go on", "继续吧")


def naive(db: str) -> dict[str, float]:
    """Totals of the baseline metrics (docs/definitions.md#baseline-metrics) over every conversation, the way the seed computes them."""
    t = dict.fromkeys(
        (
            "conversations",
            "messages",
            "system",
            "user",
            "assistant",
            "tool",
            "tool_calls",
            "parallel_turns",
            "tool_results_gt_2kb",
            "tool_results_gt_10kb",
            "empty_assistant",
            "continue_nags",
            "short_user",
            "assistant_chars",
            "tool_chars",
        ),
        0,
    )
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for (raw,) in con.execute("SELECT messages FROM ai_conversations"):
        t["conversations"] += 1
        for m in json.loads(raw):
            role, content = m["role"], m.get("content") or ""
            if role == "system":
                t["system"] += 1
                continue
            t["messages"] += 1
            t[role] += 1
            if role == "user":
                s = content.strip()
                t["continue_nags"] += s in CONTINUE_WORDS
                t["short_user"] += len(s) <= 12
            elif role == "assistant":
                n = len(m.get("tool_calls") or ())
                t["tool_calls"] += n
                t["parallel_turns"] += n >= 3
                t["empty_assistant"] += n > 0 and not content.strip()
                t["assistant_chars"] += len(content)
            elif role == "tool":
                b = len(content.encode("utf-8"))
                t["tool_results_gt_2kb"] += b > 2000
                t["tool_results_gt_10kb"] += b > 10000
                t["tool_chars"] += len(content)
    con.close()
    return t


READ_JSON_SQL = """
SELECT role, count(*) AS n, sum(coalesce(json_array_length(tool_calls), 0)) AS tool_calls,
       count_if(json_array_length(tool_calls) >= 3) AS parallel_turns,
       count_if(strlen(content) > 2000) AS gt_2kb, count_if(strlen(content) > 10000) AS gt_10kb,
       count_if(json_array_length(tool_calls) > 0 AND trim(content) = '') AS empty,
       count_if(trim(content) IN ('继续', 'continue', 'go on', '继续吧')) AS nags,
       count_if(length(trim(content)) <= 12) AS short, sum(length(content)) AS chars
FROM read_json(?, format = 'newline_delimited',
               columns = {role: 'VARCHAR', content: 'VARCHAR', tool_calls: 'JSON'})
WHERE role IS NOT NULL
GROUP BY role
"""


def read_json(folder: str) -> dict[str, float]:
    """The same counts with DuckDB's JSON reader over every session file (headers have no role: skipped).

    Grouping by role and counting every condition on every row is the fastest shape here: per-role
    FILTER clauses or CASE projections make DuckDB evaluate trim() twice and run 2-3 x slower.
    """
    import duckdb

    con = duckdb.connect()
    rows = {r[0]: r[1:] for r in con.execute(READ_JSON_SQL, [str(Path(folder) / "*.jsonl")]).fetchall()}
    z = (0,) * 9
    sysm, user, asst, tool = (rows.get(k, z) for k in ("system", "user", "assistant", "tool"))
    return {
        "messages": user[0] + asst[0] + tool[0],
        "system": sysm[0],
        "user": user[0],
        "assistant": asst[0],
        "tool": tool[0],
        "tool_calls": asst[1],
        "parallel_turns": asst[2],
        "tool_results_gt_2kb": tool[3],
        "tool_results_gt_10kb": tool[4],
        "empty_assistant": asst[5],
        "continue_nags": user[6],
        "short_user": user[7],
        "assistant_chars": asst[8],
        "tool_chars": tool[8],
    }


def io_floor(db: str) -> dict[str, float]:
    """Fetch every messages string and nothing else."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n = nbytes = 0
    for (raw,) in con.execute("SELECT messages FROM ai_conversations"):
        n += 1
        nbytes += len(raw)
    con.close()
    return {"conversations": n, "chars": nbytes}


ANCHORS = {"naive": naive, "read_json": read_json, "io": io_floor}

if __name__ == "__main__":
    print(json.dumps(ANCHORS[sys.argv[1]](sys.argv[2])))
