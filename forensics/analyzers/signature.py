"""What a run's failure signature is made of (docs/definitions.md#failure-analysis): how it ended and its recurring error as a template
(the step where it went wrong is ``failures.decisive``'s). A module of its own, read by the failures analyzer
and by the outcome analyzer's run ranking (which runs before it).

**How it ended**, read from the run's own last messages, first rule that holds:

- ``no_reply``: the agent never replied (no message of the assistant: a harness whose agent never started, a
  person turn left unanswered); an agent that never acted did not do its task;
- ``limit`` or ``errored`` by the harness's own word, whoever's name it is logged under: its logged stop status
  (``Msg.stop``, a ``stop`` event: SWE-agent's ``exit_cost``, mini-swe-agent's ``LimitsExceeded``, an OpenHands
  record's "Agent reached maximum iteration", an Inspect sample's ``message limit``; an error status is
  ``errored``), else a stop notice as each harness's source writes it on a line of one of the last messages, in any
  role (``HARNESS_LIMIT``: Magentic-One's "Max rounds (30) reached.", SWE-agent's "Exit due to cost limit" written
  as the assistant's turn; ``HARNESS_ERROR``: autogen_core's "Error processing publish message" in a console tail
  appended to an agent's message); of several notices, the last one written;
- ``limit``: a tool or the harness says a turn, step, iteration, time, token or context limit was reached
  (``limit_notice``): a tool output or a harness turn, never the person's or the task's own words (a SciCode step's
  docstring "Maximum iterations."), nor a line of code, a listing or a traceback frame a tool shows, nor the task
  quoted back;
- ``cut_off``: the run stops on a call no result answers (other than a call that ends the run by itself:
  ``finish``, ``submit``, ``final_answer``...), or on a tool result or harness turn the agent never read (other
  than a submission's: the harness's ``submitted`` status, a submission command's or a ``submit`` call's output) (the harness stopped it; in benchmarks this end can itself reveal the grade: see ``GRADE_REVEALING_ENDS``);
- ``handed_off``: the last step hands the task to someone else (a transfer or escalation tool, "a human agent");
- ``gave_up``: the final reply says it cannot do the task ("I was unable to", "I cannot", "I'm sorry, but");
- ``errored``: the last tool result is an error and no reply follows it;
- ``claimed_success``: the final reply says the work is done ("successfully", "all tests pass", "the task is
  complete", ``TERMINATE`` after a result, a submission);
- ``answered``: anything else (a final answer with no claim about it).

**The error template**: of each error text (a tool result the warehouse flags as an error, or whose text holds
an error line), the line that names the error: the last exception line (``KeyError: 'x'``), else an
``error:``/``fatal:`` line that is no line of code mentioning an error (``is_code_line``: a source file a tool
shows holds ``console.debug('init failed:', error.code);``, comments, throws), a shell error (``/bin/bash: line 3: foo: command not found``), ``No such file``,
``Permission denied``, ``command not found``, a timeout; a preamble (``Traceback (most recent call last):``,
``exitcode: 1 (execution failed)``, ``Code output:``) is never the template, so three causes behind one preamble
stay three. Then masked, so one cause phrased with other values is one template: quoted values ``'<q>'``, paths
``<path>``, URLs ``<url>``, UUIDs and hex ``<hex>``, numbers ``<n>``, whitespace collapsed, lower case. A run's
recurring error is its most frequent template (the earliest among equals).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

import duckdb

ENDINGS = ("claimed_success", "gave_up", "limit", "handed_off", "errored", "cut_off", "no_reply", "answered")
# ends decided by the harness, not the agent: compared with outcomes, they can read the grade (MINT's ALFWorld
# stops a successful episode right after the winning action, with no observation)
GRADE_REVEALING_ENDS = ("cut_off",)
# What environments tell an agent about its grade, on the user or tool role (RE2, case-insensitive)
GRADE_REVEALING = "|".join(
    [
        r"your answer is wrong",  # MINT (mint/datatypes.py StepOutput.to_str)
        r"your submission was incorrect",  # Inspect AI basic_agent's default incorrect_message
        r"your (?:answer|solution|submission) (?:is|was) (?:not correct|incorrect)",  # the same, reworded
    ]
)
TAIL = 3  # the last messages read for a limit notice
MESSAGES_PER_QUERY = 10_000  # stream() reads runs a batch at a time, about this many messages (a run never split)
TEXT_CHARS = 6000  # of each end of a long message (an error line is near the end of a traceback)
BAD_ENDS = (
    "gave_up",
    "limit",
    "errored",
    "handed_off",
    "no_reply",
)  # ends the agent did not finish the task by: the run ranking's

# a limit notice: a tool or the harness says a turn, step, iteration, time, token or context limit was reached (an
# event: "Reached the maximum number of steps (30).", "exceeded max steps", "token limit exceeded", "context window
# exceeded", a provider's context-length error), never the bare name of a limit ("maxiter: Maximum iterations." in a
# docstring, a ``time_limit`` frame of a traceback, "Exceeded maximum depth" thrown by the code under test)
_LIMITED = r"(?:turns?|steps?|iterations?|rounds?|tokens?|time|budget|cost|context(?: length| window)?)"
LIMIT = re.compile(
    r"\b(?:(?:reached|hit|exceeded|exhausted)\s+(?:(?:the|its|your|my|our)\s+)?(?:(?:max(?:imum)?|allowed|allotted)"
    rf"[ _-]?(?:number of )?{_LIMITED}\b|{_LIMITED}[ _-]?(?:limit|budget))|"
    r"(?:max(?:imum)?[ _-]?(?:number of )?(?:turns?|steps?|iterations?|rounds?|tokens?)|(?:turn|step|iteration|round|"
    r"time|token|cost|budget|context)[ _-]?limit)\s*(?:\(\d+\)\s*)?(?:(?:has been|was|is)\s+)?(?:reached|exceeded|hit|"
    r"exhausted)|context[ _-](?:length|window)[^.\n]{0,40}exceed|"
    rf"exceeded[^.\n]{{0,40}}\b{_LIMITED}[ _-]?(?:limit|budget)|too many (?:steps|turns|iterations)|"
    r"ran out of (?:steps|turns|time|budget)|maximum context length is \d+ tokens|prompt is too long: \d+ tokens|"
    r"autosubmi)",
    re.I,
)
# a line a tool shows from a file or a traceback, not a notice it writes: a numbered listing line (``423:``, ``cat -n``),
# a diff line, a traceback frame (``File "x.py", line 3, in f``, IPython's ``---> 32``)
SHOWN_LINE = re.compile(r"^\s*(?:\d+(?::|\t|\s{2})|[+-](?![+-])|-*>\s*\d+\s|File [\"<])")
# the notices a harness writes when it stops a run, as each harness's source spells them, read on a line of any of
# the last messages whoever's name it is logged under: Magentic-One's orchestrator logs its own termination
# conditions; SWE-agent writes its exit as the assistant's turn; a console's tail can be appended to an agent's
# message (Who&When Hand-Crafted)
HARNESS_LIMIT = re.compile(
    r"^[^\w\n]{0,12}(?:TERMINATING RUN \([^)\n]*\): )?(?:"
    # autogen-magentic-one orchestrator.py: max_rounds, max_time, max_replans
    r"Max rounds \(\d+\) reached|Max time \(\d+(?:\.\d+)?s\) reached|Replan counter exceeded\.\.\. Terminating|"
    # AG2 ConversableAgent.run (max_turns) and GroupChat (max_round): ">>>>>>>> TERMINATING RUN (<uuid>): ..."
    r"Maximum (?:turns|rounds) \(\d+\) reached|"
    # SWE-agent agents.py: exit_cost, exit_context, exit_total_execution_time, exit_command_timeout
    r"Exit due to (?:cost limit|context window|total execution time exceeded|multiple consecutive command timeouts)|"
    # OpenHands: the iteration and budget control flags' RuntimeError (AgentLimitExceededError in later versions)
    r"(?:RuntimeError|AgentLimitExceededError): ?Agent reached maximum (?:iteration|budget)"
    r")",
    re.M,
)
HARNESS_ERROR = re.compile(
    r"^[^\w\n]{0,12}(?:"
    # autogen_core's runtime: an agent's handler raised (the team stops: no reply comes)
    r"Error processing publish message|"
    # AutoGenBench's run.sh: the scenario's process exited non-zero
    r"SCENARIO\.PY EXITED WITH CODE: [1-9]\d* !#!#|"
    # SWE-agent agents.py: exit_error, exit_api, exit_environment_error and the like
    r"Exit due to (?:runtime|retry|unexpected|environment) error"
    r")",
    re.M,
)
# a harness's logged stop status (a ``stop`` event: SWE-agent's and mini-swe-agent's ``info.exit_status``, an
# OpenHands evaluation record's ``error``, an Inspect sample's ``limit``) that says a limit or an error ended the run;
# any other status (``submitted``, ``Submitted``) leaves the end to the messages
STOP_LIMIT = re.compile(
    r"\bexit_(?:cost|context|total_execution_time|command_timeout)\b|^LimitsExceeded$|"
    r"^(?:context|time|working|message|token|operator|cost|custom) limit$"
)
STOP_ERROR = re.compile(r"\bexit_(?:error|api|format|environment_error)\b|^[\w.]*(?:Error|Exception)\b")
HARNESS_TAIL_CHARS = 20_000  # of each of the last messages: a console tail appended to a long page text
# a last call that ends the run by itself (MedAgentBench's FINISH, a submit tool): no answer is expected
FINAL_ACTION = re.compile(r"(?:finish|submit|final_answer|answer|done|terminate|exit)\b", re.I)
# a submission written as a shell command: mini-swe-agent's (agents/default.py: the output's first line ends the
# run; 1.x `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, 2.x `MINI_SWE_AGENT_FINAL_OUTPUT`)
SUBMIT_COMMAND = re.compile(r"\becho\s+['\"]?(?:COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b")
SUBMITTED = re.compile(r"submitted$", re.I)  # a stop status: the agent submitted (``submitted``, ``Submitted``)
HANDOFF_TOOL = re.compile(r"transfer|escalat|hand_?off|human", re.I)
HANDOFF_TEXT = re.compile(
    r"\btransfer(?:ring)? you\b|\bhuman (?:agent|representative)\b|\bescalat(?:e|ing)\b|"
    r"\bcontact (?:our |the )?(?:support|customer service)\b",
    re.I,
)
GAVE_UP = re.compile(
    r"\b(?:I (?:am|was|'m) (?:unable|not able)|I (?:cannot|can't|could not|couldn't)|"
    r"unable to (?:complete|proceed|find|access|determine|solve|fix|locate)|I(?: am|'m) sorry,? but|"
    r"(?:is|was) not possible to|I give up|cannot be (?:determined|completed|solved))",
    re.I,
)
CLAIM = re.compile(
    r"\b(?:successfully|all (?:the )?tests (?:now )?pass|(?:has|have) been (?:fixed|resolved|completed|"
    r"implemented|verified|confirmed)|(?:task|work|fix|issue) (?:is|has been) (?:now )?(?:complete|done|"
    r"resolved|fixed)|I have (?:fixed|completed|implemented|resolved|verified)|\bTERMINATE\b|"
    r"submit(?:ted)?\b|\bFINISH\(|final answer)",
    re.I,
)

PREAMBLE = re.compile(
    r"^\s*(?:traceback \(most recent call last\):|exitcode: ?-?\d+.*|code output:\s*|"
    r"stderr:?\s*|stdout:?\s*|output:\s*|observation:\s*|during handling of the above exception.*|"
    r"the above exception was the direct cause.*)\s*$",
    re.I,
)
EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning)\b.*$")
ERROR_LINE = re.compile(
    r"^\s*(?:/bin/(?:ba)?sh: .*|.*\b(?:error|fatal|failed|failure)\b\s*[:!].*|.*command not found.*|"
    r".*no such file or directory.*|.*permission denied.*|.*\btimed? ?out\b.*|.*\bnot found\b.*|"
    r"\s*timeout\s*)$",
    re.I,
)
# what a line must hold for EXCEPTION_LINE (case as written) or ERROR_LINE (in any case, as re.I reads it) to match:
# looked for first, so that the patterns run only on lines that can match
EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Failure", "Warning")
ERROR_WORDS = ("error", "fatal", "fail", "not found", "no such file", "permission denied", "time", "/bin/")
_ERROR_WORDS = re.compile("|".join(map(re.escape, ERROR_WORDS)), re.I)
_EXCEPTION_WORDS = re.compile("|".join(map(re.escape, EXCEPTION_WORDS)))
_NO_ERRORS = re.compile(r"\b(?:0|no) (?:errors?|failures?)\b", re.I)
# ERROR_LINE as Python's re runs it fast (its ``.*`` before each alternative backtracks over every position):
# a shell's error at the start, or one of the other alternatives anywhere (tests/test_failures.py holds it to
# ERROR_LINE line for line)
_SHELL_ERROR = re.compile(r"\s*/bin/(?:ba)?sh: ", re.I)
_ERROR_IN = re.compile(
    r"\b(?:error|fatal|failed|failure)\b\s*[:!]|command not found|no such file or directory|permission denied|"
    r"\btimed? ?out\b|\bnot found\b",
    re.I,
)
# a line of code that names an error without being one (``is_code_line``): a comment, a throw or raise, a call that
# builds or prints one, a catch clause, a read of an error's property, a statement ("throw new Error(`... not found`)", "-- Avoid showing the error if ... not found",
# 'vim.notify("Error: " .. result)')
CODE_LINE = re.compile(
    r"^\s*(?:#|//|--|/?\*|<!--)|\b(?:throw|raise|echo|printf?|return)\b|\b(?:console|log|logger|fmt|t)\.\w+\(|"
    r"\w(?:Error|Exception)\(|=>|[;{]\s*$|\w\s*\([^)\n]*[\"'][^\"'\n]*(?i:error|fail|not found)|"
    # a catch clause, an error built with ``new``, an error's property read (``error.code``, ``err?.message``)
    r"\bcatch\s*\(|\bnew\s+[\w.]*(?:Error|Exception)\(|\b(?:err|error|\w+Error)\??\.(?:code|message|stack|status|response)\b"
)
FAILED_EXIT = re.compile(r"(?:exit ?code|exit status|returncode|return code)[\s:=]+(-?\d+)", re.I)

MASKS = [
    (re.compile(r"https?://\S+"), "<url>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<hex>"),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`|‘[^’\n]{0,200}’|“[^”\n]{0,200}”"), "'<q>'"),
    (re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|(?:[\w.-]+/)+[\w.-]+\.\w+"), "<path>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I), "<hex>"),
    (re.compile(r"\b[A-Za-z]+[-_]?\d[\w-]*\b"), "<id>"),  # ids that mix letters and digits: task-42, run_7a
    (re.compile(r"-?\b\d+(?:\.\d+)?\b"), "<n>"),
]
TEMPLATE_CHARS = 160
LEAD_IN = re.compile(r"^(?:code output|output|stderr|stdout|observation|result)\s*:\s*", re.I)


@dataclass(frozen=True)
class Msg:
    """One main-path message as the signature reads it."""

    position: int
    role: str  # user, assistant, tool, system
    origin: str | None  # person, harness, tool_result, assistant, tool
    name: str | None  # the speaker (messages.name)
    text: str
    calls: int = 0  # tool calls it makes
    unanswered: int = 0  # of them, without a result
    error: bool = False  # a tool result the warehouse flags as an error
    call_names: tuple[str, ...] = ()
    stop: str | None = None  # on a run's last message: how the harness logged that the run stopped (a ``stop`` event)


def is_output(m: Msg) -> bool:
    """A tool's output: the tool role, or a tool result carried on the user role."""
    return m.role == "tool" or m.origin == "tool_result"


