"""AgentBench task outputs (THUDM/AgentBench): ``overall.json`` with every sample's run and status.

AgentBench writes ``outputs/<run>/<agent>/<task>/overall.json``; a task that keeps its runs there (the
MedAgentBench task) lists them under ``custom.raw_results``, each a ``TaskOutput`` (src/typings/output.py):
``index`` (the sample), ``status`` (a ``SampleStatus``, or the task's ``completedCorrect`` /
``completedIncorrect``), ``result`` and ``history`` (``{role: user|agent, content}``; ``agent`` is the model).

MedAgentBench's agent acts in text, one action per turn: ``GET <url>``, ``POST <url>`` with a JSON payload
on the following lines, or ``FINISH([answers])`` (its task code strips a ```` ```tool_code ```` fence first).
Each action is a tool call (``GET`` ``{"url"}``, ``POST`` ``{"url", "payload"}``, ``FINISH`` ``{"answer"}``);
the user turn after a GET or POST is its result ("Here is the response from the GET request", "Invalid POST
request"). The first user turn is the task (the person's); the others are the harness's.

The outcome is the status: ``completedCorrect`` passed, ``completedIncorrect`` and every status that ends a
run early (``agent invalid action``, ``task limit reached``, ``agent context limit``, ``task error``, ...)
failed; a plain ``completed`` passes or fails by a boolean ``result``/``result.result`` when there is one.
The model and the task are the folder names above ``overall.json``; the task key is ``<task>/<index>``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from forensics.importers import values
from forensics.importers.grades import verdict
from forensics.importers.model import Conversation, Log, Outcome, ToolCall, Turn, listed, mapping, text_of
from forensics.importers.registry import Format, Probe

FENCE = re.compile(r"```(?:tool_code)?")
ACTION = re.compile(r"(GET|POST)\s+(\S+)[^\n]*\n?(.*)\Z|FINISH\((.*)\)\s*\Z", re.DOTALL)
FAILED_RESULT = re.compile(r"\s*(?:Error in sending|Invalid (?:GET|POST) request)", re.IGNORECASE)
UNFINISHED = {"running"}


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    results = mapping(mapping(doc).get("custom")).get("raw_results")
    if not isinstance(results, list):
        if doc is not None:
            log.error = "not an AgentBench overall.json with runs (no custom.raw_results list)"
        return []
    p = Path(path).resolve()
    model, task = p.parent.parent.name or None, p.parent.name or "task"
    out, seen = [], set()
    for i, where, r in log.objects(results, f"{log.name}:custom.raw_results", "run"):
        with log.guard(where, r):
            index = r.get("index")
            native = str(index) if isinstance(index, (str, int)) and not isinstance(index, bool) else f"#{i}"
            native = native if native not in seen else f"{native} #{i}"
            seen.add(native)
            key = f"{task}/{native}"
            history = listed(r.get("history"))
            conv = Conversation(native, _turns(log, history, where), model=model, title=key)
            conv.outcome = _outcome(r, key)
            out.append(conv)
    return out


def _turns(log: Log, history: list[Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    pending: ToolCall | None = None
    for i, _, m in log.objects(history, where + ".history", "history item"):
        role, text = m.get("role"), text_of(m.get("content"))
        if role in ("agent", "assistant"):
            call = _action(text, f"call-{i}")
            pending = call if call is not None and call.name != "FINISH" else None
            turns.append(Turn("assistant", text, calls=[call] if call else [], id=str(i)))
        elif role == "user" and pending is not None:
            turns.append(Turn("tool", text, answers=pending.id, is_error=bool(FAILED_RESULT.match(text)), id=str(i)))
            pending = None
        elif role == "user":
            turns.append(Turn("user", text, id=str(i), origin="harness" if turns else "person"))
        else:
            turns.append(Turn(role if isinstance(role, str) else "?", text, id=str(i)))
    return turns


def _action(text: str, cid: str) -> ToolCall | None:
    """The turn's action as MedAgentBench's task parses it, or None for text that is no action."""
    m = ACTION.match(FENCE.sub("", text).strip())
    if m is None:
        return None
    if m.group(4) is not None:
        return ToolCall("FINISH", {"answer": m.group(4).strip()}, cid)
    if m.group(1) == "GET":
        return ToolCall("GET", {"url": m.group(2)}, cid)
    body = m.group(3).strip()
    try:
        payload: Any = values.loads(body)
    except orjson.JSONDecodeError:
        payload = body  # the task answers "Invalid POST request"; the text is kept as it was sent
    return ToolCall("POST", {"url": m.group(2), "payload": payload}, cid)


def _outcome(r: dict[str, Any], key: str) -> Outcome | None:
    status = r.get("status")
    if not isinstance(status, str) or status in UNFINISHED:
        return None
    ok = verdict(status)
    if ok is None and status == "completed":
        res = r.get("result")
        ok = verdict(res) if isinstance(res, bool) else verdict(mapping(res).get("result"))
        if ok is None:
            return None
    elif ok is None:
        ok = False  # a status that ends the run early: the sample is not solved
    return Outcome(ok, float(ok), "status", status, key)


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    return head[:1] == b"{" and b'"raw_results"' in probe.head and b'"custom"' in probe.head \
        and (b'"validation"' in probe.head or b'"history"' in probe.head)


FORMAT = Format("agentbench", "AgentBench overall.json (custom.raw_results): one run per sample, outcome its status",
                _sniff, read=read, suffixes=(".json",), names=("overall.json",))
