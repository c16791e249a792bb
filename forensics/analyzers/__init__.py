"""The analyzer registry: one line per analyzer module, in report order; every other registry is derived.

Each module ends with ``ANALYZER = Analyzer(...)`` (``forensics.analyzers.declare``). Adding an analyzer is its
module plus one line here, or, outside the project, one entry point in the group ``forensics.analyzers``
(``name = "package.module:ANALYZER"``): plug-ins run after the built-ins, by name. Declarations are read when first
asked for (importing every analyzer costs a second or two), never registered by importing a module.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from forensics.analyzers import keys, reuse
from forensics.analyzers.declare import INPUTS, Analyzer, CheckRule
from forensics.analyzers.facts import Fact
from forensics.config import Key
from forensics.kernel.errors import ForensicsError
from forensics.warehouse.derived import WRITTEN, Table
from forensics.warehouse.queries import NamedQuery, list_queries, load_query

ENTRY_POINT_GROUP = "forensics.analyzers"
REGISTRY: dict[str, str] = {
    "usage": "forensics.analyzers.usage",  # first: the report leads with the runs (docs/usage.md)
    "baseline": "forensics.analyzers.baseline",
    "keywords": "forensics.analyzers.keywords",
    "compression": "forensics.analyzers.compression",
    "topics": "forensics.analyzers.topics",
    "compaction": "forensics.analyzers.compaction",
    "drift": "forensics.analyzers.drift",
    "sentinel": "forensics.analyzers.sentinel",
    "skills": "forensics.analyzers.skills",
    "memory": "forensics.analyzers.memory",
    "rules": "forensics.analyzers.rules",  # the rules a run was given and kept (docs/definitions.md#rules-a-run-was-given); problems reads them
    "problems": "forensics.analyzers.problems",  # the eight kinds a reviewer flags (docs/definitions.md#problems-a-reviewer-flags)
    "outcomes": "forensics.analyzers.outcomes",  # it compares the findings above with outcomes
    "failures": "forensics.analyzers.failures",  # signatures of failed runs; shown first (report.build.LEAD)
    "secrets": "forensics.analyzers.secrets",  # what ingest masked: no finding of its own
    "exposure": "forensics.analyzers.exposure",  # per secret: its copies, how they arrived, what to rotate
}


@functools.cache
def declarations() -> tuple[Analyzer, ...]:
    """Every analyzer's declaration in report order: the built-ins, then the plug-ins by name. A declaration
    that breaks a rule another relies on (a name, a config key or a fact declared twice; an analyzer before one
    it reads) is an error here, so no registry derived from them can disagree."""
    found = [_declaration(name, functools.partial(_builtin, path)) for name, path in REGISTRY.items()]
    found += [_declaration(ep.name, ep.load, f" (plug-in {ep.value})") for ep in plugins()]
    _consistent(found)
    return tuple(found)


@functools.cache
def plugins() -> tuple[EntryPoint, ...]:
    """The plug-in analyzers installed (entry points of ``ENTRY_POINT_GROUP`` not named like a built-in), by name;
    none is loaded."""
    return tuple(
        sorted((ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in REGISTRY), key=lambda ep: ep.name)
    )


def _builtin(path: str) -> object:
    return getattr(importlib.import_module(path), "ANALYZER", None)


def _declaration(name: str, load: Callable[[], object], where: str = "") -> Analyzer:
    try:
        a = load()
    except Exception as e:  # a broken plug-in says which one, in one line
        raise ForensicsError(f"analyzer {name}{where} failed to load: {e}") from None
    if not isinstance(a, Analyzer) or a.name != name:
        raise ForensicsError(f"analyzer {name}{where}: no ANALYZER = Analyzer({name!r}, ...) declaration")
    return a


def _consistent(found: list[Analyzer]) -> None:
    seen: dict[str, str] = {}
    for i, a in enumerate(found):
        earlier = {b.name for b in found[:i]}
        for what in [f"section [{s}]" for s in a.sections or {}] + [f"fact {f.name}" for f in a.facts]:
            if what in seen:
                raise ForensicsError(f"analyzer {a.name}: {what} is already declared by {seen[what]}")
            seen[what] = a.name
        if late := [b for b in a.after if b not in earlier]:
            raise ForensicsError(f"analyzer {a.name} runs after {', '.join(late)}: list it below them")
        if stray := [k.path for k in a.keys if k.section not in (a.sections or {})]:
            raise ForensicsError(f"analyzer {a.name}: key {stray[0]} is outside its sections")
        typed = {c.section: c.names() for c in a.settings}
        for section in a.sections or {}:
            if typed.get(section) != (names := [k.name for k in a.keys if k.section == section]):
                raise ForensicsError(
                    f"analyzer {a.name}: section [{section}] has keys {', '.join(names)} but its "
                    f"Settings {', '.join(typed.get(section, ['(none)']))}: declare them alike"
                )
        if odd := [t.name for t in a.tables if t.written not in WRITTEN] + [i for i in a.inputs if i not in INPUTS]:
            raise ForensicsError(
                f"analyzer {a.name}: {odd[0]} is no derived table's way of writing nor an input "
                f"(tables: {', '.join(WRITTEN)}; inputs: {', '.join(INPUTS)})"
            )
    tables: dict[str, str] = {}
    for a in found:
        for t in _tables(a):
            if t.name in tables:
                raise ForensicsError(f"analyzer {a.name}: table {t.name} is already declared by {tables[t.name]}")
            tables[t.name] = a.name


def names() -> list[str]:
    """Every analyzer's name in report order, the built-ins then the plug-ins (none is loaded: a declaration's
    name is its registry line's or its entry point's, ``_declaration``)."""
    return [*REGISTRY, *(ep.name for ep in plugins())]


def load(name: str) -> Analyzer:
    """The declaration of the analyzer ``name`` (``load(name).run(ctx)`` runs it)."""
    for a in declarations():
        if a.name == name:
            return a
    raise ForensicsError(f"unknown analyzer {name!r} (known: {', '.join(names())})")


def parse_only(only: str | None) -> list[str]:
    """``--only baseline,drift`` -> validated names in registry order; None -> all."""
    if not only:
        return names()
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    known = names()
    for w in wanted:
        if w not in known:
            raise ForensicsError(f"unknown analyzer {w!r} (known: {', '.join(known)})")
    return [n for n in known if n in wanted]


@functools.cache
def all_facts() -> dict[str, Fact]:
    """Every per-conversation fact by name (``forensics.analyzers.facts``)."""
    return {f.name: f for a in declarations() for f in a.facts}


def check_rules() -> list[CheckRule]:
    """The analyzers' default `check` rules, in report order (``forensics.commands.check`` puts its general ones first)."""
    return [r for a in declarations() for r in a.checks]


