"""The compaction audit on sessions whose dropped facts are known (fixtures/make_compaction.py), on the real Claude
Code fixture's compaction, and on odd input: every planted loss found with its positions, nothing else lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import FIXTURES, load_script, query, run_cli

LABELS = json.loads((FIXTURES / "compaction" / "labels.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/compaction ingested and reported (compaction and drift) once for the module."""
    d = tmp_path_factory.mktemp("compaction")
    code, _, err = run_cli("ingest", str(FIXTURES / "compaction"), "--db", str(d / "w.duckdb"))
    assert code == 0, err
    code, _, err = run_cli("report", "--db", str(d / "w.duckdb"), "--out", str(d / "r"), "--only", "compaction,drift")
    assert code == 0, err
    return d / "w.duckdb"


def _rows(db: Path) -> list[dict]:
    cols = [
        "native_id",
        "event_position",
        "kind",
        "fact",
        "fact_position",
        "status",
        "carried_by",
        "needed_at",
        "need",
        "re_entered_at",
        "evidence",
        "severity",
    ]
    return [dict(zip(cols, r)) for r in query(db, f"SELECT {', '.join(cols)} FROM compaction_facts ORDER BY ALL")]


def _labelled() -> list[tuple[str, int, dict]]:
    return [(sid, k["position"], f) for sid, s in LABELS.items() for k in s["compactions"] for f in k["facts"]]


