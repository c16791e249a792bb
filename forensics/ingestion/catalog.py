"""The formats `forensics ingest` knows, by name, apart from their modules so that the CLI can offer them
without importing any importer (polars and friends cost a tenth of a second at every start).

Detection tries BUILTIN in this order (specific shapes first), then plug-ins (entry-point group
``forensics.formats``), then FALLBACK (the catch-alls). Each entry is ``(name, "module:attribute")`` naming
a ``Format`` (``forensics.formats.kit.declare``) in ``forensics.formats``, the layer below. A format of SQLite
files (Open WebUI, a harness's decision-memory database, Cursor) is a BUILTIN entry whose sniff looks at
``probe.tables``, so it comes before the generic ``sqlite``.
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points

ENTRY_POINT_GROUP = "forensics.formats"
_M = "forensics.formats."
BUILTIN = (
    ("dialogues", _M + "dialogues:FORMAT"),  # before the chat sniffs: labeled turns also carry a role
    ("mint", _M + "mint:FORMAT"),  # benchmark outputs with their outcomes (docs/outcomes.md#where-outcomes-come-from)
    ("agentbench", _M + "agentbench:FORMAT"),
    ("tau2", _M + "tau2:FORMAT"),
    ("terminal-bench", _M + "terminal_bench:FORMAT"),
    ("qwen-code", _M + "qwen_code:FORMAT"),  # before claude-code: the same record keys, Gemini content parts
    ("claude-code", _M + "claude_code:FORMAT"),
    ("codex", _M + "codex:FORMAT"),
    ("gemini-cli", _M + "gemini_cli:FORMAT"),
    ("aider", _M + "aider:FORMAT"),
    ("openhands", _M + "openhands:FORMAT"),
    ("swe-agent", _M + "swe_agent:SWE_AGENT"),
    ("mini-swe-agent", _M + "swe_agent:MINI_SWE_AGENT"),
    ("cline", _M + "cline:FORMAT"),
    ("chatgpt", _M + "chatgpt:FORMAT"),
    ("claude-ai", _M + "claude_ai:FORMAT"),
    ("open-webui", _M + "open_webui:FORMAT"),
    ("decision-memory", _M + "decision_memory:FORMAT"),
    ("inspect", _M + "inspect_ai:FORMAT"),
    ("claude-code-otel", _M + "claude_code_otel:FORMAT"),  # OTLP logs of Claude Code's events, before otel
    ("otel", _M + "otel:FORMAT"),
    ("continue", _M + "continue_dev:FORMAT"),
    ("cursor", _M + "cursor:FORMAT"),
    ("copilot-cli", _M + "copilot_cli:FORMAT"),
    ("opencode", _M + "opencode:FORMAT"),
    ("kimi-cli", _M + "kimi_cli:FORMAT"),
    ("atif", _M + "atif:FORMAT"),
    ("goose", _M + "goose:FORMAT"),
    ("crush", _M + "crush:FORMAT"),
    ("openclaw", _M + "pi_agent:OPENCLAW"),  # pi's session file written by OpenClaw: before pi
    ("pi", _M + "pi_agent:PI"),
    ("letta", _M + "letta:FORMAT"),
    ("nanobot", _M + "nanobot:FORMAT"),
    ("moatless", _M + "moatless:FORMAT"),
    ("hermes", _M + "hermes:FORMAT"),
)
FALLBACK = (
    ("openai", _M + "openai_chat:OPENAI_FORMAT"),
    ("sharegpt", _M + "openai_chat:SHAREGPT_FORMAT"),
    ("jsonl", _M + "jsonl:FORMAT"),
    ("sqlite", _M + "sqlite:FORMAT"),
)


@functools.cache
def plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The installed packages' format entry points, by name (scanning package metadata costs ~80 ms: once)."""
    known = {n for n, _ in BUILTIN + FALLBACK}  # a plug-in cannot replace a built-in format
    return tuple(
        sorted((ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in known), key=lambda ep: ep.name)
    )


def names() -> tuple[str, ...]:
    """``auto`` and every format name, plug-ins included (their names come from package metadata: nothing
    is imported)."""
    known = [n for n, _ in BUILTIN + FALLBACK]
    extra = sorted({ep.name for ep in plugin_entry_points()})
    return ("auto", *known[: len(BUILTIN)], *extra, *known[len(BUILTIN) :])


FORMATS = names()
