"""Turn parsed messages of either shape (OpenAI or Anthropic) into columnar batches for the warehouse.

Parsing runs in worker processes, so everything here is plain Python over dicts and lists, and the output
is a set of polars frames that DuckDB ingests without a row loop (``forensics.kernel.arrow``). Sizes (chars, bytes) are computed by
DuckDB on insert, not here. A message's text may arrive still JSON-escaped (``JsonText``, from the fast
decoder in ``fastpath.py``): it travels as bytes and polars unescapes the batch's texts at once in the worker
(``duckparse.unescape``), so the hot path never builds a Python string for the bulk of the corpus.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import re
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.values import epoch
from forensics.kernel.secret_rules import mask
from forensics.warehouse.origin import origin_of
from forensics.warehouse.own_words import handed_over, own_words

if TYPE_CHECKING:
    import polars as pl

ROLE_ALIASES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "tool_result": "tool",
}
ERROR_START = re.compile(r"\s*(?:error\b|错误|失败|fatal\b|traceback\b)", re.IGNORECASE)
# A line of a tool's output that gives the command's exit status, as the tools write it: Codex ("Process exited
# with code 2", "Exit code: 1"), Gemini CLI's shell tool ("Exit Code: 1"), OpenHands ("[The command completed
# with exit code 1.]", "[Command finished with exit code 1]"). -1 is no status (OpenHands: still running).
EXIT_LINE = (
    r"\[?(?:process exited with code|exit code:|exit status:|the command completed with exit code|"
    r"command finished with exit code) ?(-?\d+)\.?\]?"
)
EXIT_STATUS = re.compile(rf"^[ \t]*{EXIT_LINE}[ \t]*$", re.IGNORECASE | re.MULTILINE)
# every form of EXIT_LINE says "exit"; what IGNORECASE reads as it, lower-cased by str.lower (tests/test_fastpath.py)
EXIT_WORD = re.compile("exit", re.IGNORECASE)
EXIT_LOWER = ("exit", "ex\u0131t", "exi\u0307t")
EXIT_STATUS_JSON = re.compile(rf"(?:^\"|\\n)[ \t]*{EXIT_LINE}[ \t]*(?=\\n|\"$)".encode(), re.IGNORECASE)
RAW_CAP = 1 << 20  # quarantine keeps at most 1 MiB of a record's raw bytes


class BadRecord(ValueError):
    """A record that cannot become a message; its message is the quarantine reason."""


class JsonText(bytes):
    """A JSON string literal exactly as in the source (quotes and escapes included), valid UTF-8 and free of
    ``\\u`` escapes; the worker turns a batch of them into text (``duckparse.unescape``: polars' JSON reader)."""

    def text(self) -> str:
        return str(orjson.loads(bytes(self)))


def plain(content: str | JsonText) -> str:
    """The text of a message, decoding a ``JsonText`` (only for the few messages that need it in Python)."""
    return content.text() if isinstance(content, JsonText) else content


@dataclass(slots=True)
class Message:
    role: str
    content: str | JsonText
    calls: list[tuple[str | None, str | None, str]]  # (call id, name, arguments JSON)
    results: list[tuple[str | None, str, bool]]  # Anthropic tool_result blocks: (tool_use_id, text, is_error)
    tool_call_id: str | None
    is_error: bool
    ts: float | None
    origin: str | None = None  # whose turn (forensics.warehouse.origin) when the format says; None: classified
    name: str | None = None  # a tool message without a call id: the tool it names (its call is found by name)
    about: str | None = None  # ... and an argument value it echoes (a path), which tells calls of one tool apart
    speaker: str | None = None  # the author's name where the format gives one (OpenAI chat ``name``): messages.name


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic GC while a batch is built: its columns only grow, so every collection would scan them
    again for nothing (parsing creates no cycles)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def split_lines(data: bytes) -> list[bytes]:
    """JSONL lines of a file's bytes; a final newline ends the last line rather than starting an empty one."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def chain(tip: Any, parent_of: Mapping[Any, Any]) -> list[Any]:
    """The main path of a parent-linked tree: from the root down to ``tip`` (the message the user last saw,
    or the newest leaf, see ``leaves``). Cycle-safe; a parent that is not a key (a root, a lost parent)
    ends it. Every format that walks such a tree walks it here."""
    path, seen = [], set()
    while isinstance(tip, Hashable) and tip in parent_of and tip not in seen:
        seen.add(tip)
        path.append(tip)
        tip = parent_of[tip]
    return path[::-1]


def leaves(parent_of: Mapping[Any, Any]) -> list[Any]:
    """The nodes no other node names as its parent, in the mapping's order."""
    has_child = {p for p in parent_of.values() if isinstance(p, Hashable)}
    return [n for n in parent_of if n not in has_child]


def read_object(raw: bytes) -> tuple[Any, str]:
    """A JSONL line (or a record) as a JSON object, and "", or what it is and the reason it is not one, in
    the words every format quarantines it with: empty line, invalid JSON or UTF-8, JSON nested too deeply,
    not a JSON object (a JSON array, a JSON string...)."""
    if not raw.strip():
        return None, "empty line"
    try:
        obj = values.loads(raw)
    except orjson.JSONDecodeError as e:
        return None, values.json_reason(e)
    return obj, "" if isinstance(obj, dict) else f"not a JSON object (a {kind(obj)})"


def kind(obj: Any) -> str:
    """A JSON value's kind, as quarantine reasons name it."""
    return {list: "JSON array", str: "JSON string", type(None): "JSON null", bool: "JSON boolean"}.get(
        type(obj), "JSON number"
    )


def stable_id(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def source_key(fmt: str, resolved_path: str, options: str = "{}") -> str:
    """A source's id: the same file read by another importer or with other options is another source."""
    return stable_id(fmt, resolved_path, options)


to_epoch = epoch  # seconds since the epoch from a number or an ISO-8601 string; None (counted) when unusable


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text(b.get("text")) if isinstance(b, dict) else str(b)
            for b in content
            if not isinstance(b, dict) or b.get("type", "text") == "text"
        )
    return "" if content is None else json_text(content)


def _key(v: Any) -> str | None:
    """An id or a name as text (a log may hold a number there, or anything)."""
    return v if isinstance(v, str) else str(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _args(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json_text(v) if v is not None else ""


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def json_text(v: Any) -> str:
    """JSON text of a decoded value (integers beyond 64 bits, which orjson refuses, through the standard library)."""
    try:
        return orjson.dumps(v).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(v, default=str, ensure_ascii=False)


def normalize(m: Any) -> Message:
    """One message dict of either shape → Message; raises BadRecord with the reason."""
    if not isinstance(m, dict):
        raise BadRecord(f"message is a JSON {type(m).__name__}, not an object")
    raw_role = m.get("role")
    role = ROLE_ALIASES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        raise BadRecord("message has no role" if raw_role is None else f"unknown role {str(raw_role)[:40]!r}")
    text, calls, results, role = interpret_content(m.get("content"), role)
    tool_calls = m.get("tool_calls")
    for c in tool_calls if isinstance(tool_calls, list) else ():
        if isinstance(c, dict):
            function = c.get("function")
            f = function if isinstance(function, dict) else c
            calls.append((_key(c.get("id")), _key(f.get("name")), _args(f.get("arguments"))))
    return finish(
        role,
        text,
        calls,
        results,
        m.get("is_error"),
        answered(role, m.get("tool_call_id"), m.get("id")),
        m.get("timestamp", m.get("created_at", m.get("createdAt"))),
        name=m.get("name"),
        speaker=m.get("name"),
    )


Calls = list[tuple[str | None, str | None, str]]
Results = list[tuple[str | None, str, bool]]


def interpret_content(content: Any, role: str) -> tuple[str, Calls, Results, str]:
    """A message's decoded ``content`` → (text, tool_use calls, tool_result blocks, role after them)."""
    calls: Calls = []
    results: Results = []
    if isinstance(content, list):
        texts = []
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text":
                texts.append(_text(b.get("text")))
            elif kind == "tool_use":
                calls.append((_key(b.get("id")), _key(b.get("name")), _args(b.get("input"))))
            elif kind == "tool_result":
                text = _block_text(b.get("content"))
                results.append((_key(b.get("tool_use_id")), text, bool(b.get("is_error")) or failed_exit(text)))
            elif isinstance(b, str):
                texts.append(b)
        text = "\n".join(texts)
        if results and not texts and role == "user":
            role = "tool"  # Anthropic: a user turn carrying only tool results is the tool's message
        if role == "tool" and results and not texts:
            text = "\n".join(r[1] for r in results)
    elif isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        text = json_text(content)
    return text, calls, results, role


def answered(role: str, tool_call_id: Any, own_id: Any) -> Any:
    """The id of the call a message answers: its ``tool_call_id``; a tool message without one names its
    call by its ``id`` in tau2-bench (``ToolMessage.id``: "the unique identifier for the tool call"). An id
    that is no call's leaves the result unlinked, counted."""
    return tool_call_id if tool_call_id is not None or role != "tool" else own_id


def finish(
    role: str,
    text: str | JsonText,
    calls: Calls,
    results: Results,
    flag: Any,
    tcid: Any,
    stamp: Any,
    origin: str | None = None,
    name: Any = None,
    about: Any = None,
    speaker: Any = None,
) -> Message:
    """The Message from its interpreted parts: shared by ``normalize``, the fast decoder and the format
    modules (``model``). A tool message is an error when the format says so (``flag``), when its output
    gives a non-zero exit status, or (the format silent) when it opens like an error. ``speaker``: who wrote it,
    as the format names the author (a multi-agent chat's agent; for a tool message, the tool)."""
    if role != "assistant":
        calls = []  # only assistant turns call tools
    tool = role == "tool" and not results
    is_error = bool(flag) or (tool and failed_exit(text)) or (flag is None and tool and starts_like_error(text))
    return Message(
        role,
        text,
        calls,
        results,
        tcid if isinstance(tcid, str) else None,
        is_error,
        to_epoch(stamp),
        origin,
        _key(name) if tool else None,
        about if tool and isinstance(about, str) and about else None,
        _key(speaker),
    )


def failed_exit(text: str | JsonText) -> bool:
    """The output gives the command's exit status on a line of its own, and it is not 0 (see EXIT_LINE).
    Every form of that line says "exit", so the pattern is tried only at the start of a line that holds "exit" (ASCII
    case folded), in order: the first line it matches decides, as a search of the whole text would (it was a tenth
    of an import's CPU)."""
    if isinstance(text, JsonText):  # lines end at a \n escape; the first opens at the quote
        low = text.lower()  # a bytes pattern folds ASCII only
        line, a = -1, low.find(b"exit")
        while a >= 0:
            start = max(low.rfind(b"\\n", 0, a), 0)
            if start != line:
                line = start
                status = EXIT_STATUS_JSON.match(text, start)
                if status:
                    return int(status.group(1)) not in (0, -1)
            a = low.find(b"exit", a + 4)
        return False
    low_s = text.lower()
    if text.isascii():
        anchors: Iterator[int] = _finds(low_s, "exit")
    elif any(w in low_s for w in EXIT_LOWER):
        anchors = (m.start() for m in EXIT_WORD.finditer(text))  # IGNORECASE reads ı and İ as i
    else:
        return False
    line = -1
    for a in anchors:
        start = text.rfind("\n", 0, a) + 1
        if start != line:
            line = start
            m = EXIT_STATUS.match(text, start)
            if m:
                return int(m.group(1)) not in (0, -1)
    return False


def _finds(text: str, word: str) -> Iterator[int]:
    a = text.find(word)
    while a >= 0:
        yield a
        a = text.find(word, a + len(word))


JSON_SPACE_ESCAPES = b"ntrf"  # \n \t \r \f: escapes of characters that ``\s`` matches
ERROR_START_ASCII = re.compile(rb"\s*(?:error\b|fatal\b|traceback\b)", re.IGNORECASE)
ERROR_WINDOW = 10  # characters after the leading whitespace that decide ERROR_START ("traceback" + one)


def starts_like_error(text: str | JsonText) -> bool:
    """``ERROR_START`` on the text; on a JsonText, decided from its first bytes when they are plain ASCII."""
    if not isinstance(text, JsonText):
        return bool(ERROR_START.match(text))
    i, end = 1, len(text) - 1  # inside the quotes
    while i < end:
        if text[i] == 0x20:
            i += 1
        elif text[i] == 0x5C and text[i + 1] in JSON_SPACE_ESCAPES:
            i += 2
        else:
            break
    head = text[i : min(i + ERROR_WINDOW, end)]
    if head.isascii() and b"\\" not in head:
        return bool(ERROR_START_ASCII.match(head))
    return bool(ERROR_START.match(text.text()))


@dataclass(slots=True)
class Entry:
    """A message placed in its conversation: order in source, main-path position, tree links."""

    seq: int
    native_id: str
    parent_native_id: str | None
    position: int | None
    msg: Message


@functools.cache
def arrow_schemas() -> dict[str, pl.Schema]:
    """The batch tables' Arrow schemas, also module attributes (``MSG_SCHEMA``...), built on first use: listing
    the formats (`forensics formats`) imports every importer, and polars costs a tenth of a second at start-up."""
    import polars as pl

    return {
        "MSG_SCHEMA": pl.Schema(
            {
                "conversation_id": pl.String(),
                "seq": pl.Int32(),
                "position": pl.Int32(),
                "native_id": pl.String(),
                "parent_native_id": pl.String(),
                "role": pl.String(),
                "content": pl.String(),
                "content_json": pl.String(),
                "tool_call_count": pl.Int32(),
                "created_at": pl.Float64(),
                "tool_call_id": pl.String(),
                "origin": pl.String(),
                "name": pl.String(),
            }
        ),
        "CALL_SCHEMA": pl.Schema(
            {
                "conversation_id": pl.String(),
                "seq": pl.Int32(),
                "position": pl.Int32(),
                "call_index": pl.Int32(),
                "call_id": pl.String(),
                "name": pl.String(),
                "arguments": pl.String(),
                "result_seq": pl.Int32(),
                "result_position": pl.Int32(),
                "result_bytes": pl.Int32(),
                "is_error": pl.Boolean(),
            }
        ),
        "CONV_SCHEMA": pl.Schema(
            {
                "conversation_id": pl.String(),
                "native_id": pl.String(),
                "title": pl.String(),
                "provider": pl.String(),
                "model": pl.String(),
                "created_at": pl.Float64(),
                "updated_at": pl.Float64(),
                "message_count": pl.Int32(),
                "fingerprint": pl.String(),
            }
        ),
        "QUAR_SCHEMA": pl.Schema(
            {"location": pl.String(), "reason": pl.String(), "raw": pl.Binary(), "raw_bytes": pl.Int64()}
        ),
        "OUTCOME_SCHEMA": pl.Schema(
            {  # conversation_outcomes rows read from the log (docs/outcomes.md#where-outcomes-come-from)
                "conversation_id": pl.String(),
                "success": pl.Boolean(),
                "score": pl.Float64(),
                "detail": pl.String(),
            }
        ),
    }


def _schema(name: str) -> pl.Schema:
    return arrow_schemas()[name]


def __getattr__(name: str) -> pl.Schema:
    if name not in (
        "MSG_SCHEMA",
        "CALL_SCHEMA",
        "CONV_SCHEMA",
        "QUAR_SCHEMA",
        "OUTCOME_SCHEMA",
    ):  # the import system asks for __path__ and such: no polars for those
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return arrow_schemas()[name]


@dataclass
class Batch:
    """Columnar output of one parse task, plus what was read."""

    conv: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n in _schema("CONV_SCHEMA").names()})
    msg: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n in _schema("MSG_SCHEMA").names()})
    call: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n in _schema("CALL_SCHEMA").names()})
    quar: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n in _schema("QUAR_SCHEMA").names()})
    outcome: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n in _schema("OUTCOME_SCHEMA").names()})
    rows_read: int = 0
    messages_read: int = 0
    notes: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    unlinked: Counter[str] = field(default_factory=Counter)  # tool results linked to no call, by reason
    ids: Counter[str] = field(default_factory=Counter)  # conversation id -> times added (a repeat is kept apart)

    def quarantine(self, location: str, reason: str, raw: bytes) -> None:
        q = self.quar
        q["location"].append(location)
        q["reason"].append(reason)
        q["raw"].append(raw[:RAW_CAP])
        q["raw_bytes"].append(len(raw))

    def add_outcome(self, cid: str, success: bool | None, score: float | None, detail: dict[str, Any]) -> None:
        """The run's outcome as its log records it (one per conversation; the loader replaces older ones)."""
        for col, v in zip(_schema("OUTCOME_SCHEMA").names(), (cid, success, score, json_text(detail))):
            self.outcome[col].append(v)

    def add_conversation(
        self,
        cid: str,
        native_id: str,
        title: str | None,
        provider: str | None,
        model: str | None,
        created_at: float | None,
        updated_at: float | None,
        fingerprint: str,
        entries: list[Entry],
        named_by: list[Entry] | None = None,
    ) -> None:
        """Append one conversation: its row, its messages, its tool calls linked to their results. Without a
        ``title`` it is named by the first words of ``named_by`` (default: all its entries).

        This runs once per message of the corpus: columns are appended through bound methods and tuples,
        not per-column dict lookups. An id added before (a log that repeats a conversation's id: a SQLite table
        without a key, a dialogue file) is made distinct, counted: never two rows for one id, nor two
        messages at one position.
        """
        first = "" if title is not None else _first_words(entries if named_by is None else named_by)
        stamps = [e.msg.ts for e in entries if e.msg.ts is not None]
        cid = self.conversation(
            cid,
            native_id,
            first if title is None else title,
            title is None,
            provider,
            model,
            created_at if created_at is not None else min(stamps, default=None),
            updated_at if updated_at is not None else max(stamps, default=None),
            len(entries),
            fingerprint,
        )
        m = self.msg
        (a_cid, a_seq, a_pos, a_nid, a_parent, a_role, a_text, a_json, a_ncalls, a_ts, a_tcid, a_origin, a_name) = (
            m[n].append for n in _schema("MSG_SCHEMA").names()
        )
        k = self.call
        k_cols = [k[n].append for n in _schema("CALL_SCHEMA").names()]
        by_id: dict[str, int] = {}  # call id -> row in self.call
        by_name: dict[str | None, list[int]] = {}  # tool name -> its calls' rows (for results without ids)
        for e in entries:
            g = e.msg
            a_cid(cid)
            a_seq(e.seq)
            a_pos(e.position)
            a_nid(e.native_id)
            a_parent(e.parent_native_id)
            a_role(g.role)
            if type(g.content) is JsonText:
                a_text(None)
                a_json(g.content)
            else:
                a_text(g.content)
                a_json(None)
            a_ncalls(len(g.calls))
            a_ts(g.ts)
            a_tcid(g.tool_call_id or (g.results[0][0] if g.results else None))
            a_origin(g.origin)
            a_name(g.speaker)
            for i, (call_id, name, args) in enumerate(g.calls):
                row = len(k["seq"])
                for add, v in zip(k_cols, (cid, e.seq, e.position, i, call_id, name, args, None, None, None, None)):
                    add(v)
                if call_id:
                    by_id[call_id] = row
                by_name.setdefault(name, []).append(row)
            if g.results:  # tool_result blocks answer their calls whatever the role: Claude Code 2.1.x writes what
                # the person typed while a tool ran in the line of that tool's result (a user message, its text theirs)
                for use_id, text, err in g.results:
                    self._link(self._by_id(by_id, use_id), e, len(text.encode("utf-8")), err)
            elif g.role == "tool":
                if g.tool_call_id:  # the text's size comes from DuckDB
                    self._link(self._by_id(by_id, g.tool_call_id), e, None, g.is_error)
                else:
                    self._link(self._by_name(by_name, g.name, g.about), e, None, g.is_error)

    def conversation(
        self,
        cid: str,
        native_id: str,
        title: str | None,
        from_text: bool,
        provider: str | None,
        model: str | None,
        created_at: float | None,
        updated_at: float | None,
        messages: int,
        fingerprint: str,
    ) -> str:
        """Append a conversation's row and return its id, made distinct when it was added before. ``from_text``:
        ``title`` is its first user text that is not blank (or ""), of which the first line is the title."""
        self.ids[cid] += 1
        if self.ids[cid] > 1:
            cid = stable_id(cid, str(self.ids[cid]))
        if from_text:
            title = mask((title or "").strip().split("\n", 1)[0])[:80] or None  # cut after masking: no key fragment
        for col, v in zip(
            _schema("CONV_SCHEMA").names(),
            (cid, native_id, title, provider, model, created_at, updated_at, messages, fingerprint),
        ):
            self.conv[col].append(v)
        return cid

    def _by_id(self, by_id: dict[str, int], call_id: str | None) -> int | str:
        """The row of the call with this id, or why there is none."""
        row = by_id.get(call_id) if call_id else None
        if row is None:
            return "an id no call has" if call_id else "neither a call id nor a tool name"
        return row if self.call["result_seq"][row] is None else "the id of a call already answered"

    def _by_name(self, by_name: dict[str | None, list[int]], name: str | None, about: str | None) -> int | str:
        """The one open call of the tool a result names (of those whose arguments hold the value it echoes),
        among the calls of the last message that made any; or why there is none."""
        if not name:
            return "neither a call id nor a tool name"
        k = self.call
        rows = [r for r in by_name.get(name, ()) if k["result_seq"][r] is None]
        if about is not None:
            echoed = json.dumps(about, ensure_ascii=False)[1:-1]
            rows = [r for r in rows if echoed in (k["arguments"][r] or "")]
        if not rows:
            return "a tool name no open call has"
        last = [r for r in rows if k["seq"][r] == k["seq"][rows[-1]]]
        return last[0] if len(last) == 1 else "a tool name several open calls have"

    def _link(self, row: int | str, e: Entry, nbytes: int | None, err: bool) -> None:
        """Link the result in ``e`` to the call at ``row``; a reason instead leaves it unlinked, counted."""
        if isinstance(row, str):
            self.unlinked[row] += 1
            return
        k = self.call
        k["result_seq"][row], k["result_position"][row] = e.seq, e.position
        k["result_bytes"][row], k["is_error"][row] = nbytes, err

    def tables(self) -> dict[str, pl.DataFrame]:
        import polars as pl

        # JsonText is valid UTF-8 already (the decoder checked its record): built as bytes and cast to text in
        # Rust, no Python string is made for it.
        escaped = pl.Series("content_json", self.msg["content_json"], dtype=pl.Binary).cast(pl.String)
        msg: dict[str, Any] = {**self.msg, "content_json": escaped}
        cols = {"conv": self.conv, "msg": msg, "call": self.call, "quar": self.quar, "outcome": self.outcome}
        return {k: pl.DataFrame(v, schema=_schema(f"{k.upper()}_SCHEMA")) for k, v in cols.items()}


