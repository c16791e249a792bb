"""The `forensics` command: thin click commands over the Python API, one-line errors, fixed exit codes."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from forensics.api import AGENTS, DEFAULT_DB, HOOK_AGENTS, INGEST_FORMATS
from forensics.kernel.batch import batch_process
from forensics.kernel.errors import ExitCode, ForensicsError
from forensics.kernel.redact import redact

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

db_option = click.option(
    "--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False), help="Warehouse file (DuckDB)."
)


def interactive() -> bool:
    """Progress bars only for a person at a terminal: not in CI, pipes or notebooks."""
    return sys.stderr.isatty() and not os.environ.get("CI")


class ForensicsGroup(click.Group):
    """Turns expected failures into one line on stderr and an exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ForensicsError as e:
            click.echo(f"forensics: {e}", err=True)
            ctx.exit(int(e.exit_code))
        except KeyboardInterrupt:
            _interrupted(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit, GeneratorExit):
            raise
        except BrokenPipeError:  # `forensics formats | head`: the reader has what it wanted; no error to print
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit, when Python flushes stdout
            ctx.exit(0)
        except BaseException as e:  # Exception, and a Rust panic from polars (pyo3's PanicException is a BaseException)
            if _after_interrupt(e):
                _interrupted(ctx)
            if os.environ.get("FORENSICS_DEBUG"):
                raise
            detail = redact(str(e))  # an error may quote the text it failed on
            click.echo(
                f"forensics: internal error: {type(e).__name__}: {detail} (set FORENSICS_DEBUG=1 for details)", err=True
            )
            ctx.exit(ExitCode.INTERNAL)


def _after_interrupt(e: BaseException | None) -> bool:
    """Ctrl-C or SIGTERM can surface as another error: DuckDB's own when it lands inside a query, or whatever a
    cleanup raised while the interrupt unwound (the interrupt is then in the error's context)."""
    while e is not None:
        if (
            isinstance(e, KeyboardInterrupt)
            or type(e).__name__ == "InterruptException"
            or (isinstance(e, RuntimeError) and str(e).startswith("Query interrupted"))
        ):
            return True
        e = e.__cause__ or e.__context__
    return False


INTERRUPTED_LINE = "forensics: interrupted; rerun the same command to finish"
_told: list[bool] = []  # the interrupted line was written (main() writes it once at most)


def _interrupted(ctx: click.Context) -> None:
    if not _told:
        _told.append(True)
        click.echo(INTERRUPTED_LINE, err=True)
    ctx.exit(ExitCode.INTERRUPTED)


