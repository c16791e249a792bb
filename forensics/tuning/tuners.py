"""The tuners, one per tunable family; each sweeps the warehouse with the analyzer that owns the metric."""
from __future__ import annotations

from forensics.tuning import Recommendation, TuneContext, tuner


@tuner
def sentinel_window(t: TuneContext) -> list[Recommendation]:
    """compliance_window: the fewest false mutes among windows that leave no never-compliant model alarming."""
    from forensics.analyzers.sentinel import window_sweep

    sweep = window_sweep(t.con, t.cfg).to_dicts()
    current = t.cfg.sentinel.compliance_window
    if not sweep or all(r["muted_models"] == 0 and r["false_mutes"] == 0 and r["noise_models"] == 0 for r in sweep):
        return [Recommendation("sentinel.compliance_window", current, current,
                               "no judged replies carry evidence either way: kept")]
    # quiet first (no never-compliant model left unmuted), then fewest false mutes; among equals, the window
    # closest to the current one (no change without a reason)
    best = min(sweep, key=lambda r: (r["noise_models"], r["false_mutes"], abs(r["window"] - current), r["window"]))
    now = next((r for r in sweep if r["window"] == current), None)
    was = f" (now {now['false_mutes']} false mutes, {now['noise_models']} alarming)" if now else ""
    return [Recommendation(
        "sentinel.compliance_window", current, best["window"],
        f"window {best['window']}: {best['false_mutes']} false mutes, {best['noise_models']} never-compliant models "
        f"left alarming, {best['muted_models']} muted{was}")]
