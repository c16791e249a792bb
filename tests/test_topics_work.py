"""The request scorer for work with an agent (``topics/work.py``): which conversations it judges, its signals, and a
new request after finished work marked where feedback on that work is not."""

from __future__ import annotations

from collections import Counter

from forensics.analyzers.schema import defaults
from forensics.analyzers.topics import work
from forensics.analyzers.topics.infer import infer
from forensics.analyzers.topics.model import load_model, load_models
from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.topics.signals import Idf, Message, features, prepare
from forensics.text.cues import Cues

CUES = Cues.from_settings(TopicSettings.of(defaults()))
LONG = "Implemented the drag handle in `src/canvas/Node.tsx` and wired it into the graph store. " * 20


def _conversation(*turns: tuple[str, str]) -> list[Message]:
    msgs = [Message(i, role, text, role == "user") for i, (role, text) in enumerate(turns)]
    prepare(msgs)
    return msgs


def test_only_conversations_where_the_assistant_works_are_judged_by_it() -> None:
    chat = _conversation(("user", "I need a hotel in the north"), ("assistant", "There are 3. Any price range?"))
    assert not work.is_work(chat)
    assert work.is_work(_conversation(("user", "fix the drag"), ("assistant", LONG)))


def test_request_form_reads_the_persons_opening_not_a_paste() -> None:
    for text in (
        "Now add type declarations for the core modules",
        "OK, great. Now implement the plan.",
        "please create a e2e testsuite",
        "je voudrais lister les utilisateurs",
        "帮我写一个脚本",
    ):
        assert work.REQUEST.search(text), text
    for text in ("still cannot drag", "same error", "yes please", "250ms", "it's fixed!"):
        assert not work.REQUEST.search(text), text


def test_a_new_request_after_work_switches_and_feedback_does_not() -> None:
    msgs = _conversation(
        ("user", "Make nodes draggable on the canvas in src/canvas/Node.tsx"),
        ("assistant", LONG),
        ("user", "still cannot drag the node"),
        ("assistant", LONG),
        ("user", "Now add an export of the workspace to JSON in src/io/export.ts, with a test for it"),
        ("assistant", LONG),
    )
    idf = Idf([m.tokens for m in msgs])
    feats = features(msgs, idf, CUES)
    work.signals(msgs, feats, idf)
    assert feats[2] is not None and feats[4] is not None
    assert feats[4]["request_form"] == 1.0 and feats[2]["request_form"] == 0.0
    assert feats[4]["own_words"] > feats[2]["own_words"]
    model = load_model(work.MODE)
    assert model.switches(model.score(feats[4])) and not model.switches(model.score(feats[2]))
    judged = infer(msgs, idf, load_models("user")[1], CUES, work_model=model)
    assert [j.position for j in judged if j.marker] == [4]
    assert Counter(j.topic for j in judged)["T1"] == 2


def test_the_combiners_signals_read_the_turn_against_the_reply_and_the_requests_before_it() -> None:
    """A greeting, a first request, assent with a refinement (S4), insisting (S4), then a new request after the
    work was reported done (S1): each signal says what it reads, and only the new request switches."""
    msgs = _conversation(
        ("user", "hello"),
        ("assistant", "Hi! What are we working on?"),
        ("user", "Make nodes draggable on the canvas in src/canvas/Node.tsx"),
        ("assistant", LONG + " Want me to add a test for the drag handle?"),
        ("user", "yes, and make the handle bigger"),
        ("assistant", LONG + " I've added the test; all tests pass."),
        ("user", "still cannot drag the node, same error"),
        ("assistant", LONG),
        ("user", "Now add an export of the workspace to JSON in src/io/export.ts, with a test for it"),
        ("assistant", LONG),
    )
    idf = Idf([m.tokens for m in msgs])
    feats = features(msgs, idf, CUES)
    work.signals(msgs, feats, idf)
    first, assent, insist, new = feats[2], feats[4], feats[6], feats[8]
    assert first is not None and assent is not None and insist is not None and new is not None
    assert first["after_greeting"] == 1.0 and first["reply_asks"] == 1.0  # S7: the first request after "hello"
    assert (assent["accept"], assent["reply_offer"], assent["reply_asks"]) == (1.0, 1.0, 1.0)
    assert (insist["insist"], insist["reply_done"], insist["request_form"]) == (1.0, 1.0, 0.0)
    assert round(insist["cos_first"], 3) == 0.286  # the first request's words again: the node that will not drag
    assert (new["newness"], new["request_form"], new["entity_new_judged"], new["reply_done"]) == (1.0, 1.0, 1.0, 1.0)
    assert (new["cos_first"], new["cos_request"], new["new_vs_reply"]) == (0.0, 0.0, 1.0)
    model = load_model(work.MODE)
    assert [round(model.score(f), 3) for f in (first, assent, insist, new)] == [0.003, 0.163, 0.012, 0.904]
    assert [i for i, f in enumerate(feats) if f is not None and model.switches(model.score(f))] == [8]


