"""Distinctive terms: TF-IDF over documents (conversations, topic segments) with our tokenizer (SPEC §7).

A keyword summary says what a conversation talks about most; a distinctive term says what it talks about
that the others do not. scikit-learn's ``TfidfVectorizer`` does the weighting (smoothed idf, sublinear tf so
one repeated word does not drown the rest, l2 norm); the tokens are ours (``content_tokens``), passed as an
analyzer so its own lower-casing and regex never run.

The topic analyzer calls these with a segment's texts: ``keyword_summary(texts)`` for one segment,
``distinctive_terms([texts of segment 1, texts of segment 2, ...])`` across segments.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from forensics.text.keywords import content_tokens

Tokens = Callable[[str], list[str]]


def distinctive_terms(documents: Sequence[Sequence[str]], top_k: int = 5, mode: str = "jieba+bigram",
                      tokens: Tokens | None = None) -> list[list[tuple[str, float]]]:
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
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not any(docs) or top_k <= 0:
        return [[] for _ in docs]
    vec = TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=True)
    matrix = vec.fit_transform(docs).tocsr()
    vocab = vec.get_feature_names_out()
    out: list[list[tuple[str, float]]] = []
    for i in range(matrix.shape[0]):
        row = matrix.getrow(i)
        # ties broken by the term itself, so the result does not depend on sparse storage order
        order = sorted(zip(-row.data, vocab[row.indices]))[:top_k]
        out.append([(str(term), float(-w)) for w, term in order])
    return out
