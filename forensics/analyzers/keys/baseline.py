"""The config sections and keys of the baseline analyzer (``forensics.analyzers.baseline``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key
from forensics.text import cues
from forensics.warehouse.migrations import TRIMMED_TEXT_MAX

# What a person writes when the assistant's work failed them (their turn's first PUSHBACK_HEAD characters, after
# the assistant answered at least once): "still cannot drag", "same error", "it does not work", "you broke
# something", a traceback pasted back, 还是不对. Python regexes, matched case-insensitively.
PUSHBACK = [
    r"\bstill (doesn'?t|does not|isn'?t|is not|not|no|cannot|can'?t|won'?t|getting|get|fails?|failing|broken|the "
    r"same|seeing|see)\b",
    r"\bsame (error|issue|problem|exception|result)\b",
    r"\b(doesn'?t|does not|didn'?t|did not|isn'?t|is not|not) work(ing|s|ed)?\b",
    r"\byou (broke|forgot|missed|ignored)\b",
    r"\b(it'?s|is|are|was) broken\b",
    r"\b(is|are|was|that'?s|it'?s|this is) (wrong|incorrect)\b",
    r"^\W*nope\b",
    r"\bno go\b",
    r"\bI (said|told you|already told you)\b",
    r"\bwhy did you\b",
    r"traceback \(most recent call last\)",
    r"\buncaught \w*error\b",
    "不对",
    "错了",
    "还是不行",
    "还是报错",
    "没有用",
    "不起作用",
    "你忘了",
    "又错",
]

SECTIONS: dict[str, str] = {"baseline": "Baseline metric definitions (docs/definitions.md#baseline-metrics)."}
KEYS: tuple[Key, ...] = (
    Key(
        "baseline",
        "continue_words",
        ["继续", "continue", "go on", "继续吧"],
        "a user message whose stripped text is exactly one of these is a continue-nag",
        "words",
        max_chars=TRIMMED_TEXT_MAX,
    ),  # longer user texts are not kept trimmed in the warehouse
    Key("baseline", "short_user_chars", 12, "user messages of at most this many characters are short", "characters"),
    Key(
        "baseline",
        "pushback_patterns",
        PUSHBACK,
        "a person's turn after an answer whose first 400 characters match "
        "one of these says the work failed them (user_pushback): still cannot, same error, does not work, you broke, "
        "a traceback pasted back, 还是不对",
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "baseline",
        "parallel_calls",
        3,
        "assistant messages with at least this many tool calls are parallel turns",
        "calls",
    ),
)
