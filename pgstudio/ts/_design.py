"""The design a TS script describes: its resources, groups, tasks and dependency graph, as one
pgstudio ``Design``.

Resources are the ones the tasks and the graph name, in the order the script created them (the
order pgstudio's layouts follow), without TS's work queue (pgstudio models the work-tile loop
itself).  Groups are the ones that claimed those resources, in creation order.  Tasks keep TS's
order; a task without a name takes its schedule's.  Besides these objects a script may set three
module-level names that TS ignores and pgstudio reads (an exported script sets them):

- ``design_name``: the design's name (else the script's file name, else ``ts_design``);
- ``problem``: a dict of the problem shape, e.g. ``{"M": 4096, "num_k_tiles": 64}``; loop bounds
  written as its entries or as module-level names keep those names;
- ``num_work_tiles``: the work tiles of a persistent loop, a problem name or an int;
- ``warp_groups``: the cooperative groups pgstudio counts in warps (``_agents.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..errors import DesignError
from ..model.design import Design
from ..model.names import check_name
from ..model.task import Task as ModelTask
from ._agents import read_agents
from ._convert import DEFAULT_WORK_TILES, captured, needs_one_tile
from ._group import PipelineGroup
from ._resource import MemoryResource, WorkQueue, order, to_model
from ._task import Task

#: The problem-shape values a design can hold.
_VALUES = (int, float, str)


def _problem(module: dict[str, Any], symbols: dict[str, int]) -> dict[str, Any]:
    table = module.get("problem")
    out: dict[str, Any] = {}
    if isinstance(table, dict):
        for key, value in table.items():
            simple = isinstance(value, _VALUES) and not isinstance(value, bool)
            if isinstance(key, str) and key.isidentifier() and simple:
                out[key] = value
    for key, value in symbols.items():
        out.setdefault(key, value)
    return out


def design_name(module: dict[str, Any]) -> str:
    """``design_name``, else the script's file name as an identifier, else ``ts_design``."""
    given = module.get("design_name")
    if isinstance(given, str):
        return given
    path = module.get("__file__")
    if not isinstance(path, str):
        return "ts_design"
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in Path(path).stem).strip("_") or "ts_design"
    return stem if not stem[0].isdigit() else f"ts_{stem}"


def _work_tiles(module: dict[str, Any], problem: dict[str, Any]) -> Any:
    given = module.get("num_work_tiles")
    if isinstance(given, str) and given in problem:
        return given
    if isinstance(given, int) and not isinstance(given, bool) and given >= 1:
        return given
    return "num_tiles" if "num_tiles" in problem else DEFAULT_WORK_TILES


def _resources(tasks: Sequence[Any], graph: dict) -> list[MemoryResource]:
    seen: dict[int, MemoryResource] = {}
    pool = [r for t in tasks for r in (*t.src_resources, *t.dst_resources)]
    for key, deps in graph.items():
        pool.append(key)
        pool.extend(deps if isinstance(deps, (list, tuple)) else [deps])
    for r in pool:
        if not isinstance(r, MemoryResource):
            raise DesignError(f"ts: {r!r} is not a resource; tasks and the dependency graph take MemoryResource "
                              f"objects", code="design.resources", hint="pass the resource objects themselves")
        if isinstance(r, WorkQueue):
            r.check_modelled()
            continue
        seen.setdefault(id(r), r)
    return sorted(seen.values(), key=order)


def build_design(tasks: Sequence[Any], graph: dict) -> Design:
    """The ``Design`` of TS tasks and their dependency graph (module docstring)."""
    if not isinstance(graph, dict):
        raise DesignError(f"ts: resource_dependency_graph is {type(graph).__name__}, expected a dict of resource -> "
                          f"list of resources", code="design.graph", hint="pass {smem_a: [gmem_a], ...}")
    for t in tasks:
        if not isinstance(t, Task):
            raise DesignError(f"ts: {t!r} is not a Task", code="design.tasks", hint="pass Task(...) objects")
    module = tasks[0].schedule.module if tasks else {}
    symbols: dict[str, int] = {}
    for t in tasks:
        for key, value in t.schedule.symbols.items():
            symbols.setdefault(key, value)
    problem = _problem(module, symbols)
    work_tiles = _work_tiles(module, problem)
    resources = _resources(tasks, graph)
    names = [r.name for r in resources]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise DesignError(f"ts: resources {', '.join(map(repr, dupes))} share a name; pgstudio names each resource "
                          f"once", code="design.duplicate_name", hint="give every resource its own name=")
    groups: list[PipelineGroup] = sorted({id(r.pipeline_group): r.pipeline_group for r in resources
                                          if r.pipeline_group is not None}.values(), key=order)
    aliases = {k: v for g in groups for k, v in g.member_aliases().items()}
    produced = {r.name for t in tasks for r in t.dst_resources if isinstance(r, MemoryResource)}
    model = {r.name: to_model(r, produced=r.name in produced, aliases=aliases.get(r.name)) for r in resources}
    consumer_warps: dict[str, int] = {}
    for t in tasks:
        for r in t.src_resources:
            if isinstance(r, MemoryResource):
                consumer_warps[r.name] = consumer_warps.get(r.name, 0) + t.num_warps
    model = read_agents(model, module, consumer_warps)
    model_groups = [g.to_model(model, module) for g in groups]
    one_tile = any(needs_one_tile(t.schedule) for t in tasks)
    model_tasks = []
    taken: set[str] = set()
    for t in tasks:
        task_name = t.name or t.schedule.name
        base, n = task_name, 2
        while task_name in taken:
            task_name, n = f"{base}_{n}", n + 1
        taken.add(task_name)
        model_tasks.append(ModelTask(task_name, t.warp_idx, t.num_warps,
                                     [r.name for r in t.src_resources if not isinstance(r, WorkQueue)],
                                     [r.name for r in t.dst_resources if not isinstance(r, WorkQueue)],
                                     captured(t.schedule, work_tiles, problem, one_tile)))
    edges = [(k.name, [d.name for d in (v if isinstance(v, (list, tuple)) else [v]) if not isinstance(d, WorkQueue)])
             for k, v in graph.items() if not isinstance(k, WorkQueue)]
    name = design_name(module)
    check_name(name, "design")
    return Design(name, [model[n] for n in names], edges, model_groups, model_tasks, problem)


__all__ = ["build_design"]
