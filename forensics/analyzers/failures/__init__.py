"""What went wrong (docs/definitions.md#failure-analysis): each failed or problem-bearing run's signature (how it ended, its recurring
error as a template, its decisive step and agent), the clusters of equal signatures with their lift, and the
worst runs with the step where they went wrong.

A run is *failed* when ``conversation_outcomes`` says so, *problem-bearing* when ``problem_findings`` (the
problem detectors (docs/definitions.md#problems-a-reviewer-flags), when that table exists) holds a finding of it. A cluster is the runs whose
(end, error template) are equal; its name is made of those parts. Every graded run is signed, so a cluster
counts the passed runs with the same signature too, but only clusters holding a failed or problem-bearing run
are listed. Its lift is the share of failed runs in it over the share of passed runs in it, with a 95 %
interval (``outcomes.lift``); a cluster whose interval holds 1 does not tell failed from passed runs, and one
whose end the harness decides (``signature.GRADE_REVEALING_ENDS``: MINT's ALFWorld stops a won episode on its
last action) is not claimed to (``harness_end``). Grade-revealing text (``signature.GRADE_REVEALING``) is cut from each
run before it is read, so no signature is built on the environment saying the answer was wrong.

The rows go to ``run_failures`` (one per failed or problem-bearing run of the selection: its decisive step's
position, agent and the rule that chose it) and the listed clusters to ``failure_clusters``, for notebooks, the
explorer's home page, `forensics show --decisive` and CI.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers import diff, reuse
from forensics.analyzers.base import Context, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.failures import views
from forensics.analyzers.failures.contrast import Difference, contrast, tool_bigrams
from forensics.analyzers.failures.decisive import Decisive, from_run
from forensics.analyzers.outcomes import Graded, compared, mixed_tasks
from forensics.analyzers.signature import (
    DONE_ENDS,
    GRADE_REVEALING,
    GRADE_REVEALING_ENDS,
    Msg,
    ended,
    errors,
    recurring,
    stream,
)
from forensics.analyzers.signature import messages as read_messages
from forensics.config import Config
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived

NAME = "failures"
TITLE = "What went wrong: failure signatures, where runs went wrong, and by which agent"
EXAMPLES = 3
SHOWN_CLUSTERS = 30
WORST = 15
QUOTE = 240


@dataclass(frozen=True)
class Signature:
    conversation_id: str
    failed: bool | None  # None: no outcome
    ended: str
    ended_at: int | None
    error_template: str | None
    error_count: int
    decisive: Decisive | None

    @property
    def cluster(self) -> str:
        return name_of(self.ended, self.error_template)


def messages(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[Msg]]:
    """The main-path messages of the runs, each cut before its first grade-revealing message."""
    return read_messages(con, cids, GRADE_REVEALING)


def name_of(end: str, template: str | None) -> str:
    """A cluster's name from its parts: how the runs ended, and their recurring error."""
    return f"{end.replace('_', ' ')}: {template}" if template else f"{end.replace('_', ' ')}, no error"