def maps() -> set[str]:
    """Metric keys that hold a map keyed by conversation or model, in any section (no summary figure)."""
    return {k for a in declarations() for k in a.maps}


def on(engine: str) -> list[str]:
    """The analyzers that run on ``engine`` (``duckdb``: a warehouse; ``spark``: the lake)."""
    return [a.name for a in declarations() if engine in a.engines]


def _tables(a: Analyzer) -> list[Table]:
    return [*a.tables, *(reuse.cached_table(f.name) for f in a.facts if f.cached)]


def derived_tables() -> list[tuple[str, Table]]:
    """Every derived table the analyzers write, with the name of the analyzer writing it: the ones each declares,
    the kept rows of its kept facts, and the reuse's own (``forensics.report.tables`` adds the report's)."""
    return [*((a.name, t) for a in declarations() for t in _tables(a)), *(("report", t) for t in reuse.TABLES)]


def leading() -> dict[str, int]:
    """The analyzers whose sections the report leads with -> their rank (``Analyzer.lead``: 1 first)."""
    return {a.name: a.lead for a in declarations() if a.lead is not None}


def detector_sections() -> dict[str, str]:
    """The config sections of this tool's own detector thresholds -> how they are fitted
    (``Analyzer.detector_sections``)."""
    return {s: how for c in configs() for s, how in c.detector_sections.items()}


@dataclass(frozen=True)
class Configured:
    """What an analyzer declares about the config: its sections, their keys and its detector sections."""

    sections: dict[str, str]
    keys: tuple[Key, ...]
    detector_sections: dict[str, str]


@functools.cache
def configs() -> tuple[Configured, ...]:
    """Each analyzer's config declarations, in report order, read without importing a built-in analyzer: from its
    light module (``forensics.analyzers.keys.<name>``, which its declaration holds too; importing every analyzer
    cost 0.8 CPU s, most of a report read back whole). With a plug-in installed, from every declaration (each
    loaded and checked: a plug-in's keys are its declaration's). A registry line ``forensics.analyzers.keys`` does
    not list (in ``NAMES`` or ``NONE``) is read from its declaration."""
    if plugins():
        return tuple(_configured(a) for a in declarations())
    found = []
    for name, path in REGISTRY.items():
        if name in keys.NAMES:
            m = importlib.import_module(f"{keys.__name__}.{name}")
            found.append(Configured(m.SECTIONS, m.KEYS, getattr(m, "DETECTOR_SECTIONS", {})))
        elif name not in keys.NONE:
            found.append(_configured(_declaration(name, functools.partial(_builtin, path))))
    return tuple(found)


def _configured(a: Analyzer) -> Configured:
    return Configured(a.sections or {}, a.keys, a.detector_sections or {})


def measure_kinds() -> set[str]:
    """The finding kinds that measure a run's shape, not that its work went wrong (``Analyzer.measures``)."""
    return {k for a in declarations() for k in a.measures}


def wide_kinds() -> set[str]:
    """The measurement kinds that measure a run's breadth (``Analyzer.wide``)."""
    return {k for a in declarations() for k in a.wide}


def restated() -> dict[str, str]:
    """Finding kinds that restate another analyzer's kind, read off the same evidence -> that kind
    (``Analyzer.restates``): a conversation with both counts them once."""
    return {k: of for a in declarations() for k, of in (a.restates or {}).items()}


def packages() -> list[str]:
    """The package of each analyzer that is one (where its named queries live beside its code), in report order."""
    found = [getattr(sys.modules[a.run.__module__], "__package__", None) or "" for a in declarations()]
    return [p for p in dict.fromkeys(found) if p and p != __name__]


def view(name: str) -> Callable[..., Any] | None:
    """The read an analyzer declares under ``name`` (``Analyzer.views``), or None when no analyzer declares it
    (a plug-in left out, a build without it): the caller then says there is nothing to show."""
    return next((a.views[name] for a in declarations() if a.views and name in a.views), None)


def named_queries() -> list[NamedQuery]:
    """Every named query, by name: the general ones and each analyzer's (`forensics query --list`)."""
    return list_queries(*packages())


def named_query(name: str) -> NamedQuery:
    """The named query ``name``, a general one or an analyzer's (`forensics query NAME`)."""
    return load_query(name, *packages())


def compared() -> set[str]:
    """Metric keys (``section.key``) the before/after chart shows besides every share and rate."""
    return {f"{a.name}.{k}" for a in declarations() for k in a.compared}
