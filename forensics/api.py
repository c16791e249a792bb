"""The supported Python API: the library twin of every `forensics` command, for notebooks and scripts; the CLI
calls nothing else.

Every function opens the warehouse for the duration of the call, so notebooks can interleave them with
`forensics` commands. DataFrames are polars (``.to_pandas()``/``.to_arrow()`` need pandas and pyarrow, which forensics
does not install: the `spark` extra brings both).
Importing this module loads nothing heavy (no DuckDB, polars or analysis): each name is loaded on first use,
so `forensics --help` stays instant.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forensics.ingestion.catalog import FORMATS as INGEST_FORMATS
from forensics.ingestion.locations import AGENTS
from forensics.kernel.errors import ForensicsError
from forensics.warehouse import DEFAULT_DB

if TYPE_CHECKING:  # the names of _LAZY, typed
    from collections.abc import Callable

    import polars as pl

    from forensics.analyzers import named_queries as list_queries
    from forensics.analyzers.diff import Run, RunDiff
    from forensics.analyzers.schema import default_toml, defaults, keys, load_config
    from forensics.analyzers.skills import with_triggers
    from forensics.analyzers.skills.holdout import holdout as triggers_holdout
    from forensics.analyzers.skills.holdout import render as render_holdout
    from forensics.analyzers.skills.triggers import render as render_triggers
    from forensics.analyzers.skills.triggers import tune_triggers, write_triggers
    from forensics.commands.check import Verdict
    from forensics.commands.check import junit as check_junit
    from forensics.commands.check import table as check_table
    from forensics.commands.export import export
    from forensics.commands.output import emit as emit_rows
    from forensics.commands.summary import format_ingest
    from forensics.config import Config
    from forensics.ingestion.locations import locate
    from forensics.ingestion.outcome_labels import LabelImport
    from forensics.ingestion.registry import listing as format_listing
    from forensics.ingestion.run import ingest
    from forensics.kernel.selection import Selection
    from forensics.report.build import Report
    from forensics.report.compare import Comparison
    from forensics.report.render import parse_formats
    from forensics.report.rundiff import render as render_run_diff
    from forensics.report.rundiff import render_runs
    from forensics.tuning import tune
    from forensics.tuning.emit import emit as emit_values
    from forensics.tuning.write import write_config

__all__ = [
    "baseline",
    "check",
    "Config",
    "conversations",
    "export",
    "findings",
    "formats",
    "import_labeled",
    "hook_run",
    "hooks_install",
    "hooks_status",
    "hooks_uninstall",
    "import_outcomes",
    "ingest",
    "load_config",
    "mcp",
    "messages",
    "outcomes",
    "PathLike",
    "query",
    "report",
    "run_diff",
    "secrets",
    "export_redacted",
    "Selection",
    "serve",
    "show",
    "task_diff",
    "tool_calls",
    "tune",
    "usage",
    "watch",
    "write_metrics_baseline",
]
# what the CLI reads, prints and writes with beside the twins above: --format's and --from's choices, the text
# renderings, the file writers
__all__ += [
    "AGENTS",
    "HOOK_AGENTS",
    "check_junit",
    "check_table",
    "DEFAULT_DB",
    "default_toml",
    "defaults",
    "emit_rows",
    "emit_values",
    "format_ingest",
    "format_listing",
    "INGEST_FORMATS",
    "keys",
    "list_queries",
    "locate",
    "parse_formats",
    "render_holdout",
    "render_run_diff",
    "render_runs",
    "render_triggers",
    "Report",
    "secrets_text",
    "triggers_holdout",
    "tune_triggers",
    "usage_text",
    "with_triggers",
    "write_config",
    "write_triggers",
]

# name -> "module:attribute", imported on first use (PEP 562)
_LAZY = {
    "Config": "forensics.config:Config",
    "Selection": "forensics.kernel.selection:Selection",
    "load_config": "forensics.analyzers.schema:load_config",
    "ingest": "forensics.ingestion.run:ingest",
    "export": "forensics.commands.export:export",
    "tune": "forensics.tuning:tune",
    "advise": "forensics.tuning:advise",  # the report's Recommender (build_report(recommend=...))
    # for the CLI
    "locate": "forensics.ingestion.locations:locate",
    "format_ingest": "forensics.commands.summary:format_ingest",
    "format_listing": "forensics.ingestion.registry:listing",
    "render_run_diff": "forensics.report.rundiff:render",
    "render_runs": "forensics.report.rundiff:render_runs",
    "with_triggers": "forensics.analyzers.skills:with_triggers",
    "parse_formats": "forensics.report.render:parse_formats",
    "Report": "forensics.report.build:Report",
    "list_queries": "forensics.analyzers:named_queries",
    "emit_rows": "forensics.commands.output:emit",
    "check_table": "forensics.commands.check:table",
    "check_junit": "forensics.commands.check:junit",
    "defaults": "forensics.analyzers.schema:defaults",
    "default_toml": "forensics.analyzers.schema:default_toml",
    "keys": "forensics.analyzers.schema:keys",
    "emit_values": "forensics.tuning.emit:emit",
    "write_config": "forensics.tuning.write:write_config",
    "tune_triggers": "forensics.analyzers.skills.triggers:tune_triggers",
    "write_triggers": "forensics.analyzers.skills.triggers:write_triggers",
    "render_triggers": "forensics.analyzers.skills.triggers:render",
    "triggers_holdout": "forensics.analyzers.skills.holdout:holdout",
    "render_holdout": "forensics.analyzers.skills.holdout:render",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name].split(":")
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'forensics.api' has no attribute {name!r}")


PathLike = str | os.PathLike[str]
HOOK_AGENTS = ("claude-code", "codex", "gemini")  # `forensics hooks install`'s choices (forensics.commands.hooks)


def usage_text(df: pl.DataFrame) -> str:
    """`forensics usage` in the terminal: the usage analyzer's display of ``df`` (``usage()``) as aligned columns."""
    from forensics.analyzers.usage import display
    from forensics.report.text import usage_text as aligned

    return aligned(display(df))


