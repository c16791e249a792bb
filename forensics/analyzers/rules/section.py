"""The rules audit's section: every rule a run was given, whether it was in the context, and where a program can
check it, how often it was kept, per rule, per model, by position in the run and before/after a compaction."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import polars as pl

from forensics.analyzers.base import Context, Finding, Section, Table
from forensics.analyzers.rules.extract import Rule
from forensics.analyzers.rules.judge import Verdict, dropped_at
from forensics.analyzers.rules.load import Audit, audit_of
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived

NAME = "rules"
TITLE = "Rules a run was given, and kept"
RULES_TABLE, VERDICTS_TABLE, MARKS_TABLE = "run_rules", "rule_verdicts", "rule_marks"
FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/rules",
    "MEMORY.md",
    "AGENTS.md",
    "GEMINI.md",
    ".clinerules",
    ".cursorrules",
    ".windsurfrules",
    "rules",
)
POSITIONS = ((0, 50), (50, 150), (150, 400), (400, None))  # message positions: does adherence fall as the run grows?
SPLIT = {
    "before": "before a compaction",
    "after": "after a compaction",
    "after_dropped": "after a compaction whose summary dropped the rule",
}
SHOWN = 40  # rules listed per table in the report (the derived tables hold every one)
RULE_COLUMNS: dict[str, Any] = {
    "conversation_id": pl.String,
    "rule": pl.String,
    "source": pl.String,
    "path": pl.String,
    "position": pl.Int32,
    "until": pl.Int32,
    "standing": pl.Boolean,
    "text": pl.String,
    "check": pl.String,
    "target": pl.List(pl.String),
    "kept": pl.Int32,
    "broke": pl.Int32,
    "dropped_at": pl.Int32,
}
VERDICT_COLUMNS: dict[str, Any] = {
    "conversation_id": pl.String,
    "position": pl.Int32,
    "rule": pl.String,
    "verdict": pl.String,
    "quote": pl.String,
    "said_at": pl.Int32,
    "after_compaction": pl.Boolean,
    "in_context": pl.Boolean,
}
MARK_COLUMNS: dict[str, Any] = {"conversation_id": pl.String, "position": pl.Int32, "rules": pl.String}


def run(ctx: Context) -> Section:
    found = audit_of(ctx)
    _write(ctx, found)
    if not found.rules:
        return Section.idle(
            NAME, TITLE, "no instruction file, system prompt or standing instruction in any selected run"
        )
    natives = dict(
        ctx.con.execute(
            f"SELECT conversation_id, native_id FROM conversations JOIN {SELECTED} USING (conversation_id)"
        ).fetchall()
    )
    metrics = figures(found, ctx.selected)
    sec = Section(NAME, TITLE, metrics=metrics)
    sec.findings = _findings(found, natives)
    sec.tables = _tables(found) + [
        *_per_file(found),
        _receipt(ctx, found),
        Table(
            "by_model",
            "Adherence per model (every checkable rule's turns)",
            pl.DataFrame(
                [
                    {"model": k, "verdicts": b["verdicts"], "broke": b["broke"], "adherence": _pct(b["adherence"])}
                    for k, b in metrics["by_model"].items()
                ],
                schema={"model": pl.String, "verdicts": pl.Int64, "broke": pl.Int64, "adherence": pl.String},
            ),
        ),
    ]
    v = metrics["verdicts"]
    adherence = f"{metrics['adherence']:.0%}" if metrics["adherence"] is not None else "–"
    sec.summary = (
        f"Instruction files loaded in {metrics['runs_with_files']} of {ctx.selected} runs; "
        f"{metrics['rules']} rules in {metrics['runs_with_rules']} runs "
        f"({metrics['from_files']} from instruction files, {metrics['from_person']} the person's, "
        f"{metrics['from_system']} of system prompts); {metrics['checkable']} can be checked by a program, "
        f"{metrics['unchecked']} cannot (listed, never guessed). Of {v['kept'] + v['broke']} turns a checkable rule "
        f"bore on, {v['broke']} broke it: adherence {adherence} (the trivial reading, every turn kept, says 100%)."
        + _compaction_line(metrics)
    )
    sec.grid = (
        [["where in the run", "verdicts", "broke", "adherence"]]
        + [
            [f"messages {k}", str(b["verdicts"]), str(b["broke"]), _pct(b["adherence"])]
            for k, b in metrics["by_position"].items()
        ]
        + [
            [SPLIT[k], str(b["verdicts"]), str(b["broke"]), _pct(b["adherence"])]
            for k, b in metrics["compaction"].items()
        ]
    )
    return sec


def figures(found: Audit, selected: int) -> dict[str, Any]:
    """The metrics: counts of rules by source and checkability, verdicts, adherence per rule, model, position and
    before/after a compaction (None where nothing was judged)."""
    rules = _distinct(found.rules)
    by_key = {r.key: r for r in found.rules}
    kept = sum(v.verdict == "kept" for v in found.verdicts)
    broke = len(found.verdicts) - kept
    per_rule: dict[str, list[Verdict]] = defaultdict(list)
    per_model: dict[str, list[Verdict]] = defaultdict(list)
    per_position: dict[str, list[Verdict]] = {_bucket(lo, hi): [] for lo, hi in POSITIONS}
    for v in found.verdicts:
        r = by_key[v.rule]
        per_rule[_slug(r)].append(v)
        per_model[found.runs[v.conversation_id].model or "unknown"].append(v)
        per_position[next(_bucket(lo, hi) for lo, hi in POSITIONS if hi is None or v.position < hi)].append(v)
    return {
        "runs": selected,
        "runs_with_rules": len({r.conversation_id for r in found.rules}),
        "runs_with_files": len({r.conversation_id for r in found.rules if r.source in FILES}),
        "rules": len(rules),
        "checkable": sum(r.check is not None for r in rules),
        "unchecked": sum(r.check is None for r in rules),
        "from_files": sum(r.source in FILES for r in rules),
        "from_person": sum(r.source == "person" for r in rules),
        "from_system": sum(r.source == "system prompt" for r in rules),
        "verdicts": {"kept": kept, "broke": broke},
        "adherence": _rate(found.verdicts),
        "by_rule": {
            k: _summary(vs) | {"runs": len({v.conversation_id for v in vs})} for k, vs in sorted(per_rule.items())
        },
        "by_model": {k: _summary(vs) for k, vs in sorted(per_model.items())},
        "by_position": {k: _summary(vs) for k, vs in per_position.items()},
        "compaction": {
            "before": _summary([v for v in found.verdicts if not v.after_compaction]),
            "after": _summary([v for v in found.verdicts if v.after_compaction]),
            "after_dropped": _summary([v for v in found.verdicts if not v.in_context]),
        },
    }


def _distinct(rules: list[Rule]) -> list[Rule]:
    """One rule per run and saying: a standing rule said again in the same run is one rule."""
    seen: dict[tuple[str, str, int], Rule] = {}
    for r in rules:
        seen.setdefault((r.conversation_id, r.key, -1 if r.standing else r.position), r)
    return list(seen.values())


def _summary(vs: list[Verdict]) -> dict[str, Any]:
    broke = sum(v.verdict == "broke" for v in vs)
    return {"verdicts": len(vs), "broke": broke, "adherence": _rate(vs)}


def _rate(vs: list[Verdict]) -> float | None:
    return sum(v.verdict == "kept" for v in vs) / len(vs) if vs else None


def _bucket(lo: int, hi: int | None) -> str:
    return f"{lo}-{hi - 1}" if hi is not None else f"{lo}+"


def _slug(r: Rule) -> str:
    """A rule's name across runs in the metrics: its source and what its check names."""
    assert r.check is not None
    return re.sub(r"[^a-z0-9]+", "_", f"{r.source} {r.check.label}".lower()).strip("_")


