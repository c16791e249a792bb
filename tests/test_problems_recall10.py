"""Round 14 of the problem detectors (issue 41): the seventh blind round read as dev. Its misses, read in their
conversations: the person correcting what the request meant after the agent did more than asked (read from what the
agent then did: it put back what it had just taken away), and a commit that failed on a hook run again unchanged
(read from the two commands' steps, not their words). And the tidy owed from stop 52: a claim word said of work
still to do is no claim for every rule; one reader of a reply's own words; one list of a harness's header lines.
Each case is a snippet of its real conversation's shape, with the near misses beside it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from forensics.analyzers.problems.context import LINE
from forensics.analyzers.problems.said import CLAIM_RE, prose
from forensics.analyzers.problems.undone import change_of, undoes
from tests.test_problems import Session, run
from tests.test_problems_endings2 import call

HOOK = (
    "Exit code 1\ngitleaks.................................................................Passed\n"
    "bug: pre-commit's script is installed in migration mode\nrun `pre-commit install -f --hook-type commit-msg`"
)
MESSAGE = "git commit -m \"$(cat <<'EOF'\ndocs(specs): replace MCP server mode with Agents Skills\nEOF\n)\""


def found(tmp: Path, s: Session, kind: str) -> list[tuple[list[int], str]]:
    return [(f["positions"], f["rule"]) for f in run(tmp, s)[0] if f["kind"] == kind]


def commit(sid: str, between: str = "status", second: str = HOOK) -> Session:
    """Claude Code repiq (r7): ``git add ... && git commit`` fails on the hook, ``git status``, the commit alone again."""
    s = Session(sid).add("user", "コミットして")
    call(s, "Bash", {"command": f"git add docs/specs/scope.md && {MESSAGE}", "description": "Commit"}, HOOK, True)
    if between == "status":
        call(s, "Bash", {"command": "git status", "description": "Check"}, "On branch main\nChanges to be committed:")
    else:  # the hook's configuration edited first: a change that worked
        edit = {"file_path": "/r/.pre-commit-config.yaml", "old_string": "stages: [commit-msg]", "new_string": ""}
        s.call("Edit", edit, "The file has been updated successfully.")
    call(s, "Bash", {"command": MESSAGE, "description": "Retry commit"}, second, True)
    return s.add("assistant", "pre-commit の migration mode バグが exit code 1 を返しているようです。")


def test_a_failed_commit_run_again_without_its_git_add_is_redundant(tmp_path: Path) -> None:
    """The second command's steps are all the first's (its ``git add`` aside), nothing was written between (a ``git
    status`` looks), and it fails again: the same failing command re-run without change (GUIDE §5). Stopped by the
    person the second time (Claude Code's "[Request interrupted by user for tool use]" under its exit-code header) it
    is the same retry. Near miss: the hook's configuration edited between (a change that worked)."""
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", commit("again"), "redundant_work") == [([1, 5], "failed_step_again (Bash)")]
    (tmp_path / "b").mkdir()
    stopped = commit("stopped", second="Exit code 137\n[Request interrupted by user for tool use]\ngitleaks....")
    assert found(tmp_path / "b", stopped, "redundant_work") == [([1, 5], "failed_step_again (Bash)")]
    (tmp_path / "c").mkdir()
    assert found(tmp_path / "c", commit("fixed", between="fix"), "redundant_work") == []


def test_a_failed_edit_redone_after_reading_the_file_it_needed_is_no_retry(tmp_path: Path) -> None:
    """Claude Code entireio/cli: the edit fails ("File has not been read yet"), the file is read, the same edit is
    refused by the person: the retry followed what the failure said. The first call refused is no failure either."""
    edit = {"file_path": "/w/summarize.go", "old_string": "switch agentType {", "new_string": "switch t {"}
    s = Session("read-first").add("user", "make the linter pass")
    call(s, "Edit", edit, "<tool_use_error>File has not been read yet. Read it first before writing to it.", True)
    s.call("Read", {"file_path": "/w/summarize.go"}, "112  func BuildCondensedTranscriptFromBytes(")
    call(s, "Edit", edit, "The user doesn't want to proceed with this tool use. The tool use was rejected", True)
    assert found(tmp_path, s.add("assistant", "Stopped."), "redundant_work") == []


def test_three_failing_runs_of_the_same_steps_are_a_loop(tmp_path: Path) -> None:
    """aider (fresh-dev, labeled loop): one edit sent again and again, failing the same way each time. Two make
    redundant work, three a loop as well, cited from its last call."""
    s = Session("thrice").add("user", "make the build pass")
    call(s, "Bash", {"command": "cd web && npm run build"}, "Error: Cannot find module 'vite'\nexit code 1", True)
    for _ in range(2):
        call(s, "Bash", {"command": "npm run build"}, "Error: Cannot find module 'vite'\nexit code 1", True)
    loops = found(tmp_path, s.add("assistant", "The build fails."), "loop")
    assert ([1, 3, 5], "failed_step_3_times (Bash)") in loops, loops


def vamp(sid: str, correction: str) -> Session:
    """Claude Code duet (r7): asked to drop the note, the agent also deletes the /vamp command and its README row."""
    s = Session(sid).add("user", "we can drop vamp.md and the related pre-push hook")
    s.call("Bash", {"command": "rm commands/vamp.md hooks/pre-push.example"}, "")
    row = "| `/vamp`  | Survey the project and choose what to play next |"
    s.call(
        "Edit",
        {
            "file_path": "/d/README.md",
            "old_string": f"| `/sweep` | Post-op check |\n{row}",
            "new_string": "| `/sweep` | Post-op check |",
        },
        "The file has been updated successfully.",
    )
    s.add("assistant", "Removed vamp.md, the hook and their entries.")
    s.add("user", correction)
    s.call(
        "Write",
        {"file_path": "/d/commands/vamp.md", "content": "---\ndescription: Survey the project\n---"},
        "File created successfully",
    )
    return s.add("assistant", "Restored the /vamp command.")


def test_the_reply_putting_back_what_it_took_away_marks_the_turn_before_it_a_correction(tmp_path: Path) -> None:
    """The person's turn made the agent undo its own work: it said again what was asked, in whatever words
    ("oops! keep the `/vamp` skill - i just mean drop the note"). Near misses: the undo asked for in so many words (a
    change of mind, a new request), a one-word approval before a workflow writes its status line back."""
    (tmp_path / "a").mkdir()
    turn = "oops! keep the `/vamp` skill - i just mean drop the note"
    assert found(tmp_path / "a", vamp("oops", turn), "user_repeated") == [([6], "undone_after")]
    for sid, said in (("revert", "please revert the vamp command deletion"), ("ok", "approved")):
        (tmp_path / sid).mkdir()
        assert found(tmp_path / sid, vamp(sid, said), "user_repeated") == [], sid


def test_lines_put_back_in_a_language_written_without_spaces(tmp_path: Path) -> None:
    """Claude Code repiq (r7): "違う、単純にP5を消すだけで良かった" after the agent removed a whole section; its next edit
    adds the removed line again. A turn of one word is read by its characters where the script has no spaces."""
    s = Session("ja").add("user", "Recommended Epics,mcp消して関連する記載も消して")
    s.call(
        "Edit",
        {
            "file_path": "/r/docs/specs/scope.md",
            "old_string": "- MCP サーバーモード\n- プラグインシステム",
            "new_string": "- プラグインシステム",
        },
        "The file has been updated successfully.",
    )
    s.add("assistant", "完了しました。")
    s.add("user", "違う、単純にP5を消すだけで良かった")
    s.call(
        "Edit",
        {
            "file_path": "/r/docs/specs/scope.md",
            "old_string": "- プラグインシステム",
            "new_string": "- MCP サーバーモード\n- プラグインシステム",
        },
        "The file has been updated successfully.",
    )
    s.add("assistant", "元に戻しました。")
    assert found(tmp_path, s, "user_repeated") == [([4], "undone_after")]


def test_one_line_of_many_written_again_is_the_next_change_not_an_undo() -> None:
    """Codex OpenPrintKit: a new feature writes ``except Exception:`` again, one of the seven lines the change before
    it removed from gcode.py: no undo. Half of them or more is."""

    def edit(old: str, new: str) -> tuple[str, str]:
        return ("Edit", json.dumps({"file_path": "g/gcode.py", "old_string": old, "new_string": new}))

    removed = "\n".join(f"    line_{k} = compute({k})" for k in range(6)) + "\n    except Exception:"
    before = change_of([edit(removed, "pass")])
    assert undoes(before, change_of([edit("pass", "    except Exception:")])) == ""
    assert undoes(before, change_of([edit("pass", "\n".join(removed.splitlines()[:4]))])) == "gcode.py"


def test_a_claim_word_said_of_work_still_to_do_is_no_claim_for_any_rule() -> None:
    """Moved from kept_going_after_done into ``said.CLAIM_RE``: "the code that needs to be fixed", "it will be done"
    are work to do; "It is fixed now", "has been fixed" are claims."""
    for text in ("the code that needs to be fixed is in auth.py", "it will be done after the migration"):
        assert CLAIM_RE.search(text) is None, text
    for text in ("It is fixed now.", "The bug has been fixed.", "Done.", "All tests pass."):
        assert CLAIM_RE.search(text) is not None, text


def test_a_replys_own_words_leave_its_code_and_edits_out_in_place() -> None:
    """``said.prose``: any fenced block and an aider SEARCH/REPLACE block blanked, the text's length and lines kept
    (a match's place is the reply's)."""
    text = 'Wrote it:\n```python\nprint("Model loaded successfully!")\n```\nRun it.'
    assert CLAIM_RE.search(text) is not None and CLAIM_RE.search(prose(text)) is None
    assert len(prose(text)) == len(text) and prose(text).count("\n") == text.count("\n")
    edit = "notes.md\n<<<<<<< SEARCH\n# Notes\n=======\n# Notes\nFixed the lint error.\n>>>>>>> REPLACE\nSee above."
    assert CLAIM_RE.search(prose(edit)) is None and prose(edit).endswith("See above.")
    assert prose("no code here, done") == "no code here, done"


def test_context_crowded_quotes_past_the_harness_header_lines() -> None:
    """One list of the lines a harness writes above a command's output (``tool_errors.HARNESS_HEADERS``), read by
    compaction and by context_crowded's quote: Codex's chunk id, wall time, exit code, token count, "Output:"."""
    out = (
        "Chunk ID: 1a2b3c\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 512\n"
        "Output:\n  1  # Implementation plan for the kernel executor"
    )
    m = LINE.search(out)
    assert m is not None and m.group() == "  1  # Implementation plan for the kernel executor"
    assert re.fullmatch(r"\s*", out[: out.index("Chunk")])