def error_line(text: str, flagged: bool = False) -> str | None:
    """The line that names the error of a tool output, or None when it shows none (see the module docstring).
    ``flagged``: the warehouse already says it is an error (then the first line that is no preamble will do)."""
    exits = FAILED_EXIT.search(text[:400])
    failed_exit = exits is not None and int(exits.group(1)) not in (0, -1)
    if not (flagged or failed_exit or _may_name_error(text)):
        return None
    lines = [ln for ln in text.splitlines()[:400] if ln.strip()]
    # the lines that hold a word the patterns need, found over the lines joined by line breaks (no word spans one)
    # instead of by a test per line: the per-line loops were most of the failures analyzer
    joined = "\n".join(lines)
    for i in reversed(_exception_word_lines(joined)):
        ln = lines[i]
        if EXCEPTION_LINE.match(ln) and not PREAMBLE.match(ln):
            return ln.strip()
    for i in _error_word_lines(lines, joined):
        ln = lines[i]
        if (
            (_SHELL_ERROR.match(ln) is not None or (_ERROR_IN.search(ln) is not None and not is_code_line(ln)))
            and not PREAMBLE.match(ln)
            and not _NO_ERRORS.search(ln)
        ):
            return ln.strip()
    if flagged or failed_exit:
        rest = [ln for ln in lines if not PREAMBLE.match(ln)]
        return rest[0].strip() if rest else (lines[0].strip() if lines else "(empty error)")
    return None


