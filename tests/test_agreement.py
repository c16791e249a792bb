"""Two readers of the fresh set (``python -m bench.agreement``, bench/data/README.md): Cohen's kappa and the
problem matching worked by hand on small cases, bad input, and the figures of the two committed label files pinned
(a relabel that moves them is measured again and the docs say why). The detector figures need the shared agent
logs (skipped without them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import agreement as ag
from tests.conftest import SHARED


def _line(native_id: str, turns: list[tuple[int, str, bool | None]], problems: list[tuple[str, list[int]]],
          outcome: str = "success") -> dict:  # fmt: skip
    return {
        "root": "fixtures/real",
        "source": "x/y.jsonl",
        "native_id": native_id,
        "family": "x",
        "user_turns": [{"position": p, "text_prefix": f"t{p}", "origin": o, "shift": s} for p, o, s in turns],
        "problems": [{"kind": k, "positions": pos, "quote": "q"} for k, pos in problems],
        "outcome_judged": outcome,
    }


def test_kappa_by_hand() -> None:
    # 3 of 4 agree; each reader's shares: first person 2/4 harness 2/4, second person 1/4 harness 3/4
    # chance = (2*1 + 2*3) / 16 = 0.5, kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    k = ag.kappa(["person", "person", "harness", "harness"], ["person", "harness", "harness", "harness"])
    assert (k["agree"], k["share"], k["chance"], k["kappa"]) == (3, 0.75, 0.5, 0.5)
    # one category only: chance is 1, kappa undefined rather than a division by zero
    assert ag.kappa(["person"] * 3, ["person"] * 3)["kappa"] is None
    assert ag.kappa([], [])["share"] is None
    with pytest.raises(ValueError):
        ag.kappa(["a"], [])


def test_problem_matching_is_one_to_one_nearest_first_within_two() -> None:
    a = [{"kind": "loop", "positions": [10]}, {"kind": "loop", "positions": [14]}]
    b = [{"kind": "loop", "positions": [12]}]
    assert ag.match(a, b, True, 2) == 1  # 12 is within 2 of both; it pairs once
    assert ag.match([{"kind": "loop", "positions": [10]}], [{"kind": "loop", "positions": [13]}], True, 2) == 0
    assert ag.match([{"kind": "loop", "positions": [3, 30]}], [{"kind": "loop", "positions": [31]}], True, 2) == 1
    # another kind at the same place: no match by kind, a match for "any kind"
    c = [{"kind": "redundant_work", "positions": [10]}]
    assert ag.match(a, c, True, 2) == 0 and ag.match(a, c, False, 2) == 1
    # same kind anywhere in the conversation
    assert ag.match([{"kind": "loop", "positions": [1]}], [{"kind": "loop", "positions": [90]}], True, None) == 1


def test_agreement_on_a_small_pair() -> None:
    first = [_line("c1", [(0, "person", False), (2, "person", True), (4, "harness", None), (6, "person", True)],
                   [("loop", [5]), ("user_repeated", [6])], "failure")]  # fmt: skip
    second = [_line("c1", [(0, "person", False), (2, "person", False), (4, "person", False), (6, "person", True)],
                    [("loop", [7]), ("frustration", [6])], "unclear")]  # fmt: skip
    r = ag.agreement(ag.pairs(first, second))
    assert (r["origin"]["agree"], r["origin"]["n"], r["origin"]["disagreements"]) == (3, 4, {"harness -> person": 1})
    s = r["shift"]  # turns both call person: 0, 2, 6
    assert (s["n"], s["agree"], s["first_shifts"], s["second_shifts"], s["both"]) == (3, 2, 2, 1, 1)
    assert (s["precision"], s["recall"], s["f1"]) == (1.0, 0.5, 2 / 3)
    p = r["problems"]
    assert p["kinds"]["loop"] | {} == {
        "first": 1,
        "second": 1,
        "matched": 1,
        "only_first": 0,
        "only_second": 0,
        "f1": 1.0,
    }
    assert (p["all"]["matched"], p["all"]["f1"]) == (1, 0.5)
    assert p["any_kind"]["matched"] == 2  # user_repeated [6] and frustration [6] sit at one place
    assert r["outcome_judged"]["agree"] == 0


def test_pairs_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _line("c1", [(0, "person", False)], [])
    with pytest.raises(SystemExit, match="labeled twice"):
        ag.pairs([one, one], [one])
    assert ag.pairs([one], [_line("c2", [], [])]) == []
    # a missing file, a line that is not JSON, a line without its fields: one line on stderr, exit 2
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(one) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    short = tmp_path / "short.jsonl"
    short.write_text(json.dumps({"root": "fixtures/real", "source": "x"}) + "\n")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(_line("c2", [], [])) + "\n")
    for first, second, says in (
        (tmp_path / "nope.jsonl", good, "cannot read"),
        (bad, good, "not JSON"),
        (short, good, "lacks native_id"),
        (good, other, "no conversation in both"),
    ):
        assert ag.main(["--first", str(first), "--second", str(second), "--no-detectors"]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and "\n" not in err and "Traceback" not in err


def test_the_two_readers_of_the_fresh_set() -> None:
    first, second = ag.read(ag.FIRST), ag.read(ag.SECOND)
    assert len(first) == len(second) == 43 and all(d.get("labeler") == "second" for d in second)
    res = ag.evaluate(first, second)
    w = res["whole"]
    assert w["conversations"] == 43
    o = w["origin"]
    assert (o["agree"], o["n"], o["unaligned"], o["disagreements"]) == (436, 437, 0, {"person -> harness": 1})
    assert round(o["kappa"], 3) == 0.995 and round(o["chance"], 3) == 0.576
    s = w["shift"]
    assert (s["n"], s["agree"], s["first_shifts"], s["second_shifts"], s["both"]) == (303, 285, 71, 61, 57)
    assert (round(s["kappa"], 3), round(s["chance"], 3), round(s["f1"], 3)) == (0.826, 0.659, 0.864)
    assert round(s["every_turn_f1"], 3) == 0.429
    p = w["problems"]
    assert [p["all"][k] for k in ("first", "second", "matched")] == [51, 53, 37]
    assert (p["any_kind"]["matched"], p["same_conversation"]["matched"]) == (39, 42)
    assert {k: v["matched"] for k, v in p["kinds"].items() if v["first"] or v["second"]} == {
        "lost_focus": 2, "context_crowded": 0, "user_repeated": 19, "instruction_violated": 0,
        "redundant_work": 4, "loop": 6, "gave_up_or_false_success": 4, "frustration": 2,
    }  # fmt: skip
    oc = w["outcome_judged"]
    assert (oc["agree"], oc["n"], round(oc["kappa"], 3), round(oc["chance"], 3)) == (32, 43, 0.652, 0.265)
    assert oc["disagreements"]["unclear -> failure"] == 5
    assert (res["fresh-dev"]["conversations"], res["fresh-held"]["conversations"]) == (20, 23)
    assert (res["fresh-dev"]["problems"]["all"]["matched"], res["fresh-held"]["problems"]["all"]["matched"]) == (28, 9)
    text = ag.render(res)
    assert "kappa 0.83 (chance 0.66)" in text and "fresh-held: 23 conversations" in text


def test_the_detectors_against_each_reader() -> None:
    if not (SHARED / "data" / "agent-logs").is_dir():
        pytest.skip(f"{SHARED / 'data' / 'agent-logs'} not found (set FORENSICS_SHARED)")
    d = ag.detectors(ag.FIRST, ag.SECOND, SHARED)
    got = {n: (r["all"]["found"], r["all"]["labels"]) for n, r in d["problems"].items()}
    # branch feel: frustration and lost focus found on the fresh set (was 23/51, 25/53, 20/37); branch restate: requests
    # restated in new words (was 28/51, 29/53, 24/37); branch recall5: refused edits in a row, a regression named after
    # reported changes, a decline taken back (was 34/51, 37/53, 30/37); branch twice: a claim is the reply's words, not
    # an edit's body: the gave_up finding read off an aider SEARCH block (false for the first reader) had sat near a
    # label of the second reader's (was 39/53)
    # branch recall7: a hand-over naming a file its turn wrote, then "still cannot drag", is a claim contradicted (was
    # 37/51); branch norm9: ChatGPT's integral run again without its imports, both readers' redundant_work (was 38/51,
    # 38/53, 32/37); lead, stop 52: recall9's pi "no conosle logs!" said_again, near the first reader's label (was 39/51)
    # mend12 (stop 55): aider's reader now knows that of reply 6's three edits in tom-doerr's simple_test_project one
    # applied (its commit follows); the "did not conform" failures at 3, 6, 11 are no longer three in a row with no
    # success of the edit tool between, so the loop both readers marked is not found (was 40/51, 39/53, 33/37)
    assert got == {"first": (39, 51), "second": (38, 53), "both readers": (32, 37)}
    t = {n: (r["shifts"], r["person_turns"]) for n, r in d["topics"].items()}
    assert t == {"first": (71, 304), "second": (61, 303)}
    assert "problems vs both readers: finds 32/37" in "\n".join(ag.render_detectors(d))


def test_the_two_readers_of_the_eighth_round() -> None:
    # bench/data/README.md, the eighth round's second reader (branch second10): blind, committed before this comparison
    data = ag.ROOT / "bench" / "data"
    first, second = ag.read(data / "problems-fresh-r8.jsonl"), ag.read(data / "problems-fresh-r8-second.jsonl")
    assert len(first) == len(second) == 12 and all(d.get("labeler") == "second" for d in second)
    res = ag.evaluate(first, second)
    w = res["whole"]
    o = w["origin"]
    assert (o["agree"], o["n"], o["unaligned"], round(o["kappa"], 3), round(o["chance"], 3)) == (97, 97, 0, 1.0, 0.685)
    s = w["shift"]
    assert (s["n"], s["agree"], s["first_shifts"], s["second_shifts"], s["both"]) == (78, 77, 7, 8, 7)
    assert (round(s["kappa"], 3), round(s["f1"], 3), round(s["every_turn_f1"], 3)) == (0.926, 0.933, 0.192)
    p = w["problems"]
    assert [p["all"][k] for k in ("first", "second", "matched")] == [19, 24, 16]
    assert (round(p["all"]["f1"], 3), p["any_kind"]["matched"]) == (0.744, 18)
    oc = w["outcome_judged"]
    assert (oc["agree"], oc["n"], oc["disagreements"]) == (11, 12, {"success -> unclear": 1})


def test_the_two_readers_of_the_ninth_round() -> None:
    # bench/data/README.md, the ninth round's second reader (branch second11): blind, committed before this comparison
    data = ag.ROOT / "bench" / "data"
    first, second = ag.read(data / "problems-fresh-r9.jsonl"), ag.read(data / "problems-fresh-r9-second.jsonl")
    assert len(first) == len(second) == 8 and all(d.get("labeler") == "second" for d in second)
    res = ag.evaluate(first, second)
    w = res["whole"]
    o = w["origin"]
    assert (o["agree"], o["n"], o["unaligned"], round(o["kappa"], 3), round(o["chance"], 3)) == (48, 48, 0, 1.0, 0.556)
    s = w["shift"]
    assert (s["n"], s["agree"], s["first_shifts"], s["second_shifts"], s["both"]) == (32, 32, 4, 4, 4)
    assert (round(s["kappa"], 3), round(s["f1"], 3), round(s["every_turn_f1"], 3)) == (1.0, 1.0, 0.286)
    p = w["problems"]
    assert [p["all"][k] for k in ("first", "second", "matched")] == [16, 19, 13]
    assert (round(p["all"]["f1"], 3), p["any_kind"]["matched"]) == (0.743, 13)
    oc = w["outcome_judged"]
    assert (oc["agree"], oc["n"], round(oc["kappa"], 3)) == (6, 8, 0.644)
    assert oc["disagreements"] == {"partial -> failure": 1, "unclear -> partial": 1}


def test_the_two_readers_of_the_tenth_round() -> None:
    # bench/data/README.md, the tenth round's second reader (branch second12): blind, committed before this comparison
    data = ag.ROOT / "bench" / "data"
    first, second = ag.read(data / "problems-fresh-r10.jsonl"), ag.read(data / "problems-fresh-r10-second.jsonl")
    assert len(first) == len(second) == 6 and all(d.get("labeler") == "second" for d in second)
    res = ag.evaluate(first, second)
    w = res["whole"]
    o = w["origin"]
    assert (o["agree"], o["n"], o["unaligned"], o["kappa"], o["chance"]) == (30, 30, 0, None, 1.0)
    s = w["shift"]
    assert (s["n"], s["agree"], s["first_shifts"], s["second_shifts"], s["both"]) == (30, 26, 0, 4, 0)
    assert (round(s["kappa"], 3), round(s["chance"], 3), s["f1"]) == (0.0, 0.867, 0.0)
    p = w["problems"]
    assert [p["all"][k] for k in ("first", "second", "matched")] == [3, 2, 2]
    assert (round(p["all"]["f1"], 3), p["any_kind"]["matched"]) == (0.8, 2)
    oc = w["outcome_judged"]
    assert (oc["agree"], oc["n"], round(oc["kappa"], 3)) == (5, 6, 0.0)
    assert oc["disagreements"] == {"partial -> success": 1}
