"""Real logs of the families added for issue 42 (../shared/data/agent-logs-2026, SOURCES.md there: files of
repositories with no licence, so not copied here) and the fixtures built from each agent's source
(fixtures/agents/<family>): every file, pointed at alone with no flags, imports with its format, and its figures
(conversations, the person's messages on the main path, tool calls, answered calls, calls the format flags as
failed, tokens) equal those counted from the raw file by tests/agent_counts.py; every record read is imported, skipped or quarantined."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agent_counts import (
    Tally,
    atif_file,
    claude_code_otel_file,
    copilot_file,
    goose_file,
    kimi_file,
    opencode_file,
    qwen_file,
)
from tests.conftest import FIXTURES, SHARED, query, run_cli

REAL = SHARED / "data" / "agent-logs-2026"
LICENSED = FIXTURES / "real"  # real files whose licence lets them live here (fixtures/real/SOURCES.md)
BUILT = FIXTURES / "agents"
FAMILIES: dict[str, tuple[str, str, Callable[[Path], Tally], str]] = {
    # shared folder, fixture folder, counter, the file name pattern of the family's sources
    "copilot-cli": ("copilot_cli", "copilot_cli", copilot_file, "events.jsonl"),
    "qwen-code": ("qwen_code", "qwen_code", qwen_file, "*.jsonl"),
    "opencode": ("opencode", "opencode", opencode_file, "opencode.db ses_*.json"),
    "claude-code-otel": ("claude_code_otel", "claude_code_otel", claude_code_otel_file, "*.json *.jsonl"),
    "kimi-cli": ("kimi_cli", "kimi_cli", kimi_file, "wire.jsonl"),
    "atif": ("atif", "atif", atif_file, "trajectory.json"),
    "goose": ("goose", "goose", goose_file, "sessions.db 2025*.jsonl"),
}
CASES = [(fmt, where) for fmt in FAMILIES for where in ("real", "built")]


def sources(fmt: str, where: str) -> list[Path]:
    shared, built, _, pattern = FAMILIES[fmt]
    roots = [REAL / shared, LICENSED / shared] if where == "real" else [BUILT / built]
    return sorted(p for root in roots for pat in pattern.split() for p in root.rglob(pat) if p.is_file())


def figures(db: Path, path: Path) -> Tally:
    (src,) = query(db, "SELECT source_id FROM sources WHERE path = ?", [str(path.resolve())])[0]
    convs = "SELECT conversation_id FROM conversations WHERE source_id = ?"
    (n,) = query(db, f"SELECT count(*) FROM ({convs})", [src])[0]
    (person,) = query(
        db,
        f"SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path AND conversation_id IN ({convs})",
        [src],
    )[0]
    # the errors the format itself flags (the counters read the tools' own flags; the content rules of
    # forensics.warehouse.tool_errors may add others, error_source says which)
    calls, linked, errors = query(
        db,
        f"SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND "
        f"error_source = 'format' AND result_seq IS NOT NULL) FROM tool_calls "
        f"WHERE conversation_id IN ({convs})",
        [src],
    )[0]
    (tokens,) = query(
        db,
        "SELECT coalesce(sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce("
        "cache_read_input_tokens, 0) + coalesce(cache_creation_input_tokens, 0)), 0) FROM "
        f"message_usage WHERE conversation_id IN ({convs})",
        [src],
    )[0]
    return Tally(n, person, calls, linked, errors, int(tokens))


@pytest.mark.parametrize(("fmt", "where"), CASES)
def test_each_file_imports_alone_and_its_figures_match_the_raw_file(fmt: str, where: str, tmp_path: Path) -> None:
    files = sources(fmt, where)
    if not files:
        pytest.skip(f"no {fmt} file under {REAL if where == 'real' else BUILT} (set FORENSICS_SHARED)")
    db = tmp_path / "w.duckdb"
    for f in files:
        code, _, err = run_cli("ingest", str(f), "--db", str(db))
        assert code == 0, f"{f}: {err}"
    assert {f for (f,) in query(db, "SELECT DISTINCT format FROM sources")} == {fmt}
    count = FAMILIES[fmt][2]
    for f in files:
        assert figures(db, f) == count(f), f
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped
    (failed,) = query(db, "SELECT count(*) FROM import_runs WHERE status = 'failed'")[0]
    assert failed == 0


def test_the_built_fixtures_are_what_their_generator_writes(tmp_path: Path) -> None:
    from tests.conftest import load_script

    load_script(FIXTURES / "make_agent_logs_2026.py").main(tmp_path)
    made = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert len(made) == 12
    for f in made:
        committed = BUILT / f.relative_to(tmp_path)
        if f.suffix == ".db":  # SQLite files hold the same rows, not always the same pages
            assert committed.stat().st_size > 0
            continue
        assert committed.read_bytes() == f.read_bytes(), f"{committed} is stale: run fixtures/make_agent_logs_2026.py"


def test_from_reads_each_new_agents_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--from` finds the new agents' logs where they keep them (a home with their folders laid out)."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(BUILT / "copilot_cli" / "session-state", home / ".copilot" / "session-state")
    shutil.copytree(BUILT / "qwen_code" / "projects", home / ".qwen" / "projects")
    shutil.copytree(BUILT / "kimi_cli" / "sessions", home / ".kimi" / "sessions")
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    shutil.copy(BUILT / "opencode" / "opencode.db", home / ".local" / "share" / "opencode" / "opencode.db")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    db = tmp_path / "w.duckdb"
    for agent, fmt in (
        ("copilot-cli", "copilot-cli"),
        ("qwen-code", "qwen-code"),
        ("kimi-cli", "kimi-cli"),
        ("opencode", "opencode"),
    ):
        code, _, err = run_cli("ingest", "--from", agent, "--db", str(db))
        assert code == 0, err
        assert (fmt,) in query(db, "SELECT DISTINCT format FROM sources")
    code, _, err = run_cli("ingest", "--from", "kimi-cli", "--db", str(db), "--path", str(tmp_path / "nowhere"))
    assert code == 2 and "no Kimi CLI logs at" in err and len(err.strip().splitlines()) == 1
