"""Topic switches on the labeled shared agent logs (``../shared/data/problems/problems.jsonl``, field
``user_turns[].shift``, rules S1-S8 of its GUIDE.md), dev and held-out halves apart.

    python bench/topics.py --only agent            # this set alone (part of every bench/topics.py run)
    python bench/topics.py --fit-work              # refit weights.json's ``work`` mode on the dev half first

How a switch is matched to a label: the units of a conversation are its labeled **person turns** (every
``user_turns`` entry with ``origin = person``, by warehouse position), whether the detector judges them or not
(a slash command, a prompt log without replies, a re-delivered template are units the detector never marks).
The detector's switch is the ``topic_switches`` row at a position; it counts at the person turn of that
position (the marker is only ever set on a judged person turn, so no mapping is needed beyond the position).
The first person turn is never a shift. P/R/F1 are exact (a switch one turn late is a miss and a false
switch); Pk and WindowDiff as in ``evaluate.py``. Trivial references beside it: every person turn after the
first, nothing, random at the base rate. The split is ``bench.problem_labels.half`` (the problems bench's).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.problem_labels import half, main_path_prefixes, relocate

WORK_C = 0.3  # the combiner's inverse regularisation, on standardised signals (chosen by leave one format out)
# The sign each signal's meaning gives it (+1 evidence for a new request, -1 against; cos_first alone is free: the
# first request's words again are a continuation or a return, S2), as the user
# mode's fit holds its weights (bench/topics.py SIGNS): a weight against its meaning would be one format's quirk.
WORK_SIGNS = {
    "own_words": 1,
    "work": 1,
    "request_form": 1,
    "own_question": 1,
    "entity_new_judged": 1,
    "reply_done": 1,  # the last step was reported done: the next request can be new
    "reply_offer": -1,  # S4: taking the step the reply offered
    "reply_asks": -1,  # S4: answering the reply's question, supplying what it asked for
    "accept": -1,  # S4: confirming (a request after the assent is read by request_form and newness)
    "insist": -1,  # S4: insisting, re-asking
    "clarify": -1,  # S4: clarification
    "means": -1,  # S5: a how-to question for the task at hand
    "newness": 1,  # "now / next / also / another": moving on
    "errorish": -1,  # S6: an error the last step produced
    "chars": 1,
    "after_greeting": -1,  # S7: the first real request after a greeting
    "cos_reply": -1,
    "cos_request": -1,  # the current request's words again: the same request
    "new_vs_reply": 1,
    "files_reply": -1,  # S4: a follow-up on the last answer names what the reply named
    "tools": 1,
}


@dataclass
class Labeled:
    cid: str
    half: str
    family: str
    units: list[int]  # person-turn positions
    shifts: set[int]


def labeled(con: Any, shared: Path) -> list[Labeled]:  # noqa: ANN401 - duckdb connection
    logs = (shared / "data" / "agent-logs").resolve()
    where = {
        (p.removeprefix(str(logs) + "/"), n): cid
        for cid, p, n in con.execute(
            "SELECT c.conversation_id, s.path, c.native_id FROM conversations c JOIN sources s USING (source_id)"
        ).fetchall()
    }
    out = []
    for line in (shared / "data" / "problems" / "problems.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        cid = where.get((d["source"], d["native_id"]))
        if cid is None:
            raise SystemExit(f"{d['source']} {d['native_id']}: not in the warehouse of {logs}")
        moved = relocate(
            d["user_turns"], main_path_prefixes(con, cid)
        )  # a reader's change may have moved a labeled turn
        if isinstance(moved, list):
            raise SystemExit(f"{d['source']}: positions {moved[:5]} do not hold their text_prefix")
        persons = [t for t in d["user_turns"] if t["origin"] == "person"]
        out.append(
            Labeled(
                cid,
                half(d["source"], d["native_id"]),
                d["family"],
                [moved[t["position"]] for t in persons],
                {moved[t["position"]] for t in persons if t["shift"]},
            )
        )
    return out


def warehouse(shared: Path, tmp: Path) -> Path:
    from forensics.ingestion.run import ingest

    logs = shared / "data" / "agent-logs"
    if not logs.is_dir():
        raise SystemExit(f"{logs}: not found (set FORENSICS_SHARED)")
    db = tmp / "agent-logs.duckdb"
    ingest([logs], db=db)
    return db


def switches(db: Path) -> dict[str, set[int]]:
    """The topics analyzer's switches at the default config, per conversation."""
    from forensics.analyzers import load as analyzer
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import defaults
    from forensics.kernel.selection import Selection
    from forensics.warehouse import open_warehouse

    with open_warehouse(db) as wh:
        analyzer("topics").run(Context.open(wh.con, defaults(), Selection()))
        out: dict[str, set[int]] = {}
        for cid, pos in wh.con.execute("SELECT conversation_id, position FROM topic_switches").fetchall():
            out.setdefault(cid, set()).add(pos)
    return out


