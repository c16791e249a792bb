"""Drawing the sentinel's charts: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from forensics.draw import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

STATUS_COLORS = {"healthy": "#2ca02c", "mutated": "#ff7f0e", "missing": "#d62728"}
MODEL_COLORS = ["#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e"]
MAX_PANELS = 8


def status_over_turns(d: dict[str, Any]) -> Figure:
    """One panel per model (``labels`` name it with its state): the share of healthy / mutated / missing replies
    per turn bin of ``by_turn``."""
    by_turn, labels = d["by_turn"], d["labels"]
    models = list(by_turn["models"].items())[:MAX_PANELS]
    fig = figure(8.0, 1.2 + 1.5 * len(models))
    fig.delaxes(fig.axes[0])
    axes = fig.subplots(len(models), 1, sharex=True, squeeze=False)[:, 0]
    starts, width = by_turn["turn_starts"], by_turn["bin_width"]
    for ax, (key, cells) in zip(axes, models):
        totals = [sum(cells[s][i] for s in STATUS_COLORS) for i in range(len(starts))]
        bottom = [0.0] * len(starts)
        for status, color in STATUS_COLORS.items():
            share = [c / t if t else 0.0 for c, t in zip(cells[status], totals)]
            ax.bar(starts, share, width=0.9 * width, bottom=bottom, align="edge", color=color, label=status)
            bottom = [b + v for b, v in zip(bottom, share)]
        ax.set_ylim(0, 1)
        ax.set_ylabel(labels.get(key, key), fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=8, ncols=3, loc="lower left", bbox_to_anchor=(0, 1.02))
    axes[-1].set_xlabel(f"turn (user messages since the start; bins of {width})")
    return fig


def onset_by_context(hist: dict[str, Any]) -> Figure:
    """Degraded conversations by estimated context tokens at onset (``edges``), stacked per model (``counts``)."""
    fig = figure()
    ax = fig.axes[0]
    edges = hist["edges"]
    labels = [f"{a // 1000}k–{b // 1000}k" for a, b in zip(edges, edges[1:])] + [f"≥{edges[-1] // 1000}k"]
    bottom = [0] * len(labels)
    for i, (key, counts) in enumerate(hist["counts"].items()):
        ax.bar(labels, counts, bottom=bottom, label=key, color=MODEL_COLORS[i % len(MODEL_COLORS)])
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_xlabel("estimated context at onset (characters / 4, tokens)")
    ax.set_ylabel("degraded conversations")
    cast("MaxNLocator", ax.yaxis.get_major_locator()).set_params(integer=True)
    ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    if hist["counts"]:
        ax.legend(fontsize=8)
    return fig
