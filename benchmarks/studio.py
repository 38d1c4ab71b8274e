"""How long one studio edit takes, end to end, on a 16-resource design (no browser).

An edit goes through the whole studio: the pure edit, re-deriving schedules, the undo history,
the autosave file, refilling the editors, validation, and drawing the panes.  The design has 16
resources in 4 lanes (a gmem input, two tma tiles in a Merge or FusedMerge group, a gmem output
D = A + B) and 12 tasks whose schedules are all derived.  Edits switch groups between Merge and
FusedMerge, so every edit changes the barrier layout and the schedules, the design stays valid
and every pane has real work (the code generator and the checker accept it).

Rows: ``all panes`` is a studio that draws every pane after each edit (``lazy=False``): graph,
the interactive barrier grid and timeline (Plotly widgets whose data are swapped), checker, CUDA
source; ``visible pane`` is what the studio does by default (the pane on screen, here the graph;
the others draw when their tab is opened).  Both are wall time from the edit call until every
pane is updated, and CPU time (this process, all threads, plus the Graphviz subprocess).  A table
then splits the ``all panes`` edit into its parts, so nothing is unaccounted for.  Wall time
depends on what else the machine runs: the load average is printed with it.  The static
grouped-vs-ungrouped picture is drawn on request, not per edit.  Target: median
<= 150 ms for all panes.

    python benchmarks/studio.py [--edits 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from pgstudio.model import (Agent, Compute, CooperativeGroup, Design, GmemTensor, MemoryResource, PipelineConfig,
                            PipelineGroup, PipelineGroupMode, PipelineType, Task)
from pgstudio.model.derive import derive_design

TARGET_MS = 150.0


def tile(name: str) -> MemoryResource:
    cfg = PipelineConfig(PipelineType.TmaAsync, 4, 4096, CooperativeGroup(Agent.Thread, 1),
                         CooperativeGroup(Agent.Warp, 2))
    return MemoryResource(name, cfg, Compute("copy"), "float32", (1024,))


def build() -> Design:
    """16 resources in 4 lanes (gin -> two tiles -> gout = a + b), 4 groups, 12 tasks; no schedule
    is written by hand, and the code generator accepts it."""
    resources, graph, groups, tasks = [], {}, [], []
    modes = (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge, PipelineGroupMode.Merge,
             PipelineGroupMode.FusedMerge)
    for k, mode in enumerate(modes):
        gin, a, b = GmemTensor(f"gin{k}"), tile(f"s{k}_a"), tile(f"s{k}_b")
        out = GmemTensor(f"gout{k}", compute=Compute("store", f"s{k}_a + s{k}_b"))
        resources += [gin, a, b, out]
        graph.update({a.name: [gin.name], b.name: [gin.name], out.name: [a.name, b.name]})
        groups.append(PipelineGroup.unchecked(f"g{k}", [a, b], mode))
        tasks += [Task.unchecked(f"load{k}a", 4 * k, 1, [gin.name], [a.name]),
                  Task.unchecked(f"load{k}b", 4 * k + 1, 1, [gin.name], [b.name]),
                  Task.unchecked(f"use{k}", 4 * k + 2, 2, [a.name, b.name], [out.name])]
    problem = {"num_tiles": 64, "num_elements": 64 * 1024, "tile_elems": 1024, "dtype": "float32"}
    return derive_design(Design("studio16", resources, graph, groups, tasks, problem))


def edits():
    """Valid edits, in a cycle: (method, args, kwargs)."""
    while True:
        yield "set_group", ("g0",), {"mode": "FusedMerge"}
        yield "set_group", ("g3",), {"mode": "Merge"}
        yield "set_group", ("g0",), {"mode": "Merge"}
        yield "set_group", ("g3",), {"mode": "FusedMerge"}


class Clock:
    """Wall and CPU time (this process and its subprocesses: Graphviz) of a piece of work."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    @staticmethod
    def now() -> tuple[float, float]:
        t = os.times()
        return time.perf_counter(), time.process_time() + t.children_user + t.children_system

    def add(self, name: str, start: tuple[float, float]) -> None:
        wall, cpu = self.now()
        self.wall.setdefault(name, []).append(wall - start[0])
        self.cpu.setdefault(name, []).append(cpu - start[1])

    def timed(self, name: str, fn):
        def run(*args, **kwargs):
            start = self.now()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(name, start)
        return run


