"""`forensics mcp`: the warehouse as an MCP server over stdio (the official ``mcp`` SDK, the optional extra ``mcp``),
so that a coding agent can ask about past sessions ("which of my runs hit this error before?").

Every tool reads: the warehouse is opened read-only for each call, SQL runs under `forensics query`'s lock-down
(``commands.reads.read_only_sql``), and every answer passes the same masks as every other output: secrets always,
personal data when ./harness.toml says ``[redact] personal = "all"``. A bad request is a tool error of one masked
line, never a traceback. docs/mcp.md lists the tools and the lines that add the server to Claude Code, Codex and
Gemini CLI.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from forensics import analyzers
from forensics.commands.reads import read_only_sql
from forensics.commands.show import show_messages
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import mask_frame, redact
from forensics.text import personal
from forensics.warehouse import frame, open_warehouse
from forensics.warehouse.derived import columns
from forensics.warehouse.search import BadSearch, Search, search

if TYPE_CHECKING:
    import polars as pl

    from forensics.config import Config

ROWS = 200  # rows a query or a listing answers with at most (the agent's context is the budget)
HITS = 50  # search hits at most (one page of the explorer's search)
AROUND = 40  # messages either side of a position `show_run` shows at most
OUTCOMES = {"passed": "o.success", "failed": "NOT o.success", "unknown": "o.success IS NULL"}

F = TypeVar("F", bound=Callable[..., str])


def _answer(fn: F, personal_data: bool) -> F:
    """A tool's text through the masks (personal data too when ``personal_data``), and its failure as one masked line (the SDK turns a raised exception
    into a tool error whose text is the exception's)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> str:
        try:
            text = fn(*args, **kwargs)
        except (ForensicsError, BadSearch) as e:
            raise ToolError(_mask(str(e).splitlines()[0] if str(e) else type(e).__name__, True)) from None
        except Exception as e:  # noqa: BLE001 - an agent gets one masked line, never our traceback
            raise ToolError(_mask(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", True)) from None
        return _mask(text, personal_data)

    return wrapped  # type: ignore[return-value]


def _mask(text: str, personal_data: bool) -> str:
    text = redact(text)
    return personal.mask(text) if personal_data else text


def _json(rows: Any) -> str:
    return orjson.dumps(rows, default=str, option=orjson.OPT_INDENT_2).decode()


def _rows(df: Any, limit: int = ROWS) -> str:
    """A frame as JSON rows, secrets masked in its text columns, cut at ``limit`` rows (and saying so)."""
    df = mask_frame(df)
    shown = df.head(limit).to_dicts()
    out: dict[str, Any] = {"rows": shown}
    if df.height > limit:
        out["note"] = f"{df.height} rows; the first {limit} shown"
    return _json(out)


def _has(con: Any, table: str) -> bool:
    return bool(columns(con, table))


def build(db: str | os.PathLike[str], cfg: Config, usage: Callable[[str], pl.DataFrame]) -> Any:
    """The MCP server (``mcp.server.mcpserver.MCPServer``) over the warehouse ``db``, its tools registered; ``cfg``:
    whether personal data is masked; ``usage``: the usage table grouped by its argument, as `forensics usage` shows
    it (the API's, handed down: this layer names no analyzer)."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    db = str(db)
    personal_data = personal.applies(cfg["redact.personal"], page=False)
    server = MCPServer(
        "forensics",
        log_level="WARNING",
        instructions=(
            "Read-only questions about past coding-agent sessions kept in a forensics warehouse: find messages, list "
            "runs, read a run around a position, its findings and decisive step, usage and cost, or read-only SQL. "
            "Run ids are conversation_id or native_id values from list_runs or search_messages."
        ),
    )
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    def tool(fn: F) -> F:
        server.add_tool(_answer(fn, personal_data), annotations=read_only)
        return fn

    def warehouse() -> Any:
        if not Path(db).exists():
            raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
        return open_warehouse(db, read_only=True)

    @tool
    def search_messages(text: str, regex: bool = False, agent: str = "", role: str = "", limit: int = 20) -> str:
        """Messages whose text holds `text` (case-insensitive; a RE2 regular expression with regex=true), on the
        main path, in import order: run ids, position, role, agent (the log format) and the words around the hit.
        `agent` keeps one format (claude-code, codex, ...); `role` one of user, assistant, tool, system."""
        with warehouse() as wh:
            found = search(wh.con, Search(text, regex, role, agent))
        hits = [
            {
                "conversation_id": h["conversation_id"],
                "native_id": h["native_id"],
                "position": h["position"],
                "role": h["role"],
                "agent": h["agent"],
                "model": h["model"],
                "text": f"{h['before']}[{h['hit']}]{h['after']}",
            }
            for h in found.hits[: max(1, min(limit, HITS))]
        ]
        more = "" if found.next is None else f"; searched {found.scanned} of {found.total} messages, more may match"
        return _json({"hits": hits, "note": f"{len(hits)} shown{more}"})

    @tool
    def list_runs(
        agent: str = "",
        model: str = "",
        project: str = "",
        branch: str = "",
        outcome: str = "",
        finding_kind: str = "",
        limit: int = 50,
    ) -> str:
        """Runs (conversations), newest first, with their agent (log format), model, project (working folder),
        git branch, start, messages, outcome and findings. Filters: `agent` (claude-code, codex, ...), `model`,
        `project` and `branch` (a part of the name, case-insensitive), `outcome` (passed, failed, unknown),
        `finding_kind` (a kind of the last report's findings, e.g. loop, user_repeated, tool_error_burst)."""
        if outcome and outcome not in OUTCOMES:
            raise ForensicsError(f"outcome {outcome!r}: choose passed, failed or unknown")
        with warehouse() as wh:
            findings = _has(wh.con, "report_findings")
            if finding_kind and not findings:
                raise ForensicsError("no findings yet: `forensics report` writes them to the warehouse")
            where, params = ["true"], []
            if agent:
                where.append("s.format = ?")
                params.append(agent)
            for key, value in (
                ("c.model", model),
                ("coalesce(c.working_dir, c.project)", project),
                ("c.git_branch", branch),
            ):
                if value:
                    where.append(f"{key} ILIKE ?")
                    params.append(f"%{value}%")
            if outcome:
                where.append(OUTCOMES[outcome])
            if finding_kind:
                where.append("c.conversation_id IN (SELECT conversation_id FROM report_findings WHERE kind = ?)")
                params.append(finding_kind)
            counted = (
                "(SELECT count(*) FROM report_findings f WHERE f.conversation_id = c.conversation_id)"
                if findings
                else "NULL"
            )
            kinds = (
                "(SELECT string_agg(DISTINCT kind, ', ' ORDER BY kind) FROM report_findings f "
                "WHERE f.conversation_id = c.conversation_id)"
                if findings
                else "NULL"
            )
            df = frame(
                wh.con,
                f"""
                SELECT c.conversation_id, c.native_id, s.format AS agent, c.model, coalesce(c.working_dir, c.project) AS project,
                       c.git_branch AS branch,
                       c.created_at,
                       c.message_count AS messages,
                       CASE WHEN o.success THEN 'passed' WHEN NOT o.success THEN 'failed' END AS outcome,
                       {counted} AS findings, {kinds} AS finding_kinds, c.title
                FROM conversations c JOIN sources s USING (source_id)
                     LEFT JOIN conversation_outcomes o USING (conversation_id)
                WHERE {" AND ".join(where)}
                ORDER BY c.created_at DESC NULLS LAST, c.native_id""",
                params,
            )
        return _rows(df, max(1, min(limit, ROWS)))

    @tool
    def show_run(run: str, position: int | None = None, before: int = 5, after: int = 10, width: int = 300) -> str:
        """The messages of one run (conversation_id or native_id) from `before` messages before `position` to
        `after` after it, `width` characters of each, as `forensics show` prints them. Without a position a failed
        run opens at its decisive step (the last report's), any other at its start."""
        if position is None:
            return show_messages(db, run, None if _has_step(run) else f"0-{max(0, min(after, AROUND))}", width)
        lo = max(0, position - max(0, min(before, AROUND)))
        return show_messages(db, run, f"{lo}-{position + max(0, min(after, AROUND))}", max(20, min(width, 5000)))

    def _has_step(run: str) -> bool:
        read = analyzers.view("decisive_step")
        if read is None:
            return False
        with warehouse() as wh:
            ids = wh.con.execute(
                "SELECT conversation_id FROM conversations WHERE conversation_id = ? OR native_id = ?", [run, run]
            ).fetchall()
            return len(ids) == 1 and read(wh.con, ids[0][0]) is not None

    @tool
    def what_went_wrong(limit: int = 15) -> str:
        """The last report's failure clusters (runs sharing a failure signature, largest first, with the lift of
        failing and its 95 % interval) and its failed runs at their decisive step (position, agent, the rule that
        chose it, the step's text): the failures analyzer's `what_went_wrong` view."""
        read = analyzers.view("what_went_wrong")
        if read is None:
            raise ForensicsError("this build has no failures analyzer")
        with warehouse() as wh:
            clusters, runs = read(wh.con, max(1, min(limit, 100)), max(1, min(limit, 100)), 400)
        if not clusters and not runs:
            return _json(
                {
                    "clusters": [],
                    "runs": [],
                    "note": "no failure clusters: `forensics report` finds them when runs have outcomes",
                }
            )
        return _json({"clusters": clusters, "runs": runs})

    @tool
    def run_findings(run: str) -> str:
        """One run's findings from the last report (section, kind, severity, the positions that prove it, summary,
        rule and the norm it was held against) and its decisive step when it failed (the failures analyzer's
        `decisive_step` view)."""
        with warehouse() as wh:
            ids = wh.con.execute(
                "SELECT conversation_id, native_id FROM conversations WHERE conversation_id = ? OR native_id = ?",
                [run, run],
            ).fetchall()
            if not ids:
                raise ForensicsError(f"no run {run!r}; list_runs names them")
            if len(ids) > 1:
                raise ForensicsError(
                    f"{run!r} matches {len(ids)} runs; use a conversation_id: " + ", ".join(i[0] for i in ids)
                )
            cid = ids[0][0]
            found = (
                frame(
                    wh.con,
                    "SELECT section, kind, severity, positions, summary, rule, among FROM "
                    "report_findings WHERE conversation_id = ? ORDER BY section, kind, positions",
                    [cid],
                )
                if _has(wh.con, "report_findings")
                else None
            )
            read = analyzers.view("decisive_step")
            step = read(wh.con, cid) if read is not None else None
        out: dict[str, Any] = {"conversation_id": cid, "native_id": ids[0][1]}
        out["decisive_step"] = (
            None if step is None else {"position": step[0], "agent": step[1], "rule": step[2], "why": step[3]}
        )
        out["findings"] = [] if found is None else mask_frame(found).to_dicts()
        if found is None:
            out["note"] = "no findings yet: `forensics report` writes them to the warehouse"
        return _json(out)

    def usage_table(by: str = "agent,model") -> str:
        """Runs, tokens (input, cached, cache writes, output), cost in USD at the shipped dated prices, tool error
        rate, compactions and success rate, grouped `by` a comma-separated list of agent, model, project (the
        working folder), branch (git), day (docs/usage.md)."""
        return _rows(usage(by))

    usage_table.__name__ = "usage"
    tool(usage_table)

    @tool
    def query(sql: str) -> str:
        """Read-only SQL (DuckDB) on the warehouse under the lock-down of `forensics query`: one SELECT-like
        statement, no file but the warehouse reachable, settings locked; secrets masked in the rows. Tables:
        conversations, messages, tool_calls, message_usage, sources, conversation_outcomes, report_findings, ..."""
        return _rows(read_only_sql(db, sql))

    return server


def serve(db: str | os.PathLike[str], cfg: Config, usage: Callable[[str], pl.DataFrame]) -> None:
    """Serve ``db`` over stdio until the client closes the pipe."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ForensicsError("`forensics mcp` needs the MCP SDK: pip install 'forensics[mcp]'") from None
    build(db, cfg, usage).run("stdio")
