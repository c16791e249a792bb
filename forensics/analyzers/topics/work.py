"""Switches in work with an agent: does the person's turn make a new request (GUIDE rules S1-S8)?

In a booking dialogue the *subject* changes (hotel, then taxi) and lexical cohesion finds it. In work with an
agent the person's line of requests shares one project's words from start to end: the request that opens the
next piece of work ("Now add type declarations for the core modules") uses the same words as the feedback on
the last one ("still cannot drag the node"), and is often the longer, more cohesive of the two. On the shared
agent logs the cohesion signals of the user mode separate nothing (AUC 0.4-0.6 on the dev half) and the user
model found 8 % of the labeled switches. What a reader goes by there is what the turn does:

- ``own_words``: log(1 + the content words of the person's own words) (``prose.own_words``: not what they pasted): a new piece of
  work is stated; "still no go", "yes please", "250ms" (an answer) are not;
- ``work``: log(1 + the assistant's reply characters since the person's previous turn / 500 + its tool calls):
  work was done in between, so the previous request has had its answer and the next one can be new (format
  independent: aider and chat exports record no tool calls, their replies carry the diffs);
- ``request_form``: a sentence of the person's own words opens by asking for something to be done ("add ...",
  "please implement ...", "can we now ...", "je voudrais ...", "帮我 ..."), after an acknowledgment at most;
- ``own_question``: the person's own words end with a question (a new question is a new request, S1);
- ``entity_new_judged`` (from ``signals``): the turn names a file, path or identifier that neither the person's
  earlier turns nor the tools' targets named: the content that is new against the current work.

Beside these five, ``CONTEXT`` reads the turn against the work around it (the S-rules' cues: the last reply
reported work done, offered a step, asked something; the person assents, insists, clarifies, asks how, moves on
with "now / next / also"; overlap with the last reply, the first request and the current request). A small
learned combiner weighs all 22 (``weights.json`` mode ``work``: an L2 logistic regression fitted by ``python
bench/topics.py --fit-work`` on the dev half of the labeled shared agent logs, class-balanced, each log format
weighing alike, every weight held to the sign its S-rule gives it; its threshold is the best leave-one-format-out
F1 there; docs/topics-evaluation.md, issue 43 round 4). Its coefficients are a table in weights.json: nothing is
fitted at run time. It scores each person turn beside the user mode's topic model: a turn switches when either
says so (a new subject still is a new request); the marker rule (``infer.mark``) is the same as in every mode.

Which conversations are judged this way (``is_work``): those where the assistant works, not chats: a tool call
on the main path, or a reply of at least WORK_REPLY_CHARS characters (code, a plan, a diff). A booking or
chit-chat exchange (short replies, no tools) keeps the topic model.

Three rules hold beside the combiner in these conversations, not fitted (issue 43 round 6): a turn that is mostly
pasted program output with a line or two typed continues (``reports_output``: S4, S6); the turn after a
content-free one is read against the last turn with a topic (``infer.mark``); a conversation of at most
``SHORT_TURNS`` person turns switches only ``SHORT_MARGIN`` past the operating point (a false marker costs Pk more
there than a true one gains); a turn after which the tool calls touch only what they touched just before it
(``follows_up``) switches only ``UNSURE`` past it (issue 43, topics12).

Four more gates continue the work at hand whatever the score (issue 43, shift7 and pk8; ``CONTINUES``): a short request
to run, test or check what is there and names nothing new (``checks_work``), the last step's result reported unseen in
typed words (``misses_result``), the reply's own lines pasted back with a line typed (``echoes_reply``), and a question
about the work at hand that asks for nothing to be done (``asks_about``). A conversation without
work whose assistant touches no file or command and answers in paragraphs is open chat: not judged, no marker
(``declines``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from forensics.analyzers.topics.signals import Idf, Message, cosine, is_question, message_vector, sentences, terms
from forensics.text.error_lines import error_lines
from forensics.text.prose import output_chars, own_words, reads_as_prose, typed_prose, unwrapped

MODE = "work"  # its entry in weights.json
BASE = ("own_words", "work", "request_form", "own_question", "entity_new_judged")  # issue 43's first five
# What the turn does against the work around it (GUIDE rules S1-S8), read from what the detector already computes:
# the last reply's close (it reports work done, offers a next step, asks the person something), the person's
# opening (assent, insisting, clarifying, a means question, a "now / next / also" that moves on), an error or
# output quoted, the turn's length, a greeting before it (S7), and its overlap with the last reply, with the
# person's first request, with the current request (the last turn that asked for something) and with the files
# and identifiers the reply named; ``tools``: the tool calls since the person's previous turn.
CONTEXT = (
    "reply_done",
    "reply_offer",
    "reply_asks",
    "accept",
    "insist",
    "clarify",
    "means",
    "newness",
    "errorish",
    "chars",
    "after_greeting",
    "cos_reply",
    "cos_first",
    "cos_request",
    "new_vs_reply",
    "files_reply",
    "tools",
)
FEATURES = BASE + CONTEXT
# Gates beside the combiner (not its signals): a turn with any of them continues the work at hand, whatever its score
# (S4 / S5 / S6; ``reports_output``, ``checks_work``, ``misses_result``, ``echoes_reply``, ``asks_about`` below)
CONTINUES = ("reports_output", "checks_work", "misses_result", "echoes_reply", "asks_about")
# S4 / S6: a turn that is mostly pasted program output (a traceback, a build log, a terminal session) with a
# sentence or two typed around it supplies what was asked or reports what the last step produced: it continues the
# work at hand, whatever its length or wording (``reports_output``; a gate beside the combiner, not a signal of it)
REPORT_OUTPUT_SHARE = 0.5  # of the message's characters in lines that read as program output, at least
REPORT_TYPED_CHARS = 300  # what the person typed around it, at most (two or three sentences)
# A log pasted whole (a CI job's output, a build, a terminal session) has lines no pattern of program output reads
# ("copying build/lib/ai/x.py -> ...", "1 | import pytest", "running install_scripts") but ends where the run failed:
# an error line (``text.error_lines.error_lines``, the reading ``error_again`` uses). From the first line of the turn
# that is not a sentence (``prose.reads_as_prose``) to its last error line, the turn is that paste, not the person's
# words (``pasted_log``); what they typed is around it.
LOG_LINES = 3  # lines of such a block, at least (one error line quoted in a sentence is no paste)
# A page copied from a documentation site or a README keeps its markdown: headings and links (``[text](url)``). A person
# typing to an agent writes a heading now and then (a spec's "## Goal"), a link rarely. From its first heading to its
# last line with a heading or a link, a turn holding ``PAGE_LINKS`` links and ``PAGE_HEADINGS`` headings is that page
# (``pasted_page``); what the person typed is around it.
PAGE_LINKS = 3
PAGE_HEADINGS = 2
_HEADING = re.compile(r"^#{1,6} \S")
_LINK = re.compile(r"\[[^\]\n]+\]\((?:https?://|#|/)[^)\s]*\)")
# S4: a short turn whose own words open by asking to run, test, check or build what is there ("run the test and
# check it works", "can you run lint, test and check-types", "try again") asks to verify the work at hand, the next
# step of the same task: it continues, as pasted output does (``checks_work``; a gate beside the combiner). A longer
# turn states more than a check (a new request beside it, S8). So does a turn that names a file or identifier the
# conversation has not named (``entity_new_judged``: "Can you run the lint_all.py?" when the work never touched it):
# it asks to run something else, a new request decided by its content (S1), and the combiner judges it.
_CHECK = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|great|good|nice|perfect|thanks|thank you|yes|now|then|and|so|alright)[\s,.!:;-]+)*"
    r"(?:please\s+|pls\s+|can you\s+|could you\s+|let['’]?s\s+|now\s+)*(?:re-?)?"
    r"(?:run|test|check|verify|lint|build|compile|try)\b",
    re.IGNORECASE,
)
CHECK_WORDS = 25  # the turn's own words, at most
# S6: a short turn saying in typed words that what the last step should have shown is not there ("I didn't see the
# new fields in the gui", "I am not seeing a network request when I load the page. Is it supposed to ...?") reports
# the consequence of that step: it continues (``misses_result``), unless it also asks for something new (a request
# form, S8).
_UNSEEN = re.compile(
    r"\b(?:i(?:['’]m| am)? not seeing|i (?:don['’]?t|do not|didn['’]?t|did not|can['’]?t|cannot) see|"
    r"nothing (?:happens|happened|changed|shows)|(?:is|are|was|were)n['’]?t (?:showing|shown|visible|displayed|"
    r"appearing)|"
    r"not (?:showing|shown|visible|displayed|appearing))\b",
    re.IGNORECASE,
)
UNSEEN_WORDS = 30  # the turn's own words, at most
# S4: a turn that pastes back what the assistant just wrote (most of its lines are lines of the replies since the
# person's last turn) with a line or two typed ("make the whole script with the integration" above the script) works
# on that same artifact: it continues (``echoes_reply``). A step prompt that quotes the steps before it states the
# next step at length beside them (a SciCode step: its own text runs to thousands of characters), so it is read.
ECHO_LINE_CHARS = 10  # a line shorter than this ("}", "fi") says nothing about where it came from
ECHO_LINES = 3  # lines of the turn, at least
ECHO_SHARE = 0.5  # of them found in the replies, at least
# S4 / S5: a question about the work at hand ("Do all nodes have IDs?", "Is that intentional?", "What would a good issue
# title be like?", "ou en est le déploiement de mes functions ?") asks to understand what was done or said: it follows
# up on it (``asks_about``). It is a question in the person's own words that asks for nothing to be done (no request
# form in any sentence, no "can you / could we / we need / let's / please / is it possible"), names no file or
# identifier new to the conversation (``entity_new_judged``: "Can we now add support for OpenPrintTag?" does) and is
# about the work: at least ABOUT_SHARE of its content words were used by the work itself so far, the assistant's
# replies and its tools' targets. The person's own earlier turns do not count: a question re-asking what the person
# asked before and the replies never took up ("写文件为什么总写错日期？" after "再检查一下写文件的日期吧", answered with other
# work) returns to a request the work left (S2, the seed's interleave), it does not follow up on the work at hand. A
# one-off question on another subject shares few of them (S1). ABOUT_SHARE is a guard, not a fitted value (docs).
_WANTS = re.compile(
    r"\b(?:can|could|would|will)(?: you| we| i|n'?t we|n'?t you)\b|\b(?<!do )(?<!should )(?<!would )(?:we|i) "
    r"(?:also |really |still |will |'ll )?(?:need|want|should|must|have to|'d like|would like)\b|"
    r"\blet'?s\b|\bplease\b|\bpls\b|\bpossible\b|\b(?:peux|pourrais|puedes|podr[ií]as)\b|能不能|可不可以|请",
    re.IGNORECASE,
)  # and the other languages' request openings (``_OTHER``: je voudrais, quiero, 我想, ...) anywhere in the turn
ABOUT_SHARE = 0.4
# A short work conversation holds one shift at most, as a rule: there one false marker costs its Pk more than a
# true one gains (break-even at a precision of 2/3 for one marker in a conversation of 3 to 11 turns with at most
# one shift, where it is 1/2 in a conversation with several: docs/topics-evaluation.md, issue 43 round 6). So in a
# conversation of at most SHORT_TURNS judged person turns a turn switches only when its score is SHORT_MARGIN past
# the operating point on the logit scale: the work scorer's 0.70 (its anchor 0.30), where the markers of the dev
# halves reach a precision of 2/3 (0.76 above it, 0.32 between 0.60 and 0.70).
SHORT_TURNS = 5
SHORT_MARGIN = 1.7
# Open chat (issue 43 item 2): an assistant that touches no file, path, command or URL and produces no work
# product, and answers in paragraphs (the median of its replies at least OPEN_CHAT_REPLY_CHARS), is a chatbot
# talking through a series of questions, open-domain talk. The user mode's topic model was fitted on task dialogues,
# whose replies are terse (the median reply of a MultiWOZ dialogue is at most 167 characters, of a CrossWOZ one 71;
# the generated assistant logs call tools): on the agent logs' dev halves it set 2 markers in conversations without
# work, none of them true. Such a conversation is not judged: it marks nothing (``declines``), never worse than
# silence, as the dialogue mode's open-domain talk.
OPEN_CHAT_REPLY_CHARS = 300
OPEN_CHAT = "open chat"
# What the tool calls touched (issue 43, topics12): a new request usually moves the work to other files; a follow-up
# keeps touching the same ones. ``touched`` reads the tool calls' targets (``Message.targets``: paths, commands,
# queries) down to the names of the files and folders they name (the last part of a path: "src/app/page.tsx" and
# "./page.tsx" are one file). In a work conversation a turn after which the tool calls touch something, and only what
# the calls between the person's previous turn and this one touched (``follows_up``: "ok, make muted a little
# brighter" and the next edit of the same theme file), goes on with that work: where the judge is unsure of a switch
# there (the surer scorer less than UNSURE logits past its operating point), the turn continues. Not fitted: a guard
# chosen on the dev pool (at 1.0 it also removes one true marker there, 0.96 past; docs/topics-evaluation.md, topics12).
UNSURE = 0.5
_TOUCHED = re.compile(r"(?:[\w.@~-]+/)+[\w.@-]+|[\w-]+\.[a-zA-Z]\w{0,5}\b")
_NOT_TOUCHED = frozenset({"null", "anthropic.com"})  # a null argument; a commit message's Co-Authored-By address
WORK_REPLY_CHARS = 1500  # a reply this long (after the pipeline keeps at most 2,000 characters of it) is work
WORK_CHARS_UNIT = 500  # reply characters that count as one tool call of work
OPENING_CHARS = 600  # the part of the person's own words where the request is looked for
_ACK = (
    r"(?:(?:ok(?:ay)?|great|good|nice|perfect|thanks|thank you|yes|sure|alright|cool|now|then|next|also|and|so|"
    r"lastly|finally|first|hmm|oh|btw)[\s,.!:;-]+)*"
)
_ASK = (
    r"(?:please\s+|pls\s+|now\s+|let'?s\s+|can (?:you|we|i)\s+|could (?:you|we)\s+|would you\s+|"
    r"i (?:want|need|would like|'d like)(?: you)?(?: to)?\s+)?"
)
_DO = (
    r"(?:add|create|make|implement|write|build|update|generate|scan|audit|prepare|refactor|remove|delete|rename|"
    r"move|convert|collect|describe|explain|support|set up|setup|install|run|deploy|design|review|document|"
    r"fix|test|check|get started|start|proceed|complete|show|list|find|search|summari[sz]e|translate|"
    r"compare|analy[sz]e|save|export|import|migrate|integrate|replace|use)\b"
)
# Other languages of the logs: a request's usual opening ("I would like", "can you", "help me"). Not a bare "can
# you" with no verb of doing ("能不能把 X 改成 Y": a change to the work at hand), and no "change": re-specifying
# what is being built is a continuation (S4), not a new request.
_OTHER = (
    r"(?:je (?:voudrais|souhaite|veux)|peux[- ]tu|pourrais[- ]tu|quiero|quisiera|puedes|podr[ií]as|"
    r"帮我|请你|请帮|我想|我要|ich m[öo]chte|kannst du)"
)
REQUEST = re.compile(rf"^\W*{_ACK}(?:{_ASK}{_DO}|{_OTHER})", re.IGNORECASE | re.MULTILINE)
_OTHER_WANTS = re.compile(_OTHER, re.IGNORECASE)
CLOSING_CHARS = (
    400  # the close of a reply, where it reports, offers or asks (the pipeline keeps a long reply's last 400)
)
ASKS_CHARS = 200  # the last characters of a reply where its question to the person stands
CUE_CHARS = 300  # the opening of the person's own words where an S-rule cue is looked for
NEWNESS_CHARS = 200
FIRST_TERMS = 3  # the first person turn with this many content words is the first request
_DONE = re.compile(
    r"\b(?:done|implemented|added|created|updated|fixed|completed|finished|all tests pass\w*|tests? pass\w*|"
    r"now (?:works|supports|has)|successfully|i(?:'ve| have) (?:added|implemented|created|updated|fixed|made|changed|"
    r"written))\b|✅|✓",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"\b(?:want me to|would you like|shall i|should i|if you(?:'d)? (?:want|like)|i can (?:also|now|add|then)|"
    r"next(?: step)?s?:|let me know)\b|要我|需要我|是否",
    re.IGNORECASE,
)
_ACCEPT = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|please do|go ahead|do it|sounds good|great|perfect|nice|thanks|"
    r"thank you|good|好的|好|可以|行|嗯|是的)\b",
    re.IGNORECASE,
)
_INSIST = re.compile(
    r"\b(?:still|again|same (?:error|issue|problem|thing)|(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not|not) "
    r"(?:work|working|fix\w*|change\w*)|nope|broke\w*|wrong|not what|no go)\b|还是|仍然|依然|没用",
    re.IGNORECASE,
)
_CLARIFY = re.compile(
    r"^\W*(?:no[,. ]|actually|i mean|i meant|instead|rather|not that|wait)|\b(?:i mean|i meant|what i mean|to clarify)\b",
    re.IGNORECASE,
)
_MEANS = re.compile(
    r"\b(?:how (?:do|can|should|would) (?:i|we)|how to|where (?:do|should|can) i|is there a way|what command)\b|怎么|如何",
    re.IGNORECASE,
)
_NEWNESS = re.compile(r"\b(?:now|next|also|another|new|lastly|finally|then)\b|另外|接下来|然后|现在", re.IGNORECASE)
_ERRORISH = re.compile(r"Traceback|Error\b|Exception\b|error:|failed|FAILED|warning:|Uncaught|panic", re.IGNORECASE)
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|yo|good (?:morning|afternoon|evening)|你好|您好|hallo|bonjour|hola)\W*$|we were working on|"
    r"continue from where|pick up where",
    re.IGNORECASE,
)


def is_work(msgs: Sequence[Message]) -> bool:
    """The assistant works in this conversation (tool calls, or long replies), so a switch is a new request."""
    return any(m.role == "assistant" and len(m.text) >= WORK_REPLY_CHARS for m in msgs)


def touched(targets: Sequence[str]) -> set[str]:
    """The files and folders ``targets`` name: each path's last part, lower case (``_TOUCHED``)."""
    out: set[str] = set()
    for t in targets:
        for p in _TOUCHED.findall(t.lower()):
            parts = [x for x in p.rstrip("/.").split("/") if x not in ("", ".", "..", "~")]
            if parts and parts[-1] not in _NOT_TOUCHED and not parts[-1].isdigit():
                out.add(parts[-1])
    return out


