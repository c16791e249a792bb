"""Drift phenomena (docs/definitions.md#drift-phenomena): the `drift` analyzer (``section``) and the rules behind it, one module
per kind of evidence: ``corpus`` (a request's targets against its agent's norm), ``interleave`` (the lag after a
topic switch), ``rediscovery`` (what compaction dropped and the conversation needed again), ``targets`` (what a
request reads)."""

from forensics.analyzers.declare import Analyzer, CheckRule, Tuner
from forensics.analyzers.drift import draw, tune
from forensics.analyzers.drift.section import (
    FACTS,
    KINDS,
    NAME,
    TITLE,
    agent_kinds,
    context,
    echo,
    lags,
    nags,
    rediscovered,
    run,
    stepped_in,
    tool_turns,
)
from forensics.analyzers.drift.settings import DriftSettings
from forensics.analyzers.facts import Fact
from forensics.config import Key
from forensics.warehouse import derived

__all__ = ["ANALYZER", "FACTS", "KINDS", "NAME", "TITLE", "run"]


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    # a request read widely, a context of tool output, a topic left late, no focus: the run's shape against a norm
    measures=("tool_dispersion", "tool_result_crowding", "topic_interleave", "no_focus"),
    wide=("tool_dispersion", "tool_result_crowding"),
    # a context of tool output: problems' ``context_crowded`` reads the same share of tool output (GUIDE §5)
    restates={"tool_result_crowding": "context_crowded"},
    sections={
        "drift": "Drift phenomena thresholds (docs/definitions.md#drift-phenomena): severity low at the first "
        "value, high at the second."
    },
    keys=(
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
            "tool-set dispersion when one user request reads this many distinct "
            "targets (paths, queries, commands) (low)",
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
        Key(
            "drift", "continue_nags_low", 2, "no focus when the user nags 'continue' this many times (low)", "messages"
        ),
        Key("drift", "continue_nags_high", 4, "... this many times: high (the seed's f89d129a: 5)", "messages"),
    ),
    facts=(
        Fact("drift_context", context, ("conversation_id",), cached=True),
        Fact("drift_kinds", agent_kinds, ("conversation_id",), cached=True),
        Fact("tool_turns", tool_turns, ("conversation_id", "user_position"), cached=True),
        Fact("drift_interventions", stepped_in, ("conversation_id", "position"), cached=True),
        Fact("drift_rediscovery", rediscovered, ("conversation_id", "at", "sign", "detail"), cached=True),
        Fact("drift_lags", lags, ("conversation_id", "switch"), cached=True, also_reads="topic_switches"),
        Fact("drift_nags", nags, ("conversation_id",), cached=True),
        Fact("drift_echo", echo, ("conversation_id",), cached=True),
    ),
    reads=FACTS,
    checks=(CheckRule("drift.*", "lower", 0.10, True),),
    tuners=(Tuner(tune.drift),),
    charts={"severity": draw.severity},
    engines=("duckdb", "spark"),
    after=("topics", "compaction"),
    detector_sections={"drift": "fitted to this warehouse's one kind of agent so that high flags its worst 10 %"},
    maps=("conversations",),
    tables=(
        derived.Table(
            "drift_findings", "selection", "one row per conversation and drift kind: severity, rule, positions"
        ),
    ),
    settings=(DriftSettings,),
)
