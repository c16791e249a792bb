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


def test_the_parts_outside_the_analyzers_each_get_a_debug_line(seed_wh: Path, tmp_path: Path) -> None:
    """bench/shares.py lists every share of a report's CPU: the parts outside the analyzers and the tuners (data
    quality, the digest, the evidence, the findings kept, the pages, the report kept whole, the warehouse's close, the
    files written)
    each log one DEBUG line in the analyzers' form; at INFO (a terminal) they say nothing, and the files are the same."""
    import logging

    from forensics import api
    from forensics.analyzers.schema import defaults

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.seen: list[tuple[int, str]] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.seen.append((record.levelno, record.getMessage()))

    log, handler = logging.getLogger("forensics.report"), Lines()
    level = log.level
    log.setLevel(logging.DEBUG)  # (not .level =: isEnabledFor keeps what it answered before)
    log.addHandler(handler)
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    try:
        api.report(db, tmp_path / "debug", only=ONLY, cfg=defaults())
        debug = [m for lv, m in handler.seen if lv == logging.DEBUG]
        handler.seen.clear()
        log.setLevel(logging.INFO)
        shutil.copy(seed_wh, db)
        api.report(db, tmp_path / "info", only=ONLY, cfg=defaults())
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    timed = re.compile(r"^\S+ +\d+\.\d s +\d+\.\d CPU s  \S")
    names = [m.split()[0] for m in debug]
    # the pages are rendered before the report is kept whole, and kept with it: no second open after writing
    assert names == ["data_quality", "digest", "evidence", "persist", "pages", "kept_whole", "closed", "written"]
    assert all(timed.match(m) for m in debug), debug
    assert not [m for lv, m in handler.seen if lv == logging.DEBUG]
    for name in ("report.md", "report.html"):
        a, b = ((tmp_path / d / name).read_text() for d in ("debug", "info"))
        assert META.sub("", a) == META.sub("", b)


META = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")  # the report's time