def run(ctx: Context) -> Section:
    sec = Section(NAME, TITLE)
    runs = _runs(ctx.con)
    if runs.is_empty():
        _store(ctx.con, [])
        _store_clusters(ctx.con, [])
        return Section.idle(
            NAME,
            TITLE,
            "no selected run failed (by its outcome) or has a problem finding; graded "
            "runs (`forensics outcomes FILE`, or a benchmark log that records its "
            "grade) fill it",
        )
    graded = _graded_runs(ctx.con)
    outcome = dict(zip(runs["conversation_id"].to_list(), runs["success"].to_list()))
    passed_sibling = _divergences(ctx.con, runs)
    loops = _loop_starts(ctx.con)
    problems = _problem_kinds(ctx.con)
    # the passed runs count in the clusters too (a signature as common in passed runs tells nothing), but a
    # cluster is listed only when a failed or problem-bearing run is in it
    bearing = set(outcome)
    # each run read once (how it ended, its errors, its calls: ``_readings``, kept between reports); the messages
    # read again only for a failed run whose decisive step comes from its own messages
    ids = sorted(bearing | set(graded))
    readings = _readings(ctx, ids)
    own = [c for c in outcome if outcome[c] is False and c not in passed_sibling]
    msgs = dict(stream(ctx.con, own, GRADE_REVEALING)) if own else {}
    by_run: dict[str, Signature] = {}
    by_other: dict[str, Signature] = {}
    features: dict[str, tuple[Graded, bool]] = {}
    for cid in ids:
        r = readings[cid]
        if cid in outcome:
            failed = None if outcome[cid] is None else not outcome[cid]
            by_run[cid] = _signed(cid, r, failed, passed_sibling.get(cid), loops.get(cid), msgs.get(cid, []))
        if cid in graded:
            if cid not in bearing:
                by_other[cid] = _signed(cid, r, graded[cid][0])
            features[cid] = _features(cid, graded[cid], r, problems)
    sigs = [by_run[cid] for cid in runs["conversation_id"].to_list()]
    _store(ctx.con, sigs)
    n_fail, n_pass = _graded(ctx.con)
    others = [by_other[cid] for cid in graded if cid not in bearing]
    tasks = {cid: task for cid, (_, task) in graded.items()}
    clusters = [c for c in cluster(sigs + others, n_fail, n_pass, bearing, tasks) if c["bearing"]]
    for c in clusters:
        c.pop("bearing")
    _store_clusters(ctx.con, clusters)
    rows = [features[cid] for cid in graded]
    compared, end_states = contrast([g for g, _ in rows]), sum(revealing for _, revealing in rows)
    diffs = compared.tested
    sec.metrics = {
        "runs": len(sigs),
        "failed": sum(s.failed is True for s in sigs),
        "graded_failed": n_fail,
        "graded_passed": n_pass,
        "ended": dict(sorted(Counter(s.ended for s in sigs).items())),
        "decisive_rules": dict(sorted(Counter(s.decisive.rule for s in sigs if s.decisive).items())),
        "clusters": clusters[:SHOWN_CLUSTERS],
        "differences": [
            {
                "feature": d.feature,
                "failed": d.failed,
                "passed": d.passed,
                "lift": d.lift,
                "lift_low": d.low,
                "lift_high": d.high,
                "within_task": d.within_task,
            }
            for d in diffs
            if d.stated
        ],
        "features_tested": len(diffs),
        "features_untested": compared.untested,
        "grade_revealing_end_states": end_states,
    }
    ungraded = NO_GRADES if not graded else ""
    sec.tables = [
        _cluster_table(clusters[:SHOWN_CLUSTERS]),
        replace(
            _worst_table(ctx.con, sigs, ctx.names),
            empty=ungraded
            or (
                "No failed run has a step found where it went wrong."
                if sec.metrics["failed"]
                else "No selected run failed."
            ),
        ),
        replace(
            _differences_table(diffs),
            empty=ungraded or f"No feature's lift has a 95 % interval excluding 1 ({len(diffs)} features tested).",
        ),
    ]
    sec.summary = _summary(sigs, clusters) + _diff_summary(diffs, end_states, compared.untested)
    return sec


@dataclass(frozen=True)
class Reading:
    """What a run's signature and features read from its messages: how it ended (and where), its errors'
    (position, template), its calls' names in order."""

    ended: str
    ended_at: int | None
    errors: list[tuple[int, str]]
    call_names: list[str]


READ = "failures_read"  # the readings kept between reports (``reuse.rows``)
READ_COLUMNS: dict[str, Any] = {
    "conversation_id": pl.String,
    "ended": pl.String,
    "ended_at": pl.Int32,
    "error_positions": pl.List(pl.Int32),
    "error_templates": pl.List(pl.String),
    "call_names": pl.List(pl.String),
}


def reading(msgs: list[Msg], errs: list[tuple[int, str]] | None = None) -> Reading:
    """A run's reading of its messages (``errs``: its ``errors(msgs)`` when already read)."""
    end, end_at = ended(msgs)
    return Reading(end, end_at, errors(msgs) if errs is None else errs, [n for m in msgs for n in m.call_names])


def signature(
    cid: str,
    msgs: list[Msg],
    failed: bool | None,
    divergence: Decisive | None = None,
    loop_at: int | None = None,
    errs: list[tuple[int, str]] | None = None,
) -> Signature:
    """One run's signature; the decisive step only for a failed run (from its divergence from a passed run of
    its task when given, else from its own messages; ``loop_at``: where a loop found in it starts; ``errs``: its
    ``errors(msgs)`` when already read)."""
    return _signed(cid, reading(msgs, errs), failed, divergence, loop_at, msgs)


