"""The answer first, judged against the corpus: what fires on most conversations is said once, the rest ranked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.analyzers.drift.corpus import Distribution
from forensics.report.digest import PER_KIND, RANK, STRONGEST
from tests.conftest import query


@pytest.fixture(scope="module")
def doc(reported_wh: Path) -> dict:
    return json.loads((reported_wh.parent / "r" / "metrics.json").read_text())


def test_a_kind_flagged_in_most_conversations_is_said_once_as_a_norm(doc: dict) -> None:
    norms = {n["kind"]: n["text"] for n in doc["corpus_norms"]}
    # crowding crosses the seed's ratios in 21 of 22 sqlite conversations: held against its own kind it is that
    # agent's way of working, said once (issue 24), and no conversation is a finding of it
    assert doc["sections"]["drift"]["conversations_flagged"]["tool_result_crowding"] == 0
    assert norms == {
        "echo_rate:sqlite": "the SQLite harness: 45% of the replies are tool calls without a word (22 of 22 "
        "conversations at 30% or more), the way this agent works",
        "tool_result_crowding:sqlite": "tool result crowding in 21 of 22 conversations of the SQLite harness: this "
        "agent's way of working, not a finding per conversation",
        "user_pushback": "user pushback in 18 of 22 conversations",  # the fixtures' scripted corrections (不对)
        # the problems section holds each kind against the agent family (docs/definitions.md#problems-a-reviewer-flags): the scripted corrections and
        # the seed's crowded contexts are said once, and only the conversations above the family's runs of their
        # length keep their findings (issue 41, norm9: the family's line of messages cited by length, through its
        # median run). Every crowded context cites its three largest outputs, whatever its length: none is above
        # the family's line (the median share kept the 11 shortest); 10 of the 18 with repeats are above it
        **{
            f"{k}:sqlite": f"{k.replace('_', ' ')} in {n} of 22 conversations of the SQLite harness: how this agent "
            f"works, so a conversation is flagged only where it cites more of its messages than the agent's runs of "
            f"its length (messages cited grow as length^{slope} over its runs): {kept} conversations"
            for k, n, slope, kept in (("context_crowded", 19, "0.00", 0), ("user_repeated", 18, "0.69", 10))
        },
    }
    assert "tool_result_crowding" not in {f["kind"] for f in doc["strongest_findings"]}


def test_strongest_findings_are_most_severe_first_then_furthest_out(doc: dict) -> None:
    s = doc["strongest_findings"]
    assert len(s) == STRONGEST
    keys = [(RANK[f["severity"]], 50.0 if f["percentile"] is None else f["percentile"]) for f in s]
    assert keys == sorted(keys, reverse=True)
    kinds = [f["kind"] for f in s]
    assert max(kinds.count(k) for k in kinds) <= PER_KIND and len(set(kinds)) >= 4
    assert len({(f["conversation_id"], f["kind"]) for f in s}) == len(s)  # de-duplicated
    # percentiles are taken among the requests of the same kind of agent (issue 24), not the pooled corpus
    # (the aeb4919b twins tie: the same request in the realistic fixture and its Anthropic rewrite)
    # (their order is the conversation ids', hashes of the checkout's path: either may come first)
    assert {s[0]["label"], s[1]["label"]} == {"aeb4919b · realistic.db", "aeb4919b · anthropic.db"}
    assert s[0]["kind"] == s[1]["kind"] == "tool_dispersion" and round(s[0]["percentile"], 1) == 99.4


def test_worst_conversations_rank_by_their_findings_with_a_reason_each(doc: dict) -> None:
    """Weighed by severity, by how rare the kind is here (user pushback fires on 82 % of the fixtures: the scripted
    corrections, a corpus norm, so it ranks nothing) and how far out in its norm, a second kind of one analyzer at
    half; length is no weight, and neither is a measurement (a topic interleave, a crowded context, a wide request) of
    a run that ended with its work handed over (issue 41, branch rank5). So the 2e4215f0 twins (the realistic
    fixture and its Anthropic rewrite, equal scores: a "- namespace: fixed" the person's next turn contradicts, a
    sentinel lost before a tool error, a request said again) come first, then d6614e0b (the one compaction topic loss)
    and a82389b1 (run_command failing three times with the same error), tied, in their reasons' order, and aeb4919b's
    Anthropic rewrite (a "- tracing subscriber: fixed" over failing tests, and `npm run typecheck` run again after it
    failed with only reads between: recall10's failed_step_again; 2bae3528's "fixed" over a failing build was fifth). a82389b1's "还是不对" is below the SQLite harness's runs of its length (issue 41,
    norm9: it ranked third on it before). Before, the aeb4919b twins led on their topic interleave beside a false "fixed", and a9ce8167 was
    fifth on a long interleave and a crowded context alone: all runs that end on a reply. Held against sqlite's own
    norms (issue 24)."""
    worst = doc["worst_conversations"]
    # the twins tie: their order is their reasons' (the rewrite's quotes sit at other positions), never the id
    assert [w["label"] for w in worst] == [
        "2e4215f0 · anthropic.db",
        "2e4215f0 · realistic.db",
        "d6614e0b",
        "a82389b1 · anthropic.db",
        "aeb4919b · anthropic.db",
    ]
    assert [w["score"] for w in worst] == sorted((w["score"] for w in worst), reverse=True)
    assert worst[0]["score"] == worst[1]["score"]
    assert (
        worst[0]["reasons"][0]
        == "gave up or false success (high, fires on 23% of conversations): [26] “- namespace: fixed”"
    )
    assert worst[2]["score"] == worst[3]["score"]  # norm9: two runs tie
    assert worst[2]["reasons"][0].startswith("compaction topic loss (high, fires on 5%")  # the rarest first
    assert worst[3]["reasons"][0].startswith("loop (high, fires on 5% of conversations): run_command failed 3 times")
    # recall9: its "- codesign: fixed" and "- msi installer: fixed" the person's next turns contradict ("The msi
    # installer part still looks wrong, `notarize_app` errors out", read true) join its "fixed" over a failing build at
    # [25]: three claims of one kind, said by the norm they share; its place and score are unmoved
    assert worst[4]["reasons"] == [
        "gave up or false success (high, fires on 23% of conversations): [111] “- tracing subscriber: fixed”",
        "redundant work (low, fires on 9% of conversations): [72] “npm run typecheck”",
    ]
    measures = {"tool_dispersion", "tool_result_crowding", "topic_interleave", "no_focus", "context_crowded"}
    assert not [r for w in worst for r in w["reasons"] if r.split(" (")[0].replace(" ", "_") in measures]


def test_weights_favour_rare_kinds_and_severity_never_length() -> None:
    from forensics.analyzers.base import Finding
    from forensics.report.digest import Ranked, worst

    def f(cid: str, kind: str, severity: str = "high") -> Ranked:
        return Ranked("drift", Finding(kind, severity, cid, cid, [1], "s", "r", percentile=90.0))

    ranked = [f("many", "common"), f("two", "rare_a"), f("two", "rare_b", "low"), f("one", "common", "low")]
    out = worst(ranked, {"common": 0.5, "rare_a": 0.02, "rare_b": 0.04})
    assert [w.conversation_id for w in out] == ["two", "many", "one"]
    assert [w.score for w in out] == [5.7 + 2.85 / 2, 1.9, 0.95]  # rarity at most 3; rare_b, a second drift kind: half


def test_every_kind_is_printed_with_the_share_of_conversations_it_fires_on(doc: dict, reported_wh: Path) -> None:
    kinds = {k["kind"]: k for k in doc["finding_kinds"]}
    assert kinds["tool_dispersion"] == {
        "section": "drift",
        "kind": "tool_dispersion",
        "findings": 9,
        "conversations": 9,
        "share": 9 / 22,
    }
    assert "tool_result_crowding" not in kinds  # sqlite's way of working: a norm line, not a finding (issue 24)
    assert set(kinds) == {f["kind"] for f in doc["findings"]}
    md = (reported_wh.parent / "r" / "report.md").read_text()
    assert "| tool_dispersion | drift | 9 | 9 | 41% |" in md
    assert "share of conversations</th>" in (reported_wh.parent / "r" / "report.html").read_text()


def test_what_to_change_is_what_tune_recommends(doc: dict, reported_wh: Path) -> None:
    w = doc["what_to_change"]
    keys = [c["key"] for c in w["changes"]]
    assert keys == sorted(keys, key=lambda k: (k.startswith("drift."), k))
    assert all(c["current"] != c["recommended"] for c in w["changes"])
    summarize = next(c for c in w["changes"] if c["key"] == "tool_result.summarize_bytes")
    assert summarize["harness"] and summarize["effect"].startswith("tool share of context ")
    assert f"summarize_bytes = {summarize['recommended']}  # was 2000" in w["toml"]
    assert "[drift]" not in w["toml"] and ("[drift]" in w["toml_drift"]) == any(not c["harness"] for c in w["changes"])
    assert w["command"] == f"forensics tune --db {reported_wh} --config harness.toml --write"
    assert w["tuned_over"] == "22 conversations, {} messages".format(
        query(reported_wh, "SELECT count(*) FROM messages WHERE on_main_path")[0][0]
    )


def test_dispersion_below_the_corpus_fence_counts_only_when_the_user_stepped_in(reported_wh: Path) -> None:
    rows = query(
        reported_wh, "SELECT value, rule FROM drift_findings WHERE kind = 'tool_dispersion' AND severity <> 'none'"
    )
    assert rows and all("outlier fence" in r or "stepped in" in r for _, r in rows)
    # every finding names the norm it was held against: its kind of agent's fence (format and model)
    assert all("'s norm: fence " in r for _, r in rows)
    assert sum("stepped in" in r and "outlier fence" not in r for _, r in rows) == 5  # reads, then the person steps in


def test_a_corpus_distribution_places_a_value_and_fences_its_outliers() -> None:
    d = Distribution([1, 2, 2, 3, 5, 8, 13, 2, 2, 1, 4, 4, 4, 6, 7, 9, 1, 1, 2, 3, 30, None])
    assert d.fence() == 12.0  # Q3 7 + 1.5 x IQR (7 - 2)
    assert (d.standing(30), d.standing(2), d.standing(1, below=True)) == (100 * 20 / 21, 100 * 4 / 21, 100 * 17 / 21)
    assert Distribution([1] * 19).fence() is None and Distribution([]).standing(3) is None


def test_a_tie_is_broken_by_what_the_reader_sees_not_by_the_path_hashed_id() -> None:
    from forensics.analyzers.base import Finding
    from forensics.report.digest import Ranked, worst

    def f(cid: str, quote: str) -> Ranked:
        return Ranked("problems", Finding("rule_broken", "high", cid, cid, [3], quote, "", percentile=None))

    # the same two runs read from two folders: their ids (hashes of the path) sort the other way round
    for a, b in (("0aaa", "ffff"), ("ffff", "0aaa")):
        tied = [f(a, "[3] “# Background: Replicator”"), f(b, "[3] “# Background: Laminar”")]
        assert [w.reasons[0].split(": ", 1)[1] for w in worst(tied, {"rule_broken": 0.07})] == [
            "[3] “# Background: Laminar”",
            "[3] “# Background: Replicator”",
        ]


def test_a_measurement_does_not_rank_a_run_that_ended_with_its_work_handed_over() -> None:
    """A request read widely or a large context is true of the run and says nothing went wrong when the run ended on
    its answer (the real logs' Claude Code session that read 22 files and finished was third of the five worst on
    width and size alone). It still ranks a run that was cut off or stopped, and a finding of something that went
    wrong ranks a finished run as before."""
    from forensics import analyzers
    from forensics.analyzers.base import Finding
    from forensics.report.digest import Ranked, weighed, worst

    assert {"tool_dispersion", "context_crowded"} <= analyzers.measure_kinds()
    assert "gave_up_or_false_success" not in analyzers.measure_kinds()

    def f(cid: str, kind: str) -> Ranked:
        return Ranked("s", Finding(kind, "high", cid, cid, [3], f"{kind} of {cid}"))

    ranked = [f("wide", "tool_dispersion"), f("wide", "context_crowded"), f("cut", "tool_dispersion")]
    ranked += [f("claimed", "gave_up_or_false_success"), f("claimed", "tool_dispersion")]
    assert sorted(w.conversation_id for w in worst(ranked, {})) == ["claimed", "cut", "wide"]
    kept = weighed(ranked, {"wide", "claimed"})
    assert [(r.finding.conversation_id, r.finding.kind) for r in kept] == [
        ("cut", "tool_dispersion"),
        ("claimed", "gave_up_or_false_success"),
    ]
    assert [w.conversation_id for w in worst(ranked, {}, {"wide", "claimed"})] == ["claimed", "cut"]
    assert weighed(ranked, ()) == ranked


def test_findings_of_two_analyzers_read_off_the_same_evidence_count_once() -> None:
    """Drift's tool_result_crowding and problems' context_crowded both read the share of tool output in the context;
    the rules audit's rule_broken and problems' instruction_violated the same verdicts. A conversation with both
    counts the stronger once (Crush's run that read its repository was third of the real logs' worst on bulky tool
    output counted twice); a conversation with one of them, or with two findings of other evidence, is unchanged."""
    from forensics import analyzers
    from forensics.analyzers.base import Finding
    from forensics.report.digest import Ranked, once, score_of, worst

    assert analyzers.restated() == {
        "tool_result_crowding": "context_crowded",
        "rule_broken": "instruction_violated",
    }

    def f(section: str, cid: str, kind: str, severity: str = "high") -> Ranked:
        return Ranked(section, Finding(kind, severity, cid, cid, [3], f"{kind} of {cid}"))

    crowded = [f("drift", "twice", "tool_result_crowding", "low"), f("problems", "twice", "context_crowded")]
    apart = [f("drift", "apart", "topic_interleave", "low"), f("problems", "apart", "context_crowded")]
    shares: dict[str, float | None] = {"tool_result_crowding": 0.5, "context_crowded": 0.5, "topic_interleave": 0.5}
    # counted once: the stronger of the two (high, 2 x rarity 1 x 0.75); another evidence adds up (low: 0.75)
    assert [r.finding.kind for r in once(crowded, shares)] == ["context_crowded"]
    assert score_of(crowded, shares) == 1.5
    assert score_of(apart, shares) == 1.5 + 0.75
    assert [w.conversation_id for w in worst(crowded + apart, shares)] == ["apart", "twice"]
    assert [w.reasons[0].split(" (")[0] for w in worst(crowded, shares)] == ["context crowded"]
    # either one alone weighs as before
    assert score_of(crowded[:1], shares) == 0.75
    ruled = [f("rules", "r", "rule_broken"), f("problems", "r", "instruction_violated")]
    assert len(once(ruled, {})) == 1


def test_each_run_is_read_once_for_how_it_ended(tmp_path: Path) -> None:
    """``build.done`` reads how a run with a measurement finding ended once per report: the outcome analyzer's ranking
    and the digest share what it read (``known``), and a later call reads only the runs it has not read. A run that
    ended on an answer is done; one that stops on a call no result answers is not."""
    import duckdb

    from forensics import ingest
    from forensics.analyzers.base import Finding, Section
    from forensics.report.build import Known, done
    from tests.test_problems import Session

    answered = Session("answered").add("user", "List the files").add("assistant", "There are two: a.py and b.py.")
    cut = (
        Session("cut")
        .add("user", "List the files")
        .add(
            "assistant",
            "",
            tool_calls=[{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        )
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    for s in (answered, cut):
        s.write(logs)
    ingest([logs], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())

    def measured(*natives: str) -> list[Section]:
        found = [Finding("tool_dispersion", "high", ids[n], n, [1], "wide") for n in natives]
        return [Section("drift", "Drift", findings=found)]

    other = Finding("no_focus", "high", "other", None, [1], "unread")
    known = Known()
    assert done(con, measured("answered"), known=known) == {ids["answered"]}
    assert done(con, measured("answered", "cut"), known=known) == {ids["answered"]}
    assert (known.handed_over.seen, known.handed_over.holds) == ({ids["answered"], ids["cut"]}, {ids["answered"]})
    assert (known.waiting.seen, known.waiting.holds) == ({(ids["answered"], 1), (ids["cut"], 1)}, set())
    assert (known.asked.seen, known.asked.holds) == (
        {(ids["answered"], 1, "tool_dispersion"), (ids["cut"], 1, "tool_dispersion")},
        set(),
    )
    # read once: a warehouse with no messages at all gives the same answer for the runs already read...
    empty = duckdb.connect()
    assert done(empty, measured("answered", "cut"), known=known) == {ids["answered"]}
    # ...and is read for a run that was not
    with pytest.raises(duckdb.CatalogException):
        done(empty, measured("answered", "cut") + [Section("drift", "Drift", findings=[other])], known=known)


def test_a_measurement_does_not_rank_a_turn_that_waits_on_a_process_it_started(tmp_path: Path) -> None:
    """A coordinator that spawned a worker and polls it (Codex's ``write_stdin`` sending nothing) between status
    checks waits; what its turn names is no work of its own (the real logs' Codex coordinator was third of the five
    worst on the old topic's folder named in its status checks). A measurement whose turn is half polls or more is
    not weighed, whatever its run's end; a turn that works (two polls of five calls) is. The key is the finding's
    first position, so another measurement of the same run, in a turn that works, still weighs."""
    import duckdb

    from forensics import ingest
    from forensics.analyzers.base import Finding, Section
    from forensics.report.build import done
    from forensics.report.digest import Ranked, weighed
    from tests.test_problems import Session

    def poll(s: Session) -> Session:
        return s.call("write_stdin", {"session_id": 7, "chars": "", "yield_time_ms": 30000}, "Process running")

    waits = Session("waits").add("user", "Read the notes, then spawn an agent to move the runs to results/")
    waits.call("exec_command", {"cmd": "cat notes.md"}, "the notes " * 10)
    waits.add("user", "Now spawn the worker")
    waits.call("exec_command", {"cmd": "workmux add move-runs"}, "Spawned move-runs")
    for _ in range(3):
        poll(waits)
    waits.call("exec_command", {"cmd": "workmux status move-runs"}, "move-runs working 4m")
    works = Session("works").add("user", "Move the runs to results/")
    for cmd in ("git mv runs results", "sed -i s/runs/results/ a.py", "pytest -q"):
        works.call("exec_command", {"cmd": cmd}, f"ran {cmd}")
    poll(poll(works))
    logs = tmp_path / "logs"
    logs.mkdir()
    for s in (waits, works):
        s.write(logs)
    ingest([logs], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    ids = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    found = [
        Finding("topic_interleave", "high", ids["waits"], "waits", [5, 7], "the old topic after the switch"),
        Finding("context_crowded", "high", ids["waits"], "waits", [2], "a crowded context"),
        Finding("topic_interleave", "high", ids["works"], "works", [2, 4], "the old topic after the switch"),
    ]
    unweighed = done(con, [Section("drift", "Drift", findings=found)])
    assert unweighed == {(ids["waits"], 5)}  # neither run ended on an answer: both are cut off on a call
    kept = weighed([Ranked("drift", f) for f in found], unweighed)
    assert [(r.finding.native_id, r.finding.kind) for r in kept] == [
        ("waits", "context_crowded"),
        ("works", "topic_interleave"),
    ]


def test_a_measurement_of_breadth_does_not_rank_a_turn_whose_request_asked_for_it(tmp_path: Path) -> None:
    """A request that asks for all of something or names many things asks for a wide run (the real logs' Claude Code
    session told to turn each finding of a long audit into an issue and fix all of them ranked on the 60 targets it
    read). A measurement of breadth (``Analyzer.wide``) whose turn's request asks so is not weighed; the same kind in
    a turn asking one thing is, and so is a measurement that is no breadth (topic interleave) in the wide turn."""
    import duckdb

    from forensics import analyzers, ingest
    from forensics.analyzers.base import Finding, Section
    from forensics.analyzers.signature import asks_wide
    from forensics.report.build import done
    from forensics.report.digest import Ranked, weighed
    from tests.test_problems import Session

    assert analyzers.wide_kinds() == {"tool_dispersion", "tool_result_crowding", "context_crowded"}
    assert analyzers.wide_kinds() <= analyzers.measure_kinds()
    for text in (
        "Turn each one of them into a github issue, then fix all of them.",
        "Run every test under tests/ and report",
        "Look at a.py, b.py, src/c.py, d.ts and e.go",
        "Fix #12, #15, #18, #20 and #31",
        "Do these:\n- one\n- two\n- three\n1. four\n2) five",
        "Read `a.md`, `b.md`, `c.md`, `d.md`, and `CONCEPTS.md` first",
        "Then, for each inline comment you addressed, post a one-line reply",
    ):
        assert asks_wide(text), text
    # fixtures/real (tidy7 read 20 of its 63 matches: 6 asked for breadth): a property said of each thing, a why or
    # how question, and the paths, counters and numbered hints of pasted output are no request for breadth
    for text in (
        "where is the variance? I want a 1std plot around the mean at each point? or somesuch",
        "why did you change the color of the header for each page. keep the one i gave earlier",
        "how does vercel calculate the pass rate of each assertion",
        "I thought the pass rates in agent v is for each assertion . will this caused confusion",
        "main.js:23 ChunkLoadError: Loading chunk 179 failed. (error: http://localhost:8100/179.js) at r.f.j "
        "(runtime.js:1:2170) at runtime.js:1:739 at r.e (runtime.js:1:718) at main.js:1:16625 at g "
        "(polyfills.js:23:28990) at Generator.next (<anonymous>)",
        "copying build/lib/ai/secrets.py -> build/bdist/wheel/./ai\ncopying build/lib/ai/utils.py -> build/bdist/wheel/"
        "./ai\ncopying build/lib/ai/openai.py -> build/bdist/wheel/./ai\nrunning install_egg_info",
        "remote: Counting objects: 100% (954/954), done. remote: Compressing objects: 100% (308/308), done. "
        "Receiving objects: 100% (5682/5682), 3.1 MiB/s, done. and/or fix the script set1.sh",
        "For each response: 1. Include a THOUGHT section 2. Provide one or more bash tool calls",
    ):
        assert not asks_wide(text), text
    for text in (
        "OK, great. Now implement the plan.",
        "All right, that's all for now. Thanks all",
        "try again",
        "They help each other; check it every time",
        "Fix the bug in a.py and b.py",
        "- one\n- two\n- three\n- four",
    ):
        assert not asks_wide(text), text

    wide = Session("wide").add("user", "Here is the audit. Turn each finding into an issue, and fix all of them.")
    for name in ("a.py", "b.py", "c.py"):
        wide.call("read", {"path": name}, f"{name} " * 10)
    wide.add("user", "Now fix the login bug")
    wide.call("read", {"path": "login.py"}, "def login(): ...")
    logs = tmp_path / "logs"
    logs.mkdir()
    wide.write(logs)
    ingest([logs], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    cid = con.execute("SELECT conversation_id FROM conversations").fetchone()[0]  # type: ignore[index]
    found = [
        Finding("tool_dispersion", "high", cid, "wide", [1, 3], "60 distinct targets"),
        Finding("topic_interleave", "high", cid, "wide", [2], "the old topic after the switch"),
        Finding("context_crowded", "high", cid, "wide", [8], "a crowded context"),
    ]
    unweighed = done(con, [Section("drift", "Drift", findings=found)])
    assert unweighed == {(cid, 1, "tool_dispersion")}  # the run was cut off on a call; no turn polls
    kept = weighed([Ranked("drift", f) for f in found], unweighed)
    assert [r.finding.kind for r in kept] == ["topic_interleave", "context_crowded"]