def around(msgs: Sequence[Message]) -> dict[int, tuple[set[str], set[str]]]:
    """Per judged turn (its position): what the tool calls touched (``touched``) between the previous judged turn and
    this one, and between this one and the next."""
    marks = [i for i, m in enumerate(msgs) if m.judged]
    out: dict[int, tuple[set[str], set[str]]] = {}
    for j, i in enumerate(marks):
        lo = marks[j - 1] if j else -1
        hi = marks[j + 1] if j + 1 < len(marks) else len(msgs)
        before = touched([t for m in msgs[lo + 1 : i] if m.role == "assistant" for t in m.targets])
        after = touched([t for m in msgs[i + 1 : hi] if m.role == "assistant" for t in m.targets])
        out[msgs[i].position] = (before, after)
    return out


def follows_up(msgs: Sequence[Message]) -> set[int]:
    """The judged turns (their positions) after which the tool calls, up to the next judged turn, touch something and
    only what the calls between the previous judged turn and this one touched (``touched``)."""
    return {p for p, (before, after) in around(msgs).items() if after and after <= before}


def declines(msgs: Sequence[Message]) -> str | None:
    """Why the conversation is not judged (``OPEN_CHAT``), or None: it is."""
    if is_work(msgs) or any(m.targets for m in msgs if m.role == "assistant"):
        return None
    replies = sorted(len(m.text.strip()) for m in msgs if m.role == "assistant" and m.text.strip())
    if not replies:
        return None
    half = len(replies) // 2
    median = replies[half] if len(replies) % 2 else (replies[half - 1] + replies[half]) / 2
    return OPEN_CHAT if median >= OPEN_CHAT_REPLY_CHARS else None


