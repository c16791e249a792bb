"""Drawing drift's chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import figure, short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SEVERITY_COLORS = {"none": "#eeeeee", "low": "#ffb74d", "high": "#d32f2f", "not computed": "#ffffff"}


def severity(d: dict[str, Any]) -> Figure:
    """``kinds`` (columns) and ``rows``: {conversation, <kind>: severity}."""
    from matplotlib.patches import Rectangle

    rows, kinds = d["rows"], d["kinds"]
    fig = figure(8.0, max(2.5, 0.28 * len(rows) + 1.4))
    ax = fig.axes[0]
    for i, r in enumerate(rows):
        for j, k in enumerate(kinds):
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=SEVERITY_COLORS[r[k]], edgecolor="#bdbdbd"))
    ax.set_xlim(0, len(kinds))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(kinds))], [k.replace("_", "\n") for k in kinds], fontsize=8)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [short_label(r["conversation"]) for r in rows], fontsize=8)
    return fig
