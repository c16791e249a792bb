"""The compression rule's tuner: ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from forensics.analyzers.compression.settings import ToolResultSettings
from forensics.analyzers.tuner import Recommendation, TuneContext, pct

SWEEP_BYTES = (250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 10000, 15000, 20000)

SWEEP_SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def compression(t: TuneContext) -> list[Recommendation]:
    """summarize_bytes/summarize_share: the least aggressive setting (fewest results summarized) whose replay
    brings the tool share of context under ``target_tool_share``."""
    from forensics.analyzers.compression import sweep

    tr = ToolResultSettings.of(t.cfg)
    grid = sweep(t.con, SWEEP_BYTES, SWEEP_SHARES, tr.head_tail_lines, kept=t.cfg).to_dicts()
    if not grid or grid[0]["results"] == 0:
        return [
            Recommendation(f"tool_result.{k}", tr_v, tr_v, "no tool results in the warehouse: kept")
            for k, tr_v in (("summarize_bytes", tr.summarize_bytes), ("summarize_share", tr.summarize_share))
        ]
    ok = [g for g in grid if g["tool_share_after"] is not None and g["tool_share_after"] <= t.target_tool_share]
    pick = (
        min(ok, key=lambda g: (g["summarized"], -g["summarize_bytes"], -g["summarize_share"]))
        if ok
        else min(grid, key=lambda g: (g["tool_share_after"] or 1.0, g["summarized"]))
    )
    met = "meets" if ok else "cannot meet; the closest setting"
    evidence = (
        f"summarizes {pct(pick['summarized_share'])} of {pick['results']} results, cuts tool bytes "
        f"{pct(pick['tool_bytes_saved_share'])}, tool share of context {pct(pick['tool_share_before'])} → "
        f"{pct(pick['tool_share_after'])} ({met} the target {pct(t.target_tool_share)})"
    )
    effect = (
        f"tool share of context {pct(pick['tool_share_before'])} → {pct(pick['tool_share_after'])}, "
        f"{pct(pick['tool_bytes_saved_share'])} fewer tool bytes"
    )
    return [
        Recommendation("tool_result.summarize_bytes", tr.summarize_bytes, pick["summarize_bytes"], evidence, effect),
        Recommendation("tool_result.summarize_share", tr.summarize_share, pick["summarize_share"], evidence, effect),
    ]
