"""Code and docs point at pages of docs/, never at documents outside the repository (a working specification's
numbered sections, the seed harness's design notes), and every such pointer names a page and a heading that exist."""

import re
from pathlib import Path

from tests.conftest import ROOT

# what once pointed outside: a numbered section of the working specification ("SPEC", a space, the section
# sign, a number), "SPEC's rule", a seed design note by number ("seed", a space, "001") or by its own sections;
# spelt with escapes here so that a grep for them finds nothing in this file either
OUTSIDE = re.compile(r"SPEC \u00a7|\bSPEC's\b|\.\./shared/SPEC|\bseed 00\d|seed \u00a7|\u00a7[\u4e09\u56db\u516d]")
TREES = ("forensics", "bench", "fixtures", "tests", "docs", "tools", "queries")
SUFFIXES = {".py", ".sql", ".md", ".html", ".toml", ".json", ".ipynb"}
DOC_POINTER = re.compile(r"(?<![\w/`])docs/([\w.-]+\.md)(?:#([\w-]+))?", re.ASCII)  # a quoted `docs/x.md` is data
MD_LINK = re.compile(r"\]\(([\w./-]*\.md)?#([^)\s]+)\)")


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for tree in TREES:
        found += [p for p in sorted((ROOT / tree).rglob("*")) if p.suffix in SUFFIXES and p.is_file()]
    skip = ("fixtures/built", "fixtures/real")  # files made or copied, not written here: their words are data
    return [p for p in found if not any(s in p.as_posix() for s in skip) and p.name != "test_words.py"]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)}


def test_no_pointer_leaves_the_repository() -> None:
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for p in _files()
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert hits == [], "link the docs/ page that says it instead:\n" + "\n".join(hits)


def test_every_docs_pointer_names_a_page_and_heading_that_exist() -> None:
    docs = ROOT / "docs"
    broken = []
    for p in _files():
        text = p.read_text(encoding="utf-8", errors="replace")
        pointers = [(m.group(1), m.group(2)) for m in DOC_POINTER.finditer(text)]
        if p.suffix == ".md" and p.parent == docs:
            pointers += [(m.group(1) or p.name, m.group(2)) for m in MD_LINK.finditer(text)]
        for page, anchor in pointers:
            target = docs / page
            if not target.is_file() or (anchor and anchor not in _anchors(target)):
                broken.append(f"{p.relative_to(ROOT)}: docs/{page}#{anchor or ''}")
    assert broken == [], "\n".join(sorted(set(broken)))


def test_the_slug_is_githubs() -> None:
    assert _slug("Retrieval replay: `--questions FILE`") == "retrieval-replay---questions-file"
    assert _slug("Decision-memory harness databases (`decision-memory`)") == (
        "decision-memory-harness-databases-decision-memory"
    )
    assert _slug("The exposure ledger: which secret, where, seen by whom") == (
        "the-exposure-ledger-which-secret-where-seen-by-whom"
    )
