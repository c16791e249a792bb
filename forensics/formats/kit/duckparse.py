"""Message arrays parsed, flattened and normalised inside DuckDB, in the parse worker (issue 28).

Per-message Python was a third of an import (docs/scale.md). The SQLite importer reads its rows here when
``sqlite.IN_DUCKDB`` is on (off for now: on bench.db it costs the CPU of the Python fast path, docs/scale.md).
A parse task hands its rows' JSON text to an in-memory DuckDB as one Arrow column, and SQL unnests the arrays,
maps the role aliases, unescapes the text, numbers the messages and links each tool call to the result that
names it, returning the message and tool-call tables with the schemas the Python path builds (``records.arrow_schemas``). Python touches one value
per row (its id, its title) and the few tool outputs whose error status Python's ``re`` must decide
(``records.failed_exit``, ``records.starts_like_error``: SQL picks them with a wider RE2 pattern).

A row is read here only where the result is the one the Python path (``normalize``) gives; every other row
(a message that is not an object or repeats a key, an unknown role, content that is not a string, a string or
out-of-range timestamp, a float id, a tool message that names its call by tool name, a key repeated in a call,
JSON that DuckDB reads more leniently than orjson...) is returned as *unusual* and the caller parses it in
Python, so both paths give the same rows, counts and quarantine reasons (tests/test_duckparse.py).

The text of messages that still travel as their JSON literal (``JsonText``, the fast decoder's) is unescaped
here too (``unescape``), before secrets are masked: the masking filter reads plain text.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from dataclasses import dataclass

import duckdb
import msgspec
import polars as pl

from forensics.formats.kit import fastpath
from forensics.formats.kit.records import ROLE_ALIASES, arrow_schemas, failed_exit, starts_like_error
from forensics.kernel.arrow import relation_frame, stream
from forensics.warehouse.core import set_memory_limit

MEMORY_MB = 128  # a parse worker's DuckDB (4 MB tasks need ~60 MB); more for a task of one huge row
MS_FROM = 1e11  # values.epoch reads a number below this as seconds; others (ms, µs, ns, bad) take Python
# Python's str.isspace() characters, for a title's "first user message that is not blank" (str.strip)
SPACES = "".join(f"\\x{{{c:x}}}" for c in range(sys.maxunicode + 1) if chr(c).isspace())
# RE2 patterns wider than records.EXIT_STATUS and records.ERROR_START (their IGNORECASE folds ı and İ to i):
# a tool output they match goes to Python, which decides
MAY_EXIT = "(?i)ex[iıİ]t"
MAY_ERROR = r"^[^\pL]*(?i:err|错误|失败|fata|tracebac)"


@functools.cache
def con() -> duckdb.DuckDBPyConnection:
    """This process's in-memory DuckDB: one thread (the parse workers are the parallelism)."""
    c = duckdb.connect(config={"threads": 1})
    c.execute("SET preserve_insertion_order = true")
    c.execute("SET allocator_flush_threshold = '16MB'")  # give freed memory back between tasks
    return c


def unescape(msg: pl.DataFrame) -> pl.DataFrame:
    """A batch's message table with every JSON-literal text (``content_json``) unescaped into ``content``: by
    polars' JSON reader, in Rust (a JsonText is one JSON string literal without ``\\u`` escapes; DuckDB's
    ``json_extract_string`` in a connection of its own per batch gave the same text at five times the CPU)."""
    if msg["content_json"].null_count() == msg.height:
        return msg
    text = msg["content_json"].str.json_decode(pl.String)
    return msg.with_columns(
        pl.coalesce(msg["content"], text).alias("content"), pl.lit(None, dtype=pl.String).alias("content_json")
    )


def _role_case(col: str) -> str:
    """The canonical role of a role's JSON text (``"human"`` -> user), NULL for any other value."""
    return (
        "CASE " + col + " " + " ".join(f"WHEN '{json.dumps(k)}' THEN '{v}'" for k, v in ROLE_ALIASES.items()) + " END"
    )


