"""What this machine gives DuckDB: threads and a memory limit read from the operating system, not DuckDB's
defaults (every hardware core and 80 % of the RAM, blind to a container's quota, and a cache that grows to fill
the limit across a report's analyzers).

- threads: the cores this process may run on (its CPU affinity), capped by a cgroup CPU quota (a container
  given 1.5 CPUs gets 2 threads, not the host's 64); ``FORENSICS_DUCKDB_THREADS`` overrides.
- memory limit: the command's own budget (``forensics ingest``: 160 MB or 4 x its largest parse task; ``report``:
  512 MB), at most a quarter of the machine's memory (physical RAM, capped by a cgroup memory limit) and never
  under 64 MB; ``FORENSICS_DUCKDB_MEMORY`` overrides. Past the limit DuckDB spills to disk.

Both are read once per process (docs/scale.md, "DuckDB's threads and memory").
"""

from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path

from forensics.kernel.errors import WarehouseError

THREADS_ENV, MEMORY_ENV = "FORENSICS_DUCKDB_THREADS", "FORENSICS_DUCKDB_MEMORY"
MEMORY_SHARE = 4  # a command's DuckDB limit is at most 1/MEMORY_SHARE of the machine's memory
MEMORY_FLOOR_MB = 64
_SIZE = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGT]i?)?B", re.IGNORECASE)
_CGROUP = Path("/sys/fs/cgroup")


@functools.cache
def cores() -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup (v2 ``cpu.max``, v1 CFS) CPU quota."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = _cpu_quota()
    return max(1, min(n, math.ceil(quota))) if quota else max(1, n)


def _cpu_quota() -> float | None:
    try:
        quota, period = (_CGROUP / "cpu.max").read_text().split()[:2]  # "max 100000" or "150000 100000"
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((_CGROUP / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((_CGROUP / "cpu" / "cpu.cfs_period_us").read_text())
        return quota_us / period_us if quota_us > 0 else None
    except (OSError, ValueError):
        return None


@functools.cache
def memory_mb() -> int | None:
    """The machine's memory in MB: physical RAM, capped by a cgroup (v2 ``memory.max``, v1) memory limit."""
    found: list[int] = []
    try:
        found.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20)
    except (ValueError, OSError, AttributeError):
        pass
    for f in (_CGROUP / "memory.max", _CGROUP / "memory" / "memory.limit_in_bytes"):
        try:
            found.append(int(f.read_text()) >> 20)  # "max" (no limit) is not a number
        except (OSError, ValueError):
            continue
    return min(found) if found else None


def threads() -> int:
    """DuckDB's threads: ``FORENSICS_DUCKDB_THREADS``, else :func:`cores`."""
    env = os.environ.get(THREADS_ENV)
    if env is None or env == "":
        return cores()
    if not env.isdigit() or int(env) < 1:
        raise WarehouseError(f"{THREADS_ENV}={env!r}: not a count of threads; give one like 2")
    return int(env)


def memory_limit(budget_mb: int) -> str:
    """DuckDB's memory limit for a command whose budget is ``budget_mb``: ``FORENSICS_DUCKDB_MEMORY`` (checked
    here, since DuckDB would reject a bad size only as an internal error), else the budget bounded by the
    machine."""
    env = os.environ.get(MEMORY_ENV)
    if env:
        if not _SIZE.fullmatch(env):
            raise WarehouseError(f"{MEMORY_ENV}={env!r}: not a size; give one like 512MB or 2GB")
        return env
    ram = memory_mb()
    cap = ram // MEMORY_SHARE if ram else budget_mb
    return f"{max(MEMORY_FLOOR_MB, min(budget_mb, cap))}MB"
