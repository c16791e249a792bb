"""The problem rules that carry to agent families they were not written on (issue 41, docs/failures-evaluation.md
"Held-out recall of the problems"): each on snippets of the shared real logs (the texts and arguments verbatim),
ingested and reported through the real pipeline, and the bench's leave-one-family-out count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.problem_labels import Labeled
from bench.problems import lofo, rule_names
from forensics.analyzers.problems.actions import lines_read
from tests.test_problems import Session, run, verbatim

ADMIN = "src/components/AdminPanel.jsx"
# continue_dev/fabien-lessirard+dotfiles (e00926af), positions 41-47: the file read, the edit failing, the file read
# again, the claim
CONTENT = (
    "Content of src/components/AdminPanel.jsx:\nimport React, { useState, useEffect } from 'react';\n"
    "import Card from './Card';\nimport { Settings, RefreshCw, Trash2, Users } from 'lucide-react';\n"
)
NOT_FOUND = (
    "Edit at index 0: string not found in file: \"import React, { useState, useEffect } from 'react';\n"
    "// ... (other imports)\nimport { useAuth } from '../hooks/useAuth';\""
)
CLAIM = (
    "J'ai mis à jour les fichiers nécessaires pour vous permettre de modifier le rôle des utilisateurs "
    "directement depuis le panneau d'administration."
)


def failed(s: Session, name: str, args: dict[str, Any], result: str) -> Session:
    """A call whose result the format flags as an error."""
    s.calls += 1
    cid = f"c{s.calls}"
    s.add(
        "assistant",
        "",
        tool_calls=[{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    )
    return s.add("tool", result, tool_call_id=cid, is_error=True)


def admin_panel(sid: str, claim: str = CLAIM) -> Session:
    s = Session(sid).add("user", "je voudrais pouvoir changer le role des utilisateurs depuis l'ui admin")
    s.call("Read", {"filepath": ADMIN}, CONTENT)
    failed(
        s,
        "MultiEdit",
        {"file_path": ADMIN, "edits": [{"old_string": "// ... (other imports)", "new_string": "x"}]},
        NOT_FOUND,
    )
    s.call("Read", {"filepath": ADMIN}, CONTENT)
    return s.add("assistant", claim)


def test_a_failed_edit_then_reads_then_a_claim(tmp_path: Path) -> None:
    """The turn's last edit failed and only reads followed: the claim that ends the turn is over an error
    (``claim_over_errors`` at every turn's end, not only the run's last answer); the whole file read again, unchanged,
    is a re-read, and both rules that see it are named."""
    found, _ = run(tmp_path, admin_panel("claim"))
    got = {(f["kind"], f["rule"], tuple(f["positions"])) for f in found}
    assert got == {
        ("redundant_work", "same_action_same_result (Read)+reread_unchanged", (1, 5)),
        ("gave_up_or_false_success", "claim_over_errors", (4, 7)),
    }
    assert all(verbatim(tmp_path, f) for f in found)


def test_a_successful_edit_after_the_failure_backs_the_claim(tmp_path: Path) -> None:
    s = admin_panel("redone", claim="")
    s.lines.pop()
    s.n -= 1
    s.call(
        "MultiEdit",
        {"file_path": ADMIN, "edits": [{"old_string": "import Card", "new_string": "import Card2"}]},
        "Successfully edited",
    )
    s.add("assistant", CLAIM)
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] == "gave_up_or_false_success"] == []


def test_the_lines_a_read_call_reads() -> None:
    """Read tools' offset/limit (Claude Code), view_range, a command's sed range or head; tail is not known."""
    cap = "/Users/xuwentao/Projects/github/volcano/pkg/scheduler/plugins/capacity/capacity.go"
    assert lines_read(json.dumps({"file_path": cap, "offset": 151, "limit": 150})) == (151, 300)
    assert lines_read(json.dumps({"file_path": cap, "limit": 200})) == (1, 200)
    assert lines_read(json.dumps({"file_path": cap, "offset": "1180", "limit": "120"})) == (1180, 1299)
    assert lines_read(json.dumps({"filepath": ADMIN})) == (1, float("inf"))
    assert lines_read(json.dumps({"command": ["bash", "-lc", "nl -ba kernel/src/execution.rs | sed -n '1,520p'"]})) == (
        1,
        520,
    )
    assert lines_read(json.dumps({"command": "view", "path": "/a.py", "view_range": [10, -1]})) == (10, float("inf"))
    assert lines_read(json.dumps({"cmd": "head -40 opk/ui/pdl_editor.py"})) == (1, 40)
    assert lines_read(json.dumps({"command": "tail -n 50 server.log"})) is None


def test_reads_of_other_lines_are_not_a_reread(tmp_path: Path) -> None:
    """Claude Code reading capacity.go a page at a time (offset/limit) reads new lines each time; a read inside a
    page already read is a re-read, citing only the read that covered it."""
    cap = "/Users/xuwentao/Projects/github/volcano/pkg/scheduler/plugins/capacity/capacity.go"
    s = Session("pages").add("user", "analyse the DRA support of the capacity plugin")
    for offset, limit in ((1, 150), (151, 150), (1180, 120), (100, 40)):
        s.call("Read", {"file_path": cap, "offset": offset, "limit": limit}, f"{offset}\tpackage capacity\n" * 3)
    s.add("assistant", "The capacity plugin tracks DRA quotas per queue.")
    found, _ = run(tmp_path, s)
    assert [(f["rule"], f["positions"]) for f in found if f["kind"] == "redundant_work"] == [
        ("reread_unchanged", [1, 7])
    ]


# terminal-bench-leaderboard, mini-swe-agent with Claude Sonnet 4, intrusion-detection (positions 59-67): the
# script that writes alert.json run, the file shown; the script run again (alert.json written anew), the file
# shown again beside the first 50 lines of another file
RUN_AND_SHOW = './intrusion_detector.sh && echo "" && echo "=== Updated alert.json ===" && cat alert.json'
SHOW_BOTH = (
    'echo "=== alert.json content ===" && cat alert.json && echo "" && '
    "head -50 incident_45.32.67.89_20250814_051902.txt"
)


def test_a_range_read_in_another_step_of_the_command_is_not_the_files() -> None:
    """``cat alert.json && head -50 incident….txt`` reads alert.json whole: head's 50 lines are the other file's."""
    assert lines_read(json.dumps({"command": SHOW_BOTH})) == (1, float("inf"))
    assert lines_read(json.dumps({"command": "cd /app && nl -ba a.py | sed -n '50,120p' && head -5 b.py"})) == (50, 120)
    assert lines_read(json.dumps({"command": "head -5 b.py; sed -n '50,120p' a.py"})) == (1, 5)


def test_a_file_a_script_wrote_again_shown_whole_is_no_reread(tmp_path: Path) -> None:
    """The second show of alert.json reads another text (the script wrote it again, a new timestamp): the file
    changed outside the agent's edits, so no reread_unchanged (it was cited when head's range was read as
    alert.json's)."""
    s = Session("tb").add("user", "Create an intrusion detection system that can analyze log files")
    s.call("bash", {"command": RUN_AND_SHOW}, '{\n  "timestamp": "2025-08-14T05:18:45Z",\n  "alerts": []\n}')
    s.call("bash", {"command": "./intrusion_detector.sh"}, "Analysis complete. Generated alert.json and report.json")
    s.call("bash", {"command": SHOW_BOTH}, '{\n  "timestamp": "2025-08-14T05:19:01Z",\n  "alerts": []\n}\nINCIDENT')
    s.add("assistant", "Both scripts are working perfectly and meet all the requirements.")
    found, _ = run(tmp_path, s)
    assert [f["rule"] for f in found if f["kind"] == "redundant_work"] == []


