"""The drawing kit: matplotlib, off-screen, to SVG whose text stays text: the reader's browser draws every glyph
(Chinese too), so the machine that writes the report needs no CJK font and matplotlib has nothing to warn about.

An analyzer's chart drawers (its ``draw`` module, named by its declaration's ``charts``) draw with this kit; the
report and the explorer turn their figures into SVG with it. It and the analyzers' ``draw`` modules are the only
modules below the report that may import matplotlib (the import contracts in pyproject.toml), and only inside
functions: importing them starts no matplotlib."""

from __future__ import annotations

import importlib.util
import io
import re
import warnings
from collections.abc import Callable
from functools import cache, lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

# a chart's drawer: the data of its ``Chart`` -> a figure
Drawer = Callable[[Any], "Figure"]
# matplotlib and its fonts, images and solvers are ~100 MB: the ``charts`` extra, which `make demo` installs
MISSING = "No charts drawn: matplotlib is not installed (pip install 'forensics[charts]')."


def available() -> bool:
    """Whether matplotlib can be imported (the ``charts`` extra): without it a report has every section but no chart."""
    return importlib.util.find_spec("matplotlib") is not None


PALETTE = {"system": "#9e9e9e", "user": "#1f77b4", "assistant": "#2ca02c", "tool": "#ff7f0e"}
# used, when installed, only to measure Chinese labels for the layout (the browser draws them with its own fonts)
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
)
# matplotlib lays text out with its own fonts; without a CJK one it warns once per missing glyph, although the SVG
# keeps the characters as text for the browser to draw
_MISSING_GLYPH = r"Glyph \d+ .* missing from font"


@lru_cache(maxsize=1)
def _style() -> None:
    import matplotlib
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",  # <text> elements, not glyph outlines
            "svg.hashsalt": "forensics",  # stable ids: the same data draws the same file
            # labels come from the logs (model names, titles): "$\\x$" is text, not mathtext
            "text.parse_math": False,
            "font.family": ["DejaVu Sans", *[f for f in CJK_FONTS if f in installed], "sans-serif"],
        }
    )


def figure(width: float = 8.0, height: float = 3.6) -> Figure:
    """A new figure without pyplot (no display backend)."""
    from matplotlib.figure import Figure

    _style()
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    fig.add_subplot()
    return fig


def bytes_log_axis(axis: Axis) -> None:
    """A log-scale axis of byte sizes labelled as text ("1 KB"), not as mathtext: ``text.parse_math`` is off, so
    matplotlib's default "$\\mathdefault{10^{3}}$" labels would print as written."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def label(x: float, _: object) -> str:
        for unit, size in (("MB", 1e6), ("KB", 1e3)):
            if x >= size:
                return f"{x / size:g} {unit}"
        return f"{x:g} B"

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


def svg(fig: Figure) -> str:
    """The figure as a standalone SVG document (no date, no creator: the same chart gives the same bytes)."""
    buf = io.StringIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _MISSING_GLYPH, UserWarning)
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return buf.getvalue()


def drawn(drawer: Drawer, data: Any) -> str:
    """The SVG of the chart ``drawer`` draws of ``data``."""
    return svg(drawer(data))


def drawn_at(path: str, name: str, data: Any) -> str:
    """The SVG the drawer ``name`` of the drawing module at ``path`` draws of ``data``, the module loaded from its file
    alone: the process that draws a report's charts beside it calls this, so that it imports matplotlib and this kit
    but not the analyzer whose ``draw`` module it is (its package would bring polars, SciPy, DuckDB: 1.5 s and 90 MB
    more). An analyzer's drawing module imports only this kit, so it runs the same either way."""
    return svg(getattr(_drawing_module(path), name)(data))


@cache
def _drawing_module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_forensics_drawing_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the smallest chart text a reader gets, in CSS px: a chart shrinks with a narrow page (max-width: 100%) down to the
# width at which its smallest text is this size, and its box scrolls sideways below that (report.css)
LEGIBLE_PX = 10.0


def inline(doc: str) -> str:
    """A standalone SVG made fit to sit inside an HTML page: no XML prolog or DTD, no namespace URLs (the HTML
    parser puts inline <svg> and xlink:href in their namespaces itself), and a minimum width that keeps its
    smallest text at ``LEGIBLE_PX`` however narrow the page."""
    body = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", doc[doc.index("<svg") :], count=2)
    view = re.search(r'viewBox="0 0 ([\d.]+) [\d.]+"', body)
    sizes = [float(x) for x in re.findall(r"font-size: ([\d.]+)px", body)]
    if not view or not sizes:
        return body
    least = round(float(view.group(1)) * LEGIBLE_PX / min(sizes))  # text is in viewBox units: it scales with width
    return body.replace("<svg ", f'<svg style="min-width:{least}px" ', 1)


def short_label(s: str | None, n: int = 14) -> str:
    s = s or "?"
    return s if len(s) <= n else s[: n - 1] + "…"
