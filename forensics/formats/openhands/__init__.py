"""OpenHands event trajectories: a JSON list of events (the UI's trajectory download, ``--save-trajectory-path``,
a V1 ``events.json``), evaluation and resolver ``output.jsonl`` (one run per line, the events under
``history``), and conversations kept one file per event (V0 ``sessions/<sid>/``, V1 ``conversations/<id>/``:
``openhands_store``).

A V0 event (openhands/events/serialization/event.py) is an action (``action``, ``args``) or an observation
(``observation``, ``content``, ``extras``), with ``id``, ``source`` (user, agent, environment), ``cause`` (the
action an observation answers) and, for function-calling agents, ``tool_call_metadata`` (``tool_call_id``,
``function_name``, and the ``model_response`` the call came from). A user or agent ``message`` action is a
message, a ``system`` action the system prompt; every other agent action is a tool call, the actions of
one model response forming one assistant message whose text is their ``thought``; an observation is the
result of the action it names by ``tool_call_id`` or ``cause``. Token usage is ``llm_metrics.token_usages``,
one entry per response id (every event repeats the list so far: each id counts once). A ``condensation``
action is a compaction. State changes and recalls are skipped and counted.

Older histories differ: evaluations of 2024 stored ``[action, observation]`` pairs, and the resolver's
output of late 2024 flattens each event (``{"action": "run", "command", "thought"}``, ``{"observation":
"run", "command", "content", "exit_code"}``, no ``id``, ``source`` or ``cause``). There an observation is
linked to the open call of the same kind whose arguments it echoes (``command``, ``code``, ``path``...),
never by order alone: one that echoes nothing it could match stays unlinked. A message without a source is
the user's until the agent has acted. The fake user's "Please continue on whatever approach..." is the
harness's (the origin classifier knows it). The server's ``/trajectory`` answer saved as is
(``{"trajectory": [...]}``) is read like the UI's download of it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit import grades, values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, Outcome, ToolCall, Turn, Usage, mapping, text_of
from forensics.formats.openhands import store as openhands_store
from forensics.formats.openhands import v1 as openhands_v1

SKIPPED_ACTIONS = ("change_agent_state", "null", "pause", "resume", "stop", "recall", "condensation_request", "start")
SKIPPED_OBSERVATIONS = ("agent_state_changed", "null", "recall", "condense")
SDK_KIND = re.compile(rb'"kind"\s*:\s*"(?:' + "|".join(openhands_v1.SDK_KINDS).encode() + rb')"')
SDK_FIELDS = re.compile(
    rb'^\[\s*\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"source"\s*:\s*"\w+"\s*,'
    rb'\s*"(?:system_prompt|llm_message|thought|observation)"'
)
BASE_STATE = re.compile(rb'"baseState"\s*:\s*\{|"persistence_dir"\s*:|"agent"\s*:\s*\{\s*"llm"\s*:')
TRAJECTORY = re.compile(rb'\{\s*"trajectory"\s*:\s*\[\s*\{\s*"id"\s*:\s*\d+\s*,\s*"timestamp"')
EVENT_FILE = re.compile(rb'\{\s*"id"\s*:\s*(?:"[^"]*"|\d+)\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"source"\s*:')
EVAL_LINE = re.compile(rb'\{\s*"instance_id"\s*:\s*"')
EVAL_HISTORY = re.compile(rb'"history"\s*:\s*\[\s*[\[{]')
ERROR_OBSERVATIONS = ("error", "user_rejected", "reject")
EVENT_KEYS = (
    "id",
    "source",
    "cause",
    "timestamp",
    "message",
    "action",
    "observation",
    "tool_call_metadata",
    "llm_metrics",
    "args",
    "extras",
    "content",
    "success",
)
ECHOED = ("command", "code", "path", "url", "query")  # arguments an observation repeats from its action


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    head = data.lstrip()[:1]
    if head == b"[":
        doc = log.json_document(data)
        if not isinstance(doc, list):
            return []
        folder = Path(path).parent
        if folder.name == "event_cache":
            log.skip("event cache page (the events are read from events/)")
            return []
        native = folder.name if Path(path).name == "events.json" else Path(path).stem
        return [_conversation(log, native, doc, openhands_store.meta_beside(folder), log.name)]
    if head == b"{":
        try:
            doc = values.loads(data)
        except ValueError:
            doc = None  # JSONL: read below
        if isinstance(doc, dict) and isinstance(doc.get("trajectory"), list) and "history" not in doc:
            log.rows += 1  # the server's /trajectory answer saved as is
            return [_conversation(log, Path(path).stem, doc["trajectory"], {}, log.name)]
        if isinstance(doc, dict) and not isinstance(doc.get("history"), list):
            log.rows += 1
            return openhands_store.read_file(Path(path), doc, log, _conversation)
    out = []
    beside = grades.openhands_reports(path)
    for n, raw, rec in log.json_lines(data):
        where = f"{log.name}:{n}"
        if not isinstance(rec.get("history"), list):
            log.quarantine(where, "no history list (an OpenHands evaluation output line holds one)", raw)
            continue
        meta = mapping(rec.get("metadata"))
        issue = mapping(rec.get("issue"))
        native = str(
            rec.get("instance_id") or (f"issue {issue['number']}" if issue.get("number") is not None else f"line {n}")
        )
        history = [e for pair in rec["history"] for e in (pair if isinstance(pair, list) else [pair])]
        conv = _conversation(log, native, history, meta, where)
        conv.outcome = grades.openhands_resolved(rec.get("test_result"), rec.get("instance_id"), rec.get("report"))
        if conv.outcome is None and beside is not None and native in beside[1]:
            ok = beside[1][native]
            conv.outcome = Outcome(ok, float(ok), f"{beside[0]} resolved_ids", ok, native)
        if isinstance(rec.get("error"), str) and rec["error"].strip():  # the run stopped on it ("Agent reached
            # maximum iteration in headless mode...", an LLM error): the harness's word on how it stopped
            conv.events.append(Event("stop", None, trigger=rec["error"].strip()[:500], detail={"by": "error"}))
        if isinstance(rec.get("instruction"), str) and not any(t.role == "user" for t in conv.turns):
            conv.turns.insert(0, Turn("user", rec["instruction"], id="instruction"))
        out.append(conv)
    return out


class _State:
    """What one conversation's reading keeps between events."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.events: list[Event] = []
        self.by_response: dict[str, Turn] = {}
        self.open: list[tuple[str, str, dict[str, Any]]] = []  # calls not answered yet: (id, action kind, arguments)
        self.acted = False


