"""Worker processes on both cores, results back in order: the importers parse there while the main process loads
DuckDB, the topic analyzer tokenizes and judges conversation chunks there. Neutral ground, so that neither layer
imports the other.

Small jobs run inline (the caller says when): starting worker processes costs more than a few megabytes of work.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

from forensics.kernel.batch import batch_process

SPOOL_PREFIX = "forensics-"  # + pid + "-": a spool whose process is gone can be told from a live one
STALE_SECONDS = 600  # and untouched this long: a live process in another PID namespace keeps writing to its spool


def default_workers() -> int:
    env = os.environ.get("FORENSICS_WORKERS")
    if env and env.isascii() and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(2, os.cpu_count() or 1))


Task = tuple[Callable[..., Any], tuple[Any, ...], Any]  # (function, args, tag passed back with the result)


def run_ordered(
    tasks: Iterable[Task],
    workers: int,
    parallel: bool,
    init: tuple[Callable[..., Any], tuple[Any, ...]] | None = None,
    preload: tuple[str, ...] = (),
    ahead: int = 2,
) -> Iterator[tuple[Any, Any, BaseException | None]]:
    """Yield (tag, result, error) per task in submission order, at most ``ahead`` x workers in flight (each holds
    its arguments and result in this process until yielded; 1 keeps a worker idle while its next task is made). ``init``
    (function, args) runs once in each worker (in this process when the tasks run inline) before its tasks:
    state every task needs, sent once instead of with each task. ``preload`` names modules the fork server
    imports before it forks the first worker: what they load (jieba's dictionary) is then shared by every
    worker's pages instead of loaded by each. A fork server this call starts is stopped when its pool closes (it
    held 205 MB of jieba idle through the rest of a report), or when the enclosing :func:`fork_server_held`
    ends; one already running (a notebook's) is left as it is. A pool using a running server gets modules beyond
    its preload loaded in each worker."""
    if not parallel or workers < 2:
        if init:
            init[0](*init[1])
        for fn, args, tag in tasks:
            try:
                yield tag, fn(*args), None
            except Exception as e:  # reported per task; the caller decides what fails
                yield tag, None, e
        return
    with _fork_server(preload) as ctx:
        yield from _pooled(ctx, tasks, workers, init, ahead)


@contextmanager
def side_process(preload: tuple[str, ...]) -> Iterator[ProcessPoolExecutor]:
    """One worker process beside this one, for work collected later (the report's charts, drawn while its
    analyzers go on), forked from the fork server with ``preload`` imported there. Its fork server is stopped
    when the block ends cleanly (as ``run_ordered``'s); a server already running is used and left as it is."""
    with _fork_server(preload) as ctx:
        ex = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_init_worker, initargs=(None, os.getpid()))
        try:
            yield ex
        except BaseException:  # cut short: what is queued is dropped, not waited for
            ex.shutdown(wait=False, cancel_futures=True)
            raise
        ex.shutdown()


@contextmanager
def _fork_server(preload: tuple[str, ...]) -> Iterator[ForkServerContext]:
    """The fork server's context, the server started (quietly) with ``preload`` when none runs. One this block
    started is stopped when the block ends cleanly, or by the enclosing :func:`fork_server_held`. Not in a
    finally: each worker holds the server's "alive" pipe, so after an interrupt one still running would keep the
    stop waiting forever; the server of a run cut short ends with the process, as it always did."""
    ctx = multiprocessing.get_context("forkserver")
    if preload:
        ctx.set_forkserver_preload(list(preload))
    started = _quiet_forkserver()
    yield ctx
    if started and _HELD.depth:
        _HELD.started = True
    elif started:
        _stop_forkserver()


class _Held:
    depth = 0  # fork_server_held blocks open
    started = False  # a pool inside them started the fork server


_HELD = _Held()  # per process, as the fork server is


@contextmanager
def fork_server_held() -> Iterator[None]:
    """Pools run inside share the fork server the first of them starts (its preload is loaded once); it stops when
    the block ends. The report holds it over the analyzers that run pools (``Analyzer.workers``)."""
    _HELD.depth += 1
    try:
        yield
    except BaseException:  # cut short: the server is left to end with the process (see run_ordered)
        _HELD.depth -= 1
        _HELD.started = _HELD.started and _HELD.depth > 0
        raise
    _HELD.depth -= 1
    if not _HELD.depth and _HELD.started:
        _HELD.started = False
        _stop_forkserver()


def _pooled(
    ctx: ForkServerContext,
    tasks: Iterable[Task],
    workers: int,
    init: tuple[Callable[..., Any], tuple[Any, ...]] | None,
    ahead: int = 2,
) -> Iterator[tuple[Any, Any, BaseException | None]]:
    root = _spool_root()
    sweep_spools(root)
    with (
        tempfile.TemporaryDirectory(prefix=f"{SPOOL_PREFIX}{os.getpid()}-", dir=root) as spool,
        ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(init, os.getpid())
        ) as ex,
    ):
        inflight: deque[tuple[Any, Future[Any]]] = deque()
        for fn, args, tag in tasks:
            inflight.append((tag, _submit(ex, fn, args, spool)))
            while len(inflight) >= ahead * workers:
                yield _done(*inflight.popleft())
        while inflight:
            yield _done(*inflight.popleft())


