"""Round 5 of the problem detectors' recall (issue 41): a loop of refused edits, whatever the refusals say, and a
regression named after changes reported in any words. Each case is a snippet of its real conversation's shape, with
the near miss beside it."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.stopped import RULE as STOPPED  # synthetic runs that end on "Let me look." (round 18)
from tests.test_problems import Session, run, verbatim

CODE = "class Paginator:\n    def __iter__(self):\n        for n in self.page_range:\n            yield self.page(n)\n"


def test_three_refused_edits_in_a_row_are_a_loop_whatever_each_refusal_says(tmp_path: Path) -> None:
    """moatless django-9296: three EditCode calls, refused as "CLASS has invalid code" then twice "FUNCTION has
    invalid code" (the same-error rule sees two errors), with nothing else between."""
    s = Session("refused").add("user", "Add an __iter__ method to Paginator")
    for kind in ("CLASS", "FUNCTION", "FUNCTION"):
        s.call("EditCode", {"content": CODE}, f"{kind} has invalid code:\n\n```\n{CODE}```", "I apologize.")
    found, _ = run(tmp_path, s)
    (loop,) = [f for f in found if f["kind"] == "loop"]
    assert (loop["positions"], loop["rule"]) == ([1, 2, 3, 4, 5, 6], "failed_edit_3_times (EditCode)")
    assert verbatim(tmp_path, loop)


def test_refused_edits_broken_by_another_call_or_another_file_are_no_loop(tmp_path: Path) -> None:
    """The near misses: a read between the refusals (the agent looked again), or each edit on another file."""
    reread = Session("reread").add("user", "Add an __iter__ method to Paginator")
    for k, error in enumerate(("search text not found", "indentation is wrong", "unbalanced brackets")):
        reread.call("edit", {"path": "p.py", "search": f"x{k}", "replace": "y"}, f"Error: {error}")
        if k == 0:
            reread.call("read_file", {"path": "p.py"}, CODE)
    files = Session("files").add("user", "Rename foo to bar everywhere")
    for name, error in (("a.py", "search text not found"), ("b.py", "indentation is wrong"), ("c.py", "no match")):
        files.call("edit", {"path": name, "search": "foo", "replace": "bar"}, f"Error: {error}")
    found, _ = run(tmp_path, reread, files)
    assert [f for f in found if f["kind"] == "loop"] == []


def test_refused_todo_list_writes_are_no_failed_edits(tmp_path: Path) -> None:
    """A to-do list is no file: three ``TodoWrite`` calls refused in a row (its name holds "Write") are no loop of
    failed edits, where the same three refusals of ``Write`` are."""
    found = {}
    for name in ("TodoWrite", "Write"):
        s = Session(name).add("user", "Add an __iter__ method to Paginator")
        for k, error in enumerate(("todos is malformed", "content is required", "status must be one of")):
            s.call(name, {"file_path": "todo.md", "todos": [{"content": f"step {k}"}]}, f"Error: {error}")
        (tmp_path / name).mkdir()
        found[name] = [f["rule"] for f in run(tmp_path / name, s)[0] if f["rule"].startswith("failed_edit")]
    assert found == {"TodoWrite": [], "Write": ["failed_edit_3_times (Write)"]}


def test_a_regression_named_after_reported_changes_contradicts_them(tmp_path: Path) -> None:
    """codex agentcmd: a summary of the changes (no claim word), the person asks for lint (answered by calls alone),
    then "No teams or leads are loading into the pane now"."""
    s = (
        Session("regress")
        .add("user", "Make the team sheet load a single team")
        .call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: TeamSheet.tsx"}, "Success. Updated the files")
        .add("assistant", "TeamSheet now load-follows a single team, so assigning a lead updates instantly.")
        .add("user", "can you run lint")
        .call("shell", {"command": ["pnpm", "lint"]}, "0 problems")
        .add("user", "No teams or leads are loading into the pane now")
        .add("assistant", "Let me look.")
    )
    found, _ = run(tmp_path, s)
    (claim,) = [f for f in found if f["kind"] == "gave_up_or_false_success" and f["rule"] != STOPPED]
    assert (claim["positions"], claim["rule"]) == ([3, 7], "claim_contradicted")
    assert claim["quote"].startswith("TeamSheet now load-follows") and verbatim(tmp_path, claim)


def test_a_regression_named_after_a_reply_that_changed_nothing_is_no_false_success(tmp_path: Path) -> None:
    """The near miss: the same report after an explanation with no change made (a question answered)."""
    s = (
        Session("explained")
        .add("user", "Why does the team sheet load every team?")
        .call("read_file", {"path": "TeamSheet.tsx"}, CODE)
        .add("assistant", "It fetches the whole list through useTeams, then filters on the client.")
        .add("user", "Also, no teams are loading into the pane now")
        .add("assistant", "Let me look.")
    )
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] == "gave_up_or_false_success" and f["rule"] != STOPPED] == []


