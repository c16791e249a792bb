"""The tuners, one per tunable family; each sweeps the warehouse with the analyzer that owns the metric."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from forensics.tuning import Recommendation, TuneContext, tuner


@tuner(analyzer="sentinel")
def sentinel_window(t: TuneContext) -> list[Recommendation]:
    """compliance_window: the fewest false mutes among windows that leave no never-compliant model alarming."""
    from forensics.analyzers.sentinel import window_sweep

    sweep = window_sweep(t.con, t.cfg).to_dicts()
    current = t.cfg.sentinel.compliance_window
    if not sweep or all(r["muted_models"] == 0 and r["false_mutes"] == 0 and r["noise_models"] == 0 for r in sweep):
        return [Recommendation("sentinel.compliance_window", current, current,
                               "no judged replies carry evidence either way: kept")]
    # quiet first (no never-compliant model left unmuted), then fewest false mutes; among equals, the window
    # closest to the current one (no change without a reason)
    best = min(sweep, key=lambda r: (r["noise_models"], r["false_mutes"], abs(r["window"] - current), r["window"]))
    now = next((r for r in sweep if r["window"] == current), None)
    was = f" (now {now['false_mutes']} false mutes, {now['noise_models']} alarming)" if now else ""
    return [Recommendation(
        "sentinel.compliance_window", current, best["window"],
        f"window {best['window']}: {best['false_mutes']} false mutes, {best['noise_models']} never-compliant models "
        f"left alarming, {best['muted_models']} muted{was}",
        f"never-compliant models alarming {now['noise_models']} → {best['noise_models']}, false mutes "
        f"{now['false_mutes']} → {best['false_mutes']}" if now else "")]


SWEEP_BYTES = (250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 10000, 15000, 20000)
SWEEP_SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


@tuner(analyzer="compression")
def compression(t: TuneContext) -> list[Recommendation]:
    """summarize_bytes/summarize_share: the least aggressive setting (fewest results summarized) whose replay
    brings the tool share of context under ``target_tool_share``."""
    from forensics.analyzers.compression import sweep

    tr = t.cfg.tool_result
    grid = sweep(t.con, SWEEP_BYTES, SWEEP_SHARES, tr.head_tail_lines).to_dicts()
    if not grid or grid[0]["results"] == 0:
        return [Recommendation(f"tool_result.{k}", tr_v, tr_v, "no tool results in the warehouse: kept")
                for k, tr_v in (("summarize_bytes", tr.summarize_bytes), ("summarize_share", tr.summarize_share))]
    ok = [g for g in grid if g["tool_share_after"] is not None and g["tool_share_after"] <= t.target_tool_share]
    pick = (min(ok, key=lambda g: (g["summarized"], -g["summarize_bytes"], -g["summarize_share"])) if ok
            else min(grid, key=lambda g: (g["tool_share_after"] or 1.0, g["summarized"])))
    met = "meets" if ok else "cannot meet; the closest setting"
    evidence = (f"summarizes {_pct(pick['summarized_share'])} of {pick['results']} results, cuts tool bytes "
                f"{_pct(pick['tool_bytes_saved_share'])}, tool share of context {_pct(pick['tool_share_before'])} → "
                f"{_pct(pick['tool_share_after'])} ({met} the target {_pct(t.target_tool_share)})")
    effect = (f"tool share of context {_pct(pick['tool_share_before'])} → {_pct(pick['tool_share_after'])}, "
              f"{_pct(pick['tool_bytes_saved_share'])} fewer tool bytes")
    return [Recommendation("tool_result.summarize_bytes", tr.summarize_bytes, pick["summarize_bytes"], evidence, effect),
            Recommendation("tool_result.summarize_share", tr.summarize_share, pick["summarize_share"], evidence,
                           effect)]


MIN_CONVERSATIONS = 10  # fewer than this and a percentile says nothing


@tuner(analyzer="drift")
def drift(t: TuneContext) -> list[Recommendation]:
    """[drift] thresholds from the corpus distribution: high flags the worst k % of conversations, low 2k %."""
    from forensics.queries import load_query
    from forensics.warehouse import frame

    base = frame(t.con, load_query("baseline").sql)
    turns = frame(t.con, f"SELECT conversation_id, max(distinct_targets) AS targets, max(widest_round) AS widest "
                         f"FROM ({load_query('tool_turns').sql}) GROUP BY 1")
    d = t.cfg.drift
    n = base.height
    keys = ["crowding_ratio", "echo_rate", "continue_nags", "dispersion_targets", "dispersion_parallel"]
    if n < MIN_CONVERSATIONS:
        return [Recommendation(f"drift.{k}_{lvl}", getattr(d, f"{k}_{lvl}"), getattr(d, f"{k}_{lvl}"),
                               f"only {n} conversations; a percentile of so few says nothing: kept")
                for k in keys for lvl in ("low", "high")]
    k = t.worst_pct / 100
    series = {"crowding_ratio": (base["asst_tool_ratio"], True), "echo_rate": (base["empty_assistant_share"], False),
              "continue_nags": (base["continue_nags"], False), "dispersion_targets": (turns["targets"], False),
              "dispersion_parallel": (turns["widest"], False)}
    out = []
    for key, (col, below) in series.items():
        vals = col.drop_nulls().cast(float)
        if vals.len() < MIN_CONVERSATIONS:
            continue
        for lvl, share in (("high", k), ("low", min(2 * k, 1.0))):
            current = getattr(d, f"{key}_{lvl}")
            rec = _flag_at_most(sorted(vals.to_list()), share, below, isinstance(current, float))
            flagged = int((vals <= rec).sum() if below else (vals >= rec).sum())
            now = int((vals <= current).sum() if below else (vals >= current).sum())
            out.append(Recommendation(f"drift.{key}_{lvl}", current, rec,
                                      f"flags {flagged} of {vals.len()} conversations ({lvl}: at most the worst "
                                      f"{_pct(share)}, by {'lowest' if below else 'highest'} {key.replace('_', ' ')})",
                                      f"{key.replace('_', ' ')} crosses {lvl} in {flagged} conversations, not {now}"))
    return out


CONFIDENCES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
SWITCH_SCORES = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))  # 0.10 .. 0.90: every fitted anchor well inside


@tuner(analyzer="topics")
def topic_confidence(t: TuneContext) -> list[Recommendation]:
    """topic.min_confidence: with labels, the best F1 whose precision is credibly ``min_precision``; without,
    the value whose marker rate is closest to ``marker_rate`` (and the evidence says no labels were used)."""
    current = t.cfg.topic.min_confidence
    judged = _judged(t)  # topics and confidences do not depend on min_confidence: one pass
    n = sum(len(v) for v in judged.values())
    if n == 0:
        return [Recommendation("topic.min_confidence", current, current, "no judged messages: kept")]

    def markers(c: float) -> dict[str, set[int]]:
        return {k: {b[0] for a, b in zip(v, v[1:]) if a[1] and b[1] and a[1] != b[1] and a[2] is not None
                    and b[2] is not None and a[2] >= c and b[2] >= c} for k, v in judged.items()}

    refs = _references(t, judged)
    if refs:
        return [_best_on_labels(t, "topic.min_confidence", current, CONFIDENCES, refs, markers)]
    rate = {c: sum(map(len, markers(c).values())) / n for c in CONFIDENCES}
    best = min(CONFIDENCES, key=lambda c: (abs(rate[c] - t.marker_rate), abs(c - current)))
    return [Recommendation("topic.min_confidence", current, best,
                           f"no labels used: {rate[best] * 100:.1f} markers per 100 judged messages, closest to the "
                           f"stated rate {t.marker_rate * 100:.1f} (pass --labels to tune on precision and F1)")]


@tuner(analyzer="topics")
def topic_switch_score(t: TuneContext) -> list[Recommendation]:
    """The judging mode's switch-score threshold, its operating point: with labels, the best F1 whose precision is
    credibly ``min_precision``, each candidate judged anew (the terms come from the message_terms cache, so a pass
    is inference only). Without labels there is nothing to fit it on: the fitted default is kept."""
    from dataclasses import replace

    from forensics.analyzers import topics

    key = topics.threshold_key(t.cfg)
    current = t.cfg[key]
    if not t.labels:
        return [Recommendation(key, current, current, "no labels: kept (pass --labels to fit the operating point "
                                                      "on your own labeled conversations)")]
    marked: dict[float, dict[str, set[int]]] = {}
    for x in [*sorted(set(SWITCH_SCORES) - {current}), current]:  # current last: the tables end as the config has them
        judged = _judged(t, replace(t.analysis, cfg=t.cfg.with_values(**{key.replace(".", "__"): x})))
        marked[x] = {k: {p for p, _, _, m in v if m} for k, v in judged.items()}
    refs = _references(t, judged)  # which messages are judged does not depend on the threshold
    if not refs:
        return [Recommendation(key, current, current, "no labeled conversation is in the warehouse: kept")]
    return [_best_on_labels(t, key, current, tuple(sorted(marked)), refs, marked.__getitem__)]


def _judged(t: TuneContext, analysis: Any = None) -> dict[str, list[tuple[int, str | None, float | None, bool]]]:
    """Run the topic analyzer (with ``analysis``'s config, default the current one); per conversation (native
    id, as labels name them), its judged messages as (position, topic, confidence, marker)."""
    from forensics.analyzers import topics
    from forensics.warehouse import frame

    if analysis is not None or not t.topics_fresh:
        topics.run(analysis or t.analysis)
    rows = frame(t.con, "SELECT c.native_id, m.position, m.topic, m.confidence, m.marker FROM message_topics m "
                        "JOIN conversations c USING (conversation_id) ORDER BY m.conversation_id, m.position")
    judged: dict[str, list[tuple[int, str | None, float | None, bool]]] = {}
    for native, *row in rows.iter_rows():
        judged.setdefault(native, []).append(tuple(row))
    return judged


def _references(t: TuneContext, judged: dict[str, list[tuple]]) -> list[Any]:
    """The labeled conversations that are in the warehouse, as references over their judged positions."""
    from forensics.analyzers.topics.evaluate import reference
    from forensics.analyzers.topics.labels import read_labels

    if not t.labels:
        return []
    shifts = read_labels(t.labels).shifts
    return [reference(k, [row[0] for row in judged[k]], s) for k, s in shifts.items() if judged.get(k)]


def _best_on_labels(t: TuneContext, key: str, current: float, candidates: tuple[float, ...], refs: list[Any],
                    markers: Callable[[float], dict[str, set[int]]]) -> Recommendation:
    """The candidate with the best F1 among those credibly at least ``min_precision`` precise (else the most
    credibly precise); ties go to the value closest to the current one. Credibly: the precision's 95 % lower
    bound, so two markers with one hit do not pass a floor of 0.5 (they did, on KdConv, at recall 0.01)."""
    from forensics.analyzers.topics.evaluate import score

    sc = {c: score(refs, markers(c)) for c in candidates}
    low = {c: _lower_bound(sc[c].precision, sc[c].predicted) for c in candidates}
    ok = [c for c in candidates if low[c] >= t.min_precision]
    best = (max(ok, key=lambda c: (sc[c].f1, -abs(c - current))) if ok
            else max(candidates, key=lambda c: (low[c], -abs(c - current))))
    s = sc[best]
    now = score(refs, markers(current)) if current not in sc else sc[current]
    met = "" if ok else f"; no value is credibly {t.min_precision:.2f} precise, the most credible one"
    return Recommendation(key, current, best, f"against {len(refs)} labeled conversations: precision "
                          f"{s.precision:.2f} (≥ {low[best]:.2f} at 95 %), recall {s.recall:.2f}, F1 {s.f1:.2f} "
                          f"(now {now.f1:.2f}){met}")


def _lower_bound(p: float, n: int, z: float = 1.645) -> float:
    """Wilson's one-sided 95 % lower bound of a precision ``p`` measured on ``n`` markers (0 with none)."""
    if n == 0:
        return 0.0
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def _flag_at_most(vals: list[float], share: float, below: bool, real: bool) -> float | int:
    """The threshold that flags at most ``share`` of ``vals`` (ascending), at the worst end."""
    budget = int(share * len(vals))
    if below:  # value <= threshold is flagged
        cut = vals[budget - 1] if budget else vals[0] - (1e-3 if real else 1)
        while budget and sum(v <= cut for v in vals) > budget:  # ties at the cut would flag too many
            cut = max([v for v in vals if v < cut], default=vals[0] - (1e-3 if real else 1))
        return round(cut, 3) if real else int(cut)
    cut = vals[len(vals) - budget] if budget else vals[-1] + (1e-3 if real else 1)
    while sum(v >= cut for v in vals) > budget:
        cut = min([v for v in vals if v > cut], default=vals[-1] + (1e-3 if real else 1))
    return round(cut, 3) if real else int(cut)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"
