"""The supported Python API beyond ingest: reports, queries and tidy DataFrames of the warehouse.

Every function opens the warehouse for the duration of the call, so notebooks can interleave them with
`forensics` commands. DataFrames are polars (Arrow underneath: ``.to_pandas()``/``.to_arrow()`` work).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from forensics.analyzers.schema import load_config
from forensics.commands.check import Verdict, baseline_document, idle, load_baseline, write_baseline
from forensics.commands.check import compare as compare_baseline
from forensics.config import Config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import mask_frame, redact_value
from forensics.kernel.redact import redact as mask_text
from forensics.kernel.selection import Selection
from forensics.report.build import Report, build_report, keep_pages
from forensics.report.compare import Comparison, build_comparison, report_figures
from forensics.report.render import FORMATS, write
from forensics.text.personal import applies
from forensics.text.personal import mask_frame as mask_personal
from forensics.tuning import advise
from forensics.warehouse import DEFAULT_DB, frame, open_warehouse
from forensics.warehouse.queries import check_read_only, load_query

if TYPE_CHECKING:
    from forensics.analyzers.diff import Run, RunDiff
    from forensics.ingestion.outcome_labels import LabelImport

__all__ = ["baseline", "check", "Config", "conversations", "findings", "formats", "import_labeled", "import_outcomes",
           "load_config", "messages", "outcomes", "PathLike", "query", "report", "run_diff", "Selection", "task_diff",
           "tool_calls", "usage", "write_metrics_baseline"]

PathLike = str | os.PathLike[str]


def query(sql_or_name: str, db: PathLike = DEFAULT_DB, redact: bool = True, *, engine: str = "duckdb",
          lake: PathLike | None = None, spark_master: str | None = None, personal: bool | None = None) -> pl.DataFrame:
    """A named query (``queries/NAME.sql``) or read-only SQL; text columns have secrets masked, and personal data
    when ``personal`` (default: when ./harness.toml says ``[redact] personal = "all"``). ``engine="spark"``
    runs it on Spark over the Parquet ``lake`` (DuckDB's dialect translated: ``forensics.spark.sql``)."""
    if personal is None:
        personal = applies(load_config()["redact.personal"], page=False)
    if personal:
        return mask_personal(query(sql_or_name, db, redact, engine=engine, lake=lake, spark_master=spark_master,
                                   personal=False))
    sql = load_query(sql_or_name).sql if sql_or_name.isidentifier() else sql_or_name
    if _spark(engine, lake):
        from forensics.spark import sql as spark_sql
        from forensics.spark.lake import Lake
        from forensics.spark.session import session

        df = spark_sql.run(Lake.open(session(spark_master), str(lake)), sql,
                           sql_or_name if sql_or_name.isidentifier() else None)
        return mask_frame(df) if redact else df
    with open_warehouse(db, read_only=True, sealed=True) as wh:
        check_read_only(wh.con, sql)
        try:
            df = frame(wh.con, sql)
        except duckdb.CatalogException as e:
            if "Table with name" not in str(e):
                raise ForensicsError(f"query failed: {mask_text(str(e).splitlines()[0])}") from None
            raise ForensicsError(f"{mask_text(str(e).splitlines()[0])}; derived tables (sentinel_*, topic_*, "
                                 "drift_*, ...) appear after `forensics report` has run on this warehouse") from None
        except duckdb.Error as e:  # an error may quote a value: `SELECT content::INTEGER` prints the text
            raise ForensicsError(f"query failed: {mask_text(str(e).splitlines()[0])}") from None
    return mask_frame(df) if redact else df


def _spark(engine: str, lake: PathLike | None) -> bool:
    """Whether to run on Spark; the engine and ``lake`` go together."""
    if engine not in ("duckdb", "spark"):
        raise ForensicsError(f"unknown engine {engine!r}; choose duckdb or spark")
    if (engine == "spark") != (lake is not None):
        raise ForensicsError("--engine spark reads a Parquet lake: pass --lake DIR (and --lake only with "
                             "--engine spark)")
    return engine == "spark"


def conversations(db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Every conversation with its source, model, title and times (raw text: this is your own data)."""
    return query("SELECT * FROM conversations ORDER BY created_at, native_id", db, redact=False, personal=False)


def messages(conversation: str | None = None, db: PathLike = DEFAULT_DB, main_path: bool = True) -> pl.DataFrame:
    """Messages (raw text: this is your own data), optionally of one conversation (id or native id)."""
    with open_warehouse(db, read_only=True) as wh:
        return frame(
            wh.con, "SELECT c.native_id AS conversation, m.* FROM messages m JOIN conversations c USING (conversation_id) "
            "WHERE (? IS NULL OR m.conversation_id = ? OR c.native_id = ?) AND (m.on_main_path OR NOT ?) "
            "ORDER BY c.native_id, m.seq", [conversation] * 3 + [main_path])


def tool_calls(conversation: str | None = None, db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Tool calls with their arguments, result sizes and error flags, optionally of one conversation (raw text)."""
    with open_warehouse(db, read_only=True) as wh:
        return frame(
            wh.con, "SELECT c.native_id AS conversation, t.* FROM tool_calls t JOIN conversations c USING (conversation_id) "
            "WHERE (? IS NULL OR t.conversation_id = ? OR c.native_id = ?) ORDER BY c.native_id, t.seq, t.call_index",
            [conversation] * 3)


def baseline(db: PathLike = DEFAULT_DB, selection: Selection | None = None, cfg: Config | None = None) -> pl.DataFrame:
    """The baseline metrics (docs/definitions.md), one row per selected conversation."""
    rep = build_report(db, cfg or load_config(), selection or Selection(), only="baseline")
    per = rep.sections[0].metrics["conversations"]
    return pl.DataFrame([{"conversation_id": k, **v} for k, v in per.items()])


def report(db: PathLike = DEFAULT_DB, out: PathLike = "reports", formats: list[str] | None = None,
           only: str | None = None, selection: Selection | None = None, cfg: Config | None = None, *,
           compare_db: str | None = None, split_at: str | None = None, before: str | None = None,
           after: str | None = None, labels: str | None = None, questions: str | None = None,
           engine: str = "duckdb", lake: PathLike | None = None,
           spark_master: str | None = None) -> tuple[Report | Comparison, list[Path]]:
    """Build the report (or a before/after comparison) and write it; returns it and the files written.

    ``labels``: a labels file; labeled dialogues it carries are imported first when missing (docs/topics-evaluation.md).
    ``questions``: a decision-memory question file (JSONL) whose retrieval the memory section replays (§15).
    ``engine="spark"``: the per-conversation analyzers on Spark over the Parquet ``lake`` (``forensics.spark``).
    """
    cfg = cfg or load_config()
    if _spark(engine, lake):
        if compare_db or split_at or before or after or labels or questions:
            raise ForensicsError("--engine spark writes a single report: no --compare, --split-at, --before/--after, "
                                 "--labels or --questions (run those on a warehouse)")
        from forensics.spark.report import build_spark_report

        spark_report = build_spark_report(str(lake), cfg, selection, only, spark_master)
        return spark_report, write(spark_report, out, formats or list(FORMATS), cfg["redact.personal"])
    if labels:
        import_labeled(db, labels)
    selection = selection or Selection()
    if compare_db or split_at or before or after:
        result: Report | Comparison = build_comparison(db, cfg, selection, only, other_db=compare_db,
                                                       split_at=split_at, before=before, after=after,
                                                       questions=questions)
    else:
        result = build_report(db, cfg, selection, only, labels=labels, questions=questions, recommend=advise,
                              persist_findings=True, charts=bool({"md", "html"} & set(formats or FORMATS)))
    had = set(result.pages) if isinstance(result, Report) else set()
    written = write(result, out, formats or list(FORMATS), cfg["redact.personal"])
    if isinstance(result, Report) and set(result.pages) - had:
        keep_pages(db, result)  # the next report of the same inputs writes these pages without rendering them
    return result, written


def import_labeled(db: PathLike, labels: PathLike) -> int:
    """Import the labeled dialogues a labels file carries when some are missing from the warehouse (the uniform
    dialogue JSONL holds the turns themselves); returns how many conversations were added (0 when all were
    there or the file has none)."""
    from forensics.analyzers.topics.labels import read_labels
    from forensics.ingestion.run import ingest

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


def check(db: PathLike = DEFAULT_DB, baseline_path: PathLike = "metrics-baseline.json", cfg: Config | None = None,
          selection: Selection | None = None, update: bool = False, questions: str | None = None) -> list[Verdict]:
    """Compare current metrics with the baseline file (or rewrite its values with ``update``; a missing file is
    then written from every analyzer's figures with the default directions and tolerances); ``questions``
    replays decision-memory retrieval, so recall@k and MRR are gated too."""
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
        kept = {k: r.value for k, r in rules.items() if k not in figures and r.value is not None
                and idle(k, rep.not_in_use) is not None}
        write_baseline(baseline_path, baseline_document(
            {**{k: v for k, v in figures.items() if k in rules}, **kept}, rules))
        rules = load_baseline(baseline_path)
    return compare_baseline(rules, figures, rep.not_in_use)


def write_metrics_baseline(result: Report, path: PathLike) -> None:
    """The baseline `forensics check` compares against, from a report's summary figures."""
    write_baseline(path, baseline_document(report_figures(result)))


def formats() -> pl.DataFrame:
    """Every format `forensics ingest` reads, in detection order: name, what it is, and where it comes from
    (``built-in``, or the package whose ``forensics.formats`` entry point added it)."""
    from forensics.ingestion.registry import listing

    return pl.DataFrame(listing(), schema={"format": pl.String, "origin": pl.String, "reads": pl.String}, orient="row")


def import_outcomes(path: PathLike, db: PathLike = DEFAULT_DB) -> LabelImport:
    """Import run outcomes kept outside the logs (CSV with a header or JSONL: id, success, optional score) into
    ``conversation_outcomes`` (docs/outcomes.md); idempotent. A bad file raises ForensicsError and changes nothing."""
    from forensics.ingestion.outcome_labels import read_labels as read_outcomes
    from forensics.ingestion.outcome_labels import store

    labels = read_outcomes(path)
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db) as wh:
        return store(wh.con, labels, str(Path(path).resolve()))


def secrets(db: PathLike = DEFAULT_DB) -> dict[str, Any]:
    """What ingest masked (``secrets_found``): totals, and finds by kind, field, agent and source; never a value.
    Empty when the warehouse predates masking at ingest."""
    from forensics.analyzers.secrets import scan

    with open_warehouse(db, read_only=True) as wh:
        found = scan(wh.con)
    return {k: redact_value(v) for k, v in found.items()}  # the second line, as every output


def run_diff(a: str, b: str, db: PathLike = DEFAULT_DB) -> RunDiff:
    """Two runs aligned step by step with their first divergence (docs/outcomes.md); ids are conversation or native ids."""
    from forensics.analyzers.diff import diff

    with open_warehouse(db, read_only=True) as wh:
        return diff(wh.con, a, b)


def task_diff(key: str, db: PathLike = DEFAULT_DB) -> tuple[list[Run], RunDiff | None]:
    """The runs of one task with their outcomes, and a passed run diffed against a failed one (None when the
    task has no runs of both outcomes)."""
    from forensics.analyzers.diff import for_task

    with open_warehouse(db, read_only=True) as wh:
        return for_task(wh.con, key)


def usage(db: PathLike = DEFAULT_DB, by: str | list[str] = "agent,model", cfg: Config | None = None,
          selection: Selection | None = None) -> pl.DataFrame:
    """Runs, tokens, cost, tool errors, compactions and success rate (docs/usage.md), grouped ``by``
    agent, model and/or day (``"agent,model"``, ``["day"]``), or one row per run with ``by="conversation"``.
    Prices: the shipped dated table under the config's ``[prices]``; a model without a price has no cost."""
    from forensics.analyzers import usage as usage_analyzer
    from forensics.analyzers.prices import table

    keys = [k.strip() for k in (by.split(",") if isinstance(by, str) else by) if k.strip()]
    if keys != ["conversation"] and not set(keys) <= set(usage_analyzer.GROUPS) or not keys:
        raise ForensicsError(f"cannot group usage by {','.join(keys) or 'nothing'!r}: choose among "
                             f"{', '.join(usage_analyzer.GROUPS)} (comma-separated), or conversation")
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
    where = "WHERE kind = ?" if kind else ""
    with open_warehouse(_existing(db), read_only=True) as wh:
        if not wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'report_findings'").fetchall()[0][0]:
            from forensics.report.persist import FINDINGS

            return pl.DataFrame(schema=FINDINGS)
        df = frame(wh.con, f"SELECT * FROM report_findings {where} ORDER BY section, kind, severity, native_id, "
                           "positions", [kind] if kind else None)
    return mask_frame(df)


def outcomes(db: PathLike = DEFAULT_DB) -> pl.DataFrame:
    """Every run whose outcome is known (from the log itself or a labels file, docs/outcomes.md): conversation id,
    native id, format, model, success, score, source and detail."""
    with open_warehouse(_existing(db), read_only=True) as wh:
        return frame(wh.con, """
            SELECT o.conversation_id, c.native_id, s.format, c.model, o.success, o.score, o.source, o.detail
            FROM conversation_outcomes o JOIN conversations c USING (conversation_id)
            LEFT JOIN sources s ON s.source_id = c.source_id ORDER BY c.native_id, o.conversation_id""")


def _existing(db: PathLike) -> PathLike:
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    return db
