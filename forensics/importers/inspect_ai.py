"""Inspect AI eval logs: ``.eval`` (a zip: ``header.json`` and one ``samples/<id>_epoch_<n>.json`` per sample)
and ``.json`` (one ``EvalLog`` document with its ``samples``). Each sample (each epoch of it) is one
conversation, named ``<sample id> epoch <n>``.

A sample's ``messages`` are Inspect's ``ChatMessage``s: ``system``/``user``/``assistant``/``tool``,
``content`` a string or a list of typed parts (``text``, ``reasoning``, ``image``...), an assistant's
``tool_calls`` (``id``, ``function``, ``arguments``) and a tool message's ``tool_call_id`` and ``error``.
Usage comes from the sample's ``model`` events, one per generation (``output.usage``: Inspect already
counts cached input apart), matched to the assistant message they produced by message id, else in order.
The other events (tool, sandbox, scoring, state...) are skipped and counted; ``header.json``,
``summaries.json`` and journal members are read for the model or skipped.
"""
from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from forensics.importers import grades, values
from forensics.importers.model import Conversation, Log, ToolCall, Turn, Usage, listed, text_of
from forensics.importers.registry import Format, Probe

SAMPLE = re.compile(r"samples/(.+)_epoch_(\d+)\.json$")


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
    except ValueError as e:
        log.quarantine(f"{log.name}:{name}", values.json_reason(e), raw)
        return None


def _sample(log: Log, s: dict, model: Any, created: Any) -> Conversation:
    turns: list[Turn] = []
    msgs = s.get("messages") if isinstance(s.get("messages"), list) else []
    if not msgs and isinstance(s.get("input"), str):
        msgs = [{"role": "user", "content": s["input"]}]
    for i, _, m in log.objects(msgs, f"{log.name}#{s.get('id')}", "message"):
        turns.append(_turn(m, i))
    _attach_usage(log, s, turns)
    out = s.get("output") if isinstance(s.get("output"), dict) else {}
    return Conversation(f"{s.get('id')} epoch {s.get('epoch', 1)}", turns, model=out.get("model") or model,
                        created=s.get("started_at") or created, updated=s.get("completed_at"),
                        outcome=grades.inspect_scores(s.get("scores"), s.get("id")))


def _turn(m: dict, i: int) -> Turn:
    role = m.get("role")
    text = text_of(m.get("content"))
    mid = m.get("id") if isinstance(m.get("id"), str) else str(i)
    if role == "assistant":
        calls = [ToolCall(c.get("function"), c.get("arguments"), c.get("id")) for c in listed(m.get("tool_calls"))
                 if isinstance(c, dict)]
        return Turn("assistant", text, calls=calls, id=mid)
    if role == "tool":
        err = m.get("error")
        if isinstance(err, dict) and not text:
            text = text_of(err.get("message"))
        return Turn("tool", text, answers=m.get("tool_call_id"), is_error=err is not None, id=mid)
    return Turn(role if isinstance(role, str) else "?", text, id=mid)


def _attach_usage(log: Log, s: dict, turns: list[Turn]) -> None:
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
        out = ev.get("output") if isinstance(ev.get("output"), dict) else {}
        u = out.get("usage") if isinstance(out.get("usage"), dict) else None
        choice = (out.get("choices") or [{}])[0] if isinstance(out.get("choices"), list) else {}
        msg = choice.get("message") if isinstance(choice, dict) and isinstance(choice.get("message"), dict) else {}
        target = by_id.get(msg.get("id")) if msg.get("id") in by_id else (replies[k] if k < len(replies) else None)
        k += 1
        if u is None or target is None:
            continue
        target.usage.append(Usage(input_tokens=u.get("input_tokens"), output_tokens=u.get("output_tokens"),
                                  cache_creation_input_tokens=u.get("input_tokens_cache_write"),
                                  cache_read_input_tokens=u.get("input_tokens_cache_read"),
                                  model=out.get("model") or ev.get("model")))


def _sniff(probe: Probe) -> bool:
    if probe.is_zip:
        return any(SAMPLE.match(n) for n in probe.members) or "header.json" in probe.members
    head = probe.head.lstrip()
    return head[:1] == b"{" and b'"eval"' in probe.head[:4096] and (
        b'"version"' in probe.head[:512] or b'"task"' in probe.head[:8192]) and b'"status"' in probe.head[:8192]


FORMAT = Format("inspect", "Inspect AI eval logs, .eval (zip) and .json: one conversation per sample and epoch",
                _sniff, read=read, suffixes=(".eval", ".json"), claims=("*.eval",))