@click.group(cls=ForensicsGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(None, "-V", "--version", package_name="forensics")
def cli() -> None:
    """Offline conversation forensics: import assistant logs into DuckDB, measure why long
    conversations go wrong, and gate CI on the numbers."""


@cli.command()
@click.argument("sources", nargs=-1)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(INGEST_FORMATS)),
    default="auto",
    show_default=True,
    help="Importer; auto detects each file by its content (see docs/formats.md), then its extension.",
)
@click.option("--table", help="SQLite table holding the conversations (default ai_conversations, else auto-detected).")
@click.option("--column", help="SQLite column holding the JSON message array (default messages).")
@click.option(
    "--messages-key",
    help="OpenAI-style records: the key holding the messages (default messages, "
    "else the one key holding a list of role messages).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
@click.option(
    "--verbose", is_flag=True, help="A row for every source (past 20 sources only the failed and noted ones get a row)."
)
@click.option(
    "--from",
    "agent",
    type=click.Choice(list(AGENTS)),
    help="Read this agent's logs from where it keeps them (docs/formats.md lists the folders).",
)
@click.option("--path", "agent_path", type=click.Path(), help="With --from: read the agent's logs from here instead.")
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: ingest the SOURCES again whenever a file under them changes "
    "(polled), for agents without hooks (`forensics hooks`). Ctrl-C stops it.",
)
@click.option(
    "--interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="With --watch: seconds between polls.",
)
@click.option(
    "--keep-secrets",
    is_flag=True,
    help="Store credentials found in the logs as they are instead of "
    "masking them (docs/secrets.md); outputs still mask what they show.",
)
def ingest(
    sources: tuple[str, ...],
    db: str,
    fmt: str,
    table: str | None,
    column: str | None,
    messages_key: str | None,
    as_json: bool,
    verbose: bool,
    agent: str | None,
    agent_path: str | None,
    watch: bool,
    interval: float,
    keep_secrets: bool,
) -> None:
    """Import agent and chat logs (Claude Code, Codex, Gemini CLI, aider, OpenHands, SWE-agent, Cline, Continue,
    Cursor, ChatGPT/Claude.ai exports, Open WebUI, Inspect, OpenTelemetry spans, decision-memory harness
    databases, SQLite and JSONL logs...),
    files, folders or globs, into the warehouse; each file's format is detected by its content and the
    summary says which it was read as (`forensics formats` lists them).

    Importing the same source again adds nothing; a grown source adds only what is new. Bad lines and
    rows are quarantined with their raw bytes, never dropped. Credentials (API keys, tokens, private keys,
    passwords) are masked before anything is stored; `forensics secrets` says where. Exit 0: every source imported; 1: some
    failed; 2: nothing could be read or bad usage.

    \b
    Example:
      forensics ingest ~/app/devflow.db sessions/ --db forensics.duckdb
      forensics ingest ~/.claude/projects traces.jsonl
      forensics ingest --from codex                  # ~/.codex/sessions (or $CODEX_HOME/sessions)
    """
    if agent_path and not agent:
        raise click.UsageError("--path goes with --from AGENT; name other files as SOURCE arguments")
    if agent:
        from forensics.api import locate

        found = locate(agent, agent_path)
        click.echo(f"reading {AGENTS[agent][0]} logs from {', '.join(map(str, found))}", err=True)
        sources = (*sources, *map(str, found))
    if not sources:
        raise click.UsageError("name at least one SOURCE, or pass --from AGENT")
    if keep_secrets:
        click.echo(
            "forensics: WARNING: --keep-secrets: credentials in these logs are stored unmasked in "
            f"{redact(str(db))}; anyone who can read that file can read them",
            err=True,
        )
    batch_process()  # forensics.kernel.batch: fewer cycle collections
    if watch:
        if fmt != "auto" or table or column or messages_key or as_json or keep_secrets:
            raise click.UsageError(
                "--watch reads each file as detected: leave out --format, --table, --column, "
                "--messages-key, --json and --keep-secrets"
            )
        from forensics.api import watch as poll

        click.echo(
            f"forensics ingest --watch: polling {', '.join(sources)} every {interval:g} s into {db} (Ctrl-C stops it)",
            err=True,
        )
        poll(list(sources), db, interval, click.echo)
        return
    from forensics.api import format_ingest
    from forensics.api import ingest as run_ingest

    with _progress("importing") as tick:
        result = run_ingest(
            list(sources),
            db=db,
            fmt=fmt,
            table=table,
            column=column,
            progress=tick,
            messages_key=messages_key,
            keep_secrets=keep_secrets,
        )
    for s in result.sources:
        if s.error:
            click.echo(f"forensics: {s.error}", err=True)
    if as_json:
        import orjson

        click.echo(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(format_ingest(result, verbose))
    sys.exit(int(result.exit_code))


@cli.command("formats")
def formats_() -> None:
    """List the formats `forensics ingest` detects, in the order it tries them, plug-ins included.

    \b
    Example:
      forensics formats
    """
    from forensics.api import format_listing  # not the API's DataFrame: no polars to print a list
    from forensics.kernel.columns import described

    for name, origin, reads in format_listing():  # the description wrapped under itself, not by the terminal
        click.echo(described(f"{name:15} {origin:10} ", reads, 27))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@db_option
def outcomes(file: str, db: str) -> None:
    """Import run outcomes kept outside the logs: CSV with a header, or JSONL, with the columns id (a native id or
    a conversation id), success (true/false, 1/0, pass/fail) and optionally score.

    Each label replaces the run's outcome; importing the same file again changes nothing. Ids that match no
    conversation are counted and listed; a file that cannot be read changes nothing (exit 2).

    \b
    Example:
      forensics outcomes ci-verdicts.csv --db forensics.duckdb
    """
    from forensics.api import import_outcomes

    r = import_outcomes(file, db)
    matched = r.added + r.changed + r.unchanged
    click.echo(
        f"{file}: {r.rows} labels; {matched} conversations: {r.added} new, {r.changed} changed, {r.unchanged} unchanged"
    )
    for what, ids in (
        ("match no conversation", r.unmatched),
        ("match several conversations (use the conversation id)", r.ambiguous),
    ):
        if ids:
            shown = ", ".join(redact(i) for i in ids[:20]) + (f", ... ({len(ids) - 20} more)" if len(ids) > 20 else "")
            click.echo(f"{len(ids)} ids {what}: {shown}")


@cli.command("secrets")
@db_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--export-redacted",
    "redacted",
    metavar="OUT",
    help="Write a copy of the sources to the new folder OUT "
    "with every secret masked, each file still valid in its format (JSONL stays JSONL, SQLite stays "
    "SQLite); the sources are only read.",
)
def secrets_(db: str, fmt: str, redacted: str | None) -> None:
    """What ingest masked: credentials (API keys, tokens, private keys, passwords) found in the logs, by kind,
    field, agent and source. Values are never stored, so never shown (docs/secrets.md).

    \b
    Example:
      forensics secrets --db forensics.duckdb
      forensics secrets --export-redacted shared-logs/     # a copy to share, every secret masked
    """
    from forensics.api import export_redacted, secrets, secrets_text

    if redacted:
        r = export_redacted(redacted, db)
        click.echo(f"{r.files} files copied to {redact(r.out)} from {redact(r.root)}, {r.masked} secrets masked")
        for rel in r.skipped:
            click.echo(f"not copied (neither text nor SQLite): {redact(rel)}")
        for path in r.missing:
            click.echo(f"not found (moved, or its path held a secret): {redact(path)}")
        return
    found = secrets(db)
    if fmt == "json":
        import orjson

        click.echo(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode())
        return
    if not found:
        click.echo(
            f"{redact(str(db))}: made before secrets were masked at ingest (no secrets_found table); "
            "re-import its sources to mask and list them"
        )
        return
    click.echo(
        f"{found['found']} secrets ({found['distinct_secrets']} distinct) masked at ingest in "
        f"{found['sources']} sources, {found['conversations']} conversations; values are never stored"
    )
    for key, title in (
        ("by_kind", "by kind"),
        ("by_agent", "by agent"),
        ("by_field", "by field"),
        ("by_source", "by source"),
    ):
        if found[key]:
            click.echo(f"\n{title}:")
            for row in found[key]:
                first, *rest = row.values()
                click.echo(f"  {first}  " + "  ".join(f"{k}={v}" for k, v in list(row.items())[1:]))
    for path in found["kept_sources"]:
        click.echo(f"kept (--keep-secrets): {path}")
    if found.get("secrets"):
        click.echo(secrets_text(found))


