"""The config sections and keys of the compression analyzer (``forensics.analyzers.compression``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

SECTIONS: dict[str, str] = {
    "tool_result": "Tool-result compression (docs/definitions.md#tool-result-compression-replay)."
}
KEYS: tuple[Key, ...] = (
    Key(
        "tool_result",
        "compress_enabled",
        True,
        "summarize large tool results before they enter the context",
        "",
        "TOOL_RESULT_COMPRESS_ENABLED",
    ),
    Key(
        "tool_result",
        "summarize_bytes",
        2000,
        "summarize a result larger than this",
        "UTF-8 bytes",
        "TOOL_RESULT_SUMMARIZE_BYTES",
    ),
    Key(
        "tool_result",
        "summarize_share",
        0.40,
        "or larger than this share of the request context",
        "share",
        "TOOL_RESULT_SUMMARIZE_SHARE",
    ),
    Key(
        "tool_result",
        "head_tail_lines",
        5,
        "lines kept from the start and the end of a summarized result",
        "lines",
        "TOOL_RESULT_HEAD_TAIL_LINES",
    ),
)
