"""The trigger table a harness routes skills with (``skill_triggers.json``: docs/metrics.md#skills), read and checked.

``{"schema": 1, "skills": {"<skill id>": ["phrase", ...]}}``: skills and phrases in file order (the order breaks
ties between equally long phrases); other top-level keys (a comment, a note) are kept when the file is
rewritten. A file that is missing, not JSON or not this shape is a one-line error naming what is wrong: a
table the replay misreads would measure a router nobody runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forensics.analyzers.skills.settings import SkillsSettings
from forensics.config import Config
from forensics.kernel.errors import ForensicsError

SCHEMA = 1
SHAPE = '{"schema": 1, "skills": {"<skill id>": ["phrase", ...]}}'


class TriggerTableError(ForensicsError):
    """The trigger table is missing, not JSON, or not of the table's shape (``SHAPE``)."""


@dataclass(frozen=True)
class TriggerTable:
    path: Path
    skills: dict[str, list[str]]  # skill id -> phrases, both in file order
    doc: dict[str, Any]  # the whole document, for a rewrite that keeps what it does not touch

    @property
    def phrases(self) -> int:
        return sum(len(p) for p in self.skills.values())


def read_table(path: str | os.PathLike[str]) -> TriggerTable:
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TriggerTableError(f"{p}: no such trigger table (expected a JSON file {SHAPE})") from None
    except IsADirectoryError:
        raise TriggerTableError(f"{p}: is a folder, not a trigger table file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TriggerTableError(f"{p}: cannot read the trigger table ({e})") from None
    except json.JSONDecodeError as e:
        raise TriggerTableError(f"{p}:{e.lineno}: not valid JSON ({e.msg}); a trigger table is {SHAPE}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("skills"), dict):
        raise TriggerTableError(f'{p}: no "skills" object; a trigger table is {SHAPE}')
    if doc.get("schema", SCHEMA) != SCHEMA:
        raise TriggerTableError(f"{p}: schema {doc['schema']!r} is not supported (this version reads schema 1)")
    skills: dict[str, list[str]] = {}
    for skill, phrases in doc["skills"].items():
        if not skill.strip():
            raise TriggerTableError(f"{p}: a skill id is empty")
        if not isinstance(phrases, list) or not all(isinstance(x, str) for x in phrases):
            raise TriggerTableError(f"{p}: skills.{skill} must be a list of phrases (strings), got {phrases!r:.60}")
        for i, phrase in enumerate(phrases):
            if not phrase.strip():
                raise TriggerTableError(f"{p}: skills.{skill}[{i}] is an empty phrase (it would fire on every message)")
        skills[skill] = list(phrases)
    return TriggerTable(p, skills, doc)


def configured(cfg: Config) -> TriggerTable | None:
    """The table ``[skills] triggers`` names (relative to the config file), or None when it names none."""
    name = str(SkillsSettings.of(cfg).triggers).strip()
    if not name:
        return None
    p = Path(name).expanduser()
    if not p.is_absolute() and cfg.path is not None:
        p = cfg.path.parent / p
    return read_table(p.resolve())


def with_triggers(cfg: Config, path: str | os.PathLike[str] | None) -> Config:
    """``cfg`` routing with the table at ``path`` (`--triggers`), checked now so a bad file fails before any work."""
    if path is None:
        return cfg
    read_table(path)
    return cfg.with_settings(replace(SkillsSettings.of(cfg), triggers=str(Path(path).resolve())))
