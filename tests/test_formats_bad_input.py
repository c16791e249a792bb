"""Bad input inside a known format never aborts a source (issue 15): out-of-range and malformed numbers and
dates become NULL and are counted, a record that cannot be mapped is quarantined, and every format's parser
survives any single mutation of its fixtures (property tests)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.formats.kit import values
from forensics.ingestion import registry
from forensics.ingestion.discover import detect
from tests.conftest import FIXTURES, query, run_cli

AGENTS = FIXTURES / "agents"
BAD = [1e308, -1, "1e400", "2026-13-45", "not a number", None, {}, [], True, 2**70, "", -1e308]
HUGE = "__1e400__"  # json.dumps cannot write 1e400; the text replaces this marker


def _dump(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False).replace(json.dumps(HUGE), "1e400")


def test_a_jsonl_session_whose_timestamp_is_1e308_imports_with_a_counted_note(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(
        '{"id": "s1", "created_at": "2026-13-45"}\n'
        '{"id": "a", "parent_id": null, "role": "user", "content": "hi", "timestamp": 1e308}\n'
        '{"id": "b", "parent_id": "a", "role": "assistant", "content": "yo", "timestamp": -1}\n'
        '{"id": "c", "parent_id": "b", "role": "user", "content": "x", "timestamp": 1e400}\n'
        '{"id": "d", "parent_id": "c", "role": "assistant", "content": "y", "timestamp": "soon"}\n'
    )
    code, out, err = run_cli("ingest", str(src), "--db", str(tmp_path / "w.duckdb"))
    assert (code, err) == (0, "")
    assert "5 out-of-range or malformed values set to NULL: timestamp x5" in out
    db = tmp_path / "w.duckdb"
    assert query(db, "SELECT count(*), count(created_at) FROM messages") == [(4, 0)]
    assert query(db, "SELECT created_at FROM conversations") == [(None,)]
    assert query(db, "SELECT note FROM import_runs")[0][0].endswith("timestamp x5")


@pytest.mark.parametrize("bad", [1e308, -1, "1e400", "2026-13-45", "12 tokens", 2**70])
def test_bad_numbers_in_each_format_become_null_not_an_abort(tmp_path: Path, bad: Any) -> None:
    """Every timestamp and token count of a Codex rollout set to the bad value: imported, counted."""
    src = tmp_path / "rollout-x.jsonl"
    lines = (AGENTS / "codex" / "sessions" / "2025" / "10" / "29").glob("rollout-*T09-00-00-*.jsonl")
    out = []
    for line in next(lines).read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.append(
            _dump(_set_all(rec, ("timestamp", "input_tokens", "output_tokens"), HUGE if bad == "1e400" else bad))
        )
    src.write_text("\n".join(out) + "\n")
    db = tmp_path / "w.duckdb"
    code, text, err = run_cli("ingest", str(src), "--db", str(db))
    assert (code, err) == (0, "")
    assert "values set to NULL" in text
    assert query(db, "SELECT count(created_at) FROM messages") == [(0,)]
    assert query(db, "SELECT count(*), count(input_tokens) FROM message_usage")[0][1] == 0


def _set_all(v: Any, keys: tuple[str, ...], bad: Any) -> Any:
    if isinstance(v, dict):
        return {k: bad if k in keys else _set_all(x, keys, bad) for k, x in v.items()}
    if isinstance(v, list):
        return [_set_all(x, keys, bad) for x in v]
    return v


def test_values_checks_dates_and_counts() -> None:
    with values.counting() as nulled:
        assert values.epoch("2025-01-01T00:00:00Z") == 1735689600.0
        assert values.epoch(1735689600000) == 1735689600.0  # milliseconds
        assert values.epoch(1735689600_000_000_000) == 1735689600.0  # nanoseconds (OTLP)
        assert values.epoch("1735689600") == 1735689600.0
        assert [values.epoch(v) for v in (1e308, -1, "2026-13-45", float("inf"), [], True)] == [None] * 6
        assert values.epoch(None) is values.epoch("") is None  # missing is not bad
        assert [values.count(v) for v in (12, 12.0, "12")] == [12, 12, 12]
        assert [values.count(v) for v in (-1, 1e308, 2**70, "12 tokens", 1.5)] == [None] * 5
    assert dict(nulled) == {"timestamp": 6, "token count": 5}
    assert values.loads(b'{"t": 1e400}') == {"t": float("inf")}


def _targets() -> list[tuple[str, Path]]:
    """One file of each format (as it lies in its fixture folder), to mutate."""
    out = []
    for f in sorted(AGENTS.rglob("*")):
        if not f.is_file() or f.name == "sessions.json":  # Continue's index, not a session
            continue
        try:
            fmt = detect(f).format
        except Exception:
            continue
        if fmt not in {x for x, _ in out}:
            out.append((fmt, f))
    return out


TARGETS = _targets()


def test_every_agent_format_has_a_mutation_target() -> None:
    assert {fmt for fmt, _ in TARGETS} >= {
        "codex",
        "gemini-cli",
        "aider",
        "openhands",
        "swe-agent",
        "mini-swe-agent",
        "cline",
        "chatgpt",
        "claude-ai",
        "open-webui",
        "inspect",
        "otel",
        "continue",
        "cursor",
    }


def _mutate_json(doc: Any, pick: int, bad: Any, drop: bool) -> Any:
    """Replace (or, for a key, drop) the pick-th scalar of a JSON value, counted depth first."""
    slots: list[tuple[Any, Any]] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k in list(v):
                slots.append((v, k))
                walk(v[k])
        elif isinstance(v, list):
            for i in range(len(v)):
                slots.append((v, i))
                walk(v[i])

    walk(doc)
    if not slots:
        return bad
    parent, key = slots[pick % len(slots)]
    if drop and isinstance(parent, dict):
        del parent[key]
    else:
        parent[key] = bad
    return doc


def _mutated_copy(src: Path, dest: Path, pick: int, bad: Any, drop: bool, cut: int | None) -> Path:
    rel = src.relative_to(AGENTS)
    shutil.copytree(AGENTS / rel.parts[0], dest / rel.parts[0])  # siblings (ui_messages.json, sessions.json) too
    target = dest / rel
    if target.suffix in (".db", ".vscdb"):
        con = sqlite3.connect(target)
        table, col = ("chat", "chat") if target.suffix == ".db" else ("cursorDiskKV", "value")
        rows = con.execute(f"SELECT rowid, {col} FROM {table}").fetchall()
        rowid, raw = rows[pick % len(rows)]
        try:
            new = _dump(_mutate_json(json.loads(raw), pick // len(rows), bad, drop))
        except json.JSONDecodeError:
            new = raw
        con.execute(f"UPDATE {table} SET {col} = ? WHERE rowid = ?", (new, rowid))
        con.commit()
        con.close()
    elif target.suffix == ".eval":
        with zipfile.ZipFile(src) as z:
            members = {n: z.read(n) for n in z.namelist()}
        name = sorted(members)[pick % len(members)]
        try:
            members[name] = _dump(_mutate_json(json.loads(members[name]), pick, bad, drop)).encode()
        except json.JSONDecodeError:
            members[name] = members[name][: cut or 0]
        with zipfile.ZipFile(target, "w") as z:
            for n, data in members.items():
                z.writestr(n, data)
    else:
        data = src.read_bytes()
        try:
            text = _dump(_mutate_json(json.loads(data), pick, bad, drop))
        except (json.JSONDecodeError, UnicodeDecodeError):
            lines = data.decode("utf-8", "replace").split("\n")
            i = pick % len(lines)
            try:
                lines[i] = _dump(_mutate_json(json.loads(lines[i]), pick // len(lines), bad, drop))
            except json.JSONDecodeError:
                lines.insert(i, _dump(bad))  # a line of another kind (aider's Markdown, a corrupt line)
            text = "\n".join(lines)
        raw = text.encode()
        target.write_bytes(raw[:cut] if cut is not None else raw)
    return target


@pytest.mark.parametrize("fmt,src", TARGETS, ids=[f for f, _ in TARGETS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pick=st.integers(0, 10**6),
    bad=st.sampled_from(BAD + [HUGE]),
    drop=st.booleans(),
    cut=st.one_of(st.none(), st.integers(0, 4000)),
)
def test_any_single_mutation_is_imported_quarantined_or_skipped_never_fatal(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, src: Path, pick: int, bad: Any, drop: bool, cut: int | None
) -> None:
    dest = tmp_path_factory.mktemp("m")
    target = _mutated_copy(src, dest, pick, bad, drop, cut if src.suffix not in (".db", ".vscdb", ".eval") else None)
    fn, args = registry.get(fmt).worker(str(target), "sid", "fp", {})
    with values.counting():
        p = fn(*args)
    state = {k: v for k, v in p.state.items() if k not in ("parents", "parent_natives")}
    tables = p.tables
    imported, quarantined = tables["msg"].height, tables["quar"].height
    if not state.get("error"):
        assert p.messages_read == imported + quarantined + state.get("skipped", 0)
    assert tables["conv"].height <= max(1, p.messages_read)