def declined(db: Path) -> set[str]:
    """The conversations the detector declined to judge (``work.declines``: open chat), from the verdicts it stored
    (run ``switches`` first)."""
    from forensics.analyzers.topics.store import VERDICT_TABLE
    from forensics.warehouse import open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        return {
            cid
            for (cid,) in wh.con.execute(
                f"SELECT DISTINCT conversation_id FROM {VERDICT_TABLE} WHERE position IS NULL AND topic IS NOT NULL"
            ).fetchall()
        }


def evaluate(shared: Path, db: Path | None = None) -> dict[str, Any]:
    """Every detector's scores on the whole set and on each half."""
    from forensics.warehouse import open_warehouse

    with tempfile.TemporaryDirectory() as tmp:
        db = db or warehouse(shared, Path(tmp))
        found = switches(db)
        off = declined(db)
        with open_warehouse(db, read_only=True) as wh:
            convs = labeled(wh.con, shared)
    out: dict[str, Any] = {}
    for name, part in (
        ("whole", convs),
        ("dev", [c for c in convs if c.half == "dev"]),
        ("held-out", [c for c in convs if c.half == "held"]),
    ):
        out[name] = _scores(part, found, off)
    return out


def fresh_labeled(con: Any, path: Path, shared: Path) -> list[Labeled]:  # noqa: ANN401 - duckdb connection
    """The fresh labels' person turns and shifts (``bench.fresh_labels``), positions relocated like the shared ones."""
    from bench.fresh_labels import lines, roots

    bases = {k: str(v.resolve()) + "/" for k, v in roots(shared).items()}
    where = {}
    for cid, p, n in con.execute(
        "SELECT c.conversation_id, s.path, c.native_id FROM conversations c JOIN sources s USING (source_id)"
    ).fetchall():
        for key, prefix in bases.items():
            if p.startswith(prefix):
                where[(key, p[len(prefix) :], n)] = cid
    out = []
    for d in lines(path):
        cid = where.get((d["root"], d["source"], d["native_id"]))
        if cid is None:
            raise SystemExit(f"{d['root']}/{d['source']} {d['native_id']}: not in the fresh warehouse")
        moved = relocate(d["user_turns"], main_path_prefixes(con, cid))
        if isinstance(moved, list):
            raise SystemExit(f"{d['source']}: positions {moved[:5]} do not hold their text_prefix")
        persons = [t for t in d["user_turns"] if t["origin"] == "person"]
        out.append(
            Labeled(
                cid,
                f"fresh-{half(d['source'], d['native_id'])}",
                d["family"],
                [moved[t["position"]] for t in persons],
                {moved[t["position"]] for t in persons if t["shift"]},
            )
        )
    return out


FRESH_HALVES = ("fresh-dev", "fresh-held")  # the fresh set split by the shared set's hash (``half``), as bench.problems


