"""Every pointer to the docs in help texts and docstrings (`docs/PAGE.md`, `docs/PAGE.md#anchor`)
names a page that exists and, with an anchor, one of its headings; none points at the README
for what the docs hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted((REPO / "src" / "inferqa").rglob("*.py"))
POINTER = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def _anchor(heading: str) -> str:
    """The id mkdocs' toc extension gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def _headings(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)  # not `# comments`
    return {_anchor(h) for h in re.findall(r"^#+\s+(.+?)\s*$", text, re.M)}


def _pointers() -> list[tuple[str, str, str | None]]:
    return [(f"{src.relative_to(REPO)}:{text[:m.start()].count(chr(10)) + 1}", m.group(1), m.group(2))
            for src in SOURCES for text in [src.read_text(encoding="utf-8")] for m in POINTER.finditer(text)]


def test_pointers_are_found():
    assert len(_pointers()) >= 5


@pytest.mark.parametrize("where,page,anchor", _pointers())
def test_every_docs_pointer_resolves(where, page, anchor):
    path = REPO / "docs" / page
    assert path.is_file(), f"{where}: docs/{page} does not exist"
    if anchor:
        assert anchor in _headings(path), f"{where}: docs/{page} has no heading #{anchor}"


def test_no_help_text_points_at_a_readme_section():
    stale = [f"{src.relative_to(REPO)}:{n}" for src in SOURCES
             for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"README[:\s]+[\"A-Z]", line)]
    assert not stale, f"README section pointers (the sections are docs pages now): {stale}"
