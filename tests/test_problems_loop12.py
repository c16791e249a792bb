"""Round 18 of the problem detectors (issue 41, branch ``loop12``): the ninth blind round read as dev, loops and
redundant work. The pool's misses read in their conversations: the same command sent again with a new note to the
person or a permission asked (Codex's rejected command, ``HARNESS_KEYS``); the same act announced three times with
only Think calls between (Kimi); one reasoning turn repeating a paragraph 56 times (aider); the same watch-mode
request answered alike three times (aider). Each rule on its real conversation in ``fixtures/real`` (exact
findings), then on a snippet of its shape with the near miss beside it."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from bench import problems as bench
from forensics import ingest
from tests.conftest import ROOT
from tests.test_problems import Session, run

REAL = ROOT / "fixtures" / "real"
FILES = {
    "codex": "codex/Python-AI-Solutions+agentic-neurodata-conversion/.codex/sessions/2025/09/26/"
    "rollout-2025-09-26T17-01-04-019985ca-7ef7-7580-a921-c20ac619f40b.jsonl",
    "claude": "claude_code/yutakobayashidev+repiq/24/723c7a3c59/1/full.jsonl",
    "kimi": "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/20251030-164452/"
    "00d5060aaec3fda180930ea52304b87b/531d195b-6436-426e-b010-4bf723a992de_read_2.jsonl",
    "mozgoslav": "aider/AlexShchuka+mozgoslav/.aider.chat.history.md",
    "monochromatic": "aider/Aquaticat+Monochromatic/.aider.chat.history.md",
}
NEW = ("announced_", "same_passage_", "same_answer_")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, list[int], str]]:
    db = tmp_path_factory.mktemp("loop12") / "w.duckdb"
    ingest([REAL / f for f in FILES.values()], db=db)
    con = duckdb.connect(str(db))
    native = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    con.close()
    return sorted(
        (native[f["conversation_id"]], f["kind"], list(f["positions"]), f["rule"]) for f in bench.findings(db)
    )


def test_the_ninth_rounds_loops_and_redundant_work_on_their_conversations(
    real: list[tuple[str, str, list[int], str]],
) -> None:
    """The new rules' findings on the five files, exactly: each is its conversation's label (r4, r8, r9), but the
    Claude Code ``git log`` check run again after a second failed commit (read unclear)."""
    new = [f for f in real if f[3].startswith(NEW) or f[3].startswith("same_action_same_result")]
    assert new == [
        ("019985ca-7ef7-7580-a921-c20ac619f40b", "redundant_work", [52, 54], "same_action_same_result (shell)"),
        ("2025-06-02 13:32:13", "loop", [14, 17, 20], "same_answer_3_times"),
        ("2026-04-22 22:40:47", "loop", [20], "same_passage_56_times"),
        ("531d195b-6436-426e-b010-4bf723a992de_read_2", "loop", [25, 29, 31], "announced_3_times"),
        ("full", "redundant_work", [41, 67], "same_action_same_result (Bash)"),
    ]
    assert (
        len(real) == 17
    )  # every finding on the five files (6 before loop12; 10 at instr12's base: + command_instead ×6; gaveup12:
    # + claimed_file_not_written on aider mozgoslav [29], the ninth round's label)


def test_the_same_command_with_a_new_note_is_the_same_action(tmp_path: Path) -> None:
    """Codex (r8, labeled redundant [52, 53, 54, 55]): the command the person rejected, sent again with
    ``with_escalated_permissions`` and a ``justification``: the same command, the same result. Near miss: another
    command, and a tool with no command whose ``description`` is what it writes."""
    s = Session("note").add("user", "read the init signature")
    cmd = ["python", "-c", "print(open('init.py').read())"]
    s.call("shell", {"command": cmd, "workdir": "/repo"}, "exec command rejected by user")
    s.call(
        "shell",
        {"command": cmd, "workdir": "/repo", "with_escalated_permissions": True, "justification": "to answer"},
        "exec command rejected by user",
    )
    s.call("shell", {"command": ["cat", "init.py"], "workdir": "/repo"}, "exec command rejected by user")
    s.call("create_issue", {"title": "init", "description": "the init signature"}, "issue #4 created ok")
    s.call("create_issue", {"title": "init", "description": "the signature of init"}, "issue #4 created ok")
    s.add("assistant", "I could not read it.")
    found = [(f["positions"], f["rule"]) for f in run(tmp_path, s)[0] if f["kind"] == "redundant_work"]
    assert found == [([1, 3], "same_action_same_result (shell)")]


def test_the_same_act_announced_with_only_notes_between_is_a_loop(tmp_path: Path) -> None:
    """Kimi (r4, labeled loop [25, 29, 31]): "Let me run the reproduction script" three times, each with a Think
    call, the script never run. Near miss: the same announcement with the script run each time is work."""
    s = Session("think").add("user", "find why set_output misses the remainder")
    s.call("ReadFile", {"path": "/testbed/reproduce_issue.py"}, "import pandas as pd\nprint(ct.fit_transform(df))")
    for said in (
        "Now I can see the issue. Let me run the reproduction script to confirm the problem:",
        "Let me now run the reproduction script to see the current behavior:",
        "Let me run the reproduction script to confirm the issue:",
    ):
        s.call("Think", {"thought": "I should run the reproduction script."}, "Thought logged", text=said)
    s.add("assistant", "## Report\nThe remainder is not passed to set_output.")
    (tmp_path / "a").mkdir()
    found = [(f["positions"], f["rule"]) for f in run(tmp_path / "a", s)[0] if f["kind"] == "loop"]
    assert found == [([3, 5, 7], "announced_3_times")]
    ran = Session("ran").add("user", "find why set_output misses the remainder")
    for k in range(3):
        ran.call(
            "Bash",
            {"command": f"python reproduce_issue.py --case {k}"},
            f"case {k}: ok",
            text=("Let me run the reproduction script to confirm the issue:"),
        )
    ran.add("assistant", "All three cases pass.")
    (tmp_path / "b").mkdir()
    assert [f for f in run(tmp_path / "b", ran)[0] if f["kind"] == "loop"] == []


def test_a_passage_said_five_times_in_one_reply_is_a_loop(tmp_path: Path) -> None:
    """aider mozgoslav (r9, labeled loop [20, 23]): one reasoning turn repeats its paragraph 56 times. Four times
    is under ``PASSAGE_TIMES``; a code block repeating its lines is not read."""
    para = "Let's look at the exact code for `handleRelease` again. It calls the backend and then injects the text."
    s = Session("circle").add("user", "why is the same text inserted every time?")
    s.add("assistant", "\n\n".join([para] * 5))
    (tmp_path / "a").mkdir()
    found = [(f["positions"], f["rule"], f["quote"]) for f in run(tmp_path / "a", s)[0] if f["kind"] == "loop"]
    assert found == [([1], "same_passage_5_times", para[:99].rsplit(" ", 1)[0])]
    four = Session("four").add("user", "why is the same text inserted every time?")
    four.add(
        "assistant",
        "\n\n".join([para] * 4) + "\n\n```ts\n" + "\n\n".join(["inject(text);  // " + "x" * 80] * 6) + "\n```",
    )
    (tmp_path / "b").mkdir()
    assert [f for f in run(tmp_path / "b", four)[0] if f["kind"] == "loop"] == []


def test_a_report_with_the_same_block_for_each_item_is_no_loop(tmp_path: Path) -> None:
    """An OpenTelemetry trace's router report (shared logs, 4 blocks alike: under ``PASSAGE_TIMES`` there, and here 6):
    the same block of fields for each interface is the report's structure, not the model going round in circles."""
    block = "Errores de entrada:\n  - Input errors: 0\n  - CRC: 0\n  - Frame: 0\n  - Overrun: 0\n  - Runts: 0"
    s = Session("report").add("user", "resume los contadores de errores de R1")
    s.add("assistant", "\n\n".join(f"INTERFAZ: Ethernet0/{k}\n\n{block}" for k in range(6)))
    assert [f for f in run(tmp_path, s)[0] if f["kind"] == "loop"] == []