def test_the_generator_writes_the_committed_fixture(tmp_path: Path) -> None:
    load_script(FIXTURES / "make_compaction.py").main(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made == sorted(
        p.relative_to(FIXTURES / "compaction") for p in (FIXTURES / "compaction").rglob("*") if p.is_file()
    )
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (FIXTURES / "compaction" / rel).read_bytes(), rel


def test_every_labelled_fact_has_its_status_and_every_planted_loss_both_positions(audited: Path) -> None:
    rows = _rows(audited)
    for sid, at, lab in _labelled():
        got = [
            r
            for r in rows
            if r["native_id"] == sid
            and r["event_position"] == at
            and r["kind"] == lab["kind"]
            and lab["fact"] in r["fact"]
        ]
        assert len(got) == 1, (sid, at, lab)
        r = got[0]
        assert (r["status"], r["fact_position"], r["needed_at"], r["severity"]) == (
            lab["status"],
            lab["fact_position"],
            lab["needed_at"],
            lab["severity"],
        ), (lab, r)


def test_nothing_is_lost_that_was_not_planted_and_kept_facts_never_are(audited: Path) -> None:
    rows = _rows(audited)
    planted = {
        (sid, at, lab["kind"], lab["fact_position"], lab["needed_at"])
        for sid, at, lab in _labelled()
        if lab["needed_at"]
    }
    lost = {
        (r["native_id"], r["event_position"], r["kind"], r["fact_position"], r["needed_at"])
        for r in rows
        if r["needed_at"]
    }
    assert lost == planted and len(lost) == 20
    assert all(r["needed_at"] is None for r in rows if r["status"] in ("kept", "unjudged", "opaque"))
    # Claude Code keeps no message of the old context: only what it reads back in after the summary
    claude = {sid for sid, v in LABELS.items() if not v["project"].startswith("codex:")}
    kept = {
        (r["native_id"] in claude, r["fact"].rsplit("/", 1)[-1]) for r in rows if r["carried_by"] == "kept messages"
    }
    assert {f for c, f in kept if c} == {"README.md"}
    # Codex keeps the user's messages (and, in the newer replacement history, the assistant's answers)
    assert {f for c, f in kept if not c} == {
        "post.rs",
        "Never run cargo publish from here.",
        "App.tsx",
        "60 fps",
        "Flow.tsx",
    }


def test_a_fact_the_assistant_names_first_re_entered_and_is_no_loss(audited: Path) -> None:
    (sid,) = [s for s, v in LABELS.items() if v["project"] == "-home-dev-shop"]
    (hint,) = LABELS[sid]["compactions"][0]["re_entered"]
    (row,) = [r for r in _rows(audited) if r["native_id"] == sid and r["fact"].endswith(hint["fact"])]
    assert (row["status"], row["re_entered_at"], row["needed_at"]) == ("dropped", hint["at"], None)


def test_a_rediscovered_file_cites_the_not_found_read_and_the_listing(audited: Path) -> None:
    (sid,) = [s for s, v in LABELS.items() if v["project"] == "-home-dev-pricing"]
    first = LABELS[sid]["compactions"][0]
    (row,) = [r for r in _rows(audited) if r["native_id"] == sid and r["needed_at"] and r["severity"] == "high"]
    assert row["evidence"] == first["rediscovered"]
    assert row["need"] == "re-read (Read), after a not-found path and a search"


def test_a_chinese_constraint_under_an_english_summary_and_a_compaction_without_summary_are_unjudged(
    audited: Path,
) -> None:
    (sid,) = [s for s, v in LABELS.items() if v["project"] == "-home-dev-notes"]
    rows = [r for r in _rows(audited) if r["native_id"] == sid]
    assert sorted((r["event_position"], r["kind"], r["status"]) for r in rows) == [
        (6, "constraint", "unjudged"),
        (6, "file", "kept"),
        (6, "task", "unjudged"),
        (12, "constraint", "unjudged"),
        (12, "file", "unjudged"),
        (12, "task", "unjudged"),
    ]
    # the user repeats the constraint after the first compaction: unjudged facts are never reported lost
    assert not query(
        audited,
        "SELECT * FROM drift_findings d JOIN conversations c USING (conversation_id) "
        "WHERE c.native_id = ? AND d.severity IN ('low', 'high')",
        [sid],
    )


def test_losses_are_findings_with_their_positions_and_drift_type_3_reads_them(audited: Path) -> None:
    doc = json.loads((audited.parent / "r" / "metrics.json").read_text())
    losses = [f for f in doc["findings"] if f["kind"] == "compaction_loss"]
    assert len(losses) == 20 and sum(f["severity"] == "high" for f in losses) == 11
    shop = next(f for f in losses if "migrations folder" in f["summary"])
    assert shop["positions"] == [0, 20, 37]
    assert shop["summary"].startswith(
        "constraint “Don't touch the migrations folder, it is generated.” (at [0]) was "
        "dropped by the compaction at [20] and needed again at [37]: the user repeated it"
    )
    drift = query(
        audited,
        "SELECT c.native_id, d.severity, d.positions, d.follows_compaction FROM drift_findings d "
        "JOIN conversations c USING (conversation_id) WHERE d.kind = 'compaction_topic_loss' "
        "AND d.severity <> 'none' ORDER BY 1, 3",
    )
    assert len(drift) == 20 and all(follows for *_, follows in drift)  # the pricing sign is explained, not repeated
    m = (
        doc["sections"]["compaction"]["metrics"]
        if "metrics" in doc["sections"]["compaction"]
        else doc["sections"]["compaction"]
    )
    assert {
        k: m["logged"][k]
        for k in (
            "compactions",
            "with_summary",
            "opaque_summaries",
            "held",
            "kept",
            "dropped",
            "unjudged",
            "opaque",
            "lost",
            "lost_high",
        )
    } == {
        "compactions": 8,
        "with_summary": 6,
        "opaque_summaries": 1,
        "held": 44,
        "kept": 14,
        "dropped": 23,
        "unjudged": 5,
        "opaque": 2,
        "lost": 20,
        "lost_high": 11,
    }


def test_the_real_claude_code_fixture_compaction_is_audited(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "claude_code"), "--db", str(db))[0] == 0
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction")
    assert code == 0, err
    assert [
        r[2:]
        for r in query(
            db,
            "SELECT native_id, event_position, kind, fact, fact_position, status, carried_by, "
            "needed_at FROM compaction_facts ORDER BY fact_position, kind",
        )
    ] == [
        ("file", "tests/test_auth.py", 1, "dropped", None, None),
        ("search", "def login", 1, "dropped", None, None),
        ("error", "Error: ripgrep timed out after 30s", 4, "dropped", None, None),
        ("file", "app/auth.py", 5, "kept", "summary", None),
        ("command", "pytest -q", 9, "dropped", None, None),
    ]
    assert {r[1] for r in query(db, "SELECT native_id, event_position FROM compaction_facts")} == {12}
    md = (tmp_path / "r" / "report.md").read_text()
    assert (
        "| Fix login test | 12 | auto | 155000 | 156 | text | 5 | 1 | 4 | 0 | 0 | 0 | 0 | path 1/2, command 0/2, "
        "error 0/1 |  |" in md
    )
    assert "Kept per category (of the judged facts): path 1 of 2, command 0 of 2, error 0 of 1." in md


