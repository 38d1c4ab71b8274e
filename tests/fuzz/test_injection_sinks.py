"""Hostile text planted into every string field of each canonical design file reaches the pictures
safely or not at all: either the loader refuses the file with one line naming the field, or the
DOT source parses in Graphviz with the clean design's node and edge counts, the HTML view holds
no element or attribute the clean view lacks, and a file name made from the text stays in its
folder.  A deterministic sample keeps the run short."""

from __future__ import annotations

import json
import random
from collections import Counter
from html.parser import HTMLParser

import pytest

from injection_corpus import PAYLOADS, planted, string_fields

from pgstudio import Design, DesignError, examples
from pgstudio.model.names import name_problem
from pgstudio.model.text import file_stem

pytest.importorskip("graphviz")
from pgstudio.render.display import design_bundle  # noqa: E402
from pgstudio.render.graph import dependency_graph  # noqa: E402

COUNTS: Counter = Counter()
PER_DESIGN = 40
#: The elements the HTML views themselves write (a design with findings adds its diagnostics table).
VIEW_TAGS = {"div", "b", "span", "p", "pre", "details", "summary", "table", "tr", "td", "th", "code", "i"}


class _Shape(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)


def _shape(html: str) -> _Shape:
    p = _Shape()
    p.feed(html)
    return p


def _svg_counts(design) -> tuple[int, int]:
    svg = dependency_graph(design).pipe(format="svg").decode()
    return svg.count('class="node"'), svg.count('class="edge"')


def _cases(name):
    base = json.loads(examples.example(name).to_json())
    paths = [p for p in string_fields(base) if p[:1] not in (("schema",),)]
    rng = random.Random(f"sinks-{name}")
    cases = [(p, pay) for p in paths for pay in PAYLOADS]
    return base, rng.sample(cases, min(PER_DESIGN, len(cases)))


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_planted_text_is_refused_or_every_picture_sink_is_safe(name, tmp_path):
    clean = examples.example(name)
    clean_counts = _svg_counts(clean)
    clean_html = _shape(design_bundle(clean)["text/html"])
    base, cases = _cases(name)
    for path, payload in cases:
        try:
            design = Design.from_json(planted(base, path, payload))
        except DesignError as exc:
            assert "\n" not in str(exc).strip(), str(exc)
            COUNTS["refused at load"] += 1
            continue
        counts = _svg_counts(design)  # Graphviz parsed it
        if name_problem(payload) is None:  # a plain new name may change the graph legitimately (a dangling ref)
            COUNTS["renamed, structure may differ"] += 1
        else:
            assert counts == clean_counts, (path, payload)  # nothing injected
        COUNTS["dot safe"] += 1
        html = design_bundle(design)["text/html"]
        shape = _shape(html)
        assert shape.tags <= clean_html.tags | VIEW_TAGS, (path, payload, shape.tags - clean_html.tags)
        assert not any(a.startswith("on") for a in shape.attrs), (path, payload)
        assert "PGXHTML'" not in html.replace("&#x27;PGXHTML&#x27;", ""), (path, payload)
        COUNTS["html safe"] += 1
        target = tmp_path / f"{file_stem(payload)}.json"
        assert target.resolve().parent == tmp_path.resolve()
        COUNTS["file name safe"] += 1


def test_zz_summary_of_the_sinks():
    """Runs last in this file: every sink was reached and none let text escape."""
    print(dict(COUNTS))
    if not COUNTS:
        pytest.skip("run with the sink test above")
    assert COUNTS["refused at load"] + COUNTS["dot safe"] > 0
    assert COUNTS["dot safe"] > 0 and COUNTS["html safe"] == COUNTS["dot safe"]
