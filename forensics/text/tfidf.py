"""TF-IDF weights of token lists, equal to the bit to scikit-learn's ``TfidfVectorizer`` with our tokens.

Why not scikit-learn itself: importing ``sklearn.feature_extraction.text`` pulls in ``sklearn.base``, scipy.stats
and pandas: 2.2 s and 150 MB of every report's main process, for twenty lines of arithmetic (docs/scale.md,
"Issue 28 in stop 38"). scikit-learn stays the oracle: ``tests/test_text_tfidf.py`` holds these weights equal
(``==``, not approximately) to its vectorizer's on real conversations.

The weighting is the vectorizer's defaults: smoothed idf, ``ln((1 + n) / (1 + df)) + 1``; a count, or
``1 + ln(count)`` when ``sublinear``; rows scaled to unit l2 norm. To be equal to the bit, each float is made by
the same operations in the same order: the counts' logarithm and the idf by numpy over the same arrays, and a
row's sum of squares added one by one in the order scikit-learn stores it (the order its terms were first seen
in the corpus for fitted documents, the terms' sorted order for transformed ones).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Weights = list[tuple[str, float]]  # one document's terms with their weights, in scikit-learn's storage order


class Tfidf:
    """A fit over documents (lists of tokens): their weights (``rows``) and :meth:`transform` for new ones."""

    def __init__(self, docs: Sequence[Sequence[str]], sublinear: bool = False) -> None:
        first: dict[str, int] = {}  # term -> the order it was first seen in the corpus
        counts: list[dict[int, int]] = []
        for doc in docs:
            row: dict[int, int] = {}
            for term in doc:
                i = first.setdefault(term, len(first))
                row[i] = row.get(i, 0) + 1
            counts.append(row)
        seen = list(first)
        self.terms = sorted(seen)
        rank = {t: r for r, t in enumerate(self.terms)}
        sorted_index = np.array([rank[t] for t in seen], dtype=np.intp)  # first-seen order -> sorted order
        in_docs = np.fromiter((i for row in counts for i in row), dtype=np.intp)
        df = np.bincount(sorted_index[in_docs], minlength=len(seen)).astype(np.float64)
        df += 1.0
        idf = np.full_like(df, fill_value=len(docs) + 1, dtype=np.float64)
        idf /= df
        np.log(idf, out=idf)
        idf += 1.0
        self.idf = dict(zip(self.terms, idf.tolist()))
        self.sublinear = sublinear
        self.rows = self._weigh([[(seen[i], c) for i, c in sorted(row.items())] for row in counts])

    def transform(self, docs: Sequence[Sequence[str]]) -> list[Weights]:
        """New documents' weights against this fit's terms and idf (terms it never saw are left out)."""
        rows: list[list[tuple[str, int]]] = []
        for doc in docs:
            row: dict[str, int] = {}
            for term in doc:
                if term in self.idf:
                    row[term] = row.get(term, 0) + 1
            rows.append(sorted(row.items()))
        return self._weigh(rows)

    def _weigh(self, rows: list[list[tuple[str, int]]]) -> list[Weights]:
        data = np.array([c for row in rows for _, c in row], dtype=np.float64)
        if self.sublinear:
            np.log(data, data)
            data += 1.0
        data *= np.array([self.idf[t] for row in rows for t, _ in row], dtype=np.float64)
        out: list[Weights] = []
        start = 0
        for row in rows:
            values = data[start : start + len(row)].tolist()
            start += len(row)
            total = 0.0
            for v in values:  # one by one, as scikit-learn's l2 normalisation adds them
                total += v * v
            if total != 0.0:
                norm = float(np.sqrt(total))
                values = [v / norm for v in values]
            out.append([(t, v) for (t, _), v in zip(row, values)])
        return out


def cosines(queries: Sequence[Weights], docs: Sequence[Weights]) -> np.ndarray:
    """Each query's dot product with each document (both l2-normed: their cosine), summed over the query's terms
    in its order, as scipy's sparse product of the two matrices adds them."""
    vectors = [dict(d) for d in docs]
    out = np.zeros((len(queries), len(docs)), dtype=np.float64)
    for q, query in enumerate(queries):
        for j, vec in enumerate(vectors):
            total = 0.0
            for term, w in query:
                if term in vec:
                    total += w * vec[term]
            out[q, j] = total
    return out
