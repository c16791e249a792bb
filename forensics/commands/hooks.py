"""`forensics hooks install|uninstall|status claude-code|codex|gemini` and the hook itself (`forensics hooks run`):
each finished session is ingested into the user's warehouse in the background (docs/hooks.md).

- Claude Code and Gemini CLI: a ``SessionEnd`` command hook in their JSON settings file; the hook reads the event's
  JSON on stdin (``transcript_path``). Codex: ``notify`` in its config.toml, which Codex runs after each turn with
  the event's JSON as the last argument (``thread-id``; the rollout file is found by it).
- The hook never blocks or fails the agent: it reads the event, starts a detached ingest and exits 0 whatever
  happens, printing nothing (Gemini CLI reads a hook's stdout as JSON). The detached ingest waits for any other
  one on the same warehouse (a lock file beside it), then ingests; each step is a line of the log
  (``~/.forensics/hooks.log``, or ``$FORENSICS_HOME``).
- The settings file is edited by inserting text (JSON: ``forensics.commands.jsonc``; TOML: tomlkit), so its other
  content and comments stay. Install keeps the file's bytes as they were (``hooks-state.json`` beside the log);
  uninstall writes them back when the file is still as install left it (byte for byte), and otherwise takes out
  only what install put in, the user's later edits kept.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from forensics.commands.jsonc import NotJson, add_hook, plain
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact

AGENTS = ("claude-code", "codex", "gemini")
EVENT = "SessionEnd"
NAME = "forensics-ingest"  # the Gemini CLI hook's name
LOCK_WAIT = 600  # seconds a detached ingest waits for another one on the same warehouse
POLL = 0.2


def home() -> Path:
    """Where the hooks keep their log and the settings files' original bytes."""
    return Path(os.environ.get("FORENSICS_HOME") or Path.home() / ".forensics")


def log_path() -> Path:
    return home() / "hooks.log"


def _state_path() -> Path:
    return home() / "hooks-state.json"


def settings_path(agent: str, project: str | os.PathLike[str] | None = None) -> Path:
    """The agent's own settings file: the user's, or a project's with ``project``."""
    _known(agent)
    if agent == "claude-code":
        user = Path(os.environ.get("CLAUDE_CONFIG_DIR", "").split(",")[0] or Path.home() / ".claude")
        return Path(project) / ".claude" / "settings.json" if project else user / "settings.json"
    if agent == "codex":
        user = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return Path(project) / ".codex" / "config.toml" if project else user / "config.toml"
    return (Path(project) if project else Path.home()) / ".gemini" / "settings.json"


def _known(agent: str) -> None:
    if agent not in AGENTS:
        raise ForensicsError(f"unknown agent {agent!r}: choose {', '.join(AGENTS)}")


def hook_argv(agent: str, db: str | os.PathLike[str]) -> list[str]:
    """The command the agent runs: this Python and this forensics, whatever the agent's PATH."""
    return [sys.executable, "-m", "forensics", "hooks", "run", agent, "--db", str(Path(db).expanduser().resolve())]


def _entry(agent: str, command: str) -> dict[str, Any]:
    if agent == "gemini":  # timeout in milliseconds (Gemini CLI's hooks reference)
        return {
            "hooks": [
                {
                    "name": NAME,
                    "type": "command",
                    "command": command,
                    "timeout": 10000,
                    "description": "forensics: ingest the finished session in the background",
                }
            ]
        }
    return {"hooks": [{"type": "command", "command": command, "timeout": 10}]}  # seconds (Claude Code)


def _ours(text: str, agent: str) -> bool:
    return f"forensics hooks run {agent}" in text or f'"forensics", "hooks", "run", "{agent}"' in text


