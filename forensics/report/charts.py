"""matplotlib, off-screen: figures are drawn from section data and turned into PNG bytes."""
from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PALETTE = {"system": "#9e9e9e", "user": "#1f77b4", "assistant": "#2ca02c", "tool": "#ff7f0e"}


def figure(width: float = 8.0, height: float = 3.6) -> Figure:
    """A new figure without pyplot (no global state, no display backend)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    fig.add_subplot()
    return fig


def png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def short_label(s: str | None, n: int = 14) -> str:
    s = s or "?"
    return s if len(s) <= n else s[: n - 1] + "…"
