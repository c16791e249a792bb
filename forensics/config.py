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
from forensics.text.personal import MODES as MASK_MODES
from forensics.warehouse.migrations import TRIMMED_TEXT_MAX

DEFAULT_CONFIG = "harness.toml"
# [prices]: the user's prices per model, over the shipped table (forensics.analyzers.prices, docs/usage.md)
PRICES = "prices"
PRICE_KINDS = ("input", "output", "cache_read", "cache_write")
PRICES_DOC = ["[prices]: USD per million tokens per model, over the shipped dated table (docs/usage.md); input and",
              "output are required, a model without a price shows its tokens and no cost. For example:",
              "[prices]",
              '"my-model" = {input = 1.0, output = 4.0, cache_read = 0.1, cache_write = 1.25}']
SENTINEL_TOKENS = ["toolsapproved", "untrusteddata", "idsfresh", "batchbulk", "saveauto"]
# The compaction audit's rules (forensics.analyzers.compaction.rules says how each is used). RE2 syntax (no look-around),
# matched case-insensitively: the same pattern runs in DuckDB and in Python.
COMPACTION_CONSTRAINTS = [
    r"\b(don'?t|do not|never|avoid|must not|mustn'?t|should not|shouldn'?t|no longer)\b",
    r"\b(must|always|make sure|be sure to|remember to|only use|use only|stick to|instead of)\b",
    r"[,;]\s*not\s|\b(every|each) time\b|\bfor (every|each)\b",  # X, not Y; every time; use X for every Y
    "不要|不准|不许|禁止|不能|切勿|不得|别|必须|务必|一定要|只能|只用|请用|改用|统一用|一律|记得"]
# where one instruction ends and the next begins inside a sentence: one of these right after a conjunction
# ("…before committing and never push", "…一律用 alembic，并且必须…") opens a clause of its own
COMPACTION_OPENERS = [
    r"never|always|don'?t|do not|must|make sure|be sure to|remember to|avoid|only use|use only|stick to|please use",
    "不要|不准|不许|禁止|不能|切勿|不得|别|必须|务必|一定要|只能|只用|请用|统一用|一律|记得"]
COMPACTION_DECISIONS = [
    r"\b(we|i)('ve| have)? decided\b|\bdecided to\b|\bdecision:|\blet'?s go with\b|\bwe'?ll go with\b",
    r"\bwe agreed\b|\bagreed to\b|\bsettled on\b|\bopted for\b|\bthe plan is\b",
    "决定|就用|采用|选定|定为|确定用|结论[:：]|就这么定"]
COMPACTION_TASKS = [
    r"\b(todo|to-do)\b|\bnext step\b|\bstill (need|have) to\b|\bfollow[- ]up\b|\bremaining:",
    "待办|还需要|还要|接下来|下一步|之后再|回头再|稍后|别忘了"]
COMPACTION_ERRORS = [
    r"^\s*(error|fatal|panic|exception|traceback)\b", r"\b[a-z]*(error|exception)\b\s*[:\[(]",
    r"\b(failed|no such file|not found|permission denied|command not found|timed out)\b",
    "错误|失败|异常|不存在|找不到|超时"]
# What a person writes when the assistant's work failed them (their turn's first PUSHBACK_HEAD characters, after
# the assistant answered at least once): "still cannot drag", "same error", "it does not work", "you broke
# something", a traceback pasted back, 还是不对. Python regexes, matched case-insensitively.
PUSHBACK = [
    r"\bstill (doesn'?t|does not|isn'?t|is not|not|no|cannot|can'?t|won'?t|getting|get|fails?|failing|broken|the "
    r"same|seeing|see)\b",
    r"\bsame (error|issue|problem|exception|result)\b",
    r"\b(doesn'?t|does not|didn'?t|did not|isn'?t|is not|not) work(ing|s|ed)?\b",
    r"\byou (broke|forgot|missed|ignored)\b", r"\b(it'?s|is|are|was) broken\b",
    r"\b(is|are|was|that'?s|it'?s|this is) (wrong|incorrect)\b",
    r"^\W*nope\b", r"\bno go\b", r"\bI (said|told you|already told you)\b", r"\bwhy did you\b",
    r"traceback \(most recent call last\)", r"\buncaught \w*error\b",
    "不对", "错了", "还是不行", "还是报错", "没有用", "不起作用", "你忘了", "又错"]
