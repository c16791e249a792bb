"""The hostile-input corpus (issue 27, part 7): every format's fixtures mutated, deterministically.

``python tests/hostile_corpus.py OUT`` writes the corpus under OUT and lists its cases; the test
(``tests/test_hostile_corpus.py``) builds it in a temporary folder and ingests every case. A case is one file
(with the files its format reads beside it, copied from the fixture's folder) or one thing that is no regular
file (a FIFO, a socket, a device, a symbolic-link loop). The mutations are those an attacker or a broken
disk produces: a file cut in half, bytes flipped, invalid UTF-8, records or values nulled, values of the
wrong type (an object for a role, ``"²"`` for a token count), numbers beyond a double or a 64-bit integer,
a value nested 10,000 deep, a line of a few MB, every record twice (duplicate ids), an empty file. SQLite
sources get their own: column types swapped, text as blobs, cells nulled, rows duplicated in a table
without a key, one cell nested 10,000 deep, the file cut or flipped. Issue 45 adds the cases of the mutation
sweep (``tests/mutations.py``) that damage one record in the middle of a file, for every format: a 5,000-digit
number or numeric string, a 40-digit integer, the record nulled or its values nulled, a list or an object where
a string belongs, a string where a list belongs, a lone surrogate (escaped, or raw bytes), a NUL (escaped, or
raw), a value 10,000 deep, and for SQLite one row of swapped types, nulled, of raw surrogate bytes, of
JSON mutated so; and a byte-order mark, the last line cut. None of these may fail the source (``ONE_RECORD``).
Nothing here is random: the same fixtures give the same corpus.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
DEPTH = 10_000
BIG = 3 << 20  # a line of 3 MB (the attack used 50 MB; a few MB exercise the same paths and keep CI fast)
HUGE = "__HUGE_NUMBER__"  # json.dumps cannot write 1e400: the text replaces this marker
WITH_SIDES = {"cline", "continue", "claude-code", "terminal-bench"}  # formats that read files beside the source
WRONG = [{"$": "object"}, ["list"], "²", True, 2**70]

# the sweep's classes kept here (its 1 MB value is left to the sweep: the corpus's own big-value has it); the
# SQLite ones are named "row-..." beside the corpus's whole-column ones
RECORD_CLASSES = (
    "bom",
    "truncated-last-line",
    "digits-5000",
    "digits-5000-string",
    "int-40",
    "null-record",
    "null-values",
    "list-for-string",
    "object-for-string",
    "string-for-list",
    "surrogate-escape",
    "surrogate-raw",
    "nul-escape",
    "nul-raw",
    "deep-10000",
)
ONE_RECORD = {*RECORD_CLASSES} - {"truncated-last-line"} | {
    "row-swapped-types",
    "row-null-record",
    "row-digits-5000",
    "row-int-40",
    "row-digits-5000-json",
    "row-list-for-string",
    "row-null-values-json",
    "row-list-for-string-json",
    "row-string-for-list-json",
    "row-surrogate-escape-json",
    "row-surrogate-raw",
    "row-deep-10000",
    "row-nul-raw",
}  # a case of these that fails its source is a problem (one bad record fails nothing but itself)

# (format, fixture file): one or two files of each format; the files beside each are copied with it
SOURCES = [
    ("dialogues", "labels/three.dialogues.jsonl"),
    ("claude-code", "claude_code/-home-dev-api/429a57e4-6e34-5d68-8372-f06ad41124c5.jsonl"),
    (
        "codex",
        "agents/codex/sessions/2025/10/29/rollout-2025-10-29T09-00-00-8a7e6413-a5cd-5d80-80f8-cc1428270d13.jsonl",
    ),
    ("gemini-cli", "agents/gemini/tmp/9f3c1b7a2e/chats/session-2026-02-10T14-30-59ed9645.jsonl"),
    ("gemini-cli", "agents/gemini/tmp/9f3c1b7a2e/chats/session-2025-09-01T10-00-8e2ea8b2.json"),
    ("aider", "agents/aider/.aider.chat.history.md"),
    ("openhands", "agents/openhands/trajectory-calc.json"),
    ("openhands", "agents/openhands/eval/output.jsonl"),
    (
        "swe-agent",
        "agents/swe_agent/trajectories/dev/default__claude-sonnet-4__t-0.00/swe-agent__test-repo-i1/"
        "swe-agent__test-repo-i1.traj",
    ),
    ("mini-swe-agent", "agents/mini_swe_agent/swebench/local-count/local-count.traj.json"),
    ("cline", "agents/cline/saoudrizwan.claude-dev/tasks/1730000000000/api_conversation_history.json"),
    ("chatgpt", "agents/chatgpt/export/conversations.json"),
    ("claude-ai", "agents/claude_ai/export/conversations.json"),
    ("open-webui", "agents/open_webui/data/webui.db"),
    ("inspect", "agents/inspect/logs/2025-05-20T09-00-00+00-00_arithmetic_old.json"),
    ("inspect", "agents/inspect/logs/2025-11-03T12-00-00+00-00_arithmetic_abc123.eval"),
    ("otel", "agents/otel/otlp/traces.json"),
    ("otel", "agents/otel/phoenix/spans.jsonl"),
    ("continue", "agents/continue/sessions/c3d2f27a-2f95-581e-bc63-8bcc36f8521c.json"),
    ("cursor", "agents/cursor/User/globalStorage/state.vscdb"),
    ("tau2", "outcomes/tau2/2025-08-10T02-44-06.496849_telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json"),
    ("openai", "openai/traces.jsonl"),
    ("sharegpt", "openai/sharegpt.json"),
    ("jsonl", "sessions/sess_0974a9ce8167.jsonl"),
    ("sqlite", "sqlite/realistic.db"),
    ("decision-memory", "memory/harness.db"),
    ("mint", "outcomes/mint/claude-2/F=None/max5_p2+tool+cd/reasoning/math/results.jsonl"),
    ("agentbench", "outcomes/agentbench/gpt-4o-mini/medagentbench-std/overall.json"),
    (
        "terminal-bench",
        "agents/terminal_bench/2025-07-01__12-00-00/hello-world/hello-world.1-of-1.2025-07-01__12-00-00/results.json",
    ),
    ("copilot-cli", "agents/copilot_cli/session-state/6b1f3c2a-0d4e-4f5a-9b6c-7d8e9f0a1b2c/events.jsonl"),
    ("qwen-code", "agents/qwen_code/projects/-home-dev-shop/chats/3d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d.jsonl"),
    ("opencode", "agents/opencode/opencode.db"),
    ("opencode", "agents/opencode/export/ses_0a1b2c3d4e5f.json"),
    ("claude-code-otel", "agents/claude_code_otel/otlp-logs.json"),
    ("goose", "agents/goose/sessions/sessions.db"),
    ("goose", "agents/goose/sessions/20250612_143000.jsonl"),
    ("atif", "agents/atif/jobs/2026-10-01__12-00-00/fix-git__Xy7Qa2/agent/trajectory.json"),
    (
        "kimi-cli",
        "agents/kimi_cli/sessions/5f4e3d2c1b0a99887766554433221100/2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091/wire.jsonl",
    ),
    # issue 42: a fork and a continuation of a Claude Code session (the session they copy lies beside them), a Codex
    # rollout whose person turns are partly only events, Claude Code's 2026 OTel export with raw API bodies
    (
        "claude-code",
        "built/claude_code_resumed/.claude/projects/-home-dev-ledger/d26b3e4f-6a7b-4c8d-9e0f-1a2b3c4d5e6f.jsonl",
    ),
    (
        "claude-code",
        "built/claude_code_resumed/.claude/projects/-home-dev-ledger/3240e317-05c7-4101-9375-18a3544dd18e.jsonl",
    ),
    (
        "codex",
        "built/codex_events/.codex/sessions/2025/11/20/"
        "rollout-2025-11-20T10-00-03-019a1f3c-8e2d-7b41-a5c6-3d9e0f1a2b4c.jsonl",
    ),
    ("claude-code-otel", "built/claude_code_otel_2026/collector/claude-code-logs.jsonl"),
    ("openhands", "real/openhands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl"),
    ("aider", "real/aider/tom-doerr+simple_test_project/custom_aider_history.md"),
    (
        "terminal-bench",
        "built/terminal_bench/2025-08-07__20-46-16/count-log-lines/"
        "count-log-lines.1-of-1.2025-08-07__20-46-16/results.json",
    ),
    # issue 42 item 4: the new agent families' real files
    ("pi", "real/pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl"),
    ("openclaw", "real/openclaw/Gracula-bot+Gracula/.openclaw/agents/main/sessions/model-test-kilocode.jsonl"),
    ("crush", "real/crush/dbos-inc+dbos-transact-golang/.crush/crush.db"),
    ("letta", "real/letta/letta-ai+agent-file/memgpt_agent/memgpt_agent_with_convo.af"),
    ("letta", "real/letta/letta-ai+agent-file/agents/@letta-ai/loop/loop.af"),
    ("letta", "real/letta/letta-ai+agent-file/workflow_agent/outreach_workflow_agent.af"),
    ("nanobot", "real/nanobot/niancpu+nanobot/.nanobot/workspace/sessions/cli_direct.jsonl"),
    ("moatless", "real/moatless/aorwall+moatless-tools/tests/trajectories/django__django-9296/trajectory.json"),
    ("hermes", "real/hermes/foodoaiprojects+hermes-agent/.hermes/sessions/session_20260421_163501_b244f5.json"),
    # stop 43: the first real files of Cursor, Continue, Open WebUI and OpenCode (an export past the sniff's head)
    ("cursor", "real/cursor/slevin48+cursor-history/state.vscdb"),
    ("continue", "real/continue/oleg121203+Developer/.continue/sessions/67733f7c-959d-4521-b326-779efe1967e7.json"),
    ("open-webui", "real/open_webui/apukone+self-hosted-ai-rag/webui.db"),
    (
        "opencode",
        "real/opencode/victoryforphil+dark-factory/docs/chats/opencode/"
        "session__quiet-meadow__ses_39c0a3da8ffeFQWvKTGUJWivpv.json",
    ),
]


@dataclass(frozen=True)
class Case:
    """One hostile input: ``path`` is the source to ingest; ``fmt`` the format it was made from."""

    name: str
    fmt: str
    path: Path
    special: bool = False  # not a regular file: refused in one line


# --- JSON values ---------------------------------------------------------------------------------------------


def _dump(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False).replace(json.dumps(HUGE), "1e400")


def _scalars(v: Any, rng: random.Random, fn: Callable[[Any, random.Random], Any], share: float) -> Any:
    """``v`` with about ``share`` of its scalars (and of its null-able containers) replaced by ``fn``."""
    if isinstance(v, dict):
        return {
            k: fn(x, rng) if rng.random() < share and not isinstance(x, (dict, list)) else _scalars(x, rng, fn, share)
            for k, x in v.items()
        }
    if isinstance(v, list):
        return [_scalars(x, rng, fn, share) for x in v]
    return v


def _wrong(v: Any, rng: random.Random) -> Any:
    return rng.choice([w for w in WRONG if type(w) is not type(v)])


def _huge(v: Any, rng: random.Random) -> Any:
    return rng.choice([HUGE, 2**70, -1e308]) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def _records(doc: Any) -> list:
    """The list a document keeps its records in: itself, or its longest list value (searched in depth)."""
    best: list = doc if isinstance(doc, list) else []

    def walk(v: Any) -> None:
        nonlocal best
        for x in v.values() if isinstance(v, dict) else v if isinstance(v, list) else ():
            if isinstance(x, list) and len(x) > len(best):
                best = x
            walk(x)

    walk(doc)
    return best


def _deep() -> str:
    return "[" * DEPTH + "]" * DEPTH


# --- text files (JSON documents, JSONL, Markdown) --------------------------------------------------------------


def _parse(data: bytes) -> tuple[Any, list[Any] | None]:
    """(the document, None) for one JSON document; (None, each line decoded or its raw text) for lines."""
    try:
        return json.loads(data), None
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    out: list[Any] = []
    for line in data.decode("utf-8", "replace").split("\n"):
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            out.append(_Raw(line))
    return None, out


class _Raw(str):
    """A line that is not JSON (Markdown, a blank line): written back as it is."""


def _write(doc: Any, lines: list[Any] | None) -> bytes:
    if lines is None:
        return _dump(doc).encode()
    return "\n".join(x if isinstance(x, _Raw) else _dump(x) for x in lines).encode()


def _text_mutations(data: bytes, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    yield "empty", b""
    yield "truncated", data[: len(data) // 2]
    flipped = bytearray(data)
    for i in sorted(rng.sample(range(len(data)), min(8, len(data)))):
        flipped[i] ^= 0xFF
    yield "flipped", bytes(flipped)
    mid = data.find(b'"', len(data) // 2)
    yield "invalid-utf8", data[: mid + 1] + b"\xff\xfe\xc3(" + data[mid + 1 :] if mid >= 0 else data + b"\xff"
    doc, lines = _parse(data)
    if lines is not None and all(isinstance(x, _Raw) for x in lines):  # Markdown: no JSON to mutate
        yield "big-line", data + b"\n" + b"x" * BIG + b"\n"
        return
    if lines is None:
        records = _records(doc)
        nulls = json.loads(json.dumps(doc))
        target = _records(nulls)
        target[:] = [None] * len(target) if target else []
        yield "null-records", _write(nulls if target or records else None, None)
        twice = json.loads(json.dumps(doc))
        t = _records(twice)
        t[:] = [x for x in t for _ in (0, 1)]
        yield "duplicate-ids", _write(twice, None)
    else:
        yield "null-records", b"\n".join(b"null" for _ in lines) + b"\n"
        yield "duplicate-ids", _write(None, [x for x in lines for _ in (0, 1)])
    for name, fn, share in (
        ("wrong-types", _wrong, 0.3),
        ("nulls", lambda v, r: None, 0.3),
        ("huge-numbers", _huge, 1.0),
    ):
        yield (
            name,
            _write(
                _scalars(doc, rng, fn, share),
                None if lines is None else [x if isinstance(x, _Raw) else _scalars(x, rng, fn, share) for x in lines],
            ),
        )
    text = _write(doc, lines).decode()
    at = text.find('"', len(text) // 2)  # a string value or key in the middle: replaced by a deep array
    end = text.find('"', at + 1)
    if at >= 0 and end > at and text[end + 1 : end + 2] != ":":
        yield "deep-nesting", (text[:at] + _deep() + text[end + 1 :]).encode()
    yield "big-value", (text[: at + 1] + "x" * BIG + text[at + 1 :]).encode() if at >= 0 else text.encode()


# --- SQLite databases ---------------------------------------------------------------------------------------


def _tables(con: sqlite3.Connection) -> list[tuple[str, list[tuple[str, str, bool]]]]:
    out = []
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        cols = [(r[1], (r[2] or "").upper(), bool(r[5])) for r in con.execute(f'PRAGMA table_info("{t}")')]
        out.append((t, cols))
    return out


def _sql_each(path: Path, fn: Callable[[sqlite3.Connection, str, list[tuple[str, str, bool]]], None]) -> None:
    con = sqlite3.connect(path)
    try:
        # a store's triggers (Crush keeps message counts with them) would refuse the mutations: the file loses them
        for (trigger,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            con.execute(f'DROP TRIGGER "{trigger}"')
        for table, cols in _tables(con):
            fn(con, table, cols)
        con.commit()
    finally:
        con.close()


def _swap_types(con: sqlite3.Connection, t: str, cols: list[tuple[str, str, bool]]) -> None:
    for c, _, key in cols:
        if not key:
            _try(
                con,
                f'UPDATE "{t}" SET "{c}" = CASE typeof("{c}") WHEN \'text\' THEN 12345 + rowid '
                f"WHEN 'integer' THEN '²' || rowid WHEN 'real' THEN 'soon' ELSE \"{c}\" END",
            )


def _try(con: sqlite3.Connection, sql: str) -> None:
    """An update that a constraint (UNIQUE, NOT NULL) refuses leaves the column as it was."""
    try:
        con.execute(sql)
    except sqlite3.IntegrityError:
        pass


def _blobs(con: sqlite3.Connection, t: str, cols: list[tuple[str, str, bool]]) -> None:
    for c, _, key in cols:
        if not key:
            _try(con, f'UPDATE "{t}" SET "{c}" = CAST("{c}" AS BLOB) || x\'ff\' WHERE typeof("{c}") = \'text\'')


def _null_cells(con: sqlite3.Connection, t: str, cols: list[tuple[str, str, bool]]) -> None:
    for c, _, key in cols:
        if not key:
            _try(con, f'UPDATE "{t}" SET "{c}" = NULL')


def _duplicate_rows(con: sqlite3.Connection, t: str, cols: list[tuple[str, str, bool]]) -> None:
    """The table without its key (nor any constraint), each row twice."""
    con.execute(f'CREATE TABLE "{t}__copy" AS SELECT * FROM "{t}"')
    con.execute(f'INSERT INTO "{t}__copy" SELECT * FROM "{t}"')
    con.execute(f'DROP TABLE "{t}"')
    con.execute(f'ALTER TABLE "{t}__copy" RENAME TO "{t}"')


def _deep_cell(con: sqlite3.Connection, t: str, cols: list[tuple[str, str, bool]]) -> None:
    """One JSON cell of the table (the first that holds a JSON array or object) nested 10,000 deep."""
    for c, _, key in cols:
        if key:
            continue
        row = con.execute(
            f'SELECT rowid FROM "{t}" WHERE typeof("{c}") = \'text\' AND '
            f"(substr(\"{c}\", 1, 1) IN ('[', '{{')) LIMIT 1"
        ).fetchone()
        if row:
            con.execute(f'UPDATE "{t}" SET "{c}" = ? WHERE rowid = ?', (_deep(), row[0]))
            return


SQLITE_MUTATIONS = {
    "swapped-types": _swap_types,
    "blobs": _blobs,
    "null-cells": _null_cells,
    "duplicate-rows": _duplicate_rows,
    "deep-cell": _deep_cell,
}


def _sqlite_cases(src: Path, place: Callable[[str], Path], rng: random.Random) -> Iterator[tuple[str, Path]]:
    data = src.read_bytes()
    for name, fn in SQLITE_MUTATIONS.items():
        target = place(name)
        _sql_each(target, fn)
        yield name, target
    for name, raw in (("truncated", data[: len(data) // 2]), ("flipped", _flip(data, rng, 64))):
        target = place(name)
        target.write_bytes(raw)
        yield name, target


def _flip(data: bytes, rng: random.Random, n: int) -> bytes:
    out = bytearray(data)
    for i in rng.sample(range(100, len(data)), min(n, len(data) - 100)):  # past the header: still "SQLite"
        out[i] ^= 0xFF
    return bytes(out)


# --- the corpus ----------------------------------------------------------------------------------------------


def copy_fixture(out: Path, n: int, fmt: str, name: str, src: Path) -> Path:
    """A copy of fixture ``n``'s folder (with its side files where the format reads them) for the case ``name``;
    the fixture's copy in it, to mutate."""
    folder = out / f"{n:02d}-{fmt}" / name / src.parent.name
    if fmt in WITH_SIDES:
        shutil.copytree(src.parent, folder)
    else:
        folder.mkdir(parents=True)
        shutil.copy2(src, folder)
    return folder / src.name