def test_a_summary_kept_in_the_event_detail_is_read_and_an_event_off_the_main_path_is_counted(tmp_path: Path) -> None:
    """Formats that keep the summary in the event (Codex's compacted.message, Continue, OpenHands) and events with
    no main-path position: added to a real warehouse as their importers write them."""
    db = tmp_path / "w.duckdb"
    shutil.copytree(FIXTURES / "compaction" / "-home-dev-pricing", tmp_path / "src")
    assert run_cli("ingest", str(tmp_path / "src"), "--db", str(db))[0] == 0
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE events SET detail = ? WHERE kind = 'compaction' AND position = 6",
        ['{"summary": "Compared docs/plans/pricing-2025-07-15.md with src/pricing/tiers.py: Pro is 20."}'],
    )
    con.execute(
        "INSERT INTO events SELECT conversation_id, NULL, NULL, 'compaction', 'manual', NULL, NULL, 'not json' "
        "FROM conversations"
    )
    con.close()
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction")
    assert code == 0, err
    rows = query(db, "SELECT event_position, fact, status, needed_at FROM compaction_facts ORDER BY 1, 2")
    assert [(a, f.rsplit("/", 1)[-1], s, n) for a, f, s, n in rows] == [
        (6, "pricing-2025-07-15.md", "kept", None),
        (6, "tiers.py", "kept", None),
        (11, "pricing-2025-07-15.md", "dropped", 17),
        (11, "tiers.py", "dropped", 19),
    ]  # kept, then dropped
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["compaction"]
    assert m["logged"]["off_main_path"] == 1


@pytest.mark.parametrize(
    "between, judged",
    [
        ("<command-name>/compact</command-name>", ("dropped", 20)),  # a harness line: the summary follows it
        ("Go on with the tiers.", ("unjudged", None)),  # the user's own line: what follows is no longer the summary
    ],
)
def test_a_summary_after_a_harness_line_is_still_the_compaction_s_summary(
    tmp_path: Path, between: str, judged: tuple[str, int | None]
) -> None:
    """A manual /compact: the command's line comes between the boundary and the summary, which opens with "This
    conversation is being continued": the second compaction is judged by that summary, not left unjudged."""
    src = FIXTURES / "compaction" / "-home-dev-pricing" / "50c89b17-9b87-5816-88b5-3566dd0638b9.jsonl"
    lines = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()]
    at = [i for i, x in enumerate(lines) if x.get("subtype") == "compact_boundary"][1]
    command = {
        **lines[at + 1],
        "uuid": "0c0c0c0c-0000-5000-8000-000000000001",
        "parentUuid": lines[at]["uuid"],
        "message": {"role": "user", "content": between},
    }
    summary = lines[at + 1]
    summary["parentUuid"] = command["uuid"]
    summary["message"]["content"] = summary["message"]["content"].replace("This session", "This conversation", 1)
    lines.insert(at + 1, command)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / src.name).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(tmp_path / "src"), "--db", str(db))[0] == 0
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction")
    assert code == 0, err
    rows = query(db, "SELECT event_position, fact, status, needed_at FROM compaction_facts ORDER BY 1, 2")
    assert [(a, f.rsplit("/", 1)[-1], s, n) for a, f, s, n in rows] == [
        (6, "pricing-2025-07-15.md", "dropped", 18),
        (6, "tiers.py", "kept", None),
        (11, "tiers.py", *judged),
    ]  # the summary at [12], one message after the line at [11]


@pytest.mark.parametrize(
    "patterns, message",
    [
        (["(unclosed"], "compaction.constraint_patterns: '(unclosed' is not a valid pattern"),
        (["(?<!要)不要"], "uses look-around, which DuckDB's RE2 cannot run"),
    ],
)
def test_a_bad_pattern_in_the_config_is_a_one_line_error(
    audited: Path, tmp_path: Path, patterns: list[str], message: str
) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[compaction]\nconstraint_patterns = " + json.dumps(patterns) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    shutil.copy(audited, db)
    code, out, err = run_cli(
        "report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction", "--config", str(cfg)
    )
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def _simulate(sizes: list[int], start: int, max_tokens: int, keep: int, summary_tokens: int) -> tuple[list[int], int]:
    """The seed's rule, message by message: (positions after which it compacts, sum of the context estimates)."""
    base, window, summary, comps, total = sum(sizes[:start]), [], 0, [], 0
    for j in range(start, len(sizes)):
        window.append(j)
        chars = base + summary + sum(sizes[i] for i in window)
        total += chars
        if chars > max_tokens * 4:
            comps.append(j)
            window, summary = window[max(0, len(window) - keep) :] if keep else [], summary_tokens * 4
    return comps, total


