"""The exploration notebook is committed with its outputs (so it renders where the repo is browsed), uses only
the public API, and runs top to bottom against the current package to the same text it was committed with."""

from __future__ import annotations

import re

import nbformat

from tests.conftest import ROOT, load_script

NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"


def _texts(nb: nbformat.NotebookNode) -> list[str]:
    return [
        "".join(str(o.get("data", {}).get("text/plain", "") or o.get("text", "")) for o in c.outputs)
        for c in nb.cells
        if c.cell_type == "code"
    ]


def test_the_notebook_is_committed_with_outputs_and_calls_only_the_public_api() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code)
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)  # the chart renders
    imports = {m for c in code for m in re.findall(r"^\s*(?:from|import) (forensics[\w.]*)", c.source, re.M)}
    assert imports == {"forensics"}  # import forensics; from forensics import api: nothing internal


def test_the_notebook_runs_to_what_was_committed() -> None:
    make = load_script(ROOT / "notebooks" / "make_explore.py")
    committed = nbformat.read(NOTEBOOK, as_version=4)
    fresh = make.execute(nbformat.read(NOTEBOOK, as_version=4), ROOT)
    assert not [o for c in fresh.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert _texts(fresh) == _texts(committed), "stale: python notebooks/make_explore.py"
    text = "".join(_texts(fresh))
    assert "'conversations_new': 11" in text and "'report.md'" in text and "user_pushback" in text
    assert "'zhipu_glm-5.2'" in text and "{'index': 1, 'a_position': 3, 'b_position': 3}" in text
