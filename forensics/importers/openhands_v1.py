"""OpenHands V1 (the agent SDK and CLI, 2025-): events told apart by ``kind``, and how they are kept on disk.

The SDK (openhands/sdk/event/) writes pydantic events: ``SystemPromptEvent`` (``system_prompt``, ``tools``),
``MessageEvent`` (``llm_message``), ``ActionEvent`` (``thought``, ``action``, ``tool_call``, ``tool_call_id``,
``llm_response_id``), ``ObservationEvent`` (``observation``, ``tool_call_id``, ``action_id``),
``UserRejectObservation``, ``AgentErrorEvent``, ``Condensation``... A conversation is persisted as
``conversations/<id>/base_state.json`` (agent and LLM config, stats) and ``events/event-<n>-<id>.json``, one
event per file; tools that gather the events into one ``events.json`` (the trajectory visualizer) keep
``kind`` but some drop it, so an event without one is recognised by its fields.

``base_state.json`` is the main file of a persisted conversation: its reader reads the ``events`` folder
beside it. An event file alone is read with its ``base_state.json`` (or, without one, with the first event
file of its folder); a base state or the visualizer's ``trajectory.json`` (which embeds it as ``baseState``)
beside an ``events.json`` gives the model and nothing more: the events are read from ``events.json``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from forensics.importers import values
from forensics.importers.model import Conversation, Event, Log, ToolCall, Turn, mapping, text_of

SDK_KINDS = ("MessageEvent", "SystemPromptEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation",
             "AgentErrorEvent", "Condensation", "CondensationRequest", "PauseEvent", "ConversationStateUpdateEvent")


def kind_of(ev: dict[str, Any]) -> str | None:
    """An SDK event's kind, named or recognised by its fields; None for anything else (V0 events)."""
    kind = ev.get("kind")
    if isinstance(kind, str) and kind in SDK_KINDS:
        return kind
    if "system_prompt" in ev:
        return "SystemPromptEvent"
    if isinstance(ev.get("llm_message"), dict):
        return "MessageEvent"
    if isinstance(ev.get("action"), dict) and "tool_call_id" in ev:
        return "ActionEvent"
    if isinstance(ev.get("observation"), dict) and "tool_call_id" in ev:
        return "ObservationEvent"
    if "rejection_reason" in ev and "tool_call_id" in ev:
        return "UserRejectObservation"
    if "forgotten_event_ids" in ev:
        return "Condensation"
    return None


def sdk_event(log: Log, ev: dict[str, Any], kind: str, turns: list[Turn], events: list[Event],
              by_response: dict[str, Turn]) -> None:
    at, eid = ev.get("timestamp"), ev.get("id")
    if kind == "MessageEvent":
        msg = mapping(ev.get("llm_message"))
        role = msg.get("role") if isinstance(msg.get("role"), str) else "user" if ev.get("source") == "user" else "assistant"
        turns.append(Turn(str(role), text_of(msg.get("content")), at=at, id=eid))
    elif kind == "SystemPromptEvent":
        turns.append(Turn("system", text_of(ev.get("system_prompt")), at=at, id=eid))
    elif kind == "ActionEvent":
        call = mapping(ev.get("tool_call"))
        args = call.get("arguments", {k: v for k, v in mapping(ev.get("action")).items() if k != "kind"})
        rid = ev.get("llm_response_id") if isinstance(ev.get("llm_response_id"), str) else None
        turn = by_response.get(rid) if rid else None  # parallel calls of one response are one message
        if turn is None:
            turn = Turn("assistant", text_of(ev.get("thought")), at=at, id=eid)
            turns.append(turn)
            if rid:
                by_response[rid] = turn
        turn.calls.append(ToolCall(ev.get("tool_name") or call.get("name"), args, ev.get("tool_call_id") or call.get("id")))
    elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        obs = mapping(ev.get("observation"))
        text = text_of(obs.get("content") if "content" in obs else obs.get("output")) if kind == "ObservationEvent" \
            else text_of(ev.get("rejection_reason") or ev.get("error"))
        code = obs.get("exit_code")
        error = kind != "ObservationEvent" or obs.get("is_error") is True or (isinstance(code, int) and code not in (0, -1))
        turns.append(Turn("tool", text, answers=ev.get("tool_call_id"), is_error=error, at=at, id=eid))
    elif kind == "Condensation":
        events.append(Event("compaction", len(turns), detail={k: ev[k] for k in ("forgotten_event_ids", "summary",
                                                                                  "summary_offset") if k in ev}))
        log.skip("Condensation (-> events)")
    else:
        log.skip(f"event:{kind[:40]}")


def base_state(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The base state a document is or embeds (the visualizer's ``baseState``), else None."""
    if isinstance(doc.get("baseState"), dict):
        return mapping(doc["baseState"])
    return doc if isinstance(doc.get("agent"), dict) and ("stats" in doc or "persistence_dir" in doc) else None


def meta_beside(folder: Path) -> dict[str, Any]:
    """Evaluation-style metadata (``llm_config.model``) from the base state kept beside a conversation's events."""
    for name in ("base_state.json", "trajectory.json"):
        f = folder / name
        if f.is_file():
            try:
                doc = values.loads(f.read_bytes())
            except (ValueError, OSError):
                continue
            state = base_state(doc) if isinstance(doc, dict) else None
            model = mapping(mapping(mapping(state).get("agent")).get("llm")).get("model")
            if isinstance(model, str):
                return {"llm_config": {"model": model}}
    return {}


def read_file(path: Path, doc: dict[str, Any], log: Log, conversation: Any) -> list[Conversation]:
    """A base state, a visualizer summary or one event file (see the module's docstring); ``conversation``
    builds a conversation from a list of events (the V0 module's, which reads both generations)."""
    folder = path.parent
    if base_state(doc) is not None:
        events_dir = folder / "events"
        if path.name == "base_state.json" and events_dir.is_dir():
            return [conversation(log, folder.name, _folder_events(events_dir, log), meta_beside(folder), log.name)]
        beside = "events.json" if (folder / "events.json").is_file() else None
        log.notes.append(f"the base state of conversation {folder.name} (agent and LLM config, stats): "
                         + (f"its events are read from {beside}" if beside else "no events beside it"))
        log.skip("base state")
        return []
    if kind_of(doc) is None:
        log.error = "not an OpenHands event, base state or evaluation output"
        return []
    if (folder.parent / "base_state.json").is_file() or sorted(folder.glob("event-*.json"))[:1] != [path]:
        log.skip("event file (read with its conversation's base_state.json or first event file)")
        return []
    return [conversation(log, folder.parent.name, _folder_events(folder, log), meta_beside(folder.parent), log.name)]


def _folder_events(folder: Path, log: Log) -> list[Any]:
    out = []
    for f in sorted(folder.glob("event-*.json")):
        log.rows += 1
        try:
            raw = f.read_bytes()
        except OSError as e:
            log.quarantine(f"{folder.name}/{f.name}", f"cannot read event file ({e.strerror or e})", b"")
            continue
        try:
            out.append(values.loads(raw))
        except orjson.JSONDecodeError as e:
            log.quarantine(f"{folder.name}/{f.name}", values.json_reason(e), raw)
    return out