def _signed(
    cid: str,
    r: Reading,
    failed: bool | None,
    divergence: Decisive | None = None,
    loop_at: int | None = None,
    msgs: list[Msg] | None = None,
) -> Signature:
    """``signature`` from the run's reading (``msgs``: its messages, read only for a failed run's decisive step)."""
    template, first_at, count = recurring(r.errors)
    decisive = None
    if failed:
        decisive = divergence or from_run(
            msgs or [], first_at if count >= 2 else None, r.ended_at if r.ended == "claimed_success" else None, loop_at
        )
    return Signature(cid, failed, r.ended, r.ended_at, template, count, decisive)


def _readings(ctx: Context, ids: list[str]) -> dict[str, Reading]:
    """The readings of the runs ``ids`` (``readings``)."""
    return readings(ctx.con, ctx.cfg, ids)


def readings(con: duckdb.DuckDBPyConnection, cfg: Config, ids: list[str], counted: bool = True) -> dict[str, Reading]:
    """The readings of the runs ``ids``: an unchanged run's read back from the warehouse (its fingerprint, the
    config and the code unchanged), the others read from their messages a batch at a time (``signature.stream``);
    ``counted``: in the report's tally of kept results (``reuse.rows``)."""

    def compute() -> pl.DataFrame:
        sel = [c for (c,) in con.execute(f"SELECT conversation_id FROM {SELECTED} ORDER BY 1").fetchall()]
        got = {cid: reading(ms) for cid, ms in stream(con, sel, GRADE_REVEALING)}
        rows = []
        for cid in sel:
            r = got.get(cid) or reading([])
            rows.append((cid, r.ended, r.ended_at, [p for p, _ in r.errors], [t for _, t in r.errors], r.call_names))
        return pl.DataFrame(rows, schema=READ_COLUMNS, orient="row")

    with reuse.narrowed(con, ids):
        frame = reuse.rows(con, cfg, READ, compute, counted=counted)
    return {
        cid: Reading(end, end_at, list(zip(positions, templates)), names)
        for cid, end, end_at, positions, templates, names in frame.select(list(READ_COLUMNS)).iter_rows()
    }


def handed_over(con: duckdb.DuckDBPyConnection, cfg: Config, ids: list[str]) -> set[str]:
    """``signature.done`` read from the runs' kept readings (``readings``): an unchanged run is not read again, and
    the runs the failures analyzer read are not read twice. Not in the report's tally: the failures analyzer's
    figures of reuse stay its own."""
    return {cid for cid, r in readings(con, cfg, ids, counted=False).items() if r.ended in DONE_ENDS}


def cluster(
    sigs: list[Signature],
    n_fail: int,
    n_pass: int,
    bearing: set[str] | None = None,
    tasks: dict[str, str | None] | None = None,
) -> list[dict[str, Any]]:
    """Clusters of equal signatures (end, error template), largest first, with their lift where both failed
    and passed runs are graded; ``bearing``: whether a failed run, or one of the ids given, is in it. ``tasks``:
    each graded run's task; where tasks repeat (a task with a failed and a passed run) the lift is compared within
    task as the features are (``contrast``: Mantel–Haenszel over those tasks; none for a cluster in no such task)."""
    groups: dict[str, list[Signature]] = {}
    for s in sigs:
        groups.setdefault(s.cluster, []).append(s)
    graded = [
        Graded(s.conversation_id, s.failed, (tasks or {}).get(s.conversation_id), frozenset({s.cluster}))
        for s in sigs
        if s.failed is not None
    ]
    strata = mixed_tasks(graded) if tasks else []
    out = []
    for name, members in groups.items():
        harness = members[0].ended in GRADE_REVEALING_ENDS
        a = sum(s.failed is True for s in members)
        b = sum(s.failed is False for s in members)
        r, lo, hi = compared(name, strata, a, n_fail, b, n_pass)
        shown = sorted(members, key=lambda s: (s.failed is not True, s.conversation_id))
        out.append(
            {
                "name": name,
                "runs": len(members),
                "failed": a,
                "passed": b,
                "lift": r,
                "lift_low": lo,
                "lift_high": hi,
                "examples": [s.conversation_id for s in shown[:EXAMPLES]],
                "harness_end": harness,
                "within_task": bool(strata),
                "bearing": a > 0 or any(s.conversation_id in (bearing or ()) for s in members),
            }
        )
    return sorted(out, key=lambda c: (-c["runs"], -c["failed"], c["name"]))


