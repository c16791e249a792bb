"""Where a failed run went wrong (docs/definitions.md#failure-analysis): the decisive step and the agent that took it.

1. **Against a passed run of the same task** (``outcomes.detail.task``): the first divergence of the run diff
   (docs/outcomes.md#run-diff, ``forensics.analyzers.diff``), at the failed run's step (its assistant message), when both runs
   have tool-call steps and the failed one has a step there.
2. **Else from the run itself**, the earliest reply (an assistant message after the task, with something to
   say or a tool call; the task's own message too when a tool output answers it, as in a group chat whose first expert writes
   the task, the plan and its first code in one message: on the labeled failures the label blames that message
   in 20 of 126 runs) that does one of the things a failed run's decisive step does, in three tiers: an unfounded
   statement (``assumption``, ``unsupported_claim``) anywhere in the run before a failed step (``after_error``,
   ``failed_code``), since a crash is seen and retried while an unfounded fact is built on, and a failed step
   before the first change (``first_write``):

   - ``assumption``: it works from something it does not have: "assume", "hypothetical", "simulate",
     "placeholder", "mock", "dummy", "example data", "let's say", "hard-coded" (softer words, "manually",
     "approximately", "typically", "likely", fired mostly on replies before the labeled step);
   - ``after_error``: it goes on without code right after a tool output that shows an error (an answer or
     plan built on a failed step);
   - ``unsupported_claim``: it states figures as found or verified ("based on", "we found", "here are the",
     "is confirmed") when no tool output came before it (the task's own figures restated are no claim);
   - ``failed_code``: it runs code, or calls a tool that changes something (``WRITE``), whose output is an error
     or empty (a call that only reads and fails, a lookup that found nothing, is retried: no failed step; a
     message that calls a tool is code for the other rules: it acts);
   - ``first_write``: its first call of a tool named for a change (``WRITE``: the name's first word a write verb,
     ``modify_pending_order_items``, ``cancel_…``, ``transfer_to_human_agents``); on AgentRx's labeled tau-bench
     failures the label is that call in 6 of 15 dev runs (of the plain-hash split); in a run that serves a
     person (below), a first change the person consented to ("yes", "go ahead", "proceed", "I confirm" in their
     last turn before it) was what they asked for given what they had been told, so the step is where the agent
     first told them what its tools found: its first reply after a tool output (``consented_change``); a change
     made without that consent stays the step (the policy of a customer-service agent: no change without an
     explicit yes);
   - the run's own later evidence (branch ``step9``, read off AgentRx's dev half): a reply saying a thing has none of
     something that an earlier tool output about that thing holds (``contradicted_absence``, an unfounded
     statement: "order #W1 does not have a tracking number" against its ``"tracking_id": [...]``); a change the
     person's next turn disowns ("I only wanted to cancel the hose, not the entire order": ``disowned_change``, a
     failed step shown by the person); and where a change failed because the thing's state forbids it ("non-pending
     order cannot be modified", ``STATE_REFUSED``) right after another change of the same plan succeeded (no person
     turn between them), that earlier change, which set the state (``earlier_change``);
   - else the first step of the signature: the first occurrence of the run's recurring error (the reply that
     caused it), else the start of a loop (``problem_findings`` of kind ``loop``, when the problem detectors
     wrote it), else (no evidence of its own) the trivial step that did best on the dev half of labeled runs of
     the run's shape (docs/failures-evaluation.md, "the fallback"): in a run that serves a person (the agent calls
     tools and the person speaks again after one of its replies, ``serves_person``: AgentRx's tau-bench runs) the
     step before the first tool output that shows an error, else the last step (``before_first_error``); in any
     other run the first reply after the task (Who&When's group chats), and the false claim of a
     ``claimed_success`` end only when it is that first reply's own (on the labeled failures the final claim was
     never the labeled step: 0 of 7 dev runs where it was tried before the first reply).
3. **An orchestrated run** (a *hub*: the first speaker after the task speaks twice before anyone else, it plans and
   then instructs, and hands every turn, so each message of another named agent comes right after one of its:
   Magentic-One's orchestrator and its WebSurfer, FileSurfer, Coder): the hub plans, keeps its ledger and
   delegates; its agents act and report in their own messages, which carry what they saw (a page's text), so the
   statement rules read only the hub's messages. Of those, an unfounded statement or failed step before the first
   report outranks it; else, when the hub declared the request satisfied (``SATISFIED``: "Request satisfied.",
   "the request has been satisfied") in a run that failed, the report it accepted, the last before that
   declaration (``accepted_report``), unless that report only showed a page (``SHOWN``: a screenshot, the
   viewport, OCR of it, a file viewer's address): then the answer is the hub's own, drawn in its first message
   after it (``accepted_conclusion``); else the first report (``first_report``), the first step that acted. On the
   Hand-Crafted runs of Who&When (58 Magentic-One runs, hand-labeled) the labels blame a report in 40 and the
   orchestrator in 18.

The agent is the speaker of that message (``messages.name``) without a trailing qualifier of what it is doing
(``Orchestrator (-> WebSurfer)`` is ``Orchestrator``), None where messages carry none. Judged on the
labeled failures of ``../shared/data/failures`` by ``bench/failures.py`` (docs/failures-evaluation.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forensics.analyzers.signature import Msg, error_line, is_output

ASSUMPTION = re.compile(
    r"\b(?:assum(?:e|es|ed|ing|ption)|hypothetical(?:ly)?|simulat(?:e|ed|ing|ion)|placeholder|"
    r"mock|dummy|sample data|example data|for demonstration|let'?s say|fictional|"
    r"hard-?cod\w*)\b",
    re.I,
)
CLAIMS = re.compile(
    r"\b(?:based on|according to|the (?:result|answer|output)s? (?:is|are|shows?)|we (?:have )?"
    r"(?:found|identified|confirmed|verified|obtained)|here (?:is|are) the|has been (?:verified|"
    r"confirmed)|is confirmed|correct(?:ly)?)\b",
    re.I,
)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")  # a figure; the task's own figures restated are no claim
# a coordinator saying the request is done (Magentic-One's "Request satisfied.", a ledger's reason "the request has
# been satisfied"); "not yet satisfied" is no such declaration
SATISFIED = re.compile(
    r"\b(?:request|task|query) (?:is |has been |was )?(?:now )?(?:satisfied|fulfilled|completed?|answered|resolved)\b",
    re.I,
)
# a report that shows what its agent saw (a page's screenshot, its viewport, the OCR of it, a file viewer's address
# header: a line that opens the message or the page, ``Address:`` and a URI, ``file:///workspace/…``, ``https://…``,
# ``about:blank``, ``bing: the query``) rather than says an answer: the conclusion drawn from it is its reader's. An
# indented or mid-line "Address: 28 Cornelia St" is a street in an answer, not a viewer's header
SHOWN = re.compile(
    r"\b(?:here is a screenshot|screenshot of the|viewport (?:shows|position)|automatic OCR)\b|"
    r"^Address: [a-z][a-z0-9+.-]*:",
    re.I | re.M,
)
QUALIFIER = re.compile(r"\s+\([^()]*\)\s*$")  # ``Orchestrator (-> WebSurfer)``: what the agent is doing
CODE = re.compile(r"```|<execute>|^\s*(?:GET|POST) ", re.M)
EMPTY_OUTPUT = re.compile(r"code output:\s*$", re.I)
# a tool whose name says it changes something (its first word a write verb: ``modify_pending_order_items``,
# ``cancel_pending_order``, ``transfer_to_human_agents``), not one that reads (``get_order_details``, ``find_user``);
# of a namespaced name (an MCP server's tool as Claude Code and others name it, ``mcp__github__create_issue``), its
# last segment (``tool_name``)
WRITE = re.compile(
    r"(?:modify|update|cancel|return|exchange|transfer|delete|remove|create|write|edit|insert|add|set|submit|book|"
    r"send|pay|refund|purchase|replace|move|rename|apply|commit|push|deploy|enable|disable|activate|deactivate|"
    r"reset|toggle|grant|revoke|assign|approve|upgrade|downgrade|suspend|resume|refuel|charge)(?:$|[_\-.\s])",
    re.I,
)
NAMESPACE = "__"  # between a namespaced tool name's segments: ``mcp__github__create_issue``


def tool_name(name: str) -> str:
    """A tool's own name, without its namespace: the last segment (``mcp__x__write_file`` → ``write_file``)."""
    return name.rsplit(NAMESPACE, 1)[-1]


