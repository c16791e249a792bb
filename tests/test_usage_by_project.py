"""Cost by project and branch (issue 47): `forensics usage --by project,branch` on the shared Claude Code and Codex
logs agrees with a count taken from the raw files here, by a reader that attributes each API request to the
working folder and branch of its own line (Claude Code: each line's cwd and gitBranch; Codex: session_meta's cwd
and git.branch) and counts it once however many transcripts copy it."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from forensics import api
from tests.agent_counts import claude_code_usage, codex_rollout_spend, json_lines
from tests.conftest import SHARED, run_cli

LOGS = SHARED / "data" / "agent-logs"
KINDS = ("input", "cached", "cache_write", "output")


def claude_code(root: Path) -> dict[tuple, dict[str, int]]:
    """(agent, project, branch) -> runs and tokens. A response is (message.id, requestId), its counts the largest
    its lines give; it belongs to the line of a top-level transcript when one copies it (a sub-agent's file or a
    side question repeats its parent's responses), else to the first line naming it."""
    best: dict[tuple, dict[str, int]] = {}
    where: dict[tuple, tuple[bool, tuple]] = {}
    runs: Counter[tuple] = Counter()
    for f in sorted(root.rglob("*.jsonl")):
        lines = list(json_lines(f))
        if not any(o.get("type") in ("user", "assistant") for o in lines):
            continue
        nested = f.parent.name == "subagents"
        cwd = next((o["cwd"] for o in lines if isinstance(o.get("cwd"), str) and o["cwd"]), None)
        named = Counter(o["gitBranch"] for o in lines if isinstance(o.get("gitBranch"), str) and o["gitBranch"])
        runs[("claude-code", cwd, named.most_common(1)[0][0] if named else None)] += 1
        for o in lines:
            if (usage := claude_code_usage(o)) is None:
                continue
            key, got = usage
            best[key] = {k: max(v, best.get(key, got)[k]) for k, v in got.items()}
            here = (nested, ("claude-code", o.get("cwd"), o.get("gitBranch") or None))
            if key not in where or (where[key][0] and not nested):
                where[key] = here
    out: dict[tuple, dict[str, int]] = defaultdict(lambda: dict.fromkeys(("runs", *KINDS), 0))
    for group, n in runs.items():
        out[group]["runs"] += n
    for key, r in best.items():
        g = out[where[key][1]]
        read, write = r["cache_read_input_tokens"], r["cache_creation_input_tokens"]
        g["input"] += r["input_tokens"] + read + write
        g["cached"] += read
        g["cache_write"] += write
        g["output"] += r["output_tokens"]
    return dict(out)


def codex(root: Path) -> dict[tuple, dict[str, int]]:
    """(agent, project, branch) -> runs and tokens: a rollout's last running total (total_token_usage), less the
    total its forked history copied from the parent thread; its cwd and git branch from its first session_meta."""
    out: dict[tuple, dict[str, int]] = defaultdict(lambda: dict.fromkeys(("runs", *KINDS), 0))
    for f in sorted(root.rglob("rollout-*.jsonl")):
        meta, spend = codex_rollout_spend(f)
        git = meta.get("git") or {}
        g = out[("codex", meta.get("cwd"), git.get("branch") or None)]
        g["runs"] += 1
        for k, v in spend.items():
            g[k] += v
    return dict(out)


@pytest.fixture(scope="module")
def shared_wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (LOGS / "claude_code").is_dir():
        pytest.skip(f"{LOGS} not found (set FORENSICS_SHARED)")
    db = tmp_path_factory.mktemp("byproject") / "w.duckdb"
    code, _, err = run_cli("ingest", str(LOGS / "claude_code"), str(LOGS / "codex_cli"), "--db", str(db))
    assert code == 0, err
    return db


def test_usage_by_project_and_branch_equals_the_raw_files(shared_wh: Path) -> None:
    want = {**claude_code(LOGS / "claude_code"), **codex(LOGS / "codex_cli")}
    got = {
        (r["agent"], r["project"], r["branch"]): {k: r[k] for k in ("runs", *KINDS)}
        for r in api.usage(shared_wh, by="agent,project,branch").iter_rows(named=True)
    }
    assert got == want
    assert len(want) == 11  # 4 Claude Code projects and branches, 7 of Codex (one session names no branch)
    assert sum(g["runs"] for g in want.values()) == 15
    assert ("codex", "/per/dev/shell-ws", None) in want  # a rollout without git: its project, no branch


def test_each_grouping_adds_up_to_the_same_tokens(shared_wh: Path) -> None:
    """The same API request counted once whatever the grouping: by project, branch, day and model, the sums are
    the agent's."""
    totals = {k: api.usage(shared_wh, by="agent")[k].sum() for k in ("runs", *KINDS)}
    for by in ("project", "branch", "project,branch", "project,branch,day,model", "day"):
        df = api.usage(shared_wh, by=by)
        assert {k: df[k].sum() for k in ("runs", *KINDS)} == totals, by
    assert totals["input"] > 0


def test_the_cli_and_the_report_show_projects_and_branches(
    shared_wh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole keys (at 120: tests/test_terminal_width.py)
    code, out, err = run_cli("usage", "--db", str(shared_wh), "--by", "project,branch")
    assert code == 0, err
    head, *rows = out.splitlines()
    assert head.split()[:3] == ["project", "branch", "runs"]
    volcano = next(r for r in rows if "volcano" in r)
    assert volcano.split()[:3] == ["/Users/xuwentao/Projects/github/volcano", "feat-capacity-dra", "5"]
    assert all(len(r.split("  ")[0]) <= 40 for r in rows)  # a long working folder is cut in the middle
    assert any("/Users/jna…" in r and r.split()[0].endswith("agent-workflows-monorepo-v2") for r in rows)
    report = api.report(shared_wh, tmp_path / "r", ["md", "json"])[1]
    md = next(p for p in report if p.suffix == ".md").read_text()
    assert (
        "Runs per project (the working folder the session ran in, or a decision-memory harness's project) and git "
        "branch" in md
    )
    assert "feat-capacity-dra" in md
    code, _, err = run_cli("usage", "--db", str(shared_wh), "--by", "project,planet")
    assert code == 2 and "choose among agent, model, project, branch, day" in err


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_a_session_switching_branch_goes_to_the_branch_most_of_its_lines_name(tmp_path: Path) -> None:
    rows, parent = [], None
    for i, branch in enumerate(["main", "fix/x", "fix/x", ""]):
        uid = f"00000000-0000-4000-8000-{i:012d}"
        rows.append(
            {
                "type": "user" if i % 2 == 0 else "assistant",
                "uuid": uid,
                "parentUuid": parent,
                "sessionId": "s1",
                "cwd": "/work/app" if i else "",
                "gitBranch": branch,
                "timestamp": f"2026-01-01T00:00:0{i}Z",
                "message": {"role": "user", "content": "hi"}
                if i % 2 == 0
                else {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": "ok",
                    "usage": {"input_tokens": 10, "output_tokens": 2},
                },
            }
        )
        parent = uid
    _write(tmp_path / "projects" / "-work-app" / "s1.jsonl", rows)
    _write(
        tmp_path / "rollout-2026-01-01T00-00-00-0199d021-1244-77d2-b5aa-ba1d70f11e87.jsonl",
        [
            {
                "type": "session_meta",
                "timestamp": "2026-01-01T00:00:00Z",
                "payload": {
                    "id": "0199d021-1244-77d2-b5aa-ba1d70f11e87",
                    "cwd": "/work/app",
                    "git": {"commit_hash": "ab"},
                },
            },
            {
                "type": "response_item",
                "timestamp": "2026-01-01T00:00:01Z",
                "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            },
        ],
    )
    db = tmp_path / "w.duckdb"
    assert (
        run_cli(
            "ingest",
            str(tmp_path / "projects"),
            str(tmp_path / "rollout-2026-01-01T00-00-00-0199d021-1244-77d2-b5aa-ba1d70f11e87.jsonl"),
            "--db",
            str(db),
        )[0]
        == 0
    )
    got = {
        (r["agent"], r["project"], r["branch"]): r["runs"]
        for r in api.usage(db, by="agent,project,branch").iter_rows(named=True)
    }
    assert got == {("claude-code", "/work/app", "fix/x"): 1, ("codex", "/work/app", None): 1}
