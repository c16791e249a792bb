"""The problem detectors (docs/definitions.md#problems-a-reviewer-flags) judged against the reviewer's labels, dev and held-out halves apart.

    python -m bench.problems [--shared ../shared] [--db W.duckdb] [--dev] [--json]
    python -m bench.problems --fresh-only [--fresh bench/data/problems-fresh.jsonl]
    python -m bench.problems --pool bench/data/problems-fresh-r4.jsonl --pool bench/data/problems-fresh-r5.jsonl

Ingests ``agent-logs/`` into a fresh warehouse (or reads ``--db``, ingested from the same folder), runs the
``problems`` analyzer over every conversation, matches the 60 labeled conversations by source + native id, and
prints per kind and half: findings on the labeled conversations, precision (a finding is right when a label of
its kind lies within ``WINDOW`` messages of one of its positions), recall of the labels, beside the trivial
references: every conversation marked at its last person turn, every conversation marked as a whole, and
nothing marked. The split is fixed in
``bench.problem_labels.half``. ``--dev`` prints the dev half only (develop without looking at the held-out half).

The fresh set (``--fresh PATH``, default ``bench/data/problems-fresh.jsonl`` when present; ``bench.fresh_labels``):
conversations labeled blind by the same guide, which no detector was tuned on; its files are ingested alone into a
scratch warehouse and scored like a half, with the same trivial references; then split by the same hash into
fresh-dev and fresh-held (``fresh_half``). ``--dev`` prints its fresh-dev half alone.

Leave one family out (dev half): a dev label counts only when a rule that finds it (its name without the tool or the
count: ``same_action_N_times``) also finds a dev label of another agent family, i.e. the rule would have been
written without the label's family: the estimate of what carries to agents no one here has read (``lofo``). With the
fresh set, the same on both dev halves at once (shared dev + fresh-dev, one agent under its two folder names one
family, ``FAMILY_ALIASES``), with the labels lost that way and the labels never found, by kind: the guide to develop by.
With ``--pool FILE`` (repeatable: the fourth and fifth rounds, read as dev once measured), the same over the whole dev
pool, those files counted whole, with every kind's precision at once and the last person turn beside it (``pool``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from bench.problem_labels import KINDS, Labeled, load
from bench.problem_labels import half as shared_half

WINDOW = 5
ROOT = Path(__file__).resolve().parent.parent


def findings(db: Path) -> list[dict[str, Any]]:
    """Every problem the analyzer finds in the warehouse (all conversations), as rows of problem_findings."""
    from forensics.analyzers import load as analyzer
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    con = duckdb.connect(str(db))
    try:
        ctx = Context.open(con, load_config(None), Selection())
        analyzer("problems").run(ctx)
        cols = ["conversation_id", "kind", "position", "positions", "quote", "rule", "norm"]
        return [dict(zip(cols, r)) for r in con.execute(f"SELECT {', '.join(cols)} FROM problem_findings").fetchall()]
    finally:
        con.close()


def near(a: list[int], b: list[int]) -> bool:
    return any(abs(x - y) <= WINDOW for x in a for y in b)


def score(labeled: list[Labeled], found: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Findings of ``kind`` on these conversations, how many match a label, and how many labels are found."""
    by = {c.conversation_id: c for c in labeled}
    mine = [f for f in found if f["kind"] == kind and f["conversation_id"] in by]
    labels = [(c.conversation_id, p["positions"]) for c in labeled for p in c.problems if p["kind"] == kind]
    right = sum(any(cid == f["conversation_id"] and near(f["positions"], pos) for cid, pos in labels) for f in mine)
    got = sum(any(f["conversation_id"] == cid and near(f["positions"], pos) for f in mine) for cid, pos in labels)
    return {
        "findings": len(mine),
        "right": right,
        "precision": right / len(mine) if mine else None,
        "labels": len(labels),
        "found": got,
        "recall": got / len(labels) if labels else None,
        "conversations": len({f["conversation_id"] for f in mine}),
    }


def rule_names(rule: str) -> set[str]:
    """The rules a finding's ``rule`` names, without the tool or the count: ``same_action_3_times (Bash)`` ->
    {``same_action_N_times``}; ``said_again+asked_again`` names two."""
    bare = re.sub(r"\s*\([^)]*\)", "", rule)
    return {re.sub(r"_\d+_", "_N_", r) for r in bare.split("+") if r}


