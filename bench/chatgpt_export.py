#!/usr/bin/env python3
"""Benchmark: peak memory of importing a ChatGPT export against its size, beside parsing it whole.

    python bench/chatgpt_export.py [--mb 25 100]

Generates (once per size, cached in bench/.cache/chatgpt/) a ``conversations.json`` in the 2025 layout: a
list of conversations of ~40 KB, each a mapping tree with a system root, person and assistant turns, a tool
call and its result, and a regenerated answer off the main path. For each size, each in a subprocess:

- ``scan``: ``formats.kit.stream.array_items`` over the file, every item decoded and dropped (the reader's
  own memory: one conversation plus one chunk, whatever the size);
- ``whole``: the anchor, the file parsed at once with orjson (what the reader did before: the whole
  export's objects held together);
- ``ingest``: ``forensics ingest`` of the file into a fresh warehouse (its rows are built per file, so
  this grows with what is imported, not with the parse).

Prints the file size, wall time and the peak memory (PSS of the process tree) of each step.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run  # noqa: E402 - bench/ is not a package

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "chatgpt"
WORDS = (
    "the test fails when the cache is cold so we retry the request with a longer timeout and log "
    "every response header before parsing the body into the model"
).split()
SCAN = """import sys
from forensics.formats.kit import stream
with open(sys.argv[1], "rb") as f:
    for item in stream.array_items(f):
        pass
"""
WHOLE = "import sys, orjson; orjson.loads(open(sys.argv[1], 'rb').read())"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def conversation(rng: random.Random, k: int) -> dict:
    """One conversation of the 2025 layout, ~40 KB."""
    nodes: dict[str, dict] = {}
    prev = f"c{k}-root"
    nodes[prev] = {"id": prev, "message": None, "parent": None, "children": []}

    def add(nid: str, role: str, text: str, parent: str, **extra: object) -> str:
        msg = {
            "id": nid,
            "author": {"role": role, "name": extra.pop("name", None), "metadata": {}},
            "create_time": 1.74e9 + k * 100 + len(nodes),
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": {"model_slug": "gpt-4o"},
            "recipient": extra.pop("recipient", "all"),
            "channel": None,
        }
        nodes[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        nodes[parent]["children"].append(nid)
        return nid

    prev = add(f"c{k}-sys", "system", "", prev)
    for t in range(8):
        prev = add(f"c{k}-u{t}", "user", _text(rng, 120), prev)
        if t == 3:
            call = add(f"c{k}-call", "assistant", '{"query": "cache timeout"}', prev, recipient="web.run")
            prev = add(f"c{k}-tool", "tool", _text(rng, 300), call, name="web.run")
        if t == 5:
            add(f"c{k}-a{t}-old", "assistant", _text(rng, 200), prev)  # regenerated: off the main path
        prev = add(f"c{k}-a{t}", "assistant", _text(rng, 400), prev)
    return {
        "title": _text(rng, 5),
        "create_time": 1.74e9 + k * 100,
        "update_time": 1.74e9 + k * 100 + 99,
        "mapping": nodes,
        "moderation_results": [],
        "current_node": prev,
        "plugin_ids": None,
        "conversation_id": f"conv-{k}",
        "conversation_template_id": None,
        "gizmo_id": None,
        "gizmo_type": None,
        "is_archived": False,
        "is_starred": None,
        "safe_urls": [],
        "blocked_urls": [],
        "default_model_slug": "gpt-4o",
        "conversation_origin": None,
        "voice": None,
        "async_status": None,
        "disabled_tool_ids": [],
        "is_do_not_remember": False,
        "memory_scope": "global_enabled",
        "id": f"conv-{k}",
    }


def build(mb: int) -> Path:
    path = CACHE / f"conversations-{mb}mb.json"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    rng, size, k = random.Random(mb), 0, 0
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("[")
        while size < mb << 20:
            chunk = ("" if k == 0 else ", ") + json.dumps(conversation(rng, k), ensure_ascii=False)
            f.write(chunk)
            size += len(chunk)
            k += 1
        f.write("]")
    tmp.rename(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, nargs="+", default=[25, 100], help="export sizes to generate, in MB")
    args = ap.parse_args()
    env = {"PYTHONPATH": str(ROOT), "CI": "true", "PATH": "/usr/bin:/bin"}
    print(f"{'file MB':>8} {'step':>7} {'seconds':>8} {'peak MB':>8} {'peak/file':>9}")
    for mb in args.mb:
        path = build(mb)
        size = path.stat().st_size / (1 << 20)
        with tempfile.TemporaryDirectory() as tmp:
            steps = {
                "scan": [sys.executable, "-c", SCAN, str(path)],
                "whole": [sys.executable, "-c", WHOLE, str(path)],
                "ingest": [sys.executable, "-m", "forensics", "ingest", str(path), "--db", str(Path(tmp) / "w.duckdb")],
            }
            for name, argv in steps.items():
                s = run(argv, env=env, cwd=ROOT)
                print(f"{size:8.1f} {name:>7} {s.seconds:8.1f} {s.tree_rss_mb:8.0f} {s.tree_rss_mb / size:9.2f}")


if __name__ == "__main__":
    main()
