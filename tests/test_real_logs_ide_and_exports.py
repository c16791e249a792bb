"""The real logs of Cline, Continue, Cursor and ChatGPT exports (../shared/data/agent-logs, not copied here:
no permissive license): each family's folder imports with no flags, side files named as read with their
main file, and its figures equal those counted from the raw files by the tools' own rules
(tests/agent_counts.py); a re-import adds nothing and the report runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_counts import REAL, Real
from tests.conftest import SHARED, query, run_cli

LOGS = SHARED / "data" / "agent-logs"


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    if not LOGS.is_dir():
        pytest.skip(f"{LOGS} not found (the shared real logs; set FORENSICS_SHARED)")
    root = tmp_path_factory.mktemp("real")
    out = {}
    for family in REAL:
        db = root / f"{family}.duckdb"
        code, stdout, err = run_cli("ingest", str(LOGS / family), "--db", str(db), "--json")
        assert code == 0, err
        out[family] = (db, json.loads(stdout))
    return out


def figures(db: Path) -> Real:
    (convs,) = query(db, "SELECT count(*) FROM conversations")[0]
    (person,) = query(db, "SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path")[0]
    calls, linked, errors = query(
        db,
        "SELECT count(*), count(result_seq), count(*) FILTER (WHERE result_seq IS "
        "NOT NULL AND is_error) FROM tool_calls",
    )[0]
    return Real(convs, person, calls, linked, errors)


@pytest.mark.parametrize("family", list(REAL))
def test_each_family_imports_and_its_figures_match_the_raw_files(warehouses: dict, family: str) -> None:
    fmt, count = REAL[family]
    db, run = warehouses[family]
    assert query(db, "SELECT DISTINCT format FROM sources") == [(fmt,)]
    assert all(s["status"] != "failed" for s in run["sources"])
    assert figures(db) == count(LOGS / family)


def test_the_figures_are_the_ones_read_by_hand(warehouses: dict) -> None:
    """Read against the files: Cline's two full tasks hold 9 of the person's messages among 39 on the user
    role, its two ui_messages.json alone 19; Cursor's workspace database has no chat bodies, only the
    person's 284 prompts; 6 ChatGPT tool messages (a custom GPT's action) answer no call."""
    assert figures(warehouses["cline_roo"][0]) == Real(4, 28, 107, 101, 4)
    assert figures(warehouses["cursor"][0]) == Real(1, 284, 0, 0, 0)
    assert figures(warehouses["chatgpt_export"][0]) == Real(30, 47, 7, 7, 0)
    assert figures(warehouses["continue_dev"][0]) == Real(6, 33, 40, 39, 2)


def test_side_files_are_named_with_their_main_file(warehouses: dict) -> None:
    notes = {
        family: " ".join(n for s in run["sources"] for n in s.get("notes") or [s.get("note") or ""])
        for family, (_, run) in warehouses.items()
    }
    assert "read with it: ui_messages.json" in notes["cline_roo"] and "task_metadata.json" in notes["cline_roo"]
    assert "read with it: sessions.json" in notes["continue_dev"]
    assert "read with it: shared_conversations.json (1 shared links, not conversations)" in notes["chatgpt_export"]
    assert "keep their messages in the global database" in notes["cursor"]


@pytest.mark.parametrize("family", list(REAL))
def test_re_importing_adds_nothing_and_the_report_runs(warehouses: dict, family: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses[family][0], db)
    before = figures(db)
    code, out, err = run_cli("ingest", str(LOGS / family), "--db", str(db), "--json")
    assert code == 0, err
    totals = json.loads(out)["totals"]
    assert (totals["conversations_new"], totals["conversations_updated"], totals["messages_imported"]) == (0, 0, 0)
    assert figures(db) == before
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, f"{family}: {err}"


def _ingest(tmp_path: Path, *paths: Path) -> Path:
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", *map(str, paths), "--db", str(db))
    assert code == 0, err
    return db


def test_cline_results_are_linked_by_the_tool_and_argument_they_echo(tmp_path: Path) -> None:
    """Cline runs one tool per response; a result names it and its argument. A result for a call the response
    did not make (a request re-sent after a failure) stays unlinked; Roo Code's reply inside a tool_result is
    the person's."""
    task = tmp_path / "tasks" / "1750000000000"
    task.mkdir(parents=True)
    say = lambda role, *texts: {"role": role, "content": [{"type": "text", "text": t} for t in texts]}  # noqa: E731
    (task / "api_conversation_history.json").write_text(
        json.dumps(
            [
                say("user", "<task>\nread b.py\n</task>", "<environment_details>\nx\n</environment_details>"),
                say("assistant", "<read_file>\n<path>b.py</path>\n</read_file>"),
                say(
                    "user",
                    "[read_file for 'b.py'] Result:",
                    "print(1)",
                    "<environment_details>\nx\n</environment_details>",
                ),
                say("assistant", "<execute_command>\n<command>ls</command>\n</execute_command>"),
                say("user", "[read_file for 'a.py'] Result:", "stale", "[TASK RESUMPTION] This task was interrupted."),
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t1", "name": "execute_command", "input": {"command": "false"}}
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [
                                {
                                    "type": "text",
                                    "text": "Command executed with exit code 1\n<user_message>\nwhy?\n</user_message>",
                                }
                            ],
                        }
                    ],
                },
            ]
        )
    )
    db = _ingest(tmp_path, task / "api_conversation_history.json")
    assert query(db, "SELECT name, result_seq IS NOT NULL, is_error FROM tool_calls ORDER BY seq") == [
        ("read_file", True, False),
        ("execute_command", False, None),
        ("execute_command", True, True),
    ]
    assert query(db, "SELECT origin, content FROM messages WHERE role = 'user' ORDER BY seq") == [
        ("person", "read b.py"),
        ("harness", "<environment_details>\nx\n</environment_details>"),
        ("harness", "<environment_details>\nx\n</environment_details>"),
        ("harness", "[TASK RESUMPTION] This task was interrupted."),
        ("person", "why?"),
    ]


