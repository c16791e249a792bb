"""`forensics check` gates CI on a committed baseline; the harness config fails loudly on mistakes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.schema import keys, load_config
from forensics.kernel.errors import ForensicsError
from tests.conftest import FIXTURES, run_cli


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("chk")
    ingest([FIXTURES / "seed" / "seed.db"], db=d / "w.duckdb")
    code, _, err = run_cli(
        "report",
        "--db",
        str(d / "w.duckdb"),
        "--only",
        "baseline",
        "--out",
        str(d / "r"),
        "--format",
        "json",
        "--write-baseline",
        str(d / "base.json"),
    )
    assert code == 0, err
    return d


def _edit(src: Path, dst: Path, key: str, **changes: object) -> Path:
    doc = json.loads(src.read_text())
    doc["metrics"][key].update(changes)
    dst.write_text(json.dumps(doc))
    return dst


def test_identical_metrics_pass(wh: Path) -> None:
    code, out, _ = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(wh / "base.json"))
    assert code == 0
    assert out.strip().splitlines()[-1].endswith("metrics: 0 regressed, 0 better")


def test_one_metric_worse_than_tolerance_fails_and_junit_names_it(wh: Path, tmp_path: Path) -> None:
    # the seed's empty-assistant share is 0.4708; a baseline of 0.40 (lower is better, 5 % relative) is beaten
    base = _edit(wh / "base.json", tmp_path / "b.json", "baseline.means.empty_assistant_share", value=0.40)
    code, out, _ = run_cli(
        "check", "--db", str(wh / "w.duckdb"), "--baseline", str(base), "--junit", str(tmp_path / "j.xml")
    )
    assert code == 1
    assert "REGRESSED" in out and "1 regressed" in out
    suite = ET.parse(tmp_path / "j.xml").getroot()
    failures = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failures == ["baseline.means.empty_assistant_share"]
    assert suite.get("tests") == str(len(list(suite.iter("testcase")))) and suite.get("failures") == "1"


def test_better_than_baseline_passes(wh: Path, tmp_path: Path) -> None:
    base = _edit(wh / "base.json", tmp_path / "b.json", "baseline.means.empty_assistant_share", value=0.60)
    code, out, _ = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(base))
    assert code == 0 and "1 better" in out


def test_within_tolerance_is_ok_and_equal_direction_catches_drift_both_ways(wh: Path, tmp_path: Path) -> None:
    base = _edit(
        wh / "base.json",
        tmp_path / "b.json",
        "baseline.means.messages",
        value=230.0,
        better="equal",
        tolerance=5.0,
        relative=False,
    )
    assert run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(base))[0] == 0
    base = _edit(
        wh / "base.json",
        tmp_path / "c.json",
        "baseline.means.messages",
        value=230.0,
        better="equal",
        tolerance=4.9,
        relative=False,
    )
    assert run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(base))[0] == 1


def test_missing_or_invalid_baseline_is_a_usage_error(wh: Path, tmp_path: Path) -> None:
    code, out, err = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(tmp_path / "none.json"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "no baseline file" in err
    (tmp_path / "bad.json").write_text('{"metrics": {"x": {"value": 1, "better": "sideways"}}}')
    code, _, err = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(tmp_path / "bad.json"))
    assert code == 2 and "better must be one of" in err


def test_update_rewrites_values_and_keeps_rules(wh: Path, tmp_path: Path) -> None:
    base = _edit(
        wh / "base.json",
        tmp_path / "b.json",
        "baseline.means.empty_assistant_share",
        value=0.40,
        tolerance=0.01,
        relative=False,
    )
    code, out, _ = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(base), "--update")
    assert code == 0 and "baseline rewritten" in out
    rule = json.loads(base.read_text())["metrics"]["baseline.means.empty_assistant_share"]
    assert rule == {"value": pytest.approx(0.4707804395), "better": "lower", "tolerance": 0.01, "relative": False}


def test_update_writes_a_missing_baseline_and_says_so(wh: Path, tmp_path: Path) -> None:
    new = tmp_path / "new" / "NEW.json"
    new.parent.mkdir()
    code, out, err = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(new), "--update")
    written = json.loads(new.read_text())["metrics"]
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        f"baseline written: {new} did not exist; {len(written)} metrics with default "
        "directions and tolerances (commit it)"
    )
    assert written["baseline.means.empty_assistant_share"] == {
        "value": pytest.approx(0.4707804395),
        "better": "lower",
        "tolerance": 0.05,
        "relative": True,
    }
    assert {k.split(".")[0] for k in written} >= {"baseline", "drift", "compression"}
    assert not any(k.startswith(("sentinel.", "memory.", "skills.")) for k in written)  # not in use on the seed
    assert run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(new))[0] == 0  # and it holds


def test_metrics_of_an_analyzer_not_in_use_are_skipped_and_say_why(wh: Path, tmp_path: Path) -> None:
    """The seed's DevFlow logs never ask for a sentinel: its gated figures are neither a pass nor a regression."""
    doc = json.loads((wh / "base.json").read_text())
    doc["metrics"]["sentinel.healthy_share"] = {"value": 0.9, "better": "higher", "tolerance": 0.02, "relative": False}
    doc["metrics"]["sentinel.judged_replies"] = {"value": 600, "better": "equal", "tolerance": 0, "relative": False}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    code, out, _ = run_cli(
        "check",
        "--db",
        str(wh / "w.duckdb"),
        "--baseline",
        str(tmp_path / "b.json"),
        "--junit",
        str(tmp_path / "j.xml"),
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[-2].endswith("metrics: 0 regressed, 0 better, 2 skipped as not in use")
    assert lines[-1] == (
        "not in use (sentinel, 2 metrics): no `[[SS-CHECK` in any system prompt, injected text or "
        "reply of the 3 conversations: no model was asked for the sentinel"
    )
    assert any(line.startswith("sentinel.judged_replies") and line.endswith("not in use") for line in lines)
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("skipped") == "2" and suite.get("failures") == "0"
    code, out, _ = run_cli("check", "--db", str(wh / "w.duckdb"), "--baseline", str(tmp_path / "b.json"), "--update")
    assert (
        code == 0
        and json.loads((tmp_path / "b.json").read_text())["metrics"]["sentinel.judged_replies"]["value"] == 600
    )  # nothing measured it: an update keeps it


def test_config_init_writes_every_key_and_reloads(tmp_path: Path) -> None:
    p = tmp_path / "harness.toml"
    assert run_cli("config", "init", str(p))[0] == 0
    text = p.read_text()
    for k in keys():
        assert f"\n{k.name} = " in text
    assert "INTENT_CONF_THRESHOLD" in text
    cfg = load_config(p)
    assert all(cfg[k.path] == k.default for k in keys())
    code, _, err = run_cli("config", "init", str(p))
    assert code == 2 and "--force" in err


@pytest.mark.parametrize(
    "body, message",
    [
        ('[tool_result]\nsummarize_bytes = "big"\n', "harness.toml:2: tool_result.summarize_bytes must be an integer"),
        ("[topic]\n\n# c\nmin_confidance = 0.8\n", "harness.toml:4: unknown key topic.min_confidance"),
        ("[nonsense]\nx = 1\n", "harness.toml:1: unknown section [nonsense]"),
        ("[sentinel]\ntokens = [1, 2]\n", "harness.toml:2: sentinel.tokens must be a list of strings"),
        ("[sentinel\n", "not valid TOML"),
        (
            '[baseline]\ncontinue_words = ["继续", "' + "x" * 65 + '"]\n',
            "harness.toml:2: baseline.continue_words items must be at most 64 characters",
        ),
    ],
)
def test_bad_config_names_key_line_and_expectation(tmp_path: Path, body: str, message: str) -> None:
    p = tmp_path / "harness.toml"
    p.write_text(body)
    with pytest.raises(ForensicsError) as e:
        load_config(p)
    assert message in str(e.value)
    code, out, err = run_cli("config", "check", str(p))
    assert code == 2 and out == "" and message in err


def test_report_reads_thresholds_from_the_config(wh: Path, tmp_path: Path) -> None:
    p = tmp_path / "harness.toml"
    p.write_text('[baseline]\nshort_user_chars = 2\ncontinue_words = ["继续", "好的"]\n')
    code, _, err = run_cli(
        "report",
        "--db",
        str(wh / "w.duckdb"),
        "--only",
        "baseline",
        "--config",
        str(p),
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())
    per = {v["native_id"]: v for v in doc["sections"]["baseline"]["conversations"].values()}
    assert doc["config"] == str(p)
    assert per["f89d129a"]["continue_nags"] > 5  # 好的 now counts too
    assert per["f89d129a"]["short_user"] < 14


def test_harness_config_docs_are_current() -> None:
    from forensics.analyzers.schema import render_docs
    from tests.conftest import ROOT

    assert (ROOT / "docs" / "harness-config.md").read_text() == render_docs()


def test_loading_a_config_imports_no_analyzer_and_reads_the_keys_they_declare(tmp_path: Path) -> None:
    """The schema reads each built-in analyzer's keys from its light module (``forensics.analyzers.keys``), so a
    report read back whole imports no analyzer; those are the very keys and sections each declaration holds, and
    no built-in declares keys without one."""
    import importlib
    import subprocess
    import sys

    from forensics import analyzers
    from forensics.analyzers import keys as light
    from forensics.analyzers.schema import schema
    from forensics.config import GENERAL, GENERAL_SECTIONS, Schema

    code = (
        "import sys\nfrom forensics import analyzers\nfrom forensics.analyzers.schema import load_config\n"
        "load_config(); analyzers.parse_only(None); analyzers.parse_only('drift,topics'); analyzers.detector_sections()\n"
        "print(sorted(p for p in analyzers.REGISTRY.values() if p in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    declared = analyzers.declarations()
    assert not light.NAMES & light.NONE and light.NAMES | light.NONE == set(analyzers.REGISTRY)
    for a in declared:
        if a.name in light.NAMES:
            module = importlib.import_module(f"forensics.analyzers.keys.{a.name}")
            assert (a.keys, a.sections) == (module.KEYS, module.SECTIONS) and a.keys is module.KEYS, a.name
            assert (a.detector_sections or {}) == getattr(module, "DETECTOR_SECTIONS", {}), a.name
        else:
            assert not (a.keys or a.sections or a.detector_sections), f"{a.name}: declare them in analyzers.keys"
    assert analyzers.names() == [a.name for a in declared]
    assert analyzers.detector_sections() == {s: how for a in declared for s, how in (a.detector_sections or {}).items()}
    assert schema() == Schema(
        GENERAL + tuple(k for a in declared for k in a.keys),
        {**GENERAL_SECTIONS, **{s: doc for a in declared for s, doc in (a.sections or {}).items()}},
    )
