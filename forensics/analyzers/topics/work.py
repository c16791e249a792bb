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

A logistic regression over these five (``weights.json`` mode ``work``: fitted by ``python bench/topics.py
--fit-work`` on the dev half of the labeled shared agent logs, threshold at the best leave-one-conversation-out
F1 there) scores each person turn beside the user mode's topic model: a turn switches when either
says so (a new subject still is a new request); the marker rule (``infer.mark``) is the same as in every mode.

Which conversations are judged this way (``is_work``): those where the assistant works, not chats: a tool call
on the main path, or a reply of at least WORK_REPLY_CHARS characters (code, a plan, a diff). A booking or
chit-chat exchange (short replies, no tools) keeps the topic model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from forensics.analyzers.topics.signals import Message, is_question, terms
from forensics.text.prose import own_words

MODE = "work"  # its entry in weights.json
FEATURES = ("own_words", "work", "request_form", "own_question", "entity_new_judged")
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


def is_work(msgs: Sequence[Message]) -> bool:
    """The assistant works in this conversation (tool calls, or long replies), so a switch is a new request."""
    return any(m.role == "assistant" and len(m.text) >= WORK_REPLY_CHARS for m in msgs)


def signals(msgs: Sequence[Message], feats: list[dict[str, float] | None]) -> None:
    """Add FEATURES to every judged message's signals, in place (``feats`` from ``signals.features``)."""
    previous: int | None = None
    for i, (m, f) in enumerate(zip(msgs, feats)):
        if not m.judged:
            continue
        if f is not None:
            between = msgs[previous + 1 : i] if previous is not None else msgs[:i]
            replies = [x for x in between if x.role == "assistant"]
            chars = sum(len(x.text) for x in replies)
            said = own_words(m.text)
            f["own_words"] = math.log1p(len(terms(said)) if said else 0)
            f["work"] = math.log1p(chars / WORK_CHARS_UNIT + sum(len(x.targets) for x in replies))
            f["request_form"] = float(bool(REQUEST.search(said[:OPENING_CHARS])))
            f["own_question"] = float(is_question(said))
        previous = i