def test_the_shipped_combiner_keeps_every_signal_to_the_sign_its_meaning_gives_it() -> None:
    """weights.json's work mode is the combiner of ``bench/topic_agent_logs.py``: one weight per signal, none
    against its meaning (a weight against it would be one log format's quirk)."""
    from bench.topic_agent_logs import WORK_SIGNS

    weights = load_model(work.MODE).weights
    assert tuple(weights) == work.FEATURES and len(work.FEATURES) == 22
    assert set(WORK_SIGNS) == set(work.FEATURES) - {"cos_first"}
    for k, sign in WORK_SIGNS.items():
        assert weights[k] * sign >= 0, k


WEBPACK = """polyfills.js:12  [webpack-dev-server] Errors while compiling. Reload prevented.
(anonymous) @ polyfills.js:12
(anonymous) @ polyfills.js:21
value @ polyfills.js:7
polyfills.js:12  [webpack-dev-server] ERROR in ./src/app/app.routes.ts 7:23-57
Module not found: Error: Can't resolve './settings/settings.page' in 'c:\\Users\\me\\mobilechat\\src\\app'
src/app/app.routes.ts:12:14 - error TS2307: Cannot find module './settings/settings.page'"""


def test_a_turn_of_pasted_program_output_with_a_line_typed_reports_the_last_step() -> None:
    """S4 / S6: mostly program output, two or three sentences typed around it at most; a request typed at length
    beside a paste (S8) and a long prompt that pastes code are not reports; a shell command line is not prose."""
    assert work.reports_output(WEBPACK)
    assert work.reports_output("fix this please\n" + WEBPACK)
    assert work.reports_output('Traceback (most recent call last):\n  File "a.py", line 3, in <module>\nValueError: x')
    typed = " ".join(
        ["Now build the settings page with a form for the API key, a theme switch and a reset button."] * 4
    )
    assert not work.reports_output(typed + "\n" + WEBPACK)  # S8: a new request typed beside the paste
    code = "def area(r):\n    return 3.14 * r * r\n"
    assert not work.reports_output("Write the next step: the volume of a cylinder.\n```python\n" + code + "```")
    assert not work.reports_output("still cannot drag the node")  # no output at all
    from forensics.text.prose import typed_prose

    line = "cd '/usr/lib/bitcode' && /usr/lib/llvm-17/bin/llvm-lto -thinlto -o vector.index.bc vector/src/a.bc"
    assert typed_prose("the same again\n" + line) == "the same again"