# a statement the run has no ground for outranks a failed step: a crash is seen and usually retried, an
# unfounded fact or assumption is built on by the replies after it; where nothing failed, the first change (on the
# graded tau2 runs a first change before a failed step was a right one: enabling roaming)
TIERS: list[tuple[str, ...]] = [
    ("assumption", "unsupported_claim", "contradicted_absence"),
    ("after_error", "failed_code", "disowned_change"),
    ("first_write",),
]
# a reply saying a thing has none of something ("the order #W1 does not have a tracking number", "it has no
# refunds"): the noun (4+ letters) it says is missing
ABSENT = re.compile(
    r"\b(?:(?:does|do|did) ?n[o'’]t (?:have|include|contain|show|list)(?: (?:a|an|any))?|(?:has|have|had|with) no|"
    r"there (?:is|are|was|were) no) ([a-z]{4,})",
    re.I,
)
# an identifier a reply and a tool output can share: an order, account or record id (a digit, 5+ characters)
IDENT = re.compile(r"#?\b[A-Za-z]*\d[\w-]{4,}\b")
# an error that says the thing's state forbids the change ("non-pending order cannot be modified", "the order has
# already been cancelled", "is locked"), not that the call was wrong (a bad id, an unexpected error, a text not found)
STATE_REFUSED = re.compile(
    r"\b(?:non-[a-z]+ \w+ cannot be|cannot be (?:modified|changed|updated|cancell?ed|exchanged|returned|edited) "
    r"(?:in|when|after|once|because)|(?:is|has) already (?:been )?[a-z]+ed|is (?:locked|no longer (?:pending|editable|"
    r"active))|(?:invalid|wrong) (?:state|status) (?:for|to))",
    re.I,
)
# the person's next turn after a change says it was not what they wanted ("I only wanted to cancel the hose, not the
# entire order", "that's not what I asked for", "I didn't ask for that"): past tense, about what was done, not a new
# instruction ("I only want to return the backpack" is one)
DISOWNED = re.compile(
    r"\b(?:I only (?:wanted|asked|meant|said)|I (?:did ?n[o'’]t|never) (?:want|ask|mean|say|agree|authori[sz]e)|"
    r"that(?:'|’)?s not what I (?:wanted|asked|meant|said))\b",
    re.I,
)
SUBSTANCE = 20  # a reply shorter than this (TERMINATE, "ok") is no step
# each rule in words, as `forensics show` and the explorer say why a step is the decisive one
RULES = {
    "divergence": "the first divergence from a passed run of the same task",
    "assumption": "it works from something it does not have (an assumption, a placeholder, simulated data)",
    "after_error": "it goes on without code right after a tool output that shows an error",
    "unsupported_claim": "it states figures as found before any tool output",
    "failed_code": "it runs code or calls a tool whose output is an error or empty",
    "first_write": "its first call that changes something (a tool named for a write: modify, cancel, return, ...)",
    "contradicted_absence": "it says a thing has none of something that an earlier tool output about that thing holds",
    "disowned_change": "a change the person's next turn says was not what they wanted",
    "earlier_change": "the change that set the state a later change then failed on (no person turn between them)",
    "consented_change": "the first change was made with the person's consent: where the agent first told them what "
    "its tools found",
    "recurring_error": "the first occurrence of the run's recurring error",
    "loop": "the start of a loop",
    "first_reply": "the first reply after the task (no other rule fired)",
    "before_first_error": "no rule fired in a run that serves a person: the step before the first error output, else "
    "the last step (the best trivial step on the dev half of such runs)",
    "accepted_report": "the report the coordinator accepted when it declared the request satisfied",
    "accepted_conclusion": "the coordinator's answer drawn from a page its agent showed, when it declared the request satisfied",
    "first_report": "the first step an agent took for the coordinator that hands every turn (its first report; no other rule fired)",
    "false_claim": "the false claim of success",
}


