"""Instructions that share a sentence or a message (issue 30): each clause is its own constraint, so the one a
compaction's summary drops is found, with its positions, when the agent breaks it and the user repeats it
(fixtures/compaction-clauses, written by fixtures/make_compaction.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.analyzers.compaction.facts import Extractor
from forensics.analyzers.compaction.rules import rules
from forensics.analyzers.schema import defaults
from tests.conftest import FIXTURES, load_script, query, run_cli

HERE = FIXTURES / "compaction-clauses"
LABELS = json.loads((HERE / "labels.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("clauses")
    code, _, err = run_cli("ingest", str(HERE), "--db", str(d / "w.duckdb"))
    assert code == 0, err
    code, _, err = run_cli(
        "report", "--db", str(d / "w.duckdb"), "--out", str(d / "r"), "--only", "compaction", "--format", "json"
    )
    assert code == 0, err
    return d / "w.duckdb"


def test_the_generator_writes_the_committed_fixture(tmp_path: Path) -> None:
    load_script(FIXTURES / "make_compaction.py").clauses(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(HERE) for p in HERE.rglob("*") if p.is_file())
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (HERE / rel).read_bytes(), rel


def test_each_clause_is_a_fact_and_the_dropped_ones_are_found_with_their_positions(audited: Path) -> None:
    rows = query(
        audited,
        "SELECT c.native_id, f.event_position, f.kind, f.fact, f.fact_position, f.status, "
        "f.needed_at, f.severity FROM compaction_facts f JOIN conversations c USING (conversation_id) "
        "WHERE f.kind = 'constraint' ORDER BY ALL",
    )
    want = sorted(
        (sid, k["position"], f["kind"], f["fact"], f["fact_position"], f["status"], f["needed_at"], f["severity"])
        for sid, s in LABELS.items()
        for k in s["compactions"]
        for f in k["facts"]
        if f["kind"] == "constraint"
    )
    assert len(rows) == len(want) == 7
    for got, lab in zip(rows, want):
        assert lab[3] in got[3], (lab, got)
        assert got[:3] + got[4:] == lab[:3] + lab[4:], (lab, got)
    lost = [r for r in rows if r[6] is not None]
    assert [(r[4], r[6]) for r in lost] == [(0, 10), (0, 13), (3, 20)]


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "Always run the linter before committing and never push to main directly.",
            ["Always run the linter before committing", "never push to main directly."],
        ),
        (
            "Run migrations with alembic, not raw SQL, every time.",
            ["Run migrations with alembic, not raw SQL, every time."],
        ),
        ("Use ruff for every Python file you touch.", ["Use ruff for every Python file you touch."]),
        (
            "数据库变更一律用 alembic，并且必须先在预发环境跑一遍。",
            ["数据库变更一律用 alembic", "必须先在预发环境跑一遍。"],
        ),
        ("依赖用 pnpm，不要用 npm。", ["依赖用 pnpm，不要用 npm。"]),  # a preference: one instruction
        ("必须保留原来的标题顺序，别改。", ["必须保留原来的标题顺序，别改。"]),  # 别改 only repeats it
        (
            "Don't touch the migrations folder, it is generated.",
            ["Don't touch the migrations folder, it is generated."],
        ),
    ],
)
def test_a_message_is_cut_at_the_clause(text: str, clauses: list[str]) -> None:
    x = Extractor(rules(defaults()))
    x.sentences(text, 0, "user")
    assert [f.text for f in x.stated["constraint"]] == clauses


def test_figures_and_commands_dropped_and_needed_are_found_at_their_positions(audited: Path) -> None:
    """Every labelled fact of every kind (the timeouts session: a figure the person repeats, a command re-run, a
    command and a figure the summary keeps), and no loss that was not planted."""
    rows = query(
        audited,
        "SELECT c.native_id, f.event_position, f.kind, f.fact, f.fact_position, f.status, "
        "f.needed_at, f.severity FROM compaction_facts f JOIN conversations c USING (conversation_id)",
    )
    for sid, s in LABELS.items():
        for k in s["compactions"]:
            for lab in k["facts"]:
                got = [r for r in rows if r[:3] == (sid, k["position"], lab["kind"]) and lab["fact"] in r[3]]
                assert len(got) == 1, (sid, lab)
                assert got[0][4:] == (lab["fact_position"], lab["status"], lab["needed_at"], lab["severity"]), lab
    planted = {
        (sid, k["position"], f["kind"], f["fact_position"], f["needed_at"])
        for sid, s in LABELS.items()
        for k in s["compactions"]
        for f in k["facts"]
        if f["needed_at"] is not None
    }
    assert {(r[0], r[1], r[2], r[4], r[6]) for r in rows if r[6] is not None} == planted and len(planted) == 6
