"""`forensics hooks` (issue 47): the hook command each agent's settings file names is run as the agent runs it,
with a real session file; the session is in the warehouse seconds later; the hook itself returns at once, prints
nothing and exits 0 whatever it is given; the settings files keep their comments and other content, and
`uninstall` restores them byte for byte. `forensics ingest --watch` picks up a file written after it started."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomlkit

from forensics.commands.jsonc import plain
from tests.conftest import ROOT, SHARED, query

LOGS = SHARED / "data" / "agent-logs"
SESSION = "7ef4b236-d946-48a6-a856-e45b02af7be7"  # a Claude Code session with two sub-agents
ROLLOUT = "rollout-2026-03-18T11-04-43-019d021f-1244-77d2-b5aa-ba1d70f11e87.jsonl"
THREAD = "019d021f-1244-77d2-b5aa-ba1d70f11e87"

CLAUDE_SETTINGS = """{
  // Claude Code settings, by hand
  "model": "opus",   /* the big one */
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]
  }
}
"""
GEMINI_SETTINGS = """{
  // Gemini CLI reads JSON with comments
  "theme": "GitHub",
  "hooks": {
    "SessionEnd": [
      {"hooks": [{"type": "command", "command": "notify-send bye", "name": "bye"}]},
    ],
  },
}
"""
CODEX_CONFIG = """# my Codex config
model = "gpt-5.5"  # the default

[mcp_servers.docs]
command = "docs-mcp"   # keep me
args = ["--port", "3000"]
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A user of their own: HOME, the hooks' home and CODEX_HOME in tmp_path; this checkout importable."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "FORENSICS_HOME": str(home / ".forensics"),
        "CODEX_HOME": str(home / ".codex"),
        "PYTHONPATH": str(ROOT),
        "CI": "true",
    }


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args], capture_output=True, text=True, env=env, timeout=120
    )


