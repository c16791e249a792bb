"""CPU seconds of this process and every process it started, live or ended: what a step of a report cost on a
machine others load, where wall time stretches with their work and CPU time does not (docs/scale.md).

A process that ended was counted into its parent's "children" times when the parent reaped it, so the sum over
the live tree of each process's own and reaped children's times, plus this process's, counts every process once.
Linux reads the live descendants from /proc; elsewhere only this process and its reaped children are counted."""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, utime + stime + cutime + cstime in seconds) of a process, None when it is gone."""
    try:
        fields = (_PROC / pid / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / _TICK


def tree_seconds() -> float:
    """User + system CPU seconds of this process, its ended children and its live descendants, so far."""
    t = os.times()
    own = t.user + t.system + t.children_user + t.children_system
    if not _PROC.is_dir():
        return own
    me = os.getpid()
    kids: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for d in os.listdir(_PROC):
        if d.isdigit() and (s := _stat(d)) is not None:
            kids.setdefault(s[0], []).append(int(d))
            cpu[int(d)] = s[1]
    todo, total = list(kids.get(me, ())), own
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(kids.get(pid, ()))
    return total
