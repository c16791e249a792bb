-- Sentinel compliance per provider/model: counts by class, drifted segments ranked, known compliant or muted since when (tables written by `forensics report`)
SELECT compliance_key, provider, model, conversations, judged, healthy, mutated, missing, healthy_share,
       drifted_ranked, known_compliant, muted, muted_since, muted_native_id, muted_position, healthy_after_mute,
       false_mute, degraded_conversations
FROM sentinel_models
ORDER BY judged DESC, compliance_key
