"""Every built-in format is covered three ways before it ships (issue 40): a real file of it under fixtures/ that
detection reads as it, an entry in the hostile corpus (tests/hostile_corpus.py, which mutates that file) and
a section of docs/formats.md (a ``##`` heading naming it in backticks). A format that lacks one fails here by
name."""

from __future__ import annotations

import re

import pytest

from forensics.formats.kit.declare import Probe
from forensics.ingestion import registry
from forensics.ingestion.catalog import BUILTIN, FALLBACK
from tests.conftest import FIXTURES, ROOT
from tests.hostile_corpus import SOURCES

NAMES = [name for name, _ in BUILTIN + FALLBACK]
HEADINGS = [
    line for line in (ROOT / "docs" / "formats.md").read_text(encoding="utf-8").splitlines() if line.startswith("## ")
]


def test_the_catalog_lists_every_format_module_once() -> None:
    modules = {spec.split(":")[0] for _, spec in BUILTIN + FALLBACK}
    # 25, and 14 of issue 42: copilot-cli ... goose, pi, openclaw, crush, letta, nanobot, moatless, hermes
    assert len(NAMES) == len(set(NAMES)) == 39
    assert all(m.startswith("forensics.formats.") and ".kit" not in m for m in modules)


@pytest.mark.parametrize("name", NAMES)
def test_the_format_has_a_real_file_fixture_in_the_hostile_corpus(name: str) -> None:
    files = [FIXTURES / path for fmt, path in SOURCES if fmt == name]
    assert files, f"format {name!r}: no entry in tests/hostile_corpus.py SOURCES (a fixture file of it to mutate)"
    for path in files:
        assert path.is_file(), f"format {name!r}: its hostile-corpus fixture {path} is no file under fixtures/"
        found = registry.sniff(Probe(path))
        assert found is not None and found[0].name == name, (
            f"format {name!r}: {path.relative_to(FIXTURES)} is detected as {found and found[0].name!r}"
        )


@pytest.mark.parametrize("name", NAMES)
def test_the_format_has_a_section_in_the_formats_doc(name: str) -> None:
    assert any(re.search(rf"`{re.escape(name)}`", h) for h in HEADINGS), (
        f"format {name!r}: no '## ... (`{name}`)' section in docs/formats.md"
    )


def test_a_format_missing_from_the_corpus_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.SOURCES", [s for s in SOURCES if s[0] != "aider"])
    with pytest.raises(AssertionError, match="format 'aider': no entry in tests/hostile_corpus.py"):
        test_the_format_has_a_real_file_fixture_in_the_hostile_corpus("aider")
