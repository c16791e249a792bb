-- Decision-memory findings (written by `forensics report`): relitigations, forgotten, conflicting and unrecorded decisions, with evidence positions
SELECT c.native_id, f.conversation_id, f.kind, f.severity, f.decision_id, f.alternative,
       array_to_string(f.positions, ',') AS positions, f.detail, f.project
FROM memory_findings f LEFT JOIN conversations c USING (conversation_id)
ORDER BY f.kind, CASE f.severity WHEN 'high' THEN 0 ELSE 1 END, c.native_id, f.position
