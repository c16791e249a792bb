"""Run the selected analyzers over a warehouse and collect their sections (secrets already masked), the answer
first (``digest``), labels people recognise and the messages the shown findings cite."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Generic, TypeVar

import duckdb

from forensics import analyzers
from forensics import draw as draw_kit
from forensics.analyzers import quality, reuse
from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.schema import load_config
from forensics.config import Config
from forensics.kernel import cputime, workers
from forensics.kernel.errors import WarehouseError
from forensics.kernel.redact import mask_frame, redact, redact_value
from forensics.kernel.selection import Selection
from forensics.report import cache, drawn, evidence, persist
from forensics.report import digest as digests
from forensics.warehouse import open_warehouse, set_memory_limit
from forensics.warehouse.labels import Label

METRICS_SCHEMA_VERSION = 1
# copies the named conversations' rows into the report's connection (a report on Spark: ``spark.report``)
Runs = Callable[[list[str]], None]
# DuckDB's share of a report's memory (at most a quarter of the machine's; FORENSICS_DUCKDB_MEMORY overrides:
# warehouse.machine). The compaction audit's staging ran out at 192 MB on the shared agent logs while it extracted
# each argument key with a JSON call of its own; one extraction per argument runs there in 32 MB.
REPORT_MEMORY_MB = 512
SHOWN = 100  # findings listed per section, strongest first (all of them: metrics.json, `forensics serve`)
TRAILING = ("labels", "questions")  # the inputs a report was scored against, last in its meta
# one INFO record per analyzer with its time; `forensics report` shows them on a terminal (nothing in a pipe)
progress = logging.getLogger("forensics.report")
# and one DEBUG record per part of the report outside the analyzers and the tuners (``step``): bench/shares.py reads
# them, so that every share of a report's CPU is listed (docs/scale.md), not only the analyzers'


@contextmanager
def step(name: str, what: str) -> Iterator[None]:
    """A DEBUG progress record of the block's wall and CPU seconds (``_clock``), when someone reads them."""
    if not progress.isEnabledFor(logging.DEBUG):
        yield
        return
    started = _clock()
    yield
    progress.debug("%-14s %7.1f s %7.1f CPU s  %s", name, *_lapsed(started), what)


def toolkit_version() -> str:
    try:
        return version("forensics")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass
class Report:
    meta: dict[str, Any]
    sections: list[Section] = field(default_factory=list)
    digest: digests.Digest = field(default_factory=digests.Digest)
    labels: dict[str, Label] = field(default_factory=dict)  # conversation_id -> label, every conversation
    evidence: dict[str, dict[int, evidence.Message]] = field(default_factory=dict)  # cited messages and context
    drawn: dict[str, str] = field(default_factory=dict)  # chart name -> SVG, when drawn with the warehouse (``drawn``)
    # kept whole in the warehouse under this key (``report.cache``; "" when not kept), and its rendered files
    # (``render.write``, ``render.prerender``; kept beside the report's body, not in it)
    cache_key: str = ""
    pages: dict[str, str] = field(default_factory=dict)

    @property
    def not_in_use(self) -> dict[str, str]:
        """Metric prefix -> why that analyzer (or part of one) had nothing to read (``Section.not_in_use``)."""
        return {k: v for s in self.sections for k, v in s.not_in_use.items()}

    def parts(self) -> tuple[list[Section], list[Section]]:
        """(the sections the report leads with, before its digest (``Analyzer.lead``: what went wrong, the runs), in
        that order, an idle one not first; the others, in order)."""
        rank = analyzers.leading()
        lead = [s for s in self.sections if s.name in rank and s.name not in s.not_in_use]
        return sorted(lead, key=lambda s: rank[s.name]), [s for s in self.sections if s not in lead]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def label(self, conversation_id: str) -> str:
        lab = self.labels.get(conversation_id)
        return lab.text if lab else conversation_id

    def finding_label(self, f: Finding) -> str:
        """Whom a finding is about: its conversation's label, or its ``native_id`` when it has no conversation
        (a decision conflict whose decision came from a conversation the source does not hold)."""
        return self.label(f.conversation_id) if f.conversation_id else f.native_id or ""

    def shown(self, sec: Section) -> list[Finding]:
        """The findings a section lists: the strongest SHOWN."""
        return sorted(sec.findings, key=lambda f: tuple(-x for x in digests.strength(f)))[:SHOWN]


