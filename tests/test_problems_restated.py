"""``user_repeated`` for a request restated in new words (``forensics/analyzers/problems/restated.py``): the object of
an open request asked for again (``asked_again_reworded``), the person's answer to a refused call or a decline that
names the request (``asked_again_undone``), "try again"; each on the real file it was read on (fixtures/real, every
figure exact), and what is none of them: a question or an addition after a refusal, a next step after the work, a
variant of a request the reply said was done, a report of what an answer asked to check."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.analyzers import load
from forensics.analyzers.base import Context
from forensics.analyzers.problems.restated import AGAIN_ONLY, terms
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection
from tests.conftest import ROOT
from tests.test_problems import Session, run, verbatim

REAL = ROOT / "fixtures" / "real"


def _found(tmp: Path, name: str) -> list[tuple[str, list[int], str, str]]:
    """The user_repeated findings of one real file ingested alone: (native id, positions, rule, norm)."""
    db = tmp / (name.replace("/", "_") + ".duckdb")
    ingest([REAL / name], db=db)
    con = duckdb.connect(str(db))
    try:
        load("problems").run(Context.open(con, load_config(None), Selection()))
        rows = con.execute(
            "SELECT c.native_id, p.positions, p.rule, p.norm FROM problem_findings p JOIN conversations c "
            "USING (conversation_id) WHERE p.kind = 'user_repeated' ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    return [(str(n), list(p), str(r), str(x)) for n, p, r, x in rows]


def test_crush_the_person_restates_what_they_refused(tmp_path: Path) -> None:
    """Crush: asked to set itself up with gopls, the agent writes VS Code settings, the person denies the write and
    says Crush must be configured; asked for a test in the test file, it writes a new file, denied: "you must add
    this test in workflows_test.go". "try again" after each API error. "looks good but add ..." after a refused
    write at [83] is an addition, not a repeat (the reviewer's labels: [50] and [69])."""
    got = _found(tmp_path, "crush/dbos-inc+dbos-transact-golang/.crush/crush.db")
    assert [(p, r) for _, p, r, _ in got] == [
        ([2, 19], "said_again"),
        ([50], "asked_again_undone"),
        ([69], "asked_again_undone"),
    ]
    assert got[1][3] == "the request at [47], its call refused (“Permission denied”); asked again (configure, gopls)"
    assert got[2][3] == "the request at [58], its call refused (“Permission denied”); asked again (add, test)"


def test_claude_code_a_rejected_call_then_the_request_said_otherwise(tmp_path: Path) -> None:
    """Claude Code: "move the linear doc into its task context"; the comment call is rejected; "not as a comment, but
    as a document attached to the issue directly" names the refused call's object (the reviewer's label)."""
    got = _found(tmp_path, "claude_code/entireio+cli/8e/0a64736bc7/0/full.jsonl")
    assert [(p, r) for _, p, r, _ in got] == [([44], "asked_again_undone")]
    assert got[0][3].startswith("the request at [40], its call refused (“The user doesn't want to proceed")
    # "fix tests" ... the edit of the code rejected ... "fix the test, the code is right"
    got = _found(tmp_path, "claude_code/entireio+cli/00/c9e2351016/3/full.jsonl")
    assert [(p, r) for _, p, r, _ in got] == [([2, 12], "sent_again+asked_again_undone")]


def test_claude_code_a_question_and_a_next_step_after_a_refusal_are_no_repeat(tmp_path: Path) -> None:
    """The merge refused at [7]; [22] asks whether the downstream uses need fixing (a question), [76] "complete the
    merge and push" comes after the merge was done (not the person's answer to the refusal)."""
    assert _found(tmp_path, "claude_code/entireio+cli/d6/5f53d0e8e2/0/full.jsonl") == []


def test_pi_restated_after_a_decline_and_an_unfinished_request(tmp_path: Path) -> None:
    """pi: "i undid your changes, try again" [15]; "sleep" answered by a session summary, spelled out at [409]
    ("dude sleep 5 seconds via bash"); asked to write markdown in chat, the agent says it has no way to,
    the person names a colour, then asks again [445]; "create a custom theme ... open it with the code command"
    [721] never opened, asked again at [744]. Not [838]: the custom light theme of [776] was done and said done, the
    dark one is a new request."""
    got = _found(tmp_path, "pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl")
    assert [(p, r) for _, p, r, _ in got] == [
        ([15], "said_again"),
        ([347], "said_again"),
        ([409], "asked_again_reworded"),
        ([431], "said_again+undone_after"),  # recall10: "no, the block should stay as is", the reply put the block back
        ([445], "asked_again_undone"),
        ([469], "said_again"),
        ([744], "asked_again_reworded"),
        ([758], "said_again"),  # recall9: "no conosle logs! setTheme should return an error" (its label, read true)
    ]
    assert got[2][3] == (  # recall7: "sleep" answered by a summary of the session, spelled out at [409]
        "the request at [407], its reply neither acting on it nor naming it, spelled out again: all of its 1 content "
        "terms (sleep)"
    )
    assert got[4][3].startswith("the request at [434], the agent declined (“I don't have a way to directly interact")
    assert got[6][3] == (
        "the request at [721], not said to be done, asked again: 6 of its 6 content terms (create, custom, theme, "
        "open, code)"
    )


def test_cursor_the_settings_page_asked_for_again(tmp_path: Path) -> None:
    """Cursor: the settings page of [20] came back as a "parameters" route; [22] asks for it again with the menu
    rename. The same prompt opens two other chats of this file (a template by its opening alone): only two turns
    that open with the same template are never compared."""
    got = [g for g in _found(tmp_path, "cursor/slevin48+cursor-history/state.vscdb") if g[0].startswith("2aa483d1")]
    assert [(p, r) for _, p, r, _ in got] == [([10], "said_again"), ([22], "asked_again_reworded")]
    assert got[1][3].startswith("the request at [20], not said to be done, asked again: 9 of its 12 content terms")


def _repeats(tmp: Path, *sessions: Session) -> list[dict]:
    found, _ = run(tmp, *sessions)
    assert all(verbatim(tmp, f) for f in found)
    return [f for f in found if f["kind"] == "user_repeated"]


REFUSED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


@pytest.mark.parametrize(
    ("answer", "fires"),
    [
        ("you must put it in tests/test_parser.py, next to the other parser tests", True),
        ("again", True),
        ("why do you need a new file for that?", False),  # a question
        ("looks good but add a case for the empty input too", False),  # an approval, then more
        ("could we also rename the helper while you are at it", False),  # an addition
        ("what time is it in Tokyo", False),  # names nothing of the request or the call
    ],
)
def test_the_answer_to_a_refused_call(tmp_path: Path, answer: str, fires: bool) -> None:
    s = (
        Session("refused")
        .add("user", "add a test for the parser that checks nested brackets")
        .call(
            "write",
            {"file_path": "tests/test_brackets.py", "content": "def test_nested(): ..."},
            REFUSED,
            text="I will add a new test file tests/test_brackets.py for the parser.",
        )
        .add("user", answer)
        .add("assistant", "OK.")
    )
    got = _repeats(tmp_path, s)
    assert [f["rule"] for f in got] == (["asked_again_undone"] if fires else [])


def test_a_variant_of_a_request_said_done_is_a_new_request(tmp_path: Path) -> None:
    ask = "create a custom light theme for me, then open it in the editor with the code command"
    again = "ok, create a new custom dark theme and open it in the editor with code command, I'll edit it myself"
    done = (
        Session("done")
        .add("user", ask)
        .call("bash", {"command": "cp light.json custom-light.json && code custom-light.json"}, "")
        .add("assistant", "Done! I've created custom-light.json and opened it.")
        .add("user", again)
        .add("assistant", "OK.")
    )
    undone = (
        Session("undone")
        .add("user", ask)
        .call("bash", {"command": "cp light.json custom-light.json"}, "")
        .call("edit", {"path": "custom-light.json", "old": "a", "new": "b"}, "edited")
        .add("user", again)
        .add("assistant", "OK.")
    )
    got = _repeats(tmp_path, done, undone)
    assert [(f["native_id"], f["rule"]) for f in got] == [("undone", "asked_again_reworded")]
    assert got[0]["norm"] == (
        "the request at [0], not said to be done, asked again: 7 of its 8 content terms (create, custom, theme, open, editor)"
    )


def test_a_report_of_what_an_answer_asked_to_check_is_no_repeat(tmp_path: Path) -> None:
    """tau2 telecom: "how do I check the mobile data status and network mode?" ... "I've checked the mobile data
    status and the network mode: data is enabled, 4G/5G preferred. What's the next step?" shares the question's words
    because it answers it."""
    s = (
        Session("report")
        .add("user", "Could you guide me on how to check the mobile data status and network mode on my phone?")
        .add("assistant", "Open Settings, then Network, then read the mobile data status and the network mode.")
        .add("user", "I've checked the mobile data status and the network mode on my phone: data is on. What next?")
        .add("assistant", "Good. Now run a speed test.")
    )
    assert _repeats(tmp_path, s) == []


def test_terms_are_the_persons_own_words_folded() -> None:
    assert terms("Create the custom themes, then open them with the `code` command") == {
        "creat",
        "custom",
        "them",  # theme and themes alike
        "open",
        "code",
        "command",
    }
    # pasted code and logs are not the person's words; identifiers and paths are kept whole
    assert terms("fix dbos/workflows_test.go please\n```go\nfunc TestX(t *testing.T) {}\n```") == {
        "fix",
        "dbos/workflows_test.go",
        "workflows_test.go",
        "workflows_test",
    }
    assert AGAIN_ONLY.match("try again") and AGAIN_ONLY.match("ещё раз!") and not AGAIN_ONLY.match("again it fails")
