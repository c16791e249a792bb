"""Issue 41, branch norm9: the same action again where the second call is a part of the first (``actions.part_again``,
rule ``same_action_same_result``). Each case is a snippet of its real conversation's shape, with the near misses
beside it."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.actions import action_lines
from tests.test_problems import Session, run, verbatim

# chatgpt/realazthat+chatgpt2graph (966da5c4), positions 4-7, the code verbatim
FIRST = (
    "from sympy import symbols, integrate, Abs\r\n\r\nx, y = symbols('x y')\r\nexpression = Abs(x - y)\r\n"
    "integral = integrate(integrate(expression, (x, 0, 1)), (y, 0, 1))\r\nintegral"
)
AGAIN = (
    "# Correct the integral calculation for the average distance between x and y\r\n"
    "integral = integrate(integrate(expression, (x, 0, 1)), (y, 0, 1))\r\nintegral"
)
SPLIT = "integral_part1 = integrate(integrate(x - y, (x, y, 1)), (y, 0, 1))\r\nintegral_part1"


def test_the_same_statements_run_again_without_their_imports_is_redundant(tmp_path: Path) -> None:
    """ "My apologies … let me correct that and recalculate": the same integral run again, a comment added and the
    imports left out, 0 again. Near misses: another computation after it (its lines not the first's); the same lines
    with another result (the state changed); the same lines after the person's turn."""
    found = {}
    for sid, second, result, between in (
        ("again", AGAIN, "0", False),
        ("split", SPLIT, "1/6", False),
        ("other", AGAIN, "1/3", False),
        ("asked", AGAIN, "0", True),
    ):
        s = Session(sid).add(
            "user", "given two random independent variables x,y in U(0,1), what is the average distance?"
        )
        s.call("python", {"code": FIRST}, "0")
        s.add("assistant", "My apologies; it looks like there was an error in the calculation. Let me correct that.")
        if between:
            s.add("user", "run it again please")
        s.call("python", {"code": second}, result)
        s.add("assistant", "The average distance is 1/3.")
        (tmp_path / sid).mkdir()
        f, _ = run(tmp_path / sid, s)
        found[sid] = [x for x in f if x["kind"] == "redundant_work"]
    again = found.pop("again")
    assert [(x["rule"], x["positions"], x["quote"]) for x in again] == [
        (
            "same_action_same_result (python)",
            [1, 4],
            "integral = integrate(integrate(expression, (x, 0, 1)), (y, 0, 1))",
        )
    ] and verbatim(tmp_path / "again", again[0])
    assert found == {"split": [], "other": [], "asked": []}


def test_the_lines_of_an_action() -> None:
    """Blank lines and comment lines out, the rest stripped: the lines of the longest argument."""
    assert action_lines('{"code": "# fix\\n  a = 1\\n\\n// js\\n-- sql\\nb = 2 # kept\\n", "timeout": "30"}') == [
        "a = 1",
        "b = 2 # kept",
    ]
    assert action_lines("not json") == ["not json"]
