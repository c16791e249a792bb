"""A topic report keeps its corpus state and every conversation's verdicts (``topics.store``, issue 28 part 3):
an unchanged warehouse is judged once, a changed conversation alone is judged again, and what is read back
equals what a report from scratch computes."""

from __future__ import annotations

import json
import lzma
import sqlite3
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.analyzers.topics import pipeline, store
from forensics.analyzers.topics.model import load_models
from forensics.analyzers.topics.settings import TopicSettings
from forensics.text.cues import Cues
from forensics.warehouse import open_warehouse

SETTINGS = pipeline.Settings(
    "jieba+bigram",
    frozenset({"user"}),
    *load_models("user"),
    Cues.from_settings(TopicSettings.of(defaults())),
    {},
    0.7,
    keep_tokens=True,
)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 12)  # a sum's last bit may differ from one process to the next


def _run(db: Path, settings: pipeline.Settings = SETTINGS) -> tuple[pipeline.Analysis, list[tuple]]:
    with open_warehouse(db) as wh:
        analysis = pipeline.analyze(wh.con, settings, workers=1)
        out = [
            (
                v.conversation_id,
                [(j.position, j.topic, _r(j.confidence), _r(j.score), j.marker, j.drivers) for j in v.judged],
                v.keywords,
                v.labels,
                v.tokens,
            )
            for v in analysis.verdicts
        ]
    return analysis, out


@pytest.fixture
def realistic(tmp_path: Path) -> tuple[Path, Path]:
    """Generated assistant logs large enough for a corpus topic model (60 conversations, the floor test's)."""
    src = tmp_path / "gen5.db"
    src.write_bytes(lzma.decompress((Path(__file__).parent / "data" / "topics" / "gen5.db.xz").read_bytes()))
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    return src, db


def _grow(src: Path, db: Path) -> str:
    """One conversation of the source gets one more user message; re-imported. Its native id."""
    con = sqlite3.connect(src)
    native, raw = con.execute("SELECT id, messages FROM ai_conversations ORDER BY id LIMIT 1").fetchone()
    msgs = json.loads(raw) + [{"role": "user", "content": "Can you also add a retry to the upload client?"}]
    con.execute(
        "UPDATE ai_conversations SET messages = ?, updated_at = '2027-01-01T00:00:00Z' WHERE id = ?",
        (json.dumps(msgs), native),
    )
    con.commit()
    con.close()
    ingest([src], db=db)
    return str(native)


def test_an_unchanged_warehouse_reads_every_verdict_back_as_a_fresh_run_computes_it(
    realistic: tuple[Path, Path], tmp_path: Path
) -> None:
    _, db = realistic
    fresh = tmp_path / "fresh.duckdb"
    fresh.write_bytes(db.read_bytes())
    first, computed = _run(db)
    again, read_back = _run(db)
    assert (first.reused, first.refitted) == (0, True) and first.conversations == len(computed)
    assert (again.reused, again.refitted) == (len(computed), False)
    assert first.corpus is not None  # the stored model comes back whole
    assert again.corpus is not None and again.corpus.vocabulary == first.corpus.vocabulary
    assert read_back == computed
    assert _run(fresh)[1] == read_back
    other = pipeline.Settings(**{**SETTINGS.__dict__, "min_confidence": 0.8})  # another setting: judged anew
    assert _run(db, other)[0].reused == 0


def test_verdicts_judged_by_other_code_are_judged_again(
    realistic: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warehouse analysed by an earlier release (or before an edit of the judge) keeps its verdicts under that
    code's digest: the same settings and corpus state with other code judge every conversation again."""
    _, db = realistic
    first, computed = _run(db)
    assert _run(db)[0].reused == len(computed)
    monkeypatch.setattr(pipeline, "code_digest", lambda: "another release")
    again, judged = _run(db)
    assert (again.reused, again.refitted) == (0, False) and judged == computed


def test_a_changed_conversation_alone_is_judged_again_with_the_kept_corpus_state(
    realistic: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, db = realistic
    monkeypatch.setattr(store, "REUSE_MIN_MESSAGES", 0)  # the fixture is small: let it keep its corpus state
    monkeypatch.setattr(store, "REFIT_SHARE", 0.5)
    first, _ = _run(db)
    _grow(src, db)
    grown, judged = _run(db)
    assert (grown.reused, grown.refitted) == (first.conversations - 1, False)
    with open_warehouse(db) as wh:  # from scratch with the same corpus state: the same verdicts
        wh.con.execute(f"DELETE FROM {store.VERDICT_TABLE}")
    scratch, again = _run(db)
    assert (scratch.reused, scratch.refitted) == (0, False) and again == judged


def test_a_corpus_that_moved_more_than_the_share_is_fitted_again(realistic: tuple[Path, Path]) -> None:
    src, db = realistic
    first, _ = _run(db)
    _grow(src, db)  # the fixture is below REUSE_MIN_MESSAGES: any change refits, as a fresh warehouse would
    grown, _ = _run(db)
    assert (grown.reused, grown.refitted) == (0, True)
    with open_warehouse(db) as wh:
        assert wh.con.execute(f"SELECT count(*), count(DISTINCT key) FROM {store.CORPUS_TABLE}").fetchall() == [(1, 1)]
        assert wh.con.execute(f"SELECT count(DISTINCT key) FROM {store.VERDICT_TABLE}").fetchall() == [(1,)]


def test_the_digest_of_settings_is_stable_and_sees_every_setting() -> None:
    assert store.digest(SETTINGS) == store.digest(pipeline.Settings(**SETTINGS.__dict__))
    changed = Cues(**{**SETTINGS.cues.__dict__, "social": SETTINGS.cues.social | {"hiya"}})
    assert store.digest(SETTINGS) != store.digest(pipeline.Settings(**{**SETTINGS.__dict__, "cues": changed}))
