"""The CLI as a contract: every command documented with an example, light start-up, layers kept apart."""
from __future__ import annotations

import ast
import subprocess
import sys

import click
import pytest

from forensics.cli import cli
from tests.conftest import ROOT, run_cli


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


def test_analyzers_never_import_the_cli_or_report_renderers() -> None:
    for path in (ROOT / "forensics" / "analyzers").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        bad = {n for n in names if n.startswith(("forensics.cli", "forensics.report.render", "forensics.report.build",
                                                 "forensics.api"))}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_python_m_forensics_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "forensics", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("forensics, version ")
