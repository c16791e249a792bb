"""``user_repeated``'s ``undone_after`` (docs/definitions.md#problems-a-reviewer-flags; GUIDE §5: the person "corrects
the assistant for ignoring an earlier" request): read from what the agent did, not from the person's words. The reply
to a person turn puts back what the reply before it took away: an edit adds again lines an edit of the reply before
removed from the same file, or a file the reply before deleted is written again. The person's turn between made the
agent undo its own work: it said again what the request was ("oops! keep the `/vamp` skill - i just mean drop the
note", "違う、単純にP5を消すだけで良かった"), in whatever words and language. Not when the person asked for the undo
in so many words ("revert that", "undo", "put it back", "make it like that again"): a change of mind is a new
request, not one said again; nor after a turn of one or two words or one that approves ("approved": a workflow's
status line written back as it goes on).

Edits are read from their arguments: an old and a new text (``old_string``/``new_string`` and their spellings, a
MultiEdit's ``edits``), a patch (``*** Update File:`` sections, a unified diff's ``+++``), a whole file written
(``content``); deletions from ``rm`` commands and deleting tools. Lines count when they say something
(``MIN_LINE`` characters, a letter)."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from typing import Any

import duckdb

from forensics.analyzers.problems.actions import NEW_KEYS, OLD_KEYS, PATH_KEY  # an edit's keys, one list
from forensics.analyzers.problems.focus import DELETES_NAME  # a deleting tool, read as the lost-focus rules read it
from forensics.analyzers.problems.restated import APPROVAL
from forensics.analyzers.problems.turns import Turn
from forensics.analyzers.rules.judge import command_of
from forensics.kernel.selection import SELECTED

BACK_SHARE = 0.5  # of the lines an edit removed from a file, the share put back: the change undone
MIN_WORDS = 3  # a shorter turn ("approved", "continue") corrects nothing: the reply goes on with its own work
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")  # scripts written without spaces: words read as characters
MIN_LINE = 6  # characters of a stripped line, at least, to count (not a brace, a blank or "---")
HEAD = 20_000  # characters of a call's arguments read
CONTENT = ("content", "file_text", "contents", "text")
PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\+\+\+ (?:b/)?(\S+)", re.M)
RM = re.compile(r"(?:^|[\s;&|(])(?:rm|git rm|del|unlink|Remove-Item)\s+((?:-\S+\s+)*)([^;&|\n]+)")
# the person asks for the undo in so many words: a new request, not the earlier one said again
ASKS_UNDO = re.compile(
    r"(?i)\b(?:revert|undo|roll ?back|put (?:it|them|that|those) back|restore|go back to)\b|元に戻|戻して|撤销|撤回|"
    r"恢复|还原|回滚|되돌|복원|rückgängig|annule|deshaz|revierte|desfaz|откат|верни|"
    r"\b(?:as|like) (?:it was|before|that again|it was before)\b|\bwhat (?:we|it|I|you) had before\b"
)

Change = tuple[dict[str, set[str]], dict[str, set[str]], set[str], set[str]]  # removed, added lines; deleted, written


def _lines(text: str) -> set[str]:
    return {x for x in (ln.strip() for ln in text.splitlines()) if len(x) >= MIN_LINE and re.search(r"[^\W\d_]", x)}


def _base(path: str) -> str:
    return path.strip().strip("\"'`").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _patch(text: str, removed: dict[str, set[str]], added: dict[str, set[str]]) -> None:
    """A patch's removed and added lines, per file (its sections' headers)."""
    parts = PATCH_FILE.split(text)
    # split gives [before, g1, g2, body, g1, g2, body, ...]
    for i in range(1, len(parts) - 2, 3):
        name = _base(parts[i] or parts[i + 1] or "")
        body = parts[i + 2] or ""
        minus = "\n".join(ln[1:] for ln in body.splitlines() if ln.startswith("-") and not ln.startswith("---"))
        plus = "\n".join(ln[1:] for ln in body.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
        removed.setdefault(name, set()).update(_lines(minus) - _lines(plus))
        added.setdefault(name, set()).update(_lines(plus) - _lines(minus))


def change_of(calls: list[tuple[str, str]]) -> Change:
    """What these calls (name, arguments) took away and put in: lines per file (base name), files deleted and
    files written whole."""
    removed: dict[str, set[str]] = {}
    added: dict[str, set[str]] = {}
    deleted: set[str] = set()
    written: set[str] = set()
    for name, args in calls:
        if (command := command_of(name, args)) is not None:
            for m in RM.finditer(command):
                deleted |= {_base(x) for x in m.group(2).split() if not x.startswith("-")}
            if "*** Begin Patch" in command or "\n+++ " in command:
                _patch(command, removed, added)
            continue
        try:
            d: Any = json.loads(args)
        except ValueError:
            continue
        if not isinstance(d, dict):
            continue
        path = next((_base(str(v)) for k, v in d.items() if PATH_KEY.match(k) and isinstance(v, str)), "")
        if DELETES_NAME.search(name) and path:
            deleted.add(path)
            continue
        many = d.get("edits")
        edits: list[Any] = many if isinstance(many, list) else [d]
        for e in edits:
            if not isinstance(e, dict):
                continue
            old = next((e[k] for k in OLD_KEYS if isinstance(e.get(k), str)), None)
            new = next((e[k] for k in NEW_KEYS if isinstance(e.get(k), str)), None)
            if old is not None and new is not None and path:
                removed.setdefault(path, set()).update(_lines(old) - _lines(new))
                added.setdefault(path, set()).update(_lines(new) - _lines(old))
        content = next((d[k] for k in CONTENT if isinstance(d.get(k), str)), None)
        if content is not None and path and not any(k in d for k in OLD_KEYS):
            written.add(path)
            added.setdefault(path, set()).update(_lines(content))
        for v in d.values():
            if isinstance(v, str) and ("*** Begin Patch" in v or "\n+++ " in v):
                _patch(v, removed, added)
    return removed, added, deleted, written


def undoes(before: Change, after: Change) -> str:
    """What ``after`` puts back of what ``before`` took away: a file deleted then written again, or ``BACK_SHARE`` of
    the lines removed from a file added to it again (the file's name); "" when nothing. One line of many put back is
    the next change's (an ``except Exception:`` written again by a new feature), not the last one undone."""
    removed, _, deleted, _ = before
    _, added, _, written = after
    if back := sorted(deleted & written):
        return back[0]
    return next(
        (
            f
            for f in sorted(removed)
            if (n := len(removed[f] & added.get(f, set()))) and n >= BACK_SHARE * len(removed[f])
        ),
        "",
    )


def _reply_change(
    k: int, calls: list[tuple[int, str, str]], at: list[int], bounds: list[int], changes: dict[int, Change]
) -> Change:
    """The change (``change_of``) of the calls (``calls``, at positions ``at``, ascending) of the reply to turn ``k``:
    those between its position and the next turn's (``bounds``); kept in ``changes``, computed once per turn."""
    if k not in changes:
        lo, hi = bisect_right(at, bounds[k]), bisect_left(at, bounds[k + 1])
        changes[k] = change_of([(n, a) for _, n, a in calls[lo:hi]])
    return changes[k]


def undone_turns(con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]]) -> dict[str, dict[int, str]]:
    """Per conversation, the person turns (their index in ``by_conv``'s list) whose reply undid the reply before
    them, each with the norm naming the file; only turns that do not ask for the undo themselves."""
    cids = [c for c, conv in by_conv.items() if len(conv) > 1]
    if not cids:
        return {}
    rows = con.execute(
        f"""SELECT conversation_id, position, name, left(coalesce(arguments, ''), {HEAD}) FROM tool_calls
            WHERE conversation_id IN (SELECT unnest(?::VARCHAR[])) AND position IS NOT NULL
              AND NOT coalesce(is_error, false) AND result_position IS NOT NULL
              AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
            ORDER BY 1, 2, call_index""",
        [cids],
    ).fetchall()
    calls: dict[str, list[tuple[int, str, str]]] = {}
    for cid, pos, name, args in rows:
        calls.setdefault(str(cid), []).append((int(pos), str(name or ""), str(args)))
    out: dict[str, dict[int, str]] = {}
    for cid, mine in calls.items():
        conv = by_conv[cid]
        bounds = [t.position for t in conv] + [2**31]
        at = [p for p, _, _ in mine]  # ascending (the query's order)
        changes: dict[int, Change] = {}  # per turn, its reply's change: the after of one turn is the next's before
        for k in range(1, len(conv)):
            t = conv[k]
            said = t.full or t.text
            short = len(said.split()) < MIN_WORDS and not (UNSPACED.search(said) and len(said.strip()) >= MIN_WORDS * 3)
            if not t.replied or short or ASKS_UNDO.search(said) or APPROVAL.search(said):
                continue
            if f := undoes(
                _reply_change(k - 1, mine, at, bounds, changes), _reply_change(k, mine, at, bounds, changes)
            ):
                out.setdefault(cid, {})[k] = (
                    f"the reply to it put back what the reply to the request at [{conv[k - 1].position}] took away "
                    f"({f}): the person's turn between corrected what was asked"
                )
    return out
