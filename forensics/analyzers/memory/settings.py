"""[memory] as a typed value, ``MemorySettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class MemorySettings(Settings):
    section = "memory"

    top_k: int
    similarity_threshold: float
    time_decay: float
    importance_weight: float
    negation_cues: list[str]
    weighing_cues: list[str]
    decision_cues: list[str]
    undecided_cues: list[str]
    supersede_cues: list[str]
    question_cues: list[str]
    decision_roles: list[str]
    declined_cues: list[str]
    weak_decision_cues: list[str]
    contrast_cues: list[str]
    agreement_cues: list[str]
    recommend_cues: list[str]
    question_match: float
    conflict_title_match: float
