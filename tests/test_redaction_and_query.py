"""Secrets never leave through reports, query output or `show`; `forensics query` only reads."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from forensics import ingest
from forensics.analyzers import named_queries
from forensics.commands.export import export, open_export, tables
from forensics.kernel.redact import PLACEHOLDER, install_sql, redact, redact_snippet
from tests.conftest import FIXTURES, run_cli

_spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
make_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_fixtures)
SECRETS = make_fixtures.SECRETS


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("leaky")
    # kept at ingest (--keep-secrets): these tests hold the second line, the mask every output applies
    ingest([FIXTURES / "secrets" / "secrets.db", FIXTURES / "seed" / "seed.db"], db=d / "w.duckdb", keep_secrets=True)
    return d / "w.duckdb"


def _assert_clean(text: str) -> None:
    text = text.lower()  # terms derived from the text are lower-cased: a secret must not survive that way either
    leaked = [name for name, secret in [*SECRETS.items(), ("password part", "hunter2")] if secret.lower() in text]
    assert not leaked


def test_reports_never_contain_planted_secrets(leaky: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("report", "--db", str(leaky), "--out", str(tmp_path / "r"))
    assert code == 0, err
    for name in ("report.md", "report.html", "metrics.json"):
        _assert_clean((tmp_path / "r" / name).read_text())
    assert "[REDACTED]" in (tmp_path / "r" / "metrics.json").read_text()  # the title was masked, not lost


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_query_output_is_masked(leaky: Path, fmt: str) -> None:
    code, out, err = run_cli(
        "query",
        "SELECT title, content, arguments FROM messages LEFT JOIN tool_calls "
        "USING (conversation_id, seq) JOIN conversations USING (conversation_id)",
        "--db",
        str(leaky),
        "--format",
        fmt,
    )
    assert code == 0, err
    _assert_clean(out)
    assert "REDACTED" in out


def test_show_is_masked(leaky: Path) -> None:
    code, out, _ = run_cli("show", "leaky01", "--db", str(leaky))
    assert code == 0
    _assert_clean(out)
    assert "[3] tool (" in out and "[REDACTED]" in out


def test_a_snippet_that_is_only_a_secret_is_dropped() -> None:
    assert redact_snippet(SECRETS["openai"]) == ""
    assert redact_snippet(f"  {SECRETS['github']}\n") == ""
    assert redact_snippet(f"key {SECRETS['openai']}") == "key [REDACTED]"
    assert redact("password: 'p@ss'") == "password: '[REDACTED]'"
    assert redact("Authorization: Bearer abcdefghijklmnop1234") == "Authorization: Bearer [REDACTED]"
    assert redact("no secrets here, just sk-short and AKIA123") == "no secrets here, just sk-short and AKIA123"


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM messages",
        "DROP TABLE messages",
        "SELECT 1; UPDATE messages SET content = ''",
        "CREATE TABLE x AS SELECT 1",
        "ATTACH 'other.duckdb'",
        "COPY messages TO 'out.csv'",
    ],
)
def test_writing_sql_is_refused_and_the_warehouse_is_unchanged(leaky: Path, sql: str) -> None:
    before = _digest(leaky)
    code, out, err = run_cli("query", sql, "--db", str(leaky))
    assert code == 2 and out == ""
    assert err.startswith("forensics: refused:") and err.count("\n") == 1
    assert _digest(leaky) == before


@pytest.mark.parametrize(
    "sql",
    [
        "PRAGMA enable_profiling",
        "SET profiling_output = 'p.json'",
        "EXPLAIN ANALYZE COPY (SELECT 1) TO 'e.csv'",
        "IMPORT DATABASE 'dump'",
        "EXPORT DATABASE 'dump'",
        "UPDATE EXTENSIONS",
        "INSTALL httpfs",
        "CALL dbgen(sf = 0.01)",
        "SELECT 1; PRAGMA enable_profiling = 'json'; PRAGMA profiling_output = 'q.json'; SELECT 2",
    ],
)
def test_no_statement_writes_a_file(leaky: Path, tmp_path: Path, sql: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before it runs, in one line (exit 2): nothing appears in the working folder."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("query", sql, "--db", str(leaky))
    assert code == 2 and out == "" and err.startswith("forensics: refused:") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_file_function_inside_a_select_finds_the_connection_sealed(leaky: Path, tmp_path: Path) -> None:
    """The second line: a SELECT is allowed, but the sealed connection reaches no file beside the warehouse."""
    (tmp_path / "other.csv").write_text("a\n1\n")
    code, out, err = run_cli("query", f"SELECT * FROM read_csv('{tmp_path / 'other.csv'}')", "--db", str(leaky))
    assert code == 2 and out == "" and "query failed" in err and "disabled" in err and err.count("\n") == 1


def test_schema_pragmas_and_plans_still_read(leaky: Path) -> None:
    for sql in (
        "PRAGMA table_info('messages')",
        "EXPLAIN SELECT count(*) FROM messages",
        "SET VARIABLE n = 2; SELECT getvariable('n') AS n",
    ):
        code, out, err = run_cli("query", sql, "--db", str(leaky), "--format", "csv")
        assert code == 0, err


def test_named_queries_are_listed_and_run(leaky: Path) -> None:
    code, out, _ = run_cli("query", "--list")
    assert code == 0
    names = {line.split()[0] for line in out.splitlines()}
    assert {"baseline", "messages_by_position", "tool_results", "quarantine", "import_runs"} <= names
    code, out, _ = run_cli("query", "baseline", "--db", str(leaky), "--format", "csv")
    lines = out.strip().splitlines()
    assert lines[0].startswith("conversation_id,native_id,title,provider,model,created_at,messages,")
    assert len(lines) == 1 + 4
    code, _, err = run_cli("query", "nosuchquery", "--db", str(leaky))
    assert code == 2 and "no named query 'nosuchquery'" in err


def test_parquet_output_needs_a_file(leaky: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("query", "baseline", "--db", str(leaky), "--format", "parquet")
    assert code == 2 and "--out FILE" in err
    code, _, _ = run_cli(
        "query", "baseline", "--db", str(leaky), "--format", "parquet", "--out", str(tmp_path / "b.pq")
    )
    assert code == 0 and pl.read_parquet(tmp_path / "b.pq").height == 4


def test_a_derived_table_before_any_report_is_a_clear_error(tmp_path: Path) -> None:
    ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "w.duckdb")
    code, out, err = run_cli("query", "sentinel_models", "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "appear after `forensics report`" in err
    code, _, err = run_cli("query", "SELECT nonsense(1)", "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and "query failed" in err


def test_list_columns_go_out_as_json_in_csv(leaky: Path) -> None:
    code, out, err = run_cli(
        "query", "SELECT 'a' AS k, [1, 2] AS xs, ['x', 'y,z'] AS names", "--db", str(leaky), "--format", "csv"
    )
    assert code == 0, err
    assert out.splitlines() == ["k,xs,names", 'a,"[1, 2]","[""x"", ""y,z""]"']


def test_bytes_go_out_as_hex_in_text_formats(leaky: Path) -> None:
    sql = "SELECT [encode('x')] AS b, {'k': encode('y')} AS s, encode('z') AS z"
    code, out, err = run_cli("query", sql, "--db", str(leaky), "--format", "json")  # polars' writer panicked here
    assert code == 0, err
    assert out == '[{"b":"[\\"78\\"]","s":"{\\"k\\": \\"79\\"}","z":"7a"}]\n'
    code, out, err = run_cli("query", sql, "--db", str(leaky), "--format", "csv")
    assert out.splitlines() == ["b,s,z", '"[""78""]","{""k"": ""79""}",7a']


EDGES = [  # each beside the boundary of a rule
    f"我的密钥是{SECRETS['openai']}，别外传",  # straight after Chinese text: ASCII word boundary
    "AKIA" + "A" * 12,
    "AKIA" + "A" * 11,
    "xAKIA" + "A" * 16,  # a key id cut to 16 characters is still masked
    "token=" + "a" * 24,
    "token=" + "a" * 23,
    "api-key: 'ZmFrZS1rZXktZmFrZS1rZXktZmFrZS1rZXk=='",
    "password: abc，下一句",
    'PASSWD="x y"',
    "pwd:\t s3cret;rest",
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\nafter",
    "-----BEGIN PRIVATE KEY-----\nunterminated",
    "Bearer   abcdefghijklmnop",
    "bearer abcdefghijklmno",
    "  [REDACTED] ",
    "password: [REDACTED]",
    "",
    "plain text",
    # RE2 folds case inside classes ('ſ' ~ 's', Kelvin sign ~ 'k'): a value class must not swallow the next keyword
    "token=" + "Z" * 32 + "ſpassword=hunter2",
    "Bearer " + "Z" * 16 + "\u212akey=" + "q" * 40,
    '{"cmd": "export PASSWORD=\\"p@ss\\" TOKEN=\\"' + "9f" * 16 + '\\""}',  # quotes escaped inside JSON
]


def test_sql_masking_equals_python_masking(leaky: Path) -> None:
    """The export masks in DuckDB (RE2), reports in Python (re): both give the same text, cell for cell."""
    con = duckdb.connect(str(leaky), read_only=True)
    install_sql(con)
    texts = [
        r[0]
        for r in con.execute(
            "SELECT content FROM messages UNION ALL SELECT arguments FROM tool_calls "
            "UNION ALL SELECT title FROM conversations"
        ).fetchall()
    ] + EDGES
    sql = [r[0] for r in con.execute("SELECT forensics_redact(t) FROM unnest(?::VARCHAR[]) u(t)", [texts]).fetchall()]
    assert sql == [None if t is None else redact_snippet(t) for t in texts]
    # the fixture: 6 messages, 3 arguments, 1 title; 13 edges
    assert sum(t != m for t, m in zip(texts, sql)) == 10 + 13
    assert redact_snippet(EDGES[0]) == "我的密钥是[REDACTED]，别外传"
    assert redact_snippet(EDGES[2]) == EDGES[2] and redact_snippet(EDGES[5]) == EDGES[5]  # one character short
    assert redact_snippet(EDGES[7]) == "password: [REDACTED]，下一句"
    assert redact_snippet(EDGES[-3]) == "token=[REDACTED]ſpassword=[REDACTED]"
    assert redact_snippet(EDGES[-1]) == '{"cmd": "export PASSWORD=\\"[REDACTED]\\" TOKEN=\\"[REDACTED]\\""}'


def test_evidence_is_masked_once_whole_then_cut(leaky: Path) -> None:
    """A report's evidence is masked once, in its query (RE2, held to Python's mask above), before it is cut: each
    text is the whole text masked then cut, a secret across the cut masked whole, and none leaks."""
    from forensics.report import evidence

    con = duckdb.connect(str(leaky), read_only=True)
    install_sql(con)
    rows = con.execute("SELECT conversation_id, position, content FROM messages WHERE on_main_path").fetchall()
    args = con.execute("SELECT conversation_id, position, arguments FROM tool_calls ORDER BY call_index").fetchall()
    cited: dict[str, set[int]] = {}
    for cid, pos, _ in rows:
        cited.setdefault(cid, set()).add(pos)
    for cut in (12, 40, evidence.TEXT_MAX):
        got = evidence.fetch(con, cited, text_max=cut)
        shown = {(cid, p): m for cid, ms in got.items() for p, m in ms.items()}
        assert {(cid, p): m.text for (cid, p), m in shown.items()} == {
            (cid, p): redact(t or "")[:cut] for cid, p, t in rows
        }
        assert sorted(c.arguments for m in shown.values() for c in m.calls) == sorted(
            redact(a or "")[: evidence.ARGS_MAX] for _, _, a in args
        )
        for m in shown.values():
            _assert_clean(m.text + "".join(c.arguments for c in m.calls))
    # the fixture: 6 of its texts hold a secret; cut at 40 characters, 4 of them differ from the cut text masked
    # (a secret across the cut, shown whole as the mask rather than in part)
    assert sum(redact(t or "") != (t or "") for *_, t in rows) == 6
    assert sum(redact(t or "")[:40] != redact((t or "")[:40]) for *_, t in rows) == 4


def test_scrubbing_in_sql_masks_then_drops_placeholders(leaky: Path) -> None:
    """What analyzers cut terms from: secrets masked, then every placeholder (the mask too) a space; a text with
    neither comes back as it was."""
    con = duckdb.connect(str(leaky), read_only=True)
    install_sql(con)
    texts = [
        r[0] for r in con.execute("SELECT content FROM messages UNION ALL SELECT arguments FROM tool_calls").fetchall()
    ]
    n = len(texts)
    texts += EDGES + ["see [REDACTED_TEXT len=3021 sha=ab12] and <redacted>", "[Redacted] sk-proj-" + "a" * 30, None]
    sql = [r[0] for r in con.execute("SELECT forensics_scrubbed(t) FROM unnest(?::VARCHAR[]) u(t)", [texts]).fetchall()]
    placeholder = re.compile(PLACEHOLDER, re.ASCII)
    assert sql == [None if t is None else placeholder.sub(" ", redact(t)) for t in texts]
    assert sql[-3:-1] == ["see   and  ", "   "]
    # 9 of the fixture's messages and arguments; 15 of the 21 edges, and the two above
    assert [sum(t != m for t, m in zip(texts[:n], sql)), sum(t != m for t, m in zip(texts[n:], sql[n:]))] == [9, 15 + 2]


def test_export_masks_every_text_column_and_loses_no_row(leaky: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"  # a line that is not UTF-8, holding a key
    bad.write_bytes(
        b'{"type": "user", "message": {"role": "user", "content": "ok"}}\n'
        b"not json \xff\xfe " + SECRETS["github"].encode() + b" tail\n"
    )
    db = tmp_path / "w.duckdb"
    shutil.copy(leaky, db)
    ingest([bad], db=db)
    assert run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")[0] == 0
    export(db, tmp_path / "lake")
    wh, lake = duckdb.connect(str(db), read_only=True), open_export(tmp_path / "lake")
    text = []
    for table in tables(wh):
        n = wh.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        assert lake.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] == n, table
        text.append(str(lake.execute(f"SELECT * FROM {table}").fetchall()))
    _assert_clean("\n".join(text))
    assert "[REDACTED]" in "\n".join(text)
    raw = lake.execute("SELECT raw FROM quarantine WHERE reason = 'invalid UTF-8'").fetchall()[0][0]
    assert raw == b"not json \xff\xfe [REDACTED] tail"  # masked, every other byte kept
    content = lake.execute(
        "SELECT m.content FROM messages m JOIN conversations c USING (conversation_id) "
        "WHERE c.native_id = 'leaky01' AND m.seq = 1"
    ).fetchall()[0][0]
    assert content == "部署失败了，我的 key 是 [REDACTED]，帮我看看 config.toml"
    # JSON stays JSON: the seed's 314 calls and leaky01's 3, keys cut short and escaped quotes included
    assert lake.execute("SELECT bool_and(json_valid(arguments)), count(*) FROM tool_calls").fetchall() == [(True, 317)]
    terms = str(lake.execute("SELECT tokens, names, words FROM message_terms").fetchall()).lower()
    assert "redacted" not in terms and "sk-proj" not in terms  # cut from scrubbed text, after the 2000-char cut
    for named in named_queries():  # the named queries run on the masked dataset
        lake.execute(named.sql).fetchall()


def test_query_masks_nested_values_bytes_and_errors(leaky: Path, tmp_path: Path) -> None:
    sql = "SELECT {'c': content} AS s, [[content]] AS l, encode(content) AS b FROM messages"
    for fmt in ("json", "parquet"):
        out = tmp_path / f"q.{fmt}"
        code, stdout, err = run_cli("query", sql, "--db", str(leaky), "--format", fmt, "--out", str(out))
        assert code == 0, err
        _assert_clean(str(pl.read_parquet(out).rows()) if fmt == "parquet" else out.read_text())
    code, _, err = run_cli(
        "query", "SELECT content::INTEGER FROM messages WHERE content LIKE '%sk-%'", "--db", str(leaky)
    )
    assert code == 2 and err.startswith("forensics: query failed:") and "[REDACTED]" in err
    _assert_clean(err)


def test_redact_skips_only_rules_that_cannot_match() -> None:
    """``redact`` runs a rule only when a text every match of it holds is there: the same output as every rule run
    in turn, on the fixtures' secrets and the edges in 5,000 mixes of case, neighbours and order."""
    import random

    from forensics.kernel import redact as module

    def every_rule(t: str) -> str:
        for rx, mask, *_ in module._COMPILED:
            t = rx.sub(mask, t)
        return t

    rng = random.Random(5)
    pieces = [
        *SECRETS.values(),
        *EDGES,
        "https://user:pa55@host.com/x",
        "postgres:\\/\\/u:pw9@db",
        "xoxb-1234-abcdefgh",
        "Authorization: Basic dXNlcjpwYXNz",
        "glpat-abcdefgh12345",
        "AIza" + "x" * 20,
        "eyJhbGciOiJIUzI1NiJ9.e30.s",
        "sk_live_abcdefgh123",
        "ghr_abcdefgh1234",
        "ASIA" + "B" * 16,
        "DB_PASSWORD = 'x'",
        "CREDENTIALS:" + "z" * 25,
    ]
    mixes = []
    for _ in range(5000):
        parts = [
            "".join(c.upper() if rng.random() < 0.3 else c for c in p) if rng.random() < 0.3 else p
            for p in rng.choices(pieces, k=rng.randint(1, 3))
        ]
        mixes.append("".join(rng.choice([" ", "", "\n", "中文", '"', "=", ":", "/"]) + p for p in parts))
    assert [redact(t) for t in mixes] == [every_rule(t) for t in mixes]
    assert sum(redact(t) != t for t in mixes) == 4227
    # a text holding no rule's needed text (``_ANY_NEED``, ``_ANY_NEED_FOLDED``) is given back unscanned: no rule matches it
    plain = [t for t in mixes if not module._ANY_NEED.search(t) and not module._ANY_NEED_FOLDED.search(t.lower())]
    assert len(plain) > 100 and [t for t in plain if any(rx.search(t) for rx, *_ in module._COMPILED)] == []


