"""Topic inference and the conservative switch marker, on real fixtures through the real pipeline."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from forensics.analyzers.schema import defaults
from forensics.analyzers.topics.infer import Judged, infer, mark
from forensics.analyzers.topics.model import load_model, load_models
from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.topics.signals import Idf, Message, entities, prepare
from forensics.text.cues import Cues
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES, run_cli

THREE = FIXTURES / "labels" / "three.dialogues.jsonl"
CUES = Cues.from_settings(TopicSettings.of(defaults()))


def _marks(rows: list[Judged], min_confidence: float = 0.7) -> list[bool]:
    mark(rows, min_confidence)
    return [r.marker for r in rows]


def test_both_confident_and_different_topics_mark_a_switch() -> None:
    assert _marks([Judged(0, "T1", 0.9, 0.1), Judged(2, "T2", 0.8, 0.9)]) == [False, True]


def test_either_message_without_a_topic_means_no_marker() -> None:
    assert _marks([Judged(0, None, None, None), Judged(2, "T2", 0.95, 0.99)]) == [False, False]
    assert _marks([Judged(0, "T1", 0.9, 0.1), Judged(2, None, None, None), Judged(4, "T2", 0.9, 0.9)]) == [
        False,
        False,
        False,
    ]


def test_the_same_topic_is_no_switch() -> None:
    assert _marks([Judged(0, "T1", 0.9, 0.1), Judged(2, "T1", 0.9, 0.2)]) == [False, False]


def test_a_confidence_below_the_threshold_on_either_side_means_no_marker() -> None:
    assert _marks([Judged(0, "T1", 0.69, 0.4), Judged(2, "T2", 0.9, 0.9)]) == [False, False]
    assert _marks([Judged(0, "T1", 0.9, 0.1), Judged(2, "T2", 0.75, 0.6)], 0.8) == [False, False]


def _conversation(texts: list[tuple[str, str]], roles=("user",)) -> list[Message]:
    msgs = [Message(i, role, text, role in roles) for i, (role, text) in enumerate(texts)]
    prepare(msgs)
    return msgs


def test_short_follow_ups_never_start_a_topic() -> None:
    msgs = _conversation(
        [
            ("user", "帮我看一下 src/ai/agentic.rs 里工具调用循环为什么会死循环"),
            ("assistant", "我先读一下 src/ai/agentic.rs。"),
            ("user", "继续"),
            ("assistant", "好"),
            ("user", "ok"),
            ("assistant", "嗯"),
            ("user", "好的"),
            ("user", "why?"),
            ("user", "Switching topics. Can you review the release workflow in .github/workflows/release.yml?"),
        ]
    )
    out = infer(msgs, Idf(m.tokens for m in msgs), load_model(), CUES)
    by_pos = {j.position: j for j in out}
    for pos in (2, 4, 6, 7):
        assert by_pos[pos].topic is None and by_pos[pos].confidence is None and not by_pos[pos].marker
    assert by_pos[0].topic == "T1"
    assert not by_pos[8].marker  # a switch right after a content-free message is never marked


LEXICAL = load_models("user")[1]  # a conversation alone has no corpus topic model: the lexical twin judges it


def test_an_explicit_switch_between_two_substantive_requests_is_marked() -> None:
    msgs = _conversation(
        [
            ("user", "授权方案这部分我想重新设计一下，试用期和许可证要拆开，machine fingerprint 怎么做？"),
            ("assistant", "可以把试用期和许可证拆成两个模块，machine fingerprint 用硬件信息哈希。"),
            (
                "user",
                "这个先放一放。消息发送交付功能这部分我想重新设计一下，流式输出和回执要拆开，"
                "AbortController 你觉得怎么做比较好？",
            ),
        ]
    )
    out = infer(msgs, Idf(m.tokens for m in msgs), LEXICAL, CUES)
    assert [(j.position, j.topic, j.marker) for j in out] == [(0, "T1", False), (2, "T2", True)]
    assert out[1].confidence >= 0.7 and out[1].score >= LEXICAL.anchor
    assert "abortcontroller" in out[1].drivers


def test_a_lexicon_phrase_names_the_topic() -> None:
    msgs = _conversation(
        [
            ("user", "the license dialog rejects my key"),
            ("user", "and the license expiry is wrong"),
            ("user", "the installer fails to notarize on macOS"),
        ]
    )
    lex = {"licensing": ["license"], "packaging": ["installer", "notarize"]}
    out = infer(msgs, Idf(m.tokens for m in msgs), load_model(), CUES, lexicon=lex)
    assert [(j.topic, j.marker) for j in out] == [("licensing", False), ("licensing", False), ("packaging", True)]


def test_the_config_default_switch_scores_are_the_fitted_operating_points_of_each_judging_mode() -> None:
    from forensics.analyzers.schema import defaults
    from forensics.analyzers.topics.model import judging_mode

    assert defaults()["topic.switch_score"] == load_model("user").anchor
    assert defaults()["topic.dialogue_switch_score"] == load_model("dialogue").anchor
    assert (judging_mode(["user"]), judging_mode(["assistant", "user"])) == ("user", "dialogue")


def test_entities_find_paths_identifiers_titles_and_names() -> None:
    found = entities("读一下 src/ai/tools/mod.rs，`run_agent_loop` 报 ValueError；《爱乐之城》的主演瑞恩·高斯林")
    assert {"src/ai/tools/mod.rs", "run_agent_loop", "valueerror", "爱乐之城"} <= found
    assert any(e.endswith("瑞恩·高斯林") for e in found)


def _labeled_topics(tmp_path, source: str, labels: str):
    """A fixture source ingested and its topics reported against its labels: (warehouse, topics section)."""
    db = tmp_path / "w.duckdb"
    src = tmp_path / Path(source).name
    shutil.copy(FIXTURES / source, src)
    assert run_cli("ingest", str(src), "--db", str(db))[0] == 0
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "topics",
        "--out",
        str(tmp_path / "out"),
        "--format",
        "json",
        "--labels",
        str(FIXTURES / "labels" / labels),
    )
    assert code == 0, err
    return db, orjson.loads((tmp_path / "out" / "metrics.json").read_bytes())["sections"]["topics"]


@pytest.fixture()
def seed_report(tmp_path):
    return _labeled_topics(tmp_path, "seed/seed.db", "seed.labels.jsonl")


def test_seed_table_topics_land_in_the_warehouse(seed_report) -> None:
    db, m = seed_report
    assert m["judged_messages"] == 66 and m["roles"] == ["user"]
    assert m["content_free_messages"] == 24
    with open_warehouse(db, read_only=True) as wh:
        cols = [r[0] for r in wh.con.execute("DESCRIBE topic_switches").fetchall()]
        n = wh.con.execute("SELECT count(*) FROM message_topics WHERE topic IS NULL").fetchall()[0][0]
        at100 = wh.con.execute(
            "SELECT t.topic, t.marker FROM message_topics t JOIN conversations c "
            "USING (conversation_id) WHERE c.native_id = 'f89d129a' AND t.position IN (87, 100) "
            "ORDER BY t.position"
        ).fetchall()
    assert cols[:9] == [
        "conversation_id",
        "position",
        "native_id",
        "topic_before",
        "topic_after",
        "conf_before",
        "conf_after",
        "score",
        "keywords",
    ]
    assert n == 24
    # [100] "这个先放一放。消息发送交付功能……" opens a new topic after [87] "不对", which has none. The seed's rule set
    # no marker there; in work with an agent the turn after a content-free one is read against the last turn with a
    # topic (issue 43, round 6), so [100], a labeled shift, is marked
    assert at100 == [(None, False), ("T3", True)]  # T2 began at the false alarm [83], T3 at [100]
    ev = m["evaluation"]
    assert (ev["dialogues"], ev["reference_shifts"]) == (3, 6)


def test_seed_d6614e0b_switch_at_140_is_found_at_the_defaults(seed_report) -> None:
    """[136] asks about the write date, the replies stay on delivery, [140] asks again: the user insists on a
    subject the replies ignored, and the default (user-turn) mode marks it."""
    db, m = seed_report
    assert m["mode"] == "user"
    with open_warehouse(db, read_only=True) as wh:
        found = wh.con.execute(
            "SELECT c.native_id, s.position, s.topic_before, s.topic_after FROM topic_switches s "
            "JOIN conversations c USING (conversation_id) ORDER BY 1, 2"
        ).fetchall()
    # a95f5d6d [82], d6614e0b [92] and [140]; f89d129a [83] "看下日志" (all its words new) is a false alarm; [100]
    # follows "不对" (no topic) and is read against [83], the last turn with a topic (issue 43, round 6: it was not
    # marked before); [208] "继续": no marker. The corpus (3 conversations) is too small for its own
    # topic model, so the lexical twin judges it; d6614e0b [174] scores below the operating point. Since the request
    # scorer became a learned combiner (issue 43, round 4: docs/topics-evaluation.md) three re-specifications are
    # false alarms too: a95f5d6d [71] and [99], d6614e0b [86], "能不能把 X 改成 Y？另外 `Z` 的字段要保留。" ("另外",
    # "also", reads as a request added; here it adds a constraint to the change at hand, S4).
    assert found == [
        ("a95f5d6d", 71, "T1", "T2"),
        ("a95f5d6d", 82, "T2", "T3"),
        ("a95f5d6d", 99, "T3", "T4"),
        ("d6614e0b", 86, "T1", "T2"),
        ("d6614e0b", 92, "T2", "T3"),
        ("d6614e0b", 140, "T3", "T4"),
        ("f89d129a", 83, "T1", "T2"),
        ("f89d129a", 100, "T2", "T3"),
    ]
    assert m["corpus_model"] == {"fitted": False, "messages": None, "words": None}
    ev = m["evaluation"]
    ours = ev["detectors"]["ours"]
    assert (ours["predicted"], ours["tp"]) == (8, 4)  # (3, 2) with the five signals, (7, 3) before round 6
    assert ours["pk"] < ev["detectors"]["none"]["pk"]
    tuned = ev["detectors"]["ours_tuned"]
    assert (tuned["predicted"], tuned["tp"]) == (11, 6)  # (11, 6), then (7, 5) with the five signals (issue 43)


def test_report_labels_imports_the_labeled_dialogues_and_scores_them(tmp_path) -> None:
    cfg = tmp_path / "h.toml"
    cfg.write_text('[topic]\nroles = ["user", "assistant"]\n', encoding="utf-8")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "topics",
        "--out",
        str(tmp_path / "out"),
        "--format",
        "json,md",
        "--labels",
        str(THREE),
        "--config",
        str(cfg),
    )
    assert code == 0, err
    m = orjson.loads((tmp_path / "out" / "metrics.json").read_bytes())["sections"]["topics"]
    ev = m["evaluation"]
    assert (ev["dialogues"], ev["judged_turns"], ev["reference_shifts"]) == (3, 18, 4)
    d = ev["detectors"]
    assert set(d) == {"ours", "ours_tuned", "all", "random", "none", "tfidf"}
    assert d["all"]["predicted"] == 15 and d["none"]["pk"] == pytest.approx((2 / 5 + 1 / 3 + 2 / 6) / 3)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "mark nothing" in md and "TF-IDF cosine, tuned threshold" in md
    # positions are the turns' idx
    with open_warehouse(db, read_only=True) as wh:
        rows = wh.con.execute(
            "SELECT position, role FROM messages m JOIN conversations c USING (conversation_id) "
            "WHERE c.native_id = 'd2' ORDER BY position"
        ).fetchall()
    assert rows == [(0, "user"), (1, "assistant"), (2, "user"), (3, "assistant")]
    code, out, _ = run_cli("query", "topic_switches", "--db", str(db), "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("conversation,conversation_id,position,native_id,topic_before")


def test_ingest_accepts_the_dialogue_format(tmp_path) -> None:
    db = tmp_path / "w.duckdb"
    code, out, _ = run_cli("ingest", str(THREE), "--db", str(db), "--json")
    assert code == 0
    totals = orjson.loads(out)["totals"]
    assert (totals["conversations_new"], totals["messages_imported"], totals["quarantined"]) == (3, 18, 0)
    assert orjson.loads(out)["sources"][0]["format"] == "dialogues"


def test_querying_switches_before_any_report_is_a_one_line_error(tmp_path) -> None:
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(THREE), "--db", str(db))
    code, out, err = run_cli("query", "topic_switches", "--db", str(db))
    assert code == 2 and out == "" and "appear after `forensics report`" in err


def test_a_bad_dialogue_line_is_quarantined(tmp_path) -> None:
    f = tmp_path / "d.jsonl"
    f.write_bytes(THREE.read_bytes().splitlines()[0] + b'\n{"dialogue_id": "x", "turns": [{"idx": "a"}]}\n')
    code, out, _ = run_cli("ingest", str(f), "--db", str(tmp_path / "w.duckdb"), "--format", "dialogues", "--json")
    totals = orjson.loads(out)["totals"]
    assert code == 0 and (totals["messages_imported"], totals["quarantined"]) == (6, 1)


def test_assistant_logs_at_the_defaults_marks_user_turn_switches_precisely(tmp_path) -> None:
    """The default (user-turn) mode on the generated realistic fixture (12 conversations: the lexical twin judges
    it): all 9 labeled shifts, no false alarm."""
    ev = _labeled_topics(tmp_path, "sqlite/realistic.db", "realistic.labels.jsonl")[1]["evaluation"]
    ours = ev["detectors"]["ours"]
    assert (ev["reference_shifts"], ours["predicted"], ours["tp"]) == (9, 9, 9)
    assert ours["pk"] < ev["detectors"]["none"]["pk"]


def test_a_closing_or_thank_you_never_starts_a_topic(tmp_path) -> None:
    """The tau-bench customer's last line ("Thank you so much for your help! ###STOP###") was 75 of 138 markers."""
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(FIXTURES / "labels" / "closings.dialogues.jsonl"), "--db", str(db))
    code, _, err = run_cli("report", "--db", str(db), "--only", "topics", "--out", str(tmp_path / "r"))
    assert code == 0, err
    with open_warehouse(db) as wh:
        rows = wh.con.execute("""SELECT c.native_id, t.position, t.topic FROM message_topics t
            JOIN conversations c USING (conversation_id) ORDER BY 1, 2""").fetchall()
        switches = wh.con.execute("SELECT count(*) FROM topic_switches").fetchone()[0]
    closings = {("tau-1", 6), ("tau-2", 4), ("tau-2", 6), ("tau-3", 4)}
    assert {(c, p) for c, p, t in rows if t is None} >= closings
    assert [t for c, p, t in rows if (c, p) == ("tau-1", 0)] == ["T1"]  # the request itself carries a topic
    assert switches == 0


