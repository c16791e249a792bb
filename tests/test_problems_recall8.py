"""Round 12 of the problem detectors' recall (issue 41): the fourth and fifth blind rounds read as dev. A file re-read
whatever the reading command (PowerShell's Get-Content, a quoted path with a "(group)" folder, kimi's ReadFile
line_offset / n_lines, the same file once plain and once numbered); a fix handed over in words and the same error
pasted back; a turn that opens "I mean ..."; an answer the agent says it made up. Each case is a snippet of its real
conversation's shape, with the near misses beside it."""

from __future__ import annotations

import json
from pathlib import Path

from forensics.analyzers.problems.actions import SHELL_READ_PY, lines_read
from tests.test_problems import Session, run, verbatim

PYPROJECT = (
    '[project]\r\nname = "idaho-vault"\r\nversion = "0.1.0"\r\ndependencies = [\r\n    "crewai>=1.14.1",\r\n]\r\n'
)


def numbered(text: str) -> str:
    return "".join(f"{i:>4}: {line}\r\n" for i, line in enumerate(text.split("\r\n")[:-1], 1))


def test_the_reading_commands_and_arguments_of_other_agents() -> None:
    """What a read names: Get-Content's file (Windows backslashes, JSON-escaped as in the arguments), a quoted path
    with a Next.js "(group)" folder; kimi's ReadFile range; prose is no read."""
    assert SHELL_READ_PY.search("Get-Content src\\\\idaho_vault\\\\main.py")[1] == "src\\\\idaho_vault\\\\main.py"
    assert SHELL_READ_PY.search("$i=1; Get-Content '.crewai\\\\TRAINING.md' | ForEach")[1] == ".crewai\\\\TRAINING.md"
    m = SHELL_READ_PY.search("cd /w && nl -ba 'apps/web/src/app/(protected)/dashboard/page.tsx'")
    assert m is not None and m[1] == "apps/web/src/app/(protected)/dashboard/page.tsx"
    assert SHELL_READ_PY.search("echo the type annotation.py") is None
    assert lines_read(json.dumps({"path": "/t/_column_transformer.py", "line_offset": 275, "n_lines": 35})) == (
        275,
        309,
    )


