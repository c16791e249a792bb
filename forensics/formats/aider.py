"""aider chat histories: ``.aider.chat.history.md`` in the repository aider runs in (aider/io.py).

aider appends Markdown: ``# aider chat started at <time>`` opens a session (one conversation each), a
``#### `` line is the user's input (a multi-line input is several ``#### `` lines), a ``> `` line is aider's
own output (edits applied, commits, command output, errors, token reports) and every other line is the
model's reply. aider has no structured tool calls: each edit block in a reply (``<<<<<<< SEARCH`` /
``=======`` / ``>>>>>>> REPLACE`` under a file name, ``ORIGINAL``/``UPDATED`` in early versions; a fenced
unified diff; in the whole edit format a file name over a fenced block, the fence ``````` or ``<source>``...)
is an ``edit`` call, answered by the ``> `` lines that follow (those naming the edited file go to that edit).
``Tokens: … sent, … received`` lines become the reply's usage (aider rounds them: ``2.4k``). The ``> `` block
before a session's first input (version, model, repository) is skipped and counted; the model is read from it.

Whose turn (io.py ``confirm_ask``): aider writes its confirmation prompts with the answer, ``Add file to the
chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y``; on a ``#### `` line (older versions) such a
prompt is a message of its own, the harness's, not the person's. In architect mode the architect's reply is
handed to the editor model as an input (coders/architect_coder.py: ``run(with_message=...)``), written as
``#### `` lines repeating that reply: the harness's too; the editor's reply then uses the editor's edit
format (``Editor model: … with editor-whole edit format``). So is the message of a typed ``/ask <msg>``
(``/help``, ``/context``, ``/architect``) written again as its own ``#### `` line when the coder runs with it
(base_coder.py ``run(with_message)``). Every other ``#### `` input is the person's (a ``/command`` included: the
person typed it); ``> `` output is aider's (tool messages or skipped notices).

A reply in a mode that parses no edits (``/ask <msg>``, ``/help``, ``/context``, ``/architect`` with a message, an
``AI?`` comment in watch mode, or an ``ask``/``help``/``context``/``architect`` edit format announced) has no
``edit`` calls: those coders keep base_coder.py's ``get_edits`` returning ``[]``. Aider's output after ``You can
use /undo …`` (base_coder.py ``show_undo_hint``, once the input's edits, reflections and lint are over) is the
next input's, no edit's result.

``.aider.input.history`` (prompt_toolkit's FileHistory: ``# <time>`` then the input as ``+`` lines) holds the
same inputs: beside a chat history it is a side file, read with it and counted; alone, its inputs are one
conversation of the person's messages.
"""

from __future__ import annotations

import re
from pathlib import Path

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage

START = re.compile(r"# aider chat started at (.+?)\s*$")
FENCE_OPEN = r"(?:```+[^\n]*|<source>|<code>|<pre>|<codeblock>|<sourcecode>)"  # coders/base_coder.py fences
FENCE_CLOSE = r"(?:```+|</source>|</code>|</pre>|</codeblock>|</sourcecode>)"
EDIT = re.compile(
    r"^(?P<path>[^\n`]+?)\n(?:" + FENCE_OPEN + r"\n)?<{5,9} (?:SEARCH|ORIGINAL)\n(?P<search>.*?)^={5,9}\n"
    r"(?P<replace>.*?)^>{5,9} (?:REPLACE|UPDATED)",
    re.MULTILINE | re.DOTALL,
)
UDIFF = re.compile(r"^```diff\n--- (?P<old>\S+)\n\+\+\+ (?P<path>\S+)\n(?P<diff>.*?)^```", re.MULTILINE | re.DOTALL)
# whole edit format (coders/wholefile_coder.py): the file name on the line before the fence, the whole file in it
WHOLE = re.compile(
    r"^[*`]*(?P<path>[\w.\-/\\]*[./\\][\w.\-/\\]*)[*`:]*\n"
    + FENCE_OPEN
    + r"\n(?P<content>.*?)^"
    + FENCE_CLOSE
    + r"[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)(?: with (\S+) edit format)?")
