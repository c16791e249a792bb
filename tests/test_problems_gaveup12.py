"""Round 18 of the problem detectors (issue 41): the ninth blind round read as dev. Its misses of gave_up_or_false_success,
read in their conversations: a request the agent stopped on without an answer (OpenCode sessions of empty replies, a
turn ending on "Let me check ..." with nothing done, a greeting returned instead of the summary announced):
``stopped_without_answer`` (``problems/stopped.py``). Each case is a snippet of its real conversation's shape, with the
near misses read while the rule was written beside it; the last test pins the rule's findings on the real Crush and
OpenCode stores of ``fixtures/real``."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from forensics.analyzers import load
from forensics.analyzers.base import Context
from forensics.analyzers.problems.stopped import RULE, ending
from forensics.analyzers.problems.turns import Turn
from forensics.analyzers.problems.unwritten import RULE as UNWRITTEN
from forensics.analyzers.schema import load_config
from forensics.ingestion.run import ingest
from forensics.kernel.selection import Selection
from tests.test_problems import Session, run, verbatim

INIT = "Please analyze this codebase and create a OpenCode.md file containing build commands and code style."


def ask(text: str) -> Turn:
    return Turn("c", 0, text, True, True, True, 0, len(text))


def stops(tmp: Path, s: Session) -> list[list[int]]:
    found = [f for f in run(tmp, s)[0] if f["rule"] == RULE]
    assert all(f["kind"] == "gave_up_or_false_success" and verbatim(tmp, f) for f in found)
    return [f["positions"] for f in found]


def working(sid: str) -> Session:
    """A run whose agent makes calls and answers in words."""
    s = Session(sid).add("user", "what is in this project?")
    s.call("view", {"file_path": "/repo/README.md"}, "# Utils\nA common utilities library for Go.")
    return s.add("assistant", "A Go utilities library: conversions, strings and slices.")


def test_how_a_turn_ends_without_an_answer() -> None:
    """Empty; an announcement the reply opens on (not one after an answer, not one that names what it needs from the
    person, not one that carries an edit's body); an offer of help and nothing else after calls. Never a reply to
    "hi"."""
    request = ask("add the readme to the conversion package")
    assert ending("", True, request) == "empty"
    assert ending("Okay, I will analyze the codebase and create the `OpenCode.md", False, request) == "announced"
    said = "Now I'll examine the project structure. Let me check for Cursor rules and examine some C# files."
    assert ending(said, False, request) == "announced"
    assert (
        ending("I can’t turn on automatic acceptance. I’ll keep walking through changes as we go.", False, request)
        == ""
    )
    said = "Okay, I will address the pylint errors.\n\nFirst, I need the contents of `.pylintrc` to ignore `notes.md`."
    assert ending(said, False, request) == ""  # aider asks for a file to be added
    assert ending("I will patch it.\n*** Begin Patch\n*** Update File: parser.py\n+x", True, request) == ""
    greeting = "Hello! I'm Crush. How can I help you with your software engineering tasks today?"
    assert ending(greeting, True, request) == "offer"
    assert ending(greeting, False, request) == ""  # no call: it may answer a command typed into the prompt
    assert ending("I've saved the document as `notes.md`.\n\nWhat would you like to do next?", True, request) == ""
    assert ending("```python\nprint(1)\n```", False, request) == ""  # code alone is an answer
    assert ending("", True, ask("hi")) == ""
    assert ending("", True, ask("what?")) == "empty"  # a short question about the last reply asks for it


def test_empty_replies_to_the_request_until_the_run_ends(tmp_path: Path) -> None:
    """OpenCode kashifkhan0771/utils (r9, labeled [62, 63, 64, 65, 66]): after reading README.md the turn ends on an
    empty reply; the request is sent twice more and gets empty replies; the run ends there."""
    s = working("readme").add("user", "add the readme.md and the examples to the packages")
    s.call("view", {"file_path": "/repo/README.md"}, "# Utils").add("assistant", "")
    s.add("user", "Add the readme to the conversion package and the example").add("assistant", "")
    s.add("user", "Add the readme to the conversion package").add("assistant", "")
    assert stops(tmp_path, s) == [[4, 7, 8, 9, 10, 11]]  # the request, each empty reply, the pushes


def test_an_announcement_then_a_new_request_left_the_first_undone(tmp_path: Path) -> None:
    """Crush Graphlight (r8, labeled [11]): the CRUSH.md turn reads files and ends on "Let me check for Cursor rules
    ..."; the person asks something else; no CRUSH.md is ever written."""
    s = working("init").add("user", INIT)
    s.call("ls", {"path": "/repo"}, "- /repo/\n  - src/")
    s.add("assistant", "Now I'll examine the project structure. Let me check for Cursor rules and examine some files.")
    s.add("user", "Nothing happens when I run the exe. Analyse the code deeply and identify all issues.")
    s.call("view", {"file_path": "/repo/src/Program.cs"}, "class Program {}")
    s.add("assistant", "Program.cs never starts the message loop: Application.Run is missing.")
    assert stops(tmp_path, s) == [[7]]


def test_one_stop_pushed_past_and_answered_is_the_person_repeating_alone(tmp_path: Path) -> None:
    """Crush Starmel (r8, labeled user_repeated [0, 1, 2], no gave_up): an empty reply to the CRUSH.md prompt, the
    prompt sent again, and the agent does it. Codex ocodex (r8): the same after an offer of help."""
    s = working("again").add("user", INIT).add("assistant", "").add("user", INIT)
    s.call("write", {"file_path": "/repo/OpenCode.md", "content": "# Build"}, "File successfully written")
    s.add("assistant", "Wrote OpenCode.md with the build commands and the code style.")
    assert stops(tmp_path, s) == []


def test_an_empty_reply_that_carries_reasoning_is_no_silence(tmp_path: Path) -> None:
    """Claude Code entireio (r4, ``fixtures/real``): the log ends on a message whose only block is the thinking
    ("Perfect! All tests are passing now."): its words were cut, not left out. Without the reasoning read, [19]
    would be an empty reply ending the run."""
    from tests.conftest import ROOT

    real = tmp_path / "cc"
    real.mkdir()
    shutil.copy(ROOT / "fixtures/real/claude_code/entireio+cli/00/c9e2351016/3/full.jsonl", real / "full.jsonl")
    ingest([real], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        last = con.execute(
            "SELECT m.position, m.content, (SELECT count(*) FROM events e WHERE e.conversation_id = m.conversation_id "
            "AND e.position = m.position AND e.kind = 'reasoning') FROM messages m WHERE m.on_main_path "
            "ORDER BY m.position DESC LIMIT 1"
        ).fetchone()
        stopped = con.execute(f"SELECT count(*) FROM problem_findings WHERE rule = '{RULE}'").fetchone()
    finally:
        con.close()
    assert last == (19, "", 1)
    assert stopped == (0,)


def test_the_rule_on_the_real_crush_and_opencode_stores(tmp_path: Path) -> None:
    """Every ``stopped_without_answer`` finding on the six Crush and OpenCode stores of ``fixtures/real`` (25
    conversations): 11 findings on 10 of them, six of them at the r8/r9 labels; the five others read as a reviewer
    would (4 true, 1 arguable: round 18 in docs/failures-evaluation.md)."""
    from tests.conftest import ROOT

    real = tmp_path / "crush"
    shutil.copytree(ROOT / "fixtures" / "real" / "crush", real)  # a copy: SQLite may write beside a store it opens
    ingest([real], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        rows = con.execute(
            "SELECT split_part(s.path, '/crush/', 2), c.native_id, p.positions FROM problem_findings p "
            "JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id) "
            f"WHERE p.rule = '{RULE}' ORDER BY 1, 2, 3"
        ).fetchall()
        convs = con.execute("SELECT count(*) FROM conversations").fetchone()
    finally:
        con.close()
    found = [(src.split("/")[0], nid[:8], list(pos)) for src, nid, pos in rows]
    assert convs == (25,)
    assert found == [
        ("AgustinJimenez+llama_cpp_rs_chat", "1432fb8f", [13]),  # labeled [13, 15, 17]: a greeting after reading
        ("kashifkhan0771+utils", "12fb5660", [0, 29]),  # arguable: twelve test edits, then an empty reply ends the run
        ("kashifkhan0771+utils", "bd9a6907", [8, 17]),  # two patches fail to parse, an empty reply ends the run
        ("kashifkhan0771+utils", "d65ab244", [59, 62, 63, 64, 65, 66]),  # labeled [62, 63, 64, 65, 66]
        ("mule-ai+mule", "0b9348a0", [0, 5, 6, 7]),  # "Update this to use htmx" twice, two empty replies, the end
        ("mule-ai+mule", "1ff755c6", [0, 1, 2, 3, 4, 5]),  # labeled [1, 2, 3, 5]
        ("mule-ai+mule", "27f6de6a", [1]),  # "Okay, I will analyze the codebase and create the `OpenCode.md", the end
        ("mule-ai+mule", "964dbea7", [1]),  # "Okay, I will analyze the codebase and create or update ...", the end
        ("mule-ai+mule", "f2ca33b8", [2, 54, 55, 56]),  # labeled [54, 55, 56]
        ("pathum1+Graphlight", "357d4b13", [11]),  # labeled [11]
        ("pathum1+Graphlight", "357d4b13", [29, 30, 33, 34, 35, 36, 37, 38, 43, 44, 47]),  # labeled [29, 35, 37, 43]
    ]


def test_a_file_claimed_written_that_nothing_before_names(tmp_path: Path) -> None:
    """aider mozgoslav (r9, labeled [29]): "the report was saved at `./.claude/agent-reports/analyzer-….md`" while
    aider had written the edit to a file named "Topology". Near misses: the file a call wrote; a future "will be saved
    to"; a run whose agent writes nothing with its tools."""
    s = Session("claims").add("user", "write the analysis report")
    s.call("write", {"file_path": "/repo/docs/plan.md", "content": "# Plan"}, "File successfully written")
    s.add("assistant", "Saved the plan to `docs/plan.md`. The report will be saved to `reports/later.md`.")
    s.add("user", "where is the report?")
    s.add("assistant", "The report file was saved at the relative path `./reports/analyzer-d7f3a9b2.md`.")
    talk = Session("talk").add("user", "write the analysis report")
    talk.call("view", {"file_path": "/repo/README.md"}, "# Utils")
    talk.add("assistant", "The report was saved to `reports/analysis.md`.")
    found = [(f["native_id"], f["positions"]) for f in run(tmp_path, s, talk)[0] if f["rule"] == UNWRITTEN]
    assert found == [("claims", [5])]


def test_the_file_rule_on_the_real_aider_history(tmp_path: Path) -> None:
    """The real aider history of mozgoslav (``fixtures/real``): one finding, the label's [29] (quoted in Russian); the
    run's own later report ([31], written by an edit to `./analyzer-report-dictation-hotkey.md`) is none."""
    from tests.conftest import ROOT

    real = tmp_path / "aider"
    real.mkdir()
    shutil.copy(
        ROOT / "fixtures/real/aider/AlexShchuka+mozgoslav/.aider.chat.history.md", real / ".aider.chat.history.md"
    )
    ingest([real], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        rows = con.execute(
            f"SELECT positions, quote FROM problem_findings WHERE rule = '{UNWRITTEN}' ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert [(list(p), q[:40]) for p, q in rows] == [([29], "Файл отчёта был сохранён по относительно")]