def _exception_word_lines(joined: str) -> list[int]:
    """The indexes, ascending, of the lines of ``joined`` (lines joined by line breaks) holding one of
    EXCEPTION_WORDS (as written)."""
    out: list[int] = []
    line = last = 0
    for m in _EXCEPTION_WORDS.finditer(joined):
        line += joined.count("\n", last, m.start())
        last = m.start()
        if not out or out[-1] != line:
            out.append(line)
    return out


def _error_word_lines(lines: list[str], joined: str) -> Iterator[int]:
    """The indexes, ascending, of the ``lines`` (``joined`` by line breaks) holding one of ERROR_WORDS in any
    case (``_may_be_error``'s answer for each line), found as they are asked for: on ASCII text, the next
    occurrence of each word in the text folded to lower case (re.I's search over the whole text costs three
    times the per-line test)."""
    if not joined.isascii():
        yield from (i for i, ln in enumerate(lines) if _may_be_error(ln))
        return
    low = joined.lower()
    at = {w: low.find(w) for w in ERROR_WORDS}
    line = last = 0
    while True:
        pos = min((p for p in at.values() if p >= 0), default=-1)
        if pos < 0:
            return
        line += low.count("\n", last, pos)
        last = pos
        yield line
        end = low.find("\n", pos)
        if end < 0:
            return
        for w, p in at.items():
            if 0 <= p < end:
                at[w] = low.find(w, end + 1)


