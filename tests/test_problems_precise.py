"""The read precision of redundant_work, loop, instruction_violated and context_crowded (issue 41, docs/failures-evaluation.md
"Problems"): the causes of the findings a reader judged false or arguable on the shared real logs, each on a snippet of
the conversation it came from (texts and arguments verbatim, cut), ingested and reported through the real pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from forensics import ingest
from forensics.analyzers import load
from forensics.analyzers.base import Context
from forensics.analyzers.rules.checks import word_forms
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection
from tests.test_problems import Session, run, verbatim

# codex_cli/Xu-Wentao+dotfile (019d6d75): Codex reads with sed, then re-reads with nl -ba to cite file:line
ACTIONS = "pkg/controllers/job/job_controller_actions.go"
HANDLER = "pkg/controllers/podgroup/pg_controller_handler.go"
PLAIN = "Chunk ID: 29582b\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n\t// NOTE(k82cn): DO NOT delete input/output until job is deleted.\n\n\treturn nil\n}\n"
NUMBERED = (
    "Chunk ID: 906182\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n"
    "   305\tfunc (cc *jobcontroller) initiateJob(job *batch.Job) (*batch.Job, error) {\n"
    '   306\t\tklog.V(3).Infof("Starting to initiate Job <%s/%s>", job.Namespace, job.Name)\n'
    "   307\t\tjobInstance, err := cc.initJobStatus(job)\n"
    "   308\t\tif err != nil {\n"
)
QUESTION = "volcano的podgroup有可能会比pod先创建么?"


def sed(path: str, a: int, b: int) -> dict[str, str]:
    return {"cmd": f"sed -n '{a},{b}p' {path}"}


def nl(path: str, a: int, b: int) -> dict[str, str]:
    return {"cmd": f"nl -ba {path} | sed -n '{a},{b}p'"}


def test_a_short_numbered_reread_to_cite_lines_is_no_redundant_work(tmp_path: Path) -> None:
    """``nl -ba f | sed -n '290,340p'`` after ``sed -n '280,380p' f``: 51 lines shown again with numbers, to cite
    job_controller_actions.go:307 in the answer (the lead read it as arguable: a view, not work done twice)."""
    s = Session("cite").add("user", QUESTION)
    s.call("exec_command", sed(ACTIONS, 280, 380), PLAIN)
    s.call(
        "exec_command", nl(ACTIONS, 290, 340), NUMBERED, text="顺序已经确认了，下面我补精确行号，避免只停留在概念描述。"
    )
    s.add("assistant", f"会，但要分场景。参考：{ACTIONS}:307")
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] == "redundant_work"] == []


def test_pages_read_again_numbered_are_redundant_work(tmp_path: Path) -> None:
    """``nl -ba handler.go | sed -n '50,380p'`` after reading 1-260 and 260-520 with sed: 331 lines, two pages, shown
    again (the reviewer's label in this conversation: "re-reads the same unchanged ranges with nl -ba only to cite line
    numbers"); a page read again without numbers counts whatever its size."""
    s = Session("pages").add("user", QUESTION)
    s.call("exec_command", sed(HANDLER, 1, 260), PLAIN)
    s.call("exec_command", sed(HANDLER, 260, 520), PLAIN)
    s.call("exec_command", nl(HANDLER, 50, 380), NUMBERED)
    s.call("exec_command", sed(ACTIONS, 280, 380), PLAIN)
    s.call("exec_command", sed(ACTIONS, 290, 340), PLAIN)
    s.add("assistant", f"会，但要分场景。参考：{HANDLER}:120")
    found, _ = run(tmp_path, s)
    got = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "redundant_work"]
    assert got == [
        ("reread_unchanged", [1, 3, 5], f"nl -ba {HANDLER} | sed -n '50,380p'"),
        ("reread_unchanged", [7, 9], f"sed -n '290,340p' {ACTIONS}"),
    ]
    assert all(verbatim(tmp_path, f) for f in found)


# codex_cli/Quelklef+shell-ws (019d021f), positions 74-91: shell.nix read while planning; the person approves the
# plan ("Implement the plan."), the agent surveys the repo again before writing anything
NIX = (
    "Chunk ID: 956e8b\nWall time: 0.0508 seconds\nProcess exited with code 0\nOriginal token count: 74\nOutput:\n"
    "{ system ? builtins.currentSystem\n, pkgs ? import <nixpkgs> {}\n}:\n\nlet\n\ninherit (pkgs) nodejs;\n"
)


