"""The report's and the explorer's charts: an analyzer's are drawn by the drawers its declaration holds
(``Analyzer.charts``, in the analyzer's ``draw`` module); the comparison's own chart (before / after) is here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics.draw import Drawer, figure
from forensics.kernel.errors import ForensicsError

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def drawer(section: str, name: str) -> Drawer:
    """The drawer of the chart ``name`` of the analyzer ``section``, as its declaration holds it."""
    from forensics import analyzers

    found = (analyzers.load(section).charts or {}).get(name)
    if found is None:
        raise ForensicsError(f"analyzer {section} declares no drawer for its chart {name!r}")
    return found


def draw(section: str, name: str, data: Any) -> Figure:
    """The chart ``name`` of the analyzer ``section``, drawn by the drawer its declaration holds."""
    return drawer(section, name)(data)


# ------------------------------------------------------------------------------------------- comparison
def before_after(rows: list[tuple[str, float | None, float | None, float | None]], before: str, after: str) -> Figure:
    """The shares and rates of a comparison (and the figures the analyzers declare ``compared``), before and after,
    as paired bars."""
    from forensics import analyzers

    shown = analyzers.compared()
    rows = [
        r
        for r in rows
        if r[1] is not None
        and r[2] is not None
        and (r[0] in shown or r[0].endswith("_share") or r[0].endswith("_rate"))
    ][:12]
    fig = figure(8.0, max(2.5, 0.45 * len(rows) + 1))
    ax = fig.axes[0]
    ys = list(range(len(rows)))
    ax.barh([y + 0.2 for y in ys], [r[1] or 0.0 for r in rows], height=0.4, label=before, color="#9e9e9e")
    ax.barh([y - 0.2 for y in ys], [r[2] or 0.0 for r in rows], height=0.4, label=after, color="#1f77b4")
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    return fig
