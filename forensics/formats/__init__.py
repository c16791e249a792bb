"""The log formats, one module or subpackage each (``forensics.formats.claude_code``, ``...otel`` with its span and
message helpers), and ``kit``, what they are written with. This package's own names are what a plug-in format
is written against: one stable import for the authors of ``forensics.formats`` entry points, so the modules
behind it can move without breaking them. It imports no format (the pipeline's registry loads them by name).

A format is a ``Format`` (name, a sniff over a ``Probe``, a reader); the reader yields ``Conversation`` objects
made of ``Turn``, ``ToolCall``, ``Usage``, ``Event`` and ``Outcome`` and counts what it reads, skips and
quarantines through the ``Log`` it is given; ``Side`` declares a side file. ``text_of``, ``listed`` and
``mapping`` read loosely typed JSON the way the built-in formats do. See docs/formats.md ("Plug-ins").
"""

from __future__ import annotations

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import (
    Conversation,
    Event,
    Log,
    Outcome,
    ToolCall,
    Turn,
    Usage,
    listed,
    mapping,
    text_of,
)

__all__ = [
    "Conversation",
    "Event",
    "Format",
    "Log",
    "Outcome",
    "Probe",
    "Side",
    "ToolCall",
    "Turn",
    "Usage",
    "listed",
    "mapping",
    "text_of",
]