@pytest.mark.parametrize("max_tokens, keep", [(8000, 0), (8000, 10), (30000, 5), (100000, 10), (100000, 80)])
def test_the_replay_compacts_where_the_rule_does_message_by_message(seed_wh: Path, max_tokens: int, keep: int) -> None:
    from forensics.analyzers.compaction import replay
    from forensics.warehouse import open_warehouse

    with open_warehouse(seed_wh, read_only=True) as wh:
        convs = [
            (sizes, start)
            for sizes, start in wh.con.execute("""
            SELECT list(m.content_chars + coalesce(a.chars, 0) ORDER BY m.position),
                   coalesce(min(m.position) FILTER (WHERE m.role <> 'system'), count(*))
            FROM messages m LEFT JOIN (SELECT conversation_id, position, sum(length(arguments)) AS chars
                                       FROM tool_calls GROUP BY ALL) a USING (conversation_id, position)
            WHERE m.on_main_path GROUP BY m.conversation_id""").fetchall()
        ]
    import numpy as np

    none = np.zeros(0, dtype=np.int64)
    for sizes, start in convs:
        c = replay.Conv(
            "",
            "",
            np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64)))),
            start,
            none,
            none,
            np.arange(len(sizes)),
        )
        got = replay.compactions(c.bounds, start, max_tokens * 4, keep, 500 * 4)
        want, total = _simulate(sizes, start, max_tokens, keep, 500)
        assert got == want and (max_tokens > 100000 or got)
        assert replay._context_chars(c, np.asarray(got, dtype=np.int64), keep, 500 * 4) == total