# a CI job's log pasted whole (the fifth round's kimi-cli check): ruff's own lines, which no output pattern reads,
# then the make and runner error lines it ends with
CI_LOG = """0s
Run make check-kimi-cli
==> Checking Kimi Code CLI (ruff + pyright + ty; ty is non-blocking)
F401 [*] `pytest` imported but unused
 --> tests/tools/test_extract_key_argument.py:3:8
  |
3 | import pytest
  |        ^^^^^^
help: Remove unused import: `pytest`

Found 1 error.
make: *** [Makefile:62: check-kimi-cli] Error 1
Error: Process completed with exit code 2."""
# a pip build's log: lines that read as sentences ("running install_scripts", "adding 'ai/utils.py'")
BUILD_LOG = "\n".join(
    [f"copying build/lib/ai/{m}.py -> build/bdist.linux-x86_64/wheel/./ai" for m in ("utils", "secrets")]
    + ["running install_scripts"]
    + [f"adding 'ai/{m}.py'" for m in ("__init__", "anthropic", "cohere", "ollama", "openai", "utils")]
    + ["Successfully installed pgai-0.6.1.dev0", "Installing SQL files...", "BEGIN", "SET"]
    + ["psql:/usr/share/postgresql/16/extension/pgai--0.6.1-dev.sql:55: ERROR:  query returned no rows"]
    + ["Error: SQL syntax check failed", "hawk@hawk:~$ "]
)
# a documentation page copied whole: its headings and links stay
PAGE = "\n".join(
    ["> ## Documentation Index", "> Fetch the complete documentation index at: https://example.com/docs/llms.txt", ""]
    + ["# Claude Code on Google Vertex AI", "", "## Prerequisites", "", "Before configuring it, ensure you have:", ""]
    + ["* A project with the [Vertex AI API](https://cloud.google.com/vertex-ai) enabled"] * 2
    + ["", "## Troubleshooting", "", "If you see quota errors, check the [quotas](https://cloud.google.com/q).", ""]
    + ["## Additional resources", "", "* [Vertex AI pricing](https://cloud.google.com/vertex-ai/pricing)"]
)


def test_a_pasted_log_ending_in_an_error_or_a_pasted_page_is_not_the_persons_words() -> None:
    """A log pasted whole is read to its last error line (``problems.pasted.error_lines``), a documentation page by
    its headings and links: with little typed around them, the turn reports output (S4, S6); a request typed at length
    beside them is still read (S8), and an error named in a sentence or a spec with headings but no links is no
    paste."""
    for paste in (CI_LOG, BUILD_LOG, PAGE):
        assert work.reports_output(paste)
        assert work.reports_output("the CI fails again:\n" + paste + "\nany idea?")
    assert not work.reports_output(CI_LOG.replace("Error", "Note").replace("error", "note"))  # no error: not read
    assert work.pasted_log(BUILD_LOG) == ("hawk@hawk:~$ ", len(BUILD_LOG) - len("hawk@hawk:~$ "))
    typed = " ".join(["Now add a settings page with a form for the API key, a theme switch and a reset button."] * 4)
    assert not work.reports_output(typed + "\n" + CI_LOG)
    assert not work.reports_output(typed + "\n" + PAGE)
    assert work.pasted_log("The build said Error: no such file when I ran it, please fix the path.")[1] == 0
    spec = "## Goal\nA settings page.\n## Steps\n1. Add a form for the API key\n2. Add a theme switch\n"
    assert work.pasted_page(spec) == (spec, 0) and not work.reports_output(spec)


def _scored(turns: int, score_bias: float) -> list[bool]:
    """A work conversation of ``turns`` person turns, each a request form, scored by a one-signal work model whose
    score is sigmoid(2 + bias); the topic model never switches. Returns the markers."""
    from forensics.analyzers.topics.model import Model

    pairs: list[tuple[str, str]] = []
    for i in range(turns):
        pairs += [("user", f"add feature number {i} to the exporter module"), ("assistant", LONG)]
    msgs = _conversation(*pairs)
    idf = Idf([m.tokens for m in msgs])
    never = Model({}, -20.0, 0.5)
    w = Model({"request_form": 2.0}, score_bias, 0.3)
    return [j.marker for j in infer(msgs, idf, never, CUES, work_model=w)]


