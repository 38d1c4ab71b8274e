"""Every design rule, as one small function each, registered in ONE ordered table (``RULES``).

``validate(design)`` runs the table and collects every diagnostic.  Construction-time rules of
groups, configs and schedules are the model's own functions (``check_group``, ``check_config``,
``check_schedule``), registered here too, so the API raises and the studio reports from the same
code.  What the code generators can build is the last entry (``codegen``, from
``analysis.buildable``), checked for each of the design's targets: a design with no errors compiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ..errors import DesignError
from ..model.config import check_config
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error, fix
from ..model.group_rules import check_group
from ..model.names import name_problem, suggest_name
from ..model.problem import count_problem
from ..model.protocol import PipelineGroupMode
from ..model.resource import COMPUTE_OPS, DTYPES, Memory
from ..model.schedule_rules import check_schedule
from ..model.targets import ARCHES
from ..model.task import MAX_WARPS, warp_overlaps
from .buildable.fixes import free_warps
from .buildable.rules import known_targets, per_target, rule_codegen
from .expr import compute_exprs
from .layout import barrier_layout, smem_layout
from .count_rules import _rederive, _side_tasks, rule_arrive_counts, rule_loops, rule_phase_leads, rule_release_order, rule_trip_counts

__all__ = [
    "Rule",
    "RuleSpec",
    "rule_names",
    "rule_targets",
    "rule_problem_counts",
    "rule_resources",
    "rule_groups",
    "rule_tasks",
    "rule_schedules",
    "rule_endpoints",
    "rule_collapsed_task",
    "rule_graph",
    "rule_compute",
    "rule_smem",
    "rule_aliasing",
    "RULES",
]

Rule = Callable[[Design], Iterator[Diagnostic]]


@dataclass(frozen=True)
class RuleSpec:
    code: str
    check: Rule
    doc: str
    #: True: the rule runs only on a design the earlier rules found no error in (it reads a
    #: consistent design, as the code generators do).
    needs_consistent: bool = False


def rule_names(d: Design) -> Iterator[Diagnostic]:
    seen: dict[str, str] = {}
    for kind, items in (("resource", d.resources), ("group", d.groups), ("task", d.tasks)):
        for item in items:
            problem = name_problem(item.name)
            if problem:
                yield error("name.identifier", f"{kind} {problem}", (item.name,),
                            f"rename it, e.g. to {suggest_name(item.name)!r}")
            if item.name in seen:
                yield error("design.duplicate_name",
                            f"{kind} {item.name!r} has the same name as a {seen[item.name]}; names must be unique in a design",
                            (item.name,), "rename one of them")
            seen.setdefault(item.name, kind)


def rule_targets(d: Design) -> Iterator[Diagnostic]:
    """A design is built for one or more known architectures, each named once."""
    if not d.targets:
        yield error("design.targets", f"design {d.name!r} names no target architecture, expected one or more of "
                    f"{', '.join(ARCHES)}", (d.name,), "set targets=('sm_90a',) or leave the default")
    for t in dict.fromkeys(d.targets):
        if t not in ARCHES:
            yield error("design.targets", f"design {d.name!r}: target {t!r} is unknown, expected one of {', '.join(ARCHES)}",
                        (d.name,), f"use {' or '.join(repr(a) for a in ARCHES)}")
        elif d.targets.count(t) > 1:
            yield error("design.targets", f"design {d.name!r} names target {t!r} {d.targets.count(t)} times",
                        (d.name,), f"name {t!r} once")


def rule_problem_counts(d: Design) -> Iterator[Diagnostic]:
    """The problem keys read as counts (``INTEGER_KEYS``) hold integers: ``CLUSTER_N = 2.0`` or
    ``True`` equals a count the generators build, and would reach a kernel as ``2.0``."""
    for key, value in d.problem:
        why = count_problem(key, value)
        if why:
            whole = isinstance(value, float) and value.is_integer()
            yield error("problem.integer", f"design {d.name!r}: problem {why}", (d.name,),
                        f"set {key}={int(value)}" if whole else f"give {key} as a whole number",
                        [fix(f"set {key} to {int(value)}", "update_problem", **{key: int(value)})] if whole else [])


def rule_resources(d: Design) -> Iterator[Diagnostic]:
    for r in d.resources:
        if r.pipeline_config is not None:
            yield from check_config(r.pipeline_config, r.name)
        if r.compute.op not in COMPUTE_OPS:
            yield error("resource.compute", f"resource {r.name!r}: compute op {r.compute.op!r} is unknown, expected one of "
                        f"{', '.join(COMPUTE_OPS)}", (r.name,), "pick an op from the compute catalog")
        if r.dtype not in DTYPES:
            yield error("resource.dtype", f"resource {r.name!r}: dtype {r.dtype!r} is unknown, expected one of {', '.join(DTYPES)}",
                        (r.name,), "pick a supported dtype")
        if r.memory is Memory.GMEM and r.pipeline_config is not None:
            yield error("resource.gmem_pipeline", f"gmem tensor {r.name!r} has a pipeline_config; global memory is not staged",
                        (r.name,), "pipeline the shared-memory tile that stages it instead")
        if r.aliases is not None and not d.has_resource(r.aliases):
            yield error("resource.aliases", f"resource {r.name!r} aliases {r.aliases!r}, which is not in the design",
                        (r.name,), "name an existing resource in aliases=, or drop it",
                        [fix(f"drop {r.name}'s aliases", "set_resource", r.name, aliases="")])


def rule_groups(d: Design) -> Iterator[Diagnostic]:
    owner: dict[str, str] = {}
    for g in d.groups:
        for m in g.members:
            if not d.has_resource(m.name):
                yield error("group.members", f"group {g.name!r}: member {m.name!r} is not a resource of the design",
                            (g.name, m.name), f"add {m.name!r} to the design or remove it from the group")
            elif d.resource(m.name) != m:
                yield error("group.members", f"group {g.name!r}: member {m.name!r} differs from the design's resource of that name",
                            (g.name, m.name), "rebuild the group from the design's resources")
            if m.name in owner:
                yield error("group.membership",
                            f"resource {m.name!r} is in groups {owner[m.name]!r} and {g.name!r}; a resource can be in one group",
                            (m.name, owner[m.name], g.name), f"remove {m.name!r} from one of them")
            owner.setdefault(m.name, g.name)
        yield from check_group(g.name, g.members, g.mode, g.pipeline_config)


def rule_tasks(d: Design) -> Iterator[Diagnostic]:
    for o in warp_overlaps(d.tasks):
        t = d.task(o.task)
        free = _free_warps(d, t)
        where = (f"move {t.name!r} to warps starting at {free}" if free is not None else
                 f"no {t.num_warps} free warps are left in the block: give {t.name!r} or another task fewer warps")
        moves = []  # either task may be the one that slipped: each to the first free warps, or
        for x in (t, d.task(o.owner)):  # the first free warpgroup (what an MMA task needs)
            for start in dict.fromkeys((_free_warps(d, x), free_warps(d, x.name, x.num_warps, one_warpgroup=False))):
                if start is not None and start != x.warp_idx and start + x.num_warps <= MAX_WARPS:
                    moves.append(fix(f"move task {x.name} to warp {start}", "set_task", x.name, warp_idx=start))
        yield error("task.warps", f"tasks {o.owner!r} and {t.name!r} both use warp {o.warp}; warp ranges must not overlap",
                    (o.owner, t.name), where, moves)
    for t in d.tasks:
        for r in (*t.src_resources, *t.dst_resources):
            if not d.has_resource(r):
                yield error("task.resource", f"task {t.name!r} names resource {r!r}, which is not in the design",
                            (t.name,), f"add {r!r} to the design or drop it from the task")
    if d.num_warps > MAX_WARPS:
        yield error("task.warps", f"tasks span {d.num_warps} warps, expected at most {MAX_WARPS} (1024 threads per block)",
                    tuple(t.name for t in d.tasks), "use fewer warps per task")


def _free_warps(d: Design, task) -> int | None:
    """The first warp where ``task``'s warps fit in the block beside every other task, or None."""
    start = 0  # the lowest warp past every range that leaves no room before it (ranges, not warps)
    for lo, hi in sorted((x.warp_idx, x.warp_idx + x.num_warps) for x in d.tasks if x.name != task.name):
        if lo - start >= task.num_warps:
            break
        start = max(start, hi)
    return start if start + task.num_warps <= MAX_WARPS else None