def evaluate_fresh(path: Path, shared: Path, dev_only: bool = False) -> dict[str, Any]:
    """The fresh labels' shifts: their files ingested alone, the topics analyzer at the default config, scored
    like the halves (``evaluate``) beside every person turn, nothing and random at the base rate: the whole set,
    then its halves (``FRESH_HALVES``; ``dev_only``: the fresh-dev half alone, what is developed on)."""
    from bench.fresh_labels import warehouse as fresh_warehouse
    from forensics.warehouse import open_warehouse

    with tempfile.TemporaryDirectory() as tmp:
        db = fresh_warehouse(path, shared, Path(tmp))
        found = switches(db)
        off = declined(db)
        with open_warehouse(db, read_only=True) as wh:
            convs = fresh_labeled(wh.con, path, shared)
    name = f"fresh ({path.name}, labeled blind)"
    halves = {f"{name}: {h} half": _scores([c for c in convs if c.half == h], found, off) for h in FRESH_HALVES}
    if dev_only:
        return {k: v for k, v in halves.items() if k.endswith("fresh-dev half")}
    return {name: _scores(convs, found, off), **halves}


# The labelling rounds developed on whole (``bench/data/problems-fresh-<round>.jsonl``, the first reader's labels), beside
# the shared dev half and fresh-dev: the dev pool of issue 43's rounds (``evaluate_pool``). A round joins it once its
# figures have been printed as held out (the eighth round joined in topics11, the ninth in topics12); the held-out
# halves never do.
DEV_ROUNDS = ("r4", "r5", "r6", "r7", "r8", "r9")


def pooled(parts: list[tuple[str, list[Labeled], dict[str, set[int]], set[str]]]) -> dict[str, Any]:
    """Each part's scores (``_scores``: its conversations, the markers found in its warehouse, the conversations
    declined there), then all of them pooled as one set (a conversation keyed by its part, as each warehouse has its
    own ids)."""
    out: dict[str, Any] = {}
    pool: list[Labeled] = []
    found: dict[str, set[int]] = {}
    off: set[str] = set()
    for name, convs, f, o in parts:
        out[name] = _scores(convs, f, o)
        for c in convs:
            key = f"{name}:{c.cid}"
            pool.append(Labeled(key, c.half, c.family, c.units, c.shifts))
            if c.cid in f:
                found[key] = f[c.cid]
            if c.cid in o:
                off.add(key)
    out[f"dev pool ({len(parts)} sets)"] = _scores(pool, found, off)
    return out


def evaluate_pool(shared: Path, data: Path, rounds: tuple[str, ...] = DEV_ROUNDS) -> dict[str, Any]:
    """The dev pool: the shared dev half, fresh-dev and ``rounds`` whole, each ingested into its own warehouse (as
    ``evaluate`` and ``evaluate_fresh`` do), scored alone and pooled (``pooled``). No held-out half is read."""
    from bench.fresh_labels import warehouse as fresh_warehouse
    from forensics.warehouse import open_warehouse

    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("shared", "fresh", *rounds):
            where = Path(tmp) / name
            where.mkdir()
            path = data / ("problems-fresh.jsonl" if name == "fresh" else f"problems-fresh-{name}.jsonl")
            db = warehouse(shared, where) if name == "shared" else fresh_warehouse(path, shared, where)
            found, off = switches(db), declined(db)
            with open_warehouse(db, read_only=True) as wh:
                convs = labeled(wh.con, shared) if name == "shared" else fresh_labeled(wh.con, path, shared)
            keep = {"shared": "dev", "fresh": "fresh-dev"}.get(name)
            label = f"{name} ({keep} half)" if keep else f"{path.name} (whole)"
            parts.append((label, [c for c in convs if keep is None or c.half == keep], found, off))
    return pooled(parts)


