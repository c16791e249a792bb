"""Drawing the topic timeline: from the data its ``Chart`` holds, with the kit of ``forensics.draw`` (the analysis
never draws; the report and the explorer call these through the declaration's ``charts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TOPIC_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]


def timeline(data: list[dict[str, Any]]) -> Figure:
    """Per conversation: ``label``, ``segments`` (start, end, topic, keywords) and ``markers`` (positions)."""
    fig = figure(9.0, 0.7 * len(data) + 1.2)
    ax = fig.axes[0]
    for row, conv in enumerate(data):
        y = len(data) - 1 - row
        colors: dict[str, str] = {}
        for start, end, topic, kw in conv["segments"]:
            c = colors.setdefault(topic, TOPIC_COLORS[len(colors) % len(TOPIC_COLORS)])
            ax.barh(y, end - start, left=start, height=0.6, color=c, edgecolor="white")
            ax.text(start + 0.3, y, " ".join([topic, *kw]), va="center", fontsize=8, clip_on=True)
        for p in conv["markers"]:
            ax.plot([p, p], [y - 0.4, y + 0.4], color="#d62728", linewidth=1.5)
    ax.set_yticks(range(len(data)), [c["label"] for c in reversed(data)], fontsize=8)
    ax.set_xlabel("message position on the main path (red: switch marker)")
    return fig