def rule_schedules(d: Design) -> Iterator[Diagnostic]:
    yield from _rederive(d, _schedule_findings(d))


def _schedule_findings(d: Design) -> Iterator[Diagnostic]:
    groups = {g.name: g for g in d.groups}

    def pipelined(name: str) -> bool | None:  # None: not a resource (reported by rule_tasks)
        return d.resource(name).pipeline_config is not None if d.has_resource(name) else None

    for t in d.tasks:
        if t.schedule is None:
            continue
        for step in t.schedule.steps():
            if step.group is not None and step.group not in groups:
                yield error("schedule.unknown_group", f"task {t.name!r}: {step} names group {step.group!r}, which is not in the design",
                            (t.name,), "add the group to the design, or use the resource bare")
            elif step.via == "member" and d.group_of(step.target) is not None and d.group_of(step.target).name != step.group:
                yield error("schedule.unknown_group", f"task {t.name!r}: {step} reaches {step.target!r} through group "
                            f"{step.group!r}, but it is a member of {d.group_of(step.target).name!r}",
                            (t.name, step.target), f"use {d.group_of(step.target).name}.{step.target}")
        yield from check_schedule(t.name, t.schedule, t.src_resources, t.dst_resources, groups, d.group_of, pipelined)


def rule_endpoints(d: Design) -> Iterator[Diagnostic]:
    """A pipeline connects one producer task to one consumer task."""
    for r in d.pipelined:
        for side, tasks in (("producer", d.producers(r.name)), ("consumer", d.consumers(r.name))):
            if len(tasks) != 1:
                names = ", ".join(repr(t.name) for t in tasks) or "no task"
                yield error("pipeline.endpoints",
                            f"pipelined resource {r.name!r} has {len(tasks)} {side} task(s) ({names}), expected exactly 1",
                            (r.name, *[t.name for t in tasks]),
                            f"list {r.name!r} in the {'dst' if side == 'producer' else 'src'}_resources of exactly one task")


