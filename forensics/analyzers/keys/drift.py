"""The config sections and keys of the drift analyzer (``forensics.analyzers.drift``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

# its sections of this tool's own detector thresholds (no harness reads them) -> how its tuner fits them
# (``Analyzer.detector_sections``)
DETECTOR_SECTIONS: dict[str, str] = {
    "drift": "fitted to this warehouse's one kind of agent so that high flags its worst 10 %"
}
SECTIONS: dict[str, str] = {
    "drift": "Drift phenomena thresholds (docs/definitions.md#drift-phenomena): severity low at the first "
    "value, high at the second."
}
KEYS: tuple[Key, ...] = (
    Key(
        "drift",
        "crowding_ratio_low",
        0.25,
        "tool-result crowding when asst_tool_ratio is at or below this and a "
        "result exceeds tool_result.summarize_bytes (low)",
        "ratio",
    ),
    Key(
        "drift",
        "crowding_ratio_high",
        0.10,
        "... at or below this: high (the seed's conversations: 0.04-0.05)",
        "ratio",
    ),
    Key(
        "drift",
        "dispersion_targets_low",
        8,
        "tool-set dispersion when one user request reads this many distinct targets (paths, queries, commands) (low)",
        "targets",
    ),
    Key("drift", "dispersion_targets_high", 10, "... this many: high (the seed's examples: 11 and 12)", "targets"),
    Key(
        "drift",
        "dispersion_parallel_low",
        6,
        "tool-set dispersion when one assistant message carries this many calls (low)",
        "calls",
    ),
    Key("drift", "dispersion_parallel_high", 10, "... this many: high (the seed's widest round: 12)", "calls"),
    Key(
        "drift",
        "rediscovery_window",
        6,
        "a search this many messages after a not-found failure re-discovers it",
        "messages",
    ),
    Key(
        "drift",
        "interleave_lag_low",
        4,
        "multi-topic interleave when the assistant stays on the old topic this many messages after a switch (low)",
        "messages",
    ),
    Key("drift", "interleave_lag_high", 10, "... this many: high (the seed's example: 12)", "messages"),
    Key(
        "drift",
        "echo_rate_low",
        0.30,
        "no focus when this share of assistant messages is pure tool echo (low)",
        "share",
    ),
    Key("drift", "echo_rate_high", 0.50, "... this share: high (the seed: 36-62%)", "share"),
    Key("drift", "continue_nags_low", 2, "no focus when the user nags 'continue' this many times (low)", "messages"),
    Key("drift", "continue_nags_high", 4, "... this many times: high (the seed's f89d129a: 5)", "messages"),
)
