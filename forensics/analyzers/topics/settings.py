"""[topic] as a typed value, ``TopicSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class TopicSettings(Settings):
    section = "topic"

    marker_enabled: bool
    open_domain: bool
    min_confidence: float
    roles: list[str]
    switch_score: float
    dialogue_switch_score: float
    embedding: bool
    embedding_switch_score: float
    lexicon: dict[str, list[str]]
    request_cues: list[str]
    addition_cues: list[str]
    reference_cues: list[str]
    offer_cues: list[str]
    proposal_cues: list[str]
    social_words: list[str]
    register_words: list[str]
