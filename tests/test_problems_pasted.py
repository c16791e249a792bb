"""``user_repeated`` from what the person pastes or sends again (``forensics/analyzers/problems/pasted.py``): an
error pasted back after the assistant's change (``error_again``), the same message sent again after no reply
(``sent_again``); and what is neither: a new error, an error before any change, code that names an error, a message
sent twice with no time between."""

from __future__ import annotations

import json
from pathlib import Path

from forensics.analyzers.problems import pasted
from tests.test_problems import Session, run, verbatim

TSC = "src/app/app.routes.ts:13:23 - error TS2307: Cannot find module './settings/settings.page' or its types."


def _user_repeated(tmp: Path, *sessions: Session) -> list[dict]:
    found, _ = run(tmp, *sessions)
    assert all(verbatim(tmp, f) for f in found)
    return [f for f in found if f["kind"] == "user_repeated"]


def test_the_error_pasted_back_after_a_fix_is_a_repeat(tmp_path: Path) -> None:
    s = (
        Session("paste")
        .add("user", f"the build fails:\n{TSC}\nfix it")
        .add("assistant", "Create the page first:\n```ts\nexport class SettingsPage {}\n```")
        # other numbers, another log around it: one template
        .add(
            "user",
            f"polyfills.js:12 [webpack-dev-server] Errors while compiling. Reload prevented.\n{TSC.replace('13:23', '14:5')}",
        )
        .add("assistant", "Then add it to tsconfig.")
    )
    (f,) = _user_repeated(tmp_path, s)
    assert (f["positions"], f["rule"]) == ([2], "error_again")
    assert f["quote"].startswith("src/app/app.routes.ts:14:5 - error TS2307: Cannot find module")
    assert f["norm"].startswith("the same error at [0], before the assistant's change at [1]")


def test_the_error_a_tool_showed_pasted_back_after_an_edit_is_a_repeat(tmp_path: Path) -> None:
    s = (
        Session("tool")
        .add("user", "run the server")
        .call("bash", {"command": "curl -s localhost:8080/api"}, "HTTP/1.1 503 Service Temporarily Unavailable")
        .call("edit", {"path": "server.py", "old": "a", "new": "b"}, "edited server.py")
        .add("assistant", "I've fixed the handler; it should answer now.")
        .add("user", "nope:\nHTTP/1.1 503 Service Temporarily Unavailable")
    )
    (f,) = _user_repeated(tmp_path, s)
    assert f["rule"] == "said_again+error_again" and f["positions"] == [6]  # the cue word quoted first


def test_a_new_error_or_an_error_before_any_change_is_not_a_repeat(tmp_path: Path) -> None:
    new = (
        Session("new")
        .add("user", f"{TSC}\nfix it")
        .add("assistant", "Create the page:\n```ts\nexport class SettingsPage {}\n```")
        .add("user", "TypeError: Cannot read properties of undefined (reading 'theme')")  # the next bug
        .add("assistant", "Initialise the theme.")
    )
    talk = (
        Session("talk")
        .add("user", f"{TSC}\nwhat does this mean?")
        .add("assistant", "The module path does not resolve.")  # no change proposed
        .add("user", f"I see it again in the other terminal window, right after npm start:\n{TSC}")
        .add("assistant", "Yes, that one.")
    )
    assert _user_repeated(tmp_path, new, talk) == []


def test_code_that_names_an_error_is_not_error_output() -> None:
    code = "\n".join(
        [
            "throw new Error(`Variable reference not found: ${value}`);",
            '-- Avoid showing the error if it is "file not found"',
            'vim.notify("[illustrate.nvim] Error: " .. result, vim.log.levels.ERROR)',
            "ValueError for any invalid input domain (non-finite inputs)",
            "(error: https://example.com/x",  # no error named in words once masked
        ]
    )
    assert pasted.templates(code) == {}
    out = (
        "Traceback (most recent call last):\n  File \"a.py\", line 3\nKeyError: 'theme'\nerror[E0308]: mismatched types"
    )
    assert set(pasted.templates(out)) == {"keyerror: '<q>'", "error[<id>]: mismatched types"}


def test_a_message_sent_again_after_no_reply_is_a_repeat_a_redelivery_is_not(tmp_path: Path) -> None:
    s = Session("again").add("user", "hi").add("assistant", "Hello! What can I do?").add("user", "nihao")
    s.lines.append(json.dumps({"id": 4, "parent_id": 3, "timestamp": 1780000064, "role": "user", "content": "nihao"}))
    s.n = 4
    s.add("assistant", "Hello again!")
    twice = (
        Session("twice").add("user", "hi").add("assistant", "Hello!").add("user", "build it").add("user", "build it")
    )
    twice.add("assistant", "Building.")  # one second between: the log's re-delivery
    found = _user_repeated(tmp_path, s, twice)
    assert [(f["native_id"], f["positions"], f["rule"], f["quote"]) for f in found] == [
        ("again", [3], "sent_again", "nihao")
    ]
