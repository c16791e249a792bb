"""Harbor's Agent Trajectory Interchange Format (ATIF): ``trajectory.json`` (a Harbor trial's
``agent/trajectory.json``, and what other harnesses export in it), schema versions ``ATIF-v1.0`` to ``v1.8``.

One trajectory is one conversation (``session_id``, else ``trajectory_id``): ``agent`` {``name``, ``version``,
``model_name``} and ``steps``, each ``{step_id, timestamp, source, message, ...}``:

* ``source: user``: the task or the person's message, the person's (but the prompts Terminus 2 writes there when it
  summarises its context: the harness's);
* ``source: system``: the system prompt (harness);
* ``source: agent``: one model response (``llm_call_count`` of them where a step aggregates several; 0: a
  dispatch the harness made without the model): ``message``, ``reasoning_content`` (left out), ``tool_calls``
  [{``tool_call_id``, ``function_name``, ``arguments``}], ``metrics`` {``prompt_tokens`` (the cache's
  included), ``completion_tokens``, ``cached_tokens``}, ``model_name`` (else the agent's).

``message`` is a string or (v1.6) content parts: ``text`` parts are read, ``image`` and (v1.8) ``audio`` parts
(a ``source`` path, never opened) are counted. A step's ``observation.results`` [{``source_call_id``,
``content``}] (v1.2: on any step, not only the agent's) are tool messages after it, linked by id; one without an
id answers the step's only call, or none. A result's ``subagent_trajectory_ref`` (v1.7: a list of
{``trajectory_id``, ``trajectory_path``, ``session_id``}; one object in some writers) names a delegated sub-agent: one
embedded in the document's ``subagent_trajectories`` (v1.7) is read as its own conversation, the parent's child;
one in another file is read from that file, the child of the session its ``agent.extra.parent_session_id`` names
(Terminus 2's summarising sub-agents). Steps with ``is_copied_context`` (a continuation's copy of the
trajectory it continues, ``continued_trajectory_ref``) are not new: skipped, with a ``continuation`` event
before the first new step. A step whose ``extra.context_management`` says Harbor summarised the context (Terminus 2:
``{"type": "compaction", "boundary": "replace"}`` on the handoff step) is an event of that type before it, naming
the summarising sub-agents; a result that only references sub-agents, answering no call, is no message.

The trial's ``result.json`` two folders up (Harbor: ``<trial>/result.json``) gives the outcome:
``verifier_result.rewards.reward`` (success when it is 1 or more) and ``task_name``. ``final_metrics`` (totals),
``notes``, ``extra``, ``agent.tool_definitions`` hold no message. Read from Harbor's RFC 0001 and the models
that write it (docs/formats.md says which versions were seen in real files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import (
    Conversation,
    Event,
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
# the prompts Terminus 2 writes on the user role when it summarises its context (harbor/agents/terminus_2): the
# handoff, the new agent's questions, the answers: the harness's words, not the person's
HANDOFF = (
    "You are about to hand off your work to another AI agent.",
    "You are picking up work from a previous AI agent on this task",
    "The next agent has a few questions for you, please answer",
    "Here are the answers the other agent provided.",
)
MEDIA = ("image", "audio")  # content parts that hold no text: a file the step names (v1.6 image, v1.8 audio)


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        if doc is not None:
            log.error = "not an ATIF trajectory (an object with schema_version and steps)"
        return []
    native = _text(doc.get("session_id")) or _text(doc.get("trajectory_id")) or Path(path).parent.parent.name
    out: list[Conversation] = []
    # a sub-agent Harbor wrote to its own file (Terminus 2's summarisers) names its parent in agent.extra
    parent = _text(mapping(mapping(doc.get("agent")).get("extra")).get("parent_session_id"))
    _trajectory(doc, native, parent, log, log.name, out)
    if out:
        out[0].outcome = _outcome(path, log)
    return out


def _trajectory(
    doc: dict[str, Any], native: str, parent: str | None, log: Log, where: str, out: list[Conversation]
) -> None:
    """One trajectory document as a conversation, then its embedded sub-agents (``subagent_trajectories``) as its
    children, each named by its ``trajectory_id`` under the parent's id (they may share its ``session_id``)."""
    agent = mapping(doc.get("agent"))
    default_model = _text(agent.get("model_name"))
    turns: list[Turn] = []
    events: list[Event] = []
    model = None
    copied = 0
    for _, at_, step in log.objects(doc.get("steps"), f"{where}.steps", "step"):
        with log.guard(at_, step):
            role = SOURCES.get(str(step.get("source")))
            if role is None:
                log.quarantine(at_, f"unknown step source {str(step.get('source'))[:40]!r}", step)
                continue
            if step.get("is_copied_context") is True:
                copied += 1
                log.skip("copied context step")
                continue
            if copied and not events:
                events.append(Event("continuation", len(turns), detail={"copied_steps": copied}))
            sid, at = step.get("step_id"), step.get("timestamp")
            text = _message(step.get("message"), log)
            results = [r for r in listed(mapping(step.get("observation")).get("results")) if isinstance(r, dict)]
            managed = mapping(mapping(step.get("extra")).get("context_management"))
            if managed:  # Harbor's context summarization: the handoff step, its summarising sub-agents referenced
                kind = managed.get("type")
                detail = dict(managed, subagents=[n for r in results for n in _refs(r.get("subagent_trajectory_ref"))])
                events.append(
                    Event(kind if isinstance(kind, str) and kind else "compaction", len(turns), detail=detail)
                )
            calls: list[ToolCall] = []
            if role != "assistant":
                person = role == "user" and not text.lstrip().startswith(HANDOFF)
                turns.append(Turn(role, text, at=at, id=str(sid), origin="person" if person else "harness"))
            else:
                calls = [
                    ToolCall(c.get("function_name"), c.get("arguments"), c.get("tool_call_id"))
                    for c in listed(step.get("tool_calls"))
                    if isinstance(c, dict)
                ]
                m = _text(step.get("model_name")) or default_model
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
            for k, r in enumerate(results):
                cid = _text(r.get("source_call_id")) or (calls[0].id if len(calls) == 1 else None)
                refs = _refs(r.get("subagent_trajectory_ref"))
                body = _message(r.get("content"), log)
                if not body and refs and cid is None:  # only names sub-agents (a summarisation's): no message
                    log.skip("sub-agent reference")
                    continue
                if not body and refs:  # a delegation whose answer is the sub-agent's trajectory
                    body = "sub-agent trajectory " + ", ".join(refs)
                turns.append(Turn("tool", body, answers=cid, at=at, id=f"{sid}:result{k}", origin="tool_result"))
    if copied and not events:  # a continuation with nothing new after the copy
        events.append(Event("continuation", len(turns), detail={"copied_steps": copied}))
    for key in ("final_metrics", "notes", "extra", "continued_trajectory_ref"):
        if doc.get(key) is not None:
            log.ignore(key)
    if agent.get("tool_definitions") is not None:
        log.ignore("agent.tool_definitions")
    out.append(
        Conversation(
            native,
            turns,
            provider=_text(agent.get("name")),
            model=model or default_model,
            created=turns[0].at if turns else None,
            parent=parent,
            events=events,
        )
    )
    for i, child_where, child in log.objects(
        doc.get("subagent_trajectories"), f"{where}.subagent_trajectories", "trajectory"
    ):
        with log.guard(child_where, child):
            name = _text(child.get("trajectory_id")) or _text(child.get("session_id")) or str(i)
            _trajectory(child, f"{native}/{name}", native, log, child_where, out)


def _message(v: Any, log: Log) -> str:
    """A step's message or a result's content: a string, or (v1.6+) content parts of which the text ones are read
    and the media ones (image, v1.8 audio: a file they name) counted."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if not isinstance(v, list):  # an object where text was due: kept as JSON
        return text_of(v, kinds=None)
    out = []
    for part in v:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif isinstance(part, str):
            out.append(part)
        else:
            log.ignore(f"{kind} part" if kind in MEDIA else "content part of another type")
    return "\n".join(out)


def _refs(v: Any) -> list[str]:
    """What a result's ``subagent_trajectory_ref`` names: each reference's ``trajectory_id``, else its path, else
    its session (to v1.6 a list keyed by ``session_id``, one object in some writers; v1.7 keyed by ``trajectory_id``
    or ``trajectory_path``)."""
    items = [v] if isinstance(v, dict) else listed(v)
    names = []
    for ref in items:
        if isinstance(ref, dict):
            name = _text(ref.get("trajectory_id")) or _text(ref.get("trajectory_path")) or _text(ref.get("session_id"))
            if name:
                names.append(name)
    return names


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


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