def test_a_directive_said_again_much_later_and_in_other_words(tmp_path: Path) -> None:
    """cursor/choigoyoon+Oifunding: "변경하지말고 코드만 제안해봐" (don't change anything, only suggest code) at one turn,
    "니가 수정하면 안된다" (you must not modify it) many turns later: the person re-states the constraint."""
    s = Session("ko").add("user", "@crypto_data_manager.py 로그파일보고 수정할 내용을 제안만해봐")
    s.add("assistant", "로그를 보니 두 가지를 제안합니다.")
    s.add("user", "변경하지말고 코드만 제안해봐").add("assistant", "네, 코드만 제안하겠습니다.")
    for k in range(12):
        s.add("user", f"심볼 {k}번 데이터도 확인해줘").add("assistant", f"심볼 {k}번 데이터를 확인했습니다.")
    s.add("user", "니가 수정하면 안된다").add("assistant", "알겠습니다.")
    found, _ = run(tmp_path, s)
    assert [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "user_repeated"] == [
        ("directive_again", [28], "니가 수정하면 안된다")
    ]


def test_corrections_and_shouting_in_other_languages(tmp_path: Path) -> None:
    """gemini-cli prompt logs in Russian: "все тоже самое" (all the same) and "ничего не изменилось" (nothing changed)
    after an answer are said again; a line shouted in capitals is frustration, a short one in capitals is not."""
    ru = (
        Session("ru")
        .add("user", "мой gnome-calendar перестал брать тему, найди причину и реши")
        .add("assistant", "Я добавил переменную GTK_THEME в ~/.profile.")
        .add("user", "ничего не изменилось")
        .add("assistant", "Попробуйте перезапустить сессию.")
        .add("user", "ПОСМОТРИ БЛЯТЬ СПИСОК ПАПОК ВНУТРИ ДОМАШНЕЙ ПАПКИ И УВИДИШЬ")
        .add("assistant", "Вижу папку juno-ocean.")
        .add("user", "все тоже самое")
    )
    short = (
        Session("short")
        .add("user", "convert this code to the If_V style")
        .add("assistant", "Here is the converted code.")
        .add("user", "DELETE THE FINAL FUNCTION")
    )
    found, _ = run(tmp_path, ru, short)
    got = {(f["native_id"], f["kind"], f["rule"], tuple(f["positions"])) for f in found}
    assert got == {
        ("ru", "user_repeated", "said_again", (2,)),
        ("ru", "user_repeated", "said_again", (6,)),
        ("ru", "frustration", "shouting", (4,)),
        ("ru", "gave_up_or_false_success", "claim_contradicted", (1, 2)),
    }


