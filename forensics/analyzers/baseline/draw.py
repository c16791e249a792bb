"""Drawing the baseline's charts: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import PALETTE, bytes_log_axis, figure, short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def roles(d: dict[str, list[Any]]) -> Figure:
    """``labels`` and a count per role and conversation: one bar per conversation, across, the longest first, so
    the chart grows down the page with the number of conversations and never wider than it (issue 47: a 1,280 px
    window shows all of it)."""
    n = len(d["labels"])
    fig = figure(8.0, max(2.4, 0.2 * n + 1.2))
    ax = fig.axes[0]
    labels = [short_label(x, 24) for x in d["labels"]]
    rows = list(range(n))
    left = [0] * n
    for role in ("user", "assistant", "tool"):
        ax.barh(rows, d[role], left=left, label=role, color=PALETTE[role])
        left = [b + v for b, v in zip(left, d[role])]
    ax.set_yticks(rows, labels, fontsize=7)
    ax.invert_yaxis()  # the first (longest) at the top
    ax.set_xlabel("messages")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def sizes(hist: dict[str, list[int]]) -> Figure:
    """``edges`` (lower bounds, bytes; -1 for the first bin) and ``counts``."""
    fig = figure()
    ax = fig.axes[0]
    edges = [max(e, 50) for e in hist["edges"]] + [hist["edges"][-1] * 4]
    ax.stairs(hist["counts"], edges, fill=True, color=PALETTE["tool"], alpha=0.8)
    ax.set_xscale("log")
    bytes_log_axis(ax.xaxis)
    for x, name in ((2000, "2 KB"), (10000, "10 KB")):
        ax.axvline(x, color="#d62728", linestyle="--", linewidth=1)
        ax.text(x, ax.get_ylim()[1] * 0.95, f" {name}", color="#d62728", fontsize=8, va="top")
    ax.set_xlabel("tool result size (UTF-8 bytes, log scale)")
    ax.set_ylabel("tool results")
    return fig


def context_share(role_chars: dict[str, int]) -> Figure:
    fig = figure(6.0, 1.9)
    ax = fig.axes[0]
    total = sum(role_chars.values()) or 1
    left = 0.0
    for role in ("system", "user", "assistant", "tool"):
        share = role_chars.get(role, 0) / total
        ax.barh([0], [share], left=left, color=PALETTE[role], label=f"{role} {share:.0%}")
        left += share
    ax.set_xlim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel("share of all message characters on the main paths")
    ax.legend(fontsize=8, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    return fig
