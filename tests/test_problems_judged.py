"""The problem detectors on the shared real logs (docs/failures-evaluation.md, "Problems"): what a reader judged
true still fires, every kind holds its read precision, no kind fires on most conversations of an agent family, and
the bench's figures against the reviewer's labels are the documented ones. Skipped when the shared logs are absent."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bench import problems as bench
from bench.problem_labels import KINDS, half
from forensics import ingest
from forensics.analyzers.base import Context
from forensics.analyzers.problems import FAMILY_MIN, detect
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection
from tests.conftest import ROOT, SHARED

REAL = SHARED / "data" / "agent-logs"
LABELS = SHARED / "data" / "problems" / "problems.jsonl"
JUDGED = ROOT / "tests" / "data" / "judged"
SAMPLE = 15  # findings read per kind (all when fewer)


def judged(kind: str, fires: bool = True) -> list[dict[str, Any]]:
    """The judged findings of a kind that the detectors make (``fires``), or those a fix stopped (``"fires": false``,
    kept with the reader's verdict and why they no longer fire)."""
    path = JUDGED / f"problems-{kind}.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x] if path.exists() else []
    return [r for r in rows if r.get("fires", True) == fires]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not REAL.is_dir() or not LABELS.is_file():
        pytest.skip(f"{REAL} not found (set FORENSICS_SHARED to the shared folder)")
    db = tmp_path_factory.mktemp("problems") / "w.duckdb"
    ingest([REAL], db=db)
    found = bench.findings(db)
    con = duckdb.connect(str(db))
    raw = [
        {"conversation_id": p.conversation_id, "kind": p.kind, "positions": p.positions}
        for p in detect(Context.open(con, load_config(None), Selection()))
    ]
    where = {
        cid: (p.removeprefix(str(REAL.resolve()) + "/"), n, fam)
        for cid, p, n, fam in con.execute(
            "SELECT c.conversation_id, s.path, c.native_id, s.format FROM conversations c JOIN sources s USING (source_id)"
        ).fetchall()
    }
    con.close()
    return {"db": db, "found": found, "raw": raw, "where": where}


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "lost_focus"])
def test_judged_true_findings_still_fire(real: dict[str, Any], kind: str) -> None:
    sample = judged(kind)
    assert sample, f"no judged sample for {kind}"
    # the detectors' own findings, before a family's norm holds them (problems._family_norms keeps, in a family the
    # kind fires on most of, only the conversations above the family's median: a judged-true finding below it is
    # still found, then held to its family's norm)
    ours: dict[tuple[str, str], list[set[int]]] = defaultdict(list)
    for f in real["raw"]:
        if f["kind"] == kind:
            src, native, _ = real["where"][f["conversation_id"]]
            ours[(src, native)].append(set(f["positions"]))
    missing = [
        (s["native_id"], s["positions"])
        for s in sample
        if s["verdict"] and not any(set(s["positions"]) & p for p in ours[(s["source"], s["native_id"])])
    ]
    assert not missing, f"{kind}: judged-true findings no longer fire: {missing}"
    assert sum(s["verdict"] for s in sample) / len(sample) >= 0.8


@pytest.mark.parametrize("kind", ["redundant_work", "loop", "user_repeated"])
def test_findings_a_fix_stopped_stay_stopped(real: dict[str, Any], kind: str) -> None:
    """A judged finding a fix stopped (``"fires": false``): no finding of its kind cites all its positions again."""
    ours: dict[tuple[str, str], list[set[int]]] = defaultdict(list)
    for f in real["raw"]:
        if f["kind"] == kind:
            src, native, _ = real["where"][f["conversation_id"]]
            ours[(src, native)].append(set(f["positions"]))
    stopped = judged(kind, fires=False)
    assert stopped, f"no stopped finding of {kind} kept"
    back = [
        (s["native_id"], s["positions"])
        for s in stopped
        if any(set(s["positions"]) <= p for p in ours[(s["source"], s["native_id"])])
    ]
    assert not back, f"{kind}: findings a fix stopped fire again: {back}"


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "lost_focus"])
def test_small_kinds_are_read_whole(real: dict[str, Any], kind: str) -> None:
    """A kind with at most SAMPLE findings outside the held-out labeled half: every one of them has a verdict."""
    held = {
        (json.loads(x)["source"], json.loads(x)["native_id"])
        for x in LABELS.read_text().splitlines()
        if half(json.loads(x)["source"], json.loads(x)["native_id"]) == "held"
    }
    mine = [
        (*real["where"][f["conversation_id"]][:2], tuple(f["positions"])) for f in real["found"] if f["kind"] == kind
    ]
    mine = [m for m in mine if m[:2] not in held]
    if len(mine) > SAMPLE:
        pytest.skip(f"{kind}: {len(mine)} findings, a sample of {SAMPLE} read")
    read = {(s["source"], s["native_id"], tuple(s["positions"])) for s in judged(kind)}
    assert not [m for m in mine if m not in read], f"judge these in tests/data/judged/problems-{kind}.jsonl"


