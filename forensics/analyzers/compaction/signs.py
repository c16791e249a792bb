"""Signs that the context lacked something it once had, found without knowing what it held (drift type 3, docs/definitions.md#drift-phenomena).

**Not found, then search**: a call fails on a path or name ("not found", 不存在, ENOENT, os error 2) and
within ``drift.rediscovery_window`` messages a search or listing looks for it (its target is the failed path's
folder, a part of the path, or names the failed file). The assistant worked from a stale memory of the path
and had to rediscover it. The audit attaches such a sign to the dropped file fact it rediscovered; drift
type 3 reports the ones no logged fact explains (the fact was before the log began).

Each sign says where the last logged compaction before it is (``events`` kind compaction, or a system
message after the start that reads like a summary), NULL when the log marks none.
"""

from __future__ import annotations

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.warehouse import frame

NOT_FOUND = r"(?i)not found|no such file|does not exist|cannot find|could not find|ENOENT|os error 2|不存在|找不到"
SEARCH_TOOL = r"(?i)search|grep|glob|find|list|ls|dir"
SUMMARY_TEXT = r"(?i)summary|summari[sz]ed|compact|continued from a previous|摘要|总结|压缩"

SQL = f"""
WITH calls AS (
    SELECT t.conversation_id, t.position, t.result_position, t.name, t.is_error,
           CASE WHEN json_valid(t.arguments) THEN
               coalesce(json_extract_string(t.arguments, '$.path'), json_extract_string(t.arguments, '$.file_path'),
                        json_extract_string(t.arguments, '$.query'), json_extract_string(t.arguments, '$.pattern'),
                        t.arguments) ELSE t.arguments END AS target
    FROM tool_calls t JOIN sel_conversations USING (conversation_id)
    WHERE t.position IS NOT NULL
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
marks AS (
    SELECT conversation_id, position FROM events JOIN sel_conversations USING (conversation_id)
    WHERE kind IN ('compaction', 'summary') AND position IS NOT NULL
    UNION ALL
    SELECT conversation_id, position FROM messages JOIN sel_conversations USING (conversation_id)
    WHERE on_main_path AND role = 'system' AND position > 0 AND regexp_matches(content, '{SUMMARY_TEXT}')
)
SELECT s.conversation_id, s.position AS at,
       list_filter([s.position, s.result_position, s.s_pos, s.s_res], lambda p: p IS NOT NULL) AS positions,
       s.target AS detail,
       (SELECT max(m.position) FROM marks m WHERE m.conversation_id = s.conversation_id AND m.position < s.position)
           AS compaction_position,
       EXISTS (SELECT 1 FROM marks m WHERE m.conversation_id = s.conversation_id) AS compaction_logged
FROM searched s
ORDER BY s.conversation_id, s.position
"""


# drift's [drift] rediscovery_window, read here by its path: drift imports this package (type 3 reads the audit), so
# this package may not import drift's settings back (the one key read by path, not through its Settings)
REDISCOVERY_WINDOW = "drift.rediscovery_window"
KEPT = "compaction_signs"  # the signs kept per conversation between reports (``reuse``)


def not_found_then_search(con: duckdb.DuckDBPyConnection, window: int) -> pl.DataFrame:
    """One row per sign in the selection (``sel_conversations``), with its compaction context."""
    return frame(con, SQL, [window])


def kept(con: duckdb.DuckDBPyConnection, window: int) -> pl.DataFrame:
    """``not_found_then_search``'s rows, kept per conversation between reports (``reuse_compaction_signs``): each
    conversation's signs are a function of its own calls, messages and events and the window, so a report after new
    conversations finds only theirs. The rows come back in the query's order (by conversation, then as the query
    gave a conversation's: ``seq``), as a first report's."""
    rows = reuse.rows(
        con, {REDISCOVERY_WINDOW: window}, KEPT, lambda: not_found_then_search(con, window).with_row_index("seq")
    )
    return rows.sort("conversation_id", "seq").drop("seq")
