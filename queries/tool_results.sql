-- Every tool call with the size of its result and whether it failed, largest first
SELECT c.native_id, t.conversation_id, t.position, t.call_index, t.name, t.arguments, t.result_position,
       t.result_bytes, t.is_error
FROM tool_calls t
JOIN conversations c USING (conversation_id)
ORDER BY t.result_bytes DESC NULLS LAST
