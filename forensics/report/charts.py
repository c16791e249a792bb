"""matplotlib, off-screen: figures are drawn from section data and turned into PNG bytes."""
from __future__ import annotations

import io
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
             "PingFang SC", "Microsoft YaHei", "SimHei")
PALETTE = {"system": "#9e9e9e", "user": "#1f77b4", "assistant": "#2ca02c", "tool": "#ff7f0e"}


@lru_cache(maxsize=1)
def _fonts() -> None:
    """Han characters draw as boxes in DejaVu Sans: fall back, glyph by glyph, to an installed CJK font."""
    import matplotlib
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", *[f for f in CJK_FONTS if f in installed]]


def figure(width: float = 8.0, height: float = 3.6) -> Figure:
    """A new figure without pyplot (no display backend), fonts able to draw Chinese when the system has one."""
    from matplotlib.figure import Figure

    _fonts()
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
