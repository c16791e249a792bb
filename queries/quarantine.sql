-- Every quarantined record: where it was, why, and how big (raw bytes are in the quarantine table)
SELECT s.path, q.location, q.reason, q.raw_bytes
FROM quarantine q
JOIN sources s USING (source_id)
ORDER BY s.path, q.location
