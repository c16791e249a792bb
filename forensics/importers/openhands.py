"""OpenHands event trajectories: a JSON list of events (the UI's trajectory download, ``--save-trajectory-path``)
and evaluation ``output.jsonl``, one ``EvalOutput`` per line with the events under ``history``.

An event (openhands/events/serialization/event.py) is an action (``action``, ``args``) or an observation
(``observation``, ``content``, ``extras``), with ``id``, ``source`` (user, agent, environment), ``cause`` (the
action an observation answers) and, for function-calling agents, ``tool_call_metadata`` (``tool_call_id``,
``function_name``, and the ``model_response`` the call came from). A user or agent ``message`` action is a
message, a ``system`` action the system prompt; every other agent action is a tool call, the actions of
one model response forming one assistant message whose text is their ``thought``; an observation is the
result of the action it names. Token usage is ``llm_metrics.token_usages``, one entry per response id
(every event repeats the list so far: each id counts once). A ``condensation`` action is a compaction.
State changes and recalls are skipped and counted. Older evaluations stored ``history`` as
``[action, observation]`` pairs; the agent SDK (OpenHands V1) writes events told apart by ``kind``
(``MessageEvent``, ``ActionEvent`` with ``tool_call``, ``ObservationEvent``, ``Condensation``...): all are read.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.importers import grades
from forensics.importers.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping, text_of
from forensics.importers.registry import Format, Probe

SKIPPED_ACTIONS = ("change_agent_state", "null", "pause", "resume", "stop", "recall",
                             "condensation_request", "start")
SKIPPED_OBSERVATIONS = ("agent_state_changed", "null", "recall", "condense")
SDK_KINDS = ("MessageEvent", "SystemPromptEvent", "ActionEvent", "ObservationEvent")
SDK_KIND = re.compile(rb'"kind"\s*:\s*"(?:' + "|".join(SDK_KINDS).encode() + rb')"')
ERROR_OBSERVATIONS = ("error", "user_rejected", "reject")


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    if data.lstrip()[:1] == b"[":
        doc = log.json_document(data)
        if not isinstance(doc, list):
            return []
        return [_conversation(log, Path(path).stem, doc, {}, log.name)]
    out = []
    for n, raw, rec in log.json_lines(data):
        where = f"{log.name}:{n}"
        if not isinstance(rec.get("history"), list):
            log.quarantine(where, "no history list (an OpenHands evaluation output line holds one)", raw)
            continue
        meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
        native = str(rec.get("instance_id") or f"line {n}")
        history = [e for pair in rec["history"] for e in (pair if isinstance(pair, list) else [pair])]
        conv = _conversation(log, native, history, meta, where)
        if isinstance(rec.get("instruction"), str) and not any(t.role == "user" for t in conv.turns):
            conv.turns.insert(0, Turn("user", rec["instruction"], id="instruction"))
        conv.outcome = grades.openhands_resolved(rec.get("test_result"), rec.get("instance_id"))
        out.append(conv)
    return out


def _conversation(log: Log, native: str, events: list, meta: dict, where: str) -> Conversation:
    turns: list[Turn] = []
    conv_events: list[Event] = []
    by_response: dict[str, Turn] = {}
    used: set[str] = set()  # response ids whose usage is recorded
    usages: dict[str, dict] = {}
    for _, loc, ev in log.objects(events, where, "event"):
        with log.guard(loc, ev):
            for u in _token_usages(ev):
                usages.setdefault(str(u.get("response_id")), u)
            if isinstance(ev.get("kind"), str):
                _sdk_event(log, ev, turns, conv_events, by_response)
            elif "action" in ev:
                _action(log, ev, turns, conv_events, by_response, loc)
            elif "observation" in ev:
                _observation(log, ev, turns)
            else:
                log.quarantine(loc, "neither an action nor an observation", ev)
    for rid, turn in by_response.items():
        u = usages.get(rid)
        if u is not None and rid not in used:
            used.add(rid)
            turn.usage.append(Usage(prompt_tokens=u.get("prompt_tokens"), output_tokens=u.get("completion_tokens"),
                                    cache_creation_input_tokens=u.get("cache_write_tokens"),
                                    cache_read_input_tokens=u.get("cache_read_tokens"), message_id=rid,
                                    model=u.get("model") or None))
    llm = meta.get("llm_config") if isinstance(meta.get("llm_config"), dict) else {}
    model = llm.get("model") or next((u.model for t in turns for u in t.usage if u.model), None)
    first = next((e.get("timestamp") for e in events if isinstance(e, dict) and e.get("timestamp")), None)
    return Conversation(native, turns, model=model, created=first, events=conv_events)


def _action(log: Log, ev: dict, turns: list[Turn], events: list[Event], by_response: dict[str, Turn],
            loc: str) -> None:
    kind, source = ev.get("action"), ev.get("source")
    args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
    at, eid = ev.get("timestamp"), ev.get("id")
    if kind == "message":
        role = "user" if source == "user" else "assistant"
        turns.append(Turn(role, text_of(args.get("content", ev.get("message"))), at=at, id=eid))
    elif kind == "system":
        turns.append(Turn("system", text_of(args.get("content")), at=at, id=eid))
    elif kind == "condensation":
        events.append(Event("compaction", len(turns), detail={
            k: args[k] for k in ("forgotten_event_ids", "forgotten_events_start_id", "forgotten_events_end_id",
                                 "summary", "summary_offset") if args.get(k) is not None}))
        log.skip("condensation (-> events)")
    elif kind in SKIPPED_ACTIONS:
        log.skip(f"action:{kind}")
    elif source == "user":
        log.skip(f"user action:{str(kind)[:40]}")
    else:
        meta = ev.get("tool_call_metadata") if isinstance(ev.get("tool_call_metadata"), dict) else {}
        rid = _response_id(meta)
        call = ToolCall(meta.get("function_name") or kind, {k: v for k, v in args.items() if k != "thought"},
                        meta.get("tool_call_id") or f"event-{eid}")
        thought = args.get("thought") if isinstance(args.get("thought"), str) else ""
        if kind == "finish":
            thought = "\n".join(filter(None, [thought, text_of(args.get("final_thought") or args.get("message"))]))
        turn = by_response.get(rid) if rid else None  # parallel calls of one response are one message
        if turn is None:
            turn = Turn("assistant", thought, at=at, id=eid)
            turns.append(turn)
            if rid:
                by_response[rid] = turn
        elif thought and thought not in turn.text:
            turn.text = f"{turn.text}\n{thought}" if turn.text else thought
        turn.calls.append(call)


def _observation(log: Log, ev: dict, turns: list[Turn]) -> None:
    kind = ev.get("observation")
    if kind in SKIPPED_OBSERVATIONS:
        log.skip(f"observation:{kind}")
        return
    meta = ev.get("tool_call_metadata") if isinstance(ev.get("tool_call_metadata"), dict) else {}
    extras = ev.get("extras") if isinstance(ev.get("extras"), dict) else {}
    answers = meta.get("tool_call_id") or (f"event-{ev['cause']}" if ev.get("cause") is not None else None)
    cmd = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
    code = cmd.get("exit_code", extras.get("exit_code"))
    error = kind in ERROR_OBSERVATIONS or ev.get("success") is False or (isinstance(code, int) and code not in (0, -1))
    turns.append(Turn("tool", text_of(ev.get("content", ev.get("message"))), answers=answers, is_error=error,
                      at=ev.get("timestamp"), id=ev.get("id")))


def _sdk_event(log: Log, ev: dict, turns: list[Turn], events: list[Event], by_response: dict[str, Turn]) -> None:
    """An event of the OpenHands agent SDK (V1, 2025-): a pydantic union told apart by ``kind``."""
    kind, at, eid = ev["kind"], ev.get("timestamp"), ev.get("id")
    if kind == "MessageEvent":
        msg = mapping(ev.get("llm_message"))
        role = msg.get("role") if isinstance(msg.get("role"), str) else "user" if ev.get("source") == "user" else "assistant"
        turns.append(Turn(role, text_of(msg.get("content")), at=at, id=eid))
    elif kind == "SystemPromptEvent":
        turns.append(Turn("system", text_of(ev.get("system_prompt")), at=at, id=eid))
    elif kind == "ActionEvent":
        call = mapping(ev.get("tool_call"))
        args = call.get("arguments", {k: v for k, v in mapping(ev.get("action")).items() if k != "kind"})
        rid = ev.get("llm_response_id") if isinstance(ev.get("llm_response_id"), str) else None
        turn = by_response.get(rid) if rid else None
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


def _token_usages(ev: dict) -> list[dict]:
    metrics = ev.get("llm_metrics")
    usages = metrics.get("token_usages") if isinstance(metrics, dict) else None
    return [u for u in usages if isinstance(u, dict) and u.get("response_id")] if isinstance(usages, list) else []


def _response_id(meta: dict) -> str | None:
    resp = meta.get("model_response")
    rid = resp.get("id") if isinstance(resp, dict) else None
    return rid if isinstance(rid, str) else None


def _is_event(v: Any) -> bool:
    return isinstance(v, dict) and (("action" in v or "observation" in v) and ("source" in v or "args" in v)
                                    or v.get("kind") in SDK_KINDS)


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite or probe.is_zip:
        return False
    head = probe.head.lstrip()
    if head[:1] == b"[":
        doc = probe.document
        if isinstance(doc, list):
            return bool(doc) and _is_event(doc[0])
        return SDK_KIND.search(head[:4000]) is not None or b'"action"' in head[:2000] and (
            b'"source"' in head[:2000] or b'"args"' in head[:2000]) \
            and head[1:].lstrip()[:1] == b"{"
    for r in probe.records:
        if isinstance(r, dict) and isinstance(r.get("history"), list) and r["history"]:
            first = r["history"][0]
            return _is_event(first[0] if isinstance(first, list) and first else first)
    return b'"instance_id"' in head[:4096] and b'"history"' in head[:4096] and b'"observation"' in head


FORMAT = Format("openhands", "OpenHands event trajectories (a JSON list of events) and evaluation output.jsonl",
                _sniff, read=read, claims=("output.jsonl", "*/evaluation_outputs/*.jsonl", "*/sessions/*/events/*.json"))
