"""The topic model's compressed-row products (forensics.analyzers.topics.corpus.Rows) equal scipy's bit for bit.

scipy left the runtime install (issue 47: 143 MB for two products); the posteriors, and so the report, must not
move by one digit. scipy stays in the dev extra (scikit-learn needs it), so the oracle is always here."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from forensics.analyzers.topics import corpus


def _rows(rng: np.random.Generator, n: int, width: int) -> list[list[int]]:
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 12))
        out.append(sorted({int(c) for c in rng.integers(0, width - 7, k)}))  # the last 7 columns stay empty
    return out


def _scipy(rows: list[list[int]], width: int) -> sp.csr_matrix:
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return sp.csr_matrix((np.ones(int(indptr[-1])), np.concatenate(rows), indptr), shape=(len(rows), width))


@pytest.mark.parametrize("n", [1, 3, 400])
def test_products_equal_scipy_bit_for_bit(n: int) -> None:
    rng = np.random.default_rng(7)
    rows, width = _rows(rng, n, 90), 90
    ours, theirs = corpus._matrix(rows, width), _scipy(rows, width)
    emission = np.log(rng.dirichlet(np.ones(width), 72))  # states x vocabulary, as the chains hold it
    gamma = rng.dirichlet(np.ones(72), n)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours.column_counts(), np.asarray(theirs.sum(0)).ravel())
    assert ours.dot(emission.T).tobytes() == np.asarray(theirs @ emission.T).tobytes()
    assert ours.tdot(gamma).tobytes() == np.asarray(theirs.T.tocsr() @ gamma).tobytes()
    assert not ours.tdot(gamma)[-7:].any()  # empty columns sum to 0


def test_one_row_and_empty_matrix() -> None:
    one = corpus._matrix([[2, 5]], 6)
    dense = np.arange(12.0).reshape(6, 2)
    assert one.dot(dense).tolist() == [[14.0, 16.0]]
    assert one.tdot(np.array([[1.0, 2.0]])).tolist() == [[0, 0], [0, 0], [1, 2], [0, 0], [0, 0], [1, 2]]
    empty = corpus._matrix([], 4)
    assert empty.shape == (0, 4) and empty.dot(np.ones((4, 3))).shape == (0, 3)


def test_fit_and_posteriors_equal_the_scipy_products(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole fit once with scipy's products and once with ours: the same chains, the same posteriors."""
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    convs = [[[words[int(j)] for j in rng.integers(0, 60, 6)] for _ in range(12)] for _ in range(70)]
    ours = corpus.fit(convs)

    class Scipy:  # the scipy products behind Rows' interface, as corpus.py called them before
        def __init__(self, rows: list[list[int]], width: int) -> None:
            self.x = _scipy(rows, width) if rows else sp.csr_matrix((0, width))
            self.shape = self.x.shape

        def column_counts(self) -> np.ndarray:
            return np.asarray(self.x.sum(0)).ravel()

        def dot(self, dense: np.ndarray) -> np.ndarray:
            return np.asarray(self.x @ dense)

        def tdot(self, dense: np.ndarray) -> np.ndarray:
            return np.asarray(self.x.T.tocsr() @ dense)

    monkeypatch.setattr(corpus, "_matrix", Scipy)
    theirs = corpus.fit(convs)
    assert ours is not None and theirs is not None and ours.units == theirs.units >= corpus.MIN_UNITS
    for a, b in zip(ours.chains, theirs.chains):
        assert a.log_emission.tobytes() == b.log_emission.tobytes()
        assert a.transition.tobytes() == b.transition.tobytes()
    assert ours.switch_posteriors(convs[0]) == theirs.switch_posteriors(convs[0])
