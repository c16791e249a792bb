"""The JSONL files a user hands an analyzer (topic labels, memory questions), read the same way: every
non-blank line with its number, a UTF-8 BOM tolerated, and a one-line error naming the file and line for an
unreadable file or a line that is not JSON (the user fixes their own file; nothing to quarantine)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from forensics.kernel.errors import ForensicsError


def json_lines(path: str | os.PathLike[str], what: str, layout: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) per non-blank line; ``what`` names the file in the unreadable error,
    ``layout`` says what a line should be in the not-JSON one."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ForensicsError(f"{p}: cannot read {what} ({e.strerror or e}); check the path") from None
    for n, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ForensicsError(f"{p}:{n}: not JSON; {layout}") from None
