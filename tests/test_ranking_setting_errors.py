"""The run ranking's problems on an error most runs hit (docs/failures-evaluation.md, branch `step11`): a problem whose
every finding cites only errors many of the runs ranked show is the setting's (Multi-SWE-bench's `javac: command not
found`, hit by about half its runs, passed ones among them) and weighs no more than the rarest error it cites."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from forensics.analyzers import outcomes as oc

ENV = "<path>: line <n>: javac: command not found"  # the setting's: five runs of eight
OWN = "error: cannot find symbol"  # a run's own: one run
OWN2 = "error: ';' expected"


def _runs() -> tuple[pl.DataFrame, dict[str, set[str]], dict[str, oc.RunErrors]]:
    ids = [f"r{i}" for i in range(8)]
    runs = pl.DataFrame(
        {
            "conversation_id": ids,
            "model": ["m"] * 8,
            "messages": [10, 12, 14, 16, 18, 20, 22, 24],
            "assistant_chars": [100, 120, 140, 160, 180, 200, 220, 240],
            "tool_errors": [1] * 8,
        }
    )
    kinds = {"r0": {"loop"}, "r1": {"loop", "redundant_work"}, "r2": {"loop"}, "r5": {"loop"}}
    f = frozenset
    cited = {
        # its loop cites only the setting's error
        "r0": oc.RunErrors(f({ENV}), {"loop": (f({ENV}),)}),
        # a loop on the setting's error and a redundant step that cites no error: counted once, not capped
        "r1": oc.RunErrors(f({ENV}), {"redundant_work": (f({ENV}),), "loop": (f(),)}),
        # a loop whose finding cites the setting's error and one of its own: the rarest counts
        "r2": oc.RunErrors(f({ENV, OWN2}), {"loop": (f({ENV, OWN2}),)}),
        "r3": oc.RunErrors(f({ENV}), {}),
        "r4": oc.RunErrors(f({ENV}), {}),
        # a loop on an error of its own
        "r5": oc.RunErrors(f({OWN}), {"loop": (f({OWN}),)}),
        "r6": oc.RunErrors(f(), {}),
        "r7": oc.RunErrors(f(), {}),
    }
    return runs, kinds, cited


def test_a_problem_on_an_error_most_runs_hit_weighs_that_errors_rarity() -> None:
    runs, kinds, cited = _runs()
    caps = oc.setting_weight(cited)
    env = math.log(8 / 5) / math.log(8)  # 0.2260
    assert caps == {
        ("r0", "redundant_work"): pytest.approx(env),
        ("r2", "redundant_work"): 1.0,
        ("r5", "redundant_work"): 1.0,
    }
    assert env == pytest.approx(0.22602, abs=1e-5)
    before = oc.run_scores(runs, kinds)
    after = oc.run_scores(runs, kinds, cited)
    # a loop (counted as redundant work) in 4 runs of 8 weighs log(2)/log(8) = 1/3; r0's is capped at 0.226
    moved = {c: round(a - b, 5) for c, a, b in zip(runs["conversation_id"], after, before) if a != b}
    assert moved == {"r0": round(oc.PROBLEM_WEIGHT * (env - 1 / 3), 5)} == {"r0": -0.21462}
    # without the errors cited, the ranking is the one before
    assert oc.run_scores(runs, kinds, {}) == before


def test_the_share_is_read_among_the_runs_ranked_that_replied() -> None:
    """The rarity of an error is among the runs ranked (a half, a selection), never the warehouse; a run whose agent
    never replied is not counted."""
    runs, kinds, cited = _runs()
    three = runs.filter(pl.col("conversation_id").is_in(["r0", "r5", "r6"]))
    # among r0, r5, r6 the setting's error is in one run of three: rare, so r0 is not lowered below its kind's rarity
    assert oc.run_scores(three, kinds, cited) == oc.run_scores(three, kinds)
    idle = {**kinds, "r3": {oc.NO_REPLY}, "r4": {oc.NO_REPLY}}
    # r3 and r4 never replied: the setting's error is in 3 of the 6 runs that replied
    caps = oc.setting_weight({c: e for c, e in cited.items() if c not in ("r3", "r4")})
    assert caps[("r0", "redundant_work")] == pytest.approx(math.log(2) / math.log(6))
    scored = dict(zip(runs["conversation_id"], oc.run_scores(runs, idle, cited)))
    assert scored["r3"] > oc.NEVER_ACTED and scored["r4"] > oc.NEVER_ACTED


def test_the_errors_a_loop_cites_are_read_from_its_calls_results(tmp_path: Path) -> None:
    """End to end: twelve graded sessions, four of which retry `javac` on a shell that has none (SWE-agent's `/bin/bash:
    line N:` before it, masked), one retries a compile that fails on its own code, seven list a folder (a kind on most
    runs of one family is not reported). Each retry is a loop; the loops on the missing compiler cite only an error
    four of twelve runs show, the other one an error of its own."""
    import duckdb

    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection
    from tests.conftest import run_cli
    from tests.test_problems import Session, run
    from tests.test_problems_endings2 import call

    def retry(sid: str, error: str, times: int = 3) -> Session:
        s = Session(sid).add("user", "fix the serializer and check it compiles")
        for k in range(times):
            call(s, "javac", {"command": "javac Repro.java"}, error.format(n=100 + k), True)
        return s.add("assistant", "I could not compile it.")

    missing = "/bin/bash: line {n}: javac: command not found\n(Open file: /repo/Repro.java)"
    own = "Repro.java:3: error: cannot find symbol\n    Pojo p;\n    ^"
    sessions = [retry(f"env{i}", missing) for i in range(4)] + [retry("own", own)]
    for i in range(7):
        quiet = Session(f"quiet{i}").add("user", "fix the serializer and check it compiles")
        call(quiet, "ls", {"command": "ls"}, "Repro.java")
        sessions.append(quiet.add("assistant", "Done."))
    found, _ = run(tmp_path, *sessions)
    assert {f["native_id"] for f in found if f["kind"] == "loop"} == {"env0", "env1", "env2", "env3", "own"}
    grades = tmp_path / "grades.csv"
    grades.write_text(
        "id,success\nenv0,true\nenv1,false\nenv2,false\nenv3,false\nown,false\n"
        + "".join(f"quiet{i},{str(i % 2 == 0).lower()}\n" for i in range(7))
    )
    assert run_cli("outcomes", str(grades), "--db", str(tmp_path / "w.duckdb"))[0] == 0
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    native = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    cited = {native[c]: e for c, e in oc.cited_errors(ctx, runs).items()}
    con.close()
    env = "<path>: line <n>: javac: command not found"
    assert cited["env0"].templates == {env} and cited["quiet0"].templates == frozenset()
    assert set(cited["env0"].cited) == {"loop", "redundant_work"}
    assert all(f == {env} for fs in cited["env0"].cited.values() for f in fs)
    assert {t for fs in cited["own"].cited.values() for f in fs for t in f} == cited["own"].templates != {env}
    env_rarity = math.log(12 / 4) / math.log(12)  # 0.4421
    assert oc.setting_weight(cited) == {
        **{(f"env{i}", "redundant_work"): pytest.approx(env_rarity) for i in range(4)},
        ("own", "redundant_work"): 1.0,
    }
    assert env_rarity == pytest.approx(0.44211, abs=1e-5)