def test_a_file_printed_plain_then_printed_again_numbered_is_read_again(tmp_path: Path) -> None:
    """Codex IDAHO-VAULT: pyproject.toml printed with Get-Content, then printed again with line numbers, nothing
    changed between: the same text once the numbers are taken out. Near miss: the second print shows other text (the
    file changed outside the agent's calls)."""
    found = {}
    for sid, second in (
        ("same", numbered(PYPROJECT)),
        ("changed", numbered(PYPROJECT.replace("idaho-vault", "idaho-core"))),
    ):
        s = (
            Session(sid)
            .add("user", "Inspect the package and report what blocks a local boot")
            .call(
                "shell_command",
                {"command": "Get-Content pyproject.toml"},
                "Exit code: 0\nWall time: 4.6 seconds\nOutput:\n" + PYPROJECT,
            )
            .call(
                "shell_command",
                {"command": "$i=1; Get-Content pyproject.toml | ForEach-Object { '{0,4}: {1}' -f $i, $_; $i++ }"},
                "Exit code: 0\nWall time: 3 seconds\nOutput:\n" + second,
            )
            .add("assistant", "The package boots.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = [f for f in run(tmp_path / sid, s)[0] if f["kind"] == "redundant_work"]
    (f,) = found["same"]
    assert (f["positions"], f["rule"]) == ([1, 3], "reread_unchanged") and verbatim(tmp_path / "same", f)
    assert found["changed"] == []


def test_a_top_range_that_came_back_short_is_the_whole_file_only_against_a_whole_read(tmp_path: Path) -> None:
    """Codex agentcmd: sed -n '1,200p' of a 6-line file, then nl -ba of it whole: read again. Near miss: a top range
    whose output came back short (the output cut), then lines past it: not read before."""
    code = "".join(f"const line{i} = {i};\n" for i in range(1, 7))
    nl = "".join(f"     {i}\tconst line{i} = {i};\n" for i in range(1, 7))
    page = "'apps/web/src/app/(protected)/dashboard/page.tsx'"
    found = {}
    for sid, second, result in (
        ("whole", f"nl -ba {page}", nl),
        ("past", f"sed -n '360,440p' {page}", "const other = 1;\n" * 60),
    ):
        s = (
            Session(sid)
            .add("user", "Why does the dashboard load slowly?")
            .call("shell", {"command": ["bash", "-lc", f"sed -n '1,200p' {page}"]}, code)
            .call("shell", {"command": ["bash", "-lc", second]}, result)
            .add("assistant", "It prefetches every team.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = [f["rule"] for f in run(tmp_path / sid, s)[0] if f["kind"] == "redundant_work"]
    assert found == {"whole": ["reread_unchanged"], "past": []}


JUSTFILE = "error: Unknown start of token:\n——▶ justfile:19:7\n│\n19 │   @cd ../.. && curl --fail -o .git/hooks/commit-msg\n│       ^"


def test_a_fix_handed_over_in_words_then_the_same_error_pasted_back(tmp_path: Path) -> None:
    """Continue (r5): "I've reviewed the script and made some corrections and improvements. Here is the updated
    script:", then "всерівно ця помилка:" and the same justfile error. Near miss: "Here is the updated script:"
    alone offers a change, it does not say the error is fixed."""
    found = {}
    for sid, said in (
        ("fixed", "I've reviewed the script and made some corrections and improvements. Here is the updated script:"),
        ("offered", "Here is the updated script:"),
    ):
        s = (
            Session(sid)
            .add("user", "set1.sh fails:\n" + JUSTFILE)
            .add("assistant", "Skip the justfile recipe:\n```bash\nsed -i 's/^@/#@/' justfile\n```")
            .add("user", "то саме\n" + JUSTFILE)
            .add("assistant", said + "\n```bash\n#!/usr/bin/env bash\nset -euo pipefail\nsed -i '19d' justfile\n```")
            .add("user", "всерівно ця помилка:\n" + JUSTFILE)
            .add("assistant", "The error comes from the justfile.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = [f for f in run(tmp_path / sid, s)[0] if f["kind"] == "gave_up_or_false_success"]
    (f,) = found["fixed"]
    assert (f["positions"], f["rule"]) == ([3, 4], "claim_contradicted")
    assert "pastes back the error" in f["norm"] and verbatim(tmp_path / "fixed", f)
    assert found["offered"] == []


def test_a_turn_that_opens_by_saying_what_was_meant(tmp_path: Path) -> None:
    """Codex agentv (r5): questions about close policy, then "i mean specific to content not policy". Near miss: "I
    mean" inside a turn is no correction ("yes, that is what I mean")."""
    found = {}
    for sid, turn in (("opens", "i mean specific to content not policy"), ("inside", "yes, that is what I mean")):
        s = (
            Session(sid)
            .add("user", "can you ask me questions to get the info you need to be confident")
            .add("assistant", "1. What close policy do you want for stale issues?")
            .add("user", turn)
            .add("assistant", "Got it.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = [(f["positions"], f["rule"]) for f in run(tmp_path / sid, s)[0] if f["kind"] == "user_repeated"]
    assert found == {"opens": [([2], "said_again")], "inside": []}


def test_an_answer_the_agent_says_it_made_up(tmp_path: Path) -> None:
    """Claude Code (r4): GoReleaser's GitHub App config presented as supported; challenged, "You're right, I
    apologize - I made that up." The finding cites the invented answer and the retraction."""
    s = (
        Session("goreleaser")
        .add("user", "is there another way than a token, something like a github app?")
        .add("assistant", "Yes, GoReleaser Pro supports **GitHub Apps** for the brews repository: set `git.app`.")
        .add("user", "seems like there is no git:app thing with goreleaser, have you make it up ?")
        .add("assistant", "You're right, I apologize - I made that up. GoReleaser only supports `token` there.")
    )
    (f,) = [f for f in run(tmp_path, s)[0] if f["kind"] == "gave_up_or_false_success"]
    assert (f["positions"], f["rule"]) == ([1, 3], "claim_retracted")
    assert "I made that up" in f["quote"] and verbatim(tmp_path, f)
