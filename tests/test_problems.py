"""The problems a reviewer flags (SPEC §24): each detector on small sessions written for the case, ingested and
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
        self.lines.append(json.dumps({"id": self.n, "parent_id": self.n - 1 or None, "timestamp": 1780000000 + self.n,
                                      "role": role, "content": content, **extra}))
        return self

    def call(self, name: str, args: dict[str, Any], result: str, text: str = "") -> Session:
        self.calls += 1
        cid = f"c{self.calls}"
        self.add("assistant", text, tool_calls=[{"id": cid, "type": "function",
                                                 "function": {"name": name, "arguments": json.dumps(args)}}])
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
        rows = con.execute("SELECT c.native_id, p.kind, p.position, p.positions, p.quote, p.rule, p.norm "
                           "FROM problem_findings p JOIN conversations c USING (conversation_id) "
                           "ORDER BY 1, 2, 3").fetchall()
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
            [f["native_id"], f["positions"], f["native_id"], f["positions"]]).fetchall()
    finally:
        con.close()
    return any(f["quote"] in (t or "") for (t,) in texts)


def test_the_person_repeating_and_a_claim_they_contradict(tmp_path: Path) -> None:
    s = (Session("drag").add("user", "Add a drag handle to the node cards please")
         .call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: a.tsx"}, "Done!")
         .add("assistant", "I fixed the drag handle: nodes now move when you grab the strip.")
         .add("user", "nope, still cannot drag")
         .add("assistant", "Sorry, let me look again."))
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


def test_first_turns_and_satisfied_replies_say_nothing(tmp_path: Path) -> None:
    s = (Session("calm").add("user", "still no idea how mutexes work, can you explain?")  # first turn: no repeat
         .add("assistant", "A mutex lets one thread at a time into a critical section.")
         .add("user", "thanks, that is clear")
         .add("assistant", "Glad it helped."))
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


def test_a_change_between_two_runs_is_progress_not_redundancy(tmp_path: Path) -> None:
    s = (Session("progress").add("user", "fix the failing test")
         .call("bash", {"command": "pytest -q"}, "1 failed, 3 passed in 0.2s")
         .call("write_file", {"path": "src/a.py", "content": "x = 2\n"}, "wrote src/a.py")
         .call("bash", {"command": "pytest -q"}, "1 failed, 3 passed in 0.3s")
         .add("assistant", "Still one failure; looking further."))
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] in ("loop", "redundant_work")] == []


def test_rereading_lines_already_read_is_redundant(tmp_path: Path) -> None:
    body = "\n".join(f"line {i}" for i in range(1, 300))
    s = (Session("reread").add("user", "explain the scheduler")
         .call("shell", {"command": "sed -n '1,260p' pkg/sched.go"}, body)
         .call("shell", {"command": "nl -ba pkg/sched.go | sed -n '40,120p'"}, body[:500])
         .add("assistant", "The scheduler loops over pending tasks."))
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
    assert loop["rule"] == "same_error_3_times (edit)" and loop["quote"] == "ERROR: edit rejected: syntax error at line 12"
    assert "3 distinct argument sets" in loop["norm"]


def test_a_final_claim_over_an_error_and_a_claim_without_change(tmp_path: Path) -> None:
    over = (Session("over").add("user", "start the server")
            .call("bash", {"command": "npm run dev"}, "Error: listen EADDRINUSE: address already in use :::3000")
            .add("assistant", "The server started successfully and the fix is complete."))
    unbacked = (Session("unbacked").add("user", "rename the helper")
                .call("write_file", {"path": "a.py", "content": "def helper(): ..."}, "ok")
                .add("assistant", "Done.")
                .add("user", "also add a docstring to it")
                .add("assistant", "I've added a docstring to the helper."))
    found, _ = run(tmp_path, over, unbacked)
    rules = {(f["native_id"], f["rule"]) for f in found if f["kind"] == "gave_up_or_false_success"}
    assert rules == {("over", "claim_over_errors"), ("unbacked", "claimed_without_change")}


def test_a_format_asked_for_and_one_question_at_a_time(tmp_path: Path) -> None:
    fence = (Session("fence").add("user", "Write the step. Ensure your response is in the format of ```python```.")
             .add("assistant", "Background: the integral.\ndef f(x):\n    return x"))
    kept = (Session("kept").add("user", "Write the step. Ensure your response is in the format of ```python```.")
            .add("assistant", "```python\ndef f(x):\n    return x\n```"))
    one = (Session("one").add("user", "let's go through the questions one at a time")
           .add("assistant", "Question 1: browser or desktop?")
           .add("user", "browser")
           .add("assistant", "Two more:\n1. Should cycles be allowed?\n2. Which default interval?"))
    found, _ = run(tmp_path, fence, kept, one)
    got = {(f["native_id"], f["rule"], tuple(f["positions"])) for f in found if f["kind"] == "instruction_violated"}
    assert got == {("fence", "format_fence_missing", (1, 0)), ("one", "several_questions_at_once", (3, 0))}


def test_frustration_is_the_persons_not_the_harness(tmp_path: Path) -> None:
    s = (Session("angry").add("user", "build the exe")
         .add("assistant", "Here is the plan.")
         .add("user", "DO YOU SEE MY QUESTION????")
         .add("assistant", "Sorry.")
         .add("user", "[Request interrupted by user]????? ")  # harness text: never the person's words
         .add("assistant", "..."))
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