def query(
    sql_or_name: str,
    db: PathLike = DEFAULT_DB,
    redact: bool = True,
    *,
    engine: str = "duckdb",
    lake: PathLike | None = None,
    spark_master: str | None = None,
    personal: bool | None = None,
) -> pl.DataFrame:
    """A named query (``forensics query --list``: ``queries/NAME.sql`` or an analyzer's own) or read-only SQL; text
    columns have secrets masked, and personal data when ``personal`` (default: when ./harness.toml says ``[redact] personal = "all"``). ``engine="spark"``
    runs it on Spark over the Parquet ``lake`` (DuckDB's dialect translated: ``forensics.spark.sql``)."""
    from forensics.analyzers.schema import load_config
    from forensics.commands.reads import read_only_sql
    from forensics.kernel.redact import mask_frame
    from forensics.text.personal import applies
    from forensics.text.personal import mask_frame as mask_personal

    if personal is None:
        personal = applies(load_config()["redact.personal"], page=False)
    if personal:
        return mask_personal(
            query(sql_or_name, db, redact, engine=engine, lake=lake, spark_master=spark_master, personal=False)
        )
    from forensics import analyzers

    sql = analyzers.named_query(sql_or_name).sql if sql_or_name.isidentifier() else sql_or_name
    if _spark(engine, lake):
        from forensics.spark import sql as spark_sql
        from forensics.spark.lake import Lake
        from forensics.spark.session import session

        df = spark_sql.run(
            Lake.open(session(spark_master), str(lake)), sql, sql_or_name if sql_or_name.isidentifier() else None
        )
        return mask_frame(df) if redact else df
    df = read_only_sql(db, sql)
    return mask_frame(df) if redact else df


def _spark(engine: str, lake: PathLike | None) -> bool:
    """Whether to run on Spark; the engine and ``lake`` go together."""
    if engine not in ("duckdb", "spark"):
        raise ForensicsError(f"unknown engine {engine!r}; choose duckdb or spark")
    if (engine == "spark") != (lake is not None):
        raise ForensicsError(
            "--engine spark reads a Parquet lake: pass --lake DIR (and --lake only with --engine spark)"
        )
    return engine == "spark"


