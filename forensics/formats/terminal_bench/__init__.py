"""terminal-bench runs (laude-institute/terminal-bench, `tb run`): one run per trial folder, with its outcome.

The harness writes (terminal_bench/handlers/trial_handler.py ``TrialPaths``, harness/models.py)
``<output>/<run_id>/`` holding ``run_metadata.json`` (``RunMetadata``: ``agent_name``, ``model_name``, ...),
``results.json`` (``BenchmarkResults``: every trial's results again) and per trial
``<task_id>/<trial_name>/`` with ``results.json`` (``TrialResults``: ``trial_name``, ``task_id``,
``instruction``, ``is_resolved``, ``failure_mode``, ``parser_results``, ``total_input_tokens``,
``total_output_tokens`` and the trial's times), ``agent-logs/``, ``sessions/`` (the tmux recording),
``panes/`` and ``commands.txt``.

A trial's ``results.json`` is the source: one run, the task's ``instruction`` as the person's message, its
outcome ``is_resolved`` (null, a trial that never reached the tests, counts as failed, as the leaderboard
does), its task key ``task_id``, its model ``model_name`` from the run's metadata, and its tokens as one usage
row (the agent's totals: litellm's prompt tokens, the cache's included). The agent's steps come from the
Terminus agents' log, ``agent-logs/episode-<n>/``: ``prompt.txt`` what the model was sent (the first holds the
instruction, the next ones the terminal's screen after the previous commands) and ``response.json`` its
answer (``state_analysis``, ``explanation``, ``commands`` of ``keystrokes``, ``is_task_complete``; Terminus 2 writes
``response.txt``, the answer as the model sent it: ``analysis``, ``plan``, ``commands``, ``task_complete`` in a JSON
object, maybe with text around it): each
answer is an assistant message with one ``terminal`` call (its commands), answered by the next episode's
prompt. An installed agent runs in the container's terminal, which the harness records in ``sessions/agent.log``:
mini-swe-agent prints its whole conversation there (``printed``: the system prompt, the task as its template
wraps it, each answer with its one ``bash`` block as a call, the output as the call's result), read after the
instruction. An agent that keeps its own log elsewhere (an installed Claude Code, Codex or OpenHands) leaves the
run with its instruction and outcome, said in the run's note. The run's
``results.json`` and ``run_metadata.json`` hold no run of their own: skipped and counted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Log, Outcome, ToolCall, Turn, Usage, listed, mapping
from forensics.formats.terminal_bench import printed

AGENT_LOGS = "agent-logs"
AGENT_LOG = "sessions/agent.log"
EPISODE = re.compile(r"^episode-(\d+)$")
TRIAL_KEYS = ("trial_name", "task_id", "instruction")
ANSWER_TEXT = ("state_analysis", "explanation", "analysis", "plan")  # Terminus 1's, then Terminus 2's
RUN_KEYS = ("run_id", "agent_name", "output_path")  # RunMetadata


def read(path: str, log: Log) -> list[Conversation]:
    raw = log.json_document(Path(path).read_bytes())
    if raw is None and log.batch.quar["reason"]:  # not JSON: quarantined, the log says why
        return []
    doc = mapping(raw)
    if all(k in doc for k in RUN_KEYS):
        log.skip("run metadata (its trials are read from their folders)")
        return []
    if isinstance(doc.get("results"), list) and not all(k in doc for k in TRIAL_KEYS):
        log.skip("trial result repeated in the run's results.json (read from its folder)", len(doc["results"]))
        return []
    if not all(k in doc for k in TRIAL_KEYS):
        log.error = "not a terminal-bench trial (no trial_name, task_id and instruction)"
        return []
    folder = Path(path).parent
    model = _model(folder.parent.parent / "run_metadata.json")
    turns = [Turn("user", str(doc.get("instruction") or ""), at=doc.get("agent_started_at"), origin="person")]
    episodes = _episodes(log, folder / AGENT_LOGS)
    turns += episodes or _printed(log, folder / AGENT_LOG)
    assistants = [t for t in turns if t.role == "assistant"]
    tokens = (doc.get("total_input_tokens"), doc.get("total_output_tokens"))
    if any(isinstance(v, int) and v for v in tokens):
        target = assistants[-1] if assistants else turns[0]
        target.usage.append(Usage(prompt_tokens=tokens[0], output_tokens=tokens[1], model=model))
    task = doc.get("task_id")
    resolved = doc.get("is_resolved")
    conv = Conversation(
        str(doc["trial_name"]),
        turns,
        title=str(task),
        model=model,
        created=doc.get("trial_started_at"),
        updated=doc.get("trial_ended_at"),
    )
    conv.outcome = Outcome(
        resolved is True,
        1.0 if resolved is True else 0.0,
        "results.json is_resolved",
        resolved,
        None if task is None else str(task),
    )
    return [conv]


def _episodes(log: Log, root: Path) -> list[Turn]:
    """The Terminus episodes in order: each prompt after the first answers the previous episode's commands."""
    found = sorted(
        (int(m.group(1)), p)
        for p in (root.iterdir() if root.is_dir() else [])
        if p.is_dir() and (m := EPISODE.match(p.name))
    )
    turns: list[Turn] = []
    for n, ep in found:
        prompt = _text(ep / "prompt.txt")
        if n and turns and turns[-1].calls and prompt is not None:
            turns.append(Turn("tool", prompt, answers=turns[-1].calls[0].id, id=f"{n}:screen"))
        elif n and prompt is not None:
            turns.append(Turn("user", prompt, id=f"{n}:prompt", origin="harness"))
        raw = _text(ep / "response.json")
        if raw is None:
            raw = _text(ep / "response.txt")  # Terminus 2: the model's answer as sent, JSON (or XML) in text
        if raw is None:
            log.skip("episode without response.json or response.txt")
            continue
        turns.append(_answer(n, raw))
    return turns