def _conversation(log: Log, native: str, events: list[Any], meta: dict[str, Any], where: str) -> Conversation:
    st = _State()
    usages: dict[str, dict[str, Any]] = {}
    for i, loc, ev in log.objects(events, where, "event"):
        with log.guard(loc, ev):
            for usage in _token_usages(ev):
                usages.setdefault(str(usage.get("response_id")), usage)
            kind = openhands_v1.kind_of(ev)
            if kind is not None:
                openhands_v1.sdk_event(log, ev, kind, st.turns, st.events, st.by_response)
            elif isinstance(ev.get("action"), str):
                _action(log, ev, st, i)
            elif isinstance(ev.get("observation"), str):
                _observation(log, ev, st, i)
            else:
                log.quarantine(loc, "neither an action nor an observation", ev)
    for rid, turn in st.by_response.items():
        u = usages.get(rid)
        if u is not None:
            turn.usage.append(
                Usage(
                    prompt_tokens=u.get("prompt_tokens"),
                    output_tokens=u.get("completion_tokens"),
                    cache_creation_input_tokens=u.get("cache_write_tokens"),
                    cache_read_input_tokens=u.get("cache_read_tokens"),
                    message_id=rid,
                    model=u.get("model") or None,
                )
            )
    llm = mapping(meta.get("llm_config"))
    model = llm.get("model") or next((u.model for t in st.turns for u in t.usage if u.model), None)
    first = next((e.get("timestamp") for e in events if isinstance(e, dict) and e.get("timestamp")), None)
    return Conversation(native, st.turns, model=model, created=first, events=st.events)


def _args(ev: dict[str, Any]) -> dict[str, Any]:
    """An action's arguments: ``args``, or the event's own fields where the log flattened them."""
    if isinstance(ev.get("args"), dict):
        return mapping(ev["args"])
    return {k: v for k, v in ev.items() if k not in EVENT_KEYS or k in ("content",)}


def _action(log: Log, ev: dict[str, Any], st: _State, i: int) -> None:
    kind, source = ev["action"], ev.get("source")
    args = _args(ev)
    at, eid = ev.get("timestamp"), ev.get("id")
    if kind == "message":
        user = source == "user" or (source is None and not st.acted)
        st.turns.append(
            Turn("user" if user else "assistant", text_of(args.get("content", ev.get("message"))), at=at, id=eid)
        )
    elif kind == "system":
        st.turns.append(Turn("system", text_of(args.get("content")), at=at, id=eid))
    elif kind == "condensation":
        st.events.append(
            Event(
                "compaction",
                len(st.turns),
                detail={
                    k: args[k]
                    for k in (
                        "forgotten_event_ids",
                        "forgotten_events_start_id",
                        "forgotten_events_end_id",
                        "summary",
                        "summary_offset",
                    )
                    if args.get(k) is not None
                },
            )
        )
        log.skip("condensation (-> events)")
    elif kind in SKIPPED_ACTIONS:
        log.skip(f"action:{kind}")
    elif source == "user":
        log.skip(f"user action:{str(kind)[:40]}")
    else:
        st.acted = True
        meta = mapping(ev.get("tool_call_metadata"))
        rid = _response_id(meta)
        cid = str(meta.get("tool_call_id") or (f"event-{eid}" if eid is not None else f"action-{i}"))
        call_args = {k: v for k, v in args.items() if k != "thought"}
        call = ToolCall(meta.get("function_name") or kind, call_args, cid)
        st.open.append((cid, str(kind), call_args))
        thought = str(args["thought"]) if isinstance(args.get("thought"), str) else ""
        if kind == "finish":
            thought = "\n".join(filter(None, [thought, text_of(args.get("final_thought") or args.get("message"))]))
        turn = st.by_response.get(rid) if rid else None  # parallel calls of one response are one message
        if turn is None:
            turn = Turn("assistant", thought, at=at, id=eid)
            st.turns.append(turn)
            if rid:
                st.by_response[rid] = turn
        elif thought and thought not in turn.text:
            turn.text = f"{turn.text}\n{thought}" if turn.text else thought
        turn.calls.append(call)