NUMBER = "('BIGINT', 'UBIGINT', 'DOUBLE')"
FIELDS = ("role", "tool_calls", "tool_call_id", "is_error", "id", "timestamp", "created_at", "createdAt", "name")
SHAPE = json.dumps([{"content": "VARCHAR", **dict.fromkeys(FIELDS, "JSON")}])  # a JSON null: SQL NULL
# One row per message of the rows given (``_rows``: k, raw), each field as the Python path would read it, and
# ``bad``: the message needs that path. The struct keeps the first of a key written twice (orjson the last):
# such a message is bad. ``content`` comes as text whatever its JSON type: a text that reads as JSON other
# than a string (true, 12, [...], {...}) may have been one, and is bad too.
NOT_STRING = (
    r"content_s IN ('true', 'false') OR regexp_full_match(content_s, '-?(0|[1-9][0-9]*)(\.[0-9]+)?"
    r"([eE][+-]?[0-9]+)?') OR (starts_with(content_s, '[') AND ends_with(content_s, ']')) "
    r"OR (starts_with(content_s, '{') AND ends_with(content_s, '}'))"
)
MESSAGES = f"""
CREATE OR REPLACE TEMP TABLE _dp_msg AS
WITH a AS (SELECT k, from_json(raw, '{SHAPE}') AS arr, json_keys(raw, '$[*]') AS keys FROM _rows),
u AS (SELECT k, unnest(arr) AS m, unnest(keys) AS keys, unnest(range(len(arr))) AS i FROM a),
f AS (
  SELECT k, i::INTEGER AS i, len(keys) = 0 OR len(keys) <> len(list_distinct(keys)) AS not_plain,
    m.role AS role_j, m.content AS content_s, m.tool_calls AS calls_j, m.tool_call_id AS tcid_j,
    m.is_error AS flag_j, m.id AS id_j, m.name AS name_j,
    CASE WHEN list_contains(keys, 'timestamp') THEN m.timestamp WHEN list_contains(keys, 'created_at')
         THEN m.created_at ELSE m.createdAt END AS ts_j
  FROM u),
g AS (
  SELECT *, {_role_case("role_j")} AS role,
    CASE WHEN content_s IS NULL THEN '' WHEN NOT ({NOT_STRING}) THEN content_s END AS text,
    CASE flag_j WHEN 'true' THEN true WHEN 'false' THEN false END AS flag,
    json_type(id_j) AS id_type, json_type(ts_j) AS ts_type
  FROM f),
h AS (
  SELECT *, CASE WHEN tcid_j IS NOT NULL THEN tcid_j WHEN role = 'tool' THEN id_j END AS answer_j,
    CASE WHEN ts_type IN {NUMBER} THEN TRY_CAST(ts_j::VARCHAR AS DOUBLE) END AS ts_num
  FROM g)
SELECT k, i, role, text, flag,
  CASE id_type WHEN 'VARCHAR' THEN id_j ->> '$' WHEN 'BIGINT' THEN CAST(CAST(id_j::VARCHAR AS HUGEINT) AS VARCHAR)
       WHEN 'UBIGINT' THEN CAST(CAST(id_j::VARCHAR AS HUGEINT) AS VARCHAR) ELSE CAST(i AS VARCHAR) END AS nid,
  CASE WHEN json_type(answer_j) = 'VARCHAR' THEN answer_j ->> '$' END AS tcid,
  CASE WHEN ts_num > 0 AND ts_num < {MS_FROM} THEN ts_num END AS ts,
  CASE WHEN role = 'assistant' THEN calls_j END AS calls_j,
  CASE WHEN json_type(name_j) = 'VARCHAR' THEN name_j ->> '$' END AS name,
  coalesce(not_plain OR role IS NULL OR text IS NULL
    OR (flag IS NULL AND flag_j IS NOT NULL)
    OR id_type = 'DOUBLE'
    OR coalesce(json_type(name_j) NOT IN ('VARCHAR', 'NULL'), false)
    OR NOT (ts_j IS NULL OR ts_j = '""' OR coalesce(ts_num > 0 AND ts_num < {MS_FROM}, false))
    OR (role = 'tool' AND NOT coalesce(json_type(answer_j) = 'VARCHAR' AND answer_j <> '""', false)), false) AS bad
FROM h
"""
# The tool calls of assistant messages: a call's ``function`` object names it, or the call itself does
CALLS = """
CREATE OR REPLACE TEMP TABLE _dp_call AS
WITH a AS (SELECT k, i, from_json(calls_j, '["MAP(VARCHAR, JSON)"]') AS arr FROM _dp_msg WHERE calls_j IS NOT NULL),
u AS (SELECT k, i, unnest(arr) AS c, unnest(range(len(arr))) AS ci FROM a),
f AS (SELECT k, i, ci::INTEGER AS ci, c, c['id'] AS id_j, c['function'] AS fn_j FROM u),
g AS (SELECT *, CASE WHEN fn_j IS NULL OR fn_j = 'null' THEN c ELSE from_json(fn_j, '"MAP(VARCHAR, JSON)"') END AS fn
      FROM f)
SELECT k, i, ci, CASE WHEN id_j IS NULL OR id_j = 'null' THEN NULL ELSE id_j ->> '$' END AS call_id,
  CASE WHEN fn['name'] IS NULL OR fn['name'] = 'null' THEN NULL ELSE fn['name'] ->> '$' END AS name,
  CASE WHEN fn['arguments'] IS NULL OR fn['arguments'] = 'null' THEN '' ELSE fn['arguments'] ->> '$' END AS arguments,
  c IS NULL OR fn IS NULL AS bad
FROM g
"""
_BAD = """
CREATE OR REPLACE TEMP TABLE _dp_bad AS
SELECT DISTINCT k FROM _dp_msg WHERE bad UNION SELECT DISTINCT k FROM _dp_call WHERE bad
"""
# Tool outputs whose error status Python decides (the rest: the message's own flag)
_MAY_FAIL = f"""
SELECT k, i, text, flag FROM _dp_msg
WHERE role = 'tool' AND k NOT IN (SELECT k FROM _dp_bad)
  AND (regexp_matches(text, '{MAY_EXIT}') OR (flag IS NULL AND regexp_matches(text, '{MAY_ERROR}')))
"""
# Each tool message answers the latest call with its id made before it (records.Batch: ``by_id``), unless an
# earlier message answered that call already
_LINKS = """
CREATE OR REPLACE TEMP TABLE _dp_link AS
WITH r AS (
  SELECT m.k, m.i, m.tcid, coalesce(e.err, coalesce(m.flag, false)) AS err
  FROM _dp_msg m LEFT JOIN _errs e ON e.k = m.k AND e.i = m.i
  WHERE m.role = 'tool' AND m.k NOT IN (SELECT k FROM _dp_bad)),
t AS (
  SELECT r.k, r.i, any_value(r.err) AS err, max(CASE WHEN c.k IS NOT NULL THEN {'i': c.i, 'ci': c.ci} END) AS target
  FROM r LEFT JOIN _dp_call c ON c.k = r.k AND c.call_id = r.tcid AND c.i < r.i
  GROUP BY r.k, r.i)
SELECT *, row_number() OVER (PARTITION BY k, target ORDER BY i) AS nth FROM t
"""
_UNLINKED = """
SELECT CASE WHEN target IS NULL THEN 'an id no call has' ELSE 'the id of a call already answered' END, count(*)
FROM _dp_link WHERE target IS NULL OR nth > 1 GROUP BY 1
"""
_SUMMARY = f"""
SELECT k, count(*), min(ts), max(ts),
  arg_min(text, i) FILTER (WHERE role = 'user' AND regexp_matches(text, '[^{SPACES}]'))
FROM _dp_msg WHERE k NOT IN (SELECT k FROM _dp_bad) GROUP BY k
"""
_MSG_OUT = """
SELECT d.cid AS conversation_id, m.i AS seq, m.i AS position, m.nid AS native_id,
  lag(m.nid) OVER (PARTITION BY m.k ORDER BY m.i) AS parent_native_id, m.role, m.text AS content,
  NULL AS content_json, coalesce(n.calls, 0) AS tool_call_count, m.ts AS created_at, nullif(m.tcid, '') AS tool_call_id,
  NULL AS origin, m.name
FROM _dp_msg m JOIN _cids d ON d.k = m.k
LEFT JOIN (SELECT k, i, count(*) AS calls FROM _dp_call GROUP BY ALL) n ON n.k = m.k AND n.i = m.i
"""
_CALL_OUT = """
SELECT d.cid AS conversation_id, c.i AS seq, c.i AS position, c.ci AS call_index, c.call_id, c.name, c.arguments,
  l.i AS result_seq, l.i AS result_position, NULL AS result_bytes, l.err AS is_error
FROM _dp_call c JOIN _cids d ON d.k = c.k
LEFT JOIN (SELECT * FROM _dp_link WHERE nth = 1 AND target IS NOT NULL) l
  ON l.k = c.k AND l.target.i = c.i AND l.target.ci = c.ci
"""