def pasted_log(text: str) -> tuple[str, int]:
    """``text`` less a pasted log that ends in an error (``LOG_LINES`` lines or more, from the first line that is not
    a sentence to the last error line), and the log's characters (0: none)."""
    ends = [at for at, _ in error_lines(text)]
    if not ends:
        return text, 0
    lines = text.split("\n")
    last = text.count("\n", 0, ends[-1])
    first = next((i for i in range(last + 1) if lines[i].strip() and not reads_as_prose(lines[i])), last)
    if last - first + 1 < LOG_LINES:
        return text, 0
    log = lines[first : last + 1]
    return "\n".join(lines[:first] + lines[last + 1 :]), sum(len(line) + 1 for line in log)


def pasted_page(text: str) -> tuple[str, int]:
    """``text`` less a markdown page pasted whole (``PAGE_LINKS`` links and ``PAGE_HEADINGS`` headings, from its first
    heading to its last line with a heading or a link), and the page's characters (0: none)."""
    if len(_LINK.findall(text)) < PAGE_LINKS:
        return text, 0
    lines = text.split("\n")
    heads = [i for i, line in enumerate(lines) if _HEADING.match(line)]
    if len(heads) < PAGE_HEADINGS:
        return text, 0
    last = max(i for i, line in enumerate(lines) if _HEADING.match(line) or _LINK.search(line))
    page = lines[heads[0] : last + 1]
    return "\n".join(lines[: heads[0]] + lines[last + 1 :]), sum(len(line) + 1 for line in page)