COMPACTION_NOT_TRIGGERS = ["别人", "别的", "区别", "特别", "类别", "分别", "级别", "识别", "告别", "差别", "个别",
                           "别名", "性别", "要不要", "能不能", "不要紧", "must-have", "never mind"]
COMPACTION_SUMMARIES = [
    r"^\s*this (session|conversation) is being continued from a previous conversation",
    r"^\s*another language model started to solve this problem",  # Codex's summary prefix
    r"^\s*(<summary>|summary:|conversation summary|previous conversation summary|\[summary)",
    r"^\s*(\[摘要|摘要[:：]|对话摘要|以下是之前对话的摘要|上下文摘要)"]


# The seed harness (SPEC §10): the assistant whose constants this file holds writes the SQLite ai_conversations
# database (seed 001), the JSONL sessions (seed 004) and the decision-memory database (seed 003). Its knobs are
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
    **{u: (0, 1) for u in ("share", "score in [0, 1]", "probability", "Jaccard")}, "cosine": (-1, 1),
    **{u: (0, None) for u in ("messages", "calls", "tokens", "tokens (chars/4)", "targets", "characters",
                               "UTF-8 bytes", "lines", "replies", "decisions", "ratio", "per day")}}

SECTION_DOCS = {
    "intent": "Intent recognition (seed 001, P0).",
    "baseline": "Baseline metric definitions (docs/definitions.md#baseline-metrics).",
    "tool_result": "Tool-result compression (seed 001, improvement 4).",
    "keyword": "Keyword summaries and the tokenizer (seed 001, improvement 3 and P2).",
    "topic": "Topic-switch detection (seed 001, improvement 5).",
    "sentinel": "Sentinel (canary) compliance (seed 000, §三).",
    "compaction": "Context compaction (seed 004): when the harness summarises old messages.",
    "drift": "Drift phenomena thresholds (docs/definitions.md#drift-phenomena): severity low at the first value, high at the second.",
    "skills": "Skill routing (seed 000, §六; docs/metrics.md#skills): the harness's trigger table and how the model loads skills.",
    "memory": "Decision memory (seed 003; docs/memory.md): the harness's retrieval and the cues the memory analyzer reads.",
    "redact": "What is masked in what forensics shows (the warehouse keeps the raw text).",
}

