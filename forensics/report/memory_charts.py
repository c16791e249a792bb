"""The decision-memory section's chart, drawn from its ``sweep`` table (the analyzer returns only the table)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from forensics.analyzers.base import Chart, Section
from forensics.report.charts import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def charts(sec: Section) -> list[Chart]:
    sweep = next((t.df for t in sec.tables if t.name == "sweep"), None)
    if sweep is None or sweep.is_empty():
        return []
    k = int(sec.metrics["retrieval"]["top_k"])
    return [Chart("retrieval_sweep", f"Retrieval sweep: recall@{k} and MRR, one key varied at a time",
                  lambda: sweep_chart(sweep))]


def sweep_chart(sweep: pl.DataFrame) -> Figure:
    """One panel per key: recall@k (solid) and MRR (dashed) over its values, the config's value marked."""
    fig = figure(9.0, 2.6)
    fig.delaxes(fig.axes[0])
    keys = list(dict.fromkeys(sweep["key"].to_list()))
    axes = fig.subplots(1, len(keys), sharey=True, squeeze=False)[0]
    for ax, key in zip(axes, keys):
        part = sweep.filter(pl.col("key") == key)
        x = part["value"].to_list()
        ax.plot(x, part["recall_at_k"].to_list(), marker="o", color="#1f77b4", label="recall@k")
        ax.plot(x, part["mrr"].to_list(), marker="s", linestyle="--", color="#2ca02c", label="MRR")
        for v in part.filter(pl.col("current"))["value"].to_list():
            ax.axvline(v, color="#9e9e9e", linewidth=1)
        ax.set_xlabel(key, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7, loc="lower left")
    return fig
