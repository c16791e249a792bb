-- Every tool call that loads a skill ([skills] tools), with the skill it names ([skills] argument_keys)
-- docs/metrics.md#skills: Claude Code's Skill tool (input {"skill": "pdf"}, older {"command": "pdf"}), a harness's
-- meta.loadSkill ({"name": ...}). `skill` is the first of the argument keys that holds text (or the argument
-- itself when it is a JSON string); `failed`: the call's result is an error (no skill was loaded); `synthetic`:
-- the harness's own router injected it (`"_synthetic": true`, the seed harness), so it is no load of the model's;
-- `result_position`: the message holding the call's result (a meta.loadSkill result is the skill's body).
SELECT t.conversation_id, t.position, t.call_index, t.name AS tool, t.result_position,
       CASE WHEN NOT json_valid(t.arguments) THEN NULL
            WHEN json_type(t.arguments) = 'VARCHAR' THEN nullif(trim(t.arguments ->> '$'), '')
            ELSE list_filter(list_transform(coalesce(getvariable('skills_argument_keys'), ['skill', 'command', 'name']),
                                            lambda k: json_extract_string(t.arguments, '$."' || k || '"')),
                             lambda v: trim(coalesce(v, '')) <> '')[1] END AS skill,
       coalesce(t.is_error, false) AS failed,
       coalesce(json_valid(t.arguments) AND json_type(t.arguments) = 'OBJECT'
                AND json_extract(t.arguments, '$._synthetic') = 'true'::JSON, false) AS synthetic
FROM tool_calls t JOIN conversations c USING (conversation_id)
WHERE t.position IS NOT NULL AND c.parent_conversation_id IS NULL
  AND list_contains(coalesce(getvariable('skills_tools'), ['Skill', 'meta.loadSkill', 'meta_loadSkill']), t.name)
ORDER BY t.conversation_id, t.position, t.call_index
