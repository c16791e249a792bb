"""The analyzer registry: one entry per analyzer module, in report order.

Adding an analyzer is one module (NAME, TITLE, run(ctx) -> Section) plus one line here.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from forensics.errors import ForensicsError

REGISTRY: dict[str, str] = {
    "usage": "forensics.analyzers.usage",  # first: the report leads with the runs (SPEC §22)
    "baseline": "forensics.analyzers.baseline",
    "keywords": "forensics.analyzers.keywords",
    "compression": "forensics.analyzers.compression",
    "topics": "forensics.analyzers.topics",  # before drift: interleave (type 4) reads topic_switches
    "compaction": "forensics.analyzers.compaction",  # before drift: type 3 reads its audit
    "drift": "forensics.analyzers.drift",
    "sentinel": "forensics.analyzers.sentinel",
    "skills": "forensics.analyzers.skills",
    "memory": "forensics.analyzers.memory",
    "outcomes": "forensics.analyzers.outcomes",  # it compares the findings above with outcomes
    "secrets": "forensics.analyzers.secrets",  # what ingest masked: no finding of its own
}


def names() -> list[str]:
    return list(REGISTRY)


def load(name: str) -> ModuleType:
    if name not in REGISTRY:
        raise ForensicsError(f"unknown analyzer {name!r} (known: {', '.join(REGISTRY)})")
    return importlib.import_module(REGISTRY[name])


def parse_only(only: str | None) -> list[str]:
    """``--only baseline,drift`` -> validated names in registry order; None -> all."""
    if not only:
        return names()
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    for w in wanted:
        load(w)
    return [n for n in names() if n in wanted]