def build_report(
    db: str | os.PathLike[str],
    cfg: Config | None = None,
    selection: Selection | None = None,
    only: str | list[str] | None = None,
    labels: str | None = None,
    questions: str | None = None,
    *,
    recommend: digests.Recommender | None = None,
    persist_findings: bool = False,
    charts: bool = False,
    pages: Callable[[Report], None] | None = None,
) -> Report:
    """Analyze the warehouse at ``db``; ``only`` names analyzers (default: all registered); ``labels`` a labels
    file analyzers may score themselves against; ``questions`` a question file the memory analyzer replays (and
    its tuner fits on). ``recommend``: `forensics tune`'s tuners (``forensics.tuning.advise``) for *What to change*,
    run on the report's connection after the analyzers (None: not computed); ``persist_findings``:
    keep the findings in the warehouse for `forensics serve` (``report.persist``); ``charts``: draw the charts,
    reusing the warehouse's SVG of unchanged data (``report.drawn``); ``pages``: renders the report's pages into
    ``Report.pages`` (``render.prerender``), kept with the report in the same write."""
    cfg = cfg or load_config()
    selection = selection or Selection()
    names = analyzers.parse_only(",".join(only) if isinstance(only, list) else only)
    if not Path(db).exists():
        raise WarehouseError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    # writable: analyzers keep their derived tables in the warehouse
    # no matplotlib (the ``charts`` extra): nothing drawn, the report says so in one line
    charts = charts and draw_kit.available()
    with open_warehouse(db) as wh, drawn.Painter(wh.con) if charts else nullcontext() as painter:
        # what the report reads, as the key of the report kept whole (``report.cache``)
        want = cache.key(
            wh.con,
            {
                "warehouse": str(db),
                "config": [str(cfg.path) if cfg.path else None, cfg.values],
                "selection": selection.describe(),
                "label": selection.label,
                "analyzers": names,
                "recommend": recommend is not None,
                "persist": persist_findings,
                "charts": charts,
            },
            [labels, questions],
        )
        again = _cached(wh.con, want, wh.cache_key, persist_findings)
        if again is not None:
            return again
        # DuckDB would otherwise keep up to 80 % of RAM as cache across the analyzers; beyond this it spills
        set_memory_limit(wh.con, REPORT_MEMORY_MB)
        ctx = Context.open(wh.con, cfg, selection, labels, questions)
        report = analyze(ctx, names, {"warehouse": str(db), "labels": labels, "questions": questions}, painter)
        with step("evidence", "the messages the shown findings cite"):
            report.evidence = evidence.fetch(wh.con, cited(report))
        if recommend:
            started = _clock()
            advice = recommend(wh.con, cfg, names, questions)
            progress.info("%-14s %7.1f s %7.1f CPU s  what to change (the tuners)", "recommend", *_lapsed(started))
            digests.recommend(report.digest, advice, cfg, names, str(db), questions)
            selection.materialize(wh.con)  # the tuners looked at every conversation
        else:
            report.digest.skipped = "not computed for a comparison; run `forensics tune`"
        if persist_findings:
            with step("persist", "the findings kept for `forensics serve`"):
                persist.write(wh.con, report)
        if painter:
            started = _clock()
            report.drawn = painter.finish()
            progress.info(
                "%-14s %7.1f s %7.1f CPU s  the charts' last drawings waited for", "charts", *_lapsed(started)
            )
        if pages:
            with step("pages", "report.md and report.html rendered (`render.prerender`)"):
                pages(report)
        with step("kept_whole", "the report kept in the warehouse (`report.cache`)"):
            _keep(wh.con, want, report)
        closing = _clock()
    if progress.isEnabledFor(logging.DEBUG):
        progress.debug("%-14s %7.1f s %7.1f CPU s  the warehouse closed (its checkpoint)", "closed", *_lapsed(closing))
    return report


