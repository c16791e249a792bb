"""Load parsed batches into the warehouse in bulk, deciding where transactions end.

A DuckDB statement costs milliseconds whatever its size, so parsed files are written many at a time (a
task's bundle: one set of statements for up to 64 files) and committed with their ``sources`` rows every
~256 MB of sources, not per file (a Claude Code folder holds thousands of small files). Bundles are written
as they arrive, not buffered: DuckDB's memory limit, not the group size, bounds what the loader holds, and
every COMMIT re-compresses the tables' last row groups, so commits are few. A source read in parts (a format with
``chunks``: a SQLite table, in chunks of rows) has its transaction to itself.
Either way every source lands whole or not at all. Workers hand back a :class:`Bundle` per task, its
files' tables already concatenated: pickling hundreds of small frames costs more than parsing them.
The tables are polars frames; DuckDB reads them through the Arrow C stream (``forensics.kernel.arrow``: no
pyarrow). ``polars`` is imported by its name: ``pl`` is a plan here.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import duckdb
import polars

from forensics.formats.kit import duckparse
from forensics.formats.kit.model import EVENT_SCHEMA, USAGE_SCHEMA
from forensics.formats.kit.records import OUTCOME_SCHEMA, Parsed
from forensics.formats.kit.values import EPOCH_MAX
from forensics.ingestion.accounting import TOTALS
from forensics.ingestion.mask import FINDS_SCHEMA, Finds, mask_tables
from forensics.kernel import secret_rules
from forensics.kernel.arrow import Stream, relation_frame, stream
from forensics.warehouse.core import set_memory_limit, utcnow
from forensics.warehouse.migrations import derived_text_columns
from forensics.warehouse.origin import origin_sql
from forensics.warehouse.own_words import own_words_sql
from forensics.warehouse.tool_errors import MARKED, empty_output_sql, error_source_sql, head_tail_sql, rules_sql

if TYPE_CHECKING:
    from forensics.ingestion.plan import Plan

GROUP_BYTES = 256 << 20  # whole-file sources per transaction
TEXT = "content"  # a JsonText (fastpath) arrives unescaped by the worker (duckparse.unescape)
DERIVED = ", ".join(derived_text_columns("text", "role").values())  # m004's columns, computed in the INSERT
ORIGIN = origin_sql("text", "role")  # m007: whose turn, where the format did not say
# m011: what a result's text says (docs/definitions.md#tool-errors), read from the batch beside the INSERT: the rules'
# gate (``tool_errors.MARKED``) tested by polars (``marked``), each text's head and tail cut once (``head_tail``)
RESULTS = (
    "SELECT conversation_id, seq, strlen(text) AS content_bytes, CASE WHEN role IN ('tool', 'user') THEN CASE WHEN "
    f"marked THEN {rules_sql('head_tail')} END END AS rule, "
    f"CASE WHEN role IN ('tool', 'user') THEN {empty_output_sql('text')} END AS empty "
    f"FROM (SELECT *, {TEXT} AS text, CASE WHEN marked THEN {head_tail_sql(TEXT)} END AS head_tail FROM _b_res)"
)
ERROR_SOURCE = error_source_sql("c.is_error", "m.rule", "m.empty", "c.name", "c.arguments")
OWN_WORDS = own_words_sql("text")  # m013: the person's own words in a person's message
DEFAULT_MEMORY_MB = 160  # with 4 MB parse tasks the whole ingest stays under 500 MB (bench, PSS)
TABLES = ("conv", "msg", "call", "quar", "event", "usage", "outcome", "secret")
LINKS = (
    "parents",
    "parent_natives",
    "projects",
    "workdirs",
    "branches",
)  # Parsed.state keys per conversation: columns of conversations
# only some formats have these
EMPTY = {
    k: polars.DataFrame(schema=s)
    for k, s in (
        ("event", EVENT_SCHEMA),
        ("usage", USAGE_SCHEMA),
        ("outcome", OUTCOME_SCHEMA),
        ("secret", FINDS_SCHEMA),
    )
}
RUN_COLUMNS = ("run_id", "source_id", "path", "format", "status", "started_at", "finished_at", *TOTALS, "note")


@dataclass
class FileResult:
    """One parsed source of a bundle: its counters and row counts; its rows are in the bundle's tables."""

    rows_read: int
    messages_read: int
    notes: list[str]
    state: dict[str, Any]
    convs: list[tuple[str, str]]  # (conversation id, fingerprint)
    msg_rows: int
    quar_rows: int


