"""An installed agent's conversation as the terminal shows it: terminal-bench's ``sessions/agent.log``.

terminal-bench runs an installed agent in the task container's tmux session and pipes the pane to
``sessions/agent.log`` (asciinema and tmux's ``pipe-pane``: every byte the terminal got, escape codes, carriage
returns and spinners included). Before the agent, the log holds the container's shell and the agent's
installation (apt, pip); after it, the shell's prompt again.

mini-swe-agent (``mini -m MODEL -t TASK -y --exit-immediately``, ``terminal_bench/agents/installed_agents/
mini_swe_agent``) prints its conversation there as it goes (agents/interactive.py, ``InteractiveAgent``, 1.x and
2.x alike): the banner ``This is mini-swe-agent version V.``, then each message as ``\\n<Role>:\\n`` (System,
User, Tool, Exit) or ``\\nmini-swe-agent (step N, $C.CC):\\n`` (the model's answer, its call count and the run's
cost so far), then the text; a full-width rule (``─``) starts every step, and the ``Waiting for the LM to
respond...`` spinner redraws its line with ``\\r`` and ``ESC[2K`` while the model thinks. What other programs
write to the same terminal (LiteLLM's log records with their tracebacks) lands between and inside the messages.

The screen is rebuilt line by line (a carriage return goes back to the line's start, ``ESC[K`` erases, other
escape codes are dropped), then read: the spinner's lines, the rules and the log records of LiteLLM are not the
conversation and are counted; the text of each message is what rich printed, so a line longer than the
terminal (the rule's width) is broken where rich wrapped it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forensics.formats.kit.model import ToolCall, Turn
from forensics.formats.swe_agent import BASH_BLOCK, MINI_FAILED, MINI_HARNESS, MINI_PERSON

ESCAPE = re.compile(r"\x1b(?:\[([0-?]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()][0-9A-Za-z]|[@-Z\\-_])")
BANNER = re.compile(r"^(?:\S+ )?This is mini-swe-agent version (\S+?)\.?$")
STEP = re.compile(r"^mini-swe-agent \(step (\d+), \$(\d+(?:\.\d+)?)\):$")
ROLE = re.compile(r"^(System|User|Tool|Exit|Assistant):$")
RULE = re.compile(r"^─{20,}$")
SPINNER = re.compile(r"^(?:[⠀-⣿] Waiting for the LM to respond\.\.\.)+")  # a frame another program's line ran into
PROMPT = re.compile(r"^[\w.-]+@[\w.-]+:[^#$\n]*[#$](?: |$)")  # the container's shell again: the agent has exited
SAVED = re.compile(r"^Saved trajectory to '")
LOG_RECORD = re.compile(r"^\d\d:\d\d:\d\d - LiteLLM(?:[:.][\w.]+)*:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b")
TRACEBACK_GOES_ON = re.compile(
    r"^(?:Traceback \(most recent call last\):|During handling of the above exception|"
    r"The above exception was the direct cause|\s|$)"
)
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b")


def screen_lines(data: bytes) -> list[str]:
    """The terminal's lines as they were left on the screen: each line (LF-separated) replayed with its carriage
    returns, backspaces and erase-in-line codes; every other escape code dropped."""
    out = []
    for raw in data.decode("utf-8", errors="replace").split("\n"):
        buf: list[str] = []
        col = 0
        pos = 0
        for m in ESCAPE.finditer(raw):
            col = _put(buf, col, raw[pos : m.start()])
            pos = m.end()
            if m.group(2) == "K":  # erase in line: 0 to the end, 1 to the start, 2 all
                mode = m.group(1) or "0"
                if mode == "2":
                    buf.clear()
                elif mode == "1":
                    buf[:col] = [" "] * min(col, len(buf))
                else:
                    del buf[col:]
        col = _put(buf, col, raw[pos:])
        out.append("".join(buf).rstrip())
    return out


def _put(buf: list[str], col: int, text: str) -> int:
    for ch in text:
        if ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(0, col - 1)
        elif ch >= " " or ch == "\t":
            if col < len(buf):
                buf[col] = ch
            else:
                buf.extend(" " * (col - len(buf)))
                buf.append(ch)
            col += 1
    return col


@dataclass
class Printed:
    """A printed conversation: the agent's version, its messages as turns, and what else the terminal held."""

    agent: str
    version: str
    turns: list[Turn] = field(default_factory=list)
    steps: int = 0  # the last step number printed (the model's calls)
    cost: float | None = None  # the run's cost so far at the last step, as printed
    outside: int = 0  # lines of the agent's run that are no message (rules, spinners, blank lines between)
    records: int = 0  # lines of other programs' log records (LiteLLM, with their tracebacks) left out
    exits: int = 0  # Exit messages (2.x: how the run ended), counted, not turns
    ended: bool = False  # the shell's prompt came back (else the log stops inside the run)


