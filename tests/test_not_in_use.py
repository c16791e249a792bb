"""Say nothing where nothing can be said: an analyzer whose input is absent says so in one line, gates nothing
and recommends nothing; `tune` fits a harness's knobs only on the logs of a harness that has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.schema import keys
from forensics.api import report
from forensics.config import HARNESS_FORMATS, formats_of
from tests.conftest import FIXTURES, SHARED, run_cli

REAL = SHARED / "data" / "agent-logs"
# real Claude Code, Codex and aider logs (SOURCES.md there: where each came from), no harness config
AGENTS = [
    "claude_code/jnarowski+agentcmd",
    "codex_cli/Quelklef+shell-ws",
    "codex_cli/LAF-US+IDAHO-VAULT",
    "aider/AFI-Protocol+afi-core",
    "aider/Asphyksia+OpenCoder",
]


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [p for p in AGENTS if not (REAL / p).exists()]
    if missing:
        pytest.skip(f"{REAL / missing[0]} not found (set FORENSICS_SHARED to the shared folder)")
    d = tmp_path_factory.mktemp("agents")
    ingest([REAL / p for p in AGENTS], db=d / "w.duckdb")
    report(d / "w.duckdb", d / "r")  # the built-in defaults: no harness config
    return d


def test_a_folder_of_agent_logs_recommends_nothing_for_the_seed_harness(agents: Path) -> None:
    doc = json.loads((agents / "r" / "metrics.json").read_text())
    w = doc["what_to_change"]
    assert not [c for c in w["changes"] if c["harness"]] and w["toml"] == ""
    left = {k["key"]: k["why"] for k in w["left_alone"]}
    for key in (
        "sentinel.compliance_window",
        "compaction.keep_recent",
        "compaction.max_tokens",
        "tool_result.summarize_bytes",
        "tool_result.summarize_share",
        "topic.min_confidence",
        "memory.top_k",
    ):
        assert left[key].startswith("no conversation from the harness this setting belongs to (aider "), (
            key,
            left.get(key),
        )
        assert "claude-code " in left[key] and "codex " in left[key]
    md = (agents / "r" / "report.md").read_text()
    assert "- compaction.keep_recent (10): no conversation from the harness this setting belongs to (aider " in md
    code, out, err = run_cli("tune", "--db", str(agents / "w.duckdb"), "--json")
    assert code == 0, err
    assert all(r["recommended"] == r["current"] for r in json.loads(out) if formats_of(r["key"]) is not None)


def test_analyzers_without_input_say_not_in_use_and_gate_nothing(agents: Path) -> None:
    doc = json.loads((agents / "r" / "metrics.json").read_text())
    idle = doc["not_in_use"]
    assert idle["sentinel"].startswith("no `[[SS-CHECK` in any system prompt, injected text or reply of the ")
    assert idle["memory"].startswith("no decision records")
    assert idle["skills"].startswith("no trigger table")
    assert idle["compaction.replay"].startswith(
        "no conversation from the harness whose compaction this replays (aider "
    )
    for name in ("sentinel", "memory", "skills"):
        assert doc["sections"][name] == {} and not [f for f in doc["findings"] if f["section"] == name]
    assert "replay" not in doc["sections"].get("compaction", {})
    md = (agents / "r" / "report.md").read_text()
    assert md.index("Not in use here") < md.index("## What to change")
    assert "- Sentinel compliance: no `[[SS-CHECK`" in md


def test_the_sentinel_judges_only_where_it_was_asked_for(tmp_path: Path) -> None:
    """realistic.db's replies carry the sentinel (its folder's harness asks for it); the DevFlow seed's never do:
    its replies are not Missing, they are not judged."""
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "seed" / "seed.db"], db=db)
    report(db, tmp_path / "r", ["json"], only="sentinel")
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["sentinel"]
    assert (m["judged_replies"], m["conversations_judged"]) == (197, 12)  # realistic.db alone
    ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "seed.duckdb")
    report(tmp_path / "seed.duckdb", tmp_path / "s", ["json"], only="sentinel")
    doc = json.loads((tmp_path / "s" / "metrics.json").read_text())
    assert doc["sections"]["sentinel"] == {} and list(doc["not_in_use"]) == ["sentinel"]


def test_the_harness_rules_are_replayed_and_tuned_on_its_own_logs_only(tmp_path: Path) -> None:
    """The fixtures' Claude Code sessions next to the seed harness's JSONL sessions: the compaction replay and the
    compression tuner read the sessions alone, and the evidence says what was left out."""
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "sessions", FIXTURES / "claude_code"], db=db)
    code, out, err = run_cli("tune", "--db", str(db), "--json")
    assert code == 0, err
    recs = {r["key"]: r for r in json.loads(out)}
    assert recs["tool_result.summarize_bytes"]["evidence"].endswith(
        "; fitted on the harness's own 8 conversations (jsonl 8), not the 5 of other agents (claude-code 5)"
    )
    report(db, tmp_path / "r", ["json"], only="compaction")
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["compaction"]
    assert m["replay"]["conversations"] == 8


def test_every_harness_key_names_the_formats_it_governs() -> None:
    detector = [k.path for k in keys() if formats_of(k.path) is None]
    assert all(p.startswith("drift.") or p.endswith("switch_score") for p in detector)
    assert formats_of("compaction.keep_recent") == HARNESS_FORMATS == ("sqlite", "jsonl", "decision-memory")
