"""aider's reasoning models write their thinking into the reply between aider's own tags (aider/reasoning_tags.py:
``REASONING_TAG = "thinking-content-" + "7bbeb8e1441453ad999a0bbba8a46d4b"``; ``remove_reasoning_content`` drops it
before edits are parsed). The thinking is not the reply's words to the person: it is a ``reasoning`` event on the
reply, as Claude Code's thinking blocks and Inspect's reasoning parts are, and the reply keeps the rest. Before, the
thinking stayed in the reply's text, and a reply recalling aider's "I have *added these files to the chat*" in its
thinking read as a claim of work done (two `claimed_without_acting` findings on AlexShchuka/mozgoslav, MIT,
fixtures/real/aider)."""

from __future__ import annotations

from pathlib import Path

from forensics.formats import aider
from forensics.formats.aider import REASONING_END, REASONING_OPEN, _split_reasoning
from tests.conftest import FIXTURES, query, run_cli

REAL = FIXTURES / "real" / "aider" / "AlexShchuka+mozgoslav" / ".aider.chat.history.md"


def test_the_thinking_is_split_from_the_words_as_aider_cuts_it() -> None:
    # (what aider parses edits from, the words, the thinking): one function, one cut
    assert _split_reasoning(f"{REASONING_OPEN}\nthe user asks X\n{REASONING_END}\n\nOK") == (
        "OK",
        "OK",
        "the user asks X",
    )
    # a closing tag whose opening one is missing: everything before it is thinking (remove_reasoning_content)
    assert _split_reasoning(f"thinking\n{REASONING_END}\nanswer") == ("answer", "answer", "thinking")
    # a reply cut while the model was thinking: no words, all thinking; aider's remove_reasoning_content keeps it
    # whole (it cuts only closed tags and what stands before a closing one), so its edits would be parsed from it
    cut = f"{REASONING_OPEN}\nstill thinking"
    assert _split_reasoning(cut) == (cut, "", "still thinking")
    assert _split_reasoning(f"said {REASONING_OPEN}\nthinking") == (
        f"said {REASONING_OPEN}\nthinking",
        "said",
        "thinking",
    )
    assert _split_reasoning(" no tags <thinking>\n") == ("no tags <thinking>", " no tags <thinking>\n", "")


def test_one_function_cuts_the_reasoning() -> None:
    """``_without_reasoning`` was ``_split_reasoning``'s first half again (the same sub and split on the closing tag)."""
    assert not hasattr(aider, "_without_reasoning")


def test_a_real_history_keeps_its_thinking_as_reasoning_events(tmp_path: Path) -> None:
    raw = REAL.read_text(encoding="utf-8")
    opened = raw.count(REASONING_OPEN)
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(REAL), "--db", str(db))
    assert opened == 16 and raw.count(REASONING_END) == 14  # two replies were cut while thinking
    assert query(db, "SELECT count(*) FROM events WHERE kind = 'reasoning'") == [(opened,)]
    assert query(db, "SELECT count(*) FROM messages WHERE content LIKE '%thinking-content-%'") == [(0,)]
    # the words after the thinking are the reply's; each event sits on the reply it preceded
    assert query(
        db,
        "SELECT count(*) FROM events e JOIN messages m ON m.conversation_id = e.conversation_id "
        "AND m.position = e.position WHERE e.kind = 'reasoning' AND m.role = 'assistant'",
    ) == [(opened,)]
