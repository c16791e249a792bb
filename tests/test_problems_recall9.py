"""Round 13 of the problem detectors (issue 41): the sixth blind round read as dev. Its false findings: a consequence
weighed ("... is then the same issue if ...") read as a report, a turn saying what the person meant read as a failed
claim, a call the person refused read as a failed step. Its misses: "\\"mise run test:ci\\" fails" after "tests pass",
"X is no longer valid" after "all checks passing", the agent conceding that what it said or shipped was wrong. Each
case is a snippet of its real conversation's shape, with the near miss beside it."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.endings import FAILS, OPENING, REGRESSED, RETRACTED, fails
from forensics.analyzers.problems.repeat_words import REPEATED
from forensics.analyzers.problems.said import CLAIM_RE
from tests.test_problems import Session, run, verbatim
from tests.test_problems_endings2 import call


def kinds(tmp: Path, s: Session, kind: str) -> list[tuple[list[int], str]]:
    return [(f["positions"], f["rule"]) for f in run(tmp, s)[0] if f["kind"] == kind]


def test_a_consequence_weighed_is_no_report_of_the_same_error() -> None:
    """Claude Code entireio/cli (r6): "replacing it with single quotes is then the same issue if someone is using
    single quotes" weighs an option; "same error after the restart" reports one."""
    assert REPEATED.search("replacing it with single quotes is then the same issue if someone uses them") is None
    assert REPEATED.search("that would be the same problem for backticks") is None
    assert REPEATED.search("same error. killed and restarted `just dev`") is not None
    assert REPEATED.search("Sorry to say it's the same issue") is not None


def test_a_thing_forbidden_with_an_exclamation_takes_back_what_the_reply_did() -> None:
    """pi (fresh-dev): the reply logs errors to the console, "no conosle logs! setTheme should return an error". Near
    misses: a courtesy ("no worries!"), "no ..." inside a sentence."""
    assert REPEATED.search("no conosle logs! setTheme should return an error that the caller can display") is not None
    assert REPEATED.search("thanks, and I want no console logs in there") is None
    assert REPEATED.search("no worries! that works") is None and REPEATED.search("no rush!") is None