# one agent under two folder names: the shared logs' folders and fixtures/real's (the fresh set) name some agents
# apart; leaving one family out leaves the agent out under both names
FAMILY_ALIASES = {"codex_cli": "codex", "continue_dev": "continue", "chatgpt_export": "chatgpt"}


def lofo(labeled: list[Labeled], found: list[dict[str, Any]], aliases: dict[str, str] | None = None) -> dict[str, Any]:
    """Leave one family out on ``labeled`` (the dev half): a label counts when a rule that finds it (a finding of its
    kind within ``WINDOW`` messages) finds a label of another family too. Per label: its family, kind, positions,
    the rules that find it and whether it counts. ``aliases``: family names that name one agent (``FAMILY_ALIASES``,
    for the two dev halves at once)."""
    rows = []
    for c in labeled:
        for p in c.problems:
            rules: set[str] = set()
            for f in found:
                if (
                    f["conversation_id"] == c.conversation_id
                    and f["kind"] == p["kind"]
                    and near(f["positions"], p["positions"])
                ):
                    rules |= rule_names(f["rule"])
            family = (aliases or {}).get(c.family, c.family)
            rows.append({"family": family, "kind": p["kind"], "positions": p["positions"], "rules": sorted(rules)})
    families: dict[str, set[str]] = {}
    for r in rows:
        for name in r["rules"]:
            families.setdefault(name, set()).add(r["family"])
    for r in rows:
        r["counts"] = any(families[n] - {r["family"]} for n in r["rules"])
    return {
        "found": sum(r["counts"] for r in rows),
        "labels": len(rows),
        "rows": rows,
        "rules": {n: sorted(f) for n, f in sorted(families.items())},
    }


def trivial_last_person(labeled: list[Labeled], kind: str) -> dict[str, Any]:
    marks = [
        {"conversation_id": c.conversation_id, "kind": kind, "positions": [c.last_person]}
        for c in labeled
        if c.last_person is not None
    ]
    return score(labeled, marks, kind)


def trivial_every(labeled: list[Labeled], kind: str) -> dict[str, Any]:
    """Every conversation marked as a whole: every label found, right on the conversations that hold one."""
    labels = sum(p["kind"] == kind for c in labeled for p in c.problems)
    holding = sum(any(p["kind"] == kind for p in c.problems) for c in labeled)
    return {
        "findings": len(labeled),
        "right": holding,
        "precision": holding / len(labeled) if labeled else None,
        "labels": labels,
        "found": labels,
        "recall": 1.0 if labels else None,
        "conversations": len(labeled),
    }


