-- Topic switches (conservative markers) with the topics and confidences on both sides; run `forensics report` first
SELECT c.native_id AS conversation, s.conversation_id, s.position, s.native_id,
       s.topic_before, s.topic_after, s.conf_before, s.conf_after, s.score,
       array_to_string(s.keywords, ', ') AS keywords
FROM topic_switches s
JOIN conversations c USING (conversation_id)
ORDER BY c.native_id, s.position
