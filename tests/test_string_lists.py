"""``kernel.arrow.string_lists``: the list column the topic workers hand back, built from one flat column, is the
series polars builds from the lists themselves (values, order, empty lists, empty strings, no nulls)."""

from __future__ import annotations

import random

import polars as pl
import pytest

from forensics.kernel.arrow import string_lists


@pytest.mark.parametrize(
    "lists",
    [[], [[]], [[], []], [[""]], [["a"], [], ["", "b"], []], [["é", "错误", "\x00"], ["a", "a", "a"]]],
)
def test_string_lists_equal_polars_own(lists: list[list[str]]) -> None:
    got = string_lists("terms", lists)
    assert got.equals(pl.Series("terms", lists, dtype=pl.List(pl.String)), check_names=True, check_dtypes=True)
    assert got.null_count() == 0


def test_string_lists_equal_polars_own_on_random_lists() -> None:
    rng = random.Random(46)
    words = ["", "a", "b", "词", "x y", "\n"]
    lists = [[rng.choice(words) for _ in range(rng.choice([0, 0, 1, 2, 7]))] for _ in range(5_000)]
    got = string_lists("t", lists)
    assert got.equals(pl.Series("t", lists, dtype=pl.List(pl.String)), check_names=True, check_dtypes=True)
    assert got.to_list() == lists
