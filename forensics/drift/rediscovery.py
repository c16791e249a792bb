"""Drift type 3, compaction topic loss: the assistant re-discovers what it knew (seed 001 §三 类型3).

Two signs, both in SQL over tool_calls:
- **not found, then search** (high): a call fails on a path or name ("not found", 不存在, ENOENT, os error 2)
  and within ``drift.rediscovery_window`` messages a search/list call looks for it (its target is the failed
  path's folder, a part of the path, or names the failed file);
- **re-read** (low): a file read again after more than ``compaction.max_tokens`` estimated tokens (chars/4)
  since its previous read: by then a compacting harness would have summarised the first read away.

Each episode says whether it follows a logged compaction: an ``events`` row (compaction/summary) or a
system message after the start that reads like a summary. NULL when the log marks none at all.
"""
from __future__ import annotations

import duckdb
import polars as pl

from forensics.warehouse import frame

NOT_FOUND = r"(?i)not found|no such file|does not exist|cannot find|could not find|ENOENT|os error 2|不存在|找不到"
SEARCH_TOOL = r"(?i)search|grep|glob|find|list|ls|dir"
READ_TOOL = r"(?i)read|open|view|cat"
SUMMARY_TEXT = r"(?i)summary|summari[sz]ed|compact|continued from a previous|摘要|总结|压缩"

SQL = f"""
WITH calls AS (
    SELECT t.conversation_id, t.position, t.result_position, t.name, t.is_error,
           coalesce(json_extract_string(t.arguments, '$.path'), json_extract_string(t.arguments, '$.file_path'),
                    json_extract_string(t.arguments, '$.query'), json_extract_string(t.arguments, '$.pattern'),
                    t.arguments) AS target
    FROM tool_calls t JOIN sel_conversations USING (conversation_id)
    WHERE t.position IS NOT NULL
),
ctx AS (
    SELECT conversation_id, position,
           sum(content_chars) OVER (PARTITION BY conversation_id ORDER BY position) AS chars_upto
    FROM messages JOIN sel_conversations USING (conversation_id) WHERE on_main_path
),
failed AS (
    SELECT c.*, regexp_replace(c.target, '/[^/]*$', '') AS folder,
           regexp_extract(c.target, '([^/]+?)(\\.[^./]*)?$', 1) AS stem
    FROM calls c JOIN messages r ON r.conversation_id = c.conversation_id AND r.position = c.result_position
    -- the cheap test first: a not-found message is an error or short; the regex then reads little text
    WHERE CASE WHEN c.is_error OR r.content_bytes < 2000 THEN regexp_matches(r.content, '{NOT_FOUND}') ELSE false END
),
searched AS (
    SELECT f.conversation_id, f.position, f.result_position, f.target, arg_min(s.position, s.position) AS s_pos,
           arg_min(s.result_position, s.position) AS s_res
    FROM failed f JOIN calls s ON s.conversation_id = f.conversation_id
        AND s.position > f.position AND s.position <= f.position + ?
        AND regexp_matches(s.name, '{SEARCH_TOOL}')
        AND (s.target = f.folder OR (length(s.target) >= 3 AND contains(f.target, s.target))
             OR contains(s.target, f.stem))
    GROUP BY f.conversation_id, f.position, f.result_position, f.target
),
found AS (
    SELECT conversation_id, 'not_found_then_search' AS sign, 'high' AS severity, position AS at,
           [position, result_position, s_pos, s_res] AS positions, target AS detail
    FROM searched
),
reads AS (
    SELECT c.conversation_id, c.position, c.target, x.chars_upto,
           lag(c.position) OVER w AS prev_position, lag(x.chars_upto) OVER w AS prev_chars
    FROM calls c JOIN ctx x USING (conversation_id, position)
    WHERE regexp_matches(c.name, '{READ_TOOL}') AND NOT c.is_error
    WINDOW w AS (PARTITION BY c.conversation_id, c.target ORDER BY c.position)
),
reread AS (
    SELECT conversation_id, 'reread_after_compaction_budget' AS sign, 'low' AS severity, position AS at,
           [prev_position, position] AS positions, target AS detail
    FROM reads
    WHERE prev_position IS NOT NULL AND (chars_upto - prev_chars) / 4 > ?
),
marks AS (
    SELECT conversation_id, position FROM events JOIN sel_conversations USING (conversation_id)
    WHERE kind IN ('compaction', 'summary') AND position IS NOT NULL
    UNION ALL
    SELECT conversation_id, position FROM messages JOIN sel_conversations USING (conversation_id)
    WHERE on_main_path AND role = 'system' AND position > 0 AND regexp_matches(content, '{SUMMARY_TEXT}')
),
episodes AS (SELECT * FROM found UNION ALL SELECT * FROM reread)
SELECT e.conversation_id, e.sign, e.severity, e.at, list_filter(e.positions, lambda p: p IS NOT NULL) AS positions,
       e.detail,
       (SELECT max(m.position) FROM marks m WHERE m.conversation_id = e.conversation_id AND m.position < e.at)
           AS compaction_position,
       EXISTS (SELECT 1 FROM marks m WHERE m.conversation_id = e.conversation_id) AS compaction_logged
FROM episodes e
ORDER BY e.conversation_id, e.at
"""


def episodes(con: duckdb.DuckDBPyConnection, window: int, max_tokens: int) -> pl.DataFrame:
    """One row per re-discovery episode in the selection, with its compaction context."""
    return frame(con, SQL, [window, max_tokens])
