"""``user_repeated`` from what the person pastes or sends again, not from what they say about it (GUIDE §5: "repeats
caused by the assistant's non-answer or non-fix also count"; docs/definitions.md#problems-a-reviewer-flags):

- ``error_again``: a person turn carries an error (``text.error_lines.error_lines``, the failure signature's reading
  of error lines: tracebacks, ``error:`` lines, shell errors; and compiler errors with a code, ``error
  TS2307:``, ``error[E0308]:``, and an HTTP status of 400 or more) whose masked template (``template``)
  an earlier person turn or tool result of the conversation already showed, after a reply that changed something
  or proposed a change (a call, a code block). The person pastes back the error the assistant's
  change did not remove.
- ``sent_again``: a person turn sent again unchanged, word for word, after the earlier one got no reply and some
  time passed (``RESENT_AFTER`` seconds: a log's own re-delivery of one message carries one time).

And ``loop`` from the person's side (``pasted_loops``): one error pasted back two or more times, each after a change.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.templates import opening, shared
from forensics.analyzers.problems.turns import by_conversation
from forensics.kernel.selection import SELECTED
from forensics.text.error_lines import LINES, error_lines, names_error, template

if TYPE_CHECKING:
    from forensics.analyzers.problems.turns import Turn

TEMPLATE_WORDS = 3  # words of 3+ letters outside the masks a template needs: "(error: <url>" names no error ...
NAMED = re.compile(r"^[\w.]*\w(?:error|exception):")  # ... unless it opens with the exception's name: "keyerror: '<q>'"
OUTPUT_CHARS = 6000  # of each end of a tool result (an error line is near the end of a log)
RESENT_AFTER = 5  # seconds between a message and the same message sent again, at least
QUOTE_FROM = 60  # characters of the error line quoted from its start (a long line is cut at the end, not the start)
MASKED = re.compile(r"<\w+>|'<q>'")
WORDS = re.compile(r"[^\W\d_]{3,}")


def templates(text: str) -> dict[str, tuple[int, str]]:
    """The error templates of ``text`` that name an error in words (``TEMPLATE_WORDS``, or an exception's name:
    ``NAMED``), each with its first line and offset."""
    out: dict[str, tuple[int, str]] = {}
    for at, line in error_lines(text):
        if _named(t := template(line)):
            out.setdefault(t, (at, line))
    return out


def _named(t: str) -> bool:
    """Whether the template ``t`` names an error in words (``TEMPLATE_WORDS``, or an exception's name: ``NAMED``)."""
    return len(WORDS.findall(MASKED.sub(" ", t))) >= TEMPLATE_WORDS or NAMED.match(t) is not None


_LETTERS = re.compile(r"(?<![<a-z])[a-z]+")  # a run of ASCII letters, not the rest of a mask cut at TEMPLATE_CHARS


def anchor(tpl: str) -> str:
    """The longest run of ASCII letters of the template ``tpl`` outside its masks: the lower-cased text of any line
    whose template it is holds it (``template`` masks, collapses whitespace and lower-cases, so a run of letters it
    keeps comes from letters in a row of the line, and only K and İ lower-case to ASCII letters, as ``str.lower``
    of the whole text does); "" when it has none (every text may hold it)."""
    return max(_LETTERS.findall(MASKED.sub(" ", tpl)), key=len, default="")


def _templates_among(text: str, anchors: set[str]) -> set[str]:
    """The templates of ``templates(text)`` whose ``anchor`` is one of ``anchors`` (and maybe others of it): only the
    lines whose lower-cased form holds one of ``anchors`` are read."""
    if "" in anchors:
        return set(templates(text))
    low = text.lower()  # the same lines as ``text`` (no character lower-cases to a line break or from one)
    found: set[int] = set()  # offsets in ``low`` of the lines holding an anchor
    for a in anchors:
        at = low.find(a)
        while at >= 0:
            found.add(low.rfind("\n", 0, at) + 1)
            end = low.find("\n", at)
            at = -1 if end < 0 else low.find(a, end + 1)
    out: set[str] = set()
    ascii_ = len(low) == len(text)  # offsets in ``low`` are offsets in ``text`` (else its lines are counted)
    n = last = 0  # the line number of offset ``last`` of ``low``
    start = 0  # where line ``n`` starts in ``text``
    for at in sorted(found):
        k = n + low.count("\n", last, at)
        if k >= LINES:
            break
        if ascii_:
            start = at
        else:
            for _ in range(k - n):
                start = text.index("\n", start) + 1
        n, last = k, at
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if (s := line.strip()) and names_error(s) and _named(t := template(line)):
            out.add(t)
    return out


def _context(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[tuple[int, str, bool, str]]]:
    """Per conversation, its main-path assistant messages and tool outputs: (position, role, made a call, text)."""
    rows = con.execute(
        f"""SELECT m.conversation_id, m.position,
                   CASE WHEN m.role = 'tool' OR m.origin = 'tool_result' THEN 'tool' ELSE 'assistant' END,
                   EXISTS (SELECT 1 FROM tool_calls t WHERE t.conversation_id = m.conversation_id
                           AND t.position = m.position),
                   CASE WHEN length(m.content) > 2 * {OUTPUT_CHARS}
                        THEN left(m.content, {OUTPUT_CHARS}) || chr(10) || right(m.content, {OUTPUT_CHARS})
                        ELSE coalesce(m.content, '') END
            FROM messages m WHERE m.conversation_id IN (SELECT unnest(?::VARCHAR[])) AND m.on_main_path
            AND (m.role IN ('assistant', 'tool') OR m.origin = 'tool_result')
            AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
            ORDER BY 1, 2""",
        [cids],
    ).fetchall()
    out: dict[str, list[tuple[int, str, bool, str]]] = {}
    for cid, pos, role, called, text in rows:
        out.setdefault(str(cid), []).append((int(pos), str(role), bool(called), str(text)))
    return out


def _proposed_change(replies: list[tuple[int, str, bool, str]]) -> tuple[int, str] | None:
    """The first reply of ``replies`` that changed something or proposed a change: a call, or a code block to apply;
    (position, its first line) or None."""
    for pos, role, called, text in replies:
        if role == "assistant" and (called or "```" in text):
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "(a call)")
            return pos, first
    return None


