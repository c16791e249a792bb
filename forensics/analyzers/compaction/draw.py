"""Drawing the compaction audit's chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def compaction_sweep(d: dict[str, Any]) -> Figure:
    """``points`` (max_tokens, keep_recent, outside_window, needed_after_compaction) and ``current`` (the
    configured setting): one line per max_tokens, how many needs fall outside the kept window."""
    fig = figure()
    ax = fig.axes[0]
    points, cur = d["points"], d["current"]
    keeps = sorted({p["keep_recent"] for p in points})
    x = {k: i for i, k in enumerate(keeps)}  # evenly spaced: the sweep's values, not a scale
    for m in sorted({p["max_tokens"] for p in points}):
        row = sorted((p for p in points if p["max_tokens"] == m), key=lambda p: p["keep_recent"])
        ax.plot(
            [x[p["keep_recent"]] for p in row],
            [p["outside_window"] for p in row],
            marker="o",
            label=f"max_tokens {m // 1000}k",
        )
    here = next(
        (p for p in points if p["max_tokens"] == cur["max_tokens"] and p["keep_recent"] == cur["keep_recent"]), None
    )
    if here is not None:
        ax.plot(
            [x[here["keep_recent"]]],
            [here["outside_window"]],
            marker="*",
            markersize=14,
            color="#d62728",
            linestyle="none",
            label="configured",
        )
    ax.set_xticks(range(len(keeps)), [str(k) for k in keeps])
    ax.set_xlabel("keep_recent (messages kept verbatim after a compaction)")
    ax.set_ylabel("needs outside the kept window")
    ax.legend(fontsize=8, ncols=2)
    return fig