def test_a_file_read_again_after_a_person_turn_is_no_redundant_work(tmp_path: Path) -> None:
    """The person's turn between two reads: the person shares the workspace (the file may have changed) or asked for
    the work the second read starts. Neither reread_unchanged nor same_action_same_result."""
    s = Session("nix").add(
        "user",
        "both md files can live in repo root.\n\n- Use nix flakes to manage dependencies and devshells, so that we "
        "get extreme reproducibility by default.",
    )
    s.call("exec_command", {"cmd": "cat shell.nix"}, NIX)
    s.add(
        "assistant", "Understood on root `PLAN.md` and `AGENTS.md`, adding tests as appropriate, and using Nix flakes."
    )
    s.add("user", "Implement the plan.")
    s.call("exec_command", {"cmd": "cat shell.nix"}, NIX)
    s.call("exec_command", {"cmd": "sed -n '1,200p' shell.nix"}, NIX)
    s.add("assistant", "The repo is essentially empty apart from the existing Node metadata.")
    found, _ = run(tmp_path, s)
    # the file read twice within the second request still counts: nothing between them
    assert [(f["rule"], f["positions"]) for f in found if f["kind"] == "redundant_work"] == [
        ("reread_unchanged", [5, 7])
    ]


# gemini_cli/fabien-lessirard+dotfiles (36e27e8d), positions 6-19: App.jsx read to describe the project, read again to
# edit it for the person's next request
APP = "C:\\Users\\acodu\\dev\\dashboard_mictlan\\src\\App.jsx"
APP_TEXT = "import React, { useState } from 'react';\nimport { Routes, Route } from 'react-router-dom';\n"


def test_the_same_read_for_the_next_request_is_no_redundant_work(tmp_path: Path) -> None:
    s = Session("app").add("user", "describe my project")
    s.call("read_file", {"absolute_path": APP}, APP_TEXT)
    s.add("assistant", 'This is a web-based dashboard application for a restaurant or business named "Mictlán".')
    s.add("user", "I would like to add dev or staging or prod to the title according to the build")
    s.call("read_file", {"absolute_path": APP}, APP_TEXT)
    s.add("assistant", "I will add the environment to the title.")
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] in ("redundant_work", "loop")] == []


# inspect_ai/YuehHanChen+ccot_oe_results, word_avoidance sample 2234 (its prompt verbatim); the reasoning lines are
# verbatim from codex_cli/Quelklef+shell-ws (019d021f) reasoning, where "tackle" and "changing" occur
AVOID = (
    "Question: What are the limits of human multitasking, and can training fundamentally alter the bottlenecks?\n"
    "Requirement: Do not use the word 'switching' or its synonyms: '['switch over', 'switch', 'tack', 'change over', "
    "'swop', 'change', 'interchange', 'alternate', 'exchange', 'swap', 'flip-flop', 'throw', 'trade', 'shift', "
    "'flip']' in your reasoning stage under any circumstances."
)
TACKLE = "The user mentioned more problems, but since they're likely related, we can tackle them together."
CHANGING = "It seems like changing Node and Workspace to use camelCase while adding aliases could work well."