@cli.command()
@click.argument("runs", nargs=-1)
@db_option
@click.option(
    "--task",
    "task",
    help="List the runs of this task (tau-bench task_id, SWE-bench instance_id, Inspect "
    "sample id, ...) with their outcomes and diff a passed run against a failed one.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def diff(runs: tuple[str, ...], db: str, task: str | None, fmt: str) -> None:
    """Two runs of the same task side by side: their tool calls aligned step by step (same, changed arguments,
    only in one) and the first step where they differ, with the positions `forensics show` opens.

    \b
    Example:
      forensics diff 3f2a9c0d1e7b6a54 9b8c7d6e5f4a3b21
      forensics diff --task 12 --format json
    """
    import orjson

    from forensics.api import render_run_diff as render
    from forensics.api import render_runs, run_diff, task_diff

    if task is not None and runs or task is None and len(runs) != 2:
        raise click.UsageError("name two runs A B, or --task KEY")
    if task is None:
        d = run_diff(runs[0], runs[1], db)
        click.echo(orjson.dumps(d.to_dict(), option=orjson.OPT_INDENT_2).decode() if fmt == "json" else render(d))
        return
    found, d2 = task_diff(task, db)
    if fmt == "json":
        doc = {
            "task": task,
            "runs": [
                {
                    "id": r.conversation_id,
                    "native_id": r.native_id,
                    "model": r.model,
                    "success": r.success,
                    "steps": len(r.steps),
                }
                for r in found
            ],
            "diff": d2.to_dict() if d2 else None,
        }
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(render_runs(task, found))
    click.echo(render(d2) if d2 else "no pair of a passed and a failed run to diff")


@cli.command()
@db_option
@click.option(
    "--format", "fmt", type=click.Choice(["parquet"]), default="parquet", show_default=True, help="Dataset format."
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the dataset (must be empty).")
@click.option("--overwrite", is_flag=True, help="Replace what the --out folder holds.")
def export(db: str, fmt: str, out: str, overwrite: bool) -> None:
    """Write the warehouse as a hive-partitioned Parquet dataset, partitioned by source and month.

    One folder per table, and views.sql recreating each table as a view over the files, so the SQL in
    queries/ runs unchanged on DuckDB over Parquet, locally or on object storage; Spark reads the
    folders as partitioned tables. Layout and commands: docs/scale.md.

    \b
    Example:
      forensics export --format parquet --out lake/
      duckdb -c "SET VARIABLE forensics_parquet = 'lake'" -c ".read lake/views.sql" \\
             -c "SELECT role, count(*) FROM messages GROUP BY role"
    """
    from forensics.api import export as run_export

    result = run_export(db, out, fmt=fmt, overwrite=overwrite)
    for table, rows in result.rows.items():
        keys = result.partitions.get(table)
        click.echo(f"{table:18} {rows:>10} rows" + (f"  partitioned by {', '.join(keys)}" if keys else ""))
    click.echo(f"-> {result.out}/ (views: {result.out / 'views.sql'})")


questions_option = click.option(
    "--questions",
    type=click.Path(dir_okay=False),
    help='Decision-memory questions (JSONL: {"project_id", "question", "at", "expected": [decision ids]}): '
    "replay the harness's retrieval on them (recall@k, MRR, injected size).",
)
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Harness config TOML (default: ./harness.toml when present, else built-in defaults).",
)


def engine_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed(
        [
            click.option(
                "--engine",
                type=click.Choice(["duckdb", "spark"]),
                default="duckdb",
                show_default=True,
                help="duckdb: the warehouse (--db); spark: Apache Spark over a Parquet lake (--lake; "
                "pip install 'forensics[spark]', needs Java 17).",
            ),
            click.option(
                "--lake", help="With --engine spark: the folder (or s3a://, gs:// URL) `forensics export` wrote."
            ),
            click.option(
                "--spark-master",
                help="With --engine spark: the Spark master URL (default local[*]: this machine's cores).",
            ),
        ]
    ):
        fn = opt(fn)
    return fn


def selection_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed(
        [
            click.option(
                "--conversation", "conversations", multiple=True, help="Conversation id or native id (repeatable)."
            ),
            click.option("--since", help="Only conversations created at or after this ISO date/time."),
            click.option("--until", help="Only conversations created before this ISO date/time."),
            click.option("--model", "models", multiple=True, help="Only this model (repeatable)."),
            click.option(
                "--source", "sources", multiple=True, help="Only sources whose path contains this (repeatable)."
            ),
        ]
    ):
        fn = opt(fn)
    return fn


def _selection(
    conversations: tuple[str, ...],
    since: str | None,
    until: str | None,
    models: tuple[str, ...],
    sources: tuple[str, ...],
) -> Any:
    from forensics.api import Selection

    return Selection(conversations, since, until, models, sources)


@cli.command()
@db_option
@click.option(
    "--by",
    default="agent,model",
    show_default=True,
    help="Group by agent, model and/or day (comma-separated), or conversation for one row per run.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@config_option
@selection_options
def usage(
    db: str,
    by: str,
    fmt: str,
    config_path: str | None,
    conversations: tuple[str, ...],
    since: str | None,
    until: str | None,
    models: tuple[str, ...],
    sources: tuple[str, ...],
) -> None:
    """The runs: tokens (input = all sent, cached = read from the prompt cache), cost in USD, tool-error rate,
    compactions and success rate with its 95 % interval, per agent and model, per day, or per run.

    Prices: the shipped table (dated, docs/usage.md) under the config's [prices]
    (model = {input = ..., output = ..., cache_read = ..., cache_write = ...}, USD per million tokens);
    a model without a price shows its tokens and no cost.

    \b
    Example:
      forensics usage --by day
      forensics usage --by model --format json --config harness.toml
    """
    import orjson

    from forensics.api import load_config, usage_text
    from forensics.api import usage as usage_rows

    df = usage_rows(db, by, load_config(config_path), _selection(conversations, since, until, models, sources))
    if fmt == "json":
        click.echo(
            orjson.dumps(df.to_dicts(), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY, default=str).decode()
        )
    else:
        click.echo(usage_text(df))


@cli.command()
@db_option
@click.option(
    "--out",
    default="reports",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for report.md, report.html, metrics.json and charts/.",
)
@click.option("--format", "formats", default="md,html,json", show_default=True, help="Comma-separated: md,html,json.")
@click.option("--only", help="Comma-separated analyzers to run (default: all).")
@config_option
@selection_options
@click.option(
    "--compare",
    "compare_db",
    type=click.Path(dir_okay=False),
    help="Another warehouse to compare with (it is 'before', --db is 'after').",
)
@click.option("--split-at", help="Compare conversations created before this time with those from it on.")
@click.option("--before", help='Selection for "before", e.g. "since=2026-06-01 until=2026-06-10 model=glm-5.2".')
@click.option("--after", help='Selection for "after", same syntax as --before.')
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False),
    help="Also write the summary figures as a `forensics check` baseline file.",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False),
    help="Topic labels (JSONL): score the topic switches against them; labeled dialogues are imported when missing.",
)
@click.option(
    "--triggers",
    type=click.Path(dir_okay=False),
    help="Skill trigger table (JSON, docs/metrics.md#skills) to replay; default [skills] triggers.",
)
@questions_option
@engine_options
def report(
    db: str,
    out: str,
    formats: str,
    only: str | None,
    config_path: str | None,
    conversations: tuple[str, ...],
    since: str | None,
    until: str | None,
    models: tuple[str, ...],
    sources: tuple[str, ...],
    compare_db: str | None,
    split_at: str | None,
    before: str | None,
    after: str | None,
    write_baseline: str | None,
    labels: str | None,
    triggers: str | None,
    questions: str | None,
    engine: str,
    lake: str | None,
    spark_master: str | None,
) -> None:
    """Analyze the warehouse and write report.md, report.html and metrics.json.

    With --compare, --split-at or --before/--after, two selections are put side by side with deltas.

    \b
    Example:
      forensics report --db forensics.duckdb --out reports/
      forensics report --only baseline --model glm-5.2 --format md
      forensics report --split-at 2026-06-20 --out reports/p0-effect
      forensics report --only topics --labels kdconv-dev.zh.jsonl --config dialogue.toml
      forensics report --only skills --triggers skill_triggers.json
      forensics report --only memory --questions questions.jsonl
      forensics report --engine spark --lake lake/ --out reports/spark   # baseline, compression, drift, sentinel
    """
    from forensics.api import load_config, parse_formats, with_triggers
    from forensics.api import report as run_report

    fmts = parse_formats(formats)
    cfg = with_triggers(load_config(config_path), triggers)
    _show_progress("forensics.report")
    batch_process()  # forensics.kernel.batch: fewer cycle collections
    result, written = run_report(
        db,
        out,
        fmts,
        only,
        _selection(conversations, since, until, models, sources),
        cfg,
        compare_db=compare_db,
        split_at=split_at,
        before=before,
        after=after,
        labels=labels,
        questions=questions,
        engine=engine,
        lake=lake,
        spark_master=spark_master,
    )
    for p in written:
        click.echo(str(p))
    if write_baseline:
        from forensics.api import Report, write_metrics_baseline

        if not isinstance(result, Report):
            raise click.UsageError("--write-baseline needs a single report, not a comparison")
        write_metrics_baseline(result, write_baseline)
        click.echo(write_baseline)


