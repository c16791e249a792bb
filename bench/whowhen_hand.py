"""Convert the Hand-Crafted part of Who&When (58 Magentic-One runs, hand-labeled) to the JSONL of
``data/failures/whowhen.jsonl`` (its README), so that ``bench/failures.py`` judges it the same way:

    python -m bench.whowhen_hand GIT_DIR OUT_JSONL

GIT_DIR: a clone or bare snapshot of ag2ai/Agents_Failure_Attribution (MIT; ``Who&When/Hand-Crafted/{1..58}.json``
read with ``git show HEAD:...``). The output holds GAIA validation questions and answers, which GAIA asks not to
be reshared crawlably: write it outside the repository, and point the bench at it (``--hand PATH`` or
``$FORENSICS_WHOWHEN_HAND``).

Mapping (one source ``history`` entry is one message, in order, nothing added or dropped, so the label's
``mistake_step``, a 0-based index into ``history``, is ``messages.seq``):

- ``human`` → ``user`` (the task);
- ``ComputerTerminal`` → ``tool`` named ``ComputerTerminal`` (it runs the code blocks the Coder writes);
- every other role → ``assistant`` named by the agent: the role up to its parenthesis, so Magentic-One's
  ``Orchestrator (thought)``, ``Orchestrator (-> WebSurfer)`` and ``Orchestrator (termination condition)`` are
  all ``Orchestrator`` (the label spells the agent so), and ``WebSurfer``, ``FileSurfer``, ``Assistant``,
  ``Coder`` keep their names. The source role is kept in ``meta.orig_roles``.

Content is copied unchanged. ``label.mistake_step`` is the source's string as an int; ``meta.agent_matches_step``
says whether the labeled agent is the speaker of the labeled message (55 of 58).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from bench import git_snapshot as snapshot
from bench.git_snapshot import fail

SUBSET = "Who&When/Hand-Crafted"


def agent_of(role: str) -> str:
    """The agent a Magentic-One log role names: ``Orchestrator (-> WebSurfer)`` → ``Orchestrator``."""
    return re.sub(r"\s*\(.*\)\s*$", "", role).strip()


def convert(rec: dict, number: int, commit: str) -> dict:
    msgs = []
    for h in rec["history"]:
        role = h["role"]
        if role == "human":
            msgs.append({"role": "user", "content": h["content"]})
        elif agent_of(role) == "ComputerTerminal":
            msgs.append({"role": "tool", "name": "ComputerTerminal", "content": h["content"]})
        else:
            msgs.append({"role": "assistant", "name": agent_of(role), "content": h["content"]})
    step = int(rec["mistake_step"])
    at = rec["history"][step]["role"] if step < len(rec["history"]) else None
    return {
        "id": f"whowhen-hand-{number}",
        "source": "whowhen-hand",
        "messages": msgs,
        "label": {
            "mistake_step": step,
            "orig_step": rec["mistake_step"],
            "mistake_agent": rec["mistake_agent"],
            "category": rec.get("mistake_type"),
            "reason": rec.get("mistake_reason"),
        },
        "question": rec.get("question"),
        "ground_truth": rec.get("ground_truth"),
        "meta": {
            "subset": "Hand-Crafted",
            "file": f"{SUBSET}/{number}.json",
            "commit": commit,
            "question_id": rec.get("question_ID"),
            "level": rec.get("level"),
            "orig_roles": [h["role"] for h in rec["history"]],
            "agent_matches_step": at is not None and agent_of(at) == rec["mistake_agent"],
            "is_correct": rec.get("is_corrected"),
        },
    }


def main() -> None:
    if len(sys.argv) != 3:
        fail("usage: python -m bench.whowhen_hand GIT_DIR OUT_JSONL")
    git, out = sys.argv[1], Path(sys.argv[2])

    def show(spec: str) -> str:
        return snapshot.show(git, spec)

    commit = snapshot.head(git)
    listing = subprocess.run(
        ["git", "-C", git, "ls-tree", "--name-only", f"HEAD:{SUBSET}"], capture_output=True, text=True
    ).stdout.split()
    numbers = sorted(int(n[:-5]) for n in listing if re.fullmatch(r"\d+\.json", n))
    if not numbers:
        fail(f"error: no {SUBSET}/N.json in {git}")
    lines = [json.dumps(convert(json.loads(show(f"HEAD:{SUBSET}/{n}.json")), n, commit)) for n in numbers]
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} runs → {out}")


if __name__ == "__main__":
    main()
