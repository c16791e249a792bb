"""What a format module hands back: conversations of plain dataclasses, turned into warehouse rows here.

A format module (built in, or a plug-in registered under the ``forensics.formats`` entry point) reads one
file and yields :class:`Conversation` objects; through the :class:`Log` it is given it counts the records
it reads, quarantines what it cannot map (raw bytes and a reason) and counts what it skips by kind. This
module does the rest the same way for every format: positions on the main path, tool calls linked to the
messages holding their results, usage and events rows, parent links, checked numbers and dates, and the
accounting ``messages_read = imported + quarantined + skipped`` (an event is a skipped record that was
kept in ``events``).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.records import (
    ROLE_ALIASES,
    Batch,
    Entry,
    Parsed,
    finish,
    read_object,
    split_lines,
    stable_id,
)
from forensics.warehouse.origin import ORIGINS

if TYPE_CHECKING:
    import polars as pl


@functools.cache
def arrow_schemas() -> dict[str, pl.Schema]:
    """The events and usage tables' Arrow schemas, also module attributes (``EVENT_SCHEMA``, ``USAGE_SCHEMA``),
    built on first use: `forensics formats` imports this module and should not load polars."""
    import polars as pl

    return {
        "EVENT_SCHEMA": pl.Schema(
            {
                "conversation_id": pl.String(),
                "seq": pl.Int32(),
                "position": pl.Int32(),
                "kind": pl.String(),
                "trigger": pl.String(),
                "pre_tokens": pl.Int64(),
                "post_tokens": pl.Int64(),
                "detail": pl.String(),
            }
        ),
        "USAGE_SCHEMA": pl.Schema(
            {
                "conversation_id": pl.String(),
                "seq": pl.Int32(),
                "position": pl.Int32(),
                "message_id": pl.String(),
                "request_id": pl.String(),
                "model": pl.String(),
                "input_tokens": pl.Int64(),
                "output_tokens": pl.Int64(),
                "cache_creation_input_tokens": pl.Int64(),
                "cache_read_input_tokens": pl.Int64(),
                "cache_creation_1h_input_tokens": pl.Int64(),
            }
        ),
    }


def __getattr__(name: str) -> pl.Schema:
    if name not in (
        "EVENT_SCHEMA",
        "USAGE_SCHEMA",
    ):  # the import system asks for __path__ and such: no polars for those
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return arrow_schemas()[name]


MAP_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, orjson.JSONEncodeError)


@dataclass
class ToolCall:
    """One call an assistant message makes; ``arguments`` as logged (a JSON string or any JSON value)."""

    name: str | None
    arguments: Any = None
    id: str | None = None


@dataclass
class Usage:
    """Tokens of one model response, in one meaning for every format: ``input_tokens`` excludes the input read
    from or written to the prompt cache (Anthropic's sense). A format whose count includes them (OpenAI's
    ``prompt_tokens``, Gemini's ``promptTokenCount``, litellm, OTel GenAI's ``gen_ai.usage.input_tokens``) hands
    it over as ``prompt_tokens`` instead, and the cache reads and writes are taken out of it here, once
    (``_input_tokens``). The tokens sent are then always input + cache read + cache write (docs/usage.md)."""

    input_tokens: Any = None
    prompt_tokens: Any = None
    output_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None
    cache_creation_1h_input_tokens: Any = None  # of the cache writes, those kept an hour (priced apart)
    message_id: str | None = None
    request_id: str | None = None
    model: str | None = None


@dataclass
class Turn:
    """One message. ``id``/``parent`` default to its index and the previous turn (a linear log; ``parent=""``
    starts a new root); ``main = False`` keeps it off the main path (an abandoned branch, a rolled-back
    turn). A tool message names the call it answers by its id in ``answers``; a format whose results carry
    no id gives the tool's name in ``tool`` (and in ``about`` an argument value the result echoes, such as a
    path), and the result is linked to the one open call they match; a result that matches none, or several,
    stays unlinked and is counted in the source's note. ``at`` is the timestamp as logged (seconds or
    milliseconds, or ISO-8601); ``is_error`` True/False as the format says (a non-zero exit status in the
    output marks an error all the same), None: guessed from the text (see ``records.finish``)."""

    role: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    answers: str | None = None
    is_error: bool | None = None
    at: Any = None
    id: str | None = None
    parent: str | None = None
    main: bool = True
    usage: list[Usage] = field(default_factory=list)  # the model responses that produced it (usually one)
    origin: str | None = (
        None  # person, harness or tool_result where the format says (docs/definitions.md#whose-turn-it-is); None: classified
    )
    tool: str | None = None
    about: str | None = None
    speaker: str | None = None  # the author's name where the format gives one (an agent of a group chat): messages.name


@dataclass
class Event:
    """Something that happened to the context (kind ``compaction``, ``summary``, ...), attached to the turn
    at index ``before`` (the first turn after it; None: after the last)."""

    kind: str
    before: int | None = None
    trigger: str | None = None
    pre_tokens: Any = None
    post_tokens: Any = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """How the run ended, as its log records it (docs/outcomes.md#where-outcomes-come-from): ``success`` (None: only a score is known), the
    ``score`` as recorded, and ``detail``: the field read (``by``), its raw ``value`` and the ``task`` key
    when the log names the task (runs of one task are compared by ``forensics diff --task``)."""

    success: bool | None
    score: float | None = None
    by: str = ""
    value: Any = None
    task: str | None = None


@dataclass
class Conversation:
    """One conversation; ``id`` is its native id, unique within the file. ``parent`` is the native id of
    the conversation that spawned it (a sub-agent), resolved among the conversations of the same format."""

    id: str
    turns: list[Turn] = field(default_factory=list)
    title: str | None = None
    provider: str | None = None
    model: str | None = None
    created: Any = None
    updated: Any = None
    parent: str | None = None
    events: list[Event] = field(default_factory=list)
    outcome: Outcome | None = None
    workdir: str | None = None  # the working folder the session ran in, as logged (Claude Code cwd, Codex cwd)
    branch: str | None = None  # the git branch the log names (Claude Code gitBranch, Codex session_meta.git.branch)


def read_side(path: Path) -> bytes:
    """The bytes of a file read beside a source (an index, a sidecar); OSError when it cannot be read or is
    no regular file: a FIFO named like a side file is never waited on (opened non-blocking, then checked)."""
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NONBLOCK)) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return f.read()


class Log:
    """What a format module reports besides conversations, for one file."""

    def __init__(self, path: str) -> None:
        self.path, self.name = path, Path(path).name
        self.rows = 0  # lines or records read (import_runs.rows_read)
        self.skipped: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()  # parts of records this format does not map (unknown fields, blocks)
        self.notes: list[str] = []
        self.error = ""  # set when nothing in the file is of this format: the source fails with it
        self.batch = Batch()

    def quarantine(self, location: str, reason: str, raw: bytes | str | Any) -> None:
        if not isinstance(raw, (bytes, str)):
            raw = dumps(raw)
        self.batch.quarantine(location, reason, raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)

    def ignore(self, kind: str) -> None:
        """A part of a record (a content block, a field) this format does not map; counted in the note."""
        self.ignored[kind] += 1

    def skip(self, kind: str, n: int = 1) -> None:
        """``n`` records of ``kind`` hold nothing this format maps (counted by kind in the run's note)."""
        if n > 0:
            self.skipped[kind] += n

    def json_lines(self, data: bytes) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
        """(line number, raw bytes, object) of each JSONL line that is a JSON object; the others (empty, not
        JSON, not an object) are quarantined. Every line counts as a row read."""
        for n, raw in enumerate(split_lines(data), 1):
            self.rows += 1
            raw = raw.rstrip(b"\r")
            obj, reason = read_object(raw)
            if reason:
                self.quarantine(f"{self.name}:{n}", reason, raw)
                continue
            yield n, raw, obj

    def json_document(self, data: bytes, null: Any = None) -> Any:
        """The file as one JSON value (one row read); None, quarantined whole, when it is not JSON. A file holding
        JSON ``null`` gives ``null`` (a reader passes ``[]`` to tell it from unreadable and fail it as another shape).
        A value in it nested too deep is NULLed and counted (``values.loads``): the file's other records are kept."""
        self.rows += 1
        try:
            value = values.loads(data, deep=True)
        except orjson.JSONDecodeError as e:
            self.quarantine(self.name, values.json_reason(e), data)
            return None
        return null if value is None else value

    def json_list(self, data: bytes, what: str) -> list[Any]:
        """The file as a JSON list (one row read); else [] and, when it is JSON of another shape, the error
        that fails the source (``what`` says what the file should hold)."""
        doc = self.json_document(data)
        if not isinstance(doc, list):
            if doc is not None:
                self.error = f"not {what}"
            return []
        return doc

    def objects(self, items: Any, where: str, what: str = "record") -> Iterator[tuple[int, str, dict[str, Any]]]:
        """(index, location, object) for each JSON object of a list; any other item is quarantined where it stands.
        The caller maps each inside ``guard`` (a generator cannot catch what its consumer raises)."""
        for i, v in enumerate(listed(items)):
            location = f"{where}[{i}]"
            if isinstance(v, dict):
                yield i, location, v
            else:
                self.quarantine(location, f"{what} is not a JSON object", v)

    @contextmanager
    def guard(self, location: str, raw: Any) -> Iterator[None]:
        """A record whose shape the module did not expect is quarantined instead of failing the file."""
        try:
            yield
        except MAP_ERRORS as e:
            self.quarantine(location, f"cannot map this record ({type(e).__name__}: {str(e)[:120]})", raw)


Reader = Callable[[str, Log], Iterable[Conversation]]


def parse(read: Reader, path: str, source_id: str) -> Parsed:
    """Worker: run a format module's reader over one file and build its rows."""
    log = Log(path)
    rows = _Rows()
    seen: set[str] = set()
    try:
        convs = list(read(path, log))
    except MAP_ERRORS as e:  # a shape the reader did not expect outside any record it guards: the file as one record
        with open(path, "rb") as f:
            log.quarantine(log.name, f"cannot map this file ({type(e).__name__}: {str(e)[:120]})", f.read(1 << 20))
        convs = []
    for conv in convs:
        with log.guard(f"{log.name}#{str(conv.id)[:60]}", _raw(conv)):
            native = str(conv.id)
            if native in seen:
                log.quarantine(f"{log.name}#{native[:60]}", f"duplicate conversation id {native[:40]!r}", _raw(conv))
                continue
            seen.add(native)
            _add(log, rows, conv, stable_id(source_id, native), native)
    b = log.batch
    b.rows_read = log.rows
    b.messages_read = len(b.msg["seq"]) + len(b.quar["location"]) + sum(log.skipped.values())
    b.state["skipped"] = sum(log.skipped.values())
    if log.error and not b.conv["conversation_id"]:
        b.state["error"] = log.error
    p = Parsed.of(b)
    p.tables["event"], p.tables["usage"] = rows.events.table(), rows.usage.table()
    p.notes.extend(log.notes)
    for label, counts in (("skipped", log.skipped), ("ignored", log.ignored)):
        if counts:
            p.notes.append(f"{label}: " + ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())))
    if rows.parents:
        p.state["parent_natives"] = rows.parents
    for key, found in (("workdirs", rows.workdirs), ("branches", rows.branches)):
        if found:
            p.state[key] = found
    return p