def test_continue_sessions_of_the_2023_python_server(tmp_path: Path) -> None:
    """server/continuedev/core/main.py (2023): SessionState.history of steps, and the older history.timeline."""
    sessions = tmp_path / ".continue" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "abc.json").write_text(
        json.dumps(
            {
                "session_state": {
                    "history": [
                        {
                            "step_type": "UserInputStep",
                            "name": "User Input",
                            "description": "sort a dict?",
                            "hide": False,
                        },
                        {
                            "step_type": "SimpleChatStep",
                            "name": "Sorting",
                            "description": "sorted(d.items())",
                            "hide": False,
                        },
                        {"step_type": "DefaultOnTracebackStep", "name": "x", "description": "", "hide": True},
                    ],
                    "context_items": [],
                },
                "title": "Sorting",
                "workspace_directory": "/w",
                "session_id": "abc",
            }
        )
    )
    (sessions / "old.json").write_text(
        json.dumps(
            {
                "history": {
                    "timeline": [
                        {
                            "step": {
                                "class_name": "UserInputStep",
                                "name": "User Input",
                                "description": "fix it",
                                "hide": False,
                            },
                            "depth": 0,
                        },
                        {"step": {"class_name": "SimpleChatStep", "description": "done", "hide": False}, "depth": 0},
                    ],
                    "current_index": 1,
                },
                "active": False,
                "session_info": {"session_id": "old", "title": "Old"},
            }
        )
    )
    db = _ingest(tmp_path, tmp_path / ".continue")
    assert query(
        db,
        "SELECT c.native_id, m.role, m.origin, m.content FROM messages m JOIN conversations c "
        "USING (conversation_id) ORDER BY c.native_id, m.seq",
    ) == [
        ("abc", "user", "person", "sort a dict?"),
        ("abc", "assistant", "assistant", "sorted(d.items())"),
        ("old", "user", "person", "fix it"),
        ("old", "assistant", "assistant", "done"),
    ]


def test_an_export_that_breaks_off_keeps_what_came_before(tmp_path: Path) -> None:
    """conversations.json is read item by item: a conversation that is not JSON quarantines the rest of the
    file (nothing after it can be delimited) and leaves the ones before it imported."""
    good = {
        "id": "c1",
        "title": "t",
        "current_node": "u",
        "mapping": {
            "u": {
                "id": "u",
                "parent": None,
                "children": [],
                "message": {
                    "id": "u",
                    "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": ["hi"]},
                },
            }
        },
    }
    src = tmp_path / "conversations.json"
    src.write_text("[" + json.dumps(good) + ', {"id": "c2", "mapping": {"x": ]')
    db = _ingest(tmp_path, src)
    assert query(db, "SELECT native_id FROM conversations") == [("c1",)]
    (reason,) = query(db, "SELECT reason FROM quarantine")[0]
    assert reason.startswith("invalid JSON") and "the rest of the file" in reason


