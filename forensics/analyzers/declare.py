"""One declaration per analyzer: everything the rest of the toolkit needs to know about it, in one value.

An analyzer module (or package) ends with ``ANALYZER = Analyzer(...)``; ``forensics.analyzers`` lists the modules
(one line each) and derives every registry from their declarations: the config schema `config check` validates
(``keys``, with their validators, choices and units), the facts both engines compute, the default `check` rules,
the tuners `tune` and the report's *What to change* run, the chart drawers, the engines an analyzer runs on and
the order the report runs them in. Nothing registers itself when a module is imported.

Everything is declared in the analyzer's own package and held as a real, typed value: its chart drawers (its
``draw`` module, drawn with the kit of ``forensics.draw``: the only modules of the analysis that may import
matplotlib), its tuners (its ``tune`` module, written with ``forensics.analyzers.tuner``), its derived tables
(``forensics.warehouse.derived.Table``) and its check rules. The layers above (report, tuning, check, the
explorer) ask the registry for them; none names an analyzer, and no declaration names a module above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forensics.analyzers.facts import Fact
from forensics.config import Key, Settings
from forensics.draw import Drawer
from forensics.warehouse.derived import Table

if TYPE_CHECKING:
    from forensics.analyzers.base import Context, Section
    from forensics.analyzers.tuner import TunerFn

# what the report can hand an analyzer besides the warehouse (``Context``): the sections run before it, and the
# report's worst-conversation ranking (``Context.ranking``); an analyzer declares the ones it reads
INPUTS = ("sections", "ranking")
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
    """A tuner, ``(TuneContext) -> [Recommendation]`` (``forensics.analyzers.tuner``), usually in the analyzer's
    ``tune`` module. ``keys``: the seed harness's keys it fits, so it runs on that harness's logs only (none: every
    conversation)."""

    run: TunerFn
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mark:
    """Per-message columns one of the analyzer's derived tables (keyed by ``conversation_id`` and ``position``) adds
    to the explorer's transcript, by the names it shows them under."""

    table: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Analyzer:
    """An analyzer as the registries see it. ``run(ctx) -> Section`` is the analyzer itself; the rest says how the
    toolkit around it treats it."""

    name: str  # the section's name, `--only` word and metric prefix
    title: str
    run: Callable[[Context], Section]
    sections: dict[str, str] | None = None  # config section -> the line heading it in harness.toml and its docs
    keys: tuple[Key, ...] = ()  # the config keys of those sections, in the order the docs list them
    settings: tuple[type[Settings], ...] = ()  # each section as a typed value (``config.Settings``), fields = its keys
    facts: tuple[Fact, ...] = ()  # the per-conversation facts it defines (``forensics.analyzers.facts``)
    reads: tuple[str, ...] = ()  # the facts run() reads (its own or another analyzer's): what Spark computes
    checks: tuple[CheckRule, ...] = ()  # default `check` rules of its metrics, first match wins
    tuners: tuple[Tuner, ...] = ()  # run in this order when the analyzer ran (or for `forensics tune`)
    charts: dict[str, Drawer] | None = None  # chart name (``Chart.name``) -> its drawer (its ``draw`` module)
    tables: tuple[Table, ...] = ()  # the derived tables it writes (``forensics.warehouse.derived``)
    lead: int | None = None  # the report leads with its section, by this rank (1 first), before the data quality and
    # the digest (an idle one not first)
    # its config sections of this tool's own detector thresholds (no harness reads them) -> how its tuner fits them:
    # *What to change* lists their changes apart, after the harness's
    detector_sections: dict[str, str] | None = None
    # its finding kinds that measure a run's shape (how wide, how large, how crowded, how interleaved) against a limit or
    # a norm: true as measurements, and no sign by themselves that the work went wrong. *Worst conversations* does not
    # rank a run on them when it ended with its work handed over (``signature.DONE_ENDS``)
    measures: tuple[str, ...] = ()
    # of ``measures``, the kinds that measure a run's breadth (targets read, a context filled with their output): nor
    # does it rank a run on them where the person's request asked for that breadth (``signature.asked``)
    wide: tuple[str, ...] = ()
    # its finding kinds that restate another analyzer's, read off the same evidence -> that kind (drift's
    # ``tool_result_crowding`` and problems' ``context_crowded`` both read the share of tool output in the context): in
    # one conversation the two count once in *Worst conversations* and in the outcome ranking (``analyzers.restated``)
    restates: dict[str, str] | None = None
    conversation_figures: str | None = None  # the metric holding its per-conversation figures the explorer lists
    marks: tuple[Mark, ...] = ()  # its per-message verdicts the explorer's transcript shows
    # named reads over its tables that the layers above call by name (``analyzers.view``): the explorer's home
    # page, `forensics show`
    views: dict[str, Callable[..., Any]] | None = None
    inputs: tuple[str, ...] = ()  # what the report hands it beside the warehouse (``INPUTS``)
    engines: tuple[str, ...] = ("duckdb",)
    after: tuple[str, ...] = ()  # analyzers whose tables it reads, so they run before it
    compared: tuple[str, ...] = ()  # metric keys the before/after chart shows besides every share and rate
    maps: tuple[str, ...] = ()  # metric keys holding a map keyed by conversation or model: no summary figure
    workers: bool = False  # it runs worker pools: the report keeps their fork server up until the last such has run
    # its own process's memory is the report's largest after the pools' (the problems' claim tables): the process
    # drawing the charts beside the report starts after it, not beside it
    heavy: bool = False
