"""Drift type 3, compaction topic loss (docs/definitions.md#drift-phenomena), read from the compaction audit (``forensics.analyzers.compaction``).

Three kinds of episode, each about what happened, never what a harness would have done:
- **dropped, then needed** (the audit's severity): a logged compaction dropped a fact (in neither its summary
  nor the kept messages) and the conversation needed it again: re-read, searched again, the user repeating a
  constraint, an error recurring, a question it answered;
- **not found, then search** (high): the assistant reached for a path that is not there and searched for it
  (``forensics.analyzers.compaction.signs``) and no logged compaction's dropped fact explains it: counted after a
  logged compaction, or in a log of the seed harness (``UNLOGGED``), which compacts without marking it;
- **re-read beyond the budget** (low), only in a log of the seed harness: a file read again after more than
  ``compaction.max_tokens`` estimated tokens (chars/4) since its previous read: that harness compacts at this
  budget and logs nothing, so the first read had been summarised away.
An agent that logs its compactions (Claude Code, Codex, Gemini CLI, ...) and logged none did not compact: a
re-read or a search there is no compaction's loss, and type 3 says nothing.
"""

from __future__ import annotations

from typing import Any

from forensics.analyzers.base import Context
from forensics.analyzers.compaction import pairs
from forensics.analyzers.compaction.section import audit_of
from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.compaction.signs import SUMMARY_TEXT
from forensics.analyzers.drift.norms import SEED_FORMATS

UNLOGGED = SEED_FORMATS  # the seed harness compacts at [compaction] max_tokens and logs nothing of it


def episodes(ctx: Context) -> list[dict[str, Any]]:
    """Type-3 episodes of the selection: conversation_id, sign, severity, at, positions, detail,
    compaction_position (the last logged compaction before it, or None), compaction_logged."""
    a = audit_of(ctx)
    seed = {
        cid
        for (cid,) in ctx.con.execute(
            "SELECT conversation_id FROM conversations JOIN sel_conversations USING (conversation_id) JOIN sources "
            f"USING (source_id) WHERE format IN ({', '.join(repr(f) for f in UNLOGGED)})"
        ).fetchall()
    }
    out: list[dict[str, Any]] = []
    explained: set[tuple[str, int]] = set()
    for r in a.rows:
        if r.lost:
            explained.update((r.conversation_id, p) for p in r.evidence)
            out.append(
                {
                    "conversation_id": r.conversation_id,
                    "sign": "dropped_then_needed",
                    "severity": r.severity,
                    "at": r.needed_at,
                    "positions": sorted({r.fact_position, r.event_position, r.needed_at, *r.evidence}),
                    "detail": f"{r.kind} {r.fact}: {r.need}",
                    "compaction_position": r.event_position,
                    "compaction_logged": True,
                }
            )
    for cid, signs in a.signs.items():
        out += [
            {**s, "sign": "not_found_then_search", "severity": "high"}
            for s in signs
            if not explained.intersection((cid, p) for p in s["positions"])
            and (s["compaction_position"] is not None or cid in seed)
        ]
    logged = {e.conversation_id for e in a.events}
    for cid, first, need, fact, marked in ctx.con.execute(
        f"""
            WITH sizes AS (
                SELECT conversation_id, position,
                       sum(content_chars) OVER (PARTITION BY conversation_id ORDER BY position) AS chars_upto
                FROM messages JOIN sel_conversations USING (conversation_id) WHERE on_main_path)
            SELECT p.conversation_id, p.first, p.need, p.fact,
                   EXISTS (SELECT 1 FROM events e WHERE e.conversation_id = p.conversation_id
                           AND e.kind IN ('compaction', 'summary') AND e.position IS NOT NULL)
                   OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = p.conversation_id AND m.on_main_path
                              AND m.role = 'system' AND m.position > 0 AND regexp_matches(m.content, ?))
            FROM {pairs.TABLE} p JOIN sel_conversations USING (conversation_id)
            JOIN sizes a ON a.conversation_id = p.conversation_id AND a.position = p.first
            JOIN sizes b ON b.conversation_id = p.conversation_id AND b.position = p.need
            WHERE p.reread AND (b.chars_upto - a.chars_upto) / 4 > ?
            ORDER BY 1, 3""",
        [SUMMARY_TEXT, int(CompactionSettings.of(ctx.cfg).max_tokens)],
    ).fetchall():
        if cid not in logged and cid in seed:
            out.append(
                {
                    "conversation_id": cid,
                    "sign": "reread_after_compaction_budget",
                    "severity": "low",
                    "at": need,
                    "positions": [first, need],
                    "detail": fact,
                    "compaction_position": None,
                    "compaction_logged": marked,
                }
            )
    return sorted(out, key=lambda e: (e["conversation_id"], e["at"]))
