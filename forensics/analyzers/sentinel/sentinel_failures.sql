-- Visible failure signals on main paths (tool errors, user corrections, continue-nags): what the sentinel's lead is measured against
WITH results AS (
    SELECT t.conversation_id, t.result_position AS position, t.name, t.is_error, r.content
    FROM tool_calls t
    JOIN messages r ON r.conversation_id = t.conversation_id AND r.position = t.result_position AND r.on_main_path
),
users AS (
    SELECT conversation_id, position, content,
           -- Python's str.strip(): Unicode whitespace at both ends (as baseline continue_nags)
           regexp_replace(content, '^[\s\p{Z}\x{0B}\x{1C}-\x{1F}\x{85}]+|[\s\p{Z}\x{0B}\x{1C}-\x{1F}\x{85}]+$', '', 'g')
               AS stripped
    FROM messages
    WHERE on_main_path AND role = 'user'
)
SELECT conversation_id, position, 'tool_error' AS kind, string_agg(DISTINCT name, ', ' ORDER BY name) AS detail
FROM results
WHERE is_error OR regexp_matches(content, '(?im)(?:' || array_to_string(coalesce(getvariable('sentinel_tool_error_patterns'),
    ['\[exit code: [1-9][0-9]*\]', '^error(\[E[0-9]+\])?:', 'panicked at', 'traceback \(most recent call last\)',
     'test result: failed', 'no such file or directory', 'permission denied', 'command not found']), ')|(?:') || ')')
GROUP BY conversation_id, position
UNION ALL
SELECT conversation_id, position, 'correction' AS kind, left(stripped, 80) AS detail
FROM users
WHERE array_length(list_filter(coalesce(getvariable('sentinel_correction_words'),
    ['不对', '错了', '不是这个', '你忘了', 'wrong', 'that''s not', 'you forgot', 'I said']),
    lambda w: contains(lower(content), lower(w)))) > 0
UNION ALL
SELECT conversation_id, position, 'continue_nag' AS kind, stripped AS detail
FROM users
WHERE list_contains(coalesce(getvariable('baseline_continue_words'), ['继续', 'continue', 'go on', '继续吧']), stripped)
ORDER BY conversation_id, position, kind