def _may_be_exception(text: str) -> bool:
    return any(w in text for w in EXCEPTION_WORDS)


def _may_be_error(text: str) -> bool:
    """Whether ``text`` holds one of ERROR_WORDS in any case (re.I's: on ASCII text, ``str.lower`` is the same)."""
    if text.isascii():
        low = text.lower()
        return any(w in low for w in ERROR_WORDS)
    return _ERROR_WORDS.search(text) is not None


def _may_name_error(text: str) -> bool:
    """Whether some line of ``text`` may match EXCEPTION_LINE or ERROR_LINE (False: none does)."""
    return _may_be_exception(text) or _may_be_error(text)


def is_error_line(line: str) -> bool:
    """``ERROR_LINE.match(line)`` for a line of ``str.splitlines`` (no line break in it), without its backtracking."""
    return _may_be_error(line) and (_SHELL_ERROR.match(line) is not None or _ERROR_IN.search(line) is not None)


def is_code_line(line: str) -> bool:
    """Whether ``line`` is a line of code that names an error without being one (``CODE_LINE``: a comment, a throw, a
    ``console.*(`` call, a statement ending in ``;`` or ``{``...): a source file shown by a tool, code pasted by a
    person. A shell's own error line (``/bin/sh: 1: echo: not found``) is output, never code."""
    return CODE_LINE.search(line) is not None and _SHELL_ERROR.match(line) is None


