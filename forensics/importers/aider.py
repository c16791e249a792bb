"""aider chat histories: ``.aider.chat.history.md`` in the repository aider runs in (aider/io.py).

aider appends Markdown: ``# aider chat started at <time>`` opens a session (one conversation each), a
``#### `` line is the user's input (a multi-line input is several ``#### `` lines), a ``> `` line is aider's
own output (edits applied, commits, command output, errors, token reports) and every other line is the
model's reply. aider has no structured tool calls: each edit block in a reply (``<<<<<<< SEARCH`` /
``=======`` / ``>>>>>>> REPLACE`` under a file name, or a fenced unified diff) is an ``edit`` call, answered by
the ``> `` lines that follow (those naming the edited file go to that edit). ``Tokens: … sent, … received``
lines become the reply's usage (aider rounds them: ``2.4k``). The ``> `` block before a session's first
input (version, model, repository) is skipped and counted; the model is read from it.
"""
from __future__ import annotations

import re
from pathlib import Path

from forensics.importers.model import Conversation, Log, ToolCall, Turn, Usage
from forensics.importers.registry import Format, Probe

START = re.compile(r"# aider chat started at (.+?)\s*$")
EDIT = re.compile(r"^(?P<path>[^\n`]+?)\n(?:```[^\n]*\n)?<{5,9} SEARCH\n(?P<search>.*?)^={5,9}\n(?P<replace>.*?)^>{5,9} "
                  r"REPLACE", re.MULTILINE | re.DOTALL)
UDIFF = re.compile(r"^```diff\n--- (?P<old>\S+)\n\+\+\+ (?P<path>\S+)\n(?P<diff>.*?)^```", re.MULTILINE | re.DOTALL)
MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")
TOKENS = re.compile(r"^Tokens: (?P<sent>[\d.,]+[kM]?) sent(?:, (?P<write>[\d.,]+[kM]?) cache write)?"
                    r"(?:, (?P<hit>[\d.,]+[kM]?) cache hit)?, (?P<received>[\d.,]+[kM]?) received")
FAILED = re.compile(r"(?i)\b(?:error|exception|failed|did not conform|no exact match|unable to|traceback)\b")


def read(path: str, log: Log) -> list[Conversation]:
    text = Path(path).read_bytes().decode("utf-8", "replace")
    lines = text.splitlines()
    log.rows = len(lines)
    sessions: list[tuple[str | None, list[str]]] = []
    for line in lines:
        m = START.match(line)
        if m:
            sessions.append((m.group(1), []))
        elif sessions:
            sessions[-1][1].append(line)
        elif line.strip():  # text before the first session header (an edited or truncated file)
            sessions.append((None, [line]))
    if not sessions:
        log.error = "no '# aider chat started at' line"
        return []
    out, seen = [], set()
    for started, body in sessions:
        if started is None:  # text above the first header (an edited or truncated file): no session of its own
            log.skip("lines before the first session header", len(body))
            continue
        native = started
        while native in seen:  # two sessions started in the same second
            native += "'"
        seen.add(native)
        out.append(_session(log, native, started, body))
    return out


def _blocks(body: list[str]) -> list[tuple[str, list[str]]]:
    """Consecutive lines of one kind: user (``#### ``), tool (``> ``), assistant (the rest)."""
    out: list[tuple[str, list[str]]] = []
    for line in body:
        if line.startswith("#### "):
            kind, line = "user", line[5:]
        elif line.startswith("> ") or line == ">":
            kind, line = "tool", line[2:]
        else:
            kind = "assistant"
        line = line[:-2] if line.endswith("  ") else line  # aider ends its own lines with a Markdown break
        if out and out[-1][0] == kind:
            out[-1][1].append(line)
        else:
            out.append((kind, [line]))
    return out


def _session(log: Log, native: str, started: str | None, body: list[str]) -> Conversation:
    turns: list[Turn] = []
    model = None
    for kind, lines in _blocks(body):
        text = "\n".join(lines).strip("\n")
        if not text.strip():
            continue
        if kind == "tool" and not turns:
            model = next((m.group(1) for ln in lines if (m := MODEL.match(ln))), model)
            log.skip("startup notices")
        elif kind == "tool":
            _tool_block(turns, lines, model)
        elif kind == "user":
            turns.append(Turn("user", "" if text == "<blank>" else text))
        else:
            turns.append(Turn("assistant", text, calls=_edits(text, len(turns))))
    return Conversation(native, turns, provider=None, model=model, created=started)


def _edits(text: str, n: int) -> list[ToolCall]:
    found = [(m.start(), {"path": m.group("path").strip().strip("`*"), "search": m.group("search"),
                          "replace": m.group("replace")}) for m in EDIT.finditer(text)]
    found += [(m.start(), {"path": m.group("path"), "diff": m.group("diff")}) for m in UDIFF.finditer(text)]
    return [ToolCall("edit", args, f"edit-{n}-{i}") for i, (_, args) in enumerate(sorted(found, key=lambda f: f[0]))]


def _tool_block(turns: list[Turn], lines: list[str], model: str | None) -> None:
    """aider's output after a reply: the reply's usage, and a result per edit (lines naming its file),
    the rest with the first edit; output that answers no edit (a command's) is a tool message of its own."""
    reply = turns[-1] if turns and turns[-1].role == "assistant" else None
    rest = []
    for ln in lines:
        m = TOKENS.match(ln)
        if m and reply is not None and not reply.usage:  # a report, not a result
            reply.usage.append(Usage(input_tokens=_tokens(m["sent"]), output_tokens=_tokens(m["received"]),
                                     cache_creation_input_tokens=_tokens(m["write"]),
                                     cache_read_input_tokens=_tokens(m["hit"]), model=model))
            continue
        rest.append(ln)
    calls = reply.calls if reply is not None else []
    buckets: dict[int, list[str]] = {}
    for ln in rest:
        i = next((k for k, c in enumerate(calls) if c.arguments["path"] and c.arguments["path"] in ln), 0)
        buckets.setdefault(i, []).append(ln)
    for i, bucket in sorted(buckets.items()):
        text = "\n".join(bucket).strip("\n")
        answers = calls[i].id if i < len(calls) else None
        turns.append(Turn("tool", text, answers=answers, is_error=bool(FAILED.search(text))))


def _tokens(v: str | None) -> int | None:
    """aider's format_tokens: 950, 2.4k, 12k (and M for millions)."""
    if v is None:
        return None
    v = v.replace(",", "")
    scale = {"k": 1000, "M": 1000000}.get(v[-1:], 1)
    try:
        return round(float(v.rstrip("kM")) * scale)
    except ValueError:
        return None


def _sniff(probe: Probe) -> bool:
    return not probe.is_sqlite and (probe.head.lstrip().startswith(b"# aider chat started at")
                                    or (probe.path.name.endswith(".aider.chat.history.md")
                                        and b"# aider chat started at" in probe.head))


FORMAT = Format("aider", "aider chat histories, .aider.chat.history.md (sessions, #### inputs, > output, edits)",
                _sniff, read=read, suffixes=(".md",), names=(".aider.chat.history.md",),
                claims=(".aider.chat.history.md", "*.aider.chat.history.md"))
