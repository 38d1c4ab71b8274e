"""Graphviz backend selection: the system ``dot`` when on the PATH, otherwise graphviz-pure."""

from __future__ import annotations

import shutil

import pytest

graphviz = pytest.importorskip("graphviz")
import graphviz.backend.dot_command as dot_command  # noqa: E402

from pgstudio import examples  # noqa: E402
from pgstudio.errors import PgStudioError  # noqa: E402
from pgstudio.render import _graphviz  # noqa: E402
from pgstudio.render.graph import dependency_graph  # noqa: E402

real_which = shutil.which


@pytest.fixture
def no_dot(monkeypatch):
    """A machine without the system Graphviz: ``dot`` is on no PATH entry."""
    monkeypatch.setattr(dot_command, "DOT_BINARY", dot_command.DOT_BINARY)  # restored afterwards
    monkeypatch.setattr(_graphviz.shutil, "which", lambda name, *a, **k: None if name == "dot" else real_which(name))


@pytest.mark.skipif(_graphviz.find_pure() is None, reason="graphviz-pure is not installed")
def test_graphviz_pure_renders_when_no_dot_is_on_the_path(no_dot, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # graphviz-pure is still found beside the interpreter
    chosen = _graphviz.select()
    assert chosen != "dot" and "graphviz-pure" in chosen
    assert str(dot_command.DOT_BINARY) == chosen
    graph = dependency_graph(examples.merge_gemm_resadd())
    svg = graph.pipe(format="svg").decode()
    assert "graphviz-pure" in svg  # the generator banner proves which executable laid it out
    assert "<title>cluster_ab</title>" in svg and "<title>cluster_cr</title>" in svg
    assert graph.pipe(format="png").startswith(b"\x89PNG")


def test_system_dot_is_preferred_when_present(monkeypatch):
    monkeypatch.setattr(dot_command, "DOT_BINARY", dot_command.DOT_BINARY)
    monkeypatch.setattr(_graphviz.shutil, "which", lambda name, *a, **k: "/usr/bin/dot" if name == "dot" else None)
    assert _graphviz.select() == "dot"
    assert str(dot_command.DOT_BINARY) == "dot"


def test_no_graphviz_at_all_is_a_clear_error(no_dot, monkeypatch):
    monkeypatch.setattr(_graphviz, "find_pure", lambda: None)
    with pytest.raises(PgStudioError, match="pip install graphviz-pure"):
        dependency_graph(examples.merge_copy())
