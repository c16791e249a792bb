"""Text: the tokenizer (Han 2-grams, jieba) and keyword summaries shared by every text analyzer."""
from forensics.text.keywords import keyword_summary
from forensics.text.tokenize import MODES, tokenize

__all__ = ["MODES", "keyword_summary", "tokenize"]
