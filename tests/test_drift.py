"""Drift phenomena on the seed-table fixture: the episodes the generator planted are found where it put them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

from tests.conftest import FIXTURES, run_cli

EVIDENCE = json.loads((FIXTURES / "seed" / "seed.db.expected.json").read_text())["evidence"]


def _report(src: Path, tmp: Path, switches: bool = False) -> tuple[dict, duckdb.DuckDBPyConnection]:
    db = tmp / "w.duckdb"
    shutil.copy(src, db)
    if switches:  # what the topic analyzer will write: here made from the generator's labels
        con = duckdb.connect(str(db))
        con.execute(
            "CREATE TABLE topic_switches (conversation_id VARCHAR, position INTEGER, topic_before VARCHAR, "
            "topic_after VARCHAR)"
        )
        for line in (FIXTURES / "labels" / "seed.labels.jsonl").read_text().splitlines():
            lab = json.loads(line)
            for i, pos in enumerate(lab["topic_shifts"]):
                con.execute(
                    "INSERT INTO topic_switches SELECT conversation_id, ?, ?, ? FROM conversations WHERE native_id = ?",
                    [pos, lab["topics"][i], lab["topics"][i + 1], lab["id"]],
                )
        con.close()
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp / "r"), "--only", "drift")
    assert code == 0, err
    doc = json.loads((tmp / "r" / "metrics.json").read_text())
    return doc, duckdb.connect(str(db), read_only=True)


def _episodes(con: duckdb.DuckDBPyConnection, native: str, kind: str) -> list[tuple[str, list[int]]]:
    return con.execute(
        "SELECT severity, positions FROM drift_findings WHERE native_id = ? AND kind = ? "
        "AND severity IN ('low', 'high') ORDER BY positions[1]",
        [native, kind],
    ).fetchall()


def _inside(positions: list[int], rng: list[int]) -> bool:
    return bool(positions) and all(rng[0] <= p <= rng[1] for p in positions)


def test_planted_episodes_are_found_inside_their_recorded_ranges(seed_wh: Path, tmp_path: Path) -> None:
    doc, con = _report(seed_wh, tmp_path)
    f89 = EVIDENCE["f89d129a"]["decision_analysis"]["tool_rounds"]
    d66 = EVIDENCE["d6614e0b"]
    assert ("high", [9, 22, 27, 29, 31, 33, 35, 37, 39, 41, 44, 46]) in _episodes(con, "f89d129a", "tool_dispersion")
    assert any(_inside(p, f89) for _, p in _episodes(con, "f89d129a", "tool_dispersion"))
    assert any(
        s == "high" and _inside(p, d66["tool_dispersion"]["tool_rounds"])
        for s, p in _episodes(con, "d6614e0b", "tool_dispersion")
    )
    loss = [(s, p) for s, p in _episodes(con, "d6614e0b", "compaction_topic_loss") if s == "high"]
    assert loss == [("high", [175, 176, 177, 178])]  # read of the missing 07-14 file, its error, the list_dir
    assert _inside(loss[0][1], d66["compaction_topic_loss"]["tool_rounds"])
    follows = con.execute(
        "SELECT follows_compaction, detail FROM drift_findings WHERE native_id = 'd6614e0b' "
        "AND kind = 'compaction_topic_loss' AND severity = 'high'"
    ).fetchall()
    assert follows == [(None, "docs/02-架构设计/授权方案-2025-07-14.md; no compaction is marked in this log")]
    convs = doc["sections"]["drift"]["conversations"]
    assert {c["native_id"]: c["topic_interleave"] for c in convs.values()} == {
        "f89d129a": "not computed",
        "a95f5d6d": "not computed",
        "d6614e0b": "not computed",
    }


def test_f89d129a_is_crowded_with_its_largest_results_as_evidence(seed_wh: Path, tmp_path: Path) -> None:
    doc, con = _report(seed_wh, tmp_path)
    largest = [
        p
        for (p,) in con.execute(
            "SELECT m.position FROM messages m JOIN conversations c USING (conversation_id) WHERE c.native_id = "
            "'f89d129a' AND m.role = 'tool' ORDER BY m.content_bytes DESC, m.position LIMIT 5"
        ).fetchall()
    ]
    assert _episodes(con, "f89d129a", "tool_result_crowding") == [("high", sorted(largest))]
    finding = next(f for f in doc["findings"] if f["native_id"] == "f89d129a" and f["kind"] == "tool_result_crowding")
    # the assistant's writing counts what it wrote through tool arguments too (0.05 -> 0.06); the seed's three
    # conversations are too few for a norm of their kind, so the seed's ratios apply and the rule says so
    assert finding["rule"] == (
        "output/tool ratio 0.06 ≤ 0.1 with 39 results > 2000 bytes in a context of ~146,715 "
        "tokens (no norm for sqlite (3 conversations, fewer than 20): the seed's ratios apply)"
    )


def test_no_focus_and_secondary_signals(seed_wh: Path, tmp_path: Path) -> None:
    doc, _ = _report(seed_wh, tmp_path)
    convs = {c["native_id"]: c for c in doc["sections"]["drift"]["conversations"].values()}
    # type 5 is echo *and* nagging: d6614e0b echoes 43 % of its turns but the user never nags (0 continue-nags)
    assert {n: c["no_focus"] for n, c in convs.items()} == {"f89d129a": "high", "a95f5d6d": "low", "d6614e0b": "none"}
    assert convs["f89d129a"]["continue_nags"] == 5 and convs["f89d129a"]["continue_fatigue"] == 5 / 22
    assert round(convs["f89d129a"]["echo_rate"], 2) == 0.62


def test_interleave_uses_topic_switches_and_finds_the_seed_lag(seed_wh: Path, tmp_path: Path) -> None:
    """[140] switch delivery → write_date; the assistant keeps reading delivery files [141]–[152] (labels)."""
    _, con = _report(seed_wh, tmp_path, switches=True)
    lag = json.loads((FIXTURES / "labels" / "seed.labels.jsonl").read_text().splitlines()[2])["interleave"][0]["lag"]
    got = con.execute(
        "SELECT severity, value, rule, positions FROM drift_findings WHERE kind = 'topic_interleave' "
        "AND severity <> 'none'"
    ).fetchall()
    assert got == [
        (
            "high",
            12.0,
            "12 messages ([141]–[152]) on the old topic after the switch at [140] (the seed's lag "
            "thresholds: a lag in messages means the same for every agent)",
            [141, 147, 149, 151],
        )
    ]
    assert _inside(got[0][3], lag)
    assert con.execute("SELECT count(*) FROM drift_findings WHERE severity = 'not computed'").fetchall()[0][0] == 0


def test_echo_without_nagging_is_an_agents_way_of_working_not_no_focus(reported_wh: Path) -> None:
    """aeb4919b echoes 54 % of its turns (over the seed's high 50 %) but the user never nags: no finding; what is
    left of type 5 are the conversations where both happen."""
    con = duckdb.connect(str(reported_wh), read_only=True)
    rows = con.execute(
        "SELECT c.native_id, r.empty_assistant_share, r.continue_nags, f.severity FROM drift_findings f "
        "JOIN report_conversations r USING (conversation_id) JOIN conversations c USING "
        "(conversation_id) WHERE f.kind = 'no_focus'"
    ).fetchall()
    assert {r[3] for r in rows if r[0] == "aeb4919b"} == {"none"} and {r[1] for r in rows if r[0] == "aeb4919b"} == {
        65 / 120
    }
    assert all(sev == "none" for _, echo, nags, sev in rows if echo < 0.30 or nags < 2)
    # echo is held against its kind (22 sqlite conversations: fence 0.557 on the echo rate): of those crossing
    # both seed thresholds only f89d129a echoes more than its kind usually does
    crossing = sorted(n for n, echo, nags, _ in rows if echo >= 0.30 and nags >= 2)
    assert sorted(n for n, _, _, sev in rows if sev != "none") == ["f89d129a"] and "f89d129a" in crossing
