"""Run one command as a child process and measure it: wall time, CPU time of the whole process tree, peak
RSS of the largest process, and the peak of the whole tree's memory (the importer runs worker processes,
so the largest single process under-states what the machine has to hold). The tree's memory is the sum of
PSS (proportional set size: a page shared by n processes counts 1/n in each), since summing RSS would
count the libraries every worker maps (Arrow, DuckDB) once per process.

The tree is sampled from /proc every few milliseconds; the single-process peak comes from the kernel
(``os.wait4`` rusage, which includes every reaped descendant), so it is exact. CPU seconds are the
kernel's count for the child and every descendant it reaped, or the sum of the last sampled CPU time of
every process seen when that is more (a descendant nobody reaped); on a shared machine they drift less
than wall time.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_S = 0.02
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sample:
    """One measured run of one step."""

    seconds: float
    cpu_s: float  # user + system, every process of the tree
    max_rss_mb: float  # the largest single process (kernel rusage)
    tree_rss_mb: float  # the largest PSS sum over the process tree (sampled)
    returncode: int


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of the process itself)."""
    out: dict[int, tuple[int, float]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(d)] = (int(fields[1]), sum(int(f) for f in fields[11:13]) / TICK)  # utime stime
    return out


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def tree(root: int) -> tuple[int, dict[int, float]]:
    """Proportional resident bytes of ``root`` and all its descendants right now, and each one's CPU seconds."""
    procs = _processes()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    rss, cpu, todo = 0, {}, [root]
    while todo:
        pid = todo.pop()
        rss += _pss(pid)
        if pid in procs:
            cpu[pid] = procs[pid][1]
        todo.extend(kids.get(pid, ()))
    return rss, cpu


def run(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Sample:
    """Run ``argv`` to completion (output discarded unless it fails) and measure it."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, cpu, stop = [0], {}, threading.Event()

    def sample() -> None:
        while not stop.wait(SAMPLE_S):
            rss, seen = tree(proc.pid)
            peak[0] = max(peak[0], rss)
            cpu.update(seen)

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
    cpu_s = max(usage.ru_utime + usage.ru_stime, sum(cpu.values()))
    return Sample(
        seconds, cpu_s, usage.ru_maxrss * 1024 / mb, max(peak[0], usage.ru_maxrss * 1024) / mb, proc.returncode
    )
