"""Instructions checked against the replies that follow them, where a check is mechanical (SPEC §24
``instruction_violated``): a format asked for (a fenced code block of a language, JSON only), a word not to be
used. An instruction counts from the person's turn (or system prompt) that gives it to the next person turn;
instructions no program can check are left alone, never guessed."""
from __future__ import annotations

import json
import re

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED

FENCE_ASKED = re.compile(r"(?i)(?:in|use|using) the format of ```(\w+)```|(?:wrapped|enclosed) in (?:a )?```(\w+)")
JSON_ONLY = re.compile(r"(?i)\b(?:respond|reply|answer|output|return)(?: with)? only (?:with )?(?:valid )?JSON\b"
                       r"|\bonly (?:output|return) (?:valid )?JSON\b")
WORD_BANNED = re.compile(r"(?i)without (?:using|mentioning|saying) the words? ((?:\"[^\"]{2,40}\"(?:,? (?:or|and) )?"
                         r"|“[^”]{2,40}”(?:,? (?:or|and) )?)+)")
QUOTED = re.compile(r"\"([^\"]{2,40})\"|“([^”]{2,40})”")
ONE_AT_A_TIME = re.compile(r"(?i)\bone(?:[ -]question)?[ -]at[ -]a[ -]time\b")
QUESTION_HEAD = re.compile(r"(?im)^\W*question \d+\b")
NUMBERED_QUESTION = re.compile(r"(?m)^\s*\d+[.)]\s[^\n]*\?")
STANDING = 40  # messages a "one at a time" asked for holds after the person's last turn that says it


def violated(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Each person or system turn that asks for a format or bans a word, against the assistant's text replies up
    to the next person turn. SQL preselects turns whose text names ``` or JSON or "without using"."""
    rows = con.execute(f"""
        WITH asks AS (
            SELECT m.conversation_id AS cid, m.position AS pos, m.content AS text,
                   coalesce(lead(m.position) OVER (PARTITION BY m.conversation_id ORDER BY m.position), 2147483647) AS upto
            FROM messages m JOIN {SELECTED} USING (conversation_id)
            WHERE m.on_main_path AND (m.origin = 'person' OR m.role = 'system'))
        SELECT a.cid, a.pos, a.text, r.position, r.content
        FROM asks a JOIN messages r ON r.conversation_id = a.cid AND r.on_main_path AND r.role = 'assistant'
             AND NOT r.blank AND r.position > a.pos AND r.position < a.upto
        WHERE contains(a.text, '```') OR contains(a.text, 'JSON') OR contains(a.text, 'without ')
        ORDER BY 1, 4""").fetchall() + _one_at_a_time_rows(con)
    out: list[Problem] = []
    seen: set[tuple[str, int, str]] = set()
    for cid, pos, ask, rpos, reply in rows:
        for rule, m, broke in _checks(ask, reply):
            if (cid, rpos, rule) in seen:
                continue
            seen.add((cid, rpos, rule))
            out.append(Problem(str(cid), "instruction_violated", [int(rpos), int(pos)], broke, rule,
                               f"the instruction at [{pos}]: “{quote_at(ask, m, 80)}”"))
    return out


def _checks(ask: str, reply: str) -> list[tuple[str, re.Match[str], str]]:
    """(rule, the instruction's match, a verbatim quote of the reply) for each instruction the reply breaks."""
    out = []
    if (m := FENCE_ASKED.search(ask)) and "```" not in reply:
        out.append(("format_fence_missing", m, quote_at(reply)))
    if (m := JSON_ONLY.search(ask)) and not _is_json(reply):
        out.append(("format_json_missing", m, quote_at(reply)))
    if (m := ONE_AT_A_TIME.search(ask)) and _questions(reply) >= 2:
        q = QUESTION_HEAD.search(reply) or NUMBERED_QUESTION.search(reply)
        out.append(("several_questions_at_once", m, quote_at(reply, q)))
    if m := WORD_BANNED.search(ask):
        for q in QUOTED.finditer(m.group(1)):
            word = q.group(1) or q.group(2)
            if (w := re.search(rf"(?i)\b{re.escape(word)}", reply)) and word.lower() not in ask[m.end():].lower():
                out.append(("banned_word_used", m, quote_at(reply, w)))
                break
    return out


def _is_json(reply: str) -> bool:
    s = reply.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def _questions(reply: str) -> int:
    """Questions a reply asks as separate items: "Question N" headings or numbered items that end in a question."""
    return max(len(QUESTION_HEAD.findall(reply)), len(NUMBERED_QUESTION.findall(reply)))


def _one_at_a_time_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """(conversation, the person's turn asking for one question at a time, its text, a reply, the reply's text) for
    the replies within ``STANDING`` messages after it: the request stands beyond the next turn."""
    return con.execute(f"""
        SELECT a.conversation_id, a.position, a.content, r.position, r.content
        FROM messages a JOIN {SELECTED} USING (conversation_id)
        JOIN messages r ON r.conversation_id = a.conversation_id AND r.on_main_path AND r.role = 'assistant'
             AND NOT r.blank AND r.position > a.position AND r.position <= a.position + {STANDING}
        WHERE a.on_main_path AND a.origin = 'person'
          AND (contains(a.content, ' at a time') OR contains(a.content, '-at-a-time'))
          AND regexp_matches(a.content, '(?i)\\bone[ -](?:question[ -])?at[ -]a[ -]time\\b')
        ORDER BY 1, 4""").fetchall()
