"""A turn the agent ended without an answer (docs/definitions.md#problems-a-reviewer-flags): its last reply is empty,
or announces work ("I'll fix the critical issues ...", "Let me check ...", "On it. Implementing ...") with no call
after it. Read from how the turn ended, in any words the person then uses. Two rules:

- ``user_repeated``'s ``asked_after_stall`` (GUIDE §5: "repeats caused by the assistant's non-answer or non-fix also
  count"): the person's next turn after such an ending: "proceed", "did you fix them", "?", the request sent again.
  The person had to push for what the turn said it would do. A turn of more than ``NUDGE_WORDS`` words names what
  it pushes for (``_pushes``: a term of the announcement or of the person's last turns; a new request after an
  abandoned one is none). Not a greeting or a turn with no content term (a second "hi" after an empty reply asks
  for nothing), except a bare "?".
- ``loop``'s ``announced_N_times`` and ``same_reply_N_times`` (GUIDE §5: the same action repeated without progress):
  ``IN_A_ROW`` or more turns in a row end on an announcement with nothing done after it; or on the same reply as the
  turn before (``SAME`` of its words: a greeting returned to every request), the later turns making no call, each
  reply short and without code (a code block rewritten for each request is no same reply). Inside one turn
  (``announced_in_turn``): the same act announced ``IN_A_ROW`` or more times in a row with only notes to itself
  between (Kimi's Think), never done. Two more readings of the same thing said again without progress:
  ``same_passage_N_times`` (one message or its reasoning repeating a paragraph of prose) and
  ``same_answer_N_times`` (the same request sent again and again, answered alike); these two read any run.

The rules of how a turn ended read only runs where the agent makes calls (it could have acted: a chat model's "I'll do my best" ends nothing) and
whose log keeps the replies' words (an empty reply is silence only where others have text). A reply that asks
something ("Proceed?", a question mark anywhere) or asks the person for input (``replies.ASKS``) waits for them: no
stall; nor one that says the work is done (``said.CLAIM``), nor an offer ("If it still fails, I'll ...": the sentence
does not open with the announcement), nor a reply of more than ``ANNOUNCE_CHARS`` characters (an answer that ends
on what comes next)."""

from __future__ import annotations

import re
from typing import NamedTuple

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.replies import ASKS_RE
from forensics.analyzers.problems.restated import terms
from forensics.analyzers.problems.said import CLAIM_RE, prose
from forensics.analyzers.problems.turns import Turn
from forensics.kernel.selection import SELECTED
from forensics.text.prose import own_words

ANNOUNCE_CHARS = 400  # a longer reply answered something before saying what comes next ("...Let me check")
IN_A_ROW = 3  # turns in a row ending on an announcement or on the same reply: a loop (GUIDE §5: 3 or more)
NUDGE_WORDS = 3  # a turn this short pushes ("proceed", "go on"); a longer one names what it pushes for
LONG_WORDS = 8  # a longer turn names two of the terms it pushes for
BACK = 3  # the person's last requests read for what a turn pushes for
REQUEST_TERMS = 2  # a person turn with fewer content terms ("continue") asks for nothing of its own
QUOTE_CHARS = 60  # of an announcement named in a norm
AFTER = 200  # characters after an announcement's start, at most: it ends the reply
SAME = 0.6  # share of the two replies' words in common (of all their words): the same reply
# a sentence that opens by announcing the agent's next act (not "let me know", "I'll wait", "I'll be here")
ANNOUNCED = re.compile(
    r"(?im)(?:^|[.!:;]\s+)\W*(?:(?:now|next|first|ok(?:ay)?|alright|so|great|sure)[,!.]?\s+)?"
    r"(?:I['’]ll|I will|let me|let['’]s|I['’]m going to|I am going to|I need to|I['’]m now|I am now)\s+"
    r"(?!know\b|wait\b|await\b|be (?:here|happy|glad|available)\b|stop\b)\w|"
    r"\A\W*(?:on it|will do|working on it)\b|(?:^|[。！\n])\s*(?:让我|我来|我将|我会|接下来我)"
)
WORD = re.compile(r"\w+")
END = 2**31 - 1  # the conversation's end, read as one more turn: how its last turn ended
TurnEnd = tuple[int, int, str | None, bool, bool]  # the next person turn, the last message, its text, a call, ok
Ending = tuple[int, str, str, bool]  # the turn's last reply: position, "empty"/"announced", its text, a call made


