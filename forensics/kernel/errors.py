"""Exceptions the library raises for expected failures, and the exit codes the CLI maps them to.

Library code never prints or exits; the CLI turns these into one-line messages.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of every command: 0 ok, 1 partial or a CI regression, 2 bad usage or unreadable input, 70 an
    internal error (a bug: report it)."""

    OK = 0
    PARTIAL = 1  # some sources failed, the rest imported; or a CI check found a regression
    USAGE = 2  # bad usage, or nothing could be read
    INTERNAL = 70  # a bug: reported in one line, traceback only with FORENSICS_DEBUG=1
    INTERRUPTED = 130


class ForensicsError(Exception):
    """An expected failure with a message fit to show a user as one line."""

    exit_code = ExitCode.USAGE


class SourceError(ForensicsError):
    """One source cannot be read at all (not SQLite, no such table, permission...)."""

    def __init__(self, source: str, problem: str, fix: str = "") -> None:
        self.source, self.problem, self.fix = source, problem, fix
        super().__init__(f"{source}: {problem}" + (f"; {fix}" if fix else ""))


class WarehouseError(ForensicsError):
    """The warehouse file is missing, locked, corrupt, or from a newer toolkit."""