def test_entities_runs_each_pattern_only_where_it_can_match() -> None:
    """``entities`` skips a pattern on a text without what its every match holds (a title's bracket, the dot of a
    Chinese name, a path's slash, a file name's dot, a backtick): the same names as every pattern on every text, on
    random mixes of the forms."""
    import random

    from forensics.analyzers.topics import signals
    from forensics.text.identifiers import ENTITY_IDENTIFIER, ENTITY_PATH

    def every_pattern(text: str) -> set[str]:
        out: set[str] = set()
        for m in signals._TITLE.finditer(text):
            out.add(next(g for g in m.groups() if g).strip().lower())
        out.update(x.lower() for x in signals._DOT_NAME.findall(text))
        out.update(x.lower() for x in ENTITY_PATH.findall(text))
        out.update(x.strip().lower() for x in signals._CODE.findall(text))
        out.update(x.lower() for x in ENTITY_IDENTIFIER.findall(text))
        out.update(x.lower() for x in signals._ERROR.findall(text))
        out.update(x.lower() for x in signals._NAME.findall(text) if x.lower() not in signals._COMMON_CAPS)
        return {e for e in out if len(e) > 1}

    forms = ["a/b", "src/x.py", "x.py", "foo-bar.rs", "《三体》", "【t】", "「名」", "王·小明", "`code`", " ", ".", "/",
             "KeyError", "the Cat", "snake_case", "camelCase", "\n", "e.g."]  # fmt: skip
    rnd = random.Random(46)
    texts = ["".join(rnd.choice(forms) for _ in range(rnd.randint(1, 8))) for _ in range(3000)]
    assert sum(bool(every_pattern(t)) for t in texts) > 2000
    for text in texts:
        assert entities(text, proper_nouns=False) == every_pattern(text), text
