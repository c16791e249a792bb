"""The CLI as a contract: every command documented with an example, light start-up, layers kept apart."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
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
    assert (
        code == 0
        and "Example:" in out
        and f"forensics {path[-1]}"
        in out.replace("forensics config ", "forensics ").replace("forensics hooks ", "forensics ")
    )


def test_cli_start_up_does_not_import_heavy_parts() -> None:
    code = (
        "import sys, forensics.cli; heavy = [m for m in ('matplotlib', 'sklearn', 'jieba', 'nbclient', 'ipykernel') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


HEAVY = (
    "duckdb",
    "polars",
    "pyarrow",
    "numpy",
    "matplotlib",
    "sklearn",
    "jieba",
    "scipy",
    "rich",
    "nbclient",
    "ipykernel",
)


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["formats"],
        ["ingest"],
        ["report", "--no-such-option"],
        ["ingest", "--help"],
        ["report", "--help"],
    ],
    ids=" ".join,
)
def test_a_command_that_needs_nothing_heavy_loads_nothing_heavy(args: list[str]) -> None:
    """Start-up in a blink (issue 28): help, the version, the format list and usage errors load no DuckDB,
    polars, pyarrow or analysis library. Checked by what the process imported, not by a clock."""
    code = (
        f"import atexit, sys; atexit.register(lambda: print('HEAVY', sorted(m for m in {HEAVY!r} "
        f"if m in sys.modules), file=sys.stderr)); sys.argv = ['forensics', *{args!r}]; "
        "from forensics.cli import main; main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode in (0, 2), done.stderr
    assert done.stderr.splitlines()[-1] == "HEAVY []", done.stderr


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the package at ``root`` with the contracts of pyproject.toml (the ones CI runs)."""
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(exe), "--no-cache"], cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}
    )


def test_the_layers_contract_holds() -> None:
    """api > commands|serve|spark|tuning > report > analyzers > config > text|ingestion > formats > warehouse
    > kernel, the CLI through forensics.api only, the forbidden imports, no pyarrow but in the Spark engine and no
    cycle between siblings, topics importing nothing of problems (pyproject.toml [tool.importlinter])."""
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Contracts: 7 kept, 0 broken." in done.stdout  # 7th: topics imports nothing of problems (906b4c5)


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("analyzers/base.py", "from forensics.report import digest"),  # analysis reading the report layer
        ("warehouse/core.py", "import forensics.analyzers.base"),  # the warehouse reading analysis
        ("analyzers/compaction/facts.py", "import forensics.analyzers.drift.corpus"),  # drift <-> compaction cycle
        ("cli.py", "from forensics.commands import show"),  # the CLI around its API
        ("formats/aider.py", "from forensics.ingestion import registry"),  # a format reading the pipeline above it
        ("kernel/errors.py", "import forensics.warehouse"),  # the kernel leaning on a layer
        ("ingestion/load.py", "import pyarrow"),  # pyarrow back in the runtime (the spark extra's only)
    ],
)
def test_an_edge_across_the_layers_breaks_the_contract(tmp_path: Path, module: str, line: str) -> None:
    shutil.copytree(ROOT / "forensics", tmp_path / "forensics", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "forensics" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    done = _lint_imports(tmp_path)
    assert done.returncode == 1 and "BROKEN" in done.stdout, done.stdout[-2000:]


def test_python_m_forensics_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "forensics", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("forensics, version ")


@pytest.mark.parametrize("value", ["lots", "512", "1GB; DROP TABLE messages"])
def test_a_bad_memory_override_is_a_one_line_usage_error(tmp_path: Path, value: str) -> None:
    db = tmp_path / "w.duckdb"
    env = {**os.environ, "CI": "true", "FORENSICS_DUCKDB_MEMORY": value}
    for args in (["ingest", str(FIXTURES / "seed" / "seed.db")], ["report", "--out", str(tmp_path / "r")]):
        r = subprocess.run(
            [sys.executable, "-m", "forensics", *args, "--db", str(db)], capture_output=True, text=True, env=env
        )
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"forensics: FORENSICS_DUCKDB_MEMORY={value!r}: not a size; give one like 512MB")
    env["FORENSICS_DUCKDB_MEMORY"] = "0.5 GiB"  # DuckDB's own spellings pass
    r = subprocess.run(
        [sys.executable, "-m", "forensics", "ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr


def test_the_package_root_holds_the_cli_and_the_api_and_every_package_is_a_layer() -> None:
    """Issue 40: no loose module at the root (a new one goes in the package of its layer, the kernel at the
    bottom), and no package outside the layers contract."""
    package = ROOT / "forensics"
    assert sorted(p.name for p in package.glob("*.py")) == ["__init__.py", "__main__.py", "api.py", "cli.py"]
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    named = {m.strip().removeprefix("forensics.") for layer in layers for m in layer.split("|")}
    packages = {p.parent.name for p in package.glob("*/__init__.py")}
    assert packages - named == set(), "packages outside the layers contract"


def test_a_reader_that_stops_early_is_no_error() -> None:
    """`forensics formats | head -1`: the pipe closes under the writer; no "internal error", exit 0 (it was 70)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "forensics", "formats"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as head does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert first.split()[0] == b"dialogues" and err == ""