def _pct(x: float | None) -> str:
    return f"{x:.0%}" if x is not None else "–"


def _compaction_line(m: dict[str, Any]) -> str:
    after = m["compaction"]["after"]
    if not after["verdicts"]:
        return " No verdict fell after a logged compaction."
    return (
        f" Before a compaction {_pct(m['compaction']['before']['adherence'])}, after one "
        f"{_pct(after['adherence'])} ({after['verdicts']} verdicts)."
    )


def _findings(found: Audit, natives: dict[str, str | None]) -> list[Finding]:
    """One finding per rule a run broke: where it was said, each turn that broke it, the first one quoted."""
    by_key = {r.key: r for r in found.rules}
    broken: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in found.verdicts:
        if v.verdict == "broke":
            broken[(v.conversation_id, v.rule)].append(v)
    kept_of: dict[tuple[str, str], int] = defaultdict(int)
    for v in found.verdicts:
        kept_of[(v.conversation_id, v.rule)] += v.verdict == "kept"
    out = []
    for (cid, key), vs in sorted(broken.items()):
        r, first = by_key[key], vs[0]
        kept = kept_of[(cid, key)]
        out.append(
            Finding(
                "rule_broken",
                "high" if r.source != "system prompt" else "low",
                cid,
                natives.get(cid),
                [first.said_at, *[v.position for v in vs]],
                f"broke “{r.text[:120]}” ({r.source}{' ' + r.path if r.path else ''}, said at [{first.said_at}]) "
                f"{len(vs)}× of {len(vs) + kept}; first at [{first.position}]: “{first.quote}”",
                f"{r.check.label if r.check else ''}" + ("; after a compaction" if first.after_compaction else ""),
                float(len(vs)),
            )
        )
    return out


