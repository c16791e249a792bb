"""The compaction tuner: ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.tuner import Recommendation, TuneContext, pct

TUNE_KEEPS = (0, 2, 5, 10, 15, 20, 30, 50, 80)


def compaction(t: TuneContext) -> list[Recommendation]:
    """keep_recent: the fewest messages kept that leave at most ``max_outside_share`` of the needs after a replayed
    compaction to the summary alone, among settings whose kept messages fit in max_tokens; max_tokens is kept (a
    window the model allows is not in the warehouse) and its evidence says what a smaller or larger one does."""
    from forensics.analyzers.compaction import replay
    from forensics.analyzers.compaction.audit_all import fill_pairs
    from forensics.analyzers.compaction.section import counted

    c = CompactionSettings.of(t.cfg)
    m0, k0 = int(c.max_tokens), int(c.keep_recent)
    fill_pairs(t.con, t.cfg)  # what the report has not extracted yet (every conversation is tuned over)
    settings = replay.grid(m0, k0, TUNE_KEEPS, ()) + [(m0 // 2, k0), (m0 * 2, k0)]
    points = {
        (p.max_tokens, p.keep_recent): p.figures()
        for p in replay.sweep(t.con, settings, int(c.summary_tokens), kept=(replay.KEPT_TUNED, t.cfg))[0]
    }
    now = points[(m0, k0)]
    if not any(p["needed_after_compaction"] for (m, _), p in points.items() if m == m0):
        why = (
            f"the replay at max_tokens {m0} compacts {now['compactions']} times and no fact is needed again after "
            "a compaction: kept"
        )
        return [
            Recommendation("compaction.keep_recent", k0, k0, why),
            Recommendation("compaction.max_tokens", m0, m0, why),
        ]
    fits = sorted(
        (p for (m, _), p in points.items() if m == m0 and p["overflows"] <= 0.01 * max(p["compactions"], 1)),
        key=lambda p: p["keep_recent"],
    )
    ok = [p for p in fits if p["outside_share"] is not None and p["outside_share"] <= t.max_outside_share]
    pick = ok[0] if ok else min(fits or [now], key=lambda p: (p["outside_share"] or 0, abs(p["keep_recent"] - k0)))
    met = "" if ok else f"; no setting that fits meets {pct(t.max_outside_share)}, the lowest share"
    keep = Recommendation(
        "compaction.keep_recent",
        k0,
        pick["keep_recent"],
        f"keep_recent {pick['keep_recent']} at max_tokens {m0}: {pick['outside_window']} of the "
        f"{pick['needed_after_compaction']} needs after a replayed compaction ({pct(pick['outside_share'])}) concern a "
        f"fact outside the kept window (now {now['outside_window']} of {now['needed_after_compaction']}, "
        f"{pct(now['outside_share'])}); mean context {pick['mean_context_tokens']:,.0f} tokens (now "
        f"{now['mean_context_tokens']:,.0f}){met}",
        f"needs left to the summary alone {now['outside_window']} → {pick['outside_window']}, mean context "
        f"{_signed(pick['mean_context_tokens'] / now['mean_context_tokens'] - 1)}",
    )
    around = [m for m in sorted({m for m, _ in points}) if m != m0]
    lower, higher = max((m for m in around if m < m0), default=None), min((m for m in around if m > m0), default=None)
    sides = "; ".join(
        f"at {m}: {counted(points[(m, k0)]['compactions'], 'compaction')}, "
        f"{counted(points[(m, k0)]['outside_window'], 'need')} outside the window"
        for m in (lower, higher)
        if m is not None
    )
    window = Recommendation(
        "compaction.max_tokens",
        m0,
        m0,
        f"kept: the warehouse cannot tell what context your model allows; now "
        f"{counted(now['compactions'], 'replayed compaction')}, "
        f"{counted(now['outside_window'], 'need')} outside the window ({sides})",
    )
    return [keep, window]


def _signed(x: float) -> str:
    return f"{x:+.0%}"