def test_lost_focus_stays_silent_and_no_kind_fires_on_most_of_a_family(real: dict[str, Any]) -> None:
    assert not [f for f in real["found"] if f["kind"] == "lost_focus"]
    size = Counter(fam for _, _, fam in real["where"].values())
    fired: dict[tuple[str, str], set[str]] = defaultdict(set)
    for f in real["found"]:
        fired[(f["kind"], real["where"][f["conversation_id"]][2])].add(f["conversation_id"])
    assert {k: len(v) for k, v in fired.items() if len(v) > size[k[1]] / 2 and size[k[1]] >= FAMILY_MIN} == {}


def test_the_bench_figures_are_the_documented_ones(real: dict[str, Any]) -> None:
    """docs/failures-evaluation.md quotes these: labels found by any detector of the right kind, per half, and on the
    dev half leave one family out (a label counted when a rule that finds it finds a label of another family too)."""
    res = bench.evaluate(SHARED, Path(real["db"]))
    got = {h: (v["all"]["found"], v["all"]["labels"]) for h, v in res["halves"].items()}
    # recall8: dev 37 -> 35, leave one family out 27 -> 25: two more Codex runs re-read files (Get-Content, a quoted
    # "(group)" path), so redundant_work is on most Codex runs and the family norm keeps those above its median share;
    # two labeled re-reads (019d021f, c61729d4) fall under it. norm9: 35 -> 36, 25 -> 26: the family norm holds a run
    # against the family's runs of its length, and the 920-message c61729d4 (13 messages cited, 1.4 %) is above them
    assert got == {"dev": (36, 40), "held": (8, 17)}  # recall10: undone_after on an OpenHands conversation
    assert (res["lofo"]["found"], res["lofo"]["labels"]) == (26, 40)
    assert res["lofo"]["rules"]["reread_unchanged"] == ["codex_cli", "continue_dev"]
    assert res["lofo"]["rules"]["claim_over_errors"] == ["continue_dev", "mini_swe_agent"]
    assert res["lofo"]["rules"]["directive_again"] == ["codex_cli", "cursor"]
    assert res["lofo"]["rules"]["claimed_without_acting"] == ["aider", "continue_dev"]
    dev = res["halves"]["dev"]["kinds"]
    assert {k: dev[k]["detector"]["found"] for k in KINDS} == {
        "lost_focus": 0,
        "context_crowded": 2,
        "user_repeated": 11,
        "instruction_violated": 7,
        "redundant_work": 3,  # recall8: 4 -> 2, the two Codex re-reads under the family norm; norm9: 3 (c61729d4)
        "loop": 2,
        "gave_up_or_false_success": 9,
        "frustration": 2,
    }
    assert (
        {k: (dev[k]["detector"]["right"], dev[k]["detector"]["findings"]) for k in KINDS}
        == {
            "lost_focus": (0, 0),
            "context_crowded": (2, 2),
            "user_repeated": (
                20,
                28,
            ),  # recall6: 29 -> 28, "make the following changes one at a time" is no "one question at a time" again; sent_again: "OK, continue" three times with no reply (read true; no label); restate:
            # asked_again_reworded, the aider audit loop pasted again after a reply that only named files (read true; no label)
            "instruction_violated": (9, 9),
            # recall8: (6, 10) -> (2, 2), 8 findings of two Codex runs under the family norm; norm9: (6, 9), c61729d4's 6 back
            # above Codex's runs of its length (all read true, 3 labeled) and one part_again on it ([758, 760], read true)
            "redundant_work": (6, 9),
            "loop": (
                4,
                7,
            ),  # recall10: failed_step_again, c61729d4's apply_patch sent three times (read true, no label)
            # recall7: 13/21 -> 14/25, a reply that hands its turn's changes over by the file they wrote (codex shell-ws
            # x4, read true; the labels put those turns under user_repeated, one lies near a gave_up label); recall9 with
            # norm9 (lead, stop 52): 15/26, the shared-dev Codex claim the person's next turn says fails (read true)
            "gave_up_or_false_success": (15, 26),
            "frustration": (7, 8),
        }
    )
