"""Round 6 of the problem detectors (issue 41): a standing directive said again is the same constraint only about the
same unit ("make the changes one at a time" is not "one question at a time" again), and the person's and the agent's
words read alike with a typographic apostrophe. Each case is a snippet of its real conversation's shape, with the near
miss beside it."""

from __future__ import annotations

from pathlib import Path

from tests.test_problems import Session, run


def test_one_at_a_time_said_again_about_the_same_unit_only(tmp_path: Path) -> None:
    """Codex Quelklef/shell-ws: "let's go through them one at a time", then "one question at a time plz" (the same
    directive: the bare one is about the questions the other names), then far later "Make the following changes one
    at a time" (a new directive about changes: a reviewer read it as a false repeat), then "just do them one at a
    time" (the changes' directive said again)."""
    s = (
        Session("units")
        .add("user", "Plan a node editor. Ask me what you need.")
        .add("assistant", "Question 1: browser or desktop? Question 2: which language?")
        .add("user", "Thanks. Let's go through them one at a time.")
        .add("assistant", "Question 1: browser or desktop?")
        .add("user", "browser")
        .add("assistant", "Question 2: language? Question 3: cycles?")
        .add("user", "one question at a time plz")
        .add("assistant", "Question 2: which language?")
        .add("user", "Rust")
        .add("assistant", "Plan written.")
        .add("user", "Make the following changes one at a time. Remove the drag handlers. Remove the badges.")
        .add("assistant", "Change 1 completed. Shall I go on?")
        .add("user", "please complete all remaining changes non-interactively, just do them one at a time")
        .add("assistant", "Change 2 completed.")
    )
    found, _ = run(tmp_path, s)
    got = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "user_repeated"]
    assert got == [
        ("directive_again", [6], "one question at a time plz"),
        (
            "directive_again",
            [12],
            "please complete all remaining changes non-interactively, just do them one at a time",
        ),
    ]


def test_a_decline_with_a_typographic_apostrophe_is_a_decline(tmp_path: Path) -> None:
    """Codex writes "I can’t" with U+2019: the decline rules read it as "I can't" (the same run with the ASCII
    apostrophe gives the same finding)."""
    sessions = []
    for name, apostrophe in (("typographic", "’"), ("ascii", "'")):
        s = Session(name).add("user", "Fix the failing import in app.py")
        s.call("edit", {"path": "app.py", "search": "import foo", "replace": "import bar"}, "Applied.")
        s.add("assistant", "Fixed the import.").add("user", "Now run the test suite please")
        s.add("assistant", f"I can{apostrophe}t run the tests from here; please run `pytest` yourself.")
        sessions.append(s)
    found, _ = run(tmp_path, *sessions)
    got = {(f["native_id"], f["rule"]) for f in found if f["kind"] == "gave_up_or_false_success"}
    assert got == {("typographic", "declined_with_tools"), ("ascii", "declined_with_tools")}
