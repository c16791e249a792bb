"""The rules audit (docs/definitions.md#rules-a-run-was-given): instruction files found as each harness injects them, rules mapped to checks (and
the ones no program can check left unchecked), turns judged, and the planted corpus of fixtures/make_rules.py
scored exactly; the report section on it and on the real agent logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, SHARED

from bench import rules as bench
from forensics.analyzers.rules.checks import check_of
from forensics.analyzers.rules.extract import Message, rules_of
from forensics.analyzers.rules.judge import Call, Run, command_of, judge
from forensics.analyzers.rules.language import language_of
from forensics.analyzers.rules.sources import injected

AGENT_LOGS = SHARED / "data" / "agent-logs"


def test_claude_code_reminder_names_each_file_and_stops_at_its_end() -> None:
    text = (
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n"
        "Contents of /home/a/.claude/CLAUDE.md (user's private global instructions for all projects):\n\n"
        "- Never use emojis.\n\nContents of /home/a/app/CLAUDE.md (project instructions, checked into the "
        "codebase):\n\n- Use pnpm, not npm.\n\n# currentDate\nToday's date is 2026-03-02.\n</system-reminder>"
    )
    files = injected(text, system=False)
    assert [(f.source, f.path) for f in files] == [
        ("CLAUDE.md", "/home/a/.claude/CLAUDE.md"),
        ("CLAUDE.md", "/home/a/app/CLAUDE.md"),
    ]
    assert files[0].body.strip() == "- Never use emojis."
    assert files[1].body.strip() == "- Use pnpm, not npm."


def test_codex_agents_md_parts_the_persons_own_from_the_repositorys() -> None:
    text = (
        "# AGENTS.md instructions for /per/dev/app\n\n<INSTRUCTIONS>\nAlways answer in English.\n\n"
        "--- project-doc ---\n\nNever run `git push`.\n</INSTRUCTIONS>"
    )
    files = injected(text, system=True)
    assert [(f.source, f.path, f.body.strip()) for f in files] == [
        ("AGENTS.md", "~/.codex/AGENTS.md", "Always answer in English."),
        ("AGENTS.md", "/per/dev/app/AGENTS.md", "Never run `git push`."),
    ]
    old = injected("<user_instructions>\nAlways run the linter.\n</user_instructions>", system=False)
    assert [(f.source, f.body.strip()) for f in old] == [("AGENTS.md", "Always run the linter.")]


def test_gemini_cline_and_tagged_rules_and_a_bare_system_prompt() -> None:
    gem = injected(
        "--- Context from: c:/u/.gemini/gemini.md ---\n- Never run `sudo`.\n"
        "--- End of Context from: c:/u/.gemini/gemini.md ---",
        system=False,
    )
    assert [(f.source, f.body.strip()) for f in gem] == [("GEMINI.md", "- Never run `sudo`.")]
    cline = injected("You are Cline.\n\n====\n\n# .clinerules\n\nNever edit `dist/`.\n\n====\n\nRULES", system=True)
    assert [(f.source, f.body.strip()) for f in cline] == [(".clinerules", "Never edit `dist/`.")]
    assert [f.source for f in injected("<user_rules>\nAlways reply in French.\n</user_rules>", True)] == ["rules"]
    assert [f.source for f in injected("You are a helpful assistant. Never lie.", True)] == ["system prompt"]
    assert injected("You are a helpful assistant.", False) == []  # a user message with no file: no source


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Never run `git push`; the maintainer pushes.", "command_forbidden: git push"),
        ("NEVER use `git reset --hard`", "command_forbidden: git reset --hard"),
        (
            "Do not amend a commit unless explicitly requested to do so.",
            "command_forbidden: git commit --amend / unless_asked",
        ),
        ("Never push directly to main.", "command_forbidden: git push * main"),
        ("Use pnpm, not npm.", "command_instead: pnpm / npm"),
        ("Always use uv for Python packages.", "command_instead: uv / pip / pip3 / poetry / pipenv / conda"),
        ("Use `rg` instead of `grep`.", "command_instead: rg / grep"),
        ("Do not edit files in `migrations/`.", "path_untouched: migrations/"),
        (
            "Do not modify registry surfaces (`CONSTITUTION.md`, `AGENTS.md`).",
            "path_untouched: CONSTITUTION.md / AGENTS.md",
        ),
        ("Always run the tests before committing.", "tests_before_commit"),
        ("Never use emojis in replies.", "no_emoji"),
        ("Always reply in Chinese.", "reply_language: zh"),
        ("请用中文回答。", "reply_language: zh"),
        ("Never call the `WebFetch` tool.", "tool_forbidden: WebFetch"),
    ],
)
def test_checkable_rules(text: str, label: str) -> None:
    check = check_of(text)
    assert check is not None and check.label == label


@pytest.mark.parametrize(
    "text",
    [
        "Never commit credentials to the repo, even in `.env` files.",  # about what a commit holds, not committing
        # AGENTS.md of EntityProcess/agentv (fixtures/real): which files a commit may hold, not whether to commit
        "never commit the embedded Dolt database, JSONL exports, backups, locks, logs, or runtime state.",
        "Never commit any secrets or tokens.",
        "Prefer composition over inheritance.",  # not programs
        "Keep functions small and focused.",
        "NEVER call `use_figma` directly without loading this skill first.",  # a condition no verdict can see
        "Do NOT modify my fs outside of /per/dev/shell-ws.",  # "outside of": the inverse of a path rule
        "Don't worry about the tests.",
    ],
)
def test_unchecked_rules_stay_unchecked(text: str) -> None:
    assert check_of(text) is None


def test_reply_language() -> None:
    assert language_of("第三步完成了，一切正常，我们继续下一步的工作吧。`pytest -q` passed") == "zh"
    assert language_of("The tests pass and the build is green, so we can move on to the next step.") == "en"
    assert language_of("Les tests passent et la compilation est verte, on peut passer à la suite.") == "fr"
    assert language_of("ok") is None  # too short to say
    assert language_of("```python\nprint('hello world, this is code')\n```") is None  # code is no language


def test_person_standing_and_for_now_and_harness_context_in_a_person_turn() -> None:
    msgs = [
        Message(
            0,
            "user",
            "person",
            "--- Context from: /a/GEMINI.md ---\n- Never run `sudo`.\n--- End of Context from: /a/GEMINI.md ---",
        ),
        Message(2, "user", "person", "Fix the bug. From now on, never run `rm -rf`. Don't commit yet."),
        Message(6, "user", "person", "Go on."),
    ]
    rules = rules_of("c", msgs)
    assert [(r.source, r.position, r.kind, r.until) for r in rules] == [
        ("GEMINI.md", 0, "command_forbidden", None),
        ("person", 2, "command_forbidden", None),
        ("person", 2, "command_forbidden", 5),
    ]  # "…yet": it holds to the person's next turn


def test_judge_positions_evidence_and_compaction() -> None:
    rules = rules_of(
        "c",
        [
            Message(
                0,
                "user",
                "harness",
                "Contents of /a/CLAUDE.md (project instructions):\n\n- Never run `git push`.\n- Use pnpm, not npm.\n",
            )
        ],
    )
    calls = [
        Call(p, "Bash", json.dumps({"command": c}), c)
        for p, c in [(2, "pnpm install"), (4, "cd app && git push origin main"), (8, "npm test"), (10, "git status")]
    ]
    run = Run("c", "m", calls=calls, compactions=[6], end=10)
    got = [(v.position, v.verdict, v.after_compaction) for v in judge(rules, run)]
    assert got == [
        (2, "kept", False),
        (4, "broke", False),
        (8, "kept", True),
        (10, "kept", True),  # git push
        (2, "kept", False),
        (8, "broke", True),
    ]  # pnpm, not npm (git commands do not bear on it)
    broke = [v for v in judge(rules, run) if v.verdict == "broke"]
    assert broke[0].quote == "cd app && git push origin main" and broke[0].said_at == 0
    assert [v.in_context for v in judge(rules, run) if v.after_compaction] == [False, False, False]
    run.summaries[6] = "Summary: the rules were: never run `git push`. Use pnpm, not npm."
    assert [v.in_context for v in judge(rules, run) if v.after_compaction] == [True, True, True]  # carried


def test_command_of_reads_each_harness_and_survives_bad_arguments() -> None:
    assert command_of("Bash", '{"command": "ls -la"}') == "ls -la"
    assert command_of("shell", '{"command": ["bash", "-lc", "git status"]}') == "git status"
    assert command_of("shell", '{"command": ["rg", "TODO", "src"]}') == "rg TODO src"
    assert command_of("exec_command", '{"cmd": "pytest -q"}') == "pytest -q"
    assert command_of("str_replace_editor", '{"command": "view", "path": "/a"}') is None
    assert command_of("Bash", "{not json") is None
    assert command_of("Bash", '["a list"]') is None


def test_planted_corpus_every_broken_rule_at_its_turn_and_no_false_one(tmp_path: Path) -> None:
    con, labels = bench.build(tmp_path)
    s = bench.score(con, labels)
    assert (s.planted_broke, s.found_broke, s.false_broke) == (23, 23, [])
    assert (s.planted_kept, s.found_kept, s.missed) == (125, 125, [])
    assert s.wrong_unchecked == [] and s.unloaded_rules == 0
    assert s.after_compaction == (12, 12) and s.before_flagged == 0
    assert sum(not r["loaded"] for r in labels) == 3  # runs whose rules were never loaded: nothing judged


def test_report_only_rules_on_the_planted_corpus(tmp_path: Path) -> None:
    con, _ = bench.build(tmp_path)
    con.close()
    out = tmp_path / "rep"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensics",
            "report",
            "--db",
            str(tmp_path / "w.duckdb"),
            "--out",
            str(out),
            "--only",
            "rules",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "metrics.json").read_text())["sections"]["rules"]
    assert (
        m["verdicts"]["broke"] == 23 and m["runs_with_rules"] == 9
    )  # three runs never loaded a file, and gave no rule of their own
    assert m["by_rule"]["claude_md_command_forbidden_git_push"]["broke"] >= 1
    assert m["compaction"]["after"]["verdicts"] == m["compaction"]["after_dropped"]["verdicts"] == 12
    assert m["runs_with_files"] == 9
    md = (out / "report.md").read_text()
    assert "Checkable rules" in md and "Rules no program can check" in md and "Keep functions small" in md
    # per loaded instruction file and per rule: kept, broke, not checkable (half the Claude Code runs load it through
    # the 2.1.x attachment line, half through the reminder)
    assert "| CLAUDE.md /home/dev/proj0/CLAUDE.md | 2 | 9 | 6 | 3 | 25 | 7 | 78% |" in md
    assert "| CLAUDE.md /home/dev/proj2/CLAUDE.md | Never run \\`git push\\`; the maintainer pushes. | " in md
    assert (
        "| CLAUDE.md /home/dev/proj0/CLAUDE.md | Keep functions small and focused. | unchecked | 2 | – | – | not " in md
    )
    w = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    assert w.execute("SELECT count(*) FROM rule_verdicts WHERE verdict = 'broke'").fetchone() == (23,)
    assert (
        w.execute("SELECT count(*) FROM rule_marks WHERE rules LIKE 'loaded %'").fetchone()[0] == 9 + 6
    )  # 9 files, 6 person's rules


@pytest.mark.skipif(not AGENT_LOGS.exists(), reason="needs ../shared/data/agent-logs")
def test_real_logs_codex_agents_md_and_gemini_context_found(tmp_path: Path) -> None:
    from forensics import api
    from forensics.analyzers.rules import audit

    db = tmp_path / "w.duckdb"
    api.ingest([str(AGENT_LOGS / "codex_cli"), str(AGENT_LOGS / "gemini_cli")], db=str(db))
    con = duckdb.connect(str(db))
    con.execute("CREATE TEMP TABLE sel_conversations AS SELECT conversation_id FROM conversations")
    found = audit(con)
    sources = {r.source for r in found.rules}
    assert {"AGENTS.md", "GEMINI.md", "system prompt", "person"} <= sources
    assert not [
        v
        for v in found.verdicts
        if v.verdict == "broke" and v.rule not in {r.key for r in found.rules if r.kind == "one_question_at_a_time"}
    ]


def test_installing_with_a_named_installer_and_one_at_a_time_about_the_work() -> None:
    c = check_of("Do not try to install any packages with `pip`, `conda`, or any other way.")
    assert c is not None and c.label == "command_forbidden: pip install / conda install"
    rules = rules_of(
        "c",
        [
            Message(
                0,
                "user",
                "person",
                "Make the following changes one at a time. For each, consider how you want it done and then do it.",
            ),
            Message(4, "user", "person", "one at a time pls"),
        ],
    )
    assert [(r.position, r.kind) for r in rules if r.check] == [(4, "one_question_at_a_time")]
    run = Run("c", "m", calls=[Call(2, "Bash", "", "python -m pip install x"), Call(3, "Bash", "", "uv pip install x")])
    got = judge(rules_of("c", [Message(0, "user", "person", "Do not install anything with `pip`.")]), run)
    assert [(v.position, v.verdict) for v in got] == [(2, "broke"), (3, "kept")]


def test_bare_verbs_sharing_an_unsaid_object_stay_unchecked() -> None:
    assert check_of("Off the record: do not log, do not store, do not commit.") is None  # read on a real GEMINI.md
    c = check_of("Never push and never commit unless asked.")
    assert c is not None and c.label == "command_forbidden: git push / unless_asked"


def test_explorer_transcript_shows_rules_loaded_and_broken(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    con, _ = bench.build(tmp_path)
    con.close()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensics",
            "report",
            "--db",
            str(tmp_path / "w.duckdb"),
            "--out",
            str(tmp_path / "rep"),
            "--only",
            "rules",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    w = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    cid, pos = w.execute(
        "SELECT conversation_id, position FROM rule_verdicts WHERE verdict = 'broke' AND "
        "conversation_id IN (SELECT conversation_id FROM run_rules WHERE source = 'CLAUDE.md') "
        "ORDER BY 1, 2 LIMIT 1"
    ).fetchone()
    w.close()
    page = TestClient(create_app(tmp_path / "w.duckdb"), base_url="http://127.0.0.1").get(f"/c/{cid}").text
    assert 'class="verdict v-loaded"' in page and "rules of CLAUDE.md" in page
    assert 'class="verdict v-broke"' in page and "<code>rule_broken</code>" in page


def test_check_gates_a_rules_adherence(tmp_path: Path) -> None:
    con, _ = bench.build(tmp_path)
    con.close()
    db, base = str(tmp_path / "w.duckdb"), tmp_path / "base.json"
    run = [sys.executable, "-m", "forensics"]
    r = subprocess.run(
        [*run, "report", "--db", db, "--out", str(tmp_path / "rep"), "--only", "rules", "--write-baseline", str(base)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(base.read_text())
    metrics = d.get("metrics", d)
    assert metrics["rules.adherence"]["better"] == "higher"
    assert metrics["rules.by_rule.claude_md_command_forbidden_git_push.adherence"]["better"] == "higher"
    assert (
        subprocess.run([*run, "check", "--db", db, "--baseline", str(base)], capture_output=True, cwd=ROOT).returncode
        == 0
    )
    metrics["rules.by_rule.claude_md_command_forbidden_git_push.adherence"]["value"] = 0.95  # it kept it better once
    base.write_text(json.dumps(d))
    r = subprocess.run([*run, "check", "--db", db, "--baseline", str(base)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1
    assert [line.split()[0] for line in r.stdout.splitlines() if "REGRESSED" in line] == [
        "rules.by_rule.claude_md_command_forbidden_git_push.adherence"
    ]


def test_a_banned_code_construct_is_judged_in_the_replys_code_only() -> None:
    rules = rules_of(
        "c",
        [
            Message(0, "user", "person", "Write the step.\n- No functions or variable declarations.\n- Keep it short."),
            Message(9, "user", "person", "next"),
        ],
    )
    assert [r.check.label for r in rules if r.check] == ["code_banned: functions", "code_banned: variable declarations"]
    run = Run(
        "c",
        "m",
        replies=[
            (1, "Here it is:\n```python\nprint(area(2))\n```"),
            (3, "Sure.\n```python\ndef area(r):\n    return 3.14 * r * r\n```"),
            (5, "No code in this one: define a function called area."),
            (11, "```python\ndef late():\n    pass\n```"),
        ],
    )
    got = [(v.position, v.verdict, v.quote[:9]) for v in judge(rules, run) if by(rules, v.rule) == "functions"]
    assert got == [(1, "kept", "Here it i"), (3, "broke", "def area(")]  # [5] no code; [11] after the next turn


def by(rules: list, key: str) -> str:
    return next(r.check.target[0] for r in rules if r.key == key)