def reports_output(text: str) -> bool:
    """The turn is mostly pasted program output (``prose.output_chars``, or a log ending in an error:
    ``pasted_log``) or a page (``pasted_page``), with little typed around it (S4: supplying output; S6: the last
    step's consequence). A new request typed beside a paste (S8) is longer than ``REPORT_TYPED_CHARS``."""
    rest, log = pasted_log(unwrapped(text))
    rest, page = pasted_page(rest)
    return (
        log + page + output_chars(rest) >= REPORT_OUTPUT_SHARE * len(text.strip()) > 0
        and len(typed_prose(rest)) <= REPORT_TYPED_CHARS
    )


def checks_work(said: str) -> bool:
    """The person's own words ask only to run, test, check or build what is there (S4: verifying the work at hand)."""
    return bool(_CHECK.search(said)) and len(said.split()) <= CHECK_WORDS


def misses_result(said: str) -> bool:
    """The person's own words say that what the last step should have shown is not there (S6), and ask nothing
    new."""
    return bool(_UNSEEN.search(said)) and len(said.split()) <= UNSEEN_WORDS and not REQUEST.search(said)


def asks_about(said: str, tokens: Sequence[str], worked: set[str], new_name: bool) -> bool:
    """The person's own words ask a question about the work at hand and ask for nothing to be done (S4, S5): at
    least ``ABOUT_SHARE`` of their content words are in ``worked``, the words the work itself used so far (the
    assistant's replies, its tools' targets), not the person's own earlier turns."""
    if new_name or not tokens or not is_question(said) or _WANTS.search(said) or _OTHER_WANTS.search(said):
        return False
    if any(REQUEST.match(s) for s in sentences(said)):
        return False
    return sum(t in worked for t in set(tokens)) >= ABOUT_SHARE * len(set(tokens))


