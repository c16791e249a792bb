"""Topic-switch detection (docs/definitions.md#topic-switches): topics per judged message, conservative markers.

Writes two warehouse tables for every conversation (so `forensics query topic_switches` and the interleave
analysis read them): ``message_topics`` (one row per judged message: topic, confidence, raw switch score)
and ``topic_switches`` (one row per marker: topic before/after, both confidences, score, the terms that
drove it). The section reports the selection; with ``--labels`` it also scores the markers against the
labels beside four baselines computed in the same run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import polars as pl

from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.declare import Analyzer, Mark, Tuner
from forensics.analyzers.keys import topics as declared
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.topics import corpus, draw, embedding, tune, work
from forensics.analyzers.topics.evaluate import (
    Reference,
    Scores,
    mark_all,
    mark_none,
    mark_random,
    reference,
    score,
    tfidf_cosines,
    tuned_threshold,
)
from forensics.analyzers.topics.infer import Judged
from forensics.analyzers.topics.labels import read_labels
from forensics.analyzers.topics.model import has_mode, judging_mode, load_model, load_models
from forensics.analyzers.topics.pipeline import Settings, analyze, conversation_messages, messages_sql
from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.topics.signals import Message, prepare
from forensics.config import Config, ConfigError
from forensics.kernel.arrow import stream
from forensics.kernel.selection import SELECTED
from forensics.text.cues import Cues
from forensics.warehouse import derived

NAME = "topics"
TITLE = "Topic switches"
TIMELINE_MAX = 8  # conversations drawn in the timeline chart
SWITCH_ROWS = 200  # rows of the switch table in the report (all of them are in the warehouse)
LABEL_JOIN = " · "  # between a segment label's terms
MESSAGES_SQL = messages_sql()  # every conversation's judged-role messages (bench/topics.py fits on them)


def threshold_key(cfg: Config) -> str:
    """The config key that holds the operating point (switch-score threshold) of the mode ``cfg`` judges in."""
    judging = judging_mode(TopicSettings.of(cfg).roles)
    if TopicSettings.of(cfg).embedding and has_mode(judging + embedding.MODE_SUFFIX):
        return "topic.embedding_switch_score"
    return "topic.dialogue_switch_score" if judging == "dialogue" else "topic.switch_score"


def run(ctx: Context) -> Section:
    cfg = ctx.cfg
    roles = frozenset(TopicSettings.of(cfg).roles)
    judging = judging_mode(roles)
    if TopicSettings.of(cfg).embedding:
        embedding.encoder()  # without the extra installed: a one-line error naming it
    key = threshold_key(cfg)
    embed = key == "topic.embedding_switch_score"
    judging += embedding.MODE_SUFFIX if embed else ""
    model, lexical = load_models(judging)
    settings = Settings(
        KeywordSettings.of(cfg).tokenizer,
        roles,
        replace(model, anchor=cfg[key]),
        replace(lexical, anchor=cfg[key]),
        Cues.from_settings(TopicSettings.of(cfg)),
        _lexicon(TopicSettings.of(cfg).lexicon),
        TopicSettings.of(cfg).min_confidence,
        keep_tokens=bool(ctx.labels),
        embed=embed,
        work=load_model(work.MODE) if judging == "user" and has_mode(work.MODE) else None,
    )
    selected = {r[0] for r in ctx.con.execute(f"SELECT conversation_id FROM {SELECTED}").fetchall()}
    results: dict[str, list[Judged]] = {}
    keywords: dict[str, dict[str, list[str]]] = {}
    labels: dict[str, dict[int, list[str]]] = {}
    tokens: dict[str, dict[int, list[str]]] = {}
    analysis = analyze(ctx.con, settings)
    open_domain = judging.startswith("dialogue") and not TopicSettings.of(cfg).open_domain  # not judged: marks nothing
    declined = 0  # selected conversations not judged (``work.declines``: open chat)
    for v in analysis.verdicts:
        declined += bool(v.declined) and v.conversation_id in selected
        if not TopicSettings.of(cfg).marker_enabled or open_domain:
            for j in v.judged:
                j.marker = False
        results[v.conversation_id], keywords[v.conversation_id] = v.judged, v.keywords
        labels[v.conversation_id] = v.labels
        if v.tokens is not None and v.conversation_id in selected:
            tokens[v.conversation_id] = v.tokens
    native = dict(ctx.con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    _write_tables(ctx, results, keywords, labels)
    sel = {cid: js for cid, js in results.items() if cid in selected}
    sec = Section(NAME, TITLE)
    switches = ctx.df(
        "SELECT s.*, c.native_id AS conversation FROM topic_switches s JOIN conversations c "
        f"USING (conversation_id) JOIN {SELECTED} USING (conversation_id) "
        "ORDER BY c.native_id, s.position"
    )
    sec.metrics = _metrics(sel, switches, sorted(roles), judging)
    sec.metrics["not_judged"] = "open-domain" if open_domain else None
    sec.metrics["open_chats"] = declined
    sec.metrics["prompt_logs"] = _prompt_logs(ctx)
    sec.metrics["corpus_model"] = (
        {"fitted": True, "messages": analysis.corpus.units, "words": len(analysis.corpus.vocabulary)}
        if analysis.corpus
        else {"fitted": False, "messages": None, "words": None}
    )
    sec.findings = [_finding(r) for r in switches.iter_rows(named=True)]
    if switches.height:
        sec.tables.append(
            Table(
                "topic_switches",
                "Topic switches (conservative markers)",
                switches.with_columns(conversation=pl.col("conversation_id").replace_strict(ctx.names))
                .select(
                    "conversation",
                    "position",
                    "label_before",
                    "label_after",
                    "conf_before",
                    "conf_after",
                    "score",
                    "keywords",
                )
                .head(SWITCH_ROWS),
            )
        )
    if ctx.labels:
        ev = score_labels(ctx.labels, tokens, results, native)
        sec.metrics["evaluation"] = ev
        sec.grid = evaluation_grid(ev)
    sec.summary = _summary(sec.metrics)
    if TopicSettings.of(cfg).embedding and not embed:
        sec.summary += (
            f" [topic] embedding is on, but the {judging} mode has no weights fitted with sentence "
            "embeddings: lexical signals only."
        )
    timeline = _timeline_data(sel, labels, ctx.names)
    if timeline:
        sec.tables.append(
            Table(
                "topic_segments",
                "Topic segments of the conversations in the timeline, with labels "
                "(their most distinctive words in the corpus)",
                pl.DataFrame(
                    [
                        {"conversation": c["label"], "topic": t, "start": a, "end": b - 1, "label": LABEL_JOIN.join(kw)}
                        for c in timeline
                        for a, b, t, kw in c["segments"]
                    ],
                    schema={
                        "conversation": pl.String,
                        "topic": pl.String,
                        "start": pl.Int64,
                        "end": pl.Int64,
                        "label": pl.String,
                    },
                ),
            )
        )
        sec.charts.append(
            Chart(
                "topic_timeline",
                "Topic timeline per conversation (segments with their labels, switch markers)",
                timeline,
            )
        )
    return sec


def _conversations(rows: pl.DataFrame, roles: set[str], mode: str) -> dict[str, list[Message]]:
    """Rows of MESSAGES_SQL as prepared Messages per conversation, all in memory (for fitting on small sets)."""
    convs = dict(conversation_messages(rows, frozenset(roles)))
    for msgs in convs.values():
        prepare(msgs, mode)
    return convs


def _lexicon(value: Any) -> dict[str, list[str]]:
    if not value:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and all(isinstance(p, str) and p for p in v) for v in value.values()
    ):
        raise ConfigError('topic.lexicon must be a table of topic = ["phrase", ...]')
    return {str(k): list(v) for k, v in value.items()}


def _write_tables(
    ctx: Context,
    results: Mapping[str, list[Judged]],
    keywords: Mapping[str, dict[str, list[str]]],
    labels: Mapping[str, dict[int, list[str]]],
) -> None:
    mt: dict[str, list[Any]] = {
        k: [] for k in ("conversation_id", "position", "topic", "label", "confidence", "score", "keywords", "marker")
    }
    ts: dict[str, list[Any]] = {
        k: []
        for k in (
            "conversation_id",
            "position",
            "topic_before",
            "topic_after",
            "label_before",
            "label_after",
            "conf_before",
            "conf_after",
            "score",
            "keywords",
        )
    }
    for cid, js in results.items():
        prev = None
        label = {p: LABEL_JOIN.join(t) or None for p, t in labels[cid].items()}
        for j in js:
            for k, v in (
                ("conversation_id", cid),
                ("position", j.position),
                ("topic", j.topic),
                ("label", label.get(j.position)),
                ("confidence", j.confidence),
                ("score", j.score),
                ("keywords", keywords[cid].get(j.topic, []) if j.topic else []),
                ("marker", j.marker),
            ):
                mt[k].append(v)
            if j.marker and prev is not None:
                for k, v in (
                    ("conversation_id", cid),
                    ("position", j.position),
                    ("topic_before", prev.topic),
                    ("topic_after", j.topic),
                    ("label_before", label.get(prev.position)),
                    ("label_after", label.get(j.position)),
                    ("conf_before", prev.confidence),
                    ("conf_after", j.confidence),
                    ("score", j.score),
                    ("keywords", j.drivers),
                ):
                    ts[k].append(v)
            if j.topic is not None:  # a marker is read against the last turn with a topic (``infer.mark``)
                prev = j
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "conversation_id": pl.String,
        "position": pl.Int32,
        "score": pl.Float64,
        "keywords": pl.List(pl.String),
    }
    _topics_m = stream(
        pl.DataFrame(
            mt,
            schema={
                **schema,
                "topic": pl.String,
                "label": pl.String,  # noqa: F841
                "confidence": pl.Float64,
                "marker": pl.Boolean,
            },
        )
    )
    _topics_s = stream(
        pl.DataFrame(
            ts,
            schema={
                **schema,
                "topic_before": pl.String,
                "topic_after": pl.String,  # noqa: F841
                "label_before": pl.String,
                "label_after": pl.String,
                "conf_before": pl.Float64,
                "conf_after": pl.Float64,
            },
        )
    )
    # read by replacement scans; the messages' native ids joined here, not carried through the workers
    native = (
        "LEFT JOIN (SELECT conversation_id, position, native_id FROM messages WHERE on_main_path) m "
        "USING (conversation_id, position)"
    )
    ctx.con.execute(
        "CREATE OR REPLACE TABLE message_topics AS SELECT conversation_id, position, m.native_id, topic, "
        f"confidence, score, keywords, marker, label FROM _topics_m {native} "
        "ORDER BY conversation_id, position"
    )
    ctx.con.execute(
        "CREATE OR REPLACE TABLE topic_switches AS SELECT conversation_id, position, m.native_id, "
        f"topic_before, topic_after, conf_before, conf_after, score, keywords, label_before, label_after "
        f"FROM _topics_s {native} ORDER BY conversation_id, position"
    )


def _metrics(sel: Mapping[str, list[Judged]], switches: pl.DataFrame, roles: list[str], mode: str) -> dict[str, Any]:
    judged = [j for js in sel.values() for j in js]
    per = {}
    for cid, js in sel.items():
        topics = {j.topic for j in js if j.topic}
        per[cid] = {
            "judged": len(js),
            "content_free": sum(j.topic is None for j in js),
            "topics": len(topics),
            "switches": sum(j.marker for j in js),
        }
    return {
        "roles": roles,
        "mode": mode,
        "conversations": len(sel),
        "judged_messages": len(judged),
        "content_free_messages": sum(j.topic is None for j in judged),
        "switches": switches.height,
        "switches_per_100_judged": 100 * switches.height / len(judged) if judged else None,
        "per_conversation": per,
    }


def _prompt_logs(ctx: Context) -> dict[str, int]:
    """Selected conversations holding the person's prompts and no reply on the main path: prompt logs (Cursor's
    prompt history, Gemini CLI's logs.json, Codex's and Claude Code's history.jsonl), never judged
    (``pipeline.messages_sql``). Counted so a report says so rather than marking nothing in silence."""
    row = ctx.con.execute(
        "SELECT count(*), coalesce(sum(p), 0) FROM (SELECT conversation_id, count(*) FILTER (WHERE origin = 'person') "
        "AS p, count(*) FILTER (WHERE role = 'assistant') AS a FROM messages "
        f"JOIN {SELECTED} USING (conversation_id) WHERE on_main_path GROUP BY 1) WHERE a = 0 AND p >= 2"
    ).fetchall()
    n, prompts = row[0] if row else (0, 0)
    return {"conversations": int(n), "prompts": int(prompts)}


def _finding(r: dict[str, Any]) -> Finding:
    kw = ", ".join(r["keywords"] or [])
    before, after = (
        f"{r[f'topic_{s}']} ({r[f'label_{s}']})" if r[f"label_{s}"] else r[f"topic_{s}"] for s in ("before", "after")
    )
    return Finding(
        "topic_switch",
        "info",
        r["conversation_id"],
        r["conversation"],
        [r["position"]],
        f"[{r['position']}] {before} → {after} (score {r['score']:.2f}, "
        f"confidence {r['conf_before']:.2f} / {r['conf_after']:.2f})" + (f"; new terms: {kw}" if kw else ""),
        "both judged messages have a topic with confidence >= topic.min_confidence and they differ",
    )


# ------------------------------------------------------------------------------------------- evaluation

DETECTORS = ("ours", "ours_tuned", "all", "random", "none", "tfidf")
DETECTOR_LABELS = {
    "ours": "ours (conservative marker)",
    "ours_tuned": "ours (score ≥ tuned threshold)",
    "all": "mark every judged turn",
    "random": "random at the base rate",
    "none": "mark nothing",
    "tfidf": "TF-IDF cosine, tuned threshold",
}


def score_labels(
    labels_path: str,
    tokens: Mapping[str, dict[int, list[str]]],
    results: Mapping[str, list[Judged]],
    native: Mapping[str, str | None],
) -> dict[str, Any]:
    """Score our markers and the baselines on the labeled conversations in the selection (``tokens``: the
    selected conversations' judged messages, position -> tokens, in order)."""
    labels = read_labels(labels_path)
    by_native = {native[cid]: cid for cid in tokens}
    refs: list[Reference] = []
    toks: dict[str, dict[int, list[str]]] = {}
    preds: dict[str, set[int]] = {}
    scores: dict[str, dict[int, float]] = {}
    for key, shifts in labels.shifts.items():
        cid = by_native.get(key)
        if cid is None or not tokens[cid]:
            continue
        refs.append(reference(key, list(tokens[cid]), shifts))
        toks[key] = tokens[cid]
        preds[key] = {j.position for j in results[cid] if j.marker}
        scores[key] = {j.position: j.score for j in results[cid] if j.score is not None}
    out: dict[str, Any] = {
        "labels": str(labels.path),
        "dialogues": len(refs),
        "dialogues_not_found": len(labels.shifts) - len(refs),
        "judged_turns": sum(len(r.units) for r in refs),
        "reference_shifts": sum(len(r.shifts) for r in refs),
    }
    if not refs:
        return out
    th_ours, s_tuned = tuned_threshold(refs, scores, higher_is_switch=True)
    cos = tfidf_cosines(refs, toks)
    th_tfidf, s_tfidf = tuned_threshold(refs, cos, higher_is_switch=False)
    res: dict[str, Scores] = {
        "ours": score(refs, preds),
        "ours_tuned": s_tuned,
        "all": score(refs, mark_all(refs)),
        "random": score(refs, mark_random(refs)),
        "none": score(refs, mark_none(refs)),
        "tfidf": s_tfidf,
    }
    out["detectors"] = {k: res[k].as_dict() for k in DETECTORS}
    out["thresholds"] = {"ours_tuned_score": th_ours, "tfidf_cosine": th_tfidf}
    return out


def evaluation_grid(ev: Mapping[str, Any]) -> list[list[str]]:
    if "detectors" not in ev:
        return []
    head = ["detector", "predicted", "P", "R", "F1", "F1 ±1", "Pk", "WindowDiff"]
    f = _figure
    return [head] + [
        [
            DETECTOR_LABELS[k],
            str(d["predicted"]),
            f(d["precision"]),
            f(d["recall"]),
            f(d["f1"]),
            f(d["f1_within1"]),
            f(d["pk"]),
            f(d["windowdiff"]),
        ]
        for k, d in ev["detectors"].items()
    ]


def _figure(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _summary(m: Mapping[str, Any]) -> str:
    logs = m.get("prompt_logs") or {}
    not_judged = (
        f" Not judged: {logs['conversations']} prompt log(s), {logs['prompts']} prompts with no reply between them: "
        "without the work done in between, a new request is not told from a follow-up (judged by their content alone, "
        "a labeled prompt log segmented worse than marking nothing: docs/topics-evaluation.md)."
        if logs.get("conversations")
        else ""
    )
    if not m["conversations"]:
        return (
            ("No judged conversation in the selection." + not_judged)
            if not_judged
            else "No conversation in the selection."
        )
    s = (
        f"{m['judged_messages']} judged messages ({', '.join(m['roles'])}) in {m['conversations']} conversations; "
        f"{m['content_free_messages']} were content-free or only social (thanks, ok, 继续) and carry no topic. "
    )
    if m.get("open_chats"):
        s += (
            f"Not judged: {m['open_chats']} open chat(s), an assistant answering in paragraphs with no tool and no "
            "work product, where the topic model fitted on task dialogues marked no true switch: no switch is "
            "marked there. "
        )
    if m.get("not_judged") == "open-domain":
        s += (
            "Not judged: open-domain. Both parties' turns are judged (human-human talk), where the marker does "
            "not beat marking every turn on chit-chat: no switch is marked (topic.open_domain = true marks them)."
        )
    else:
        s += (
            f"{m['switches']} topic switches marked (both messages confident, topics different)."
            if m["switches"]
            else "No switch marked: the evidence stays below the floor (no judged message reaches the switch score with "
            "a message that has a topic before it)."
        )
    s += not_judged
    if m["mode"] == "user":
        cm = m["corpus_model"]
        s += (
            f" The corpus's own topic model was fitted on {cm['messages']} judged messages ({cm['words']} recurring "
            "words)."
            if cm["fitted"]
            else f" The corpus is too small for its own topic model (fewer than {corpus.MIN_UNITS} judged messages with "
            "words that recur across conversations): judged by the lexical signals and cues alone."
        )
    ev = m.get("evaluation")
    if ev and "detectors" in ev:
        o, n = ev["detectors"]["ours"], ev["detectors"]["none"]
        s += (
            f" Against {ev['reference_shifts']} labeled shifts in {ev['dialogues']} dialogues: precision "
            f"{o['precision']:.2f}, recall {o['recall']:.2f}, F1 {o['f1']:.2f}, Pk {o['pk']:.3f} "
            f"(marking nothing: Pk {n['pk']:.3f})."
        )
    return s


# ------------------------------------------------------------------------------------------- timeline


def _timeline_data(
    sel: Mapping[str, list[Judged]], labels: Mapping[str, dict[int, list[str]]], native: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """Per conversation (those with the most switches first): segments (start, end, topic, label terms), markers."""
    ranked = sorted(sel, key=lambda c: (-sum(j.marker for j in sel[c]), str(native.get(c))))[:TIMELINE_MAX]
    out = []
    for cid in ranked:
        js = [j for j in sel[cid] if j.topic]
        if not js:
            continue
        segs: list[list[Any]] = []
        for j in js:
            if segs and segs[-1][2] == j.topic:
                segs[-1][1] = j.position
            else:
                segs.append([j.position, j.position, j.topic])
        end = sel[cid][-1].position
        for a, b in zip(segs, segs[1:]):
            a[1] = b[0]
        segs[-1][1] = max(segs[-1][1], end) + 1
        out.append(
            {
                "label": str(native.get(cid) or cid)[:24],
                "segments": [(s, e, t, labels[cid].get(s, [])) for s, e, t in segs],
                "markers": [j.position for j in sel[cid] if j.marker],
            }
        )
    return out


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    tuners=(
        Tuner(tune.topic_confidence, ("topic.min_confidence",)),
        Tuner(tune.topic_switch_score),
    ),
    charts={"topic_timeline": draw.timeline},
    marks=(Mark("message_topics", ("topic", "marker", "confidence")),),
    maps=("per_conversation",),
    workers=True,  # chunks of conversations tokenized and judged in a pool (pipeline.py)
    tables=(
        derived.Table("message_terms", "cache", "each judged message's terms"),
        derived.Table("message_topics", "whole", "each judged message's topic and confidence"),
        derived.Table("topic_switches", "whole", "the switch markers (drift type 4 reads them)"),
        derived.Table("topic_corpus", "cache", "the corpus state: message count, document frequencies, topic model"),
        derived.Table(
            "topic_verdicts", "cache", "each conversation's verdicts, per fingerprint, settings, corpus state and code"
        ),
    ),
    settings=(TopicSettings,),
)