def _observation(log: Log, ev: dict[str, Any], st: _State, i: int) -> None:
    kind = ev["observation"]
    if kind in SKIPPED_OBSERVATIONS:
        log.skip(f"observation:{kind}")
        return
    meta = mapping(ev.get("tool_call_metadata"))
    extras = (
        mapping(ev["extras"])
        if isinstance(ev.get("extras"), dict)
        else {k: v for k, v in ev.items() if k not in EVENT_KEYS}
    )
    if meta.get("tool_call_id"):
        answers = str(meta["tool_call_id"])
    elif ev.get("cause") is not None:
        answers = f"event-{ev['cause']}"
    else:
        answers = _echoed(st, str(kind), extras) or f"unlinked-{i}"
    st.open = [c for c in st.open if c[0] != answers]
    cmd = mapping(extras.get("metadata"))
    code = cmd.get("exit_code", extras.get("exit_code"))
    error = kind in ERROR_OBSERVATIONS or ev.get("success") is False or (isinstance(code, int) and code not in (0, -1))
    st.turns.append(
        Turn(
            "tool",
            text_of(ev.get("content", ev.get("message"))),
            answers=answers,
            is_error=error,
            at=ev.get("timestamp"),
            id=ev.get("id"),
        )
    )


def _echoed(st: _State, kind: str, extras: dict[str, Any]) -> str | None:
    """The latest open call of this kind whose arguments the observation repeats (a log with no ids)."""
    for cid, action, args in reversed(st.open):
        shared = [k for k in ECHOED if k in args and k in extras]
        if action == kind and shared and all(args[k] == extras[k] for k in shared):
            return str(cid)
    return None


def _token_usages(ev: dict[str, Any]) -> list[dict[str, Any]]:
    metrics = ev.get("llm_metrics")
    usages = metrics.get("token_usages") if isinstance(metrics, dict) else None
    return [u for u in usages if isinstance(u, dict) and u.get("response_id")] if isinstance(usages, list) else []


def _response_id(meta: dict[str, Any]) -> str | None:
    resp = meta.get("model_response")
    rid = resp.get("id") if isinstance(resp, dict) else None
    return rid if isinstance(rid, str) else None


def _is_event(v: Any) -> bool:
    return isinstance(v, dict) and (
        isinstance(v.get("action"), str) or isinstance(v.get("observation"), str) or openhands_v1.kind_of(v) is not None
    )


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite or probe.is_zip:
        return False
    head = probe.head.lstrip()
    if head[:1] == b"[":
        doc = probe.document
        if isinstance(doc, list):
            return bool(doc) and _is_event(doc[0])
        return (
            SDK_KIND.search(head) is not None
            or SDK_FIELDS.match(head) is not None
            or b'"action"' in head[:2000]
            and (b'"source"' in head[:2000] or b'"args"' in head[:2000])
            and head[1:].lstrip()[:1] == b"{"
        )
    if head[:1] == b"{" and TRAJECTORY.match(head):
        return True
    if head[:1] == b"{" and BASE_STATE.search(head[:4096]):  # a base state, the visualizer's summary
        return True
    doc = probe.document if head[:1] == b"{" else None
    if head[:1] == b"{" and probe.path.parent.name == "events":  # one persisted event (V1, V0)
        if isinstance(doc, dict):
            return openhands_v1.kind_of(doc) is not None or openhands_store.is_v0_event(doc)
        return EVENT_FILE.match(head) is not None  # larger than the head (a system prompt with its tools)
    if isinstance(doc, dict) and openhands_store.is_session_metadata(probe.path, doc):
        return True
    for r in probe.records:
        if isinstance(r, dict) and isinstance(r.get("history"), list) and r["history"]:
            first = r["history"][0]
            return _is_event(first[0] if isinstance(first, list) and first else first)
    if EVAL_LINE.match(head) and EVAL_HISTORY.search(head):  # EvalOutput: instance_id, test_result, a long
        return b'"action"' in head or b'"observation"' in head  # instruction and metadata, then the history
    return b'"instance_id"' in head[:4096] and b'"history"' in head[:4096] and b'"observation"' in head


FORMAT = Format(
    "openhands",
    "OpenHands event trajectories (a JSON list of events), evaluation and resolver "
    "output.jsonl, V1 persisted conversations (base_state.json + events/)",
    _sniff,
    read=read,
    claims=("output.jsonl", "*/evaluation_outputs/*.jsonl", "*/sessions/*/events/*.json"),
)
