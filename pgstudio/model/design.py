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
from typing import Any, Iterable, Mapping

from ..errors import DesignError
from .group import PipelineGroup
from .limits import (MAX_DESIGN_STEPS, MAX_GROUPS, MAX_NAME_CHARS, MAX_PROBLEM_ENTRIES, MAX_RESOURCES, MAX_TASKS,
                     check_count)
from .lookup import index_of
from .names import check_name, check_word
from .problem import HINT as PROBLEM_HINT
from .problem import entry_problem
from .resource import Resource
from .serialize import design_from_json, design_to_json
from .targets import DEFAULT_TARGETS
from .task import Task

__all__ = ["Design"]


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
        object.__setattr__(self, "problem", tuple((k, v) for k, v in problem_items))
        # a bare string would become its characters: take it as one target (the rule checks names)
        object.__setattr__(self, "targets", (targets,) if isinstance(targets, str) else tuple(targets))
        for r in self.resources:
            if not isinstance(r, Resource):
                raise DesignError(f"design {name!r}: {r!r} is not a resource", code="design.resources",
                                  hint="pass GmemTensor / MemoryResource / TmemAccumulator objects")
        _check_sizes(self)

    # -- lookups (O(1): model.lookup indexes the design once) --------------------------------
    def resource(self, name: str) -> Resource:
        r = index_of(self).resources.get(name)
        if r is None:
            raise DesignError(f"design {self.name!r} has no resource {name!r}; resources: "
                              f"{', '.join(r.name for r in self.resources) or 'none'}", code="design.lookup")
        return r

    def group(self, name: str) -> PipelineGroup:
        g = index_of(self).groups.get(name)
        if g is None:
            raise DesignError(f"design {self.name!r} has no group {name!r}; groups: "
                              f"{', '.join(g.name for g in self.groups) or 'none'}", code="design.lookup")
        return g

    def task(self, name: str) -> Task:
        t = index_of(self).tasks.get(name)
        if t is None:
            raise DesignError(f"design {self.name!r} has no task {name!r}; tasks: "
                              f"{', '.join(t.name for t in self.tasks) or 'none'}", code="design.lookup")
        return t

    def has_resource(self, name: str) -> bool:
        return name in index_of(self).resources

    def group_of(self, resource: str) -> PipelineGroup | None:
        """The (first) group that lists ``resource`` as a member."""
        return index_of(self).group_of.get(resource)

    def deps(self, resource: str) -> tuple[str, ...]:
        """The resources ``resource`` is computed from."""
        return index_of(self).deps.get(resource, ())

    def dependents(self, resource: str) -> tuple[str, ...]:
        return tuple(index_of(self).dependents.get(resource, ()))

    def producers(self, resource: str) -> tuple[Task, ...]:
        return tuple(index_of(self).producers.get(resource, ()))

    def consumers(self, resource: str) -> tuple[Task, ...]:
        return tuple(index_of(self).consumers.get(resource, ()))

    @property
    def pipelined(self) -> tuple[Resource, ...]:
        return index_of(self).pipelined

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


def _check_sizes(d: Design) -> None:
    """The value domain of a whole design (``limits``): counts, problem values, graph names."""
    for what, items, high in (("resources", d.resources, MAX_RESOURCES), ("groups", d.groups, MAX_GROUPS),
                              ("tasks", d.tasks, MAX_TASKS), ("graph entries", d.graph, MAX_RESOURCES),
                              ("problem entries", d.problem, MAX_PROBLEM_ENTRIES)):
        check_count(len(items), f"design {d.name!r}: {what}", high)
    for g in d.groups:
        if not isinstance(g, PipelineGroup):
            raise DesignError(f"design {d.name!r}: {g!r} is not a PipelineGroup", code="design.groups")
    for t in d.tasks:
        if not isinstance(t, Task):
            raise DesignError(f"design {d.name!r}: {t!r} is not a Task", code="design.tasks")
    steps = sum(t.schedule.size for t in d.tasks if t.schedule is not None)
    check_count(steps, f"design {d.name!r}: schedule steps of all tasks", MAX_DESIGN_STEPS)
    for key, deps in d.graph:
        check_count(len(deps), f"design {d.name!r}: dependencies of {key[:MAX_NAME_CHARS]!r}", MAX_RESOURCES)
        for x in (key, *deps):
            check_word(x, f"design {d.name!r}: graph name", "graph.unknown")
    for key, value in d.problem:
        problem = entry_problem(key, value)
        if problem:
            raise DesignError(f"design {d.name!r}: problem entry {key!r}: {problem}", code="design.problem",
                              hint=PROBLEM_HINT)
