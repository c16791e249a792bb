"""Failure signatures, clusters and the decisive step (docs/definitions.md#failure-analysis), on small real-shaped runs and, when the
shared data is there, on the labeled failures of ../shared/data/failures (read from the file, never copied)."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from conftest import SHARED

from forensics.analyzers.failures import cluster, messages, signature
from forensics.analyzers.signature import Msg, ended, error_line, template
from forensics.cli import cli


def _run(errors: list[str], final: str = "All tests pass, the fix is done.") -> list[Msg]:
    msgs = [Msg(0, "user", "person", None, "Fix the bug in parser.py")]
    for i, e in enumerate(errors):
        msgs += [
            Msg(1 + 2 * i, "assistant", "assistant", "coder", "```python\nrun()\n```"),
            Msg(2 + 2 * i, "tool", "tool", None, e, error=True),
        ]
    return msgs + [Msg(1 + 2 * len(errors), "assistant", "assistant", "coder", final)]


def test_one_cause_phrased_three_ways_is_one_cluster() -> None:
    texts = [
        'Traceback (most recent call last):\n  File "/srv/app/run.py", line 12, in <module>\n'
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/input-3.csv'",
        'Traceback (most recent call last):\n  File "/home/u/x.py", line 7, in main\n'
        "FileNotFoundError: [Errno 2] No such file or directory: 'results/out_17.json'",
        'exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n  File "<stdin>", '
        'line 1\nFileNotFoundError: [Errno 2] No such file or directory: "C:/tmp/a b.txt"',
    ]
    sigs = [signature(f"r{i}", _run([t, t]), True) for i, t in enumerate(texts)]
    assert {s.error_template for s in sigs} == {"filenotfounderror: [errno <n>] no such file or directory: '<q>'"}
    got = cluster(sigs, 3, 0)
    assert [(c["name"], c["runs"], c["failed"]) for c in got] == [
        ("claimed success: filenotfounderror: [errno <n>] no such file or directory: '<q>'", 3, 3)
    ]


def test_three_causes_behind_one_preamble_are_three_clusters() -> None:
    pre = 'exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n  File "x.py", line 3\n'
    causes = ["NameError: name 'df' is not defined", "KeyError: 'price'", "ModuleNotFoundError: No module named 'cv2'"]
    sigs = [signature(f"r{i}", _run([pre + c]), True) for i, c in enumerate(causes)]
    assert sorted(c["name"] for c in cluster(sigs, 3, 3)) == [
        "claimed success: keyerror: '<q>'",
        "claimed success: modulenotfounderror: no module named '<q>'",
        "claimed success: nameerror: name '<q>' is not defined",
    ]


def test_templates_mask_values_and_skip_preambles() -> None:
    assert error_line("exitcode: 1 (execution failed)\nCode output: \nTimeout") == "Timeout"
    assert error_line("exitcode: 0 (execution succeeded)\nCode output: 4") is None
    assert error_line("grep found nothing") is None
    assert template("/bin/bash: line 3: pytest-7: command not found") == "<path>: line <n>: <id>: command not found"
    assert (
        template("ValueError: bad id 3f2a9c0d1e and uuid 123e4567-e89b-12d3-a456-426614174000")
        == "valueerror: bad id <hex> and uuid <hex>"
    )


def test_how_it_ended() -> None:
    assert ended(_run([]))[0] == "claimed_success"
    assert ended(_run([], "I'm sorry, but I was unable to find the file."))[0] == "gave_up"
    assert ended(_run([], "The capital is Paris."))[0] == "answered"
    assert ended(_run(["Error: boom"])[:-1])[0] == "errored"
    cut = _run([])[:-1] + [Msg(9, "assistant", "assistant", None, "go north", calls=1, unanswered=1)]
    assert ended(cut)[0] == "cut_off"
    finish = _run([])[:-1] + [
        Msg(9, "assistant", "assistant", None, "FINISH([42])", calls=1, unanswered=1, call_names=("FINISH",))
    ]
    assert ended(finish)[0] == "claimed_success"  # a call that ends the run by itself expects no answer
    limit = _run([]) + [Msg(10, "user", "harness", None, "Reached the maximum number of steps (30).")]
    assert ended(limit)[0] == "limit"


def test_a_submission_command_ends_the_run() -> None:
    """mini-swe-agent submits with a shell command whose output the harness reads and stops on (terminal-bench's
    trials: 166 of 170 that replied ended so and were read as cut off); the run's end is then read from its words."""

    def run(final: str) -> list[Msg]:
        return [
            Msg(0, "user", "person", None, "Create the bucket and make it public."),
            Msg(
                1,
                "assistant",
                "assistant",
                None,
                f"{final}\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
                1,
            ),
            Msg(2, "tool", "tool_result", None, ""),
        ]

    assert ended(run("The bucket was created successfully."))[0] == "claimed_success"
    assert (
        ended(run("Since I cannot execute the AWS commands without credentials, the script is ready."))[0] == "gave_up"
    )
    # a submission is a claim: docs/failures-evaluation.md#how-runs-end-read-by-cause
    assert ended(run("The file is written."))[0] == "claimed_success"
    v2 = run("")[:1] + [Msg(1, "assistant", "assistant", None, '```bash\necho "MINI_SWE_AGENT_FINAL_OUTPUT"\n```', 1)]
    assert ended(v2 + [Msg(2, "tool", "tool_result", None, "")])[0] == "claimed_success"
    other = run("")[:1] + [Msg(1, "assistant", "assistant", None, "```bash\necho COMPLETE\n```", 1)]
    assert ended(other + [Msg(2, "tool", "tool_result", None, "COMPLETE")])[0] == "cut_off"  # not a submission


def test_a_limit_is_what_a_tool_or_the_harness_says_happened() -> None:
    """A limit ends a run when a tool or the harness says one was reached, never on the task's or the person's own
    words (a SciCode step's docstring says "Maximum iterations.": 4 shared runs read ``limit``), nor on a line a tool
    shows from code (a patch's ``throw …("Exceeded maximum depth …")``, a traceback frame in ``time_limit``) or the
    task quoted back by the harness; the notices themselves still end it."""
    task = (
        "Implement the next step.\n    maxiter: int\n        number of maximum iterations\n"
        "    max_iter : int\n        Maximum number of iterations.\n    tol: float\n"
    )
    scicode = [
        Msg(0, "user", "person", None, task),
        Msg(1, "assistant", "assistant", None, "```python\ndef f(): ...```"),
    ]
    assert ended(scicode) == ("answered", 1)
    said = [Msg(0, "user", "person", None, "Stop when you have reached the maximum number of steps (30).")]
    assert ended(said + [Msg(1, "assistant", "assistant", None, "Here is the plan.")]) == ("answered", 1)
    quoted = said + [
        Msg(1, "assistant", "assistant", None, "Working on it."),
        Msg(
            2,
            "user",
            "harness",
            None,
            "[TASK RESUMPTION] The task was:\nStop when you have reached the maximum number of steps (30).",
        ),
        Msg(3, "assistant", "assistant", None, "Resuming."),
    ]
    assert ended(quoted) == ("answered", 3)
    patch = (
        'diff --git a/S.java b/S.java\n+    throw ctxt.mappingException("Exceeded maximum depth for array nesting");\n'
    )
    submitted = [
        Msg(0, "user", "person", None, "Fix the deep nesting."),
        Msg(1, "assistant", "assistant", None, "The check is added.", 1, call_names=("submit",)),
        Msg(2, "tool", "tool", None, patch, stop="submitted"),
    ]
    assert ended(submitted) == ("claimed_success", 1)
    frame = (
        "TimeoutError   Traceback (most recent call last)\nFile <hidden_filepath>:32, in "
        'PythonREPL.time_limit.<locals>.signal_handler(signum, frame)\n---> 32     raise TimeoutError(f"Timed out")\n'
        "TimeoutError: Timed out after 30 seconds."
    )
    mint = [
        Msg(0, "user", "person", None, "Find n."),
        Msg(1, "assistant", "assistant", None, "<execute>slow()</execute>", 1),
        Msg(2, "tool", "tool", None, frame, error=True),
        Msg(3, "assistant", "assistant", None, "The answer is <solution> [] </solution>."),
    ]
    assert ended(mint) == ("answered", 3)
    # the notices, from a tool or the harness, whatever the task said before
    for notice in (
        "Reached the maximum number of steps (30).",
        "Error: exceeded max steps",
        "openai.BadRequestError: This model's maximum context length is 8192 tokens. However, you requested 9120.",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "context window exceeded",
        "Token limit exceeded.",
    ):
        for m in (Msg(2, "tool", "tool", None, notice), Msg(2, "user", "harness", None, notice)):
            assert ended(scicode + [m]) == ("limit", 2), notice
    # a person's words are no notice even when a harness would write them so; the harness's own stop still is
    assert ended(scicode + [Msg(2, "user", "person", None, "Reached the maximum number of steps (30).")])[0] != "limit"
    ag2 = scicode + [
        Msg(2, "assistant", "assistant", None, ">>>>>>>> TERMINATING RUN (ab12): Maximum turns (10) reached")
    ]
    assert ended(ag2) == ("limit", 2)


