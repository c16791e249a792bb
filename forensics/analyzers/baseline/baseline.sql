-- Baseline metrics per conversation on the main path (docs/definitions.md); system messages counted apart
WITH m AS (
    -- blank, trimmed_chars and trimmed_text are filled at import (Python str.strip semantics, see docs/warehouse.md)
    SELECT conversation_id, role, content_chars, content_bytes, tool_call_count, trimmed_chars, trimmed_text,
           role = 'assistant' AND tool_call_count >= 1 AND blank AS blank_tool_echo
    FROM messages
    WHERE on_main_path
),
per AS (
    SELECT conversation_id,
           count(*) FILTER (WHERE role <> 'system') AS messages,
           count(*) FILTER (WHERE role = 'system') AS system_messages,
           count(*) FILTER (WHERE role = 'user') AS "user",
           count(*) FILTER (WHERE role = 'assistant') AS assistant,
           count(*) FILTER (WHERE role = 'tool') AS tool,
           coalesce(sum(tool_call_count) FILTER (WHERE role = 'assistant'), 0)::BIGINT AS tool_calls,
           count(*) FILTER (WHERE role = 'assistant'
                            AND tool_call_count >= coalesce(getvariable('baseline_parallel_calls'), 3)) AS parallel_turns,
           count(*) FILTER (WHERE role = 'tool' AND content_bytes > 2000) AS tool_results_gt_2kb,
           count(*) FILTER (WHERE role = 'tool' AND content_bytes > 10000) AS tool_results_gt_10kb,
           count(*) FILTER (WHERE blank_tool_echo) AS empty_assistant,
           count(*) FILTER (WHERE role = 'user' AND list_contains(
               coalesce(getvariable('baseline_continue_words'), ['继续', 'continue', 'go on', '继续吧']), trimmed_text))
               AS continue_nags,
           count(*) FILTER (WHERE role = 'user'
                            AND trimmed_chars <= coalesce(getvariable('baseline_short_user_chars'), 12)) AS short_user,
           coalesce(sum(content_chars) FILTER (WHERE role = 'assistant'), 0)::BIGINT AS assistant_chars,
           coalesce(sum(content_chars) FILTER (WHERE role = 'tool'), 0)::BIGINT AS tool_chars
    FROM m
    GROUP BY conversation_id
)
SELECT c.conversation_id, c.native_id, c.title, c.provider, c.model, c.created_at,
       coalesce(p.messages, 0) AS messages, coalesce(p.system_messages, 0) AS system_messages,
       coalesce(p."user", 0) AS "user", coalesce(p.assistant, 0) AS assistant, coalesce(p.tool, 0) AS tool,
       coalesce(p.tool_calls, 0) AS tool_calls, coalesce(p.parallel_turns, 0) AS parallel_turns,
       coalesce(p.tool_results_gt_2kb, 0) AS tool_results_gt_2kb,
       coalesce(p.tool_results_gt_10kb, 0) AS tool_results_gt_10kb,
       coalesce(p.empty_assistant, 0) AS empty_assistant,
       p.empty_assistant / nullif(p.assistant, 0) AS empty_assistant_share,
       coalesce(p.continue_nags, 0) AS continue_nags,
       coalesce(p.short_user, 0) AS short_user,
       p.short_user / nullif(p."user", 0) AS short_user_share,
       p.assistant_chars::DOUBLE / nullif(p.tool_chars, 0) AS asst_tool_ratio,
       coalesce(p.assistant_chars, 0) AS assistant_chars, coalesce(p.tool_chars, 0) AS tool_chars
FROM conversations c
LEFT JOIN per p USING (conversation_id)
ORDER BY c.created_at, c.native_id