@dataclass
class Parsed:
    """What a worker sends back: polars frames plus counters (pickles cheaply)."""

    tables: dict[str, pl.DataFrame]
    rows_read: int
    messages_read: int
    notes: list[str]
    state: dict[str, Any]

    @classmethod
    def of(cls, b: Batch) -> Parsed:
        notes = list(b.notes)
        repeated = sum(n - 1 for n in b.ids.values() if n > 1)
        if repeated:
            notes.append(
                f"{repeated} conversations repeat the id of one before them: kept as distinct conversations "
                "(same native id)"
            )
        if b.unlinked:
            notes.append(
                f"{sum(b.unlinked.values())} tool results linked to no call (they carry "
                + ", ".join(f"{why} x{n}" for why, n in sorted(b.unlinked.items()))
                + ")"
            )
        return cls(b.tables(), b.rows_read, b.messages_read, notes, b.state)


def _first_words(entries: list[Entry]) -> str:
    """A conversation's title when its log names none: the first words the person typed (not a command's
    expansion, a template's body or the context an IDE put before them), else its first user text."""
    fallback = None
    for e in entries:
        if e.msg.role != "user":
            continue
        text = plain(e.msg.content)
        if (e.msg.origin or origin_of("user", text)) == "person" and (words := own_words(text)):
            return words
        if fallback is None and text.strip():
            fallback = handed_over(text) or text  # a plan handed over: the plan's first line, not the handover's
    return fallback or ""