@dataclass
class Bundle:
    """The sources of one parse task: one table of each kind for all of them, and each one's result (or the
    one-line error that fails it)."""

    tables: dict[str, polars.DataFrame] | None
    files: list[FileResult | str]
    spilled: str | None = None  # where spill() put the tables

    def spill(self, folder: str) -> Bundle:
        """Worker side: move the tables into Arrow IPC files in ``folder`` (/dev/shm) before the result is
        sent: pickling them through the pipe cost ~10 % of a million-message import."""
        if self.tables:
            self.spilled = os.path.join(folder, uuid.uuid4().hex)
            for name, table in self.tables.items():
                table.write_ipc(f"{self.spilled}.{name}.arrow", compression="uncompressed")
            self.tables = cast("dict[str, polars.DataFrame]", dict.fromkeys(self.tables))  # sent empty
        return self

    def unspill(self) -> Bundle:
        """Loader side: the tables back (read by polars); the files are unlinked at once."""
        if self.spilled and self.tables:
            for name in self.tables:
                path = f"{self.spilled}.{name}.arrow"
                self.tables[name] = polars.read_ipc(path)
                os.unlink(path)
            self.spilled = None
        return self


def bundle(results: list[tuple[Parsed | str, str]], keep_secrets: bool = False) -> Bundle:
    """Worker side: (parsed file or its error, source id) pairs → one Bundle, source ids on the rows, secrets
    masked (unless ``keep_secrets``) and their finds in the bundle's ``secret`` table."""
    parts: dict[str, list[polars.DataFrame]] = {n: [] for n in TABLES}
    files: list[FileResult | str] = []
    conv_sources: list[str] = []
    quar_sources: list[str] = []
    parents: list[str | None] = []
    natives: list[str | None] = []  # the parent's native id, for a parent in another file (see resolve_parents)
    projects: list[str | None] = []
    workdirs: list[str | None] = []
    branches: list[str | None] = []
    for p, source_id in results:
        if isinstance(p, str):
            files.append(p)
            continue
        if not keep_secrets:
            _mask_side(p, source_id)
        t = p.tables
        ids = t["conv"]["conversation_id"].to_list()
        links, by_native = p.state.get("parents", {}), p.state.get("parent_natives", {})
        parents.extend(links.get(c) for c in ids)
        natives.extend(by_native.get(c) for c in ids)
        projects.extend(p.state.get("projects", {}).get(c) for c in ids)
        workdirs.extend(p.state.get("workdirs", {}).get(c) for c in ids)
        branches.extend(p.state.get("branches", {}).get(c) for c in ids)
        conv_sources.extend([source_id] * len(ids))
        quar_sources.extend([source_id] * t["quar"].height)
        for n in TABLES:
            parts[n].append(t[n] if n in t else EMPTY[n])
        files.append(
            FileResult(
                p.rows_read,
                p.messages_read,
                p.notes,
                {k: v for k, v in p.state.items() if k not in LINKS},
                list(zip(ids, t["conv"]["fingerprint"].to_list())),
                t["msg"].height,
                t["quar"].height,
            )
        )
    if not parts["conv"]:
        return Bundle(None, files)
    tables = {n: polars.concat(v, rechunk=True) for n, v in parts.items()}  # one chunk pickles fast
    tables["conv"] = tables["conv"].with_columns(
        polars.Series("source_id", conv_sources, dtype=polars.String),
        polars.Series("parent_conversation_id", parents, dtype=polars.String),
        polars.Series("parent_native_id", natives, dtype=polars.String),
        polars.Series("project", projects, dtype=polars.String),
        polars.Series("working_dir", workdirs, dtype=polars.String),
        polars.Series("git_branch", branches, dtype=polars.String),
    )
    tables["quar"] = tables["quar"].with_columns(polars.Series("source_id", quar_sources, dtype=polars.String))
    tables["msg"] = duckparse.unescape(tables["msg"])  # plain text before masking: its filter reads text
    return Bundle(tables if keep_secrets else _mask_bundle(tables), files)


