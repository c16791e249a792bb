"""Issue 28, "again ≤ 2 ×": a report whose inputs did not change is the last one, from the whole-report cache (``report.cache``), and
it is never served when something it read changed: a writer opened the warehouse, the config, the selection, the
code's files or the conversations moved, or the cached rows are not what ``encode`` wrote."""

from __future__ import annotations

import math
import re
import shutil
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl
import pytest

from forensics import api, ingest
from forensics.analyzers.base import Finding, Section, Table
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.schema import defaults
from forensics.kernel.selection import Selection
from forensics.report import cache
from forensics.report.build import CACHED_CLASSES, build_report
from forensics.report.render import STAMP
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES

ONLY = "baseline,keywords,drift"
META_LINE = re.compile(r"forensics 0\.[^\n<]*")  # the report's time, and whether it was kept, end the meta line


@pytest.fixture()
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.getbasetemp() / "kept-src.duckdb"
    if not src.exists():
        ingest([FIXTURES / "seed" / "seed.db"], db=src)
    db = tmp_path_factory.mktemp("kept") / "w.duckdb"
    shutil.copy(src, db)
    return db


def _report(db: Path, out: Path, **kw: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """metrics.json, and the text of report.md and report.html, of `forensics report --only ONLY`."""
    api.report(db, out, only=kw.pop("only", ONLY), cfg=kw.pop("cfg", defaults()), **kw)
    return (
        orjson.loads((out / "metrics.json").read_bytes()),
        {n: (out / n).read_text(encoding="utf-8") for n in ("report.md", "report.html")},
    )


def _runs(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM report_runs").fetchall()[0][0])


def test_again_is_the_first_from_the_cache(wh: Path, tmp_path: Path) -> None:
    first, pages = _report(wh, tmp_path / "a")
    again, pages_again = _report(wh, tmp_path / "b")
    assert "kept_from" not in first
    assert again["kept_from"] == first["generated_at"] != again["generated_at"]
    timing = ("generated_at", "kept_from")
    assert {k: v for k, v in again.items() if k not in timing} == {k: v for k, v in first.items() if k not in timing}
    for name, text in pages.items():  # the pages differ only in their meta line, which says it was kept
        assert META_LINE.sub("", pages_again[name]) == META_LINE.sub("", text), name
        assert f"kept whole from the report of {first['generated_at']}" in pages_again[name]
        assert "kept whole" not in text
    assert _runs(wh) == 2  # the kept report's run is logged too (`forensics serve` lists it)
    third = build_report(wh, defaults(), only=ONLY.split(","), persist_findings=True, charts=True, recommend=api.advise)
    assert set(third.pages) == {"report.md", "report.html"}  # written again without rendering them
    assert all(p.count(STAMP) == 1 for p in third.pages.values())


def test_a_writer_in_between_makes_it_compute_again(wh: Path, tmp_path: Path) -> None:
    _report(wh, tmp_path / "a")
    ingest([FIXTURES / "seed" / "seed.db"], db=wh)  # nothing new; a writable open all the same
    assert "kept_from" not in _report(wh, tmp_path / "b")[0]
    with open_warehouse(wh, read_only=True) as w:  # a reader changes nothing
        w.con.execute("SELECT count(*) FROM messages").fetchall()
    assert "kept_from" in _report(wh, tmp_path / "c")[0]


def test_another_selection_config_or_analyzers_in_between(wh: Path, tmp_path: Path) -> None:
    whole = _report(wh, tmp_path / "a")[0]
    with duckdb.connect(str(wh), read_only=True) as con:
        one = con.execute("SELECT native_id FROM conversations ORDER BY native_id LIMIT 1").fetchall()[0][0]
    part = _report(wh, tmp_path / "b", selection=Selection(conversations=(one,)))[0]
    assert "kept_from" not in part and part["conversations"] == 1
    again = _report(wh, tmp_path / "c")[0]  # the selection's report rewrote the derived tables: computed again
    assert "kept_from" not in again and again["sections"] == whole["sections"]
    changed = _report(
        wh, tmp_path / "d", cfg=defaults().with_settings(replace(KeywordSettings.of(defaults()), top_k=4))
    )[0]
    assert "kept_from" not in changed
    assert "kept_from" not in _report(wh, tmp_path / "e", only="baseline")[0]
    assert "kept_from" in _report(wh, tmp_path / "f", only="baseline")[0]


def test_conversations_changed_by_another_tool_change_the_key(wh: Path, tmp_path: Path) -> None:
    _report(wh, tmp_path / "a")
    with duckdb.connect(str(wh)) as con:  # no writable open of forensics: only the key can see it
        con.execute(
            "UPDATE conversations SET fingerprint = 'edited' WHERE conversation_id = "
            "(SELECT min(conversation_id) FROM conversations)"
        )
    assert "kept_from" not in _report(wh, tmp_path / "b")[0]


def test_cached_rows_not_written_by_encode_are_not_read_back(wh: Path, tmp_path: Path) -> None:
    first = _report(wh, tmp_path / "a")[0]
    with duckdb.connect(str(wh)) as con:
        con.execute("UPDATE report_cache SET body = ?", [orjson.dumps({"c": "os.system", "f": {"command": "id"}})])
    again = _report(wh, tmp_path / "b")[0]
    assert "kept_from" not in again and again["sections"] == first["sections"]
    with duckdb.connect(str(wh)) as con:  # a time that is no time (a terminal's escape codes) is not read back
        body = bytes(con.execute("SELECT body FROM report_cache").fetchall()[0][0])
        assert body.count(b'"generated_at":"') == 1
        con.execute(
            "UPDATE report_cache SET body = ?", [body.replace(b'"generated_at":"', b'"generated_at":"\\u001b[2J')]
        )
    assert "kept_from" not in _report(wh, tmp_path / "b2")[0]
    with duckdb.connect(str(wh)) as con:  # a page without its stamp is rendered again
        con.execute("UPDATE report_cache SET pages = ?", [orjson.dumps({"report.md": "not a report"})])
    third, pages = _report(wh, tmp_path / "c")
    assert "kept_from" in third and pages["report.md"].startswith("# forensics report")


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (a tuple is not a list; NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, pl.DataFrame):
        return a.equals(b) and a.schema == b.schema
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    return bool(a == b)


def test_encode_gives_back_every_value_exactly() -> None:
    df = pl.DataFrame({"kind": ["a", None], "n": [1, 2], "share": [0.5, float("nan")], "at": [[1], []]})
    sec = Section(
        "s",
        "t",
        metrics={
            "by": {3: (1, 2.5), "x": [float("inf"), -0.0, None, True]},
            "np": np.float64(0.1),
            "i": np.int64(7),
            "day": date(2026, 1, 2),
            "when": datetime(2026, 1, 2, 3, 4, 5),
        },
        tables=[Table("tbl", "cap", df)],
        findings=[Finding("k", "low", "c1", None, [1, 2], "sum")],
    )
    back = cache.decode(cache.encode(sec, CACHED_CLASSES), CACHED_CLASSES)
    assert _same(back, sec)
    assert back.metrics["by"][3] == (1, 2.5) and type(back.metrics["i"]) is np.int64
    with pytest.raises(cache.NotCacheable):
        cache.encode({"s": {1, 2}}, CACHED_CLASSES)  # a set has no order to give back
    with pytest.raises(cache.NotCacheable):
        cache.encode([2**70], CACHED_CLASSES)
    with pytest.raises(cache.NotCacheable):
        cache.encode(Path("x"), CACHED_CLASSES)
    for bad in (
        b"not json",
        b'{"c": "builtins.object", "f": {}}',
        b'{"n": "O", "v": 1}',
        b'{"zz": 1}',
        b'{"k": [[[1], 2]]}',
    ):
        with pytest.raises(cache.NotCacheable):
            cache.decode(bad, CACHED_CLASSES)


def test_a_cached_table_of_another_shape_is_dropped_at_open(wh: Path) -> None:
    with duckdb.connect(str(wh)) as con:
        con.execute("CREATE TABLE report_cache (key VARCHAR, body BLOB)")
        con.execute("INSERT INTO report_cache VALUES ('k', 'x')")
    with open_warehouse(wh) as w:
        assert w.cache_key is None
        assert w.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'report_cache'").fetchall() == [
            (0,)
        ]