EDITOR = re.compile(r"^Editor model: \S+ with (\S+) edit format")
TOKENS = re.compile(
    r"^Tokens: (?P<sent>[\d.,]+[kM]?) sent(?:, (?P<write>[\d.,]+[kM]?) cache write)?"
    r"(?:, (?P<hit>[\d.,]+[kM]?) cache hit)?, (?P<received>[\d.,]+[kM]?) received"
)
CONFIRM = re.compile(r"^.*\(Y\)es/\(N\)o.*\[(?:Yes|No)\]:.*$")  # io.py confirm_ask: question, options, default, answer
INPUT_STAMP = re.compile(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s*$")  # FileHistory entry header
INPUT_HISTORY = ".aider.input.history"
# coders/editblock_coder.py: the failed blocks aider reflects to the model after "> # 1 SEARCH/REPLACE block failed
# to match!", each opening with this heading; the text is aider's, up to its next "> " or "#### " line
REFLECTED = ("## SearchReplaceNoExactMatch", "## SearchReplaceNoMatch")
CHAT_HISTORY = ".aider.chat.history.md"
NOT_CONFORM = "The LLM did not conform to the edit format."  # base_coder.py apply_updates, before the reflected error
HELP_URL = "https://aider.chat/docs/"
FAILED_MATCH = re.compile(r"^# \d+ SEARCH/REPLACE blocks? failed to match!")
LINT_ERRORS = "# Fix any errors below, if possible."  # linter.py, the start of what lint_edited reflects
STOPPED = re.compile(r"^Only \d+ reflections allowed, stopping\.")
LINT_FIX = re.compile(r"^Attempt to fix (?:lint|test) errors\?")
# the coders that parse no edits from a reply (base_coder.py get_edits returns []; ask_coder.py, help_coder.py,
# context_coder.py, and architect_coder.py, whose ArchitectCoder is an AskCoder handing its reply to the editor)
NO_EDITS = ("ask", "help", "context", "architect")
# commands.py cmd_ask/cmd_help/cmd_context/cmd_architect: with a message, one reply in that mode (_generic_chat_command)
ONE_SHOT = re.compile(r"^/(ask|help|context|architect)[ \t]+(\S.*)", re.DOTALL)
# watch_prompts.py watch_ask_prompt: an "AI?" comment; watch.py returns "/ask\n" + this, and cmd_ask writes the rest
WATCH_ASK = 'Find the "AI" comments below (marked with \u2588) in the code files I\'ve shared with you.'
UNDO_HINT = "You can use /undo to undo and discard each aider commit."  # base_coder.py show_undo_hint
COMMIT = re.compile(r"^Commit [0-9a-f]{7,40} ")  # repo.py commit(): "Commit <hash> <message>", the edit applied
FAILED = re.compile(r"(?i)\b(?:error|exception|failed|did not conform|no exact match|unable to|traceback)\b")


def read(path: str, log: Log) -> list[Conversation]:
    text = Path(path).read_bytes().decode("utf-8", "replace")
    if Path(path).name.endswith(INPUT_HISTORY) or (
        not START.search(text[:65536]) and INPUT_STAMP.match(text.lstrip("\n").split("\n", 1)[0])
    ):
        return _inputs(path, log, text)
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
    """Consecutive lines of one kind: user (``#### ``), tool (``> ``), assistant (the rest). One message aider wrote
    over several lines is one element of its tool block: ``tool_output`` puts ``> `` before the first line only and
    the Markdown break (two spaces) after the last (io.py ``append_chat_history``), so in a session that writes the
    breaks, a ``> `` line without one runs on to the line that ends with one (the error text of an edit that did
    not conform, a reflected failed match); where no break is written (aider before 0.3x), the failed blocks
    reflected after a ``> `` report run on to the next ``> `` or ``#### `` line."""
    breaks = any(line.startswith("> ") and line.endswith("  ") for line in body)
    out: list[tuple[str, list[str]]] = []
    running = False  # inside a message aider wrote over several lines (to the line with its break)
    reflected = False  # inside aider's report of edits that failed to apply (no breaks written)
    for n, line in enumerate(body):
        if running and not (line.startswith("#### ") or line.startswith("> ") and line.endswith("  ")):
            out[-1][1][-1] += "\n" + (line[:-2] if line.endswith("  ") else line)
            running = not line.endswith("  ")
            continue
        running = False
        if line.startswith("#### "):
            kind, line, reflected = "user", line[5:], False
            if CONFIRM.match(line):
                kind = "confirm"
        elif line.startswith("> ") or line == ">":
            kind, line, reflected = "tool", line[2:], False
            running = breaks and line.strip() != "" and not line.endswith("  ") and _runs_on(body, n + 1)
        elif not line.strip() and out and out[-1][0] == "tool":
            kind = "tool"  # a blank line inside aider's output (before a reflected error) continues it
        elif not reflected and out and out[-1][0] == "tool" and line.startswith(REFLECTED):
            reflected, kind = True, "tool"
            out[-1][1][-1] += "\n" + line  # the failed blocks are the report's text, sent to the model with it
            continue
        elif reflected:
            out[-1][1][-1] += "\n" + line
            continue
        else:
            kind = "assistant"
        line = line[:-2] if line.endswith("  ") else line  # aider ends its own lines with a Markdown break
        if out and out[-1][0] == kind and kind != "confirm":
            out[-1][1].append(line)
        else:
            out.append((kind, [line]))
    return out


def _runs_on(body: list[str], at: int) -> bool:
    """Whether the next line with text (from ``at``) continues a message: neither aider's next ``> `` line nor an
    input (a line written without its break in a hand-edited file ends there)."""
    nxt = next((ln for ln in body[at:] if ln.strip()), "")
    return nxt != "" and not nxt.startswith(("> ", "#### ")) and nxt != ">"


def _reflection(lines: list[str]) -> tuple[list[str], str | None]:
    """A tool block's lines less the message aider reflects to the model (base_coder.py ``reflected_message``):
    the edit format's error after "The LLM did not conform to the edit format." and its help link, the failed
    SEARCH/REPLACE blocks, or the lint errors before "Attempt to fix lint errors? … y"; and that message. The
    lines of the reflection that name a file stay in the block (the failed edit's result)."""
    at = None
    for i, ln in enumerate(lines):
        if ln.strip() == NOT_CONFORM:
            at = i + 1
            while at < len(lines) and (lines[at].startswith(HELP_URL) or not lines[at].strip()):
                at += 1
            break
        if FAILED_MATCH.match(ln):
            at = i
            break
    if at is not None and any(STOPPED.match(ln) for ln in lines[at + 1 :]):
        return lines, None  # "Only 3 reflections allowed, stopping.": this one was never sent
    if at is not None and at < len(lines):
        text = lines[at].strip("\n")
        named = [ln for ln in text.split("\n") if ln.startswith(REFLECTED)]
        return lines[:at] + named + lines[at + 1 :], text
    for i, ln in enumerate(lines):
        if LINT_FIX.match(ln) and CONFIRM.match(ln) and ln.rstrip().lower().endswith((": y", ": yes")):
            start = max((k for k in range(i) if lines[k].startswith(LINT_ERRORS)), default=None)
            if start is not None:  # the lint output is the reflected message (aider printed it, then sent it)
                return lines[:start] + lines[i:], "\n".join(lines[start:i]).strip("\n")
    return lines, None


def _session(log: Log, native: str, started: str | None, body: list[str]) -> Conversation:
    turns: list[Turn] = []
    events: list[Event] = []
    model, handoff = None, False
    said: str | None = None  # the last reply as aider parsed it (and handed it to the editor in architect mode)
    mode, echo = None, None  # a one-shot chat mode for the next reply (/ask <msg>, an "AI?" comment), its echoed msg
    formats: dict[str, str | None] = {"main": None, "editor": None}
    for kind, lines in _blocks(body):
        text = "\n".join(lines).strip("\n")
        if not text.strip():
            continue
        if kind == "tool" and not turns:
            for ln in lines:
                if m := MODEL.match(ln):
                    model, formats["main"] = m.group(1), m.group(2) or formats["main"]
                elif m := EDITOR.match(ln):
                    formats["editor"] = m.group(1)
            log.skip("startup notices")
        elif kind == "tool":
            _announced(lines, formats)
            rest, reflected = _reflection(lines)
            failed = _failed_blocks("\n".join(lines))
            _tool_block(turns, [ln for element in rest for ln in element.split("\n")], model, failed)
            if reflected:  # sent to the model as the next user message: the harness's, and the reply is a retry
                turns.append(Turn("user", reflected, origin="harness"))
        elif kind == "user":
            handoff = said is not None and _norm(said) == _norm(text) != ""
            # io.py writes the typed "/ask <msg>"; then commands.py 1176-1191 _generic_chat_command runs the ask coder
            # with <msg>, and base_coder.py 871-874 run(with_message) writes it again: aider's, not a second input
            echoed = echo is not None and _norm(text) == echo
            origin = "harness" if handoff or echoed else "person"
            turns.append(Turn("user", "" if text == "<blank>" else text, origin=origin))
            if echoed:
                echo = None
            elif m := ONE_SHOT.match(text):
                mode, echo = m.group(1), _norm(m.group(2))
            elif text.startswith(WATCH_ASK):  # io.py get_input returns the watcher's prompt; cmd_ask writes it
                mode, echo = "ask", None
            else:
                mode, echo = None, None
        elif kind == "confirm":
            turns.append(Turn("user", text, origin="harness"))
        else:
            fmt = mode or (formats["editor"] if handoff else formats["main"])
            said, words, thought = _split_reasoning(text)  # said: what aider parses edits from, hands the editor
            calls = [] if fmt in NO_EDITS else _edits(said, len(turns), whole=fmt in WHOLE_FORMATS)
            if thought:  # the model's thinking, not its words to the person: a reasoning event, as other formats'
                events.append(Event("reasoning", before=len(turns), detail={"text": thought}))
            turns.append(Turn("assistant", words, calls=calls))
            handoff, mode, echo = False, None, None
    return Conversation(native, turns, provider=None, model=model, created=started, events=events)


WHOLE_FORMATS = ("whole", "editor-whole")


def _announced(lines: list[str], formats: dict[str, str | None]) -> None:
    """A switch mid-session (``/architect``, ``/chat-mode``, ``/model``: main.py prints the announcements again) sets
    the edit formats of the replies after it; a main model announced without an editor model has none."""
    for ln in lines:
        if (m := MODEL.match(ln)) and m.group(2):
            formats["main"], formats["editor"] = m.group(2), None
        elif m := EDITOR.match(ln):
            formats["editor"] = m.group(1)


# aider/reasoning_tags.py: a reasoning model's thinking is written into the reply between these tags
REASONING = re.compile(r"<(thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b)>.*?</\1>", re.DOTALL)
REASONING_OPEN = "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>"
REASONING_END = "</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>"


def _split_reasoning(text: str) -> tuple[str, str, str]:
    """(what aider parses edits from, the reply's words, the thinking a reasoning model wrote into it).

    The first is reasoning_tags.py ``remove_reasoning_content``: the reply less each thinking between aider's tags,
    and less all before a closing tag whose opening one is missing; what apply_updates parses and, in architect mode,
    what the editor is handed as its input (aider 0.86 with a reasoning model, 2026). The words are that text as the
    person read it: also less the thinking after an opening tag never closed (a reply cut while the model was
    thinking, which aider keeps whole). The thinking is all that was cut, its pieces joined."""
    if REASONING_OPEN not in text and REASONING_END not in text:
        return text.strip(), text, ""
    thought = [m.group(0)[len(REASONING_OPEN) : -len(REASONING_END)] for m in REASONING.finditer(text)]
    said = REASONING.sub("", text).strip()
    if REASONING_END in said:
        before, said = said.split(REASONING_END, 1)
        said = said.strip()
        thought.append(before)
    words = said
    if REASONING_OPEN in words:
        words, after = words.split(REASONING_OPEN, 1)
        thought.append(after)
    return said, words.strip(), "\n\n".join(t.strip() for t in thought if t.strip())


def _norm(text: str) -> str:
    """Text as aider echoes it: no trailing spaces, no blank lines."""
    return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip())


