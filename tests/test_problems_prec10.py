"""Precision of three finding shapes reviewers read false (issue 41): a file read again right after an edit
of it failed is the agent rebuilding its patch (not reread_unchanged); a stash popped back later in the run destroyed
nothing; a scratch file the run compiled or ran, deleted after a step's "successfully added", is tidying up (not
kept_going_after_done). Each with the real shape and the near miss that must still fire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.analyzers.problems import focus
from tests.test_problems import Session, run

BODY = "\n".join(f"FR{i}: Epic {i % 7} - item {i}" for i in range(1, 140))


def _reread(sid: str, edited: str) -> Session:
    """Codex test-framework 23-59-54 [19]-[31]: ``sed -n '1,220p' epics.md``, an ``apply_patch`` whose context is not
    found, then ``sed -n '112,135p' epics.md`` to rebuild the patch."""
    return (
        Session(sid)
        .add("user", "Move FR25 to Epic 0 in the epics file")
        .call("shell", {"command": "sed -n '1,220p' planning/epics.md"}, BODY)
        .call(
            "apply_patch",
            {"input": f"*** Begin Patch\n*** Update File: {edited}\n@@\n-FR25: Epic 6\n+FR25: Epic 0\n*** End Patch"},
            f"Error: apply_patch verification failed: Failed to find expected lines in {edited}",
        )
        .call("shell", {"command": "sed -n '112,135p' planning/epics.md"}, BODY[:800])
        .add("assistant", "Moved FR25.")
    )


def test_a_read_of_lines_after_a_failed_edit_of_that_file_is_no_reread(tmp_path: Path) -> None:
    whole = _reread("whole", "planning/epics.md")
    whole.lines[-3] = whole.lines[-3].replace("sed -n '112,135p' planning/epics.md", "cat planning/epics.md")
    whole.lines[-2] = whole.lines[-2].replace(json.dumps(BODY[:800])[1:-1], json.dumps(BODY)[1:-1])
    found, _ = run(tmp_path, _reread("same", "planning/epics.md"), _reread("other", "planning/prd.md"), whole)
    got = {f["native_id"]: f["positions"] for f in found if "reread_unchanged" in f["rule"]}
    # the near misses: the failed edit was of another file, so the second read repeats lines of an unchanged file;
    # the whole file read again, the same text, after the failed edit (Continue e00926af [41]-[45], labeled redundant)
    assert got == {"other": [1, 5], "whole": [1, 5]}


def _turn(*calls: tuple[str, str, bool], claim: str) -> list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]:
    msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]] = [(0, "user", "Fix the bug", [])]
    msgs.append((1, "assistant", claim, []))
    for k, (name, command, err) in enumerate(calls, start=2):
        msgs.append((k, "assistant", "", [(name, json.dumps({"command": command}), err, "")]))
    return msgs


@pytest.mark.parametrize(
    ("later", "fires"),
    [
        # FitToday 5a [60] stash && checkout main, ... [78] checkout back && stash pop: set aside, given back
        ([("Bash", "git checkout feat/prefs && git stash pop", False)], False),
        ([("Bash", "git stash apply", False)], False),
        ([], True),  # never given back: the work is gone from the tree
        ([("Bash", "git stash list", False)], True),
    ],
)
def test_a_stash_popped_later_in_the_run_destroys_nothing(later: list[tuple[str, str, bool]], fires: bool) -> None:
    msgs = _turn(
        ("Bash", "git stash && git checkout main && git pull origin main", False),
        ("Bash", "git checkout -b fix/security", False),
        *later,
        claim="The guard in `ProfileView.swift` is done.",
    )
    assert bool(focus._after_done("c", msgs)) is fires


def test_stashes_are_paired_with_pops_last_in_first_out() -> None:
    msgs = _turn(
        ("Bash", "git stash", False),
        ("Bash", "git stash && pytest; git stash pop", False),  # given back in its own command: pops nothing else
        claim="All done.",
    )
    assert focus._stashes_given_back(msgs) == set()
    msgs = _turn(("Bash", "git stash", False), ("Bash", "git stash", False), ("Bash", "git stash pop", False), claim="")
    assert focus._stashes_given_back(msgs) == {(3, 0)}


@pytest.mark.parametrize(
    ("tried", "fires"),
    [
        # Multi-SWE-bench 8d167b / cea794: "successfully added to `ReproduceBug.java`. Now, I will compile" and
        # javac (failed: no toolchain), then rm ReproduceBug.java at the end: a scratch file the run tried
        ([("javac", "javac ReproduceBug.java && java ReproduceBug", True)], False),
        # terminal-bench 3cc2d8: a test script run after the claim, removed before submitting
        ([("bash", "python ReproduceBug.java", False)], False),
        ([("bash", "cat ReproduceBug.java", False)], True),  # only read, never run: the file the claim names
        ([], True),
    ],
)
def test_a_scratch_file_compiled_or_run_in_the_turn_is_tidied_not_destroyed(
    tried: list[tuple[str, str, bool]], fires: bool
) -> None:
    msgs = _turn(
        *tried,
        ("rm", "rm ReproduceBug.java", False),
        claim="The code has been successfully added to `ReproduceBug.java`. Now, I will compile and run this Java file",
    )
    assert bool(focus._after_done("c", msgs)) is fires


@pytest.mark.parametrize(
    ("claim", "fires"),
    [
        # terminal-bench 017e010d: the "claim" is a line of the script the reply writes, inside its fenced block
        (
            "THOUGHT: a simpler script.\n\n```bash\ncat <<'EOF' > q.py\nprint(\"Model loaded successfully!\")\nEOF\n```",
            False,
        ),
        # terminal-bench ce34814f: a heredoc's loop end, `done < "$AUTH_LOG"`, in an unclosed block
        ("THOUGHT: the detector.\n\n```bash\ncat <<'EOF' > d.sh\nwhile read l; do :; done < \"$AUTH_LOG\"\n", False),
        # terminal-bench 3cc2d887 [13]: "the exact code that needs to be fixed" is work still to do
        ("Let me examine FastText.py to see the exact code that needs to be fixed.", False),
        ("The import is fixed.", True),
        # the same words outside the block are the agent's: a claim
        ("All done: the model loaded successfully.\n\n```bash\npython q.py\n```", True),
    ],
)
def test_words_inside_a_replys_code_block_are_no_claim(claim: str, fires: bool) -> None:
    msgs = _turn(("bash", "git reset --hard", False), claim=claim)
    assert bool(focus._after_done("c", msgs)) is fires
