"""A request the agent stopped on without an answer (docs/definitions.md#problems-a-reviewer-flags
``gave_up_or_false_success``, GUIDE §5: "stopping or handing off early when the task was doable"): the person asked
for something and the turn ended on nothing the person could use. Rule ``stopped_without_answer``: the turn's last
message is a reply with no call in it and none after it that

- is empty: no word and no call (an OpenCode turn ended with nothing; "empty" in ``stalled.stalled``);
- announces the agent's next act with nothing done after it ("Let me check for Cursor rules and examine some C#
  files ..." and the turn ends; "announced" in ``stalled.stalled``: short, no question, no request for input, no
  claim of work done);
- or offers help as if nothing had been asked ("Hello! I'm Crush. How can I help you ...?" after reading the files
  it was asked to check; ``restated.OFFERED``, at most ``restated.OFFER_CHARS`` characters).

Read from how the turn ended, whatever the person does next (pushes, asks something else, or leaves). The turn must
answer a request: the person's last turn before it has a content term (``restated.terms``: not "hi", not
"thanks"), or is a bare "?" (where is it); an offer of help must follow a turn that made calls (it was working on the
request and greeted instead of answering) or a request of ``REQUEST_TERMS`` terms. Only in a log that keeps the
agent's calls and the words of its replies (``_keeps_words``: its source file has a call and a worded reply
somewhere: there an empty reply is silence, not a log that drops the text; in a Crush or OpenCode store one session
of empty replies sits beside sessions with words). Turns in a row that end so are one incident: one finding, citing
each reply and the person turns between them. The person's push after such a turn is ``user_repeated``'s
``asked_after_stall`` (``stalled``); three announcements in a row are also a ``loop`` (``announced_N_times``)."""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.restated import OFFER_CHARS, OFFERED, terms
from forensics.analyzers.problems.said import CLAIM_RE, EDIT_MARKS, prose
from forensics.analyzers.problems.stalled import (
    ANNOUNCED,
    END,
    IN_A_ROW,
    NUDGE_WORDS,
    Ends,
    _pushes,
    _turn_ends,
    announced,
    stalled,
)
from forensics.analyzers.problems.turns import Turn
from forensics.kernel.selection import SELECTED

LEAD = 2  # characters before a reply's first announcement at most ("- I'll ..."): the reply is the announcement
# the reply names what it needs from the person: it waits for them ("First, I need the contents of `.pylintrc`": aider
# asks for a file to be added to the chat)
NEEDS = re.compile(r"(?i)\bI (?:need|would need|['’]ll need|will need) (?:the |you |access |more |your )")
OFFER_REST = (
    30  # characters of a reply besides its offer of help ("Hello! I'm Crush.", "Sure thing!"), no code span: a greeting
)
KIND = "gave_up_or_false_success"
RULE = "stopped_without_answer"


