"""`python bench/X.py` puts bench/ first on the import path: a bench module named like a standard-library module
(bench/secrets.py did) replaces it for every import of that run, and the run fails far from the cause."""

from __future__ import annotations

import sys

from tests.conftest import ROOT


def test_no_bench_module_shadows_the_standard_library() -> None:
    names = {p.stem for p in (ROOT / "bench").glob("*.py")}
    assert names and not names & set(sys.stdlib_module_names)