def _tables(found: Audit) -> list[Table]:
    """The checkable rules with their verdicts over every run, and the rules no program can check."""
    agg: dict[tuple[str, str], dict[str, Any]] = {}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in found.verdicts:
        counts[v.rule][v.verdict == "broke"] += 1
    for r in _distinct(found.rules):
        if not r.standing:
            continue
        a = agg.setdefault(
            (r.source, r.text),
            {
                "source": r.source,
                "rule": r.text[:160],
                "check": r.check.label if r.check else "unchecked",
                "runs": set(),
                "keys": set(),
            },
        )
        a["runs"].add(r.conversation_id)
        a["keys"].add(r.key)
    rows = []
    for a in agg.values():
        kept = sum(counts[k][0] for k in a["keys"])
        broke = sum(counts[k][1] for k in a["keys"])
        rows.append(
            {
                "source": a["source"],
                "rule": a["rule"],
                "check": a["check"],
                "runs": len(a["runs"]),
                "kept": kept,
                "broke": broke,
                "adherence": _pct(kept / (kept + broke) if kept + broke else None),
            }
        )
    checked = sorted((r for r in rows if r["check"] != "unchecked"), key=lambda r: (-r["broke"], -r["runs"], r["rule"]))
    unchecked = sorted(
        (r for r in rows if r["check"] == "unchecked"),
        key=lambda r: (r["source"] == "system prompt", -r["runs"], r["rule"]),
    )
    schema = {
        "source": pl.String,
        "rule": pl.String,
        "check": pl.String,
        "runs": pl.Int64,
        "kept": pl.Int64,
        "broke": pl.Int64,
        "adherence": pl.String,
    }
    return [
        Table(
            "checked",
            f"Checkable rules ({len(checked)}; the first {SHOWN}): turns kept and broken over every run",
            pl.DataFrame(checked[:SHOWN], schema=schema),
        ),
        Table(
            "unchecked",
            f"Rules no program can check ({len(unchecked)}; the first {SHOWN}): listed, never guessed",
            pl.DataFrame(
                [{k: r[k] for k in ("source", "rule", "runs")} for r in unchecked[:SHOWN]],
                schema={"source": pl.String, "rule": pl.String, "runs": pl.Int64},
            ),
        ),
    ]


