"""What compaction dropped (drift type 3 of docs/definitions.md#drift-phenomena; the seed harness's rule): an audit of every logged compaction with evidence,
and a replay of the harness's ``[compaction]`` rule with a sweep of its settings.

Per logged compaction (``events`` kind compaction: Claude Code's compact_boundary, Codex's compacted, ...):
the facts the context held, kept by the summary or the kept messages, dropped, or not judged; a dropped fact
the conversation needed again is a ``compaction_loss`` finding citing where the fact was, the compaction and
where it was missed (``forensics.analyzers.compaction.audit`` has the rules). Per conversation, the replay says where
the rule would have compacted and how many later needs would have fallen outside the kept window
(``forensics.analyzers.compaction.replay``). Warehouse tables (rows of the selection replaced): ``compaction_facts``
(one row per fact and compaction) and ``compaction_replay`` (one row per replayed compaction at the
configured setting); ``compaction_pairs`` is the cache both come from.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from forensics.analyzers import harness
from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.compaction import replay
from forensics.analyzers.compaction.audit import COLUMNS, Row
from forensics.analyzers.compaction.audit_all import Audit, run_audit, tally
from forensics.analyzers.compaction.facts import CATEGORIES, KINDS
from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.compaction.signs import REDISCOVERY_WINDOW
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.warehouse import derived

NAME = "compaction"
TITLE = "Compaction audit"
FACTS_TABLE = "compaction_facts"
REPLAY_TABLE = "compaction_replay"
MARKS_TABLE = "compaction_marks"
MARK_COLUMNS = {"conversation_id": pl.String, "position": pl.Int32, "compaction_note": pl.String}
REPLAY_COLUMNS = {
    "conversation_id": pl.String,
    "native_id": pl.String,
    "position": pl.Int32,
    "context_tokens": pl.Int64,
    "kept_from": pl.Int32,
    "needed_after": pl.Int32,
    "outside_window": pl.Int32,
    "max_tokens": pl.Int64,
    "keep_recent": pl.Int32,
}
FACT_CHARS = 80  # of a fact's text in the report's tables
NOTE_ITEMS = 5  # dropped facts named in the explorer's note at a compaction


def audit_of(ctx: Context) -> Audit:
    """The selection's audit, computed once per report (drift type 3 reads it too)."""
    key = (
        NAME,
        CompactionSettings.of(ctx.cfg).keep_recent,
        ctx.cfg[REDISCOVERY_WINDOW],
        *(repr(ctx.cfg[k]) for k in ctx.cfg.values if k.startswith("compaction.")),
        KeywordSettings.of(ctx.cfg).tokenizer,
    )
    if key not in ctx.memo:
        ctx.memo[key] = run_audit(ctx.con, ctx.cfg)
    audit: Audit = ctx.memo[key]
    return audit


