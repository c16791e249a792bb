"""Secrets never leave through a report, a query result or an export (seed 000's Redactor rule).

The warehouse keeps the raw text (it is the user's own data); everything rendered from it passes here.
A snippet that is nothing but a secret is dropped rather than shown as a mask.
"""
from __future__ import annotations

import re

MASK = "[REDACTED]"
_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)", re.DOTALL),
    re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
]
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{16,}=*")
_ASSIGNED = re.compile(
    r"""(?ix)\b((?:api[_-]?key|access[_-]?key|secret[_-]?key|key|token|access[_-]?token|auth[_-]?token|secret|
    client[_-]?secret)["']?\s*[=:]\s*["']?)([A-Fa-f0-9]{32,}|[A-Za-z0-9+/_\-]{32,}={0,2})""")
_PASSWORD = re.compile(r"""(?i)\b((?:password|passwd|pwd)["']?\s*[=:]\s*["']?)([^\s"',;]+)""")


def redact(text: str) -> str:
    """Mask every secret found in ``text``."""
    if not text:
        return text
    for p in _PATTERNS:
        text = p.sub(MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    text = _ASSIGNED.sub(lambda m: m.group(1) + MASK, text)
    return _PASSWORD.sub(lambda m: m.group(1) + MASK, text)


def redact_snippet(text: str) -> str:
    """Like redact, but a snippet that held nothing except secrets becomes empty (dropped)."""
    out = redact(text)
    if out != text and not out.replace(MASK, "").strip(" \t\r\n\"'`:=,;()[]{}"):
        return ""
    return out
