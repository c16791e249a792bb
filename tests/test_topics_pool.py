"""Issue 43's dev pool (``bench.topic_agent_logs.pooled``, ``bench/topics.py --pool``): each set scored alone, then
all pooled, a conversation keyed by its set (each set has its own warehouse, whose ids may repeat)."""

from __future__ import annotations

from bench.topic_agent_logs import DEV_ROUNDS, Labeled, pooled


def test_the_pool_scores_each_set_then_all_of_them_as_one() -> None:
    a = [Labeled("c1", "dev", "codex", [0, 2, 4, 6], {4}), Labeled("c2", "dev", "codex", [0, 2], set())]
    b = [Labeled("c1", "fresh-dev", "crush", [0, 2, 4, 6], {2})]  # the same id in another warehouse
    res = pooled([("A", a, {"c1": {4}}, {"c2"}), ("B", b, {"c1": {6}}, set())])
    assert list(res) == ["A", "B", "dev pool (2 sets)"]
    ours = {k: r["detectors"]["ours"] for k, r in res.items()}
    assert (ours["A"]["predicted"], ours["A"]["tp"], ours["A"]["f1"]) == (1, 1, 1.0)
    assert (ours["B"]["predicted"], ours["B"]["tp"], ours["B"]["f1"]) == (1, 0, 0.0)
    pool = res["dev pool (2 sets)"]
    assert (pool["conversations"], pool["person_turns"], pool["shifts"], pool["declined"]) == (3, 10, 2, 1)
    p = pool["detectors"]["ours"]
    assert (p["predicted"], p["tp"], p["precision"], p["recall"], p["f1"]) == (2, 1, 0.5, 0.5, 0.5)
    assert round(p["pk"], 3) == PK
    assert pool["detectors"]["every person turn"]["predicted"] == 7  # every turn but each conversation's first


def test_the_rounds_developed_on_whole_include_the_ninth() -> None:
    assert DEV_ROUNDS == (
        "r4",
        "r5",
        "r6",
        "r7",
        "r8",
        "r9",
    )  # topics11: the eighth round joins dev; topics12 the ninth


PK = 0.222  # the pooled Pk, as evaluate.score computes it over both sets