def run(ctx: Context) -> Section:
    c = CompactionSettings.of(ctx.cfg)
    a = audit_of(ctx)
    formats = harness.by_format(ctx.con)
    own = harness.materialize(ctx.con)  # the harness's rule is replayed over its own logs only
    idle = (
        {}
        if a.events
        else {
            f"{NAME}.logged": "no compaction is logged in the selection (Claude Code's "
            "compact_boundary, Codex's compacted and the other formats' compaction records)"
        }
    )
    if not own:
        idle.update(
            {
                f"{NAME}.{part}": f"no conversation from the harness whose compaction this replays ({harness.elsewhere(formats)})"
                for part in ("replay", "sweep")
            }
        )
    if len(idle) == 3:
        return Section.idle(NAME, TITLE, " and ".join(sorted(set(idle.values()))))
    setting = (int(c.max_tokens), int(c.keep_recent))
    points, listed = replay.sweep(
        ctx.con,
        replay.grid(*setting),
        int(c.summary_tokens),
        detail=setting,
        table=harness.HARNESS,
        kept=(replay.KEPT, ctx.cfg),
    )
    sweep = [p.figures() for p in points]
    here = next(p for p in sweep if (p["max_tokens"], p["keep_recent"]) == setting)
    rows = a.rows
    _store(ctx, FACTS_TABLE, [{k: getattr(r, k) for k in COLUMNS} for r in rows], COLUMNS)
    _store(ctx, MARKS_TABLE, marks(a), MARK_COLUMNS)
    _store(
        ctx,
        REPLAY_TABLE,
        [
            {
                "conversation_id": x.conversation_id,
                "native_id": x.native_id,
                "position": x.position,
                "context_tokens": x.context_tokens,
                "kept_from": x.kept_from,
                "needed_after": x.needed_after,
                "outside_window": x.outside_window,
                "max_tokens": setting[0],
                "keep_recent": setting[1],
            }
            for x in listed
        ],
        REPLAY_COLUMNS,
    )
    full = _metrics(a, rows, here, sweep, c)
    metrics = {k: v for k, v in full.items() if f"{NAME}.{k}" not in idle}
    sec = Section(
        NAME, TITLE, summary=_summary(a, full["logged"], here, c, own, idle), metrics=metrics, not_in_use=idle
    )
    sec.findings = [_finding(ctx, r) for r in rows if r.lost]
    sec.tables = _tables(ctx, a, rows, listed, sweep, bool(a.events), bool(own))
    if own:
        sec.charts.append(
            Chart(
                "sweep",
                "Needs after a compaction that fall outside the kept window, by setting",
                {"points": sweep, "current": {"max_tokens": setting[0], "keep_recent": setting[1]}},
            )
        )
    return sec


def _metrics(a: Audit, rows: list[Row], here: dict[str, Any], sweep: list[dict[str, Any]], c: Any) -> dict[str, Any]:
    return {
        "logged": {
            "compactions": len(a.events),
            "conversations": len({e.conversation_id for e in a.events}),
            "off_main_path": a.off_path_events,
            "with_summary": sum(e.compaction.summary is not None for e in a.events),
            "opaque_summaries": sum(e.compaction.summary_state == "opaque" for e in a.events),
            **tally(rows),
            "kept_by_summary": sum(r.carried_by == "summary" for r in rows),
            "kept_by_messages": sum(r.carried_by == "kept messages" for r in rows),
            "lost_high": sum(r.lost and r.severity == "high" for r in rows),
            "by_kind": {k: tally([r for r in rows if r.kind == k]) for k in KINDS},
            "by_category": by_category(rows),
            "events": [
                {
                    "conversation_id": e.conversation_id,
                    "native_id": e.native_id,
                    "position": e.compaction.position,
                    "trigger": e.compaction.trigger,
                    "pre_tokens": e.compaction.pre_tokens,
                    "summary_chars": len(e.compaction.summary) if e.compaction.summary else None,
                    **e.counts(),
                    "by_category": by_category(e.rows, shares=False),
                }
                for e in a.events
            ],
        },
        "replay": {**here, "summary_tokens": int(c.summary_tokens)},
        "sweep": sweep,
    }


def by_category(rows: list[Row], shares: bool = True) -> dict[str, dict[str, Any]]:
    """Per category (docs/metrics.md#compaction): the tally, and over the corpus ``kept_share`` (kept of the judged: kept and dropped),
    ``summary_kept_share`` (kept by the summary of the facts only the summary could keep: those no kept message
    holds) and ``needed_after_share`` (needed again of the dropped); None where there is nothing to share."""
    out: dict[str, dict[str, Any]] = {}
    for cat in CATEGORIES:
        mine = [r for r in rows if r.category == cat]
        t: dict[str, Any] = tally(mine)
        t["by_summary"] = sum(r.carried_by == "summary" for r in mine)
        if shares:
            judged, on_summary = t["kept"] + t["dropped"], t["by_summary"] + t["dropped"]
            t["kept_share"] = round(t["kept"] / judged, 4) if judged else None
            t["summary_kept_share"] = round(t["by_summary"] / on_summary, 4) if on_summary else None
            t["needed_after_share"] = round(t["lost"] / t["dropped"], 4) if t["dropped"] else None
        out[cat] = t
    return out