def template(line: str) -> str:
    """An error line with its values masked (see the module docstring)."""
    t = LEAD_IN.sub("", line.strip())
    for pattern, mask in MASKS:
        t = pattern.sub(mask, t)
    return re.sub(r"\s+", " ", t).lower()[:TEMPLATE_CHARS]


def errors(msgs: list[Msg]) -> list[tuple[int, str]]:
    """(position, template) of every error a tool output of the run shows, in order."""
    out = []
    for m in msgs:
        if is_output(m):
            line = error_line(m.text, m.error)
            if line is not None:
                out.append((m.position, template(line)))
    return out


def occurrences(errs: list[tuple[int, str]]) -> dict[str, list[int]]:
    """The positions of each error template, in order, templates by first occurrence: what "the same error
    again" means for the signature here and for the problems' ``same_error_N_times`` loop."""
    out: dict[str, list[int]] = {}
    for p, t in errs:
        out.setdefault(t, []).append(p)
    return out


def recurring(errs: list[tuple[int, str]]) -> tuple[str | None, int | None, int]:
    """(template, first position, count) of the run's most frequent error; (None, None, 0) without errors."""
    if not errs:
        return None, None, 0
    seen = occurrences(errs)
    best = max(seen, key=lambda t: (len(seen[t]), -seen[t][0]))
    return best, seen[best][0], len(seen[best])