CONTEXT_BATCH = 50  # conversations whose replies and tool outputs one query reads (``errors_again_all``)

Again = dict[int, tuple[str, re.Match[str] | None, str, int]]


def errors_again(
    con: duckdb.DuckDBPyConnection, conv: list[Turn], prompts: Callable[[Turn], bool] = lambda t: False
) -> Again:
    """``error_again`` over one conversation's person turns: per turn index, (rule, the match of the error line in
    its text, the norm naming where the error showed before and the change between, the position where it showed
    first). A turn that opens with a prompt template (``prompts``: a benchmark's task text) is never one."""
    return errors_again_all(con, {conv[0].conversation_id: conv} if conv else {}, prompts).get(
        conv[0].conversation_id if conv else "", {}
    )


def errors_again_all(
    con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]], prompts: Callable[[Turn], bool] = lambda t: False
) -> dict[str, Again]:
    """``errors_again`` of every conversation of ``by_conv`` (conversation id -> its person turns), by id (a
    conversation without one is left out): the replies and tool outputs read ``CONTEXT_BATCH`` conversations a
    query, and only for the conversations where a person turn pastes an error."""
    pasted: dict[str, dict[int, dict[str, tuple[int, str]]]] = {}
    for cid, conv in by_conv.items():
        mine = {
            k: tpl
            for k, t in enumerate(conv)
            if t.index > 0 and t.replied and not prompts(t) and (tpl := templates(t.full or t.text))
        }
        if mine:
            pasted[cid] = mine
    out: dict[str, Again] = {}
    cids = list(pasted)
    for i in range(0, len(cids), CONTEXT_BATCH):
        batch = cids[i : i + CONTEXT_BATCH]
        context = _context(con, batch)
        for cid in batch:
            if again := _again(by_conv[cid], pasted[cid], context.get(cid, [])):
                out[cid] = again
    return out


