"""A kill mid-import leaves whole conversations only, and the same command run again completes the warehouse
exactly as an uninterrupted import (docs/definitions.md#sources-are-never-written); the spools of killed runs do not stay in /dev/shm."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forensics.kernel import workers as pool
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES, query, run_subprocess

SNAPSHOT = """
SELECT s.path, c.native_id, c.fingerprint, count(m.seq),
       sum(hash(m.seq, m.position, m.role, m.content, m.on_main_path)) AS digest
FROM conversations c JOIN sources s USING (source_id) LEFT JOIN messages m USING (conversation_id)
GROUP BY ALL ORDER BY ALL
"""


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Four copies of the SQLite and session fixtures: ~40 MB, enough for the parallel path and its spool."""
    root = tmp_path_factory.mktemp("src")
    out = []
    for i in range(4):
        for rel in ("sqlite", "sessions"):
            shutil.copytree(FIXTURES / rel, root / f"{rel}{i}")
            out.append(str(root / f"{rel}{i}"))
    return out


@pytest.fixture(scope="module")
def clean(sources: list[str], tmp_path_factory: pytest.TempPathFactory) -> list[tuple]:
    db = tmp_path_factory.mktemp("clean") / "w.duckdb"
    r = run_subprocess("ingest", *sources, "--db", str(db))
    assert r.returncode == 0, r.stderr
    return query(db, SNAPSHOT)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
@pytest.mark.parametrize("after", [0.0, 0.3, 0.6])
def test_a_killed_ingest_keeps_whole_conversations_and_a_rerun_completes_it(
    sources: list[str], clean: list[tuple], tmp_path: Path, sig: signal.Signals, after: float
) -> None:
    db = tmp_path / "w.duckdb"
    p = subprocess.Popen(
        [sys.executable, "-m", "forensics", "ingest", *sources, "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CI": "true"},
    )
    while p.poll() is None and not Path(f"{db}.wal").exists():  # the import is writing: kill it now or a bit later
        time.sleep(0.005)
    time.sleep(after)
    p.send_signal(sig)
    _, err = p.communicate()
    if sig == signal.SIGTERM and p.returncode != 0:  # ended like Ctrl-C: one line, the interrupted code
        assert (p.returncode, err) == (130, "forensics: interrupted; rerun the same command to finish\n")
        assert not list(Path(pool._spool_root() or "/tmp").glob(f"{pool.SPOOL_PREFIX}{p.pid}-*"))
    with open_warehouse(db) as wh:  # opens whatever the kill left (the schema completed if it was cut short)
        partial = wh.con.execute(SNAPSHOT).fetchall()
    assert set(partial) <= set(clean)  # every conversation it kept is whole
    r = run_subprocess("ingest", *sources, "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert query(db, SNAPSHOT) == clean
    quarantined = query(db, "SELECT count(*), count(DISTINCT (source_id, location)) FROM quarantine")[0]
    assert quarantined[0] == quarantined[1]  # no line quarantined twice
    for leftover in Path(pool._spool_root() or "/tmp").glob(f"{pool.SPOOL_PREFIX}{p.pid}-*"):
        shutil.rmtree(leftover)  # a SIGKILLed run's spool: the sweep leaves it for ten minutes


def test_spools_of_dead_processes_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    old = time.time() - 3600
    stale = tmp_path / f"forensics-{gone.pid}-aaaa"
    recent = tmp_path / f"forensics-{gone.pid}-bbbb"  # touched lately: maybe alive in another PID namespace
    live = tmp_path / f"forensics-{os.getpid()}-cccc"
    foreign = tmp_path / "forensics-notapid"
    for d in (stale, recent, live, foreign):
        d.mkdir()
        (d / "t.msg.arrow").write_bytes(b"x")
    for d in (stale, live, foreign):
        os.utime(d, (old, old))
    monkeypatch.setattr(pool, "_spool_root", lambda: str(tmp_path))
    out = list(pool.run_ordered([(pow, (2, i), i) for i in range(4)], workers=2, parallel=True))
    assert out == [(0, 1, None), (1, 2, None), (2, 4, None), (3, 8, None)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([recent.name, live.name, foreign.name])  # ours gone too


def test_an_error_raised_while_an_interrupt_unwinds_still_reads_as_interrupted() -> None:
    from forensics.cli import _after_interrupt

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("TransactionContext Error: cannot rollback")  # noqa: B904 - a cleanup failing mid-unwind (the context is the point)
    except RuntimeError as e:
        assert _after_interrupt(e) is True
    assert _after_interrupt(RuntimeError("Query interrupted")) and not _after_interrupt(ValueError("bad row"))
