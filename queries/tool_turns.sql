-- Tool use per user turn (a user message and everything up to the next one): calls, distinct targets, rounds, widest round
WITH m AS (
    SELECT conversation_id, position, role, tool_call_count,
           max(CASE WHEN role = 'user' THEN position END)
               OVER (PARTITION BY conversation_id ORDER BY position ROWS UNBOUNDED PRECEDING) AS turn
    FROM messages
    WHERE on_main_path
),
calls AS (
    SELECT m.conversation_id, m.turn, t.position,
           coalesce(json_extract_string(t.arguments, '$.path'), json_extract_string(t.arguments, '$.file_path'),
                    json_extract_string(t.arguments, '$.query'), json_extract_string(t.arguments, '$.pattern'),
                    json_extract_string(t.arguments, '$.command'), json_extract_string(t.arguments, '$.url'),
                    t.arguments) AS target
    FROM tool_calls t
    JOIN m ON m.conversation_id = t.conversation_id AND m.position = t.position
    WHERE m.turn IS NOT NULL
)
SELECT c.native_id, k.conversation_id, k.turn AS user_position, count(*) AS calls,
       count(DISTINCT k.target) AS distinct_targets, count(DISTINCT k.position) AS rounds,
       max(r.tool_call_count) AS widest_round,
       -- the first of the widest rounds (a tie is not left to the scan order)
       arg_max(k.position, {'calls': r.tool_call_count, 'earlier': -k.position}) AS widest_round_position,
       array_to_string(list_sort(list(DISTINCT k.position)), ',') AS round_positions  -- a list: 9,22,27
FROM calls k
JOIN m r ON r.conversation_id = k.conversation_id AND r.position = k.position
JOIN conversations c ON c.conversation_id = k.conversation_id
GROUP BY c.native_id, k.conversation_id, k.turn
ORDER BY k.conversation_id, k.turn
