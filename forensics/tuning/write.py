"""Rewrite the harness config in place with tomlkit: comments, order and layout kept, changed keys stamped."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import tomlkit

from forensics.analyzers.schema import default_toml
from forensics.tuning import Recommendation, TuneResult


def write_config(path: str | os.PathLike[str], result: TuneResult, today: date | None = None) -> list[Recommendation]:
    """Apply the changed recommendations to ``path`` (created from the defaults when missing)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8") if p.exists() else default_toml()
    doc = tomlkit.parse(text)
    stamp = (today or date.today()).isoformat()
    changed = [r for r in result.recommendations if r.changed]
    for r in changed:
        section, name = r.key.split(".", 1)
        if section not in doc:
            doc.add(tomlkit.nl())
            doc.add(section, tomlkit.table())
        item = tomlkit.item(r.recommended)
        item.comment(
            f"tuned {stamp}: was {r.current!r}; {r.evidence} (corpus: {result.conversations} conversations, "
            f"{result.messages} messages)"
        )
        doc[section][name] = item
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    tmp.replace(p)
    return changed
