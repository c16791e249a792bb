"""Instructions violated (issue 41, branch ``instr12``): a program the person said not to use, run anyway. The dev
pool's Codex miss (r8, labeled [39, 44 … 54]): "use terminal instead of powershell then", and six more
``powershell.exe`` calls. The rules parser read ``use A instead of B`` only when both are known programs; now the one
to use may be anything ("terminal", "the editor tool") when the one not to use is a program the calls name, and a
Windows program's ``.exe`` is the program. A person's bare "don't use powershell" is read too (their sentences only).
Each on its real conversation in ``fixtures/real`` (exact findings), then on snippets with the near misses."""

from __future__ import annotations

import json

import duckdb
import pytest

from bench import problems as bench
from forensics import ingest
from forensics.analyzers.rules.checks import check_of, program_rule
from forensics.analyzers.rules.extract import Message, rules_of
from forensics.analyzers.rules.judge import Call, Run, command_of, judge
from tests.conftest import ROOT

CODEX = (
    ROOT / "fixtures" / "real" / "codex/Python-AI-Solutions+agentic-neurodata-conversion/.codex/sessions/2025/09/26/"
    "rollout-2025-09-26T17-01-04-019985ca-7ef7-7580-a921-c20ac619f40b.jsonl"
)


def test_the_codex_powershell_label_on_its_conversation(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every ``command_instead`` finding of the real run, exactly: the six ``powershell.exe`` calls after [39], the
    label's positions (four of them rejected by the person). The 11 calls before [39] ran PowerShell too and are not
    findings: the instruction was not given yet."""
    db = tmp_path_factory.mktemp("instr12") / "w.duckdb"
    ingest([CODEX], db=db)
    found = [
        (f["positions"], f["rule"], f["norm"])
        for f in bench.findings(db)
        if f["kind"] == "instruction_violated" and f["rule"] == "command_instead"
    ]
    said = "the instruction at [39]: “use terminal instead of powershell then”"
    assert found == [([p, 39], "command_instead", said) for p in (44, 46, 48, 50, 52, 54)]
    con = duckdb.connect(str(db))
    before = con.execute("SELECT count(*) FROM tool_calls WHERE position < 39 AND arguments LIKE '%powershell.exe%'")
    assert before.fetchone() == (11,)
    con.close()


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("use terminal instead of powershell then", ("terminal", "powershell")),
        ("Use the editor tool rather than `sed`.", ("editor", "sed")),
        ("Please use bash instead of pwsh for scripts", ("bash", "pwsh")),
        ("use rg instead of grep", ("rg", "grep")),  # both programs: the rule it always was
    ],
)
def test_use_anything_instead_of_a_program(text: str, target: tuple[str, ...]) -> None:
    check = check_of(text)
    assert check is not None and (check.kind, check.target) == ("command_instead", target)


@pytest.mark.parametrize(
    "text",
    [
        "use pathlib instead of os.path",  # not a program the calls name
        "use caution, not sudo",  # "not" and "over" only where both are programs
        "use a dict instead of a list",
        "Use `new(val)` not `x := val; &x`",  # ticked code, a rule no call shows: kept, but no program to check
    ],
)
def test_instead_of_something_no_call_runs(text: str) -> None:
    check = check_of(text)
    assert check is None or check.target[-1] not in ("os.path", "sudo", "list")


def test_a_windows_program_is_the_program() -> None:
    """``powershell.exe``, ``C:\\Git\\bin\\git.exe``: the program run; a call through another program is not it."""
    rules = rules_of("c", [Message(0, "user", "person", "use terminal instead of powershell then")])
    calls = [
        Call(p, "shell", json.dumps({"command": argv}), command_of("shell", json.dumps({"command": argv})))
        for p, argv in [
            (2, ["powershell.exe", "-NoProfile", "-Command", "Get-Content a.md"]),
            (4, ["C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "-Command", "dir"]),
            (6, ["cmd.exe", "/c", "type a.md"]),
            (8, ["python", "-c", "print('powershell')"]),
        ]
    ]
    got = [(v.position, v.verdict) for v in judge(rules, Run("c", "m", calls=calls, end=8))]
    assert got == [(2, "broke"), (4, "broke")]


def test_dont_use_a_program_in_a_persons_turn_only() -> None:
    """ "don't use powershell": a person's sentence. An instruction file's bare "NEVER use git" is left unchecked:
    in the one such file of the shared logs it sits under "UNLESS you are explicitly requested to do so", which its
    line does not carry (the person asked for the git work it would flag)."""
    assert program_rule("don't use powershell") is not None
    assert program_rule("Never run docker for this.") is not None
    assert program_rule("do not use git blame output as truth") is None  # the program says something else here
    assert program_rule("don't use python until the tests pass") is None  # a condition no verdict sees
    assert program_rule("don't use the word cool") is None  # no program
    person = rules_of("c", [Message(0, "user", "person", "don't use powershell")])
    assert [(r.source, r.check.label if r.check else None) for r in person] == [
        ("person", "command_forbidden: powershell")
    ]
    filed = rules_of(
        "c",
        [Message(0, "user", "harness", "Contents of /a/CLAUDE.md (project instructions):\n\n- NEVER use git\n")],
    )
    assert [r.check for r in filed if r.text == "NEVER use git"] == [None]