def _scores(part: list[Labeled], found: dict[str, set[int]], off: set[str] | None = None) -> dict[str, Any]:
    """``off``: the conversations the detector declined to judge (``declined``), counted (they are scored as the
    detector leaves them: no marker)."""
    from forensics.analyzers.topics.evaluate import mark_all, mark_none, mark_random, reference, score

    refs = [reference(c.cid, c.units, c.shifts) for c in part if c.units]
    ours = {r.key: found.get(r.key, set()) & set(r.units) for r in refs}
    return {
        "conversations": len(refs),
        "declined": sum(r.key in (off or set()) for r in refs),
        "declined_shifts": sum(len(r.shifts) for r in refs if r.key in (off or set())),
        "person_turns": sum(len(r.units) for r in refs),
        "shifts": sum(len(r.shifts) for r in refs),
        "detectors": {
            k: score(refs, v).as_dict()
            for k, v in (
                ("ours", ours),
                ("every person turn", mark_all(refs)),
                ("nothing", mark_none(refs)),
                ("random at the base rate", mark_random(refs)),
            )
        },
    }


def render(res: dict[str, Any]) -> str:
    f = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    lines = []
    for name, r in res.items():
        lines.append(
            f"\nlabeled agent logs (person turns, default config): {name}: {r['conversations']} conversations, "
            f"{r['person_turns']} person turns, {r['shifts']} labeled shifts; not judged (open chat): "
            f"{r.get('declined', 0)} conversations holding {r.get('declined_shifts', 0)} shifts"
        )
        lines.append(f"  {'detector':24} {'marked':>6} {'P':>6} {'R':>6} {'F1':>6} {'Pk':>6} {'WD':>6}")
        for k, s in r["detectors"].items():
            lines.append(
                f"  {k:24} {s['predicted']:>6} {f(s['precision']):>6} {f(s['recall']):>6} {f(s['f1']):>6} "
                f"{f(s['pk']):>6} {f(s['windowdiff']):>6}"
            )
        d = r["detectors"]
        lines.append(
            f"  floor: F1 > every person turn ({d['every person turn']['f1']:.3f}): "
            f"{'yes' if d['ours']['f1'] > d['every person turn']['f1'] else 'NO'}; Pk <= nothing: "
            f"{'yes' if (d['ours']['pk'] or 0) <= (d['nothing']['pk'] or 0) else 'NO'}; target P >= 0.70 "
            f"and F1 >= 0.60: {'yes' if (d['ours']['precision'] or 0) >= 0.70 and d['ours']['f1'] >= 0.60 else 'NO'}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- fitting


def training_rows(db: Path, shared: Path) -> tuple[list[list[float]], list[int], list[str], list[str]]:
    """The dev half's judged person turns with a topic in work conversations: their ``work`` signals, label,
    conversation and log format (what the report's inference computes, ``infer.infer``)."""
    from forensics.analyzers.keywords.settings import KeywordSettings
    from forensics.analyzers.schema import defaults
    from forensics.analyzers.topics import Settings, pipeline, work
    from forensics.analyzers.topics.model import load_models
    from forensics.analyzers.topics.settings import TopicSettings
    from forensics.text.cues import Cues
    from forensics.warehouse import open_warehouse

    cfg = defaults()
    topic = TopicSettings.of(cfg)
    settings = Settings(
        KeywordSettings.of(cfg).tokenizer,
        frozenset(topic.roles),
        *load_models("user"),
        Cues.from_settings(topic),
        {},
        topic.min_confidence,
        keep_tokens=False,
    )
    x, y, groups, families = [], [], [], []
    with open_warehouse(db) as wh:
        convs = {c.cid: c for c in labeled(wh.con, shared) if c.half == "dev"}
        for cid, msgs, feats in pipeline.signals(wh.con, settings):
            c = convs.get(cid)
            if c is None or not work.is_work(msgs):
                continue
            assert pipeline._IDF is not None  # noqa: SLF001 - the state signals() set, as a report's
            work.signals(msgs, feats, pipeline._IDF)  # noqa: SLF001
            first = min(c.units) if c.units else None
            for m, f in zip(msgs, feats):
                if m.judged and f is not None and m.position != first and m.position in c.units:
                    x.append([f[k] for k in work.FEATURES])
                    y.append(int(m.position in c.shifts))
                    groups.append(cid)
                    families.append(c.family)
    return x, y, groups, families


def combine(x: Any, y: Any, families: list[str], c: float = WORK_C) -> tuple[dict[str, float], float]:  # noqa: ANN401
    """The combiner's raw weights and bias: an L2 logistic regression on standardised signals, class-balanced
    (scikit-learn's ``class_weight="balanced"``, by count) with each log format weighing alike (the turns of one
    long session do not outvote the other formats), every weight of a signed signal held to its sign (``WORK_SIGNS``). The fit is
    ``bench/topics.py``'s ``_logistic`` (L-BFGS-B with bounds: scikit-learn's LogisticRegression has none)."""
    import numpy as np

    from bench.topics import _logistic
    from forensics.analyzers.topics import work

    x, y = np.asarray(x, dtype=float), np.asarray(y)
    count = {f: families.count(f) for f in set(families)}
    w = np.array([1.0 / count[f] for f in families])  # each format weighs alike ...
    w *= len(y) / w.sum()
    w *= np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))  # ... and each class (by count)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    std_coef, intercept = _logistic(
        (x - mu) / sd, y, w, np.zeros(len(y)), [WORK_SIGNS.get(k, 0) for k in work.FEATURES], c
    )
    coef = std_coef / sd
    return {k: float(v) for k, v in zip(work.FEATURES, coef)}, float(intercept - (coef * mu).sum())


