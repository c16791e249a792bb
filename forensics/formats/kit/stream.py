"""The items of a JSON array file, one at a time, so that an export of hundreds of MB is never held whole.

Data exports (ChatGPT's and Claude.ai's ``conversations.json``) are one JSON array of conversations. Parsing
the file at once builds every conversation's objects together (about five times the file's size in memory);
:func:`array_items` instead reads the file in chunks and decodes one item at a time with the standard
library's ``raw_decode`` (its C scanner, which says where the item ends), handing each back before the next
is read. Memory is one item plus one chunk, and the time that of one parse of the file
(``bench/chatgpt_export.py``).

An item cut by the end of a chunk fails to decode at the end of what was read (or in a string not closed
yet): more is read, as much again as the item so far, and it is decoded again. Any other failure is the file's: the items before it are kept, and :class:`Broken` carries
the reason and the bytes from the bad item on (the reader quarantines them; nothing after it can be
delimited). A file that ends inside an item or before the array's closing bracket was cut off (a download or
a copy that stopped): :class:`Truncated` says at which byte.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from forensics.formats.kit import values
from forensics.formats.kit.model import Log
from forensics.formats.kit.records import RAW_CAP

CHUNK = 1 << 20
CUT_MARGIN = 64  # a decode error this close to the end of what was read may be the item running on
_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder(parse_constant=lambda name: float(name.lower().replace("infinity", "inf")))


class NotAnArray(ValueError):
    """The file is not one JSON array (empty, or its first character is another)."""


class Broken(ValueError):
    """The rest of the file cannot be read (invalid JSON or UTF-8, or it ends early); ``raw`` is that rest,
    as far as it was read."""

    def __init__(self, message: str, raw: bytes) -> None:
        super().__init__(message)
        self.raw = raw


class BadItem:
    """An item that was delimited but cannot be read (nested too deep): ``array_items`` yields it in its place,
    the reader quarantines it alone and goes on with the next."""

    def __init__(self, reason: str, raw: bytes) -> None:
        self.reason, self.raw = reason, raw


class Truncated(Broken):
    """The file ends early: inside an item, or before the array's closing bracket."""


def array_items(f: BinaryIO, chunk: int = CHUNK) -> Iterator[Any]:
    """Each item of the JSON array ``f`` holds, decoded, in order (a leading UTF-8 BOM is allowed)."""
    reader = _Text(f, chunk)
    pos = reader.skip(0)
    if pos >= len(reader.buf):
        raise NotAnArray("the file is empty")
    if reader.buf[pos] != "[":
        raise NotAnArray(f"the file starts with {reader.buf[pos]!r}, not a JSON array")
    pos, first = reader.skip(pos + 1), True
    while True:
        if pos >= len(reader.buf):
            raise Truncated(f"truncated at byte {reader.size} (the file ends before the array's closing bracket)", b"")
        c = reader.buf[pos]
        if c == "]":
            return
        if not first:
            if c != ",":
                raise Broken(f"expected ',' or ']' between items, found {c!r}", reader.rest(pos))
            pos = reader.skip(pos + 1)
        first = False
        item, pos = reader.decode(pos)
        yield item
        pos = reader.skip(reader.trim(pos))


def export_items(path: str, log: Log, what: str) -> Iterator[tuple[int, str, Any]]:
    """(index, location, item) of each item of a data export's array, each counted as a row read. A file
    that is no array fails the source (``what`` says what it should hold); from an item that cannot be
    read on, the rest of the file is quarantined with the reason. A file cut off fails the source with the
    byte it ends at when no item before the cut was read, else says so in the note."""
    with open(path, "rb") as f:
        i = -1
        try:
            for i, item in enumerate(array_items(f)):
                log.rows += 1
                if isinstance(item, BadItem):
                    log.quarantine(f"{log.name}[{i}]", item.reason, item.raw)
                    continue
                yield i, f"{log.name}[{i}]", item
        except NotAnArray as e:
            log.error = f"not {what}: {e}"
        except Broken as e:
            log.rows += 1
            log.quarantine(
                f"{log.name}[{i + 1}:]", f"{e} (the rest of the file from this item on)", e.raw + f.read(RAW_CAP)
            )
            if isinstance(e, Truncated):
                log.error = str(e)  # the source fails with it when nothing before the cut is kept
                log.notes.append(f"{e}: the {i + 1} items before it read, the rest quarantined")


