"""How logs and labels files write whether a run passed, read the same way everywhere (docs/outcomes.md#where-outcomes-come-from).

Benchmarks grade with a reward (tau-bench, tau2: success is a reward of at least 1), a verdict string
(Inspect's ``C``/``I``, AgentBench's ``completedCorrect``, a labels file's ``pass``/``fail``) or a boolean
(MINT ``state.success``, SWE-bench's resolved list, terminal-bench ``is_resolved``). Anything else is not a
grade: the run gets no outcome rather than a guessed one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.model import Outcome

PASSED = frozenset(
    {"true", "1", "pass", "passed", "c", "correct", "success", "succeeded", "resolved", "yes", "completedcorrect"}
)
FAILED = frozenset(
    {"false", "0", "fail", "failed", "i", "incorrect", "failure", "unresolved", "no", "completedincorrect"}
)


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


def inspect_scores(scores: Any, task: Any) -> Outcome | None:
    """Inspect AI: the first scorer's ``value`` (``C``/``I``, 1/0, a number; of a value per metric, the first)."""
    if not isinstance(scores, dict) or not scores:
        return None
    name, first = next(iter(scores.items()))
    value = first.get("value") if isinstance(first, dict) else None
    if isinstance(value, dict) and value:
        key, value = next(iter(value.items()))
        name = f"{name}.{key}"
    return graded(value, f"scores.{name}.value", task)


def openhands_resolved(test_result: Any, task: Any, report: Any = None) -> Outcome | None:
    """OpenHands evaluation output: the line's own ``report.resolved`` (written into each line by the
    benchmark's ``update_output_with_eval.py``), ``test_result.report.resolved`` (the remote SWE-bench
    evaluation), else ``test_result.resolved``."""
    tested = test_result if isinstance(test_result, dict) else {}
    inner = tested.get("report")
    for by, v in (
        ("report.resolved", report.get("resolved") if isinstance(report, dict) else None),
        ("test_result.report.resolved", inner.get("resolved") if isinstance(inner, dict) else None),
        ("test_result.resolved", tested.get("resolved")),
    ):
        if isinstance(v, bool):
            return Outcome(v, float(v), by, v, _task(task))
    return None


# The evaluation's reports beside an OpenHands output.jsonl, as the benchmarks' update_output_with_eval.py
# look for them: Multi-SWE-bench's FinalReport, the SWE-bench harness's report, OpenHands' remote evaluation.
OPENHANDS_REPORTS = ("eval_files/dataset/final_report.json", "report.json")
MSB_ID = re.compile(r"^([^/\s]+)/([^:\s]+):pr-(\d+)$")  # Multi-SWE-bench's PullRequestBase.id: org/repo:pr-N


def openhands_reports(output: str) -> tuple[str, dict[str, bool]] | None:
    """The grades an evaluation report beside an OpenHands ``output.jsonl`` gives, by instance id: the first of
    ``eval_files/dataset/final_report.json`` (Multi-SWE-bench; its ``org/repo:pr-N`` ids read as OpenHands'
    ``org__repo-N``), ``report.json`` (SWE-bench) and ``<name>.swebench_eval.jsonl`` that exists and parses. An
    instance in ``resolved_ids`` passed, one in another list (unresolved, error, empty patch, incomplete)
    failed; one it does not list has no outcome. None when there is no report."""
    out = Path(output)
    for rel in OPENHANDS_REPORTS:
        doc = _json_file(out.parent / rel)
        if isinstance(doc, dict) and isinstance(doc.get("resolved_ids"), list):
            graded: dict[str, bool] = {}
            for key, v in doc.items():
                if key.endswith("_ids") and key not in ("submitted_ids", "completed_ids") and isinstance(v, list):
                    for i in v:
                        if isinstance(i, str):
                            graded.setdefault(_msb_id(i), False)
            graded.update({_msb_id(i): True for i in doc["resolved_ids"] if isinstance(i, str)})
            return rel, graded
    remote = out.with_name(out.name.removesuffix(".jsonl") + ".swebench_eval.jsonl")
    records = instance_records(remote)
    if records is None:
        return None
    graded = {}
    for instance, rec in records:
        o = openhands_resolved(rec.get("test_result"), None)
        if o is not None and o.success is not None:
            graded[instance] = o.success
    return (remote.name, graded) if graded else None


def instance_records(path: Path) -> list[tuple[str, dict[str, Any]]] | None:
    """The records of a harness's JSONL side file (predictions, evaluations) that name an ``instance_id``, with it;
    lines that do not parse are passed over; None when the file cannot be read."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None
    out = []
    for line in lines:
        try:
            rec = values.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("instance_id"), str):
            out.append((rec["instance_id"], rec))
    return out


def _msb_id(i: str) -> str:
    m = MSB_ID.match(i)
    return f"{m.group(1)}__{m.group(2)}-{m.group(3)}" if m else i


SWEBENCH_PASSED = ("resolved", "resolved_ids")


def swebench_results(traj: str, instance: str) -> Outcome | None:
    """The SWE-bench harness's ``results.json`` in the folder of a ``.traj`` file or the two above it, or in a
    ``results/`` folder beside any of them (Multi-SWE-bench's ``trajs/`` and ``results/`` siblings): an
    instance in ``resolved`` (``resolved_ids``) passed; one listed only elsewhere (submitted, applied,
    unresolved...) failed; one it does not list has no outcome."""
    here = Path(traj).resolve().parent
    for folder in (
        here,
        here / "results",
        here.parent,
        here.parent / "results",
        here.parent.parent,
        here.parent.parent / "results",
    ):
        doc = _json_file(folder / "results.json")
        if not isinstance(doc, dict):
            continue
        lists = {k: v for k, v in doc.items() if isinstance(v, list)}
        if not any(k in lists for k in SWEBENCH_PASSED):
            continue
        if any(instance in lists.get(k, ()) for k in SWEBENCH_PASSED):
            return Outcome(True, 1.0, f"{_where(folder, here)}/results.json resolved", True, instance)
        if any(instance in v for v in lists.values()):  # submitted, applied, unresolved_ids, error_ids...
            return Outcome(False, 0.0, f"{_where(folder, here)}/results.json resolved", False, instance)
        return None
    return None


def _where(folder: Path, here: Path) -> str:
    """The folder named as before (its name), a ``results/`` sibling with its parent's name in front."""
    return f"{folder.parent.name}/results" if folder.name == "results" and folder != here else folder.name


def _json_file(path: Path) -> Any:
    try:
        return values.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
