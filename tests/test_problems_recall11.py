"""Round 16 of the problem detectors (issue 41): the eighth blind round read as dev. Its misses of the person
repeating and of loops, read in their conversations: a turn the agent ended without an answer (an empty reply, or
"I'll fix ..." with nothing done after it) and the person's push after it; the same announcement, or the same
greeting, ending turn after turn; a request answered with "What would you like to work on?". Each case is a snippet
of its real conversation's shape (Crush and Codex logs of ``fixtures/real``), with the near misses beside it."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.restated import offered_help
from forensics.analyzers.problems.stalled import announced, stalled
from tests.test_problems import Session, run

INIT = "Please analyze this codebase and create a **CRUSH.md** file containing build commands and code style."


def found(tmp: Path, s: Session, kind: str) -> list[tuple[list[int], str]]:
    return [(f["positions"], f["rule"]) for f in run(tmp, s)[0] if f["kind"] == kind]


def started(sid: str) -> Session:
    """A run whose agent makes calls: the project listed, then answered."""
    s = Session(sid).add("user", "can you check what this project is about?")
    s.call("ls", {"path": "/repo"}, "- /repo/\n  - src/\n  - README.md")
    return s.add("assistant", "A Rust chat application over llama.cpp, with a Candle backend.")


def test_how_a_turn_ends_without_an_answer() -> None:
    """Empty, or a short reply whose last sentence opens with the agent's next act; not an offer ("If it still
    fails, I'll ..."), a question, a claim of work done, a wait, or an answer that announces more at its start."""
    assert stalled("") == "empty"
    assert (
        stalled("I'll fix all the remaining critical errors. Let me complete the fix for all the issues.")
        == "announced"
    )
    assert stalled("On it. Implementing native blur toasts and a unified status indicator.") == "announced"
    assert stalled("Let me use the Write tool:\n```csharp\nclass Program {}\n```") == "announced"  # code blanked
    assert stalled("If it still fails, I'll instrument the node wrapper directly.") == ""
    assert stalled("I'll implement the toasts, then the status bar. Proceed?") == ""
    assert stalled("Done. I've updated the README; I'll keep it short.") == ""
    assert stalled("Acknowledged. I'll await your next instruction.") == ""
    assert stalled("Let me know if you want more.") == ""
    answer = "Let me correct the table: Claude Code does have a chat panel. " + "The difference is in scope. " * 8
    assert stalled(answer) == "" and announced(answer.strip()) is None


def test_a_push_after_an_announcement_with_nothing_done_is_the_person_repeating(tmp_path: Path) -> None:
    """Crush Starmel (r8, labeled user_repeated [30, 31, 32]): "yes" to the plan, "On it. Implementing ..." and the
    turn ends; the person says "proceed". Near misses in the same run: "Proceed?" answered "yes" is an answer."""
    s = started("push").add("user", "3 and after that the settings need improvements")
    s.add("assistant", "Ack. I'll implement native toasts and polish the settings. Proceed?")
    s.add("user", "yes").add("assistant", "On it. Implementing native blur toasts and polish for the settings.")
    s.add("user", "proceed")
    s.call("write", {"file_path": "/repo/Toast.swift", "content": "import SwiftUI"}, "File successfully written")
    s.add("assistant", "Added the toast.")
    assert found(tmp_path, s, "user_repeated") == [([8], "asked_after_stall")]


def test_a_request_sent_again_after_an_empty_reply_and_a_hi_that_asks_nothing(tmp_path: Path) -> None:
    """Crush Starmel (r8, [0, 1, 2]): the CRUSH.md prompt gets an empty reply and is sent again word for word. Crush
    llama_cpp_rs_chat (r8, no label): "hi", an empty reply, "hi" again: a greeting asks for nothing."""
    s = Session("init").add("user", INIT).add("assistant", "").add("user", INIT)
    s.call("glob", {"pattern": "**/CRUSH.md"}, "No files found").add("assistant", "Done.")
    (tmp_path / "a").mkdir()  # (in the Crush log the prompt is a template's opening, which no other rule compares)
    assert found(tmp_path / "a", s, "user_repeated") == [([2], "asked_again_reworded+asked_after_stall")]
    hi = Session("hi").add("user", "hi").add("assistant", "").add("user", "hi")
    hi.call("ls", {"path": "/repo"}, "- /repo/").add("assistant", "Hello! A Rust project.")
    (tmp_path / "b").mkdir()
    assert found(tmp_path / "b", hi, "user_repeated") == []