SCICODE = (
    SHARED
    / "data/agent-logs/inspect_ai/Raheemrana+scicode-bench/logs/2026-02-06T01-49-23-07-00_scicode_fXKJvoyJdbtWYQAWpTYDvJ.eval"
)


@pytest.mark.skipif(not SCICODE.exists(), reason=f"{SCICODE} not found (set FORENSICS_SHARED)")
def test_a_scicode_step_that_names_its_maximum_iterations_did_not_hit_a_limit(tmp_path: Path) -> None:
    """The shared SciCode Inspect log's 50 steps each end on the model's answer; 4 step prompts (21, 37, 47, 48)
    describe a ``maxiter`` argument ("Maximum iterations.") and were read as a limit."""
    db = tmp_path / "s.duckdb"
    with pytest.raises(SystemExit) as done:
        cli.main(["ingest", str(SCICODE), "--db", str(db)], standalone_mode=False)
    assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    ids = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    got = {ids[c]: ended(ms)[0] for c, ms in messages(con, list(ids)).items()}
    assert Counter(got.values()) == {"answered": 50}
    assert {got[f"{n} epoch 1"] for n in (21, 37, 47, 48)} == {"answered"}


def _magentic(last: list[Msg]) -> list[Msg]:
    """A Magentic-One run in the shape of Who&When Hand-Crafted (invented text): the orchestrator hands each turn
    to its agents; the harness's termination notice and the console's tail are logged under an agent's name."""
    return [
        Msg(0, "user", "person", "human", "Which bakery near the harbour opens first on Sundays?"),
        Msg(1, "assistant", "assistant", "Orchestrator", "Initial plan: search the map, then read the pages."),
        Msg(2, "assistant", "assistant", "Orchestrator", "Next speaker WebSurfer"),
        Msg(3, "assistant", "assistant", "WebSurfer", "I typed 'bakery harbour' into the search bar."),
        *last,
    ]


def test_a_harness_stop_notice_ends_the_run_whoever_logs_it() -> None:
    """The notices each harness's source writes when it stops a run, under an agent's name or the assistant role:
    the orchestrator's max rounds, max time and replans (limit), autogen_core's "Error processing publish message"
    and AutoGenBench's non-zero exit (errored); the last one written ended the run."""
    tail = "\nFINAL ANSWER: Harbour Bakery\nSCENARIO.PY COMPLETE !#!#\nRUN.SH COMPLETE !#!#"
    rounds = _magentic([Msg(4, "assistant", "assistant", "Orchestrator", "Max rounds (30) reached." + tail)])
    assert ended(rounds) == ("limit", 4)
    clock = _magentic([Msg(4, "assistant", "assistant", "Orchestrator", "Max time (1500s) reached." + tail)])
    assert ended(clock) == ("limit", 4)
    replans = _magentic(
        [
            Msg(4, "assistant", "assistant", "Orchestrator", "Replan counter exceeded... Terminating."),
            Msg(5, "assistant", "assistant", "Orchestrator", "No agent selected." + tail),
        ]
    )
    assert ended(replans) == ("limit", 4)
    satisfied = _magentic(
        [
            Msg(4, "assistant", "assistant", "Orchestrator", "Request satisfied."),
            Msg(5, "assistant", "assistant", "Orchestrator", "No agent selected." + tail),
        ]
    )
    assert ended(satisfied)[0] == "claimed_success"
    crash = (
        "Harbour Bakery opens at 7.\nError processing publish message\nTraceback (most recent call last):\n"
        '  File "/usr/lib/agent.py", line 9, in on_message\nopenai.BadRequestError: Error code: 400' + tail
    )
    assert ended(_magentic([Msg(4, "assistant", "assistant", "WebSurfer", crash)])) == ("errored", 4)
    exited = "The page did not load.\nSCENARIO.PY EXITED WITH CODE: 1 !#!#\nRUN.SH COMPLETE !#!#"
    assert ended(_magentic([Msg(4, "assistant", "assistant", "WebSurfer", exited)])) == ("errored", 4)
    # the last notice written wins: an error logged, then the round limit
    both = crash.replace(tail, "") + "\nMax rounds (30) reached." + tail
    assert ended(_magentic([Msg(4, "assistant", "assistant", "Orchestrator", both)])) == ("limit", 4)
    # the words inside a sentence are no notice
    said = "The site says: after Max rounds (3) reached, stop. I found Harbour Bakery. FINAL ANSWER: Harbour Bakery"
    assert ended(_magentic([Msg(4, "assistant", "assistant", "WebSurfer", said)]))[0] == "claimed_success"


def test_swe_agent_ag2_and_openhands_stops_are_limits() -> None:
    """SWE-agent writes its exit as the assistant's turn (a call to ``exit_cost`` nothing answers: it read as cut
    off), AG2 prints its turn limit, OpenHands raises on its iteration limit; a ``submit`` answered by the patch ends
    the run (not cut off), its end read from the words like mini-swe-agent's submission."""
    task = [Msg(0, "user", "person", None, "Fix the NPE in Parser.java")]
    cost = task + [
        Msg(1, "assistant", "assistant", None, "Let me open the file.", 1, 0, call_names=("open",)),
        Msg(2, "tool", "tool", None, "[File: Parser.java (120 lines total)]"),
        Msg(3, "assistant", "assistant", None, "Exit due to cost limit", 1, 1, call_names=("exit_cost",)),
    ]
    assert ended(cost) == ("limit", 3)
    context = cost[:-1] + [Msg(3, "assistant", "assistant", None, "Exit due to context window", 1, 1)]
    assert ended(context) == ("limit", 3)
    retry = cost[:-1] + [Msg(3, "assistant", "assistant", None, "Exit due to retry error: 429 Too Many Requests", 1, 1)]
    assert ended(retry) == ("errored", 3)
    ag2 = task + [
        Msg(1, "assistant", "assistant", "coder", "Here is the patch."),
        Msg(2, "user", "harness", None, ">>>>>>>> TERMINATING RUN (6e4611af-00a7): Maximum turns (8) reached"),
    ]
    assert ended(ag2) == ("limit", 2)
    submitted = cost[:-1] + [
        Msg(
            3,
            "assistant",
            "assistant",
            None,
            "Since I cannot run the tests, let's submit.",
            1,
            0,
            call_names=("submit",),
        ),
        Msg(4, "tool", "tool", None, "diff --git a/Parser.java b/Parser.java"),
    ]
    assert ended(submitted)[0] != "cut_off"
    # the harness's logged stop status, on the last message (a ``stop`` event), decides before the words
    said = cost[:-1] + [Msg(3, "assistant", "assistant", None, "The fix is done.")]
    assert ended(said)[0] == "claimed_success"
    for status, end in (
        ("exit_cost", "limit"),
        ("submitted (exit_context)", "limit"),
        ("LimitsExceeded", "limit"),
        ("message limit", "limit"),
        (
            "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 50, max iteration: 50",
            "limit",
        ),
        ("litellm.APIError: upstream connect error", "errored"),
        ("exit_format", "errored"),
        ("submitted", "claimed_success"),
        ("Submitted", "claimed_success"),
    ):
        assert ended(said[:-1] + [replace(said[-1], stop=status)])[0] == end, status