def ended(msgs: list[Msg]) -> tuple[str, int | None]:
    """How the run ended, and the position that shows it (None for an empty run)."""
    if not msgs:
        return "cut_off", None
    last = msgs[-1]
    if not any(m.role == "assistant" for m in msgs):
        return "no_reply", last.position
    stop = harness_stop(msgs)
    if stop is not None:
        return stop
    for m in msgs[-TAIL:]:
        if limit_notice(m, msgs):
            return "limit", m.position
    final_action, submitted = _submission(msgs)
    if not submitted and (
        (last.role == "assistant" and last.unanswered and not final_action)
        or (last.role != "assistant" and last.origin != "person")
    ):
        if not (is_output(last) and error_line(last.text, last.error)):
            return "cut_off", last.position
    final = next((m for m in reversed(msgs) if m.role == "assistant" and m.text.strip()), None)
    if any(HANDOFF_TOOL.search(n) for n in last.call_names) or (final and HANDOFF_TEXT.search(final.text[-1500:])):
        return "handed_off", (final or last).position
    if final is not None and GAVE_UP.search(final.text[-1500:]):
        return "gave_up", final.position
    outputs = [m for m in msgs if is_output(m)]
    if (
        outputs
        and error_line(outputs[-1].text, outputs[-1].error)
        and not any(m.role == "assistant" and m.text.strip() and m.position > outputs[-1].position for m in msgs)
    ):
        return "errored", outputs[-1].position
    # a submission is a claim (the agent handed its work in), unless its words gave up above
    if final is not None and (submitted or CLAIM.search(final.text[-1500:])):
        return "claimed_success", _claim_position(msgs, final)
    return "answered", final.position if final else last.position


def limit_notice(m: Msg, msgs: list[Msg]) -> bool:
    """Whether ``m`` is a tool's or the harness's notice that a limit was reached (``LIMIT`` on a line of its last
    2,000 characters). The person's and the task's own words are never one ("Maximum iterations." in a SciCode step's
    docstring): only a tool output or a harness turn is read, and of it no line of code (``is_code_line``), no line
    shown from a file or a traceback (``SHOWN_LINE``) and no line that is the person's text quoted back (a harness
    turn restating the task, a tool echoing the prompt)."""
    if not (is_output(m) or m.origin == "harness"):
        return False
    said: list[str] | None = None
    text = m.text[-2000:]
    for hit in LIMIT.finditer(text):
        line = text[
            text.rfind("\n", 0, hit.start()) + 1 : (text.find("\n", hit.end()) + 1 or len(text) + 1) - 1
        ].strip()
        if is_code_line(line) or SHOWN_LINE.match(line):
            continue
        if said is None:
            said = [p.text for p in msgs if p.origin == "person" and p.position != m.position]
        if any(line in t for t in said):
            continue
        return True
    return False


DONE_ENDS = ("claimed_success", "answered")  # the run handed its work over, as far as its log shows


def done(con: duckdb.DuckDBPyConnection, cids: list[str], revealing: str) -> set[str]:
    """The runs of ``cids`` that ended with their work handed over (``DONE_ENDS``: a reply that answers or claims it
    done), not cut off, stopped by a limit or an error, given up or handed off."""
    return {cid for cid, msgs in stream(con, cids, revealing) if ended(msgs)[0] in DONE_ENDS}


