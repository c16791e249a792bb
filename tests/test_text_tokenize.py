"""Tokenizer table tests (docs/definitions.md#tokenizer-and-keywords) and keyword summaries on the seed fixture."""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
from collections import Counter

import pytest

from forensics.text import MODES, engine, iter_tokens, keyword_summary, tokenize
from forensics.text.keywords import content_tokens
from tests.conftest import FIXTURES

CASES = [
    # (text, mode, tokens)
    ("压缩架构", "bigram", ["压", "缩", "架", "构", "压缩", "缩架", "架构"]),
    ("压缩架构", "jieba", ["压缩", "架构"]),
    ("压缩架构", "jieba+bigram", ["压", "缩", "架", "构", "压缩", "架构"]),  # jieba vetoes 缩架
    ("上下文压缩", "bigram", ["上", "下", "文", "压", "缩", "上下", "下文", "文压", "压缩"]),
    ("上下文压缩", "jieba+bigram", ["上", "下", "文", "压", "缩", "上下", "下文", "压缩", "上下文"]),
    # inside a long word only the pairs that are words themselves: 数据 stays, 据库 goes
    ("数据库迁移", "jieba+bigram", ["数", "据", "库", "迁", "移", "数据", "迁移", "数据库"]),
    ("修复useAiSend.ts的bug", "bigram", ["修", "复", "修复", "useaisend.ts", "的", "bug"]),
    ("修复useAiSend.ts的bug", "jieba", ["修复", "useaisend.ts", "的", "bug"]),
    ("修复useAiSend.ts的bug", "jieba+bigram", ["修", "复", "修复", "useaisend.ts", "的", "bug"]),
    # full-width punctuation resets the window; full-width letters and digits read as ASCII (NFKC)
    ("全角，标点！ＡＢＣ１２３", "bigram", ["全", "角", "全角", "标", "点", "标点", "abc123"]),
    ("压缩。架构", "bigram", ["压", "缩", "压缩", "架", "构", "架构"]),
    # an emoji is not Han: no pair across it, and it is no token itself
    ("压😀缩 emoji 🚀ok", "bigram", ["压", "缩", "emoji", "ok"]),
    ("压😀缩", "jieba+bigram", ["压", "缩"]),
    # numbers are dropped; identifiers, paths and words of other scripts stay whole, lower-cased
    (
        "v1.2.3 1.2.3 404 2fa src-tauri/src/Commands.rs café Привет",
        "bigram",
        ["v1.2.3", "2fa", "src-tauri/src/commands.rs", "café", "привет"],
    ),
    ("", "bigram", []),
    ("", "jieba", []),
    ("", "jieba+bigram", []),
    ("   \n\t ", "jieba+bigram", []),
]


@pytest.mark.parametrize(("text", "mode", "want"), CASES)
def test_tokenize_table(text: str, mode: str, want: list[str]) -> None:
    assert tokenize(text, mode) == want


def test_pairs_never_cross_a_non_han_character() -> None:
    toks = tokenize("压缩a架构 压缩-架构 压缩1架构", "bigram")
    assert "缩架" not in toks and toks.count("压缩") == 3 and toks.count("架构") == 3


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown tokenizer mode 'words'"):
        tokenize("x", "words")


@pytest.mark.parametrize("text", ["的了是在我你", "the and of to it is", "继续", "好的 ok 嗯", "", "🚀🚀 ！！ 123"])
def test_only_stop_words_give_an_empty_summary(text: str) -> None:
    assert content_tokens(text) == []
    assert keyword_summary([text, text]) == []


def test_summary_folds_a_pair_that_only_occurs_inside_a_longer_word() -> None:
    summary = dict(keyword_summary(["上下文压缩", "上下文压缩失败了", "压缩"], top_k=10))
    assert summary == {"压缩": 3, "上下文": 2, "失败": 1}


def test_summary_top_k_and_ties_first_seen_first() -> None:
    assert keyword_summary(["beta alpha", "alpha gamma"], top_k=2) == [("alpha", 2), ("beta", 1)]
    assert keyword_summary(["alpha"], top_k=0) == []


