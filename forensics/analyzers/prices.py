"""What a model's tokens cost (docs/usage.md): the shipped, dated price table (``prices.toml`` beside this module)
under the harness config's ``[prices]``, and the one documented way a logged model name finds its price.

A price is USD per million tokens of each kind: ``input`` (sent, not from the cache), ``output``,
``cache_read`` and ``cache_write``. A cost is computed only from prices that exist: a response whose tokens
include a kind its model has no price for (or whose model has no price at all) has no cost, never a guess.

Matching a logged name (docs/usage.md), first hit wins, the user's table before the shipped one at each step:
1. the name exactly as logged;
2. the name in lower case, blanks as hyphens ("Gemini 2.5 Pro" -> "gemini-2.5-pro");
3. without a provider or route prefix: everything up to the last ``/`` ("openrouter/anthropic/claude-sonnet-4",
   "models/gemini-2.5-pro"), a Bedrock region and vendor ("us.anthropic.claude-3-5-haiku-20241022-v1:0"), and
   a Bedrock version suffix (``-v1:0``);
4. without a date suffix: ``-20250929``, ``-2024-08-06``, ``@20241022``;
5. with a dot between digits as a hyphen (OpenRouter's "claude-sonnet-4.5" is Anthropic's "claude-sonnet-4-5").
Nothing else: a name never matches by prefix, so "gpt-4o-mini" is not "gpt-4o", and a snapshot the table lists
("gpt-4o-2024-05-13", priced apart) matches itself before its date is dropped.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from forensics.config import PRICE_KINDS

TABLE = Path(__file__).with_name("prices.toml")
MILLION = 1_000_000
_DATE = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(r"^(?:(?:us|eu|apac|jp|au|global)\.)?(?:anthropic|meta|amazon|mistral|cohere|ai21|deepseek)\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")


@dataclass(frozen=True)
class PriceTable:
    """The shipped table's date and source, and model -> kind -> USD per million tokens (user's over shipped)."""

    date: str
    source: str
    shipped: dict[str, dict[str, float]]
    user: dict[str, dict[str, float]]

    def match(self, model: str | None) -> tuple[str, str] | None:
        """(the table's name for ``model``, "config" or "shipped"), or None when it has no price."""
        if not model:
            return None
        for name in candidates(model):
            for origin, table in (("config", self.user), ("shipped", self.shipped)):
                if name in table:
                    return name, origin
        return None

    def price(self, model: str | None) -> dict[str, float] | None:
        hit = self.match(model)
        if hit is None:
            return None
        return (self.user if hit[1] == "config" else self.shipped)[hit[0]]

    def cost(self, model: str | None, tokens: dict[str, int]) -> float | None:
        """USD for ``tokens`` (kind -> count, kinds of ``PRICE_KINDS``; input without the cache), or None when a
        kind with tokens has no price."""
        if not any(tokens.values()):
            return 0.0
        p = self.price(model)
        if p is None or any(n and k not in p for k, n in tokens.items()):
            return None
        return sum(n * p[k] for k, n in tokens.items() if n) / MILLION


def candidates(model: str) -> list[str]:
    """The names tried for ``model``, in order (the module's docstring)."""
    out = [model]
    name = re.sub(r"\s+", "-", model.strip().lower())
    out.append(name)
    name = name.rsplit("/", 1)[-1]
    name = _BEDROCK_VERSION.sub("", _BEDROCK.sub("", name))
    out.append(name)
    out.append(_DATE.sub("", name))
    out.append(re.sub(r"(?<=\d)\.(?=\d)", "-", out[-1]))
    return list(dict.fromkeys(out))


@cache
def _shipped() -> tuple[str, str, dict[str, dict[str, float]]]:
    doc = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    models = {m: {k: float(v) for k, v in p.items() if k in PRICE_KINDS} for m, p in doc["models"].items()}
    return str(doc["date"]), str(doc["source"]), models


def table(user: dict[str, dict[str, float]] | None = None) -> PriceTable:
    """The shipped table with the config's ``[prices]`` over it."""
    date, source, shipped = _shipped()
    return PriceTable(date, source, shipped, dict(user or {}))
