"""The harness config: one TOML file whose keys are the assistant harness's own constants.

Every analyzer reads its thresholds from the one loaded ``Config``, its section as a typed value (``Settings``: a
frozen dataclass in its package, ``DriftSettings.of(cfg).echo_rate_low``); a key's default lives only in its ``Key``,
declared by the analyzer that reads it (``GENERAL`` here holds the rest). This module is the mechanism: it loads
and checks a file against a ``Schema`` and renders one; ``forensics.analyzers.schema`` hands it the schema and is
what callers use (``load_config()``, ``defaults()``). ``forensics config init`` writes the schema as a commented
file; a file with an unknown key or a wrong type fails with the key, its line and what was expected.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Self

from forensics.kernel.errors import ForensicsError
from forensics.text.personal import MODES as MASK_MODES

DEFAULT_CONFIG = "harness.toml"
# [prices]: the user's prices per model, over the shipped table (forensics.analyzers.prices, docs/usage.md)
PRICES = "prices"
PRICE_KINDS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
PRICES_DOC = [
    "[prices]: USD per million tokens per model, over the shipped dated table (docs/usage.md); input and",
    "output are required, a model without a price shows its tokens and no cost. For example:",
    "[prices]",
    '"my-model" = {input = 1.0, output = 4.0, cache_read = 0.1, cache_write = 1.25, cache_write_1h = 2.0}',
]


# The seed harness (docs/definitions.md#words): the assistant whose constants this file holds writes the SQLite ai_conversations
# database, the JSONL sessions and the decision-memory database. Its knobs are
# replayed and tuned on its own logs only; Claude Code, Codex and the other agents have none of them.
HARNESS_FORMATS = ("sqlite", "jsonl", "decision-memory")
# ... and the keys that are this tool's own detector thresholds, not a harness's: fitted on any agent's logs
DETECTOR_KEYS = ("drift.*", "topic.switch_score", "topic.dialogue_switch_score", "topic.embedding_switch_score")


def formats_of(path: str) -> tuple[str, ...] | None:
    """The source formats whose logs a key's value governs: the seed harness's for its constants, None (every
    format) for a detector threshold of this tool."""
    import fnmatch

    return None if any(fnmatch.fnmatchcase(path, p) for p in DETECTOR_KEYS) else HARNESS_FORMATS


@dataclass(frozen=True)
class Key:
    """One tunable: where it lives, its default, its unit and the harness constant it maps to."""

    section: str
    name: str
    default: Any
    doc: str
    unit: str = ""
    constant: str = ""  # the seed harness's constant name, for `tune --emit`
    max_chars: int | None = None  # for a list of strings: the longest item that can mean anything
    validate: Callable[[Any], str | None] | None = None  # why a value of the right type is still unusable
    choices: tuple[str, ...] = ()  # the values a string (or every item of a list) may take

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}"


ROLES = ("user", "assistant", "system", "tool")  # the roles a message has in the warehouse
# what a number of each unit may be: a share is a share, a count is never negative
RANGES: dict[str, tuple[float | None, float | None]] = {
    **{u: (0, 1) for u in ("share", "score in [0, 1]", "probability", "Jaccard")},
    "cosine": (-1, 1),
    **{
        u: (0, None)
        for u in (
            "messages",
            "calls",
            "tokens",
            "tokens (chars/4)",
            "targets",
            "characters",
            "UTF-8 bytes",
            "lines",
            "replies",
            "decisions",
            "ratio",
            "per day",
        )
    },
}

# The keys no analyzer reads: the seed harness's own (shown to `tune --emit`) and what forensics masks. Every
# other key is declared by the analyzer that reads it (``forensics.analyzers.declare``).
GENERAL_SECTIONS = {
    "intent": "Intent recognition (a seed harness constant).",
    "redact": "What is masked in what forensics shows (the warehouse keeps the raw text).",
}
GENERAL: tuple[Key, ...] = (
    Key(
        "intent",
        "conf_threshold",
        0.7,
        "minimum intent confidence before tools are narrowed",
        "probability",
        "INTENT_CONF_THRESHOLD",
    ),
    Key(
        "redact",
        "personal",
        "pages",
        'mask e-mail addresses, phone numbers, card numbers and IBANs: "pages" in '
        'report.html and the explorer\'s pages, "all" in every output too (report.md, metrics.json, charts, query '
        'results, show), "off" nowhere; secrets are masked everywhere whatever this says',
        "",
        validate=lambda v: None if v in MASK_MODES else f"choose one of {', '.join(MASK_MODES)}",
    ),
)


@dataclass(frozen=True)
class Schema:
    """Every key a config file may hold, by section, and the line that heads each section. The config layer sits
    below the analyzers, so it is handed the schema (``forensics.analyzers.schema`` assembles it from ``GENERAL``
    and the analyzers' declarations) and only checks and renders it."""

    keys: tuple[Key, ...]
    sections: dict[str, str]


class Settings:
    """A config section as a typed value: a frozen dataclass per section, one field per key, in the package of the
    analyzer that declares the section (``forensics.analyzers.drift.settings.DriftSettings``), read with
    ``DriftSettings.of(cfg)``. The registry checks that its fields are the section's keys; mypy checks every use."""

    section: ClassVar[str]

    @classmethod
    def of(cls, cfg: Config) -> Self:
        return cls(**{f.name: cfg[f"{cls.section}.{f.name}"] for f in fields(cls)})  # type: ignore[arg-type]

    @classmethod
    def names(cls) -> list[str]:
        """The keys of the section, as the fields list them."""
        return [f.name for f in fields(cls)]  # type: ignore[arg-type]


class ConfigError(ForensicsError):
    """The harness config is unreadable, or has an unknown key or a value of the wrong type."""


class Config:
    """Loaded values by ``section.name`` (``cfg["tool_result.summarize_bytes"]``); an analyzer reads its section as a
    typed value (``ToolResultSettings.of(cfg).summarize_bytes``: ``Settings``)."""

    def __init__(self, values: dict[str, Any], path: Path | None = None) -> None:
        self.values, self.path = values, path

    def __getitem__(self, path: str) -> Any:
        return self.values[path]

    @property
    def prices(self) -> dict[str, dict[str, float]]:
        """``[prices]`` as given: model -> USD per million tokens by kind (``PRICE_KINDS``); {} when absent."""
        return dict(self.values.get(PRICES, {}))

    def with_settings(self, *settings: Settings) -> Config:
        """A copy with the values of ``settings`` (``dataclasses.replace(DriftSettings.of(cfg), echo_rate_low=0.4)``:
        mypy checks the key) in place of their sections'."""
        vals = dict(self.values)
        for s in settings:
            vals.update({f"{s.section}.{name}": getattr(s, name) for name in s.names()})
        return Config(vals, self.path)


def defaults(schema: Schema) -> Config:
    return Config({k.path: k.default for k in schema.keys})


def load_config(schema: Schema, path: str | os.PathLike[str] | None = None) -> Config:
    """Load ``path``, else ``./harness.toml`` when present, else the built-in defaults."""
    if path is None:
        if not Path(DEFAULT_CONFIG).exists():
            return defaults(schema)
        path = DEFAULT_CONFIG
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such config file; create one with `forensics config init {p}`") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot read config ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML ({e})") from None
    values: dict[str, Any] = {k.path: k.default for k in schema.keys}
    known = {k.path: k for k in schema.keys}
    sections = {k.section for k in schema.keys}
    for section, body in data.items():
        if section == PRICES and isinstance(body, dict):
            values[PRICES] = _prices(p, text, body)
            continue
        if section not in sections or not isinstance(body, dict):
            raise ConfigError(
                f"{p}:{_line(text, None, section)}: unknown section [{section}] "
                f"(known: {', '.join(sorted(sections | {PRICES}))})"
            )
        for name, value in body.items():
            key = known.get(f"{section}.{name}")
            line = _line(text, section, name)
            if key is None:
                names = ", ".join(k.name for k in schema.keys if k.section == section)
                raise ConfigError(f"{p}:{line}: unknown key {section}.{name} (known in [{section}]: {names})")
            values[key.path] = _check(p, line, key, value)
    return Config(values, p)