def echoes_reply(text: str, replies: Sequence[Message]) -> bool:
    """Most of the turn's lines are the assistant's own lines since the person's last turn, and what is left of it
    is at most ``REPORT_TYPED_CHARS`` (S4: the same artifact, re-specified)."""
    said: set[str] = set()
    for r in replies:
        said.update(line.strip() for line in r.text.splitlines())
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) > ECHO_LINE_CHARS]
    if len(lines) < ECHO_LINES or sum(line in said for line in lines) < ECHO_SHARE * len(lines):
        return False
    rest = "\n".join(line for line in text.splitlines() if line.strip() not in said)
    return len(rest.strip()) <= REPORT_TYPED_CHARS


def signals(msgs: Sequence[Message], feats: list[dict[str, float] | None], idf: Idf) -> None:
    """Add FEATURES to every judged message's signals, in place (``feats`` from ``signals.features``)."""
    previous: int | None = None
    reply: Message | None = None  # the last assistant message before the turn
    first: Message | None = None  # the person's first request (a turn with FIRST_TERMS content words)
    request: Message | None = None  # the current request: the last turn that asked for something
    said_before: list[str] = []  # the person's own words of the earlier judged turns
    worked: set[str] = set()  # the work's own words so far: the assistant's replies and its tools' targets
    for i, (m, f) in enumerate(zip(msgs, feats)):
        if m.role == "assistant":
            reply = m
            worked.update(m.tokens)  # its text's terms and its tool calls' targets (``signals.prepare``)
        if not m.judged:
            continue
        said = own_words(m.text)
        asks = bool(REQUEST.search(said[:OPENING_CHARS]))
        if f is not None:
            between = msgs[previous + 1 : i] if previous is not None else msgs[:i]
            replies = [x for x in between if x.role == "assistant"]
            chars = sum(len(x.text) for x in replies)
            calls = sum(len(x.targets) for x in replies)
            f["own_words"] = math.log1p(len(terms(said)) if said else 0)
            f["work"] = math.log1p(chars / WORK_CHARS_UNIT + calls)
            f["request_form"] = float(asks)
            f["own_question"] = float(is_question(said))
            f.update(_context(m, said, reply, first, request, said_before, idf))
            f["tools"] = math.log1p(calls)
            f["reports_output"] = float(reports_output(m.text))
            f["checks_work"] = float(checks_work(said) and not f.get("entity_new_judged"))
            f["misses_result"] = float(misses_result(said))
            f["echoes_reply"] = float(echoes_reply(m.text, replies))
            f["asks_about"] = float(asks_about(said, m.tokens, worked, bool(f.get("entity_new_judged"))))
            if first is None and len(m.tokens) >= FIRST_TERMS:
                first = m
            if asks or request is None:
                request = m
        said_before.append(said)
        previous = i