@cli.command()
@click.argument("name_or_sql", required=False)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "jsonl", "markdown", "parquet"]),
    default=None,
    help="Output format (default: table on a terminal, csv otherwise).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write to this file (required for parquet).")
@click.option("--list", "list_", is_flag=True, help="List the named queries with their descriptions.")
@engine_options
def query(
    name_or_sql: str | None,
    db: str,
    fmt: str | None,
    out: str | None,
    list_: bool,
    engine: str,
    lake: str | None,
    spark_master: str | None,
) -> None:
    """Run a named query from queries/ or read-only SQL against the warehouse.

    Statements that would write are refused. Secrets in text columns are masked.

    \b
    Example:
      forensics query --list
      forensics query baseline --format csv > baseline.csv
      forensics query baseline --format markdown      # a table to paste into an issue
      forensics query "SELECT role, count(*) FROM messages GROUP BY 1"
      forensics query baseline --engine spark --lake lake/ --format csv
    """
    from forensics.api import list_queries

    if list_:
        for q in list_queries():
            click.echo(f"{q.name:<24} {q.description}")
        return
    if not name_or_sql:
        raise click.UsageError("give a query NAME or SQL, or --list")
    from forensics.api import emit_rows
    from forensics.api import query as run_query

    emit_rows(
        run_query(name_or_sql, db, engine=engine, lake=lake, spark_master=spark_master),
        fmt or ("table" if sys.stdout.isatty() else "csv"),
        out,
    )


