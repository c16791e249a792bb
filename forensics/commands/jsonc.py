"""A hook added to a JSON settings file (Claude Code's, Gemini CLI's) by inserting text, so that every byte
outside the edited key stays as it was: comments (Gemini CLI reads JSON with comments), key order, indentation,
line endings. The file is read with a small scanner that knows strings and comments, never re-serialised."""

from __future__ import annotations

import json
from typing import Any

from forensics.kernel.errors import ForensicsError


class NotJson(ForensicsError):
    """The settings file is not a JSON object this scanner reads: nothing is changed."""


def _skip(text: str, i: int) -> int:
    """The index of the next character that is neither whitespace nor inside a comment."""
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\ufeff":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise NotJson("a /* comment is not closed")
            i = j + 2
        else:
            return i
    return i


def _string_end(text: str, i: int) -> int:
    """``text[i]`` opens a string: the index after its closing quote."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    raise NotJson("a string is not closed")


def _value_end(text: str, i: int) -> int:
    """The index after the JSON value that starts at ``i`` (an object or array with everything inside it)."""
    if i >= len(text):
        raise NotJson("a value is missing")
    c = text[i]
    if c == '"':
        return _string_end(text, i)
    if c in "{[":
        close = "}" if c == "{" else "]"
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == close:
            return j + 1
        while True:
            if c == "{":
                if j >= len(text) or text[j] != '"':
                    raise NotJson(f"a key is expected at character {j}")
                j = _skip(text, _string_end(text, j))
                if j >= len(text) or text[j] != ":":
                    raise NotJson(f"':' is expected at character {j}")
                j = _skip(text, j + 1)
            j = _skip(text, _value_end(text, j))
            if j < len(text) and text[j] == ",":
                j = _skip(text, j + 1)
                if j < len(text) and text[j] == close:  # a trailing comma (JSON with comments allows it)
                    return j + 1
                continue
            if j < len(text) and text[j] == close:
                return j + 1
            raise NotJson(f"',' or '{close}' is expected at character {j}")
    j = i
    while j < len(text) and text[j] not in ",}] \t\r\n/":
        j += 1
    if j == i:
        raise NotJson(f"a value is expected at character {i}")
    return j


def members(text: str, i: int) -> list[tuple[str, int, int, int]]:
    """The members of the object opened at ``text[i]``: (key, where its key starts, where its value starts, where
    its value ends)."""
    out = []
    j = _skip(text, i + 1)
    while j < len(text) and text[j] != "}":
        k_end = _string_end(text, j)
        key = json.loads(text[j:k_end])
        v = _skip(text, _skip(text, k_end) + 1)
        v_end = _value_end(text, v)
        out.append((key, j, v, v_end))
        j = _skip(text, v_end)
        if j < len(text) and text[j] == ",":
            j = _skip(text, j + 1)
    return out


def plain(text: str) -> Any:
    """The value of a JSON text with comments and trailing commas (what these settings files hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i) or text.startswith("/*", i):
            i = _skip(text, i)
            out.append(" ")
        elif c == ",":
            j = _skip(text, i + 1)
            out.append("" if j < n and text[j] in "}]" else ",")
            i += 1
        else:
            out.append(c)
            i += 1
    try:
        return json.loads("".join(out)) if "".join(out).strip() else None
    except ValueError as e:
        raise NotJson(f"not JSON: {e}") from None


def _indent(text: str, at: int) -> str:
    """The whitespace before ``at`` on its line ('' when something else precedes it there)."""
    start = text.rfind("\n", 0, at) + 1
    lead = text[start:at]
    return lead if not lead.strip() else ""


def add_hook(text: str, event: str, entry: dict[str, Any]) -> tuple[str, str]:
    """``text`` with ``entry`` (a hook group) appended to ``hooks.<event>``, and the exact text inserted (what an
    uninstall removes). Only the insertion changes the file; a file of nothing becomes the object that holds it."""
    group = json.dumps(entry)
    if not text.strip():
        return (new := '{\n  "hooks": {\n    "' + event + '": [\n      ' + group + "\n    ]\n  }\n}\n"), new
    root = _skip(text, 0)
    if root >= len(text) or text[root] != "{":
        raise NotJson("the settings file does not hold a JSON object")
    _value_end(text, root)  # the whole object reads, or nothing is changed
    top = members(text, root)
    hooks = next((m for m in top if m[0] == "hooks"), None)
    if hooks is None:
        return _insert_member(text, root, top, f'"hooks": {{"{event}": [{group}]}}')
    if text[hooks[2]] != "{":
        raise NotJson('its "hooks" is not an object')
    inner = members(text, hooks[2])
    events = next((m for m in inner if m[0] == event), None)
    if events is None:
        return _insert_member(text, hooks[2], inner, f'"{event}": [{group}]')
    if text[events[2]] != "[":
        raise NotJson(f'its "hooks.{event}" is not an array')
    first = _skip(text, events[2] + 1)
    snippet = group if text[first] == "]" else group + ", "
    at = events[2] + 1
    return text[:at] + snippet + text[at:], snippet


def _insert_member(text: str, brace: int, found: list[tuple[str, int, int, int]], member: str) -> tuple[str, str]:
    """``member`` inserted as the first member of the object opened at ``text[brace]``, on its own line at the
    indentation of the next member when the object is laid out one member a line."""
    at = brace + 1
    if not found:
        return text[:at] + member + text[at:], member
    indent = _indent(text, found[0][1])
    newline = "\r\n" if "\r\n" in text else "\n"
    snippet = (
        (newline + indent + member + ",")
        if indent or text[at : found[0][1]].startswith(("\n", "\r"))
        else member + ", "
    )
    return text[:at] + snippet + text[at:], snippet
