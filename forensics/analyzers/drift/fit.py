"""The [drift] detector thresholds, fitted on one kind of agent or not at all (issue 24: norms per agent).

The drift analyzer holds each conversation against its own kind's norm (``forensics.analyzers.drift.norms``:
the log format, a sub-agent apart), and uses the ``[drift]`` thresholds where a kind has none. ``[drift]`` holds
one value per key for every agent, so a value fitted over a warehouse of several kinds would be a pool of
unlike agents: a customer-service agent's one-record requests would set a coding agent's "wide". So:

- several kinds in the warehouse: nothing is recommended, one line says why (tune a warehouse of one kind);
- one kind with fewer than ``MIN_CONVERSATIONS`` conversations carrying the figure: the documented defaults
  (``forensics.config.SCHEMA``) are kept; a percentile of a handful of sessions is noise;
- otherwise high flags at most the worst k % of that kind's conversations, low 2k %, on the analyzer's own
  figures (its facts: what the assistant wrote against the tools' output, the person's continue-nags, the echo
  rate, a request's targets and widest round), with three guards: a count never drops below ``COUNT_FLOOR``
  (one "continue", one call, one target is no pattern), high lies strictly beyond low, and a value that flags
  nothing where the current one flags nothing either is no evidence to move it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import polars as pl

from forensics.analyzers.base import Context
from forensics.analyzers.drift import norms
from forensics.analyzers.drift.settings import DriftSettings

MIN_CONVERSATIONS = norms.MIN_VALUES  # conversations of the one kind before a percentile of them is a norm
COUNT_FLOOR = 2  # the least count threshold: a single continue, call or target is no pattern
KEYS = ("crowding_ratio", "echo_rate", "continue_nags", "dispersion_targets", "dispersion_parallel")
WHAT = {
    "crowding_ratio": "what the assistant wrote / the tools' output",
    "echo_rate": "echo rate",
    "continue_nags": "continue-nags from the person",
    "dispersion_targets": "distinct targets of one request",
    "dispersion_parallel": "calls that read in one message",
}


@dataclass
class Fitted:
    key: str  # "echo_rate_high", without the section
    current: Any
    recommended: Any
    evidence: str
    effect: str = ""


def kinds(ctx: Context) -> dict[str, str]:
    """conversation_id -> its kind of agent, as the drift analyzer reads it."""
    return {
        r["conversation_id"]: norms.kind_of(r["format"], r["sub_agent"])
        for r in ctx.fact("drift_kinds").iter_rows(named=True)
    }


def series(ctx: Context) -> dict[str, tuple[pl.Series, bool]]:
    """Per key, the analyzer's per-conversation figure (``below``: small values are the bad end)."""
    written = ctx.fact("drift_context").filter(pl.col("tool_chars") > 0)
    nags = ctx.fact("baseline").select("conversation_id").join(ctx.fact("drift_nags"), on="conversation_id", how="left")
    turns = (
        ctx.fact("tool_turns")
        .group_by("conversation_id")
        .agg(pl.col("distinct_targets").max(), pl.col("widest_round").max())
    )
    return {
        "crowding_ratio": ((written["written_chars"] / written["tool_chars"]), True),
        "echo_rate": (ctx.fact("baseline")["empty_assistant_share"], False),
        "continue_nags": (nags["nag_positions"].list.len().fill_null(0), False),
        "dispersion_targets": (turns["distinct_targets"], False),
        "dispersion_parallel": (turns["widest_round"], False),
    }


def fit(ctx: Context, d: DriftSettings, worst: float) -> list[Fitted]:
    """Every [drift] severity key: fitted where the warehouse is one kind of agent with enough conversations,
    else kept with the reason. ``worst``: the share high may flag (low: twice that)."""
    sizes = Counter(kinds(ctx).values())
    keys = [f"{k}_{lvl}" for k in KEYS for lvl in ("low", "high")]
    if len(sizes) != 1:
        listing = ", ".join(f"{k} {n}" for k, n in sizes.most_common())
        why = (
            (
                f"{len(sizes)} kinds of agent here ({listing}), and one [drift] value for all of them cannot fit "
                "them all (each kind is judged against its own runs); tune a warehouse of one kind to fit them"
            )
            if sizes
            else "no conversations: kept"
        )
        return [Fitted(k, getattr(d, k), getattr(d, k), why) for k in keys]
    ((kind, _),) = sizes.items()
    out: list[Fitted] = []
    for key, (col, below) in series(ctx).items():
        vals = sorted(col.drop_nulls().cast(pl.Float64).to_list())
        if len(vals) < MIN_CONVERSATIONS:
            why = (
                f"only {len(vals)} conversations of {kind} carry a figure for {WHAT[key]}, fewer than "
                f"{MIN_CONVERSATIONS}: the documented default is kept"
            )
            out += [
                Fitted(f"{key}_{lvl}", getattr(d, f"{key}_{lvl}"), getattr(d, f"{key}_{lvl}"), why)
                for lvl in ("low", "high")
            ]
            continue
        low = _one(key, "low", vals, min(2 * worst, 1.0), below, d, kind, None)
        out += [low, _one(key, "high", vals, worst, below, d, kind, low.recommended)]
    return out


def _one(key: str, lvl: str, vals: list[float], share: float, below: bool, d: Any, kind: str, low: Any) -> Fitted:
    current = getattr(d, f"{key}_{lvl}")
    real = isinstance(current, float)
    rec = _flag_at_most(vals, share, below, real)
    floors = []
    if not real and rec < COUNT_FLOOR:
        rec, floors = COUNT_FLOOR, [f"floored at {COUNT_FLOOR}: one event is no pattern"]
    if not real and low is not None and rec <= low:
        rec, floors = low + 1, floors + [f"raised to {low + 1}: high lies beyond low"]
    flagged, now = _flagged(vals, rec, below), _flagged(vals, current, below)
    name = f"{len(vals)} {kind} conversations"
    if flagged == 0 and now == 0:
        return Fitted(
            f"{key}_{lvl}",
            current,
            current,
            f"neither the fitted {rec!r} nor the current value flags any "
            f"of {name} by {WHAT[key]}: no evidence to move it, kept",
        )
    extra = f"; {', '.join(floors)}" if floors else ""
    return Fitted(
        f"{key}_{lvl}",
        current,
        rec,
        f"flags {flagged} of {name} ({lvl}: at most the worst {share:.0%}, by {'lowest' if below else 'highest'}"
        f" {WHAT[key]}){extra}",
        f"{key.replace('_', ' ')} crosses {lvl} in {flagged} conversations, not {now}",
    )


def _flagged(vals: list[float], at: float, below: bool) -> int:
    return sum(1 for v in vals if (v <= at if below else v >= at))


def _flag_at_most(vals: list[float], share: float, below: bool, real: bool) -> float | int:
    """The threshold that flags at most ``share`` of ``vals`` (ascending), at the worst end."""
    budget = int(share * len(vals))
    step = 1e-3 if real else 1
    if below:  # value <= threshold is flagged
        cut = vals[budget - 1] if budget else vals[0] - step
        while budget and sum(v <= cut for v in vals) > budget:  # ties at the cut would flag too many
            cut = max([v for v in vals if v < cut], default=vals[0] - step)
        return round(cut, 3) if real else int(cut)
    cut = vals[len(vals) - budget] if budget else vals[-1] + step
    while sum(v >= cut for v in vals) > budget:
        cut = min([v for v in vals if v > cut], default=vals[-1] + step)
    return round(cut, 3) if real else int(cut)