def mini_swe_agent(data: bytes) -> Printed | None:
    """mini-swe-agent's printed conversation in a terminal log, or None when the log holds no mini-swe-agent run."""
    lines = screen_lines(data)
    start = next((i for i, line in enumerate(lines) if BANNER.match(line)), None)
    if start is None:
        return None
    m = BANNER.match(lines[start])
    out = Printed("mini-swe-agent", m.group(1) if m else "")
    messages: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    # the run ends at the shell's prompt (or mini's "Saved trajectory") after the last message's header: a prompt
    # printed inside a command's output (a task about shells) is the output's
    last = max((k for k in range(start, len(lines)) if STEP.match(lines[k]) or ROLE.match(lines[k])), default=start)
    i = start + 1
    while i < len(lines):
        line = SPINNER.sub("", lines[i])
        if not line and lines[i]:
            out.outside += 1
            i += 1
            continue
        if i > last and (PROMPT.match(line) or SAVED.match(line)):
            out.ended = True
            break
        if LOG_RECORD.match(line):
            i = _skip_record(lines, i, out)
            continue
        step, role = STEP.match(line), ROLE.match(line)
        if step or role:
            current = []
            messages.append(
                (f"step {step.group(1)} {step.group(2)}" if step else role.group(1) if role else "", current)
            )
        elif RULE.match(line):
            current = None
            out.outside += 1
        elif current is not None:
            current.append(line)
        else:
            out.outside += 1
        i += 1
    pending: str | None = None
    asked = False
    for head, body in messages:
        text = "\n".join(body).strip("\n")
        if head.startswith("step "):
            _, n, cost = head.split()
            out.steps, out.cost = int(n), float(cost)
            blocks = BASH_BLOCK.findall(text)
            calls = [ToolCall("bash", {"command": blocks[0]}, f"step-{n}")] if len(blocks) == 1 else []
            out.turns.append(Turn("assistant", text, calls=calls, id=f"step-{n}"))
            pending = calls[0].id if calls else None
        elif head == "Exit":
            out.exits += 1
        elif head == "System":
            out.turns.append(Turn("system", text))
        elif head in ("User", "Tool") and pending and not (MINI_HARNESS.match(text) or MINI_PERSON.match(text)):
            out.turns.append(Turn("tool", text, answers=pending, is_error=bool(MINI_FAILED.match(text))))
            pending = None
        else:  # the task as the template wrapped it, a format error, a limit, the person stepping in
            person = bool(MINI_PERSON.match(text)) and asked
            out.turns.append(Turn("user", text, origin="person" if person else "harness"))
            asked, pending = True, None
    return out


def _skip_record(lines: list[str], i: int, out: Printed) -> int:
    """Past a log record and the traceback it carries (chained ones included); returns the next line's index."""
    j = i + 1
    if j < len(lines) and lines[j].startswith("Traceback (most recent call last):"):
        while j < len(lines):
            line = lines[j]
            if EXCEPTION.match(line):
                nxt = next((k for k in range(j + 1, len(lines)) if lines[k].strip()), len(lines))
                if nxt < len(lines) and re.match(r"^(?:During handling|The above exception)", lines[nxt]):
                    j = nxt
                    continue
                j += 1
                break
            if not TRACEBACK_GOES_ON.match(line):
                break
            j += 1
    out.records += j - i
    return j