def fit_work(shared: Path, weights: Path) -> None:
    """The combiner (``combine``) fitted on the dev half's work turns; its operating point is the threshold with
    the best leave-one-format-out F1 on the dev half, through the report's marker (``family_out``), so it is chosen
    on formats each model did not see."""
    import orjson

    from forensics.analyzers.topics import work
    from forensics.analyzers.topics.model import load_model

    with tempfile.TemporaryDirectory() as tmp:
        db = warehouse(shared, Path(tmp))
        x, y, _, families = training_rows(db, shared)
        lofo = family_out(shared, db=db)
    best = max(lofo["thresholds"].items(), key=lambda kv: (round(kv[1]["f1"], 9), kv[0]))
    anchor, at = best
    coef, bias = combine(x, y, families)
    doc = orjson.loads(weights.read_bytes())
    doc["modes"][work.MODE] = {
        "weights": {k: round(v, 4) for k, v in coef.items()},
        "bias": round(bias, 4),
        "anchor": anchor,
        "fixed": {},
        "fitted_on": f"shared agent logs (problems.jsonl), dev half (bench.problem_labels.half): {len(y)} judged "
        f"person turns of work conversations in {len(set(families))} log formats, {sum(y)} switches; "
        f"L2 logistic regression (C={WORK_C}) on standardised signals, class-balanced, formats weighed alike, "
        "signed weights held to their sign (bench/topic_agent_logs.py combine)",
        "anchor_rule": f"the threshold with the best leave-one-format-out F1 on the dev half's person turns, "
        f"through the marker: P {at['precision']:.3f} R {at['recall']:.3f} F1 {at['f1']:.3f} Pk {at['pk']:.3f}",
    }
    weights.write_text(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    load_model.cache_clear()
    print(
        f"fit-work: {len(y)} turns, {sum(y)} switches; weights {doc['modes'][work.MODE]['weights']}, "
        f"bias {doc['modes'][work.MODE]['bias']}, anchor {anchor} (leave one format out: F1 {at['f1']:.3f}, "
        f"P {at['precision']:.3f})"
    )


# ------------------------------------------------------------------------------ leave one family out (dev half)

FAMILY_THRESHOLDS = tuple(i / 100 for i in range(20, 86, 5))


def family_out(
    shared: Path, thresholds: tuple[float, ...] = FAMILY_THRESHOLDS, db: Path | None = None
) -> dict[str, Any]:
    """The dev half only (the held-out half is never read here): each log format's conversations judged with a
    combiner fitted on the *other* formats' work turns (``combine``), through the report's own inference
    (``infer.infer``: the topic model beside it, the marker rule), at each threshold; every dev person turn is a
    unit, judged or not. This is how the detector meets a format it was not fitted on; a threshold or a signal is
    chosen here, the held-out half printed once."""
    import numpy as np

    from forensics.analyzers.keywords.settings import KeywordSettings
    from forensics.analyzers.schema import defaults
    from forensics.analyzers.topics import Settings, pipeline
    from forensics.analyzers.topics.evaluate import mark_all, mark_none, reference, score
    from forensics.analyzers.topics.infer import infer
    from forensics.analyzers.topics.model import Model, load_models
    from forensics.analyzers.topics.settings import TopicSettings
    from forensics.text.cues import Cues
    from forensics.warehouse import open_warehouse

    cfg = defaults()
    topic = TopicSettings.of(cfg)
    model, lexical = load_models("user")
    settings = Settings(
        KeywordSettings.of(cfg).tokenizer,
        frozenset(topic.roles),
        model,
        lexical,
        Cues.from_settings(topic),
        {},
        topic.min_confidence,
        keep_tokens=False,
    )
    with tempfile.TemporaryDirectory() as tmp:
        db = db or warehouse(shared, Path(tmp))
        x_, y_, _, family = training_rows(db, shared)
        with open_warehouse(db) as wh:
            dev = {c.cid: c for c in labeled(wh.con, shared) if c.half == "dev"}
            convs = [(cid, msgs) for cid, msgs, _ in pipeline.signals(wh.con, settings) if cid in dev]
            idf, corpus = pipeline._IDF, pipeline._CORPUS  # noqa: SLF001 - the state signals() set, as a report's
    assert idf is not None
    x, y = np.array(x_), np.array(y_)
    fitted: dict[str, tuple[dict[str, float], float]] = {}
    for fam in sorted(set(family)):
        keep = [i for i, f in enumerate(family) if f != fam]
        fitted[fam] = combine(x[keep], y[keep], [family[i] for i in keep])
    refs = [reference(c.cid, c.units, c.shifts) for c in dev.values() if c.units]
    out: dict[str, Any] = {
        "conversations": len(refs),
        "person_turns": sum(len(r.units) for r in refs),
        "shifts": sum(len(r.shifts) for r in refs),
        "families": sorted(set(family)),
        "references": {
            k: score(refs, v).as_dict()
            for k, v in (("every person turn", mark_all(refs)), ("nothing", mark_none(refs)))
        },
        "thresholds": {},
    }
    topic_model = model if corpus is not None else lexical
    for th in thresholds:
        found: dict[str, set[int]] = {}
        for cid, msgs in convs:
            fam = dev[cid].family
            w = Model(*fitted[fam], th) if fam in fitted else None  # a family without work turns: no scorer to fit
            judged = infer(msgs, idf, topic_model, settings.cues, corpus, {}, settings.min_confidence, None, w)
            found[cid] = {j.position for j in judged if j.marker}
        ours = {r.key: found.get(r.key, set()) & set(r.units) for r in refs}
        out["thresholds"][th] = score(refs, ours).as_dict()
    return out


def render_family_out(res: dict[str, Any]) -> str:
    f = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    lines = [
        f"\nlabeled agent logs, dev half, leave one log format out (each format judged by a combiner fitted on the "
        f"other {len(res['families']) - 1} formats with work turns; the held-out half unread): "
        f"{res['conversations']} conversations, {res['person_turns']} person turns, {res['shifts']} labeled shifts",
        f"  {'threshold':24} {'marked':>6} {'P':>6} {'R':>6} {'F1':>6} {'Pk':>6}",
    ]
    from forensics.analyzers.topics import work
    from forensics.analyzers.topics.model import load_model

    anchor = load_model(work.MODE).anchor
    rows = [(f"{th:.2f}" + (" (shipped)" if th == anchor else ""), s) for th, s in res["thresholds"].items()] + list(
        res["references"].items()
    )
    for k, s in rows:
        lines.append(
            f"  {k:24} {s['predicted']:>6} {f(s['precision']):>6} {f(s['recall']):>6} {f(s['f1']):>6} {f(s['pk']):>6}"
        )
    return "\n".join(lines)
