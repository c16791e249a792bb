"""One declaration per analyzer (issue 23, step 2): every registry is derived from the ``ANALYZER`` declarations,
their references resolve, and a toy analyzer outside the project (one module and one entry point, in a temporary
folder on PYTHONPATH) has its key checked by `config check`, runs in `report`, draws its chart and is gated by
`check` with its own rule."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import analyzers
from forensics.analyzers.declare import ENGINES, Analyzer, resolve
from forensics.analyzers.schema import keys, schema
from tests.conftest import FIXTURES

TOY = '''\
"""A toy analyzer: how many messages are longer than [toy] min_chars."""
import pyarrow as pa

from forensics.analyzers.base import Chart, Section
from forensics.analyzers.declare import Analyzer, CheckRule
from forensics.analyzers.facts import Fact, arrow
from forensics.config import Key


def long_messages(con, cfg) -> pa.Table:
    return arrow(con, "SELECT conversation_id, count(*) FILTER (WHERE m.content_chars > getvariable('toy_min_chars'))"
                      "::BIGINT AS long FROM messages m JOIN sel_conversations USING (conversation_id) GROUP BY 1")


def run(ctx):
    n = int(ctx.fact("toy_long")["long"].sum())
    return Section("toy", "Toy", f"{n} long messages.", metrics={"long_messages": n},
                   charts=[Chart("bars", "Long messages", {"n": n})])


def bars(data):
    from forensics.report.charts import figure

    fig = figure(4.0)
    fig.axes[0].bar(["long"], [data["n"]])
    return fig


ANALYZER = Analyzer(
    "toy", "Toy", run,
    sections={"toy": "A toy analyzer (tests/test_declarations.py)."},
    keys=(Key("toy", "min_chars", 100, "a message longer than this is long", "characters"),),
    facts=(Fact("toy_long", long_messages, ("conversation_id",)),),
    reads=("toy_long",),
    checks=(CheckRule("toy.long_*", "lower", 0.0, False),),
    charts={"bars": "toy_analyzer:bars"},
)
'''


def test_every_registry_is_derived_from_the_declarations() -> None:
    found = analyzers.declarations()
    assert [a.name for a in found] == list(analyzers.REGISTRY)  # no plug-in in the test environment
    assert all(isinstance(a, Analyzer) for a in found)
    assert {k.section for k in keys()} == set(schema().sections)  # every section has its heading line
    assert analyzers.on("spark") == ["baseline", "compression", "drift", "sentinel"]
    assert analyzers.maps() == {"conversations", "per_conversation", "models", "degraded"}
    assert set(analyzers.all_facts()) >= {f for a in found for f in a.reads}  # what an analyzer reads is declared


def test_every_reference_resolves_and_names_a_key_that_exists() -> None:
    """Drawers and tuners are named by reference (the layers above own them): each must resolve, and a tuner's
    keys must be keys of the schema."""
    paths = {k.path for k in keys()}
    for a in analyzers.declarations():
        assert set(a.engines) <= set(ENGINES), a.name
        for name, ref in (a.charts or {}).items():
            assert callable(resolve(ref)), (a.name, name, ref)
        for t in a.tuners:
            assert callable(resolve(t.ref)), (a.name, t.ref)
            assert set(t.keys) <= paths, (a.name, t.keys)


def _site(tmp: Path) -> Path:
    """A folder that, put on PYTHONPATH, holds the toy analyzer and its one entry point (an installed package's
    metadata, as pip would write it)."""
    site = tmp / "site"
    info = site / "toy_analyzer-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "toy_analyzer.py").write_text(TOY, encoding="utf-8")
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
    r = _forensics(site, "report", "--db", str(db), "--only", "toy", "--out", str(out), "--format", "json,md",
                   "--write-baseline", str(baseline))
    assert r.returncode == 0, r.stderr
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    n = metrics["sections"]["toy"]["long_messages"]
    assert n > 0 and metrics["analyzers"] == ["toy"]
    assert "charts/toy_bars.svg" in (out / "report.md").read_text(encoding="utf-8")  # drawn by its own drawer
    assert (out / "charts" / "toy_bars.svg").stat().st_size > 1000
    rule = json.loads(baseline.read_text(encoding="utf-8"))["metrics"]["toy.long_messages"]
    assert (rule["value"], rule["better"], rule["tolerance"], rule["relative"]) == (n, "lower", 0.0, False)
    assert _forensics(site, "check", "--db", str(db), "--baseline", str(baseline)).returncode == 0
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[toy]\nmin_chars = 1\n", encoding="utf-8")  # more messages are long: lower is better
    worse = _forensics(site, "check", "--db", str(db), "--baseline", str(baseline), "--config", str(cfg))
    assert worse.returncode == 1 and "toy.long_messages" in worse.stdout and "REGRESSED" in worse.stdout
