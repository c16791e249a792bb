"""The context a run built (docs/definitions.md#problems-a-reviewer-flags ``context_crowded``, ``lost_focus``).

``context_crowded``: the main path holds at least ``CROWDED_TOKENS`` (characters / 4, GUIDE §5), tool output
makes up at least ``TOOL_SHARE`` of it, and bulky outputs (``BULKY_CHARS`` each) at least ``BULKY_SHARE`` of
that: a run that reads much relevant code a page at a time is not crowded by bulk. The finding cites the
largest tool outputs. ``lost_focus`` is read from the agent's own calls (``focus``); drift's ``no_focus`` and
``tool_dispersion`` stay its detail.
"""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED
from forensics.warehouse.tool_errors import HARNESS_HEADER

CROWDED_TOKENS = 30_000
TOOL_SHARE = 0.7
BULKY_CHARS = 10_000  # one tool output this long (~2,500 tokens) is bulky
BULKY_SHARE = 0.4  # ... and such outputs make up this share of the tool output: crowded by bulk, not by steady reading
CITED = 3  # largest tool outputs cited
# the quote: the largest output's first line that says something (not "Exit code: 0"), past the lines a harness
# writes above a command's output (``tool_errors.HARNESS_HEADERS``: Codex's chunk id, wall time, exit code and token count)
LINE = re.compile(rf"^(?!{HARNESS_HEADER}[ \t]*$)[^\n]{{20,}}", re.M)


def crowded(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    rows = con.execute(f"""
        WITH m AS (SELECT conversation_id AS cid, position, content_chars AS chars,
                          role = 'tool' OR origin = 'tool_result' AS tool
                   FROM messages JOIN {SELECTED} USING (conversation_id) WHERE on_main_path),
        s AS (SELECT cid, sum(chars) AS chars, sum(chars) FILTER (WHERE tool) AS tool_chars FROM m GROUP BY 1
              HAVING sum(chars) / 4 >= {CROWDED_TOKENS} AND sum(chars) FILTER (WHERE tool) >= {TOOL_SHARE} * sum(chars)
                 AND coalesce(sum(chars) FILTER (WHERE tool AND chars >= {BULKY_CHARS}), 0)
                     >= {BULKY_SHARE} * sum(chars) FILTER (WHERE tool)),
        top AS (SELECT cid, position, chars, row_number() OVER (PARTITION BY cid ORDER BY chars DESC, position) AS r
                FROM m WHERE tool AND cid IN (SELECT cid FROM s))
        SELECT s.cid, s.chars, s.tool_chars, list(top.position ORDER BY top.position),
               (SELECT left(content, 400) FROM messages x WHERE x.conversation_id = s.cid AND x.on_main_path
                AND x.position = arg_max(top.position, top.chars))
        FROM s JOIN top ON top.cid = s.cid AND top.r <= {CITED} GROUP BY s.cid, s.chars, s.tool_chars
        ORDER BY 1""").fetchall()
    return [
        Problem(
            str(cid),
            "context_crowded",
            [int(p) for p in pos],
            quote_at(str(text or ""), LINE.search(str(text or ""))),
            "tool_output_share",
            f"~{int(chars) // 4:,} tokens on the main path, {tool / chars:.0%} tool output, much of it in "
            f"outputs of {BULKY_CHARS:,}+ characters (GUIDE §5: {CROWDED_TOKENS:,} tokens; here {TOOL_SHARE:.0%} "
            f"tool output, {BULKY_SHARE:.0%} of it bulky)",
        )
        for cid, chars, tool, pos, text in rows
    ]