# the classes a kept report is built from (``report.cache``): nothing else is read back
CACHED_CLASSES = (
    Report,
    Section,
    Table,
    Chart,
    Finding,
    Label,
    evidence.Message,
    evidence.Call,
    digests.Digest,
    digests.Change,
    digests.Norm,
    digests.Ranked,
    digests.Worst,
    digests.KindShare,
)


def _cached(con: duckdb.DuckDBPyConnection, want: str, live: str | None, persist_findings: bool) -> Report | None:
    """The last report, read back whole when nothing it read changed since (its key is ``want`` and it was live
    when the warehouse was opened); None otherwise. Its run is logged again, with this time."""
    found = cache.load(con, want, live)
    if found is None:
        return None
    started = time.perf_counter()
    body, pages = found
    try:
        report: Report = cache.decode(body, CACHED_CLASSES)
    except cache.NotCacheable:
        return None
    first = report.meta.get("generated_at")
    if not isinstance(first, str) or not _STAMPED.fullmatch(first):  # it goes to the terminal and every page
        return None
    report.meta["generated_at"] = _now()
    report.meta["kept_from"] = first
    report.cache_key, report.pages = want, pages
    if persist_findings:
        persist.log_run(con, report)
    cache.revive(con, want)  # its body and pages are as stored
    progress.info(
        "%-14s %7.1f s  nothing it reads changed since the report of %s: kept whole",
        "report",
        time.perf_counter() - started,
        first,
    )
    return report


def _keep(con: duckdb.DuckDBPyConnection, want: str, report: Report) -> None:
    """Keep ``report`` whole under ``want``, after every derived table it wrote, with the pages rendered of it so far
    (``Report.pages``); a report holding a value the encoding cannot give back exactly is not kept (the table is
    cleared: the next report recomputes)."""
    try:
        body: bytes | None = cache.encode(replace(report, cache_key="", pages={}), CACHED_CLASSES)
    except cache.NotCacheable as e:
        progress.debug("report not kept whole: %s", e)
        body = None
    cache.store(con, want, body, report.pages if body is not None else None)
    report.cache_key = want if body is not None else ""


def cache_pages(db: str | os.PathLike[str], report: Report) -> None:
    """Add the files ``render.write`` made of ``report`` to the report kept whole, so that the next report of the
    same inputs writes them without rendering again; nothing when another writer opened the warehouse since."""
    if report.cache_key and report.pages:
        with open_warehouse(db) as wh:
            cache.store_pages(wh.con, report.cache_key, wh.cache_key, report.pages)


_STAMPED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")  # what ``_now`` writes


def _clock() -> tuple[float, float]:
    """Now, as wall seconds and the CPU seconds of the report's processes (``kernel.cputime``; 0 when no one reads
    the progress lines): a step's CPU is its share on a machine others load, where wall time is not."""
    return time.perf_counter(), cputime.tree_seconds() if progress.isEnabledFor(logging.INFO) else 0.0