def _mask_side(p: Parsed, source_id: str) -> None:
    """A parsed file's side tables and notes with their secrets masked (its finds in its ``secret`` table);
    its main tables are masked with the whole bundle's (``_mask_bundle``)."""
    finds = Finds()
    if "tables" in p.state:
        p.state["tables"] = mask_tables(p.state["tables"], finds, {}, source_id, names={})
    p.notes = [secret_rules.mask(n) for n in p.notes]
    p.tables["secret"] = finds.table()


def _mask_bundle(tables: dict[str, polars.DataFrame]) -> dict[str, polars.DataFrame]:
    """The bundle's tables with their secrets masked, the finds added to its ``secret`` table."""
    finds = Finds()
    conv = tables["conv"]
    source_of = dict(zip(conv["conversation_id"].to_list(), conv["source_id"].to_list()))
    out = mask_tables({k: t for k, t in tables.items() if k != "secret"}, finds, source_of)
    out["secret"] = polars.concat([tables["secret"], finds.table()])
    return out


class Loader:
    """Receives the parse tasks' bundles in source order; writes each at once, commits in groups."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str, keep_secrets: bool = False) -> None:
        self.con, self.run_id, self.keep_secrets = con, run_id, keep_secrets
        self.open = False  # a transaction of whole-file sources is open
        self.ready: list[Plan] = []  # sources recorded at the next flush (written, or with nothing to parse)
        self.bytes = 0
        self.chunked: Plan | None = None  # the source read in parts whose transaction is open

    def add(self, b: Bundle, tag: list[tuple[Plan, bool, int]]) -> None:
        """One task's results; ``tag`` names each result's source and whether it is the source's last."""
        ok = []
        for (pl, last, _), f in zip(tag, b.files):
            if pl.result.status == "failed":  # an earlier part of this source failed
                continue
            if isinstance(f, str):
                self.fail(pl, f)
            else:
                ok.append((pl, last, f))
        if not ok:
            return
        pl, last, f = ok[0]
        if pl.chunked:  # a part of a source: tasks never mix it with other sources
            if self.chunked is None:
                self.flush()
                self.con.execute("BEGIN TRANSACTION")
                self.chunked = pl
            self._write([cast("dict[str, polars.DataFrame]", b.tables)], [(pl, f)])
            if last:
                self._finish_chunked(pl)
            return
        if not self.open:  # whole files: written as they come, committed with their sources' rows at flush
            self.con.execute("BEGIN TRANSACTION")
            self.open = True
        self._write([cast("dict[str, polars.DataFrame]", b.tables)], [(pl, f) for pl, _, f in ok])
        for pl, _, _ in ok:
            self.ready.append(pl)
            self.bytes += pl.todo_bytes
        if self.bytes >= GROUP_BYTES:
            self.flush()

    def add_empty(self, pl: Plan) -> None:
        """A source with nothing to parse (an empty table, every row unchanged): recorded, nothing written."""
        self.ready.append(pl)

    def fail(self, pl: Plan, message: str) -> None:
        if self.chunked is pl:
            self.con.execute("ROLLBACK")
            self.chunked = None
        pl.result.fail(message)

    def flush(self) -> None:
        if not self.ready and not self.open:
            return
        if not self.open:
            self.con.execute("BEGIN TRANSACTION")
        if self.ready:
            self._record(self.ready)
        self.con.execute("COMMIT")
        self.open, self.ready, self.bytes = False, [], 0

    def close(self, others: list[Plan]) -> None:
        """Write what is buffered, and a run row for each source that was not re-read, failed or was superseded
        (one stored by an earlier run loses its conversations: ``retire``)."""
        self.flush()
        if others:
            self.con.execute("BEGIN TRANSACTION")
            for pl in others:
                if pl.retire and pl.result.source_id:
                    pl.result.retired(retire(self.con, pl.result.source_id))
            _insert_runs(self.con, self.run_id, others, self.keep_secrets)
            self.con.execute("COMMIT")
        resolve_parents(self.con)

    def _finish_chunked(self, pl: Plan) -> None:
        if pl.found == 0:
            self.fail(pl, f"{pl.result.path}: {pl.if_none_found or 'no part holds messages'}")
            return
        self._record([pl])
        self.con.execute("COMMIT")
        self.chunked = None

    def _write(self, bundles: list[dict[str, polars.DataFrame]], items: list[tuple[Plan, FileResult]]) -> None:
        con = self.con
        owner: dict[str, Plan] = {}  # stored conversation id -> the source re-importing it
        for pl, f in items:
            _count(pl, f, owner)
        # Batches reach SQL through replacement scans (the names below are these locals): a registered Arrow
        # table stays referenced after unregister in DuckDB 2.x, which kept every batch of a run in memory.
        b = {n: polars.concat([t[n] for t in bundles]) if len(bundles) > 1 else bundles[0][n] for n in TABLES}
        _b_conv, _b_msg, _b_call, _b_quar, _b_event, _b_usage, _b_outcome, _b_secret = (  # noqa: F841
            stream(b[n]) for n in TABLES
        )
        if owner:
            self._replace(owner, _b_msg)
        con.execute(
            "INSERT INTO conversations (conversation_id, source_id, native_id, title, provider, model, "
            "created_at, updated_at, message_count, fingerprint, parent_conversation_id, parent_native_id, "
            "project, working_dir, git_branch) SELECT conversation_id, source_id, native_id, title, provider, model, "
            f"{_ts('created_at')}, {_ts('updated_at')}, message_count, fingerprint, "
            "parent_conversation_id, parent_native_id, project, working_dir, git_branch FROM _b_conv"
        )
        con.execute(
            "INSERT INTO messages SELECT conversation_id, seq, position, native_id, parent_native_id, "
            "position IS NOT NULL, role, text, length(text), strlen(text), tool_call_count, "
            f"{_ts('created_at')}, tool_call_id, {DERIVED}, origin, name, "
            f"CASE WHEN origin = 'person' THEN {OWN_WORDS} END "
            f"FROM (SELECT * REPLACE (coalesce(origin, {ORIGIN}) AS origin) FROM (SELECT *, {TEXT} AS text FROM _b_msg))"
        )
        # each stored message's size and what a result's text says, for the tool calls (their result size where
        # the parser left it to DuckDB, their error): the same text read again from the batch, not from the table
        res = b["msg"].select("conversation_id", "seq", "role", TEXT, marked=b["msg"][TEXT].str.contains(MARKED))
        _b_res = stream(res)  # noqa: F841
        _sizes = stream(relation_frame(con.sql(RESULTS)))  # noqa: F841
        # arguments are JSON (queries read them with json_extract): a tool whose input is plain text (Codex's
        # apply_patch, aider's edits) or a model's malformed JSON is kept as a JSON string; an error is the
        # format's flag or a content rule's (forensics.warehouse.tool_errors), a search without a match none
        con.execute(
            "INSERT INTO tool_calls SELECT conversation_id, seq, position, call_index, call_id, name, "
            "arguments, result_seq, result_position, result_bytes, "
            "CASE WHEN error_source IS NOT NULL THEN true WHEN flagged IS NOT NULL THEN false END, error_source "
            "FROM (SELECT c.conversation_id, c.seq, c.position, c.call_index, c.call_id, "
            "c.name, CASE WHEN c.arguments IS NULL OR json_valid(c.arguments) THEN c.arguments "
            "ELSE to_json(c.arguments) END AS arguments, c.result_seq, c.result_position, "
            "coalesce(c.result_bytes, CASE WHEN c.result_seq IS NOT NULL THEN m.content_bytes END) "
            f"AS result_bytes, CASE WHEN c.result_seq IS NOT NULL OR c.is_error THEN {ERROR_SOURCE} END "
            "AS error_source, c.is_error AS flagged FROM _b_call c LEFT JOIN _sizes m "
            "ON m.conversation_id = c.conversation_id AND m.seq = c.result_seq)"
        )
        # a statement costs a millisecond or two whatever its rows: one over a batch's empty table (most formats
        # have no events, usage, outcomes, quarantined lines or secrets) is not run, nothing to insert or delete
        for table, key, name, schema in (
            ("events", "event", "_b_event", EVENT_SCHEMA),
            ("message_usage", "usage", "_b_usage", USAGE_SCHEMA),
        ):
            if b[key].height:
                cols = ", ".join(schema.names())
                con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
        # an outcome read from the log never overrides one the user imported from a labels file (docs/outcomes.md#where-outcomes-come-from)
        if b["outcome"].height:
            con.execute(
                "INSERT INTO conversation_outcomes SELECT conversation_id, success, score, 'log', detail "
                "FROM _b_outcome WHERE conversation_id NOT IN (SELECT conversation_id FROM conversation_outcomes)"
            )
        whole = [pl.result.source_id for pl, _ in items if not pl.chunked]
        if whole:  # a file is re-read whole: its quarantine and its finds are replaced
            con.execute("DELETE FROM quarantine WHERE source_id IN (SELECT unnest(?::VARCHAR[]))", [whole])
            con.execute(
                "DELETE FROM secrets_found WHERE source_id IN (SELECT unnest(?::VARCHAR[])) "
                "AND field <> 'sources.path'",
                [whole],
            )
        for pl, _ in items:  # read in parts: only the parts re-read (rows, by location) lose their old entries
            if pl.chunked and b["quar"].height:
                con.execute(
                    "DELETE FROM quarantine WHERE source_id = ? AND split_part(location, '[', 1) IN "
                    "(SELECT split_part(location, '[', 1) FROM _b_quar)",
                    [pl.result.source_id],
                )
            if pl.chunked and (b["conv"].height or b["quar"].height):
                con.execute(
                    "DELETE FROM secrets_found WHERE source_id = ? AND (conversation_id IN (SELECT "
                    "conversation_id FROM _b_conv) OR split_part(location, '[', 1) IN "
                    "(SELECT split_part(location, '[', 1) FROM _b_quar))",
                    [pl.result.source_id],
                )
        if b["secret"].height:
            con.execute(
                f"INSERT INTO secrets_found ({', '.join(FINDS_SCHEMA.names())}) "
                f"SELECT {', '.join(FINDS_SCHEMA.names())} FROM _b_secret"
            )
        if b["quar"].height:
            con.execute(
                "INSERT INTO quarantine SELECT source_id, ?, location, reason, raw, raw_bytes FROM _b_quar",
                [self.run_id],
            )
        for pl, f in items:  # tables a source owns beside its conversations (decisions): replaced whole
            for name, side in f.state.get("tables", {}).items():
                _b_side = stream(side)  # noqa: F841 - read by the scan below
                con.execute(f"DELETE FROM {name} WHERE source_id = ?", [pl.result.source_id])
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _b_side")

    def _replace(self, owner: dict[str, Plan], _b_msg: Stream) -> None:
        """Count the re-imported conversations' identical messages, then drop their old rows."""
        con = self.con
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _b_old AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [list(owner)]
        )
        same = con.execute(
            f"SELECT m.conversation_id, count(*) FROM messages m JOIN (SELECT *, {TEXT} AS text "
            "FROM _b_msg) s ON m.conversation_id = s.conversation_id AND m.seq = s.seq "
            "AND m.role = s.role AND m.content = s.text "
            "WHERE m.conversation_id IN (SELECT conversation_id FROM _b_old) GROUP BY 1"
        ).fetchall()
        for cid, n in same:
            owner[cid].result.same_messages(n)
        for tbl in ("messages", "tool_calls", "events", "message_usage", "conversations"):
            con.execute(f"DELETE FROM {tbl} WHERE conversation_id IN (SELECT conversation_id FROM _b_old)")
        con.execute(
            "DELETE FROM conversation_outcomes WHERE source = 'log' AND conversation_id IN "
            "(SELECT conversation_id FROM _b_old)"
        )

    def _record(self, plans: list[Plan]) -> None:
        """The sources' rows (identity, hash, size and mtime for the next unchanged check) and run rows."""
        con = self.con
        con.execute(
            "DELETE FROM sources WHERE source_id IN (SELECT unnest(?::VARCHAR[]))",
            [[pl.result.source_id for pl in plans]],
        )
        now = utcnow()
        paths = [pl.resolved for pl in plans]
        if not self.keep_secrets:  # a key in a file name: the path is stored masked, the find recorded
            finds = Finds()
            for k, pl in enumerate(plans):
                found = secret_rules.scan(paths[k])
                finds.add(pl.result.source_id or "", "sources.path", found)
                paths[k] = secret_rules.mask(paths[k], found)
            _b_paths = stream(finds.table())  # noqa: F841 - read by the replacement scan below
            con.execute(
                "DELETE FROM secrets_found WHERE field = 'sources.path' AND source_id IN (SELECT unnest(?::VARCHAR[]))",
                [[pl.result.source_id for pl in plans]],
            )
            con.execute(
                f"INSERT INTO secrets_found ({', '.join(FINDS_SCHEMA.names())}) "
                f"SELECT {', '.join(FINDS_SCHEMA.names())} FROM _b_paths"
            )
            _mask_runs(con, [pl.result.source_id for pl in plans])
        rows = {
            "source_id": [pl.result.source_id for pl in plans],
            "path": paths,
            "format": [pl.result.format for pl in plans],
            "sha256": [pl.hasher.result() if pl.hasher else pl.sha256 for pl in plans],
            "size": [pl.size for pl in plans],
            "mtime_ns": [pl.mtime_ns for pl in plans],
            "options": [pl.options for pl in plans],
            "imported_at": [now] * len(plans),
        }
        _b_src = stream(polars.DataFrame(rows))  # noqa: F841 - read by the replacement scan below
        con.execute(f"INSERT INTO sources ({', '.join(rows)}) SELECT {', '.join(rows)} FROM _b_src")
        _insert_runs(con, self.run_id, plans, self.keep_secrets)


