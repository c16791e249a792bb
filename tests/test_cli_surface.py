"""The CLI as a contract: every command documented with an example, light start-up, layers kept apart."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from forensics.cli import cli
from tests.conftest import FIXTURES, ROOT, run_cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out += _commands(cmd, prefix + (name,))
        else:
            out.append(prefix + (name,))
    return out


@pytest.mark.parametrize("path", _commands(cli), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    code, out, _ = run_cli(*path, "--help")
    assert code == 0 and "Example:" in out and f"forensics {path[-1]}" in out.replace("forensics config ", "forensics ")


def test_cli_start_up_does_not_import_heavy_parts() -> None:
    code = ("import sys, forensics.cli; heavy = [m for m in ('matplotlib', 'sklearn', 'jieba', 'nbclient', 'ipykernel') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_analyzers_never_import_the_cli_the_report_layer_or_the_explorer() -> None:
    """Analyzers return tidy data (a chart's data and labels too); drawing and rendering live in forensics.report."""
    for path in [*(ROOT / "forensics" / "analyzers").rglob("*.py"), *(ROOT / "forensics" / "drift").rglob("*.py")]:
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        bad = {n for n in names if n.startswith(("forensics.cli", "forensics.report", "forensics.serve", "forensics.api",
                                                 "matplotlib"))}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_python_m_forensics_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "forensics", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("forensics, version ")


@pytest.mark.parametrize("value", ["lots", "512", "1GB; DROP TABLE messages"])
def test_a_bad_memory_override_is_a_one_line_usage_error(tmp_path: Path, value: str) -> None:
    db = tmp_path / "w.duckdb"
    env = {**os.environ, "CI": "true", "FORENSICS_DUCKDB_MEMORY": value}
    for args in (["ingest", str(FIXTURES / "seed" / "seed.db")], ["report", "--out", str(tmp_path / "r")]):
        r = subprocess.run([sys.executable, "-m", "forensics", *args, "--db", str(db)], capture_output=True, text=True,
                           env=env)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"forensics: FORENSICS_DUCKDB_MEMORY={value!r}: not a size; give one like 512MB")
    env["FORENSICS_DUCKDB_MEMORY"] = "0.5 GiB"  # DuckDB's own spellings pass
    r = subprocess.run([sys.executable, "-m", "forensics", "ingest", str(FIXTURES / "seed" / "seed.db"),
                        "--db", str(db)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