def test_real_harness_stop_statuses_are_kept_and_read(tmp_path: Path) -> None:
    """Real files: OpenHands' Multi-SWE-bench evaluation output (one of its three runs stopped by "Agent reached
    maximum iteration in headless mode", logged in the record's ``error``, no message: it read as errored, its last
    output an error), SWE-agent's and mini-swe-agent's ``info.exit_status``."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    files = [
        real / "openhands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl",
        real
        / "swe_agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source"
        / "marshmallow-code__marshmallow-1867.traj",
        real
        / "mini_swe_agent/SWE-agent+mini-swe-agent/output/deepseek_bench1/django__django-11001/django__django-11001.traj.json",
    ]
    db = tmp_path / "r.duckdb"
    for f in files:
        with pytest.raises(SystemExit) as done:
            cli.main(["ingest", str(f), "--db", str(db)], standalone_mode=False)
        assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    stops = con.execute(
        "SELECT c.native_id, e.trigger FROM events e JOIN conversations c USING (conversation_id) "
        "WHERE e.kind = 'stop' ORDER BY 1"
    ).fetchall()
    assert [(n, t[:58]) for n, t in stops] == [
        ("django__django-11001", "Submitted"),
        ("marshmallow-code__marshmallow-1867", "submitted"),
        ("ponylang__ponyc-4588", "RuntimeError: Agent reached maximum iteration in headless "),
    ]
    ids = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    got = {ids[c]: ended(ms)[0] for c, ms in messages(con, list(ids)).items()}
    assert got == {
        "ponylang__ponyc-4593": "gave_up",
        "ponylang__ponyc-4595": "claimed_success",
        "ponylang__ponyc-4588": "limit",
        "marshmallow-code__marshmallow-1867": "claimed_success",
        "django__django-11001": "claimed_success",
    }


def test_the_graded_folders_ends_do_not_move(tmp_path: Path) -> None:
    """The graded runs' real files (fixtures/outcomes: MedAgentBench, MINT, tau2) carry no harness stop notice: their
    ends are as before the harness rules (on the shared folders too: 0 of 1,392 runs changed)."""
    db = tmp_path / "o.duckdb"
    with pytest.raises(SystemExit) as done:
        cli.main(
            ["ingest", str(Path(__file__).resolve().parents[1] / "fixtures" / "outcomes"), "--db", str(db)],
            standalone_mode=False,
        )
    assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    ends = Counter(
        ended(ms)[0]
        for ms in messages(
            con, [r[0] for r in con.execute("SELECT conversation_id FROM conversations").fetchall()]
        ).values()
    )
    assert ends == {"answered": 5, "claimed_success": 3, "handed_off": 2}


def test_decisive_step_is_the_first_assumption_and_names_its_agent() -> None:
    msgs = [
        Msg(0, "user", "person", None, "What did the two houses sell for?"),
        Msg(1, "assistant", "assistant", "planner", "Let us split the work between the experts now."),
        Msg(2, "assistant", "assistant", "estate", "Assuming typical prices, the first sold for 850000 dollars."),
        Msg(3, "assistant", "assistant", "checker", "Based on this, the answer is 850000. TERMINATE"),
    ]
    s = signature("r", msgs, True)
    assert s.decisive is not None and (s.decisive.position, s.decisive.agent, s.decisive.rule) == (
        2,
        "estate",
        "assumption",
    )
    assert signature("r", msgs, False).decisive is None  # a passed run gets no decisive step


def test_the_task_message_is_a_step_when_a_tool_output_answers_it() -> None:
    plan = "The task: count the rows. Plan: load the file and count.\n```python\nprint(len(open('d.csv').readlines()))\n```"
    msgs = [
        Msg(0, "assistant", "assistant", "data", plan),
        Msg(1, "tool", "tool", "terminal", "Traceback (most recent call last):\nFileNotFoundError: d.csv"),
        Msg(2, "assistant", "assistant", "checker", "The file could not be read, so the count is unknown. TERMINATE"),
    ]
    d = signature("r", msgs, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (0, "data", "failed_code")
    # a task message nothing answers stays the task, never a step
    said = [msgs[0], Msg(1, "assistant", "assistant", "checker", "Assuming 12 rows, the answer is 12. TERMINATE")]
    d = signature("r", said, True).decisive
    assert d is not None and (d.position, d.rule) == (1, "assumption")


def _orchestrated(satisfied: bool) -> list[Msg]:
    """A run in Magentic-One's shape (invented text): the orchestrator plans, keeps a ledger and hands every turn
    to a web surfer, whose reports carry the page's own words."""
    ledger = (
        'Updated Ledger:\n{"is_request_satisfied": {"reason": "The request is not yet satisfied.", "answer": false}}'
    )
    msgs = [
        Msg(0, "user", "person", None, "Which 3 bakeries near the old harbour open before 6 am?"),
        Msg(1, "assistant", "assistant", "Orchestrator", "Initial plan:\n1. WebSurfer searches for the 3 bakeries."),
        Msg(2, "assistant", "assistant", "Orchestrator", ledger),
        Msg(3, "assistant", "assistant", "Orchestrator", "Please search for bakeries near the old harbour."),
        Msg(
            4,
            "assistant",
            "assistant",
            "WebSurfer",
            "I typed 'bakeries old harbour' into the search bar. The page says: "
            "Hypothetical opening hours are assumed for placeholder listings.",
        ),
        Msg(5, "assistant", "assistant", "Orchestrator", ledger),
        Msg(6, "assistant", "assistant", "Orchestrator", "Next speaker WebSurfer"),
        Msg(7, "assistant", "assistant", "WebSurfer", "I clicked 'Harbour Bakery'. The page lists it as open at 5 am."),
    ]
    if satisfied:
        return msgs + [
            Msg(8, "assistant", "assistant", "Orchestrator", "Request satisfied."),
            Msg(9, "assistant", "assistant", "Orchestrator", "No agent selected. FINAL ANSWER: Harbour Bakery"),
        ]
    return msgs + [Msg(8, "assistant", "assistant", "Orchestrator", "Max rounds (30) reached. FINAL ANSWER: none")]


