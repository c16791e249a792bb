"""The runtime needs no pyarrow (issue 47: 170 MB of the install): ingest and report run, in every process, with
pyarrow unimportable, and DuckDB and polars trade columns through the Arrow C stream (``forensics.kernel.arrow``).

Every process started here (the CLI and its parse and report workers) reads a ``sitecustomize`` that makes
``import pyarrow`` fail as on a machine without it (``sys.modules['pyarrow'] = None``: ``find_spec`` says absent,
so polars and DuckDB take it as not installed); pandas is refused the same way, since nothing here should reach
for it either, and matplotlib (the ``charts`` extra): the report then has every section, no chart, and one line
that says how to get them. The fixtures cover both parse paths (SQLite message arrays in DuckDB, JSONL in Python), side
tables (decision memory), secrets masked on the way in, and a report with every section."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import polars as pl

from forensics.draw import MISSING
from forensics.kernel.arrow import relation_frame, stream
from tests.conftest import FIXTURES, ROOT

BLOCK = textwrap.dedent("""
    import sys
    sys.modules["pyarrow"] = None  # as if not installed: import fails, find_spec finds nothing
    sys.modules["pandas"] = None
    sys.modules["matplotlib"] = None  # the charts extra not installed either: the bare runtime
""")


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp / "site"), str(ROOT)]), "FORENSICS_WORKERS": "2"}
    return subprocess.run(
        [sys.executable, "-c", "from forensics.cli import main; main()", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_ingest_and_report_run_with_pyarrow_pandas_and_matplotlib_unimportable_in_every_process(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCK)
    db = tmp_path / "w.duckdb"
    sources = [FIXTURES / n for n in ("sqlite", "claude_code", "memory", "secrets")]
    done = _run(tmp_path, "ingest", *map(str, sources), "--db", str(db))
    assert done.returncode == 0, done.stderr[-3000:]
    done = _run(tmp_path, "report", "--db", str(db), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.count("\n") > 100 and "## " in md
    assert (
        md.count(MISSING) == 1
        and MISSING == "No charts drawn: matplotlib is not installed (pip install 'forensics[charts]')."
    )
    assert "No charts drawn" in (tmp_path / "out" / "report.html").read_text()
    assert not list((tmp_path / "out" / "charts").glob("*.svg"))
    con = duckdb.connect(str(db), read_only=True)
    (messages, convs, finds, decisions) = con.execute(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM conversations), "
        "(SELECT count(*) FROM secrets_found), (SELECT count(*) FROM decisions)"
    ).fetchall()[0]
    assert messages > 1000 and convs > 20 and finds > 0 and decisions > 0
    # the secrets fixture's finds: 12, as the pyarrow build (RE2 prefilter) found them
    planted = "SELECT count(*) FROM secrets_found JOIN sources USING (source_id) WHERE path LIKE '%/secrets/%'"
    assert con.execute(planted).fetchall()[0][0] == 12


def test_a_stream_hands_duckdb_a_frame_and_back_with_types_kept() -> None:
    """``stream``: a frame DuckDB scans by name (replacement scan) or registers, any number of times; a column of
    polars' Null type goes as INTEGER (DuckDB 2.0 refuses polars' null array); ``relation_frame`` the way back."""
    df = pl.DataFrame(
        {
            "s": ["a", None],
            "i": pl.Series([1, None], dtype=pl.Int32),
            "l": [["x"], []],
            "b": [b"\xff", None],
            "n": [None, None],
        }
    )
    con = duckdb.connect()
    _v = stream(df)  # noqa: F841 - read by the scans below
    assert [str(t) for t in con.sql("SELECT * FROM _v").types] == ["VARCHAR", "INTEGER", "VARCHAR[]", "BLOB", "INTEGER"]
    con.execute("CREATE TABLE t AS SELECT * FROM _v")
    con.execute("INSERT INTO t SELECT * FROM _v")
    back = relation_frame(con.sql("SELECT * FROM t ORDER BY rowid"))
    assert back.schema == pl.Schema(
        {"s": pl.String, "i": pl.Int32, "l": pl.List(pl.String), "b": pl.Binary, "n": pl.Int32}
    )
    assert back.rows() == [("a", 1, ["x"], b"\xff", None), (None, None, [], None, None)] * 2
    assert relation_frame(con.sql("SELECT 1 AS x WHERE false")).schema == pl.Schema({"x": pl.Int32})
