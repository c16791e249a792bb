"""Our TF-IDF (forensics.text.tfidf) is scikit-learn's TfidfVectorizer to the bit: weights, their storage order's
sums, the transform of new documents and the cosines, on real dialogues of two languages."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from forensics.text.distinctive import distinctive_of
from forensics.text.keywords import content_tokens
from forensics.text.tfidf import Tfidf, cosines
from tests.conftest import SHARED


def _dialogues(name: str, limit: int) -> list[list[str]]:
    """Each dialogue of a shared labeled set as one document: its turns' content tokens, in order."""
    docs: list[list[str]] = []
    with open(SHARED / "data" / name, encoding="utf-8") as f:
        for line in f:
            docs.append([w for t in json.loads(line)["turns"] for w in content_tokens(t["text"])])
            if len(docs) == limit:
                break
    return docs


@pytest.mark.parametrize("name", ["kdconv-dev.zh.jsonl", "multiwoz-val.en.jsonl"])
@pytest.mark.parametrize("sublinear", [True, False])
def test_weights_and_cosines_equal_scikit_learns(name: str, sublinear: bool) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = _dialogues(name, 150) + [[]]  # a document without a token has no weights
    docs[3] = list(Counter(docs[3]).elements())  # as keywords hands them: each term's counts together
    ours = Tfidf(docs, sublinear=sublinear)
    vec = TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=sublinear)
    matrix = vec.fit_transform(docs).tocsr()
    vocab = vec.get_feature_names_out()
    assert ours.terms == vocab.tolist()
    for i, row in enumerate(ours.rows):
        r = matrix.getrow(i)
        assert row == list(zip(vocab[r.indices].tolist(), r.data.tolist()))  # ==: the same bits, the same order
    assert ours.rows[-1] == []
    queries = [d[: len(d) // 2] + ["never-seen"] for d in docs[::5]] + [["never-seen"]]
    expected = np.asarray((vec.transform(queries) @ matrix.T).todense())
    got = cosines(ours.transform(queries), ours.rows)
    assert np.array_equal(got, expected)
    assert not got[-1].any()


def test_weights_by_hand() -> None:
    fit = Tfidf([["a", "a", "b"], ["b", "c"]], sublinear=True)
    idf_a = math.log(3 / 2) + 1  # in one of two documents; b is in both: idf 1
    a, b = (1 + math.log(2)) * idf_a, 1.0
    assert fit.rows[0] == [("a", pytest.approx(a / math.hypot(a, b))), ("b", pytest.approx(b / math.hypot(a, b)))]
    assert [t for t, _ in fit.rows[1]] == ["b", "c"]
    assert Tfidf([["a", "a", "b"]]).transform([["b", "z"], []]) == [[("b", 1.0)], []]
    assert distinctive_of([["a", "a", "b"], ["b", "c"]], top_k=1) == [
        [("a", pytest.approx(a / math.hypot(a, b)))],
        [("c", pytest.approx(0.8148, abs=1e-4))],
    ]
    assert distinctive_of([[], []]) == [[], []]