def part_scores(part: list[Labeled], found: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind and for every kind at once, on these labeled conversations: the detectors' findings, precision
    and recall beside the trivial references (the last person turn, every conversation, nothing)."""
    rows = {}
    for kind in KINDS:
        rows[kind] = {
            "detector": score(part, found, kind),
            "last_person": trivial_last_person(part, kind),
            "every": trivial_every(part, kind),
            "nothing": {
                "findings": 0,
                "precision": None,
                "recall": 0.0 if any(p["kind"] == kind for c in part for p in c.problems) else None,
            },
        }
    labels_all = [(c.conversation_id, p["kind"], p["positions"]) for c in part for p in c.problems]
    ours = [f for f in found if f["conversation_id"] in {c.conversation_id for c in part}]
    got = sum(
        any(f["conversation_id"] == cid and f["kind"] == k and near(f["positions"], pos) for f in ours)
        for cid, k, pos in labels_all
    )
    right = sum(
        any(f["conversation_id"] == cid and f["kind"] == k and near(f["positions"], pos) for cid, k, pos in labels_all)
        for f in ours
    )
    last = {c.conversation_id: c.last_person for c in part}
    at_last = sum(last[cid] is not None and near([last[cid]], pos) for cid, _, pos in labels_all)
    every = {
        "last_person_found": at_last,
        "labels": len(labels_all),
        "found": got,
        "recall": got / len(labels_all) if labels_all else None,
        "findings": len(ours),
        "right": right,
        "precision": right / len(ours) if ours else None,
        "conversations": len(part),
    }
    return {"kinds": rows, "all": every}


FRESH_HALVES = ("fresh-dev", "fresh-held")


def fresh_half(source: str, native_id: str) -> str:
    """'fresh-dev' or 'fresh-held': the fresh set split by the shared set's hash (``bench.problem_labels.half``)."""
    return f"fresh-{shared_half(source, native_id)}"


def evaluate_fresh(path: Path, shared: Path) -> dict[str, Any]:
    """The fresh labels (``bench.fresh_labels``): their files ingested alone into a scratch warehouse, the
    ``problems`` analyzer run there, scored as one more set (``fresh``), whole and in its two halves
    (``fresh_half``: develop on fresh-dev, look at fresh-held once)."""
    from bench import fresh_labels

    with tempfile.TemporaryDirectory() as tmp:
        db = fresh_labels.warehouse(path, shared, Path(tmp))
        found = findings(db)
        con = duckdb.connect(str(db), read_only=True)
        labeled = load(path, con, shared, fresh_labels.roots(shared))
        con.close()
    res = part_scores(labeled, found)
    res["_dev"] = ([c for c in labeled if fresh_half(c.source, c.native_id) == "fresh-dev"], found)
    res["_all"] = (labeled, found)
    res["families"] = len({c.family for c in labeled})
    res["file"] = path.name
    res["halves"] = {
        h: part_scores([c for c in labeled if fresh_half(c.source, c.native_id) == h], found) for h in FRESH_HALVES
    }
    return res


def evaluate(shared: Path, db: Path | None) -> dict[str, Any]:
    logs, labels = shared / "data" / "agent-logs", shared / "data" / "problems" / "problems.jsonl"
    if not logs.is_dir() or not labels.is_file():
        raise SystemExit(f"{shared}: no data/agent-logs or data/problems/problems.jsonl (pass --shared)")
    with tempfile.TemporaryDirectory() as tmp:
        if db is None:
            from forensics import ingest

            db = Path(tmp) / "w.duckdb"
            ingest([logs], db=db)
        return _evaluate(db, logs, labels)


def _evaluate(db: Path, logs: Path, labels: Path) -> dict[str, Any]:
    found = findings(db)
    con = duckdb.connect(str(db), read_only=True)
    labeled = load(labels, con, logs)
    con.close()
    out: dict[str, Any] = {"window": WINDOW, "halves": {}}
    for half in ("dev", "held"):
        out["halves"][half] = part_scores([c for c in labeled if c.half == half], found)
    con = duckdb.connect(str(db), read_only=True)
    family = dict(
        con.execute(
            "SELECT c.conversation_id, s.format FROM conversations c JOIN sources s USING (source_id)"
        ).fetchall()
    )
    con.close()
    out["families"] = _widest(found, family)
    out["lofo"] = lofo([c for c in labeled if c.half == "dev"], found)
    out["_dev"] = ([c for c in labeled if c.half == "dev"], found)
    return out


def _widest(found: list[dict[str, Any]], family: dict[str, str]) -> dict[str, Any]:
    """Per kind, the agent family (format) it fires on most, as a share of that family's conversations."""
    size: dict[str, int] = {}
    for fam in family.values():
        size[fam] = size.get(fam, 0) + 1
    out: dict[str, Any] = {}
    for kind in KINDS:
        hit: dict[str, set[str]] = {}
        for f in found:
            if f["kind"] == kind:
                hit.setdefault(family[f["conversation_id"]], set()).add(f["conversation_id"])
        if hit:
            fam = max(hit, key=lambda x: (len(hit[x]) / size[x], x))
            out[kind] = {"family": fam, "conversations": len(hit[fam]), "of": size[fam]}
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def render_part(name: str, h: dict[str, Any]) -> list[str]:
    """One half (or the fresh set): every kind at once, then per kind, each beside the trivial references."""
    a = h["all"]
    lines = [
        f"{name}: {a['conversations']} conversations, {a['labels']} labels; "
        f"all detectors find {a['found']} ({_pct(a['recall'])}) with {a['findings']} findings, "
        f"{a['right']} of them near a label of their kind (precision {_pct(a['precision'])})",
        f"  trivial references, every kind at once: nothing 0/{a['labels']} (0%); the last person turn "
        f"{a['last_person_found']}/{a['labels']} ({_pct(a['last_person_found'] / a['labels'] if a['labels'] else None)}); "
        f"every conversation as a whole {a['labels']}/{a['labels']} (100%, "
        f"{a['conversations'] * len(h['kinds'])} marks)",
        f"  {'kind':26} {'findings':>8} {'precision':>9} {'recall':>10}   "
        f"{'last-person: prec':>17} {'recall':>7}   {'every conv.: prec':>17} {'recall':>7}   "
        f"{'nothing: recall':>15}",
    ]
    for kind, r in h["kinds"].items():
        d, t, e, z = r["detector"], r["last_person"], r["every"], r["nothing"]
        lines.append(
            f"  {kind:26} {d['findings']:>8} {_pct(d['precision']):>9} "
            f"{_pct(d['recall']):>4} ({d['found']}/{d['labels']})   {_pct(t['precision']):>17} "
            f"{_pct(t['recall']):>7}   {_pct(e['precision']):>17} {_pct(e['recall']):>7}   "
            f"{_pct(z['recall']):>15}"
        )
    return lines


def render_fresh(res: dict[str, Any], dev_only: bool = False) -> str:
    """The fresh set (``--fresh``): labeled blind, never tuned on; whole, then its halves (``--dev``: fresh-dev
    alone)."""
    name = (
        f"fresh set ({res['file']}, labeled blind, before any detector ran on it; {res['families']} families; "
        f"a match: same kind within {WINDOW} messages)"
    )
    if dev_only:
        return "\n".join(render_part(f"fresh-dev half of the {name}", res["halves"]["fresh-dev"]))
    lines = render_part(name, res)
    for h in FRESH_HALVES:
        lines += ["", *render_part(f"{h} half", res["halves"][h])]
    return "\n".join(lines)


def render(res: dict[str, Any], dev_only: bool = False) -> str:
    lines = [
        f"Problem detectors against the reviewer's labels (a match: same kind within {res['window']} messages)",
        "",
    ]
    halves = (("dev", "dev half"),) if dev_only else (("dev", "dev half"), ("held", "held-out half"))
    for half, name in halves:
        h = res["halves"][half]
        lines.extend(render_part(name, h))
        lines.append("")
        if half == "dev":
            lines.extend(_render_lofo(res["lofo"], h["all"]))
    if not dev_only:
        both = [res["halves"][x]["all"] for x in ("dev", "held")]
        found, labels = sum(b["found"] for b in both), sum(b["labels"] for b in both)
        lines.append(
            f"both halves: all detectors find {found} of {labels} labels ({_pct(found / labels if labels else None)})"
        )
        lines.append("")
    lines.append("widest reach per kind, over every conversation of the warehouse (agent family = format):")
    for kind, w in res["families"].items():
        lines.append(f"  {kind:26} {w['conversations']} of {w['of']} {w['family']} conversations")
    return "\n".join(lines)


def _render_lofo(lo: dict[str, Any], dev: dict[str, Any]) -> list[str]:
    n = dev["labels"]
    lines = [
        f"dev half, leave one family out: {lo['found']}/{lo['labels']} ({_pct(lo['found'] / n if n else None)}) "
        f"(a label counts when a rule that finds it finds a label of another family too); trivial references: "
        f"nothing 0/{n}, the last person turn {dev['last_person_found']}/{n}",
        "  labels not counted (family, kind, positions: the rules that find it, each with the families it finds):",
    ]
    for r in lo["rows"]:
        if not r["counts"]:
            why = ", ".join(f"{x} [{'/'.join(lo['rules'][x])}]" for x in r["rules"]) or "no rule"
            lines.append(f"    {r['family']:16} {r['kind']:26} {r['positions']}: {why}")
    lines.append("")
    return lines


def _render_lofo_both(lo: dict[str, Any], title: str = "both dev halves (shared dev + fresh-dev)") -> list[str]:
    """Leave one family out on both dev halves at once (shared dev and fresh-dev): per kind, labels found and
    counted, then the labels lost (found by rules of one family alone) and the labels never found."""
    from bench.problem_labels import KINDS as ORDER

    n = lo["labels"]
    lines = [
        f"{title}, leave one family out: {lo['found']}/{n} counted, "
        f"{lo['found_any']}/{n} found at all (a label counts when a rule that finds it finds a label of another "
        "family too; Codex, Continue and ChatGPT one family each under their two folder names)",
        f"  {'kind':26} {'labels':>6} {'found':>6} {'counted':>8}",
    ]
    for kind in ORDER:
        rows = [r for r in lo["rows"] if r["kind"] == kind]
        if rows:
            found, counted = sum(bool(r["rules"]) for r in rows), sum(r["counts"] for r in rows)
            lines.append(f"  {kind:26} {len(rows):>6} {found:>6} {counted:>8}")
    lines.append("  lost: found by rules of one family alone (family, kind, positions: rules [their families]):")
    for r in lo["rows"]:
        if r["rules"] and not r["counts"]:
            why = ", ".join(f"{x} [{'/'.join(lo['rules'][x])}]" for x in r["rules"])
            lines.append(f"    {r['family']:16} {r['kind']:26} {r['positions']}: {why}")
    lines.append("  never found:")
    for r in lo["rows"]:
        if not r["rules"]:
            lines.append(f"    {r['family']:16} {r['kind']:26} {r['positions']}")
    return lines


def pool(parts: list[tuple[list[Labeled], list[dict[str, Any]]]], extra: list[Path], shared: Path) -> dict[str, Any]:
    """Leave one family out over the whole dev pool: the dev halves (``parts``) and each ``extra`` fresh file whole,
    each set's findings kept on its own labeled conversations (one file can sit in two warehouses); with every
    kind at once (precision as the bench counts it) and the last person turn's recall beside it."""
    for path in extra:
        parts = [*parts, evaluate_fresh(path, shared)["_all"]]
    labeled: list[Labeled] = []
    found: list[dict[str, Any]] = []
    for mine, theirs in parts:
        ids = {c.conversation_id for c in mine}
        labeled += mine
        found += [f for f in theirs if f["conversation_id"] in ids]
    out = lofo(labeled, found, FAMILY_ALIASES)
    out["found_any"] = sum(bool(r["rules"]) for r in out["rows"])
    out["all"] = part_scores(labeled, found)["all"]
    out["files"] = [x.name for x in extra]
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.fresh_labels import FRESH

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--db", type=Path, help="a warehouse ingested from SHARED/data/agent-logs (default: a fresh one)")
    ap.add_argument(
        "--dev",
        action="store_true",
        help="the dev half and the fresh-dev half only (never look at a held-out half while developing)",
    )
    ap.add_argument(
        "--fresh",
        type=Path,
        default=FRESH if FRESH.is_file() else None,
        help=f"fresh labels, labeled blind (default {FRESH.relative_to(ROOT)} when present); printed after the halves",
    )
    ap.add_argument("--no-fresh", action="store_true", help="leave the fresh labels out")
    ap.add_argument("--fresh-only", action="store_true", help="the fresh labels alone (no shared halves)")
    ap.add_argument(
        "--pool",
        type=Path,
        action="append",
        default=[],
        help="a fresh label file counted whole in the dev pool (the fourth and fifth rounds, once read): leave one "
        "family out over shared dev + fresh-dev + these files; repeatable",
    )
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    fresh = None if a.no_fresh else a.fresh
    if a.fresh_only and fresh is None:
        raise SystemExit("--fresh-only: no fresh labels (pass --fresh PATH)")
    res: dict[str, Any] = {} if a.fresh_only else evaluate(a.shared, a.db)
    if a.dev and "halves" in res:
        res["halves"].pop("held")
    if fresh is not None:
        res["fresh"] = evaluate_fresh(fresh, a.shared)
        if "_dev" in res:  # both dev halves at once, one agent under its two folder names one family
            (mine, ours), (theirs, their_found) = res["_dev"], res["fresh"]["_dev"]
            res["lofo_both"] = lofo(mine + theirs, ours + their_found, FAMILY_ALIASES)
            res["lofo_both"]["found_any"] = sum(bool(r["rules"]) for r in res["lofo_both"]["rows"])
            if a.pool:  # whole rounds joining the dev pool
                res["lofo_pool"] = pool([(mine, ours), (theirs, their_found)], a.pool, a.shared)
        if a.dev:  # the fresh-dev half alone
            res["fresh"] = {k: v for k, v in res["fresh"].items() if k in ("file", "families")} | {
                "halves": {"fresh-dev": res["fresh"]["halves"]["fresh-dev"]}
            }
    res.pop("_dev", None)
    if "fresh" in res:
        res["fresh"].pop("_dev", None)
        res["fresh"].pop("_all", None)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    parts = [] if a.fresh_only else [render(res, a.dev)]
    if fresh is not None:
        parts.append(render_fresh(res["fresh"], a.dev))
    if "lofo_both" in res:
        parts.append("\n".join(_render_lofo_both(res["lofo_both"])))
    if "lofo_pool" in res:
        title = f"the whole dev pool (shared dev + fresh-dev + {' + '.join(res['lofo_pool']['files'])})"
        al = res["lofo_pool"]["all"]
        parts.append(
            "\n".join(_render_lofo_both(res["lofo_pool"], title))
            + f"\n  every kind at once: found {al['found']}/{al['labels']} with {al['findings']} findings, "
            f"{al['right']} near a label of their kind (precision {_pct(al['precision'])}); the last person turn "
            f"{al['last_person_found']}/{al['labels']}"
        )
    print("\n\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