def install(
    agent: str,
    db: str | os.PathLike[str],
    settings: str | os.PathLike[str] | None = None,
    project: str | os.PathLike[str] | None = None,
) -> str:
    """Add the hook to the agent's settings file (created when absent); one line saying what was done."""
    path = (Path(settings) if settings else settings_path(agent, project)).expanduser().absolute()
    raw = path.read_bytes() if path.exists() else None
    text = raw.decode("utf-8") if raw is not None else ""
    if _ours(text, agent):
        return f"{agent}: already installed in {path}"
    argv = hook_argv(agent, db)
    try:
        if agent == "codex":
            new = _codex_notify(text, argv, path)
        else:
            before = plain(text)
            new, _ = add_hook(text, EVENT, _entry(agent, shlex.join(argv)))
            after = plain(new)
            if (
                not isinstance(after, dict)
                or after.get("hooks", {}).get(EVENT, [None])[0] != _entry(agent, shlex.join(argv))
                or {k: v for k, v in after.items() if k != "hooks"}
                != ({k: v for k, v in (before or {}).items() if k != "hooks"})
            ):
                raise ForensicsError(f"{path}: the edit did not read back as intended; nothing was changed")
    except NotJson as e:
        raise ForensicsError(f"{path}: {e}; nothing was changed") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    data = new.encode("utf-8")
    state = _load_state()
    state[str(path.resolve())] = {
        "agent": agent,
        "original": None if raw is None else base64.b64encode(raw).decode(),
        "written": hashlib.sha256(data).hexdigest(),
        "inserted": _inserted(text, new),
    }
    _save_state(state)
    _atomic_write(path, data)
    log(f"installed the {agent} hook in {path} (warehouse {argv[-1]})")
    return f"{agent}: hook installed in {path}; each finished session is ingested into {argv[-1]} (log: {log_path()})"


def _codex_notify(text: str, argv: list[str], path: Path) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as e:
        raise ForensicsError(f"{path}: not TOML ({e}); nothing was changed") from None
    if "notify" in doc:
        raise ForensicsError(
            f"{path} already has notify = {doc['notify'].as_string()}: Codex runs one notify "
            "program; remove it or chain it from a script of yours that also runs "
            f"{shlex.join(argv)} with the same argument"
        )
    arr = tomlkit.array()
    arr.extend(argv)
    doc.add("notify", arr)
    return tomlkit.dumps(doc)


def _inserted(old: str, new: str) -> str:
    """The text install inserted (old and new differ by one insertion): what a later uninstall takes out."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < len(old) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    return new[start : len(new) - end]


def uninstall(
    agent: str, settings: str | os.PathLike[str] | None = None, project: str | os.PathLike[str] | None = None
) -> str:
    """Take the hook out: the file's bytes as they were before install when nothing else changed it since."""
    path = (Path(settings) if settings else settings_path(agent, project)).expanduser().absolute()
    state = _load_state()
    kept = state.get(str(path.resolve()))
    data = path.read_bytes() if path.exists() else None
    if data is None or not _ours(data.decode("utf-8", "replace"), agent):
        state.pop(str(path.resolve()), None)
        _save_state(state)
        return f"{agent}: no forensics hook in {path}"
    if kept and hashlib.sha256(data).hexdigest() == kept["written"]:
        if kept["original"] is None:
            path.unlink()
            said = f"{agent}: hook removed; {path} did not exist before install and is removed"
        else:
            _atomic_write(path, base64.b64decode(kept["original"]))
            said = f"{agent}: hook removed; {path} restored byte for byte"
    else:
        text = data.decode("utf-8")
        piece = kept["inserted"] if kept else None
        if piece and text.count(piece) == 1:
            _atomic_write(path, text.replace(piece, "", 1).encode("utf-8"))
        elif agent == "codex":
            _atomic_write(path, _without_notify(text, path).encode("utf-8"))
        else:
            raise ForensicsError(
                f"{path}: the hook's text was changed since install; remove the "
                f"`forensics hooks run {agent}` entry by hand"
            )
        said = f"{agent}: hook removed from {path}; the file's other changes since install are kept"
    state.pop(str(path.resolve()), None)
    _save_state(state)
    log(said)
    return said


