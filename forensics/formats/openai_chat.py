"""OpenAI-style chat logs: one conversation per record, in JSONL (a record per line) or in one JSON document.

A record holds its messages under ``messages`` (the fine-tuning and trace-export shape), under another named
key (``--messages-key traj``, e.g. agent benchmark trajectories; found by content when unambiguous), or is
ShareGPT (``conversations: [{"from": "human"|"gpt"|..., "value": ...}]``). Messages go through the shared
``normalize``, so OpenAI tool calls and Anthropic blocks both work. Each record's fingerprint is a hash of
its bytes, so a re-import of a grown file reports the old records as unchanged; a bad record or message is
quarantined where it stands.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.grades import reward
from forensics.formats.kit.model import add_outcome, mapping
from forensics.formats.kit.records import (
    BadRecord,
    Batch,
    Entry,
    Parsed,
    normalize,
    read_object,
    split_lines,
    stable_id,
    to_epoch,
)
from forensics.formats.kit.values import json_reason

OPENAI, SHAREGPT = "openai", "sharegpt"
SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "system": "system",
    "observation": "tool",
    "tool": "tool",
    "function_response": "tool",
}
ID_KEYS = ("id", "conversation_id", "instance_id")
SIMULATIONS = re.compile(rb'"simulations"\s*:\s*\[')
LIST_OF_OBJECTS = re.compile(rb'"([^"\\]{1,64})"\s*:\s*\[\s*\{([^{}]{0,400})')
SNIFF_LINES = 5


def parse_file(path: str, source_id: str, fingerprint: str | None = None, key: str | None = None) -> Parsed:
    """Worker: every record of one file, each one conversation (fingerprinted by its bytes, not by
    ``fingerprint``: a grown file keeps its old records unchanged)."""
    data = Path(path).read_bytes()
    b = Batch()
    b.state["sha256"] = hashlib.sha256(data).hexdigest()
    seen: set[str] = set()
    records = 0
    for where, ordinal, raw, rec, reason in _records(data, Path(path).name):
        b.rows_read += 1
        msgs, native, why = ([], "", reason) if reason else _unpack(rec, key, ordinal)
        cid = stable_id(source_id, native)
        if not why and cid in seen:
            why = f"duplicate conversation id {native[:40]!r}"
        if why:
            b.messages_read += 1
            b.quarantine(where, why, raw)
            continue
        records += 1
        seen.add(cid)
        b.messages_read += len(msgs)
        _add(b, rec, msgs, where, cid, native, hashlib.blake2b(raw, digest_size=10).hexdigest())
    if b.rows_read and not records:
        b.state["error"] = (
            f"no record holds a list of messages under {key!r}"
            if key
            else "no record holds a list of messages (messages, conversations; or pass --messages-key)"
        )
    return Parsed.of(b)


def _records(data: bytes, name: str) -> Iterator[tuple[str, str, bytes, Any, str]]:
    """(location, ordinal id, raw bytes, record, quarantine reason) per record of a JSONL file or JSON document."""
    if _is_document(data):
        try:
            doc = values.loads(data, deep=True)
        except orjson.JSONDecodeError as e:
            yield name, "#0", data, None, json_reason(e)
            return
        if isinstance(doc, dict) and isinstance(doc.get("simulations"), list):
            doc = doc["simulations"]  # tau2-bench results: the runs are under simulations
        for i, rec in enumerate(doc if isinstance(doc, list) else [doc]):
            yield (
                f"{name}[{i}]",
                f"#{i}",
                orjson.dumps(rec),
                rec,
                "" if isinstance(rec, dict) else "record is not a JSON object",
            )
        return
    lines = split_lines(data)
    for n, raw in enumerate(lines, 1):
        raw = raw.rstrip(b"\r")
        rec, reason = read_object(raw)
        yield f"{name}:{n}", f"line {n}", raw, rec, reason


def _is_document(data: bytes) -> bool:
    """One JSON document (a list, or an object spread over lines) rather than one record per line."""
    head = data.removeprefix(values.BOM).lstrip()[:1]
    if head == b"[":
        return True
    first = data.split(b"\n", 1)[0]
    try:
        values.loads(first)
    except orjson.JSONDecodeError:
        return head == b"{"
    return False


def _unpack(rec: dict[str, Any], key: str | None, ordinal: str) -> tuple[list[Any], str, str]:
    """(messages, native id: the record's id field else its place in the file, quarantine reason or "")."""
    native = _task_trial(rec) or next((str(rec[k]) for k in ID_KEYS if _scalar(rec.get(k))), ordinal)
    if key is None and "messages" not in rec and isinstance(rec.get("conversations"), list):
        msgs = _from_sharegpt_turns(rec["conversations"])
        if isinstance(rec.get("system"), str) and rec["system"]:
            msgs.insert(0, {"role": "system", "content": rec["system"]})
        return msgs, native, ""
    k = key or ("messages" if "messages" in rec else _messages_key(rec))
    found = rec.get(k) if k else None
    if not isinstance(found, list):
        return [], native, f"no list of messages under {k or 'messages'!r}"
    return found, native, ""


def _task_trial(rec: dict[str, Any]) -> str | None:
    """Benchmark runs (tau-bench, tau2-bench) log each task's trials as records: "task 12 trial 0"."""
    if not _scalar(rec.get("task_id")):
        return None
    return f"task {rec['task_id']}" + (f" trial {rec['trial']}" if _scalar(rec.get("trial")) else "")


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int)) and not isinstance(v, bool)