def rule_collapsed_task(d: Design) -> Iterator[Diagnostic]:
    """The collapsed side of a group is driven by one task (that is why it can share a barrier)."""
    for g in d.groups:
        side = g.mode.collapsed_side
        tasks = _side_tasks(d, g, side)
        if len(tasks) > 1:
            verb = "produce" if side == "producer" else "consume"
            into = tasks[0]
            others = tuple(t for t in tasks if t != into)
            members = " and ".join(g.member_names)
            fixes = [fix(f"let task {into} {verb} {members} (task{'s' if len(others) > 1 else ''} "
                         f"{', '.join(others)} merged into it)", "merge_tasks", into, others)]
            for mode in PipelineGroupMode:
                one = _side_tasks(d, g, mode.collapsed_side)
                if mode is not g.mode and len(one) <= 1:
                    fixes.append(fix(f"make group {g.name} a {mode} (one task, {', '.join(one) or 'none'}, drives its "
                                     f"{mode.collapsed_side} side)", "set_group", g.name, mode=mode.value))
            yield error("group.collapsed_task",
                        f"group {g.name!r} ({g.mode}) shares its {side} barrier, but its members' {side}s are tasks "
                        f"{', '.join(map(repr, sorted(tasks)))}; one task must drive the collapsed side",
                        (g.name, *sorted(tasks)),
                        f"let one task {verb} every member, or use a mode whose shared side one task drives", fixes)


def rule_graph(d: Design) -> Iterator[Diagnostic]:
    graph = dict(d.graph)
    used = {r for t in d.tasks for r in (*t.src_resources, *t.dst_resources)}
    in_graph = set(graph) | {x for deps in graph.values() for x in deps}
    for name in graph:
        if not d.has_resource(name):
            yield error("graph.unknown", f"the dependency graph names {name!r}, which is not a resource of the design",
                        (name,), f"add {name!r} or remove it from the graph")
    for deps in graph.values():
        for x in deps:
            if not d.has_resource(x) and x not in graph:
                yield error("graph.unknown", f"the dependency graph names {x!r}, which is not a resource of the design",
                            (x,), f"add {x!r} or remove it from the graph")
    for r in d.resources:
        if r.name in in_graph and r.name not in used:
            yield error("graph.unused", f"resource {r.name!r} is in the dependency graph but no task uses it",
                        (r.name,), f"add {r.name!r} to a task's src_resources or dst_resources, or remove it")
        if r.name in used and r.name not in in_graph:
            yield error("graph.missing", f"resource {r.name!r} is used by a task but missing from the dependency graph",
                        (r.name,), f"add {r.name!r} with its dependencies to the graph")
    realised = {(dep, res) for t in d.tasks for dep in t.src_resources for res in t.dst_resources}
    for res, deps in graph.items():
        for dep in deps:
            if (dep, res) not in realised:
                yield error("graph.edge_unrealised",
                            f"edge {dep!r} -> {res!r}: no task consumes {dep!r} and produces {res!r}",
                            (dep, res), f"give one task {dep!r} in src_resources and {res!r} in dst_resources, or drop the edge",
                            [fix(f"drop the edge {dep} -> {res}", "remove_edge", dep, res)])


