"""Drawing the retrieval sweep's chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def retrieval_sweep(rows: list[dict[str, Any]]) -> Figure:
    """One panel per key of the rows (key, value, recall_at_k, mrr, current): recall@k (solid) and MRR (dashed)
    over its values, the config's value marked."""
    fig = figure(9.0, 2.6)
    fig.delaxes(fig.axes[0])
    keys = list(dict.fromkeys(r["key"] for r in rows))
    axes = fig.subplots(1, len(keys), sharey=True, squeeze=False)[0]
    for ax, key in zip(axes, keys):
        part = [r for r in rows if r["key"] == key]
        x = [r["value"] for r in part]
        ax.plot(x, [r["recall_at_k"] for r in part], marker="o", color="#1f77b4", label="recall@k")
        ax.plot(x, [r["mrr"] for r in part], marker="s", linestyle="--", color="#2ca02c", label="MRR")
        for r in part:
            if r["current"]:
                ax.axvline(r["value"], color="#9e9e9e", linewidth=1)
        ax.set_xlabel(key, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=8, loc="lower left")
    return fig