def _per_file(found: Audit) -> list[Table]:
    """Per instruction file a log shows loaded (its source and path): the runs that loaded it, its rules, and per
    rule the turns that kept and broke it, or ``unchecked``: what a CLAUDE.md or AGENTS.md asked and how often it was
    kept."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in found.verdicts:
        counts[v.rule][v.verdict == "broke"] += 1
    files: dict[tuple[str, str], dict[str, Any]] = {}
    for r in _distinct(found.rules):
        if r.source not in FILES:
            continue
        f = files.setdefault((r.source, r.path), {"runs": set(), "rules": {}})
        f["runs"].add(r.conversation_id)
        row = f["rules"].setdefault(
            r.text, {"check": r.check.label if r.check else "unchecked", "runs": set(), "keys": set()}
        )
        row["runs"].add(r.conversation_id)
        row["keys"].add(r.key)
    summary, rows = [], []
    for (source, path), f in sorted(files.items(), key=lambda kv: (-len(kv[1]["runs"]), kv[0])):
        name = f"{source} {path}".strip() if path and path != source else source
        per = []
        for text, row in f["rules"].items():
            kept = sum(counts[k][0] for k in row["keys"])
            broke = sum(counts[k][1] for k in row["keys"])
            checked = row["check"] != "unchecked"
            per.append(
                {
                    "file": name,
                    "rule": text[:160],
                    "check": row["check"],
                    "runs": len(row["runs"]),
                    "kept": kept if checked else None,
                    "broke": broke if checked else None,
                    "adherence": _pct(kept / (kept + broke) if kept + broke else None) if checked else "not checkable",
                }
            )
        per.sort(key=lambda r: (r["check"] == "unchecked", -(r["broke"] or 0), r["rule"]))
        rows += per
        judged = [r for r in per if r["check"] != "unchecked"]
        kept, broke = sum(r["kept"] or 0 for r in judged), sum(r["broke"] or 0 for r in judged)
        summary.append(
            {
                "file": name,
                "runs": len(f["runs"]),
                "rules": len(per),
                "checkable": len(judged),
                "not_checkable": len(per) - len(judged),
                "kept": kept,
                "broke": broke,
                "adherence": _pct(kept / (kept + broke) if kept + broke else None),
            }
        )
    shown = [r for r in rows if r["check"] != "unchecked"] + [r for r in rows if r["check"] == "unchecked"]
    return [
        Table(
            "files",
            f"Instruction files loaded ({len(summary)}): their rules, how many a program can check, turns kept and "
            "broken",
            pl.DataFrame(
                summary,
                schema={
                    "file": pl.String,
                    "runs": pl.Int64,
                    "rules": pl.Int64,
                    "checkable": pl.Int64,
                    "not_checkable": pl.Int64,
                    "kept": pl.Int64,
                    "broke": pl.Int64,
                    "adherence": pl.String,
                },
            ),
        ),
        Table(
            "file_rules",
            f"Per rule of each loaded instruction file ({len(rows)}; the checkable first, then the first "
            f"{max(SHOWN - sum(r['check'] != 'unchecked' for r in rows), 0)} not checkable): turns kept and broken",
            pl.DataFrame(
                shown[: max(SHOWN, sum(r["check"] != "unchecked" for r in rows))],
                schema={
                    "file": pl.String,
                    "rule": pl.String,
                    "check": pl.String,
                    "runs": pl.Int64,
                    "kept": pl.Int64,
                    "broke": pl.Int64,
                    "adherence": pl.String,
                },
            ),
        ),
    ]


def _receipt(ctx: Context, found: Audit) -> Table:
    """Per run, the instruction files its log shows loaded (where), its rules, how many a program can check, the
    turns that broke one: the receipt of what a run was given."""
    titles = dict(
        ctx.con.execute(
            f"SELECT conversation_id, coalesce(title, native_id, conversation_id) FROM "
            f"conversations JOIN {SELECTED} USING (conversation_id)"
        ).fetchall()
    )
    broke: dict[str, int] = defaultdict(int)
    for v in found.verdicts:
        broke[v.conversation_id] += v.verdict == "broke"
    per: dict[str, list[Rule]] = defaultdict(list)
    for r in _distinct(found.rules):
        per[r.conversation_id].append(r)
    rows: list[dict[str, Any]] = [
        {
            "run": str(titles.get(cid, cid))[:60],
            "conversation_id": cid,
            "files": ", ".join(sorted({f"{r.source} at [{r.position}]" for r in rs if r.source in FILES})) or "none",
            "rules": len(rs),
            "checkable": sum(r.check is not None for r in rs),
            "broke": broke[cid],
        }
        for cid, rs in per.items()
    ]
    rows.sort(key=lambda r: (-r["broke"], r["files"] == "none", -r["rules"], r["conversation_id"]))
    return Table(
        "receipt",
        f"Instruction files each run loaded ({len(rows)} runs with a rule; the first {SHOWN})",
        pl.DataFrame(
            rows[:SHOWN],
            schema={
                "run": pl.String,
                "conversation_id": pl.String,
                "files": pl.String,
                "rules": pl.Int64,
                "checkable": pl.Int64,
                "broke": pl.Int64,
            },
        ),
    )


def _write(ctx: Context, found: Audit) -> None:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for v in found.verdicts:
        counts[(v.conversation_id, v.rule)][v.verdict == "broke"] += 1
    said: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in found.rules:
        said[(r.conversation_id, r.key)].append(r.position)
    dropped = {
        k: dropped_at(r, said[k], found.runs[r.conversation_id]) if r.standing else None
        for r in found.rules
        if (k := (r.conversation_id, r.key))
    }
    derived.replace_rows(
        ctx.con,
        RULES_TABLE,
        pl.DataFrame(
            [
                {
                    "conversation_id": r.conversation_id,
                    "rule": r.key,
                    "source": r.source,
                    "path": r.path,
                    "position": r.position,
                    "until": r.until,
                    "standing": r.standing,
                    "text": r.text,
                    "check": r.check.kind if r.check else "unchecked",
                    "target": list(r.check.target) if r.check else [],
                    "kept": counts[(r.conversation_id, r.key)][0],
                    "broke": counts[(r.conversation_id, r.key)][1],
                    "dropped_at": dropped[(r.conversation_id, r.key)],
                }
                for r in found.rules
            ],
            schema=RULE_COLUMNS,
        ),
    )
    derived.replace_rows(
        ctx.con,
        VERDICTS_TABLE,
        pl.DataFrame(
            [
                {
                    "conversation_id": v.conversation_id,
                    "position": v.position,
                    "rule": v.rule,
                    "verdict": v.verdict,
                    "quote": v.quote,
                    "said_at": v.said_at,
                    "after_compaction": v.after_compaction,
                    "in_context": v.in_context,
                }
                for v in found.verdicts
            ],
            schema=VERDICT_COLUMNS,
        ),
    )
    derived.replace_rows(ctx.con, MARKS_TABLE, pl.DataFrame(marks(found), schema=MARK_COLUMNS))


def marks(found: Audit) -> list[dict[str, Any]]:
    """One line per message for the explorer's transcript: the rules it put in the context, the rules it broke."""
    by_key = {r.key: r for r in found.rules}
    lines: dict[tuple[str, int], list[str]] = defaultdict(list)
    loaded: dict[tuple[str, int], dict[str, list[Rule]]] = defaultdict(lambda: defaultdict(list))
    for r in found.rules:
        if r.standing:
            loaded[(r.conversation_id, r.position)][r.source].append(r)
    for at, sources in loaded.items():
        lines[at] += [
            f"loaded {len(rs)} rules of {src} ({sum(r.check is not None for r in rs)} checkable)"
            for src, rs in sources.items()
        ]
    for v in found.verdicts:
        if v.verdict == "broke":
            lines[(v.conversation_id, v.position)].append(f"broke “{by_key[v.rule].text[:80]}” (said at [{v.said_at}])")
    return [
        {"conversation_id": cid, "position": pos, "rules": "; ".join(ls)} for (cid, pos), ls in sorted(lines.items())
    ]