def _submission(msgs: list[Msg]) -> tuple[bool, bool]:
    """(the last message is a reply calling a final action, the run ends on a submission the harness read)."""
    last = msgs[-1]
    final_action = last.role == "assistant" and any(FINAL_ACTION.match(n) for n in last.call_names)
    # the run ends on a submission, read by the harness, not left unread by the agent: the harness's stop status
    # says so (SWE-agent's and mini-swe-agent's ``submitted``, whose closing exit message is not a message), or the
    # last output is a submission's (mini-swe-agent's submission command; a call that ends the run by itself:
    # SWE-agent's ``submit`` answered by the patch)
    submitted = bool(SUBMITTED.match(last.stop or "")) or (
        last.role != "assistant"
        and len(msgs) > 1
        and msgs[-2].role == "assistant"
        and (
            bool(SUBMIT_COMMAND.search(msgs[-2].text[-1500:]))
            or (is_output(last) and any(FINAL_ACTION.match(n) for n in msgs[-2].call_names))
        )
    )
    return final_action, submitted


def handed_in(msgs: list[Msg]) -> bool:
    """The run ends on the act that hands its work in: a reply calling a final action (``FINISH``, ``submit``) or a
    submission the harness read (``_submission``). A harness whose runs mostly end so expects it of each run."""
    return bool(msgs) and any(_submission(msgs))


def harness_stop(msgs: list[Msg]) -> tuple[str, int] | None:
    """(``limit`` or ``errored``, position) when the harness says a limit or an error stopped the run: its logged
    stop status (``Msg.stop``: ``STOP_LIMIT``, ``STOP_ERROR``, or a notice below in it), else a stop notice in one of
    the last messages (``HARNESS_LIMIT``, ``HARNESS_ERROR``), whatever its role or speaker (of several, the last one
    written ended the run). None when neither says so."""
    status = msgs[-1].stop
    if status:
        if STOP_LIMIT.search(status) or HARNESS_LIMIT.search(status):
            return "limit", msgs[-1].position
        if STOP_ERROR.search(status) or HARNESS_ERROR.search(status):
            return "errored", msgs[-1].position
    last: tuple[int, int, str] | None = None
    for m in msgs[-TAIL:]:
        text = m.text[-HARNESS_TAIL_CHARS:]
        if not any(w in text for w in ("reach", "Replan", "Exit due", "Error processing", "!#!#")):
            continue
        for end, pattern in (("limit", HARNESS_LIMIT), ("errored", HARNESS_ERROR)):
            for hit in pattern.finditer(text):
                if last is None or (m.position, hit.start()) > (last[0], last[1]):
                    last = (m.position, hit.start(), end)
    return (last[2], last[0]) if last is not None else None


def _claim_position(msgs: list[Msg], final: Msg) -> int:
    """The claim a bare end marker (``TERMINATE``) closes: the last reply before it that says something."""
    if final.text.strip().upper() in ("TERMINATE", "DONE", "EXIT", "SUBMIT"):
        prior = [m for m in msgs if m.role == "assistant" and m.position < final.position and len(m.text.strip()) > 20]
        if prior:
            return prior[-1].position
    return final.position


def messages(con: duckdb.DuckDBPyConnection, cids: list[str], revealing: str) -> dict[str, list[Msg]]:
    """The main-path messages of the runs, each cut before its first message matching ``revealing`` (the
    grade-revealing text, ``GRADE_REVEALING``), in conversation id order."""
    return dict(sorted(stream(con, cids, revealing), key=lambda run: run[0]))


