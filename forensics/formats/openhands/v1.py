"""OpenHands V1 (the agent SDK and CLI, 2025-): events told apart by ``kind``, and how they are kept on disk.

The SDK (openhands/sdk/event/) writes pydantic events: ``SystemPromptEvent`` (``system_prompt``, ``tools``),
``MessageEvent`` (``llm_message``), ``ActionEvent`` (``thought``, ``action``, ``tool_call``, ``tool_call_id``,
``llm_response_id``), ``ObservationEvent`` (``observation``, ``tool_call_id``, ``action_id``),
``UserRejectObservation``, ``AgentErrorEvent``, ``Condensation``... Tools that gather the events into one
``events.json`` (the trajectory visualizer) keep ``kind`` but some drop it, so an event without one is
recognised by its fields. How conversations are kept on disk is ``openhands_store``'s.
"""

from __future__ import annotations

from typing import Any

from forensics.formats.kit.model import Event, Log, ToolCall, Turn, mapping, text_of

SDK_KINDS = (
    "MessageEvent",
    "SystemPromptEvent",
    "ActionEvent",
    "ObservationEvent",
    "UserRejectObservation",
    "AgentErrorEvent",
    "Condensation",
    "CondensationRequest",
    "PauseEvent",
    "ConversationStateUpdateEvent",
)


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


def sdk_event(
    log: Log, ev: dict[str, Any], kind: str, turns: list[Turn], events: list[Event], by_response: dict[str, Turn]
) -> None:
    at, eid = ev.get("timestamp"), ev.get("id")
    if kind == "MessageEvent":
        msg = mapping(ev.get("llm_message"))
        role = (
            msg.get("role")
            if isinstance(msg.get("role"), str)
            else "user"
            if ev.get("source") == "user"
            else "assistant"
        )
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
        turn.calls.append(
            ToolCall(ev.get("tool_name") or call.get("name"), args, ev.get("tool_call_id") or call.get("id"))
        )
    elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        obs = mapping(ev.get("observation"))
        text = (
            text_of(obs.get("content") if "content" in obs else obs.get("output"))
            if kind == "ObservationEvent"
            else text_of(ev.get("rejection_reason") or ev.get("error"))
        )
        code = obs.get("exit_code")
        error = (
            kind != "ObservationEvent" or obs.get("is_error") is True or (isinstance(code, int) and code not in (0, -1))
        )
        turns.append(Turn("tool", text, answers=ev.get("tool_call_id"), is_error=error, at=at, id=eid))
    elif kind == "Condensation":
        events.append(
            Event(
                "compaction",
                len(turns),
                detail={k: ev[k] for k in ("forgotten_event_ids", "summary", "summary_offset") if k in ev},
            )
        )
        log.skip("Condensation (-> events)")
    else:
        log.skip(f"event:{kind[:40]}")