def test_an_orchestrated_run_goes_wrong_at_a_report_not_at_the_plan() -> None:
    """The coordinator that hands every turn plans, and its agents act: the first report is the step (the page's
    "hypothetical", "assumed", "placeholder" are the page's words, not the agent's); where the coordinator declared
    the request satisfied, the report it accepted; the agent named without its qualifier."""
    d = signature("r", _orchestrated(False), True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (4, "WebSurfer", "first_report")
    d = signature("r", _orchestrated(True), True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "WebSurfer", "accepted_report")
    # the same run logged with Magentic-One's own roles as names
    raw = [
        Msg(m.position, m.role, m.origin, "Orchestrator (thought)" if m.name == "Orchestrator" else m.name, m.text)
        for m in _orchestrated(True)
    ]
    raw[3] = Msg(3, "assistant", "assistant", "Orchestrator (-> WebSurfer)", raw[3].text)
    d = signature("r", raw, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "WebSurfer", "accepted_report")
    # the coordinator's own unfounded statement before the first report outranks it
    said = _orchestrated(False)
    said[1] = Msg(
        1, "assistant", "assistant", "Orchestrator", "Plan: assume the bakeries open at 5 am; WebSurfer checks."
    )
    d = signature("r", said, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (1, "Orchestrator", "assumption")
    # the report it accepted only showed a page (a screenshot and the page's text): the answer is the coordinator's,
    # drawn in its first message after it
    shown = _orchestrated(True)
    shown[7] = Msg(
        7,
        "assistant",
        "assistant",
        "WebSurfer",
        "I clicked 'Harbour Bakery'.\n\nHere is a screenshot of [Harbour Bakery](https://example.org/harbour). The "
        "viewport shows 40% of the webpage.\nAutomatic OCR of the page screenshot: Opens 5 am, Closed Mondays",
    )
    d = signature("r", shown, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (8, "Orchestrator", "accepted_conclusion")
    # a file viewer's address header opens the report: it showed a file; an address in a list of the report's own
    # answer is a street (Who&When Hand-Crafted 50's Assistant), no viewer's header: the report said the answer
    for text, rule in (
        ("Address: file:///workspace/bakeries.md\nViewport position: Showing page 1 of 1.", "accepted_conclusion"),
        ("Harbour Bakery opens at 5 am.\n   Address: 28 Cornelia St, New York, NY 10014", "accepted_report"),
    ):
        shown[7] = Msg(7, "assistant", "assistant", "FileSurfer", text)
        d = signature("r", shown, True).decisive
        assert d is not None and d.rule == rule, text
    # a coordinator that planned, handed the turn once and took it back to declare the request satisfied
    once = _orchestrated(True)[:5] + [
        Msg(5, "assistant", "assistant", "Orchestrator", "The request has been satisfied: Harbour Bakery opens at 5."),
        Msg(6, "assistant", "assistant", "Orchestrator", "Request satisfied."),
    ]
    d = signature("r", once, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (4, "WebSurfer", "accepted_report")
    # ... but a first speaker that did not speak twice before handing the turn is no coordinator (a group chat's
    # expert, answered by its terminal, then another expert once)
    chat = [
        Msg(0, "user", "person", None, "Which 3 bakeries near the old harbour open before 6 am?"),
        Msg(1, "assistant", "assistant", "Food_Expert", "```python\nprint(search('bakeries old harbour'))\n```"),
        Msg(2, "tool", "tool", "Computer_terminal", "exitcode: 0\nCode output: Harbour Bakery, Quay Bread, Mill"),
        Msg(3, "assistant", "assistant", "Food_Expert", "The three bakeries are Harbour Bakery, Quay Bread and Mill."),
        Msg(4, "assistant", "assistant", "Verification_Expert", "Let's say all three open at 5 am; verified."),
        Msg(5, "assistant", "assistant", "Food_Expert", "Then the answer is all three. TERMINATE"),
    ]
    d = signature("r", chat, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (4, "Verification_Expert", "assumption")
    # a group chat whose experts answer one another is no orchestrated run (one hand-off, then an expert follows
    # an expert): every message is its speaker's own statement
    chat = _orchestrated(False)[:5] + [
        Msg(5, "assistant", "assistant", "Checker", "I checked the listing, it is fine.")
    ]
    d = signature("r", chat, True).decisive
    assert d is not None and (d.position, d.rule) == (4, "assumption")


def test_the_tasks_own_figures_restated_are_no_claim() -> None:
    task = Msg(0, "user", "person", None, "How many of the 3 bakeries open before 6 am?")
    restated = Msg(1, "assistant", "assistant", "a", "Based on the question, we need the 3 bakeries open before 6 am.")
    found = Msg(1, "assistant", "assistant", "a", "Based on the listings, 2 of the 3 bakeries open before 6 am.")
    d = signature("r", [task, restated], True).decisive
    assert d is not None and d.rule == "first_reply"
    d = signature("r", [task, found], True).decisive
    assert d is not None and d.rule == "unsupported_claim"


WHOWHEN = SHARED / "data" / "failures" / "whowhen.jsonl"


@pytest.mark.skipif(not WHOWHEN.exists(), reason=f"{WHOWHEN} not found (set FORENSICS_SHARED)")
def test_whowhen_speakers_kept_and_decisive_step_beats_the_trivial_baselines(tmp_path: Path) -> None:
    recs = [json.loads(line) for line in WHOWHEN.read_text().splitlines() if line.strip()]
    db = tmp_path / "w.duckdb"
    with pytest.raises(SystemExit) as done:
        cli.main(["ingest", str(WHOWHEN), "--db", str(db)], standalone_mode=False)
    assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    named = con.execute("SELECT count(*), count(name) FROM messages").fetchone()
    assert named == (1099, 1099)
    msgs = messages(con, list(ids.values()))
    exact = near = agent = first = 0
    for r in recs:
        d = signature(ids[r["id"]], msgs[ids[r["id"]]], True).decisive
        assert d is not None and d.position is not None
        step = r["label"]["mistake_step"]
        exact += d.position == step
        near += abs(d.position - step) <= 1
        agent += d.agent == r["label"]["mistake_agent"]
        first += step == 0
    # the measured figures (docs/failures-evaluation.md): exact 61 (48 %), ±1 77 (61 %), agent 87 (69 %) of 126
    # (before the task's own figures restated stopped counting as a claim: 60, 76, 86; before the task's own
    # message counted as a step when it ran code: 52, 70, 76)
    assert (exact, near, agent) == (61, 77, 87)
    assert exact > first  # the first-step baseline: 20
    # how they ended (no AG2 log here prints a turn or round limit: 47 runs stop at 10 messages without one)
    ends = Counter(ended(ms)[0] for ms in msgs.values())
    assert ends == {"claimed_success": 86, "answered": 18, "cut_off": 13, "errored": 6, "gave_up": 3}


def test_report_leads_with_what_went_wrong_and_keeps_run_failures(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES, run_cli

    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))[0] == 0
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json,md,html",
        "--only",
        "usage,outcomes,failures",
    )
    assert code == 0, err
    md = (tmp_path / "r" / "report.md").read_text()
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[0].startswith("## What went wrong") and heads[1].startswith("## Runs")
    html = (tmp_path / "r" / "report.html").read_text()
    assert html.index("What went wrong") < html.index("Runs: tokens")
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]
    con = duckdb.connect(str(db), read_only=True)
    failed = con.execute("SELECT count(*) FROM conversation_outcomes WHERE NOT success").fetchall()[0][0]
    rows = con.execute("SELECT count(*), count(decisive_position), count(cluster) FROM run_failures").fetchall()[0]
    assert rows == (failed, failed, failed) and m["failures"]["runs"] == failed > 0
    for c in m["failures"]["clusters"]:
        assert (
            set(c)
            == {
                "name",
                "runs",
                "failed",
                "passed",
                "lift",
                "lift_low",
                "lift_high",
                "examples",
                "harness_end",
                "within_task",
            }
            and c["failed"] + c["passed"] == c["runs"]
        )
    assert m["outcomes"]["ranking"]["auc"] is not None and "auc_within_task" in m["outcomes"]["ranking"]


def test_problem_findings_are_read_when_present(tmp_path: Path) -> None:
    """The problem detectors' table (docs/definitions.md#problems-a-reviewer-flags), when a warehouse has it: a passed run with a problem is signed
    (no decisive step), and the run ranking puts runs with problems first."""
    from tests.conftest import FIXTURES, run_cli

    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))[0] == 0
    con = duckdb.connect(str(db))
    failed = [
        r[0]
        for r in con.execute(
            "SELECT conversation_id FROM conversation_outcomes WHERE NOT success ORDER BY 1"
        ).fetchall()
    ]
    passed = con.execute(
        "SELECT conversation_id FROM conversation_outcomes WHERE success ORDER BY 1 LIMIT 1"
    ).fetchall()[0][0]
    con.execute(
        "CREATE TABLE problem_findings (conversation_id VARCHAR, kind VARCHAR, position INTEGER, "
        "positions INTEGER[], quote VARCHAR, rule VARCHAR, norm VARCHAR)"
    )
    con.executemany(
        "INSERT INTO problem_findings VALUES (?, 'loop', 1, [1, 3], 'again', 'same call', 'none')",
        [[c] for c in failed + [passed]],
    )
    con.close()
    code, _, err = run_cli(
        "report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json", "--only", "outcomes,failures"
    )
    assert code == 0, err
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]
    assert m["failures"]["runs"] == len(failed) + 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT decisive_position FROM run_failures WHERE conversation_id = ?", [passed]).fetchall() == [
        (None,)
    ]
    # every failed run has a problem, one passed run too: failed runs rank above all but that one
    n_pass = con.execute("SELECT count(*) FROM conversation_outcomes WHERE success").fetchall()[0][0]
    assert m["outcomes"]["ranking"]["auc"] > 1 - 1 / n_pass


