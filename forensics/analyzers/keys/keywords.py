"""The config sections and keys of the keywords analyzer (``forensics.analyzers.keywords``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

SECTIONS: dict[str, str] = {
    "keyword": "Keyword summaries and the tokenizer (docs/definitions.md#tokenizer-and-keywords)."
}
KEYS: tuple[Key, ...] = (
    Key(
        "keyword",
        "fallback_enabled",
        True,
        "use the keyword summary when compaction fails",
        "",
        "KEYWORD_FALLBACK_ENABLED",
    ),
    Key("keyword", "top_k", 10, "keywords kept per summary", "tokens", "KEYWORD_TOP_K"),
    Key(
        "keyword",
        "tokenizer",
        "jieba+bigram",
        "bigram, jieba or jieba+bigram",
        "",
        choices=("bigram", "jieba", "jieba+bigram"),
    ),
)
