"""Every chart the report and the explorer draw, one function per (section, chart name), from the data the
analyzer put in its ``Chart`` (analyzers never draw). Each analyzer's declaration names its charts' functions here
(``Analyzer.charts``, ``"forensics.report.figures:roles"``); a plug-in analyzer names its own."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from forensics.kernel.errors import ForensicsError
from forensics.report.charts import PALETTE, bytes_log_axis, figure, short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

Drawer = Callable[[Any], "Figure"]


def reference(section: str, name: str) -> str:
    """The drawer of the chart ``name`` of the analyzer ``section``: the function its declaration names
    (``Analyzer.charts``: a reference, ``"module:function"``, since analyzers never import this layer)."""
    from forensics import analyzers

    ref = (analyzers.load(section).charts or {}).get(name)
    if ref is None:
        raise ForensicsError(f"analyzer {section} declares no drawer for its chart {name!r}")
    return ref


def draw(section: str, name: str, data: Any) -> Figure:
    """The chart ``name`` of the analyzer ``section``, drawn by the function its declaration names."""
    from forensics.analyzers.declare import resolve

    drawer: Drawer = resolve(reference(section, name))
    return drawer(data)


# ------------------------------------------------------------------------------------------- baseline
def roles(d: dict[str, list[Any]]) -> Figure:
    """``labels`` and a count per role and conversation."""
    fig = figure(max(6.0, 0.45 * len(d["labels"]) + 2))
    ax = fig.axes[0]
    labels = [short_label(x) for x in d["labels"]]
    bottom = [0] * len(labels)
    for role in ("user", "assistant", "tool"):
        ax.bar(labels, d[role], bottom=bottom, label=role, color=PALETTE[role])
        bottom = [b + v for b, v in zip(bottom, d[role])]
    ax.set_ylabel("messages")
    ax.tick_params(axis="x", labelrotation=60, labelsize=7)
    ax.legend(fontsize=8)
    return fig


def sizes(hist: dict[str, list[int]]) -> Figure:
    """``edges`` (lower bounds, bytes; -1 for the first bin) and ``counts``."""
    fig = figure()
    ax = fig.axes[0]
    edges = [max(e, 50) for e in hist["edges"]] + [hist["edges"][-1] * 4]
    ax.stairs(hist["counts"], edges, fill=True, color=PALETTE["tool"], alpha=0.8)
    ax.set_xscale("log")
    bytes_log_axis(ax.xaxis)
    for x, name in ((2000, "2 KB"), (10000, "10 KB")):
        ax.axvline(x, color="#d62728", linestyle="--", linewidth=1)
        ax.text(x, ax.get_ylim()[1] * 0.95, f" {name}", color="#d62728", fontsize=8, va="top")
    ax.set_xlabel("tool result size (UTF-8 bytes, log scale)")
    ax.set_ylabel("tool results")
    return fig


def context_share(role_chars: dict[str, int]) -> Figure:
    fig = figure(6.0, 1.9)
    ax = fig.axes[0]
    total = sum(role_chars.values()) or 1
    left = 0.0
    for role in ("system", "user", "assistant", "tool"):
        share = role_chars.get(role, 0) / total
        ax.barh([0], [share], left=left, color=PALETTE[role], label=f"{role} {share:.0%}")
        left += share
    ax.set_xlim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel("share of all message characters on the main paths")
    ax.legend(fontsize=8, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    return fig


# ------------------------------------------------------------------------------------------- keywords
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
    for ax in axes[len(data):]:
        ax.set_visible(False)
    return fig


# ------------------------------------------------------------------------------------------- compression
def sweep(d: dict[str, Any]) -> Figure:
    """``points`` (summarize_bytes, summarize_share, tool_share_after) and ``before`` (the share without)."""
    fig = figure()
    ax = fig.axes[0]
    points = d["points"]
    for s in sorted({p["summarize_share"] for p in points}):
        row = [p for p in points if p["summarize_share"] == s and p["tool_share_after"] is not None]
        ax.plot([p["summarize_bytes"] for p in row], [p["tool_share_after"] for p in row], marker="o",
                label=f"summarize_share {s:g}")
    if d["before"] is not None:
        ax.axhline(d["before"], color="#9e9e9e", linestyle="--", linewidth=1)
        ax.text(ax.get_xlim()[0], d["before"], " without compression", color="#616161", fontsize=8, va="bottom")
    ax.set_xscale("log")
    bytes_log_axis(ax.xaxis)
    ax.set_xlabel("summarize_bytes (log scale)")
    ax.set_ylabel("tool share of context")
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------------------------- compaction
def compaction_sweep(d: dict[str, Any]) -> Figure:
    """``points`` (max_tokens, keep_recent, outside_window, needed_after_compaction) and ``current`` (the
    configured setting): one line per max_tokens, how many needs fall outside the kept window."""
    fig = figure()
    ax = fig.axes[0]
    points, cur = d["points"], d["current"]
    keeps = sorted({p["keep_recent"] for p in points})
    x = {k: i for i, k in enumerate(keeps)}  # evenly spaced: the sweep's values, not a scale
    for m in sorted({p["max_tokens"] for p in points}):
        row = sorted((p for p in points if p["max_tokens"] == m), key=lambda p: p["keep_recent"])
        ax.plot([x[p["keep_recent"]] for p in row], [p["outside_window"] for p in row], marker="o",
                label=f"max_tokens {m // 1000}k")
    here = next((p for p in points if p["max_tokens"] == cur["max_tokens"] and p["keep_recent"] == cur["keep_recent"]),
                None)
    if here is not None:
        ax.plot([x[here["keep_recent"]]], [here["outside_window"]], marker="*", markersize=14, color="#d62728",
                linestyle="none", label="configured")
    ax.set_xticks(range(len(keeps)), [str(k) for k in keeps])
    ax.set_xlabel("keep_recent (messages kept verbatim after a compaction)")
    ax.set_ylabel("needs outside the kept window")
    ax.legend(fontsize=8, ncols=2)
    return fig


# ------------------------------------------------------------------------------------------- drift
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


# ------------------------------------------------------------------------------------------- topics
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


# ------------------------------------------------------------------------------------------- sentinel
STATUS_COLORS = {"healthy": "#2ca02c", "mutated": "#ff7f0e", "missing": "#d62728"}
MODEL_COLORS = ["#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e"]
MAX_PANELS = 8


def status_over_turns(d: dict[str, Any]) -> Figure:
    """One panel per model (``labels`` name it with its state): the share of healthy / mutated / missing replies
    per turn bin of ``by_turn``."""
    by_turn, labels = d["by_turn"], d["labels"]
    models = list(by_turn["models"].items())[:MAX_PANELS]
    fig = figure(8.0, 1.2 + 1.5 * len(models))
    fig.delaxes(fig.axes[0])
    axes = fig.subplots(len(models), 1, sharex=True, squeeze=False)[:, 0]
    starts, width = by_turn["turn_starts"], by_turn["bin_width"]
    for ax, (key, cells) in zip(axes, models):
        totals = [sum(cells[s][i] for s in STATUS_COLORS) for i in range(len(starts))]
        bottom = [0.0] * len(starts)
        for status, color in STATUS_COLORS.items():
            share = [c / t if t else 0.0 for c, t in zip(cells[status], totals)]
            ax.bar(starts, share, width=0.9 * width, bottom=bottom, align="edge", color=color, label=status)
            bottom = [b + v for b, v in zip(bottom, share)]
        ax.set_ylim(0, 1)
        ax.set_ylabel(labels.get(key, key), fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=8, ncols=3, loc="lower left", bbox_to_anchor=(0, 1.02))
    axes[-1].set_xlabel(f"turn (user messages since the start; bins of {width})")
    return fig


def onset_by_context(hist: dict[str, Any]) -> Figure:
    """Degraded conversations by estimated context tokens at onset (``edges``), stacked per model (``counts``)."""
    fig = figure()
    ax = fig.axes[0]
    edges = hist["edges"]
    labels = [f"{a // 1000}k–{b // 1000}k" for a, b in zip(edges, edges[1:])] + [f"≥{edges[-1] // 1000}k"]
    bottom = [0] * len(labels)
    for i, (key, counts) in enumerate(hist["counts"].items()):
        ax.bar(labels, counts, bottom=bottom, label=key, color=MODEL_COLORS[i % len(MODEL_COLORS)])
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_xlabel("estimated context at onset (characters / 4, tokens)")
    ax.set_ylabel("degraded conversations")
    cast("MaxNLocator", ax.yaxis.get_major_locator()).set_params(integer=True)
    ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    if hist["counts"]:
        ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------------------------- skills
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


# ------------------------------------------------------------------------------------------- memory
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


# ------------------------------------------------------------------------------------------- comparison
BEFORE_AFTER_KEYS = ["baseline.means.empty_assistant_share", "baseline.means.short_user_share",
                     "baseline.means.asst_tool_ratio"]


def before_after(rows: list[tuple[str, float | None, float | None, float | None]], before: str,
                 after: str) -> Figure:
    """The shares and rates of a comparison, before and after, as paired bars."""
    rows = [r for r in rows if r[1] is not None and r[2] is not None and (
        r[0] in BEFORE_AFTER_KEYS or r[0].endswith("_share") or r[0].endswith("_rate"))][:12]
    fig = figure(8.0, max(2.5, 0.45 * len(rows) + 1))
    ax = fig.axes[0]
    ys = list(range(len(rows)))
    ax.barh([y + 0.2 for y in ys], [r[1] or 0.0 for r in rows], height=0.4, label=before, color="#9e9e9e")
    ax.barh([y - 0.2 for y in ys], [r[2] or 0.0 for r in rows], height=0.4, label=after, color="#1f77b4")
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    return fig
