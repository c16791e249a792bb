"""One registry of formats: each a module with a content sniff and a reader, built in or added by a package.

A format is a :class:`Format`. Built-in ones are listed in ``forensics.ingestion.catalog`` (names only, so
the CLI starts without importing them); a package outside the project adds one through the entry-point
group ``forensics.formats`` (``name = "package.module:FORMAT"``), with no change to the core. Detection
asks the specific formats first, in order, then plug-ins, then the catch-alls (OpenAI-style chat, JSONL
session trees, SQLite JSON-message tables), so a specific shape is never read by a generic importer.

A reader turns one file into :class:`~forensics.formats.kit.model.Conversation` objects (see ``model``).
The formats that predate the registry keep their own columnar workers (``task``).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.ingestion.catalog import BUILTIN, FALLBACK, plugin_entry_points


@functools.cache
def builtin(name: str) -> Format:
    """A built-in format by name (its module is imported on first use)."""
    spec = dict(BUILTIN + FALLBACK)[name]
    module, attr = spec.split(":")
    fmt: Format = getattr(importlib.import_module(module), attr)
    return fmt


@functools.cache
def plugins() -> tuple[Format, ...]:
    """Formats added by installed packages (entry-point group ``forensics.formats``). A plug-in that fails
    to load is left out; `forensics formats` would be the place to report it, ingest never fails for it."""
    out = []
    for ep in plugin_entry_points():
        try:
            fmt = ep.load()
        except Exception:  # a broken plug-in must not break ingest of everything else
            continue
        if isinstance(fmt, Format) and fmt.name == ep.name:
            out.append(fmt)
    return tuple(out)


def ordered() -> list[Format]:
    """Every format in detection order: specific built-ins, plug-ins, catch-alls."""
    return [builtin(n) for n, _ in BUILTIN] + list(plugins()) + [builtin(n) for n, _ in FALLBACK]


def listing() -> list[tuple[str, str, str]]:
    """(name, origin, what it reads) per format in detection order; origin is ``built-in`` or the package whose
    entry point added the format. Plain tuples: `forensics formats` prints them without loading polars."""
    known = {n for n, _ in BUILTIN + FALLBACK}
    return [
        (f.name, "built-in" if f.name in known else (f.read or f.task).__module__.split(".")[0], f.summary)
        for f in ordered()
    ]


def catch_all(name: str) -> bool:
    """A generic format, tried last (OpenAI-style chat, JSONL session trees, SQLite JSON-message tables)."""
    return name in dict(FALLBACK)


def get(name: str) -> Format:
    for fmt in ordered():
        if fmt.name == name:
            return fmt
    raise KeyError(name)


def sniff(probe: Probe, formats: list[Format] | None = None) -> tuple[Format, dict[str, Any]] | None:
    """The first format that recognises the file, with the source options its sniff found."""
    for fmt in formats if formats is not None else ordered():
        try:
            found = fmt.sniff(probe)
        except Exception:  # a sniff that trips over an odd file simply does not recognise it
            continue
        if found:
            return fmt, found if isinstance(found, dict) else {}
    return None


def side_of(path: Path) -> tuple[Format, Side, Path] | None:
    """The format, declaration and main file of a side file (see :class:`Side`); None for any other file."""
    for fmt in ordered():
        for side in fmt.sides:
            main = side.main_of(path)
            if main is not None:
                return fmt, side, main
    return None


def suggest(path: Path, tried: str | None = None) -> str | None:
    """The format a file is named like (``*.traj``, ``rollout-*.jsonl``...), when it is not ``tried``."""
    return next((f.name for f in ordered() if f.name != tried and f.claimed(path)), None)


def offered(path: Path) -> bool:
    """A folder walk asks the sniffs about this file (by its suffix or name)."""
    suffix, name = path.suffix.lower(), path.name
    return any(suffix in f.suffixes or name in f.names for f in ordered())