def test_leave_one_family_out_counts_a_label_only_when_its_rule_finds_another_family() -> None:
    assert rule_names("same_action_3_times (Bash)") == {"same_action_N_times"}
    assert rule_names("same_action_same_result (Read)+reread_unchanged") == {
        "same_action_same_result",
        "reread_unchanged",
    }
    labeled = [
        Labeled("a", "1", "codex_cli", "c1", "dev", [{"kind": "redundant_work", "positions": [10]}]),
        Labeled("b", "2", "continue_dev", "c2", "dev", [{"kind": "redundant_work", "positions": [45]}]),
        Labeled("c", "3", "aider", "c3", "dev", [{"kind": "loop", "positions": [4]}]),
    ]
    found = [
        {"conversation_id": "c1", "kind": "redundant_work", "positions": [12], "rule": "reread_unchanged"},
        {
            "conversation_id": "c2",
            "kind": "redundant_work",
            "positions": [41, 45],
            "rule": "same_action_same_result (Read)+reread_unchanged",
        },
        {"conversation_id": "c3", "kind": "loop", "positions": [4, 6, 8], "rule": "asked_for_input_3_times"},
    ]
    res = lofo(labeled, found)
    assert (res["found"], res["labels"]) == (2, 3)
    assert res["rules"] == {
        "asked_for_input_N_times": ["aider"],
        "reread_unchanged": ["codex_cli", "continue_dev"],
        "same_action_same_result": ["continue_dev"],
    }
    # without the second family's label, the first is the only family its rule finds: not counted
    assert lofo(labeled[:1], found)["found"] == 0
