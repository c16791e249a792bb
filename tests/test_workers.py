"""The worker pool's preload: a pool of segmenting workers finds jieba loaded by its fork server, not by itself; and
no worker (nor the CLI's commands) loads pandas or pyarrow to hand DuckDB a frame (forensics.kernel.arrow), and workers
collect cycles less often (forensics.kernel.batch); a pool stops the fork server it started."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT


def seen(_: int) -> tuple[bool, bool, bool]:
    """Worker: what it found loaded before it imported anything."""
    loaded = "jieba" in sys.modules
    import jieba

    from forensics.text.tokenizer import SEGMENTER

    return SEGMENTER in sys.modules, jieba.dt.initialized, loaded


def test_workers_of_a_preloading_pool_find_jieba_loaded_before_their_first_task() -> None:
    script = textwrap.dedent("""
        import sys
        from forensics.text.tokenizer import SEGMENTER
        from forensics.kernel.workers import run_ordered
        from tests.test_workers import seen

        out = [e or r for _, r, e in run_ordered(((seen, (i,), None) for i in range(4)), 2, True, preload=(SEGMENTER,))]
        print(out, "jieba" in sys.modules)
    """)
    # jieba as the segmenter (rjieba, the default when installed, needs none of jieba's dictionary preloaded)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "FORENSICS_TOKENIZER": "jieba"},
    )
    assert done.returncode == 0, done.stderr
    # every worker: the segmenter module imported and jieba's dictionary loaded before the task; the calling
    # process never loaded jieba
    assert done.stdout.strip() == f"{[(True, True, True)] * 4} False"


def converted(_: int) -> tuple[bool, bool, bool]:
    """Worker: whether pandas is loaded after a frame went to DuckDB and back, whether it was before, and whether
    pyarrow is loaded."""
    before = "pandas" in sys.modules
    import duckdb
    import polars as pl

    from forensics.kernel.arrow import relation_frame, stream

    _t = stream(pl.DataFrame({"a": ["x", None], "n": [1, 2]}))  # noqa: F841 - read by the scan below
    assert relation_frame(duckdb.connect().sql("SELECT * FROM _t")).height == 2
    return before, "pandas" in sys.modules, "pyarrow" in sys.modules


def test_frames_reach_duckdb_without_pandas_or_pyarrow_in_workers_and_commands() -> None:
    """No pandas (43 MB, 0.3 s) nor pyarrow is loaded by a worker or a command that hands DuckDB frames: polars and
    DuckDB trade them through the Arrow C stream (``forensics.kernel.arrow``), and neither probes for pandas."""
    pytest.importorskip("pandas")  # the dev extras install it (pyspark's); a runtime install has none to skip
    script = textwrap.dedent("""
        import sys
        from forensics.ingestion import load  # its empty tables are built at import
        from forensics.kernel.workers import run_ordered
        from tests.test_workers import converted

        out = [e or r for _, r, e in run_ordered(((converted, (i,), None) for i in range(4)), 2, True,
                                                  preload=("forensics.ingestion.run",))]
        print(out, converted(0))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{[(False, False, False)] * 4} (False, False, False)"


def thresholds(_: int) -> tuple[int, ...]:
    """Worker: its garbage collector's thresholds."""
    import gc

    return gc.get_threshold()


def test_workers_collect_cycles_less_often_and_the_caller_keeps_its_own() -> None:
    """forensics.kernel.batch: a worker sets its collector's thresholds; the process that started the pool (a notebook
    using the Python API) keeps Python's."""
    script = textwrap.dedent("""
        import gc
        from forensics.kernel.workers import run_ordered
        from tests.test_workers import thresholds

        out = {r for _, r, e in run_ordered(((thresholds, (i,), None) for i in range(4)), 2, True)}
        print(sorted(out), gc.get_threshold())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(10000, 50, 100)] (700, 10, 10)"


def test_a_pool_stops_the_fork_server_it_started_and_keeps_one_already_running() -> None:
    """The fork server a pool started (jieba preloaded: 205 MB) stops with the pool, so it is not held through the
    rest of a report; a second pool starts its own. Pools inside fork_server_held share one, stopped when the block
    ends. One already running (a notebook's) is left running."""
    script = textwrap.dedent("""
        import multiprocessing.forkserver as fs
        from forensics.kernel.workers import fork_server_held, run_ordered
        from tests.test_workers import thresholds

        def pool():
            return len([r for _, r, e in run_ordered(((thresholds, (i,), None) for i in range(4)), 2, True)])

        def running():
            return fs._forkserver._forkserver_pid is not None

        print(pool(), running(), pool(), running(), end=" ")
        with fork_server_held():
            pool()
            pid = fs._forkserver._forkserver_pid
            print(pool(), fs._forkserver._forkserver_pid == pid, end=" ")
        print(running(), end=" ")
        fs.ensure_running()
        pid = fs._forkserver._forkserver_pid
        print(pool(), fs._forkserver._forkserver_pid == pid)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4 False 4 False 4 True False 4 True"


def test_ahead_bounds_the_tasks_made_before_each_result_is_handed_back() -> None:
    """``run_ordered(..., ahead=k)`` holds at most k x workers tasks (their arguments, then their results) in this
    process: the tasks are drawn from their generator only as results are handed back. The topic workers run with
    one each (a chunk's frame and its tokens are the first report's peak: docs/scale.md)."""
    script = textwrap.dedent("""
        from forensics.kernel.workers import run_ordered
        from tests.test_workers import thresholds

        for ahead in (1, 2):
            made = []
            def tasks():
                for i in range(8):
                    made.append(i)
                    yield thresholds, (i,), i
            print([len(made) for _, r, e in run_ordered(tasks(), 2, True, ahead=ahead)], end=" ")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "[2,",
        "3,",
        "4,",
        "5,",
        "6,",
        "7,",
        "8,",
        "8]",
        "[4,",
        "5,",
        "6,",
        "7,",
        "8,",
        "8,",
        "8,",
        "8]",
    ]