def _slow_error_line(text: str, flagged: bool = False) -> str | None:
    """``error_line`` as it was written before its fast path: every pattern on every line (the oracle)."""
    import re

    from forensics.analyzers.signature import CODE_LINE, ERROR_LINE, EXCEPTION_LINE, FAILED_EXIT, PREAMBLE

    lines = [ln for ln in text.splitlines()[:400] if ln.strip()]
    exits = FAILED_EXIT.search(text[:400])
    failed_exit = exits is not None and int(exits.group(1)) not in (0, -1)
    for ln in reversed(lines):
        if EXCEPTION_LINE.match(ln) and not PREAMBLE.match(ln):
            return ln.strip()
    for ln in lines:
        if (
            ERROR_LINE.match(ln)
            and (re.match(r"\s*/bin/(?:ba)?sh: ", ln, re.I) or not CODE_LINE.search(ln))
            and not PREAMBLE.match(ln)
            and not re.search(r"\b(?:0|no) (?:errors?|failures?)\b", ln, re.I)
        ):
            return ln.strip()
    if flagged or failed_exit:
        rest = [ln for ln in lines if not PREAMBLE.match(ln)]
        return rest[0].strip() if rest else (lines[0].strip() if lines else "(empty error)")
    return None


EDGES = [
    "timeout",
    "  Timeout  ",
    "x timeout y",
    "timeouts",
    "timedout",
    "time out",
    "TIMED OUT",
    "runtime: 3",
    "/bin/sh: 1: foo: not found",
    " /BIN/BASH: line 3: foo",
    "/bin/bash:x",
    "see /bin/sh: x",
    "Error: x",
    "xerror: y",
    "errors: y",
    "error !",
    "FAILED!",
    "failure :",
    "fatal:",
    "0 errors: ok",
    "no failures: fine",
    "command not found",
    "notfound",
    "No Such File Or Directory",
    "permission denied",
    "faİled: x",  # İ and ı match i under re.I, ſ matches s: the non-ASCII path
    "faıled: x",
    "no ſuch file or directory",
    "KeyError: 'x'",
    "a.b.CError here",
    "Traceback (most recent call last):",
    "exitcode: 1 (execution failed)",
    "exit code 2",
    "exit status 0",
    "\x0bError: x\x1c y",
    "",
    "   ",
    "密钥 Error: 坏了",
    "console.debug('Admin auto-init skipped or failed:', error.code);",
    "// fails with: permission denied",
    "throw new Error(`user ${id} not found`)",
    "if (error.code === 'ENOENT') return 'no such file or directory';",
    "/bin/sh: 1: echo: not found",
    "error: error instanceof Error ? error : new Error(String(error)),",
    "} catch (error) { failed: true",
    "res.json({ message: 'Redis connection failed', error: error.message })",
]


def test_error_line_skips_code_that_only_mentions_an_error() -> None:
    """A source file a tool shows is no error: its code that mentions one (a ``console.*(`` call, a comment, a throw,
    a statement) is not read as the error line (a real Continue session's read of ``useAuth.js`` made the cluster
    "console.debug('<q>', error.code);"); the error a runtime or a shell prints after code is still read."""
    source = (
        "Content of src/hooks/useAuth.js:\nexport function useAuth() {\n      } catch (error) {\n"
        "        // 'auth/email-already-in-use' is the standard SDK error code\n"
        "        if (error.code === 'auth/email-already-in-use') {\n"
        "          console.debug('Admin auto-init skipped or failed:', error.code);\n"
        "    throw new Error(`user ${id} not found`);\n  }\n"
    )
    assert error_line(source) is None
    for line in ("error: error instanceof Error ? error : new Error(String(error)),", "failed: err?.message"):
        assert error_line(line) is None, line
    assert error_line("/var/log/nginx/error.log: No such file or directory")  # a path is no property read
    assert error_line(source + "npm error: build failed: exit 1\n") == "npm error: build failed: exit 1"
    assert error_line(source + "/bin/sh: 1: echo: not found") == "/bin/sh: 1: echo: not found"
    # flagged by the warehouse, the first line that is no preamble stands in, as before
    assert error_line(source, flagged=True) == "Content of src/hooks/useAuth.js:"


def test_error_line_fast_path_is_the_patterns_on_every_line() -> None:
    """``error_line`` skips the patterns on lines that cannot match and runs ERROR_LINE without its backtracking
    (a million-message report spent most of the failures analyzer there); its answer stays the patterns' own, on
    the fixtures' tool outputs, the edges above and random mixes of them, flagged or not."""
    import random

    from forensics.analyzers.signature import ERROR_LINE, is_error_line

    texts = list(EDGES)
    for path in sorted(Path(__file__).resolve().parent.parent.joinpath("fixtures").rglob("*.jsonl"))[:200]:
        texts += [ln[:600] for ln in path.read_text(errors="replace").splitlines() if "rror" in ln or "ail" in ln][:20]
    rnd = random.Random(46)
    for _ in range(400):
        picked = rnd.choices(texts, k=rnd.randint(1, 6))
        if rnd.random() < 0.4:  # text without FOLDS_TO_ASCII, not ASCII: the lower-case path (Chinese outputs)
            picked.append(rnd.choice(["发布失败", "Ärger: 失败", "ошибка", "坏了 timeout", "naïve"]))
        if rnd.random() < 0.1:  # and with one: re.I line by line
            picked.append(rnd.choice(["faİled: x", "no ſuch file", "ERROR", "ﬁle"]))
        mixed = rnd.choice(["\n", "\r\n", " ", "\x0c", "\u2028"]).join(picked)
        texts.append(mixed.swapcase() if rnd.random() < 0.3 else mixed)
    for text in texts:
        for line in text.splitlines():
            assert is_error_line(line) == (ERROR_LINE.match(line) is not None), line
        assert error_line(text) == _slow_error_line(text), text
        assert error_line(text, True) == _slow_error_line(text, True), text
    assert sum(_slow_error_line(t) is not None for t in texts) > 100  # the mixes hold errors to find