def test_a_turn_saying_what_was_meant_contradicts_no_claim(tmp_path: Path) -> None:
    """Codex agentv (r6): an answer, then "i meant for entireio/cli ...": the request said again (user_repeated), not
    the work reported failed. Near miss: "no, still broken" after the same claim."""
    found = {}
    for sid, turn in (
        ("meant", "i meant for entireio/cli which we setup in this repo"),
        ("broken", "no, still broken"),
    ):
        s = (
            Session(sid)
            .add("user", "how do i push checkpoints for the cli")
            .add("assistant", "Done: pushed. The dashboard shows completed remote runs on the results branch.")
            .add("user", turn)
            .add("assistant", "Let me look at the .entire folder.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = run(tmp_path / sid, s)[0]
    assert [(f["kind"], f["rule"]) for f in found["meant"]] == [("user_repeated", "said_again")]
    assert ("gave_up_or_false_success", "claim_contradicted") in [(f["kind"], f["rule"]) for f in found["broken"]]


def test_a_call_the_person_refused_is_no_failed_step(tmp_path: Path) -> None:
    """Claude Code entireio/cli (r6): an edit refused ("The user doesn't want to proceed with this tool use ... the
    user said: pause again, ..."), then an answer with options ("State is always complete from the start"). Near
    miss: the edit failed on its own ("String to replace not found"), then "Done, the change is complete"."""
    refused = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
        "the new_string was NOT written to the file). To tell you how to proceed, the user said: pause again"
    )
    found = {}
    for sid, result, said in (
        ("refused", refused, "Two options: **Option A**: set it when creating the state - State is always complete"),
        ("failed", "String to replace not found in file.", "Done, the change is complete."),
    ):
        s = Session(sid).add("user", "Set BaseCommit when the warning state is created")
        call(s, "Edit", {"file_path": "/w/state.go", "old_string": "a", "new_string": "b"}, result, error=True)
        s.add("assistant", said)
        (tmp_path / sid).mkdir()
        found[sid] = kinds(tmp_path / sid, s, "gave_up_or_false_success")
    assert found == {"refused": [], "failed": [([2, 3], "claim_over_errors")]}


def test_a_thing_the_person_says_fails_after_it_was_said_to_pass(tmp_path: Path) -> None:
    """Claude Code entireio/cli (r6): "Done. ... Build, tests, and lint all pass.", then "\\"mise run test:ci\\"
    fails". Near misses: an error's own words pasted ("Error: failed to save changes") say nothing of the claim, nor
    does a failure named on a new point ("also ci failed please fix": another change broke that CI job)."""
    assert FAILS.search('"mise run test:ci" fails') is not None
    assert FAILS.search("Error: failed to save changes: failed to write temporary checkpoint") is None
    assert not fails("x" * OPENING + " the build fails")  # the person's opening only
    assert fails("the tests fail") and fails("el build falla") and fails("测试失败了")
    assert not fails("can you explain why they fail now?")  # asks about a failure the reply fixed (r6 [76])
    found = {}
    for sid, turn in (
        ("fails", '"mise run test:ci" fails'),
        ("pasted", "Error: failed to save changes"),
        ("also", "also ci failed please fix. https://github.com/o/r/actions/runs/1"),  # a new point (r6, read false)
    ):
        s = (
            Session(sid)
            .add("user", "remove the start command")
            .add("assistant", "Done. The `entire start` command has been removed. Build, tests, and lint all pass.")
            .add("user", turn)
            .add("assistant", "Looking into it.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = kinds(tmp_path / sid, s, "gave_up_or_false_success")
    assert found == {"fails": [([1, 2], "claim_contradicted")], "pasted": [], "also": []}


def test_what_was_handed_over_is_no_longer_valid() -> None:
    """Codex agentv (r5): "Ready to merge ... All checks passing", then "seems like experiment is no longer valid
    after our latest changes". Near miss: a new request ("remove byok since it's no longer supported")."""
    assert REGRESSED.search("seems like experiment is no longer valid after our latest changes") is not None
    assert REGRESSED.search("can you remove byok since it's no longer supported") is None


def test_the_agent_concedes_what_it_said_or_shipped_was_wrong(tmp_path: Path) -> None:
    """Claude Code entireio/cli (r6): asked how the skill differs from any prompt, "You're right to question this -
    it's **not** different."; Codex OpenPrintKit: "You're right — the editor only had Start/End."; Claude Code
    oh-my-posh (r6): "It identifies a real defect in the `fallback_template` code we shipped". Near misses: "You're
    right to question that. Let me trace through this more carefully", "You're right! Let me fix this properly"."""
    for said in (
        "You're right to question this - it's **not** different. Any Claude session that creates checkpoints",
        "You’re right — the editor only had Start/End. I’ve now added a full G-code Hooks editor.",
        "**Verdict: yes, the comment is accurate.** It identifies a real defect in the `fallback_template` code we "
        "shipped, and the doc comment makes a claim the code doesn't uphold.",
    ):
        assert RETRACTED.search(said) is not None, said
    for said in (
        "You're right to question that. Let me trace through this more carefully:",
        "You're right! Let me fix",
    ):
        assert RETRACTED.search(said) is None, said
    s = (
        Session("skill")
        .add("user", "why is there an orphaned session?")
        .add("assistant", "Done. The orphaned state is removed: the test-repo skill created it.")
        .add("user", "How is running the test-repo skill different from any other prompt I run?")
        .add("assistant", "You're right to question this - it's **not** different. Any session that checkpoints")
    )
    (f,) = [f for f in run(tmp_path, s)[0] if f["kind"] == "gave_up_or_false_success"]
    assert (f["positions"], f["rule"]) == ([1, 3], "claim_retracted")
    assert f["norm"].startswith("the agent concedes") and verbatim(tmp_path, f)


def test_complete_as_an_adjective_is_no_claim() -> None:
    """Claude Code entireio/cli (r6): "Option A ... State is always complete from the start" describes an option;
    "To get a complete list" names one. "The migration is complete", "Task completed", "I have completed the
    requested task" claim the work done."""
    for said in ("State is always complete from the start", "To get a complete list of the imports, run"):
        assert CLAIM_RE.search(said) is None, said
    for said in ("The migration is complete.", "Task completed.", "I have completed the requested task (Step 12)."):
        assert CLAIM_RE.search(said) is not None, said
