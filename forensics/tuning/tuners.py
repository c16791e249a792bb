"""The tuners, one per tunable family; each sweeps the warehouse with the analyzer that owns the metric."""
from __future__ import annotations