def test_folds_to_ascii_is_every_character_re_i_or_its_case_reads_as_ascii() -> None:
    """``error_lines.FOLDS_TO_ASCII`` is every character other than ASCII that re.I matches to an ASCII letter or
    whose lower or upper case holds an ASCII character: a text without them is read by ``str.lower`` as re.I reads
    it, where ASCII words are concerned."""
    import re
    import sys

    from forensics.text.error_lines import FOLDS_TO_ASCII

    chars = "".join(chr(c) for c in range(128, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    by_re = {m.group() for m in re.finditer("[a-z]", chars, re.I)} | {
        m.group() for m in re.finditer("|".join("abcdefghijklmnopqrstuvwxyz"), chars, re.I)
    }
    by_case = {c for c in chars if any(x.isascii() for x in c.lower() + c.upper())}
    assert by_re | by_case == set(FOLDS_TO_ASCII)


def test_a_line_without_folds_to_ascii_reads_the_same_lower_cased() -> None:
    """``error_line`` searches a line's lower case without re.I (``_error_in``, ``_shell_error``) where the text holds
    no FOLDS_TO_ASCII: outside them every character lower-cases to one character, as much a word character, a
    space and a line break as it was, so ``\\b``, ``\\s`` and the line breaks fall where they fell; the lines of the
    lower-cased text are the lower-cased lines. Checked on every code point, and the two searches on the edges."""
    import re
    import sys

    from forensics.text.error_lines import _ERROR_IN, FOLDS_TO_ASCII, _error_in, _shell_error

    word, space = re.compile(r"\w"), re.compile(r"\s")
    breaks = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    for i in range(sys.maxunicode + 1):
        c = chr(i)
        if c in FOLDS_TO_ASCII or 0xD800 <= i <= 0xDFFF:
            continue
        low = c.lower()
        assert len(low) == 1, hex(i)
        assert bool(word.match(c)) == bool(word.match(low)) and bool(space.match(c)) == bool(space.match(low)), hex(i)
        assert (c in breaks) == (low in breaks), hex(i)
    for line in EDGES + [e.swapcase() for e in EDGES] + [e.upper() for e in EDGES]:
        if not any(c in FOLDS_TO_ASCII for c in line):
            assert _error_in(line, line.lower()) == (_ERROR_IN.search(line) is not None), line
            shell = re.match(r"\s*/bin/(?:ba)?sh: ", line, re.I) is not None
            assert _shell_error(line, line.lower()) == shell == _shell_error(line, None), line


def test_stream_reads_the_same_runs_in_batches_of_any_size(tmp_path: Path) -> None:
    """``signature.stream`` reads runs in batches of about ``messages`` messages (a run never split: the first
    report's peak memory was its batches of 250 runs), each batch the range of rows its runs are stored in: any
    batch size gives the same runs, each once, cut before its grade-revealing message."""
    from forensics.analyzers.signature import GRADE_REVEALING, stream
    from tests.conftest import FIXTURES, run_cli

    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))[0] == 0
    con = duckdb.connect(str(db), read_only=True)
    ids = [r[0] for r in con.execute("SELECT conversation_id FROM conversations ORDER BY 1").fetchall()]
    whole = list(stream(con, [*ids, "no-such-run"], GRADE_REVEALING, messages=10**9))
    assert [cid for cid, _ in whole] == ids and sum(len(ms) for _, ms in whole) > 100
    for size in (1, 7, 60):
        batched = list(stream(con, ids[::-1] + ids[:3], GRADE_REVEALING, messages=size))
        assert sorted(batched, key=lambda run: run[0]) == whole
    assert list(messages(con, ids[::-1])) == ids  # messages() keeps the id order


def test_the_hand_crafted_converter_keeps_every_message_and_the_step() -> None:
    """bench/whowhen_hand.py on a record of the Who&When Hand-Crafted shape (invented text): one message per
    history entry, the orchestrator's roles one agent, the terminal a tool, the step an index into them."""
    from bench.whowhen_hand import convert

    rec = {
        "history": [
            {"role": "human", "content": "Which bakery opens first?"},
            {"role": "Orchestrator (thought)", "content": "Initial plan: search."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Please search."},
            {"role": "WebSurfer", "content": "I typed 'bakery' into the search bar."},
            {"role": "Orchestrator (-> ComputerTerminal)", "content": "Run it."},
            {"role": "ComputerTerminal", "content": "exitcode: 0"},
            {"role": "Orchestrator (termination condition)", "content": "FINAL ANSWER: none"},
        ],
        "question": "q",
        "ground_truth": "g",
        "is_corrected": False,
        "question_ID": "x",
        "mistake_agent": "WebSurfer",
        "mistake_step": "3",
        "mistake_reason": "r",
    }
    out = convert(rec, 7, "c" * 40)
    assert [(m["role"], m.get("name")) for m in out["messages"]] == [
        ("user", None),
        ("assistant", "Orchestrator"),
        ("assistant", "Orchestrator"),
        ("assistant", "WebSurfer"),
        ("assistant", "Orchestrator"),
        ("tool", "ComputerTerminal"),
        ("assistant", "Orchestrator"),
    ]
    assert out["id"] == "whowhen-hand-7" and out["label"]["mistake_step"] == 3
    assert out["meta"]["agent_matches_step"] is True and out["meta"]["orig_roles"][2] == "Orchestrator (-> WebSurfer)"


HAND = Path(os.environ.get("FORENSICS_WHOWHEN_HAND", "/nonexistent"))


@pytest.mark.skipif(not HAND.is_file(), reason="$FORENSICS_WHOWHEN_HAND not set (python -m bench.whowhen_hand)")
def test_whowhen_hand_crafted_figures(tmp_path: Path) -> None:
    """The 58 Magentic-One runs (kept outside the repository: GAIA questions), the figures of
    docs/failures-evaluation.md: exact 18, ±1 22, agent 43 of 58 (branch ``hand5``; before it 16, 19, 38; before
    branch ``failgen``: 8, 13, 30)."""
    recs = [json.loads(line) for line in HAND.read_text().splitlines() if line.strip()]
    db = tmp_path / "h.duckdb"
    with pytest.raises(SystemExit) as done:
        cli.main(["ingest", str(HAND), "--db", str(db)], standalone_mode=False)
    assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    msgs = messages(con, list(ids.values()))
    exact = near = agent = 0
    for r in recs:
        ms = msgs[ids[r["id"]]]
        assert [m.position for m in ms] == list(range(len(r["messages"])))  # messages.seq is the step
        d = signature(ids[r["id"]], ms, True).decisive
        assert d is not None and d.position is not None
        exact += d.position == r["label"]["mistake_step"]
        near += abs(d.position - r["label"]["mistake_step"]) <= 1
        agent += d.agent == r["label"]["mistake_agent"]
    assert (len(recs), exact, near, agent) == (58, 18, 22, 43)
    # how they ended, by cause: the orchestrator's max rounds (6), max time (4) and replans (3) are limits, an
    # agent's exception the runtime logged (26; one scenario also exited with code 1) errored, "Request
    # satisfied." claims (18); one log stops on a page with no notice (answered). Before, read from the speaker's
    # role only: claimed_success 55, answered 2, gave_up 1
    ends = Counter(ended(ms)[0] for ms in msgs.values())
    assert ends == {"errored": 26, "claimed_success": 18, "limit": 13, "answered": 1}


def test_the_agentrx_tau_converter_keeps_every_message_and_the_root_cause_step() -> None:
    """bench/agentrx_tau.py on a run of AgentRx's tau-bench shape (invented text): every ``traj`` entry one message in
    its chat shape, the agent and the customer named as the labels spell them, the root cause's 1-based step an
    index into the messages."""
    from bench.agentrx_tau import convert

    call = {"id": "call_1", "type": "function", "function": {"name": "find_user", "arguments": '{"zip": "1"}'}}
    run = {
        "task_id": 7,
        "trial": 0,
        "traj": [
            {"role": "system", "content": "Authenticate the user first.", "index": 1},
            {"role": "user", "content": "Return my lamp.", "index": 2},
            {"role": "assistant", "content": None, "tool_calls": [call], "index": 3},
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "name": "find_user",
                "content": "Error: user not found",
                "index": 4,
            },
            {"role": "assistant", "content": "Your lamp is returned.", "index": 5},
        ],
    }
    truth = {
        "trajectory_id": 7,
        "failures": [
            {
                "failure_id": 2,
                "step_number": 5,
                "failed_agent": "Assistant",
                "failure_category": "c",
                "step_reason": "r",
            },
            {
                "failure_id": 1,
                "step_number": 3,
                "failed_agent": "Assistant",
                "failure_category": "d",
                "step_reason": "s",
            },
        ],
        "root_cause": {"failure_id": 2},
    }
    out = convert(run, truth, "c" * 40)
    assert [(m["role"], m.get("name")) for m in out["messages"]] == [
        ("system", None),
        ("user", "User"),
        ("assistant", "Assistant"),
        ("tool", "find_user"),
        ("assistant", "Assistant"),
    ]
    assert out["messages"][2]["tool_calls"] == [call] and out["messages"][3]["tool_call_id"] == "call_1"
    assert out["id"] == "agentrx-tau-7" and out["label"]["mistake_step"] == 4 and out["label"]["first_step"] == 2
    assert out["label"]["mistake_agent"] == "Assistant" and [f["step"] for f in out["label"]["failures"]] == [2, 4]
    # an entry out of order is the wrong shape, not a silently shifted step
    run["traj"][1]["index"] = 9
    with pytest.raises(ValueError, match="index 9"):
        convert(run, truth, "c" * 40)


