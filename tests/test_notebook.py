"""The exploration notebook runs top to bottom against the current package, so it cannot rot."""
from __future__ import annotations

from pathlib import Path

import nbformat

from tests.conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"


def test_notebook_is_committed_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def test_notebook_executes(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "'conversations_new': 11" in text  # the seed table and the 8 sessions
    assert "f89d129a" in text and "'report.md'" in text
    assert "tool_result_crowding" in text and "'tool_share_after'" in text and "'zhipu_glm-5.2'" in text