@dataclass(frozen=True)
class Decisive:
    position: int | None
    agent: str | None
    rule: str  # a key of RULES: the rule that picked the step


def from_run(
    msgs: list[Msg], recurring_at: int | None = None, claim_at: int | None = None, loop_at: int | None = None
) -> Decisive:
    """The decisive step of a failed run read from its own messages (rule 2 of the module docstring).
    ``recurring_at``: the position of the first occurrence of its recurring error; ``claim_at``: of its false
    claim (a ``claimed_success`` end); ``loop_at``: where a loop the problem detectors found starts."""
    # a step says something or acts: a message that only calls a tool (no text) is a step too
    replies = [m for m in msgs if m.role == "assistant" and (len(m.text.strip()) >= SUBSTANCE or m.calls)]
    if not msgs:
        return Decisive(None, None, "first_reply")
    task_at = next((m.position for m in msgs if m.origin == "person"), msgs[0].position)
    output_after: dict[int, Msg] = {}
    output_before: dict[int, Msg | None] = {}
    last_output: Msg | None = None
    for i, m in enumerate(msgs):
        if is_output(m):
            if i and msgs[i - 1].role == "assistant":
                output_after[msgs[i - 1].position] = m
            last_output = m
        else:
            output_before[m.position] = last_output
    # the task's own message is a step when it acted: an assistant message a tool output answers (a group chat's
    # first expert writes the plan and its first code in one message)
    after_task = [m for m in replies if m.position > task_at or (m.position == task_at and m.position in output_after)]
    hub = _hub(msgs, task_at)
    task = next((m for m in msgs if m.position == task_at), msgs[0])
    given = set(NUMBER.findall(task.text))
    found: dict[str, Msg] = {}
    for m in after_task:
        if hub is not None and speaker(m.name) != hub:
            continue  # a report carries what its agent saw (a page's text), not the agent's own statement
        for rule in _rules(m, output_before.get(m.position), output_after.get(m.position), given):
            found.setdefault(rule, m)
    contradicted = _contradicted(msgs, after_task, hub)
    if contradicted is not None:
        found.setdefault("contradicted_absence", contradicted)
    disowned = _disowned(msgs, after_task, output_after)
    if disowned is not None:
        found.setdefault("disowned_change", disowned)
    # an orchestrated run: the hub plans and delegates, the agents it hands the turn to act and report in their own
    # messages (Magentic-One's WebSurfer: "I typed ... Here is a screenshot of ..."); the first report is the first
    # step that acted, and a later step is built on it: only the hub's own unfounded statement or failed step
    # before it outranks it
    report = next((m for m in after_task if speaker(m.name) not in (hub, None)), None) if hub is not None else None
    for tier in TIERS:
        hits = [
            (found[r].position, r)
            for r in tier
            if r in found and (report is None or found[r].position < report.position)
        ]
        if hits:
            rule = min(hits)[1]
            if (
                rule == "failed_code"
                and _writes(found[rule])
                and STATE_REFUSED.search(output_after[found[rule].position].text)
            ):
                earlier = _earlier_change(msgs, found[rule], output_after)
                if earlier is not None:
                    return _at(earlier, "earlier_change")
            if rule == "first_write" and serves_person(msgs, task_at) and _consented(msgs, found[rule]):
                told = _first_told(msgs, task_at)
                if told is not None and told.position < found[rule].position:
                    return _at(told, "consented_change")
            return _at(found[rule], rule)
    if report is not None:
        # the hub declared the request satisfied in a run that failed: the answer it accepted came from the last
        # report before that declaration
        done = next(
            (m for m in msgs if m.position > report.position and speaker(m.name) == hub and SATISFIED.search(m.text)),
            None,
        )
        if done is not None:
            accepted = next(
                (m for m in reversed(after_task) if m.position < done.position and speaker(m.name) != hub), None
            )
            if accepted is not None:
                # a report that only showed a page: the coordinator drew the answer from it, in its first message
                # after it (Magentic-One's ledger that says the request is satisfied)
                concluded = (
                    next((m for m in msgs if m.position > accepted.position and speaker(m.name) == hub), None)
                    if SHOWN.search(accepted.text)
                    else None
                )
                if concluded is not None:
                    return _at(concluded, "accepted_conclusion")
                return _at(accepted, "accepted_report")
        if report.position != claim_at:
            return _at(report, "first_report")
    by_pos = {m.position: m for m in msgs}
    if recurring_at is not None:
        author = next((m for m in reversed(msgs) if m.role == "assistant" and m.position < recurring_at), None)
        if author is not None:
            return _at(author, "recurring_error")
    if loop_at is not None and loop_at in by_pos:
        return _at(by_pos[loop_at], "loop")
    if serves_person(msgs, task_at):
        return _at(_before_first_error(msgs), "before_first_error")
    if after_task and (claim_at is None or after_task[0].position != claim_at):
        return _at(after_task[0], "first_reply")
    if claim_at is not None and claim_at in by_pos:
        return _at(by_pos[claim_at], "false_claim")
    return _at(replies[0] if replies else msgs[0], "first_reply")


