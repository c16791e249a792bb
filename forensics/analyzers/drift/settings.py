"""[drift] as a typed value, ``DriftSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class DriftSettings(Settings):
    section = "drift"

    crowding_ratio_low: float
    crowding_ratio_high: float
    dispersion_targets_low: int
    dispersion_targets_high: int
    dispersion_parallel_low: int
    dispersion_parallel_high: int
    rediscovery_window: int
    interleave_lag_low: int
    interleave_lag_high: int
    echo_rate_low: float
    echo_rate_high: float
    continue_nags_low: int
    continue_nags_high: int
