"""Branches of the claim, decline and end rules that could never fire (read again line by line, issue 41): "I'm" has
no space between "I" and its "'m", and "n't" ends a word with no word boundary before its "n". Each case fails on the
rule as it was written and holds on the mended one; a find that deletes what it finds is no lookup."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_problems import Session, run


def test_im_unable_is_a_decline_and_a_shell_step_handed_back() -> None:
    from forensics.analyzers.problems.endings import SHELL_STEP_RE
    from forensics.analyzers.problems.said import DECLINE_RE

    for apostrophe in ("'", "’"):
        said = f"I{apostrophe}m unable to run the tests from here."
        assert DECLINE_RE.search(said) is not None, said
        assert SHELL_STEP_RE.search(f"I{apostrophe}m unable to install Node for you.") is not None
    assert DECLINE_RE.search("I am unable to run the tests from here.") is not None
    assert DECLINE_RE.search("Once I'm able to run the tests, I will.") is None
    assert DECLINE_RE.search("I 'm unable to run the tests") is None  # the only form the old rule read


def test_im_unable_after_changing_things_is_declined_with_tools(tmp_path: Path) -> None:
    """The decline rule runs in DuckDB too (RE2): "I'm unable to run the tests" after a successful edit is a decline
    there as "I can't run the tests" is (``test_problems_recall6``)."""
    sessions = []
    for name, apostrophe in (("typographic", "’"), ("ascii", "'")):
        s = Session(name).add("user", "Fix the failing import in app.py")
        s.call("edit", {"path": "app.py", "search": "import foo", "replace": "import bar"}, "Applied.")
        s.add("assistant", "Fixed the import.").add("user", "Now run the test suite please")
        s.add("assistant", f"I{apostrophe}m unable to run the tests from here; please run `pytest` yourself.")
        sessions.append(s)
    found, _ = run(tmp_path, *sessions)
    got = {(f["native_id"], f["rule"]) for f in found if f["kind"] == "gave_up_or_false_success"}
    assert got == {("typographic", "declined_with_tools"), ("ascii", "declined_with_tools")}


def test_a_claim_negated_by_a_contraction_is_no_claim() -> None:
    """``NEGATED`` reads "wasn't" and "didn't" as it reads "not": the claim "it wasn't modified" says nothing changed."""
    from forensics.analyzers.problems.endings import CHANGED_RE, NEGATED

    for apostrophe in ("'", "’"):
        text = f"I've kept the config as it was; it wasn{apostrophe}t modified."
        m = CHANGED_RE.search(text)
        assert m is not None and NEGATED.search(m.group()) is not None, text
    for text in ("I've updated the config.", "I've added the note to the README.", "I have modified the knot"):
        m = CHANGED_RE.search(text)
        assert m is not None and NEGATED.search(m.group()) is None, text
    assert NEGATED.search("I have not updated it") is not None


def test_im_not_able_to_is_giving_up() -> None:
    from forensics.analyzers.signature import Msg, ended

    run_ = [
        Msg(0, "user", "person", None, "Deploy the site"),
        Msg(1, "assistant", "assistant", "coder", "I'm not able to reach the server from this sandbox."),
    ]
    assert ended(run_)[0] == "gave_up"
    run_[1] = Msg(1, "assistant", "assistant", "coder", "The site is at example.org; I'm glad it works.")
    assert ended(run_)[0] == "answered"


def test_a_find_that_deletes_or_runs_a_command_is_no_lookup() -> None:
    from forensics.analyzers.problems.actions import lookup

    def shell(command: str) -> bool:
        return lookup("bash", json.dumps({"command": command}))

    assert shell("find . -name '*.py' | sort")
    assert shell("find src -name '*.ts' -exec grep -l useState {} +")
    assert shell("fd -e py | wc -l")
    assert not shell("find . -name '*.pyc' -delete")
    assert not shell("find build -type f -exec rm {} \\;")
    assert not shell("cd repo && fd -e log -x rm")
    assert shell("find . -name '*.deleted' -type f")
