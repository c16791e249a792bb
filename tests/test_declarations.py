"""One declaration per analyzer (issue 23, step 2): every registry is derived from the ``ANALYZER`` declarations,
an analyzer's parts live in its package and the layers above name none, and a toy analyzer outside the project (its
package and one entry point, in a temporary folder on PYTHONPATH) has its key checked by `config check`, runs in
`report`, writes its derived table, draws its chart, is tuned by `tune` and gated by `check` with its own rule."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import analyzers
from forensics.analyzers.declare import ENGINES, Analyzer
from forensics.analyzers.schema import keys, schema
from tests.conftest import FIXTURES, query

TOY = {
    "__init__.py": '''\
"""A toy analyzer: how many messages are longer than [toy] min_chars; its own derived table, chart, tuner and
check rule, declared here and nowhere else."""
import pyarrow as pa

from forensics.analyzers.base import Chart, Section
from forensics.analyzers.declare import Analyzer, CheckRule, Tuner
from forensics.analyzers.facts import Fact, arrow
from forensics.config import Key
from forensics.warehouse import derived
from toy_analyzer import draw, tune
from toy_analyzer.settings import ToySettings


def long_messages(con, cfg) -> pa.Table:
    return arrow(con, "SELECT conversation_id, count(*) FILTER (WHERE m.content_chars > getvariable('toy_min_chars'))"
                      "::BIGINT AS long FROM messages m JOIN sel_conversations USING (conversation_id) GROUP BY 1")


def run(ctx):
    rows = ctx.fact("toy_long")
    derived.replace_rows(ctx.con, "toy_long_messages", rows.to_arrow())
    n = int(rows["long"].sum())
    return Section("toy", "Toy", f"{n} long messages.", metrics={"long_messages": n},
                   charts=[Chart("bars", "Long messages", {"n": n})])


ANALYZER = Analyzer(
    "toy", "Toy", run,
    sections={"toy": "A toy analyzer (tests/test_declarations.py)."},
    keys=(Key("toy", "min_chars", 100, "a message longer than this is long", "characters"),),
    facts=(Fact("toy_long", long_messages, ("conversation_id",)),),
    reads=("toy_long",),
    checks=(CheckRule("toy.long_*", "lower", 0.0, False),),
    tuners=(Tuner(tune.min_chars),),
    charts={"bars": draw.bars},
    tables=(derived.Table("toy_long_messages", "selection", "per conversation: its messages longer than min_chars"),),
    settings=(ToySettings,),
)
''',
    "settings.py": """\
from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class ToySettings(Settings):
    section = "toy"

    min_chars: int
""",
    "draw.py": """\
from forensics.draw import figure


def bars(data):
    fig = figure(4.0)
    fig.axes[0].bar(["long"], [data["n"]])
    return fig
""",
    "tune.py": '''\
from forensics.analyzers.tuner import Recommendation
from toy_analyzer.settings import ToySettings


def min_chars(t):
    """The length that leaves a tenth of the messages long."""
    (p90,) = t.con.execute("SELECT quantile_disc(content_chars, 0.9) FROM messages JOIN sel_conversations "
                           "USING (conversation_id)").fetchone()
    return [Recommendation("toy.min_chars", ToySettings.of(t.cfg).min_chars, int(p90), f"a tenth of the messages exceed {p90}")]
''',
}


def test_every_registry_is_derived_from_the_declarations() -> None:
    found = analyzers.declarations()
    assert [a.name for a in found] == list(analyzers.REGISTRY)  # no plug-in in the test environment
    assert all(isinstance(a, Analyzer) for a in found)
    assert {k.section for k in keys()} == set(schema().sections)  # every section has its heading line
    assert analyzers.on("spark") == ["baseline", "compression", "drift", "sentinel"]
    assert analyzers.maps() == {"conversations", "per_conversation", "models", "degraded"}
    assert set(analyzers.all_facts()) >= {f for a in found for f in a.reads}  # what an analyzer reads is declared


def test_drawers_and_tuners_live_in_their_analyzers_package_and_name_keys_that_exist() -> None:
    """An analyzer's drawers and tuners are its own package's functions (its ``draw`` and ``tune`` modules), held
    by the declaration as values; a tuner's keys must be keys of the schema."""
    paths = {k.path for k in keys()}
    for a in analyzers.declarations():
        package = analyzers.REGISTRY[a.name]
        assert set(a.engines) <= set(ENGINES), a.name
        for name, drawer in (a.charts or {}).items():
            assert drawer.__module__ == f"{package}.draw", (a.name, name, drawer.__module__)
        for t in a.tuners:
            assert t.run.__module__ == f"{package}.tune", (a.name, t.run.__module__)
            assert set(t.keys) <= paths, (a.name, t.keys)
        assert {t.written for t in a.tables} <= {"selection", "whole", "cache", "log"}, a.name


