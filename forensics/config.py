"""The harness config: one TOML file whose keys are the assistant harness's own constants.

Every analyzer reads its thresholds from the one loaded ``Config``; defaults live only in ``SCHEMA``.
``forensics config init`` writes SCHEMA as a commented file; a file with an unknown key or a wrong type
fails with the key, its line and what was expected.
"""
from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forensics.errors import ForensicsError
from forensics.text import cues
from forensics.warehouse.migrations import TRIMMED_TEXT_MAX

DEFAULT_CONFIG = "harness.toml"
SENTINEL_TOKENS = ["toolsapproved", "untrusteddata", "idsfresh", "batchbulk", "saveauto"]


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

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}"


SECTION_DOCS = {
    "intent": "Intent recognition (seed 001, P0).",
    "baseline": "Baseline metric definitions (SPEC §4).",
    "tool_result": "Tool-result compression (seed 001, improvement 4).",
    "keyword": "Keyword summaries and the tokenizer (seed 001, improvement 3 and P2).",
    "topic": "Topic-switch detection (seed 001, improvement 5).",
    "sentinel": "Sentinel (canary) compliance (seed 000, §三).",
    "compaction": "Context compaction (seed 004): when the harness summarises old messages.",
    "drift": "Drift phenomena thresholds (SPEC §5): severity low at the first value, high at the second.",
}

