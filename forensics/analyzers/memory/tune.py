"""The decision-memory retrieval tuner: ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from typing import Any

from forensics.analyzers.tuner import Recommendation, TuneContext


def memory_retrieval(t: TuneContext) -> list[Recommendation]:
    """[memory] retrieval keys on a question set (docs/memory.md#retrieval-replay---questions-file): the sweep point with the highest recall@k, then MRR,
    then the smallest injected size; among equals the fewest and smallest changes from the current values."""
    from forensics.analyzers.memory import replay
    from forensics.analyzers.memory.retrieval import KEYS
    from forensics.analyzers.memory.settings import MemorySettings

    current = {k: getattr(MemorySettings.of(t.cfg), k) for k in KEYS}
    if not t.con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]:
        return [
            Recommendation(f"memory.{k}", v, v, "no decision records in the warehouse: nothing is retrieved")
            for k, v in current.items()
        ]
    if not t.questions:
        return [
            Recommendation(
                f"memory.{k}",
                v,
                v,
                "no question set: kept (pass --questions FILE to fit retrieval on your own questions)",
            )
            for k, v in current.items()
        ]
    rep, here = replay(t.con, t.cfg, t.questions)
    if not rep.scored or not rep.projects:
        why = "expects no decision" if not rep.scored else "asks projects without decisions in the warehouse"
        return [Recommendation(f"memory.{k}", v, v, f"the question file {why}: kept") for k, v in current.items()]
    grid = rep.sweep(here).to_dicts()
    span = {k: (max(g[k] for g in grid) - min(g[k] for g in grid)) or 1 for k in KEYS}

    def order(g: dict[str, Any]) -> tuple[float, ...]:
        moved = [k for k in KEYS if g[k] != current[k]]
        return (
            -round(g["recall_at_k"], 9),
            -round(g["mrr"], 9),
            round(g["injected_chars"], 6),
            len(moved),
            sum(abs(g[k] - current[k]) / span[k] for k in moved),
        )

    best = min(grid, key=order)
    now = next(g for g in grid if all(g[k] == current[k] for k in KEYS))
    moved = [k for k in KEYS if best[k] != current[k]]
    k0, k1 = current["top_k"], best["top_k"]
    new_k = "" if k1 == k0 else f"recall@{k1} "
    figures = (
        f"recall@{k0} {now['recall_at_k']:.2f} → {new_k}{best['recall_at_k']:.2f}, "
        f"MRR {now['mrr']:.2f} → {best['mrr']:.2f} on {len(rep.scored)} questions, injected "
        f"{_chars(now['injected_chars'])} → {_chars(best['injected_chars'])} chars"
    )
    evidence = (
        ", ".join(f"{k} {current[k]:g} → {best[k]:g}" for k in moved) + ": " + figures
        if moved
        else f"the current values score best of {len(grid)} settings: recall@{k0} {now['recall_at_k']:.2f}, MRR "
        f"{now['mrr']:.2f} on {len(rep.scored)} questions, injected {_chars(now['injected_chars'])} chars"
    )
    return [Recommendation(f"memory.{k}", current[k], best[k], evidence, figures if moved else "") for k in KEYS]


def _chars(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else f"{n:.0f}"
