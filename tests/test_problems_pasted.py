"""``user_repeated`` from what the person pastes or sends again (``forensics/analyzers/problems/pasted.py``): an
error pasted back after the assistant's change (``error_again``), the same message sent again after no reply
(``sent_again``); and what is neither: a new error, an error before any change, code that names an error, a message
sent twice with no time between."""

from __future__ import annotations

import json
import random
from pathlib import Path

from forensics.analyzers.problems import pasted
from forensics.text import error_lines as reader
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


def _every_line(text: str) -> list[tuple[int, str]]:
    """``error_lines`` (``forensics.text.error_lines``, the reader ``pasted`` reads) as it was written first: every
    line of ``text`` tested (the reference)."""
    from forensics.text.error_lines import EXCEPTION_LINE, PREAMBLE, is_code_line, is_error_line

    out, at = [], 0
    for n, line in enumerate(text.split("\n")):
        if n >= reader.LINES:
            break
        s = line.strip()
        if (
            s
            and not PREAMBLE.match(s)
            and not is_code_line(s)
            and (
                is_error_line(s)
                or (EXCEPTION_LINE.match(s) and reader.EXCEPTION_PRINTED.search(s))
                or reader.COMPILER_ERROR.search(s)
                or reader.HTTP_ERROR.search(s)
            )
        ):
            out.append((at, line))
        at += len(line) + 1
    return out


PIECES = [
    "error",
    "Error:",
    "ERROR:",
    "eRRor",
    "fatal:",
    "failed!",
    "Failure",
    "Exception",
    "ValueError: bad",
    "KeyError",
    "HTTP/1.1 404",
    "status: 503",
    "ſtatus 500",  # re.I reads ſ as s
    "STATUS code 418",
    "hTtP 500",
    "error TS2307:",
    "error[E0308]:",
    "tİme out",  # İ and ı: re.I reads both as i
    "tıme",
    "timed out",
    "not found",
    "No such file or directory",
    "permission denied",
    "/bin/sh: 1: x: not found",
    "command not found",
    "Traceback (most recent call last):",
    "stderr:",
    "// error: a comment",
    "throw new Error('x not found')",
    "raise ValueError",
    "print('failed')",
    "console.log(error.message);",
    "x = 1;",
    "{",
    "K",
    "é",
    "错误",
    " ",
    "\t",
    "\r",
    "'quoted'",
    "https://x.y/z",
    "42",
    "word",
]


def test_error_lines_tests_only_the_lines_that_hold_an_error_word() -> None:
    """The lines ``error_lines`` tests are found by the words every test needs, over the text lower-cased (ASCII) or
    by re.I (ı, İ, ſ): the same lines and offsets as testing every line, on 20,000 random mixes and past LINES."""
    rng = random.Random(46)
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES + ["\n"] * 12) for _ in range(rng.randint(0, 40)))
        assert list(reader.error_lines(text)) == _every_line(text), text
    lines = [rng.choice(PIECES) for _ in range(reader.LINES + 50)]
    long = "\n".join(lines)
    assert list(reader.error_lines(long)) == _every_line(long)
    # the lines past LINES hold errors, and none is read
    assert _every_line("\n".join(lines[reader.LINES :]))
    assert max(at for at, _ in reader.error_lines(long)) < len("\n".join(lines[: reader.LINES]))


def test_the_templates_read_by_their_anchor_are_every_template_with_one() -> None:
    """``_templates_among`` reads only the lines holding an anchor (the longest run of ASCII letters of a template
    outside its masks): it gives every template of the text whose anchor is asked for, and none the text lacks; on
    20,000 random mixes with K and İ (which lower-case to ASCII letters), quotes, paths and numbers masked, and lines
    past TEMPLATE_CHARS (a mask cut in two)."""
    from forensics.analyzers.signature import TEMPLATE_CHARS

    rng = random.Random(47)
    words = PIECES + ["\u212aeyError: 'x'", "İmportError: no module", "Mismatched types", "x" * TEMPLATE_CHARS]
    for _ in range(20_000):
        text = "".join(rng.choice(words + ["\n"] * 10 + [" "] * 6) for _ in range(rng.randint(0, 40)))
        every = pasted.templates(text)
        if not every:
            assert pasted._templates_among(text, {"error"}) == set()
            continue
        asked = rng.sample(sorted(every), rng.randint(1, len(every)))
        anchors = {pasted.anchor(t) for t in asked}
        got = pasted._templates_among(text, anchors)
        assert set(asked) <= got <= set(every), text
        assert {t for t in every if pasted.anchor(t) in anchors} <= got
    cut = "ValueError: " + "y" * (TEMPLATE_CHARS - 16) + " /usr/lib/a.py"  # the path's mask cut to "<pa"
    (t,) = pasted.templates(cut)
    assert t.endswith("<pa") and pasted.anchor(t) == "y" * (TEMPLATE_CHARS - 16)
