"""Topic-switch benchmark on every labeled set, through the real pipeline (docs/definitions.md#topic-switches, issue 14).

    python bench/topics.py            # each set ingested into a fresh warehouse, the topics analyzer run with
                                      # --labels at the default config: ours beside mark nothing, mark every
                                      # judged turn, random at the base rate, TF-IDF (threshold tuned on the other
                                      # half); whole set, then the held-out half; floor and target verdicts
    python bench/topics.py --fit      # refit forensics/analyzers/topics/weights.json on the training halves first
    python bench/topics.py --fit-work # refit its ``work`` mode (agent logs) on the labeled agent logs' dev half
    python bench/topics.py --work-family-out  # that dev half, leave one log format out (the held-out half unread);
                                      # every run prints it before the agent logs' halves
    python bench/topics.py --dev      # the dev halves only (never look at a held-out half while developing)
    python bench/topics.py --pool     # issue 43's dev pool: agent logs' dev half, fresh-dev, the rounds r4-r9 whole

Sets (FORENSICS_SHARED, default ../shared):
- user mode (``[topic] roles = ["user"]``, the default): crosswoz-val.zh, multiwoz-val.en (users moving from one
  task to the next) and generated assistant logs (gen_corpus.py sqlite --profile realistic, 60 conversations per
  seed, seeds 1-6; seeds 5-6 held out);
- dialogue mode (roles user+assistant): kdconv-dev.zh, tiage-train-dev (human-human chat);
- the labeled shared agent logs (``bench/topic_agent_logs.py``: person turns of 60 real conversations, dev and
  held-out halves by ``bench.problem_labels.half``), printed first;
- the fresh labels (``--fresh PATH``, default ``bench/data/problems-fresh.jsonl``: 43 conversations labeled blind;
  ``--only fresh`` alone), printed next: whole, then the fresh-dev half (developed on) and the fresh-held half (printed
  once, at the end of a round), split by the shared set's hash as bench.problems splits it.
The shared sets are split by a stable hash of the dialogue id (``held_out``); only the other half is fitted on.
Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from forensics.analyzers.topics import embedding, evaluation_grid  # noqa: E402
from forensics.analyzers.topics.evaluate import Reference, reference, score, tfidf_cosines, tuned_threshold  # noqa: E402
from forensics.analyzers.topics.settings import TopicSettings  # noqa: E402
from forensics.analyzers.topics.signals import FEATURES  # noqa: E402

SHARED = Path(os.environ.get("FORENSICS_SHARED", ROOT.parent / "shared"))
FRESH = ROOT / "bench" / "data" / "problems-fresh.jsonl"  # bench.fresh_labels.FRESH
GEN = SHARED / "bench" / "gen_corpus.py"
GEN_SEEDS, GEN_HELD_OUT = (1, 2, 3, 4, 5, 6), (5, 6)
WEIGHTS = ROOT / "forensics" / "analyzers" / "topics" / "weights.json"
C = 0.1  # logistic regression's inverse regularisation (on standardised signals)
DIALOGUE_F1_OVER_RANDOM = 1.2  # the dialogue mode's operating point keeps F1 this far above random marking
FIXED = {"user": {"cue_shift": 1.5, "insists": 8.0}, "dialogue": {"cue_shift": 1.5}}  # hand-set: see model.py
DROPPED = {"user": ("length",)}  # the generator's segment openers are templated long requests: length would learn that
# What each signal means for the user mode (+1 evidence for a switch, -1 against; not listed: free).
SIGNS = {
    "user": {
        "cos_prev": -1,
        "cos_ctx": -1,
        "cos_judged": -1,
        "cos_judged_ctx": -1,
        "cos_targets": -1,
        "novel": 1,
        "novel_judged": 1,
        "entity_new": 1,
        "entity_new_judged": 1,
        "handoff": -1,
        "entity_handoff": -1,
        "answers": -1,
        "ack_then_question": 1,
        "cue_continue": -1,
        "gap": 1,
        "next_departs": 1,
        "request": 1,
        "addition": 1,
        "reference": -1,
        "offered": 1,
        "topic_switch": 1,
        "plain_switch": 1,
    }
}
# The dialogue mode keeps round 1's signals: the user-side, look-ahead, cue and corpus signals were tried on
# TIAGE/KdConv and did not lift the held-out marker (docs/topics-evaluation.md).
DIALOGUE_FEATURES = FEATURES[: FEATURES.index("cos_judged")]  # round 1: up to the corpus signals


@dataclass
class LabeledSet:
    name: str
    mode: str  # user or dialogue
    targets: dict[str, float]  # f1 >=, pk <=
    floor: str  # the baseline the marker's F1 must beat: "all" (mark every judged turn) or "random"
    db: Path = Path()
    labels: Path = Path()
    held: set[str] = field(default_factory=set)  # dialogue ids of the held-out half


SETS = [
    LabeledSet("crosswoz-val.zh", "user", {"f1": 0.70, "pk": 0.30}, "all"),
    LabeledSet("multiwoz-val.en", "user", {"f1": 0.75, "pk": 0.15}, "all"),
    LabeledSet("assistant logs (generated)", "user", {"f1": 0.75, "pk": 0.10}, "all"),
    LabeledSet("kdconv-dev.zh", "dialogue", {"f1": 0.30, "pk": 0.30}, "random"),
    LabeledSet("tiage-train-dev", "dialogue", {"f1": 0.40, "pk": 0.36}, "random"),
]
FILES = {
    "crosswoz-val.zh": "crosswoz-val.zh.jsonl",
    "multiwoz-val.en": "multiwoz-val.en.jsonl",
    "kdconv-dev.zh": "kdconv-dev.zh.jsonl",
    "tiage-train-dev": "tiage-train-dev.jsonl",
}


def held_out(dialogue_id: str) -> bool:
    """The stable half a set's dialogues are split by (the same on every machine and Python)."""
    return zlib.crc32(dialogue_id.encode()) % 2 == 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", action="store_true", help="refit weights.json on the training halves first")
    ap.add_argument("--only", help="comma-separated set names (prefixes) to bench; 'agent' is the labeled agent logs")
    ap.add_argument(
        "--fit-work", action="store_true", help="refit weights.json's work mode on the agent logs' dev half"
    )
    ap.add_argument(
        "--fresh",
        type=Path,
        default=FRESH if FRESH.is_file() else None,
        help="fresh labels, labeled blind (default bench/data/problems-fresh.jsonl when present): their shifts are "
        "printed after the labeled agent logs ('--only fresh' alone)",
    )
    ap.add_argument(
        "--dev",
        action="store_true",
        help="the dev halves only: the agent logs' dev half, the fresh-dev half, the dialogue sets' training halves "
        "(never look at a held-out half while developing)",
    )
    ap.add_argument(
        "--work-family-out",
        action="store_true",
        help="the agent logs' dev half, leave one log format out, at several thresholds (never the held-out half)",
    )
    ap.add_argument(
        "--pool",
        action="store_true",
        help="issue 43's dev pool: the agent logs' dev half, the fresh-dev half and the rounds developed on whole "
        "(bench.topic_agent_logs.DEV_ROUNDS), each set and pooled (never a held-out half)",
    )
    args = ap.parse_args()
    from bench import topic_agent_logs

    if args.pool:
        print(topic_agent_logs.render(topic_agent_logs.evaluate_pool(SHARED, ROOT / "bench" / "data")))
        return

    if args.work_family_out:
        print(topic_agent_logs.render_family_out(topic_agent_logs.family_out(SHARED)))
        return

    if args.fit_work:
        topic_agent_logs.fit_work(SHARED, WEIGHTS)
    only = args.only.split(",") if args.only else []
    if not only or any("agent".startswith(p) or p.startswith("agent") for p in only):
        with tempfile.TemporaryDirectory() as tmp:  # the dev half left one format out first, the held-out half last
            db = topic_agent_logs.warehouse(SHARED, Path(tmp))
            print(topic_agent_logs.render_family_out(topic_agent_logs.family_out(SHARED, db=db)))
            res = topic_agent_logs.evaluate(SHARED, db)
            print(topic_agent_logs.render({"dev": res["dev"]} if args.dev else res))
    if args.fresh is not None and (not only or any(p.startswith(("agent", "fresh")) for p in only)):
        print(topic_agent_logs.render(topic_agent_logs.evaluate_fresh(args.fresh, SHARED, args.dev)))
    if only and all(p.startswith(("agent", "fresh")) for p in only):
        return
    with tempfile.TemporaryDirectory() as tmp:
        for s in SETS:
            prepare(s, Path(tmp))
        if args.fit:
            for mode in ("user", "dialogue"):
                fit(mode, [s for s in SETS if s.mode == mode])
            _check_defaults()
        for s in SETS:
            if not args.only or any(s.name.startswith(p) for p in args.only.split(",")):
                bench(s, args.dev)


