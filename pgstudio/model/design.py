"""Design: everything one kernel is made of, as one immutable value.

Resources, the resource dependency graph (resource -> the resources it is computed from),
groups, tasks, the problem shape and the target architectures it is built for (``targets``,
default ``DEFAULT_TARGETS``: the code generators' rules are checked for each).  A Design may be wrong (a bad group, a schedule that breaks
a rule): it is a value the studio edits, and ``validate()`` says everything that is wrong at
once.  Edits return new Designs (``replace``, ``with_*`` / ``without_*``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping

from ..errors import DesignError
from .group import PipelineGroup
from .names import check_name
from .resource import Resource
from .serialize import design_from_json, design_to_json
from .targets import DEFAULT_TARGETS
from .task import Task


def _nm(x: Any) -> str:
    return x if isinstance(x, str) else x.name


@dataclass(frozen=True)
class Design:
    name: str
    resources: tuple[Resource, ...] = ()
    graph: tuple[tuple[str, tuple[str, ...]], ...] = ()
    groups: tuple[PipelineGroup, ...] = ()
    tasks: tuple[Task, ...] = ()
    problem: tuple[tuple[str, Any], ...] = ()
    targets: tuple[str, ...] = DEFAULT_TARGETS

    def __init__(self, name: str, resources: Iterable[Resource] = (),
                 graph: Mapping[Any, Iterable[Any]] | Iterable[tuple[Any, Iterable[Any]]] = (),
                 groups: Iterable[PipelineGroup] = (), tasks: Iterable[Task] = (),
                 problem: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
                 targets: Iterable[str] = DEFAULT_TARGETS) -> None:
        check_name(name, "design")
        items = graph.items() if isinstance(graph, Mapping) else graph
        problem_items = problem.items() if isinstance(problem, Mapping) else problem
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "resources", tuple(resources))
        object.__setattr__(self, "graph", tuple((_nm(k), tuple(_nm(d) for d in deps)) for k, deps in items))
        object.__setattr__(self, "groups", tuple(groups))
        object.__setattr__(self, "tasks", tuple(tasks))
        object.__setattr__(self, "problem", tuple((str(k), v) for k, v in problem_items))
        # a bare string would become its characters: take it as one target (the rule checks names)
        object.__setattr__(self, "targets", (targets,) if isinstance(targets, str) else tuple(targets))
        for r in self.resources:
            if not isinstance(r, Resource):
                raise DesignError(f"design {name!r}: {r!r} is not a resource", code="design.resources",
                                  hint="pass GmemTensor / MemoryResource / TmemAccumulator objects")

    # -- lookups (through an index built once per Design value: rules look names up per step) --
    @cached_property
    def _index(self) -> "_Index":
        return _Index.of(self)

    def resource(self, name: str) -> Resource:
        r = self._index.resources.get(name)
        if r is not None:
            return r
        raise DesignError(f"design {self.name!r} has no resource {name!r}; resources: "
                          f"{', '.join(r.name for r in self.resources) or 'none'}", code="design.lookup")

    def group(self, name: str) -> PipelineGroup:
        g = self._index.groups.get(name)
        if g is not None:
            return g
        raise DesignError(f"design {self.name!r} has no group {name!r}; groups: "
                          f"{', '.join(g.name for g in self.groups) or 'none'}", code="design.lookup")

    def task(self, name: str) -> Task:
        t = self._index.tasks.get(name)
        if t is not None:
            return t
        raise DesignError(f"design {self.name!r} has no task {name!r}; tasks: "
                          f"{', '.join(t.name for t in self.tasks) or 'none'}", code="design.lookup")

    def has_resource(self, name: str) -> bool:
        return name in self._index.resources

    def group_of(self, resource: str) -> PipelineGroup | None:
        """The (first) group that lists ``resource`` as a member."""
        return self._index.group_of.get(resource)

    def deps(self, resource: str) -> tuple[str, ...]:
        """The resources ``resource`` is computed from."""
        return self._index.deps.get(resource, ())

    def dependents(self, resource: str) -> tuple[str, ...]:
        return tuple(k for k, deps in self.graph if resource in deps)

    def producers(self, resource: str) -> tuple[Task, ...]:
        return self._index.producers.get(resource, ())

    def consumers(self, resource: str) -> tuple[Task, ...]:
        return self._index.consumers.get(resource, ())

    @property
    def pipelined(self) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.pipeline_config is not None)

    @property
    def problem_dict(self) -> dict[str, Any]:
        return dict(self.problem)

    @property
    def num_warps(self) -> int:
        """Warps of the block: up to the end of the highest task's warp range."""
        return max((t.warp_idx + t.num_warps for t in self.tasks), default=1)

    # -- analysis (delegates; the model itself only holds data) ------------------------------
    def validate(self, *, checker: bool = False, iterations: int = 4) -> Any:
        """Every rule at once -> ``Report``.  ``checker=True`` adds the exhaustive checker's verdict."""
        from ..analysis.validate import validate
        return validate(self, checker=checker, iterations=iterations)

    def to_json(self, indent: int | None = 2) -> str:
        return design_to_json(self, indent=indent)

    def to_ts(self) -> str:
        """This design as a readable CUTLASS Task Scheduling script that TS accepts (``pgstudio.ts``)."""
        from ..ts._export import to_ts
        return to_ts(self)

    @classmethod
    def from_json(cls, text: str | bytes) -> "Design":
        return design_from_json(text, cls)

    # -- edits return new designs -----------------------------------------------------------
    def replace(self, **changes: Any) -> "Design":
        return dataclasses.replace(self, **changes)

    def with_resource(self, resource: Resource, deps: Iterable[Any] = ()) -> "Design":
        """Add or replace (by name) a resource and set its dependencies."""
        resources = [r for r in self.resources if r.name != resource.name]
        old = [r.name for r in self.resources]
        if resource.name in old:
            resources.insert(old.index(resource.name), resource)
            groups = tuple(PipelineGroup.unchecked(g.name, [resource if m.name == resource.name else m for m in g.members],
                                                   g.mode, g.pipeline_config) for g in self.groups)
        else:
            resources.append(resource)
            groups = self.groups
        graph = [(k, v) for k, v in self.graph if k != resource.name]
        deps = tuple(_nm(d) for d in deps)
        if deps or resource.name in dict(self.graph):
            graph.append((resource.name, deps or self.deps(resource.name)))
        return self.replace(resources=resources, graph=graph, groups=groups)

    def without_resource(self, name: str) -> "Design":
        """Remove a resource, its edges, and its uses in groups and tasks' resource lists."""
        resources = [r for r in self.resources if r.name != name]
        graph = [(k, tuple(d for d in v if d != name)) for k, v in self.graph if k != name]
        groups = [PipelineGroup.unchecked(g.name, [m for m in g.members if m.name != name], g.mode, g.pipeline_config)
                  for g in self.groups]
        tasks = [Task.unchecked(t.name, t.warp_idx, t.num_warps, [s for s in t.src_resources if s != name],
                                [d for d in t.dst_resources if d != name], t.schedule) for t in self.tasks]
        return self.replace(resources=resources, graph=graph, groups=groups, tasks=tasks)

    def with_group(self, group: PipelineGroup) -> "Design":
        groups = [g for g in self.groups if g.name != group.name] + [group]
        return self.replace(groups=groups)

    def without_group(self, name: str) -> "Design":
        return self.replace(groups=[g for g in self.groups if g.name != name])

    def with_task(self, task: Task) -> "Design":
        tasks = list(self.tasks)
        names = [t.name for t in tasks]
        if task.name in names:
            tasks[names.index(task.name)] = task
        else:
            tasks.append(task)
        return self.replace(tasks=tasks)

    def without_task(self, name: str) -> "Design":
        return self.replace(tasks=[t for t in self.tasks if t.name != name])

    def with_targets(self, *targets: str) -> "Design":
        """The design built for ``targets`` (e.g. ``"sm_90a", "sm_100a"``)."""
        return self.replace(targets=targets)

    def summary(self) -> str:
        if not (self.resources or self.groups or self.tasks):
            return f"design {self.name!r}: empty (no resources, groups or tasks yet)"

        def count(n: int, what: str) -> str:
            return f"{n} {what}{'s' if n != 1 else ''}"

        groups = ", ".join(f"{g.name}:{g.mode.value}" for g in self.groups) or "no groups"
        warps = count(self.num_warps, "warp") if self.tasks else "no warps"
        return (f"design {self.name!r}: {count(len(self.resources), 'resource')} ({len(self.pipelined)} pipelined), "
                f"{groups}, {count(len(self.tasks), 'task')}, {warps}")

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True)
class _Index:
    """Name -> object maps of one Design, with the same answers as scanning its tuples in order
    (the first resource, group or task of a name; the graph's last entry for a resource, as
    ``dict(graph)`` gives it), so a lookup costs O(1) instead of O(size of the design)."""

    resources: dict[str, Resource]
    groups: dict[str, PipelineGroup]
    tasks: dict[str, Task]
    group_of: dict[str, PipelineGroup]
    deps: dict[str, tuple[str, ...]]
    producers: dict[str, tuple[Task, ...]]
    consumers: dict[str, tuple[Task, ...]]

    @classmethod
    def of(cls, d: Design) -> "_Index":
        def first(items) -> dict:
            out: dict = {}
            for x in items:
                out.setdefault(x.name, x)
            return out

        group_of: dict[str, PipelineGroup] = {}
        for g in d.groups:
            for m in g.member_names:
                group_of.setdefault(m, g)
        producers: dict[str, list[Task]] = {}
        consumers: dict[str, list[Task]] = {}
        for t in d.tasks:
            for name in dict.fromkeys(t.dst_resources):
                producers.setdefault(name, []).append(t)
            for name in dict.fromkeys(t.src_resources):
                consumers.setdefault(name, []).append(t)
        return cls(first(d.resources), first(d.groups), first(d.tasks), group_of, dict(d.graph),
                   {k: tuple(v) for k, v in producers.items()}, {k: tuple(v) for k, v in consumers.items()})
