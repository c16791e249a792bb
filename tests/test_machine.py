"""DuckDB's threads and memory limit come from the machine (issue 28), each overridable by an environment
variable that is checked before DuckDB sees it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.warehouse import machine, open_warehouse
from tests.conftest import FIXTURES


def test_a_budget_is_bounded_by_a_quarter_of_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(machine.MEMORY_ENV, raising=False)
    monkeypatch.setattr(machine, "memory_mb", lambda: 24_000)
    assert machine.memory_limit(512) == "512MB"  # a large machine: the command's own budget
    monkeypatch.setattr(machine, "memory_mb", lambda: 1_024)
    assert machine.memory_limit(512) == "256MB"  # a 1 GB container: a quarter of it
    monkeypatch.setattr(machine, "memory_mb", lambda: 128)
    assert machine.memory_limit(512) == f"{machine.MEMORY_FLOOR_MB}MB"
    monkeypatch.setattr(machine, "memory_mb", lambda: None)  # unknown: the budget
    assert machine.memory_limit(160) == "160MB"
    monkeypatch.setenv(machine.MEMORY_ENV, "2GB")
    assert machine.memory_limit(512) == "2GB"


def test_threads_are_the_usable_cores_unless_overridden(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(machine.THREADS_ENV, raising=False)
    assert 1 <= machine.threads() == machine.cores() <= (os.cpu_count() or 1)
    with open_warehouse(tmp_path / "w.duckdb") as wh:
        assert wh.con.execute("SELECT current_setting('threads')").fetchall()[0][0] == machine.cores()
        # freed memory goes back to the system between a report's analyzers
        assert wh.con.execute("SELECT current_setting('allocator_background_threads')").fetchall()[0][0] is True
    monkeypatch.setenv(machine.THREADS_ENV, "1")
    with open_warehouse(tmp_path / "w.duckdb", read_only=True, sealed=True) as wh:  # sealed: set at connect
        assert wh.con.execute("SELECT current_setting('threads')").fetchall()[0][0] == 1
        assert wh.con.execute("SELECT current_setting('allocator_background_threads')").fetchall()[0][0] is True


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_threads_override_is_a_one_line_usage_error(tmp_path: Path, value: str) -> None:
    env = {**os.environ, "CI": "true", machine.THREADS_ENV: value}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensics",
            "ingest",
            str(FIXTURES / "seed" / "seed.db"),
            "--db",
            str(tmp_path / "w.duckdb"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"forensics: {machine.THREADS_ENV}={value!r}: not a count of threads")