LAYERS_ABOVE = ("report", "tuning", "warehouse", "serve", "check.py", "commands")  # check.py: commands/ (layout)


def test_no_module_above_the_analyzers_names_one() -> None:
    """The layers above find an analyzer's parts through the registry: none of their modules imports an analyzer's
    package nor names one of its derived tables, and no string names a module to import."""
    root = Path(analyzers.__file__).parents[1]
    names = "|".join(analyzers.REGISTRY)
    tables = "|".join(t.name for a in analyzers.declarations() for t in a.tables)
    pattern = re.compile(rf"forensics\.analyzers\.({names})\b|\b({tables})\b|[\"']forensics(\.\w+)+:\w+[\"']")
    paths = [
        p
        for where in LAYERS_ABOVE
        for p in (sorted((root / where).rglob("*.py")) if (root / where).is_dir() else [root / where])
        if p.exists()
    ]
    found = [
        f"{p.relative_to(root)}:{i}: {m.group(0)}"
        for p in paths
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if (m := pattern.search(line))
    ]
    assert found == []


def _site(tmp: Path) -> Path:
    """A folder that, put on PYTHONPATH, holds the toy analyzer and its one entry point (an installed package's
    metadata, as pip would write it)."""
    site = tmp / "site"
    info = site / "toy_analyzer-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "toy_analyzer").mkdir()
    for name, text in TOY.items():
        (site / "toy_analyzer" / name).write_text(text, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-analyzer\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[forensics.analyzers]\ntoy = toy_analyzer:ANALYZER\n", encoding="utf-8")
    return site


def _forensics(site: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    path = [str(site)] if site else []
    env = {**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "forensics", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("toy")
    db = tmp / "w.duckdb"
    r = _forensics(None, "ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db))
    assert r.returncode == 0, r.stderr
    return _site(tmp), db


def test_config_check_validates_a_plugin_analyzers_key_with_its_line(toy: tuple[Path, Path], tmp_path: Path) -> None:
    site, _ = toy
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[toy]\nmin_chars = 50\n", encoding="utf-8")
    ok = _forensics(site, "config", "check", str(cfg))
    assert ok.returncode == 0 and f"{cfg}: ok (1 of {len(keys()) + 1} keys differ" in ok.stdout, ok.stderr
    cfg.write_text("[toy]\n\nmin_chars = -1\n", encoding="utf-8")
    bad = _forensics(site, "config", "check", str(cfg))
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"forensics: {cfg}:3: toy.min_chars must be at least 0 (characters), got -1"
    without = _forensics(None, "config", "check", str(cfg))  # no plug-in, no [toy] section
    assert without.returncode == 2 and f"{cfg}:1: unknown section [toy]" in without.stderr


def test_report_runs_a_plugin_analyzer_and_check_applies_its_rule(toy: tuple[Path, Path], tmp_path: Path) -> None:
    site, db = toy
    out, baseline = tmp_path / "out", tmp_path / "baseline.json"
    r = _forensics(
        site,
        "report",
        "--db",
        str(db),
        "--only",
        "toy",
        "--out",
        str(out),
        "--format",
        "json,md",
        "--write-baseline",
        str(baseline),
    )
    assert r.returncode == 0, r.stderr
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    n = metrics["sections"]["toy"]["long_messages"]
    assert n > 0 and metrics["analyzers"] == ["toy"]
    assert "charts/toy_bars.svg" in (out / "report.md").read_text(encoding="utf-8")  # drawn by its own drawer
    assert (out / "charts" / "toy_bars.svg").stat().st_size > 1000
    long = dict(query(db, "SELECT conversation_id, long FROM toy_long_messages"))  # its derived table, written
    assert sum(long.values()) == n and len(long) == metrics["conversations"]
    rule = json.loads(baseline.read_text(encoding="utf-8"))["metrics"]["toy.long_messages"]
    assert (rule["value"], rule["better"], rule["tolerance"], rule["relative"]) == (n, "lower", 0.0, False)
    assert _forensics(site, "check", "--db", str(db), "--baseline", str(baseline)).returncode == 0
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[toy]\nmin_chars = 1\n", encoding="utf-8")  # more messages are long: lower is better
    worse = _forensics(site, "check", "--db", str(db), "--baseline", str(baseline), "--config", str(cfg))
    assert worse.returncode == 1 and "toy.long_messages" in worse.stdout and "REGRESSED" in worse.stdout


def test_tune_runs_a_plugin_analyzers_tuner_and_the_docs_list_its_table(toy: tuple[Path, Path]) -> None:
    site, db = toy
    r = _forensics(site, "tune", "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    rec = next(x for x in json.loads(r.stdout) if x["key"] == "toy.min_chars")
    (p90,) = query(db, "SELECT quantile_disc(content_chars, 0.9) FROM messages")[0]
    assert (rec["current"], rec["recommended"]) == (100, p90) and p90 != 100
    assert not any(
        x["key"] == "toy.min_chars" for x in json.loads(_forensics(None, "tune", "--db", str(db), "--json").stdout)
    )  # no plug-in, no toy tuner
    docs = subprocess.run(
        [sys.executable, "-m", "forensics.report.tables"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])},
    )
    assert (
        "| `toy_long_messages` | toy | selection | per conversation: its messages longer than min_chars |"
        in docs.stdout
    )


def test_a_builtin_analyzer_is_its_package_plus_one_registry_line(toy: tuple[Path, Path], tmp_path: Path) -> None:
    """The same toy package as a built-in: no entry point, one line in ``REGISTRY`` (added by the process that runs
    the CLI, as the line in forensics/analyzers/__init__.py would) and nothing else."""
    site, db = toy
    package = tmp_path / "pkg"
    shutil.copytree(site / "toy_analyzer", package / "toy_analyzer")
    main = tmp_path / "run.py"
    main.write_text(
        "import sys\nfrom forensics import analyzers\nanalyzers.REGISTRY['toy'] = 'toy_analyzer'\n"
        "from forensics.cli import main\nsys.argv[0] = 'forensics'\nmain()\n",
        encoding="utf-8",
    )
    env = {**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(package), os.environ.get("PYTHONPATH", "")])}
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            str(main),
            "report",
            "--db",
            str(copy),
            "--only",
            "toy",
            "--out",
            str(out),
            "--format",
            "json,md",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert (out / "charts" / "toy_bars.svg").stat().st_size > 1000
    assert (
        query(copy, "SELECT sum(long) FROM toy_long_messages")[0][0]
        == json.loads((out / "metrics.json").read_text(encoding="utf-8"))["sections"]["toy"]["long_messages"]
    )
    tuned = subprocess.run(
        [sys.executable, str(main), "tune", "--db", str(copy), "--json"], capture_output=True, text=True, env=env
    )
    assert tuned.returncode == 0 and "toy.min_chars" in tuned.stdout, tuned.stderr


def test_a_misspelled_key_is_a_type_error(tmp_path: Path) -> None:
    """An analyzer reads its section as a typed value (``config.Settings``): mypy names a misspelled key and the
    keys it may have meant; a key of the section passes."""
    from mypy import api

    code = (
        "from forensics.analyzers.drift.settings import DriftSettings\nfrom forensics.analyzers.schema import defaults\n"
        "d = DriftSettings.of(defaults())\nprint(d.echo_rate_low + d.{})\n"
    )
    root = Path(analyzers.__file__).parents[2]
    (tmp_path / "ok.py").write_text(code.format("echo_rate_high"), encoding="utf-8")
    (tmp_path / "typo.py").write_text(code.format("echo_rate_hi"), encoding="utf-8")
    out, _, status = api.run(
        ["--config-file", str(root / "pyproject.toml"), str(tmp_path / "ok.py"), str(tmp_path / "typo.py")]
    )
    assert status == 1 and out.count("error:") == 1, out
    assert 'typo.py:4: error: "DriftSettings" has no attribute "echo_rate_hi"; maybe "echo_rate_high"' in out, out
