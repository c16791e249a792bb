"""The sentinel's tuner: ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.analyzers.tuner import Recommendation, TuneContext


def sentinel_window(t: TuneContext) -> list[Recommendation]:
    """compliance_window: the fewest false mutes among windows that leave no never-compliant model alarming; only
    over replies of conversations that ask for the sentinel (``sentinel.tables.asked``)."""
    from forensics.analyzers.sentinel import window_sweep
    from forensics.kernel.selection import SELECTED

    sweep = window_sweep(t.con, t.cfg, conversations=SELECTED).to_dicts()
    current = SentinelSettings.of(t.cfg).compliance_window
    if not t.con.execute(f"SELECT count(*) FROM sentinel_replies JOIN {SELECTED} USING (conversation_id)").fetchall()[
        0
    ][0]:
        return [
            Recommendation(
                "sentinel.compliance_window",
                current,
                current,
                f"the sentinel is not in use: no `{SentinelSettings.of(t.cfg).marker}` in any system prompt, "
                "injected text or reply of the harness's conversations",
            )
        ]
    if not sweep or all(r["muted_models"] == 0 and r["false_mutes"] == 0 and r["noise_models"] == 0 for r in sweep):
        return [
            Recommendation(
                "sentinel.compliance_window", current, current, "no judged replies carry evidence either way: kept"
            )
        ]
    # quiet first (no never-compliant model left unmuted), then fewest false mutes; among equals, the window
    # closest to the current one (no change without a reason)
    best = min(sweep, key=lambda r: (r["noise_models"], r["false_mutes"], abs(r["window"] - current), r["window"]))
    now = next((r for r in sweep if r["window"] == current), None)
    was = f" (now {now['false_mutes']} false mutes, {now['noise_models']} alarming)" if now else ""
    return [
        Recommendation(
            "sentinel.compliance_window",
            current,
            best["window"],
            f"window {best['window']}: {best['false_mutes']} false mutes, {best['noise_models']} never-compliant models "
            f"left alarming, {best['muted_models']} muted{was}",
            f"never-compliant models alarming {now['noise_models']} → {best['noise_models']}, false mutes "
            f"{now['false_mutes']} → {best['false_mutes']}"
            if now
            else "",
        )
    ]
