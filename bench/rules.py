"""Score the rules audit on the planted corpus of fixtures/make_rules.py: every planted broken rule found at its
turn, no violation found where none was planted, every planted kept turn judged kept, unchecked rules unchecked.

    python -m bench.rules [SEED [RUNS]]     (prints the figures beside the trivial references; exit 1 on a miss)
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

MARK = re.compile(r"# (t\d+)(?=\"|\\|$)|_(t\d+)\.py|\((t\d+)\)")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))


@dataclass
class Score:
    planted_broke: int = 0
    found_broke: int = 0  # planted broke verdicts found at their turn
    false_broke: list[str] = field(default_factory=list)  # broke verdicts at no planted broke turn
    planted_kept: int = 0
    found_kept: int = 0
    missed: list[str] = field(default_factory=list)
    wrong_unchecked: list[str] = field(default_factory=list)  # an unchecked rule given a check, or a checkable one none
    unloaded_rules: int = 0  # rules found in runs with no instruction file (only the person's may be)
    after_compaction: tuple[int, int] = (0, 0)  # verdicts labeled after a compaction: flagged so / all
    before_flagged: int = 0  # verdicts before the compaction flagged as after it


def build(out: Path, seed: int = 44, runs: int = 12) -> tuple[duckdb.DuckDBPyConnection, list[dict[str, Any]]]:
    """Write the corpus, ingest it into a warehouse under ``out``, select every conversation."""
    import make_rules

    from forensics import api

    make_rules.main(out, seed, runs)
    db = out / "w.duckdb"
    api.ingest([str(out / "claude"), str(out / "codex")], db=str(db))
    con = duckdb.connect(str(db))
    con.execute("CREATE OR REPLACE TEMP TABLE sel_conversations AS SELECT conversation_id FROM conversations")
    return con, json.loads((out / "labels.json").read_text(encoding="utf-8"))


def score(con: duckdb.DuckDBPyConnection, labels: list[dict[str, Any]]) -> Score:
    from forensics.analyzers.rules import audit

    found = audit(con)
    by_key = {r.key: r for r in found.rules}
    native = dict(con.execute("SELECT native_id, conversation_id FROM conversations").fetchall())
    s = Score()
    for run in labels:
        cid = native[run["run"]]
        where = _markers(con, cid)
        verdicts = [v for v in found.verdicts if v.conversation_id == cid]
        got = {(by_key[v.rule].kind, v.position, v.verdict) for v in verdicts}
        want_broke = set()
        for p in run["planted"]:
            pos = where[(p["where"], p["marker"])]
            if p["verdict"] == "broke":
                s.planted_broke += 1
                want_broke.add((p["kind"], pos))
                hit = (p["kind"], pos, "broke") in got
                s.found_broke += hit
            else:
                s.planted_kept += 1
                hit = (p["kind"], pos, "kept") in got
                s.found_kept += hit
            if not hit:
                s.missed.append(f"{run['run'][:8]} {p['marker']} {p['kind']} {p['verdict']}")
        s.false_broke += [
            f"{run['run'][:8]} [{v.position}] {by_key[v.rule].kind}: {v.quote}"
            for v in verdicts
            if v.verdict == "broke" and (by_key[v.rule].kind, v.position) not in want_broke
        ]
        rules = [r for r in found.rules if r.conversation_id == cid]
        for r in rules:
            if r.source == "CLAUDE.md" or r.source == "AGENTS.md":
                if (r.text in run["unchecked"]) != (r.check is None):
                    s.wrong_unchecked.append(f"{run['run'][:8]} {r.text} -> {r.kind}")
        if not run["loaded"]:
            s.unloaded_rules += sum(r.source != "person" for r in rules)
        if run["compacted_after"] is not None:
            after = [v for v in verdicts if int(_turn_of(con, cid, v.position)) > run["compacted_after"]]
            s.after_compaction = (
                s.after_compaction[0] + sum(v.after_compaction for v in after),
                s.after_compaction[1] + len(after),
            )
            s.before_flagged += sum(v.after_compaction for v in verdicts if v not in after)
    return s


def _markers(con: duckdb.DuckDBPyConnection, cid: str) -> dict[tuple[str, str], int]:
    """(call | reply, marker) -> the position of the call or reply that carries it."""
    out: dict[tuple[str, str], int] = {}
    for pos, args in con.execute(
        "SELECT position, arguments FROM tool_calls WHERE conversation_id = ?", [cid]
    ).fetchall():
        for m in _marks(args):
            out[("call", m)] = pos
    for pos, text in con.execute(
        "SELECT position, content FROM messages WHERE conversation_id = ? AND role = 'assistant' AND on_main_path",
        [cid],
    ).fetchall():
        for m in _marks(text):
            out[("reply", m)] = pos
    return out


def _marks(text: str) -> list[str]:
    """The markers a call's arguments or a reply carry: ``# tN`` ending a command, ``_tN.py``, ``(tN)``."""
    return [a or b or c for a, b, c in MARK.findall(text or "")]


def _turn_of(con: duckdb.DuckDBPyConnection, cid: str, position: int) -> int:
    """The step number of the person's last prompt at or before ``position``."""
    row = con.execute(
        "SELECT content FROM messages WHERE conversation_id = ? AND origin = 'person' AND position <= ? "
        "ORDER BY position DESC LIMIT 1",
        [cid, position],
    ).fetchone()
    m = re.search(r"\(t(\d+)\)", row[0]) if row else None
    return int(m.group(1)) if m else -1


def main(argv: list[str]) -> int:
    seed, runs = (int(argv[0]) if argv else 44), (int(argv[1]) if len(argv) > 1 else 12)
    with tempfile.TemporaryDirectory() as tmp:
        con, labels = build(Path(tmp), seed, runs)
        s = score(con, labels)
    print(
        f"planted broken turns found at their turn: {s.found_broke}/{s.planted_broke} "
        f"(trivial: nothing flagged 0/{s.planted_broke}; every turn flagged: all found, "
        f"{s.planted_kept} false)"
    )
    print(f"violations where none was planted: {len(s.false_broke)}")
    print(f"planted kept turns judged kept: {s.found_kept}/{s.planted_kept}")
    print(
        f"rules of instruction files checkable/unchecked as planted: {'yes' if not s.wrong_unchecked else s.wrong_unchecked}"
    )
    print(f"rules found in runs with no instruction file (the person's excepted): {s.unloaded_rules}")
    print(
        f"verdicts after a compaction flagged so: {s.after_compaction[0]}/{s.after_compaction[1]}; "
        f"before it flagged after: {s.before_flagged}"
    )
    for line in (s.missed + s.false_broke)[:20]:
        print("  ", line)
    ok = (
        s.found_broke == s.planted_broke
        and not s.false_broke
        and s.found_kept == s.planted_kept
        and not s.wrong_unchecked
        and not s.unloaded_rules
        and s.after_compaction[0] == s.after_compaction[1]
        and not s.before_flagged
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