def test_ten_megabytes_of_text_count_in_bounded_memory() -> None:
    """10 MB: every mode's token stream is consumed without holding a token list (no timing asserted)."""
    han = "用户反馈上下文压缩失败，日志里有授权方案相关的错误。" * 400  # ~30 KB of Chinese per block
    latin = "Fixed useAiSend.ts: retry_with_backoff() returned 42 errors in src/hooks. " * 2000
    text = (latin + han) * 60  # ~10 MB of UTF-8
    assert len(text.encode()) > 10_000_000
    mostly_latin = latin * 60 + han[:3000]  # jieba (~0.5 MB/s) only on a small Han share
    tokenize("预热", "jieba")  # load jieba's dictionary (~50 MB, once per process) before measuring
    tracemalloc.start()
    n = sum(1 for _ in iter_tokens(text, "bigram"))
    counts = Counter(iter_tokens(mostly_latin, "jieba+bigram"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # per block: 7 Latin tokens per sentence (42 dropped); Han runs of 11 and 13 characters: 21 + 25 tokens
    assert n == 60 * (2000 * 7 + 400 * 46)
    assert counts["useaisend.ts"] == 120_000
    assert peak < 10_000_000  # pieces of 64K characters; a list of 2 million tokens would be ~150 MB


def test_segmenting_many_distinct_long_runs_keeps_few_of_them() -> None:
    """jieba's words are kept per chunk, but text without punctuation (every chunk 512 characters, none alike)
    must not fill memory with kept chunks: 1,500 of them hold ~25 MB kept, bounded to ~1 MB."""
    import random

    rng = random.Random(7)
    common = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研"
    runs = ["".join(rng.choice(common) for _ in range(512)) for _ in range(1500)]
    tokenize("预热", "jieba")
    tracemalloc.start()
    for run in runs:
        tokenize(run, "jieba+bigram")
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held < 5_000_000


def test_one_long_han_run_is_segmented_in_bounded_chunks() -> None:
    run = "压缩架构" * 1000  # 4000 Han characters without a break
    toks = tokenize(run, "jieba+bigram")
    assert toks.count("压缩") == 1000 and toks.count("架构") == 1000


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_handles_mixed_scripts(mode: str) -> None:
    assert "useaisend.ts" in tokenize("修复useAiSend.ts的bug，ＯＫ？", mode)


def _user_texts(native_id: str) -> list[str]:
    src = sqlite3.connect(f"file:{FIXTURES / 'seed' / 'seed.db'}?mode=ro", uri=True)
    (blob,) = src.execute("SELECT messages FROM ai_conversations WHERE id = ?", [native_id]).fetchone()
    src.close()
    return [m["content"] for m in json.loads(blob) if m["role"] == "user"]


def test_keyword_summary_of_d6614e0b_names_its_topics() -> None:
    """The generator's topic words (TOPIC_BANK) for compaction, write_date and delivery appear in the top 10 / 20.

    licensing is the fourth topic, but its only user message is "最新 aichat 权限": no bank word to find.
    """
    top10 = [w for w, _ in keyword_summary(_user_texts("d6614e0b"), top_k=10)]
    top20 = [w for w, _ in keyword_summary(_user_texts("d6614e0b"), top_k=20)]
    assert {"压缩", "架构"} <= set(top10)  # compaction: 压缩架构, 上下文压缩
    assert {"文件", "日期"} <= set(top10)  # write_date: 写文件, 日期
    assert "消息" in top20  # delivery: 消息发送
    assert not {"文压", "写文", "缩架", "具结"} & set(top20)  # pairs straddling a word boundary


def _labeled_texts(name: str, limit: int) -> list[str]:
    """Real Chinese turns of a shared labeled set (CrossWOZ, KdConv): names, places and unknown words."""
    from tests.conftest import SHARED

    texts: list[str] = []
    with open(SHARED / "data" / name, encoding="utf-8") as f:
        for line in f:
            texts += [t["text"] for t in json.loads(line)["turns"]]
            if len(texts) >= limit:
                break
    return texts[:limit]


def test_content_tokens_are_the_tokens_less_stop_words_in_each_mode() -> None:
    """Content tokens, several modes in one pass or one mode at a time, from the runs kept or not: exactly the
    tokenizer's tokens less the stop words, single characters and pairs around a function character (the topic
    analysis relies on it)."""
    from forensics.text.keywords import content_tokens_modes, stop_words

    stops = stop_words()

    def keep(t: str) -> bool:
        return (
            len(t) > 1
            and t not in stops
            and not (len(t) == 2 and t.isalpha() and not t.isascii() and (t[0] in stops or t[1] in stops))
        )

    texts = [t for t, _, _ in CASES] + _labeled_texts("kdconv-dev.zh.jsonl", 400) + ["压" * 1300 + " x 数据库"]
    for text in texts + texts:  # the second time, the clauses' tokens come from the cache
        expected = {mode: [t for t in tokenize(text, mode) if keep(t)] for mode in MODES}
        assert content_tokens_modes(text, MODES) == expected
        assert {mode: content_tokens(text, mode) for mode in MODES} == expected
    # 上下 and 下文 straddle a function character (上, 下); the pair 据库 is no word
    assert content_tokens("数据库的压缩架构 is DONE, a 上下文") == ["数据", "压缩", "架构", "数据库", "done", "上下文"]
    with pytest.raises(ValueError, match="unknown tokenizer mode 'bi'"):
        content_tokens_modes("x", ("jieba", "bi"))


def test_names_tagged_block_by_block_are_the_names_of_the_whole_text() -> None:
    """The topic analysis tags jieba's blocks one by one (kept for the blocks seen last): the names found are
    the ones tagging the whole text finds, on real dialogue turns full of people, places and hotels."""
    from forensics.analyzers.topics.signals import PROPER_NOUN_TAGS, tagged_names

    texts = _labeled_texts("crosswoz-val.zh.jsonl", 600) + _labeled_texts("kdconv-dev.zh.jsonl", 600)
    texts += ["张伟和李娜在北京，Apple公司的iPhone 15。王小明去了上海", "", "abc 123"]
    found = 0
    for text in texts * 2:  # the second time from what was kept
        whole = {w for w, flag in engine.tag(text) if flag in PROPER_NOUN_TAGS and len(w) > 1}
        assert tagged_names(text) == whole, text
        found += len(whole)
    assert found > 600  # the sets are full of names: the comparison is not over empty sets


def test_shipped_pair_words_are_jiebas_dictionary() -> None:
    """pair_words.txt (shipped so jieba is only an extra) holds exactly the two-character words of jieba's own
    dictionary from frequency 100, at every floor the tokenizer could ask for; below the file's floor it refuses."""
    from importlib import resources

    from forensics.text import engine

    def from_jieba(min_freq: int) -> frozenset[str]:
        out = set()
        for raw in resources.files("jieba").joinpath("dict.txt").read_bytes().splitlines():
            word, freq = raw.decode("utf-8").split(" ")[:2]
            if len(word) == 2 and int(freq) >= min_freq:
                out.add(word)
        return frozenset(out)

    for floor in (engine.PAIR_FLOOR, 500, 10_000):
        assert engine.pair_words(floor) == from_jieba(floor)
    assert len(engine.pair_words(engine.PAIR_FLOOR)) == 23_630
    with pytest.raises(ValueError, match="from frequency 100"):
        engine.pair_words(5)


def test_forcing_jieba_without_the_extra_says_which_extra() -> None:
    """FORENSICS_TOKENIZER=jieba where jieba is not installed (the runtime install has only rjieba): a
    ForensicsError (the CLI's one line, exit 2) naming the extra."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['jieba'] = None\n"  # as if not installed: importing it raises ImportError
        "from forensics.kernel.errors import ForensicsError\n"
        "from forensics.text import engine\n"
        "try:\n    engine.cut('今天我们讨论数据库')\nexcept ForensicsError as e:\n    print(engine.NAME, e)\n"
    )
    env = {**os.environ, "FORENSICS_TOKENIZER": "jieba"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("jieba the Python segmenter jieba is not installed")
    assert done.stdout.strip().endswith("pip install 'forensics[jieba]'")


def test_the_segmenter_is_chosen_without_loading_it() -> None:
    """Choosing rjieba only finds it (0.1 CPU s to load, which a report kept whole never needs); it loads on first cut."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "FORENSICS_TOKENIZER"}
    code = (
        "import sys; from forensics.text import engine; a = 'rjieba' in sys.modules; "
        "w = engine.cut('压缩架构'); print(engine.NAME, a, 'rjieba' in sys.modules, w)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["rjieba", "False", "True", "['压缩',", "'架构']"]
