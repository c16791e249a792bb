"""Frustration and lost focus read from what the run shows (issue 41, docs/failures-evaluation.md "Round 7"): swearing
counts where it is aimed at the assistant, in the languages people write in; the agent destroying what it had just
called done, and an edit that removes far more than the add it announced, are lost focus. Each on real licensed
files of ``fixtures/real`` (ingested whole, exact findings), with their near misses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.problems import findings
from forensics import ingest
from forensics.analyzers.problems import focus, frustration
from forensics.analyzers.problems.turns import Turn
from tests.conftest import FIXTURES

REAL = FIXTURES / "real"
PI = REAL / "pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl"
GEMINI = REAL / "gemini_cli/entireio+cli/ab/2b9748b105/0/full.jsonl"
MOATLESS = REAL / "moatless/aorwall+moatless-tools/tests/trajectories/psf__requests-1724/trajectory.json"
SWE_AGENT = REAL / (
    "swe_agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_"
    "source/marshmallow-code__marshmallow-1867.traj"
)


def turn(text: str, index: int = 1) -> Turn:
    return Turn("c", index, text, True, True, True, index, len(text))


@pytest.mark.parametrize(
    "text",
    [
        "you fucked thet component up REAL fucking good. i undid your changes, try again.",  # pi [15]
        "no, that's not it, bot use the dark theme. fucking hell. is Theme.fg/bg maybe doing something stupid?",
        "are you fucking stupid? what about the tool and user bgs??",
        "чего блять? там в инстрокции есть aur пакет это ты так изучил?",  # gemini_cli Sm1tee 0165e580 [2]
        "хуйня твоя команда я вызываю меню скриншоты",
        "Scheiße, du hast schon wieder die Datei gelöscht",
        "putain, tu as encore cassé le build",
        "씨발 너 또 파일 지웠어",
    ],
)
def test_swearing_aimed_at_the_assistant_is_frustration(text: str) -> None:
    (p,) = frustration.frustration([turn(text)])
    assert "swore_at_assistant" in p.rule and p.quote in text


@pytest.mark.parametrize(
    "text",
    [
        "ok bro so i am working on the OCR shit right now. I was using document ai by google",  # cline haram-333
        "Defintely not Go, fuck that language. Python could be OK, but idk.",  # codex Quelklef [48]
        "i think truncatedtext.ts is fucked up. investigate",  # pi [247]: the code, not the assistant
        "wtf",  # pi [339]: at VS Code's rendering (the fresh label's note), not at the assistant
        "some differences, muted and dim are the same in vs code terminal, wtf?",  # pi [355]
        "omfg that's it, now shit renders the same. ok, let's modify the ",  # pi [381]: relief
        "мне не нравится kvantum я его стер, излишняя хуйня которая вся прозрачная",  # the person's situation
        "merde, le bug du parser revient à chaque build",  # French "du" is "of the", not "you"
    ],
)
def test_swearing_at_the_situation_is_not(text: str) -> None:
    assert frustration.frustration([turn(text)]) == []


def test_the_first_turn_is_never_read() -> None:
    assert frustration.frustration([turn("are you fucking stupid?", index=0)]) == []


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    db = tmp_path_factory.mktemp("feel") / "w.duckdb"
    ingest([PI, GEMINI, MOATLESS, SWE_AGENT], db=db)
    return findings(Path(db))


def test_pi_frustration_is_the_three_insults_not_the_wtfs(real: list[dict]) -> None:
    got = [(f["positions"], f["rule"], f["quote"]) for f in real if f["kind"] == "frustration"]
    assert got == [
        ([15], "swore_at_assistant", "you fucked thet component up REAL fucking good. i undid your changes, try again. reda the full"),
        ([347], "swore_at_assistant", "no, that's not it, bot use the dark theme. fucking hell. is Theme.fg/bg maybe doing something stupid"),
        ([421], "exasperated+swore_at_assistant", "are you fucking stupid? what about the tool and user bgs??"),
    ]  # fmt: skip


def test_lost_focus_on_the_gemini_and_moatless_runs_only(real: list[dict]) -> None:
    got = sorted((f["positions"], f["rule"], f["quote"]) for f in real if f["kind"] == "lost_focus")
    assert got == [
        # gemini_cli: "Task complete." then rm `docs/blue.md`, the file the claim names
        ([3, 8], "kept_going_after_done",
         "have successfully created `docs/blue.md` with content about the color blue, fulfilling your request"),
        # moatless: asked to add `import six`, the edit replaces Session.request with the imports
        ([15, 19], "removed_more_than_said",
         "The change has been applied, but we still need to import the `six` library at the top of the file to"),
    ]  # fmt: skip
    moat = next(f for f in real if f["rule"] == "removed_more_than_said")
    assert "removed 97 lines and added 17" in moat["norm"]


def test_a_scratch_script_removed_after_a_claim_is_tidying_up(real: list[dict]) -> None:
    """SWE-agent's marshmallow replay: "the rounding issue has been fixed. Let's remove the reproduce.py" after it ran
    reproduce.py: no lost focus (the script the run executed is scratch)."""
    assert not [f for f in real if f["kind"] == "lost_focus" and "reproduce" in f["quote"]]


def test_edit_sizes_from_arguments_patches_and_result_diffs() -> None:
    assert focus._change('{"old_str": "a\\nb\\nc", "new_str": "a"}', "") == (3, 1)
    patch = '{"patchText": "*** Begin Patch\\n*** Update File: x.ts\\n@@\\n-a\\n-b\\n+c\\n*** End Patch"}'
    assert focus._change(patch, "") == (2, 1)
    result = '{"output": {"diff": "--- f.py\\n+++ f.py\\n@@ -1,3 +1,1 @@\\n-x\\n-y\\n+z\\n"}}'
    assert focus._change('{"content": "z"}', result) == (2, 1)
    assert focus._change('{"content": "z"}', "Applied.") is None


NOMOS = REAL / "claude_code" / "Nomos-N4s+nomos" / "0" / "full.jsonl"


@pytest.mark.parametrize(
    ("command", "wipes"),
    [
        ("git stash -q -- src/keys.py && python check.py; git stash pop -q", False),  # set aside to compare, given back
        ("git stash pop", False),
        ("git restore --staged .", False),  # unstages: the work tree is untouched
        ("git checkout main", False),
        ("git stash", True),
        ("git reset --hard HEAD", True),
        ("git checkout -- .", True),
        ("git restore .", True),
        ("git clean -fd", True),
    ],
)
def test_what_wipes_the_work_tree(command: str, wipes: bool) -> None:
    assert focus._destroys("Bash", json.dumps({"command": command}), False, set()) is wipes


def test_a_file_put_back_from_git_counts_only_when_the_claim_names_it() -> None:
    args = json.dumps({"command": "git checkout -- tests/test_provenance.py && pytest -q"})
    assert focus._destroys("Bash", args, False, {"test_provenance.py"})
    assert not focus._destroys("Bash", args, False, {"rl_sweep.py"})
    assert not focus._destroys("Bash", args, False, set())


def test_no_lost_focus_in_the_nomos_session(tmp_path: Path) -> None:
    """Claude Code on Nomos (reader5 judged both findings false): it stashed its fix to show the check fail before it,
    popping it in the same command, and later put one test file back from git; neither destroys finished work."""
    db = tmp_path / "w.duckdb"
    ingest([NOMOS], db=db)
    assert [f for f in findings(Path(db)) if f["kind"] == "lost_focus"] == []