CONSENT = re.compile(r"\b(?:yes|yep|yeah|i confirm|go ahead|proceed|please do)\b", re.I)
# a consent word negated in its clause ("don't proceed yet", "I'm not sure how to proceed"): no consent
NEGATED = re.compile(r"(?:\b(?:not|never|no)|n['’]t)\b[^.!?,;:\n]{0,40}$", re.I)


def _writes(m: Msg) -> bool:
    """It calls a tool named for a change (``WRITE``)."""
    return any(WRITE.match(tool_name(n)) for n in m.call_names)


def _failed(res: Msg | None) -> bool:
    return res is not None and error_line(res.text, res.error) is not None


def _earlier_change(msgs: list[Msg], failed: Msg, output_after: dict[int, Msg]) -> Msg | None:
    """The agent's last change that succeeded before the change ``failed``, with no person turn between them: it set
    the state the later one failed on (an order modified, then its address refused: "non-pending order cannot be
    modified"); the two were one plan, and its order was the mistake."""
    for m in reversed([x for x in msgs if x.position < failed.position]):
        if m.origin == "person":
            return None
        if m.role == "assistant" and _writes(m) and m.position in output_after:
            return None if _failed(output_after[m.position]) else m
    return None


def _contradicted(msgs: list[Msg], after_task: list[Msg], hub: str | None) -> Msg | None:
    """The first reply that says a thing has none of something (``ABSENT``) while an earlier tool output about that
    thing (one sharing an identifier of the reply, ``IDENT``) holds a field of that name that is not empty
    (``"tracking_id": ["2864…"]`` against "does not have a tracking number"): the run's own evidence contradicts it."""
    outputs: list[tuple[Msg, set[str]]] | None = None  # each tool output with its identifiers, read once when needed
    for m in after_task:
        if hub is not None and speaker(m.name) != hub:
            continue
        absent = {a.group(1).lower() for a in ABSENT.finditer(m.text)}
        ids = set(IDENT.findall(m.text)) if absent else set()
        if not ids:
            continue
        if outputs is None:
            outputs = [(o, set(IDENT.findall(o.text))) for o in msgs if is_output(o)]
        for noun in sorted(absent):
            field = re.compile(rf'"{re.escape(noun)}[a-z_]*"\s*:(?!\s*(?:\[\]|\{{\}}|null|""|0\b|false\b))', re.I)
            if any(o.position < m.position and ids & oid and field.search(o.text) for o, oid in outputs):
                return m
    return None