def stream(
    con: duckdb.DuckDBPyConnection, cids: list[str], revealing: str, messages: int = MESSAGES_PER_QUERY
) -> Iterator[tuple[str, list[Msg]]]:
    """:func:`messages` one run at a time (runs without a message left out), read in batches of runs of about
    ``messages`` messages per query: Python and DuckDB hold a batch's messages, not every run's text (a
    million-message corpus's failures held them all, and the one query ordering them all ran out of the report's
    DuckDB memory; batches of 250 runs were the first report's peak at a tenth of it). The batches follow the
    warehouse's row order (a run's rows are stored together) and each query reads only its batch's range of rows:
    a query per batch over the whole table would read it once per batch. Runs come in id order inside a batch,
    not across batches."""
    # the harness's logged stop status of each run (few runs have one: read once, not per batch)
    stops: dict[str, str] = dict(
        con.execute(
            'SELECT conversation_id, arg_max("trigger", coalesce(seq, 2147483647)) FROM events '
            "WHERE kind = 'stop' AND \"trigger\" IS NOT NULL AND conversation_id IN (SELECT unnest(?::VARCHAR[])) "
            "GROUP BY 1",
            [sorted(set(cids))],
        ).fetchall()
    )
    for batch, lo, hi in _batches(con, sorted(set(cids)), messages):
        rows = con.execute(
            "WITH sel AS (SELECT unnest($batch::VARCHAR[]) AS conversation_id), "
            "cut AS (SELECT m.conversation_id, min(m.position) AS cutoff FROM messages m JOIN sel USING (conversation_id) "
            "WHERE m.rowid BETWEEN $lo AND $hi AND m.on_main_path AND m.role IN ('user', 'tool') "
            "AND regexp_matches(m.content, $revealing, 'i') GROUP BY 1), "
            "calls AS (SELECT t.conversation_id, t.position, count(*) AS calls, count(*) FILTER (WHERE t.result_position "
            "IS NULL) AS unanswered, list(coalesce(t.name, '') ORDER BY t.call_index) AS names FROM tool_calls t "
            "JOIN sel USING (conversation_id) WHERE t.position IS NOT NULL GROUP BY ALL), "
            "errs AS (SELECT DISTINCT t.conversation_id, t.result_position AS position FROM tool_calls t "
            "JOIN sel USING (conversation_id) WHERE t.is_error AND t.result_position IS NOT NULL) "
            "SELECT m.conversation_id, m.position, m.role, m.origin, m.name, CASE WHEN length(m.content) > 2 * $chars "
            "THEN left(m.content, $chars) || chr(10) || right(m.content, $chars) ELSE m.content END, coalesce(c.calls, 0), "
            "coalesce(c.unanswered, 0), e.position IS NOT NULL, coalesce(c.names, []) "
            "FROM messages m JOIN sel USING (conversation_id) LEFT JOIN cut USING (conversation_id) "
            "LEFT JOIN calls c ON c.conversation_id = m.conversation_id AND c.position = m.position "
            "LEFT JOIN errs e ON e.conversation_id = m.conversation_id AND e.position = m.position "
            "WHERE m.rowid BETWEEN $lo AND $hi AND m.on_main_path AND m.role != 'system' "
            "AND (cut.cutoff IS NULL OR m.position < cut.cutoff) "
            "ORDER BY m.conversation_id, m.position",
            {"batch": batch, "lo": lo, "hi": hi, "revealing": revealing, "chars": TEXT_CHARS},
        ).fetchall()
        run: list[Msg] = []
        at: str | None = None
        for cid, pos, role, origin, name, text, calls, unanswered, err, names in rows:
            if cid != at:
                if run:
                    yield str(at), _with_stop(run, stops.get(str(at)))
                at, run = cid, []
            run.append(
                Msg(int(pos), role, origin, name, text or "", int(calls), int(unanswered), bool(err), tuple(names))
            )
        if run:
            yield str(at), _with_stop(run, stops.get(str(at)))


def _with_stop(run: list[Msg], stop: str | None) -> list[Msg]:
    """The run with the harness's logged stop status on its last message."""
    return run if stop is None else run[:-1] + [replace(run[-1], stop=stop)]


def _batches(con: duckdb.DuckDBPyConnection, ordered: list[str], messages: int) -> Iterator[tuple[list[str], int, int]]:
    """The runs of ``ordered`` cut into batches of about ``messages`` main-path messages together (a run is never
    split: a longer one is a batch of its own), in the order their rows are stored, each with the range of row ids
    its runs' rows lie in."""
    runs = con.execute(
        "SELECT conversation_id, count(*) FILTER (WHERE on_main_path AND role != 'system'), min(rowid), max(rowid) "
        "FROM messages WHERE conversation_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1 ORDER BY 3, 1",
        [ordered],
    ).fetchall()
    batch: list[str] = []
    count, lo, hi = 0, 0, 0
    for cid, n, first, last in runs:
        if batch and count + n > messages:
            yield batch, lo, hi
            batch, count = [], 0
        if not batch:
            lo, hi = first, last
        batch.append(cid)
        count += n
        lo, hi = min(lo, first), max(hi, last)
    if batch:
        yield batch, lo, hi