SCHEMA: list[Key] = [
    Key("intent", "conf_threshold", 0.7, "minimum intent confidence before tools are narrowed", "probability",
        "INTENT_CONF_THRESHOLD"),
    Key("baseline", "continue_words", ["继续", "continue", "go on", "继续吧"],
        "a user message whose stripped text is exactly one of these is a continue-nag", "words",
        max_chars=TRIMMED_TEXT_MAX),  # longer user texts are not kept trimmed in the warehouse
    Key("baseline", "short_user_chars", 12, "user messages of at most this many characters are short", "characters"),
    Key("baseline", "parallel_calls", 3, "assistant messages with at least this many tool calls are parallel turns",
        "calls"),
    Key("tool_result", "compress_enabled", True, "summarize large tool results before they enter the context", "",
        "TOOL_RESULT_COMPRESS_ENABLED"),
    Key("tool_result", "summarize_bytes", 2000, "summarize a result larger than this", "UTF-8 bytes",
        "TOOL_RESULT_SUMMARIZE_BYTES"),
    Key("tool_result", "summarize_share", 0.40, "or larger than this share of the request context", "share",
        "TOOL_RESULT_SUMMARIZE_SHARE"),
    Key("tool_result", "head_tail_lines", 5, "lines kept from the start and the end of a summarized result", "lines",
        "TOOL_RESULT_HEAD_TAIL_LINES"),
    Key("keyword", "fallback_enabled", True, "use the keyword summary when compaction fails", "",
        "KEYWORD_FALLBACK_ENABLED"),
    Key("keyword", "top_k", 10, "keywords kept per summary", "tokens", "KEYWORD_TOP_K"),
    Key("keyword", "tokenizer", "jieba+bigram", "bigram, jieba or jieba+bigram", ""),
    Key("topic", "marker_enabled", True, "mark topic switches for the harness", "", "TOPIC_MARKER_ENABLED"),
    Key("topic", "min_confidence", 0.7, "both messages need a topic this confident for a switch marker",
        "probability", "TOPIC_MIN_CONFIDENCE"),
    Key("topic", "roles", ["user"], "roles whose messages are judged and may start a topic", "roles"),
    Key("topic", "switch_score", 0.39, "when only user turns are judged (assistant logs): a judged message whose "
        "switch score reaches this starts a new topic; the fitted operating point (weights.json modes.user "
        "anchor): lower trades precision for recall", "score in [0, 1]"),
    Key("topic", "dialogue_switch_score", 0.32, "the same when assistant turns are judged too (human-human "
        "dialogue, roles with \"assistant\"); weights.json modes.dialogue anchor", "score in [0, 1]"),
    Key("topic", "embedding", False, "also judge cohesion by sentence embeddings (needs the optional extra "
        "forensics[embedding]; used where the judging mode has weights fitted with it: dialogue)", ""),
    Key("topic", "embedding_switch_score", 0.29, "the switch score threshold when the embedding signals are used "
        "(weights.json modes.dialogue+embedding anchor)", "score in [0, 1]"),
    Key("topic", "lexicon", {}, "optional table topic = [phrases]: a message containing a phrase has that topic",
        "phrases"),
    Key("topic", "request_cues", cues.REQUEST_CUES, "a judged message matching one of these opens a request "
        "(a verb and an indefinite object: \"looking for a\", \"推荐一家\")", "regexes", validate=cues.invalid_regex),
    Key("topic", "addition_cues", cues.ADDITION_CUES, "... adds a request (\"I also need\", \"另外\")", "regexes", validate=cues.invalid_regex),
    Key("topic", "reference_cues", cues.REFERENCE_CUES, "... refers back to the current subject (\"it\", "
        "\"这家\")", "regexes", validate=cues.invalid_regex),
    Key("topic", "offer_cues", cues.OFFER_CUES, "a message before a judged one matching these (in its last 200 "
        "characters) offers more help (\"anything else?\")", "regexes", validate=cues.invalid_regex),
    Key("topic", "social_words", cues.SOCIAL_WORDS, "a judged message whose content words are all among these "
        "(thanks, bye, 好的) closes or acknowledges: it carries no topic and never starts one", "words"),
    Key("sentinel", "enabled", True, "judge final replies for the sentinel line", "", "SENTINEL_ENABLED"),
    Key("sentinel", "marker", "[[SS-CHECK", "the sentinel line's opening marker", ""),
    Key("sentinel", "tokens", SENTINEL_TOKENS, "the tokens expected after the marker, in order", "tokens"),
    Key("sentinel", "compliance_window", 3, "judged replies without a Healthy one before a model is muted",
        "replies", "SENTINEL_COMPLIANCE_WINDOW"),
    Key("sentinel", "correction_words", ["不对", "错了", "不是这个", "你忘了", "wrong", "that's not", "you forgot",
                                         "I said"],
        "a user message containing one of these is a correction (a visible failure)", "phrases"),
    Key("sentinel", "closing", "]]", "what ends the sentinel line", ""),
    Key("sentinel", "tool_error_patterns",
        [r"\[exit code: [1-9][0-9]*\]", r"^error(\[E[0-9]+\])?:", "panicked at", r"traceback \(most recent call last\)",
         "test result: failed", "no such file or directory", "permission denied", "command not found"],
        "a tool result matching one of these (RE2, case-insensitive, ^ at line starts) is a tool error even "
        "without the error flag", "regexes"),
    Key("compaction", "max_tokens", 100_000, "compact when the estimated context exceeds this", "tokens (chars/4)",
        "COMPACTION_MAX_TOKENS"),
    Key("compaction", "keep_recent", 10, "messages kept verbatim after a compaction", "messages",
        "COMPACTION_KEEP_RECENT"),
    Key("drift", "crowding_ratio_low", 0.25, "tool-result crowding when asst_tool_ratio is at or below this and a "
        "result exceeds tool_result.summarize_bytes (low)", "ratio"),
    Key("drift", "crowding_ratio_high", 0.10, "... at or below this: high (the seed's conversations: 0.04-0.05)", "ratio"),
    Key("drift", "dispersion_targets_low", 8, "tool-set dispersion when one user request reads this many distinct "
        "targets (paths, queries, commands) (low)", "targets"),
    Key("drift", "dispersion_targets_high", 10, "... this many: high (the seed's examples: 11 and 12)", "targets"),
    Key("drift", "dispersion_parallel_low", 6, "tool-set dispersion when one assistant message carries this many "
        "calls (low)", "calls"),
    Key("drift", "dispersion_parallel_high", 10, "... this many: high (the seed's widest round: 12)", "calls"),
    Key("drift", "rediscovery_window", 6, "a search this many messages after a not-found failure re-discovers it",
        "messages"),
    Key("drift", "interleave_lag_low", 4, "multi-topic interleave when the assistant stays on the old topic this "
        "many messages after a switch (low)", "messages"),
    Key("drift", "interleave_lag_high", 10, "... this many: high (the seed's example: 12)", "messages"),
    Key("drift", "echo_rate_low", 0.30, "no focus when this share of assistant messages is pure tool echo (low)",
        "share"),
    Key("drift", "echo_rate_high", 0.50, "... this share: high (the seed: 36-62%)", "share"),
    Key("drift", "continue_nags_low", 2, "no focus when the user nags 'continue' this many times (low)", "messages"),
    Key("drift", "continue_nags_high", 4, "... this many times: high (the seed's f89d129a: 5)", "messages"),
]


class ConfigError(ForensicsError):
    """The harness config is unreadable, or has an unknown key or a value of the wrong type."""


class Config:
    """Loaded values by ``section.name``; attribute access by section (``cfg.tool_result.summarize_bytes``)."""

    def __init__(self, values: dict[str, Any], path: Path | None = None) -> None:
        self.values, self.path = values, path

    def __getitem__(self, path: str) -> Any:
        return self.values[path]

    def __getattr__(self, section: str) -> Any:
        if section.startswith("_") or section in ("values", "path"):
            raise AttributeError(section)
        keys = {k.name: self.values[k.path] for k in SCHEMA if k.section == section}
        if not keys:
            raise AttributeError(f"no config section [{section}]")
        return _Section(section, keys)

    def with_values(self, **changes: Any) -> Config:
        """A copy with some ``section.name`` values replaced (keys use ``__`` for the dot)."""
        vals = dict(self.values)
        for k, v in changes.items():
            vals[k.replace("__", ".")] = v
        return Config(vals, self.path)


