"""The harness config's full schema, assembled from the analyzers' declarations, and the config loaded against it.

``forensics.config`` holds the mechanism (``Key``, ``Config``, checking a file, rendering the schema) and the keys no
analyzer reads; it sits below the analyzers, so this module, at the analyzers' layer, hands it the schema: the
general keys, then each analyzer's in report order. Callers load a config here (``load_config``, ``defaults``), so
a plug-in analyzer's keys are checked by `forensics config check` like the built-ins'.

A built-in analyzer's keys are read from its light module (``forensics.analyzers.keys.<name>``, which its declaration
holds too: ``analyzers.configs()``), so loading a config imports no analyzer. With a plug-in installed, its keys are
its declaration's, so every declaration is loaded (and checked).

docs/harness-config.md is generated: ``python -m forensics.analyzers.schema > docs/harness-config.md``.
"""

from __future__ import annotations

import functools
import os

from forensics import analyzers, config
from forensics.config import GENERAL, GENERAL_SECTIONS, Config, Key, Schema


@functools.cache
def schema() -> Schema:
    """Every key: ``config.GENERAL``, then every analyzer's declared keys, in report order (``analyzers.configs()``:
    the built-ins' read from ``forensics.analyzers.keys``, no analyzer imported)."""
    found = analyzers.configs()
    return Schema(
        GENERAL + tuple(k for c in found for k in c.keys),
        {**GENERAL_SECTIONS, **{s: doc for c in found for s, doc in c.sections.items()}},
    )


def keys() -> tuple[Key, ...]:
    """Every config key the analyzers and the general sections declare, in schema order."""
    return schema().keys


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load ``path``, else ``./harness.toml`` when present, else the built-in defaults."""
    return config.load_config(schema(), path)


def defaults() -> Config:
    """The config with every key at its default (no file read)."""
    return config.defaults(schema())


def default_toml() -> str:
    """The commented file `forensics config init` writes: every key, its default, unit and harness constant."""
    return config.default_toml(schema())


def render_docs() -> str:
    return config.render_docs(schema())


if __name__ == "__main__":
    print(render_docs(), end="")
