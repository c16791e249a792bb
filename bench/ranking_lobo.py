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
the pick, beside the trivial rankings. Then the pick on every dev half. The report's own form is scored by
``outcomes.run_scores`` itself (its problems on an error most runs show weighed as that error:
``outcomes.setting_weight``). No benchmark's own half, dev or held-out, chooses the form it is scored with, nor which
of its kinds are silent.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
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
UNTESTED = ", untested edits read"  # the same with ``UNTESTED_EDIT`` counted as a problem kind
WEIGHS = tuple(w + s + u for u in ("", UNTESTED) for s in ("", SIGNAL) for w in ("count", "rarity", "capped"))
Form = tuple[str, tuple[str, ...], float, str]
OWN: Form = ("mean", LENGTHS[0], oc.PROBLEM_WEIGHT, "rarity")
Graded = tuple[pl.DataFrame, dict[str, set[str]]]


UNTESTED_EDIT = "ended: untested_edit"
# a call that changes a file: a tool named for it (an editor's ``view`` is no change), or a shell command that edits
# in place, patches, or writes a source or data file (a redirect or a here-document into it)
EDIT_TOOL = re.compile(r"(?i)edit|patch|replace|write|create|insert|update_file|modify")
EDIT_COMMAND = re.compile(
    r"\bsed\s+(?:-\w+\s+)*-i|\bpatch\s+-p|\bapply_patch\b|\bgit apply\b|<<.*?>\s*['\"]?[\w./-]+|"
    r"(?<![>&\d])>{1,2}\s*['\"]?[\w./-]+\.(?:py|java|kt|scala|c|cc|cpp|h|hpp|js|ts|tsx|jsx|go|rs|rb|php|cs|sh|"
    r"json|ya?ml|toml|ini|cfg|conf|xml|html|css|sql|md|txt)\b"
)
# a call that runs something: an interpreter, compiler, build or test tool, or a script of the work tree
RUNS_SOMETHING = re.compile(
    r"\b(?:python[0-9.]*|pytest|tox|javac|java|mvn|mvnw|gradle|gradlew|make|cmake|gcc|g\+\+|clang|node|npm|npx|yarn|"
    r"pnpm|bun|deno|tsc|jest|go|cargo|rustc|ruby|rake|perl|php|dotnet|bash|sh)\b|(?<![\w/])\./[\w.-]+"
)
CALL_CHARS = 2000  # of a call's arguments read for its command


def _said_command(args: str) -> str:
    """A call's ``command`` argument (SWE-agent's ``edit 20:24 ...``, ``create Repro.java``), else its raw arguments."""
    try:
        parsed = json.loads(args)
    except ValueError:
        return args
    said = parsed.get("command") if isinstance(parsed, dict) else None
    return said if isinstance(said, str) else args


def untested_edits(con: duckdb.DuckDBPyConnection, cutoff: dict[str, int | None]) -> set[str]:
    """The runs whose last change to a file (``EDIT_TOOL``, ``EDIT_COMMAND``; a call that answered without error)
    no later call ran anything that then succeeded (``RUNS_SOMETHING``, answered without error), before the grade
    was revealed: the work handed in was never exercised. A run that changed no file is not one (MINT's, tau2's and
    MedAgentBench's agents call no editor). On terminal-bench's dev half 24 of 72 failed trials the agent replied in
    and 1 of 23 passed ones; on Multi-SWE-bench's 114 of 197 and 8 of 11 (no Java toolchain: nothing runs there).
    A reading offered to the family (``UNTESTED``), not one the report's ranking takes: left out of the other four,
    terminal-bench's dev half does not pick it, and Multi-SWE-bench's, which the other four pick it for, falls."""
    from forensics.analyzers.rules.judge import command_of

    rows = con.execute(
        "SELECT conversation_id, position, name, left(coalesce(arguments, ''), ?), "
        "coalesce(is_error, false) OR result_position IS NULL FROM tool_calls "
        "WHERE position IS NOT NULL AND conversation_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY conversation_id, position, call_index",
        [CALL_CHARS, sorted(cutoff)],
    ).fetchall()
    calls: dict[str, list[tuple[bool, bool]]] = {}  # per run, each call: (changes a file, runs something and succeeded)
    for cid, pos, name, args, err in rows:
        cut = cutoff.get(cid)
        if cut is not None and pos >= cut:
            continue
        name = str(name or "")
        shell = command_of(name, args)
        command = shell if shell is not None else _said_command(args)
        text = command if shell is not None else f"{name} {command}"  # a shell tool's name is no program it runs
        edit = not err and (
            bool(EDIT_COMMAND.search(command))
            or (bool(EDIT_TOOL.search(name)) and not re.match(r"\s*(?:view|open|cat|ls)\b", command))
        )
        calls.setdefault(cid, []).append((edit, not err and not edit and bool(RUNS_SOMETHING.search(text))))
    out = set()
    for cid, seq in calls.items():
        last = max((i for i, (edit, _) in enumerate(seq) if edit), default=None)
        if last is not None and not any(ran for _, ran in seq[last + 1 :]):
            out.add(cid)
    return out


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
    if weigh.endswith(UNTESTED):
        weigh = weigh.removesuffix(UNTESTED)
    else:
        kinds = {c: ks - {UNTESTED_EDIT} for c, ks in kinds.items()}
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


CITED: dict[str, dict[str, oc.RunErrors]] = {}  # per warehouse loaded, the errors its findings cite (the report's form)


def load(db: Path) -> tuple[pl.DataFrame, dict[str, set[str]]]:
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    con = duckdb.connect(str(db), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    kinds = oc.problem_kind_sets(ctx, runs, [])
    CITED[db.stem] = oc.cited_errors(ctx, runs)
    cutoff = dict(zip(runs["conversation_id"].to_list(), runs["cutoff"].to_list()))
    for cid in untested_edits(con, cutoff):  # read only by the forms that count it (``UNTESTED``)
        kinds.setdefault(cid, set()).add(UNTESTED_EDIT)
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
        if form == OWN:
            got = oc.run_scores(df, {c: ks - {UNTESTED_EDIT} for c, ks in kinds.items()}, CITED.get(name))
        else:
            got = scores(df, kinds, *form, mute(name, left_out))
        return oc.auc(got, [not s for s in df["success"].to_list()])

    # each benchmark's dev half under every form, its silent kinds read on the others' dev halves less the one left
    # out (so when a benchmark's pick is made on the other four, none of its own outcomes weighs their kinds)
    dev = {(f, n, o): auc(n, "dev", f, o) for f in forms for n in sets for o in (None, *sets) if o != n}

    def mean(f: Form, names: list[str], left_out: str | None = None) -> float:
        got = [a for n in names if (a := dev[(f, n, left_out)]) is not None]
        return sum(got) / len(got)

    def name_of(f: Form) -> str:
        agg, parts, w, weigh = f
        read = weigh.endswith(UNTESTED)
        weigh = weigh.removesuffix(UNTESTED)
        base = weigh.removesuffix(SIGNAL)
        each = {"count": "each 1", "rarity": "each by its rarity", "capped": "each by its rarity × 2, at most 1"}[base]
        each += ", kinds silent elsewhere 0" if weigh.endswith(SIGNAL) else ""
        each += ", untested edits read" if read else ""
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
