"""Skill-trigger replay (docs/metrics.md#skills): the harness's trigger table held against the skills the model
loaded, per skill, with the requests that prove it and the phrases that would catch the misses.

The replay and its verdicts: ``replay``; the proposed phrases: ``proposals``; the table: ``table``. Without a
table the section lists the skills the model loaded and the requests before each load (every load is then a
miss) with phrases to start a table from. The warehouse keeps every verdict in ``skill_routing`` (one row per
judged event, selection's conversations). Findings are info: they point at the table, not at a conversation
that went wrong.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.keys import skills as declared
from forensics.analyzers.skills import draw
from forensics.analyzers.skills.proposals import Proposal, propose
from forensics.analyzers.skills.replay import MESSAGES, Replay, Row, frame_of, gather, tally
from forensics.analyzers.skills.settings import SkillsSettings
from forensics.analyzers.skills.table import TriggerTable, configured, read_table, with_triggers
from forensics.kernel.arrow import stream
from forensics.warehouse import derived

NAME = "skills"
TITLE = "Skill-trigger replay"
TABLE = "skill_routing"
EVIDENCE = 100  # positions per skill and verdict kept in metrics.json (all of them: the skill_routing table)
SHOWN = 6  # ... and in a table cell
EXCERPT = 100

__all__ = [
    "ANALYZER",
    "NAME",
    "TITLE",
    "Proposal",
    "Replay",
    "TriggerTable",
    "analyse",
    "configured",
    "excerpts",
    "read_table",
    "run",
    "with_triggers",
]


def analyse(ctx: Context, table: TriggerTable | None) -> tuple[Replay, list[Row], list[Proposal]]:
    """The replay over the selection, its rows, and the phrases proposed for its misses (``Replay`` gains them)."""
    rp = gather(ctx.con, table)
    rows = rp.rows()
    skills = list(tally(rows, list(table.skills) if table else []))
    return rp, rows, propose(ctx.con, rp, rows, skills)


def run(ctx: Context) -> Section:
    table = configured(ctx.cfg)
    rp, rows, proposals = analyse(ctx, table)
    _write(ctx, rows)
    counts = tally(rows, list(table.skills) if table else [])
    if table is None and not any(c["model"] + c["already_loaded"] + c["no_request"] for c in counts.values()):
        return Section.idle(
            NAME,
            TITLE,
            f"no trigger table (`[skills] triggers`, or `--triggers FILE`) and no "
            f"skill loaded in the {rp.requests} user requests of {rp.conversations} conversations",
        )
    after = tally(rp.rows(), list(counts)) if proposals else counts
    metrics = _metrics(table, rp, rows, counts, after, proposals)
    sec = Section(NAME, TITLE, metrics=metrics, summary=_summary(table, rp, metrics, proposals))
    sec.tables = _tables(ctx, table, rows, metrics, proposals)
    sec.findings = _findings(ctx, rows, table)
    if any(c["router"] or c["model"] for c in counts.values()):
        sec.charts.append(
            Chart(
                "routing",
                "Per skill: hits, false fires (router only) and misses (model only)",
                [
                    {"skill": s, "hits": c["hits"], "router_only": c["router_only"], "model_only": c["model_only"]}
                    for s, c in counts.items()
                ],
            )
        )
    return sec


def _tables(
    ctx: Context, table: TriggerTable | None, rows: list[Row], metrics: dict[str, Any], proposals: list[Proposal]
) -> list[Table]:
    """Per skill with its evidence; the proposed phrases; the misses and the false fires with their text."""
    names, per = ctx.names, metrics["skills"]
    texts = excerpts(
        ctx.con, [(r.conversation_id, r.position) for r in rows if r.verdict in ("model_only", "router_only")]
    )

    def where(cid: str, pos: int) -> str:
        return f"{names.get(cid, cid)} [{pos}]"

    out = []
    if per:
        out.append(
            Table(
                "per_skill",
                "Per skill: the router replayed, the model's loads",
                pl.DataFrame(
                    [
                        {
                            "skill": s,
                            "phrases": len(m["phrases"]),
                            **{
                                k: m[k]
                                for k in (
                                    "router",
                                    "model",
                                    "hits",
                                    "router_only",
                                    "model_only",
                                    "precision",
                                    "recall",
                                    "base_rate",
                                )
                            },
                            "evidence": "; ".join(
                                f"{v}: " + ", ".join(where(cid, pos) for cid, pos, *_ in ev[:SHOWN])
                                for v, ev in m["evidence"].items()
                                if ev
                            ),
                        }
                        for s, m in per.items()
                    ]
                ),
            )
        )
    if proposals:
        out.append(
            Table(
                "proposed",
                "Proposed phrases (`forensics tune --triggers FILE` writes them)",
                pl.DataFrame(
                    [
                        {
                            "skill": p.skill,
                            "phrase": p.phrase,
                            "hits_gained": p.hits_gained,
                            "false_fires_added": p.false_fires_added,
                            "share": p.share,
                            "catches": ", ".join(where(*k) for k in p.catches[:SHOWN]),
                        }
                        for p in proposals
                    ]
                ),
            )
        )
    order = {skill: i for i, skill in enumerate(per)}
    misses = sorted(
        (r for r in rows if r.verdict == "model_only"),
        key=lambda r: (order[r.model_skill], names.get(r.conversation_id, ""), r.position),
    )
    if misses:
        caption = (
            "Misses: requests before a load of the model's that no phrase matched"
            if table
            else "The skills the model loaded and the requests before them"
        )
        out.append(
            Table(
                "misses",
                caption,
                pl.DataFrame(
                    [
                        {
                            "skill": r.model_skill,
                            "conversation": names.get(r.conversation_id, r.conversation_id),
                            "request": r.position,
                            "load": r.load_position,
                            "text": texts.get((r.conversation_id, r.position if r.position is not None else -1), ""),
                        }
                        for r in misses
                    ]
                ),
            )
        )
    false = [r for r in rows if r.verdict == "router_only"]
    if false:
        out.append(
            Table(
                "false_fires",
                "False fires: requests the table fires a skill on that the model did not load",
                pl.DataFrame(
                    [
                        {
                            "skill": r.router_skill,
                            "phrase": r.phrase,
                            "conversation": names.get(r.conversation_id, r.conversation_id),
                            "request": r.position,
                            "text": texts.get((r.conversation_id, r.position if r.position is not None else -1), ""),
                        }
                        for r in false
                    ]
                ),
            )
        )
    return out


def _write(ctx: Context, rows: list[Row]) -> None:
    """skill_routing: every verdict of the last replay, for `forensics query` and notebooks."""
    ctx.con.register("_skill_rows", stream(frame_of(rows)))
    try:
        ctx.con.execute(
            f"CREATE OR REPLACE TABLE {TABLE} AS SELECT * FROM _skill_rows "
            "ORDER BY conversation_id, position NULLS FIRST, load_position"
        )
    finally:
        ctx.con.unregister("_skill_rows")


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _metrics(
    table: TriggerTable | None,
    rp: Replay,
    rows: list[Row],
    counts: dict[str, dict[str, int]],
    after: dict[str, dict[str, int]],
    proposals: list[Proposal],
) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for s, c in counts.items():
        ev: dict[str, list[list[Any]]] = {"hits": [], "router_only": [], "model_only": []}
        for r in rows:
            if s in (r.router_skill, r.model_skill) and r.verdict in ("hit", "router_only", "model_only"):
                bucket = ev["hits" if r.verdict == "hit" else r.verdict]
                if len(bucket) < EVIDENCE:
                    bucket.append(
                        [r.conversation_id, r.position] + ([r.load_position] if r.load_position is not None else [])
                    )
        per[s] = {
            **c,
            "in_table": bool(table and s in table.skills),
            "phrases": list(table.skills.get(s, [])) if table else [],
            "precision": _ratio(c["hits"], c["router"]),
            "recall": _ratio(c["hits"], c["model"]),
            "base_rate": _ratio(c["model"], rp.requests),
            "evidence": ev,
        }
    tot: dict[str, Any] = {
        k: sum(c[k] for c in counts.values())
        for k in ("router", "model", "hits", "router_only", "model_only", "already_loaded", "command", "no_request")
    }
    tot.update(precision=_ratio(tot["hits"], tot["router"]), recall=_ratio(tot["hits"], tot["model"]))
    new: dict[str, Any] = {
        k: sum(c[k] for c in after.values()) for k in ("router", "model", "hits", "router_only", "model_only")
    }
    new.update(precision=_ratio(new["hits"], new["router"]), recall=_ratio(new["hits"], new["model"]))
    return {
        "table": {"path": str(table.path), "skills": len(table.skills), "phrases": table.phrases} if table else None,
        "requests": rp.requests,
        "conversations_with_requests": rp.conversations,
        "user_messages": dict(sorted(rp.kinds.items())),
        "load_calls_skipped": rp.skipped,
        "totals": tot,
        "skills": per,
        "proposals": [
            {
                "skill": p.skill,
                "phrase": p.phrase,
                "hits_gained": p.hits_gained,
                "false_fires_added": p.false_fires_added,
                "share": p.share,
                "requests": p.requests,
                "catches": [list(k) for k in p.catches],
            }
            for p in proposals
        ],
        "with_proposals": new,
    }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _summary(table: TriggerTable | None, rp: Replay, m: dict[str, Any], proposals: list[Proposal]) -> str:
    t, harness = m["totals"], sum(n for k, n in rp.kinds.items() if k != "request")
    scope = f"the {rp.requests} user requests of {rp.conversations} conversations" + (
        f" ({harness} more user {'message is' if harness == 1 else 'messages are'} harness text, not "
        "requests: skill bodies, slash commands, notices, compaction summaries)"
        if harness
        else ""
    )
    loads = sum(c["model"] + c["already_loaded"] + c["no_request"] for c in m["skills"].values())
    if table is None:
        head = (
            f"No trigger table (`[skills] triggers`, or `--triggers FILE`). The model loaded {len(m['skills'])} "
            f"skills {loads} times in {scope}; below, the requests before each load"
        )
        added = sum(p.false_fires_added for p in proposals)
        return head + (
            f", and {len(proposals)} phrases that would have caught {sum(p.hits_gained for p in proposals)} "
            f"of them at the cost of {added} false fires: `forensics tune --triggers FILE --write` on a "
            'file holding `{"schema": 1, "skills": {}}` starts a table with them.'
            if proposals
            else "."
        )
    base = _ratio(t["model"], rp.requests)
    text = (
        f"Replaying the trigger table `{table.path.name}` ({len(table.skills)} skills, {table.phrases} phrases; "
        f"case-insensitive, the longest phrase of a skill not yet loaded wins, one skill per message) over "
        f"{scope}: the router fires {t['router']} times, {t['hits']} on a request whose turn loaded that skill "
        f"(precision {_pct(t['precision'])}; {_pct(base)} of all requests were followed by a load, the "
        f"precision of a router firing on every one). The model loaded a skill {t['model']} times where the "
        f"router could have fired it; the table caught {t['hits']} (recall {_pct(t['recall'])}), "
        f"{t['router_only']} fires were false."
    )
    if proposals:
        n = m["with_proposals"]
        text += (
            f" {len(proposals)} proposed phrases for {len({p.skill for p in proposals})} skills would catch "
            f"{n['hits'] - t['hits']} more with {n['router_only'] - t['router_only']} more false fires "
            f"(precision {_pct(n['precision'])}, recall {_pct(n['recall'])}): `forensics tune --triggers "
            f"{table.path.name}` shows them, `--write` adds them."
        )
    return text


def excerpts(
    con: duckdb.DuckDBPyConnection, keys: list[tuple[str, int | None]], chars: int = EXCERPT
) -> dict[tuple[str, int], str]:
    """The messages' own text (secrets out, whitespace folded, cut) at (conversation, position) ``keys``."""
    keys = sorted({k for k in keys if k[1] is not None})
    if not keys:
        return {}
    df = pl.DataFrame(keys, schema={"conversation_id": pl.String, "position": pl.Int32}, orient="row")
    con.register("_skill_keys", stream(df))
    try:
        got = con.execute(
            "SELECT m.conversation_id, m.position, left(regexp_replace(forensics_scrubbed(m.content), '\\s+', ' ', "
            f"'g'), {int(chars)}) FROM messages m JOIN _skill_keys k USING (conversation_id, position) "
            "WHERE m.on_main_path"
        ).fetchall()
    finally:
        con.unregister("_skill_keys")
    return {(cid, pos): text for cid, pos, text in got}