@dataclass
class Summary:
    """A row read by SQL: its message count, first and last timestamp, first user text that is not blank."""

    messages: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    first_user: str | None = None


@functools.cache
def _array_grammar() -> msgspec.json.Decoder[list[msgspec.Raw]]:
    return msgspec.json.Decoder(list[msgspec.Raw])


def candidates(raws: list[object]) -> dict[int, bytes]:
    """The rows SQL may read, by index: bytes that are valid UTF-8 and a JSON array by the strict grammar
    orjson applies (msgspec checks it without building objects; DuckDB also accepts trailing commas and NaN)."""
    blobs = {k: raw for k, raw in enumerate(raws) if isinstance(raw, bytes)}
    if not fastpath.valid_utf8(list(blobs.values())):
        blobs = {k: raw for k, raw in blobs.items() if fastpath.valid_utf8([raw])}
    out = {}
    for k, raw in blobs.items():
        try:
            _array_grammar().decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue
        out[k] = raw
    return out


@dataclass
class Read:
    """What SQL made of a task's rows: a summary of each row it read; the others are unusual."""

    rows: dict[int, Summary]
    unlinked: Counter[str]


def read(rows: dict[int, bytes]) -> Read:
    """Parse ``rows`` (``candidates``) into this process's DuckDB; ``tables`` returns them. Should DuckDB fail
    (out of memory, say), every row is unusual."""
    try:
        return _read(rows) if rows else Read({}, Counter())
    except duckdb.Error:
        _drop()
        return Read({}, Counter())