def instrument(studio, clock: Clock) -> None:
    """Time the parts of an edit on this studio: its own methods (instance attributes), and the
    analysis functions the studio modules call (their module names, for this process only)."""
    from pgstudio.studio import _snapshot, app

    draw = studio.views.draw
    studio.views.draw = lambda key: clock.timed(f"pane: {key}", draw)(key)
    studio.diagnostics.update = clock.timed("diagnostics pane", studio.diagnostics.update)
    studio._refresh_editors = clock.timed("refill the editors", studio._refresh_editors)
    studio._autosave = clock.timed("autosave", studio._autosave)
    app.derive_design = clock.timed("derive the schedules", app.derive_design)
    _snapshot.validate = clock.timed("validate", _snapshot.validate)
    _snapshot.Snapshot._graph_svg = clock.timed(BACKGROUND, _snapshot.Snapshot._graph_svg)


#: The one part that runs beside the others (a thread waiting on the Graphviz subprocess).
BACKGROUND = "graph layout (Graphviz; beside the panes)"


def measure(studio, n: int, clock: Clock | None = None, name: str = "edit") -> list[float]:
    clock = clock or Clock()
    cycle = edits()
    for _ in range(n):
        method, args, kwargs = next(cycle)
        start = clock.now()
        assert getattr(studio, method)(*args, **kwargs), studio.message_text
        studio.refresh()  # a no-op unless a redraw is still pending
        clock.add(name, start)
        assert studio.report.ok, str(studio.report)
    return clock.wall[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()
    from pgstudio.studio import Studio

    design = build()
    report = design.validate()
    assert report.ok, str(report)
    rows = Clock()
    parts = Clock()
    with tempfile.TemporaryDirectory() as folder:
        visible = Studio(design, folder=folder, debounce=0, lazy=True, autosave=False)
        everything = Studio(design, folder=folder, debounce=0, lazy=False, name="everything")
        measure(visible, 4)  # warm up: imports, graphviz, Plotly widgets
        measure(everything, 4)
        measure(visible, args.edits, rows, "visible pane")
        instrument(everything, parts)
        measure(everything, args.edits, rows, "all panes")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"design: {design.summary()}; {len(report.errors)} error(s)")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} "
          "(wall time grows with the load; CPU time does not)")
    print(f"{'edit -> updated':<34} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'CPU ms':>8}")
    for name, ts in rows.wall.items():
        print(f"{name:<34} {1e3 * statistics.median(ts):>10.1f} {1e3 * min(ts):>8.1f} {1e3 * max(ts):>8.1f} "
              f"{1e3 * statistics.median(rows.cpu[name]):>8.1f}")
    total = statistics.median(rows.wall["all panes"])
    print(f"{'all panes, by part':<42} {'median ms':>10} {'CPU ms':>8}")
    accounted = 0.0
    for name in sorted(parts.wall, key=lambda k: -statistics.median(parts.wall[k])):
        w = statistics.median(parts.wall[name])
        if name == BACKGROUND:  # it overlaps the panes; the graph pane's own row is the wait for it
            print(f"  {name:<40} {1e3 * w:>10.1f} {'-':>8}")
            continue
        accounted += w
        print(f"  {name:<40} {1e3 * w:>10.1f} {1e3 * statistics.median(parts.cpu[name]):>8.1f}")
    print(f"  {'the rest (edit, undo history, status)':<40} {1e3 * max(total - accounted, 0.0):>10.1f}")
    med = 1e3 * total
    print(f"edit -> diagnostics and all panes: median {med:.1f} ms (target <= {TARGET_MS:.0f} ms: "
          f"{'met' if med <= TARGET_MS else 'MISSED'}) over {args.edits} edits")


if __name__ == "__main__":
    main()
