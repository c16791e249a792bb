"""OpenHands conversations as the tools keep them on disk, one file per event: which file reads the folder.

V0 (the server, openhands/storage/locations.py): ``sessions/<sid>/metadata.json`` (title, ``llm_model``,
costs), ``events/<n>.json`` one event each, and ``event_cache/<start>-<end>.json`` pages that repeat 25 of them.
V1 (the agent SDK): ``conversations/<id>/base_state.json`` (agent and LLM config, stats) and
``events/event-<n>-<id>.json``. The main file (``metadata.json``, ``base_state.json``: rewritten as the
conversation grows) reads the ``events`` folder beside it, in event order, as one conversation named by the
folder; an event file is read with it (or, without one, with the first event file of its folder) and
otherwise skipped and counted, as are cache pages. A base state or the trajectory visualizer's
``trajectory.json`` (which embeds it as ``baseState``) beside an ``events.json`` gives that file's model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.model import Conversation, Log, mapping
from forensics.formats.openhands.v1 import kind_of

Builder = Callable[[Log, str, list[Any], dict[str, Any], str], Conversation]
MAIN_FILES = ("base_state.json", "metadata.json")


def base_state(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The V1 base state a document is or embeds (the visualizer's ``baseState``), else None."""
    if isinstance(doc.get("baseState"), dict):
        return mapping(doc["baseState"])
    return doc if isinstance(doc.get("agent"), dict) and ("stats" in doc or "persistence_dir" in doc) else None


def is_v0_event(doc: dict[str, Any]) -> bool:
    return (isinstance(doc.get("action"), str) or isinstance(doc.get("observation"), str)) and "id" in doc


def is_session_metadata(path: Path, doc: dict[str, Any]) -> bool:
    return path.name == "metadata.json" and "conversation_id" in doc and (path.parent / "events").is_dir()


def meta_beside(folder: Path) -> dict[str, Any]:
    """Evaluation-style metadata (``llm_config.model``) from the main file kept beside a conversation's events."""
    for name in ("base_state.json", "trajectory.json", "metadata.json"):
        f = folder / name
        if f.is_file():
            try:
                doc = mapping(values.loads(f.read_bytes()))
            except (orjson.JSONDecodeError, OSError):
                continue
            model = mapping(mapping(mapping(base_state(doc)).get("agent")).get("llm")).get("model") or doc.get(
                "llm_model"
            )
            if isinstance(model, str):
                return {"llm_config": {"model": model}}
    return {}


def read_file(path: Path, doc: dict[str, Any], log: Log, conversation: Builder) -> list[Conversation]:
    """A main file, a side file or one event file (see the module's docstring)."""
    folder = path.parent
    if base_state(doc) is not None or is_session_metadata(path, doc):
        if path.name in MAIN_FILES and (folder / "events").is_dir():
            return [conversation(log, folder.name, _events(folder / "events", log), meta_beside(folder), log.name)]
        beside = "events.json" if (folder / "events.json").is_file() else None
        log.notes.append(
            f"the base state of conversation {folder.name} (agent and LLM config, stats): "
            + (f"its events are read from {beside}" if beside else "no events beside it")
        )
        log.skip("base state")
        return []
    if kind_of(doc) is None and not is_v0_event(doc):
        log.error = "not an OpenHands event, base state or evaluation output"
        return []
    if any((folder.parent / m).is_file() for m in MAIN_FILES) or _event_files(folder)[:1] != [path]:
        log.skip("event file (read with its conversation's main file or first event file)")
        return []
    return [conversation(log, folder.parent.name, _events(folder, log), meta_beside(folder.parent), log.name)]


def _event_files(folder: Path) -> list[Path]:
    """V0 ``<n>.json`` in number order, V1 ``event-<n>-<id>.json`` in name order."""
    v0 = sorted((f for f in folder.glob("*.json") if f.stem.isdigit()), key=lambda f: int(f.stem))
    return v0 or sorted(folder.glob("event-*.json"))


def _events(folder: Path, log: Log) -> list[Any]:
    out = []
    for f in _event_files(folder):
        log.rows += 1
        try:
            raw = f.read_bytes()
        except OSError as e:
            log.quarantine(f"{folder.name}/{f.name}", f"cannot read event file ({e.strerror or e})", b"")
            continue
        try:
            out.append(values.loads(raw))
        except orjson.JSONDecodeError as e:
            log.quarantine(f"{folder.name}/{f.name}", values.json_reason(e), raw)
    return out
