"""How the signals combine into one switch score, and how a score becomes a confidence.

The score is a logistic combination of the signals in ``signals.FEATURES`` (plus ``EMBEDDING_FEATURES`` in a
``<mode>+embedding`` entry, used when ``[topic] embedding`` is on), with one set of weights per
*judging mode* (``weights.json`` ``modes``), chosen from ``[topic] roles``, never from the data set:

- ``dialogue`` (the assistant's turns are judged too: human-human dialogue) was fitted offline on the
  training halves of the two public labeled sets (`python bench/topics.py --fit`: TIAGE + KdConv, halves by a
  stable hash of the dialogue id, weighted equally);
- ``user`` (only user turns are judged: assistant logs, the default) was fitted on the training halves of the
  task-oriented sets (CrossWOZ, MultiWOZ: users moving from one request to the next) and of generated
  assistant-log corpora, where a user turn must be compared with the user's own line of requests and the
  tool-call targets rather than with the long reply before it; its weights keep the sign each signal's meaning
  gives it (cohesion never argues for a switch), so no set's quirk turns into a rule;
- ``user-lexical`` is ``user`` fitted without the signals of the corpus's own topic model (``corpus.py``), for
  a corpus too small to fit one; its bias is shifted so that it switches at the same anchor as ``user``;
- ``dialogue+embedding`` is ``dialogue`` refitted on the same data with the sentence-embedding cohesion
  signals (the optional extra). The ``user`` mode has no such entry yet: its training corpora are generated
  from templates, where meaning-level cohesion would learn the templates.

No labels are needed to run it. Signals the training data never exercises (explicit shift cues such as
"by the way" / "另外", a user insisting on a subject the replies ignored) keep a weight set by hand,
recorded under ``fixed``.

Confidence is the decision margin on a probability scale anchored at the default ``min_confidence``:
a message whose score equals the fitted operating point ``anchor`` gets confidence 0.7 for a switch,
higher scores more; a message well below it gets a high confidence that it continues the current topic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import orjson

ANCHOR_CONFIDENCE = 0.7  # the confidence a score exactly at the operating point gets (the seed's 0.7)


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    anchor: float  # the score at which a switch becomes likelier than not, as fitted

    def score(self, f: dict[str, float]) -> float:
        z = self.bias + sum(w * f[k] for k, w in self.weights.items())
        return _sigmoid(z)

    def switches(self, score: float) -> bool:
        return score >= self.anchor

    def margin(self, score: float) -> float:
        """How far the score is past the operating point, on the logit scale (negative: below it)."""
        return _logit(score) - _logit(self.anchor)

    def confidence(self, score: float) -> float:
        """Confidence in the decision the score leads to (switch or continue)."""
        margin = _logit(score) - _logit(self.anchor)
        return _sigmoid(abs(margin) + _logit(ANCHOR_CONFIDENCE))


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def judging_mode(roles: Iterable[str]) -> str:
    """``dialogue`` when assistant turns are judged (both parties start topics), else ``user``."""
    return "dialogue" if "assistant" in set(roles) else "user"


def _modes() -> dict[str, Any]:
    modes: dict[str, Any] = orjson.loads((resources.files("forensics.analyzers.topics") / "weights.json").read_bytes())[
        "modes"
    ]
    return modes


def has_mode(mode: str) -> bool:
    return mode in _modes()


LEXICAL_SUFFIX = "-lexical"  # the mode fitted without the corpus topic model's signals


def load_models(mode: str) -> tuple[Model, Model]:
    """The mode's model and its lexical twin (the same model when the mode has none: it does not use the corpus
    topic model). Both switch at the same anchor, so one operating point key sets them both."""
    main = load_model(mode)
    return main, load_model(mode + LEXICAL_SUFFIX) if has_mode(mode + LEXICAL_SUFFIX) else main


@lru_cache(maxsize=4)
def load_model(mode: str = "user") -> Model:
    data = _modes()[mode]
    weights = {**data["weights"], **data.get("fixed", {})}
    return Model(weights, float(data["bias"]), float(data["anchor"]))