def _without_notify(text: str, path: Path) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    if "notify" in doc and _ours(doc["notify"].as_string(), "codex"):
        del doc["notify"]
    return tomlkit.dumps(doc)


def status() -> str:
    """Per agent: where its user settings are and whether the hook is in them; the log's last lines."""
    lines = []
    for agent in AGENTS:
        path = settings_path(agent)
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        got = "installed" if _ours(text, agent) else "not installed"
        lines.append(f"{agent:12} {got:14} {path}")
    for where, entry in sorted(_load_state().items()):
        if not any(where == str(settings_path(a).resolve()) for a in AGENTS):
            lines.append(f"{entry['agent']:12} {'installed':14} {where}")
    tail = log_path().read_text(encoding="utf-8", errors="replace").splitlines()[-5:] if log_path().exists() else []
    lines.append(f"log: {log_path()}" + ("" if tail else " (empty)"))
    lines.extend("  " + redact(t) for t in tail)
    return "\n".join(lines)


# -- the hook -------------------------------------------------------------------------------------------------


def run(agent: str, db: str | os.PathLike[str], argument: str | None, stdin: Callable[[], str]) -> None:
    """The hook: find the finished session's file from the event, start a detached ingest, return. Never raises."""
    try:
        event = _event(agent, argument, stdin)
        paths = _session_files(agent, event)
        if not paths:
            log(f"{agent}: no session file in the event ({_describe(event)}); nothing to ingest")
            return
        pid = _spawn(db, paths, agent)
        log(
            f"{agent}: session {event.get('session_id') or event.get('thread-id') or '?'} ended; ingesting "
            f"{_names(paths)} from {paths[0].parent} in the background (pid {pid})"
        )
    except BaseException as e:  # noqa: BLE001 - the agent must never see the hook fail
        with contextlib.suppress(BaseException):
            log(f"{agent}: hook failed: {type(e).__name__}: {str(e)[:300]}")


def _event(agent: str, argument: str | None, stdin: Callable[[], str]) -> dict[str, Any]:
    raw = argument if agent == "codex" and argument else stdin()
    value = orjson.loads(raw) if raw and raw.strip() else {}
    return value if isinstance(value, dict) else {}


def _names(paths: list[Path] | list[str]) -> str:
    """The session's file by its name, and the sub-agents' folder beside it: what a log line can say in one line."""
    first = Path(paths[0]).name
    return first + (" and its subagents/" if len(paths) > 1 else "")


def _describe(event: dict[str, Any]) -> str:
    return ", ".join(f"{k}={str(v)[:80]}" for k, v in event.items() if isinstance(v, str | int)) or "empty"


def _session_files(agent: str, event: dict[str, Any]) -> list[Path]:
    if agent == "codex":
        thread = event.get("thread-id") or event.get("thread_id")
        if not isinstance(thread, str) or not thread or "/" in thread:
            return []
        sessions = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"
        return sorted(sessions.glob(f"*/*/*/rollout-*-{thread}.jsonl"))[-1:]
    given = event.get("transcript_path")
    if not isinstance(given, str) or not given:
        return []
    path = Path(given).expanduser()
    if not path.is_file():
        return []
    found = [path]
    subagents = path.with_suffix("") / "subagents"  # Claude Code's sub-agents of the session
    if agent == "claude-code" and subagents.is_dir():
        found.append(subagents)
    return found


def _spawn(db: str | os.PathLike[str], paths: list[Path], agent: str) -> int:
    """A detached process (its own session, no terminal, output to the log) that ingests ``paths``."""
    home().mkdir(parents=True, exist_ok=True)
    args = orjson.dumps({"db": str(db), "paths": [str(p) for p in paths], "agent": agent}).decode()
    with open(log_path(), "ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from forensics.commands.hooks import worker; worker(sys.argv[1])",
                args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            close_fds=True,
            start_new_session=True,
            cwd=str(home()),
        )
    return proc.pid


