"""Inspect AI eval logs: ``.eval`` (a zip: ``header.json`` and one ``samples/<id>_epoch_<n>.json`` per sample)
and ``.json`` (one ``EvalLog`` document with its ``samples``). Each sample (each epoch of it) is one
conversation, named ``<sample id> epoch <n>``. Log format version 2 (inspect_ai 0.3, 2024-2026) is read; a
newer version is read the same way as long as samples keep ``messages`` and ``events``.

A sample's ``messages`` are Inspect's ``ChatMessage``s: ``system``/``user``/``assistant``/``tool``,
``content`` a string or a list of typed parts (``text``, ``reasoning``, ``image``...), an assistant's
``tool_calls`` (``id``, ``function``, ``arguments``) and a tool message's ``tool_call_id`` and ``error``.
Large values are kept once in the sample's ``attachments`` and referred to as ``attachment://<hash>``: they
are put back. A solver that calls the model itself (not through the task state) leaves its generations out
of ``messages``; they are in the ``model`` events (each an ``input`` history and an ``output``), so when the
events hold replies that ``messages`` lacks, the conversation is rebuilt from the events (each call's input
beyond the history so far, then its reply). Usage comes from the ``model`` events, one per generation
(``output.usage``: Inspect already counts cached input apart), matched to the reply they produced by
message id, else in order. The agents' continue prompts ("Please proceed to the next step using your best
judgement", "Your submission was incorrect...": inspect_ai/agent/_types.py, solver/_basic_agent.py) are the
harness's. The sample's ``scores`` (and its ``error``) are kept as ``score`` (``error``) events of the
conversation, one per scorer with its value, answer and explanation. The other events (tool, sandbox,
state...) are skipped and counted; ``header.json``, ``summaries.json`` and journal members are read for the
model or skipped.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import grades, values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, mapping, text_of

SAMPLE = re.compile(r"samples/(.+)_epoch_(\d+)\.json$")
ATTACHMENT = "attachment://"
CONTINUE = re.compile(
    r"\s*(?:Please proceed to the next step using your best judgement|Your submission was incorrect\. "
    r"Please proceed and attempt to find the correct answer)"
)


def read(path: str, log: Log) -> list[Conversation]:
    if zipfile.is_zipfile(path):
        return _read_eval(path, log)
    doc = log.json_document(Path(path).read_bytes())
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        log.error = "not an Inspect eval log (no eval section)"
        return []
    model = doc["eval"].get("model")
    out = []
    for _, where, s in log.objects(doc.get("samples"), f"{log.name}:samples", "sample"):
        with log.guard(where, s):
            out.append(_sample(log, s, model, doc["eval"].get("created")))
    return out


def _read_eval(path: str, log: Log) -> list[Conversation]:
    out = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        header = _member(z, "header.json", log) if "header.json" in names else None
        start = _member(z, "_journal/start.json", log) if header is None and "_journal/start.json" in names else None
        spec = (header or start or {}).get("eval") if isinstance(header or start, dict) else None
        spec = spec if isinstance(spec, dict) else {}
        for name in names:
            if SAMPLE.match(name):
                s = _member(z, name, log)
                if not isinstance(s, dict):
                    continue
                with log.guard(f"{log.name}:{name}", s):
                    out.append(_sample(log, s, spec.get("model"), spec.get("created")))
            elif name not in ("header.json", "_journal/start.json") and not name.endswith("/"):
                log.rows += 1
                log.skip(f"zip member {name.split('/')[0] if '/' in name else name}")
    if header is None and start is None:
        log.notes.append("no header.json (an unfinished eval): the model is taken from the samples")
    return out


def _member(z: zipfile.ZipFile, name: str, log: Log) -> Any:
    log.rows += 1
    try:
        raw = z.read(name)
    except (zipfile.BadZipFile, OSError, ValueError, KeyError) as e:
        log.quarantine(f"{log.name}:{name}", f"cannot read zip member ({e})", b"")
        return None
    try:
        return values.loads(raw)
    except orjson.JSONDecodeError as e:
        log.quarantine(f"{log.name}:{name}", values.json_reason(e), raw)
        return None


def _sample(log: Log, s: dict[str, Any], model: Any, created: Any) -> Conversation:
    s = _resolve(s, mapping(s.get("attachments")))
    msgs = listed(s.get("messages"))
    if not msgs and isinstance(s.get("input"), str):
        msgs = [{"role": "user", "content": s["input"]}]
    generations = [ev for ev in listed(s.get("events")) if isinstance(ev, dict) and ev.get("event") == "model"]
    replies = [_reply(ev) for ev in generations]
    said = [m for m in msgs if isinstance(m, dict) and m.get("role") == "assistant"]
    known = {m.get("id") for m in said} | {text_of(m.get("content")).strip() for m in said}
    if any(_missing(r, known) for r in replies):
        msgs = _from_events(generations, replies)
        log.notes.append("replies missing from a sample's messages were rebuilt from its model events")
    read = [(_turn(m, i), m) for i, _, m in log.objects(msgs, f"{log.name}#{s.get('id')}", "message")]
    turns = [t for t, _ in read]
    _attach_usage(log, s, turns)
    out = mapping(s.get("output"))
    return Conversation(
        f"{s.get('id')} epoch {s.get('epoch', 1)}",
        turns,
        model=out.get("model") or model,
        created=s.get("started_at") or created,
        updated=s.get("completed_at"),
        events=_reasoning([m for _, m in read]) + _outcomes(s),
        outcome=grades.inspect_scores(s.get("scores"), s.get("id")),
    )


def _reasoning(msgs: list[dict[str, Any]]) -> list[Event]:
    """An assistant message's ``reasoning`` parts (not redacted), one ``reasoning`` event on that message with the
    text in ``detail.text``: what the model wrote before its reply, which an instruction may govern ("without
    using the word X in your reasoning")."""
    out = []
    for k, m in enumerate(msgs):
        if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        text = "\n\n".join(
            p["reasoning"]
            for p in m["content"]
            if isinstance(p, dict)
            and p.get("type") == "reasoning"
            and isinstance(p.get("reasoning"), str)
            and p["reasoning"].strip()
            and not p.get("redacted")
        )
        if text:
            out.append(Event("reasoning", before=k, detail={"text": text}))
    return out


def _missing(reply: dict[str, Any] | None, known: set[Any]) -> bool:
    """A reply whose id, or else whose text, ``messages`` does not hold (an empty reply with no id proves nothing)."""
    if reply is None:
        return False
    if reply.get("id"):
        return reply["id"] not in known
    text = text_of(reply.get("content")).strip()
    return bool(text) and text not in known


def _resolve(v: Any, attachments: dict[str, Any]) -> Any:
    """Every ``attachment://<hash>`` string replaced by the attachment it names."""
    if isinstance(v, str):
        if v.startswith(ATTACHMENT):
            found = attachments.get(v[len(ATTACHMENT) :])
            return found if isinstance(found, str) else v
        return v
    if isinstance(v, list):
        return [_resolve(x, attachments) for x in v]
    if isinstance(v, dict):
        return {k: (x if k == "attachments" else _resolve(x, attachments)) for k, x in v.items()}
    return v


def _reply(ev: dict[str, Any]) -> dict[str, Any] | None:
    out = mapping(ev.get("output"))
    choices = listed(out.get("choices"))
    msg = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    return msg if isinstance(msg, dict) else None


def _from_events(generations: list[dict[str, Any]], replies: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The conversation of a sample's model calls: each call's input beyond the history so far, then its reply."""
    conv: list[dict[str, Any]] = []
    for ev, reply in zip(generations, replies):
        inputs = [m for m in listed(ev.get("input")) if isinstance(m, dict)]
        n = len(conv)
        if [_key(m) for m in inputs[:n]] == [_key(m) for m in conv]:
            conv.extend(inputs[n:])
        else:  # a fresh prompt: what follows its last reply is new
            last = max((i for i, m in enumerate(inputs) if m.get("role") == "assistant"), default=-1)
            conv.extend(
                m
                for m in inputs[last + 1 :]
                if not (m.get("role") == "system" and any(c.get("role") == "system" for c in conv))
            )
        if reply is not None:
            conv.append(reply)
    return conv


def _key(m: dict[str, Any]) -> tuple[Any, ...]:
    return m.get("role"), text_of(m.get("content")).strip()


def _turn(m: dict[str, Any], i: int) -> Turn:
    role = m.get("role")
    text = text_of(m.get("content"))
    mid = m.get("id") if isinstance(m.get("id"), str) else str(i)
    if role == "assistant":
        calls = [
            ToolCall(c.get("function"), c.get("arguments"), c.get("id"))
            for c in listed(m.get("tool_calls"))
            if isinstance(c, dict)
        ]
        return Turn("assistant", text, calls=calls, id=mid)
    if role == "tool":
        err = m.get("error")
        if isinstance(err, dict) and not text:
            text = text_of(err.get("message"))
        return Turn("tool", text, answers=m.get("tool_call_id"), is_error=err is not None, id=mid)
    return Turn(
        role if isinstance(role, str) else "?",
        text,
        id=mid,
        origin="harness" if role == "user" and CONTINUE.match(text) else None,
    )


def _outcomes(s: dict[str, Any]) -> list[Event]:
    """The sample's scores, one event per scorer, and its error: what the run's outcome was."""
    out = []
    scores = mapping(s.get("scores"))
    for name, sc in scores.items():
        sc = sc if isinstance(sc, dict) else {"value": sc}
        out.append(
            Event(
                "score",
                None,
                trigger=str(name),
                detail={k: sc[k] for k in ("value", "answer", "explanation", "metadata") if sc.get(k) is not None},
            )
        )
    if s.get("error"):
        out.append(Event("error", None, detail={"error": s["error"]}))
    limit = mapping(s.get("limit"))
    if isinstance(limit.get("type"), str):  # EvalSampleLimit: the sample was stopped by its message, token, time,
        # working-time, cost or custom limit
        out.append(Event("stop", None, trigger=f"{limit['type']} limit", detail={"by": "limit", "value": limit}))
    return out


def _attach_usage(log: Log, s: dict[str, Any], turns: list[Turn]) -> None:
    """One usage row per model event (a generation), onto the assistant message it produced."""
    replies = [t for t in turns if t.role == "assistant"]
    by_id = {t.id: t for t in replies}
    k = 0
    for ev in listed(s.get("events")):
        kind = ev.get("event") if isinstance(ev, dict) else None
        if kind != "model":
            log.skip(f"event:{str(kind)[:40]}")
            continue
        log.skip("event:model (-> message_usage)")
        out = mapping(ev.get("output"))
        u = out.get("usage") if isinstance(out.get("usage"), dict) else None
        msg = _reply(ev) or {}
        target = by_id.get(msg.get("id")) if msg.get("id") in by_id else (replies[k] if k < len(replies) else None)
        k += 1
        if u is None or target is None:
            continue
        inclusive = _cache_inside(u)
        target.usage.append(
            Usage(
                input_tokens=None if inclusive else u.get("input_tokens"),
                prompt_tokens=u.get("input_tokens") if inclusive else None,
                output_tokens=u.get("output_tokens"),
                cache_creation_input_tokens=u.get("input_tokens_cache_write"),
                cache_read_input_tokens=u.get("input_tokens_cache_read"),
                model=out.get("model") or ev.get("model"),
            )
        )


def _cache_inside(u: dict[str, Any]) -> bool:
    """Whether a ModelUsage's ``input_tokens`` holds its cached tokens: Inspect copies each provider's count
    (Anthropic's leaves the cache out and its total adds it; OpenAI's ``prompt_tokens`` holds it and its total
    is input + output), so the total tells, when it is there and the cache fits inside the input."""
    counts = [
        values.count(u.get(k)) or 0
        for k in ("input_tokens", "output_tokens", "input_tokens_cache_read", "input_tokens_cache_write")
    ]
    total = values.count(u.get("total_tokens"))
    inp, out, read, write = counts
    return read + write > 0 and total == inp + out and inp >= read + write


def _sniff(probe: Probe) -> bool:
    if probe.is_zip:
        return any(SAMPLE.match(n) for n in probe.members) or "header.json" in probe.members
    head = probe.head.lstrip()
    return (
        head[:1] == b"{"
        and b'"eval"' in probe.head[:4096]
        and (b'"version"' in probe.head[:512] or b'"task"' in probe.head[:8192])
        and b'"status"' in probe.head[:8192]
    )


FORMAT = Format(
    "inspect",
    "Inspect AI eval logs, .eval (zip) and .json: one conversation per sample and epoch",
    _sniff,
    read=read,
    suffixes=(".eval", ".json"),
    claims=("*.eval",),
)
