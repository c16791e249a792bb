"""The Python API as a notebook user meets it: every public name exists and says what it is; type hints ship."""

from __future__ import annotations

import inspect

import pytest

import forensics
from forensics import api
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("module", "name"), [(m, n) for m in (forensics, api) for n in m.__all__], ids=lambda v: getattr(v, "__name__", v)
)
def test_every_public_name_exists_with_a_docstring(module: object, name: str) -> None:
    obj = getattr(module, name)
    if callable(obj) and (inspect.isfunction(obj) or inspect.isclass(obj)):
        assert inspect.getdoc(obj), f"{module.__name__}.{name} has no docstring"


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / "forensics" / "py.typed").is_file()  # PEP 561: hatchling ships every file of the package
