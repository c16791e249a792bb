"""AgentBench task outputs (THUDM/AgentBench): every sample's run and status, from ``runs.jsonl`` or ``overall.json``.

AgentBench's assigner (src/assigner.py) writes ``outputs/<run>/<agent>/<task>/runs.jsonl``, one finished
sample per line (``index``, ``error``, ``info``, ``output``, ``time``), and ``overall.json``; a task that keeps
its runs in the latter (the MedAgentBench task) lists them under ``custom.raw_results``. Either way a run is a
``TaskOutput`` (src/typings/output.py): ``index`` (the sample), ``status`` (a ``SampleStatus``, or the task's
``completedCorrect`` / ``completedIncorrect``), ``result`` and ``history``: ``{role: user|agent, content}``
(``agent`` is the model), or in the function-calling version OpenAI chat messages whose ``tool_calls`` are
calls and whose ``tool`` messages are their results.

MedAgentBench's agent acts in text, one action per turn: ``GET <url>``, ``POST <url>`` with a JSON payload
on the following lines, or ``FINISH([answers])`` (its task code strips a ```` ```tool_code ```` fence first).
Each action is a tool call (``GET`` ``{"url"}``, ``POST`` ``{"url", "payload"}``, ``FINISH`` ``{"answer"}``);
the user turn after a GET or POST is its result ("Here is the response from the GET request", "Invalid POST
request"). The OS-interaction task's text agent writes ``Act: bash`` with a fenced ``bash`` block (a ``bash``
call, ``{"command"}``, answered by the next user turn), ``Act: answer(...)`` or ``Act: finish`` (calls
``answer``/``finish`` that end the run). The first user turn is the task (the person's); the other user turns
without a pending call are the harness's.

The outcome is the status, or the task's own verdict in ``result``: ``completedCorrect`` passed,
``completedIncorrect`` failed; otherwise ``result.result`` (OS interaction: a boolean; ALFWorld: 1/0),
``result.is_correct`` (DBBench) or ``result.reward`` (WebShop: 1 is a solved task); a status that ends a run
early (``agent invalid action``, ``task limit reached``, ``agent context limit``, ``task error``, ...) with no
such verdict failed. The model and the task are the folder names above the file; the task key is
``<task>/<index>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.grades import reward, verdict
from forensics.formats.kit.model import Conversation, Log, Outcome, ToolCall, Turn, listed, mapping, text_of

FENCE = re.compile(r"```(?:tool_code)?")
ACTION = re.compile(r"(GET|POST)\s+(\S+)[^\n]*\n?(.*)\Z|FINISH\((.*)\)\s*\Z", re.DOTALL)
ACT = re.compile(r"Act:\s*(.+)")
BASH = re.compile(r"```bash\n(.*?)\n```", re.DOTALL)
ENDS = ("FINISH", "answer", "finish")  # actions that end the run: nothing answers them
RUNS_HEAD = re.compile(rb'\s*\{"index":\s*[^,{]+,\s*"error":\s*(?:null|"(?:[^"\\]|\\.)*"),\s*"info":')
FAILED_RESULT = re.compile(r"\s*(?:Error in sending|Invalid (?:GET|POST) request)", re.IGNORECASE)
UNFINISHED = {"running"}


def read(path: str, log: Log) -> list[Conversation]:
    p = Path(path).resolve()
    model, task = p.parent.parent.name or None, p.parent.name or "task"
    data = p.read_bytes()
    if data.lstrip()[:1] == b"{" and _is_lines(data):  # runs.jsonl
        runs = [(f"{log.name}:{n}", rec.get("output"), rec.get("index")) for n, _, rec in log.json_lines(data)]
    else:
        doc = log.json_document(data)
        results = mapping(mapping(doc).get("custom")).get("raw_results")
        if not isinstance(results, list):
            if doc is not None:
                log.error = "not an AgentBench overall.json with runs (no custom.raw_results list)"
            return []
        runs = [(where, r, None) for _, where, r in log.objects(results, f"{log.name}:custom.raw_results", "run")]
    out, seen = [], set()
    for i, (where, r, outer) in enumerate(runs):
        if not isinstance(r, dict):
            log.quarantine(where, "no output object (an AgentBench run holds one)", r)
            continue
        with log.guard(where, r):
            index = r.get("index", outer)
            native = str(index) if isinstance(index, (str, int)) and not isinstance(index, bool) else f"#{i}"
            native = native if native not in seen else f"{native} #{i}"
            seen.add(native)
            key = f"{task}/{native}"
            conv = Conversation(native, _turns(log, listed(r.get("history")), where), model=model, title=key)
            conv.outcome = _outcome(r, key)
            out.append(conv)
    return out


def _is_lines(data: bytes) -> bool:
    """runs.jsonl: the first line is a whole run record (an overall.json, even on one line, has ``custom``)."""
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        rec = values.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(rec, dict) and "custom" not in rec


def _turns(log: Log, history: list[Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    pending: ToolCall | None = None
    for i, _, m in log.objects(history, where + ".history", "history item"):
        role, text = m.get("role"), text_of(m.get("content"))
        if role in ("agent", "assistant"):
            calls = [
                ToolCall(
                    mapping(c.get("function")).get("name"), mapping(c.get("function")).get("arguments"), c.get("id")
                )
                for c in listed(m.get("tool_calls"))
                if isinstance(c, dict)
            ]
            if not calls:
                call = _action(text, f"call-{i}")
                calls = [call] if call else []
            pending = calls[-1] if calls and calls[-1].name not in ENDS else None
            turns.append(Turn("assistant", text, calls=calls, id=str(i)))
        elif role == "tool":
            turns.append(Turn("tool", text, answers=m.get("tool_call_id"), id=str(i)))
            pending = None
        elif role == "user" and pending is not None:
            turns.append(Turn("tool", text, answers=pending.id, is_error=bool(FAILED_RESULT.match(text)), id=str(i)))
            pending = None
        elif role == "user":
            turns.append(Turn("user", text, id=str(i), origin="harness" if turns else "person"))
        else:
            turns.append(Turn(role if isinstance(role, str) else "?", text, id=str(i)))
    return turns


def _action(text: str, cid: str) -> ToolCall | None:
    """The turn's action as the task parses it (MedAgentBench's verbs, OS interaction's ``Act:``), or None."""
    act = ACT.findall(text)
    if act:  # OS interaction reads the last Act: line
        verb = act[-1].strip()
        if verb.lower().startswith("bash"):
            return ToolCall("bash", {"command": "\n\n".join(BASH.findall(text))}, cid)
        if verb.lower().startswith("answer"):
            inner = verb[6:].strip()
            return ToolCall("answer", {"answer": inner[inner.find("(") + 1 : inner.rfind(")")]}, cid)
        if verb.lower().startswith("finish"):
            return ToolCall("finish", {}, cid)
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
    if ok is not None:
        return Outcome(ok, float(ok), "status", status, key)
    res = _object(r.get("result"))
    for field in ("result", "is_correct"):
        ok = verdict(mapping(res).get(field)) if isinstance(mapping(res).get(field), (bool, int)) else None
        if ok is not None:
            return Outcome(ok, float(ok), f"result.{field}", mapping(res).get(field), key)
    if "reward" in mapping(res):
        graded = reward(mapping(res)["reward"], "result.reward", key)
        if graded is not None:
            return graded
    if status == "completed":
        return None  # finished, but this task's verdict is not one of the above
    return Outcome(False, 0.0, "status", status, key)  # a status that ends the run early: not solved


def _object(v: Any) -> Any:
    """A result some tasks store as JSON text, decoded; anything else as it is."""
    if isinstance(v, str) and v.lstrip()[:1] == "{":
        try:
            return values.loads(v)
        except orjson.JSONDecodeError:
            return v
    return v


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    if head[:1] != b"{":
        return False
    if b'"raw_results"' in probe.head and b'"custom"' in probe.head:
        return b'"validation"' in probe.head or b'"history"' in probe.head
    if RUNS_HEAD.match(probe.head):  # runs.jsonl, as the assigner writes it: {"index", "error", "info", "output", ...}
        return True
    first = probe.records[0] if probe.records else None
    return (
        isinstance(first, dict)
        and "index" in first
        and "error" in first
        and isinstance(first.get("output"), dict)
        and "history" in first["output"]
        and "status" in first["output"]
    )


FORMAT = Format(
    "agentbench",
    "AgentBench runs.jsonl and overall.json (custom.raw_results): one run per sample, outcome its status",
    _sniff,
    read=read,
    suffixes=(".json", ".jsonl"),
    names=("overall.json",),
)
