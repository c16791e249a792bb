"""One declaration per analyzer: everything the rest of the toolkit needs to know about it, in one value.

An analyzer module (or package) ends with ``ANALYZER = Analyzer(...)``; ``forensics.analyzers`` lists the modules
(one line each) and derives every registry from their declarations: the config schema `config check` validates
(``keys``, with their validators, choices and units), the facts both engines compute, the default `check` rules,
the tuners `tune` and the report's *What to change* run, the chart drawers, the engines an analyzer runs on and
the order the report runs them in. Nothing registers itself when a module is imported.

The chart drawers and the tuners live in layers above the analyzers (``forensics.report``, ``forensics.tuning``:
analysis never imports matplotlib nor the tuning code that sweeps it), so a declaration names them by reference,
``"module:function"``, and the layer that owns them resolves the reference when it draws or tunes
(``resolve``); tests/test_declarations.py resolves every reference, so a typo fails CI, not a report. A plug-in
analyzer names its own package's functions the same way.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forensics.analyzers.facts import Fact
from forensics.config import Key

if TYPE_CHECKING:
    from forensics.analyzers.base import Context, Section

# a warehouse (every analyzer); the lake (those whose figures are facts of one conversation each)
ENGINES = ("duckdb", "spark")


@dataclass(frozen=True)
class CheckRule:
    """The better direction and tolerance `forensics report --write-baseline` gives a metric whose flat key
    (``section.key.sub``) matches ``pattern`` (fnmatch), when it first enters a baseline."""

    pattern: str
    better: str  # lower | higher | equal
    tolerance: float
    relative: bool  # tolerance as a share of the baseline value, or absolute


@dataclass(frozen=True)
class Tuner:
    """A tuner by reference (``"forensics.tuning.tuners:compression"``): ``(TuneContext) -> [Recommendation]``.
    ``keys``: the seed harness's keys it fits, so it runs on that harness's logs only (none: every conversation)."""

    ref: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analyzer:
    """An analyzer as the registries see it. ``run(ctx) -> Section`` is the analyzer itself; the rest says how the
    toolkit around it treats it."""

    name: str  # the section's name, `--only` word and metric prefix
    title: str
    run: Callable[[Context], Section]
    sections: dict[str, str] | None = None  # config section -> the line heading it in harness.toml and its docs
    keys: tuple[Key, ...] = ()  # the config keys of those sections, in the order the docs list them
    facts: tuple[Fact, ...] = ()  # the per-conversation facts it defines (``forensics.analyzers.facts``)
    reads: tuple[str, ...] = ()  # the facts run() reads (its own or another analyzer's): what Spark computes
    checks: tuple[CheckRule, ...] = ()  # default `check` rules of its metrics, first match wins
    tuners: tuple[Tuner, ...] = ()  # run in this order when the analyzer ran (or for `forensics tune`)
    charts: dict[str, str] | None = None  # chart name (``Chart.name``) -> its drawer, ``"module:function"``
    engines: tuple[str, ...] = ("duckdb",)
    after: tuple[str, ...] = ()  # analyzers whose tables it reads, so they run before it
    maps: tuple[str, ...] = ()  # metric keys holding a map keyed by conversation or model: no summary figure
    workers: bool = False  # it runs worker pools: the report keeps their fork server up until the last such has run


def resolve(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names, imported now (by the layer that owns it)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)
