-- Drift episodes per conversation and type (written by `forensics report`): severity, rule, evidence positions
SELECT f.native_id, f.conversation_id, f.drift_type, f.kind, f.severity, f.rule, f.value,
       array_to_string(f.positions, ',') AS positions, f.detail,
       f.follows_compaction
FROM drift_findings f
ORDER BY f.native_id, f.drift_type, CASE f.severity WHEN 'high' THEN 0 WHEN 'low' THEN 1 ELSE 2 END, f.positions[1]
