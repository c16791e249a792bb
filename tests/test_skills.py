"""Skill-trigger replay (docs/metrics.md#skills): on Claude Code sessions written by fixtures/make_skill_sessions.py, every
routing row, count and position equals the generator's labels, harness text is never a request, and the proposed
phrases recover the planted misses without a new false fire."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from forensics.analyzers import named_query
from tests.conftest import FIXTURES, load_script, query, run_cli

SKILLS = FIXTURES / "skills"
TABLE = SKILLS / "skill_triggers.json"
LABELS = json.loads((SKILLS / "labels.json").read_text(encoding="utf-8"))
COLUMNS = ("position", "router_skill", "model_skill", "verdict", "phrase", "load_position")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("skills")
    code, _, err = run_cli("ingest", str(SKILLS / "projects"), "--db", str(d / "w.duckdb"))
    assert code == 0, err
    return d / "w.duckdb"


def report(db: Path, out: Path, *args: str) -> dict:
    code, _, err = run_cli("report", "--db", str(db), "--only", "skills", "--out", str(out), "--format", "json", *args)
    assert code == 0, err
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))["sections"]["skills"]


def routing(db: Path) -> dict[str, list[tuple]]:
    """skill_routing by session id (the conversation's native id), rows as the labels write them."""
    out: dict[str, list[tuple]] = {sid: [] for sid in LABELS["sessions"]}
    for native, *row in query(
        db,
        f"SELECT c.native_id, {', '.join('r.' + c for c in COLUMNS)} FROM skill_routing r "
        "JOIN conversations c USING (conversation_id)",
    ):
        out.setdefault(native, []).append(tuple(row))
    return {k: sorted(v, key=repr) for k, v in out.items()}


def labelled() -> dict[str, list[tuple]]:
    return {
        sid: sorted((tuple(r[c] for c in COLUMNS) for r in s["rows"]), key=repr)
        for sid, s in LABELS["sessions"].items()
    }


def counts_from_labels() -> dict[str, dict]:
    """Per skill, from the labels alone: what docs/metrics.md#skills says the metrics are."""
    c: dict[str, Counter] = {}
    for s in LABELS["sessions"].values():
        for r in s["rows"]:
            for skill in {r["router_skill"], r["model_skill"]} - {None}:
                c.setdefault(skill, Counter())[r["verdict"]] += 1
    out = {}
    for skill, v in c.items():
        router, model = v["hit"] + v["router_only"], v["hit"] + v["model_only"]
        out[skill] = {
            "router": router,
            "model": model,
            "hits": v["hit"],
            "router_only": v["router_only"],
            "model_only": v["model_only"],
            "precision": v["hit"] / router if router else None,
            "recall": v["hit"] / model if model else None,
        }
    return out


def test_the_committed_fixture_is_what_the_generator_writes(tmp_path: Path) -> None:
    load_script(FIXTURES / "make_skill_sessions.py").main(tmp_path)
    ours = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert ours == sorted(p.relative_to(SKILLS) for p in SKILLS.rglob("*") if p.is_file())
    assert all((tmp_path / p).read_bytes() == (SKILLS / p).read_bytes() for p in ours)


def test_every_routing_row_and_position_is_the_labels(db: Path, tmp_path: Path) -> None:
    report(db, tmp_path, "--triggers", str(TABLE))
    assert routing(db) == labelled()


def test_per_skill_figures_are_the_labels_counts(db: Path, tmp_path: Path) -> None:
    m = report(db, tmp_path, "--triggers", str(TABLE))
    expected = counts_from_labels()
    assert set(m["skills"]) == set(expected) == {"pdf", "xlsx", "pptx", "docx", "webapp-testing"}
    for skill, want in expected.items():
        assert {k: m["skills"][skill][k] for k in want} == want, skill
    assert m["totals"]["hits"] == 9 and m["totals"]["router_only"] == 3 and m["totals"]["model_only"] == 9
    assert (m["totals"]["already_loaded"], m["totals"]["command"], m["totals"]["no_request"]) == (1, 1, 1)
    assert m["load_calls_skipped"] == {"failed": 1}  # Skill "slides-maker": Unknown skill, nothing loaded
    assert m["skills"]["webapp-testing"]["in_table"] is False and m["skills"]["webapp-testing"]["precision"] is None
    # evidence: the same positions as the rows, with the load's position for hits and misses
    sid_of = dict(query(db, "SELECT conversation_id, native_id FROM conversations"))
    ev = {(sid_of[cid], *rest) for cid, *rest in m["skills"]["xlsx"]["evidence"]["model_only"]}
    assert ev == {
        (sid, r["position"], r["load_position"])
        for sid, s in LABELS["sessions"].items()
        for r in s["rows"]
        if r["verdict"] == "model_only" and r["model_skill"] == "xlsx"
    }


def test_harness_text_on_the_user_role_is_never_a_request(db: Path, tmp_path: Path) -> None:
    report(db, tmp_path, "--triggers", str(TABLE))
    rows = query(
        db,
        "SELECT c.native_id, m.position, m.kind FROM (SELECT * FROM ("
        + named_query("skill_messages").sql
        + ")) m JOIN conversations c "
        "USING (conversation_id)",
    )
    kinds: dict[str, dict[int, str]] = {}
    for sid, pos, kind in rows:
        kinds.setdefault(sid, {})[pos] = kind
    for sid, s in LABELS["sessions"].items():
        harness = {p: k for p, k in kinds[sid].items() if k != "request"}
        assert harness == {int(p): k for p, k in s["harness"].items()}, sid
        assert sum(k == "request" for k in kinds[sid].values()) == s["requests"], sid
    # the sub-agent's prompt (it mentions PDF and Excel, and it loads pdf) is the model's, not a person's
    assert set(kinds) == set(LABELS["sessions"])
    assert query(
        db,
        "SELECT count(*) FROM skill_routing r JOIN conversations c USING (conversation_id) "
        "WHERE c.parent_conversation_id IS NOT NULL",
    ) == [(0,)]


def test_proposals_recover_the_planted_misses_without_new_false_fires(db: Path, tmp_path: Path) -> None:
    m = report(db, tmp_path / "before", "--triggers", str(TABLE))
    proposed = {(p["skill"], p["phrase"]) for p in m["proposals"]}
    assert proposed == {(s, p) for s, ps in LABELS["planted"].items() for p in ps}
    assert all(p["false_fires_added"] == 0 and p["hits_gained"] == 2 for p in m["proposals"])
    table = tmp_path / "t.json"
    shutil.copy(TABLE, table)
    code, out, err = run_cli("tune", "--db", str(db), "--triggers", str(table), "--write")
    assert code == 0, err
    assert out.endswith(f"{table}: 4 phrase(s) added\n")
    after = report(db, tmp_path / "after", "--triggers", str(table))
    rows = [(sid, *r) for sid, rs in routing(db).items() for r in rs]
    before = [(sid, *r) for sid, rs in labelled().items() for r in rs]
    # the planted misses are hits now, the same false fires stay, and only the vague docx request is missed
    assert [r[:3] for r in rows if r[4] == "router_only"] == [r[:3] for r in before if r[4] == "router_only"]
    assert [(r[1], r[3]) for r in rows if r[4] == "model_only"] == [(8, "docx")]
    assert after["totals"]["hits"] == m["totals"]["hits"] + 8 == m["with_proposals"]["hits"]
    assert after["totals"]["router_only"] == m["totals"]["router_only"] == 3
    assert after["proposals"] == []  # nothing left that a phrase could safely catch
    written = table.read_bytes()
    code, out, _ = run_cli("tune", "--db", str(db), "--triggers", str(table), "--write", "--json")
    assert code == 0 and json.loads(out)["proposals"] == [] and table.read_bytes() == written


def test_held_out_the_proposals_beat_marking_nothing_and_everything(db: Path) -> None:
    """Phrases proposed on one half of the conversations, scored on the other (both ways), beside the trivial
    routers: every conversation judged once, by phrases that never saw it (the do-no-harm rule of docs/definitions.md#topic-switches)."""
    from forensics.analyzers.skills.holdout import fold_of

    code, out, err = run_cli("tune", "--db", str(db), "--triggers", str(TABLE), "--holdout", "--json")
    assert code == 0, err
    doc = json.loads(out)
    half = {native: fold_of(native) for (native,) in query(db, "SELECT native_id FROM conversations")}
    assert doc["conversations"] == [sum(half[sid] == k for sid in LABELS["sessions"]) for k in (0, 1)] == [6, 5]
    assert (
        doc["requests"]
        == [sum(s["requests"] for sid, s in LABELS["sessions"].items() if half[sid] == k) for k in (0, 1)]
        == [18, 14]
    )
    totals = {k: sum(c[k] for c in counts_from_labels().values()) for k in ("hits", "router_only", "model_only")}
    # the table alone, replayed half by half, is the labels' replay; with no table every judged load is a miss
    assert (
        [doc["routers"]["table"][k] for k in ("hits", "false_fires", "misses")]
        == [totals["hits"], totals["router_only"], totals["model_only"]]
        == [9, 3, 9]
    )
    assert doc["routers"]["mark nothing"] == {
        "hits": 0,
        "false_fires": 0,
        "misses": 18,
        "precision": None,
        "recall": 0.0,
        "f1": 0.0,
        "net": 0,
    }
    every, fitted = doc["routers"]["mark everything"], doc["routers"]["table + proposed"]
    assert (every["hits"], every["false_fires"], every["misses"], every["net"]) == (7, 23, 8, -16)
    assert (fitted["hits"], fitted["false_fires"], fitted["misses"], fitted["net"]) == (15, 3, 3, 12)
    assert fitted["f1"] == 2 * 15 / (2 * 15 + 3 + 3) > doc["routers"]["table"]["f1"] > every["f1"]
    assert doc["no_harm"] is True
    # each half proposes only planted phrases: the specific "browser tests", never the bare "tests"
    planted = {(s, p) for s, ps in LABELS["planted"].items() for p in ps}
    assert [sorted(map(tuple, half)) for half in doc["proposed"]] == [
        sorted(planted - {("xlsx", "spreadsheet")}),
        sorted(planted),
    ]
    code, text, err = run_cli("tune", "--db", str(db), "--triggers", str(TABLE), "--holdout")
    assert code == 0, err
    lines = text.splitlines()
    assert "  mark everything      7           23       8       0.23    0.47  0.31  -16" in lines
    assert lines[-1] == (
        "table + proposed: net +12 against the table's +6 (no harm); against mark nothing's 0 and "
        "mark everything's F1 0.31: beats both"
    )


def test_holdout_needs_a_table_both_halves_and_no_write(db: Path, tmp_path: Path) -> None:
    for args in (["--holdout"], ["--holdout", "--triggers", str(TABLE), "--write"]):
        code, out, err = run_cli("tune", "--db", str(db), *args)
        assert code == 2 and out == "" and "--holdout judges a trigger table's proposals" in err
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(SKILLS / "projects" / "-home-dev-webapp" / "4d41f499-5b04-5a88-8c38-df0e4177e934.jsonl", one)
    code, _, err = run_cli("ingest", str(one), "--db", str(tmp_path / "w.duckdb"))
    assert code == 0, err
    code, out, err = run_cli("tune", "--db", str(tmp_path / "w.duckdb"), "--triggers", str(TABLE), "--holdout")
    assert (
        code == 2
        and out == ""
        and err
        == (f"forensics: {tmp_path / 'w.duckdb'}: --holdout needs conversations in both halves (1 in the warehouse)\n")
    )


def test_tune_prints_old_and_new_phrases_and_writes_nothing_without_write(db: Path, tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    shutil.copy(TABLE, table)
    code, out, err = run_cli("tune", "--db", str(db), "--triggers", str(table))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[lines.index(next(x for x in lines if x.startswith("xlsx")))] == (
        'xlsx (2 new): ["excel", "xlsx", "表格文件"] -> ["excel", "xlsx", "表格文件", "电子表格", "spreadsheet"]'
    )
    assert '  + "ppt": 2 hits gained, 0 false fires added (2 of the 2 requests holding it loaded pptx)' in lines
    assert 'webapp-testing (new skill): [] -> ["browser tests"]' in lines
    assert lines[-1] == (
        "4 phrases for 3 skills over 32 requests in 11 conversations: hits 9 -> 17, false fires "
        "3 -> 3, misses 9 -> 1; nothing written without --write"
    )
    assert table.read_bytes() == TABLE.read_bytes()


def test_tune_json_lists_each_proposal_with_its_evidence(db: Path) -> None:
    code, out, err = run_cli("tune", "--db", str(db), "--triggers", str(TABLE), "--json")
    assert code == 0, err
    doc = json.loads(out)
    sid_of = dict(query(db, "SELECT conversation_id, native_id FROM conversations"))
    ppt = next(p for p in doc["proposals"] if p["phrase"] == "ppt")
    assert (ppt["skill"], ppt["hits_gained"], ppt["false_fires_added"], ppt["requests"]) == ("pptx", 2, 0, 2)
    assert sorted((sid_of[c], pos) for c, pos in ppt["catches"]) == sorted(
        (sid, r["position"])
        for sid, s in LABELS["sessions"].items()
        for r in s["rows"]
        if r["verdict"] == "model_only" and r["model_skill"] == "pptx"
    )
    assert doc["before"]["pptx"]["hits"] == 2 and doc["after"]["pptx"]["hits"] == 4
    code, _, err = run_cli("tune", "--db", str(db), "--triggers", str(TABLE), "--emit", "rust")
    assert code == 2 and "--triggers tunes the trigger table only" in err


def test_write_keeps_the_files_order_phrases_keys_and_layout(db: Path, tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    table.write_text(
        '{"schema": 1, "note": "curated by hand",\n    "skills": {\n        "pptx": ["slides", '
        '"幻灯片"],\n        "xlsx": ["excel"],\n        "pdf": ["pdf"]\n    }\n}\n',
        encoding="utf-8",
    )
    code, _, err = run_cli("tune", "--db", str(db), "--triggers", str(table), "--write")
    assert code == 0, err
    text = table.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert list(doc) == ["schema", "note", "skills"] and doc["schema"] == 1 and doc["note"] == "curated by hand"
    assert list(doc["skills"])[:3] == ["pptx", "xlsx", "pdf"]  # the file's order; a skill it lacked goes last
    assert doc["skills"]["pptx"][:2] == ["slides", "幻灯片"] and doc["skills"]["xlsx"][0] == "excel"
    assert '\n        "pptx": ["slides", "幻灯片", ' in text  # its indentation, one line per skill


def test_starting_from_an_empty_table(db: Path, tmp_path: Path) -> None:
    m = report(db, tmp_path)  # no table at all: every load is listed with the request before it
    assert m["table"] is None and m["totals"]["router"] == 0
    assert m["totals"]["model"] == m["totals"]["model_only"] == sum(c["model"] for c in counts_from_labels().values())
    assert {p["skill"] for p in m["proposals"]} == {"pdf", "xlsx", "pptx", "docx", "webapp-testing"}
    assert all(p["false_fires_added"] < p["hits_gained"] for p in m["proposals"])
    table = tmp_path / "t.json"
    table.write_text('{"schema": 1, "skills": {}}', encoding="utf-8")
    code, _, err = run_cli("tune", "--db", str(db), "--triggers", str(table), "--write")
    assert code == 0, err
    started = json.loads(table.read_text(encoding="utf-8"))["skills"]
    assert started == {
        p["skill"]: [q["phrase"] for q in m["proposals"] if q["skill"] == p["skill"]] for p in m["proposals"]
    }
    assert "great" not in str(started)  # "Great, now make slides": one request is no evidence


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such trigger table"),
        ("{not json", ":1: not valid JSON"),
        ('{"schema": 1, "phrases": {}}', 'no "skills" object'),
        ('{"schema": 2, "skills": {}}', "schema 2 is not supported"),
        ('{"schema": 1, "skills": {"pdf": "pdf"}}', "skills.pdf must be a list of phrases"),
        ('{"schema": 1, "skills": {"pdf": ["pdf", 3]}}', "skills.pdf must be a list of phrases"),
        ('{"schema": 1, "skills": {"pdf": ["pdf", "  "]}}', "skills.pdf[1] is an empty phrase"),
    ],
)
def test_a_bad_trigger_table_is_one_line_and_exit_2(
    db: Path, tmp_path: Path, content: str | None, message: str
) -> None:
    table = tmp_path / "t.json"
    if content is not None:
        table.write_text(content, encoding="utf-8")
    for args in (
        ["tune", "--db", str(db), "--triggers", str(table), "--write"],
        ["report", "--db", str(db), "--triggers", str(table), "--out", str(tmp_path / "r")],
    ):
        code, out, err = run_cli(*args)
        assert code == 2 and out == "" and err.count("\n") == 1 and message in err, (args[0], err)
        assert err.startswith(f"forensics: {table}")
    assert (table.read_text(encoding="utf-8") if content is not None else None) == content
    assert not (tmp_path / "r").exists()


def test_the_config_names_the_table_relative_to_itself(db: Path, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "conf").mkdir()
    shutil.copy(TABLE, tmp_path / "conf" / "triggers.json")
    (tmp_path / "conf" / "harness.toml").write_text('[skills]\ntriggers = "triggers.json"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    m = report(db, tmp_path / "r", "--config", "conf/harness.toml")
    assert m["table"]["path"] == str(tmp_path / "conf" / "triggers.json")
    assert {k: m["skills"]["xlsx"][k] for k in ("hits", "router_only", "model_only")} == {
        "hits": 3,
        "router_only": 1,
        "model_only": 4,
    }


def test_which_tools_load_skills_is_configurable(db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[skills]\ntools = ["Skill"]\n', encoding="utf-8")  # meta.loadSkill no longer counts
    m = report(db, tmp_path / "r", "--config", str(cfg), "--triggers", str(TABLE))
    assert {k: m["skills"]["docx"][k] for k in ("router", "hits", "router_only", "model_only")} == {
        "router": 2,
        "hits": 0,
        "router_only": 2,
        "model_only": 1,
    }
    cfg.write_text('[skills]\nargument_keys = ["skill"]\n', encoding="utf-8")  # {"command": "xlsx"} names nothing
    m = report(db, tmp_path / "r", "--config", str(cfg), "--triggers", str(TABLE))
    # {"command": "xlsx"} and {"name": "docx"} name nothing now; the body Claude Code wrote after the call still
    # says xlsx was loaded, so xlsx keeps its hits (docx, loaded by meta.loadSkill, has no body on the user role)
    assert m["load_calls_skipped"] == {"failed": 1, "unnamed": 4}
    assert (m["skills"]["xlsx"]["hits"], m["skills"]["docx"]["hits"]) == (3, 0)


def test_equally_long_phrases_go_to_the_first_skill_of_the_table(db: Path, tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    table.write_text('{"schema": 1, "skills": {"first": ["pdf"], "pdf": ["pdf"]}}', encoding="utf-8")
    m = report(db, tmp_path / "r", "--triggers", str(table))
    fired = query(db, "SELECT DISTINCT router_skill FROM skill_routing WHERE router_skill IS NOT NULL")
    assert fired == [("first",)] and m["skills"]["first"]["router"] == 4 and m["skills"]["pdf"]["router"] == 0


def test_the_report_shows_the_section_with_its_evidence(db: Path, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "skills",
        "--triggers",
        str(TABLE),
        "--out",
        str(tmp_path),
        "--format",
        "md,html",
    )
    assert code == 0, err
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Skill-trigger replay" in md and "| xlsx | 电子表格 | 2 | 0 | 1 | " in md
    assert "| docx | " in md.split("**Misses")[1] and "ok do the thing we discussed for the report" in md
    assert "skill_false_fire" in md and "![Per skill: hits" in md
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Skill-trigger replay" in html and "<svg" in html.split('id="chart-skills_routing"')[1][:200]


def test_phrases_are_whole_words_a_person_writes() -> None:
    from forensics.analyzers.skills.proposals import candidates

    zh = candidates("帮我做个周会汇报用的ppt")
    assert {"ppt", "周会", "汇报", "周会汇报"} <= zh
    assert not {p for p in zh if len(p) == 1} and "的ppt" not in zh and "汇报用" not in zh  # 用, 的: stop words
    en = candidates("please convert report.pdf to a fillable form, then email it")
    assert {"convert", "fillable form", "fillable", "form", "email"} <= en
    assert not {p for p in en if "report" in p or p.startswith(("a ", "to ")) or p.endswith((" a", " to"))}
    assert "form then" not in en and "form, then" not in en  # a comma ends a phrase
    assert not [
        p
        for p in candidates("use key sk-ant-api03-abcdefghijklmnopqrstu and password hunter2x")
        if "sk-" in p or "hunter" in p
    ]