def _runs(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The selected runs that failed or bear a problem, with their outcome (None: not graded)."""
    problems = "problem_findings" in _tables(con)
    extra = (
        (
            "UNION SELECT DISTINCT p.conversation_id FROM problem_findings p JOIN sel_conversations "
            "USING (conversation_id)"
        )
        if problems
        else ""
    )
    return pl.DataFrame(
        con.execute(
            "WITH r AS (SELECT o.conversation_id FROM conversation_outcomes o JOIN sel_conversations "
            f"USING (conversation_id) WHERE o.success = false {extra}) "
            "SELECT r.conversation_id, o.success FROM r LEFT JOIN conversation_outcomes o USING (conversation_id) "
            "ORDER BY 1"
        ).fetchall(),
        schema={"conversation_id": pl.String, "success": pl.Boolean},
        orient="row",
    )


def _loop_starts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Where the first loop the problem detectors found (``problem_findings``, kind ``loop``) starts, per run."""
    if "problem_findings" not in _tables(con):
        return {}
    return {
        c: int(p)
        for c, p in con.execute(
            "SELECT p.conversation_id, min(p.position) FROM problem_findings p JOIN sel_conversations "
            "USING (conversation_id) WHERE p.kind = 'loop' AND p.position IS NOT NULL GROUP BY 1"
        ).fetchall()
    }


def _graded_runs(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[bool, str | None]]:
    """Every selected graded run: failed, and its task key."""
    return {
        c: (not ok, t)
        for c, ok, t in con.execute(
            "SELECT o.conversation_id, o.success, json_extract_string(o.detail, '$.task') FROM conversation_outcomes o "
            "JOIN sel_conversations USING (conversation_id) WHERE o.success IS NOT NULL ORDER BY 1"
        ).fetchall()
    }


def _problem_kinds(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The kinds of problem found in each selected run (``problem_findings``), a feature of the comparison."""
    problems: dict[str, set[str]] = {}
    if "problem_findings" in _tables(con):
        for cid, kind in con.execute(
            "SELECT DISTINCT p.conversation_id, p.kind FROM problem_findings p JOIN "
            "sel_conversations USING (conversation_id)"
        ).fetchall():
            problems.setdefault(cid, set()).add(str(kind))
    return problems


def _features(
    cid: str, grade: tuple[bool, str | None], r: Reading, problems: dict[str, set[str]]
) -> tuple[Graded, bool]:
    """A graded run's features, compared between failed and passed runs (``differences``), and whether it ended
    in a way the harness decides (not used as a feature)."""
    failed, task = grade
    end = r.ended
    feats = {f"problem: {k}" for k in problems.get(cid, ())} | {f"error: {t}" for _, t in r.errors}
    feats |= tool_bigrams(r.call_names)
    revealing = end in GRADE_REVEALING_ENDS
    if not revealing:
        feats.add(f"ended: {end.replace('_', ' ')}")
    return Graded(cid, failed, task, frozenset(feats)), revealing


# in place of the tables that need graded runs (``Table.empty``) where the selection has none (the demo's fixtures);
# the explorer says it too (``views.ungraded``)
NO_GRADES = views.NO_GRADES


def _differences_table(diffs: list[Difference]) -> Table:
    rows = [
        {
            "feature": d.feature,
            "failed runs": d.failed,
            "passed runs": d.passed,
            "lift": d.lift,
            "low": d.low,
            "high": d.high,
            "compared": "within task" if d.within_task else "overall",
        }
        for d in diffs
        if d.stated
    ]
    return Table(
        "differences",
        "What failed runs did differently: features whose lift (share of failed runs with "
        "it / share of passed runs with it) has a 95 % interval excluding 1",
        pl.DataFrame(
            rows,
            schema={
                "feature": pl.String,
                "failed runs": pl.Int64,
                "passed runs": pl.Int64,
                "lift": pl.Float64,
                "low": pl.Float64,
                "high": pl.Float64,
                "compared": pl.String,
            },
        ),
    )


def _diff_summary(diffs: list[Difference], end_states: int, untested: int = 0) -> str:
    if not diffs:
        return ""
    stated = [d for d in diffs if d.stated]
    within = " within task" if diffs[0].within_task else ""
    text = (
        f"Of {len(diffs)} features of graded runs compared{within}, {len(stated)} differ between failed and passed "
        "runs (95 % interval of the lift excluding 1)"
    )
    if untested:
        text = f"{untested} features found in no task with both outcomes are not compared. " + text
    text += (": " + "; ".join(f"{d.feature} (lift {d.lift:.2f})" for d in stated[:5]) + ". ") if stated else ". "
    return text + (
        f"{end_states} graded runs end in a way the harness decides (a call nothing answered), not used as a feature. "
        if end_states
        else ""
    )


def _graded(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    row = con.execute(
        "SELECT count(*) FILTER (WHERE NOT success), count(*) FILTER (WHERE success) FROM "
        "conversation_outcomes JOIN sel_conversations USING (conversation_id)"
    ).fetchall()[0]
    return int(row[0]), int(row[1])


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}


def _divergences(con: duckdb.DuckDBPyConnection, runs: pl.DataFrame) -> dict[str, Decisive]:
    """For each failed run with a passed run of the same task: the first divergence from the passed run that
    agrees with it longest, where the failed run has a step there."""
    rows = con.execute(
        "SELECT o.conversation_id, json_extract_string(o.detail, '$.task') AS task, o.success FROM "
        "conversation_outcomes o JOIN sel_conversations USING (conversation_id) WHERE o.success IS NOT NULL AND "
        "json_extract_string(o.detail, '$.task') IS NOT NULL ORDER BY 1"
    ).fetchall()
    by_task: dict[str, list[tuple[str, bool]]] = {}
    for cid, task, ok in rows:
        by_task.setdefault(task, []).append((cid, bool(ok)))
    failed = set(runs.filter(pl.col("success") == False)["conversation_id"].to_list())  # noqa: E712
    out: dict[str, Decisive] = {}
    for members in by_task.values():
        passed = [c for c, ok in members if ok]
        if not passed:
            continue
        loaded = {c: diff.load_run(con, c) for c in passed}
        for cid, ok in members:
            if ok or cid not in failed:
                continue
            f = diff.load_run(con, cid)
            if not f.steps:
                continue
            best = max(
                (diff.first_divergence(loaded[p].steps, f.steps) for p in passed if loaded[p].steps), default=None
            )
            if best is None or best >= len(f.steps):
                continue
            pos = f.steps[best].position
            agent = con.execute(
                "SELECT name FROM messages WHERE conversation_id = ? AND position = ?", [cid, pos]
            ).fetchall()
            out[cid] = Decisive(pos, agent[0][0] if agent else None, "divergence")
    return out


RUN_FAILURES: dict[str, Any] = {
    "conversation_id": pl.String,
    "ended": pl.String,
    "error_template": pl.String,
    "cluster": pl.String,
    "decisive_position": pl.Int32,
    "decisive_agent": pl.String,
    "decisive_rule": pl.String,
}
FAILURE_CLUSTERS: dict[str, Any] = {
    "cluster": pl.String,
    "runs": pl.Int64,
    "failed": pl.Int64,
    "passed": pl.Int64,
    "lift": pl.Float64,
    "lift_low": pl.Float64,
    "lift_high": pl.Float64,
    "harness_end": pl.Boolean,
    "examples": pl.List(pl.String),
}


def _store(con: duckdb.DuckDBPyConnection, sigs: list[Signature]) -> None:
    rows = [
        {
            "conversation_id": s.conversation_id,
            "ended": s.ended,
            "error_template": s.error_template,
            "cluster": s.cluster,
            "decisive_position": s.decisive.position if s.decisive else None,
            "decisive_agent": s.decisive.agent if s.decisive else None,
            "decisive_rule": s.decisive.rule if s.decisive else None,
        }
        for s in sigs
    ]
    derived.replace_rows(con, "run_failures", pl.DataFrame(rows, schema=RUN_FAILURES))


def _store_clusters(con: duckdb.DuckDBPyConnection, clusters: list[dict[str, Any]]) -> None:
    """The listed clusters of this report, largest first (the table is the last report's: recreated whole)."""
    rows = [{"cluster": c["name"], **{k: c[k] for k in FAILURE_CLUSTERS if k != "cluster"}} for c in clusters]
    derived.replace_rows(con, "failure_clusters", pl.DataFrame(rows, schema=FAILURE_CLUSTERS), "TRUE")


def _cluster_table(clusters: list[dict[str, Any]]) -> Table:
    rows = [
        {
            "cluster": c["name"],
            "runs": c["runs"],
            "failed": c["failed"],
            "passed": c["passed"],
            "lift": c["lift"],
            "low": c["lift_low"],
            "high": c["lift_high"],
            "lift compared": "within task" if c["within_task"] else "overall" if c["lift"] is not None else "–",
            "tells failed from passed": "not claimed: the harness decides this end"
            if c["harness_end"]
            else "yes"
            if c["lift_low"] is not None and (c["lift_low"] > 1 or c["lift_high"] < 1)
            else "not compared: in no task with both outcomes"
            if c["within_task"] and c["lift"] is None
            else "not compared: no failed and passed runs to compare"
            if c["lift"] is None
            else "no",
            "examples": ", ".join(c["examples"]),
        }
        for c in clusters
    ]
    return Table(
        "clusters",
        "Runs with equal signatures (how they ended, their recurring error): failed and passed "
        "runs in each, and the lift (failed share / passed share; within task where tasks repeat) with its 95 % "
        "interval",
        pl.DataFrame(
            rows,
            schema={
                "cluster": pl.String,
                "runs": pl.Int64,
                "failed": pl.Int64,
                "passed": pl.Int64,
                "lift": pl.Float64,
                "low": pl.Float64,
                "high": pl.Float64,
                "lift compared": pl.String,
                "tells failed from passed": pl.String,
                "examples": pl.String,
            },
        ),
    )


def _worst_table(con: duckdb.DuckDBPyConnection, sigs: list[Signature], names: dict[str, str]) -> Table:
    """The failed runs of the most common failed signatures, each with its decisive step and what it says."""
    common = Counter(s.cluster for s in sigs if s.failed)
    worst = sorted((s for s in sigs if s.failed and s.decisive), key=lambda s: (-common[s.cluster], s.conversation_id))
    msgs = messages(con, sorted({s.conversation_id for s in worst[:WORST]}))
    rows = []
    for s in worst[:WORST]:
        d = s.decisive
        assert d is not None
        said = next((m.text for m in msgs.get(s.conversation_id, []) if m.position == d.position), "")
        rows.append(
            {
                "run": names.get(s.conversation_id, s.conversation_id),
                "conversation_id": s.conversation_id,
                "cluster": s.cluster,
                "decisive position": d.position,
                "agent": d.agent,
                "why": d.rule,
                "evidence": " ".join(said.split())[:QUOTE],
            }
        )
    return Table(
        "worst_runs",
        "Failed runs, most common signature first: the step where each went wrong, who took "
        "it, the rule that chose it and what the step says",
        pl.DataFrame(
            rows,
            schema={
                "run": pl.String,
                "conversation_id": pl.String,
                "cluster": pl.String,
                "decisive position": pl.Int64,
                "agent": pl.String,
                "why": pl.String,
                "evidence": pl.String,
            },
        ),
    )


def _summary(sigs: list[Signature], clusters: list[dict[str, Any]]) -> str:
    failed = [s for s in sigs if s.failed]
    ends = Counter(s.ended for s in failed).most_common(3)
    text = (
        f"{len(sigs)} failed or problem-bearing runs, {len(failed)} of them failed, in {len(clusters)} "
        f"signatures. Failed runs ended: " + (", ".join(f"{e.replace('_', ' ')} {n}" for e, n in ends) or "none") + ". "
    )
    telling = [c for c in clusters if c["lift_low"] is not None and c["lift_low"] > 1 and not c["harness_end"]]
    if telling:
        text += (
            "Signatures more common in failed runs than passed ones (95 % interval above 1): "
            + "; ".join(
                f"{c['name']} ({c['failed']} failed, {c['passed']} passed, lift {c['lift']:.1f})" for c in telling[:5]
            )
            + ". "
        )
    elif clusters and clusters[0]["lift"] is not None:
        text += (
            "No signature is more common in failed runs than in passed ones beyond chance (every interval holds 1). "
        )
    return text


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    after=("outcomes",),
    lead=1,  # the report leads with what went wrong, before the runs
    views={
        "what_went_wrong": views.what_went_wrong,
        "decisive_step": views.decisive_step,
        "ungraded": views.ungraded,
    },
    tables=(
        reuse.cached_table(READ),
        derived.Table(
            "run_failures",
            "selection",
            "per failed or problem-bearing run: how it ended, its recurring "
            "error template, its cluster, its decisive step's position, agent and the rule that chose it",
        ),
        derived.Table(
            "failure_clusters",
            "whole",
            "the last report's clusters of equal signatures, largest first: "
            "runs, failed, passed, lift with its 95 % interval, whether the harness decides the end, "
            "example runs",
        ),
    ),
)