class _Rows:
    def __init__(self) -> None:
        schemas = arrow_schemas()
        self.events, self.usage = Columns(schemas["EVENT_SCHEMA"]), Columns(schemas["USAGE_SCHEMA"])
        self.parents: dict[str, str] = {}
        self.workdirs: dict[str, str] = {}
        self.branches: dict[str, str] = {}


def _add(log: Log, rows: _Rows, conv: Conversation, cid: str, native: str) -> None:
    entries: list[Entry] = []
    kept: list[int] = []  # index in conv.turns of each entry
    position, prev = 0, None
    for i, t in enumerate(conv.turns):
        role = ROLE_ALIASES.get(t.role) if isinstance(t.role, str) else None
        if role is None:
            log.quarantine(f"{log.name}#{native[:60]}[{i}]", f"unknown role {str(t.role)[:40]!r}", _raw(t))
            continue
        calls = [(_opt_str(c.id), _opt_str(c.name), _args(c.arguments)) for c in t.calls]
        msg = finish(
            role,
            t.text if isinstance(t.text, str) else _args(t.text),
            calls,
            [],
            t.is_error,
            _opt_str(t.answers),
            t.at,
            t.origin if t.origin in ORIGINS else None,
            t.tool,
            t.about,
            _opt_str(t.speaker),
        )
        nid = str(t.id) if t.id is not None else str(i)
        parent = (str(t.parent) or None) if t.parent is not None else prev  # "": a root
        entries.append(Entry(len(entries), nid, parent, position if t.main else None, msg))
        kept.append(i)
        position += t.main
        prev = nid
    title = conv.title if isinstance(conv.title, str) and conv.title.strip() else None
    fp = _digest(conv)  # not the file's size and time: a grown export leaves its old conversations unchanged
    log.batch.add_conversation(
        cid,
        native,
        title,
        _opt_str(conv.provider),
        _opt_str(conv.model),
        values.epoch(conv.created),
        values.epoch(conv.updated),
        fp,
        entries,
    )
    for e, i in zip(entries, kept):
        for u in conv.turns[i].usage:
            rows.usage.add(
                cid,
                e.seq,
                e.position,
                _opt_str(u.message_id),
                _opt_str(u.request_id),
                _opt_str(u.model),
                _input_tokens(u),
                *(
                    values.count(v)
                    for v in (
                        u.output_tokens,
                        u.cache_creation_input_tokens,
                        u.cache_read_input_tokens,
                        u.cache_creation_1h_input_tokens,
                    )
                ),
            )
    seq_of = {i: e for e, i in zip(entries, kept)}
    for ev in conv.events:
        target = (
            next((seq_of[i] for i in range(ev.before, len(conv.turns)) if i in seq_of), None)
            if isinstance(ev.before, int)
            else None
        )
        rows.events.add(
            cid,
            target.seq if target else None,
            target.position if target else None,
            str(ev.kind),
            _opt_str(ev.trigger),
            values.count(ev.pre_tokens),
            values.count(ev.post_tokens),
            dumps(ev.detail).decode(),
        )
    if conv.parent is not None and str(conv.parent) != native:
        rows.parents[cid] = str(conv.parent)
    if (workdir := _opt_str(conv.workdir)) is not None and workdir.strip():
        rows.workdirs[cid] = workdir
    if (branch := _opt_str(conv.branch)) is not None and branch.strip():
        rows.branches[cid] = branch
    if conv.outcome is not None:
        add_outcome(log.batch, cid, conv.outcome)


