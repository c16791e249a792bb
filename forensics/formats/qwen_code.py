"""Qwen Code chats: ``~/.qwen/projects/<sanitized cwd>/chats/<session id>.jsonl`` (Qwen Code 0.1 and later; the
earlier Gemini CLI layout under ``~/.qwen/tmp`` is read by the ``gemini-cli`` format).

Each line is one ``ChatRecord`` (packages/core/src/services/chatRecordingService.ts): ``uuid``, ``parentUuid``,
``sessionId``, ``timestamp``, ``type`` (``user``, ``assistant``, ``tool_result``, ``system``), an optional
``subtype``, ``cwd``, ``version``, and ``message``, the Gemini API ``Content`` the model saw (``role`` user or
model, ``parts`` of ``text``, ``functionCall {id, name, args}``, ``functionResponse {id, name, response}``;
a part with ``thought: true`` is the model's reasoning, left out). The records form a tree by ``parentUuid``: the
main path runs from the last record back to the root; a rewound branch stays, off it.

* ``user``: the person's turn, unless its ``provenance`` says otherwise (``real_user`` is the person; notices,
  cron and goal records the harness) or its ``subtype`` is one the CLI writes itself (``notification``,
  ``cron``, ``background_task_completed``). A slash command (``subtype: slash_command``) is the person's.
* ``assistant``: text and ``functionCall`` parts; ``usageMetadata`` (``promptTokenCount``, the cache's included,
  ``candidatesTokenCount`` + ``thoughtsTokenCount``, ``cachedContentTokenCount``) and ``model``.
* ``tool_result``: one tool message per ``functionResponse``, linked by id (else by name); an error when
  ``toolCallResult.status`` is ``error`` or the response holds ``error``.
* ``system``: ``chat_compression`` is a compaction (an event), ``custom_title`` the title; the rest
  (``ui_telemetry``, ``session_model``, ``attribution_snapshot``, ...) hold no message: skipped and counted by
  subtype. Their place in the tree is kept: a message whose parent is one of them hangs on that record's parent.

Seen on a real file of Qwen Code 0.5.1 (2025-12) and built from the source of 2026 versions (docs/formats.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, mapping

HARNESS_SUBTYPES = ("notification", "cron", "background_task_completed", "agent_launch_prompt", "goal_runtime")
PERSON_PROVENANCE = ("real_user",)
TYPES = ("user", "assistant", "tool_result", "system")


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    records: list[tuple[int, dict[str, Any]]] = []
    for n, raw, obj in log.json_lines(data):
        if obj.get("type") not in TYPES or not isinstance(obj.get("uuid"), str):
            log.quarantine(f"{log.name}:{n}", "not a Qwen Code chat record (uuid and type)", raw)
            continue
        records.append((n, obj))
    if not records:
        log.error = "no line is a Qwen Code chat record (uuid, parentUuid, type)"
        return []
    parent_of = {r["uuid"]: r.get("parentUuid") if isinstance(r.get("parentUuid"), str) else None for _, r in records}
    main = _main_path(records[-1][1]["uuid"], parent_of)
    turns: list[Turn] = []
    kept: set[str] = set()
    events: list[Event] = []
    title: str | None = None
    model: str | None = None
    for n, r in records:
        with log.guard(f"{log.name}:{n}", r):
            kind, sub = r["type"], r.get("subtype")
            if kind == "system":
                payload = mapping(r.get("systemPayload"))
                if sub == "chat_compression":
                    info = mapping(payload.get("info"))
                    events.append(
                        Event(
                            "compaction",
                            len(turns),
                            pre_tokens=info.get("originalTokenCount"),
                            post_tokens=info.get("newTokenCount"),
                            detail={"record": r["uuid"]},
                        )
                    )
                    log.skip("system:chat_compression (-> events)")
                elif sub == "custom_title":
                    title = payload.get("customTitle") if isinstance(payload.get("customTitle"), str) else title
                    log.skip("system:custom_title")
                else:
                    log.skip(f"system:{str(sub)[:40]}")
                continue
            msg = mapping(r.get("message"))
            parts = [p for p in listed(msg.get("parts")) if isinstance(p, dict)]
            at, uid, on_main = r.get("timestamp"), r["uuid"], r["uuid"] in main
            parent = _kept_parent(r, parent_of, kept)
            if kind == "user":
                text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
                prov = r.get("provenance")
                person = prov in PERSON_PROVENANCE if isinstance(prov, str) else sub not in HARNESS_SUBTYPES
                turns.append(
                    Turn(
                        "user",
                        text,
                        at=at,
                        id=uid,
                        parent=parent,
                        main=on_main,
                        origin="person" if person else "harness",
                    )
                )
            elif kind == "assistant":
                text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
                calls = [
                    ToolCall(fc.get("name"), fc.get("args"), fc.get("id") if isinstance(fc.get("id"), str) else None)
                    for fc in (mapping(p.get("functionCall")) for p in parts)
                    if fc
                ]
                model = r.get("model") if isinstance(r.get("model"), str) else model
                t = Turn("assistant", text, calls, at=at, id=uid, parent=parent, main=on_main)
                u = mapping(r.get("usageMetadata"))
                if u:
                    out = [u.get("candidatesTokenCount"), u.get("thoughtsTokenCount")]
                    t.usage.append(
                        Usage(
                            prompt_tokens=u.get("promptTokenCount"),
                            output_tokens=sum(v for v in out if isinstance(v, int))
                            if any(isinstance(v, int) for v in out)
                            else None,
                            cache_read_input_tokens=u.get("cachedContentTokenCount"),
                            model=model,
                        )
                    )
                turns.append(t)
            else:  # tool_result
                status = mapping(r.get("toolCallResult")).get("status")
                answers = [mapping(p.get("functionResponse")) for p in parts if p.get("functionResponse")]
                if not answers:
                    log.skip("tool_result without a function response")
                    continue
                for k, fr in enumerate(answers):
                    resp = fr.get("response")
                    err = isinstance(resp, dict) and "error" in resp
                    said = resp.get("output", resp.get("error", "")) if isinstance(resp, dict) else resp
                    turns.append(
                        Turn(
                            "tool",
                            said if isinstance(said, str) else "" if said is None else str(said),
                            answers=fr.get("id") if isinstance(fr.get("id"), str) else None,
                            tool=fr.get("name") if not isinstance(fr.get("id"), str) else None,
                            is_error=True if status == "error" or err else (False if status else None),
                            at=at,
                            id=uid if k == 0 else f"{uid}:{k}",
                            parent=parent if k == 0 else (uid if k == 1 else f"{uid}:{k - 1}"),
                            main=on_main,
                            origin="tool_result",
                        )
                    )
            kept.add(uid)
    first = records[0][1]
    sid = str(first["sessionId"]) if isinstance(first.get("sessionId"), str) else Path(path).stem
    if title is None:
        title = next((t.text[:200] for t in turns if t.origin == "person" and t.main and t.text.strip()), None)
    return [
        Conversation(
            sid, turns, title=title, provider="qwen", model=model, created=first.get("timestamp"), events=events
        )
    ]


def _main_path(leaf: str, parent_of: dict[str, str | None]) -> set[str]:
    out: set[str] = set()
    cur: str | None = leaf
    while cur is not None and cur not in out:
        out.add(cur)
        cur = parent_of.get(cur)
    return out


def _kept_parent(r: dict[str, Any], parent_of: dict[str, str | None], kept: set[str]) -> str:
    """The nearest ancestor that became a message ("" for a root): system records leave no message."""
    cur = parent_of.get(r["uuid"])
    seen: set[str] = set()
    while cur is not None and cur not in kept and cur not in seen:
        seen.add(cur)
        cur = parent_of.get(cur)
    return cur if cur in kept else ""


def _sniff(probe: Probe) -> bool:
    recs = [r for r in probe.records if isinstance(r, dict)]
    return (
        bool(recs)
        and all(
            r.get("type") in TYPES and "uuid" in r and "sessionId" in r and "parentUuid" in r and "cwd" in r
            for r in recs
        )
        and any(isinstance(r.get("message"), dict) and "parts" in r["message"] or "systemPayload" in r for r in recs)
    )


FORMAT = Format(
    "qwen-code",
    "Qwen Code chats, ~/.qwen/projects/<project>/chats/<session>.jsonl (ChatRecord tree, Gemini API content parts)",
    _sniff,
    read=read,
    suffixes=(".jsonl",),
    claims=("*/.qwen/projects/*/chats/*.jsonl",),
)
