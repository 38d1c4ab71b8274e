"""How long one studio edit takes, end to end, on a 16-resource design (no browser).

An edit goes through the whole studio: the pure edit, re-deriving schedules, the undo history,
the autosave file, refilling the editors, validation, and drawing the panes.  The design has 16
resources (4 gmem tensors, 4 groups of two tma tiles -- Merge, FusedMerge, Fork, Merge -- and 4
ungrouped tiles) and 14 tasks whose schedules are all derived.  Edits alternate between valid
designs (a group's mode, an ungrouped tile's stage count), so every pane has real work.

Rows: ``all panes`` draws every pane after each edit (graph, barrier comparison, timeline,
checker, CUDA source); ``visible pane`` is what the studio does (the pane on screen, here the
graph; the others draw when their tab is opened).  Target: median <= 300 ms for all panes.

    python benchmarks/studio.py [--edits 15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from pgstudio.model import (Agent, Compute, CooperativeGroup, Design, GmemTensor, MemoryResource, PipelineConfig,
                            PipelineGroup, PipelineGroupMode, PipelineType, Task)
from pgstudio.model.derive import derive_design

TARGET_MS = 300.0


def tile(name: str, consumer_warps: int) -> MemoryResource:
    cfg = PipelineConfig(PipelineType.TmaAsync, 4, 4096, CooperativeGroup(Agent.Thread, 1),
                         CooperativeGroup(Agent.Warp, consumer_warps))
    return MemoryResource(name, cfg, Compute("copy"), "float32", (1024,))


def build() -> Design:
    """16 resources, 4 groups, 14 tasks, no schedule written by hand."""
    gin = [GmemTensor(f"gin{i}") for i in range(2)]
    gout = [GmemTensor(f"gout{i}", compute=Compute("store")) for i in range(2)]
    resources, graph, groups, tasks = [*gin, *gout], {}, [], []
    warp = 0

    def task(name, warps, src, dst):
        nonlocal warp
        tasks.append(Task.unchecked(name, warp, warps, src, dst))
        warp += warps

    modes = (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge, PipelineGroupMode.Fork, PipelineGroupMode.Merge)
    for gi, mode in enumerate(modes):
        a, b = tile(f"s{gi}_a", 2), tile(f"s{gi}_b", 2)
        resources += [a, b]
        groups.append(PipelineGroup.unchecked(f"g{gi}", [a, b], mode))
        src, out = gin[gi % 2].name, gout[gi % 2].name
        graph[a.name], graph[b.name] = [src], [src]
        graph.setdefault(out, []).extend([a.name, b.name])
        if mode is PipelineGroupMode.Fork:
            task(f"load{gi}", 1, [src], [a.name, b.name])
            task(f"use{gi}a", 2, [a.name], [out])
            task(f"use{gi}b", 2, [b.name], [out])
        else:
            task(f"load{gi}a", 1, [src], [a.name])
            task(f"load{gi}b", 1, [src], [b.name])
            task(f"use{gi}", 2, [a.name, b.name], [out])
    for i in range(4):
        r = tile(f"t{i}", 1)
        resources.append(r)
        src, out = gin[i % 2].name, gout[i % 2].name
        graph[r.name] = [src]
        graph[out].append(r.name)
        task(f"tload{i}", 1, [src], [r.name])
        task(f"tuse{i}", 1, [r.name], [out])
    return derive_design(Design("studio16", resources, graph, groups, tasks, {"num_tiles": 64}))


def edits():
    """Valid edits, in a cycle: (method, args, kwargs)."""
    while True:
        yield "set_group", ("g0",), {"mode": "FusedMerge"}
        yield "set_resource", ("t0",), {"num_stages": 3}
        yield "set_group", ("g0",), {"mode": "Merge"}
        yield "set_resource", ("t0",), {"num_stages": 4}


def measure(studio, n: int, everything: bool) -> list[float]:
    times = []
    cycle = edits()
    for _ in range(n):
        method, args, kwargs = next(cycle)
        t0 = time.perf_counter()
        assert getattr(studio, method)(*args, **kwargs), studio.message_text
        if everything:
            studio.redraw_all()
        else:
            studio.refresh()
        times.append(time.perf_counter() - t0)
        assert studio.report.ok, str(studio.report)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()
    from pgstudio.studio import Studio
    from pgstudio.studio._snapshot import Snapshot

    design = build()
    report = design.validate()
    assert report.ok, str(report)
    with tempfile.TemporaryDirectory() as folder:
        studio = Studio(design, folder=folder, debounce=0, lazy=True)
        studio.redraw_all()  # warm up: imports, graphviz, matplotlib fonts
        measure(studio, 2, True)
        rows = {"visible pane": measure(studio, args.edits, False), "all panes": measure(studio, args.edits, True)}
    panes: dict[str, list[float]] = {}
    for _ in range(5):
        snap = Snapshot(design)
        for name, fn in (("validate", lambda: snap.report), ("graph", snap.graph_html),
                         ("barriers", snap.barriers_html), ("timeline", snap.timeline_html),
                         ("checker", snap.checker_html), ("source", snap.source_html)):
            t0 = time.perf_counter()
            html = fn()
            panes.setdefault(name, []).append(time.perf_counter() - t0)
            if isinstance(html, str) and "not available" in html:
                panes.setdefault(f"{name} (not available)", [])
    print(f"design: {design.summary()}; {len(report.errors)} error(s)")
    print(f"{'edit -> updated':<22} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    for name, ts in rows.items():
        print(f"{name:<22} {1e3 * statistics.median(ts):>10.1f} {1e3 * min(ts):>8.1f} {1e3 * max(ts):>8.1f}")
    print(f"{'one pane, fresh design':<22} {'median ms':>10}")
    for name, ts in panes.items():
        print(f"{name:<22} {1e3 * statistics.median(ts):>10.1f}" if ts else f"{name:<22} {'-':>10}")
    med = 1e3 * statistics.median(rows["all panes"])
    print(f"edit -> diagnostics and all panes: median {med:.1f} ms (target <= {TARGET_MS:.0f} ms: "
          f"{'met' if med <= TARGET_MS else 'MISSED'}) over {args.edits} edits")


if __name__ == "__main__":
    main()
