-- Sentinel verdict and probe outcome of every judged final reply, in time order (tables written by `forensics report`)
SELECT r.conversation_id, r.native_id, r.position, r.turn, r.context_tokens, r.compliance_key, r.model_ordinal,
       r.status, r.drifted, r.outcome, r.degraded
FROM sentinel_replies r
JOIN conversations c USING (conversation_id)
ORDER BY c.created_at NULLS LAST, c.native_id, r.conversation_id, r.position