def rule_compute(d: Design) -> Iterator[Diagnostic]:
    """Every computed resource's expression parses against the grammar, over its dependencies."""
    yield from compute_exprs(d)[1]


def rule_smem(d: Design) -> Iterator[Diagnostic]:
    """What the kernel requests on each target (data, accumulator staging, barriers) fits a block."""
    try:
        barriers = barrier_layout(d)
    except DesignError as exc:  # more barrier slots than any block holds: refused by value (layout.capacity)
        yield error(exc.code, exc.message, (), exc.hint)
        return

    def check(arch: str) -> Iterator[Diagnostic]:
        smem = smem_layout(d, arch=arch, barriers=barriers)
        if not smem.fits:
            yield smem.problem(d)
    yield from per_target(d, check) if known_targets(d) else check(ARCHES[0])


def rule_aliasing(d: Design) -> Iterator[Diagnostic]:
    """Two resources viewing one buffer need the ordering a Fork group gives them."""
    for r in d.resources:
        if r.aliases and d.has_resource(r.aliases):
            g = d.group_of(r.name)
            if g is None or g.mode.value != "Fork" or r.aliases not in g.member_names:
                yield error("resource.alias_unordered",
                            f"resource {r.name!r} aliases {r.aliases!r} but they are not members of one Fork group; "
                            f"nothing orders their writes and reads of the shared buffer",
                            (r.name, r.aliases), f"put {r.name!r} and {r.aliases!r} in one Fork group, or drop aliases=")


RULES: tuple[RuleSpec, ...] = (
    RuleSpec("name", rule_names, "names are identifiers and unique"),
    RuleSpec("design.targets", rule_targets, "target architectures are known, each named once"),
    RuleSpec("problem.integer", rule_problem_counts, "problem keys read as counts hold integers"),
    RuleSpec("resource", rule_resources, "configs, compute ops, dtypes, aliases"),
    RuleSpec("group", rule_groups, "PipelineGroup construction rules (semantics 3)"),
    RuleSpec("task", rule_tasks, "warp ranges and named resources"),
    RuleSpec("schedule", rule_schedules, "capture-time schedule rules (semantics 6)"),
    RuleSpec("pipeline", rule_endpoints, "one producer and one consumer task per pipeline"),
    RuleSpec("group.collapsed_task", rule_collapsed_task, "one task drives a group's collapsed side"),
    RuleSpec("config.arrive_count", rule_arrive_counts, "declared counts match arriving threads (semantics 2)"),
    RuleSpec("graph", rule_graph, "dependency graph matches the tasks (semantics 6)"),
    RuleSpec("compute", rule_compute, "compute expressions parse over their dependencies"),
    RuleSpec("schedule.release_before_use", rule_release_order, "upstream release after downstream DMA issue"),
    RuleSpec("schedule.iterations", rule_loops, "pipeline endpoints run equal iteration counts"),
    RuleSpec("schedule.trip_count", rule_trip_counts, "pipelined loops run more than once (warning)"),
    RuleSpec("schedule.phase_lead", rule_phase_leads, "no side runs two phases ahead of its waiters"),
    RuleSpec("resource.alias_unordered", rule_aliasing, "aliased buffers are ordered by a Fork"),
    RuleSpec("codegen", rule_codegen, "the code generators build the design for every target", needs_consistent=True),
    RuleSpec("smem", rule_smem, "shared memory fits the block on every target"),
)
