"""SWE-agent ``<instance>.traj`` and mini-swe-agent ``<instance>.traj.json`` trajectories, one conversation
per file, named by the instance.

SWE-agent (sweagent/types.py, agents.py) writes ``history`` (the messages: ``system``, demonstrations
marked ``is_demo``, the instance, then each step's assistant message with its ``thought`` and ``action``
and the observation of that action), ``trajectory`` (the same steps as ``action``/``observation`` pairs)
and ``info``. Each step is a tool call, its observation the result: the call is the function call the
model made (``tool_calls``) or, for text actions, the action's command (``find_file "x"`` is a call to
``find_file``). A retry agent keeps every attempt under ``attempts`` and the chosen one at the top: the
others are kept off the main path.

mini-swe-agent (agents/default.py) writes ``{"info", "messages", "trajectory_format"}``: an assistant
message's actions are its tool calls (``tool_calls``, ``extra.actions``, or the fenced bash block of the
text-based models), each answered by the next ``tool`` message or, for text-based models, the next
``user`` message; ``extra.response.usage`` is the response's usage. The closing ``exit`` message is
skipped and counted.

Whose turn it is (docs/definitions.md#whose-turn-it-is). SWE-agent: the system prompt and the demonstrations (``is_demo``: one user
message or a whole demonstrated history) are the harness's; the first user message before any action is
the instance template carrying the problem statement, the person's request (one per issue); other user
messages before the first action (a separate strategy template) are the harness's; after an action, a user
or tool message is its observation. mini-swe-agent: the first user message is the task; after an action a
user message is its output (``<returncode>``, a timeout notice) unless the harness wrote it (format errors,
"Switching to human mode", an empty interruption) or it carries the person's words behind the harness's
prefix (a rejection's message, an interruption's comment, a new task: agents/interactive.py), which leave
the action unanswered.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from forensics.formats.kit import grades, values
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, mapping, text_of

# sweagent/types.py: a trajectory step's keys, and the message types of a history item
STEP_KEYS = re.compile(rb'"trajectory"\s*:\s*\[\s*\{\s*"(?:action|response|thought)"')
SWE_MESSAGE = re.compile(rb'"message_type"\s*:\s*"(?:system_prompt|observation|action|thought|demonstration)"')
BASH_BLOCK = re.compile(r"```(?:bash|sh|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
# SWE-agent's observations carry no error flag; its tools say so in words
MINI_HARNESS = re.compile(
    r"\s*(?:Please always provide EXACTLY ONE action|Format error:|Your previous response reached "
    r"the output token limit|Commands? not executed\. Switching to human mode|Switched to human "
    r"mode|Interrupted by user: Temporary interruption caught\.)"
)
MINI_PERSON = re.compile(
    r"\s*(?:Commands? not executed\. The user rejected your commands? with the following message: "
    r"|Interrupted by user: |The user added a new task: )"
)
MINI_FAILED = re.compile(
    r"\s*(?:<returncode>(?!0<)-?\d+</returncode>|The last command <command>.*timed out)", re.DOTALL
)
FAILED = re.compile(
    r"\s*(?:Your proposed edit has introduced new syntax error|Error\b|Usage: |Traceback |"
    r"bash: .*: command not found|No such file or directory)"
)


def read_swe_agent(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    if not isinstance(doc, dict):
        return []
    native = _instance(path)
    attempts = [a for a in listed(doc.get("attempts")) if isinstance(a, dict)]
    best = mapping(doc.get("info")).get("best_attempt_idx") if isinstance(doc.get("info"), dict) else None
    turns = _swe_turns(log, doc, "")
    for k, attempt in enumerate(attempts):
        if k == best:
            log.skip("attempt (the chosen one, repeated at the top)")
            continue
        off = _swe_turns(log, attempt, f"attempt{k}:")
        for i, t in enumerate(off):
            t.main = False
            t.parent = "" if i == 0 else None  # each discarded attempt is a tree of its own
        turns.extend(off)
    model = _swe_model(doc) or _preds_model(path, native)
    return [
        Conversation(
            native, turns, model=model, outcome=grades.swebench_results(path, native), events=_stop(doc.get("info"))
        )
    ]


def _stop(info: Any) -> list[Event]:
    """The harness's own word on how the run stopped, ``info.exit_status`` (SWE-agent: ``submitted``, ``exit_cost``,
    ``submitted (exit_context)``...; mini-swe-agent: ``Submitted``, ``LimitsExceeded``...), as a ``stop`` event."""
    status = mapping(info).get("exit_status") if isinstance(info, dict) else None
    return [Event("stop", None, trigger=status, detail={"by": "info.exit_status"})] if isinstance(status, str) else []


def _swe_turns(log: Log, doc: dict[str, Any], prefix: str) -> list[Turn]:
    history = doc.get("history")
    steps = [s for s in listed(doc.get("trajectory")) if isinstance(s, dict)]
    if not isinstance(history, list) or not history:  # no history: the steps are all there is
        return _step_turns(steps, 0, prefix)
    turns: list[Turn] = []
    pending: list[str | None] = []
    acted = asked = False
    for i, h in enumerate(history):
        if not isinstance(h, dict):
            log.quarantine(f"{log.name}:history[{i}]", "history item is not a JSON object", h)
            continue
        role, text, nid = h.get("role"), text_of(h.get("content")), f"{prefix}{i}"
        if h.get("is_demo"):  # a demonstration the harness shows the model: no call of this run
            turns.append(Turn(role if isinstance(role, str) else "user", text, id=nid, origin="harness"))
            continue
        if role == "assistant":
            calls = [
                ToolCall(_fn(c).get("name"), _fn(c).get("arguments"), c.get("id"))
                for c in listed(h.get("tool_calls"))
                if isinstance(c, dict)
            ]
            if not calls:
                call = _action_call(h.get("action"), f"{prefix}call-{i}")
                calls = [call] if call else []
            thought = h.get("thought")
            turns.append(
                Turn("assistant", thought if isinstance(thought, str) and thought else text, calls=calls, id=nid)
            )
            pending = [c.id for c in calls]
            acted = acted or bool(calls)
        elif role in ("user", "tool") and pending:
            ids = h.get("tool_call_ids")
            answers = ids[0] if isinstance(ids, list) and ids else pending[0]
            pending = [p for p in pending if p != answers]
            turns.append(Turn("tool", text, answers=answers, id=nid, is_error=bool(FAILED.match(text))))
        elif role == "user" and not acted:  # the instance (the person's issue), then any other template
            turns.append(Turn("user", text, id=nid, origin="harness" if asked else "person"))
            asked = True
        else:
            turns.append(
                Turn(role if isinstance(role, str) else "?", text, id=nid, origin="harness" if role == "user" else None)
            )
    return turns + _tail(log, steps, turns, pending, prefix)


def _tail(
    log: Log, steps: list[dict[str, Any]], turns: list[Turn], pending: list[str | None], prefix: str
) -> list[Turn]:
    """The steps the history does not hold: the last action's observation and any step after it (the trajectory
    is written after the final step, the history before it)."""
    n = sum(bool(t.calls) for t in turns if t.role == "assistant" and t.origin is None)
    log.skip("trajectory step (repeats history)", min(n, len(steps)))
    out = []
    if pending and 0 < n <= len(steps):
        obs = text_of(steps[n - 1].get("observation"))
        out.append(
            Turn(
                "tool",
                obs,
                answers=pending[0],
                id=f"{prefix}step-{n - 1}:observation",
                is_error=bool(FAILED.match(obs)),
            )
        )
    return out + _step_turns(steps[n:], n, prefix)


def _step_turns(steps: list[dict[str, Any]], start: int, prefix: str) -> list[Turn]:
    turns: list[Turn] = []
    for k, s in enumerate(steps, start):
        call = _action_call(s.get("action"), f"{prefix}step-{k}")
        turns.append(
            Turn(
                "assistant",
                text_of(s.get("thought") or s.get("response")),
                calls=[call] if call else [],
                id=f"{prefix}step-{k}",
            )
        )
        if call:
            obs = text_of(s.get("observation"))
            turns.append(
                Turn("tool", obs, answers=call.id, id=f"{prefix}step-{k}:observation", is_error=bool(FAILED.match(obs)))
            )
    return turns


def _action_call(action: Any, cid: str) -> ToolCall | None:
    """A text action: its first word names the command (``submit``, ``edit 4:4``, ``ls -F``)."""
    if not isinstance(action, str) or not action.strip():
        return None
    return ToolCall(action.strip().split(None, 1)[0], {"command": action.strip()}, cid)


def _fn(call: dict[str, Any]) -> dict[str, Any]:
    return call["function"] if isinstance(call.get("function"), dict) else call


def _swe_model(doc: dict[str, Any]) -> str | None:
    cfg = doc.get("replay_config")
    if isinstance(cfg, str):
        try:
            cfg = values.loads(cfg)
        except ValueError:
            cfg = None
    agent = cfg.get("agent") if isinstance(cfg, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None


def _preds_model(traj: str, instance: str) -> str | None:
    """The model of an older SWE-agent trajectory, which names none: the SWE-bench predictions file
    ``all_preds.jsonl`` of its run (the ``.traj`` file's folder or the two above it, as in the SWE-bench and
    Multi-SWE-bench experiments repositories) gives the instance's ``model_name_or_path``, SWE-agent's run name
    ``<model>__<dataset>__<config>__t-…``, whose first part is the model."""
    here = Path(traj).resolve().parent
    for folder in (here, here.parent, here.parent.parent):
        f = folder / "all_preds.jsonl"
        try:
            stamp = f.stat().st_mtime_ns
        except OSError:
            continue
        preds = _preds(f, stamp)
        if preds is not None:
            name = preds.get(instance)
            return name.split("__", 1)[0] or None if name else None
    return None


@functools.lru_cache(maxsize=16)
def _preds(path: Path, stamp: int) -> dict[str, str] | None:
    """instance id -> model_name_or_path of a predictions file (as of its modification time ``stamp``), None
    when it is not one."""
    records = grades.instance_records(path)
    if records is None:
        return None
    out = {i: name for i, rec in records if isinstance(name := rec.get("model_name_or_path"), str)}
    return out or None


def read_mini(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    msgs = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(msgs, list):
        log.error = "no messages list (a mini-swe-agent trajectory holds one)"
        return []
    info = mapping(doc.get("info")) if isinstance(doc, dict) else {}
    cfg = mapping(info.get("config"))
    model_cfg = mapping(cfg.get("model"))
    turns: list[Turn] = []
    pending: list[str | None] = []
    asked = False
    for i, where, m in log.objects(msgs, log.name, "message"):
        with log.guard(where, m):
            role, text = m.get("role"), text_of(m.get("content"))
            extra = mapping(m.get("extra"))
            at = extra.get("timestamp")
            if role == "exit":
                log.skip("exit")
            elif role == "assistant":
                calls = _mini_calls(m, extra, text, i)
                usage = _mini_usage(extra, model_cfg.get("model_name"))
                turns.append(Turn("assistant", text, calls=calls, at=at, usage=usage))
                pending = [c.id for c in calls]
            elif role == "user" and (MINI_HARNESS.match(text) or MINI_PERSON.match(text)):
                pending = []  # the action was not run (rejected, interrupted) or the reply had none to run
                turns.append(Turn("user", text, at=at, origin="harness" if MINI_HARNESS.match(text) else "person"))
            elif role in ("tool", "user") and pending:
                answers = m.get("tool_call_id") if isinstance(m.get("tool_call_id"), str) else pending[0]
                pending = [p for p in pending if p != answers]
                code = extra.get("returncode")
                turns.append(
                    Turn(
                        "tool",
                        text,
                        answers=answers,
                        at=at,
                        is_error=code != 0 if isinstance(code, int) else bool(MINI_FAILED.match(text)),
                    )
                )
            else:
                origin = None if role != "user" else "harness" if asked else "person"
                asked = asked or role == "user"
                turns.append(Turn(role if isinstance(role, str) else "?", text, at=at, origin=origin))
    native = _instance(path)
    return [
        Conversation(
            native,
            turns,
            model=model_cfg.get("model_name"),
            outcome=grades.swebench_results(path, native),
            events=_stop(info),
        )
    ]


def _mini_calls(m: dict[str, Any], extra: dict[str, Any], text: str, i: int) -> list[ToolCall]:
    calls = [
        ToolCall(_fn(c).get("name"), _fn(c).get("arguments"), c.get("id"))
        for c in listed(m.get("tool_calls"))
        if isinstance(c, dict)
    ]
    if calls:
        return calls
    actions = [a for a in listed(extra.get("actions")) if isinstance(a, dict)]
    if actions:
        return [ToolCall("bash", a, a.get("tool_call_id") or f"action-{i}-{k}") for k, a in enumerate(actions)]
    return [ToolCall("bash", {"command": cmd}, f"action-{i}-{k}") for k, cmd in enumerate(BASH_BLOCK.findall(text))]


def _mini_usage(extra: dict[str, Any], model: Any) -> list[Usage]:
    resp = mapping(extra.get("response"))
    u = resp.get("usage") if isinstance(resp.get("usage"), dict) else None
    if u is None:
        return []
    details = mapping(u.get("prompt_tokens_details"))
    cached = details.get("cached_tokens")
    return [
        Usage(
            prompt_tokens=u.get("prompt_tokens"),
            output_tokens=u.get("completion_tokens"),
            cache_read_input_tokens=cached,
            message_id=resp.get("id") if isinstance(resp.get("id"), str) else None,
            model=resp.get("model") or model,
        )
    ]


def _instance(path: str) -> str:
    name = Path(path).name
    return name.split(".traj", 1)[0] if ".traj" in name else Path(path).stem


def _sniff_swe_agent(probe: Probe) -> bool:
    """A trajectory with its history, info or environment; one whose steps fill the head (the history comes
    after them); or a history alone whose messages carry SWE-agent's ``message_type`` (the demonstrations of
    function calling, 1.x)."""
    head = probe.head
    if head.lstrip()[:1] != b"{":
        return False
    if re.search(rb'"trajectory"\s*:\s*\[', head) is not None:
        return any(k in head for k in (b'"history"', b'"info"', b'"environment"')) or (
            STEP_KEYS.search(head) is not None and b'"observation"' in head
        )
    return re.search(rb'^\s*\{\s*"history"\s*:\s*\[', head) is not None and SWE_MESSAGE.search(head) is not None


def _sniff_mini(probe: Probe) -> bool:
    head = probe.head.lstrip()
    if head[:1] == b"{":
        return (
            b'"mini_version"' in probe.head
            or b'"trajectory_format": "mini-swe-agent' in probe.head
            or (probe.path.name.endswith(".traj.json") and b'"messages"' in probe.head)
        )
    return head[:1] == b"[" and probe.path.name.endswith(".traj.json") and b'"role"' in probe.head[:4096]


SWE_AGENT = Format(
    "swe-agent",
    "SWE-agent trajectories, <instance>.traj (history, trajectory steps, retry attempts)",
    _sniff_swe_agent,
    read=read_swe_agent,
    suffixes=(".traj", ".json"),
    claims=("*.traj",),
    sides=(
        Side(
            "all_preds.jsonl", "trajs/*.traj", "the SWE-bench predictions of the run: each instance's patch and model"
        ),
        Side("all_preds.jsonl", "*.traj", "the SWE-bench predictions of the run: each instance's patch and model"),
        Side(
            "all_preds.jsonl", "trajs/*/*.traj", "the SWE-bench predictions of the run: each instance's patch and model"
        ),
    ),
)
MINI_SWE_AGENT = Format(
    "mini-swe-agent",
    "mini-swe-agent trajectories, <instance>.traj.json",
    _sniff_mini,
    read=read_mini,
    suffixes=(".json",),
    claims=("*.traj.json",),
)