def conversations(db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Every conversation with its source, model, title and times (raw text: this is your own data)."""
    return query("SELECT * FROM conversations ORDER BY created_at, native_id", db, redact=False, personal=False)


def messages(conversation: str | None = None, db: PathLike = DEFAULT_DB, main_path: bool = True) -> pl.DataFrame:
    """Messages (raw text: this is your own data), optionally of one conversation (id or native id)."""
    from forensics.warehouse import frame, open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        return frame(
            wh.con,
            "SELECT c.native_id AS conversation, m.* FROM messages m JOIN conversations c USING (conversation_id) "
            "WHERE (? IS NULL OR m.conversation_id = ? OR c.native_id = ?) AND (m.on_main_path OR NOT ?) "
            "ORDER BY c.native_id, m.seq",
            [conversation] * 3 + [main_path],
        )


def tool_calls(conversation: str | None = None, db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Tool calls with their arguments, result sizes and error flags, optionally of one conversation (raw text)."""
    from forensics.warehouse import frame, open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        return frame(
            wh.con,
            "SELECT c.native_id AS conversation, t.* FROM tool_calls t JOIN conversations c USING (conversation_id) "
            "WHERE (? IS NULL OR t.conversation_id = ? OR c.native_id = ?) ORDER BY c.native_id, t.seq, t.call_index",
            [conversation] * 3,
        )


def baseline(db: PathLike = DEFAULT_DB, selection: Selection | None = None, cfg: Config | None = None) -> pl.DataFrame:
    """The baseline metrics (docs/definitions.md), one row per selected conversation."""
    import polars as pl

    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection
    from forensics.report.build import build_report

    rep = build_report(db, cfg or load_config(), selection or Selection(), only="baseline")
    per = rep.sections[0].metrics["conversations"]
    return pl.DataFrame([{"conversation_id": k, **v} for k, v in per.items()])


def report(
    db: PathLike = DEFAULT_DB,
    out: PathLike = "reports",
    formats: list[str] | None = None,
    only: str | None = None,
    selection: Selection | None = None,
    cfg: Config | None = None,
    *,
    compare_db: str | None = None,
    split_at: str | None = None,
    before: str | None = None,
    after: str | None = None,
    labels: str | None = None,
    questions: str | None = None,
    engine: str = "duckdb",
    lake: PathLike | None = None,
    spark_master: str | None = None,
) -> tuple[Report | Comparison, list[Path]]:
    """Build the report (or a before/after comparison) and write it; returns it and the files written.

    ``labels``: a labels file; labeled dialogues it carries are imported first when missing (docs/topics-evaluation.md).
    ``questions``: a decision-memory question file (JSONL) whose retrieval the memory section replays (docs/memory.md#retrieval-replay---questions-file).
    ``engine="spark"``: the per-conversation analyzers on Spark over the Parquet ``lake`` (``forensics.spark``).
    """
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection
    from forensics.report.build import Report, build_report, cache_pages, step
    from forensics.report.compare import build_comparison
    from forensics.report.render import FORMATS, prerender, write
    from forensics.tuning import advise

    cfg = cfg or load_config()
    if _spark(engine, lake):
        if compare_db or split_at or before or after or labels or questions:
            raise ForensicsError(
                "--engine spark writes a single report: no --compare, --split-at, --before/--after, "
                "--labels or --questions (run those on a warehouse)"
            )
        from forensics.spark.report import build_spark_report

        spark_report = build_spark_report(str(lake), cfg, selection, only, spark_master)
        return spark_report, write(spark_report, out, formats or list(FORMATS), cfg["redact.personal"])
    if labels:
        import_labeled(db, labels)
    selection = selection or Selection()
    if compare_db or split_at or before or after:
        result: Report | Comparison = build_comparison(
            db,
            cfg,
            selection,
            only,
            other_db=compare_db,
            split_at=split_at,
            before=before,
            after=after,
            questions=questions,
        )
    else:
        result = build_report(
            db,
            cfg,
            selection,
            only,
            labels=labels,
            questions=questions,
            recommend=advise,
            persist_findings=True,
            charts=bool({"md", "html"} & set(formats or FORMATS)),
            # rendered before the report is kept whole, and kept with it (one write to the warehouse)
            pages=lambda r: prerender(r, formats or list(FORMATS), cfg["redact.personal"]),
        )
    had = set(result.pages) if isinstance(result, Report) else set()
    with step("written", "report.md, report.html, metrics.json and charts/ written"):
        written = write(result, out, formats or list(FORMATS), cfg["redact.personal"])
    if isinstance(result, Report) and set(result.pages) - had:
        with step("pages_kept", "the pages added to the report kept whole"):
            cache_pages(db, result)  # the next report of the same inputs writes these pages without rendering them
    return result, written


def import_labeled(db: PathLike, labels: PathLike) -> int:
    """Import the labeled dialogues a labels file carries when some are missing from the warehouse (the uniform
    dialogue JSONL holds the turns themselves); returns how many conversations were added (0 when all were
    there or the file has none)."""
    from forensics.analyzers.topics.labels import read_labels
    from forensics.ingestion.run import ingest
    from forensics.warehouse import open_warehouse

    parsed = read_labels(labels)
    if not parsed.has_turns:
        return 0
    if Path(db).exists():
        with open_warehouse(db, read_only=True) as wh:
            have = {r[0] for r in wh.con.execute("SELECT native_id FROM conversations").fetchall()}
        if all(k in have for k in parsed.shifts):
            return 0
    result = ingest([parsed.path], db=db, fmt="dialogues")
    failed = [s.error for s in result.sources if s.error]
    if failed:
        raise ForensicsError(failed[0])
    return result.totals()["conversations_new"]


def check(
    db: PathLike = DEFAULT_DB,
    baseline_path: PathLike = "metrics-baseline.json",
    cfg: Config | None = None,
    selection: Selection | None = None,
    update: bool = False,
    questions: str | None = None,
) -> list[Verdict]:
    """Compare current metrics with the baseline file (or rewrite its values with ``update``; a missing file is
    then written from every analyzer's figures with the default directions and tolerances); ``questions``
    replays decision-memory retrieval, so recall@k and MRR are gated too."""
    from forensics.analyzers.schema import load_config
    from forensics.commands.check import baseline_document, idle, load_baseline, write_baseline
    from forensics.commands.check import compare as compare_baseline
    from forensics.kernel.selection import Selection
    from forensics.report.build import build_report
    from forensics.report.compare import report_figures

    cfg = cfg or load_config()
    if update and not Path(baseline_path).exists():
        rep = build_report(db, cfg, selection or Selection(), questions=questions)
        write_metrics_baseline(rep, baseline_path)
        return compare_baseline(load_baseline(baseline_path), report_figures(rep), rep.not_in_use)
    rules = load_baseline(baseline_path)
    sections = sorted({k.split(".", 1)[0] for k in rules})
    rep = build_report(db, cfg, selection or Selection(), only=sections, questions=questions)
    figures = report_figures(rep)
    if update:  # the rules of an analyzer not in use today keep their values: nothing measured them
        kept = {
            k: r.value
            for k, r in rules.items()
            if k not in figures and r.value is not None and idle(k, rep.not_in_use) is not None
        }
        write_baseline(
            baseline_path, baseline_document({**{k: v for k, v in figures.items() if k in rules}, **kept}, rules)
        )
        rules = load_baseline(baseline_path)
    return compare_baseline(rules, figures, rep.not_in_use)


def write_metrics_baseline(result: Report, path: PathLike) -> None:
    """The baseline `forensics check` compares against, from a report's summary figures."""
    from forensics.commands.check import baseline_document, write_baseline
    from forensics.report.compare import report_figures

    write_baseline(path, baseline_document(report_figures(result)))


def formats() -> pl.DataFrame:
    """Every format `forensics ingest` reads, in detection order: name, what it is, and where it comes from
    (``built-in``, or the package whose ``forensics.formats`` entry point added it)."""
    import polars as pl

    from forensics.ingestion.registry import listing

    return pl.DataFrame(listing(), schema={"format": pl.String, "origin": pl.String, "reads": pl.String}, orient="row")


def import_outcomes(path: PathLike, db: PathLike = DEFAULT_DB) -> LabelImport:
    """Import run outcomes kept outside the logs (CSV with a header or JSONL: id, success, optional score) into
    ``conversation_outcomes`` (docs/outcomes.md); idempotent. A bad file raises ForensicsError and changes nothing."""
    from forensics.ingestion.outcome_labels import read_labels as read_outcomes
    from forensics.ingestion.outcome_labels import store
    from forensics.warehouse import open_warehouse

    labels = read_outcomes(path)
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db) as wh:
        return store(wh.con, labels, str(Path(path).resolve()))


