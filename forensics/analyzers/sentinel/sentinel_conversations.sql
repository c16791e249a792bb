-- Degraded conversations: sentinel onset (position, turn, ~context tokens) and the first visible failure before and after it (tables written by `forensics report`)
SELECT s.conversation_id, s.native_id, s.compliance_key, s.turns, s.judged, s.onset_position, s.onset_turn,
       s.onset_context_tokens, s.onset_status, s.onset_drifted, s.failure_before_position, s.failure_before_kind,
       s.failure_position, s.failure_kind, s.failure_detail, s.lead_turns, s.lead_messages, s.failures_before,
       s.failures_after, s.sentinel_first
FROM sentinel_conversations s
JOIN conversations c USING (conversation_id)
WHERE s.degraded
ORDER BY c.created_at NULLS LAST, s.native_id
