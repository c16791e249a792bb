"""The topic pipeline's term cache (message_terms) and its two-core path, on real fixtures through the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.analyzers.topics import pipeline
from forensics.analyzers.topics.model import load_models
from forensics.analyzers.topics.settings import TopicSettings
from forensics.text import engine
from forensics.text.cues import Cues
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES, copy_fixture, query, run_cli

COUNT_JUDGEABLE = "SELECT count(*) FROM messages WHERE on_main_path AND role IN ('user', 'assistant')"


def _report(db: Path, out: Path, *extra: str) -> None:
    code, _, err = run_cli("report", "--db", str(db), "--out", str(out), "--only", "topics", "--format", "json", *extra)
    assert code == 0, err


def _topics(db: Path, native: str) -> list[tuple]:
    return query(
        db,
        "SELECT t.position, t.topic, t.marker FROM message_topics t JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id = ? ORDER BY 1",
        [native],
    )


def test_the_first_report_stores_every_messages_terms_and_the_next_one_reads_them(tmp_path: Path) -> None:
    src = copy_fixture("sqlite/realistic.db", tmp_path)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    _report(db, tmp_path / "r1")
    judgeable = query(db, COUNT_JUDGEABLE)[0][0]
    assert query(db, "SELECT count(*), count(DISTINCT key) FROM message_terms")[0] == (judgeable, 1)
    native = query(db, "SELECT native_id FROM conversations ORDER BY native_id LIMIT 1")[0][0]
    first = _topics(db, native)
    assert any(topic is not None for _, topic, _ in first)
    # proof that the second report reads the stored terms: emptied tokens make every message content-free (its
    # stored verdicts dropped, or the report would read them back: tests/test_topics_reuse.py)
    with open_warehouse(db) as wh:
        wh.con.execute(
            "UPDATE message_terms SET tokens = [] WHERE conversation_id = (SELECT conversation_id FROM "
            "conversations WHERE native_id = ?)",
            [native],
        )
        wh.con.execute(
            "DELETE FROM topic_verdicts WHERE conversation_id = (SELECT conversation_id FROM "
            "conversations WHERE native_id = ?)",
            [native],
        )
    _report(db, tmp_path / "r2")
    assert [topic for _, topic, _ in _topics(db, native)] == [None] * len(first)

    # the source row grows: re-ingest changes the conversation's fingerprint, so its terms are recomputed
    con = sqlite3.connect(src)
    raw = con.execute("SELECT messages FROM ai_conversations WHERE id = ?", [native]).fetchone()[0]
    msgs = json.loads(raw) + [{"role": "user", "content": "继续"}]
    con.execute(
        "UPDATE ai_conversations SET messages = ?, updated_at = '2027-01-01T00:00:00Z' WHERE id = ?",
        (json.dumps(msgs, ensure_ascii=False), native),
    )
    con.commit()
    con.close()
    ingest([src], db=db)
    _report(db, tmp_path / "r3")
    again = _topics(db, native)
    assert again[:-1] == first and again[-1][1] is None  # the old verdicts back; 继续 carries no topic
    assert query(db, "SELECT count(*) FROM message_terms")[0][0] == judgeable + 1


def test_other_judging_roles_recompute_the_terms(tmp_path: Path, seed_wh: Path) -> None:
    db = tmp_path / "w.duckdb"
    db.write_bytes(seed_wh.read_bytes())
    _report(db, tmp_path / "r1")
    user_keys = query(db, "SELECT DISTINCT key FROM message_terms")
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[topic]\nroles = ["user", "assistant"]\n')
    _report(db, tmp_path / "r2", "--config", str(cfg))
    keys = query(db, "SELECT DISTINCT key FROM message_terms")
    # the key names the segmenter too (forensics.text.engine): switching it recomputes the terms
    assert user_keys == [(f"jieba+bigram|user|v{pipeline.TERMS_VERSION}|{engine.ENGINE}",)]
    assert keys == [(f"jieba+bigram|assistant,user|v{pipeline.TERMS_VERSION}|{engine.ENGINE}",)]
    # judged assistant messages now carry their words (drivers) too
    assert (
        query(
            db,
            "SELECT count(*) FROM message_terms t JOIN messages m USING (conversation_id, position) "
            "WHERE m.on_main_path AND m.role = 'assistant' AND len(t.words) > 0",
        )[0][0]
        > 0
    )


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 12)


def test_both_cores_give_the_verdicts_of_one(tmp_path: Path, seed_wh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = pipeline.Settings(
        "jieba+bigram",
        frozenset({"user"}),
        *load_models("user"),
        Cues.from_settings(TopicSettings.of(defaults())),
        {},
        0.7,
        keep_tokens=True,
    )

    def run(workers: int) -> list[tuple]:
        db = tmp_path / f"w{workers}.duckdb"
        db.write_bytes(seed_wh.read_bytes())
        with open_warehouse(db) as wh:
            # floats to 12 digits: a sum's last bit may differ with the BLAS threads a process gets, not a verdict
            out = [
                (
                    v.conversation_id,
                    [(j.position, j.topic, _r(j.confidence), _r(j.score), j.marker, j.drivers) for j in v.judged],
                    v.keywords,
                    v.tokens,
                )
                for v in pipeline.analyze(wh.con, settings, workers=workers).verdicts
            ]
            stored = wh.con.execute("SELECT * FROM message_terms ORDER BY conversation_id, position").fetchall()
        return [out, stored]

    inline = run(1)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_MESSAGES", 0)
    monkeypatch.setattr(pipeline, "CHUNK_MESSAGES", 40)  # several tasks per conversation set, in flight at once
    assert run(2) == inline
    assert [cid for cid, *_ in inline[0]] == sorted(cid for cid, *_ in inline[0]) and len(inline[0]) == 3


def test_a_cache_table_of_another_shape_is_rebuilt(tmp_path: Path, seed_wh: Path) -> None:
    db = tmp_path / "w.duckdb"
    db.write_bytes(seed_wh.read_bytes())
    with open_warehouse(db) as wh:  # as an earlier version of the cache wrote it, with a stale row
        wh.con.execute(
            "CREATE TABLE message_terms (conversation_id VARCHAR, fingerprint VARCHAR, position INTEGER, "
            "key VARCHAR, tokens VARCHAR[])"
        )
        wh.con.execute("INSERT INTO message_terms VALUES ('x', 'y', 0, 'k', ['stale'])")
    _report(db, tmp_path / "r")
    cols = [
        c
        for (c,) in query(
            db, "SELECT column_name FROM duckdb_columns() WHERE table_name = 'message_terms' ORDER BY column_index"
        )
    ]
    assert cols[-1] == "opens_lightly" and "words" in cols
    assert query(db, "SELECT count(*) FROM message_terms")[0][0] == query(db, COUNT_JUDGEABLE)[0][0]


def test_the_scores_are_the_same_in_every_process(tmp_path: Path) -> None:
    """A string's hash, so a set's order, differs per process (PYTHONHASHSEED): no float may follow it."""
    rows = []
    for seed in ("1", "2"):
        db = tmp_path / f"w{seed}.duckdb"
        ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "seed" / "seed.db"], db=db)
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "forensics",
                "report",
                "--db",
                str(db),
                "--out",
                str(tmp_path / seed),
                "--only",
                "topics",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "CI": "true", "PYTHONHASHSEED": seed},
        )
        assert r.returncode == 0, r.stderr
        rows.append(
            query(
                db,
                "SELECT c.native_id, t.position, t.topic, t.confidence, t.score FROM message_topics t "
                "JOIN conversations c USING (conversation_id) ORDER BY 1, 2",
            )
        )
    assert rows[0] == rows[1] and len(rows[0]) > 50


def test_the_judge_pass_reads_the_rows_the_terms_were_cut_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first report keeps the rows its fill pass read (``pipeline.Kept``) and judges from them: the same frames,
    column for column and row for row, as ``messages_sql`` run again; a chunk with a conversation not kept reads the
    query; the table is dropped once the verdicts are read."""
    src = copy_fixture("sqlite/realistic.db", tmp_path)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    monkeypatch.setattr(pipeline, "CHUNK_MESSAGES", 7)  # fill's chunks and the judge's differ (their counts do)
    with open_warehouse(db) as wh:
        con = wh.con
        kept = pipeline.Kept()
        key = f"jieba+bigram|user|v{pipeline.TERMS_VERSION}|{engine.ENGINE}"
        pipeline.fill(con, key, "jieba+bigram", frozenset({"user"}), 1, kept)
        chunks = list(
            pipeline._chunks(con, f"SELECT conversation_id, count(*) FROM {pipeline.TABLE} GROUP BY 1 ORDER BY 1")
        )
        assert len(chunks) > 2 and all(kept.covers(c.ids) for c in chunks)
        for c in chunks:
            again = pipeline._chunk_rows(con, c, joined=True)
            read = pipeline._chunk_rows(con, c, joined=True, kept=kept)
            assert again.height > 0 and read.schema == again.schema and read.equals(again)
        some = pipeline.Kept()  # the first conversation's rows only: the others read the query
        first = pipeline._chunk_rows(con, chunks[0], joined=False)
        some.add(con, first.filter(pl.col("conversation_id") == chunks[0].ids[0]))
        both = pipeline.Chunk(chunks[0].ids[:1] + chunks[1].ids, chunks[0].first, chunks[1].last)
        assert some.covers(chunks[0].ids[:1]) and not some.covers(both.ids)
        assert pipeline._chunk_rows(con, both, joined=True, kept=some).equals(
            pipeline._chunk_rows(con, both, joined=True)
        )
        some.drop(con)
        settings = pipeline.Settings(
            "jieba+bigram",
            frozenset({"user"}),
            *load_models("user"),
            Cues.from_settings(TopicSettings.of(defaults())),
            {},
            0.7,
            keep_tokens=False,
        )
        con.execute("DELETE FROM message_terms")
        assert len(list(pipeline.analyze(con, settings, workers=1).verdicts)) == len(
            {cid for c in chunks for cid in c.ids}
        )
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [pipeline.ROWS]).fetchall()[
            0
        ][0]
