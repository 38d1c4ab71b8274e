"""The notebooks' "try it" sentences state computed numbers (notebooks/_build.py), and doing what
they say in the studio gives those numbers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout

pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _builder():
    spec = importlib.util.spec_from_file_location("notebooks_build_try", NOTEBOOKS / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_studio_try_it_switch_to_fused_merge(tmp_path):
    build = _builder()
    before, after, errors = build.TRY_IT
    text = next(c for c in build.NOTEBOOKS["00_studio"] if c.startswith("md:Try it"))
    assert f"drop from\n{before} to {after}" in text or f"drop from {before} to {after}" in text.replace("\n", " ")
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)  # the notebook's cell
    assert barrier_layout(s.design).num_barriers == before
    groups = s.editors["groups"]
    groups.select("ab")
    groups.mode.value = "FusedMerge"  # what the sentence asks
    assert barrier_layout(s.design).num_barriers == after and f"{after} barriers" in s.status.value
    assert len(s.report.errors) == errors == 0
    s.editors["resources"].select("smem_b")
    s.editors["resources"].pipeline.value = "TmaAsync"  # the sentence's second half: a diagnostic appears
    assert "group.collapsed_kind" in s.report.codes()
