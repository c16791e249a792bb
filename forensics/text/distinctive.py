"""Distinctive terms: TF-IDF over documents (conversations, topic segments) with our tokenizer (docs/definitions.md#tokenizer-and-keywords).

A keyword summary says what a conversation talks about most; a distinctive term says what it talks about
that the others do not. ``forensics.text.tfidf`` does the weighting, equal to scikit-learn's ``TfidfVectorizer``
(smoothed idf, sublinear tf so one repeated word does not drown the rest, l2 norm); the tokens are ours
(``content_tokens``).

The topic analyzer calls these with a segment's texts: ``keyword_summary(texts)`` for one segment,
``distinctive_terms([texts of segment 1, texts of segment 2, ...])`` across segments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forensics.text.keywords import content_tokens
from forensics.text.tfidf import Tfidf

Tokens = Callable[[str], list[str]]


def distinctive_terms(
    documents: Sequence[Sequence[str]], top_k: int = 5, mode: str = "jieba+bigram", tokens: Tokens | None = None
) -> list[list[tuple[str, float]]]:
    """For each document (a list of texts), its ``top_k`` terms by TF-IDF weight, best first.

    ``tokens`` maps one text to its content tokens (pass a memoised one to tokenize each text once).
    Documents with no content token get an empty list; fewer than two documents have no "others", so
    every weight is the document's own normalised term frequency.
    """
    tok = tokens or (lambda t: content_tokens(t, mode))
    return distinctive_of([[w for text in doc for w in tok(text)] for doc in documents], top_k)


def distinctive_of(docs: Sequence[Sequence[str]], top_k: int = 5) -> list[list[tuple[str, float]]]:
    """``distinctive_terms`` of documents given as their content tokens. Only each document's tokens' counts and
    first-seen order matter, so a document's kept counts, expanded in that order, give the same weights."""
    if not any(docs) or top_k <= 0:
        return [[] for _ in docs]
    # ties broken by the term itself, so the result does not depend on storage order
    return [[(t, -w) for w, t in sorted((-w, t) for t, w in row)[:top_k]] for row in Tfidf(docs, sublinear=True).rows]