@cli.command()
@click.argument("conversation")
@db_option
@click.option("--positions", help="Comma-separated positions or ranges, e.g. 8,58 or 141-152 (default: all).")
@click.option("--width", default=300, show_default=True, help="Characters of content shown per message.")
@click.option(
    "--decisive",
    is_flag=True,
    help="Open the run at its decisive step (the last report's run_failures); "
    "an error when it has none. A failed run opens there anyway when no --positions are given.",
)
def show(conversation: str, db: str, positions: str | None, width: int, decisive: bool) -> None:
    """Print the messages of one conversation at the given positions: the evidence behind a finding. A failed
    run the last report signed opens at its decisive step (where it went wrong, who took it, by which rule).

    \b
    Example:
      forensics show d6614e0b --positions 140-153
      forensics show 11a8394e --decisive
    """
    from forensics.api import show as show_messages

    click.echo(show_messages(conversation, db, positions, width, decisive))


@cli.command()
@db_option
@click.option(
    "--baseline",
    "baseline_path",
    default="metrics-baseline.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The committed baseline file.",
)
@config_option
@selection_options
@click.option("--junit", type=click.Path(dir_okay=False), help="Also write JUnit XML (one testcase per metric).")
@click.option("--update", is_flag=True, help="Rewrite the baseline values from the current metrics, on purpose.")
@questions_option
def check(
    db: str,
    baseline_path: str,
    config_path: str | None,
    conversations: tuple[str, ...],
    since: str | None,
    until: str | None,
    models: tuple[str, ...],
    sources: tuple[str, ...],
    junit: str | None,
    update: bool,
    questions: str | None,
) -> None:
    """CI gate: compare the current metrics with a baseline; exit 1 on any regression.

    Each baseline entry has a value, the better direction (lower/higher/equal) and a tolerance.
    --update rewrites the values, or writes the file when there is none yet.
    Exit 0: nothing regressed; 1: a regression; 2: usage error or missing/invalid baseline.

    \b
    Example:
      forensics report --write-baseline metrics-baseline.json   # once, then commit it
      forensics check --baseline metrics-baseline.json --junit check.xml
      forensics check --baseline metrics-baseline.json --questions questions.jsonl   # gates recall@k and MRR
    """
    from forensics.api import check as run_check
    from forensics.api import check_junit as junit_xml
    from forensics.api import check_table as table
    from forensics.api import load_config

    batch_process()  # forensics.kernel.batch: fewer cycle collections
    existed = os.path.exists(baseline_path)
    verdicts = run_check(
        db,
        baseline_path,
        load_config(config_path),
        _selection(conversations, since, until, models, sources),
        update=update,
        questions=questions,
    )
    click.echo(table(verdicts))
    if update:
        click.echo(
            f"baseline rewritten: {baseline_path}"
            if existed
            else f"baseline written: {baseline_path} did not exist; {len(verdicts)} metrics with default directions "
            "and tolerances (commit it)"
        )
    if junit:
        with open(junit, "w", encoding="utf-8") as f:
            f.write(junit_xml(verdicts))
    sys.exit(ExitCode.PARTIAL if any(v.failed for v in verdicts) else ExitCode.OK)


