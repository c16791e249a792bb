"""The items of a JSON array file, one at a time, so that an export of hundreds of MB is never held whole.

Data exports (ChatGPT's and Claude.ai's ``conversations.json``) are one JSON array of conversations. Parsing
the file at once builds every conversation's objects together (several times the file's size in memory);
:func:`array_items` instead reads the file in chunks and hands back each top-level item's raw bytes as soon
as its closing bracket is read, for the caller to decode (``values.loads``) and map before the next one. A
scan finds the item's end: outside strings it stops only at brackets and quotes, inside a string only at
quotes and backslashes, so the work is linear in the file and the memory is one item plus one chunk.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

CHUNK = 1 << 20
_OUTSIDE = re.compile(rb'["\[\]{}]')  # what changes the nesting outside a string
_INSIDE = re.compile(rb'["\\]')  # what can end a string or escape its next byte
_SCALAR_END = re.compile(rb"[,\]]")
_SPACE = b" \t\r\n"


class NotAnArray(ValueError):
    """The file is not one JSON array (its first character is another)."""


class Truncated(ValueError):
    """The file ends inside an item or before the array's closing bracket; ``raw`` holds what was read of it."""

    def __init__(self, message: str, raw: bytes) -> None:
        super().__init__(message)
        self.raw = raw


def array_items(f: BinaryIO, chunk: int = CHUNK) -> Iterator[bytes]:
    """The raw bytes of each item of the JSON array ``f`` holds, in order (a leading UTF-8 BOM is allowed).

    Raises :class:`NotAnArray` before the first item when the file is not an array, and :class:`Truncated`
    when it ends early. Malformed JSON inside an item is left for the decoder to report, item by item."""
    buf = bytearray(f.read(chunk))
    pos = 3 if buf.startswith(b"\xef\xbb\xbf") else 0
    while True:
        pos = _skip_space(buf, pos)
        if pos < len(buf):
            break
        more = f.read(chunk)
        if not more:
            raise NotAnArray("the file is empty")
        buf += more
    if buf[pos:pos + 1] != b"[":
        raise NotAnArray(f"the file starts with {bytes(buf[pos:pos + 1])!r}, not a JSON array")
    pos += 1
    first = True
    while True:
        while True:  # the next item's first byte, a comma before it, or the end of the array
            pos = _skip_space(buf, pos)
            if pos < len(buf):
                break
            del buf[:pos]
            pos = 0
            more = f.read(chunk)
            if not more:
                raise Truncated("the file ends before the array's closing bracket", b"")
            buf += more
        c = buf[pos]
        if c == 0x5D:  # ]
            return
        if c == 0x2C and not first:  # ,
            pos += 1
            continue
        first = False
        del buf[:pos]
        end = _item_end(buf, f, chunk)
        yield bytes(buf[:end])
        pos = end


def _item_end(buf: bytearray, f: BinaryIO, chunk: int) -> int:
    """Where the item starting at ``buf[0]`` ends (exclusive), reading more of ``f`` into ``buf`` as needed."""
    if buf[0] not in b"{[":  # a scalar item: up to the next comma or bracket
        pos = 0
        while True:
            m = _SCALAR_END.search(buf, pos)
            if m:
                return len(bytes(buf[:m.start()]).rstrip(_SPACE))
            pos = len(buf)
            if not _read(buf, f, chunk):
                raise Truncated("the file ends inside an item", bytes(buf))
    depth, pos, in_string = 0, 0, False
    while True:
        m = (_INSIDE if in_string else _OUTSIDE).search(buf, pos)
        if m is None:
            pos = len(buf)
            if not _read(buf, f, chunk):
                raise Truncated("the file ends inside an item", bytes(buf))
            continue
        c, pos = buf[m.start()], m.start() + 1
        if in_string:
            if c == 0x5C:  # a backslash escapes the next byte (which may not be read yet)
                while pos >= len(buf):
                    if not _read(buf, f, chunk):
                        raise Truncated("the file ends inside an item", bytes(buf))
                pos += 1
            else:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in b"[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


def _read(buf: bytearray, f: BinaryIO, chunk: int) -> bool:
    more = f.read(chunk)
    buf += more
    return bool(more)


def _skip_space(buf: bytearray, pos: int) -> int:
    n = len(buf)
    while pos < n and buf[pos] in _SPACE:
        pos += 1
    return pos
