"""The project's documents are its own: every relative link in the Markdown pages (inline,
reference, HTML, snippet include) is a file of this repository and every anchor a heading of its
page, every document the code cites exists, and the site's menu lists exactly the pages there are
(the site build, ``make docs``, checks the site's links again with warnings as errors)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Inline links and images: ``[text](target)``, ``![alt](target)``, ``[text](<target>)``, with an
#: optional title; the text may hold one level of brackets (``[`x[0]`](target)``).
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
#: Reference definitions: ``[name]: target``.
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
#: Links and images written as HTML: ``<img src="...">``, ``<a href="...">``.
HTML = re.compile(r"<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
#: Snippet includes (pymdownx.snippets, paths from the repository root): ``--8<-- "CHANGELOG.md"``.
SNIPPET = re.compile(r"^\s*-{1,}8<-{1,}\s+[\"']([^\"']+)[\"']", re.M)
#: A document named in code or prose: ``semantics.md``, ``docs/architecture.md``.
CITED = re.compile(r"\b([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)\b")
#: Every Markdown page: the README and changelog at the top and every page of the site (the
#: notebooks folder in docs/ is a link to notebooks/, whose pages are notebooks).
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md",
         *sorted(p for p in DOCS.rglob("*.md") if "notebooks" not in p.relative_to(DOCS).parts)]
SOURCES = [*sorted((ROOT / "pgstudio").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py")),
           *sorted((ROOT / "benchmarks").glob("*.py")), ROOT / "notebooks" / "_build.py", ROOT / "Makefile"]


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans, where brackets are code."""
    text = re.sub(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", "", text, flags=re.S)


def _slugs(text: str) -> set[str]:
    """The anchors of a page's headings, as the site's toc extension makes them and as GitHub
    does (a README read on GitHub); an explicit ``{#id}`` too."""
    slugs = set()
    for heading in re.findall(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", _code_free_lines(text), re.M):
        explicit = re.search(r"\{\s*#([\w-]+)[^}]*\}\s*$", heading)
        if explicit:
            slugs.add(explicit.group(1))
            heading = heading[:explicit.start()]
        words = re.sub(r"[`*_]|<[^>]+>", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)).strip()
        toc = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode()
        slugs.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", toc).strip().lower()))
        slugs.add(re.sub(r"[^\w\- ]", "", words.lower()).replace(" ", "-"))
    return slugs


def _code_free_lines(text: str) -> str:
    return re.sub(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[^\n]*$", "", text, flags=re.S | re.M)


def dangling_links(page: Path, text: str | None = None) -> list[str]:
    """Every relative link of ``page`` (inline, reference, HTML or snippet include) that names no
    file of the repository, leaves the repository, or names an anchor its page lacks."""
    text = page.read_text(encoding="utf-8") if text is None else text
    prose = _prose(text)
    targets = [(t, page.parent) for regex in (LINK, REFERENCE, HTML) for t in regex.findall(prose)]
    targets += [(t, ROOT) for t in SNIPPET.findall(text)]
    dangling = []
    for target, base in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            continue  # a web address, mail address or other scheme: not a file of the repository
        path, _, anchor = target.partition("#")
        file = (base / path).resolve() if path else page.resolve()
        if not file.is_relative_to(ROOT.resolve()):
            dangling.append(f"{target} (outside the repository)")
        elif not file.exists():
            dangling.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _slugs(text if not path else file.read_text(encoding="utf-8")):
            dangling.append(f"{target} (no heading #{anchor} in {file.name})")
    return dangling


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_page_is_a_file_of_the_repository(page):
    dangling = dangling_links(page)
    assert not dangling, f"{page.relative_to(ROOT)} links to what the repository lacks: {dangling}; fix the path or the anchor"


def test_the_link_checker_finds_what_dangles_and_passes_what_resolves():
    page = DOCS / "index.md"
    text = """# A page

## Compile, verify, time

[ok](semantics.md) ![ok](modes.svg) [ok](semantics.md#5-pipeline-state-and-the-protocol-table)
[ok](#compile-verify-time) [web](https://example.org/x.md) [ok `a[0]`](../README.md)
[gone](nowhere.md) ![gone](pics/none.svg) [gone](semantics.md#no-such-heading) [gone](#nor-this)
[ref]: ../LICENSE
[badref]: ../NO_LICENSE
<img src="missing.png"> [out](../../../etc/passwd)
--8<-- "NOT_THERE.md"
`[code](not-a-link.md)`

```
[in a fence](not-a-link-either.md)
```
"""
    assert sorted(dangling_links(page, text)) == sorted([
        "nowhere.md", "pics/none.svg", "semantics.md#no-such-heading (no heading #no-such-heading in semantics.md)",
        "#nor-this (no heading #nor-this in index.md)", "../NO_LICENSE", "missing.png",
        "../../../etc/passwd (outside the repository)", "NOT_THERE.md"])


def test_the_site_menu_names_every_page_and_only_pages_that_exist():
    """mkdocs.yml's nav and docs/ agree: no menu entry without its file, no page left out."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def entries(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from entries(value) if isinstance(value, list) else [value]

    named = set(entries(config["nav"]))
    missing = sorted(n for n in named if not (DOCS / n).exists())
    assert not missing, f"mkdocs.yml's nav names pages docs/ lacks: {missing}"
    pages = {str(p.relative_to(DOCS)) for p in PAGES if p.is_relative_to(DOCS)}
    pages |= {f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert not pages - named, f"pages missing from mkdocs.yml's nav: {sorted(pages - named)}"


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
