"""Rules per run (docs/definitions.md#rules-a-run-was-given): the rules a run was given (instruction files the log shows injected, system prompts,
the person's standing instructions and per-request asks), whether each was in the context, and where a program can
check it, each later turn that kept or broke it, with its evidence.

``sources`` finds the injected instruction files, ``extract`` the rules (the one extractor: the problems analyzer's
``instruction_violated`` reads it too), ``checks`` maps a rule's words to a mechanical check, ``judge`` holds each
run's turns against them, ``load`` reads the warehouse, ``section`` reports. Rules no program can check are listed
as ``unchecked``, never guessed.
"""

from forensics.analyzers import reuse
from forensics.analyzers.declare import Analyzer, CheckRule, Mark
from forensics.analyzers.rules.extract import Rule, rules_of
from forensics.analyzers.rules.load import CACHED, Audit, audit, rules
from forensics.analyzers.rules.section import MARKS_TABLE, NAME, RULES_TABLE, TITLE, VERDICTS_TABLE, run
from forensics.warehouse import derived

__all__ = ["ANALYZER", "NAME", "TITLE", "Audit", "Rule", "audit", "rules", "rules_of", "run"]

ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    checks=(
        CheckRule("rules.adherence", "higher", 0.05, False),  # a share of turns: five points down is a regression
        CheckRule("rules.by_rule.*.adherence", "higher", 0.10, False),
        CheckRule("rules.by_model.*.adherence", "higher", 0.10, False),
        CheckRule("rules.by_position.*.adherence", "higher", 0.10, False),
        CheckRule("rules.compaction.*.adherence", "higher", 0.10, False),
        CheckRule("rules.verdicts.broke", "lower", 0.10, True),
    ),
    marks=(Mark(MARKS_TABLE, ("rules",)),),
    # a rule broken: problems' ``instruction_violated`` holds the same verdicts of this audit against the same turns
    # (``problems.instructions.standing``)
    restates={"rule_broken": "instruction_violated"},
    tables=(
        reuse.cached_table(CACHED),
        derived.Table(
            RULES_TABLE,
            "selection",
            "one row per rule a run was given (docs/definitions.md#rules-a-run-was-given): where it came from "
            "(instruction file and path, system prompt, the person), the position that put it in the context "
            "(and the last it holds at), its words, its check or `unchecked`, turns kept and broken",
        ),
        derived.Table(
            VERDICTS_TABLE,
            "selection",
            "one row per turn a checkable rule bore on: kept or broke, a "
            "verbatim quote of the evidence, the saying it was held to, whether a compaction fell between",
        ),
        derived.Table(
            MARKS_TABLE,
            "selection",
            "per message, for the explorer's transcript: the rules it loaded and the rules it broke",
        ),
    ),
)