def add_outcome(b: Batch, cid: str, o: Outcome) -> None:
    """An outcome row, its score checked (a reward logged as text or as an odd value is kept only in ``detail``)."""
    score = values.number(o.score) if o.score is not None else None
    detail = {k: v for k, v in (("by", o.by), ("value", o.value), ("task", o.task)) if v not in (None, "")}
    b.add_outcome(cid, o.success if isinstance(o.success, bool) else None, score, detail)


def _input_tokens(u: Usage) -> int | None:
    """Input tokens without the cached ones: as given, or the prompt count less the cache reads and writes (less
    the reads only when the prompt count is smaller than both: a count that left the writes out)."""
    if u.prompt_tokens is None:
        return values.count(u.input_tokens)
    prompt = values.count(u.prompt_tokens)
    read, write = (values.count(v) or 0 for v in (u.cache_read_input_tokens, u.cache_creation_input_tokens))
    if prompt is None:
        return None
    return prompt - read - write if prompt >= read + write else prompt - read if prompt >= read else prompt


def _digest(conv: Conversation) -> str:
    """Changes when the conversation's messages do (a grown export re-imports only what changed)."""
    h = hashlib.blake2b(digest_size=10)
    for t in conv.turns:
        h.update(dumps([t.role, t.text, t.id, t.main, [(c.id, c.name) for c in t.calls], t.answers]))
    return h.hexdigest()