def prepare(s: LabeledSet, tmp: Path) -> None:
    """Ingest the set into a fresh warehouse; its labels file; its held-out ids."""
    from forensics.ingestion.run import ingest

    s.db = tmp / (s.name.split()[0] + ".duckdb")
    if s.name in FILES:
        s.labels = SHARED / "data" / FILES[s.name]
        if not s.labels.exists():
            sys.exit(f"{s.labels}: not found (set FORENSICS_SHARED)")
        ingest([s.labels], db=s.db, fmt="dialogues")
        s.held = {d["dialogue_id"] for d in _lines(s.labels) if held_out(d["dialogue_id"])}
        return
    if not GEN.exists():
        sys.exit(f"{GEN}: not found (set FORENSICS_SHARED)")
    s.labels = tmp / "gen.labels.jsonl"
    with s.labels.open("wb") as out:
        for seed in GEN_SEEDS:
            db = tmp / f"gen{seed}.db"
            subprocess.run(
                [
                    sys.executable,
                    str(GEN),
                    "sqlite",
                    str(db),
                    "--conversations",
                    "60",
                    "--seed",
                    str(seed),
                    "--profile",
                    "realistic",
                ],
                check=True,
                capture_output=True,
            )
            ingest([db], db=s.db)
            for d in _lines(tmp / f"gen{seed}.labels.jsonl"):
                out.write(orjson.dumps(d) + b"\n")
                if seed in GEN_HELD_OUT:
                    s.held.add(d["id"])


