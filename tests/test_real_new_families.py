"""Real files of the agent families added for issue 42 item 4 (fixtures/real/<family>, SOURCES.md there): each
file, pointed at alone with no flags, is detected as its family and imports with the figures (conversations,
the person's messages on the main path, tool calls, answered calls, calls the format flags as failed, tokens)
counted from the raw file by tests/agent_counts.py; every record read is imported, skipped or quarantined."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from forensics.formats.kit.declare import Probe
from forensics.ingestion import registry
from tests.agent_counts import Tally, pi_file
from tests.conftest import FIXTURES, query, run_cli
from tests.test_real_logs_2026 import figures

REAL = FIXTURES / "real"
# format -> (its files under fixtures/real, the counter, the figures expected of each file: known by reading it)
CASES: dict[str, tuple[list[str], Callable[[Path], Tally], list[Tally]]] = {
    "pi": (
        ["pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl"],
        pi_file,
        [Tally(1, 88, 391, 373, 19, 47_609_906)],
    ),
}


@pytest.mark.parametrize("fmt", CASES)
def test_each_real_file_is_detected_and_imports_as_counted(fmt: str, tmp_path: Path) -> None:
    files, count, expected = CASES[fmt]
    db = tmp_path / "w.duckdb"
    for name, want in zip(files, expected):
        f = REAL / name
        found = registry.sniff(Probe(f))
        assert found is not None and found[0].name == fmt, f"{name}: detected as {found and found[0].name}"
        code, _, err = run_cli("ingest", str(f), "--db", str(db))
        assert code == 0, err
        raw = count(f)
        assert raw == want, f"{name}: the raw counter says {raw}"
        assert figures(db, f) == raw, name
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped
