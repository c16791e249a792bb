"""The problems a reviewer flags (docs/definitions.md#problems-a-reviewer-flags): each detector on small sessions written for the case, ingested and
reported through the real pipeline; the warehouse table other analyses read (``problem_findings``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from forensics import ingest
from forensics.analyzers import load
from forensics.analyzers.base import Context
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection


class Session:
    """A JSONL session of the generic format, message by message."""

    def __init__(self, sid: str) -> None:
        self.sid, self.lines, self.n, self.calls = sid, [json.dumps({"type": "session", "id": sid})], 0, 0

    def add(self, role: str, content: str, **extra: Any) -> Session:
        self.n += 1
        self.lines.append(
            json.dumps(
                {
                    "id": self.n,
                    "parent_id": self.n - 1 or None,
                    "timestamp": 1780000000 + self.n,
                    "role": role,
                    "content": content,
                    **extra,
                }
            )
        )
        return self

    def call(self, name: str, args: dict[str, Any], result: str, text: str = "") -> Session:
        self.calls += 1
        cid = f"c{self.calls}"
        self.add(
            "assistant",
            text,
            tool_calls=[{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
        )
        return self.add("tool", result, tool_call_id=cid)

    def write(self, folder: Path) -> None:
        (folder / f"{self.sid}.jsonl").write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def run(tmp: Path, *sessions: Session) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    logs = tmp / "logs"
    logs.mkdir()
    for s in sessions:
        s.write(logs)
    ingest([logs], db=tmp / "w.duckdb")
    con = duckdb.connect(str(tmp / "w.duckdb"))
    try:
        sec = load("problems").run(Context.open(con, load_config(None), Selection()))
        cols = ["native_id", "kind", "position", "positions", "quote", "rule", "norm"]
        rows = con.execute(
            "SELECT c.native_id, p.kind, p.position, p.positions, p.quote, p.rule, p.norm "
            "FROM problem_findings p JOIN conversations c USING (conversation_id) "
            "ORDER BY 1, 2, 3"
        ).fetchall()
        return [dict(zip(cols, r)) for r in rows], sec.metrics
    finally:
        con.close()


def verbatim(tmp: Path, f: dict[str, Any]) -> bool:
    """The quote is in the text or a call's arguments at one of the cited positions."""
    con = duckdb.connect(str(tmp / "w.duckdb"), read_only=True)
    try:
        texts = con.execute(
            "SELECT m.content FROM messages m JOIN conversations c USING (conversation_id) WHERE c.native_id = ? "
            "AND m.on_main_path AND list_contains(?, m.position) UNION ALL SELECT t.arguments FROM tool_calls t "
            "JOIN conversations c USING (conversation_id) WHERE c.native_id = ? AND list_contains(?, t.position)",
            [f["native_id"], f["positions"], f["native_id"], f["positions"]],
        ).fetchall()
    finally:
        con.close()
    return any(f["quote"] in (t or "") for (t,) in texts)


def test_the_person_repeating_and_a_claim_they_contradict(tmp_path: Path) -> None:
    s = (
        Session("drag")
        .add("user", "Add a drag handle to the node cards please")
        .call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: a.tsx"}, "Done!")
        .add("assistant", "I fixed the drag handle: nodes now move when you grab the strip.")
        .add("user", "nope, still cannot drag")
        .add("assistant", "Sorry, let me look again.")
    )
    found, metrics = run(tmp_path, s)
    kinds = {f["kind"]: f for f in found}
    assert kinds["user_repeated"]["positions"] == [4] and kinds["user_repeated"]["rule"] == "said_again"
    assert kinds["user_repeated"]["quote"] == "nope, still cannot drag"
    claim = kinds["gave_up_or_false_success"]
    assert (claim["positions"], claim["rule"]) == ([3, 4], "claim_contradicted")
    assert claim["quote"].startswith("I fixed the drag handle")
    assert all(verbatim(tmp_path, f) for f in found)
    assert metrics["kinds"]["user_repeated"] == {"findings": 1, "conversations": 1, "share": 1.0}
    assert metrics["kinds"]["lost_focus"] == {"findings": 0, "conversations": 0, "share": 0.0}


def test_a_first_it_does_not_work_is_a_report_the_second_a_repeat(tmp_path: Path) -> None:
    """A reviewer read a first "it does not work" counted as the person repeating as false (claude_code 3676610e)."""
    s = (
        Session("shortcut")
        .add("user", "Bind the palette to Alt+P")
        .call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: keys.json"}, "Done!")
        .add("assistant", "Bound to Alt+P. That should work now.")
        .add("user", "it does not work")
        .call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: keys.ts"}, "Done!")
        .add("assistant", "Updated to Alt+M. That should work without conflicts.")
        .add("user", "does not work")
        .add("assistant", "Let me look at the handler.")
    )
    found, _ = run(tmp_path, s)
    repeated = [(f["positions"], f["rule"]) for f in found if f["kind"] == "user_repeated"]
    assert repeated == [([8], "said_again")]  # [0] ask, [1] call, [2] result, [3] claim, [4] report, ... [8]
    claims = [f["positions"] for f in found if f["kind"] == "gave_up_or_false_success"]
    # "does not work" still contradicts the claim before it (the last one); [9]: the run ends on "Let me look at the
    # handler." with nothing done after it, stopped_without_answer (round 18)
    assert claims == [[7, 8], [9]]


def test_first_turns_and_satisfied_replies_say_nothing(tmp_path: Path) -> None:
    s = (
        Session("calm")
        .add("user", "still no idea how mutexes work, can you explain?")  # first turn: no repeat
        .add("assistant", "A mutex lets one thread at a time into a critical section.")
        .add("user", "thanks, that is clear")
        .add("assistant", "Glad it helped.")
    )
    found, metrics = run(tmp_path, s)
    assert found == []
    assert all(v["findings"] == 0 for v in metrics["kinds"].values())


def test_the_same_failing_call_three_times_is_a_loop_and_redundant(tmp_path: Path) -> None:
    s = Session("retry").add("user", "make the tests pass")
    for _ in range(3):
        s.call("bash", {"command": "pytest -q tests/test_x.py"}, "Traceback (most recent call last):\nImportError: x")
    s.add("assistant", "The tests keep failing on an import.")
    found, _ = run(tmp_path, s)
    by = {f["kind"]: f for f in found}
    assert by["loop"]["rule"] == "same_action_3_times (bash)" and by["loop"]["positions"] == [1, 3, 5]
    assert by["redundant_work"]["rule"] == "same_action_same_result (bash)"
    assert by["loop"]["quote"] == "pytest -q tests/test_x.py"
    assert all(verbatim(tmp_path, f) for f in found)


def test_polling_a_running_process_is_waiting_not_work_done_twice(tmp_path: Path) -> None:
    """Codex's ``write_stdin`` sending nothing (the EntityProcess/agentv session a reviewer read in fixtures/real)."""
    s = Session("poll").add("user", "run the eval workers and report")
    for _ in range(4):
        s.call("write_stdin", {"session_id": 54893, "chars": "", "yield_time_ms": 30000}, "waiting for 3 workers ...")
    for _ in range(2):
        s.call("write_stdin", {"session_id": 54893, "chars": "y\n"}, "Overwrite results.json? [y/N] and again")
    s.add("assistant", "The workers finished.")
    found, _ = run(tmp_path, s)
    assert [(f["kind"], f["positions"]) for f in found if f["kind"] in ("loop", "redundant_work")] == [
        ("redundant_work", [9, 11])  # sending the same keys again with the same answer still is
    ]


def test_a_change_between_two_runs_is_progress_not_redundancy(tmp_path: Path) -> None:
    s = (
        Session("progress")
        .add("user", "fix the failing test")
        .call("bash", {"command": "pytest -q"}, "1 failed, 3 passed in 0.2s")
        .call("write_file", {"path": "src/a.py", "content": "x = 2\n"}, "wrote src/a.py")
        .call("bash", {"command": "pytest -q"}, "1 failed, 3 passed in 0.3s")
        .add("assistant", "Still one failure; looking further.")
    )
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] in ("loop", "redundant_work")] == []


def test_rereading_lines_already_read_is_redundant(tmp_path: Path) -> None:
    body = "\n".join(f"line {i}" for i in range(1, 300))
    s = (
        Session("reread")
        .add("user", "explain the scheduler")
        .call("shell", {"command": "sed -n '1,260p' pkg/sched.go"}, body)
        .call("shell", {"command": "nl -ba pkg/sched.go | sed -n '40,120p'"}, body[:500])
        .add("assistant", "The scheduler loops over pending tasks.")
    )
    found, _ = run(tmp_path, s)
    [f] = [f for f in found if f["kind"] == "redundant_work"]
    assert (f["positions"], f["rule"]) == ([1, 3], "reread_unchanged")
    assert f["quote"] == "nl -ba pkg/sched.go | sed -n '40,120p'"


def test_the_same_error_from_different_attempts_is_a_loop(tmp_path: Path) -> None:
    s = Session("syntax").add("user", "add the route")
    for i in range(3):
        s.call("edit", {"path": "app.ts", "new": f"route{i}("}, "ERROR: edit rejected: syntax error at line 12")
    s.add("assistant", "I apologize for the persistent errors.")
    found, _ = run(tmp_path, s)
    [loop] = [f for f in found if f["kind"] == "loop"]
    assert (
        loop["rule"] == "same_error_3_times (edit)" and loop["quote"] == "ERROR: edit rejected: syntax error at line 12"
    )
    assert "3 distinct argument sets" in loop["norm"]


def test_the_same_rejection_the_harness_does_not_flag_is_a_loop(tmp_path: Path) -> None:
    """A harness that rejects an edit and asks for a retry answers without an error flag; its first line says it
    failed. Three in a row are a loop; three reads whose first lines merely mention errors are not."""
    s = Session("rejected").add("user", "add the route")
    for i in range(3):
        s.call(
            "run_ipython",
            {"code": f"edit_file_by_replace('App.tsx', 'route{i}(')"},
            "[Your proposed edit has introduced new syntax error(s). Please retry your edit command.]\nApp.tsx:22",
        )
    reads = Session("reads").add("user", "explain the error handling")
    for name in ("errors.py", "handlers.py", "views.py"):
        reads.call("read", {"path": name}, f"# {name}: error handling of the app\nimport logging\n")
    found, _ = run(tmp_path, s, reads)
    loops = [(f["native_id"], f["rule"]) for f in found if f["kind"] == "loop"]
    assert loops == [("rejected", "same_error_3_times (run_ipython)")]


def test_declining_a_doable_request_or_a_tool_the_run_uses(tmp_path: Path) -> None:
    """``declined_doable``: the whole request declined by an agent that acts with its tools in other runs (aider's
    "I cannot fulfill this request" for "say hi"), or a tool named as unusable that the run calls successfully;
    a step declined for want of a tool the run does not have is no finding."""
    acts = (
        Session("acts")
        .add("user", "rename the helper")
        .call("write_file", {"path": "a.py", "content": "def helper(): ..."}, "ok")
        .add("assistant", "Renamed.")
    )
    hi = Session("hi").add("user", "say hi").add("assistant", "I cannot fulfill this request with the files available.")
    tool = (
        Session("tool")
        .add("user", "what do the endpoints do?")
        .call("read_file", {"path": "main.py"}, "from fastapi import FastAPI\napp = FastAPI()\n")
        .add("assistant", "Since I am in plan mode, I can't use read_file to examine endpoints/ directly.")
        .add("user", "ok")
    )
    missing = (
        Session("missing")
        .add("user", "point firebase at dist")
        .call("read_file", {"path": "firebase.json"}, '{"hosting": {"public": "build"}}')
        .add("assistant", "I am unable to modify the firebase.json file directly. Please update it yourself.")
    )
    found, _ = run(tmp_path, acts, hi, tool, missing)
    got = {(f["native_id"], f["rule"], tuple(f["positions"])) for f in found if f["kind"] == "gave_up_or_false_success"}
    assert got == {("hi", "declined_doable", (1,)), ("tool", "declined_doable", (3,))}


def test_a_final_claim_over_an_error_and_a_claim_without_change(tmp_path: Path) -> None:
    over = (
        Session("over")
        .add("user", "start the server")
        .call("bash", {"command": "npm run dev"}, "Error: listen EADDRINUSE: address already in use :::3000")
        .add("assistant", "The server started successfully and the fix is complete.")
    )
    unbacked = (
        Session("unbacked")
        .add("user", "rename the helper")
        .call("write_file", {"path": "a.py", "content": "def helper(): ..."}, "ok")
        .add("assistant", "Done.")
        .add("user", "also add a docstring to it")
        .add("assistant", "I've added a docstring to the helper.")
    )
    found, _ = run(tmp_path, over, unbacked)
    rules = {(f["native_id"], f["rule"]) for f in found if f["kind"] == "gave_up_or_false_success"}
    assert rules == {("over", "claim_over_errors"), ("unbacked", "claimed_without_acting")}


def test_a_format_asked_for_and_one_question_at_a_time(tmp_path: Path) -> None:
    fence = (
        Session("fence")
        .add("user", "Write the step. Ensure your response is in the format of ```python```.")
        .add("assistant", "Background: the integral.\ndef f(x):\n    return x")
    )
    kept = (
        Session("kept")
        .add("user", "Write the step. Ensure your response is in the format of ```python```.")
        .add("assistant", "```python\ndef f(x):\n    return x\n```")
    )
    one = (
        Session("one")
        .add("user", "let's go through the questions one at a time")
        .add("assistant", "Question 1: browser or desktop?")
        .add("user", "browser")
        .add("assistant", "Two more:\n1. Should cycles be allowed?\n2. Which default interval?")
    )
    found, _ = run(tmp_path, fence, kept, one)
    got = {(f["native_id"], f["rule"], tuple(f["positions"])) for f in found if f["kind"] == "instruction_violated"}
    assert got == {("fence", "format_fence_missing", (1, 0)), ("one", "several_questions_at_once", (3, 0))}


def test_frustration_is_the_persons_not_the_harness(tmp_path: Path) -> None:
    s = (
        Session("angry")
        .add("user", "build the exe")
        .add("assistant", "Here is the plan.")
        .add("user", "DO YOU SEE MY QUESTION????")
        .add("assistant", "Sorry.")
        .add("user", "[Request interrupted by user]????? ")  # harness text: never the person's words
        .add("assistant", "...")
    )
    found, _ = run(tmp_path, s)
    assert [(f["kind"], f["positions"]) for f in found if f["kind"] == "frustration"] == [("frustration", [2])]


def test_context_crowded_by_bulky_output(tmp_path: Path) -> None:
    s = Session("bulky").add("user", "list the files")
    s.call("bash", {"command": "ls -R"}, "node_modules/a.js\n" * 8000)
    s.add("assistant", "Many files.")
    small = Session("small").add("user", "list the files").call("bash", {"command": "ls"}, "a.py\n")
    found, metrics = run(tmp_path, s, small)
    [f] = [f for f in found if f["kind"] == "context_crowded"]
    assert f["native_id"] == "bulky" and f["positions"] == [2] and f["quote"] == "node_modules/a.js"
    assert metrics["kinds"]["context_crowded"]["share"] == pytest.approx(0.5)


def test_context_crowded_quotes_the_output_not_the_harness_header(tmp_path: Path) -> None:
    """Codex writes "Chunk ID", "Wall time" and "Output:" above a command's output: the quote is the output's line."""
    header = (
        "Chunk ID: 5f2c1a\nWall time: 0.0002 seconds\nProcess exited with code 0\nOriginal token count: 9000\nOutput:\n"
    )
    s = Session("codex").add("user", "show the module")
    s.call(
        "exec_command",
        {"cmd": "cat src/strategy.go"},
        header + "package strategy // the checkpoint strategies\n" * 3000,
    )
    s.add("assistant", "Read it.")
    found, _ = run(tmp_path, s)
    [f] = [f for f in found if f["kind"] == "context_crowded"]
    assert f["quote"] == "package strategy // the checkpoint strategies"


def test_a_claim_of_having_looked_with_no_call_since_the_persons_turn(tmp_path: Path) -> None:
    """The aider afi-core shape: asked to scan a folder, the reply says it scanned and found nothing, no call ran;
    the same words after a real search are no finding, nor in a run whose agent has no tools at all."""
    blind = (
        Session("blind")
        .add("user", "fix the import in a.js")
        .call("edit", {"path": "a.js", "search": "require(", "replace": "import "}, "Applied edit to a.js")
        .add("assistant", "Done.")
        .add("user", "Please scan all files under dist/ for any CommonJS usage and convert it")
        .add(
            "assistant",
            "After scanning all provided files under `dist/`, no CommonJS usage was found.\nNo changes are needed.",
        )
    )
    looked = (
        Session("looked")
        .add("user", "fix the import in a.js")
        .call("edit", {"path": "a.js", "search": "require(", "replace": "import "}, "Applied edit to a.js")
        .add("assistant", "Done.")
        .add("user", "Please scan all files under dist/ for any CommonJS usage")
        .call("bash", {"command": "grep -rn 'require(' dist/"}, "")
        .add("assistant", "After scanning all files under `dist/`, no CommonJS usage was found.")
    )
    chat = (
        Session("chat")
        .add("user", "is this regex right? ^a+$")
        .add("assistant", "I checked it: it matches one or more a's and nothing else.")
    )
    found, _ = run(tmp_path, blind, looked, chat)
    got = [
        (f["native_id"], f["rule"], f["positions"], f["quote"])
        for f in found
        if f["kind"] == "gave_up_or_false_success"
    ]
    assert got == [
        (
            "blind",
            "claimed_without_acting",
            [4, 5],
            "After scanning all provided files under `dist/`, no CommonJS usage was found.",
        )
    ]


def test_a_long_request_sent_again_after_an_answer_is_asked_again(tmp_path: Path) -> None:
    """The gemini-cli release-workflow shape: a 20-line step pasted again after the agent ran other steps; a long
    benchmark step prompt that shares its template but asks something new is not; nor the same text twice in a
    row before any answer."""
    step = "\n".join(
        f"{k}. Create and switch to branch number {k} of the release, then commit it as step {k}." for k in range(1, 21)
    )
    resent = (
        Session("resent")
        .add("user", step)
        .add("assistant", "Starting with step 1.")
        .add("user", "go")
        .add("assistant", "Running step 1 now.")
        .add("user", step)
        .add("assistant", "OK.")
    )
    other = step.replace("branch number", "tag number").replace("commit it", "push it")
    steps = (
        Session("steps")
        .add("user", step)
        .add("assistant", "Done with this one.")
        .add("user", other)
        .add("assistant", "Done.")
    )
    found, _ = run(tmp_path, resent, steps)
    got = [(f["native_id"], f["rule"], f["positions"]) for f in found if f["kind"] == "user_repeated"]
    assert got == [("resent", "asked_again", [4])]