def retire(con: duckdb.DuckDBPyConnection, source_id: str) -> int:
    """Remove a stored source and everything read from it (a transcript another one now holds whole); returns how
    many conversations it had."""
    ((n,),) = con.execute("SELECT count(*) FROM conversations WHERE source_id = ?", [source_id]).fetchall()
    owned = "SELECT conversation_id FROM conversations WHERE source_id = ?"
    for tbl in ("messages", "tool_calls", "events", "message_usage", "conversation_outcomes"):
        con.execute(f"DELETE FROM {tbl} WHERE conversation_id IN ({owned})", [source_id])
    for tbl in ("conversations", "quarantine", "secrets_found", "sources"):
        con.execute(f"DELETE FROM {tbl} WHERE source_id = ?", [source_id])
    return int(n)


def resolve_parents(con: duckdb.DuckDBPyConnection) -> None:
    """Link sub-agent conversations whose parent lives in another file (a Codex or Gemini CLI sub-agent names
    its parent session by id): the parent is the conversation of that native id read by the same importer.
    Run after every ingest, so a parent imported later than its children is linked then."""
    con.execute(
        "UPDATE conversations c SET parent_conversation_id = p.conversation_id FROM conversations p, "
        "sources ps, sources cs WHERE c.parent_conversation_id IS NULL AND c.parent_native_id IS NOT NULL "
        "AND p.native_id = c.parent_native_id AND ps.source_id = p.source_id "
        "AND cs.source_id = c.source_id AND ps.format = cs.format AND p.conversation_id != c.conversation_id"
    )