def _context(
    m: Message,
    said: str,
    reply: Message | None,
    first: Message | None,
    request: Message | None,
    said_before: list[str],
    idf: Idf,
) -> dict[str, float]:
    closing = reply.text[-CLOSING_CHARS:] if reply is not None else ""
    opening = said[:CUE_CHARS]
    v = message_vector(m, idf)
    reply_terms = set(reply.tokens) if reply is not None else set()
    own = set(m.tokens)
    return {
        "reply_done": float(bool(_DONE.search(closing))),
        "reply_offer": float(bool(_OFFER.search(closing))),
        "reply_asks": float("?" in closing[-ASKS_CHARS:] or "？" in closing[-ASKS_CHARS:]),
        "accept": float(bool(_ACCEPT.search(said))),
        "insist": float(bool(_INSIST.search(said[:OPENING_CHARS]))),
        "clarify": float(bool(_CLARIFY.search(opening))),
        "means": float(bool(_MEANS.search(opening))),
        "newness": float(bool(_NEWNESS.search(said[:NEWNESS_CHARS]))),
        "errorish": float(bool(_ERRORISH.search(m.text))),
        "chars": math.log1p(len(said) / 100),
        "after_greeting": float(
            bool(said_before) and all(_GREETING.search(t) or len(terms(t)) < 2 for t in said_before)
        ),
        "cos_reply": cosine(v, message_vector(reply, idf)) if reply is not None else 0.0,
        "cos_first": cosine(v, message_vector(first, idf)) if first is not None else 0.0,
        "cos_request": cosine(v, message_vector(request, idf)) if request is not None else 0.0,
        "new_vs_reply": len(own - reply_terms) / len(own) if own else 0.0,
        "files_reply": float(any(n in reply.text.lower() for n in m.names)) if reply is not None and m.names else 0.0,
    }