def test_a_decline_the_agent_takes_back_once_asked_again_was_doable(tmp_path: Path) -> None:
    """pi large-session: "I don't have a way to directly interact with the chat UI to write markdown", the person asks
    again, and the next reply writes the markdown."""
    s = (
        Session("decline")
        .add("user", "write some code in markdown in the chat")
        .add("assistant", "I don't have a way to directly interact with the chat UI to write markdown.")
        .add("user", "write some markdown here in the chat, anything you can do")
        .add("assistant", "Here's a markdown sample: # Heading\n**bold** and `code`.")
    )
    found, _ = run(tmp_path, s)
    (gave,) = [f for f in found if f["kind"] == "gave_up_or_false_success" and f["rule"] != STOPPED]
    assert (gave["positions"], gave["rule"]) == ([1, 2], "declined_then_done")
    assert gave["quote"].startswith("I don't have a way to") and verbatim(tmp_path, gave)


def test_a_decline_held_when_asked_again_is_no_finding_of_this_rule(tmp_path: Path) -> None:
    """The near miss: asked again, the agent declines again (its answer, not the rule's guess, says what it can do)."""
    s = (
        Session("held")
        .add("user", "write some code in markdown in the chat")
        .add("assistant", "I don't have a way to directly interact with the chat UI to write markdown.")
        .add("user", "write some markdown here in the chat, anything you can do")
        .add("assistant", "Sorry, I don't have a way to write into the chat UI.")
    )
    found, _ = run(tmp_path, s)
    assert [f["rule"] for f in found if f["kind"] == "gave_up_or_false_success"] == []


def test_a_follow_up_that_embeds_the_request_and_asks_more_is_no_repeat(tmp_path: Path) -> None:
    """ChatGPT export (a reviewer read it false): "how to do a crashing schedule", an answer, then "example of how to
    do a crashing schedule". The near miss: the same request again with only "please" added is a repeat."""
    follow = (
        Session("follow")
        .add("user", "how to do a crashing schedule")
        .add("assistant", "Creating a crashing schedule involves compressing the timeline: 1. Analyze ...")
        .add("user", "example of how to do a crashing schedule")
        .add("assistant", "Here's an example for a hypothetical project: ...")
    )
    again = (
        Session("again")
        .add("user", "how to do a crashing schedule")
        .add("assistant", "Creating a crashing schedule involves compressing the timeline: 1. Analyze ...")
        .add("user", "how to do a crashing schedule please")
        .add("assistant", "Sure: ...")
    )
    found, _ = run(tmp_path, follow, again)
    repeated = [(f["native_id"], f["positions"], f["rule"]) for f in found if f["kind"] == "user_repeated"]
    assert repeated == [("again", [2], "asked_again")]


def test_a_regression_named_with_a_contraction_is_one() -> None:
    """``REGRESSED``'s negation "n't" sits inside its word ("isn't", "aren’t"): no word boundary before it, so it
    must be read without one; "not" and "no" stay whole words ("nothing" is one, "note" and "knot" are none)."""
    from forensics.analyzers.problems.endings import REGRESSED

    for said in (
        "the list isn't loading now",
        "the pane isn’t updating now",
        "the buttons aren't showing anymore",
        "it's not loading now",
    ):
        assert REGRESSED.search(said), said
    for said in ("a knot is loading now", "the note showing now", "loading now"):
        assert not REGRESSED.search(said), said


def test_refused_edits_beside_a_call_whose_answer_is_off_the_main_path(tmp_path: Path) -> None:
    """A call answered on another branch (``tool_calls.result_position`` NULL: "off path") in a conversation with
    three refused edits in a row: the loop is still found, and the other call neither breaks the analyzer nor joins
    the loop."""
    import duckdb

    from forensics import ingest
    from forensics.analyzers import load
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    s = Session("offpath").add("user", "Add an __iter__ method to Paginator")
    s.call("read_file", {"path": "p.py"}, CODE)
    for kind in ("CLASS", "FUNCTION", "FUNCTION"):
        s.call("EditCode", {"content": CODE}, f"{kind} has invalid code:\n\n```\n{CODE}```", "I apologize.")
    (tmp_path / "logs").mkdir()
    s.write(tmp_path / "logs")
    ingest([tmp_path / "logs"], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        con.execute("UPDATE tool_calls SET result_position = NULL WHERE name = 'read_file'")
        load("problems").run(Context.open(con, load_config(None), Selection()))
        found = con.execute("SELECT positions, rule FROM problem_findings WHERE kind = 'loop'").fetchall()
    finally:
        con.close()
    assert found == [([3, 4, 5, 6, 7, 8], "failed_edit_3_times (EditCode)")]