def _disowned(msgs: list[Msg], after_task: list[Msg], output_after: dict[int, Msg]) -> Msg | None:
    """The first change that succeeded whose next person turn disowns it (``DISOWNED``): the person says it was not
    what they wanted, the run's own evidence that the change was the mistake."""
    for m in after_task:
        if not _writes(m) or m.position not in output_after or _failed(output_after[m.position]):
            continue
        nxt = next((x for x in msgs if x.position > m.position and x.origin == "person"), None)
        if nxt is not None and DISOWNED.search(nxt.text):
            return m
    return None


def _consented(msgs: list[Msg], m: Msg) -> bool:
    """The person's last turn before ``m`` consents (yes, go ahead, proceed, I confirm; not negated in its clause:
    ``NEGATED``)."""
    last = next((x for x in reversed(msgs) if x.position < m.position and x.origin == "person"), None)
    return last is not None and any(NEGATED.search(last.text[: c.start()]) is None for c in CONSENT.finditer(last.text))


def _first_told(msgs: list[Msg], task_at: int) -> Msg | None:
    """The agent's first reply to the person after a tool output: the first time it tells what its tools found."""
    seen = False
    for m in msgs:
        if m.position <= task_at:
            continue
        if is_output(m):
            seen = True
        elif seen and m.role == "assistant" and not m.calls and len(m.text.strip()) >= SUBSTANCE:
            return m
    return None


