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
from forensics.analyzers.keys import drift as declared
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
    sections=declared.SECTIONS,
    keys=declared.KEYS,
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
    detector_sections=declared.DETECTOR_SECTIONS,
    maps=("conversations",),
    tables=(
        derived.Table(
            "drift_findings", "selection", "one row per conversation and drift kind: severity, rule, positions"
        ),
    ),
    settings=(DriftSettings,),
)
