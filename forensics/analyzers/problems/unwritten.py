"""A file claimed written that nothing wrote (docs/definitions.md#problems-a-reviewer-flags ``gave_up_or_false_success``,
GUIDE §5: "claims done while the conversation shows otherwise"). Rule ``claimed_file_not_written``: a reply says a file
was saved, written or created at a path it names in a code span ("The report file was saved at the relative path
`./.claude/agent-reports/analyzer-d7f3a9b2.md`", "Created `lib/x.ex`"), in a run whose agent changes files with its
tools, while nothing before the reply names that file: no call's arguments, no tool result, no harness line (aider's
"Applied edit to Topology": aider had put the edit in a file named after a heading). A file a call or a command wrote
is named in its arguments or its output; one written by a script the agent ran is named in what the script printed, or
the claim is not checked here (it is then found: a cost this rule pays for the claims it reads in every run). Not a
negated or future claim ("was not saved", "will be saved to")."""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.problems.actions import calls_sql
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED

# a file said to be saved, written or created (past), then the path in a code span with an extension
SAVED = re.compile(
    r"(?i)(?<!\w)(?:saved|written|wrote|created|stored|enregistré|créé|écrit|guardad[oa]|cread[oa]|escrit[oa]|"
    r"gespeichert|erstellt|geschrieben|сохран[её]н|записан|создан)[аоы]?(?!\w)[^.\n`]{0,60}?"
    r"`([^`\n]+\.[A-Za-z][A-Za-z0-9]{0,5})`|(?:保存到|已保存|写入了?|创建了)[^。\n`]{0,20}?`([^`\n]+\.[A-Za-z][A-Za-z0-9]{0,5})`"
)
PREFILTER = r"(?i)(saved|written|wrote|created|stored|enregistr|créé|écrit|guardad|cread|escrit|gespeichert|erstellt|geschrieben|сохран|записан|создан|保存|写入|创建)[^`]{0,60}`"
NOT_DONE = re.compile(
    r"(?i)(?:\b(?:not|never|will be|to be|should be|can be|would be|could be|must be|be)|n['’]t|\bне)\s+(?:\w+\s+)?$"
)
HEAD = 3000  # characters of a reply read for the claim: its summary, not the file it quotes
KIND = "gave_up_or_false_success"
RULE = "claimed_file_not_written"


def unwritten(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``claimed_file_not_written`` over the selected runs (``actions.prepare`` first)."""
    rows = con.execute(
        f"""
        WITH w AS (SELECT DISTINCT cid FROM ({calls_sql()}) WHERE mut)
        SELECT m.conversation_id, m.position, left(m.content, {HEAD}) FROM messages m JOIN {SELECTED} USING (conversation_id)
        WHERE m.on_main_path AND m.role = 'assistant' AND m.conversation_id IN (SELECT cid FROM w)
          AND regexp_matches(left(m.content, {HEAD}), ?)
        ORDER BY 1, 2""",
        [PREFILTER],
    ).fetchall()
    out: list[Problem] = []
    for cid, pos, text in rows:
        for m in SAVED.finditer(str(text)):
            if NOT_DONE.search(str(text)[max(0, m.start() - 30) : m.start()]):
                continue
            path = (m.group(1) or m.group(2)).strip()
            name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            if not name or " " in name or _named(con, str(cid), int(pos), name):
                continue
            out.append(
                Problem(
                    str(cid),
                    KIND,
                    [int(pos)],
                    quote_at(str(text), m),
                    RULE,
                    f"the reply says it wrote {name}; nothing before it names that file (no call's arguments, no tool "
                    "result, no harness line), in a run whose agent writes files with its tools",
                )
            )
            break
    return out


def _named(con: duckdb.DuckDBPyConnection, cid: str, pos: int, name: str) -> bool:
    """Something before the reply at ``pos`` names the file: a call's arguments, a tool result, a harness line."""
    (n,) = con.execute(
        """SELECT (SELECT count(*) FROM tool_calls WHERE conversation_id = $c AND position < $p
                   AND contains(arguments, $n))
                + (SELECT count(*) FROM messages WHERE conversation_id = $c AND position < $p
                   AND (role IN ('tool', 'system') OR origin = 'harness') AND contains(content, $n))""",
        {"c": cid, "p": pos, "n": name},
    ).fetchone() or (0,)
    return bool(n)