class _Text:
    """The file as text, read a chunk at a time into ``buf`` (decoded UTF-8, strict)."""

    def __init__(self, f: BinaryIO, chunk: int) -> None:
        self.f, self.chunk, self.eof, self.size = f, chunk, False, 0  # size: the bytes read so far
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.buf = ""
        self.more()

    def more(self, at_least: int = 0) -> bool:
        if self.eof:
            return False
        raw = self.f.read(max(self.chunk, at_least))
        self.eof, self.size = not raw, self.size + len(raw)
        try:
            self.buf += self.utf8.decode(raw, final=self.eof)
        except UnicodeDecodeError as e:
            raise Broken(f"invalid UTF-8 ({e.reason})", raw) from None
        return not self.eof

    def skip(self, pos: int) -> int:
        """The next non-space position, reading on while only space is left."""
        while True:
            end = _SPACE.match(self.buf, pos)
            pos = end.end() if end else pos
            if pos < len(self.buf) or not self.more():
                return pos

    def decode(self, pos: int) -> tuple[Any, int]:
        """The item at ``pos`` and where it ends, reading on while it runs past what was read."""
        while True:
            try:
                item, end = _DECODER.raw_decode(self.buf, pos)
                if end < len(self.buf) or not self.more():  # a number cut by the chunk's end decodes too
                    return (
                        values.without_surrogates(item) if values.surrogate_escapes(self.buf, pos, end) else item
                    ), end
            except json.JSONDecodeError as e:
                cut = e.pos >= len(self.buf) - CUT_MARGIN or e.msg.startswith("Unterminated string")
                if not (cut and self.more(len(self.buf) - pos)):  # an item that big: read as much again
                    if self.eof and (e.pos >= len(self.buf.rstrip()) or e.msg.startswith("Unterminated string")):
                        raise Truncated(
                            f"truncated at byte {self.size} (the file ends inside an item)", self.rest(pos)
                        ) from None
                    raise Broken(f"invalid JSON: {e.msg}", self.rest(pos)) from None
            except (RecursionError, ValueError):  # too deep, or an integer too long for Python: this item alone
                return self.tolerant(pos)

    def tolerant(self, pos: int) -> tuple[Any, int]:
        """The item at ``pos`` read by ``values.tolerant`` (its integers too long made infinite), reading on
        until its end is found; a ``BadItem`` when it is nested too deep."""
        if self.buf[pos] not in "[{":
            raise Broken("invalid JSON: a number too long", self.rest(pos))
        while (end := values.value_end(self.buf, pos)) < 0:
            if not self.more(len(self.buf) - pos):
                raise Truncated(f"truncated at byte {self.size} (the file ends inside an item)", self.rest(pos))
        try:
            return values.tolerant(self.buf[pos:end], deep=False), end
        except RecursionError:
            return BadItem("JSON nested too deeply", self.buf[pos:end].encode("utf-8", "surrogatepass")), end
        except ValueError as e:
            raise Broken(values.json_reason(e), self.rest(pos)) from None

    def trim(self, pos: int) -> int:
        """Drop what was read before ``pos`` once it is most of the buffer; the new position."""
        if pos > len(self.buf) // 2:
            self.buf = self.buf[pos:]
            return 0
        return pos

    def rest(self, pos: int) -> bytes:
        return self.buf[pos:].encode("utf-8", "surrogatepass")
