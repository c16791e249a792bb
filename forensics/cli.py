"""The `forensics` command: thin click commands over the Python API, one-line errors, fixed exit codes."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from forensics.errors import ExitCode, ForensicsError
from forensics.importers.discover import FORMATS
from forensics.warehouse import DEFAULT_DB

db_option = click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
                         help="Warehouse file (DuckDB).")


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
            click.echo("forensics: interrupted; rerun the same command to finish", err=True)
            ctx.exit(ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as e:
            if os.environ.get("FORENSICS_DEBUG"):
                raise
            click.echo(f"forensics: internal error: {type(e).__name__}: {e} (set FORENSICS_DEBUG=1 for details)",
                       err=True)
            ctx.exit(ExitCode.INTERNAL)


@click.group(cls=ForensicsGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="forensics")
def cli() -> None:
    """Offline conversation forensics: import assistant logs into DuckDB, measure why long
    conversations go wrong, and gate CI on the numbers."""


@cli.command()
@click.argument("sources", nargs=-1, required=True)
@db_option
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="auto", show_default=True,
              help="Importer; auto detects each file by its content (see docs/formats.md), then its extension.")
@click.option("--table", help="SQLite table holding the conversations (default ai_conversations, else auto-detected).")
@click.option("--column", help="SQLite column holding the JSON message array (default messages).")
@click.option("--messages-key", help="OpenAI-style records: the key holding the messages (default messages, "
              "else the one key holding a list of role messages).")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
def ingest(sources: tuple[str, ...], db: str, fmt: str, table: str | None, column: str | None,
           messages_key: str | None, as_json: bool) -> None:
    """Import SQLite databases, session files (JSONL, Claude Code), OpenAI/ShareGPT chat logs, folders or
    globs into the warehouse; the summary says which format each file was read as.

    Importing the same source again adds nothing; a grown source adds only what is new. Bad lines and
    rows are quarantined with their raw bytes, never dropped. Exit 0: every source imported; 1: some
    failed; 2: nothing could be read or bad usage.

    \b
    Example:
      forensics ingest ~/app/devflow.db sessions/ --db forensics.duckdb
      forensics ingest ~/.claude/projects traces.jsonl
    """
    from forensics.importers.run import ingest as run_ingest
    from forensics.summary import format_ingest

    with _progress("importing") as tick:
        result = run_ingest(list(sources), db=db, fmt=fmt, table=table, column=column, progress=tick,
                            messages_key=messages_key)
    for s in result.sources:
        if s.error:
            click.echo(f"forensics: {s.error}", err=True)
    if as_json:
        import orjson

        click.echo(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(format_ingest(result))
    sys.exit(int(result.exit_code))


class _progress:
    """A rich progress bar on a terminal; a no-op callback elsewhere."""

    def __init__(self, label: str) -> None:
        self.label, self.bar, self.task = label, None, None

    def __enter__(self) -> Callable[[int, int], None]:
        if not interactive():
            return lambda done, total: None
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        self.bar = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                            TimeRemainingColumn(), transient=True)
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=None)
        return lambda done, total: self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: Any) -> None:
        if self.bar:
            self.bar.stop()


def main() -> None:
    cli(prog_name="forensics")
