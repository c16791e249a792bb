"""MINT benchmark runs (xingyaoww/mint-bench): ``results.jsonl``, one run per line, with its outcome.

MINT's environment (mint/envs/general_env.py) keeps the run in ``state.history``, a list of ``{role,
content}``: the first user turn is the task prompt (instructions, an in-context example, ``Task:``), then
the agent's turns and the environment's answers, both logged as ``user``. Following MINT's own parser
(agents/base.py ``lm_output_to_action``): an assistant turn holding ``<solution>`` proposes an answer; one
without holds ``<execute>`` blocks, run as one piece of Python, which is a tool call here (``execute``,
``{"code": ...}``) answered by the next user turn (``Observation:`` and the output), stored as that call's
tool message. The environment's other user turns are the harness's: the verdict on a proposed answer
("Your answer is wrong." — it reveals the grade), the invalid-input notice, expert feedback.

The outcome is ``state.success`` (``state.terminate_reason`` beside it). The record's ``task`` also holds
the reference answer: it is not read. The model is not in the record: MINT writes runs under
``data/outputs/<model>/F=<feedback>/<setting>/<category>/<dataset>/results.jsonl``, so the folder above
``F=...`` names it, and the task key is ``<dataset>/<task_id>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.grades import verdict
from forensics.formats.kit.model import Conversation, Log, Outcome, ToolCall, Turn, listed, mapping, text_of
from forensics.formats.kit.records import starts_like_error

EXECUTE = re.compile(r"<execute>(.*?)</execute>", re.DOTALL)
OBSERVATION = re.compile(r"\s*Observation:\s*\n?")
# IPython's traceback header: a rule, then "NameError    Traceback (most recent call last)"
TRACEBACK = re.compile(r"-{20,}\s*\n\s*\w*(?:Error|Exception)\b|\w*(?:Error|Exception):|Traceback \(most recent")
HEAD = re.compile(rb'^\s*\{\s*"state"\s*:\s*\{\s*"history"\s*:\s*\[')


def read(path: str, log: Log) -> list[Conversation]:
    model, dataset = _layout(path)
    out = []
    for n, raw, rec in log.json_lines(Path(path).read_bytes()):
        with log.guard(f"{log.name}:{n}", raw):
            state, task = mapping(rec.get("state")), mapping(rec.get("task"))
            history = state.get("history")
            if not isinstance(history, list):
                log.quarantine(f"{log.name}:{n}", "no state.history list (not a MINT run)", raw)
                continue
            tid = task.get("task_id")
            native = str(tid) if isinstance(tid, (str, int)) and not isinstance(tid, bool) else f"line {n}"
            key = f"{dataset or task.get('task_name') or 'task'}/{native}"
            conv = Conversation(native, _turns(log, history, f"{log.name}:{n}"), model=model, title=key)
            ok = verdict(state.get("success"))
            if ok is not None:
                conv.outcome = Outcome(
                    ok,
                    float(ok),
                    "state.success",
                    {"success": state.get("success"), "terminate_reason": state.get("terminate_reason")},
                    key,
                )
            out.append(conv)
    return out


def _turns(log: Log, history: list[Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    pending: ToolCall | None = None  # the last assistant turn's code, waiting for its observation
    for i, _, m in log.objects(history, where + ":history", "history item"):
        text = text_of(m.get("content"))
        if m.get("role") == "assistant":
            code = [c.strip() for c in EXECUTE.findall("\n" + text + "\n")]
            pending = None
            if "<solution>" not in text and any(code):
                pending = ToolCall("execute", {"code": "\n".join(code)}, f"execute-{i}")
            turns.append(Turn("assistant", text, calls=[pending] if pending else [], id=str(i)))
        elif m.get("role") == "user" and not turns:
            turns.append(Turn("user", text, id=str(i), origin="person"))
        elif m.get("role") == "user" and pending is not None:
            body = OBSERVATION.sub("", text, count=1)
            err = starts_like_error(body) or bool(TRACEBACK.match(body))
            turns.append(Turn("tool", text, answers=pending.id, is_error=err, id=str(i)))
            pending = None
        elif m.get("role") == "user":
            turns.append(Turn("user", text, id=str(i), origin="harness"))
        else:
            role = m.get("role")
            turns.append(Turn(role if isinstance(role, str) else "?", text, id=str(i)))
    return turns


def _layout(path: str) -> tuple[str | None, str | None]:
    """(model, dataset) from MINT's output folders; (None, None) when the file sits elsewhere."""
    parts = Path(path).resolve().parts
    model = next((parts[k - 1] for k in range(1, len(parts)) if parts[k].startswith("F=")), None)
    dataset = parts[-2] if len(parts) >= 2 and model else None
    return model, dataset


def _sniff(probe: Probe) -> bool:
    if HEAD.match(probe.head):
        return True
    first = probe.records[0] if probe.records else None
    return (
        isinstance(first, dict)
        and isinstance(mapping(first.get("state")).get("history"), list)
        and isinstance(first.get("task"), dict)
        and bool(listed(mapping(first.get("state")).get("history")))
    )


FORMAT = Format(
    "mint",
    "MINT benchmark results.jsonl: one run per line (state.history), outcome state.success",
    _sniff,
    read=read,
    suffixes=(".jsonl",),
)