def test_a_new_request_after_an_abandoned_turn_is_no_push(tmp_path: Path) -> None:
    """Crush Graphlight (r8): the CRUSH.md turn ends on "Let me check for Cursor rules ..." and the person asks
    something else, in more than ``LONG_WORDS`` words sharing one word ("code") with the earlier prompt: a new
    request. The same turn after it, "did you find out the issue(s)?", pushes for it (its term "issue")."""
    s = Session("new").add("user", INIT)
    s.call("ls", {"path": "J:/Graphlight"}, "- src/")
    s.add("assistant", "Now I'll examine the project structure. Let me check for Cursor rules and some C# files.")
    s.add("user", "Nothing happens when i run the exe. Analyse the code deeply and identify all issues.")
    s.call("view", {"file_path": "J:/Graphlight/src/Program.cs"}, "using System;").add("assistant", "")
    s.add("user", "did you find out the issue(s)?")
    s.add("assistant", "Several critical issues: the app fails silently.")
    assert found(tmp_path, s, "user_repeated") == [([8], "asked_after_stall")]


def test_three_turns_ending_on_an_announcement_are_a_loop(tmp_path: Path) -> None:
    """Crush Graphlight (r8, labeled loop [35, 37, 43]): "I'll fix all the remaining critical errors." ends turn
    after turn, the person pushing between; each push is the person repeating too (one incident)."""
    s = started("announce").add("user", "Fix these errors")
    s.add("assistant", "I'll fix the critical issues that make it fail silently. Let me implement the changes.")
    s.add("user", "fix all errors please").add("assistant", "I'll fix all the remaining critical errors.")
    s.add("user", "?").add("assistant", "Let me complete the fix. I need to implement comprehensive changes.")
    s.add("user", "start implementing the changes")
    s.call("edit", {"file_path": "/repo/Program.cs", "old_string": "a", "new_string": "b"}, "Content replaced")
    s.add("assistant", "Replaced the host builder.")
    findings = run(tmp_path, s)[0]
    assert [(f["positions"], f["rule"]) for f in findings if f["kind"] == "loop"] == [([5, 7, 9], "announced_3_times")]
    assert [(f["positions"], f["rule"]) for f in findings if f["kind"] == "user_repeated"] == [
        ([6, 8, 10], "asked_after_stall")
    ]


def test_the_same_greeting_turn_after_turn_is_a_loop_and_a_code_reply_rewritten_is_not(tmp_path: Path) -> None:
    """Crush llama_cpp_rs_chat (r8, labeled loop [13, 15, 17]): a greeting ends three turns in a row, whatever the
    person asked. Near miss (ChatGPT export, read false): a code block rewritten for each request says the same
    words each time, and is work."""
    s = started("greet").add("user", "can you check the error_log file? what's that about?")
    s.add("assistant", "Hello! I'm Crush. How can I help you with your software engineering tasks today?")
    s.add("user", "what?").add(
        "assistant", "Hello! I'm Crush. How can I help you with your software engineering tasks today?"
    )
    s.add("user", "the error_log").add(
        "assistant", "Hello! I'm here to help you with software engineering tasks. How can I assist you today?"
    )
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", s, "loop") == [([5, 7, 9], "same_reply_3_times")]
    code = started("code")
    for name in ("demodulated_out_1", "demodulated_out_2", "demodulated_out_3"):
        code.add("user", f"replace the output name with {name}")
        code.add("assistant", f"Here's the updated code:\n```python\nout = run('{name}')\nprint(out)\n```")
    (tmp_path / "b").mkdir()
    assert found(tmp_path / "b", code, "loop") == []


def test_a_request_answered_with_what_would_you_like_is_asked_again(tmp_path: Path) -> None:
    """Codex ocodex (r8, labeled user_repeated [6, 7]): the search ran, and the reply was "Sure thing! What would you
    like to work on in the project?"; the person asks again, half the request's terms. Near miss: a long answer that
    ends by offering more answered."""
    assert offered_help([(6, "assistant", "Sure thing! What would you like to work on in the project?", [])])
    assert not offered_help([(6, "assistant", "Here are five platforms: ... " * 10 + "How can I help further?", [])])
    s = Session("offer").add("user", "search for AI platforms military intelligence")
    s.call("web_search", {"query": "AI platforms military intelligence"}, '{"results": [{"title": "DoD AI"}]}')
    s.add("assistant", "Sure thing! What would you like to work on in the project?")
    s.add("user", "can you give a list of AI platforms by using a web search")
    s.add("assistant", "1. Army generative AI platform 2. Palantir AIP")
    assert found(tmp_path, s, "user_repeated") == [([4], "asked_again_undone")]