def _summary(a: Audit, m: dict[str, Any], here: dict[str, Any], c: Any, n: int, idle: dict[str, str]) -> str:
    if a.events:
        verb = "was" if m["lost"] == 1 else "were"
        lost = (
            f"**{counted(m['lost'], 'dropped fact')} {verb} needed again** ({m['lost_high']} high: the user had "
            "to repeat it or ask, an error recurred, or a path had to be rediscovered)"
            if m["lost"]
            else "no dropped fact was needed again"
        )
        them = "it" if m["compactions"] == 1 else "them"
        head = (
            f"**{counted(m['compactions'], 'compaction')}** logged in {counted(m['conversations'], 'conversation')}"
            f" ({m['with_summary']} with a summary in the log). Before {them} the context held "
            f"{counted(m['held'], 'fact')}: {m['kept']} kept ({m['kept_by_summary']} by the summary, "
            f"{m['kept_by_messages']} by kept messages), {m['dropped']} dropped, {m['unjudged']} not judged (no "
            f"summary logged, or the summary in another language)"
            + (
                f", {m['opaque']} behind an opaque summary ({counted(m['opaque_summaries'], 'compaction')} logged "
                "its summary encrypted or empty: what it kept cannot be read, and nothing is called dropped)"
                if m["opaque_summaries"]
                else ""
            )
            + f"; {lost}."
            + _shares(m["by_category"])
        )
    else:
        head = f"Audit not in use: {idle[f'{NAME}.logged']}."
    if a.off_path_events:
        head += f" {counted(a.off_path_events, 'compaction event')} off the main path not audited."
    if f"{NAME}.replay" in idle:
        return head + f" Replay not in use: {idle[f'{NAME}.replay']}."
    replayed = (
        f" Replaying the harness's rule (max_tokens {c.max_tokens}, keep_recent {c.keep_recent}, "
        f"characters/4) over its {counted(n, 'conversation')}: "
    )
    if not here["compactions"]:
        return head + replayed + "it never compacts (no conversation's context exceeds max_tokens)."
    replayed += f"{counted(here['compactions'], 'compaction')} in {here['conversations_compacted']} of them"
    if not here["needed_after_compaction"]:
        return head + replayed + "; no fact is needed again after one."
    return (
        head
        + replayed
        + (
            f"; of the {here['needed_after_compaction']} needs that follow a compaction, {here['outside_window']} "
            f"({here['outside_share']:.0%}) are of a fact outside the kept window, which only the summary could carry "
            "(the bounds: keeping no message leaves all of them outside, never compacting none)."
        )
    )


def _shares(cats: dict[str, dict[str, Any]]) -> str:
    """`` Kept per category: path 2 of 5, command 0 of 3, ...``: the judged categories only."""
    parts = [f"{cat} {t['kept']} of {t['kept'] + t['dropped']}" for cat, t in cats.items() if t["kept"] + t["dropped"]]
    summary = [
        f"{cat} {t['by_summary']} of {t['by_summary'] + t['dropped']}"
        for cat, t in cats.items()
        if t["by_summary"] + t["dropped"]
    ]
    return (f" Kept per category (of the judged facts): {', '.join(parts)}." if parts else "") + (
        f" The summaries kept, of the facts no kept message held: {', '.join(summary)}." if summary else ""
    )