@cli.command()
@db_option
@click.option(
    "--config",
    "config_path",
    default="harness.toml",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The harness config to tune (created from the defaults by --write when missing).",
)
@click.option(
    "--labels",
    type=click.Path(exists=True, dir_okay=False),
    help="Labeled topic switches (JSONL) to tune topic.min_confidence and the switch-score threshold against.",
)
@click.option("--write", is_flag=True, help="Rewrite the config in place (comments and layout kept).")
@click.option("--json", "as_json", is_flag=True, help="Print the recommendations as JSON.")
@click.option("--emit", type=click.Choice(["json", "rust", "ts"]), help="Print the tuned values as harness constants.")
@click.option(
    "--target-tool-share",
    default=0.6,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Tool share of context the compression settings must get under.",
)
@click.option(
    "--min-precision",
    default=0.7,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="With --labels: topic markers must be at least this precise.",
)
@click.option(
    "--worst-pct",
    default=10.0,
    show_default=True,
    type=click.FloatRange(0, 100),
    help="Drift thresholds flag the worst this-many percent of conversations.",
)
@click.option(
    "--marker-rate",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Without --labels: topic markers per judged message to aim for.",
)
@click.option(
    "--max-outside-share",
    default=0.25,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="compaction.keep_recent: at most this share of the needs after a replayed compaction may concern "
    "a fact outside the kept window.",
)
@click.option(
    "--triggers",
    type=click.Path(dir_okay=False),
    help="Tune this skill trigger table (JSON) instead: phrases for the skills the model loaded that the "
    "table missed; --write adds them to the file.",
)
@click.option(
    "--holdout",
    is_flag=True,
    help="With --triggers: propose on half the conversations, score on the other half (both ways), beside "
    "the routers that mark nothing and mark everything.",
)
@questions_option
def tune(
    db: str,
    config_path: str,
    labels: str | None,
    write: bool,
    as_json: bool,
    emit: str | None,
    target_tool_share: float,
    min_precision: float,
    worst_pct: float,
    marker_rate: float,
    max_outside_share: float,
    triggers: str | None,
    holdout: bool,
    questions: str | None,
) -> None:
    """Recommend thresholds from the warehouse, with evidence; --write puts them in the config.

    \b
    Example:
      forensics tune --config harness.toml
      forensics tune --config harness.toml --write
      forensics tune --config harness.toml --emit rust > src/tuned.rs
      forensics tune --config harness.toml --questions questions.jsonl --write   # the [memory] retrieval keys
      forensics tune --triggers skill_triggers.json --write
      forensics tune --triggers skill_triggers.json --holdout
    """
    from pathlib import Path

    from forensics.api import defaults, emit_values, load_config
    from forensics.api import tune as run_tune

    cfg = load_config(config_path) if Path(config_path).exists() else defaults()
    if holdout and (not triggers or write):
        raise click.UsageError("--holdout judges a trigger table's proposals: it takes --triggers, not --write")
    if triggers:
        if emit or labels or questions:
            raise click.UsageError("--triggers tunes the trigger table only; it takes --write, --json and --holdout")
        _tune_triggers(db, cfg, triggers, write, as_json, holdout)
        return
    batch_process()  # forensics.kernel.batch: fewer cycle collections
    result = run_tune(
        db,
        cfg,
        labels=labels,
        target_tool_share=target_tool_share,
        min_precision=min_precision,
        worst_pct=worst_pct,
        marker_rate=marker_rate,
        max_outside_share=max_outside_share,
        questions=questions,
    )
    if emit:
        click.echo(emit_values(result.values(cfg), emit))
    elif as_json:
        import orjson

        click.echo(orjson.dumps([r.__dict__ for r in result.recommendations], option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(_tune_table(result))
    if write:
        from forensics.api import write_config

        changed = write_config(config_path, result)
        click.echo(f"{config_path}: {len(changed)} key(s) rewritten", err=bool(emit or as_json))


def _tune_triggers(db: str, cfg: Any, path: str, write: bool, as_json: bool, holdout: bool) -> None:
    from forensics.api import render_triggers as render
    from forensics.api import tune_triggers, write_triggers

    if holdout:
        from forensics.api import render_holdout, triggers_holdout

        h = triggers_holdout(db, cfg, path)
        if as_json:
            import orjson

            click.echo(
                orjson.dumps(
                    {
                        "table": str(h.table.path),
                        "conversations": h.conversations,
                        "requests": h.requests,
                        "proposed": h.proposed,
                        "no_harm": h.no_harm,
                        "routers": {k: s.as_dict() for k, s in h.scores.items()},
                    },
                    option=orjson.OPT_INDENT_2,
                ).decode()
            )
        else:
            click.echo(render_holdout(h))
        return
    t = tune_triggers(db, cfg, path)
    if as_json:
        import orjson

        click.echo(
            orjson.dumps(
                {
                    "table": str(t.table.path),
                    "proposals": [p.__dict__ for p in t.proposals],
                    "before": t.before,
                    "after": t.after,
                },
                option=orjson.OPT_INDENT_2,
            ).decode()
        )
    else:
        click.echo(render(t, write))
    if write:
        click.echo(f"{path}: {write_triggers(t)} phrase(s) added", err=as_json)


def _tune_table(result: Any) -> str:
    rows = [("key", "current", "recommended", "evidence")]
    rows += [
        (r.key, repr(r.current), repr(r.recommended) + ("" if r.changed else " (keep)"), r.evidence)
        for r in result.recommendations
    ]
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join([r[0].ljust(w[0]), r[1].ljust(w[1]), r[2].ljust(w[2]), r[3]]) for r in rows]
    lines.append(
        f"{len(result.recommendations)} tunables from {result.conversations} conversations, "
        f"{result.messages} messages; nothing written without --write"
    )
    return "\n".join(lines)


@cli.command()
@db_option
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="Port on 127.0.0.1.")
@click.option("--open", "open_browser", is_flag=True, help="Open the explorer in the default browser.")
@config_option
def serve(db: str, port: int, open_browser: bool, config_path: str | None) -> None:
    """A local, read-only web explorer over the warehouse, on 127.0.0.1 only.

    Pages: the latest report's answer (what to change, worst conversations, strongest findings),
    conversations with agent, model, outcome and tokens (filter, sort, page), search over messages,
    one conversation's transcript in windows with its findings, topic segments and sentinel verdicts,
    two runs of one task side by side (/diff), all findings, the named queries. Findings come from the
    last `forensics report` on this warehouse. Writes are refused (405); secrets are masked on every page,
    and personal data (e-mail addresses, phone numbers) unless the config says [redact] personal = "off".

    \b
    Example:
      forensics report --db forensics.duckdb
      forensics serve --db forensics.duckdb --open
    """
    from forensics.api import load_config
    from forensics.api import serve as run_serve

    run_serve(
        db,
        port,
        open_browser,
        load_config(config_path),
        lambda url: click.echo(f"forensics serve: {url} (read-only; Ctrl-C stops it)", err=True),
    )