def test_a_short_work_conversation_switches_only_well_past_the_operating_point() -> None:
    """At most SHORT_TURNS person turns: a score past the operating point but less than SHORT_MARGIN past it marks
    nothing; the same score marks in a longer conversation, and a score well past it marks in both."""
    assert work.SHORT_TURNS == 5
    assert _scored(2, -1.5) == [False, False]  # score 0.62: margin 1.35
    assert _scored(6, -1.5) == [False] + [True] * 5
    assert _scored(2, -1.0) == [False, True]  # score 0.73... score 0.73: margin 1.85, past the bar


def test_after_a_content_free_assent_a_new_request_is_read_against_the_last_topic() -> None:
    """In work with an agent "yes please" carries no topic; the new request after the work it started is compared
    with the turn before the assent (S1). In other conversations the seed's rule stays: no marker after it."""
    from forensics.analyzers.topics.infer import Judged, mark

    def judged() -> list[Judged]:
        return [Judged(0, "T1", 0.9, 0.1), Judged(2, None, None, None), Judged(4, "T2", 0.9, 0.9)]

    rows = judged()
    mark(rows, 0.7)
    assert [j.marker for j in rows] == [False, False, False]
    rows = judged()
    mark(rows, 0.7, across_empty=True)
    assert [j.marker for j in rows] == [False, False, True]
    rows = [Judged(0, "T1", 0.9, 0.1), Judged(2, None, None, None), Judged(4, "T1", 0.9, 0.1)]
    mark(rows, 0.7, across_empty=True)
    assert not any(j.marker for j in rows)  # the same topic again: no marker


def test_a_short_request_to_run_or_check_the_work_continues_it() -> None:
    """S4: "run the test and check it works" verifies what was just made, the next step of the same task; a request
    that opens otherwise, or that states more than a check, is read by the scorer."""
    for said in (
        "run the test and check it works",
        "can you run lint, test and check-types",
        "Can you run tests, lint and check-types to ensure all is green. It's loading the data now.",
        "ok, try again",
    ):
        assert work.checks_work(said), said
    assert not work.checks_work("testing is slow, add a cache to the exporter")
    assert not work.checks_work("Runtime error in the exporter")
    assert not work.checks_work("run the benchmarks, then " + "add a settings page with a theme switch " * 4)
    pairs: list[tuple[str, str]] = []
    for text in ("add feature number 1 to the exporter module", "run the tests and check they pass"):
        pairs += [("user", text), ("assistant", LONG)]
    msgs = _conversation(*pairs)
    idf = Idf([m.tokens for m in msgs])
    from forensics.analyzers.topics.model import Model

    never = Model({}, -20.0, 0.5)
    always = Model({"request_form": 2.0}, 3.0, 0.3)  # every request form far past the operating point
    assert [j.marker for j in infer(msgs, idf, never, CUES, work_model=always)] == [False, False]
    pairs[2] = ("user", "add an export of the workspace to JSON, with a test")
    msgs = _conversation(*pairs)
    assert [j.marker for j in infer(msgs, Idf([m.tokens for m in msgs]), never, CUES, work_model=always)] == [
        False,
        True,
    ]


def test_a_result_of_the_last_step_not_seen_continues_unless_something_new_is_asked() -> None:
    """S6: "I didn't see the new fields in the gui" reports the consequence of the last step in typed words; beside a
    request form (S8), or at length, it is read by the scorer."""
    assert work.misses_result("I didn't see the new fields in the gui for the custom m-code settings...")
    assert work.misses_result(
        "I am not seeing a network request when I load the TeamSheet. Is it supposed to trigger a network request?"
    )
    assert work.misses_result("the logo isn't showing on the login page")
    assert not work.misses_result("I don't see a settings page.\nAdd one with a theme switch and an API key field")
    assert not work.misses_result("I didn't see it coming, " + "a long story about the weekend " * 6)
    assert not work.misses_result("see the new fields in the gui")