def _keeps_words(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The selected conversations whose source file has a call and an assistant reply with words somewhere."""
    return [
        str(c)
        for (c,) in con.execute(f"""
            WITH s AS (SELECT c.source_id FROM conversations c JOIN messages m USING (conversation_id)
                       GROUP BY 1
                       HAVING sum(m.tool_call_count) > 0
                          AND bool_or(m.role = 'assistant' AND trim(coalesce(m.content, '')) <> ''))
            SELECT conversation_id FROM conversations JOIN s USING (source_id)
            WHERE conversation_id IN (SELECT conversation_id FROM {SELECTED}) ORDER BY 1""").fetchall()
    ]


def _silent(con: duckdb.DuckDBPyConnection, cids: list[str]) -> set[tuple[str, int]]:
    """The (conversation, position) of replies that carry the agent's reasoning: an empty one is no silence (it
    thought; its words are in another message, or the log was cut after the thought)."""
    return {
        (str(c), int(p))
        for c, p in con.execute(
            "SELECT DISTINCT conversation_id, position FROM events WHERE kind = 'reasoning' "
            "AND conversation_id IN (SELECT unnest(?::VARCHAR[]))",
            [cids],
        ).fetchall()
    }


def _asks(t: Turn) -> bool:
    """The person's turn asks for something: a content term (not "hi", "thanks"), or a short question about the
    last reply ("?", "what?")."""
    own = (t.full or t.text).strip()
    return bool(terms(own)) or own.endswith(("?", "？")) and len(own.split()) <= NUDGE_WORDS


def ending(text: str, called: bool, request: Turn) -> str:
    """How a turn answered ``request`` (the person's last turn before its end) when it ended without an answer: its
    last reply (``text``, no call in it or after it) is "empty" (no word at all), "announced" (the reply opens on the
    announcement: "I can't turn on automatic acceptance. I'll keep walking through changes ..." answered first; and
    names nothing it needs from the person, ``NEEDS``, and carries no edit's body, ``said.EDIT_MARKS``) or an "offer" of
    help and nothing else (``OFFER_REST`` characters besides the offer: "Hello! I'm Crush.") in a turn that made a
    call (``called``: it was working on the request); "" when it answered, or when the person asked for nothing."""
    if not _asks(request):
        return ""
    if not text.strip():
        return "empty"  # no word at all (a reply of code alone has no prose, and is an answer)
    if any(k in text for k in EDIT_MARKS):
        return ""  # the reply carries an edit's body (aider's SEARCH/REPLACE, a patch): it acted
    how = stalled(text)
    said = prose(text).strip()
    if how == "announced":
        first = ANNOUNCED.search(said)
        return how if first is not None and first.start() <= LEAD and not NEEDS.search(said) else ""
    offer = OFFERED.search(said)
    if called and offer and len(said) <= OFFER_CHARS and not CLAIM_RE.search(said):
        sentence = re.compile(r"[^.!?。！？]*" + re.escape(offer.group()) + r"[^.!?。！？]*[.!?。！？]?")
        rest = sentence.sub("", said, count=1)
        return "offer" if len(rest.strip()) <= OFFER_REST and "`" not in rest else ""
    return ""


def stopped(con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]], read: Ends | None = None) -> list[Problem]:
    """``stopped_without_answer`` over the selected conversations (``by_conv``: their person turns): a chain of
    turns in a row that ended without an answer, reported when the request was left there: the run ends on it, or
    the person's next turn asks for something else (``_pushes`` none of it: they moved on), or it is ``IN_A_ROW``
    turns long (pushed and stopped again). One stop the person pushed past ("proceed", the request sent again) and
    the agent then answered is ``user_repeated``'s alone (``asked_after_stall``). ``read``: ``stalled.ends_of``, when
    read already: its turn ends are each conversation's own, so only the conversations it did not read are read here."""
    cids = [c for c in _keeps_words(con) if c in by_conv]
    thought = _silent(con, cids)
    have = read.turns if read is not None else {}
    ends = {c: have[c] for c in cids if c in have} | _turn_ends(con, [c for c in cids if c not in have])
    out: list[Problem] = []
    for cid, rows in sorted(ends.items()):  # by conversation, as one read gives them
        conv = by_conv[cid]
        chain: list[tuple[int, int, str, str, Turn]] = []  # (reply position, next person position, how, text, ask)
        for person, last, text, called, _ in [*rows, (END, -1, None, False, False)]:
            asked = [t for t in conv if t.position < last]
            how = ending(text, called, asked[-1]) if text is not None and asked else ""
            if how == "empty" and (cid, last) in thought:
                how = ""
            if how:
                chain.append((last, person, how, text or "", asked[-1]))
                continue
            if chain and _left(chain, conv):
                out.append(_problem(cid, chain))
            chain = []
    return out


def _left(chain: list[tuple[int, int, str, str, Turn]], conv: list[Turn]) -> bool:
    """The request a chain of stopped turns left undone stayed so: the run ends on the chain, the person's next turn
    asks for none of it (a new request: they moved on), or the chain is ``IN_A_ROW`` turns long."""
    last, nxt, _, text, _ = chain[-1]
    after = next((k for k, t in enumerate(conv) if t.position == nxt), None)
    if nxt == END or after is None or len(chain) >= IN_A_ROW:
        return True
    t = conv[after]
    own = (t.full or t.text).strip()
    mine, words = terms(own), len(own.split())
    if own.strip("?？ ") == "" or mine and words <= NUDGE_WORDS:
        return False  # "?", "proceed": pushed
    return not mine or not _pushes(mine, words, text, conv[:after])


def _problem(cid: str, chain: list[tuple[int, int, str, str, Turn]]) -> Problem:
    """One finding for turns in a row that ended without an answer: each reply and the person turns between them
    (the last turn's next person turn is not cited: it may ask something else); quoted from the first reply with
    words, else from the request the first reply left unanswered."""
    positions = {last for last, *_ in chain} | {nxt for last, nxt, *_ in chain[:-1]}
    worded = next(((last, how, text) for last, _, how, text, _ in chain if prose(text).strip()), None)
    if worded is not None:
        said = prose(worded[2]).strip()
        quote = quote_at(said, announced(said) if worded[1] == "announced" else OFFERED.search(said))
    else:
        ask = chain[0][4]
        positions.add(ask.position)
        quote = quote_at(ask.full or ask.text)
    hows = sorted({how for *_, how, _, _ in chain}, key=("empty", "announced", "offer").index)
    said_how = {
        "empty": "an empty reply (no word, no call)",
        "announced": "an announcement of its next step with nothing done after it",
        "offer": "an offer of help as if nothing had been asked",
    }
    n = len(chain)
    return Problem(
        cid,
        KIND,
        sorted(positions),
        quote,
        RULE,
        (f"{n} turns in a row" if n > 1 else "the turn")
        + " asked for something and ended on "
        + " or ".join(said_how[h] for h in hows)
        + ", in a log that keeps this agent's calls and words: it stopped before the work or an answer "
        "(GUIDE §5: stopping early when the task was doable)",
    )