def test_the_sweep_counts_needs_outside_the_kept_window(seed_wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction")
    assert code == 0, err
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["compaction"]
    rep = doc["replay"]
    assert (rep["compactions"], rep["conversations_compacted"]) == (3, 3)  # each seed conversation once, at ~100k
    listed = query(
        db,
        "SELECT c.native_id, r.position, r.context_tokens, r.kept_from, r.needed_after, r.outside_window "
        "FROM compaction_replay r JOIN conversations c USING (conversation_id) ORDER BY 1",
    )
    assert [(n, p - k) for n, p, _, k, *_ in listed] == [(n, 9) for n, *_ in listed]  # 10 messages kept
    assert all(t > 100000 for _, _, t, *_ in listed)
    assert sum(r[4] for r in listed) == rep["needed_after_compaction"]
    assert sum(r[5] for r in listed) == rep["outside_window"]
    by = {(p["max_tokens"], p["keep_recent"]): p for p in doc["sweep"]}
    assert all(by[(m, 0)]["outside_window"] == by[(m, 0)]["needed_after_compaction"] for m, _ in by)  # keep nothing
    assert all(p["needed_after_compaction"] == 0 for (m, _), p in by.items() if m == 200000)  # never compacts


def test_an_encrypted_codex_summary_is_opaque_never_dropped_and_the_explorer_marks_the_boundary(audited: Path) -> None:
    """Codex's newer compaction: an empty message and an encrypted replacement history. The file re-read, the
    command re-run and the error met again after it are not losses: nobody can say what the summary kept."""
    (sid,) = [s for s, v in LABELS.items() if v["project"] == "codex:viewer"]
    m = json.loads((audited.parent / "r" / "metrics.json").read_text())["sections"]["compaction"]
    (event,) = [e for e in m["logged"]["events"] if e["native_id"] == sid]
    assert (event["summary"], event["opaque"], event["dropped"], event["lost"]) == ("opaque (encrypted)", 2, 0, 0)
    assert query(
        audited,
        "SELECT m.position, m.compaction_note FROM compaction_marks m JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id = ?",
        [sid],
    ) == [
        (
            6,
            "compaction audit: summary opaque (encrypted): what it kept cannot be read; 5 facts held; kept path 2/2, "
            "number 1/1; nothing lost",
        )
    ]
    (ledger,) = [s for s, v in LABELS.items() if v["project"] == "codex:ledger"]
    notes = dict(
        query(
            audited,
            "SELECT m.position, m.compaction_note FROM compaction_marks m JOIN conversations c "
            "USING (conversation_id) WHERE c.native_id = ?",
            [ledger],
        )
    )
    assert sorted(notes) == [10, 13, 16, 17]
    assert notes[10].startswith(
        "compaction audit: summary logged; 7 facts held; kept path 1/1, command 1/3, error 0/1, "
        "instruction 1/1, decision 0/1; dropped, not needed again: command “cargo build "
        "--release”; lost 3: command “round_half” (at [3]) needed at [13]"
    )
    assert notes[16] == (
        "needed again after the compaction at [10], which dropped it: error “error[E0308]: mismatched "
        "types” (the error recurred)"
    )


def test_the_share_kept_and_needed_again_per_category(audited: Path) -> None:
    m = json.loads((audited.parent / "r" / "metrics.json").read_text())["sections"]["compaction"]
    got = {
        c: (
            t["kept"],
            t["by_summary"],
            t["dropped"],
            t["lost"],
            t["opaque"],
            t["kept_share"],
            t["summary_kept_share"],
            t["needed_after_share"],
        )
        for c, t in m["logged"]["by_category"].items()
    }
    assert got == {
        "path": (8, 4, 7, 5, 0, 0.5333, 0.3636, 0.7143),
        "command": (1, 1, 6, 5, 1, 0.1429, 0.1429, 0.8333),
        "error": (0, 0, 3, 3, 1, 0.0, 0.0, 1.0),
        "instruction": (3, 2, 4, 4, 0, 0.4286, 0.3333, 1.0),
        "decision": (0, 0, 3, 3, 0, 0.0, 0.0, 1.0),
        "number": (2, 1, 0, 0, 0, 1.0, 1.0, None),
    }


@pytest.mark.parametrize(
    "command, key",
    [
        ("cd /home/dev/x && pytest tests/test_totals.py -q", "pytest tests/test_totals.py -q"),
        ('bash -lc "cargo test -p ledger"', "cargo test -p ledger"),
        ('["bash", "-lc", "sed -n 1,80p src/ledger/post.rs"]', None),  # a read: the file fact says it
        ("rg -n round_half src | head -20", None),  # a search
        ("git status && git diff", None),
        ("git commit -m 'fix'", "git commit -m 'fix'"),
        ("sed -i 's/a/b/' src/x.py", "sed -i 's/a/b/' src/x.py"),  # sed -i edits
    ],
)
def test_a_command_fact_is_the_command_normalised_and_reads_are_none(command: str, key: str | None) -> None:
    from forensics.analyzers.compaction.facts import command_key, command_text

    assert command_key(command_text(command)) == key


@pytest.mark.parametrize(
    "text, figures",
    [
        ("Flush every 1024 bytes or 250ms; default interval 1sec.", ["1024bytes", "250ms", "1sec"]),
        ("Keep the pool at 128 connections and 60 fps, 0.12s per frame.", ["128", "60fps", "0.12s"]),
        ("See docs/plans/pricing-2025-07-15.md, v1.2.3, file_42, E0425, in 2024, 20 projects.", []),
    ],
)
def test_a_figure_is_a_number_with_a_unit_a_decimal_or_three_digits(text: str, figures: list[str]) -> None:
    from forensics.analyzers.compaction.facts import NUMBER, number_of

    assert [k for m in NUMBER.finditer(text) if (k := number_of(m.group(1), m.group(2)))] == figures


def test_the_explorer_shows_the_compaction_boundary_with_what_was_lost_and_where_it_was_needed(audited: Path) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    (sid,) = [s for s, v in LABELS.items() if v["project"] == "codex:ledger"]
    ((cid,),) = query(audited, "SELECT conversation_id FROM conversations WHERE native_id = ?", [sid])
    page = TestClient(create_app(audited), base_url="http://127.0.0.1").get(f"/c/{cid}").text
    boundary = page.index("compaction audit: summary logged; 7 facts held")
    assert page.index("⋯ context compacted") < boundary < page.index('id="m10"')  # at the boundary, before [10]
    assert "lost 3: command “round_half” (at [3]) needed at [13]" in page
    need = page.index("needed again after the compaction at [10], which dropped it: error")
    assert page.index('id="m15"') < need < page.index('id="m16"')  # just before the message that needed it


@pytest.mark.parametrize(
    "text, key, code, found",
    [
        ("sed -n '1,128p' src/pool.py", "128", True, False),  # a range of lines, not the figure
        ("vim src/pool.py:128", "128", True, False),
        ("./bench --pool 128", "128", True, True),
        ("sleep 250 ms", "250ms", True, True),
        ("the pool holds 1280 now", "128", False, False),
        ("I said the timeout is 250ms", "250ms", False, True),
    ],
)
def test_a_figure_is_found_again_only_as_itself(text: str, key: str, code: bool, found: bool) -> None:
    from forensics.analyzers.compaction.facts import mentions_number

    assert mentions_number(text.lower(), key, code) is found
