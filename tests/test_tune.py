"""`forensics tune`: evidence-backed recommendations, a comment-preserving rewrite, harness constants."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forensics import ingest, open_warehouse
from forensics.analyzers.base import Context
from forensics.analyzers.compression import replay
from forensics.analyzers.compression.settings import ToolResultSettings
from forensics.analyzers.compression.tune import SWEEP_BYTES, SWEEP_SHARES
from forensics.analyzers.schema import defaults, load_config
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.kernel.selection import Selection
from tests.conftest import FIXTURES, query, run_cli

HARNESS = """# DevFlow harness thresholds

[tool_result]
# set after the P1 trial (see 跑题改进试验记录)
summarize_bytes = 2000   # bytes
summarize_share = 0.4

compress_enabled = true

[sentinel]
compliance_window = 3
"""


@pytest.fixture(scope="module")
def seed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("tune") / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    return db


def _recs(db: Path, *args: str) -> dict[str, dict]:
    code, out, err = run_cli("tune", "--db", str(db), "--json", *args)
    assert code == 0, err
    return {r["key"]: r for r in json.loads(out)}


def test_recommended_compression_meets_the_target_when_replayed(seed_db: Path, tmp_path: Path) -> None:
    recs = _recs(seed_db, "--config", str(tmp_path / "none.toml"), "--target-tool-share", "0.85")
    b, s = recs["tool_result.summarize_bytes"]["recommended"], recs["tool_result.summarize_share"]["recommended"]
    assert (b, s) == (6000, 1.0)
    assert "meets the target 85%" in recs["tool_result.summarize_bytes"]["evidence"]
    with open_warehouse(seed_db) as wh:
        Context.open(wh.con, defaults(), Selection())
        assert replay(wh.con, b, s)["tool_share_after"] <= 0.85
        # the least aggressive such setting: the next looser byte threshold misses the target
        looser = SWEEP_BYTES[SWEEP_BYTES.index(b) + 1]
        assert replay(wh.con, looser, max(SWEEP_SHARES))["tool_share_after"] > 0.85


def test_without_write_the_config_is_untouched(seed_db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text(HARNESS, encoding="utf-8")
    before = cfg.read_bytes()
    code, out, _ = run_cli("tune", "--db", str(seed_db), "--config", str(cfg), "--target-tool-share", "0.85")
    assert code == 0 and "nothing written without --write" in out
    assert cfg.read_bytes() == before


def test_write_keeps_comments_and_layout_and_changes_only_recommended_keys(seed_db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text(HARNESS, encoding="utf-8")
    code, out, err = run_cli(
        "tune", "--db", str(seed_db), "--config", str(cfg), "--target-tool-share", "0.85", "--write"
    )
    assert code == 0, err
    assert out.strip().endswith("harness.toml: 4 key(s) rewritten")
    new = cfg.read_text(encoding="utf-8").splitlines()
    old = HARNESS.splitlines()
    # the seed's 7 markers in 66 judged messages are more than the stated rate (5 per 100): a [topic] section the
    # file lacked is appended with a higher confidence (issue 43: the request scorer is a learned combiner; with
    # the five signals the seed's 3 markers were the closest rate and no [topic] was added); the compaction replay
    # wants more messages kept: a [compaction] section is appended too
    assert new[len(old) :] == ["", "[topic]", new[-4], "", "[compaction]", new[-1]]
    assert new[-4].startswith("min_confidence = 0.75 # tuned ") and "4.5 markers per 100 judged messages" in new[-4]
    assert new[-1].startswith("keep_recent = 50 # tuned ")
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert [a.split("=")[0].strip() for a, _ in changed] == ["summarize_bytes", "summarize_share"]
    assert re.fullmatch(
        r"summarize_bytes = 6000 # tuned \d{4}-\d\d-\d\d: was 2000; summarizes 24% of 314 results, "
        r"cuts tool bytes 73%, .* \(corpus: 3 conversations, 675 messages\)",
        changed[0][1],
    )
    assert all(a == b for a, b in zip(old, new) if not a.startswith("summarize_"))  # comments, blanks, order
    reloaded = load_config(cfg)
    tr = ToolResultSettings.of(reloaded)
    assert (tr.summarize_bytes, tr.summarize_share) == (6000, 1.0)
    assert SentinelSettings.of(reloaded).compliance_window == 3


def test_emit_rust_is_constant_syntax_with_the_tuned_values(seed_db: Path) -> None:
    code, out, _ = run_cli("tune", "--db", str(seed_db), "--emit", "rust", "--target-tool-share", "0.85")
    assert code == 0
    lines = out.strip().splitlines()
    pattern = re.compile(
        r"pub const [A-Z][A-Z0-9_]*: (f32 = -?\d+\.\d+(e-?\d+)?|usize = \d+|bool = (true|false)|"
        r'&str = "[^"]*"|&\[&str\] = &\[("[^"]*"(, )?)*\]);'
    )
    assert lines and all(pattern.fullmatch(line) for line in lines), lines
    assert "pub const TOOL_RESULT_SUMMARIZE_BYTES: usize = 6000;" in lines
    assert "pub const INTENT_CONF_THRESHOLD: f32 = 0.7;" in lines


def test_emit_ts_and_json(seed_db: Path) -> None:
    _, out, _ = run_cli("tune", "--db", str(seed_db), "--emit", "json")
    consts = json.loads(out)
    assert (
        consts["TOOL_RESULT_SUMMARIZE_BYTES"] == 250 and consts["TOPIC_MARKER_ENABLED"] is True
    )  # target 0.6: closest
    _, out, _ = run_cli("tune", "--db", str(seed_db), "--emit", "ts")
    assert "export const TOOL_RESULT_SUMMARIZE_SHARE = 0.2;" in out.splitlines()


def test_topic_confidence_with_labels_maximises_f1_at_the_precision_floor(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "sqlite" / "realistic.db"], db=db)
    rec = _recs(db, "--labels", str(FIXTURES / "labels" / "realistic.labels.jsonl"))["topic.min_confidence"]
    m = re.match(
        r"against 12 labeled conversations: precision (\S+) \(≥ \S+ at 95 %\), recall (\S+), F1 (\S+) "
        r"\(now (\S+)\)",
        rec["evidence"],
    )
    assert m, rec
    precision, f1, now = float(m.group(1)), float(m.group(3)), float(m.group(4))
    assert precision >= 0.7 and f1 >= now  # never worse than the current value on the labels
    # the default already finds the 9 shifts and nothing else: kept
    assert (rec["recommended"], round(f1, 2), round(now, 2)) == (0.7, 1.0, 1.0)


def test_topic_confidence_without_labels_says_so(seed_db: Path) -> None:
    rec = _recs(seed_db, "--marker-rate", "0.03")["topic.min_confidence"]
    assert rec["evidence"].startswith("no labels used: 3.0 markers per 100 judged messages")


def test_topic_switch_score_is_fitted_on_labels_and_kept_without(seed_db: Path, tmp_path: Path) -> None:
    labels = str(FIXTURES / "labels" / "seed.labels.jsonl")
    rec = _recs(seed_db, "--labels", labels, "--min-precision", "0.3")["topic.switch_score"]
    # 0.39 (the fitted default) marks 8, 4 of them right (F1 0.57; 7 and 3 before issue 43 round 6 marked f89d129a
    # [100] after a content-free turn); 0.3 marks 10, 5 of the 6 shifts; no value is credibly 0.30 precise (the
    # request scorer's three false re-specifications stay at every switch score)
    assert (rec["current"], rec["recommended"]) == (0.39, 0.3)
    assert rec["evidence"] == (
        "against 3 labeled conversations: precision 0.50 (≥ 0.27 at 95 %), recall 0.83, F1 0.62 (now 0.57); "
        "no value is credibly 0.30 precise, the most credible one"
    )
    assert (
        query(seed_db, "SELECT count(*) FROM topic_switches")[0][0] == 8
    )  # the tables as the current config makes them
    rec = _recs(seed_db, "--labels", labels)["topic.switch_score"]
    assert rec["evidence"].endswith("no value is credibly 0.70 precise, the most credible one")  # 3 conversations
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "sqlite" / "realistic.db"], db=db)
    rec = _recs(db, "--labels", str(FIXTURES / "labels" / "realistic.labels.jsonl"))["topic.switch_score"]
    assert (rec["current"], rec["recommended"]) == (0.39, 0.39)  # all 9 shifts and nothing else already: kept
    rec = _recs(db)["topic.switch_score"]
    assert (rec["recommended"], rec["evidence"][:10]) == (0.39, "no labels:")
    (tmp_path / "dialogue.toml").write_text('[topic]\nroles = ["user", "assistant"]\n')
    recs = _recs(
        db, "--labels", str(FIXTURES / "labels" / "realistic.labels.jsonl"), "--config", str(tmp_path / "dialogue.toml")
    )
    assert "topic.dialogue_switch_score" in recs and "topic.switch_score" not in recs  # the mode judged in


def test_compaction_keeps_the_fewest_messages_that_leave_the_summary_at_most_the_stated_share(seed_db: Path) -> None:
    recs = _recs(seed_db)
    assert recs["compaction.keep_recent"]["recommended"] == 50
    assert recs["compaction.keep_recent"]["evidence"] == (
        "keep_recent 50 at max_tokens 100000: 4 of the 29 needs after a replayed compaction (14%) concern a fact "
        "outside the kept window (now 21 of 29, 72%); mean context 52,884 tokens (now 45,896)"
    )  # re-runs are needs
    assert recs["compaction.max_tokens"]["recommended"] == 100000  # the model's window is not in the warehouse
    assert recs["compaction.max_tokens"]["evidence"].startswith(
        "kept: the warehouse cannot tell what context your model allows; now 3 replayed compactions"
    )
    # a looser share is met by fewer kept messages; keeping none leaves every need to the summary
    assert _recs(seed_db, "--max-outside-share", "0.75")["compaction.keep_recent"]["recommended"] == 10
    assert _recs(seed_db, "--max-outside-share", "1")["compaction.keep_recent"]["recommended"] == 0
