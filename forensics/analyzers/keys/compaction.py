"""The config sections and keys of the compaction analyzer (``forensics.analyzers.compaction``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

# The compaction audit's rules (forensics.analyzers.compaction.rules says how each is used). RE2 syntax (no look-around),
# matched case-insensitively: the same pattern runs in DuckDB and in Python.
COMPACTION_CONSTRAINTS = [
    r"\b(don'?t|do not|never|avoid|must not|mustn'?t|should not|shouldn'?t|no longer)\b",
    r"\b(must|always|make sure|be sure to|remember to|only use|use only|stick to|instead of)\b",
    r"[,;]\s*not\s|\b(every|each) time\b|\bfor (every|each)\b",  # X, not Y; every time; use X for every Y
    "不要|不准|不许|禁止|不能|切勿|不得|别|必须|务必|一定要|只能|只用|请用|改用|统一用|一律|记得",
]

# where one instruction ends and the next begins inside a sentence: one of these right after a conjunction
# ("…before committing and never push", "…一律用 alembic，并且必须…") opens a clause of its own
COMPACTION_OPENERS = [
    r"never|always|don'?t|do not|must|make sure|be sure to|remember to|avoid|only use|use only|stick to|please use",
    "不要|不准|不许|禁止|不能|切勿|不得|别|必须|务必|一定要|只能|只用|请用|统一用|一律|记得",
]

COMPACTION_DECISIONS = [
    r"\b(we|i)('ve| have)? decided\b|\bdecided to\b|\bdecision:|\blet'?s go with\b|\bwe'?ll go with\b",
    r"\bwe agreed\b|\bagreed to\b|\bsettled on\b|\bopted for\b|\bthe plan is\b",
    "决定|就用|采用|选定|定为|确定用|结论[:：]|就这么定",
]

COMPACTION_TASKS = [
    r"\b(todo|to-do)\b|\bnext step\b|\bstill (need|have) to\b|\bfollow[- ]up\b|\bremaining:",
    "待办|还需要|还要|接下来|下一步|之后再|回头再|稍后|别忘了",
]

COMPACTION_ERRORS = [
    r"^\s*(error|fatal|panic|exception|traceback)\b",
    r"\b[a-z]*(error|exception)\b\s*[:\[(]",
    r"\b(failed|no such file|not found|permission denied|command not found|timed out)\b",
    "错误|失败|异常|不存在|找不到|超时",
]

COMPACTION_NOT_TRIGGERS = [
    "别人",
    "别的",
    "区别",
    "特别",
    "类别",
    "分别",
    "级别",
    "识别",
    "告别",
    "差别",
    "个别",
    "别名",
    "性别",
    "要不要",
    "能不能",
    "不要紧",
    "must-have",
    "never mind",
]

COMPACTION_SUMMARIES = [
    r"^\s*this (session|conversation) is being continued from a previous conversation",
    r"^\s*another language model started to solve this problem",  # Codex's summary prefix
    r"^\s*(<summary>|summary:|conversation summary|previous conversation summary|\[summary)",
    r"^\s*<state_snapshot>",  # Gemini CLI's chat compression
    r"^\s*(\[摘要|摘要[:：]|对话摘要|以下是之前对话的摘要|上下文摘要)",
]

SECTIONS: dict[str, str] = {"compaction": "Context compaction: when the harness summarises old messages."}
KEYS: tuple[Key, ...] = (
    Key(
        "compaction",
        "max_tokens",
        100_000,
        "compact when the estimated context exceeds this",
        "tokens (chars/4)",
        "COMPACTION_MAX_TOKENS",
    ),
    Key(
        "compaction",
        "keep_recent",
        10,
        "messages kept verbatim after a compaction",
        "messages",
        "COMPACTION_KEEP_RECENT",
    ),
    Key(
        "compaction",
        "summary_tokens",
        500,
        "the summary's size when the audit replays the rule (the seed harness's target length)",
        "tokens (chars/4)",
        "COMPACTION_SUMMARY_TOKENS",
    ),
    Key(
        "compaction",
        "constraint_patterns",
        COMPACTION_CONSTRAINTS,
        "audit: a user sentence matching one of these "
        "is an explicit constraint or instruction (don't touch X, use Y, 必须, 不要)",
        "regexes",
    ),
    Key(
        "compaction",
        "clause_openers",
        COMPACTION_OPENERS,
        "audit: a user sentence holding several instructions "
        "is cut before each of these that follows a conjunction (and, but, a comma, 并且, 而且, 同时) when the part "
        "before it holds an instruction of its own: each clause is its own constraint",
        "regexes",
    ),
    Key(
        "compaction",
        "decision_patterns",
        COMPACTION_DECISIONS,
        "audit: a user or assistant sentence matching one of these states a decision",
        "regexes",
    ),
    Key(
        "compaction",
        "task_patterns",
        COMPACTION_TASKS,
        "audit: a user or assistant sentence matching one of these "
        "names an open task (todo-list items that are not completed are open tasks too)",
        "regexes",
    ),
    Key(
        "compaction",
        "error_patterns",
        COMPACTION_ERRORS,
        "audit: the first line of an error result, or of a "
        "command's output, matching one of these is an error string seen",
        "regexes",
    ),
    Key(
        "compaction",
        "not_triggers",
        COMPACTION_NOT_TRIGGERS,
        "audit: words that contain a trigger but are none "
        "(别人, 区别: not 别; 要不要: not 不要), taken out before the patterns are matched",
        "words",
    ),
    Key(
        "compaction",
        "summary_patterns",
        COMPACTION_SUMMARIES,
        "audit: a message at a compaction whose start "
        "matches one of these is the compaction's summary (Claude Code writes it as a user message)",
        "regexes",
    ),
    Key(
        "compaction",
        "carry_share",
        0.5,
        "audit: the summary (or a kept message) carries a stated fact when it "
        "holds this share of the fact's terms, or one of its names (a path, an identifier, a long word)",
        "share",
    ),
    Key(
        "compaction",
        "repeat_share",
        0.5,
        "audit: a later statement repeats a fact when they share this share of "
        "the shorter one's terms (at least two, or one name)",
        "share",
    ),
)
