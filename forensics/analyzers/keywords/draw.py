"""Drawing the keywords' chart: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import figure, short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def terms(data: list[dict[str, Any]]) -> Figure:
    """Per conversation: ``conversation`` (label) and ``terms`` [[term, weight], ...]."""
    fig = figure(9.0, 1.9 * ((len(data) + 1) // 2) + 0.6)
    fig.clear()
    axes = fig.subplots((len(data) + 1) // 2, 2, squeeze=False).ravel()
    for ax, conv in zip(axes, data):
        ax.barh([t for t, _ in conv["terms"]][::-1], [w for _, w in conv["terms"]][::-1], color="#1f77b4")
        ax.set_title(short_label(conv["conversation"], 24), fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.tick_params(axis="x", labelsize=7)
    for ax in axes[len(data) :]:
        ax.set_visible(False)
    return fig
