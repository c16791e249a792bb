"""Drift phenomena (SPEC §5, seed 001 §三): the rules behind the `drift` analyzer, one module per kind of evidence."""