def secrets(db: PathLike = DEFAULT_DB) -> dict[str, Any]:
    """What ingest masked (``secrets_found``): totals, and finds by kind, field, agent and source, and the ledger
    (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom): ``secrets``, one row per distinct secret with its copies, their arrival, the models it was sent
    to, first and last seen, and ``rotation``, the checklist by provider; never a value. Empty when the warehouse
    predates masking at ingest."""
    from forensics.analyzers.exposure import ledger
    from forensics.analyzers.secrets import scan
    from forensics.kernel.redact import redact_value
    from forensics.warehouse import open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        found = scan(wh.con)
        if found:
            found.update(ledger(wh.con))
    return {k: redact_value(v) for k, v in found.items()}  # the second line, as every output


def export_redacted(out: PathLike, db: PathLike = DEFAULT_DB) -> Any:
    """A copy of the warehouse's sources under ``out`` with every secret masked, each file still valid in its
    format (``forensics.commands.redacted``); the sources are only read. Returns what was written."""
    from forensics.commands.redacted import export_redacted as write
    from forensics.warehouse import open_warehouse

    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db, read_only=True) as wh:
        return write(wh.con, out)


def secrets_text(found: dict[str, Any]) -> str:
    """The ledger part of ``secrets(db)`` as `forensics secrets` prints it, masked again."""
    from forensics.analyzers.exposure import render
    from forensics.kernel.redact import redact

    return redact(render(found)) if found.get("secrets") else ""


