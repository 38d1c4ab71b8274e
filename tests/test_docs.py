"""The project's documents are its own: every link in the Markdown pages and every document the
code cites is a file of this repository (the site build, ``make docs``, checks the pages' links
again with warnings as errors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Markdown links and images: ``[text](target)``, ``![alt](target)``.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: A document named in code or prose: ``semantics.md``, ``docs/architecture.md``.
CITED = re.compile(r"\b([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)\b")
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = [*sorted((ROOT / "pgstudio").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py")),
           *sorted((ROOT / "benchmarks").glob("*.py")), ROOT / "notebooks" / "_build.py", ROOT / "Makefile"]


def _local(target: str) -> str | None:
    """The repository path a link points to, or None for a web address or an in-page anchor."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None
    return target.split("#", 1)[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_page_is_a_file_of_the_repository(page):
    dangling = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        path = _local(target)
        if path and not (page.parent / path).exists():
            dangling.append(target)
    assert not dangling, f"{page.relative_to(ROOT)} links to files the repository lacks: {dangling}"


def test_every_document_the_code_cites_exists():
    """A citation such as ``semantics.md section 5`` names a page of ``docs/`` (or the README /
    changelog at the top), by its file name."""
    known = {p.name for p in PAGES} | {str(p.relative_to(ROOT)) for p in PAGES}
    missing = []
    for source in SOURCES:
        if source == Path(__file__):
            continue
        for line_no, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for name in CITED.findall(line):
                if name not in known and Path(name).name not in known:
                    missing.append(f"{source.relative_to(ROOT)}:{line_no}: {name}")
    assert not missing, "documents cited but not in the repository:\n" + "\n".join(missing)


def test_the_license_is_the_one_pyproject_names():
    import tomllib
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    text = (ROOT / "LICENSE").read_text()
    assert declared == "Apache-2.0" and "Apache License" in text and "Version 2.0" in text


def test_the_changelog_names_this_version():
    from pgstudio import __version__
    assert f"## [{__version__}]" in (ROOT / "CHANGELOG.md").read_text()
