"""The config sections and keys of the sentinel analyzer (``forensics.analyzers.sentinel``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

SENTINEL_TOKENS = ["toolsapproved", "untrusteddata", "idsfresh", "batchbulk", "saveauto"]

SECTIONS: dict[str, str] = {"sentinel": "Sentinel (canary) compliance (docs/definitions.md#sentinel-compliance)."}
KEYS: tuple[Key, ...] = (
    Key("sentinel", "enabled", True, "judge final replies for the sentinel line", "", "SENTINEL_ENABLED"),
    Key("sentinel", "marker", "[[SS-CHECK", "the sentinel line's opening marker", ""),
    Key("sentinel", "tokens", SENTINEL_TOKENS, "the tokens expected after the marker, in order", "tokens"),
    Key(
        "sentinel",
        "compliance_window",
        3,
        "judged replies without a Healthy one before a model is muted",
        "replies",
        "SENTINEL_COMPLIANCE_WINDOW",
    ),
    Key(
        "sentinel",
        "correction_words",
        ["不对", "错了", "不是这个", "你忘了", "wrong", "that's not", "you forgot", "I said"],
        "a user message containing one of these is a correction (a visible failure)",
        "phrases",
    ),
    Key("sentinel", "closing", "]]", "what ends the sentinel line", ""),
    Key(
        "sentinel",
        "tool_error_patterns",
        [
            r"\[exit code: [1-9][0-9]*\]",
            r"^error(\[E[0-9]+\])?:",
            "panicked at",
            r"traceback \(most recent call last\)",
            "test result: failed",
            "no such file or directory",
            "permission denied",
            "command not found",
        ],
        "a tool result matching one of these (RE2, case-insensitive, ^ at line starts) is a tool error even "
        "without the error flag",
        "regexes",
    ),
)