def _lapsed(since: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU seconds from ``since`` (``_clock``) to now."""
    now = _clock()
    return now[0] - since[0], now[1] - since[1]


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


K = TypeVar("K")  # a key of ``Known``: a run, a turn, a kind at a turn


class Read(Generic[K]):
    """Keys of one kind that ``done`` has read in a report (``seen``), and of them those that hold (``holds``)."""

    def __init__(self) -> None:
        self.seen: set[K] = set()
        self.holds: set[K] = set()

    def new(self, keys: list[K]) -> list[K]:
        """Of ``keys``, those not read yet."""
        return [k for k in keys if k not in self.seen]

    def add(self, keys: list[K], holding: Collection[K]) -> None:
        """``keys`` read: those in ``holding`` hold."""
        self.seen.update(keys)
        self.holds.update(k for k in keys if k in holding)


@dataclass
class Known:
    """What ``done`` read in one report, each key read once (the outcome analyzer's ranking, then the digest): the runs
    that ended with their work handed over (``handed_over``: conversation ids), the turns that wait on a process the
    run started (``waiting``: (conversation id, the finding's first position)), and the measurements of breadth whose
    turn's request asked for it (``asked``: (conversation id, position, kind))."""

    handed_over: Read[str] = field(default_factory=Read)
    waiting: Read[tuple[str, int]] = field(default_factory=Read)
    asked: Read[tuple[str, int, str]] = field(default_factory=Read)


def _given(
    ctx: Context,
    a: Analyzer,
    sections: list[Section],
    runs: Runs | None = None,
    known: Known | None = None,
) -> Context:
    """``ctx`` with the report's inputs the analyzer ``a`` declares (``Analyzer.inputs``): the sections before it, the
    worst-conversation ranking (the outcome analyzer holds both against outcomes); ``known`` as in ``done``."""
    if not a.inputs:
        return ctx
    return replace(
        ctx,
        sections=list(sections) if "sections" in a.inputs else [],
        ranking=(lambda secs, n: digests.scores(secs, n, done(ctx.con, secs, runs, known, ctx.cfg)))
        if "ranking" in a.inputs
        else None,
    )


def done(
    con: duckdb.DuckDBPyConnection,
    sections: list[Section],
    runs: Runs | None = None,
    known: Known | None = None,
    cfg: Config | None = None,
) -> set[digests.Key]:
    """What *Worst conversations* does not rank on a measurement finding (``Analyzer.measures``, ``digest.weighed``):
    the conversations whose run ended with its work handed over (``signature.done``), and the measurements whose turn
    waits on a process the run started, a sub-agent or a worker it polls (``signature.waiting``: (conversation id,
    the finding's first position)), and the measurements of breadth (``Analyzer.wide``) whose turn's request asked for
    it (``signature.asked``: (conversation id, position, kind)). There the measurement says nothing went wrong. On a
    warehouse, given the report's ``cfg``, how runs ended is read from the runs' kept readings
    (``failures.handed_over``): an unchanged run is not read again; on Spark (``runs``), or with no ``cfg``, from
    their messages (``signature.done``). ``known``: what an earlier call of the same report read (``Known``): each
    key is read once, and the ones read here are added to it."""
    from forensics.analyzers import failures, signature  # here: a report read back whole imports neither

    kinds = analyzers.measure_kinds()
    measured = [f for s in sections for f in s.findings if f.kind in kinds and f.conversation_id]
    cids = sorted({f.conversation_id for f in measured})
    turns = sorted({(f.conversation_id, min(f.positions)) for f in measured if f.positions})
    wide = analyzers.wide_kinds()
    asks = sorted({(f.conversation_id, min(f.positions), f.kind) for f in measured if f.positions and f.kind in wide})
    known = Known() if known is None else known
    new, new_turns, new_asks = known.handed_over.new(cids), known.waiting.new(turns), known.asked.new(asks)
    if runs is not None and (new or new_turns or new_asks):
        # a report on Spark: these runs' rows, from the lake
        runs(sorted(set(new) | {cid for cid, _ in new_turns} | {t[0] for t in new_asks}))
    if new:
        if runs is None and cfg is not None:
            known.handed_over.add(new, failures.handed_over(con, cfg, new))
        else:
            known.handed_over.add(new, signature.done(con, new, signature.GRADE_REVEALING))
    if new_turns:
        known.waiting.add(new_turns, signature.waiting(con, new_turns))
    if new_asks:
        wanted = signature.asked(con, sorted({(cid, pos) for cid, pos, _ in new_asks}))
        known.asked.add(new_asks, {t for t in new_asks if (t[0], t[1]) in wanted})
    return {
        *(c for c in cids if c in known.handed_over.holds),
        *(t for t in turns if t in known.waiting.holds),
        *(t for t in asks if t in known.asked.holds),
    }


def analyze(
    ctx: Context,
    names: list[str],
    source: dict[str, Any],
    painter: drawn.Painter | None = None,
    runs: Runs | None = None,
) -> Report:
    """Run the analyzers ``names`` on ``ctx`` and rank their findings; ``source`` says what was read (a warehouse,
    or a lake and its engine) in the report's meta. ``painter`` gets each section as it is done, and is started
    after the last analyzer that runs pools or holds the most memory (``Analyzer.workers``, ``heavy``): its process
    (matplotlib, 90 MB with its fork server) is not added to their peak, and a first report (more computed than
    reused) starts none: it draws at its end. ``runs``: where ``ctx.con`` holds no
    warehouse (a report on Spark), what copies the named runs' messages, calls and events into it, for the worst list's
    reading of how runs ended."""
    cfg, selection = ctx.cfg, ctx.selection
    tally = reuse.TALLY  # per kept result, conversations reused and computed (``analyzers.reuse``)
    reuse.clear_tally()
    counted = None
    if "warehouse" in source:  # data quality is counted over the warehouse's messages; a lake read on Spark has none
        with step("data_quality", "the sources' text redacted, empty or cut (`analyzers.quality`)"):
            counted = quality.summarize(ctx)
    meta = {
        "schema_version": METRICS_SCHEMA_VERSION,
        "toolkit_version": toolkit_version(),
        "generated_at": _now(),
        **{k: v for k, v in source.items() if k not in TRAILING},
        "config": str(cfg.path) if cfg.path else None,
        "selection": selection.describe(),
        "label": selection.label,
        "conversations": ctx.selected,
        "analyzers": names,
        **({"data_quality": counted} if counted is not None else {}),
        **{k: source.get(k) for k in TRAILING},
    }
    report = Report(meta, labels=ctx.conversation_labels)
    known = Known()  # what ``done`` read, read once
    # the analyzers running worker pools share one fork server, stopped after the last of them (not held idle)
    last_pooled = max((i for i, name in enumerate(names, 1) if analyzers.load(name).workers), default=0)
    paint_after = max((i for i, name in enumerate(names, 1) if analyzers.load(name).heavy), default=0)
    paint_after = max(paint_after, last_pooled)
    with ExitStack() as held:
        held.enter_context(workers.fork_server_held())
        for i, name in enumerate(names, 1):
            if painter and i == paint_after + 1:
                # beside the later analyzers when this report mostly reused kept results (its peak is a fraction
                # of a first report's); a first report draws at its end in this process (``drawn.Painter``)
                painter.start(beside=sum(t.reused for t in tally.values()) > sum(t.computed for t in tally.values()))
            started, before = _clock(), {k: (t.reused, t.computed) for k, t in tally.items()}
            a = analyzers.load(name)
            report.sections.append(_masked(a.run(_given(ctx, a, report.sections, runs, known))))
            if painter:
                painter.add(report.sections[-1])
            if i == last_pooled:
                held.close()
            # its kept result with the most conversations computed (drift's lags after a topic refit, say)
            kept = max(
                (
                    (t.reused - before.get(k, (0, 0))[0], t.computed - before.get(k, (0, 0))[1])
                    for k, t in tally.items()
                    if "." not in k
                ),
                key=lambda rc: (rc[1], sum(rc)),
                default=(0, 0),
            )
            progress.info(
                "%-14s %7.1f s %7.1f CPU s  (%d/%d)%s",
                name,
                *_lapsed(started),
                i,
                len(names),
                f"  reused {kept[0]} of {sum(kept)} conversations" if sum(kept) else "",
            )
    report.meta["reused"] = {k: {"reused": t.reused, "computed": t.computed} for k, t in sorted(tally.items())}
    with step("digest", "the worst conversations and the strongest findings"):
        report.digest = digests.build(
            report.sections, ctx.selected, done(ctx.con, report.sections, runs, known, ctx.cfg)
        )
    return report


def cited(report: Report) -> dict[str, set[int]]:
    """conversation_id -> the positions the report's shown findings cite (its evidence to embed)."""
    out: dict[str, set[int]] = {}
    for f in [r.finding for r in report.digest.strongest] + [f for s in report.sections for f in report.shown(s)]:
        out.setdefault(f.conversation_id, set()).update(f.positions)
    return out


def _masked(sec: Section) -> Section:
    """Mask secrets in every string a section carries (tables, findings, grids, metrics, norms)."""
    sec.summary = redact(sec.summary)
    sec.grid = [[redact(c) for c in row] for row in sec.grid]
    sec.tables = [replace(t, df=mask_frame(t.df)) for t in sec.tables]
    sec.findings = [
        replace(f, summary=redact(f.summary), rule=redact(f.rule), said=redact(f.said)) for f in sec.findings
    ]
    sec.metrics = redact_value(sec.metrics)
    sec.norms = {k: redact(v) for k, v in sec.norms.items()}
    sec.not_in_use = {k: redact(v) for k, v in sec.not_in_use.items()}
    return sec
