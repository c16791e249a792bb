"""Convert AgentRx's labeled tau-bench failures (29 failed retail runs of a single tool-calling agent, each with the
step that decided the failure) to the JSONL of ``data/failures/whowhen.jsonl`` (its README), so that
``bench/failures.py`` judges it the same way, as a check on runs of another system no rule was written from:

    python -m bench.agentrx_tau GIT_DIR OUT_JSONL

GIT_DIR: a clone or bare snapshot of microsoft/AgentRx (MIT; ``data/tau_retail/tau_dataset_failed.json``, the runs,
and ``data/ground_truth/tau_ground_truth.json``, the labels, read with ``git show HEAD:...``). The runs are tau-bench
retail (MIT), a simulated customer and an agent held to a written policy; no GAIA text.

Mapping (one ``traj`` entry is one message, in order, nothing added or dropped):

- every entry keeps its OpenAI chat shape (``system``, ``user``, ``assistant`` with ``tool_calls``, ``tool`` with its
  ``tool_call_id``); ``assistant`` messages are named ``Assistant`` and ``user`` messages ``User``, as the labels
  spell the agent that erred (the simulated customer errs in 8 of 29 root causes);
- the label is the run's ``root_cause`` failure: its ``step_number`` is the entry's 1-based ``index`` (AgentRx's
  trajectory IR numbers every message from 1, the system prompt counted), so ``mistake_step`` = ``step_number - 1``,
  a 0-based index into ``messages`` (``messages.seq``); the run's other labeled failures are kept in
  ``label.failures`` (the earliest in ``label.first_step``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench import git_snapshot as snapshot
from bench.git_snapshot import fail

RUNS = "data/tau_retail/tau_dataset_failed.json"
LABELS = "data/ground_truth/tau_ground_truth.json"
NAMES = {"assistant": "Assistant", "user": "User"}


def convert(run: dict, truth: dict, commit: str) -> dict:
    msgs = []
    for i, e in enumerate(run["traj"]):
        if e.get("index", i + 1) != i + 1:
            raise ValueError(f"task {run['task_id']}: entry {i} has index {e.get('index')}")
        m = {"role": e["role"], "content": e.get("content")}
        if e["role"] in NAMES:
            m["name"] = NAMES[e["role"]]
        for k in ("tool_calls", "tool_call_id"):
            if e.get(k):
                m[k] = e[k]
        if e["role"] == "tool" and e.get("name"):
            m["name"] = e["name"]
        msgs.append(m)
    failures = sorted(truth["failures"], key=lambda f: f["step_number"])
    root = next(f for f in failures if f["failure_id"] == truth["root_cause"]["failure_id"])
    return {
        "id": f"agentrx-tau-{run['task_id']}",
        "source": "agentrx-tau",
        "messages": msgs,
        "label": {
            "mistake_step": root["step_number"] - 1,
            "orig_step": root["step_number"],
            "mistake_agent": root["failed_agent"],
            "category": root["failure_category"],
            "reason": root["step_reason"],
            "first_step": failures[0]["step_number"] - 1,
            "failures": [
                {"step": f["step_number"] - 1, "agent": f["failed_agent"], "category": f["failure_category"]}
                for f in failures
            ],
        },
        "meta": {"file": RUNS, "commit": commit, "task_id": run["task_id"], "trial": run.get("trial")},
    }


def main() -> None:
    if len(sys.argv) != 3:
        fail("usage: python -m bench.agentrx_tau GIT_DIR OUT_JSONL")
    git, out = sys.argv[1], Path(sys.argv[2])

    def show(spec: str) -> str:
        return snapshot.show(git, spec)

    commit = snapshot.head(git)
    try:
        runs = json.loads(show(f"HEAD:{RUNS}"))
        truth = {t["trajectory_id"]: t for t in json.loads(show(f"HEAD:{LABELS}"))}
        lines = [json.dumps(convert(r, truth[r["task_id"]], commit)) for r in runs if r["task_id"] in truth]
    except (ValueError, KeyError, StopIteration, TypeError) as e:
        fail(f"error: {git}: not the AgentRx tau-bench shape ({type(e).__name__}: {e})")
    if not lines:
        fail(f"error: no labeled run in {git}")
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} runs → {out}")


if __name__ == "__main__":
    main()