def _edits(text: str, n: int, whole: bool = False) -> list[ToolCall]:
    found = [
        (
            m.start(),
            {"path": m.group("path").strip().strip("`*"), "search": m.group("search"), "replace": m.group("replace")},
        )
        for m in EDIT.finditer(text)
    ]
    found += [(m.start(), {"path": m.group("path"), "diff": m.group("diff")}) for m in UDIFF.finditer(text)]
    if whole:
        found += [(m.start(), {"path": m.group("path"), "content": m.group("content")}) for m in WHOLE.finditer(text)]
    return [ToolCall("edit", args, f"edit-{n}-{i}") for i, (_, args) in enumerate(sorted(found, key=lambda f: f[0]))]


def _failed_blocks(text: str) -> list[tuple[str, str]]:
    """The (SEARCH, REPLACE) of each block aider reports it could not apply, in its order: editblock_coder.py 84–96
    writes ``## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in <path>`` over the
    block as the model wrote it (``<<<<<<< SEARCH``, the original, ``=======``, the update, ``>>>>>>> REPLACE``)."""
    return [
        (_lines(m.group("search")), _lines(m.group("replace")))
        for m in EDIT.finditer(text)
        if m.group("path").startswith(REFLECTED)
    ]


def _lines(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.splitlines())


def _named(ln: str, path: str) -> bool:
    """Whether aider's line names the edit's file. On Windows aider writes its paths with backslashes: base_coder.py
    2132–2136 ``get_rel_fname`` is ``os.path.relpath``, editblock_coder.py 577–585 ``find_filename`` takes the chat's
    own name for the model's ``a/b.ts``, and so ``Committing a\\b.ts before applying edits.`` (base_coder.py 2183)
    and ``Applied edit to a\\b.ts`` (2329); an absolute one is ``C:\\…\\a\\b.ts``. Both sides are read with ``/``."""
    return bool(path) and path.replace("\\", "/") in ln.replace("\\", "/")