class Ends(NamedTuple):
    """How the turns of a batch's conversations ended (``_turn_ends``) and which of them stalled (``_stalls``), read
    once for both rules (``ends_of``): each is per conversation, from its own rows only, so the rows of the union of
    the two rules' conversations are each rule's own. ``called``: the conversations with a call (``stalled_loops``')."""

    turns: dict[str, list[TurnEnd]]
    stalls: dict[str, dict[int, Ending]]
    called: frozenset[str]


def ends_of(con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]]) -> Ends:
    """The turn ends and stalls of the selected conversations that ``stalled_turns`` (those of ``by_conv`` with two
    person turns or more) or ``stalled_loops`` (those with a call) reads: one query and one ``stalled`` per reply for
    the two, where each read its own (the replies' ``ANNOUNCED`` scan twice: ~20 % of the problems analyzer)."""
    called = _called(con)
    cids = sorted(set(called) | {c for c, conv in by_conv.items() if len(conv) > 1})
    turns = _turn_ends(con, cids)
    return Ends(turns, _stalls(turns), frozenset(called))


def _called(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The selected conversations with a call."""
    return [
        str(c)
        for (c,) in con.execute(
            f"SELECT DISTINCT conversation_id FROM tool_calls WHERE conversation_id IN "
            f"(SELECT conversation_id FROM {SELECTED})"
        ).fetchall()
    ]


def endings(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, dict[int, Ending]]:
    """Per conversation of ``cids``, per person turn's position, how the turn before it ended without an answer
    (``stalled``): its last main-path message (after the person's previous turn) when that is a reply with no call,
    with its position, how, its text and whether the turn made any call. Only conversations with a call somewhere
    and a reply with words somewhere."""
    return _stalls(_turn_ends(con, cids))


def _stalls(ends: dict[str, list[TurnEnd]]) -> dict[str, dict[int, Ending]]:
    out: dict[str, dict[int, Ending]] = {}
    for cid, rows in ends.items():
        for person, last, text, called, ok in rows:
            if ok and text is not None and (how := stalled(text)):
                out.setdefault(cid, {})[person] = (last, how, text, called)
    return out


def stalled(text: str) -> str:
    """How a turn's last reply (no call in it, none after it) ended the turn without an answer: "empty", "announced"
    (a sentence opens with the agent's next act, ``ANNOUNCED``; short, no question, no request for input, no claim
    of work done), or ""."""
    said = prose(text).strip()
    if not said:
        return "empty"
    if len(said) > ANNOUNCE_CHARS or "?" in said or "？" in said or ASKS_RE.search(said) or CLAIM_RE.search(said):
        return ""
    return "announced" if announced(said) else ""


def announced(said: str) -> re.Match[str] | None:
    """The last sentence of a reply's prose (``said``, stripped) that announces the agent's next act (``ANNOUNCED``),
    where it is how the reply ends: no more than ``AFTER`` characters follow its start (not "Let me correct the
    table" followed by the answer)."""
    last = next(reversed(list(ANNOUNCED.finditer(said))), None)
    return last if last is not None and len(said) - last.start() <= AFTER else None


def stalled_turns(
    con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]], read: Ends | None = None
) -> dict[str, dict[int, str]]:
    """Per conversation, the person turns (their index in ``by_conv``'s list) that follow a turn ended without an
    answer (``endings``), each with the norm naming how it ended; not a turn with no content term ("hi" again),
    unless it is a bare question mark, nor a longer turn that names none of what it would push for (``_pushes``).
    ``read``: ``ends_of`` this ``by_conv``, when read already (for ``stalled_loops`` too)."""
    cids = [c for c, conv in by_conv.items() if len(conv) > 1]
    if read is None:
        ends = endings(con, cids)
    else:
        asked = set(cids)
        ends = {c: at for c, at in read.stalls.items() if c in asked}
    out: dict[str, dict[int, str]] = {}
    for cid, at in ends.items():
        conv = by_conv.get(cid, [])
        for k, t in enumerate(conv):
            if t.index == 0 or t.position not in at:
                continue
            said = own_words(t.full or t.text).strip()
            pos, how, text, _ = at[t.position]
            mine = terms(t.full or t.text)
            if said.strip("?？ ") == "":
                pass  # a bare "?": where is it
            elif not mine:
                continue  # "hi" again asks for nothing
            elif len(said.split()) > NUDGE_WORDS and not _pushes(mine, len(said.split()), text, conv[:k]):
                continue  # a new request, not a push for the last one
            out.setdefault(cid, {})[k] = (
                f"the turn before it ended on an empty reply ([{pos}]): the person asked again for what got no answer"
                if how == "empty"
                else f"the turn before it ended on an announcement with nothing done after it ([{pos}] “"
                f"{_opening(text)}”): the person pushed for it"
            )
    return out


def _pushes(mine: frozenset[str], words: int, text: str, before: list[Turn]) -> bool:
    """A person turn of ``words`` words and terms ``mine`` asks for what the stalled reply (``text``) announced or
    what one of the person's last ``BACK`` requests asked (turns of ``before`` with ``REQUEST_TERMS`` content terms
    or more: not a "continue" between): it holds one of their terms, two when it is longer than ``LONG_WORDS`` (a
    longer new request shares a word like "code" or "theme" with anything)."""
    need = 2 if words > LONG_WORDS else 1
    asked = [x for t in reversed(before) if len(x := terms(t.full or t.text)) >= REQUEST_TERMS][:BACK]
    return any(len(mine & theirs) >= need for theirs in [_asked(text), *asked])


def _opening(text: str) -> str:
    """The words of a reply's announcement, from its start (``QUOTE_CHARS`` at most, on one line)."""
    said = prose(text).strip()
    m = announced(said)
    return " ".join(said[m.start() if m else 0 :].split())[:QUOTE_CHARS].strip(" .!:;")


def _asked(text: str) -> frozenset[str]:
    """The content terms of what a reply announced (its announcing sentence to the end), none for an empty one."""
    said = prose(text).strip()
    m = announced(said)
    return terms(said[m.start() :]) if m else frozenset()


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def _same(a: str, b: str) -> bool:
    x, y = _words(a), _words(b)
    return bool(x and y) and len(x & y) >= SAME * len(x | y)


def stalled_loops(con: duckdb.DuckDBPyConnection, read: Ends | None = None) -> list[Problem]:
    """``announced_N_times``: ``IN_A_ROW`` or more person turns in a row each follow a turn that ended on an
    announcement (``endings``); ``same_reply_N_times``: ``IN_A_ROW`` or more turns in a row end on the same reply
    (``SAME``), every one after the first without a call. The person turns in every selected conversation with a
    call. ``read``: ``ends_of``, when read already (for ``stalled_turns`` too)."""
    if read is None:
        cids = _called(con)
        if not cids:
            return []
        ends = _turn_ends(con, cids)
        stalls = _stalls(ends)
    else:
        ends = {c: rows for c, rows in read.turns.items() if c in read.called}
        stalls = read.stalls
    out: list[Problem] = []
    for cid, rows in ends.items():
        chains: list[tuple[str, list[tuple[int, str]]]] = []
        ann: list[tuple[int, str]] = []
        same: list[tuple[int, str]] = []
        for person, last, text, called, _ in rows:
            e = stalls.get(cid, {}).get(person)
            if e is not None and e[1] == "announced":
                ann.append((e[0], e[2]))
            else:
                chains.append(("announced", ann))
                ann = []
            canned = text is not None and 0 < len(text.strip()) <= ANNOUNCE_CHARS and "```" not in text
            if same and canned and not called and _same(same[-1][1], str(text)):
                same.append((last, str(text)))
            else:
                chains.append(("same_reply", same))
                same = [(last, str(text))] if canned else []
        chains += [("announced", ann), ("same_reply", same)]
        for rule, chain in chains:
            if len(chain) < IN_A_ROW:
                continue
            first = prose(chain[0][1]).strip()
            out.append(
                Problem(
                    cid,
                    "loop",
                    [p for p, _ in chain],
                    quote_at(first, announced(first) if rule == "announced" else None),
                    f"{rule}_{len(chain)}_times",
                    f"{len(chain)} turns in a row ended on "
                    + (
                        "an announcement of work with nothing done after it"
                        if rule == "announced"
                        else "the same reply, whatever the person asked"
                    )
                    + " (GUIDE §5: 3 or more without progress)",
                )
            )
    return out


def _turn_ends(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[TurnEnd]]:
    """Per conversation of ``cids``, per turn after the person's first (in order): the position of the person turn
    that follows it (``END`` after the last), its last main-path message that is not the person's, that message's
    text when it is a reply with no call (else None), whether the turn made a call, and whether the conversation has
    a call and a reply with words somewhere. One pass of window functions: each message grouped by the person turn
    after it."""
    if not cids:
        return {}
    rows = con.execute(
        f"""WITH m AS (SELECT conversation_id AS cid, position AS pos, role, origin, content, tool_call_count AS n
                       FROM messages WHERE on_main_path AND conversation_id IN (SELECT unnest(?::VARCHAR[]))
                         AND conversation_id IN (SELECT conversation_id FROM {SELECTED})),
            w AS (SELECT *, min(CASE WHEN origin = 'person' THEN pos END) OVER (PARTITION BY cid ORDER BY pos
                              ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS nxt,
                            max(CASE WHEN origin = 'person' THEN pos END) OVER (PARTITION BY cid ORDER BY pos
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prv,
                            sum(n) OVER (PARTITION BY cid) > 0 AND bool_or(role = 'assistant'
                              AND trim(coalesce(content, '')) <> '') OVER (PARTITION BY cid) AS ok
                  FROM m),
            t AS (SELECT cid, coalesce(nxt, {END}) AS nxt, max(pos) AS last, coalesce(sum(n), 0) > 0 AS called,
                         bool_and(ok) AS ok
                  FROM w WHERE coalesce(origin, '') <> 'person' AND prv IS NOT NULL GROUP BY 1, 2)
            SELECT t.cid, t.nxt, t.last, CASE WHEN m.role = 'assistant' AND m.n = 0 THEN coalesce(m.content, '') END,
                   t.called, t.ok
            FROM t JOIN m ON m.cid = t.cid AND m.pos = t.last ORDER BY 1, 2""",
        [cids],
    ).fetchall()
    out: dict[str, list[TurnEnd]] = {}
    for cid, pos, last, text, called, ok in rows:
        out.setdefault(str(cid), []).append(
            (int(pos), int(last), None if text is None else str(text), bool(called), bool(ok))
        )
    return out


# a tool that changes nothing and runs nothing: a note to itself (Kimi's Think), a to-do list or plan written
NOTE_TOOL = re.compile(r"(?i)^(?:think|thought|sequential_?thinking|todo_?write|todowrite|write_todos|update_plan)$")
SAME_ACT = 0.4  # share of two announcements' content terms in common (of all their terms): the same act announced


def announced_in_turn(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``loop``'s ``announced_N_times`` inside one turn: ``IN_A_ROW`` or more replies in a row announce the same act
    (their announcing sentences, ``announced``, share ``SAME_ACT`` of their content terms: "Let me run the
    reproduction script to confirm the problem", "Let me now run the reproduction script to see the current
    behavior") and every call from the first to the last is a note to itself (``NOTE_TOOL``): the act announced
    again and again, never done. A reply of more than ``ANNOUNCE_CHARS`` characters, or one with a question or a claim
    of work done, announces nothing (``stalled``); a reply with words that announces something else, or a call that
    acts, ends the chain."""
    rows = con.execute(
        f"""SELECT m.conversation_id, m.position, m.origin, m.role, m.content,
                   list(t.name ORDER BY t.call_index) FILTER (WHERE t.name IS NOT NULL)
            FROM messages m LEFT JOIN tool_calls t ON t.conversation_id = m.conversation_id AND t.position = m.position
            WHERE m.on_main_path AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
              AND m.conversation_id IN (SELECT conversation_id FROM tool_calls WHERE regexp_matches(name, ?))
            GROUP BY ALL ORDER BY 1, 2""",
        [NOTE_TOOL.pattern],
    ).fetchall()
    out: list[Problem] = []
    chain: list[tuple[int, str, frozenset[str]]] = []
    cid0 = None

    def close() -> None:
        if len(chain) >= IN_A_ROW and cid0 is not None:
            first = prose(chain[0][1]).strip()
            out.append(
                Problem(
                    cid0,
                    "loop",
                    [p for p, _, _ in chain],
                    quote_at(first, announced(first)),
                    f"announced_{len(chain)}_times",
                    f"{len(chain)} replies in a row announced the same act with only notes to itself between, none "
                    "doing it (GUIDE §5: 3 or more without progress)",
                )
            )
        chain.clear()

    for cid, pos, origin, role, content, names in rows:
        if cid != cid0:
            close()
            cid0 = cid
        if origin == "person":
            close()
            continue
        if role != "assistant":
            continue
        text = str(content or "")
        said = prose(text).strip()
        acts = [n for n in names or [] if not NOTE_TOOL.match(str(n))]
        if said and stalled(said) == "announced":
            mine = _asked(text)
            if chain and not _alike(mine, chain[-1][2]):
                close()
            chain.append((int(pos), text, mine))
        elif said:
            close()
        if acts:
            close()
    close()
    return out


def _alike(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a and b) and len(a & b) >= SAME_ACT * len(a | b)


PASSAGE_CHARS = 80  # a passage shorter than this (a heading, "Let me check.") may well come back
PASSAGE_TIMES = 5  # one passage this many times in one message: the model going round in circles
PROSE_LINE = 60  # characters a passage's lines hold on average, at least: prose, not a block of fields or list items
PASSAGE_SPLIT = re.compile(r"\n\s*\n")
SPACE = re.compile(r"\s+")


def same_passage(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``loop``'s ``same_passage_N_times``: one message (a reply, or the reasoning a format keeps before it: ``events``
    of kind ``reasoning``) holds the same passage (a paragraph of ``PASSAGE_CHARS`` characters or more, spaces
    folded) ``PASSAGE_TIMES`` times or more: the model went round in circles in its own words (an aider reasoning
    turn of 116K characters repeating "Let's look at the exact code for `handleRelease` again. ..." 56 times). Code
    blocks are not read (``prose``: a file written out repeats its lines), nor a passage of short lines
    (``PROSE_LINE``: a report's block of fields, "Errores de entrada: / - CRC: 0", the same for each interface)."""
    rows = con.execute(
        f"""SELECT conversation_id, position, content FROM messages
            WHERE on_main_path AND role = 'assistant' AND content_chars >= {PASSAGE_CHARS * PASSAGE_TIMES}
              AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
            UNION ALL
            SELECT conversation_id, position, json_extract_string(detail, '$.text') FROM events
            WHERE kind = 'reasoning' AND position IS NOT NULL
              AND length(json_extract_string(detail, '$.text')) >= {PASSAGE_CHARS * PASSAGE_TIMES}
              AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
            ORDER BY 1, 2"""
    ).fetchall()
    out: list[Problem] = []
    seen: set[tuple[str, int]] = set()
    for cid, pos, text in rows:
        counts: dict[str, int] = {}
        first: dict[str, str] = {}
        for part in PASSAGE_SPLIT.split(prose(str(text or ""))):
            key = SPACE.sub(" ", part).strip()
            lines = [x for x in part.splitlines() if x.strip()]
            if len(key) >= PASSAGE_CHARS and sum(len(x.strip()) for x in lines) >= PROSE_LINE * len(lines):
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, part.strip())
        top = max(counts.items(), key=lambda kv: kv[1], default=("", 0))
        if top[1] >= PASSAGE_TIMES and (cid, pos) not in seen:
            seen.add((str(cid), int(pos)))
            out.append(
                Problem(
                    str(cid),
                    "loop",
                    [int(pos)],
                    quote_at(first[top[0]]),
                    f"same_passage_{top[1]}_times",
                    f"one message repeats the same passage {top[1]} times (GUIDE §5: the same thing again and again "
                    f"without progress; {PASSAGE_TIMES} or more)",
                )
            )
    return out


SAME_ANSWER = 0.4  # share of two answers' words in common (of all their words): the same answer given again


def same_answer(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``loop``'s ``same_answer_N_times``: the same request (the person turn's text, spaces trimmed, with
    ``REQUEST_TERMS`` content terms or more: not "Yes to all") sent ``IN_A_ROW`` or more times in a row, each answered
    like the last (the first reply with words after it shares ``SAME_ANSWER`` of its words with the one before): the
    request went round without progress (aider's watch mode sending its "AI?" comment again and again, answered with
    the same list each time, the comment never removed). Cited at the answers."""
    rows = con.execute(
        f"""SELECT conversation_id, position, origin, role, content FROM messages
            WHERE on_main_path AND (origin = 'person' OR role = 'assistant' AND trim(content) <> '')
              AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
              AND conversation_id IN (SELECT conversation_id FROM messages WHERE on_main_path AND origin = 'person'
                                      GROUP BY conversation_id, trim(content) HAVING count(*) >= {IN_A_ROW})
            ORDER BY 1, 2"""
    ).fetchall()
    turns: dict[str, list[tuple[str, int, str]]] = {}  # per conversation: (request, answer's position, answer)
    for cid, pos, origin, _, content in rows:
        mine = turns.setdefault(str(cid), [])
        if origin == "person":
            mine.append((str(content).strip(), -1, ""))
        elif mine and mine[-1][1] < 0:
            mine[-1] = (mine[-1][0], int(pos), str(content))
    out: list[Problem] = []
    for cid, conv in turns.items():
        chain: list[tuple[str, int, str]] = []
        for t in [*conv, ("", -1, "")]:
            if chain and t[1] >= 0 and t[0] == chain[-1][0] and _alike_words(chain[-1][2], t[2]):
                chain.append(t)
                continue
            if len(chain) >= IN_A_ROW:
                out.append(
                    Problem(
                        cid,
                        "loop",
                        [p for _, p, _ in chain],
                        quote_at(prose(chain[0][2]).strip()),
                        f"same_answer_{len(chain)}_times",
                        f"the same request {len(chain)} times in a row, answered alike each time (GUIDE §5: 3 or more "
                        "without progress)",
                    )
                )
            chain = [t] if t[1] >= 0 and len(terms(t[0])) >= REQUEST_TERMS else []
    return out


def _alike_words(a: str, b: str) -> bool:
    x, y = _words(a), _words(b)
    return bool(x and y) and len(x & y) >= SAME_ANSWER * len(x | y)