def serves_person(msgs: list[Msg], task_at: int) -> bool:
    """A run that serves a person: the agent calls tools (structured calls) and the person speaks again after one of
    its replies (a customer-service run: AgentRx's tau-bench retail runs, tau2's; a chat with a coding agent too)."""
    replied = False
    for m in msgs:
        if m.position <= task_at:
            continue
        if m.role == "assistant":
            replied = True
        elif m.origin == "person" and replied:
            return any(x.calls for x in msgs)
    return False


def _before_first_error(msgs: list[Msg]) -> Msg:
    """The message before the run's first tool output that shows an error, else its last message (the trivial step
    "the step before the first error" of bench/failures.py)."""
    for i, m in enumerate(msgs):
        if i and is_output(m) and error_line(m.text, m.error) is not None:
            return msgs[i - 1]
    return msgs[-1]


def _hub(msgs: list[Msg], task_at: int) -> str | None:
    """The agent that coordinates the run, when there is one: the first speaker after the task, when it speaks twice
    before anyone else does (it plans, then instructs) and every message of another named agent comes right after
    one of its messages (it hands every turn), at least once."""
    after_task = [m for m in msgs if m.position > task_at]
    named = [m for m in after_task if m.role == "assistant" and m.name is not None]
    if len(after_task) < 2 or not named or after_task[0] is not named[0]:
        return None
    hub = speaker(named[0].name)
    if after_task[1].role != "assistant" or speaker(after_task[1].name) != hub:
        return None
    handed = 0
    for prev, m in zip(msgs, msgs[1:]):
        if m.position <= task_at or m.role != "assistant" or speaker(m.name) in (hub, None):
            continue
        if prev.role != "assistant" or speaker(prev.name) != hub:
            return None
        handed += 1
    return hub if handed else None


def _rules(m: Msg, prev: Msg | None, res: Msg | None, given: set[str]) -> list[str]:
    """The rules of the module docstring a reply meets: ``prev`` is the last tool output before it, ``res`` the
    output that answers it, ``given`` the figures of the task (restated, they are no claim)."""
    # code acts, and so does a call that changes something; a call that only reads and fails (a lookup that found
    # nothing) is retried, no failed step
    writes = any(WRITE.match(tool_name(n)) for n in m.call_names)
    code = CODE.search(m.text) is not None or writes
    acts = code or m.calls > 0
    out = []
    if ASSUMPTION.search(m.text):
        out.append("assumption")
    if writes:
        out.append("first_write")
    if not acts and prev is not None and error_line(prev.text, prev.error) is not None:
        out.append("after_error")
    if not acts and prev is None and set(NUMBER.findall(m.text)) - given and CLAIMS.search(m.text):
        out.append("unsupported_claim")
    if (
        code
        and res is not None
        and (error_line(res.text, res.error) is not None or EMPTY_OUTPUT.search(res.text.strip() + "\n"))
    ):
        out.append("failed_code")
    return out


def _at(m: Msg, rule: str) -> Decisive:
    return Decisive(m.position, speaker(m.name), rule)


def speaker(name: str | None) -> str | None:
    """The agent a message's name says, without a qualifier of what it is doing: Magentic-One logs its
    orchestrator's messages as ``Orchestrator (thought)``, ``Orchestrator (-> WebSurfer)``, ``Orchestrator
    (termination condition)``, all of one agent."""
    return QUALIFIER.sub("", name) if name else name
