"""Reading a file out of a mirrored repository's git directory, for the converters that turn another project's labelled
runs into a bench file (``bench.whowhen_hand``, ``bench.agentrx_tau``): one line and exit 2 on bad input."""

from __future__ import annotations

import subprocess
import sys
from typing import NoReturn


def fail(message: str) -> NoReturn:
    """One line on stderr, exit 2 (bad input), nothing written."""
    print(message, file=sys.stderr)
    sys.exit(2)


def show(git: str, spec: str) -> str:
    """``git show SPEC`` in the git directory ``git`` (``HEAD:path``); a failure is one line and exit 2."""
    r = subprocess.run(["git", "-C", git, "show", spec], capture_output=True, text=True)
    if r.returncode:
        fail(f"error: git show {spec} in {git}: {' '.join(r.stderr.strip().splitlines()[-1:])}")
    return r.stdout


def head(git: str) -> str:
    """The commit the snapshot holds (empty when ``git`` is no git directory: ``show`` fails first)."""
    return subprocess.run(["git", "-C", git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
