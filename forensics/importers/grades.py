"""How logs and labels files write whether a run passed, read the same way everywhere (SPEC §20).

Benchmarks grade with a reward (tau-bench, tau2: success is a reward of at least 1), a verdict string
(Inspect's ``C``/``I``, AgentBench's ``completedCorrect``, a labels file's ``pass``/``fail``) or a boolean
(MINT ``state.success``, SWE-bench's resolved list, terminal-bench ``is_resolved``). Anything else is not a
grade: the run gets no outcome rather than a guessed one.
"""
from __future__ import annotations

from typing import Any

from forensics.importers import values
from forensics.importers.model import Outcome

PASSED = frozenset({"true", "1", "pass", "passed", "c", "correct", "success", "succeeded", "resolved", "yes",
                    "completedcorrect"})
FAILED = frozenset({"false", "0", "fail", "failed", "i", "incorrect", "failure", "unresolved", "no",
                    "completedincorrect"})


def verdict(v: Any) -> bool | None:
    """True/False for a boolean, 1/0 or one of the words above (any case); None for anything else."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return v == 1
    if isinstance(v, str):
        w = v.strip().lower()
        return True if w in PASSED else False if w in FAILED else None
    return None


def reward(v: Any, by: str, task: Any = None) -> Outcome | None:
    """A reward: success when it is at least 1 (tau-bench's and tau2's own rule); None when not a number."""
    score = values.number(v, "reward")
    if score is None:
        return None
    return Outcome(score >= 1, score, by, v, _task(task))


def graded(v: Any, by: str, task: Any = None) -> Outcome | None:
    """A verdict or a number: ``C``/``I``, true/false, pass/fail, else a score (success at 1 or more)."""
    ok = verdict(v)
    if ok is not None:
        return Outcome(ok, float(ok), by, v, _task(task))
    return reward(v, by, task) if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None


def _task(v: Any) -> str | None:
    return None if v is None or isinstance(v, (dict, list)) else str(v)