def _read(rows: dict[int, bytes]) -> Read:
    c = con()
    size = sum(len(raw) for raw in rows.values())
    table = pl.DataFrame(
        {
            "k": pl.Series(list(rows), dtype=pl.Int32),
            "raw": pl.Series(list(rows.values()), dtype=pl.Binary).cast(pl.String),  # checked UTF-8, in Rust
        }
    )
    _rows = stream(table)
    _memory(max(MEMORY_MB, 32 * (size >> 20)))  # a task takes ~12 times its JSON
    try:
        c.execute(MESSAGES)
    except duckdb.Error:  # a JSON escape DuckDB refuses (a lone surrogate): those rows take Python
        table = table.filter(relation_frame(c.sql("SELECT json_valid(raw) FROM _rows")).to_series())
        _rows = stream(table)
        c.execute(MESSAGES)
    c.execute(CALLS)
    c.execute(_BAD)
    may_fail = c.execute(_MAY_FAIL).fetchall()
    errs = [
        (k, i, bool(flag) or failed_exit(t) or (flag is None and starts_like_error(t))) for k, i, t, flag in may_fail
    ]
    _errs = stream(  # noqa: F841 - read by the scan below
        pl.DataFrame(
            {
                "k": pl.Series([e[0] for e in errs], dtype=pl.Int32),
                "i": pl.Series([e[1] for e in errs], dtype=pl.Int32),
                "err": pl.Series([e[2] for e in errs], dtype=pl.Boolean),
            }
        )
    )
    c.execute(_LINKS)
    summary = {k: Summary(n, lo, hi, first) for k, n, lo, hi, first in c.execute(_SUMMARY).fetchall()}
    read_ok = set(table["k"].to_list()) - {k for (k,) in c.execute("SELECT k FROM _dp_bad").fetchall()}
    for k in read_ok - set(summary):
        summary[k] = Summary()  # an empty array: a conversation without messages
    unlinked = Counter(dict(c.execute(_UNLINKED).fetchall()))
    if not summary:
        _drop()
    return Read(summary, unlinked)


def tables(cids: dict[int, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The message and tool-call tables of the rows ``read`` read, with their conversation ids."""
    c = con()
    _cids = stream(  # noqa: F841
        pl.DataFrame(
            {"k": pl.Series(list(cids), dtype=pl.Int32), "cid": pl.Series(list(cids.values()), dtype=pl.String)}
        )
    )
    schemas = arrow_schemas()
    msg = relation_frame(c.sql(_MSG_OUT)).select(schemas["MSG_SCHEMA"].names()).cast(schemas["MSG_SCHEMA"])
    call = relation_frame(c.sql(_CALL_OUT)).select(schemas["CALL_SCHEMA"].names()).cast(schemas["CALL_SCHEMA"])
    _drop()
    return msg, call


def _drop() -> None:
    """The task's tables dropped: a worker holds one task at a time."""
    con().execute("".join(f"DROP TABLE IF EXISTS {t};" for t in ("_dp_msg", "_dp_call", "_dp_bad", "_dp_link")))


@functools.cache
def _memory(mb: int) -> None:
    """DuckDB's memory limit raised to ``mb`` (once per size: setting it costs a look at the machine)."""
    set_memory_limit(con(), mb)
