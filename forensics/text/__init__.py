"""Text: the tokenizer (Han 2-grams, jieba) and keyword summaries shared by every text analyzer."""

from forensics.text.keywords import content_tokens, keyword_counts, keyword_summary, stop_words, top_keywords
from forensics.text.tokenizer import MODES, iter_tokens, tokenize

__all__ = [
    "MODES",
    "content_tokens",
    "iter_tokens",
    "keyword_counts",
    "keyword_summary",
    "stop_words",
    "tokenize",
    "top_keywords",
]