def _tool_block(
    turns: list[Turn], lines: list[str], model: str | None, failed_blocks: list[tuple[str, str]] | None = None
) -> None:
    """aider's output after a reply: the reply's usage, and a result per edit (lines naming its file),
    the rest with the first edit; output that answers no edit (a command's, a notice) is a system message, the
    harness's. When aider reports blocks it could not apply (``failed_blocks``), the report (``The LLM did not
    conform…``, its link, the ``## SearchReplaceNoExactMatch`` headings) goes to the edits whose blocks it repeats,
    and the rest to the edits it applied: editblock_coder.py 41–123 applies every block it can and reports the
    others (``# The other 1 SEARCH/REPLACE block were applied successfully.``), then base_coder.py 2300–2311 prints
    no ``Applied edit to`` line, and send_message commits the applied ones (base_coder.py 1580–1584)."""
    reply = turns[-1] if turns and turns[-1].role == "assistant" else None
    rest = []
    for ln in lines:
        m = TOKENS.match(ln)
        if m and reply is not None and not reply.usage:  # a report, not a result
            # "sent" is every prompt token, the cache's included (base_coder: litellm's prompt_tokens, plus
            # cache_creation_input_tokens for Anthropic, whose prompt_tokens leave the writes out)
            reply.usage.append(
                Usage(
                    prompt_tokens=_tokens(m["sent"]),
                    output_tokens=_tokens(m["received"]),
                    cache_creation_input_tokens=_tokens(m["write"]),
                    cache_read_input_tokens=_tokens(m["hit"]),
                    model=model,
                )
            )
            continue
        rest.append(ln)
    calls = reply.calls if reply is not None else []
    failed: list[int] = []  # the calls whose blocks aider reported failed, in the report's order
    for search, replace in failed_blocks or []:
        k = next(
            (
                k
                for k, c in enumerate(calls)
                if k not in failed
                and "search" in c.arguments
                and (_lines(c.arguments["search"]), _lines(c.arguments["replace"])) == (search, replace)
            ),
            None,
        )
        if k is not None:
            failed.append(k)
    applied = [k for k in range(len(calls)) if k not in failed]
    first = applied[0] if failed and applied else 0  # aider's lines that name no file: the edits applied
    headings = iter(failed)
    buckets: dict[int, list[str]] = {}
    after_hint = False  # base_coder.py run: show_undo_hint() once run_one (edits, reflections, lint) is over
    for ln in rest:
        if after_hint:  # the next input's output (the watcher's "Added …", files it could not read): no edit's
            buckets.setdefault(len(calls), []).append(ln)
            continue
        after_hint = ln.strip() == UNDO_HINT
        if failed and ln.startswith(REFLECTED) and (k := next(headings, None)) is not None:
            buckets.setdefault(k, []).append(ln)  # the report's heading of the k-th block it could not apply
            continue
        if failed and (ln.strip() == NOT_CONFORM or ln.startswith(HELP_URL) or FAILED_MATCH.match(ln)):
            buckets.setdefault(failed[0], []).append(ln)
            continue
        named = [
            (len(c.arguments["path"]), k not in failed, k)
            for k, c in enumerate(calls)
            if _named(ln, c.arguments["path"])
        ]
        i = max(named)[2] if named else first  # the longest name: "backend/README.md" is not "README.md"
        buckets.setdefault(i, []).append(ln)
    for i, bucket in sorted(buckets.items()):
        text = "\n".join(bucket).strip("\n")
        if i < len(calls):
            said = "\n".join(ln for ln in bucket if not COMMIT.match(ln))  # a commit's message is the model's summary
            turns.append(Turn("tool", text, answers=calls[i].id, is_error=bool(FAILED.search(said))))
        elif text.strip():  # output that answers no edit (a command's, a notice): aider's own
            turns.append(Turn("system", text, origin="harness"))


