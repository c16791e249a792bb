"""Query results out to a terminal table, CSV, JSON, JSON Lines, a Markdown table or Parquet: data on stdout,
nothing else.

On a terminal, text is shown inert: control and bidi characters as escapes (``forensics.text.escape``), and a
table cell as plain text, never as rich markup (a Llama prompt log's ``[/INST]`` is text). Written to a file or
a pipe, CSV and JSON keep the values as they are; a Markdown table's cells are escaped so that log text renders as
itself (``forensics.text.escape.markdown``)."""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import holds
from forensics.text.escape import inert_html, markdown, terminal


def emit(df: pl.DataFrame, fmt: str, out: str | None = None) -> None:
    """Write a query result as ``fmt`` (table, csv, json, jsonl, markdown, parquet) to ``out`` or stdout; text shown
    on a terminal is made inert (see the module doc)."""
    if fmt == "parquet":
        if not out:
            raise ForensicsError("--format parquet needs --out FILE")
        df.write_parquet(out)
        return
    # text formats have no bytes (polars' JSON writer panics on them): bytes go out as hex, nested ones inside
    # their value's JSON text
    df = df.with_columns(
        pl.col(c).bin.encode("hex") if t == pl.Binary else pl.col(c).map_elements(_json_text, return_dtype=pl.String)
        for c, t in df.schema.items()
        if holds(t, (pl.Binary,))
    )
    if fmt in ("csv", "markdown"):  # no lists or structs in a CSV or Markdown cell: their JSON text instead
        nested = [c for c, t in df.schema.items() if isinstance(t, (pl.List, pl.Array, pl.Struct))]
        df = df.with_columns(pl.col(c).map_elements(_json_text, return_dtype=pl.String) for c in nested)
    if fmt == "csv":
        text = df.write_csv()
    elif fmt == "markdown":
        text = _markdown(df)
    elif fmt == "json":
        text = df.write_json() + "\n"
    elif fmt == "jsonl":
        text = df.write_ndjson()
    else:
        text = _table(df)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(terminal(text) if sys.stdout.isatty() else text, nl=False)


def _json_text(v: object) -> str:
    return json.dumps(
        v.to_list() if isinstance(v, pl.Series) else v,
        ensure_ascii=False,
        default=lambda x: x.hex() if isinstance(x, bytes) else str(x),
    )


def _markdown(df: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table: every row, each cell one line of inert text (NULL as an empty cell)."""

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    lines = [row([markdown(c) for c in df.columns]), row(["---"] * df.width)]
    lines += [row(["" if v is None else markdown(str(v)) for v in r]) for r in df.iter_rows()]
    return inert_html("\n".join(lines)) + "\n"


def _table(df: pl.DataFrame) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(show_lines=False)
    for c in df.columns:
        t.add_column(Text(terminal(c)), overflow="fold")
    for row in df.head(1000).iter_rows():
        t.add_row(*[Text("" if v is None else terminal(str(v)[:200])) for v in row])
    con = Console(file=sys.stdout, width=max(80, min(200, Console().width)))
    with con.capture() as cap:
        con.print(t)
        if df.height > 1000:
            con.print(f"… {df.height - 1000} more rows (use --format csv)")
    return cap.get()
