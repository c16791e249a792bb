"""`forensics report` on a terminal says what it is doing, one line per analyzer with its time (issue 28: it was
silent for a minute on a large warehouse); in a pipe or CI it stays quiet, so logs and scripts are unchanged."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ONLY = "baseline,compression"
# name, wall time, CPU time (its own process and its workers: branch speed5), which of the two, what was reused
LINE = re.compile(r"^forensics: (\S+) +\d+\.\d s +\d+\.\d CPU s  \((\d)/2\)(?:  reused \d+ of \d+ conversations)?$")


def _report(db: Path, out: Path, stderr_on_terminal: bool) -> tuple[int, str, str]:
    """Run the real command with stderr on a pseudo-terminal (or a pipe); stdout is always a pipe."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    args = [
        sys.executable,
        "-m",
        "forensics",
        "report",
        "--db",
        str(db),
        "--out",
        str(out),
        "--only",
        ONLY,
        "--format",
        "json",
    ]
    if not stderr_on_terminal:
        done = subprocess.run(args, capture_output=True, text=True, env=env)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last writer is gone
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=slave, text=True, env=env)
    finally:
        os.close(slave)
        reader.join(timeout=30)
        os.close(master)
    return done.returncode, done.stdout, b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_terminal_gets_a_line_per_analyzer_and_a_pipe_none(seed_wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    code, out, err = _report(db, tmp_path / "tty", stderr_on_terminal=True)
    assert code == 0, err
    lines = [m.groups() for line in err.splitlines() if (m := LINE.match(line))]
    assert lines == [("baseline", "1"), ("compression", "2")], err
    assert "recommend" in err  # the tuners' time, after the analyzers
    code, piped_out, piped_err = _report(db, tmp_path / "pipe", stderr_on_terminal=False)
    assert code == 0, piped_err
    assert piped_err == "" and piped_out.replace("pipe", "tty") == out  # same files written, nothing more said
