"""Harbor's Agent Trajectory Interchange Format (ATIF): ``trajectory.json`` (a Harbor trial's
``agent/trajectory.json``, and what other harnesses export in it), schema versions ``ATIF-v1.0`` to ``v1.8``.

One trajectory is one conversation (``session_id``): ``agent`` {``name``, ``version``, ``model_name``} and
``steps``, each ``{step_id, timestamp, source, message, ...}``:

* ``source: user``: the task or the person's message, the person's (``message``: a string, or content parts from
  v1.6);
* ``source: system``: the system prompt (harness);
* ``source: agent``: one model response: ``message``, ``reasoning_content`` (left out), ``tool_calls``
  [{``tool_call_id``, ``function_name``, ``arguments``}], ``observation.results`` [{``source_call_id``,
  ``content``}] (each result a tool message after it, linked by id; one without an id answers the step's only
  call, or none), ``metrics`` {``prompt_tokens`` (the cache's included), ``completion_tokens``,
  ``cached_tokens``}, ``model_name`` (else the agent's).

The trial's ``result.json`` two folders up (Harbor: ``<trial>/result.json``) gives the outcome:
``verifier_result.rewards.reward`` (success when it is 1 or more) and ``task_name``. ``final_metrics`` (totals),
``notes`` and ``extra`` hold no message. Built from Harbor's RFC 0001 and the models that write it (no real
trajectory file was found outside test code; docs/formats.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import (
    Conversation,
    Log,
    Outcome,
    ToolCall,
    Turn,
    Usage,
    listed,
    mapping,
    read_side,
    text_of,
)

SOURCES = {"user": "user", "agent": "assistant", "system": "system"}


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        if doc is not None:
            log.error = "not an ATIF trajectory (an object with schema_version and steps)"
        return []
    agent = mapping(doc.get("agent"))
    default_model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    turns: list[Turn] = []
    model = None
    for _, where, step in log.objects(doc["steps"], f"{log.name}.steps", "step"):
        with log.guard(where, step):
            role = SOURCES.get(str(step.get("source")))
            if role is None:
                log.quarantine(where, f"unknown step source {str(step.get('source'))[:40]!r}", step)
                continue
            sid, at = step.get("step_id"), step.get("timestamp")
            text = _message(step.get("message"))
            if role != "assistant":
                turns.append(Turn(role, text, at=at, id=str(sid), origin="harness" if role == "system" else "person"))
                continue
            calls = [
                ToolCall(c.get("function_name"), c.get("arguments"), c.get("tool_call_id"))
                for c in listed(step.get("tool_calls"))
                if isinstance(c, dict)
            ]
            m = step.get("model_name") if isinstance(step.get("model_name"), str) else default_model
            model = model or m
            t = Turn("assistant", text, calls, at=at, id=str(sid))
            met = mapping(step.get("metrics"))
            if met:
                t.usage.append(
                    Usage(
                        prompt_tokens=met.get("prompt_tokens"),
                        output_tokens=met.get("completion_tokens"),
                        cache_read_input_tokens=met.get("cached_tokens"),
                        model=m,
                    )
                )
            turns.append(t)
            results = [r for r in listed(mapping(step.get("observation")).get("results")) if isinstance(r, dict)]
            for k, r in enumerate(results):
                cid = (
                    r.get("source_call_id")
                    if isinstance(r.get("source_call_id"), str)
                    else (calls[0].id if len(calls) == 1 else None)
                )
                turns.append(
                    Turn(
                        "tool",
                        text_of(r.get("content"), kinds=None),
                        answers=cid,
                        at=at,
                        id=f"{sid}:result{k}",
                        origin="tool_result",
                    )
                )
    for key in ("final_metrics", "notes", "extra"):
        if key in doc:
            log.ignore(key)
    return [
        Conversation(
            str(doc.get("session_id") or Path(path).parent.parent.name),
            turns,
            provider=agent.get("name") if isinstance(agent.get("name"), str) else None,
            model=model or default_model,
            created=turns[0].at if turns else None,
            outcome=_outcome(path, log),
        )
    ]


def _message(v: Any) -> str:
    """A step's message: a string, or (v1.6+) content parts of which the text ones are read."""
    if isinstance(v, str):
        return v
    return text_of(v, kinds=("text",)) if v is not None else ""


def _outcome(path: str, log: Log) -> Outcome | None:
    """Harbor's trial result beside the agent folder: the verifier's reward."""
    result = Path(path).parent.parent / "result.json"
    if Path(path).parent.name != "agent" or not result.is_file():
        return None
    try:
        doc = orjson.loads(read_side(result))
    except (OSError, ValueError):
        log.notes.append(f"{result.name} beside the trial could not be read: no outcome")
        return None
    rewards = mapping(mapping(mapping(doc).get("verifier_result")).get("rewards"))
    reward = rewards.get("reward")
    if not isinstance(reward, (int, float)) or isinstance(reward, bool):
        return None
    task = mapping(doc).get("task_name")
    return Outcome(
        reward >= 1, float(reward), "verifier_result.rewards.reward", reward, task if isinstance(task, str) else None
    )


def _sniff(probe: Probe) -> bool:
    doc = probe.document
    if isinstance(doc, dict):
        return isinstance(doc.get("steps"), list) and str(doc.get("schema_version", "")).startswith("ATIF")
    keys, _ = probe.first_keys
    return b'"schema_version"' in probe.head[:400] and b'"ATIF-v' in probe.head[:400] and not keys


FORMAT = Format(
    "atif",
    "Harbor's Agent Trajectory Interchange Format, trajectory.json (schema_version ATIF-v1.x): "
    "steps of user, system and agent, tool calls with observations, metrics; the trial's reward",
    _sniff,
    read=read,
    suffixes=(".json",),
    sides=(Side("result.json", "agent/trajectory.json", "the Harbor trial's result: its reward"),),
)