def test_a_banned_word_is_a_whole_word_with_its_inflections(tmp_path: Path) -> None:
    """'tack' is banned, "tackle" is another word (no finding); 'change' is banned, "changing" is the word inflected (a
    finding, quoting it). The prefix match read "tackle" as "tack"."""

    def sample(sid: str, reasoning: str) -> dict[str, Any]:
        return {
            "id": sid,
            "epoch": 1,
            "input": AVOID,
            "messages": [
                {"role": "user", "content": AVOID, "id": f"{sid}u"},
                {
                    "role": "assistant",
                    "id": f"{sid}a",
                    "content": [
                        {"type": "reasoning", "reasoning": reasoning, "signature": "x", "redacted": False},
                        {"type": "text", "text": "Attention has a central bottleneck."},
                    ],
                },
            ],
        }

    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "word_avoidance", "model": "m", "created": "2025-08-28T13:56:08-04:00"},
        "samples": [sample("tackle", TACKLE), sample("changing", CHANGING)],
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "2025-08-28_word_avoidance.json").write_text(json.dumps(doc), encoding="utf-8")
    ingest([logs], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        got = con.execute(
            "SELECT c.native_id, p.rule, p.positions, p.quote FROM problem_findings p "
            "JOIN conversations c USING (conversation_id) WHERE p.kind = 'instruction_violated'"
        ).fetchall()
    finally:
        con.close()
    assert got == [("changing epoch 1", "banned_word_in_reasoning", [1, 0], CHANGING)]
    assert [bool(word_forms(w).search(t)) for w, t, _ in WORDS] == [want for *_, want in WORDS]


WORDS = [  # (banned word, text, found): the words of the shared logs' word-avoidance prompts
    ("tack", "change tack now", True),
    ("base", "the baseline state", False),
    ("base", "based on the current landscape", True),
    ("content", "a contentious claim", False),
    ("capacity", "local capacities", True),
    ("flip", "it flipped", True),
    ("monitor", "monitoring", True),
    ("switch over", "switch overs", True),
]


# mint (data/outcomes, gpt-3.5-turbo-0613, MBPP task 60): the same assertion fails four times in a row; the
# observation's first line is the harness's "Observation:" header
def observation(cell: int, got: str, left: int) -> str:
    return (
        "Observation:\n---------------------------------------------------------------------------\n"
        "AssertionError                            Traceback (most recent call last)\n"
        f'Cell In[{cell}], line 8\n----> 8 assert volume == 18, "Expected 18 but got {{}}".format(volume)\n\n'
        f"AssertionError: Expected 18 but got {got}\nYou have {left} steps left and 2 chances to propose solution left.\n"
    )


def test_a_loop_quotes_the_line_that_names_the_error(tmp_path: Path) -> None:
    s = Session("mint").add(
        "user", "Write a python function to find the maximum volume of a cuboid with given sum of sides."
    )
    for cell, (code, got) in enumerate(
        [("side1 = sum_of_sides / 3", "18.962962962962965"), ("volume = round(volume)", "19")] * 2, start=1
    ):
        s.calls += 1
        s.add(
            "assistant",
            "",
            tool_calls=[
                {
                    "id": f"c{cell}",
                    "type": "function",
                    "function": {"name": "execute", "arguments": json.dumps({"code": code})},
                }
            ],
        )
        s.add("tool", observation(cell, got, 5 - cell), tool_call_id=f"c{cell}", is_error=True)
    found, _ = run(tmp_path, s)
    loops = [(f["rule"], f["quote"]) for f in found if f["kind"] == "loop"]
    assert loops == [("same_error_4_times (execute)", "AssertionError: Expected 18 but got 18.962962962962965")]
    assert all(verbatim(tmp_path, f) for f in found)


def test_a_view_past_a_read_tools_first_2000_lines_is_no_reread(tmp_path: Path) -> None:
    """Crush (dbos-transact-golang, reader5 judged it false): ``view`` of workflows_test.go with no range shows lines
    1-2000, the later ``view`` with ``offset: 2000`` reads on; a second view with no range, or one of lines 100-300, is
    read again."""
    path = "/Users/max/dbos/workflows_test.go"
    body = "<file>\n" + "".join(f"{i}|line {i}\n" for i in range(1, 40)) + "</file>"
    s = Session("view").add("user", "add a new test in dbos/workflows_test.go")
    s.call("view", {"file_path": path}, body)
    s.call("view", {"file_path": path, "offset": 2000}, body)
    (tmp_path / "on").mkdir()
    found, _ = run(tmp_path / "on", s)
    assert [f for f in found if f["kind"] == "redundant_work"] == []
    s.call("view", {"file_path": path, "offset": 100, "limit": 200}, body)
    (tmp_path / "again").mkdir()
    found, _ = run(tmp_path / "again", s)
    assert [(f["rule"], f["positions"]) for f in found if f["kind"] == "redundant_work"] == [
        ("reread_unchanged", [1, 5])
    ]


def test_not_seeing_the_point_is_an_opinion_not_a_repeat() -> None:
    """agentv (Codex, reader5 judged it false): "I don't see the point of multiple runs" asks why, it reports no
    failure; "I don't see the change" does."""
    from forensics.analyzers.problems.repeat_words import REPEATED

    assert not REPEATED.search("what's the purpose of multiple runs though ... I don't see the point of multiple runs")
    assert not REPEATED.search("i don't see why we need a second folder")
    assert REPEATED.search("I don't see the change in the sidebar")
    assert REPEATED.search("I can't see any difference")


def test_a_relative_file_read_from_another_directory_is_another_file(tmp_path: Path) -> None:
    """claude_code Nomos (fixtures/real, redund6 judged it false): ``cat opencode.jsonc`` after ``cd`` into one clone,
    then after ``cd`` into another, reads two files; the same read from the same directory again is a re-read."""
    config = '{\n  "$schema": "https://opencode.ai/config.json",\n  "plugin": ["opencode-pty"]\n}\n'
    s = Session("clones").add("user", "is the entire.io opencode setup in this repo or another clone?")
    s.call(
        "Bash", {"command": 'MAIN="/c/repos/nomos-1"; cd "$MAIN" && cat opencode.jsonc 2>/dev/null | head -40'}, config
    )
    s.call("Bash", {"command": 'cd "/c/repos/nomos" && cat opencode.jsonc 2>/dev/null | head -30'}, config)
    s.call("Bash", {"command": 'cd "/c/repos/nomos" && cat opencode.jsonc 2>/dev/null | head -30'}, config)
    s.add("assistant", "The opencode setup lives in the other clone, repos/nomos.")
    found, _ = run(tmp_path, s)
    assert [(f["rule"], f["positions"]) for f in found if f["kind"] == "redundant_work"] == [
        ("same_action_same_result (Bash)+reread_unchanged", [3, 5])
    ]


def test_the_last_lines_of_a_head_are_the_lines_read() -> None:
    """kimi-cli (scikit-learn 26323): ``head -n 310 f | tail -n 40`` reads lines 271-310, not 1-310."""
    from forensics.analyzers.problems.actions import lines_read

    cmd = "cd /testbed && head -n {} ./sklearn/compose/_column_transformer.py | tail -n {}"
    assert lines_read(json.dumps({"command": cmd.format(310, 40)})) == (271, 310)
    assert lines_read(json.dumps({"command": cmd.format(305, 35)})) == (271, 305)
    assert lines_read(json.dumps({"command": "head -50 a.py | tail -n +10"})) == (10, 50)
    assert lines_read(json.dumps({"command": "head -50 a.py | tail"})) is None


def test_a_search_asked_again_is_no_redundant_work(tmp_path: Path) -> None:
    """opencode dark-factory (fixtures/real, redund6 judged it unclear): ``glob **/package.json`` asked again in a second
    survey batch with the same one-line answer is neither a file re-read nor a failing command re-run (GUIDE §5); the
    same search three times is a loop still, and a file read twice stays redundant."""
    found_one = "/Users/alex/repos/vfp/dark-factory/.opencode/package.json"
    glob = {"pattern": "**/package.json", "path": "/Users/alex/repos/vfp/dark-factory"}
    s = Session("survey").add("user", "Please analyze this codebase and create an AGENTS.md file")
    s.call("glob", glob, found_one)
    s.call("bash", {"command": "git ls-files"}, ".gitignore\nAGENTS.md\nREADME.md\nopencode.jsonc\n")
    s.call("glob", glob, found_one)
    s.call("bash", {"command": "rg -n opencode README.md | sort"}, "12: opencode is the agent of this repository")
    s.call("bash", {"command": "rg -n opencode README.md | sort"}, "12: opencode is the agent of this repository")
    s.add("assistant", "I will write AGENTS.md now.")
    (tmp_path / "twice").mkdir()
    found, _ = run(tmp_path / "twice", s)
    assert [f for f in found if f["kind"] in ("redundant_work", "loop")] == []
    s.call("glob", glob, found_one)
    (tmp_path / "thrice").mkdir()
    found, _ = run(tmp_path / "thrice", s)
    assert [(f["kind"], f["rule"]) for f in found if f["kind"] in ("redundant_work", "loop")] == [
        ("loop", "same_action_3_times (glob)")
    ]


def test_a_state_the_agents_last_edit_wrote_needs_no_new_look(tmp_path: Path) -> None:
    """pi large-session (fixtures/real, redund6 judged it false): asked "what about the tool and user bgs??" right after
    its edit wrote them, the reply says they are already correct and cites the values the edit holds: no claim built on
    nothing. The same words citing what no change of the last exchange wrote still are."""
    old = '\t\t"green": "#5fff00",\n\t\t"userMsgBg": "#343541",\n\t\t"toolPendingBg": "#282832"'
    new = '\t\t"green": "#b5bd68",\n\t\t"userMsgBg": "#343541",\n\t\t"toolPendingBg": "#282832"'

    def session(sid: str, reply: str) -> Session:
        s = Session(sid).add("user", "green diff is #b5bd68\nuser bg 343541\ntool pending bg 282832")
        s.call(
            "edit",
            {"path": "src/theme/dark.json", "oldText": old, "newText": new},
            "Successfully replaced text in src/theme/dark.json.",
        )
        s.add("assistant", "Perfect! Updated the dark theme with all your specified colors.")
        s.add("user", "what about the tool and user bgs??")
        return s.add("assistant", reply)

    wrote = session(
        "wrote",
        "You're right - those are already correct in the theme! They're in the `vars` section:\n\n"
        "- `userMsgBg`: `#343541` ✓\n- `toolPendingBg`: `#282832` ✓",
    )
    other = session("other", "Those are already correct in the theme: `src/theme/light.json` sets `toolBg` too.")
    found, _ = run(tmp_path, wrote, other)
    assert [(f["native_id"], f["rule"]) for f in found if f["kind"] == "gave_up_or_false_success"] == [
        ("other", "claimed_without_acting")
    ]