def run_diff(a: str, b: str, db: PathLike = DEFAULT_DB) -> RunDiff:
    """Two runs aligned step by step with their first divergence (docs/outcomes.md); ids are conversation or native ids."""
    from forensics.analyzers.diff import diff
    from forensics.warehouse import open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        return diff(wh.con, a, b)


def task_diff(key: str, db: PathLike = DEFAULT_DB) -> tuple[list[Run], RunDiff | None]:
    """The runs of one task with their outcomes, and a passed run diffed against a failed one (None when the
    task has no runs of both outcomes)."""
    from forensics.analyzers.diff import for_task
    from forensics.warehouse import open_warehouse

    with open_warehouse(db, read_only=True) as wh:
        return for_task(wh.con, key)


def usage(
    db: PathLike = DEFAULT_DB,
    by: str | list[str] = "agent,model",
    cfg: Config | None = None,
    selection: Selection | None = None,
) -> pl.DataFrame:
    """Runs, tokens, cost, tool errors, compactions and success rate (docs/usage.md), grouped ``by``
    agent, model and/or day (``"agent,model"``, ``["day"]``), or one row per run with ``by="conversation"``.
    Prices: the shipped dated table under the config's ``[prices]``; a model without a price has no cost."""
    from forensics.analyzers import usage as usage_analyzer
    from forensics.analyzers.prices import table
    from forensics.analyzers.schema import load_config
    from forensics.warehouse import open_warehouse

    keys = [k.strip() for k in (by.split(",") if isinstance(by, str) else by) if k.strip()]
    if keys != ["conversation"] and not set(keys) <= set(usage_analyzer.GROUPS) or not keys:
        raise ForensicsError(
            f"cannot group usage by {','.join(keys) or 'nothing'!r}: choose among "
            f"{', '.join(usage_analyzer.GROUPS)} (comma-separated), or conversation"
        )
    cfg = cfg or load_config()
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db, read_only=True) as wh:
        if selection is not None:
            selection.materialize(wh.con)
        rows = usage_analyzer.runs(wh.con, table(cfg.prices), selected=selection is not None)
    return rows if keys == ["conversation"] else usage_analyzer.summarize(rows, keys)


def findings(db: PathLike = DEFAULT_DB, kind: str | None = None) -> pl.DataFrame:
    """Every finding of the last ``forensics report`` on this warehouse, one row each: section, kind, severity,
    the conversation (id, native id), the positions that prove it, summary, rule and the norm it was held against
    (``among``); ``kind`` keeps one kind. Text is masked. Empty, with the columns, before any report."""
    import polars as pl

    from forensics.kernel.redact import mask_frame
    from forensics.warehouse import frame, open_warehouse

    where = "WHERE kind = ?" if kind else ""
    with open_warehouse(_existing(db), read_only=True) as wh:
        if not wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'report_findings'").fetchall()[
            0
        ][0]:
            from forensics.report.persist import FINDINGS

            return pl.DataFrame(schema=FINDINGS)
        df = frame(
            wh.con,
            f"SELECT * FROM report_findings {where} ORDER BY section, kind, severity, native_id, positions",
            [kind] if kind else None,
        )
    return mask_frame(df)


