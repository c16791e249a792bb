"""A package outside the project adds a format through the ``forensics.formats`` entry point: built and
pip-installed offline from a local folder (into a target folder on PYTHONPATH, so the test venv is left as
it was), then detected by content, ingested, listed by `forensics formats`, re-imported as unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import query

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "forensics-tinylog"
version = "0.1.0"
dependencies = []

[project.entry-points."forensics.formats"]
tinylog = "tinylog:FORMAT"

[tool.hatch.build.targets.wheel]
packages = ["tinylog"]
"""

MODULE = '''\
"""A made-up log: a "#tinylog" first line, then "U: text", "A: text", "C <id or -> <tool> <json args>",
"R <id> text" (a result) and "E <id> text" (an error result), "N <tool> text" (a result naming its tool, no
id) and "T <prompt tokens, cache included> <cached> <output>" (the last reply's usage) lines; anything else
is skipped and counted. A "<name>.meta" file beside a log is its side file."""
from forensics.formats import Conversation, Format, Side, ToolCall, Turn, Usage


def sniff(probe):
    return probe.head.startswith(b"#tinylog")


def read(path, log):
    turns = []
    for n, line in enumerate(open(path, encoding="utf-8").read().splitlines()[1:], 2):
        log.rows += 1
        kind, _, rest = line.partition(" ")
        if kind == "U:":
            turns.append(Turn("user", rest))
        elif kind == "A:":
            turns.append(Turn("assistant", rest))
        elif kind == "C":
            cid, tool, args = rest.split(" ", 2)
            turns.append(Turn("assistant", "", calls=[ToolCall(tool, args, None if cid == "-" else cid)]))
        elif kind in ("R", "E"):
            cid, _, text = rest.partition(" ")
            turns.append(Turn("tool", text, answers=cid, is_error=kind == "E"))
        elif kind == "N":
            tool, _, text = rest.partition(" ")
            turns.append(Turn("tool", text, tool=tool))
        elif kind == "T":
            prompt, cached, out = map(int, rest.split())
            last = [t for t in turns if t.role == "assistant"][-1]
            last.usage.append(Usage(prompt_tokens=prompt, cache_read_input_tokens=cached, output_tokens=out))
            log.skip("usage line")
        else:
            log.skip(f"line {kind[:10]!r}")
    return [Conversation(path.rsplit("/", 1)[-1], turns, title="tiny")]


FORMAT = Format("tinylog", "tinylog files (a plug-in)", sniff, read=read, suffixes=(".tiny",),
                sides=(Side("*.tiny.meta", "{base}.tiny", "what the log is about", read=False),))
'''

LOG = """#tinylog
U: 你好，帮我看看 main.py
C c1 read_file {"path": "main.py"}
R c1 print("hi")
C c2 run {"cmd": "python main.py"}
E c2 Traceback: NameError
C - grep {"pattern": "NameError"}
N grep main.py:3: NameError
T 1200 1000 40
X a line of a kind this format does not know
A: main.py 有一个 NameError。
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    pkg = root / "forensics-tinylog"
    (pkg / "tinylog").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "tinylog" / "__init__.py").write_text(MODULE)
    target = root / "site"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-build-isolation",
            "--no-deps",
            "--target",
            str(target),
            str(pkg),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert (target / "forensics_tinylog-0.1.0.dist-info" / "entry_points.txt").read_text().count("tinylog:FORMAT") == 1
    return target


def forensics(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "forensics", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_an_installed_plugin_format_is_detected_and_ingested(site: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "session.tiny").write_text(LOG, encoding="utf-8")
    (logs / "notes.tiny").write_text("not a tinylog\n")  # offered by its suffix, refused by the sniff: counted
    (logs / "session.tiny.meta").write_text("about main.py\n")  # the plug-in's side file
    db = tmp_path / "w.duckdb"
    r = forensics(site, "ingest", str(logs), "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    (src,) = out["sources"]
    assert (src["format"], src["rows_read"], src["messages_read"], src["messages_imported"], src["skipped"]) == (
        "tinylog",
        10,
        10,
        8,
        2,
    )
    assert "skipped: line 'X' x1, usage line x1" in src["note"]
    assert sorted((Path(o["path"]).name, o["status"]) for o in out["others"]) == [
        ("notes.tiny", "unrecognised"),
        ("session.tiny.meta", "side"),
    ]
    assert query(db, "SELECT position, role, tool_call_count FROM messages ORDER BY position") == [
        (0, "user", 0),
        (1, "assistant", 1),
        (2, "tool", 0),
        (3, "assistant", 1),
        (4, "tool", 0),
        (5, "assistant", 1),
        (6, "tool", 0),
        (7, "assistant", 0),
    ]
    assert query(db, "SELECT name, arguments, result_position, is_error FROM tool_calls ORDER BY position") == [
        ("read_file", '{"path": "main.py"}', 2, False),
        ("run", '{"cmd": "python main.py"}', 4, True),
        ("grep", '{"pattern": "NameError"}', 6, False),
    ]  # linked by the tool it names: the shared toolkit
    assert query(db, "SELECT position, input_tokens, cache_read_input_tokens, output_tokens FROM message_usage") == [
        (5, 200, 1000, 40)
    ]  # the prompt count less the cache reads, once
    again = forensics(site, "ingest", str(logs), "--db", str(db), "--json")
    assert json.loads(again.stdout)["sources"][0]["status"] == "unchanged"


def test_forensics_formats_lists_the_plugin_before_the_catch_alls(site: Path) -> None:
    r = forensics(site, "formats")
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names.index("tinylog") < names.index("openai") < names.index("jsonl")
    assert any(line.split()[:2] == ["tinylog", "tinylog"] for line in r.stdout.splitlines())  # the module it came from
    assert forensics(site, "ingest", "--help").stdout.count("tinylog") >= 1  # a --format choice too


def test_without_the_plugin_the_file_is_not_recognised(tmp_path: Path) -> None:
    (tmp_path / "session.tiny").write_text(LOG, encoding="utf-8")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensics",
            "ingest",
            str(tmp_path / "session.tiny"),
            "--db",
            str(tmp_path / "w.duckdb"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
    )
    assert r.returncode == 2
    assert "format not recognised" in r.stderr and "Traceback" not in r.stderr


def test_the_plugin_surface_is_pinned_and_typed() -> None:
    import forensics
    import forensics.formats as formats

    assert sorted(formats.__all__) == [
        "Conversation",
        "Event",
        "Format",
        "Log",
        "Outcome",
        "Probe",
        "Side",
        "ToolCall",
        "Turn",
        "Usage",
        "listed",
        "mapping",
        "text_of",
    ]
    assert all(getattr(formats, n) is not None for n in formats.__all__)
    assert (Path(forensics.__file__).parent / "py.typed").is_file()
