"""tau2-bench simulation results (sierra-research/tau2-bench): one JSON document, one run per simulation.

tau2 saves ``Results`` (src/tau2/data_model/simulation.py): ``info`` (``agent_info.llm`` is the agent's
model, ``user_info`` the user simulator's), ``tasks`` and ``simulations``. A simulation (``SimulationRun``)
has ``id``, ``task_id``, ``trial`` (the run is named ``task <task_id> trial <trial>``, as tau-bench's are), ``start_time``/``end_time``, ``termination_reason``, ``reward_info``
and ``messages`` (src/tau2/data_model/message.py): ``assistant`` and ``user`` messages with ``content``,
``tool_calls`` (``{id, name, arguments, requestor}``) and ``usage`` (``prompt_tokens``,
``completion_tokens``), and ``tool`` messages (``id`` of the call, ``requestor``, ``error``).

The simulated user is the person. In some domains (telecom) the user acts on their own device through
tools: such a call and its result become one ``tool_result`` turn on the user role (``name {arguments}``,
then the output), so that the person's words stay theirs and the agent's steps stay the agent's. A user
message with no words, only device calls, is skipped and counted (its calls live in those turns).

A run saved in the "dir" format (``Results.save(format="dir")``, the default for voice runs) is
``results.json`` (the metadata and ``simulation_index``: skipped and counted) beside ``simulations/<id>.json``
(one ``SimulationRun`` each, read with the model of that ``results.json``).

The outcome is ``reward_info.reward`` (success when it is at least 1, tau2's own rule); ``tasks`` hold the
graders' expected actions and are not read. The task key is the simulation's ``task_id``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.grades import reward
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of

SIMULATIONS = "simulations"  # the "dir" format: results.json (metadata) and simulations/<id>.json, one run each


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    if Path(path).parent.name == SIMULATIONS and "messages" in mapping(doc):  # the "dir" format: one run per file
        meta = _metadata(Path(path).parent.parent / "results.json")
        return [_run(log, doc, 0, log.name, _model(meta))]
    if not isinstance(mapping(doc).get("simulations"), list):
        if isinstance(mapping(doc).get("simulation_index"), list) or (Path(path).parent / SIMULATIONS).is_dir():
            log.skip("run metadata (its runs are the files of simulations/)")
        elif doc is not None:
            log.error = "not tau2-bench results (no simulations list)"
        return []
    log.skip("task (the graders' expected actions, not a conversation)", len(listed(doc.get("tasks"))))
    out = []
    for i, where, s in log.objects(doc["simulations"], f"{log.name}:simulations", "simulation"):
        with log.guard(where, s):
            out.append(_run(log, s, i, where, _model(doc)))
    return out


def _run(log: Log, s: dict[str, Any], i: int, where: str, model: str | None) -> Conversation:
    task, trial = s.get("task_id"), s.get("trial")
    native = f"task {task} trial {trial}" if task is not None and trial is not None else str(s.get("id", f"#{i}"))
    conv = Conversation(
        native,
        _turns(log, listed(s.get("messages")), where, model),
        title=None if task is None else str(task),
        model=model,
        created=s.get("start_time"),
        updated=s.get("end_time"),
    )
    conv.outcome = reward(mapping(s.get("reward_info")).get("reward"), "reward_info.reward", task)
    return conv


def _model(doc: Any) -> str | None:
    llm = mapping(mapping(mapping(doc).get("info")).get("agent_info")).get("llm")
    return llm if isinstance(llm, str) else None


def _metadata(path: Path) -> Any:
    try:
        return values.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _turns(log: Log, messages: list[Any], where: str, model: Any) -> list[Turn]:
    turns: list[Turn] = []
    device: dict[str, ToolCall] = {}  # the user's own tool calls, by id, waiting for their results
    for i, _, m in log.objects(messages, where + ".messages", "message"):
        role, text, at = m.get("role"), text_of(m.get("content")), m.get("timestamp")
        calls = [
            ToolCall(c.get("name"), c.get("arguments"), c.get("id"))
            for c in listed(m.get("tool_calls"))
            if isinstance(c, dict)
        ]
        if role == "assistant":
            turns.append(Turn("assistant", text, calls=calls, at=at, id=str(i), usage=_usage(m, model)))
        elif role == "user":
            device.update((str(c.id), c) for c in calls)
            if text.strip() or not calls:
                turns.append(Turn("user", text, at=at, id=str(i), origin="person"))
            else:
                log.skip("user message of only device tool calls (kept with their results)")
        elif role == "tool" and m.get("requestor") == "user":
            call = device.pop(str(m.get("id")), None)
            head = f"{call.name} {json.dumps(call.arguments, sort_keys=True)}\n" if call else ""
            turns.append(Turn("user", head + text, at=at, id=str(i), origin="tool_result"))
        elif role == "tool":
            turns.append(Turn("tool", text, answers=m.get("id"), is_error=bool(m.get("error")), at=at, id=str(i)))
        else:
            turns.append(Turn(role if isinstance(role, str) else "?", text, at=at, id=str(i)))
    return turns


def _usage(m: dict[str, Any], model: Any) -> list[Usage]:
    u = m.get("usage")
    if not isinstance(u, dict):
        return []
    details = u.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    return [
        Usage(
            prompt_tokens=u.get("prompt_tokens"),
            output_tokens=u.get("completion_tokens"),  # litellm's usage
            cache_read_input_tokens=details.get("cached_tokens"),
            model=model if isinstance(model, str) else None,
        )
    ]


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    if head[:1] != b"{":
        return False
    run_file = probe.path.parent.name == SIMULATIONS and all(  # the "dir" format's SimulationRun files
        k in probe.head for k in (b'"task_id"', b'"termination_reason"', b'"trial"')
    )
    return run_file or (
        b'"user_info"' in probe.head
        and b'"agent_info"' in probe.head
        or b'"simulations"' in probe.head
        and b'"reward_info"' in probe.head
    )


FORMAT = Format(
    "tau2",
    "tau2-bench simulation results: one run per simulation, outcome reward_info.reward",
    _sniff,
    read=read,
    suffixes=(".json",),
)