def test_the_replys_own_lines_pasted_back_with_a_line_typed_continue_the_same_artifact() -> None:
    """S4: most lines of the turn are the assistant's lines since the person's last turn, with a line typed above
    them; a step prompt quoting the code before it beside a long statement of the next step is read."""
    script = "\n".join(f'echo "installing part {i} of the extension into the database"' for i in range(8))
    reply = [Message(1, "assistant", "Here is the script:\n" + script + "\nRun it as root.", False)]
    assert work.echoes_reply("make the whole script with the integration\n" + script, reply)
    assert not work.echoes_reply("make the whole script with the integration\n" + script, [])  # not the reply's
    step = "Write the next function: " + "the volume of the cylinder from its radius and height, in SI units. " * 6
    assert not work.echoes_reply(step + "\n" + script, reply)
    assert not work.echoes_reply("ok\n" + "\n".join(script.splitlines()[:2]), reply)  # two lines are too few


def test_an_open_chat_is_not_judged_and_marks_nothing() -> None:
    """An assistant answering in paragraphs with no tool and no work product is open chat (work.declines): the user
    mode's topic model, fitted on terse task dialogues, marks nothing there. A task dialogue's terse replies, a tool
    call or a work product keep the conversation judged."""
    from forensics.analyzers.topics.model import Model

    para = "The average distance between two uniform points is one third; here is why, step by step. " * 4
    assert len(para) >= work.OPEN_CHAT_REPLY_CHARS
    turns = (
        ("user", "what is the average distance between two random points in the unit interval?"),
        ("assistant", para),
        ("user", "now tell me about the best hiking trails of the French Alps in summer"),
        ("assistant", para),
    )
    chat = _conversation(*turns)
    assert work.declines(chat) == work.OPEN_CHAT
    idf = Idf([m.tokens for m in chat])
    always = Model({}, 20.0, 0.5)  # a topic model that switches on every turn
    assert not any(j.marker for j in infer(chat, idf, always, CUES, work_model=load_model(work.MODE)))
    assert [j.marker for j in infer(chat, idf, always, CUES)] == [False, True]  # no work model: the seed's path
    terse = _conversation(
        ("user", "I need a hotel in the north"),
        ("assistant", "There are 3. Any price range?"),
        ("user", "also a taxi to the station"),
        ("assistant", "Booked, a red Skoda."),
    )
    assert work.declines(terse) is None
    tools = _conversation(*turns)
    tools[1].targets = ["src/stats.py"]
    assert work.declines(tools) is None
    assert work.declines(_conversation(turns[0], ("assistant", LONG))) is None  # a work product


def test_the_reason_a_conversation_is_not_judged_is_stored_with_its_verdicts(tmp_path) -> None:  # noqa: ANN001
    from forensics.analyzers.topics import store
    from forensics.analyzers.topics.infer import Judged
    from forensics.warehouse import open_warehouse

    with open_warehouse(tmp_path / "w.duckdb") as wh:
        verdicts = [
            store.Verdicts("a", [Judged(1, "T1", 0.9, 0.1)], {}, {}, declined=work.OPEN_CHAT),
            store.Verdicts("b", [Judged(1, "T1", 0.9, 0.1)], {}, {}),
        ]
        store.save(wh.con, "k", {"a": "fa", "b": "fb"}, verdicts)
        back = {v.conversation_id: v for v in store.load(wh.con, ["a", "b"])}
    assert back["a"].declined == work.OPEN_CHAT and back["b"].declined is None
    assert [j.topic for j in back["a"].judged] == ["T1"]


def test_a_check_that_names_a_file_the_work_never_touched_is_read_by_the_scorer() -> None:
    """S1 by content: "Can you run the lint_all.py?" asks to run something the conversation never named, not to check
    the work at hand; "can you run the tests and check they pass" checks what is there and continues."""
    from forensics.analyzers.topics.model import Model

    never = Model({}, -20.0, 0.5)
    always = Model({}, 3.0, 0.3)  # every turn far past the operating point

    def markers(check: str) -> list[bool]:
        msgs = _conversation(
            ("user", "add feature number 1 to the exporter module"),
            ("assistant", LONG),
            ("user", check),
            ("assistant", LONG),
        )
        return [j.marker for j in infer(msgs, Idf([m.tokens for m in msgs]), never, CUES, work_model=always)]

    assert markers("can you run the tests and check they pass") == [False, False]
    assert markers("Can you run the lint_all.py?") == [False, True]