def outcomes(db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Every run whose outcome is known (from the log itself or a labels file, docs/outcomes.md): conversation id,
    native id, format, model, success, score, source and detail."""
    from forensics.warehouse import frame, open_warehouse

    with open_warehouse(_existing(db), read_only=True) as wh:
        return frame(
            wh.con,
            """
            SELECT o.conversation_id, c.native_id, s.format, c.model, o.success, o.score, o.source, o.detail
            FROM conversation_outcomes o JOIN conversations c USING (conversation_id)
            LEFT JOIN sources s ON s.source_id = c.source_id ORDER BY c.native_id, o.conversation_id""",
        )


def _existing(db: PathLike) -> PathLike:
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    return db


def show(
    conversation: str, db: PathLike = DEFAULT_DB, positions: str | None = None, width: int = 300, decisive: bool = False
) -> str:
    """The messages of one conversation (id or native id) at ``positions`` (``"8,58"``, ``"141-152"``; default all),
    ``width`` characters of each, as `forensics show` prints them: secrets masked, and personal data when
    ./harness.toml says ``[redact] personal = "all"``. A failed run the last report signed (``run_failures``)
    opens at its decisive step when no positions are given, after one line naming the step, its agent and the
    rule that chose it; ``decisive``: ask for that step, a ``ForensicsError`` when the run has none."""
    from forensics.commands.show import show_messages

    return show_messages(db, conversation, positions, width, decisive)


def hooks_install(
    agent: str, db: PathLike = DEFAULT_DB, settings: PathLike | None = None, project: PathLike | None = None
) -> str:
    """`forensics hooks install AGENT`: the agent's own hook (Claude Code and Gemini CLI ``SessionEnd``, Codex
    ``notify``) in its settings file, so each finished session is ingested into ``db`` in the background
    (docs/hooks.md); the file's other content and comments kept. Returns the line the CLI prints."""
    from forensics.commands.hooks import install

    return install(agent, db, settings, project)


def hooks_uninstall(agent: str, settings: PathLike | None = None, project: PathLike | None = None) -> str:
    """`forensics hooks uninstall AGENT`: the hook taken out; the settings file restored byte for byte when nothing
    else changed it since install."""
    from forensics.commands.hooks import uninstall

    return uninstall(agent, settings, project)


def hooks_status() -> str:
    """`forensics hooks status`: each agent's settings file, whether the hook is in it, the log's last lines."""
    from forensics.commands.hooks import status

    return status()


def hook_run(agent: str, db: PathLike, argument: str | None, stdin: Callable[[], str]) -> None:
    """The hook an agent runs when a session ends: a detached ingest of the session's file; never raises."""
    from forensics.commands.hooks import run

    run(agent, db, argument, stdin)


def watch(
    sources: list[str],
    db: PathLike = DEFAULT_DB,
    interval: float = 5.0,
    announce: Callable[[str], None] = print,
    passes: int | None = None,
) -> None:
    """`forensics ingest --watch`: ingest ``sources`` again whenever a file under them changes (polled every
    ``interval`` seconds), for agents without hooks; until interrupted, or ``passes`` polls."""
    from forensics.commands.hooks import watch as poll

    poll(sources, db, interval, announce, passes)


def mcp(db: PathLike = DEFAULT_DB, cfg: Config | None = None) -> None:
    """`forensics mcp`: the warehouse as an MCP server over stdio (read-only tools: search messages, list runs,
    show a run, failure clusters, a run's findings, usage, read-only SQL; docs/mcp.md) until the client closes
    the pipe. Needs the optional extra ``mcp`` (the official MCP SDK)."""
    from forensics.analyzers.schema import load_config
    from forensics.analyzers.usage import display
    from forensics.commands.mcp_server import serve as serve_mcp

    cfg = cfg or load_config()
    serve_mcp(db, cfg, lambda by: display(usage(db, by, cfg)))


def serve(
    db: PathLike = DEFAULT_DB,
    port: int = 8765,
    open_browser: bool = False,
    cfg: Config | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """The read-only explorer (`forensics serve`) on 127.0.0.1:``port`` until interrupted; ``announce`` is told its
    address. Personal data is masked on its pages unless the config says ``[redact] personal = "off"``."""
    from forensics.analyzers.schema import load_config
    from forensics.serve.server import serve as run_serve
    from forensics.text.personal import applies

    personal = applies((cfg or load_config())["redact.personal"], page=True)
    run_serve(str(db), port, open_browser, announce, personal)