def counted(n: int, word: str) -> str:
    """``3 compactions``, ``1 compaction``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _finding(ctx: Context, r: Row) -> Finding:
    """A lost fact (one with ``needed_at``) as a finding."""
    assert r.needed_at is not None  # only lost facts are findings
    fact = r.fact if len(r.fact) <= FACT_CHARS else r.fact[: FACT_CHARS - 1] + "…"
    return Finding(
        "compaction_loss",
        r.severity or "low",
        r.conversation_id,
        r.native_id,
        sorted({r.fact_position, r.event_position, r.needed_at, *r.evidence}),
        f"{r.kind} “{fact}” (at [{r.fact_position}]) was dropped by the compaction at [{r.event_position}] "
        f"and needed again at [{r.needed_at}]: {r.need}",
        "in the context before the compaction, in neither its summary nor the kept messages, needed again",
        float(r.needed_at - r.event_position),
    )


def _tables(
    ctx: Context,
    a: Audit,
    rows: list[Row],
    listed: list[Any],
    sweep: list[dict[str, Any]],
    audited: bool,
    replayed_here: bool,
) -> list[Table]:
    """The audit's tables (when a compaction is logged) and the replay's (when the harness's own logs are here)."""

    def name(cid: str) -> str:
        return ctx.names.get(cid, cid)

    events = pl.DataFrame(
        [
            {
                "conversation": name(e.conversation_id),
                "at": e.compaction.position,
                "trigger": e.compaction.trigger,
                "pre_tokens": e.compaction.pre_tokens,
                "summary_chars": len(e.compaction.summary) if e.compaction.summary else None,
                **e.counts(),
                "kept_of": _kept_of(e.rows),
                "lost_what": _lost_of(e.rows),
            }
            for e in a.events
        ],
        schema={
            "conversation": pl.String,
            "at": pl.Int64,
            "trigger": pl.String,
            "pre_tokens": pl.Int64,
            "summary_chars": pl.Int64,
            "summary": pl.String,
            "held": pl.Int64,
            "kept": pl.Int64,
            "dropped": pl.Int64,
            "unjudged": pl.Int64,
            "opaque": pl.Int64,
            "lost": pl.Int64,
            "lost_high": pl.Int64,
            "kept_of": pl.String,
            "lost_what": pl.String,
        },
    )
    losses = pl.DataFrame(
        [
            {
                "conversation": name(r.conversation_id),
                "severity": r.severity,
                "category": r.category,
                "kind": r.kind,
                "fact": r.fact[:FACT_CHARS],
                "fact_at": r.fact_position,
                "compaction_at": r.event_position,
                "needed_at": r.needed_at,
                "need": r.need,
            }
            for r in rows
            if r.lost
        ],
        schema={
            "conversation": pl.String,
            "severity": pl.String,
            "category": pl.String,
            "kind": pl.String,
            "fact": pl.String,
            "fact_at": pl.Int64,
            "compaction_at": pl.Int64,
            "needed_at": pl.Int64,
            "need": pl.String,
        },
    )
    cats = by_category(rows)
    shown = (
        "held",
        "kept",
        "by_summary",
        "dropped",
        "unjudged",
        "opaque",
        "lost",
        "kept_share",
        "summary_kept_share",
        "needed_after_share",
    )
    categories = pl.DataFrame(
        [{"category": cat, **{k: t[k] for k in shown}} for cat, t in cats.items()],
        schema={"category": pl.String, **{k: pl.Float64 if k.endswith("share") else pl.Int64 for k in shown}},
    )
    kinds = pl.DataFrame([{"kind": k, **tally([r for r in rows if r.kind == k])} for k in KINDS])
    replayed = pl.DataFrame(
        [
            {
                "conversation": name(x.conversation_id),
                "compacted_after": x.position,
                "context_tokens": x.context_tokens,
                "kept_from": x.kept_from,
                "needs_after": x.needed_after,
                "outside_window": x.outside_window,
            }
            for x in listed
        ],
        schema={
            "conversation": pl.String,
            "compacted_after": pl.Int64,
            "context_tokens": pl.Int64,
            "kept_from": pl.Int64,
            "needs_after": pl.Int64,
            "outside_window": pl.Int64,
        },
    )
    audit = (
        [
            Table(
                "compactions",
                "Logged compactions, the worst first: facts held before, kept, dropped, not judged, "
                "dropped and needed again (lost)",
                events.sort(
                    ["lost_high", "lost", "dropped", "conversation", "at"], descending=[True, True, True, False, False]
                ),
            ),
            Table(
                "losses",
                "Dropped facts needed again (where the fact was, the compaction, where it was missed)",
                losses.sort(["severity", "conversation", "needed_at"], descending=[False, False, False]),
            ),
            Table(
                "by_category",
                "Facts per category at the logged compactions: kept_share is kept of the judged (kept "
                "and dropped), summary_kept_share kept by the summary of the facts no kept message held, "
                "needed_after_share the dropped ones needed again; opaque and unjudged facts are in none",
                categories,
            ),
            Table("by_kind", "Facts per kind at the logged compactions", kinds),
        ]
        if audited
        else []
    )
    if not replayed_here:
        return audit
    return audit + [
        Table(
            "replay",
            "Where the configured rule would compact (the most needs outside the kept window first)",
            replayed.sort(["outside_window", "conversation", "compacted_after"], descending=[True, False, False]),
        ),
        Table(
            "sweep",
            "Replay sweep over max_tokens × keep_recent (pooled over the harness's conversations)",
            pl.DataFrame(
                sweep,
                schema_overrides={
                    "mean_context_tokens": pl.Float64,  # all None: no messages
                    "outside_share": pl.Float64,
                },
            ).select(
                "max_tokens",
                "keep_recent",
                "conversations_compacted",
                "compactions",
                "needed_after_compaction",
                "outside_window",
                "outside_share",
                pl.col("mean_context_tokens").round(0).cast(pl.Int64),
            ),
        ),
    ]


def marks(a: Audit) -> list[dict[str, Any]]:
    """The explorer's notes, one row per message: at a compaction, its summary's state, what it kept per category
    and what it lost; where a dropped fact was needed again, which fact and which compaction dropped it."""
    notes: dict[tuple[str, int], list[str]] = {}
    for e in a.events:
        k, state = e.compaction, e.counts()["summary"]
        head = {"text": "summary logged", "none": "no summary logged: not judged"}.get(
            state, f"summary {state}: what it kept cannot be read"
        )
        kept = _kept_of(e.rows)
        lost = [r for r in e.rows if r.lost]
        quiet = [r for r in e.rows if r.status == "dropped" and not r.lost]
        dropped = (
            "; dropped, not needed again: "
            + ", ".join(f"{r.category} “{r.fact[:40]}”" for r in quiet[:NOTE_ITEMS])
            + (f" and {len(quiet) - NOTE_ITEMS} more" if len(quiet) > NOTE_ITEMS else "")
            if quiet
            else ""
        )
        note = (
            f"compaction audit: {head}; {len(e.rows)} facts held"
            + (f"; kept {kept}" if kept else "")
            + dropped
            + (
                f"; lost {len(lost)}: "
                + "; ".join(
                    f"{r.category} “{r.fact[:60]}” (at [{r.fact_position}]) needed at [{r.needed_at}]" for r in lost
                )
                if lost
                else "; nothing lost"
            )
        )
        notes.setdefault((e.conversation_id, k.position), []).append(note)
        for r in lost:
            assert r.needed_at is not None
            notes.setdefault((e.conversation_id, r.needed_at), []).append(
                f"needed again after the compaction at [{r.event_position}], which dropped it: {r.category} "
                f"“{r.fact[:60]}” ({r.need})"
            )
    return [
        {"conversation_id": cid, "position": pos, "compaction_note": "\n".join(n)}
        for (cid, pos), n in sorted(notes.items())
    ]


def _kept_of(rows: list[Row]) -> str:
    """``path 2/3, command 0/2``: kept of the judged, per category (the event's row in the table)."""
    return ", ".join(
        f"{cat} {t['kept']}/{t['kept'] + t['dropped']}"
        for cat, t in by_category(rows, False).items()
        if t["kept"] + t["dropped"]
    )


def _lost_of(rows: list[Row]) -> str:
    """The lost facts of one compaction, briefly: ``path app/x.py → [37]; command pytest -q → [40]``."""
    return "; ".join(f"{r.category} {r.fact[:40]} → [{r.needed_at}]" for r in rows if r.lost)


def _store(ctx: Context, table: str, rows: list[dict[str, Any]], schema: dict[str, Any]) -> None:
    """Replace the selection's rows of a derived table."""
    derived.replace_rows(ctx.con, table, pl.DataFrame(rows, schema=schema))
