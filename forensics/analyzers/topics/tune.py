"""The topic tuners: ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.tuner import Recommendation, TuneContext, lower_bound

if TYPE_CHECKING:
    from forensics.analyzers.base import Context

CONFIDENCES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)

SWITCH_SCORES = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))  # 0.10 .. 0.90: every fitted anchor well inside


def topic_confidence(t: TuneContext) -> list[Recommendation]:
    """topic.min_confidence: with labels, the best F1 whose precision is credibly ``min_precision``; without,
    the value whose marker rate is closest to ``marker_rate`` (and the evidence says no labels were used)."""
    current = TopicSettings.of(t.cfg).min_confidence
    judged = _judged(t)  # topics and confidences do not depend on min_confidence: one pass
    n = sum(len(v) for v in judged.values())
    if n == 0:
        return [Recommendation("topic.min_confidence", current, current, "no judged messages: kept")]

    def markers(c: float) -> dict[str, set[int]]:
        return {
            k: {
                b[0]
                for a, b in zip(v, v[1:])
                if a[1] and b[1] and a[1] != b[1] and a[2] is not None and b[2] is not None and a[2] >= c and b[2] >= c
            }
            for k, v in judged.items()
        }

    refs = _references(t, judged)
    if refs:
        return [_best_on_labels(t, "topic.min_confidence", current, CONFIDENCES, refs, markers)]
    rate = {c: sum(map(len, markers(c).values())) / n for c in CONFIDENCES}
    best = min(CONFIDENCES, key=lambda c: (abs(rate[c] - t.marker_rate), abs(c - current)))
    return [
        Recommendation(
            "topic.min_confidence",
            current,
            best,
            f"no labels used: {rate[best] * 100:.1f} markers per 100 judged messages, closest to the "
            f"stated rate {t.marker_rate * 100:.1f} (pass --labels to tune on precision and F1)",
        )
    ]


def topic_switch_score(t: TuneContext) -> list[Recommendation]:
    """The judging mode's switch-score threshold, its operating point: with labels, the best F1 whose precision is
    credibly ``min_precision``, each candidate judged anew (the terms come from the message_terms cache, so a pass
    is inference only). Without labels there is nothing to fit it on: the fitted default is kept."""
    from dataclasses import replace

    from forensics.analyzers import topics

    key = topics.threshold_key(t.cfg)
    current = t.cfg[key]
    if not t.labels:
        return [
            Recommendation(
                key,
                current,
                current,
                "no labels: kept (pass --labels to fit the operating point on your own labeled conversations)",
            )
        ]
    marked: dict[float, dict[str, set[int]]] = {}
    for x in [*sorted(set(SWITCH_SCORES) - {current}), current]:  # current last: the tables end as the config has them
        cfg = t.cfg.with_settings(replace(TopicSettings.of(t.cfg), **{key.partition(".")[2]: x}))
        judged = _judged(t, replace(t.analysis, cfg=cfg))
        marked[x] = {k: {p for p, _, _, m in v if m} for k, v in judged.items()}
    refs = _references(t, judged)  # which messages are judged does not depend on the threshold
    if not refs:
        return [Recommendation(key, current, current, "no labeled conversation is in the warehouse: kept")]
    return [_best_on_labels(t, key, current, tuple(sorted(marked)), refs, marked.__getitem__)]


def _judged(
    t: TuneContext, analysis: Context | None = None
) -> dict[str, list[tuple[int, str | None, float | None, bool]]]:
    """Run the topic analyzer (with ``analysis``'s config, default the current one); per conversation (native
    id, as labels name them), its judged messages as (position, topic, confidence, marker)."""
    from forensics.analyzers import topics
    from forensics.warehouse import frame

    if analysis is not None or "topics" not in t.fresh:
        topics.run(analysis or t.analysis)
    rows = frame(
        t.con,
        "SELECT c.native_id, m.position, m.topic, m.confidence, m.marker FROM message_topics m "
        "JOIN conversations c USING (conversation_id) JOIN sel_conversations USING (conversation_id) "
        "ORDER BY m.conversation_id, m.position",
    )
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


def _best_on_labels(
    t: TuneContext,
    key: str,
    current: float,
    candidates: tuple[float, ...],
    refs: list[Any],
    markers: Callable[[float], dict[str, set[int]]],
) -> Recommendation:
    """The candidate with the best F1 among those credibly at least ``min_precision`` precise (else the most
    credibly precise); ties go to the value closest to the current one. Credibly: the precision's 95 % lower
    bound, so two markers with one hit do not pass a floor of 0.5 (they did, on KdConv, at recall 0.01)."""
    from forensics.analyzers.topics.evaluate import score

    sc = {c: score(refs, markers(c)) for c in candidates}
    low = {c: lower_bound(sc[c].precision, sc[c].predicted) for c in candidates}
    ok = [c for c in candidates if low[c] >= t.min_precision]
    best = (
        max(ok, key=lambda c: (sc[c].f1, -abs(c - current)))
        if ok
        else max(candidates, key=lambda c: (low[c], -abs(c - current)))
    )
    s = sc[best]
    now = score(refs, markers(current)) if current not in sc else sc[current]
    met = "" if ok else f"; no value is credibly {t.min_precision:.2f} precise, the most credible one"
    return Recommendation(
        key,
        current,
        best,
        f"against {len(refs)} labeled conversations: precision "
        f"{s.precision:.2f} (≥ {low[best]:.2f} at 95 %), recall {s.recall:.2f}, F1 {s.f1:.2f} "
        f"(now {now.f1:.2f}){met}",
    )
