"""The mutation sweep's fixed seeded sample (issue 45, part 5; tests/mutations.py): the first fixture of every
format, three of its mutation classes drawn by a seeded generator, each mutated file ingested alone into a
fresh warehouse. None fails its source for one bad record, none is "imported" with nothing accounted for, none
loses messages without a quarantined or skipped record or a counted value saying so, no traceback. The full
sweep (every class on every fixture): ``python -m bench.mutations``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, query, run_cli
from tests.mutations import DIGITS, Outcome, first_of_each_format, sweep, text_mutations

SAMPLE = 3


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    return sweep(tmp_path_factory.mktemp("mutations"), first_of_each_format(), sample=SAMPLE, masked=False)


def test_no_sampled_mutation_fails_a_source_or_imports_nothing_silently(
    outcomes: list[Outcome], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [o for o in outcomes if o.problem]
    with capsys.disabled():
        print(f"\nmutation sample: {len(outcomes)} files, {len(bad)} problems")
    assert not bad, "\n".join(f"{o.case.fmt} {o.case.mutation} {o.case.fixture}: {o.problem}" for o in bad)


def test_the_sample_covers_every_format_and_many_classes(outcomes: list[Outcome]) -> None:
    formats = {fmt for fmt, _ in first_of_each_format()}
    assert {o.case.fmt for o in outcomes} == formats
    assert len({o.case.mutation for o in outcomes}) >= 15
    assert len(outcomes) >= 2 * len(formats)


def test_the_mutations_are_seeded(tmp_path: Path) -> None:
    import random

    data = (FIXTURES / "sessions" / "sess_0974a9ce8167.jsonl").read_bytes()
    one = dict(text_mutations(data, random.Random("x")))
    two = dict(text_mutations(data, random.Random("x")))
    assert one == two
    assert DIGITS.encode() in one["digits-5000"] and b"\\ud800" in one["surrogate-escape"]
    changed = [n for n, raw in one.items() if raw is not None and raw != data]
    assert len(changed) >= 15


def test_a_5000_digit_number_in_one_conversation_of_a_chatgpt_export_costs_only_that_value(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "agents" / "chatgpt" / "export" / "conversations.json").read_bytes())
    doc[1]["create_time"] = "__BIG__"
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps(doc).replace('"__BIG__"', DIGITS))
    code, out, err = run_cli("ingest", str(src), "--db", str(tmp_path / "w.duckdb"))
    assert (code, err) == (0, "")
    # as the good file: 2 conversations, the third (no mapping) quarantined; the number is a time NULLed, counted
    assert query(tmp_path / "w.duckdb", "SELECT count(*) FROM conversations") == [(2,)]
    assert query(tmp_path / "w.duckdb", "SELECT count(*) FROM quarantine") == [(1,)]
    assert "values set to NULL: timestamp x1" in out


def test_a_lone_surrogate_in_a_cline_task_is_replaced_and_counted(tmp_path: Path) -> None:
    task = FIXTURES / "agents" / "cline" / "saoudrizwan.claude-dev" / "tasks" / "1730000000000"
    folder = tmp_path / "tasks" / task.name
    folder.parent.mkdir()
    import shutil

    shutil.copytree(task, folder)
    history = folder / "api_conversation_history.json"
    doc = json.loads(history.read_bytes())
    doc[2]["content"] = [{"type": "text", "text": "before __S__ after"}]
    history.write_text(json.dumps(doc).replace("__S__", "\\ud800"))
    code, out, err = run_cli("ingest", str(history), "--db", str(tmp_path / "w.duckdb"))
    assert (code, err) == (0, "")
    assert "1 values of lone surrogate replaced by U+FFFD" in out
    texts = [t for (t,) in query(tmp_path / "w.duckdb", "SELECT content FROM messages")]
    assert "before \ufffd after" in texts


def test_a_sqlite_cell_of_raw_surrogate_bytes_costs_its_row_only(tmp_path: Path) -> None:
    db_file = tmp_path / "chats.db"
    con = sqlite3.connect(db_file)
    con.execute("CREATE TABLE chats (id TEXT PRIMARY KEY, title TEXT, messages TEXT)")
    for n in range(3):
        msgs = [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
        con.execute("INSERT INTO chats VALUES (?, ?, ?)", (f"c{n}", f"t{n}", json.dumps(msgs)))
    con.execute("UPDATE chats SET title = CAST(CAST(title AS BLOB) || x'eda080' AS TEXT) WHERE id = 'c1'")
    con.commit()
    con.close()
    code, out, err = run_cli("ingest", str(db_file), "--db", str(tmp_path / "w.duckdb"))
    assert (code, err) == (0, "")
    assert query(tmp_path / "w.duckdb", "SELECT count(*) FROM messages") == [(6,)]
