-- What each logged compaction did to each fact (written by `forensics report`): kept, dropped, needed again, losses first
SELECT f.native_id, f.conversation_id, f.event_position, f.kind, f.fact, f.fact_position, f.status, f.carried_by,
       f.needed_at, f.need, f.severity, array_to_string(f.evidence, ',') AS evidence, f.re_entered_at
FROM compaction_facts f
ORDER BY f.needed_at IS NULL, CASE f.severity WHEN 'high' THEN 0 ELSE 1 END, f.native_id, f.event_position,
         f.fact_position
