"""Drawing the compression replay's chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import bytes_log_axis, figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def sweep(d: dict[str, Any]) -> Figure:
    """``points`` (summarize_bytes, summarize_share, tool_share_after) and ``before`` (the share without)."""
    fig = figure()
    ax = fig.axes[0]
    points = d["points"]
    for s in sorted({p["summarize_share"] for p in points}):
        row = [p for p in points if p["summarize_share"] == s and p["tool_share_after"] is not None]
        ax.plot(
            [p["summarize_bytes"] for p in row],
            [p["tool_share_after"] for p in row],
            marker="o",
            label=f"summarize_share {s:g}",
        )
    if d["before"] is not None:
        ax.axhline(d["before"], color="#9e9e9e", linestyle="--", linewidth=1)
        ax.text(ax.get_xlim()[0], d["before"], " without compression", color="#616161", fontsize=8, va="bottom")
    ax.set_xscale("log")
    bytes_log_axis(ax.xaxis)
    ax.set_xlabel("summarize_bytes (log scale)")
    ax.set_ylabel("tool share of context")
    ax.legend(fontsize=8)
    return fig
