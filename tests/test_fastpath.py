"""The fast decoder gives exactly what orjson + normalize give, down to the warehouse rows."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import duckdb
import orjson
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics import ingest
from forensics.formats.kit import duckparse, fastpath
from forensics.formats.kit.records import (
    EXIT_LOWER,
    EXIT_STATUS,
    EXIT_STATUS_JSON,
    JsonText,
    failed_exit,
    normalize,
    plain,
    starts_like_error,
)
from tests.conftest import FIXTURES

TRICKY = st.sampled_from(
    [
        "",
        " ",
        "\n",
        "\t",
        "  \n ",
        "error",
        "Error:",
        "errors",
        "ERROR",
        "fatal",
        "Traceback",
        "tracebacks",
        "错误",
        "失败",
        "\u3000",
        "\xa0",
        "\x0b",
        "\x1c",
        "\\",
        '"',
        "\u212a",
        "é",
        "继续",
        "continue",
        "\x00",
        "\ud7ff",
        "/",
        "ok",
    ]
)
TEXT = st.lists(st.one_of(TRICKY, st.text(max_size=12)), max_size=6).map("".join)
CALL = st.fixed_dictionaries(
    {
        "id": st.text(max_size=5),
        "type": st.just("function"),
        "function": st.fixed_dictionaries({"name": st.text(max_size=5), "arguments": TEXT}),
    }
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "human", "model", "function"])},
    optional={
        "content": st.one_of(
            TEXT,
            st.none(),
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(["text", "tool_use", "tool_result"]),
                        "text": TEXT,
                        "id": st.text(max_size=4),
                        "content": TEXT,
                    }
                ),
                max_size=3,
            ),
        ),
        "tool_calls": st.lists(CALL, max_size=4),
        "tool_call_id": st.text(max_size=5),
        "is_error": st.booleans(),
        "timestamp": st.one_of(st.integers(0, 2 * 10**12), st.text(max_size=8)),
        "id": st.one_of(st.integers(), st.text(max_size=4)),
    },
)


@settings(max_examples=400, deadline=None)
@given(MESSAGE, st.booleans())
def test_fast_message_equals_normalize(m: dict, ascii_only: bool) -> None:
    raw = json.dumps(m, ensure_ascii=ascii_only).encode("utf-8")
    try:
        fast = fastpath.message(fastpath.decode_entry(raw))
    except fastpath.Unusual:
        return  # the caller takes the general path: equal by construction
    slow = normalize(orjson.loads(raw))
    assert (fast.role, plain(fast.content), fast.calls, fast.results, fast.tool_call_id, fast.is_error, fast.ts) == (
        slow.role,
        slow.content,
        slow.calls,
        slow.results,
        slow.tool_call_id,
        slow.is_error,
        slow.ts,
    )


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_error_start_is_decided_alike_on_raw_json(text: str) -> None:
    raw = json.dumps(text, ensure_ascii=False).encode("utf-8")
    assert starts_like_error(JsonText(raw)) == starts_like_error(text)


def test_duckdb_unescapes_json_text_as_orjson_does() -> None:
    texts = ["a\nb", 'q"uote', "back\\slash\\\\", "tab\tend", "/slash", "中文\r\n", " \f\b", "", "e\u0301"]
    raws = [json.dumps(t, ensure_ascii=False) for t in texts]
    got = duckdb.connect().execute("SELECT json_extract_string(unnest(?::VARCHAR[]), '$')", [raws]).fetchall()
    assert [g[0] for g in got] == texts


EXIT_PIECES = [
    "Process exited with code 2",
    "process exited with code 0",
    "Exit code: 1",
    "EXIT CODE: -1",
    "exit status: 127",
    "[The command completed with exit code 1.]",
    "[Command finished with exit code 0]",
    "exıt code: 3",  # dotless i: Python's IGNORECASE reads it as i
    "EXİT CODE: 4",
    "exit code 5",
    "exited",
    "Exit",
    "xit code: 1",
    "e x i t",
    "\n",
    "\r\n",
    " ",
    "\t",
    "ok",
    "中文",
    '"',
    "\\",
    "code: 1",
    "\u212a",
]


def _oracle(text: str | JsonText) -> bool:
    """``failed_exit`` as it was: the pattern searched on every text."""
    m = (EXIT_STATUS_JSON if type(text) is JsonText else EXIT_STATUS).search(text)  # type: ignore[arg-type]
    return m is not None and int(m.group(1)) not in (0, -1)


def test_failed_exit_skips_only_texts_the_pattern_cannot_match() -> None:
    rng = random.Random(46)
    flagged = 0
    for _ in range(20_000):
        pieces = rng.choices(EXIT_PIECES, k=rng.randint(0, 6))
        text = "".join(p.swapcase() if rng.random() < 0.2 else p for p in pieces)
        raw = JsonText(json.dumps(text, ensure_ascii=False).encode("utf-8"))
        assert failed_exit(text) == _oracle(text), text
        if b"\\u" not in raw:  # a JsonText never holds a \u escape (the fast decoder's contract)
            assert failed_exit(raw) == _oracle(raw), raw
        flagged += _oracle(text)
    assert 500 < flagged < 19_500  # the mixes hold both answers


def test_what_ignorecase_reads_as_exit_is_folded() -> None:
    """``failed_exit`` looks for "exit" in the text lower-cased (EXIT_LOWER): every character Python's IGNORECASE
    matches to one of its letters must lower-case to one of those."""
    for k, letter in enumerate("exit"):
        same = re.compile(letter, re.IGNORECASE)
        for c in range(sys.maxunicode + 1):
            if same.fullmatch(chr(c)):
                low = chr(c).lower()
                assert any(w[k : k + len(low)] == low for w in EXIT_LOWER), hex(c)


def test_unescape_reads_json_text_as_orjson_does() -> None:
    texts = [
        "a\nb",
        'q"uote',
        "back\\slash\\\\",
        "tab\tend",
        "/slash",
        "中文\r\n",
        " \f\b",
        "",
        "e\u0301",
        "x" * 70_000,
    ]
    raws = [json.dumps(t, ensure_ascii=False) for t in texts] + ['"a\\/b"', None]
    msg = pl.DataFrame(
        {"content": ["kept", *[None] * (len(raws) - 1)], "content_json": raws, "seq": list(range(len(raws)))},
        schema={"content": pl.String, "content_json": pl.String, "seq": pl.Int32},
    )
    out = duckparse.unescape(msg)
    assert out["content"].to_list() == ["kept", *texts[1:], "a/b", None]
    assert out["content_json"].null_count() == out.height and out["seq"].to_list() == msg["seq"].to_list()


def test_rows_with_invalid_utf8_take_the_general_path() -> None:
    assert fastpath.valid_utf8([b'[{"role":"user","content":"ok"}]'])
    assert not fastpath.valid_utf8([b"ok", b'[{"role":"user","x":"\xff"}]'])


def _dump(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT * EXCLUDE ({skip}) FROM {t} ORDER BY ALL").fetchall()
            for t, skip in (
                ("conversations", "conversation_id"),
                ("messages", "conversation_id"),
                ("tool_calls", "conversation_id"),
                ("quarantine", "run_id, source_id"),
            )
        }
    finally:
        con.close()


@pytest.mark.parametrize(
    "source", ["seed/seed.db", "sqlite/realistic.db", "anthropic/anthropic.db", "sessions", "bad/bad_lines.jsonl"]
)
def test_warehouse_is_the_same_with_and_without_the_fast_path(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest([FIXTURES / source], db=tmp_path / "fast.duckdb", workers=1)
    monkeypatch.setattr(fastpath, "valid_utf8", lambda chunks: False)  # every record takes orjson + normalize
    ingest([FIXTURES / source], db=tmp_path / "general.duckdb", workers=1)
    assert _dump(tmp_path / "fast.duckdb") == _dump(tmp_path / "general.duckdb")
