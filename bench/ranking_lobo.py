"""The run ranking's form chosen leave one benchmark out (docs/failures-evaluation.md#multi-swe-bench-under-the-message-count-on-held-out-why-and-the-rankings-form-chosen-leave-one-benchmark-out-branch-rank8):

    python -m bench.ranking_lobo WAREHOUSE [WAREHOUSE...] [--dev-only]

Each WAREHOUSE is a graded folder ingested and reported with the report's defaults (``bench.graded_runs --db-dir``,
or ``forensics ingest`` then ``forensics report``). A family of rankings of the report's form is scored on the dev
half of every warehouse (halves by task, ``bench.failures.half``): problems first or added to length with weight
1/4, 1/2, 1 or 2; each problem counted 1, weighed by its rarity among the runs ranked (``outcomes.rarity``), or by
its rarity capped (twice the rarity, at most 1: a kind in at most the square root of the runs counts whole); each
of those also with the kinds silent elsewhere weighing nothing (found no more often on the failed than on the passed
runs of the dev halves of the benchmarks other than the one scored: ``silent``); length the mean, the largest or
both of the ranks by messages, characters the agent wrote (among all runs, among the model's), tool calls and tool
errors; errors breaking ties. For each benchmark the form with the best mean dev AUC over the OTHER benchmarks is
picked (ties: the report's own), and that benchmark's dev and held-out AUC printed for the report's own form and
the pick, beside the trivial rankings. Then the pick on every dev half. No benchmark's own half, dev or held-out,
chooses the form it is scored with, nor which of its kinds are silent.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import duckdb
import polars as pl

from bench.failures import half
from forensics.analyzers import outcomes as oc

RANKS = {
    "messages": ("m", False),
    "characters": ("k", False),
    "characters, model's": ("k", True),
    "tool calls": ("t", False),
    "errors": ("e", False),
}
LENGTHS = [
    ("messages", "characters", "characters, model's"),  # the report's
    ("messages", "characters"),
    ("messages", "characters, model's"),
    ("messages",),
    ("messages", "characters", "characters, model's", "errors"),
    ("messages", "characters", "characters, model's", "tool calls"),
]
FIRST = float("inf")  # problems first, length only within an equal sum
WEIGHTS = (0.25, 0.5, 1.0, 2.0, FIRST)
SIGNAL = " + signal"  # a weighing's kinds without signal on the other benchmarks' dev halves weigh nothing
WEIGHS = tuple(w + s for s in ("", SIGNAL) for w in ("count", "rarity", "capped"))
Form = tuple[str, tuple[str, ...], float, str]
OWN: Form = ("mean", LENGTHS[0], oc.PROBLEM_WEIGHT, "rarity")
Graded = tuple[pl.DataFrame, dict[str, set[str]]]


def silent(dev: list[Graded]) -> frozenset[str]:
    """The kinds that tell failed runs from passed ones nowhere among these dev halves: summed over the halves they are
    found in, the share of failed runs with the kind less the share of passed runs with it is not above 0."""
    gap: dict[str, float] = {}
    for df, kinds in dev:
        failed = [not s for s in df["success"].to_list()]
        nf, np_ = sum(failed), len(failed) - sum(failed)
        for c, f in zip(df["conversation_id"].to_list(), failed):
            for k in oc.counted_kinds(kinds.get(c, set())):
                gap[k] = gap.get(k, 0.0) + ((1 / nf if nf else 0.0) if f else -(1 / np_ if np_ else 0.0))
    return frozenset(k for k, g in gap.items() if g <= 0)


def scores(
    df: pl.DataFrame,
    kinds: dict[str, set[str]],
    agg: str,
    parts: tuple[str, ...],
    weight: float,
    weigh: str,
    mute: frozenset[str] = frozenset(),
) -> list[float]:
    """A ranking of the report's form: problems (each counted 1, or ``weigh`` "rarity": ``outcomes.rarity`` among
    the runs ranked, "capped": twice that, at most 1; with ``SIGNAL``, the kinds in ``mute`` weigh nothing) times
    ``weight`` (``FIRST``: problems first), plus length (the ``agg`` of the ``parts``' ranks as shares), errors
    breaking ties of length; a run whose agent never replied first."""
    n = len(df)
    base = pl.DataFrame(
        {
            "m": df["messages"],
            "k": df["assistant_chars"],
            "t": df["tool_calls"],
            "e": df["tool_errors"],
            "model": df["model"],
        }
    )
    cols = []
    for p in parts:
        c, own = RANKS[p]
        r = base.select(
            (pl.col(c).rank("average").over("model") / pl.len().over("model"))
            if own
            else (pl.col(c).rank("average") / n)
        ).to_series()
        cols.append(r)
    frame = pl.DataFrame({str(i): c for i, c in enumerate(cols)})
    # a sum orders as the mean does, and adds the shares as outcomes.run_scores does (the same ties)
    length = {"mean": frame.sum_horizontal(), "max": frame.max_horizontal()}.get(
        agg, frame.mean_horizontal() + frame.max_horizontal()
    )
    key = length.rank("dense").cast(pl.Float64) + base["e"].rank("average") / (n + 1)
    order = key.rank("average").to_list()
    ids = df["conversation_id"].to_list()
    own = {c: oc.counted_kinds(kinds.get(c, set())) for c in ids}
    rare = oc.rarity({c: kinds.get(c, set()) for c in ids})
    by = weigh.removesuffix(SIGNAL)
    scale = {"count": lambda r: 1.0, "rarity": lambda r: r, "capped": lambda r: min(1.0, 2 * r)}[by]
    each = {k: 0.0 if weigh.endswith(SIGNAL) and k in mute else scale(r) for k, r in rare.items()}
    problems = [float(sum(each[k] for k in own[c])) for c in ids]
    never = [oc.NEVER_ACTED if oc.NO_REPLY in kinds.get(c, ()) else 0 for c in ids]
    if weight == FIRST:  # the sum first: sums that differ are more than a length share (< 1) apart
        ps = pl.Series(problems).rank("dense").to_list()
        return [v * 1000 + p + (o - 0.5) / n * 0.999 for v, p, o in zip(never, ps, order)]
    return [v + weight * p + (o - 0.5) / n * 0.999 for v, p, o in zip(never, problems, order)]


def load(db: Path) -> tuple[pl.DataFrame, dict[str, set[str]]]:
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    con = duckdb.connect(str(db), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    kinds = oc.problem_kind_sets(ctx, runs, [])
    con.close()
    return runs, kinds


def part(runs: pl.DataFrame, h: str) -> pl.DataFrame:
    return runs if h == "all" else runs.filter(pl.Series([half(str(t)) == h for t in runs["task"]]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("warehouses", nargs="+", type=Path)
    ap.add_argument("--dev-only", action="store_true", help="print the dev halves only (while choosing)")
    args = ap.parse_args()
    missing = [str(w) for w in args.warehouses if not w.is_file()]
    if missing:
        ap.error(f"no such warehouse: {', '.join(missing)}")
    sets = {w.stem: load(w) for w in args.warehouses}
    forms: list[Form] = list(itertools.product(("mean", "max", "mean+max"), LENGTHS, WEIGHTS, WEIGHS))
    dev_of = {n: (part(r, "dev"), k) for n, (r, k) in sets.items()}

    muted = {
        (name, o): silent([g for n, g in dev_of.items() if n not in (name, o)]) for name in sets for o in (None, *sets)
    }

    def mute(name: str, left_out: str | None) -> frozenset[str]:
        """The kinds without signal on the dev halves of the benchmarks other than ``name`` and ``left_out``."""
        return muted[(name, left_out)]

    def auc(name: str, h: str, form: Form, left_out: str | None = None) -> float | None:
        runs, kinds = sets[name]
        df = part(runs, h)
        got = oc.run_scores(df, kinds) if form == OWN else scores(df, kinds, *form, mute(name, left_out))
        return oc.auc(got, [not s for s in df["success"].to_list()])

    # each benchmark's dev half under every form, its silent kinds read on the others' dev halves less the one left
    # out (so when a benchmark's pick is made on the other four, none of its own outcomes weighs their kinds)
    dev = {(f, n, o): auc(n, "dev", f, o) for f in forms for n in sets for o in (None, *sets) if o != n}

    def mean(f: Form, names: list[str], left_out: str | None = None) -> float:
        got = [a for n in names if (a := dev[(f, n, left_out)]) is not None]
        return sum(got) / len(got)

    def name_of(f: Form) -> str:
        agg, parts, w, weigh = f
        base = weigh.removesuffix(SIGNAL)
        each = {"count": "each 1", "rarity": "each by its rarity", "capped": "each by its rarity × 2, at most 1"}[base]
        each += ", kinds silent elsewhere 0" if weigh.endswith(SIGNAL) else ""
        return f"{agg} of {' + '.join(parts)}; problems ({each}) {'first' if w == FIRST else f'× {w:g}'}"

    print(
        "| benchmark | half | the report's | picked on the other benchmarks' dev halves | its AUC | by messages | "
        "by characters | by tool calls | by errors | random |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    for name in sets:
        others = [n for n in sets if n != name]
        pick = max(forms, key=lambda f: (round(mean(f, others, name), 4), f == OWN))
        for h in ("dev",) if args.dev_only else ("dev", "held-out", "all"):
            runs, _ = sets[name]
            df = part(runs, h)
            failed = [not s for s in df["success"].to_list()]
            refs = [
                oc.auc([float(v) for v in df[c]], failed)
                for c in ("messages", "assistant_chars", "tool_calls", "tool_errors")
            ]
            own, got = auc(name, h, OWN), auc(name, h, pick)
            cell = lambda a: "–" if a is None else f"{a:.3f}"  # noqa: E731
            print(
                f"| {name} | {h} | {cell(own)} | {name_of(pick)} | {cell(got)} | "
                + " | ".join(cell(r) for r in refs)
                + " | 0.500 |"
            )
    best = max(forms, key=lambda f: (round(mean(f, list(sets)), 4), f == OWN))
    print(
        f"\nPicked on every dev half: {name_of(best)} (mean dev AUC {mean(best, list(sets)):.4f}; the report's {mean(OWN, list(sets)):.4f})"
    )


if __name__ == "__main__":
    main()
