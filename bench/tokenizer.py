"""jieba against rjieba (its compiled port) on the same messages: speed as a ratio, and how often they disagree.

    python -m bench.tokenizer            # the shared Chinese dialogue sets and a bench corpus of 400 conversations

For every message with Han text (crosswoz-val.zh, kdconv-dev.zh; gen_corpus.py sqlite --profile bench, seed 1):
the seconds each segmenter takes to cut every message (HMM on, both warmed up first) and to tag every message,
their ratio, and the share of messages whose words (cut) differ and whose (word, tag) pairs differ, and whose
proper names (the tags the topic analysis keeps) differ. Dev and held-out halves are split by the stable hash of
bench/topics.py. Nothing is downloaded.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.topics import held_out  # noqa: E402

SHARED = Path(os.environ.get("FORENSICS_SHARED", ROOT.parent / "shared"))
SETS = ("crosswoz-val.zh", "kdconv-dev.zh")
HAN = re.compile(r"[\u4e00-\u9fff]+")
BLOCK = re.compile(r"[\u4E00-\u9FD5a-zA-Z0-9+#&\._]+")  # the blocks forensics.text.engine tags one at a time
NAMES = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})


def dialogue_texts(name: str) -> tuple[list[str], list[str]]:
    dev: list[str] = []
    held: list[str] = []
    for line in (SHARED / "data" / f"{name}.jsonl").read_bytes().splitlines():
        d = orjson.loads(line)
        (held if held_out(d["dialogue_id"]) else dev).extend(t["text"] for t in d["turns"] if t["text"])
    return dev, held


def corpus_texts(conversations: int = 400) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        subprocess.run(
            [
                sys.executable,
                str(SHARED / "bench" / "gen_corpus.py"),
                "sqlite",
                "--conversations",
                str(conversations),
                "--seed",
                "1",
                "--profile",
                "bench",
                str(db),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        con = sqlite3.connect(db)
        out = [
            m["content"]
            for (raw,) in con.execute("SELECT messages FROM ai_conversations")
            for m in orjson.loads(raw)
            if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
        ]
        con.close()
    return out


def timed(fn, texts: list[str]) -> tuple[float, list]:  # type: ignore[no-untyped-def,type-arg]
    start = time.perf_counter()
    out = [fn(t) for t in texts]
    return time.perf_counter() - start, out


def main() -> None:
    import jieba
    import jieba.posseg
    import rjieba

    jieba.setLogLevel(60)
    jieba.initialize()
    rjieba.cut("预热", True)
    rjieba.tag("预热", True)
    groups: list[tuple[str, list[str]]] = []
    for name in SETS:
        dev, held = dialogue_texts(name)
        groups += [(f"{name} dev", dev), (f"{name} held-out", held)]
    groups.append(("bench corpus (400 conv.)", corpus_texts()))
    print(
        f"{'messages':<26}{'n':>7}{'cut jieba s':>12}{'rjieba s':>9}{'ratio':>7}{'tag jieba s':>12}{'rjieba s':>9}"
        f"{'ratio':>7}{'whole≠':>8}{'words≠':>8}{'tags≠':>7}{'names≠':>8}"
    )
    for label, texts in groups:
        texts = [t for t in texts if any("\u4e00" <= c <= "\u9fff" for c in t)]
        jc, jw = timed(lambda t: jieba.lcut(t, HMM=True), texts)
        rc, rw = timed(lambda t: rjieba.cut(t, True), texts)
        jt, jtags = timed(lambda t: [(p.word, p.flag) for b in BLOCK.findall(t) for p in jieba.posseg.lcut(b)], texts)
        rt, rtags = timed(lambda t: [wf for b in BLOCK.findall(t) for wf in rjieba.tag(b, True)], texts)
        n = len(texts)
        whole = sum(a != b for a, b in zip(jw, rw, strict=True)) / n
        words = sum(jieba.lcut(r, HMM=True) != rjieba.cut(r, True) for t in texts for r in HAN.findall(t)) / n
        tags = sum(a != [tuple(x) for x in b] for a, b in zip(jtags, rtags, strict=True)) / n
        names = (
            sum(
                {w for w, f in a if f in NAMES} != {w for w, f in b if f in NAMES}
                for a, b in zip(jtags, rtags, strict=True)
            )
            / n
        )
        print(
            f"{label:<26}{n:>7}{jc:>12.2f}{rc:>9.2f}{rc / jc:>7.2f}{jt:>12.2f}{rt:>9.2f}{rt / jt:>7.2f}"
            f"{whole:>8.1%}{words:>8.1%}{tags:>7.1%}{names:>8.1%}"
        )
    print(
        "ratio = rjieba ÷ jieba seconds (lower is faster). ≠ = share of messages that differ in: whole = words of the"
        " whole message (non-Han: rjieba keeps 400-500 whole); words = words of its Han runs (what the tokenizer"
        " cuts); tags = (word, tag) pairs of its blocks (what the topic analysis tags); names = the proper names kept"
        " (nr ns nt nz). Trivial baseline: a segmenter against itself, 0.0 %."
    )


if __name__ == "__main__":
    main()