def _lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _config(mode: str):  # noqa: ANN202 - forensics.config.Config
    from forensics.analyzers.schema import defaults

    # the dialogue mode's marker, opted into (topic.open_domain): by default open-domain talk is not judged and marks
    # nothing (Pk = marking nothing, F1 0); the figures printed are what the marker would do
    return (
        defaults().with_settings(replace(TopicSettings.of(defaults()), roles=["user", "assistant"], open_domain=True))
        if mode == "dialogue"
        else defaults()
    )


# ------------------------------------------------------------------------------------------------- fitting


def fit(mode: str, sets: list[LabeledSet]) -> None:
    """Logistic regression of the mode's signals on the training halves, each set weighing the same; the
    operating point is the best mean training F1 of the marker among thresholds whose training Pk is below
    marking nothing on every set (the marker may never segment worse than staying silent). The user mode also
    gets its lexical twin (no corpus topic model signals), its bias shifted to switch at the same anchor."""
    import math

    from forensics.analyzers.topics.model import LEXICAL_SUFFIX, load_model
    from forensics.analyzers.topics.signals import CORPUS_FEATURES

    names = [
        k
        for k in (FEATURES if mode == "user" else DIALOGUE_FEATURES)
        if k not in FIXED[mode] and k not in DROPPED.get(mode, ())
    ]
    data = [_training_conversations(s, mode) for s in sets]
    trained = ", ".join(s.name for s in sets) + (
        ": training halves (stable hash of the dialogue id; generated logs: "
        f"seeds {[g for g in GEN_SEEDS if g not in GEN_HELD_OUT]}), "
        "equal weight"
    )
    entries = {mode: _fitted(names, FIXED[mode], mode, data)}
    if mode == "user":
        twin = _fitted([k for k in names if k not in CORPUS_FEATURES], FIXED[mode], mode, data)
        logit = lambda p: math.log(p / (1 - p))  # noqa: E731
        twin["bias"] = round(twin["bias"] + logit(entries[mode]["anchor"]) - logit(twin["anchor"]), 4)
        twin["anchor"] = entries[mode]["anchor"]
        entries[mode + LEXICAL_SUFFIX] = twin
    doc = orjson.loads(WEIGHTS.read_bytes())
    for name, entry in entries.items():
        entry["fitted_on"] = trained
        entry["anchor_rule"] = (
            "best mean training F1 of the marker with training Pk below marking nothing on every set"
            if mode == "user"
            else "largest worst-set training Pk margin below marking "
            f"nothing with F1 >= {DIALOGUE_F1_OVER_RANDOM} x random on every set"
        ) + ("; bias shifted to the user mode's anchor" if name != mode else "")
        doc["modes"][name] = entry
    WEIGHTS.write_text(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    load_model.cache_clear()
    print(
        f"fit: {mode}: {sum(len(u) for c in data for _, u in c)} training turns from {len(sets)} sets; "
        f"anchor {entries[mode]['anchor']}"
    )


def _fitted(names: list[str], fixed: dict[str, float], mode: str, data: list) -> dict:
    """One weights.json entry: the weights of ``names`` (the ``fixed`` ones held), bias and anchor."""
    import numpy as np

    rows = [[(f, pos in ref.shifts) for ref, units in convs for pos, f in units[1:] if f is not None] for convs in data]
    x = np.array([[f[k] for k in names] for r in rows for f, _ in r])
    y = np.array([hit for r in rows for _, hit in r])
    w = np.concatenate([np.full(len(r), len(x) / len(rows) / len(r)) for r in rows])
    offset = np.array([sum(v * f[k] for k, v in fixed.items()) for r in rows for f, _ in r])
    mu, sd = x.mean(0), x.std(0) + 1e-9  # standardised, so that C regularises every signal alike
    std_coef, intercept = _logistic((x - mu) / sd, y, w, offset, [SIGNS.get(mode, {}).get(k, 0) for k in names])
    coef = std_coef / sd  # back to the raw signals
    weights = {k: round(float(c), 4) for k, c in zip(names, coef)}
    bias = round(float(intercept - (coef * mu).sum()), 4)
    return {"weights": weights, "bias": bias, "anchor": _anchor(data, {**weights, **fixed}, bias, mode), "fixed": fixed}


def _logistic(x, y, w, offset, signs: list[int], c: float = C):  # noqa: ANN001, ANN202 - numpy arrays
    """L2-regularised logistic regression (inverse regularisation ``c``) whose weights keep the sign each signal's meaning gives it
    (+1: evidence for a switch, -1: against, 0: free): a weight against its meaning would be an artefact of
    one set (templated requests, one label convention) that turns into false switches elsewhere. ``offset``:
    the hand-set signals' part of each row's score, which the fitted weights must work with."""
    import numpy as np
    from scipy.optimize import minimize

    n, k = x.shape
    xb = np.column_stack([x, np.ones(n)])
    yy = y.astype(float)

    def loss(beta):  # noqa: ANN001, ANN202
        z = xb @ beta + offset
        p = 1 / (1 + np.exp(-z))
        value = (w * (np.logaddexp(0, z) - yy * z)).sum() + 0.5 / c * (beta[:k] ** 2).sum()
        grad = xb.T @ (w * (p - yy))
        grad[:k] += beta[:k] / c
        return value, grad

    bounds = [(0, None) if s > 0 else (None, 0) if s < 0 else (None, None) for s in signs] + [(None, None)]
    res = minimize(loss, np.zeros(k + 1), jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 5000})
    return res.x[:k], res.x[k]


