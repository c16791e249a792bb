"""The fresh problem labels (``bench/data/problems-fresh.jsonl``): conversations no detector was tuned on, labeled
blind by ``../shared/data/problems/GUIDE.md`` (bench/data/README.md). Each line names its file by ``root`` +
``source``: ``fixtures/real`` is this repository's folder, ``agent-logs`` the shared one. The benches ingest the
named files alone into a scratch warehouse and read the labels from there."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRESH = ROOT / "bench" / "data" / "problems-fresh.jsonl"


def roots(shared: Path) -> dict[str, Path]:
    """What each line's ``root`` names."""
    return {"fixtures/real": ROOT / "fixtures" / "real", "agent-logs": shared / "data" / "agent-logs"}


def lines(path: Path) -> list[dict]:
    """The label lines, each checked for a known ``root``; bad input is one line, exit 2."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise SystemExit(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(d, dict) or d.get("root") not in ("fixtures/real", "agent-logs") or "source" not in d:
            raise SystemExit(f"{path}:{n}: a label line needs root (fixtures/real or agent-logs) and source")
        out.append(d)
    return out


def files(path: Path, shared: Path) -> list[Path]:
    """The log files the labels name, each once, in order; a missing one is an error."""
    base = roots(shared)
    out: list[Path] = []
    for d in lines(path):
        f = base[d["root"]] / d["source"]
        if not f.is_file():
            raise SystemExit(f"{f}: named by {path.name} but not found (set FORENSICS_SHARED for agent-logs)")
        if f not in out:
            out.append(f)
    return out


def warehouse(path: Path, shared: Path, tmp: Path) -> Path:
    """A scratch warehouse of the named files alone."""
    from forensics.ingestion.run import ingest

    db = tmp / "fresh.duckdb"
    ingest(list(files(path, shared)), db=db)
    return db