def test_cursor_reads_every_place_a_version_kept_its_chats_once(tmp_path: Path) -> None:
    """A workspace state.vscdb of late 2024: chat-panel tabs, composers inline in composer.composerData (one
    of them also a tab: read once), an empty draft, and prompts of which one no chat holds."""
    import sqlite3

    db = tmp_path / "state.vscdb"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    tabs = {
        "tabs": [
            {
                "tabId": "t1",
                "chatTitle": "a",
                "bubbles": [{"type": "user", "text": "why?"}, {"type": "ai", "rawText": "because"}],
            },
            {"tabId": "t2", "bubbles": []},
        ]
    }
    composers = {
        "allComposers": [
            {
                "composerId": "c1",
                "name": "b",
                "conversation": [
                    {"type": 1, "bubbleId": "u", "text": "fix it"},
                    {"type": 2, "bubbleId": "a", "text": "done"},
                ],
            },
            {"composerId": "t1", "conversation": [{"type": 1, "bubbleId": "x", "text": "why?"}]},
            {"composerId": "c3", "name": "listed only"},
        ]
    }
    prompts = [
        {"text": "why?", "commandType": 4},
        {"text": "fix it", "commandType": 4},
        {"text": "rename x", "commandType": 1},
    ]
    gens = [{"unixMs": 1735689600000, "generationUUID": "g", "type": "cmdk", "textDescription": "rename x"}]
    for key, value in (
        ("workbench.panel.aichat.view.aichat.chatdata", tabs),
        ("composer.composerData", composers),
        ("aiService.prompts", prompts),
        ("aiService.generations", gens),
    ):
        con.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, json.dumps(value)))
    con.commit()
    con.close()
    out = _ingest(tmp_path, db)
    assert query(
        out,
        "SELECT c.native_id, m.role, m.content, epoch(m.created_at) FROM messages m JOIN conversations c "
        "USING (conversation_id) ORDER BY c.native_id, m.seq",
    ) == [
        ("aiService.prompts", "user", "rename x", 1735689600.0),
        ("c1", "user", "fix it", None),
        ("c1", "assistant", "done", None),
        ("t1", "user", "why?", None),
        ("t1", "assistant", "because", None),
    ]


def test_cursor_prompts_said_in_global_composers_are_not_counted_twice(tmp_path: Path) -> None:
    """`ingest ~/.config/Cursor/User`: the global database holds a composer's messages, the workspace one its
    prompt history; a prompt the composer holds is the global file's, only the other one is the workspace's."""
    import sqlite3

    user = tmp_path / "User"
    (user / "globalStorage").mkdir(parents=True)
    (user / "workspaceStorage" / "w1").mkdir(parents=True)
    con = sqlite3.connect(user / "globalStorage" / "state.vscdb")
    con.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    con.execute(
        "INSERT INTO cursorDiskKV VALUES (?, ?)",
        (
            "composerData:c1",
            json.dumps(
                {
                    "composerId": "c1",
                    "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1}, {"bubbleId": "b2", "type": 2}],
                }
            ),
        ),
    )
    con.execute(
        "INSERT INTO cursorDiskKV VALUES (?, ?)", ("bubbleId:c1:b1", json.dumps({"type": 1, "text": "add tests"}))
    )
    con.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", ("bubbleId:c1:b2", json.dumps({"type": 2, "text": "added"})))
    con.commit()
    con.close()
    con = sqlite3.connect(user / "workspaceStorage" / "w1" / "state.vscdb")
    con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    con.execute(
        "INSERT INTO ItemTable VALUES (?, ?)",
        (
            "composer.composerData",
            json.dumps({"allComposers": [{"type": "head", "composerId": "c1", "name": "tests"}]}),
        ),
    )
    con.execute(
        "INSERT INTO ItemTable VALUES (?, ?)",
        (
            "aiService.prompts",
            json.dumps([{"text": "add tests", "commandType": 4}, {"text": "explain this", "commandType": 1}]),
        ),
    )
    con.commit()
    con.close()
    db = _ingest(tmp_path, user)
    assert query(
        db,
        "SELECT c.native_id, m.content FROM messages m JOIN conversations c USING (conversation_id) "
        "WHERE m.role = 'user' ORDER BY 1",
    ) == [("aiService.prompts", "explain this"), ("c1", "add tests")]