TAU = Path(os.environ.get("FORENSICS_AGENTRX_TAU", "/nonexistent"))


@pytest.mark.skipif(not TAU.is_file(), reason="$FORENSICS_AGENTRX_TAU not set (python -m bench.agentrx_tau)")
def test_agentrx_tau_figures(tmp_path: Path) -> None:
    """The 29 labeled tau-bench failures of AgentRx (docs/failures-evaluation.md): exact 14, ±1 15, agent 22 of 29
    after the run's own later evidence (branch step9: a change that set the state a later change failed on, a change
    the person disowns, an absence a tool output contradicts; one dev run each, none on held-out); before it 11, 12,
    22 after the fallback of a run that serves a person and the consented change, read off the dev half balanced by
    the root cause's agent (branch rx7; before: 6, 7, 21 after the tool-call rules; the first figures, before any rule
    read them: 2, 2, 21; the step before the first error: exact 3, ±1 6). The system prompt is the conversation's, so
    message 0 has no row and the rest keep their index."""
    recs = [json.loads(line) for line in TAU.read_text().splitlines() if line.strip()]
    db = tmp_path / "t.duckdb"
    with pytest.raises(SystemExit) as done:
        cli.main(["ingest", str(TAU), "--db", str(db)], standalone_mode=False)
    assert done.value.code in (0, None)
    con = duckdb.connect(str(db), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    msgs = messages(con, list(ids.values()))
    exact = near = agent = 0
    for r in recs:
        ms = msgs[ids[r["id"]]]
        assert [m.position for m in ms] == list(range(1, len(r["messages"])))  # messages.seq is the step
        d = signature(ids[r["id"]], ms, True).decisive
        assert d is not None and d.position is not None
        exact += d.position == r["label"]["mistake_step"]
        near += abs(d.position - r["label"]["mistake_step"]) <= 1
        agent += d.agent == r["label"]["mistake_agent"]
    assert (len(recs), exact, near, agent) == (29, 14, 15, 22)
    ends = Counter(ended(ms)[0] for ms in msgs.values())
    assert ends == {"claimed_success": 13, "answered": 9, "cut_off": 4, "gave_up": 2, "errored": 1}


def test_a_tool_call_is_a_step_and_a_failed_lookup_is_no_failed_step() -> None:
    """A single agent that acts by tool calls (tau-bench's shape, invented text): a message that only calls a tool is
    a step; a lookup that found nothing is retried, no failed step; a call that changes something and fails is; where
    nothing failed, the first call that changes something."""

    def call(position: int, name: str) -> Msg:
        return Msg(position, "assistant", "assistant", "Assistant", "", calls=1, call_names=(name,))

    msgs = [
        Msg(0, "user", "person", "User", "Please exchange the lamp of my order #W1 for the blue one."),
        call(1, "find_user_id_by_email"),
        Msg(2, "tool", "tool", None, "Error: user not found", error=True),
        call(3, "find_user_id_by_name_zip"),
        Msg(4, "tool", "tool", None, "alice_1"),
        call(5, "get_order_details"),
        Msg(6, "tool", "tool", None, '{"order_id": "#W1", "status": "pending"}'),
        call(7, "modify_pending_order_items"),
        Msg(8, "tool", "tool", None, '{"order_id": "#W1", "status": "pending (item modified)"}'),
        Msg(9, "assistant", "assistant", "Assistant", "Your lamp has been exchanged for the blue one."),
    ]
    d = signature("r", msgs, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "Assistant", "first_write")
    # the same tools served by an MCP server, named with its namespace (``mcp__<server>__<tool>``): the same step
    served = [replace(m, call_names=tuple(f"mcp__shop__{n}" for n in m.call_names)) for m in msgs]
    d = signature("r", served, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "Assistant", "first_write")
    # the change itself failed: a failed step, the same message
    failed = [*msgs[:8], Msg(8, "tool", "tool", None, "Error: non-delivered order cannot be exchanged", error=True)]
    d = signature("r", failed, True).decisive
    assert d is not None and (d.position, d.rule) == (7, "failed_code")
    # only reads: the first step is the first call
    reads = msgs[:7] + [Msg(7, "assistant", "assistant", "Assistant", "Your order #W1 is still pending, sorry.")]
    d = signature("r", reads, True).decisive
    assert d is not None and (d.position, d.rule) == (1, "first_reply")


def test_a_run_that_serves_a_person_without_evidence_falls_back_to_the_step_before_the_first_error() -> None:
    """Where no rule fires and the run has no signature step, the step is the trivial one that did best on the dev
    half of labeled runs of its shape (docs/failures-evaluation.md): a run that serves a person (the agent calls
    tools, the person speaks again after a reply; tau-bench's shape, invented text) the step before the first error
    output, else the last step; a run where no person speaks after the task keeps the first reply after it."""

    def call(position: int, name: str) -> Msg:
        return Msg(position, "assistant", "assistant", "Assistant", "", calls=1, call_names=(name,))

    served = [
        Msg(0, "user", "person", "User", "Hi, where is my order #W1?"),
        Msg(1, "assistant", "assistant", "Assistant", "Could you give me your email so I can find your account?"),
        Msg(2, "user", "person", "User", "It is alice@example.com."),
        call(3, "find_user_id_by_email"),
        Msg(4, "tool", "tool", None, "alice_1"),
        call(5, "get_order_details"),
        Msg(6, "tool", "tool", None, '{"order_id": "#W1", "status": "processed"}'),
        Msg(7, "assistant", "assistant", "Assistant", "Your order #W1 has been processed and ships soon."),
        Msg(8, "user", "person", "User", "Thanks. ###STOP###"),
    ]
    d = signature("r", served, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (8, "User", "before_first_error")
    # a lookup that failed is no failed step (it is retried), but it is the run's first error: the step before it
    failed = [
        *served[:4],
        Msg(4, "tool", "tool", None, "Error: user not found", error=True),
        call(5, "find_user_id_by_name_zip"),
        Msg(6, "tool", "tool", None, "alice_1"),
        *served[7:],
    ]
    d = signature("r", failed, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (3, "Assistant", "before_first_error")
    # the same talk with no tool call at all is no run that serves a person by acting: the first reply
    talk = [m for m in served if not m.calls and m.role != "tool"]
    d = signature("r", talk, True).decisive
    assert d is not None and (d.position, d.rule) == (1, "first_reply")
    # the person speaks only the task (a group chat's shape, or one request): the first reply after the task
    one = [served[0], *served[3:8]]
    d = signature("r", one, True).decisive
    assert d is not None and (d.position, d.rule) == (3, "first_reply")
    # evidence of its own outranks the fallback: a change made is the first write
    changed = [*served[:7], call(7, "cancel_pending_order"), Msg(8, "tool", "tool", None, '{"status": "cancelled"}')]
    d = signature("r", changed + [served[8]], True).decisive
    assert d is not None and (d.position, d.rule) == (7, "first_write")
    # a change the person consented to was what they asked for given what they were told: the step is where the agent
    # first told them what its tools found (its first reply after a tool output)
    consented = [
        *served[:8],
        Msg(8, "user", "person", "User", "Oh, then please cancel it instead."),
        Msg(9, "assistant", "assistant", "Assistant", "I will cancel order #W1 now. Shall I proceed?"),
        Msg(10, "user", "person", "User", "Yes, go ahead."),
        call(11, "cancel_pending_order"),
        Msg(12, "tool", "tool", None, '{"status": "cancelled"}'),
    ]
    d = signature("r", consented, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "Assistant", "consented_change")
    # one request, no person turn after a reply (no run that serves a person): the change stays the step, even
    # when the request itself says yes
    one_request = [
        Msg(0, "user", "person", "User", "Yes, go ahead and cancel my order #W1, I told you before."),
        *served[5:8],
        *consented[11:],
    ]
    d = signature("r", one_request, True).decisive
    assert d is not None and (d.position, d.rule) == (11, "first_write")


def test_the_runs_own_later_evidence_names_the_step() -> None:
    """Branch ``step9`` (tau-bench's shape, invented text): a change that set the state a later change of the same plan
    failed on; a change the person's next turn disowns; a reply saying a thing has none of something that an earlier
    tool output about it holds. Each outranks the first change, and none fires on its near miss."""

    def call(position: int, name: str) -> Msg:
        return Msg(position, "assistant", "assistant", "Assistant", "", calls=1, call_names=(name,))

    head = [
        Msg(0, "user", "person", "User", "Swap the lamp of order #W12345 for the blue one and fix my address."),
        Msg(1, "assistant", "assistant", "Assistant", "Sure. Could you give me your email so I can find you?"),
        Msg(2, "user", "person", "User", "It is alice@example.com. Yes, go ahead with both."),
        call(3, "get_order_details"),
        Msg(4, "tool", "tool", None, '{"order_id": "#W12345", "status": "pending", "fulfillments": []}'),
        call(5, "modify_pending_order_items"),
        Msg(6, "tool", "tool", None, '{"order_id": "#W12345", "status": "pending (item modified)"}'),
        call(7, "modify_pending_order_address"),
    ]
    refused = Msg(8, "tool", "tool", None, "Error: non-pending order cannot be modified", error=True)
    tail = [Msg(9, "assistant", "assistant", "Assistant", "The lamp is swapped; the address could not be changed.")]
    d = signature("r", [*head, refused, *tail], True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (5, "Assistant", "earlier_change")
    # an error that says the call was wrong, not that the state forbids it: the failed change is the step
    wrong = replace(refused, text="Error: address line is missing")
    d = signature("r", [*head, wrong, *tail], True).decisive
    assert d is not None and (d.position, d.rule) == (7, "failed_code")
    # the person spoke between the two changes: they are no one plan, the failed change is the step
    apart = [*head[:7], Msg(7, "user", "person", "User", "Now the address, please."), replace(head[7], position=8)]
    d = signature("r", [*apart, replace(refused, position=9)], True).decisive
    assert d is not None and (d.position, d.rule) == (8, "failed_code")

    done = [
        *head[:5],
        call(5, "cancel_pending_order"),
        Msg(6, "tool", "tool", None, '{"order_id": "#W12345", "status": "cancelled"}'),
        Msg(7, "assistant", "assistant", "Assistant", "Your order #W12345 has been cancelled and refunded."),
    ]
    d = signature("r", [*done, Msg(8, "user", "person", "User", "Thanks, that was all. ###STOP###")], True).decisive
    assert d is not None and d.rule != "disowned_change"
    disowned = Msg(8, "user", "person", "User", "I only wanted to cancel the lamp, not the entire order.")
    d = signature("r", [*done, disowned], True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (5, "Assistant", "disowned_change")
    # an instruction before a change is no disowning ("I only want ...", present tense)
    asked = replace(disowned, text="I only want to cancel the lamp, not the entire order.")
    d = signature("r", [*done, asked], True).decisive
    assert d is not None and d.rule != "disowned_change"

    shipped = '{"order_id": "#W12345", "status": "delivered", "fulfillments": [{"tracking_id": ["2864223389"]}]}'
    told = [
        *head[:3],
        call(3, "get_order_details"),
        Msg(4, "tool", "tool", None, shipped),
        Msg(5, "assistant", "assistant", "Assistant", "Order #W12345 was delivered. Anything else?"),
        Msg(6, "user", "person", "User", "What is its tracking number?"),
        Msg(7, "assistant", "assistant", "Assistant", "Order #W12345 does not have a tracking number, sorry."),
        Msg(8, "user", "person", "User", "Okay. ###STOP###"),
    ]
    d = signature("r", told, True).decisive
    assert d is not None and (d.position, d.agent, d.rule) == (7, "Assistant", "contradicted_absence")
    # the output holds the field empty ("fulfillments": []): the reply is borne out, no contradiction
    empty = [*told[:4], head[4], *told[5:]]
    empty[6] = replace(told[6], text="Order #W12345 does not have any fulfillment details yet.")
    d = signature("r", empty, True).decisive
    assert d is not None and d.rule != "contradicted_absence"


def test_the_halves_balanced_by_a_label_split_each_stratum_by_the_hash() -> None:
    """bench/failures.py's ``stratified_halves``: within each value of the label, the runs ordered by the sha256 of
    ``source:id``, alternately dev and held-out (the first dev); the same runs give the same halves in any order."""
    from bench.failures import stratified_halves

    recs = [
        {"source": "s", "id": f"r{i}", "label": {"agent": "User" if i % 4 == 0 else "Assistant"}} for i in range(29)
    ]
    got = stratified_halves(recs, "agent")
    assert got == stratified_halves(list(reversed(recs)), "agent")
    users = [f"s:r{i}" for i in range(29) if i % 4 == 0]
    assert Counter(got[k] for k in users) == {"dev": 4, "held-out": 4}
    assert Counter(got.values()) == {"dev": 15, "held-out": 14}


def test_tables_that_need_graded_runs_say_so_where_there_are_none(tmp_path: Path) -> None:
    """The demo's logs have problem-bearing runs and no outcomes: *Failed runs* and *What failed runs did differently*
    say in one sentence that they need graded runs, in Markdown and HTML, instead of a header over no rows; the
    signatures' table, which has rows, stays a table. Where runs are graded the tables are tables
    (``test_report_leads_with_what_went_wrong_and_keeps_run_failures``)."""
    from forensics.analyzers.failures import NO_GRADES
    from tests.conftest import FIXTURES, run_cli

    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "sessions"), "--db", str(db))[0] == 0
    out = tmp_path / "r"
    code, _, err = run_cli(
        "report", "--db", str(db), "--out", str(out), "--format", "md,html", "--only", "problems,failures"
    )
    assert code == 0, err
    md = (out / "report.md").read_text()
    section = md[md.index("## What went wrong") : md.index("\n## ", md.index("## What went wrong") + 1)]
    assert "0 of them failed" in section
    for caption in ("Failed runs, most common signature first", "What failed runs did differently"):
        line = next(x for x in section.splitlines() if x.startswith(caption))
        assert line.endswith(". " + NO_GRADES), line
    assert "| run | conversation_id |" not in section and "| feature | failed runs |" not in section
    assert section.count("| cluster | runs |") == 1
    html = (out / "report.html").read_text()
    assert html.count("No graded runs: which runs failed") == 2
    assert "<th>evidence</th>" not in html and "<th>compared</th>" not in html
