"""The turn ends of a batch read once for the two rules that read them (issue 46, speed12): ``stalled.ends_of`` over
the union of ``stalled_turns``' conversations (two person turns or more) and ``stalled_loops``' (a call somewhere)
gives each rule what its own read gave, on real Crush and Cursor logs (``fixtures/real``: stalls, pushes after them,
an announcement loop and a same-reply loop; Cursor's conversations have turns but no call)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb

from forensics import ingest
from forensics.analyzers.base import Context
from forensics.analyzers.problems import stalled, stopped, turns
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_the_turn_ends_read_once_equal_each_rules_own_read(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([REAL / "crush", REAL / "cursor"], db=db)
    con = duckdb.connect(str(db))
    try:
        Context.open(con, load_config(None), Selection())
        by_conv = turns.by_conversation(turns.person_turns(con))
        ends = stalled.ends_of(con, by_conv)
        # the union is read: 18 conversations with a call, 10 more with two person turns or more and none
        assert (len(by_conv), len(ends.called), len(ends.turns)) == (56, 18, 28)
        assert sum(len(rows) for rows in ends.turns.values()) == 116
        assert Counter(e[1] for at in ends.stalls.values() for e in at.values()) == {"empty": 13, "announced": 7}
        own = stalled.stalled_turns(con, by_conv)
        shared = stalled.stalled_turns(con, by_conv, ends)
        assert shared == own and list(shared) == list(own)
        assert sum(len(at) for at in shared.values()) == 13
        loops = stalled.stalled_loops(con, ends)
        assert loops == stalled.stalled_loops(con)
        assert sorted(p.rule for p in loops) == ["announced_4_times", "same_reply_3_times"]
        # the third reader (gaveup12's stopped_without_answer): the ends read above, and its own read of the rest
        found = stopped.stopped(con, by_conv, ends)
        assert found == stopped.stopped(con, by_conv) and len(found) == 11
    finally:
        con.close()