def _inputs(path: str, log: Log, text: str) -> list[Conversation]:
    """``.aider.input.history``: entries of ``+`` lines under a ``# <time>`` header."""
    entries: list[tuple[str | None, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        log.rows += 1
        m = INPUT_STAMP.match(line)
        if m:
            entries.append((m.group(1), []))
        elif line.startswith("+") and entries:
            entries[-1][1].append(line[1:])
        elif line.strip():
            log.quarantine(f"{log.name}:{n}", "not an input-history line (# <time> or +<input>)", line)
    if Path(path).with_name(CHAT_HISTORY).exists():
        log.skip(f"inputs repeated in {CHAT_HISTORY} (read there)", len(entries))
        log.notes.append(f"side file: the person's inputs, read with {CHAT_HISTORY} beside it")
        return []
    if not entries:
        log.error = "no '# <time>' input-history entry"
        return []
    turns = [Turn("user", "\n".join(lines), at=stamp, origin="person") for stamp, lines in entries]
    log.notes.append("input history: the person's inputs only (no replies in this file)")
    return [Conversation(INPUT_HISTORY, turns, title="aider input history", created=entries[0][0])]


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
    if probe.is_sqlite:
        return False
    if probe.path.name.endswith(INPUT_HISTORY):
        return True
    return probe.head.lstrip().startswith(b"# aider chat started at") or (
        probe.path.name.endswith(CHAT_HISTORY) and b"# aider chat started at" in probe.head
    )


FORMAT = Format(
    "aider",
    "aider chat histories, .aider.chat.history.md (sessions, #### inputs, > output, edits), and .aider.input.history",
    _sniff,
    read=read,
    suffixes=(".md",),
    names=(CHAT_HISTORY, INPUT_HISTORY),
    claims=(".aider.chat.history.md", "*.aider.chat.history.md", ".aider.input.history"),
)
