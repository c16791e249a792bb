"""The report section: which models comply, where each degraded conversation started, and whether the
sentinel warned before the user or a tool did (docs/definitions.md#sentinel-compliance). Model states come from the whole history; every
count is restricted to the selection."""

from __future__ import annotations

import math
from typing import Any, cast

import polars as pl

from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.analyzers.sentinel.state import OUTCOMES
from forensics.analyzers.sentinel.sweep import window_sweep
from forensics.analyzers.sentinel.tables import build_tables
from forensics.analyzers.sentinel.verdict import STATUSES, Sentinel

NAME = "sentinel"
TITLE = "Sentinel compliance"
FACTS = ("sentinel_judged", "sentinel_turns", "sentinel_failures")  # what run() reads (``analyzers.facts``)
ONSET_EDGES = [0, 2_000, 5_000, 10_000, 20_000, 40_000, 60_000, 80_000, 100_000, 150_000, 200_000]  # + overflow
TURN_BINS = 20  # status-over-turns resolution
MAX_FINDINGS = 20  # degraded conversations listed as findings; all of them are in metrics and the table
FAILURE_KINDS = ("tool_error", "correction", "continue_nag")


def run(ctx: Context) -> Section:
    if not SentinelSettings.of(ctx.cfg).enabled:
        return Section(NAME, TITLE, "Sentinel analysis is off (`[sentinel] enabled = false`).", {"enabled": False})
    sentinel = Sentinel.from_config(ctx.cfg)
    window = SentinelSettings.of(ctx.cfg).compliance_window
    build_tables(ctx.con, ctx.cfg, ctx.facts)
    sweep = window_sweep(ctx.con, rebuild=False)
    replies = ctx.df("SELECT r.* FROM sentinel_replies r JOIN sel_conversations USING (conversation_id)")
    if not replies.height:
        anywhere = ctx.con.execute("SELECT count(*) FROM sentinel_replies").fetchall()[0][0]
        return Section.idle(
            NAME,
            TITLE,
            "no conversation of the selection asks for the sentinel"
            if anywhere
            else f"no `{sentinel.marker}` in any system prompt, injected text or reply of the "
            f"{ctx.selected} conversations: no model was asked for the sentinel",
        )
    states = ctx.df("SELECT * FROM sentinel_models")
    convs = ctx.df(
        "SELECT s.* FROM sentinel_conversations s JOIN sel_conversations USING "
        "(conversation_id) JOIN conversations c USING (conversation_id) WHERE s.judged > 0 "
        "ORDER BY c.created_at NULLS LAST, s.native_id, s.conversation_id"
    )
    models = _models(replies, states)
    degraded = convs.filter(pl.col("degraded"))
    compliant_keys = [k for k, m in models.items() if m["known_compliant"] and not m["muted"]]
    compliant_convs = convs.filter(pl.col("compliance_key").is_in(compliant_keys)).height
    by_turn = _status_by_turn(replies)
    labels = {k: f"{k}\n({_state_text(m).split(' (')[0]})" for k, m in models.items()}
    onset_hist = _onset_histogram(degraded)
    metrics: dict[str, Any] = {
        "enabled": True,
        "sentinel_line": sentinel.line,
        "compliance_window": window,
        "judged_replies": replies.height,
        "status_counts": _counts(replies["status"], STATUSES),
        "outcome_counts": _counts(replies["outcome"], OUTCOMES),
        "models": models,
        "conversations_judged": convs.height,
        "conversations_compliant": compliant_convs,
        "degraded_conversations": degraded.height,
        "degraded_share": degraded.height / compliant_convs if compliant_convs else None,
        "onset": {
            "turn_median": _median(degraded["onset_turn"]),
            "context_tokens_median": _median(degraded["onset_context_tokens"]),
            "context_tokens_histogram": onset_hist,
        },
        "lead": _lead(degraded),
        "degraded": {r["conversation_id"]: _degraded_row(r) for r in degraded.iter_rows(named=True)},
        "window_sweep": sweep.to_dicts(),
        "status_by_turn": by_turn,
    }
    sec = Section(NAME, TITLE, metrics=metrics)
    sec.summary = _summary(metrics)
    sec.tables = [
        Table("sentinel_models", "Compliance per model (state over the whole history)", _model_table(models)),
        Table(
            "sentinel_degraded",
            "Degraded conversations: onset and lead over visible failure",
            _degraded_table(degraded, ctx.names),
        ),
        Table("sentinel_window_sweep", "compliance_window sweep (whole history)", sweep),
    ]
    sec.findings = _findings(degraded, models, window)
    sec.charts = [
        Chart("status_over_turns", "Sentinel status over turns per model", {"by_turn": by_turn, "labels": labels}),
        Chart("onset_by_context", "Degradation onset by estimated context size", onset_hist),
    ]
    return sec