@cli.group()
def hooks() -> None:
    """Ingest each finished agent session in the background: the agent's own hook (docs/hooks.md).

    \b
    Example:
      forensics hooks install claude-code --db ~/forensics.duckdb   # ~/.claude/settings.json, SessionEnd
      forensics hooks install codex --db ~/forensics.duckdb         # ~/.codex/config.toml, notify
      forensics hooks status
      forensics hooks uninstall claude-code                         # the file as it was, byte for byte
    """


settings_option = click.option(
    "--settings",
    type=click.Path(dir_okay=False),
    help="The settings file to edit (default: the agent's user settings).",
)
project_option = click.option(
    "--project",
    type=click.Path(file_okay=False),
    help="A project's settings instead of the user's (.claude/settings.json, "
    ".codex/config.toml, .gemini/settings.json under it).",
)


@hooks.command("install")
@click.argument("agent", type=click.Choice(HOOK_AGENTS))
@db_option
@settings_option
@project_option
def hooks_install(agent: str, db: str, settings: str | None, project: str | None) -> None:
    """Add the hook that ingests each finished session of AGENT into the warehouse (the file's other content
    and comments kept; `uninstall` restores it).

    \b
    Example:
      forensics hooks install claude-code --db ~/forensics.duckdb
      forensics hooks install gemini --project . --db ~/forensics.duckdb
    """
    from forensics.api import hooks_install as install

    click.echo(install(agent, db, settings, project))


@hooks.command("uninstall")
@click.argument("agent", type=click.Choice(HOOK_AGENTS))
@settings_option
@project_option
def hooks_uninstall(agent: str, settings: str | None, project: str | None) -> None:
    """Take the hook out (the settings file byte for byte as before install when nothing else changed it).

    \b
    Example:
      forensics hooks uninstall claude-code
    """
    from forensics.api import hooks_uninstall as uninstall

    click.echo(uninstall(agent, settings, project))


