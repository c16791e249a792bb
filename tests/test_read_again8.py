"""The last stop's merged diff (git diff 0f4e5e2 3ca9ba3) read again line by line: each defect found there, a case
that fails on the code as it was merged and holds on the mended one."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_handed_over_names_a_file_as_a_word_not_inside_another_name() -> None:
    """``handed_over``'s docstring: the reply names the file "as a word". A file name inside a longer one is another
    file ("studio.py" is not "io.py", "test_utils.py" is not "utils.py")."""
    from forensics.analyzers.problems.endings import handed_over

    assert handed_over("Updated studio.py to log errors.", '{"path": "/w/src/io.py"}') == ""
    assert handed_over("Added three cases to test_utils.py.", '{"path": "/w/src/utils.py"}') == ""
    assert handed_over("Updated io.py to log errors.", '{"path": "/w/src/io.py"}') == "io.py"
    assert handed_over("The fix is in src/utils.py.", '{"path": "/w/src/utils.py"}') == "utils.py"
    assert handed_over("Changed `utils.py`: the parser now strips.", '{"path": "/w/src/utils.py"}') == "utils.py"