def _wait_for(db: Path, native: str, log: Path, seconds: float = 90) -> float:
    """Seconds until the hook's ingest logged it and the warehouse holds ``native``."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if log.exists() and "ingested" in log.read_text() and db.exists():
            try:
                if query(db, "SELECT count(*) FROM conversations WHERE native_id = ?", [native])[0][0]:
                    return time.monotonic() - began
            except Exception:  # noqa: BLE001 - the ingest still holds the file
                pass
        time.sleep(0.2)
    raise AssertionError(f"not ingested in {seconds} s; log:\n{log.read_text() if log.exists() else '(none)'}")


def _session(tmp_path: Path) -> Path:
    src = next(LOGS.joinpath("claude_code").rglob(f"{SESSION}.jsonl"), None)
    if src is None:
        pytest.skip(f"{LOGS} not found (set FORENSICS_SHARED)")
    dest = tmp_path / "projects" / "-Users-me-app"
    dest.mkdir(parents=True)
    shutil.copy2(src, dest / src.name)
    shutil.copytree(src.with_suffix(""), dest / SESSION)
    return dest / src.name


def test_claude_code_session_end_ingests_the_session(tmp_path: Path, env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(CLAUDE_SETTINGS)
    db = tmp_path / "w.duckdb"
    r = cli(env, "hooks", "install", "claude-code", "--db", str(db))
    assert r.returncode == 0 and "hook installed in" in r.stdout, r.stderr
    text = settings.read_text()
    assert text.startswith("{\n  // Claude Code settings, by hand\n") and "/* the big one */" in text
    got = plain(text)
    assert got["model"] == "opus" and got["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert got["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "echo done"}]}]
    (hook,) = got["hooks"]["SessionEnd"][0]["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 10
    assert cli(env, "hooks", "install", "claude-code", "--db", str(db)).stdout.startswith("claude-code: already")

    transcript = _session(tmp_path)
    event = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": "/Users/me/app",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    began = time.monotonic()
    done = subprocess.run(
        shlex.split(hook["command"]), input=json.dumps(event), capture_output=True, text=True, env=env, timeout=30
    )
    took = time.monotonic() - began
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert took < 5, took  # the agent waits for no ingest
    log = Path(env["FORENSICS_HOME"]) / "hooks.log"
    _wait_for(db, SESSION, log)
    assert query(db, "SELECT count(*) FROM conversations")[0][0] == 3  # the session and its two sub-agents
    lines = log.read_text().splitlines()
    assert any(f"session {SESSION} ended; ingesting {SESSION}.jsonl and its subagents/ from" in ln for ln in lines)
    assert any("3 conversations new, 0 updated" in ln for ln in lines)

    status = cli(env, "hooks", "status").stdout
    assert f"claude-code  installed      {settings}" in status and "3 conversations new" in status
    r = cli(env, "hooks", "uninstall", "claude-code")
    assert r.returncode == 0 and "restored byte for byte" in r.stdout
    assert settings.read_bytes() == CLAUDE_SETTINGS.encode()


def test_codex_notify_ingests_the_rollout_and_uninstall_restores(tmp_path: Path, env: dict[str, str]) -> None:
    src = next(LOGS.joinpath("codex_cli").rglob(ROLLOUT), None)
    if src is None:
        pytest.skip(f"{LOGS} not found (set FORENSICS_SHARED)")
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    db = tmp_path / "w.duckdb"
    assert cli(env, "hooks", "install", "codex", "--db", str(db)).returncode == 0
    doc = tomlkit.parse(config.read_text())
    assert doc["model"] == "gpt-5.5" and doc["mcp_servers"]["docs"]["args"] == ["--port", "3000"]
    assert "# keep me" in config.read_text() and "# the default" in config.read_text()
    notify = list(doc["notify"])
    day = Path(env["CODEX_HOME"]) / "sessions" / "2026" / "03" / "18"
    day.mkdir(parents=True)
    shutil.copy2(src, day / ROLLOUT)
    event = {
        "type": "agent-turn-complete",
        "thread-id": THREAD,
        "turn-id": "t1",
        "cwd": "/per/dev/shell-ws",
        "input-messages": ["hi"],
        "last-assistant-message": "done",
    }
    done = subprocess.run([*notify, json.dumps(event)], capture_output=True, text=True, env=env, timeout=30)
    assert (done.returncode, done.stdout) == (0, "")
    _wait_for(db, THREAD, Path(env["FORENSICS_HOME"]) / "hooks.log")
    assert query(db, "SELECT working_dir, git_branch FROM conversations")[0] == ("/per/dev/shell-ws", None)
    assert cli(env, "hooks", "uninstall", "codex").returncode == 0
    assert config.read_bytes() == CODEX_CONFIG.encode()


def test_codex_keeps_a_notify_of_its_own(env: dict[str, str]) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text('notify = ["notify-send", "codex"]\n')
    r = cli(env, "hooks", "install", "codex")
    assert r.returncode == 2 and "already has notify" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert config.read_text() == 'notify = ["notify-send", "codex"]\n'


def test_gemini_session_end_goes_first_and_uninstall_keeps_later_edits(tmp_path: Path, env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_SETTINGS)
    assert cli(env, "hooks", "install", "gemini", "--db", str(tmp_path / "w.duckdb")).returncode == 0
    got = plain(settings.read_text())
    first, second = got["hooks"]["SessionEnd"]
    assert first["hooks"][0]["name"] == "forensics-ingest" and first["hooks"][0]["timeout"] == 10000
    assert second == {"hooks": [{"type": "command", "command": "notify-send bye", "name": "bye"}]}
    assert "// Gemini CLI reads JSON with comments" in settings.read_text()
    edited = settings.read_text().replace('"theme": "GitHub"', '"theme": "Dracula"')
    settings.write_text(edited)  # the user changes something else after install
    r = cli(env, "hooks", "uninstall", "gemini")
    assert r.returncode == 0 and "other changes since install are kept" in r.stdout
    assert settings.read_text() == GEMINI_SETTINGS.replace('"theme": "GitHub"', '"theme": "Dracula"')


def test_a_missing_settings_file_is_created_and_removed_again(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    assert cli(env, "hooks", "install", "claude-code", "--project", str(project)).returncode == 0
    made = project / ".claude" / "settings.json"
    assert plain(made.read_text())["hooks"]["SessionEnd"][0]["hooks"][0]["type"] == "command"
    r = cli(env, "hooks", "uninstall", "claude-code", "--project", str(project))
    assert "did not exist before install" in r.stdout and not made.exists()
    assert "no forensics hook" in cli(env, "hooks", "uninstall", "claude-code", "--project", str(project)).stdout


@pytest.mark.parametrize("body", ['{"model": "opus",, }', "[1, 2]", '{"hooks": [1]}', '{"a": "open', "/* open"])
def test_a_settings_file_it_cannot_read_is_left_alone(env: dict[str, str], tmp_path: Path, body: str) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(body)
    r = cli(env, "hooks", "install", "claude-code", "--settings", str(settings))
    assert r.returncode == 2 and "nothing was changed" in r.stderr and "Traceback" not in r.stderr
    assert settings.read_text() == body


@pytest.mark.parametrize(
    "given", ["", "not json", "[]", '{"transcript_path": 7}', '{"transcript_path": "/no/such/file.jsonl"}']
)
def test_the_hook_never_fails_the_agent(env: dict[str, str], tmp_path: Path, given: str) -> None:
    db = tmp_path / "w.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "forensics", "hooks", "run", "claude-code", "--db", str(db)],
        input=given,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    log = (Path(env["FORENSICS_HOME"]) / "hooks.log").read_text()
    assert "nothing to ingest" in log or "hook failed" in log
    assert not db.exists()


def test_ingest_watch_picks_up_a_new_session(env: dict[str, str], tmp_path: Path) -> None:
    transcript = _session(tmp_path / "src")
    folder = tmp_path / "watched"
    folder.mkdir()
    db = tmp_path / "w.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "forensics", "ingest", str(folder), "--db", str(db), "--watch", "--interval", "0.3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(1.5)  # a pass over the empty folder
        shutil.copy2(transcript, folder / transcript.name)
        began, out = time.monotonic(), ""
        assert proc.stdout is not None
        while "1 conversations new" not in out and time.monotonic() - began < 60:
            out += proc.stdout.readline()
        assert "1 conversations new" in out, out
    finally:
        proc.terminate()
        proc.wait(30)
    assert query(db, "SELECT native_id FROM conversations") == [(SESSION,)]


def test_watching_nothing_is_a_clear_error(env: dict[str, str], tmp_path: Path) -> None:
    r = cli(env, "ingest", str(tmp_path / "nope"), "--db", str(tmp_path / "w.duckdb"), "--watch")
    assert r.returncode == 2 and "no such file or folder to watch" in r.stderr and "Traceback" not in r.stderr
    r = cli(env, "ingest", str(tmp_path), "--watch", "--format", "jsonl")
    assert r.returncode == 2 and "--watch reads each file as detected" in r.stderr
