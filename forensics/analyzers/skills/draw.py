"""Drawing the skill routing chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from forensics.draw import figure, short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

ROUTING_COLORS = {"hits": "#2ca02c", "router_only": "#ff7f0e", "model_only": "#9467bd"}


def routing(rows: list[dict[str, Any]]) -> Figure:
    """Per skill: ``hits``, ``router_only`` (false fires) and ``model_only`` (misses), stacked."""
    fig = figure(8.0, max(2.2, 0.4 * len(rows) + 1.2))
    ax = fig.axes[0]
    ys = list(range(len(rows)))
    left = [0] * len(rows)
    for key, color in ROUTING_COLORS.items():
        vals = [r[key] for r in rows]
        ax.barh(ys, vals, left=left, color=color, label=key.replace("_", " "))
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(ys, [short_label(r["skill"], 24) for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("requests (hits: the router fired and the skill was loaded)")
    cast("MaxNLocator", ax.xaxis.get_major_locator()).set_params(integer=True)
    ax.legend(fontsize=8, ncols=3, loc="lower right")
    return fig