def build(out: Path, sources: list[tuple[str, str]] | None = None) -> list[Case]:
    """Write every case under ``out`` (which must not exist) and list them."""
    out.mkdir(parents=True)
    cases: list[Case] = []
    for n, (fmt, rel) in enumerate(sources or SOURCES):
        src = FIXTURES / rel
        rng = random.Random(f"{n}:{rel}")

        def place(name: str, src: Path = src, fmt: str = fmt, n: int = n) -> Path:
            return copy_fixture(out, n, fmt, name, src)

        from tests import mutations  # it reads this module's SOURCES: imported once both are defined

        if src.suffix in (".db", ".vscdb"):
            cases += [Case(name, fmt, p) for name, p in _sqlite_cases(src, place, rng)]
            for name, fn in mutations.SQLITE_MUTATIONS.items():
                if f"row-{name}" in ONE_RECORD:
                    target = place(f"row-{name}")
                    con = sqlite3.connect(target)
                    try:
                        fn(con, random.Random(f"{n}:{rel}:{name}"))
                        con.commit()
                    finally:
                        con.close()
                    cases.append(Case(f"row-{name}", fmt, target))
        elif src.suffix == ".eval":  # a zip: cut and flipped only (its members are JSON like the .json logs)
            data = src.read_bytes()
            for name, raw in (("truncated", data[: len(data) // 2]), ("flipped", _flip(data, rng, 16))):
                (target := place(name)).write_bytes(raw)
                cases.append(Case(name, fmt, target))
        else:
            for name, raw in _text_mutations(src.read_bytes(), rng):
                (target := place(name)).write_bytes(raw)
                cases.append(Case(name, fmt, target))
            for name, one in mutations.text_mutations(src.read_bytes(), random.Random(f"mutations:{n}:{rel}")):
                if name in RECORD_CLASSES and one is not None:
                    (target := place(name)).write_bytes(one)
                    cases.append(Case(name, fmt, target))
    return cases + specials(out / "special")


def specials(folder: Path) -> list[Case]:
    """Sources that are no regular file: a FIFO (named like each format's files, so every reader would be
    asked), a socket, a device, a symbolic-link loop, a dangling link; a folder holding a FIFO and a loop;
    folders where a side file a reader opens with its main file (Cline's ui_messages.json, Continue's
    sessions.json) is a FIFO."""
    folder.mkdir(parents=True)
    cases = []
    for name in ("fifo.jsonl", "conversations.json", "x.traj", "state.vscdb", "fifo.md"):
        os.mkfifo(folder / name)
        cases.append(Case("fifo", "auto", folder / name, True))
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(folder / "sock.jsonl"))
        cases.append(Case("socket", "auto", folder / "sock.jsonl", True))
    finally:
        sock.close()
    os.symlink("/dev/null", folder / "device.jsonl")
    cases.append(Case("device", "auto", folder / "device.jsonl", True))
    os.symlink("loop-b.jsonl", folder / "loop-a.jsonl")
    os.symlink("loop-a.jsonl", folder / "loop-b.jsonl")
    cases.append(Case("symlink-loop", "auto", folder / "loop-a.jsonl", True))
    os.symlink("nothing-here.jsonl", folder / "dangling.jsonl")
    cases.append(Case("dangling-link", "auto", folder / "dangling.jsonl", True))
    mixed = folder / "mixed"
    shutil.copytree(FIXTURES / "sessions", mixed)
    os.mkfifo(mixed / "pipe.jsonl")
    os.symlink("loop.jsonl", mixed / "loop.jsonl")
    cases.append(Case("folder-with-fifo-and-loop", "auto", mixed, True))
    for name, rel, side in (
        ("fifo-side-file", "agents/cline/saoudrizwan.claude-dev/tasks", "ui_messages.json"),
        ("fifo-index", "agents/continue/sessions", "sessions.json"),
    ):
        shutil.copytree(FIXTURES / rel, folder / name)  # a side file a reader opens with its main file
        for f in (folder / name).rglob(side):
            f.unlink()
            os.mkfifo(f)
        cases.append(Case(name, "auto", folder / name, True))
    return cases


# --- running it -----------------------------------------------------------------------------------------------

RAW_EXCEPTION = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Interrupt)\b:|Traceback")
LINE_LEVEL = re.compile(r"UTF-8|invalid JSON|not JSON|empty line|nested too deeply")  # kept as read, byte for byte
CASE_SECONDS = 60  # a case that takes longer hangs (a FIFO read would block for ever): a hang guard, not a speed
# limit, so wide enough for a CI machine under load (a report here took >120 s at load 16 on 2 cores)
HANG_SECONDS = 900


@dataclass
class Outcome:
    case: Case
    how: str  # imported | quarantined | skipped | refused | a problem
    problem: str = ""


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the block after ``seconds`` (SIGALRM interrupts a blocking open or read)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def judge(r: Any, case: Case) -> tuple[str, str]:
    """(what happened to the source, "" or what is wrong) from its import result (``run.SourceResult``)."""
    if r.status == "failed":
        if "\n" in r.error or RAW_EXCEPTION.search(r.error):
            return "failed", f"not a one-line refusal: {r.error[:300]!r}"
        if case.name in ONE_RECORD:
            return "failed", f"one bad record failed the whole source: {r.error[:300]!r}"
        return "refused", ""
    if r.status not in ("imported", "unchanged", "unrecognised", "side", "empty"):
        return r.status, f"status {r.status!r}"
    if r.status == "empty":  # no bytes, or only blank lines: skipped and counted
        return "skipped", ""
    if r.status != "imported":
        return "refused" if r.status == "unrecognised" else r.status, ""
    accounted = r.messages_imported + r.messages_unchanged + r.quarantined + r.skipped
    if r.messages_read != accounted:
        return "imported", (
            f"{r.messages_read} messages read but {r.messages_imported} imported + "
            f"{r.quarantined} quarantined + {r.skipped} skipped"
        )
    if (
        case.path.is_file()
        and case.path.stat().st_size
        and not (accounted or r.conversations_new)
        and not (r.rows_read == 0 and r.note)
    ):  # a database with no table or key of its format says so
        return "imported", "imported with nothing imported, quarantined or skipped"
    return "quarantined" if r.quarantined else "imported" if r.messages_imported else "skipped", ""


def warehouse_problems(db: Path, originals: dict[str, bytes]) -> list[str]:
    """What the warehouse must never hold: two rows for one conversation id, two main-path messages at one
    position, bytes quarantined because they could not be read (not UTF-8, not JSON) that are not the source's
    own (``originals``: source id -> its bytes). A record that was read but cannot be mapped (an unknown role)
    may be kept as its JSON, re-serialized."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        out = [
            f"conversation {c} has {n} rows"
            for c, n in con.execute(
                "SELECT conversation_id, count(*) FROM conversations GROUP BY 1 HAVING count(*) > 1"
            ).fetchall()
        ]
        out += [
            f"conversation {c} has {n} messages at position {p}"
            for c, p, n in con.execute(
                "SELECT conversation_id, position, count(*) FROM messages WHERE position IS NOT NULL "
                "GROUP BY 1, 2 HAVING count(*) > 1"
            ).fetchall()
        ]
        for sid, where, why, raw, size in con.execute(
            "SELECT source_id, location, reason, raw, raw_bytes FROM quarantine"
        ).fetchall():
            data = originals.get(sid)
            if data is not None and raw and len(raw) == size and LINE_LEVEL.search(why) and bytes(raw) not in data:
                out.append(f"quarantined bytes at {where} are not the source's own")
        return out
    finally:
        con.close()


def run(cases: list[Case], work: Path, report_on: tuple[str, ...] = ()) -> list[Outcome]:
    """Ingest every case, each format's together with the format forced (its reader is what is tried), then
    all of them together auto-detected (the sniffs too); refuse the special files one at a time through the
    CLI (exit code and one line). ``report_on``: formats whose warehouse also gets a report."""
    from click.testing import CliRunner

    from forensics import api
    from forensics.cli import cli
    from forensics.ingestion.run import ingest

    out: list[Outcome] = []
    regular = [c for c in cases if not c.special]
    groups: dict[str, list[Case]] = {}
    for c in regular:
        groups.setdefault(c.fmt, []).append(c)
    runs = [(fmt, group, fmt) for fmt, group in groups.items()] + [("auto", regular, "auto")]
    for label, group, fmt in runs:
        db = work / f"{label}.duckdb"
        by_path = {str(c.path): c for c in group}
        try:
            with deadline(CASE_SECONDS * len(group)):
                result = ingest([c.path for c in group], db, fmt=fmt)
        except Exception as e:  # the whole group failed: every case of it is a problem
            out += [Outcome(c, "crashed", f"{label}: {type(e).__name__}: {e}"[:300]) for c in group]
            continue
        originals = {}
        for r in result.files:
            case = by_path.get(r.path)
            if case is None:
                continue
            how, problem = judge(r, case)
            out.append(Outcome(case, how, problem and f"{label}: {problem}"))
            if r.source_id and case.path.suffix not in (".db", ".vscdb", ".eval"):
                originals[r.source_id] = b"".join(f.read_bytes() for f in case.path.parent.rglob("*") if f.is_file())
        out += [
            Outcome(by_path[str(p)], "missing", f"{label}: no import result")
            for p in set(by_path) - {r.path for r in result.files}
        ]
        if db.exists():
            out += [Outcome(Case("warehouse", label, db), "warehouse", p) for p in warehouse_problems(db, originals)]
        if label in report_on and db.exists():
            try:
                with deadline(HANG_SECONDS):
                    api.report(db, work / f"{label}-report", formats=["json", "md"])
                out.append(Outcome(Case("report", label, db), "reported"))
            except Exception as e:
                out.append(Outcome(Case("report", label, db), "report", f"{type(e).__name__}: {e}"[:300]))
    for c in cases:
        if c.special:
            try:
                with deadline(CASE_SECONDS):
                    r = CliRunner().invoke(cli, ["ingest", str(c.path), "--db", str(work / "special.duckdb")])
            except TimeoutError as e:
                out.append(Outcome(c, "hung", str(e)))
                continue
            lines = r.stderr.strip().splitlines()
            ok = (
                r.exit_code == 0 and not lines
                if c.path.is_dir()
                # the folder's other files are imported
                else r.exit_code == 2 and len(lines) == 1 and "not a regular file" in lines[0]
            )
            out.append(
                Outcome(
                    c,
                    "refused" if ok else "problem",
                    "" if ok else f"exit {r.exit_code}, stderr {r.stderr[:300]!r}, {r.exception!r}",
                )
            )
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tests/hostile_corpus.py OUT [--run] (OUT: a folder that does not exist yet)")
    corpus = build(Path(sys.argv[1]) / "corpus")
    if "--run" not in sys.argv:
        for c in corpus:
            print(f"{c.fmt}\t{c.name}\t{c.path}")
        sys.exit(0)
    outcomes = run(corpus, Path(sys.argv[1]), report_on=("dialogues", "jsonl", "sqlite"))
    for o in outcomes:
        if o.problem:
            print(f"FAIL {o.case.fmt} {o.case.name} {o.case.path}: {o.problem}")
    bad = sum(bool(o.problem) for o in outcomes)
    print(f"cases tried {len(outcomes)} / passed {len(outcomes) - bad}")