def _prices(p: Path, text: str, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``[prices]``: model name -> USD per million tokens of each kind (``input`` and ``output`` required)."""
    out = {}
    for model, price in body.items():
        line = _line(text, PRICES, model)
        if not isinstance(price, dict):
            raise ConfigError(
                f"{p}:{line}: prices.{model} must be a table like {{input = 3.0, output = 15.0}}, got {price!r}"
            )
        if unknown := sorted(set(price) - set(PRICE_KINDS)):
            raise ConfigError(f"{p}:{line}: prices.{model}: unknown key {unknown[0]} (known: {', '.join(PRICE_KINDS)})")
        if missing := [k for k in ("input", "output") if k not in price]:
            raise ConfigError(f"{p}:{line}: prices.{model} needs {' and '.join(missing)} (USD per million tokens)")
        for kind, v in price.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ConfigError(
                    f"{p}:{line}: prices.{model}.{kind} must be a number >= 0 (USD per million tokens), got {v!r}"
                )
        out[str(model)] = {k: float(v) for k, v in price.items()}
    return out


def _check(p: Path, line: int, key: Key, value: Any) -> Any:
    want = key.default
    ok = (
        isinstance(value, bool)
        if isinstance(want, bool)
        else isinstance(value, int) and not isinstance(value, bool)
        if isinstance(want, int)
        else isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(want, float)
        else isinstance(value, str)
        if isinstance(want, str)
        else isinstance(value, list) and all(isinstance(v, str) for v in value)
        if isinstance(want, list)
        else isinstance(value, dict)
        if isinstance(want, dict)
        else True
    )
    if not ok:
        expected = {
            bool: "true or false",
            int: "an integer",
            float: "a number",
            str: "a string",
            list: "a list of strings",
            dict: "a table",
        }[type(want)]
        raise ConfigError(f"{p}:{line}: {key.path} must be {expected}, got {value!r}")
    if key.max_chars is not None and (long := [v for v in value if len(v.strip()) > key.max_chars]):
        raise ConfigError(f"{p}:{line}: {key.path} items must be at most {key.max_chars} characters, got {long[0]!r}")
    if key.choices and (bad := [v for v in (value if isinstance(value, list) else [value]) if v not in key.choices]):
        raise ConfigError(f"{p}:{line}: {key.path}: {bad[0]!r} is not one of {', '.join(key.choices)}")
    low, high = RANGES.get(key.unit, (None, None))
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and ((low is not None and value < low) or (high is not None and value > high))
    ):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{p}:{line}: {key.path} must be {bounds} ({key.unit}), got {value!r}")
    if key.validate is not None and (why := key.validate(value)):
        raise ConfigError(f"{p}:{line}: {key.path}: {why}")
    return float(value) if isinstance(want, float) else value


def _line(text: str, section: str | None, name: str) -> int:
    """1-based line of ``name = ...`` inside [section] (or of the [name] header); 0 when not found."""
    current = None
    for i, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        m = re.match(r"^\[\s*([^\]]+?)\s*\]", s)
        if m:
            current = m.group(1).strip('"')
            if section is None and current.split(".")[0] == name:
                return i
            continue
        if current == section and re.match(rf"^\"?{re.escape(name)}\"?\s*=", s):
            return i
    return 0


def default_toml(schema: Schema) -> str:
    """The commented default file `forensics config init` writes: every key, its default, unit and constant."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("Harness config read by forensics (and by your assistant's harness)."))
    doc.add(tomlkit.comment("Every key is optional; a missing key takes the default shown. `forensics tune --write`"))
    doc.add(tomlkit.comment("rewrites values in place and keeps your comments."))
    for section in dict.fromkeys(k.section for k in schema.keys):
        table = tomlkit.table()
        table.add(tomlkit.comment(schema.sections.get(section, "")))
        for k in (k for k in schema.keys if k.section == section):
            note = (
                k.doc + (f" [{k.unit}]" if k.unit else "") + (f" (harness constant {k.constant})" if k.constant else "")
            )
            table.add(tomlkit.comment(note))
            table.add(k.name, tomlkit.inline_table() if isinstance(k.default, dict) else k.default)
        doc.add(tomlkit.nl())
        doc.add(section, table)
    doc.add(tomlkit.nl())
    for line in PRICES_DOC:
        doc.add(tomlkit.comment(line))
    return tomlkit.dumps(doc)


def render_docs(schema: Schema) -> str:
    """docs/harness-config.md, generated from the schema (``python -m forensics.analyzers.schema``)."""
    out = [
        "# Harness config (`harness.toml`)",
        "",
        "Generated by `python -m forensics.analyzers.schema` from the schema; do not edit by hand. Every key is "
        "optional.",
        "`forensics config init` writes this as a commented file; `forensics tune --write` rewrites values in",
        "place; `--emit json|rust|ts` prints the keys that have a harness constant.",
        "",
        f"`forensics tune` fits a key only on the logs of a harness that has it: the seed harness's keys on its own "
        f"logs (formats {', '.join(HARNESS_FORMATS)}), this tool's detector thresholds "
        f"({', '.join(DETECTOR_KEYS)}) on any; with none of those logs a key is left alone, with one line saying "
        "why. Claude Code, Codex and the other agents have none of the seed harness's knobs. The [drift] "
        "thresholds hold one value for every agent, so they are fitted only on a warehouse of one kind of agent "
        "(its log format, a sub-agent apart) with at least 20 conversations carrying the figure; otherwise "
        "these defaults stand and the drift analyzer holds each kind against its own norm. (The seed harness, "
        "its design notes 000-004 cited below and the other words: [definitions.md](definitions.md).)",
        "",
    ]
    for section in dict.fromkeys(k.section for k in schema.keys):
        out += [
            f"## `[{section}]`",
            "",
            schema.sections.get(section, ""),
            "",
            "| key | default | unit | harness constant | meaning |",
            "|---|---|---|---|---|",
        ]
        for k in (k for k in schema.keys if k.section == section):
            default = str(k.default).replace("|", "/") if not isinstance(k.default, bool) else str(k.default).lower()
            out.append(f"| `{k.name}` | `{default}` | {k.unit} | {f'`{k.constant}`' if k.constant else ''} | {k.doc} |")
        out.append("")
    out += [
        "## `[prices]`",
        "",
        "What tokens cost, per model, for `forensics usage` and the report's first section: "
        + " ".join(PRICES_DOC[:2]).replace("[prices]: ", ""),
        "",
        "```toml",
        *PRICES_DOC[2:],
        "```",
        "",
    ]
    return "\n".join(out)
