"""`forensics diff` in the terminal: two runs aligned step by step, the first divergence marked, secrets
masked. The data (and its JSON) come from ``forensics.analyzers.diff``."""

from __future__ import annotations

from forensics.analyzers.diff import Run, RunDiff, Step
from forensics.kernel.redact import redact

ARGS_CHARS = 90
SAID_SHOWN = 160
MARK = {"same": "=", "changed": "~", "only_a": "<", "only_b": ">"}


def outcome(run: Run) -> str:
    return {True: "passed", False: "failed"}.get(run.success, "no outcome")  # type: ignore[arg-type]


def describe(run: Run) -> str:
    return f"{run.native_id} ({run.model or 'no model'}, {outcome(run)}, {len(run.steps)} steps) {run.conversation_id}"


def step_text(step: Step | None) -> str:
    if step is None:
        return "(no step)"
    args = redact(step.arguments)
    return f"{step.name} {args[:ARGS_CHARS] + '…' if len(args) > ARGS_CHARS else args}"


def render(d: RunDiff) -> str:
    """Two runs side by side as `forensics diff` prints them: each run, the first divergence, the aligned steps."""
    a, b = d.a, d.b
    lines = [f"A: {describe(a)}", f"B: {describe(b)}"]
    i = d.divergence
    sa, sb = (a.steps[i] if i < len(a.steps) else None), (b.steps[i] if i < len(b.steps) else None)
    if sa is None and sb is None:
        lines.append(f"same {i} steps: no divergence")
    else:
        lines.append(f"first divergence at step {i}: A {_at(sa)} {step_text(sa)}")
        lines.append(f"{' ' * (len(str(i)) + 27)}B {_at(sb)} {step_text(sb)}")
        for name, run, step in (("A", a, sa), ("B", b, sb)):
            text = " ".join(run.said.get(step.position, "").split()) if step else ""
            if text:
                lines.append(
                    f"  {name} wrote beside it: {redact(text)[:SAID_SHOWN]}" + ("…" if len(text) > SAID_SHOWN else "")
                )
    counts = {op: sum(x.op == op for x in d.aligned) for op in MARK}
    lines.append(
        "aligned: "
        + ", ".join(f"{n} {op}" for op, n in counts.items())
        + "   (= same, ~ other arguments, < only in A, > only in B; [position] as `forensics show` takes it)"
    )
    for x in d.aligned:
        pa = f"[{a.steps[x.a].position}]" if x.a is not None else ""
        pb = f"[{b.steps[x.b].position}]" if x.b is not None else ""
        left = step_text(a.steps[x.a]) if x.a is not None else ""
        right = step_text(b.steps[x.b]) if x.b is not None and x.op != "same" else ""
        lines.append(f" {MARK[x.op]} {pa:>6} {pb:>6}  {left}" + (f"  |  {right}" if right else ""))
    return "\n".join(lines)


def _at(step: Step | None) -> str:
    return f"[{step.position}]" if step else "(ended)"


def render_runs(key: str, runs: list[Run]) -> str:
    """The runs of task ``key`` as `forensics diff --task` lists them: outcome, native id, model, steps, id."""
    lines = [f"task {key}: {len(runs)} runs"]
    lines.extend(
        f"  {outcome(r):10} {r.native_id}  {r.model or 'no model'}  {len(r.steps)} steps  {r.conversation_id}"
        for r in runs
    )
    return "\n".join(lines)
