"""The Python API's reference (docs/api.md) is generated from the public names and their docstrings: it is
current, and every public function and class says what it does."""

from __future__ import annotations

import importlib
import inspect

from docs.apiref import MODULES, render
from tests.conftest import ROOT


def test_the_reference_is_current() -> None:
    assert (ROOT / "docs" / "api.md").read_text(encoding="utf-8") == render(), (
        "stale: python docs/apiref.py > docs/api.md"
    )


def test_every_public_function_and_class_has_its_own_docstring() -> None:
    public = [
        (f"{m}.{n}", getattr(importlib.import_module(m), n))
        for m in MODULES
        for n in importlib.import_module(m).__all__
    ]
    routines = [(name, obj) for name, obj in public if inspect.isfunction(obj) or inspect.isclass(obj)]
    assert len(routines) >= 30
    assert [name for name, obj in routines if not obj.__doc__] == []
