"""report.html is one self-contained file that a browser renders with its charts, offline."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from forensics import ingest
from forensics.api import report
from tests.conftest import FIXTURES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TOOL_ORANGE = np.array([255, 127, 14]) / 255  # the tool-result bars of the size chart


@pytest.fixture(scope="module")
def html_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("html")
    ingest([FIXTURES / "seed" / "seed.db"], db=d / "w.duckdb")
    report(d / "w.duckdb", d / "r", ["html"])
    return d / "r" / "report.html"


def test_html_loads_nothing_from_the_network(html_report: Path) -> None:
    text = html_report.read_text()
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"""(src|href)=(?!["']?(data:|#))""", text)
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,', text)
    assert len(images) >= 3


def _screenshot(page: Path, out: Path, tmp: Path) -> np.ndarray:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp / 'profile'}", "--hide-scrollbars", "--window-size=1200,4000",
                    f"--screenshot={out}", page.as_uri()], check=True, capture_output=True, timeout=120)
    return imread(out)[:, :, :3]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_headless_chromium_renders_the_charts(html_report: Path, tmp_path: Path) -> None:
    shot = _screenshot(html_report, tmp_path / "page.png", tmp_path)
    orange = np.all(np.abs(shot - TOOL_ORANGE) < 0.02, axis=2).sum()
    assert shot.shape[0] > 1000 and orange > 2000  # the chart images loaded and were painted
    # the same page with its images stripped paints no chart colour: the pixels came from the images
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r'src="data:image/png;base64,[^"]+"', 'src=""', html_report.read_text()))
    orange_bare = np.all(np.abs(_screenshot(bare, tmp_path / "bare.png", tmp_path) - TOOL_ORANGE) < 0.02, axis=2).sum()
    assert orange_bare < 50
