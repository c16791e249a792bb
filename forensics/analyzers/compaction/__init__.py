"""What compaction dropped: the audit of every logged compaction, and the replay of the harness's rule.

``rules`` reads ``[compaction]``; ``facts`` extracts the facts a context holds and where each is mentioned;
``load`` reads a batch of conversations; ``audit`` judges each logged compaction (kept, dropped, unjudged,
dropped and needed again); ``signs`` finds rediscovery (a not-found path, then a search); ``pairs`` keeps every
fact's needs in the warehouse; ``replay`` replays the rule over them and sweeps its settings. The compaction
analyzer reports all of it, drift type 3 reads its losses, `forensics tune` its sweep.
"""
from forensics.analyzers.compaction.section import FACTS_TABLE, NAME, REPLAY_TABLE, TITLE, audit_of, counted, run

__all__ = ["FACTS_TABLE", "NAME", "REPLAY_TABLE", "TITLE", "audit_of", "counted", "run"]