Units = list[tuple[int, "dict | None"]]  # a conversation's judged messages in order: position, signals (None: no topic)


def _training_conversations(s: LabeledSet, mode: str) -> list[tuple[Reference, Units]]:
    """The training half's conversations: reference and judged messages with their signals."""
    from forensics.analyzers.topics import Settings
    from forensics.analyzers.topics.labels import read_labels
    from forensics.analyzers.topics.model import load_models
    from forensics.analyzers.topics.pipeline import signals
    from forensics.text.cues import Cues
    from forensics.warehouse import open_warehouse

    cfg = _config(mode)
    labels = read_labels(s.labels).shifts
    from forensics.analyzers.keywords.settings import KeywordSettings

    topic = TopicSettings.of(cfg)
    settings = Settings(
        KeywordSettings.of(cfg).tokenizer,
        frozenset(topic.roles),
        *load_models(mode),
        Cues.from_settings(topic),
        {},
        topic.min_confidence,
        keep_tokens=False,
    )
    out = []
    with open_warehouse(s.db) as wh:
        native = dict(wh.con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
        for cid, msgs, feats in signals(wh.con, settings):
            key = native[cid]
            if key in labels and key not in s.held:
                units = [(m.position, f) for m, f in zip(msgs, feats) if m.judged]
                out.append((reference(key, [p for p, _ in units], labels[key]), units))
    return out


def _marker(units: Units, weights: dict[str, float], bias: float, threshold: float) -> set[int]:
    """The positions the analyzer's marker sets at this threshold: a switch whose previous judged message has a
    topic (``infer.mark``; every decision is at least 0.7 confident at the anchor, so that is the whole rule)."""
    import math

    out, current, previous_has_topic = set(), False, False
    for pos, f in units:
        if f is None:
            previous_has_topic = False
            continue
        z = bias + sum(w * f[k] for k, w in weights.items())
        if current and previous_has_topic and 1 / (1 + math.exp(-max(-60.0, min(60.0, z)))) >= threshold:
            out.add(pos)
        current = previous_has_topic = True
    return out


def _anchor(data: list[list[tuple[Reference, Units]]], weights: dict[str, float], bias: float, mode: str) -> float:
    """The operating point on the training halves. User mode: the best mean F1 among thresholds whose Pk is below
    marking nothing on every set. Dialogue mode, where F1 stays far from the targets whatever the threshold: the
    largest worst-set Pk margin below marking nothing, among thresholds whose F1 is at least DIALOGUE_F1_OVER_RANDOM
    times random marking at the base rate on every set (do no harm first)."""
    from forensics.analyzers.topics.evaluate import mark_random

    floors = [score([r for r, _ in convs], {}).pk for convs in data]
    randoms = [score([r for r, _ in convs], mark_random([r for r, _ in convs])).f1 for convs in data]
    best, best_value = 0.99, -1.0
    for i in range(10, 99):
        th = i / 100
        ss = [score([r for r, _ in convs], {r.key: _marker(u, weights, bias, th) for r, u in convs}) for convs in data]
        if mode == "user":
            ok = all(x.pk < none for x, none in zip(ss, floors))
            value = sum(x.f1 for x in ss) / len(ss)
        else:
            ok = all(x.f1 >= DIALOGUE_F1_OVER_RANDOM * rnd for x, rnd in zip(ss, randoms))
            value = min(none - x.pk for x, none in zip(ss, floors))
        if ok and value > best_value:
            best, best_value = th, value
    return best


def _check_defaults() -> None:
    """The config defaults are the fitted operating points; a refit that moved one stops here, before the bench
    would measure a stale threshold."""
    from forensics.analyzers.schema import defaults
    from forensics.analyzers.topics.model import has_mode, load_model

    cfg = defaults()
    stale = [
        f"topic.{key} = {cfg['topic.' + key]} (weights.json {mode}: {load_model(mode).anchor})"
        for mode, key in (
            ("user", "switch_score"),
            ("dialogue", "dialogue_switch_score"),
            ("dialogue" + embedding.MODE_SUFFIX, "embedding_switch_score"),
        )
        if has_mode(mode) and cfg["topic." + key] != load_model(mode).anchor
    ]
    if stale:
        sys.exit(
            "fit: set the topic keys' defaults (ANALYZER in forensics/analyzers/topics/__init__.py) to the new "
            "anchors, then run the bench: " + "; ".join(stale)
        )


# ------------------------------------------------------------------------------------------------- bench


def bench(s: LabeledSet, dev_only: bool = False) -> None:
    """The default config of the set's mode: the whole set, then the held-out half, each with verdicts
    (``dev_only``: the training half alone)."""
    from forensics.api import report
    from forensics.kernel.selection import Selection
    from forensics.warehouse import open_warehouse

    cfg = _config(s.mode)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        whole, _ = report(s.db, Path(tmp) / "all", ["json"], "topics", Selection(), cfg, labels=str(s.labels))
        took = time.perf_counter() - t0
        with open_warehouse(s.db, read_only=True) as wh:
            ids = wh.con.execute("SELECT conversation_id, native_id FROM conversations").fetchall()
        if dev_only:
            train = tuple(c for c, n in ids if n not in s.held)
            dev, _ = report(s.db, Path(tmp) / "dev", ["json"], "topics", Selection(train), cfg, labels=str(s.labels))
            _print_set(f"{s.name}: training half (fitted on)", dev, s, None)
            return
        held_cids = tuple(c for c, n in ids if n in s.held)
        held, _ = report(s.db, Path(tmp) / "held", ["json"], "topics", Selection(held_cids), cfg, labels=str(s.labels))
        tfidf = _tfidf_other_half(s)
    roles = "user" if s.mode == "user" else "user+assistant, topic.open_domain = true: the default marks nothing"
    _print_set(f"{s.name} (roles {roles}, default config; {took:.1f} s): whole set", whole, s, None)
    _print_set(f"{s.name}: held-out half (not fitted on)", held, s, tfidf)


def _tfidf_other_half(s: LabeledSet) -> dict:
    """TF-IDF cosine with the turns before, its threshold tuned on the training half, scored on the held-out half."""
    from forensics.analyzers.topics.labels import read_labels
    from forensics.warehouse import open_warehouse

    labels = read_labels(s.labels).shifts
    refs: list[Reference] = []
    tokens: dict[str, dict[int, list[str]]] = {}
    with open_warehouse(s.db, read_only=True) as wh:
        for key, pos, toks in wh.con.execute(
            "SELECT c.native_id, t.position, t.tokens FROM message_terms t JOIN conversations c USING "
            "(conversation_id) JOIN messages m USING (conversation_id, position) WHERE m.role IN "
            f"({', '.join(repr(r) for r in (['user'] if s.mode == 'user' else ['user', 'assistant']))}) "
            "ORDER BY 1, 2"
        ).fetchall():
            tokens.setdefault(key, {})[pos] = toks
    for key, units in tokens.items():
        if key in labels:
            refs.append(reference(key, list(units), labels[key]))
    cos = tfidf_cosines(refs, tokens)
    train = [r for r in refs if r.key not in s.held]
    test = [r for r in refs if r.key in s.held]
    th, _ = tuned_threshold(train, {r.key: cos[r.key] for r in train}, higher_is_switch=False)
    return score(test, {r.key: {u for u, v in cos[r.key].items() if v <= th} for r in test}).as_dict()


def _print_set(title: str, rep, s: LabeledSet, tfidf: dict | None) -> None:  # noqa: ANN001 - a forensics Report
    ev = rep.sections[0].metrics["evaluation"]
    print(
        f"\n{title}: {ev['dialogues']} dialogues, {ev['judged_turns']} judged turns, "
        f"{ev['reference_shifts']} labeled shifts"
    )
    grid = evaluation_grid(ev)
    if tfidf is not None:
        f = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
        grid.append(
            [
                "TF-IDF cosine, threshold tuned on the other half",
                str(tfidf["predicted"]),
                *(f(tfidf[k]) for k in ("precision", "recall", "f1", "f1_within1", "pk", "windowdiff")),
            ]
        )
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    for r in grid:
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    d = ev["detectors"]
    ours = d["ours"]
    floor_f1 = d[s.floor]["f1"]
    checks = [
        ("floor: Pk <= mark nothing", ours["pk"] <= d["none"]["pk"]),
        (
            f"floor: F1 > {'mark every turn' if s.floor == 'all' else 'random at the base rate'} ({floor_f1:.3f})",
            ours["f1"] > floor_f1,
        ),
        (f"target F1 >= {s.targets['f1']}", ours["f1"] >= s.targets["f1"]),
        (f"target Pk <= {s.targets['pk']}", ours["pk"] <= s.targets["pk"]),
    ]
    if s.mode == "dialogue":
        checks.append(("target: F1 > mark every turn", ours["f1"] > d["all"]["f1"]))
    print("  " + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks))


if __name__ == "__main__":
    main()
