"""Run one command as a child process and measure it: wall time, peak RSS of the largest process, and the
peak of the whole process tree's RSS summed (the importer runs worker processes, so the largest single
process under-states what the machine has to hold).

The tree is sampled from /proc every few milliseconds; the single-process peak comes from the kernel
(``os.wait4`` rusage, which includes every reaped descendant), so it is exact.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_S = 0.01
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Sample:
    """One measured run of one step."""

    seconds: float
    max_rss_mb: float  # the largest single process (kernel rusage)
    tree_rss_mb: float  # the largest sum over the process tree (sampled)
    returncode: int


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants right now."""
    kids, total, todo = _children_map(), 0, [root]
    while todo:
        pid = todo.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
        todo.extend(kids.get(pid, ()))
    return total


def run(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Sample:
    """Run ``argv`` to completion (output discarded unless it fails) and measure it."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, stop = [0], threading.Event()

    def sample() -> None:
        while not stop.wait(SAMPLE_S):
            peak[0] = max(peak[0], tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    stop.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
    mb = 1 << 20
    return Sample(seconds, usage.ru_maxrss * 1024 / mb, max(peak[0], usage.ru_maxrss * 1024) / mb, proc.returncode)