def _raw(obj: Any) -> bytes:
    return dumps(obj)


def _args(v: Any) -> str:
    if isinstance(v, str):
        return v
    return "" if v is None else dumps(v).decode()


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


class Columns:
    """Column lists for one table (a polars frame), filled row by row."""

    def __init__(self, schema: pl.Schema) -> None:
        self.schema = schema
        self.cols: list[list[Any]] = [[] for _ in schema.names()]

    def add(self, *row: Any) -> None:
        for col, v in zip(self.cols, row):
            col.append(v)

    def table(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(dict(zip(self.schema.names(), self.cols)), schema=self.schema)


def text_of(v: Any, kinds: tuple[str, ...] | None = ("text", "input_text", "output_text")) -> str:
    """The text of a content value as logs write it: a string, a list of strings or of ``{"type", "text"}``
    parts (only parts of ``kinds``, or untyped ones, count; every part with ``kinds=None``), or an object
    with ``text``; other JSON as JSON."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        out = []
        for part in v:
            if isinstance(part, str):
                out.append(part)
            elif (
                isinstance(part, dict)
                and isinstance(part.get("text"), str)
                and (kinds is None or part.get("type", "text") in kinds)
            ):
                out.append(part["text"])
        return "\n".join(out)
    if isinstance(v, dict) and isinstance(text := v.get("text"), str):
        return text
    return _args(v)


def listed(v: Any) -> list[Any]:
    """``v`` when it is a list, else an empty one (a field of another type in a log of another version: what
    it held is counted as a value dropped, so that records lost with it are said to be)."""
    if isinstance(v, list):
        return v
    if v is not None and v != "":
        values.bad("list of another type")
    return []


def mapping(v: Any) -> dict[str, Any]:
    """``v`` when it is an object, else an empty one."""
    return v if isinstance(v, dict) else {}


def dumps(v: Any) -> bytes:
    """JSON of any value a log held: objects of this module as their fields, integers beyond 64 bits (which
    orjson refuses) and other oddities through the standard library."""
    default = lambda o: o.__dict__ if hasattr(o, "__dict__") else str(o)  # noqa: E731
    try:
        return orjson.dumps(v, default=default, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(v, default=default, ensure_ascii=False).encode("utf-8", "replace")