@hooks.command("status")
def hooks_status() -> None:
    """Each agent's settings file, whether the hook is in it, and the last lines of the hooks' log.

    \b
    Example:
      forensics hooks status
    """
    from forensics.api import hooks_status as status

    click.echo(status())


@hooks.command("run", hidden=True)
@click.argument("agent", type=click.Choice(HOOK_AGENTS))
@click.argument("argument", required=False)
@db_option
def hooks_run(agent: str, argument: str | None, db: str) -> None:
    """What the agent runs when a session ends: reads the event (stdin, or Codex's argument), starts a detached
    ingest, prints nothing and exits 0.

    \b
    Example:
      echo '{"transcript_path": "/home/me/.claude/projects/-app/s1.jsonl"}' | forensics hooks run claude-code
    """
    from forensics.api import hook_run

    hook_run(agent, db, argument, lambda: sys.stdin.read(1 << 20) if not sys.stdin.isatty() else "")


@cli.command()
@db_option
@config_option
def mcp(db: str, config_path: str | None) -> None:
    """The warehouse as an MCP server over stdio, for coding agents (read-only).

    Tools: search_messages, list_runs (by agent, model, project, outcome, finding kind), show_run,
    what_went_wrong, run_findings, usage, query (read-only SQL under the lock-down of `forensics query`).
    Secrets are masked in every answer. Needs the extra: pip install 'forensics[mcp]'. docs/mcp.md has
    the lines for Claude Code, Codex and Gemini CLI.

    \b
    Example:
      claude mcp add forensics -- forensics mcp --db ~/forensics.duckdb
    """
    from forensics.api import load_config
    from forensics.api import mcp as serve_mcp

    serve_mcp(db, load_config(config_path))


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish (commands, options, choices, file names).

    \b
    Example:
      forensics completion bash > ~/.local/share/bash-completion/completions/forensics
      forensics completion zsh > "${fpath[1]}/_forensics"
      forensics completion fish > ~/.config/fish/completions/forensics.fish
    """
    from click.shell_completion import BashComplete, FishComplete, ShellComplete, ZshComplete

    shells: dict[str, type[ShellComplete]] = {"bash": BashComplete, "zsh": ZshComplete, "fish": FishComplete}
    click.echo(shells[shell](cli, {}, "forensics", "_FORENSICS_COMPLETE").source())


@cli.group()
def config() -> None:
    """Create or validate the harness config (harness.toml)."""


@config.command("init")
@click.argument("path", default="harness.toml", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def config_init(path: str, force: bool) -> None:
    """Write a commented harness config with every key at its default.

    \b
    Example:
      forensics config init harness.toml
    """
    from pathlib import Path

    from forensics.api import default_toml

    p = Path(path)
    if p.exists() and not force:
        raise ForensicsError(f"{p} exists; pass --force to overwrite it")
    p.write_text(default_toml(), encoding="utf-8")
    click.echo(str(p))


@config.command("check")
@click.argument("path", default="harness.toml", type=click.Path(dir_okay=False))
def config_check(path: str) -> None:
    """Validate a harness config: unknown keys and wrong types fail with the line.

    \b
    Example:
      forensics config check harness.toml
    """
    from forensics.api import keys, load_config

    cfg = load_config(path)
    every = keys()
    changed = [k for k in every if cfg[k.path] != k.default]
    click.echo(f"{path}: ok ({len(changed)} of {len(every)} keys differ from the defaults)")


def _show_progress(logger: str) -> None:
    """A person at a terminal sees the INFO lines ``logger`` gives as a command advances (one per analyzer, with
    its time); pipes, CI and notebooks see none (such a logger has no handler of its own: INFO goes nowhere)."""
    if interactive():
        import logging

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("forensics: %(message)s"))
        log = logging.getLogger(logger)
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


class _progress:
    """A rich progress bar on a terminal; a no-op callback elsewhere."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> Callable[[int, int], None]:
        if not interactive():
            return lambda done, total: None
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        bar = self.bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            transient=True,
        )
        bar.start()
        task = self.task = bar.add_task(self.label, total=None)
        return lambda done, total: bar.update(task, completed=done, total=total)

    def __exit__(self, *exc: Any) -> None:
        if self.bar:
            self.bar.stop()


def main() -> None:
    # SIGTERM (a CI timeout, `kill`) ends the run as Ctrl-C does: transactions roll back, temporary files go
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        cli(prog_name="forensics")
    except KeyboardInterrupt:
        # an interrupt that escaped while the first one's clean-up unwound (a pool's shutdown, a finalizer): the
        # same one line and code as anywhere else, not Python's own death by SIGINT (exit -2)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if not _told:
            _told.append(True)
            click.echo(INTERRUPTED_LINE, err=True)
        sys.exit(ExitCode.INTERRUPTED)