def test_a_text_a_rule_matches_always_holds_its_gate() -> None:
    """``redact`` runs a rule with a gate only over a text where the gate finds something: on 60,000 random mixes of
    the rules' keywords (any case, the Kelvin sign and the long s too), names, quotes, escapes, separators, URLs'
    pieces and values, every text a gated rule matches holds its gate, so skipping the others masks exactly what
    running the rule on them would."""
    import random

    from forensics.kernel import redact as module

    rnd = random.Random(46)
    words = ["key", "secret", "token", "credential", "password", "passwd", "pwd", "passphrase", "glpat", "gloas"]
    words += ["glpat-", "glrt-", "https://u:", "postgres:\\/\\/u:", "s3://", "pw@h", "@[", "\u212aey", "ſecret"]
    bits = ["_", ".", "-", "=", ":", " ", "\t", "\n", '"', "'", "\\", "/", "//", ":\\/\\/", "@", "[", ",", "中", "，"]
    values = ["a" * 24, "A1b2" * 8, "0f" * 16, "x", "x/y+z_-" * 4, "pa55", "[REDACTED]", "db.example.com"]
    gated = [(rx, gate) for rx, _, _, _, gate in module._COMPILED if gate is not None]
    matched = [0] * len(gated)
    for _ in range(60_000):
        pieces = rnd.choices([*words, *bits, *values], k=rnd.randint(2, 12))
        text = "".join(p.upper() if rnd.random() < 0.2 else p for p in pieces)
        for i, (rx, gate) in enumerate(gated):
            if rx.search(text):
                matched[i] += 1
                assert gate(text), (rx.pattern, text)
    assert min(matched) > 300, matched  # every gated rule is reached, not only its samples