def _at(*positions: int | None) -> list[int]:
    """A finding's positions: those the row has."""
    return [p for p in positions if p is not None]


def _findings(ctx: Context, rows: list[Row], table: TriggerTable | None) -> list[Finding]:
    natives = dict(
        ctx.con.execute(
            f"SELECT DISTINCT conversation_id, c.native_id FROM {MESSAGES} JOIN conversations c USING (conversation_id)"
        ).fetchall()
    )
    out = []
    for r in rows:
        if r.verdict == "router_only":
            out.append(
                Finding(
                    "skill_false_fire",
                    "info",
                    r.conversation_id,
                    natives.get(r.conversation_id),
                    _at(r.position),
                    f"the table fires {r.router_skill} on this request (phrase "
                    f"“{r.phrase}”) and the model did not load it",
                    f"trigger “{r.phrase}” → {r.router_skill}",
                )
            )
        elif r.verdict == "model_only":
            out.append(
                Finding(
                    "skill_miss",
                    "info",
                    r.conversation_id,
                    natives.get(r.conversation_id),
                    _at(r.position, r.load_position),
                    f"the model loaded {r.model_skill} at "
                    f"[{r.load_position}] for this request; no phrase of the table matched it",
                    f"no phrase of {r.model_skill} matched"
                    if table and r.model_skill in table.skills
                    else f"{r.model_skill} is not in the trigger table",
                )
            )
    return out


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    charts={"routing": draw.routing},
    tables=(derived.Table("skill_routing", "whole", "each request replayed against the trigger table"),),
    settings=(SkillsSettings,),
)