def test_a_question_about_the_work_at_hand_continues_it() -> None:
    """S4 / S5: a question in the person's own words that asks for nothing to be done, names nothing new and is about
    what was said before follows up on it; a request put as a question, a new name, or a question on another subject
    is read by the scorer."""
    seen = {"node", "id", "graph", "event", "apply", "snapshot", "issue", "title", "feature", "request"}
    assert work.asks_about(
        "I think it's fine to apply events to a changed graph. Do all nodes have IDs?",
        ["apply", "event", "graph", "node", "id"],
        seen,
        False,
    )
    assert work.asks_about("What would a good issue title be like?", ["good", "issue", "title"], seen, False)
    assert not work.asks_about(
        "Can we now add support for the graph snapshot?", ["add", "graph", "snapshot"], seen, False
    )  # a request put as a question
    assert not work.asks_about(
        "Do we need events for the graph? We also need a snapshot?", ["event", "graph"], seen, False
    )  # "we also need"
    assert not work.asks_about("Do all nodes have IDs?", ["node", "id"], seen, True)  # names something new
    assert not work.asks_about("what is the capital of Peru?", ["capital", "peru"], seen, False)  # another subject
    # another language's request opening anywhere in the turn ("I want to redesign the compaction; how would you do
    # the token budget?"): a new request, whatever the question at its end
    assert not work.asks_about(
        "压缩这部分我想重新设计一下，token budget 你觉得怎么做比较好？",
        ["压缩", "token", "budget"],
        {"压缩", "token", "budget"},
        False,
    )
    assert not work.asks_about("apply the events to the graph", ["apply", "event", "graph"], seen, False)
    assert not work.asks_about(
        "What about the graph? Add a node for each event.", ["graph", "node", "event"], seen, False
    )  # a request beside the question


def test_a_question_is_about_the_work_at_hand_only_in_the_works_own_words() -> None:
    """ "Already said" is what the work said and touched (the assistant's replies, its tools' targets), not the person's
    own earlier turns: a question re-asking what the person asked before and the replies never took up returns to
    that request (the seed's interleave: "写文件为什么总写错日期？" after "再检查一下写文件的日期吧" answered with
    other work), where the same question after a reply about it follows up on the work at hand."""
    from forensics.analyzers.topics.model import Model

    never = Model({}, -20.0, 0.5)
    always = Model({}, 3.0, 0.3)  # every turn far past the operating point
    other = "Refactored the cache layer in `src/store/cache.py`; the eviction tests pass now. " * 20
    about = "The export writes the date from `datetime.now()` in the exporter; the export date is set there. " * 20

    def markers(reply: str) -> list[bool]:
        msgs = _conversation(
            ("user", "check why the export writes the wrong date"),
            ("assistant", reply),
            ("user", "why is the export date wrong?"),
            ("assistant", reply),
        )
        idf = Idf([m.tokens for m in msgs])
        feats = features(msgs, idf, CUES)
        work.signals(msgs, feats, idf)
        assert feats[2] is not None
        asked = bool(feats[2]["asks_about"])
        return [asked] + [j.marker for j in infer(msgs, idf, never, CUES, work_model=always)]

    assert markers(other) == [False, False, True]  # the person's own words only: the scorer reads it
    assert markers(about) == [True, False, False]  # the work said it: a question about the work at hand


# The pi session 5675d924 of the fresh set (fresh-dev), verbatim: a theme refined turn by turn, every edit in one file
THEME = "packages/coding-agent/src/theme/dark.json"
BUILD = "cd packages/coding-agent && npm run build 2>&1 | tail -3"