def _printed(log: Log, agent_log: Path) -> list[Turn]:
    """The conversation an installed agent printed to the terminal (``sessions/agent.log``), when the reader knows
    the agent (mini-swe-agent); the lines around it are counted in the note."""
    try:
        data = agent_log.read_bytes()
    except OSError:
        data = b""
    run = printed.mini_swe_agent(data) if data.strip() else None
    if run is None:
        log.notes.append(
            "no Terminus episodes in agent-logs/"
            + (
                ", and sessions/agent.log holds no conversation this reader knows (mini-swe-agent's printed one)"
                if data.strip()
                else ""
            )
            + ": the run holds its instruction and outcome only"
        )
        return []
    cost = "" if run.cost is None else f", ${run.cost:.2f} as printed"
    log.notes.append(
        f"sessions/agent.log: {run.agent} {run.version}, {run.steps} steps{cost}; left out: "
        f"{run.records} lines of other programs' log records, {run.outside} terminal lines between "
        f"messages" + ("" if run.ended else "; the log stops inside the run")
    )
    if run.exits:
        log.skip("exit message", run.exits)
    return run.turns


def _answer(n: int, raw: str) -> Turn:
    """A response as logged: the JSON CommandBatchResponse as text and one ``terminal`` call, else the raw text."""
    doc = _json_object(raw)
    if not isinstance(doc, dict) or not isinstance(doc.get("commands"), list):
        return Turn("assistant", raw, id=str(n))
    text = "\n\n".join(str(doc[k]) for k in ANSWER_TEXT if isinstance(doc.get(k), str))
    commands = [c for c in listed(doc.get("commands")) if isinstance(c, dict)]
    done = doc.get("is_task_complete", doc.get("task_complete"))
    call = ToolCall("terminal", {"commands": commands, "is_task_complete": done}, f"ep{n}")
    return Turn("assistant", text, calls=[call] if commands else [], id=str(n))


def _json_object(raw: str) -> object:
    """The answer's JSON object: the whole text (Terminus 1's response.json), else the first object in it (Terminus
    2's JSON-plain answer may have text around it, as its parser allows)."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    start = raw.find("{")
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(raw, start)[0]
    except json.JSONDecodeError:
        return None


def _text(p: Path) -> str | None:
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _model(p: Path) -> str | None:
    try:
        meta = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = mapping(meta).get("model_name")
    return name if isinstance(name, str) and name else None


def _sniff(probe: Probe) -> bool:
    doc = probe.document
    if not isinstance(doc, dict):
        head = probe.head.lstrip()
        return head[:1] == b"{" and all(f'"{k}"'.encode() in head for k in TRIAL_KEYS + ("is_resolved",))
    if all(k in doc for k in TRIAL_KEYS) and "is_resolved" in doc or all(k in doc for k in RUN_KEYS):
        return True
    first = mapping(next(iter(listed(doc.get("results"))), None))
    return all(k in first for k in TRIAL_KEYS) and "is_resolved" in first


FORMAT = Format(
    "terminal-bench",
    "terminal-bench trial results.json: one run per trial, outcome is_resolved, "
    "steps from the Terminus agent's agent-logs/episode-* or mini-swe-agent's sessions/agent.log",
    _sniff,
    read=read,
    suffixes=(".json",),
    sides=(
        Side(
            f"{AGENT_LOGS}/episode-*/response.json",
            "../../results.json",
            "a Terminus episode's answer, read with the trial",
        ),
        Side(
            f"{AGENT_LOGS}/episode-*/response.txt",
            "../../results.json",
            "a Terminus 2 episode's answer, read with the trial",
        ),
        Side(
            f"{AGENT_LOGS}/episode-*/prompt.txt",
            "../../results.json",
            "what a Terminus episode sent the model, read with the trial",
        ),
        Side("episode-*/debug.json", "../../results.json", "the model call's debug log", read=False),
        Side("commands.txt", "results.json", "the keystrokes sent to the terminal", read=False),
        Side("panes/*.txt", "../results.json", "the terminal's screen before and after", read=False),
        Side(
            AGENT_LOG,
            "../results.json",
            "the agent's terminal, read with the trial (an installed agent's printed conversation)",
        ),
        Side("sessions/*", "../results.json", "the terminal's recording", read=False),
    ),
)
