"""``kernel.cputime``: the CPU seconds of this process and every process it started, live or reaped (the report's
progress lines and bench/shares.py read them)."""

from __future__ import annotations

import subprocess
import sys
import time

from forensics.kernel import cputime

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n{after}"


def test_a_live_child_and_its_own_child_are_counted_then_kept_once_reaped() -> None:
    before = cputime.tree_seconds()
    # a child that starts a grandchild spinning 0.4 CPU s, then itself spins 0.3 s and waits
    inner = SPIN.format(s=0.4, after="")
    outer = SPIN.format(s=0.3, after="import sys\nsys.stdin.read()")
    child = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {inner!r}])\n{outer}"],
        stdin=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while cputime.tree_seconds() - before < 0.7 and time.monotonic() < deadline:
        time.sleep(0.05)
    live = cputime.tree_seconds() - before
    assert child.poll() is None  # still running: read from /proc
    assert 0.7 <= live < 3
    child.communicate(b"")
    reaped = cputime.tree_seconds() - before
    assert live <= reaped < live + 1  # reaped: in this process's children times, counted once
