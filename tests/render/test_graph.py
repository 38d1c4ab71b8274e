"""The dependency graph: golden DOT sources of the canonical designs, and what the graph shows.

Regenerate the goldens after an intended change with
``PGSTUDIO_UPDATE_GOLDEN=1 python -m pytest tests/render/test_graph.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("graphviz")

from pgstudio import barrier_layout, examples  # noqa: E402
from pgstudio.analysis.diagnostics import Report  # noqa: E402
from pgstudio.model.diagnostic import error, warning  # noqa: E402
from pgstudio.model.task import Task  # noqa: E402
from pgstudio.render import style  # noqa: E402
from pgstudio.render.graph import dependency_graph, graph_svg  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_dot_source_matches_golden(name):
    source = dependency_graph(examples.example(name)).source
    path = GOLDEN / f"{name}.dot"
    if os.environ.get("PGSTUDIO_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(source)
    assert path.exists(), f"no golden {path.name}: run with PGSTUDIO_UPDATE_GOLDEN=1 to create it"
    assert source == path.read_text(), (f"DOT of {name!r} changed; if intended, regenerate with "
                                        "PGSTUDIO_UPDATE_GOLDEN=1 and review the diff")


def _statements(source: str, node_id: str) -> list[str]:
    return [line for line in source.splitlines() if line.strip().startswith(node_id + " [")]


def _attr(line: str, key: str) -> str | None:
    m = re.search(rf'\b{key}="?([^" \]]+)"?', line)
    return m.group(1) if m else None


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_every_resource_task_group_and_edge_is_drawn(name):
    design = examples.example(name)
    src = dependency_graph(design).source
    for r in design.resources:
        (line,) = _statements(src, f"res__{r.name}")
        assert f"<B>{r.name}</B>" in line
        fill, border = style.memory_colours(r.memory)
        assert _attr(line, "fillcolor") == fill and _attr(line, "color") == border
        if r.pipeline_config is not None:
            cfg = r.pipeline_config
            assert str(cfg.pipeline_type) in line
            stages = f"{cfg.num_stages} stage{'' if cfg.num_stages == 1 else 's'}"
            assert f"{stages} x {style.fmt_bytes(cfg.num_bytes)}" in line
    for t in design.tasks:
        (line,) = _statements(src, f"task__{t.name}")
        first, last = t.warp_idx, t.warp_idx + t.num_warps - 1
        assert (f"warp {first}" if first == last else f"warps {first}..{last}") in line
    owned = {}
    for s in barrier_layout(design).sets:
        owned[s.owner] = owned.get(s.owner, 0) + s.stages
    for g in design.groups:
        cluster = src[src.index(f"subgraph cluster_{g.name} {{"):]
        cluster = cluster[:cluster.index("}")]
        assert f"{g.mode.value} (" in cluster and f"{owned[g.name]} barriers" in cluster
        for m in g.members:
            assert f"res__{m.name} [" in cluster
    edges = re.findall(r"^\s*(\S+) -> (\S+) \[", src, flags=re.M)
    deps = {(f"res__{d}", f"res__{k}") for k, ds in design.graph for d in ds}
    uses = {(f"res__{r}", f"task__{t.name}") for t in design.tasks for r in t.src_resources}
    uses |= {(f"task__{t.name}", f"res__{r}") for t in design.tasks for r in t.dst_resources}
    assert set(edges) == deps | uses
    assert len(edges) == len(deps) + len(uses)


def _broken():
    """merge_gemm with two planted mistakes: load_b on load_a's warp, and a dependency on nothing."""
    d = examples.merge_gemm()
    t, warp = d.task("load_b"), d.task("load_a").warp_idx
    d = d.with_task(Task.unchecked("load_b", warp, 1, t.src_resources, t.dst_resources, t.schedule))
    return d.replace(graph=list(d.graph) + [("gmem_d", ("smem_z",))])


OVERLAP = f"both use warp {examples.merge_gemm().task('load_a').warp_idx}"


def test_diagnostics_outline_elements_in_red_with_the_message_as_tooltip():
    design = _broken()
    report = design.validate()
    assert {"task.warps", "graph.unknown"} <= set(report.codes())
    src = dependency_graph(design).source
    red = style.SEVERITY["error"]
    for task in ("load_a", "load_b"):
        (line,) = _statements(src, f"task__{task}")
        assert _attr(line, "color") == red
        assert OVERLAP in line  # the message is the tooltip
    (ok,) = _statements(src, "task__mma")
    assert _attr(ok, "color") == style.TASK_BORDER
    (missing,) = _statements(src, "res__smem_z")
    assert "not a resource of the design" in missing
    (edge,) = [line for line in src.splitlines() if "res__smem_z -> res__gmem_d" in line]
    assert _attr(edge, "color") == red and "no task consumes" in edge
    assert f"{len(report.errors)} error(s)" in src  # the caption says how many


def test_a_passed_report_or_list_of_diagnostics_is_used_instead_of_validate():
    design = examples.merge_copy()
    diag = warning("demo.warn", "smem_a looks lonely", ("smem_a",))
    for report in (Report(design.name, (diag,)), [diag]):
        src = dependency_graph(design, report).source
        (line,) = _statements(src, "res__smem_a")
        assert _attr(line, "color") == style.SEVERITY["warning"] and "smem_a looks lonely" in line
    group_diag = error("demo.group", "group ab is wrong", ("ab",))
    src = dependency_graph(design, [group_diag]).source
    cluster = src[src.index("subgraph cluster_ab {"):]
    assert f'color="{style.SEVERITY["error"]}"' in cluster[:cluster.index("res__")]
    assert "group ab is wrong" in cluster[:cluster.index("res__")]


def test_highlight_marks_one_element():
    design = examples.merge_gemm()
    plain = dependency_graph(design).source
    src = dependency_graph(design, highlight="smem_b").source
    (line,) = _statements(src, "res__smem_b")
    assert _attr(line, "penwidth") == "4" and _attr(line, "color") == style.HIGHLIGHT
    (other,) = _statements(src, "res__smem_a")
    assert other == _statements(plain, "res__smem_a")[0]
    cluster = dependency_graph(design, highlight="ab").source
    head = cluster[cluster.index("subgraph cluster_ab {"):]
    assert "penwidth=4" in head[:head.index("res__")]


def test_svg_has_tooltips_and_the_legend():
    svg = graph_svg(_broken())
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:400]
    assert OVERLAP in svg  # tooltip of the red tasks
    for word in ("gmem", "smem", "tmem", "depends on", "arrives on full", "arrives on empty"):
        assert word in svg


def test_a_design_without_tasks_or_groups_still_draws():
    design = examples.merge_copy().replace(tasks=(), groups=())
    src = dependency_graph(design, tasks=False, legend=False).source
    assert "task__" not in src and "cluster_" not in src
    assert "<svg" in dependency_graph(design).pipe(format="svg").decode()
