"""How a run ended (``signature``).

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
"""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.signature.reading import Msg, is_output, stream
from forensics.text.error_lines import error_line, is_code_line

ENDINGS = ("claimed_success", "gave_up", "limit", "handed_off", "errored", "cut_off", "no_reply", "answered")
# ends decided by the harness, not the agent: compared with outcomes, they can read the grade (MINT's ALFWorld
# stops a successful episode right after the winning action, with no observation)
GRADE_REVEALING_ENDS = ("cut_off",)
TAIL = 3  # the last messages read for a limit notice
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
    r"\b(?:I(?: am| was|['’]m) (?:unable|not able)|I (?:cannot|can['’]t|could not|couldn['’]t)|"
    r"unable to (?:complete|proceed|find|access|determine|solve|fix|locate)|I(?: am|['’]m) sorry,? but|"
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
