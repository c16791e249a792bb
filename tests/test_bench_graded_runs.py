"""`python -m bench.graded_runs`: bad usage is one line on stderr and exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_a_missing_folder_is_bad_usage(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-runs"
    done = subprocess.run(
        [sys.executable, "-m", "bench.graded_runs", str(missing)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"graded_runs.py: error: not a folder: {missing}"
    assert "Traceback" not in done.stderr and done.stdout == ""
