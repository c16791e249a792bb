-- Tool-result compression replay (docs/definitions.md#tool-result-compression-replay): every tool result, its context, whether it is summarized and its size after
-- should_summarize and extract_key_info of forensics/text/compress.py, line for line: summarized when over
-- [tool_result] summarize_bytes or over summarize_share of the context (UTF-8 bytes of everything before it on the
-- main path); the summary keeps the first and last head_tail_lines lines, at most 20 error/panic/失败 lines between
-- them, every kept line cut to 500 characters + '…', one '[... k lines omitted ...]' per gap. after_chars/4 is the
-- token estimate the report uses for shares of context.
WITH ctx AS (  -- narrow: the window never carries the content
    SELECT conversation_id, position, role,
           coalesce(sum(content_bytes) OVER w, 0)::BIGINT AS context_bytes,
           coalesce(sum(content_chars) OVER w, 0)::BIGINT AS context_chars
    FROM messages
    WHERE on_main_path
    WINDOW w AS (PARTITION BY conversation_id ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
res AS (
    SELECT m.conversation_id, m.position, m.content_bytes AS result_bytes, m.content_chars AS result_chars,
           x.context_bytes, x.context_chars,
           greatest(coalesce(getvariable('tool_result_head_tail_lines'), 5), 0) AS ht,
           m.content_bytes > coalesce(getvariable('tool_result_summarize_bytes'), 2000)
               OR (x.context_bytes > 0 AND m.content_bytes
                                           > coalesce(getvariable('tool_result_summarize_share'), 0.40) * x.context_bytes)
               AS summarized,
           -- extract_key_info only runs on what is summarized (the expensive part: lines of big results)
           CASE WHEN summarized THEN string_split(coalesce(m.content, ''), chr(10)) END AS lines,
           len(lines) AS n,
           summarized AND regexp_matches(m.content, '(?i)error|panic|失败') AS has_key
    FROM messages m
    JOIN ctx x ON x.conversation_id = m.conversation_id AND x.position = m.position AND x.role = 'tool'
    WHERE m.on_main_path AND m.role = 'tool'
),
parts AS MATERIALIZED (  -- head and tail lines, and the first 20 key lines of the middle with their index in it
    SELECT *, n - 2 * ht AS mid_n,
           list_concat(lines[1:least(ht, n)], lines[greatest(n - ht, ht) + 1:n]) AS ends,
           CASE WHEN has_key AND n > 2 * ht
                THEN list_filter(list_transform(lines[ht + 1:n - ht],
                                                lambda x, i: CASE WHEN regexp_matches(x, '(?i)error|panic|失败')
                                                                  THEN {'i': i, 'line': x} END),
                                 lambda v: v IS NOT NULL)[1:20]
                ELSE [] END AS keys
    FROM res
),
sized AS MATERIALIZED (
    SELECT *,
           list_concat(ends, list_transform(keys, lambda v: v.line)) AS kept,
           CASE WHEN mid_n <= 0 THEN []
                ELSE list_filter(list_transform(range(1, len(keys) + 2),
                                                lambda j: coalesce(keys[j].i, mid_n + 1) - coalesce(keys[j - 1].i, 0) - 1),
                                 lambda g: g > 0) END AS gaps,
           len(gaps) = 0 AND coalesce(list_max(list_transform(kept, lambda x: length(x))), 0) <= 500 AS unchanged
    FROM parts
)
SELECT c.native_id, r.conversation_id, r.position, r.result_bytes, r.result_chars, r.context_bytes,
       r.context_chars, r.summarized, r.ht AS head_tail_lines,
       CASE WHEN NOT summarized OR unchanged THEN r.result_bytes
            ELSE coalesce(list_sum(list_transform(kept, lambda x: CASE WHEN length(x) > 500
                                                                       THEN strlen(substr(x, 1, 500)) + 3
                                                                       ELSE strlen(x) END)), 0)
                 + coalesce(list_sum(list_transform(gaps, lambda g: 24 + length(g::VARCHAR))), 0)
                 + len(kept) + len(gaps) - 1
       END::BIGINT AS after_bytes,
       CASE WHEN NOT summarized OR unchanged THEN r.result_chars
            ELSE coalesce(list_sum(list_transform(kept, lambda x: least(length(x), 501))), 0)
                 + coalesce(list_sum(list_transform(gaps, lambda g: 24 + length(g::VARCHAR))), 0)
                 + len(kept) + len(gaps) - 1
       END::BIGINT AS after_chars
FROM sized r
JOIN conversations c USING (conversation_id)
ORDER BY r.conversation_id, r.position