def _from_sharegpt_turns(turns: list[Any]) -> list[Any]:
    """ShareGPT turns as role messages. A function_call turn becomes an assistant tool call, and the
    observation that follows it (the format pairs them so: LLaMA-Factory's sharegpt layout) its result."""
    out: list[Any] = []
    for k, turn in enumerate(turns):
        if not isinstance(turn, dict) or "from" not in turn:
            out.append(turn)
            continue
        src, value = turn.get("from"), turn.get("value")
        call = (_loads(value) if isinstance(value, str) else value) if src == "function_call" else None
        if isinstance(call, dict) and "name" in call:
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": f"function_call:{k}",
                            "function": {"name": call["name"], "arguments": call.get("arguments")},
                        }
                    ],
                }
            )
        elif src == "function_call":
            out.append({"role": "assistant", "content": value})
        else:
            out.append({"role": SHAREGPT_ROLES.get(src, src) if isinstance(src, str) else src, "content": value})
            before = turns[k - 1] if k else None
            if src == "observation" and isinstance(before, dict) and before.get("from") == "function_call":
                out[-1]["tool_call_id"] = f"function_call:{k - 1}"
    return out


def _add(b: Batch, rec: dict[str, Any], msgs: list[Any], where: str, cid: str, native: str, digest: str) -> None:
    entries, prev = [], None
    for i, m in enumerate(msgs):
        try:
            msg = normalize(m)
        except BadRecord as e:
            b.quarantine(f"{where}[{i}]", str(e), orjson.dumps(m))
            continue
        nid = str(i)
        entries.append(Entry(i, nid, prev, i, msg))
        prev = nid
    meta = mapping(rec.get("metadata"))
    model = rec.get("model", rec.get("model_name", meta.get("model")))
    created = rec.get("created_at", rec.get("created", rec.get("timestamp")))
    b.add_conversation(
        cid, native, _s(rec.get("title")), _s(rec.get("provider")), _s(model), to_epoch(created), None, digest, entries
    )
    info = rec.get("reward_info")
    by, value = (
        ("reward_info.reward", info.get("reward"))
        if "reward" not in rec and isinstance(info, dict)
        else ("reward", rec.get("reward"))
    )
    outcome = reward(value, by, rec.get("task_id"))
    if outcome is not None:  # tau-bench's reward, tau2's reward_info.reward: 1 is a solved task
        add_outcome(b, cid, outcome)


def _messages_key(rec: dict[str, Any]) -> str | None:
    """The one key holding a list of role messages, when exactly one does."""
    keys = [k for k, v in rec.items() if isinstance(v, list) and v and isinstance(v[0], dict) and "role" in v[0]]
    return keys[0] if len(keys) == 1 else None


def sniff(head: bytes, key: str | None) -> tuple[str, str | None] | None:
    """(format, messages key) from a file's first bytes, or None when it is not a chat log of these shapes."""
    for line in head.split(b"\n")[:SNIFF_LINES]:
        rec = _loads(line)
        if isinstance(rec, dict):
            return _sniff_record(rec, key)
    if head.lstrip()[:1] not in (b"[", b"{"):
        return None
    if head.lstrip()[:1] == b"{" and SIMULATIONS.search(head) and key is None:
        return OPENAI, None  # tau2-bench results: records under simulations, messages under messages
    for m in LIST_OF_OBJECTS.finditer(head):  # a document too large to parse here: read its first list
        k, first = m.group(1).decode("utf-8", "replace"), m.group(2)
        if key is not None and k != key:
            continue
        if k == "conversations" and b'"from"' in first and key is None:
            return SHAREGPT, None
        if b'"role"' in first:
            return OPENAI, None if k == "messages" else k
    return None


def _sniff_record(rec: dict[str, Any], key: str | None) -> tuple[str, str | None] | None:
    if key is not None:
        return (OPENAI, key) if isinstance(rec.get(key), list) else None
    if isinstance(rec.get("messages"), list):
        return OPENAI, None
    conv = rec.get("conversations")
    if isinstance(conv, list) and conv and isinstance(conv[0], dict) and "from" in conv[0]:
        return SHAREGPT, None
    k = _messages_key(rec)
    return (OPENAI, k) if k else None


def _loads(raw: bytes | str) -> Any:
    try:
        return values.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _s(v: Any) -> str | None:
    return None if v is None else str(v)


def _sniff_as(fmt: str) -> Callable[[Probe], bool | dict[str, Any]]:
    def found(probe: Probe) -> bool | dict[str, Any]:
        if probe.is_sqlite or probe.is_zip:
            return False
        r = sniff(probe.head, probe.messages_key)
        return r is not None and r[0] == fmt and ({"messages_key": r[1]} if r[1] else True)

    return found


OPENAI_FORMAT = Format(
    OPENAI,
    "one conversation per record holding a list of role messages (JSONL line or JSON list)",
    _sniff_as(OPENAI),
    task=parse_file,
    options=("messages_key",),
    found_options=("messages_key",),
    hashes=True,
)
SHAREGPT_FORMAT = Format(
    SHAREGPT,
    "ShareGPT: conversations of {from, value} turns",
    _sniff_as(SHAREGPT),
    task=parse_file,
    options=("messages_key",),
    found_options=("messages_key",),
    hashes=True,
)
