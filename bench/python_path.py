"""How much of a SQLite source the importer's DuckDB path would leave to Python (issue 28): the rows whose
message arrays are of an unusual shape (``forensics.formats.kit.duckparse``), and their messages; and whether that
path is on (``forensics.formats.sqlite.IN_DUCKDB``).

Run alone: ``python bench/python_path.py bench.db`` prints one JSON object. It reads the rows in the importer's
task size and asks the same two functions the importer asks.
"""

from __future__ import annotations

import json
import sqlite3
import sys

import orjson

from forensics.formats.kit import duckparse
from forensics.formats.sqlite import CHUNK_ROWS, IN_DUCKDB


def python_path(db: str, table: str = "ai_conversations", column: str = "messages") -> dict[str, int]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.text_factory = bytes
    rows = messages = rows_python = messages_python = 0
    cur = con.execute(f'SELECT "{column}" FROM "{table}"')
    while batch := [r for (r,) in cur.fetchmany(CHUNK_ROWS)]:
        read = duckparse.read(duckparse.candidates(list(batch)))
        duckparse.tables({})  # the task's tables dropped
        for k, raw in enumerate(batch):
            n = read.rows[k].messages if k in read.rows else _count(raw)
            rows, messages = rows + 1, messages + n
            if k not in read.rows:
                rows_python, messages_python = rows_python + 1, messages_python + n
    return {
        "in_duckdb": IN_DUCKDB,
        "rows": rows,
        "rows_python": rows_python,
        "messages": messages,
        "messages_python": messages_python,
    }


def _count(raw: object) -> int:
    """The messages of a row as the Python path counts them (a row that is no array counts one)."""
    try:
        data = orjson.loads(raw) if isinstance(raw, (bytes, str)) else None
    except orjson.JSONDecodeError:
        return 1
    return len(data) if isinstance(data, list) else 1


if __name__ == "__main__":
    print(json.dumps(python_path(sys.argv[1])))