def test_what_the_tool_calls_touched_is_the_files_and_folders_their_targets_name() -> None:
    assert work.touched([THEME]) == {"dark.json"}
    assert work.touched([BUILD]) == {"coding-agent"}  # "2>&1", "tail -3": no file
    assert work.touched(["./src/theme/dark.json", "/abs/packages/coding-agent/"]) == {"dark.json", "coding-agent"}
    assert work.touched(["null", "git commit -m 'x' && echo noreply@anthropic.com", "rg -n foo 12/34"]) == set()
    assert work.touched(["npm test", "ls"]) == set()


def _theme_session(last_touches: str) -> list[Message]:
    """Three person turns of 5675d924 ([381], [389], [395]) with their tool calls; the calls after the last turn touch
    ``last_touches``."""
    msgs = [
        Message(381, "user", "omfg that's it, now shit renders the same. ok, let's modify the grays", True),
        Message(382, "assistant", "", False, [THEME]),
        Message(386, "assistant", "", False, [BUILD]),
        Message(388, "assistant", "Changed `dimGray` from `#444444` to `#5c5c5c`.", False),
        Message(389, "user", "ok, make muted a little brighter", True),
        Message(390, "assistant", "", False, [THEME]),
        Message(392, "assistant", "", False, [BUILD]),
        Message(395, "user", "ok, make the diff red and green a little less intense, same for accent", True),
        Message(396, "assistant", "", False, [last_touches]),
    ]
    prepare(msgs)
    return msgs


def test_a_turn_after_which_the_tools_touch_only_what_they_touched_before_it_follows_up() -> None:
    assert work.follows_up(_theme_session(THEME)) == {389, 395}  # [381]: nothing touched before it
    assert work.around(_theme_session(THEME))[389] == ({"dark.json", "coding-agent"}, {"dark.json", "coding-agent"})
    assert work.follows_up(_theme_session("packages/coding-agent/src/theme/light.json")) == {389}  # another file
    assert work.follows_up(_theme_session("git status")) == {389}  # nothing touched after it: no evidence


def _touching(score_bias: float, last_touches: str) -> list[bool]:
    """The theme session made a work conversation of 6 person turns (past SHORT_TURNS: no short bar), scored by a
    one-signal work model (score sigmoid(2 + bias) on every request form, operating point 0.3); the topic model never
    switches. Returns the markers of the person turns."""
    from forensics.analyzers.topics.model import Model

    msgs = _theme_session(last_touches)
    tail = [
        Message(400 + 2 * i, r, t, r == "user") for i in range(3) for r, t in (("user", "add x"), ("assistant", LONG))
    ]
    msgs += tail[:-1] + [Message(405, "assistant", LONG, False)]
    prepare(msgs)
    for m in msgs:
        if m.role == "user":
            m.text = "please add it"  # every person turn a request form: the work model's one signal
    idf = Idf([m.tokens for m in msgs])
    never = Model({}, -20.0, 0.5)
    w = Model({"request_form": 2.0}, score_bias, 0.3)
    assert work.is_work(msgs) and sum(m.judged for m in msgs) == 6
    return [j.marker for j in infer(msgs, idf, never, CUES, work_model=w)]


def test_where_the_judge_is_unsure_a_turn_whose_tools_touch_the_same_files_continues() -> None:
    """UNSURE logits: a switch 0.35 past the operating point at [389] and [395] (the calls after them edit dark.json
    again) continues; 1.35 past it, it stands; [395] editing another file switches at 0.35 too."""
    assert work.UNSURE == 0.5
    assert _touching(-2.5, THEME)[:3] == [False, False, False]  # score 0.38: margin 0.35
    assert _touching(-2.5, "packages/coding-agent/src/theme/light.json")[:3] == [False, False, True]
    assert _touching(-1.5, THEME)[:3] == [False, True, True]  # score 0.62: margin 1.35