def _submit(ex: ProcessPoolExecutor, fn: Callable[..., Any], args: tuple[Any, ...], spool: str) -> Future[Any]:
    """The task's future; once a worker has died (killed, out of memory), a future holding that error, so
    that the tasks left fail one by one with it instead of the whole run."""
    try:
        return ex.submit(_spilled, fn, args, spool)
    except BrokenProcessPool as e:
        failed: Future[Any] = Future()
        failed.set_exception(e)
        return failed


def _quiet_forkserver() -> bool:
    """Start the fork server with stderr on /dev/null; its workers inherit it. A worker being started as the
    user stops the run (Ctrl-C, SIGTERM) finds the pool's semaphore already gone and printed a traceback under
    our one-line message. Workers report failures through their futures, never through stderr, so nothing is
    lost; a fork server already running (a notebook that used multiprocessing) is left as it is. True when this
    call started it."""
    from multiprocessing import forkserver

    started = getattr(forkserver._forkserver, "_forkserver_pid", None) is None
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        forkserver.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
    return started


def _stop_forkserver() -> None:
    """Stop the fork server (its pool's workers have exited): the standard library's own way, which its tests use;
    left running when this Python has no such method."""
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is not None:
        stop()


def _init_worker(init: tuple[Callable[..., Any], tuple[Any, ...]] | None, owner: int) -> None:
    threading.Thread(target=_watch, args=(owner,), daemon=True).start()
    batch_process()  # fewer cycle collections (``forensics.kernel.batch``)
    if init:
        init[0](*init[1])


def _spool_root() -> str | None:
    """Shared memory when the system has it: the spilled tables never touch a disk."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def sweep_spools(root: str | None) -> None:
    """Remove the spools of forensics processes that are gone. SIGKILL runs no cleanup, and /dev/shm is RAM:
    without this, every killed import would keep its spilled tables in memory until reboot."""
    for p in Path(root or tempfile.gettempdir()).glob(f"{SPOOL_PREFIX}*-*"):
        pid = p.name[len(SPOOL_PREFIX) :].split("-", 1)[0]
        try:
            stale = (
                pid.isascii()
                and pid.isdigit()
                and not _alive(int(pid))
                and time.time() - p.stat().st_mtime > STALE_SECONDS
            )
        except OSError:  # removed meanwhile by its owner or another sweep
            continue
        if stale:
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    try:  # a process that has exited but is not yet reaped still answers kill(); /proc says it is a zombie
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _watch(owner: int) -> None:
    """Worker side: exit when the process that owns the pool is gone. A SIGKILLed owner runs no shutdown, and
    its workers, each holding both ends of the task queue, would wait for tasks forever."""
    while _alive(owner):
        time.sleep(0.5)
    os._exit(1)


def _spilled(fn: Callable[..., Any], args: tuple[Any, ...], spool: str) -> Any:
    """Worker side: run the task; a result with Arrow tables sends them as files, not through the pipe."""
    result = fn(*args)
    return result.spill(spool) if hasattr(result, "spill") else result


def _done(tag: Any, fut: Future[Any]) -> tuple[Any, Any, BaseException | None]:
    try:
        result = fut.result()
        return tag, result.unspill() if hasattr(result, "unspill") else result, None
    except Exception as e:
        return tag, None, e
