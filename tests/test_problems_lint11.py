"""Issue 41 (branch lint11): a failed step done again, read by its linter's errors. SWE-agent's ``edit`` refuses an edit
that breaks the file with one first line, "Your proposed edit has introduced new syntax error(s)", whatever broke it; the
errors it lists under "ERRORS:" say which (``text.error_lines.lint_errors``). An edit re-indented that now fails the
other way (``E999 IndentationError`` to ``E999 SyntaxError``) is a retry, not the same failure again. The texts are a
real run's (Multi-SWE-bench, SWE-agent doubao-pro-128k, googlecontainertools__jib-2536, calls 5 and 7), exact."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.actions import _error
from forensics.text.error_lines import lint_errors
from tests.test_problems import Session
from tests.test_problems_endings2 import call
from tests.test_problems_recall10 import found

EDIT = (
    "edit 1:1\n"
    "     <plugin>\n"
    "        <groupId>com.google.cloud.tools</groupId>\n"
    "        <artifactId>jib-maven-plugin</artifactId>\n"
    "        <version>2.4.0</version>\n"
    "        <configuration>\n"
    "          <from>\n"
    "            <image>hub.gsealy.cn/base-image/jdk:11.0</image>\n"
    "          </from>\n"
    "          <to>\n"
    "            <image>spring-boot-jib</image>\n"
    "          </to>\n"
    "          <allowInsecureRegistries>true</allowInsecureRegistries>\n"
    "          <container>\n"
    "            <ports>\n"
    "              <port>9999</port>\n"
    "            </ports>\n"
    "          </container>\n"
    "        </configuration>\n"
    "      </plugin>\n"
    "end_of_edit"
)

REFUSED = (
    "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n"
    "\n"
    "ERRORS:\n"
    "- E999 IndentationError: unexpected indent\n"
    "\n"
    "This is how your edit would have looked if applied\n"
    "-------------------------------------------------\n"
    "[File: /googlecontainertools__jib/reproduce_maven_config.py (19 lines total)]\n"
    "1:     <plugin>\n"
    "2:        <groupId>com.google.cloud.tools</groupId>\n"
    "3:        <artifactId>jib-maven-plugin</artifactId>\n"
    "4:        <version>2.4.0</version>\n"
    "5:        <configuration>\n"
    "6:          <from>\n"
    "7:            <image>hub.gsealy.cn/base-image/jdk:11.0</image>\n"
    "8:          </from>\n"
    "9:          <to>\n"
    "10:            <image>spring-boot-jib</image>\n"
    "11:          </to>\n"
    "12:          <allowInsecureRegistries>true</allowInsecureRegistries>\n"
    "13:          <container>\n"
    "14:            <ports>\n"
    "15:              <port>9999</port>\n"
    "16:            </ports>\n"
    "17:          </container>\n"
    "18:        </configuration>\n"
    "19:      </plugin>\n"
    "-------------------------------------------------\n"
    "\n"
    "This is the original code before your edit\n"
    "-------------------------------------------------\n"
    "[File: /googlecontainertools__jib/reproduce_maven_config.py (1 lines total)]\n"
    "1:\n"
    "-------------------------------------------------\n"
    "Your changes have NOT been applied. Please fix your edit command and try again.\n"
    "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.\n"
    "DO NOT re-run the same failed edit command. Running it again will lead to the same error.\n"
    "(Open file: /googlecontainertools__jib/reproduce_maven_config.py)\n"
    "(Current directory: /googlecontainertools__jib)\n"
    "bash-$"
)

# the second try, exactly as the run has it: its first line dedented, and the linter's other error
EDIT2 = EDIT.replace("edit 1:1\n     <plugin>", "edit 1:1\n<plugin>")
REFUSED2 = REFUSED.replace("IndentationError: unexpected indent", "SyntaxError: invalid syntax").replace(
    "1:     <plugin>", "1:<plugin>"
)


def edits(sid: str, second: str) -> Session:
    s = Session(sid).add("user", "reproduce the jib configuration bug")
    call(s, "edit", {"command": EDIT}, REFUSED, True)
    call(s, "edit", {"command": EDIT2}, second, True)
    return s.add("assistant", "The edit keeps failing.")


def test_the_linters_errors_are_read() -> None:
    assert lint_errors(REFUSED) == ["- E999 IndentationError: unexpected indent"]
    assert lint_errors(REFUSED2) == ["- E999 SyntaxError: invalid syntax"]
    assert _error(REFUSED) != _error(REFUSED2)
    # OpenHands' edit_file lists flake8's lines whole, its bracketed header right under them
    openhands = (
        "[Your proposed edit has introduced new syntax error(s). Please understand the errors and retry your edit "
        "command.]\nERRORS:\n/workspace/hello.py:1:3: E999 IndentationError: unexpected indent\n"
        "/workspace/hello.py:4:1: F821 undefined name 'x'\n[This is how your edit would have looked if applied]\n"
        "-------------------------------------------------\n1|  print('hello world')"
    )
    assert lint_errors(openhands) == [
        "/workspace/hello.py:1:3: E999 IndentationError: unexpected indent",
        "/workspace/hello.py:4:1: F821 undefined name 'x'",
    ]
    assert _error(openhands).endswith(
        " | <path>:<n>:<n>: <id> indentationerror: unexpected indent | <path>:<n>:<n>: <id> undefined name '<q>'"
    )
    # a header without a list under it, and prose that merely ends in "errors:", read nothing
    assert lint_errors("ERRORS:\n\nThis is how your edit would have looked if applied") == []
    assert lint_errors("I found two errors:\nthe import is missing, and so is the class.") == []


def test_an_edit_refused_for_another_error_is_a_retry(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert found(tmp_path / "a", edits("retry", REFUSED2), "redundant_work") == []
    (tmp_path / "b").mkdir()  # near miss: refused again for the same error, the step was done again
    same = REFUSED.replace("1:     <plugin>", "1:<plugin>")
    assert found(tmp_path / "b", edits("again", same), "redundant_work") == [([1, 3], "failed_step_again (edit)")]
