"""Round 16 (docs/failures-evaluation.md, "round 16 (read10)"): a failed step done again, read against graded runs. A
change between the two tries is no step done again: a variable exported (SWE-agent's JAVA_HOME set between two
``./mvnw test``), keys typed into another program (terminal-bench's vim edit through ``tmux send-keys``), an edit with
a line of its text dropped; nor a second failure with another error under the same first line (SWE-agent's file view
above ``Step: command not found``, then ``pplication: command not found``) or under mini-swe-agent's ``<returncode>``.
Each with the near miss that must still fire."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.actions import body
from tests.test_problems import Session
from tests.test_problems_endings2 import call
from tests.test_problems_recall10 import found

JAVA = "Error: JAVA_HOME is not defined correctly.\n  We cannot execute /usr/lib/jvm/java-11/bin/java\nbash-$"
RAN = "Your command ran successfully and did not produce any output.\nbash-$"


def mvnw(sid: str, between: str) -> Session:
    s = Session(sid).add("user", "fix the serializer and run the tests")
    call(s, "./mvnw", {"command": "./mvnw test"}, JAVA, True)
    call(s, between.split()[0], {"command": between}, RAN)
    call(s, "./mvnw", {"command": "./mvnw test"}, JAVA, True)
    return s.add("assistant", "Java is not set up here.")


def test_a_variable_exported_between_two_failing_runs_is_a_change(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", mvnw("export", "export JAVA_HOME=/usr/lib/jvm/java-11"), "redundant_work") == []
    (tmp_path / "b").mkdir()  # near miss: a call that only looks
    near = found(tmp_path / "b", mvnw("look", "ls -F"), "redundant_work")
    assert near == [([1, 5], "same_action_same_result (./mvnw)")]  # the same call, the same result: that rule's


def tmux(sid: str, keys: str) -> Session:
    run = "tmux send-keys -t workflow:0.1 'python /app/src/process_data.py in.csv out.csv' Enter"
    empty = "<returncode>0</returncode>\n<output>\nTraceback (most recent call last): none\n</output>"
    s = Session(sid).add("user", "fix the bug in process_data.py using vim in the right pane")
    call(s, "bash", {"command": run}, empty)
    call(s, "bash", {"command": keys}, "<returncode>0</returncode>\n<output>\n</output>")
    call(s, "bash", {"command": run}, empty)
    return s.add("assistant", "Fixed.")


def test_keys_typed_into_an_editor_between_two_runs_are_a_change(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", tmux("vim", "tmux send-keys -t workflow:0.2 ':wq' Enter"), "redundant_work") == []
    (tmp_path / "b").mkdir()  # near miss: the pane only read between
    looked = tmux("look", "tmux capture-pane -p -t workflow:0.1")
    assert found(tmp_path / "b", looked, "redundant_work") == [([1, 5], "same_action_same_result (bash)")]


SYNTAX = (
    "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry "
    "editing the file.\n\nERRORS:\n- E999 SyntaxError: invalid syntax\n\nYour changes have NOT been applied."
)
EDIT = "edit 1:3\nimport com.example.Pojo;\n\npublic class Repro {\n    Pojo p;\n}\nend_of_edit"


def edits(sid: str, second: str) -> Session:
    """SWE-agent: its linter refuses the edit and shows the file as the edit would have left it."""
    s = Session(sid).add("user", "write a reproduction")
    for text in (EDIT, second):
        view = "\n".join(f"{k}:{line}" for k, line in enumerate(text.splitlines()[1:-1], 1))
        call(s, "edit", {"command": text}, f"{SYNTAX}\n{view}", True)
    return s.add("assistant", "The edit keeps failing.")


def test_an_edit_with_a_line_of_its_text_dropped_is_another_edit(tmp_path: Path) -> None:
    dropped = EDIT.replace("import com.example.Pojo;\n", "")
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", edits("dropped", dropped), "redundant_work") == []
    (tmp_path / "b").mkdir()  # near miss: blank lines and indentation aside, the same text
    same = EDIT.replace("\n\n", "\n").replace("    Pojo", "  Pojo")
    assert found(tmp_path / "b", edits("same", same), "redundant_work") == [([1, 3], "failed_step_again (edit)")]
    # the text ends where its here-document does: a git status after it is no part of the message
    commit = "git commit -m \"$(cat <<'EOF'\nfix: the pojo\nEOF\n)\""
    assert body(commit + " && git status") == body(commit) == ["fix: the pojo"]


def test_another_error_under_the_same_first_line_is_another_failure(tmp_path: Path) -> None:
    view = "[File: /r/reproduce.py (1 lines total)]\n1:\n/bin/bash: line 3050: {}: command not found\nbash-$"
    cmd = "rm /r/reproduce.py\ncreate /r/reproduce.py"
    s = Session("dubbo").add("user", "reproduce the bug")
    call(s, "rm", {"command": cmd}, view.format("Step"), True)
    call(s, "rm", {"command": cmd}, view.format("pplication"), True)
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", s.add("assistant", "Retrying."), "redundant_work") == []
    # mini-swe-agent: its <returncode> line is the harness's, not the first line of what failed
    tb = Session("hexdump").add("user", "extract the weights")
    call(
        tb,
        "bash",
        {"command": "file model.pth && hexdump -C model.pth"},
        "<returncode>127</returncode>\n<output>\n/bin/sh: 1: file: not found\n</output>",
        True,
    )
    call(
        tb,
        "bash",
        {"command": "hexdump -C model.pth"},
        "<returncode>127</returncode>\n<output>\n/bin/sh: 1: hexdump: not found\n</output>",
        True,
    )
    (tmp_path / "b").mkdir()
    assert found(tmp_path / "b", tb.add("assistant", "Neither tool is here."), "redundant_work") == []