def _again(
    conv: list[Turn], pasted: dict[int, dict[str, tuple[int, str]]], context: list[tuple[int, str, bool, str]]
) -> Again:
    """``errors_again`` of one conversation from its turns' pasted templates and its replies and tool outputs."""
    # where each template first showed, read once per message: in a person turn (first), else in a tool result;
    # what shows at or after the last pasted turn is never "before" one
    last = max(conv[k].position for k in pasted)
    # only the pasted templates are looked up: a text whose lower-cased form lacks a word of each is not read
    anchors = {anchor(tpl) for mine in pasted.values() for tpl in mine}
    by_turn: dict[str, int] = {}
    for k, e in enumerate(conv):
        if e.position >= last:
            continue
        for tpl in pasted[k] if k in pasted else _templates_among(e.full or e.text, anchors):
            by_turn.setdefault(tpl, e.position)
    by_tool: dict[str, int] = {}
    for pos, role, _, text in context:
        if role == "tool" and pos < last:
            for tpl in _templates_among(text, anchors):
                by_tool.setdefault(tpl, pos)
    out: Again = {}
    for k, mine in pasted.items():
        t = conv[k]
        since = conv[k - 1].position if k else -1
        change = _proposed_change([r for r in context if since < r[0] < t.position])
        if change is None:
            continue
        seen: dict[str, int] = {}
        for tpl in mine:
            turn_at, tool_at = by_turn.get(tpl, t.position), by_tool.get(tpl, t.position)
            if turn_at < t.position or tool_at < t.position:
                seen[tpl] = turn_at if turn_at < t.position else tool_at
        same = [tpl for tpl in mine if tpl in seen]
        if not same:
            continue
        at, line = mine[same[0]]
        text = t.full or t.text
        match = re.compile(re.escape(line.strip()[:QUOTE_FROM])).search(text, at)
        out[k] = (
            "error_again",
            match,
            f"the same error at [{seen[same[0]]}], before the assistant's change at [{change[0]}] (“{change[1][:60]}”)",
            seen[same[0]],
        )
    return out


def sent_again(conv: list[Turn], times: dict[int, float | None]) -> dict[int, str]:
    """``sent_again`` over one conversation's person turns: per turn index, the rule, where the turn before it is
    the same text, got no reply, and was sent ``RESENT_AFTER`` seconds or more earlier (``times``: epoch seconds
    by position; without times, never)."""
    out = {}
    for k in range(1, len(conv)):
        e, t = conv[k - 1], conv[k]
        if e.answered_next or " ".join(e.text.split()) != " ".join(t.text.split()) or not t.text.strip():
            continue
        a, b = times.get(e.position), times.get(t.position)
        if a is not None and b is not None and b - a >= RESENT_AFTER:
            out[k] = "sent_again"
    return out


def times(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, dict[int, float | None]]:
    """Per conversation, each person turn's time (epoch seconds) by position."""
    rows = con.execute(
        "SELECT conversation_id, position, epoch(created_at) FROM messages "
        "WHERE conversation_id IN (SELECT unnest(?::VARCHAR[])) AND on_main_path AND origin = 'person'",
        [cids],
    ).fetchall()
    out: dict[str, dict[int, float | None]] = {}
    for cid, pos, ts in rows:
        out.setdefault(str(cid), {})[int(pos)] = None if ts is None else float(ts)
    return out


def errors_again_of(
    con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]], templates: frozenset[tuple[str, ...]]
) -> dict[str, Again]:
    """``errors_again`` of each conversation (its person turns ``by_conv``), a turn opening with a prompt template's
    opening (``templates``) never one: what ``repeated.user_repeated`` and ``pasted_loops`` both read."""
    return errors_again_all(con, by_conv, lambda t: opening(t.text) in templates)


def pasted_loops(
    turns: list[Turn],
    con: duckdb.DuckDBPyConnection,
    templates: frozenset[tuple[str, ...]] | None = None,
    again_of: dict[str, Again] | None = None,
) -> list[Problem]:
    """``loop`` where the agent's changes never touch the error (GUIDE §5: the same action repeated without
    progress; "the same error recurring while the changes do not touch it"), read from the person's side: one error
    pasted back two or more times (``pasted.errors_again``, each after a reply that changed something or proposed a
    change), so it showed three times or more, each proposal leaving it as it was (rule
    ``same_error_pasted_N_times``). The tool-less counterpart of ``actions.recurring_errors``: the person runs
    what the assistant proposes and brings the output back. ``again_of``: ``errors_again_of``, when computed already."""
    by_conv = by_conversation(turns)
    templates = shared(turns) if templates is None else templates  # (``templates``: of the whole selection)
    if again_of is None:
        again_of = errors_again_of(con, by_conv, templates)
    out = []
    for cid, conv in by_conv.items():
        again = again_of.get(cid, {})
        first: dict[int, list[int]] = {}
        for k in sorted(again):
            first.setdefault(again[k][3], []).append(k)
        for at, ks in first.items():
            if len(ks) < 2:
                continue
            last = conv[ks[-1]]
            n = len(ks) + 1
            out.append(
                Problem(
                    cid,
                    "loop",
                    [at] + [conv[k].position for k in ks],
                    quote_at(last.full or last.text, again[ks[-1]][1]),
                    f"same_error_pasted_{n}_times",
                    f"the error first shown at [{at}] came back {n - 1} times, each after the assistant changed or "
                    "proposed a change (GUIDE §5: 3 or more without progress)",
                )
            )
    return out
