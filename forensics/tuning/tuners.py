"""The tuners, one per tunable family; each sweeps the warehouse with the analyzer that owns the metric. The analyzer
declares its tuners by reference (``Analyzer.tuners``, ``"forensics.tuning.tuners:compression"``) with the keys each
fits; nothing here registers itself."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from forensics.tuning import Recommendation, TuneContext


def sentinel_window(t: TuneContext) -> list[Recommendation]:
    """compliance_window: the fewest false mutes among windows that leave no never-compliant model alarming; only
    over replies of conversations that ask for the sentinel (``sentinel.tables.asked``)."""
    from forensics.analyzers.sentinel import window_sweep
    from forensics.kernel.selection import SELECTED

    sweep = window_sweep(t.con, t.cfg, conversations=SELECTED).to_dicts()
    current = t.cfg.sentinel.compliance_window
    if not t.con.execute(f"SELECT count(*) FROM sentinel_replies JOIN {SELECTED} USING (conversation_id)").fetchall()[0][0]:
        return [Recommendation("sentinel.compliance_window", current, current,
                               f"the sentinel is not in use: no `{t.cfg.sentinel.marker}` in any system prompt, "
                               "injected text or reply of the harness's conversations")]
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


def drift(t: TuneContext) -> list[Recommendation]:
    """[drift] thresholds fitted on one kind of agent (``forensics.tuning.drift``), on facts read afresh over every
    conversation (a harness tuner before may have read them over its own logs only)."""
    from dataclasses import replace

    from forensics.tuning.drift import fit

    return [Recommendation(f"drift.{r.key}", r.current, r.recommended, r.evidence, r.effect)
            for r in fit(replace(t.analysis, facts=None, memo={}), t.cfg.drift, t.worst_pct / 100)]


CONFIDENCES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
SWITCH_SCORES = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))  # 0.10 .. 0.90: every fitted anchor well inside


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
                        "JOIN conversations c USING (conversation_id) JOIN sel_conversations USING (conversation_id) "
                        "ORDER BY m.conversation_id, m.position")
    judged: dict[str, list[tuple[int, str | None, float | None, bool]]] = {}
    for native, *row in rows.iter_rows():
        judged.setdefault(native, []).append(tuple(row))
    return judged


def _references(t: TuneContext, judged: dict[str, list[tuple[int, str | None, float | None, bool]]]) -> list[Any]:
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


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


TUNE_KEEPS = (0, 2, 5, 10, 15, 20, 30, 50, 80)


def compaction(t: TuneContext) -> list[Recommendation]:
    """keep_recent: the fewest messages kept that leave at most ``max_outside_share`` of the needs after a replayed
    compaction to the summary alone, among settings whose kept messages fit in max_tokens; max_tokens is kept (a
    window the model allows is not in the warehouse) and its evidence says what a smaller or larger one does."""
    from forensics.analyzers.compaction import replay
    from forensics.analyzers.compaction.audit_all import fill_pairs
    from forensics.analyzers.compaction.section import counted

    c = t.cfg.compaction
    m0, k0 = int(c.max_tokens), int(c.keep_recent)
    fill_pairs(t.con, t.cfg)  # what the report has not extracted yet (every conversation is tuned over)
    settings = replay.grid(m0, k0, TUNE_KEEPS, ()) + [(m0 // 2, k0), (m0 * 2, k0)]
    points = {(p.max_tokens, p.keep_recent): p.figures()
              for p in replay.sweep(t.con, settings, int(c.summary_tokens))[0]}
    now = points[(m0, k0)]
    if not any(p["needed_after_compaction"] for (m, _), p in points.items() if m == m0):
        why = (f"the replay at max_tokens {m0} compacts {now['compactions']} times and no fact is needed again after "
               "a compaction: kept")
        return [Recommendation("compaction.keep_recent", k0, k0, why), Recommendation("compaction.max_tokens", m0, m0, why)]
    fits = sorted((p for (m, _), p in points.items() if m == m0 and p["overflows"] <= 0.01 * max(p["compactions"], 1)),
                  key=lambda p: p["keep_recent"])
    ok = [p for p in fits if p["outside_share"] is not None and p["outside_share"] <= t.max_outside_share]
    pick = ok[0] if ok else min(fits or [now], key=lambda p: (p["outside_share"] or 0, abs(p["keep_recent"] - k0)))
    met = "" if ok else f"; no setting that fits meets {_pct(t.max_outside_share)}, the lowest share"
    keep = Recommendation(
        "compaction.keep_recent", k0, pick["keep_recent"],
        f"keep_recent {pick['keep_recent']} at max_tokens {m0}: {pick['outside_window']} of the "
        f"{pick['needed_after_compaction']} needs after a replayed compaction ({_pct(pick['outside_share'])}) concern a "
        f"fact outside the kept window (now {now['outside_window']} of {now['needed_after_compaction']}, "
        f"{_pct(now['outside_share'])}); mean context {pick['mean_context_tokens']:,.0f} tokens (now "
        f"{now['mean_context_tokens']:,.0f}){met}",
        f"needs left to the summary alone {now['outside_window']} → {pick['outside_window']}, mean context "
        f"{_signed(pick['mean_context_tokens'] / now['mean_context_tokens'] - 1)}")
    around = [m for m in sorted({m for m, _ in points}) if m != m0]
    lower, higher = max((m for m in around if m < m0), default=None), min((m for m in around if m > m0), default=None)
    sides = "; ".join(f"at {m}: {counted(points[(m, k0)]['compactions'], 'compaction')}, "
                      f"{counted(points[(m, k0)]['outside_window'], 'need')} outside the window"
                      for m in (lower, higher) if m is not None)
    window = Recommendation("compaction.max_tokens", m0, m0,
                            f"kept: the warehouse cannot tell what context your model allows; now "
                            f"{counted(now['compactions'], 'replayed compaction')}, "
                            f"{counted(now['outside_window'], 'need')} outside the window ({sides})")
    return [keep, window]


def _signed(x: float) -> str:
    return f"{x:+.0%}"


def memory_retrieval(t: TuneContext) -> list[Recommendation]:
    """[memory] retrieval keys on a question set (SPEC §15): the sweep point with the highest recall@k, then MRR,
    then the smallest injected size; among equals the fewest and smallest changes from the current values."""
    from forensics.analyzers.memory import replay
    from forensics.analyzers.memory.retrieval import KEYS

    current = {k: t.cfg[f"memory.{k}"] for k in KEYS}
    if not t.con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]:
        return [Recommendation(f"memory.{k}", v, v, "no decision records in the warehouse: nothing is retrieved")
                for k, v in current.items()]
    if not t.questions:
        return [Recommendation(f"memory.{k}", v, v, "no question set: kept (pass --questions FILE to fit retrieval "
                               "on your own questions)") for k, v in current.items()]
    rep, here = replay(t.con, t.cfg, t.questions)
    if not rep.scored or not rep.projects:
        why = "expects no decision" if not rep.scored else "asks projects without decisions in the warehouse"
        return [Recommendation(f"memory.{k}", v, v, f"the question file {why}: kept") for k, v in current.items()]
    grid = rep.sweep(here).to_dicts()
    span = {k: (max(g[k] for g in grid) - min(g[k] for g in grid)) or 1 for k in KEYS}

    def order(g: dict[str, Any]) -> tuple[float, ...]:
        moved = [k for k in KEYS if g[k] != current[k]]
        return (-round(g["recall_at_k"], 9), -round(g["mrr"], 9), round(g["injected_chars"], 6), len(moved),
                sum(abs(g[k] - current[k]) / span[k] for k in moved))

    best = min(grid, key=order)
    now = next(g for g in grid if all(g[k] == current[k] for k in KEYS))
    moved = [k for k in KEYS if best[k] != current[k]]
    k0, k1 = current["top_k"], best["top_k"]
    new_k = "" if k1 == k0 else f"recall@{k1} "
    figures = (f"recall@{k0} {now['recall_at_k']:.2f} → {new_k}{best['recall_at_k']:.2f}, "
               f"MRR {now['mrr']:.2f} → {best['mrr']:.2f} on {len(rep.scored)} questions, injected "
               f"{_chars(now['injected_chars'])} → {_chars(best['injected_chars'])} chars")
    evidence = (", ".join(f"{k} {current[k]:g} → {best[k]:g}" for k in moved) + ": " + figures if moved else
                f"the current values score best of {len(grid)} settings: recall@{k0} {now['recall_at_k']:.2f}, MRR "
                f"{now['mrr']:.2f} on {len(rep.scored)} questions, injected {_chars(now['injected_chars'])} chars")
    return [Recommendation(f"memory.{k}", current[k], best[k], evidence, figures if moved else "") for k in KEYS]


def _chars(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else f"{n:.0f}"