class _Section:
    def __init__(self, name: str, keys: dict[str, Any]) -> None:
        self._name, self._keys = name, keys

    def __getattr__(self, key: str) -> Any:
        try:
            return self._keys[key]
        except KeyError:
            raise AttributeError(f"no config key {self._name}.{key}") from None


def defaults() -> Config:
    return Config({k.path: k.default for k in SCHEMA})


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load ``path``, else ``./harness.toml`` when present, else the built-in defaults."""
    if path is None:
        if not Path(DEFAULT_CONFIG).exists():
            return defaults()
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
    values = {k.path: k.default for k in SCHEMA}
    known = {k.path: k for k in SCHEMA}
    sections = {k.section for k in SCHEMA}
    for section, body in data.items():
        if section not in sections or not isinstance(body, dict):
            raise ConfigError(f"{p}:{_line(text, None, section)}: unknown section [{section}] "
                              f"(known: {', '.join(sorted(sections))})")
        for name, value in body.items():
            key = known.get(f"{section}.{name}")
            line = _line(text, section, name)
            if key is None:
                names = ", ".join(k.name for k in SCHEMA if k.section == section)
                raise ConfigError(f"{p}:{line}: unknown key {section}.{name} (known in [{section}]: {names})")
            values[key.path] = _check(p, line, key, value)
    return Config(values, p)


def _check(p: Path, line: int, key: Key, value: Any) -> Any:
    want = key.default
    ok = (isinstance(value, bool) if isinstance(want, bool) else
          isinstance(value, int) and not isinstance(value, bool) if isinstance(want, int) else
          isinstance(value, (int, float)) and not isinstance(value, bool) if isinstance(want, float) else
          isinstance(value, str) if isinstance(want, str) else
          isinstance(value, list) and all(isinstance(v, str) for v in value) if isinstance(want, list) else
          isinstance(value, dict) if isinstance(want, dict) else True)
    if not ok:
        expected = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
                    list: "a list of strings", dict: "a table"}[type(want)]
        raise ConfigError(f"{p}:{line}: {key.path} must be {expected}, got {value!r}")
    if key.max_chars is not None and (long := [v for v in value if len(v.strip()) > key.max_chars]):
        raise ConfigError(f"{p}:{line}: {key.path} items must be at most {key.max_chars} characters, got {long[0]!r}")
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


def default_toml() -> str:
    """The commented default file `forensics config init` writes: every key, its default, unit and constant."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("Harness config read by forensics (and by your assistant's harness)."))
    doc.add(tomlkit.comment("Every key is optional; a missing key takes the default shown. `forensics tune --write`"))
    doc.add(tomlkit.comment("rewrites values in place and keeps your comments."))
    for section in dict.fromkeys(k.section for k in SCHEMA):
        table = tomlkit.table()
        table.add(tomlkit.comment(SECTION_DOCS.get(section, "")))
        for k in (k for k in SCHEMA if k.section == section):
            note = k.doc + (f" [{k.unit}]" if k.unit else "") + (f" (harness constant {k.constant})" if k.constant else "")
            table.add(tomlkit.comment(note))
            table.add(k.name, tomlkit.inline_table() if isinstance(k.default, dict) else k.default)
        doc.add(tomlkit.nl())
        doc.add(section, table)
    return tomlkit.dumps(doc)


def render_docs() -> str:
    """docs/harness-config.md, generated from SCHEMA (`python -m forensics.config > docs/harness-config.md`)."""
    out = ["# Harness config (`harness.toml`)", "",
           "Generated by `python -m forensics.config` from the schema; do not edit by hand. Every key is optional.",
           "`forensics config init` writes this as a commented file; `forensics tune --write` rewrites values in",
           "place; `--emit json|rust|ts` prints the keys that have a harness constant.", ""]
    for section in dict.fromkeys(k.section for k in SCHEMA):
        out += [f"## `[{section}]`", "", SECTION_DOCS.get(section, ""), "",
                "| key | default | unit | harness constant | meaning |", "|---|---|---|---|---|"]
        for k in (k for k in SCHEMA if k.section == section):
            default = str(k.default).replace("|", "/") if not isinstance(k.default, bool) else str(k.default).lower()
            out.append(f"| `{k.name}` | `{default}` | {k.unit} | {f'`{k.constant}`' if k.constant else ''} | {k.doc} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(render_docs(), end="")
