-- Every main-path message with its position, role, size and tool calls: open evidence by conversation and position
SELECT c.native_id, m.conversation_id, m.position, m.role, m.content_chars, m.content_bytes, m.tool_call_count,
       m.created_at, left(m.content, 200) AS preview
FROM messages m
JOIN conversations c USING (conversation_id)
WHERE m.on_main_path
ORDER BY c.native_id, m.position