def tune(con: duckdb.DuckDBPyConnection, largest_task: int = 0) -> None:
    """DuckDB settings for a bulk load, on this connection only.

    ``memory_limit`` makes DuckDB write finished row groups to the file while a transaction is still open
    instead of holding a whole source in memory until COMMIT (bounded by the machine, ``FORENSICS_DUCKDB_MEMORY``
    overrides it: ``warehouse.machine``).
    It grows with the largest parse task (``largest_task`` bytes: one huge row or file is one task), so a
    120 MB message still fits: memory is bounded by the largest conversation, not the corpus.
    ``zstd_min_string_length``: DuckDB considers zstd only for strings averaging 4 KB, so message text
    (~650 bytes here) was stored uncompressed and the file was 1.7 x its source; from 64 bytes on, zstd
    competes with DuckDB's other methods and wins for text (ids and roles keep their dictionaries).
    Rows need not keep insertion order: every reader sorts.
    """
    set_memory_limit(con, max(DEFAULT_MEMORY_MB, 4 * (largest_task >> 20)))
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET zstd_min_string_length = 64")


def _count(pl: Plan, f: FileResult, owner: dict[str, Plan]) -> None:
    pl.found += f.state.get("found", 0)
    pl.if_none_found = pl.if_none_found or f.state.get("if_none_found", "")
    pl.sha256 = f.state.get("sha256", pl.sha256)
    pl.result.parsed(
        None if pl.chunked else f.rows_read,  # a chunked source counts its rows when it plans its parts
        f.messages_read,
        f.state.get("skipped", 0),
        f.notes,
        f.quar_rows,
        f.msg_rows,
    )
    for cid, fp in f.convs:
        old = pl.stored.get(cid)
        if old is not None:
            owner[cid] = pl
        pl.result.conversation(old, fp)