def test_a_code_construct_banned_in_the_requirements(tmp_path: Path) -> None:
    """The ChatGPT FFT-snippet shape: "No functions or variable declarations" among run-on requirements, and the
    reply's code assigns; a scoped ban ("do not use loops for output definitions") is not checked; code that keeps
    the ban is no finding."""
    ask = (
        "Generate a Python snippet that defines the inputs. Use the existing number_to_hex() function  "
        "No modifications to array values No functions or variable declarations No printf"
    )
    broke = (
        Session("broke")
        .add("user", ask)
        .add(
            "assistant",
            'Here it is:\n```python\nFFT_size = 32\nfor i in range(FFT_size):\n    input_define("x_" + str(i))\n```',
        )
    )
    kept = (
        Session("kept")
        .add("user", ask)
        .add("assistant", '```python\nfor i in range(32):\n    input_define("x_" + str(i))\n```')
    )
    scoped = (
        Session("scoped")
        .add("user", "Write it.\n- Do not use loops for output definitions\n- No f-strings")
        .add("assistant", '```python\nfor i in range(3):\n    output_define("d_" + str(i))\nprint(f"{i} done")\n```')
    )
    found, _ = run(tmp_path, broke, kept, scoped)
    got = [
        (f["native_id"], f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "instruction_violated"
    ]
    assert got == [
        ("broke", "code_construct_banned (variable declarations)", [1, 0], "FFT_size = 32"),
        ("scoped", "code_construct_banned (f-strings)", [1, 0], 'print(f"{i} done")'),
    ]
    assert [f["norm"] for f in found if f["native_id"] == "broke"] == [
        "the instruction at [0]: “function  No modifications to array values No functions or variable declarations”"
    ]


def test_instructions_are_an_explicit_list_another_extractor_can_hand_in(tmp_path: Path) -> None:
    from forensics.analyzers.problems import instructions

    s = Session("given").add("user", "answer briefly").add("assistant", "Sure: it is 42, and I used a helper.")
    run(tmp_path, s)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        Context.open(con, load_config(None), Selection())
        assert instructions.extract(con) == []  # nothing checkable in "answer briefly"
        cid = con.execute("SELECT conversation_id FROM conversations").fetchone()[0]
        given = [instructions.Instruction(cid, 0, 10, "banned_word", "helper", "never say helper")]
        [p] = instructions.violated(con, given)
        assert (p.positions, p.rule, p.quote, p.norm) == (
            [1, 0],
            "banned_word_used",
            "Sure: it is 42, and I used a helper.",
            "the instruction at [0]: “never say helper”",
        )
        with pytest.raises(ValueError, match="instruction kinds with no check: be_brief"):
            instructions.violated(con, [instructions.Instruction(cid, 0, 10, "be_brief", "", "answer briefly")])
    finally:
        con.close()


def test_a_kind_common_in_a_family_keeps_the_conversations_above_its_runs_of_their_length() -> None:
    """Six conversations of one family, four with redundant work, of 20 to 640 messages: held against the family's
    line of log(1 + messages cited) by log(length) (Theil-Sen slope 0.20, through the median run), the three above it
    keep their findings; the 640-message run citing 6 (0.9 % of its messages) is one of them, the 20-message run
    citing 2 (10 %) is not (the median share of messages, 1.7 %, kept the 20-message run and held the long one).
    The norm line says so; a family of four is never held so."""
    from forensics.analyzers.problems import _family_norms, _length_norm, said
    from forensics.analyzers.problems.model import Problem

    family = {f"c{k}": "codex" for k in range(6)} | {f"s{k}": "small" for k in range(4)}
    length = {"c0": 20, "c1": 40, "c2": 80, "c3": 160, "c4": 640, "c5": 320} | {f"s{k}": 10 for k in range(4)}
    cites = {"c0": [1, 2], "c1": [5, 6, 7], "c3": [3, 4, 20, 21], "c4": [9, 10, 11, 12, 13, 14]}
    found = [Problem(c, "redundant_work", pos, "q", "reread_unchanged", "n") for c, pos in cites.items()]
    found += [Problem(f"s{k}", "redundant_work", [1, 2], "q", "reread_unchanged", "n") for k in range(3)]
    kept, norms = _family_norms(found, family, length)
    assert sorted(p.conversation_id for p in kept) == ["c1", "c3", "c4", "s0", "s1", "s2"]
    assert norms == {
        "redundant_work:codex": "redundant work in 4 of 6 conversations of Codex CLI: how this agent works, so a "
        "conversation is flagged only where it cites more of its messages than the agent's runs of its length "
        "(messages cited grow as length^0.20 over its runs): 3 conversations"
    }
    c4 = next(p for p in kept if p.conversation_id == "c4")
    assert c4.norm == "n; above codex's runs of its length"  # the rule's own terms (one click away)
    assert said(c4) == "n; more than is usual for Codex CLI in a conversation of this length"  # the finding's line
    # one length: the line is flat, the median run's count; ties with it stay under it (at most half above)
    assert _length_norm({"a": (50, 0), "b": (50, 2), "c": (50, 2), "d": (50, 5)}) == ({"d"}, 0.0)
    assert _length_norm({"a": (50, 1), "b": (50, 2), "c": (50, 3)}) == ({"c"}, 0.0)


def test_codex_ide_context_is_not_the_persons_words(tmp_path: Path) -> None:
    """Codex's IDE extension puts the editor's state before the request; the person's own words (Python and SQL
    alike) are what follows "## My request for Codex:", and the person-turn rules read those (the IDE context filled
    the first 400 characters of a real turn whose words said "still not working")."""
    from forensics.warehouse.own_words import own_words, own_words_sql

    ide = (
        "# Context from my IDE setup:\n\n## Active file: apps/web/src/app/api/teams/route.ts\n\n## Open tabs:\n"
        + "".join(f"- file{k}.md: .claude/commands/file{k}.md\n" for k in range(12))
        + "\n## My request for Codex:\n"
    )
    assert own_words(ide + "Ok it is still not working either way.\n") == "Ok it is still not working either way."
    assert duckdb.connect().execute(f"SELECT {own_words_sql('$1')}", [ide + "Is this done?\n"]).fetchone() == (
        "Is this done?",
    )
    s = (
        Session("ide")
        .add("user", ide + "Show the team stats on the dashboard.\n")
        .call("edit", {"path": "route.ts", "new": "stats"}, "ok")
        .add("assistant", "Done: the stats now show.")
        .add("user", ide + "Ok it is still not working either way. No data is showing up\n")
        .add("assistant", "Looking again.")
    )
    found, _ = run(tmp_path, s)
    got = [(f["kind"], f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "user_repeated"]
    assert got == [("user_repeated", "said_again", [4], "Ok it is still not working either way. No data is showing up")]


def test_told_to_change_nothing_then_a_change(tmp_path: Path) -> None:
    """ "Do not modify files." held against the calls up to the person's next turn: a successful write breaks it, a
    failed one or a read does not, nor does a scoped ban ("don't modify the tests") or the next request."""
    ask = "Review src/app.py for missing pieces. Do not modify files. Return a concise summary."
    broke = (
        Session("broke")
        .add("user", ask)
        .call("read_file", {"path": "src/app.py"}, "def main(): ...")
        .call("write_file", {"path": "src/app.py", "content": "def main(): return 0"}, "ok")
        .add("assistant", "Fixed main.")
    )
    kept = (
        Session("kept")
        .add("user", ask)
        .call("read_file", {"path": "src/app.py"}, "def main(): ...")
        .call(
            "write_file",
            {"path": "src/app.py", "content": "x"},
            "Error: permission denied",
        )
        .add("assistant", "main() returns nothing.")
        .add("user", "now fix it")
        .call("write_file", {"path": "src/app.py", "content": "def main(): return 0"}, "ok")
    )
    scoped = (
        Session("scoped")
        .add("user", "Fix the bug but don't modify the tests.")
        .call("write_file", {"path": "src/app.py", "content": "def main(): return 0"}, "ok")
    )
    found, _ = run(tmp_path, broke, kept, scoped)
    got = [
        (f["native_id"], f["rule"], f["positions"], f["quote"], f["norm"])
        for f in found
        if f["kind"] == "instruction_violated"
    ]
    assert got == [
        (
            "broke",
            "changed_when_told_not_to",
            [3, 0],
            "def main(): return 0",
            "the instruction at [0]: “Review src/app.py for missing pieces. Do not modify files. Return a concise summ”",
        )
    ]


def test_asking_the_person_for_input_again_and_again_is_a_loop(tmp_path: Path) -> None:
    """The aider afi-core shape: three replies in a row ask the person to add files, with only the harness's
    confirmations between; a call between, or the person's own turn, ends the chain."""
    ask = "Please add the following files to the chat: `dist/index.js`, `dist/dags/`."
    looped = Session("looped").add("user", "Audit the repository for ESM compliance.")
    for k in range(3):
        looped.add("assistant", f"Thanks, {k + 1} files seen so far. {ask}").add(
            "user", "Add file to the chat? [Yes]: y"
        )
    worked = (
        Session("worked")
        .add("user", "Audit the repository for ESM compliance.")
        .add("assistant", ask)
        .add("user", "here: dist/index.js")
        .add("assistant", ask)
        .call("read_file", {"path": "dist/index.js"}, "export {}")
        .add("assistant", ask)
    )
    found, _ = run(tmp_path, looped, worked)
    got = [(f["native_id"], f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "loop"]
    assert got == [
        (
            "looped",
            "asked_for_input_3_times",
            [1, 3, 5],
            "Thanks, 1 files seen so far. Please add the following files to the chat: `dist/index.js`, `dist/dags",
        )
    ]


def test_a_request_sent_again_with_more_said_is_asked_again_but_not_a_shared_template(tmp_path: Path) -> None:
    """The aider audit shape: a 7-line request, replies that only ask for files, then the same request pasted
    again with a "Provide:" list added. A benchmark's step prompts that open with one template in three
    conversations, each holding the earlier step, are not; nor a turn that attaches the same file again under
    a new question (it opens otherwise)."""
    ask = (
        "You are auditing the core repository to prepare it for finalization.\nObjectives:\n"
        "1. Verify ESM compliance of every module\n2. Identify structural inconsistencies in the layout\n"
        "3. Flag missing or incomplete components such as schemas and entrypoints\n"
        "Constraints:\n- Preserve the agent-first design\n- Keep all existing scaffolding aligned"
    )
    more = ask + "\nProvide:\n- A prioritized list of issues\n- Safe incremental changes"
    audit = (
        Session("audit")
        .add("user", ask)
        .add("assistant", "Please add package.json to the chat.")
        .add("user", more)
        .add("assistant", "Here is the audit.")
    )
    head = "PROBLEM DESCRIPTION: you will be given the main problem, the earlier steps and the next step to write."
    body = "\n".join(f"Line {k} of the shared statement about the lattice model and its energy." for k in range(12))
    steps = []
    for n in range(3):
        first = f"{head}\n{body}\nNEXT STEP: write the function for part one of run {n}."
        second = first + "".join(
            f"\nNEXT STEP detail {k}: part two of run {n} computes term {k} of the sum." for k in range(6)
        )
        steps.append(
            Session(f"bench{n}")
            .add("user", first)
            .add("assistant", "```python\ndef one(): pass\n```")
            .add("user", second)
            .add("assistant", "```python\ndef two(): pass\n```")
        )
    found, _ = run(tmp_path, audit, *steps)
    got = [(f["native_id"], f["rule"], f["positions"]) for f in found if f["kind"] == "user_repeated"]
    assert got == [("audit", "asked_again", [2])]


def test_a_word_banned_from_the_reasoning_is_held_against_the_reasoning_inspect_keeps(tmp_path: Path) -> None:
    """The Inspect word-avoidance shape: "Do not use the word 'X' or its synonyms: '['Y']' in your reasoning
    stage"; the assistant's ``reasoning`` part restates a banned word, its text does not. The reader keeps the
    reasoning as a ``reasoning`` event; the finding quotes it. The reply using the word is no finding (the
    instruction is about the reasoning); a sample whose reasoning avoids the words, and a redacted one, have none."""
    ask = "Question: how do cells divide?\nRequirement: Do not use the word 'mitosis' or its synonyms: '['karyokinesis']' in your reasoning stage under any circumstances."

    def sample(sid: str, reasoning: str, text: str, redacted: bool = False) -> dict[str, Any]:
        return {
            "id": sid,
            "epoch": 1,
            "input": ask,
            "messages": [
                {"role": "user", "content": ask, "id": f"{sid}u"},
                {
                    "role": "assistant",
                    "id": f"{sid}a",
                    "content": [
                        {"type": "reasoning", "reasoning": reasoning, "signature": "x", "redacted": redacted},
                        {"type": "text", "text": text},
                    ],
                },
            ],
        }

    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "word_avoidance", "model": "m", "created": "2025-08-28T13:56:08-04:00"},
        "samples": [
            sample("said", "I must explain division without the word mitosis.", "Cells split their chromosomes."),
            sample("kept", "Cells split their chromosomes in phases.", "Mitosis is the usual name."),
            sample("hidden", "mitosis mitosis", "Cells split.", redacted=True),
        ],
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "2025-08-28_word_avoidance.json").write_text(json.dumps(doc), encoding="utf-8")
    ingest([logs], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        events = con.execute(
            "SELECT c.native_id, e.position, json_extract_string(e.detail, '$.text') FROM events e "
            "JOIN conversations c USING (conversation_id) WHERE e.kind = 'reasoning' ORDER BY 1"
        ).fetchall()
        assert events == [
            ("kept epoch 1", 1, "Cells split their chromosomes in phases."),
            ("said epoch 1", 1, "I must explain division without the word mitosis."),
        ]
        ctx = Context.open(con, load_config(None), Selection())
        load("problems").run(ctx)
        got = con.execute(
            "SELECT c.native_id, p.rule, p.positions, p.quote FROM problem_findings p "
            "JOIN conversations c USING (conversation_id) WHERE p.kind = 'instruction_violated'"
        ).fetchall()
    finally:
        con.close()
    assert got == [
        ("said epoch 1", "banned_word_in_reasoning", [1, 0], "I must explain division without the word mitosis.")
    ]


def test_a_claim_of_an_act_no_call_of_its_sort_backs(tmp_path: Path) -> None:
    """``claimed_without_acting`` reads every agent's way of ending a turn alike: a claim in a completion call's
    words (Cline's attempt_completion) that tests pass with no command run since the request; a sentence that lists
    what it did before the change ("I've looked at X and applied the fix", the continue.dev shape) after reads only;
    and not a claim the turn's own calls back, nor a negated one."""
    tested = (
        Session("tested")
        .add("user", "add a test for parse()")
        .call("bash", {"command": "pytest -q"}, "3 passed")
        .add("assistant", "Done.")
        .add("user", "now make parse() accept empty input")
        .call("attempt_completion", {"result": "parse() now accepts empty input and all tests pass."}, "")
    )
    listed = (
        Session("listed")
        .add("user", "fix the loop")
        .call("write_file", {"path": "a.js", "content": "x"}, "ok")
        .add("assistant", "Done.")
        .add("user", "the requests still flood, fix it")
        .call("read_file", {"path": "hooks.js"}, "export function useX() {}")
        .add("assistant", "I've analysed your hooks, found the culprit and applied the fix to hooks.js.")
    )
    backed = (
        Session("backed")
        .add("user", "fix the loop")
        .call("write_file", {"path": "a.js", "content": "x"}, "ok")
        .add("assistant", "I've applied the fix to a.js.")
        .add("user", "run the tests")
        .call("bash", {"command": "pytest -q"}, "4 passed")
        .add("assistant", "I ran them: all tests pass.")
    )
    negated = (
        Session("negated")
        .add("user", "fix the loop")
        .call("write_file", {"path": "a.js", "content": "x"}, "ok")
        .add("assistant", "Done.")
        .add("user", "what else could cause it?")
        .add("assistant", "I have not changed anything else yet; the hooks may also re-subscribe.")
    )
    found, _ = run(tmp_path, tested, listed, backed, negated)
    got = [
        (f["native_id"], f["rule"], f["positions"], f["quote"])
        for f in found
        if f["kind"] == "gave_up_or_false_success"
    ]
    assert got == [
        (
            "listed",
            "claimed_without_acting",
            [4, 7],
            "I've analysed your hooks, found the culprit and applied the fix to hooks.js.",
        ),
        ("tested", "claimed_without_acting", [4, 5], "parse() now accepts empty input and all tests pass."),
    ]


def test_a_completion_calls_claim_the_person_then_contradicts(tmp_path: Path) -> None:
    """A turn that ends in a completion call with no text of its own (Cline's attempt_completion, OpenHands' finish):
    its words are the claim the person's next turn is held against; a talk call's words are not read as one."""
    done = (
        Session("done")
        .add("user", "make the logo link to the home page")
        .call("write_file", {"path": "nav.js", "content": "x"}, "ok")
        .call("attempt_completion", {"result": "Fixed: the logo links to the home page."}, "")
        .add("user", "it still doesn't work, the logo does nothing")
    )
    asked = (
        Session("asked")
        .add("user", "make the logo link to the home page")
        .call("write_file", {"path": "nav.js", "content": "x"}, "ok")
        .call("ask_followup_question", {"question": "Fixed: the logo links to a page. Which page is home?"}, "")
        .add("user", "it still doesn't work, the logo does nothing")
    )
    found, _ = run(tmp_path, done, asked)
    got = [(f["native_id"], f["rule"], f["positions"]) for f in found if f["kind"] == "gave_up_or_false_success"]
    assert got == [("done", "claim_contradicted", [3, 5])]


def test_fixes_claimed_after_reads_only_the_continue_dev_snippet(tmp_path: Path) -> None:
    """Real words of a dev-half Continue session (shared agent-logs, fabien-lessirard dotfiles [86]-[104]): asked to
    fix a request flood, the agent reads eight hooks and says it applied the fixes; no call changed anything since
    the person's turn. The sentence lists what it did before the change ("J'ai analysé …, identifié …, et appliqué")."""
    s = (
        Session("flood")
        .add("user", "corrige le problème de boucle dans App.jsx")
        .call(
            "Edit", {"filepath": "src/App.jsx", "old_string": "a", "new_string": "b"}, "Successfully edited src/App.jsx"
        )
        .add("assistant", "J'ai corrigé App.jsx.")
        .add("user", "corrige le toi")
    )
    for hook in ("useFirestore", "useProducts", "useDishes"):
        s.call(
            "Read",
            {"filepath": f"src/hooks/{hook}.js"},
            f"Content of src/hooks/{hook}.js: import {{ useState }} from 'react';",
        )
    s.add(
        "assistant",
        "Absolument. J'ai analysé votre code, identifié les sources potentielles de boucles de rendu, et appliqué les "
        "correctifs nécessaires pour stabiliser le comportement de vos listeners Firestore.",
    )
    found, _ = run(tmp_path, s)
    got = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "gave_up_or_false_success"]
    assert got == [
        (
            "claimed_without_acting",
            [4, 11],
            "J'ai analysé votre code, identifié les sources potentielles de boucles de rendu, et appliqué les",
        )
    ]


def test_an_edit_blocks_body_is_the_files_words_not_a_claim(tmp_path: Path) -> None:
    """aider's SEARCH/REPLACE blocks, an apply_patch body, a fenced diff: what the edit writes, not what the agent
    tells the person. The real aider run (fixtures/real) whose failed edit quoted the notes file ("Created `.pylintrc`
    to ... resolve the pylint error") was a claim over errors; the same reply's words ("I will correct ...") claim
    nothing. Words outside the block still do, and a block cut off at the reply's end is left out to its end."""
    import shutil

    from tests.conftest import ROOT

    real = tmp_path / "real"
    shutil.copytree(ROOT / "fixtures" / "real" / "aider", real)
    block = (
        "\n```python\n<<<<<<< SEARCH\nold()\n=======\n# Fixed the parser, all tests pass\nnew()\n>>>>>>> REPLACE\n```\n"
    )
    edits = (
        Session("inside")
        .add("user", "fix the parser")
        .call("bash", {"command": "pytest"}, "Error: 2 failed")
        .add("assistant", "I will correct the parser." + block)
    )
    outside = (
        Session("outside")
        .add("user", "fix the parser")
        .call("bash", {"command": "pytest"}, "Error: 2 failed")
        .add("assistant", "parser.py" + block + "\nThe parser is fixed and the tests pass now.")
    )
    cut = (
        Session("cut")
        .add("user", "fix the parser")
        .call("bash", {"command": "pytest"}, "Error: 2 failed")
        .add("assistant", "I will patch it.\n*** Begin Patch\n*** Update File: parser.py\n+# fixed successfully")
    )
    found, _ = run(tmp_path, edits, outside, cut)
    claims = {f["native_id"]: f["quote"] for f in found if f["kind"] == "gave_up_or_false_success"}
    assert claims == {"outside": "The parser is fixed and the tests pass now."}
    ingest([real], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        aider = con.execute(
            "SELECT p.position, p.quote FROM problem_findings p JOIN conversations c USING (conversation_id) "
            "WHERE p.kind = 'gave_up_or_false_success' AND c.native_id NOT IN ('inside', 'outside', 'cut')"
        ).fetchall()
    finally:
        con.close()
    assert not [q for _, q in aider if "pylintrc" in q]