def worker(args: str) -> None:
    """The detached ingest: waits for another on the same warehouse, ingests, logs one line. Exits 0."""
    from forensics.ingestion.run import ingest

    a = orjson.loads(args)
    try:
        with _lock(Path(a["db"])):
            began = time.monotonic()
            result = ingest(a["paths"], db=a["db"])
        t = result.totals()
        failed = [s.error for s in result.sources if s.error]
        log(
            f"{a['agent']}: ingested {_names(a['paths'])} into {a['db']} in {time.monotonic() - began:.1f} s: "
            f"{t['conversations_new']} conversations new, {t['conversations_updated']} updated, "
            f"{t['messages_imported']} messages added" + (f"; failed: {failed[0]}" if failed else "")
        )
    except BaseException as e:  # noqa: BLE001 - logged, never a traceback on a terminal
        log(f"{a['agent']}: ingest of {_names(a['paths'])} failed: {type(e).__name__}: {str(e)[:300]}")


@contextlib.contextmanager
def _lock(db: Path) -> Iterator[None]:
    """One hook ingest at a time per warehouse (DuckDB allows one writer): a lock file beside it."""
    lock = db.with_name(db.name + ".hooks.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as f:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory lock; a concurrent ingest fails and says so in the log
            yield
            return
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ForensicsError(f"another ingest held {db} for {LOCK_WAIT} s") from None
                time.sleep(POLL)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def log(line: str) -> None:
    """One line of the hooks' log, UTC time first; secrets masked."""
    home().mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(log_path(), "a", encoding="utf-8") as f:
        f.write(f"{stamp} {redact(line)}\n")


def _load_state() -> dict[str, Any]:
    p = _state_path()
    if not p.exists():
        return {}
    try:
        value = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _save_state(state: dict[str, Any]) -> None:
    home().mkdir(parents=True, exist_ok=True)
    _atomic_write(_state_path(), orjson.dumps(state, option=orjson.OPT_INDENT_2))


def _atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` at once (a crash leaves the old or the new file, never half of one), its mode kept."""
    tmp = path.with_name(f".{path.name}.forensics-tmp")
    tmp.write_bytes(data)
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)


# -- `forensics ingest --watch` -------------------------------------------------------------------------------


def watch(
    paths: list[str],
    db: str | os.PathLike[str],
    interval: float,
    announce: Callable[[str], None],
    passes: int | None = None,
) -> None:
    """Poll ``paths`` every ``interval`` seconds; when a file under them changed (size or time) since the last
    pass, ingest them (unchanged files are skipped by ingest itself) and announce one line. Stops on Ctrl-C, or
    after ``passes`` passes."""
    from forensics.ingestion.run import ingest

    missing = [p for p in paths if not Path(p).expanduser().exists()]
    if missing:
        raise ForensicsError(f"no such file or folder to watch: {missing[0]}")
    seen: dict[str, tuple[int, int]] | None = None
    done = 0
    while passes is None or done < passes:
        now = _snapshot(paths)
        if now != seen:
            try:
                result = ingest(list[str | os.PathLike[str]](paths), db=db)
                t = result.totals()
                if seen is None or t["conversations_new"] or t["conversations_updated"]:
                    stamp = datetime.now(UTC).strftime("%H:%M:%S")
                    announce(
                        f"{stamp} {t['conversations_new']} conversations new, {t['conversations_updated']} "
                        f"updated, {t['messages_imported']} messages added -> {db}"
                    )
            except ForensicsError as e:
                announce(f"forensics: {e}")
            seen = now
        done += 1
        if passes is None or done < passes:
            time.sleep(interval)


def _snapshot(paths: list[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for p in paths:
        root = Path(p).expanduser()
        files = [root] if root.is_file() else (f for f in root.rglob("*") if f.is_file()) if root.is_dir() else []
        for f in files:
            with contextlib.suppress(OSError):
                st = f.stat()
                out[str(f)] = (st.st_size, st.st_mtime_ns)
    return out