SCHEMA: list[Key] = [
    Key("intent", "conf_threshold", 0.7, "minimum intent confidence before tools are narrowed", "probability",
        "INTENT_CONF_THRESHOLD"),
    Key("baseline", "continue_words", ["继续", "continue", "go on", "继续吧"],
        "a user message whose stripped text is exactly one of these is a continue-nag", "words",
        max_chars=TRIMMED_TEXT_MAX),  # longer user texts are not kept trimmed in the warehouse
    Key("baseline", "short_user_chars", 12, "user messages of at most this many characters are short", "characters"),
    Key("baseline", "pushback_patterns", PUSHBACK, "a person's turn after an answer whose first 400 characters match "
        "one of these says the work failed them (user_pushback): still cannot, same error, does not work, you broke, "
        "a traceback pasted back, 还是不对", "regexes", validate=cues.invalid_regex),
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
    Key("keyword", "tokenizer", "jieba+bigram", "bigram, jieba or jieba+bigram", "",
        choices=("bigram", "jieba", "jieba+bigram")),
    Key("topic", "marker_enabled", True, "mark topic switches for the harness", "", "TOPIC_MARKER_ENABLED"),
    Key("topic", "min_confidence", 0.7, "both messages need a topic this confident for a switch marker",
        "probability", "TOPIC_MIN_CONFIDENCE"),
    Key("topic", "roles", ["user"], "roles whose messages are judged and may start a topic", "roles", choices=ROLES),
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
    Key("topic", "proposal_cues", cues.PROPOSAL_CUES, "a reply closing with one of these proposes to do something "
        "(\"I can expand the schema\", \"需要我帮你预订吗\"): a request in the sentence that accepts it (\"yes, please "
        "do\") takes the proposal up", "regexes", validate=cues.invalid_regex),
    Key("topic", "social_words", cues.SOCIAL_WORDS, "a judged message whose content words are all among these "
        "(thanks, bye, 好的) closes or acknowledges: it carries no topic and never starts one", "words"),
    Key("topic", "register_words", cues.REGISTER_WORDS, "how people talk rather than what about (sorry, "
        "frustrated, urgent, kindly): left out of the corpus topic model's words, so it learns subjects, not "
        "registers", "words"),
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
    Key("compaction", "summary_tokens", 500, "the summary's size when the audit replays the rule (the seed's target "
        "length)", "tokens (chars/4)", "COMPACTION_SUMMARY_TOKENS"),
    Key("compaction", "constraint_patterns", COMPACTION_CONSTRAINTS, "audit: a user sentence matching one of these "
        "is an explicit constraint or instruction (don't touch X, use Y, 必须, 不要)", "regexes"),
    Key("compaction", "clause_openers", COMPACTION_OPENERS, "audit: a user sentence holding several instructions "
        "is cut before each of these that follows a conjunction (and, but, a comma, 并且, 而且, 同时) when the part "
        "before it holds an instruction of its own: each clause is its own constraint", "regexes"),
    Key("compaction", "decision_patterns", COMPACTION_DECISIONS, "audit: a user or assistant sentence matching one "
        "of these states a decision", "regexes"),
    Key("compaction", "task_patterns", COMPACTION_TASKS, "audit: a user or assistant sentence matching one of these "
        "names an open task (todo-list items that are not completed are open tasks too)", "regexes"),
    Key("compaction", "error_patterns", COMPACTION_ERRORS, "audit: the first line of an error result, or of a "
        "command's output, matching one of these is an error string seen", "regexes"),
    Key("compaction", "not_triggers", COMPACTION_NOT_TRIGGERS, "audit: words that contain a trigger but are none "
        "(别人, 区别: not 别; 要不要: not 不要), taken out before the patterns are matched", "words"),
    Key("compaction", "summary_patterns", COMPACTION_SUMMARIES, "audit: a message at a compaction whose start "
        "matches one of these is the compaction's summary (Claude Code writes it as a user message)", "regexes"),
    Key("compaction", "carry_share", 0.5, "audit: the summary (or a kept message) carries a stated fact when it "
        "holds this share of the fact's terms, or one of its names (a path, an identifier, a long word)", "share"),
    Key("compaction", "repeat_share", 0.5, "audit: a later statement repeats a fact when they share this share of "
        "the shorter one's terms (at least two, or one name)", "share"),
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
    Key("skills", "triggers", "", "the trigger table the harness routes skills with (seed 000's skill_triggers.json: "
        "{\"schema\": 1, \"skills\": {\"<skill id>\": [\"phrase\", ...]}}); relative to this file; empty: none",
        "path"),
    Key("skills", "tools", ["Skill", "meta.loadSkill", "meta_loadSkill"], "tool calls that load a skill (Claude "
        "Code's Skill tool, the seed harness's meta.loadSkill)", "tool names"),
    Key("skills", "argument_keys", ["skill", "command", "name"], "the first of these arguments that holds text "
        "names the skill a load call loads", "argument names"),
    Key("memory", "top_k", 5, "decisions injected into the prompt per question", "decisions", "MEMORY_TOP_K"),
    Key("memory", "similarity_threshold", 0.3, "decisions less similar to the question than this are not injected",
        "cosine", "MEMORY_SIMILARITY_THRESHOLD"),
    Key("memory", "time_decay", 0.05, "score = similarity / (1 + time_decay * age_days) + importance_weight * "
        "importance_score", "per day", "MEMORY_TIME_DECAY"),
    Key("memory", "importance_weight", 0.1, "weight of a decision's importance_score in its score", "",
        "MEMORY_IMPORTANCE_WEIGHT"),
    Key("memory", "negation_cues", ["不再考虑", "已否决", "否决", "放弃", "不用", "不选", "而不是", "而非", "不是",
                                    "不考虑", "排除", "不采用", "不使用", "弃用", "淘汰", "别用", "没选", "未选",
                                    "不推荐", "不建议", "不需要", "无需", "不必", "ruled out", "rejected",
                                    "instead of", "rather than", "not X", "over X", "decided against", "no longer",
                                    "dropped", "won't use", "abandoned", "avoid", "no need", "don't need"],
        "a sentence with one of these rejects the options it names, so naming a rejected option there is no "
        "relitigation; X stands for the option (not X: 'not MongoDB')", "phrases"),
    Key("memory", "weighing_cues", ["对比", "比较", "还是", "或者", "优缺点", "权衡", "相比", "vs", "versus", "compare",
                                    "comparison", "pros and cons", "trade-off", "or"],
        "a relitigating message with one of these weighs the options again: severity high", "phrases"),
    Key("memory", "decision_cues", ["决定", "X 定了", "定了", "就用", "确定用", "确定为", "确定采用", "确定选用", "选定",
                                    "选用", "采用", "定为", "敲定", "拍板", "we decided", "we'll go with",
                                    "we will go with", "let's use", "let's go with", "decided to"],
        "a sentence with one of these states a decision when it names the chosen option after the cue (or, for a cue "
        "written X cue, before it: 'Loki 定了'); Chinese cues must fall on jieba word boundaries (稳定了 is no 定了) "
        "and a cue right after 不/没/未/别 is negated (不采用 MongoDB chooses nothing)", "phrases"),
    Key("memory", "undecided_cues", ["还没", "没决定", "没有决定", "未决定", "尚未", "没定", "待定", "不确定", "再决定",
                                     "再说", "如果", "假如", "要是", "是否", "考虑中", "决定不了", "难以决定",
                                     "决定之前", "这个决定", "那个决定", "的决定", "该决定", "你决定", "你来定", "由你",
                                     "not decided", "haven't decided", "have not decided", "undecided", "not yet",
                                     "yet to", "if we", "whether", "before we decide", "still deciding",
                                     "to be decided", "tbd", "up to you", "your call", "或者", "或是", "可以用",
                                     "可以采用", "可以选", "we could", "could use"],
        "a decision-cue sentence with one of these is pending or negated (还没决定, not decided yet), speaks of a "
        "decision rather than makes one (这个决定, 由你决定) or only lists or proposes options (可以采用 A 或者 B): "
        "not a decision", "phrases"),
    Key("memory", "supersede_cues", ["改为", "改用", "改成", "替代", "取代", "代替", "替换", "变更", "推翻", "撤销",
                                     "作废", "不再使用", "之前的决定", "原决定", "supersede", "supersedes", "replaces",
                                     "replace", "switch to", "switching to", "changed to", "instead of the",
                                     "overrides", "reverses", "no longer"],
        "a later decision whose title, content, reason or source message has one of these supersedes an earlier "
        "one: no decision_conflict", "phrases"),
    Key("memory", "question_cues", ["?", "？", "吗", "什么", "哪", "怎么", "如何", "是否", "呢", "为什么", "请问",
                                    "介绍", "说说", "讲讲", "告诉我", "推荐", "建议", "what", "which", "how",
                                    "should we", "do we", "did we", "are we", "have we", "is it", "tell me",
                                    "remind me", "recommend", "suggest"],
        "a user message with one of these asks or requests (decision_not_recalled); a decision-cue sentence with "
        "one of these is a question or a suggestion, not a decision", "phrases"),
    Key("memory", "decision_roles", ["user", "assistant"], "roles whose messages can state an unrecorded decision: "
        "the user's statement, or the assistant's answer to the user's question that the user's next message "
        "accepts or builds on (an assistant's 'let's use' nobody answered, or the user turned down, is a proposal)",
        "roles", choices=("user", "assistant")),
    Key("memory", "declined_cues", ["no", "nope", "not", "don't", "do not", "rather not", "instead", "不", "不要",
                                    "不行", "不用", "算了", "别", "换一个"],
        "a user reply whose first sentence has one of these turns the assistant's proposed decision down (Chinese "
        "cues on jieba word boundaries: 不错 is no 不)", "phrases"),
    Key("memory", "question_match", 0.5, "a user question is about a decision when it holds this share of the "
        "decision title's terms (and at least two of them)", "share"),
    Key("memory", "conflict_title_match", 0.8, "two decisions of one project and type are about the same matter "
        "when their titles' terms overlap this much (Jaccard): 用户服务 and 订单服务 数据库选型 are two matters",
        "Jaccard"),
    Key("redact", "personal", "pages", "mask e-mail addresses, phone numbers, card numbers and IBANs: \"pages\" in "
        "report.html and the explorer's pages, \"all\" in every output too (report.md, metrics.json, charts, query "
        "results, show), \"off\" nowhere; secrets are masked everywhere whatever this says", "",
        validate=lambda v: None if v in MASK_MODES else f"choose one of {', '.join(MASK_MODES)}"),
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

    @property
    def prices(self) -> dict[str, dict[str, float]]:
        """``[prices]`` as given: model -> USD per million tokens by kind (``PRICE_KINDS``); {} when absent."""
        return dict(self.values.get(PRICES, {}))

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
    values: dict[str, Any] = {k.path: k.default for k in SCHEMA}
    known = {k.path: k for k in SCHEMA}
    sections = {k.section for k in SCHEMA}
    for section, body in data.items():
        if section == PRICES and isinstance(body, dict):
            values[PRICES] = _prices(p, text, body)
            continue
        if section not in sections or not isinstance(body, dict):
            raise ConfigError(f"{p}:{_line(text, None, section)}: unknown section [{section}] "
                              f"(known: {', '.join(sorted(sections | {PRICES}))})")
        for name, value in body.items():
            key = known.get(f"{section}.{name}")
            line = _line(text, section, name)
            if key is None:
                names = ", ".join(k.name for k in SCHEMA if k.section == section)
                raise ConfigError(f"{p}:{line}: unknown key {section}.{name} (known in [{section}]: {names})")
            values[key.path] = _check(p, line, key, value)
    return Config(values, p)


def _prices(p: Path, text: str, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``[prices]``: model name -> USD per million tokens of each kind (``input`` and ``output`` required)."""
    out = {}
    for model, price in body.items():
        line = _line(text, PRICES, model)
        if not isinstance(price, dict):
            raise ConfigError(f"{p}:{line}: prices.{model} must be a table like {{input = 3.0, output = 15.0}}, "
                              f"got {price!r}")
        if unknown := sorted(set(price) - set(PRICE_KINDS)):
            raise ConfigError(f"{p}:{line}: prices.{model}: unknown key {unknown[0]} (known: {', '.join(PRICE_KINDS)})")
        if missing := [k for k in ("input", "output") if k not in price]:
            raise ConfigError(f"{p}:{line}: prices.{model} needs {' and '.join(missing)} (USD per million tokens)")
        for kind, v in price.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ConfigError(f"{p}:{line}: prices.{model}.{kind} must be a number >= 0 (USD per million "
                                  f"tokens), got {v!r}")
        out[str(model)] = {k: float(v) for k, v in price.items()}
    return out


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
    if key.choices and (bad := [v for v in (value if isinstance(value, list) else [value]) if v not in key.choices]):
        raise ConfigError(f"{p}:{line}: {key.path}: {bad[0]!r} is not one of {', '.join(key.choices)}")
    low, high = RANGES.get(key.unit, (None, None))
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (
            (low is not None and value < low) or (high is not None and value > high)):
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
    doc.add(tomlkit.nl())
    for line in PRICES_DOC:
        doc.add(tomlkit.comment(line))
    return tomlkit.dumps(doc)


def render_docs() -> str:
    """docs/harness-config.md, generated from SCHEMA (`python -m forensics.config > docs/harness-config.md`)."""
    out = ["# Harness config (`harness.toml`)", "",
           "Generated by `python -m forensics.config` from the schema; do not edit by hand. Every key is optional.",
           "`forensics config init` writes this as a commented file; `forensics tune --write` rewrites values in",
           "place; `--emit json|rust|ts` prints the keys that have a harness constant.", "",
           f"`forensics tune` fits a key only on the logs of a harness that has it: the seed harness's keys on its own "
           f"logs (formats {', '.join(HARNESS_FORMATS)}), this tool's detector thresholds "
           f"({', '.join(DETECTOR_KEYS)}) on any; with none of those logs a key is left alone, with one line saying "
           "why. Claude Code, Codex and the other agents have none of the seed harness's knobs. The [drift] "
           "thresholds hold one value for every agent, so they are fitted only on a warehouse of one kind of agent "
           "(its log format, a sub-agent apart) with at least 20 conversations carrying the figure; otherwise "
           "these defaults stand and the drift analyzer holds each kind against its own norm. (The seed harness, "
           "its design notes 000-004 cited below and the other words: [definitions.md](definitions.md).)", ""]
    for section in dict.fromkeys(k.section for k in SCHEMA):
        out += [f"## `[{section}]`", "", SECTION_DOCS.get(section, ""), "",
                "| key | default | unit | harness constant | meaning |", "|---|---|---|---|---|"]
        for k in (k for k in SCHEMA if k.section == section):
            default = str(k.default).replace("|", "/") if not isinstance(k.default, bool) else str(k.default).lower()
            out.append(f"| `{k.name}` | `{default}` | {k.unit} | {f'`{k.constant}`' if k.constant else ''} | {k.doc} |")
        out.append("")
    out += ["## `[prices]`", "", "What tokens cost, per model, for `forensics usage` and the report's first section: "
            + " ".join(PRICES_DOC[:2]).replace("[prices]: ", ""), "", "```toml", *PRICES_DOC[2:], "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render_docs(), end="")