def _insert_runs(con: duckdb.DuckDBPyConnection, run_id: str, plans: list[Plan], keep_secrets: bool) -> None:
    """The run's rows; paths and notes masked (a key in a file name is recorded once, as its source's path)."""
    now = utcnow()
    cols: dict[str, list[Any]] = {c: [] for c in RUN_COLUMNS}
    for pl in plans:
        r = pl.result
        if keep_secrets:
            r.secrets_kept(KEPT)
        else:
            r.mask()
        row = r.row()  # source_id, path, format, status, the counters, the note
        for c, v in zip(RUN_COLUMNS, (run_id, *row[:4], pl.started_at, now, *row[4:]), strict=True):
            cols[c].append(v)
    _b_runs = stream(polars.DataFrame(cols))  # noqa: F841  (read by name)
    con.execute(f"INSERT INTO import_runs ({', '.join(RUN_COLUMNS)}) SELECT {', '.join(RUN_COLUMNS)} FROM _b_runs")


KEPT = "secrets kept (--keep-secrets): this source's text is stored as read"


def _mask_runs(con: duckdb.DuckDBPyConnection, source_ids: list[str | None]) -> None:
    """Earlier run rows of sources read again with masking (kept before, or stored before masking existed)."""
    rows = con.execute(
        "SELECT DISTINCT path, note FROM import_runs WHERE source_id IN (SELECT unnest(?::VARCHAR[]))", [source_ids]
    ).fetchall()
    for path, note in rows:
        masked = secret_rules.mask(path), secret_rules.mask(note) if note else note
        if masked != (path, note):
            con.execute(
                "UPDATE import_runs SET path = ?, note = ? WHERE path = ? AND note IS NOT DISTINCT FROM ? "
                "AND source_id IN (SELECT unnest(?::VARCHAR[]))",
                [*masked, path, note, source_ids],
            )


def _ts(col: str) -> str:
    # parsers check their dates (values.epoch, counted); the range test keeps a plug-in's bad date from
    # failing the statement, and with it every source of the transaction
    return f"CASE WHEN {col} > 0 AND {col} < {EPOCH_MAX} THEN make_timestamp(CAST({col} * 1000000 AS BIGINT)) END"
