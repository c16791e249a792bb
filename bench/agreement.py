"""How far two readers of the fresh set agree: the ceiling a detector can be held to (bench/data/README.md).

    python -m bench.agreement [--first P] [--second P] [--shared ../shared] [--no-detectors] [--json]

The first reader's labels are ``bench/data/problems-fresh.jsonl``; the second reader labeled the same conversations
blind (``bench/data/problems-fresh-second.jsonl``, ``"labeler": "second"``). Conversations are paired by ``root`` +
``source`` + ``native_id``; only the ones both labeled count. Printed whole and per half (``fresh-dev`` /
``fresh-held``, ``bench.problems.fresh_half``):

- **origin** of every user-role turn both list (same position and text prefix): the share they agree on and Cohen's
  kappa, beside the agreement chance alone gives (from each reader's own shares);
- **shift** on the turns both call person: kappa beside chance, and the second reader's precision and recall taken
  against the first (F1 is the same either way round);
- **problems**: a match is the same kind within ``WINDOW`` (2) positions (one label to one label, nearest first):
  matched, only the first's, only the second's, and the F1 of one against the other, per kind and all kinds; also
  "any kind" within ``WINDOW`` (the same place, another kind) and "same kind, same conversation" (any distance);
- **outcome_judged**: agreement and kappa beside chance;
- with the shared logs (``--no-detectors`` leaves it out): the ``problems`` analyzer's recall against each reader
  (``bench.problems.score``: its kind within ``bench.problems.WINDOW`` messages) and against the labels both
  readers share, and the ``topics`` analyzer's shift F1 against each reader beside the readers' F1 against each
  other, so a figure reads "the detector finds X of A's and Y of B's; the two readers agree on Z".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.problem_labels import KINDS

ROOT = Path(__file__).resolve().parent.parent
FIRST = ROOT / "bench" / "data" / "problems-fresh.jsonl"
SECOND = ROOT / "bench" / "data" / "problems-fresh-second.jsonl"
WINDOW = 2
ORIGINS = ("person", "harness", "tool_result")
OUTCOMES = ("success", "partial", "failure", "unclear")
HALVES = ("fresh-dev", "fresh-held")

Line = dict[str, Any]


def key(d: Line) -> tuple[str, str, str]:
    return (d["root"], d["source"], d["native_id"])


def pairs(first: list[Line], second: list[Line]) -> list[tuple[Line, Line]]:
    """The conversations both readers labeled, in the first file's order; a conversation twice in one file is an
    error."""
    for name, rows in (("first", first), ("second", second)):
        seen = Counter(key(d) for d in rows)
        twice = [k for k, n in seen.items() if n > 1]
        if twice:
            raise SystemExit(f"{name} labels: {twice[0][1]} {twice[0][2]} is labeled twice")
    by = {key(d): d for d in second}
    return [(a, by[key(a)]) for a in first if key(a) in by]


def kappa(a: list[str], b: list[str]) -> dict[str, Any]:
    """Cohen's kappa of two readers' categories over the same items, with the agreement chance alone gives
    (``chance``: the sum over categories of the two readers' shares multiplied)."""
    n = len(a)
    if n != len(b):
        raise ValueError("kappa: the two readers judge different numbers of items")
    if n == 0:
        return {"n": 0, "agree": 0, "share": None, "chance": None, "kappa": None}
    agree = sum(x == y for x, y in zip(a, b))
    ca, cb = Counter(a), Counter(b)
    chance = sum(ca[k] * cb[k] for k in ca) / (n * n)
    share = agree / n
    k = None if chance == 1 else (share - chance) / (1 - chance)
    return {"n": n, "agree": agree, "share": share, "chance": chance, "kappa": k}


def aligned_turns(a: Line, b: Line) -> tuple[list[tuple[Line, Line]], int]:
    """The user-role turns both readers list at the same position with the same text prefix, and how many turns
    either lists that the other does not."""
    tb = {(t["position"], t["text_prefix"]): t for t in b["user_turns"]}
    both = [
        (t, tb[(t["position"], t["text_prefix"])]) for t in a["user_turns"] if (t["position"], t["text_prefix"]) in tb
    ]
    return both, len(a["user_turns"]) + len(b["user_turns"]) - 2 * len(both)


def origin_agreement(ps: list[tuple[Line, Line]]) -> dict[str, Any]:
    xs, ys, unaligned = [], [], 0
    disagree: Counter[tuple[str, str]] = Counter()
    for a, b in ps:
        both, miss = aligned_turns(a, b)
        unaligned += miss
        for ta, tb in both:
            xs.append(ta["origin"])
            ys.append(tb["origin"])
            if ta["origin"] != tb["origin"]:
                disagree[(ta["origin"], tb["origin"])] += 1
    out = kappa(xs, ys)
    out["unaligned"] = unaligned
    out["disagreements"] = {f"{x} -> {y}": n for (x, y), n in sorted(disagree.items())}
    return out


def prf(truth: list[bool], guess: list[bool]) -> dict[str, Any]:
    tp = sum(t and g for t, g in zip(truth, guess))
    fp = sum(g and not t for t, g in zip(truth, guess))
    fn = sum(t and not g for t, g in zip(truth, guess))
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return {"both": tp, "only_first": fn, "only_second": fp, "precision": p, "recall": r, "f1": f1}


def shift_agreement(ps: list[tuple[Line, Line]]) -> dict[str, Any]:
    """On the turns both readers call person: kappa of shift, and the second reader's P/R/F1 against the first."""
    xs, ys, every = [], [], []
    for a, b in ps:
        first_turn = True
        for ta, tb in aligned_turns(a, b)[0]:
            if ta["origin"] == tb["origin"] == "person":
                xs.append(bool(ta["shift"]))
                ys.append(bool(tb["shift"]))
                every.append(not first_turn)  # the first person turn is never a shift
                first_turn = False
    out = kappa([str(x) for x in xs], [str(y) for y in ys])
    out |= prf(xs, ys)
    out["first_shifts"], out["second_shifts"] = sum(xs), sum(ys)
    out["every_turn_f1"] = prf(xs, every)["f1"]  # every person turn after the first marked, held against the first
    return out


def distance(p: list[int], q: list[int]) -> int:
    return min(abs(x - y) for x in p for y in q)


def match(first: list[dict[str, Any]], second: list[dict[str, Any]], same_kind: bool, window: int | None) -> int:
    """How many labels of one conversation pair up one to one (nearest first): the same kind (or any kind) within
    ``window`` positions (``None``: anywhere in the conversation)."""
    cands = sorted(
        (distance(a["positions"], b["positions"]), i, j)
        for i, a in enumerate(first)
        for j, b in enumerate(second)
        if (not same_kind or a["kind"] == b["kind"])
    )
    used_a: set[int] = set()
    used_b: set[int] = set()
    for d, i, j in cands:
        if window is not None and d > window:
            break
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
    return len(used_a)


def problem_counts(
    ps: list[tuple[Line, Line]], kind: str | None, same_kind: bool, window: int | None
) -> dict[str, Any]:
    """Matched / only the first's / only the second's labels (of ``kind``, or every kind), and F1 of one against
    the other (2 * matched over both readers' labels: the same either way round)."""
    n_first = n_second = matched = 0
    for a, b in ps:
        pa = [p for p in a["problems"] if kind is None or p["kind"] == kind]
        pb = [p for p in b["problems"] if kind is None or p["kind"] == kind]
        n_first += len(pa)
        n_second += len(pb)
        matched += match(pa, pb, same_kind, window)
    total = n_first + n_second
    return {
        "first": n_first,
        "second": n_second,
        "matched": matched,
        "only_first": n_first - matched,
        "only_second": n_second - matched,
        "f1": 2 * matched / total if total else None,
    }


def problem_agreement(ps: list[tuple[Line, Line]]) -> dict[str, Any]:
    return {
        "kinds": {k: problem_counts(ps, k, True, WINDOW) for k in KINDS},
        "all": problem_counts(ps, None, True, WINDOW),
        "any_kind": problem_counts(ps, None, False, WINDOW),
        "same_conversation": problem_counts(ps, None, True, None),
    }


def outcome_agreement(ps: list[tuple[Line, Line]]) -> dict[str, Any]:
    xs = [a["outcome_judged"] for a, _ in ps]
    ys = [b["outcome_judged"] for _, b in ps]
    out = kappa(xs, ys)
    out["disagreements"] = {
        f"{x} -> {y}": n for (x, y), n in sorted(Counter((x, y) for x, y in zip(xs, ys) if x != y).items())
    }
    return out


def agreement(ps: list[tuple[Line, Line]]) -> dict[str, Any]:
    return {
        "conversations": len(ps),
        "origin": origin_agreement(ps),
        "shift": shift_agreement(ps),
        "problems": problem_agreement(ps),
        "outcome_judged": outcome_agreement(ps),
    }


def evaluate(first: list[Line], second: list[Line]) -> dict[str, Any]:
    """Agreement on the conversations both labeled, whole and in each fresh half."""
    from bench.problems import fresh_half

    ps = pairs(first, second)
    out = {"whole": agreement(ps)}
    for h in HALVES:
        out[h] = agreement([(a, b) for a, b in ps if fresh_half(a["source"], a["native_id"]) == h])
    return out


def read(path: Path) -> list[Line]:
    from bench.fresh_labels import lines

    rows = lines(path)
    for n, d in enumerate(rows, 1):
        missing = {"native_id", "user_turns", "problems", "outcome_judged"} - set(d)
        if missing:
            raise SystemExit(f"{path}: line {n} lacks {', '.join(sorted(missing))}")
    return rows


# --------------------------------------------------------------------------------------------- the detectors


def shared_labels(first: list[Line], second: list[Line]) -> list[Line]:
    """The first reader's lines with only the problems the second reader matched (same kind within ``WINDOW``):
    the labels both readers hold, at the first reader's positions."""
    by = {key(d): d for d in second}
    out = []
    for a in first:
        b = by.get(key(a))
        if b is None:
            continue
        kept = []
        for kind in KINDS:
            pa = [p for p in a["problems"] if p["kind"] == kind]
            pb = [p for p in b["problems"] if p["kind"] == kind]
            cands = sorted(
                (distance(x["positions"], y["positions"]), i, j) for i, x in enumerate(pa) for j, y in enumerate(pb)
            )
            ua: set[int] = set()
            ub: set[int] = set()
            for d, i, j in cands:
                if d <= WINDOW and i not in ua and j not in ub:
                    ua.add(i)
                    ub.add(j)
            kept += [pa[i] for i in sorted(ua)]
        out.append(dict(a, problems=kept))
    return out


def detectors(first_path: Path, second_path: Path, shared: Path) -> dict[str, Any]:
    """The problems analyzer's recall against each reader and against the labels both share; the topics
    analyzer's shift P/R/F1 against each reader. One scratch warehouse of the files the labels name."""
    from bench import fresh_labels
    from bench import problems as pb
    from bench import topic_agent_logs as tal
    from bench.problem_labels import load
    from forensics.warehouse import open_warehouse

    first, second = read(first_path), read(second_path)
    both = {key(a) for a, _ in pairs(first, second)}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        subset = {}
        for name, rows in (("first", first), ("second", second), ("both readers", shared_labels(first, second))):
            p = t / f"{name.replace(' ', '_')}.jsonl"
            p.write_text("".join(json.dumps(d) + "\n" for d in rows if key(d) in both), encoding="utf-8")
            subset[name] = p
        db = fresh_labels.warehouse(subset["first"], shared, t)
        found = pb.findings(db)
        switches = tal.switches(db)
        res: dict[str, Any] = {"problems": {}, "topics": {}}
        with open_warehouse(db, read_only=True) as wh:
            for name, p in subset.items():
                labeled = load(p, wh.con, shared, fresh_labels.roots(shared))
                res["problems"][name] = pb.part_scores(labeled, found)
                if name != "both readers":
                    res["topics"][name] = tal._scores(tal.fresh_labeled(wh.con, p, shared), switches)
    res["window"] = pb.WINDOW
    return res


# ------------------------------------------------------------------------------------------------- render


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def render_part(name: str, r: dict[str, Any]) -> list[str]:
    o, s, pr, oc = r["origin"], r["shift"], r["problems"], r["outcome_judged"]
    out = [f"{name}: {r['conversations']} conversations both readers labeled"]
    out.append(
        f"  origin of user-role turns: {o['agree']}/{o['n']} agree ({_f(o['share'])}), kappa {_f(o['kappa'])} "
        f"(chance agreement {_f(o['chance'])}); turns only one lists: {o['unaligned']}"
        + (f"; {', '.join(f'{k} {v}' for k, v in o['disagreements'].items())}" if o["disagreements"] else "")
    )
    out.append(
        f"  shift on the {s['n']} turns both call person: {s['agree']}/{s['n']} agree ({_f(s['share'])}), kappa "
        f"{_f(s['kappa'])} (chance {_f(s['chance'])}); shifts: first {s['first_shifts']}, second "
        f"{s['second_shifts']}, both {s['both']}; second against first P {_f(s['precision'])} R {_f(s['recall'])} "
        f"F1 {_f(s['f1'])} (marking every person turn after the first: F1 {_f(s['every_turn_f1'])})"
    )
    out.append(f"  problems, a match = same kind within ±{WINDOW} positions (one to one):")
    out.append(f"    {'kind':26} {'first':>5} {'second':>6} {'matched':>7} {'only 1st':>8} {'only 2nd':>8} {'F1':>5}")
    rows = [(k, v) for k, v in pr["kinds"].items() if v["first"] or v["second"]]
    rows += [
        ("all kinds", pr["all"]),
        (f"any kind within ±{WINDOW}", pr["any_kind"]),
        ("same kind, same conv.", pr["same_conversation"]),
    ]
    for k, v in rows:
        out.append(
            f"    {k:26} {v['first']:>5} {v['second']:>6} {v['matched']:>7} {v['only_first']:>8} "
            f"{v['only_second']:>8} {_f(v['f1']):>5}"
        )
    out.append(
        f"  outcome_judged: {oc['agree']}/{oc['n']} agree ({_f(oc['share'])}), kappa {_f(oc['kappa'])} "
        f"(chance {_f(oc['chance'])})"
        + (f"; {', '.join(f'{k} {v}' for k, v in oc['disagreements'].items())}" if oc["disagreements"] else "")
    )
    return out


def render_detectors(d: dict[str, Any]) -> list[str]:
    out = [f"the detectors against each reader (problems: its kind within ±{d['window']} messages; topics: exact turn)"]
    for name, r in d["problems"].items():
        a = r["all"]
        per = ", ".join(
            f"{k} {v['detector']['found']}/{v['detector']['labels']}"
            for k, v in r["kinds"].items()
            if v["detector"]["labels"]
        )
        out.append(
            f"  problems vs {name}: finds {a['found']}/{a['labels']} labels (recall {_f(a['recall'])}; marking the "
            f"last person turn: {a['last_person_found']}/{a['labels']}); {per}"
        )
    for name, r in d["topics"].items():
        o, e = r["detectors"]["ours"], r["detectors"]["every person turn"]
        out.append(
            f"  topics vs {name}: {r['shifts']} shifts on {r['person_turns']} person turns; detector P "
            f"{_f(o['precision'])} R {_f(o['recall'])} F1 {_f(o['f1'])} (every person turn F1 {_f(e['f1'])})"
        )
    return out


def render(res: dict[str, Any]) -> str:
    lines: list[str] = []
    for name in ("whole", *HALVES):
        lines += render_part(name, res[name]) + [""]
    if "detectors" in res:
        lines += render_detectors(res["detectors"])
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--first", type=Path, default=FIRST, help="the first reader's labels (default %(default)s)")
    ap.add_argument("--second", type=Path, default=SECOND, help="the second reader's labels (default %(default)s)")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="for the agent-logs the labels name")
    ap.add_argument("--no-detectors", action="store_true", help="agreement alone (no warehouse, no analyzers)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        first, second = read(a.first), read(a.second)
        res = evaluate(first, second)
        if res["whole"]["conversations"] == 0:
            raise SystemExit(f"{a.first.name} and {a.second.name}: no conversation in both")
        if not a.no_detectors:
            res["detectors"] = detectors(a.first, a.second, a.shared)
    except SystemExit as e:  # bad input: one line, exit 2
        if not isinstance(e.code, str):
            raise
        print(f"bench.agreement: {e.code}", file=sys.stderr)
        return 2
    print(json.dumps(res, indent=1) if a.json else render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
