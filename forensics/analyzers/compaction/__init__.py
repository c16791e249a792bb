"""What compaction dropped: the audit of every logged compaction, and the replay of the harness's rule.

``rules`` reads ``[compaction]``; ``facts`` extracts the facts a context holds and where each is mentioned;
``load`` reads a batch of conversations; ``audit`` judges each logged compaction (kept, dropped, unjudged,
dropped and needed again); ``signs`` finds rediscovery (a not-found path, then a search); ``pairs`` keeps every
fact's needs in the warehouse; ``replay`` replays the rule over them and sweeps its settings. The compaction
analyzer reports all of it, drift type 3 reads its losses, `forensics tune` its sweep.
"""

from forensics.analyzers import reuse
from forensics.analyzers.compaction import audit_all, draw, replay, signs, tune
from forensics.analyzers.compaction.section import (
    FACTS_TABLE,
    MARKS_TABLE,
    NAME,
    REPLAY_TABLE,
    TITLE,
    audit_of,
    counted,
    run,
)
from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.declare import Analyzer, Mark, Tuner
from forensics.analyzers.keys import compaction as declared
from forensics.warehouse import derived

__all__ = ["ANALYZER", "FACTS_TABLE", "NAME", "REPLAY_TABLE", "TITLE", "audit_of", "counted", "run"]


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    tuners=(Tuner(tune.compaction, ("compaction.keep_recent", "compaction.max_tokens")),),
    charts={"sweep": draw.compaction_sweep},
    workers=True,  # the audits of all conversations in a pool (audit_all.py)
    tables=(
        derived.Table("compaction_pairs", "cache", "each fact's mentions and the needs that follow them"),
        derived.Table(
            "compaction_facts", "selection", "each fact held before a logged compaction and what became of it"
        ),
        derived.Table("compaction_replay", "selection", "the replayed compactions of the harness's rule"),
        derived.Table(
            MARKS_TABLE,
            "selection",
            "the explorer's note at each logged compaction (its summary's state, "
            "what it kept per category, what it lost) and where a dropped fact was needed again",
        ),
        reuse.cached_table(signs.KEPT),
        reuse.cached_table(audit_all.KEPT),
        reuse.cached_table(replay.KEPT),
        reuse.cached_table(replay.KEPT_TUNED),
    ),
    marks=(Mark(MARKS_TABLE, ("compaction_note",)),),
    settings=(CompactionSettings,),
)