def test_the_same_request_answered_alike_three_times_is_a_loop(tmp_path: Path) -> None:
    """aider Monochromatic (r9, labeled loop [14, 17, 20]): the watch-mode question sent three times word for word,
    answered with the same list each time. Near miss: "Yes to all" three times asks nothing of its own."""
    ask = (
        "Find the AI comments below in the code files I've shared.\n// AI? What is this general purpose fp lib missing?"
    )
    answers = (
        "This functional programming library is quite comprehensive. It could add compose, pick, omit and mapValues.",
        "This functional programming library is quite comprehensive. Additions could include compose, pick and omit.",
        "This functional programming library is quite comprehensive. Additions could include compose, pick and prop.",
    )
    s = Session("watch")
    for a in answers:
        s.add("user", ask).add("assistant", a)
    (tmp_path / "a").mkdir()
    found = [(f["positions"], f["rule"]) for f in run(tmp_path / "a", s)[0] if f["kind"] == "loop"]
    assert found == [([1, 3, 5], "same_answer_3_times")]
    yes = Session("yes")
    for a in answers:
        yes.add("user", "Yes to all").add("assistant", a)
    (tmp_path / "b").mkdir()
    assert [f for f in run(tmp_path / "b", yes)[0] if f["kind"] == "loop"] == []
