"""The sentinel classifier and display stripping (docs/definitions.md#sentinel-compliance), then the whole analyzer against generator labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.analyzers.sentinel import Sentinel, build_tables, classify, strip_for_display
from forensics.kernel.errors import ForensicsError
from forensics.warehouse import open_warehouse
from tests.conftest import gen_corpus

LINE = "[[SS-CHECK toolsapproved untrusteddata idsfresh batchbulk saveauto]]"
TOKENS = ["toolsapproved", "untrusteddata", "idsfresh", "batchbulk", "saveauto"]
BODY = "The parser now handles the CRC byte.\n\n"


def _without(token: str) -> str:
    return "[[SS-CHECK " + " ".join(t for t in TOKENS if t != token) + "]]"


CASES = [
    # (reply, status, drifted)
    (BODY + LINE, "healthy", None),
    (LINE, "healthy", None),
    (BODY + LINE + "  ", "healthy", None),
    (BODY + LINE + "\n\n", "healthy", None),
    (BODY + LINE + " \t\n \n", "healthy", None),
    (BODY + LINE + "\u3000\n", "healthy", None),
    *[(BODY + _without(t), "mutated", t) for t in TOKENS],
    (BODY + LINE.replace("idsfresh", "idsfersh"), "mutated", "idsfresh"),
    (BODY + LINE.replace("saveauto", "saveautox"), "mutated", "saveauto"),
    (BODY + "[[SS-CHECK untrusteddata toolsapproved idsfresh batchbulk saveauto]]", "mutated", "(format)"),
    (BODY + "[[SS-CHECK toolsapproved,untrusteddata,idsfresh,batchbulk,saveauto]]", "mutated", "(format)"),
    (BODY + "[[SS-CHECK  toolsapproved untrusteddata idsfresh batchbulk saveauto]]", "mutated", "(format)"),
    (BODY + "Done. " + LINE, "mutated", "(format)"),  # not the trailing line on its own
    (BODY + LINE[:-2], "mutated", "(truncated)"),
    (BODY + LINE[:-2] + "\n\n", "mutated", "(truncated)"),
    (BODY + "[[SS-CHECK toolsapproved untrusteddata idsfr", "mutated", "idsfresh"),  # cut mid-token
    (BODY + "[[SS-CHECK", "mutated", "toolsapproved"),
    (BODY.strip(), "missing", None),
    ("", "missing", None),
    ("   \n\n", "missing", None),
    # quoted in the body: a closed marker followed by more text, then no trailing sentinel
    (f"The system asks me to end with `{LINE}`; here is the answer.\n\n{BODY}", "missing", None),
    (f"(I should end with {LINE})\n\nAnswer first.", "missing", None),
    # quoted mid-text and a correct trailing sentinel: the last marker counts
    (f"I end every reply with `{LINE}`.\n\n{BODY}{LINE}", "healthy", None),
    (f"I end every reply with `{LINE}`.\n\n{BODY}{_without('batchbulk')}", "mutated", "batchbulk"),
    # an unclosed marker followed by a newline and more text is a quote, not a sentinel
    ("About [[SS-CHECK toolsapproved\nthe rest of the answer", "missing", None),
    (f"{BODY}[[SS-CHECK toolsapproved untrusteddata\n\nmore text", "missing", None),
    # CJK text before the line
    ("我看了 `src/license/verify.rs`，问题出在 `verify_license`：签名校验失败。\n\n" + LINE, "healthy", None),
    (
        "修改方案：把授权逻辑移到 `activate_key` 里面统一处理。\n" + _without("untrusteddata"),
        "mutated",
        "untrusteddata",
    ),
    ("（按系统要求，回复末尾应附上 `" + LINE + "` 这一行；下面先说结论。）\n\n结论：重试即可。", "missing", None),
]


@pytest.mark.parametrize(("reply", "status", "drifted"), CASES)
def test_classify_table(reply: str, status: str, drifted: str | None) -> None:
    assert classify(reply) == (status, drifted)


def test_classify_with_a_custom_marker_tokens_and_closing() -> None:
    marker, tokens = "<<CANARY", ("alpha", "beta", "gamma")
    assert classify("ok\n<<CANARY alpha beta gamma>>", marker, tokens, ">>") == ("healthy", None)
    assert classify("ok\n<<CANARY alpha gamma>>", marker, tokens, ">>") == ("mutated", "beta")
    assert classify("ok\n<<CANARY beta alpha gamma>>", marker, tokens, ">>") == ("mutated", "(format)")
    assert classify("ok\n<<CANARY alpha beta gamma", marker, tokens, ">>") == ("mutated", "(truncated)")
    assert classify("ok\n" + LINE, marker, tokens, ">>") == ("missing", None)
    # the default marker with another team's tokens
    assert classify("ok\n[[SS-CHECK x1 y2]]", tokens=["x1", "y2"]) == ("healthy", None)
    assert classify("ok\n" + LINE, tokens=["x1", "y2"]) == ("mutated", "x1")


def test_a_sentinel_definition_that_cannot_be_judged_is_a_clear_error() -> None:
    with pytest.raises(ForensicsError, match="non-empty"):
        Sentinel(marker="", tokens=("a",))
    with pytest.raises(ForensicsError, match="tokens may not contain"):
        Sentinel(tokens=("two words",))
    assert Sentinel().line == LINE


STRIP_CASES = [
    (BODY + LINE, BODY.rstrip()),
    (BODY + LINE + "\n\n", BODY.rstrip()),
    (BODY + _without("idsfresh"), BODY.rstrip()),  # a mutated sentinel is hidden too
    (BODY + LINE[:-2], BODY.rstrip()),  # and an unclosed one at the very end
    ("Done. " + LINE, "Done."),
    (LINE, ""),
    (BODY, BODY),  # nothing to strip: unchanged, whitespace included
    (f"I end with `{LINE}`.\n\nAnswer.", f"I end with `{LINE}`.\n\nAnswer."),
    (f"I end with `{LINE}`.\n\nAnswer.\n{LINE}", f"I end with `{LINE}`.\n\nAnswer."),
    ("About [[SS-CHECK toolsapproved\nthe rest", "About [[SS-CHECK toolsapproved\nthe rest"),
]


@pytest.mark.parametrize(("reply", "shown"), STRIP_CASES)
def test_strip_for_display(reply: str, shown: str) -> None:
    assert strip_for_display(reply) == shown


def test_strip_for_display_with_a_custom_marker() -> None:
    assert strip_for_display("answer\n<<CANARY a b>>", "<<CANARY", ">>") == "answer"
    assert strip_for_display("answer\n" + LINE, "<<CANARY", ">>") == "answer\n" + LINE


# ------------------------------------------------------------------ against the generator's ground truth
def _labels(path: Path) -> tuple[dict[tuple[str, int], tuple[str, str | None]], dict[str, int | None]]:
    replies, onsets = {}, {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        onsets[d["id"]] = d["degradation_onset"]
        for s in d["sentinel"]:
            replies[(d["id"], s["index"])] = (s["status"], s["drifted"])
    return replies, onsets


def _analyzed(db: Path) -> tuple[dict[tuple[str, int], tuple[str, str | None]], dict[str, int | None], list]:
    with open_warehouse(db) as wh:
        build_tables(wh.con, defaults())
        got = {
            (n, p): (s, d)
            for n, p, s, d in wh.con.execute(
                "SELECT native_id, position, status, drifted FROM sentinel_replies"
            ).fetchall()
        }
        onsets = dict(wh.con.execute("SELECT native_id, onset_position FROM sentinel_conversations").fetchall())
        texts = wh.con.execute(
            "SELECT m.content, r.status, r.drifted FROM sentinel_replies r JOIN messages m "
            "USING (conversation_id, position) WHERE m.on_main_path"
        ).fetchall()
    return got, onsets, texts


@pytest.mark.parametrize("fmt", ["sqlite", "jsonl"])
def test_every_judged_reply_and_onset_matches_the_generator_labels(fmt: str, tmp_path: Path) -> None:
    if fmt == "sqlite":
        gen_corpus("sqlite", str(tmp_path / "c.db"), "--conversations", "40", "--seed", "5", "--profile", "realistic")
        source, labels = tmp_path / "c.db", tmp_path / "c.labels.jsonl"
    else:
        gen_corpus(
            "jsonl",
            str(tmp_path / "s"),
            "--sessions",
            "30",
            "--seed",
            "11",
            "--branch-rate",
            "0.3",
            "--corrupt-rate",
            "0.02",
        )
        source, labels = tmp_path / "s", tmp_path / "s" / "labels.jsonl"
    ingest([source], db=tmp_path / "w.duckdb")
    want_replies, want_onsets = _labels(labels)
    got_replies, got_onsets, texts = _analyzed(tmp_path / "w.duckdb")
    assert got_replies == want_replies
    assert got_onsets == want_onsets
    assert {s for s, _ in want_replies.values()} == {"healthy", "mutated", "missing"}
    assert any(o is not None for o in want_onsets.values()) and any(o is None for o in want_onsets.values())
    # the table holds exactly what the library function says about each stored reply
    assert all(classify(t) == (s, d) for t, s, d in texts)