def _counts(col: pl.Series, names: tuple[str, ...]) -> dict[str, int]:
    vc = dict(col.value_counts().iter_rows())
    return {n: int(vc.get(n, 0)) for n in names}


def _median(col: pl.Series) -> float | None:
    vals = col.drop_nulls()
    return float(cast(float, vals.median())) if len(vals) else None


def _models(replies: pl.DataFrame, states: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """Per compliance key with replies in the selection: counts here, state from the whole history."""
    out: dict[str, dict[str, Any]] = {}
    state = {r["compliance_key"]: r for r in states.iter_rows(named=True)}
    for key in sorted(replies["compliance_key"].unique().to_list(), key=lambda k: (-state[k]["judged"], k)):
        r = replies.filter(pl.col("compliance_key") == key)
        st = state[key]
        counts = _counts(r["status"], STATUSES)
        drift = r["drifted"].drop_nulls().value_counts(sort=True).sort(["count", "drifted"], descending=[True, False])
        out[key] = {
            "provider": st["provider"],
            "model": st["model"],
            "conversations": r["conversation_id"].n_unique(),
            "judged": r.height,
            **counts,
            "healthy_share": counts["healthy"] / r.height,
            "drifted": dict(zip(drift["drifted"].to_list(), drift["count"].to_list())),
            "known_compliant": st["known_compliant"],
            "muted": st["muted"],
            "muted_since": st["muted_since"].isoformat() if st["muted_since"] else None,
            "muted_at": (
                {
                    "conversation_id": st["muted_conversation_id"],
                    "native_id": st["muted_native_id"],
                    "position": st["muted_position"],
                }
                if st["muted"]
                else None
            ),
            "healthy_after_mute": st["healthy_after_mute"],
            "false_mute": st["false_mute"],
            "degraded_conversations": int(r.filter(pl.col("outcome") == "alarm").height),
        }
    return out


def _lead(degraded: pl.DataFrame) -> dict[str, Any]:
    """Did the sentinel fail before anything a user could see? (the seed's leading-indicator claim)"""
    n = degraded.height
    first = degraded.filter(pl.col("sentinel_first"))
    led = first.filter(pl.col("failure_position").is_not_null())
    followed = degraded.filter(pl.col("failure_position").is_not_null())
    return {
        "degraded": n,
        "sentinel_first": first.height,
        "sentinel_first_share": first.height / n if n else None,
        "led": led.height,
        "failure_first": n - first.height,
        "no_failure_after": n - followed.height,
        "median_lead_turns": _median(led["lead_turns"]),
        "median_lead_turns_all": _median(followed["lead_turns"]),
        "first_failure_after": _counts(followed["failure_kind"], FAILURE_KINDS),
        # background rate check: visible failures per turn before and after onset (turns up to and after it)
        "failures_per_turn_before": _rate(degraded["failures_before"].sum(), degraded["onset_turn"].sum()),
        "failures_per_turn_after": _rate(
            degraded["failures_after"].sum(), (degraded["turns"] - degraded["onset_turn"]).sum()
        ),
    }


def _rate(num: Any, den: Any) -> float | None:
    """A sum over a sum (polars sums: int, float or None)."""
    return float(num) / float(den) if den else None


def _degraded_row(r: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "native_id",
        "compliance_key",
        "onset_position",
        "onset_turn",
        "onset_context_tokens",
        "onset_status",
        "onset_drifted",
        "failure_before_position",
        "failure_before_kind",
        "failure_position",
        "failure_kind",
        "lead_turns",
        "lead_messages",
        "failures_before",
        "failures_after",
        "sentinel_first",
    )
    return {k: r[k] for k in keys}


def _status_by_turn(replies: pl.DataFrame) -> dict[str, Any]:
    """Status counts per model per turn bin (bins of equal width up to the longest conversation)."""
    top = int(cast(int, replies["turn"].max()) or 1) if replies.height else 1
    width = max(1, math.ceil(top / TURN_BINS))
    starts = list(range(1, top + 1, width))
    binned = replies.with_columns(((pl.col("turn").clip(1) - 1) // width).alias("bin"))
    models: dict[str, dict[str, list[int]]] = {}
    for key in sorted(binned["compliance_key"].unique().to_list()):
        g = binned.filter(pl.col("compliance_key") == key).group_by("bin", "status").len()
        cells = {(b, s): n for b, s, n in g.iter_rows()}
        models[key] = {s: [int(cells.get((i, s), 0)) for i in range(len(starts))] for s in STATUSES}
    return {"bin_width": width, "turn_starts": starts, "models": models}


def _onset_histogram(degraded: pl.DataFrame) -> dict[str, Any]:
    edges = ONSET_EDGES
    counts: dict[str, list[int]] = {}
    for key, tokens in (
        degraded.group_by("compliance_key").agg(pl.col("onset_context_tokens")).sort("compliance_key").iter_rows()
    ):
        row = [0] * len(edges)
        for t in tokens:
            row[sum(t >= e for e in edges) - 1] += 1
        counts[key] = row
    return {"edges": edges, "counts": counts}


def _state_text(m: dict[str, Any]) -> str:
    if m["muted"]:
        at = m["muted_at"]
        return f"muted since {(m['muted_since'] or '?')[:10]} ({at['native_id']} [{at['position']}])"
    return "known compliant" if m["known_compliant"] else "unknown (window not spent)"


def _model_table(models: dict[str, dict[str, Any]]) -> pl.DataFrame:
    rows = [
        {
            "model": k,
            "judged": m["judged"],
            "healthy": m["healthy"],
            "mutated": m["mutated"],
            "missing": m["missing"],
            "healthy %": round(100 * m["healthy_share"], 1),
            "drifted (top)": ", ".join(f"{s} {n}" for s, n in list(m["drifted"].items())[:3]),
            "state": _state_text(m),
            "false mute": "yes" if m["false_mute"] else "",
            "degraded / conversations": f"{m['degraded_conversations']}/{m['conversations']}",
        }
        for k, m in models.items()
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame({"model": []}, schema={"model": pl.String})


def _at(kind: str | None, pos: int | None) -> str:
    return "–" if pos is None else f"{kind} [{pos}]"


def _degraded_table(degraded: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    rows = [
        {
            "conversation": names[r["conversation_id"]],
            "model": r["compliance_key"],
            "onset": f"[{r['onset_position']}]",
            "turn": r["onset_turn"],
            "~tokens": r["onset_context_tokens"],
            "verdict": r["onset_status"] + (f": {r['onset_drifted']}" if r["onset_drifted"] else ""),
            "failure before": _at(r["failure_before_kind"], r["failure_before_position"]),
            "first failure after": _at(r["failure_kind"], r["failure_position"]),
            "lead (turns)": r["lead_turns"],
        }
        for r in degraded.iter_rows(named=True)
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame({"conversation": []}, schema={"conversation": pl.String})


def _findings(degraded: pl.DataFrame, models: dict[str, dict[str, Any]], window: int) -> list[Finding]:
    out = []
    for key, m in models.items():
        if m["false_mute"]:
            at = m["muted_at"]
            out.append(
                Finding(
                    "sentinel_false_mute",
                    "low",
                    at["conversation_id"],
                    at["native_id"],
                    [at["position"]],
                    f"{key} was muted here after {window} judged replies without a Healthy one, yet "
                    f"produced {m['healthy_after_mute']} Healthy replies later: its degradations go "
                    "unreported",
                    f"compliance_window {window}; see the window sweep",
                )
            )
    rule = f"first non-Healthy final reply of a known-compliant model (compliance_window {window})"
    ranked = degraded.with_columns((pl.col("sentinel_first") & pl.col("failure_position").is_not_null()).alias("led"))
    for r in ranked.sort(["led", "onset_turn"], descending=[True, False]).head(MAX_FINDINGS).iter_rows(named=True):
        verdict = r["onset_status"] + (f" ({r['onset_drifted']})" if r["onset_drifted"] else "")
        after = (
            "no visible failure followed"
            if r["failure_position"] is None
            else f"first visible failure after it: {r['failure_kind']} at [{r['failure_position']}], "
            f"{r['lead_turns']} turn(s) later"
        )
        before = (
            ""
            if r["failure_before_position"] is None
            else f"; a {r['failure_before_kind']} at [{r['failure_before_position']}] came first"
        )
        positions = [r["onset_position"]] + ([r["failure_position"]] if r["failure_position"] is not None else [])
        out.append(
            Finding(
                "sentinel_degraded",
                "high" if r["led"] else "low",
                r["conversation_id"],
                r["native_id"],
                positions,
                f"{r['compliance_key']} sentinel {verdict} at turn {r['onset_turn']} "
                f"(~{r['onset_context_tokens']} tokens); {after}{before}",
                rule,
            )
        )
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _summary(m: dict[str, Any]) -> str:
    sc, models, lead = m["status_counts"], m["models"], m["lead"]
    compliant = [k for k, v in models.items() if v["known_compliant"] and not v["muted"]]
    muted = [k for k, v in models.items() if v["muted"]]
    text = (
        f"{m['judged_replies']} final replies judged for `{m['sentinel_line']}`: {sc['healthy']} healthy, "
        f"{sc['mutated']} mutated, {sc['missing']} missing. Known compliant: {', '.join(compliant) or 'none'}; "
        f"muted (no Healthy reply in their first {m['compliance_window']}): {', '.join(muted) or 'none'}. "
    )
    if not compliant:
        return text + "No model ever complied, so the probe stays silent and nothing degrades."
    text += (
        f"{m['degraded_conversations']} of {m['conversations_compliant']} conversations by compliant models "
        f"degraded ({_pct(m['degraded_share'])})"
    )
    if lead["degraded"]:
        text += (
            f", median onset at turn {m['onset']['turn_median']:g}, ~{m['onset']['context_tokens_median']:,.0f} "
            f"tokens. The sentinel failed before any visible failure (tool error, correction, continue-nag) in "
            f"{lead['sentinel_first']} of {lead['degraded']} ({_pct(lead['sentinel_first_share'])})"
        )
        if lead["median_lead_turns"] is not None:
            text += f"; where a failure followed, it came a median {lead['median_lead_turns']:g} turn(s) later"
        if lead["median_lead_turns_all"] is not None:
            text += (
                f". In all degraded conversations, the next visible failure after onset came a median "
                f"{lead['median_lead_turns_all']:g} turn(s) later"
            )
        if lead["failures_per_turn_before"] is not None and lead["failures_per_turn_after"] is not None:
            text += (
                f". Visible failures per turn: {lead['failures_per_turn_before']:.2f} before onset, "
                f"{lead['failures_per_turn_after']:.2f} after"
            )
    return text + "."
