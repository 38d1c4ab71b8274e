"""The schedules of an exported TS script: each task's pgstudio schedule in TS's shape, written over
parameters so tasks whose schedules differ only in their resources share one ``@schedule`` function.

TS's shape (``_convert.py`` maps it back): optional steps before, a work-tile loop (persistent
designs) or nothing, head steps, one ``domain_loop``, tail steps, steps after.  A value that a work
call takes is a token: the latest ``read`` of that resource in the schedule, or -- for a
global-memory tensor, which has no pipeline -- a ``read`` written right before the call (the
spelling ``_convert.py`` folds back into the call's input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.design import Design
from ..model.schedule import ALL_OPS, PRODUCER_WORK, Loop, Step
from ._script_text import integer, lit, member, name, refuse

#: The work queue's bookkeeping at the end of each work tile (TS's persistent idiom).
NEXT_TILE = ("try_wait", "wait", "get_and_advance_work_tile", "release")


def bound(value: Any) -> str:
    """A loop bound: a problem-shape symbol (a string literal key) or a whole number."""
    return f"problem[{lit(value, 'loop bound')}]" if isinstance(value, str) else integer(value, "loop bound")


@dataclass
class _Shape:
    """A task's schedule in TS's shape: steps before, the tile loop's head / domain loop / tail, after."""

    pre: list
    head: list
    loop: Loop
    tail: list
    post: list
    tiles: Any = None  # the work-tile count of a persistent schedule
    kept: bool = False  # the domain loop is the design's own one-iteration loop inside a tile loop

    def bounds(self) -> str:
        """The domain loop's bounds as the script writes them: a loop of the design that runs once
        inside a tile loop is ``domain_loop(0, 1)``, which import keeps as a loop (``_convert``);
        ``domain_loop(0, 1, 1)`` alone there only holds the tile's steps."""
        if self.kept:
            return "0, 1"
        loop = self.loop
        return ", ".join(bound(b).replace("{", "{{").replace("}", "}}") for b in (loop.start, loop.stop, loop.step))


def _split_one_loop(nodes: tuple, where: str) -> tuple[list, Loop | None, list]:
    loops = [i for i, n in enumerate(nodes) if isinstance(n, Loop)]
    if len(loops) > 1:
        raise refuse(f"{where} has {len(loops)} loops side by side; TS allows one domain_loop per schedule",
                      "merge the loops, or split the work into two tasks")
    if not loops:
        return list(nodes), None, []
    i = loops[0]
    return list(nodes[:i]), nodes[i], list(nodes[i + 1:])


def shape(schedule, where: str, persistent: bool) -> _Shape:
    pre, outer, post = _split_one_loop(schedule.nodes, where)
    if not persistent:
        loop = outer or Loop(0, 1, 1, tuple(pre + post))
        if outer is None:
            pre, post = [], []
        if any(isinstance(n, Loop) for n in loop.body):
            raise refuse(f"{where} nests loops", "keep one loop level, or make the outer loop the work-tile loop")
        return _Shape(pre, [], loop, [], post)
    if outer is None or (outer.start, outer.step) != (0, 1):
        raise refuse(f"{where} has no outer loop from 0 in steps of 1; a persistent TS design loops every task over "
                      f"its work tiles", "loop the task over the tiles: Loop(0, num_tiles, 1)")
    head, inner, tail = _split_one_loop(outer.body, where)
    kept = inner is not None and not head and not tail and _runs_once(inner)
    if inner is None:
        inner, head, tail = Loop(0, 1, 1, tuple(head + tail)), [], []
    if any(isinstance(n, Loop) for n in inner.body):
        raise refuse(f"{where} nests loops three deep; TS has a work-tile loop and one domain loop",
                      "flatten the innermost loop")
    return _Shape(pre, head, inner, tail, post, outer.stop, kept)


def _runs_once(loop: Loop) -> bool:
    ints = all(isinstance(b, int) and not isinstance(b, bool) for b in (loop.start, loop.stop, loop.step))
    return ints and (loop.start, loop.stop, loop.step) == (0, 1, 1)


@dataclass
class _Template:
    """One task's schedule written over parameters: what tasks with the same function share."""

    name: str
    params: list[tuple]  # ("bare", res) | ("member", res, group) | ("group", group) | ("queue",)
    lines: list[str]  # body lines over {0}, {1} ... parameter placeholders
    pyname: str = ""  # the Python function that writes it

    @property
    def key(self) -> tuple:
        return self.name, tuple(k[0] for k in self.params), tuple(self.lines)


@dataclass
class _Writer:
    design: Design
    params: list[tuple] = field(default_factory=list)
    latest: dict[str, str] = field(default_factory=dict)  # resource -> variable of its latest read

    def param(self, key: tuple) -> str:
        if key not in self.params:
            self.params.append(key)
        return "{" + str(self.params.index(key)) + "}"

    def target(self, step: Step) -> str:
        name(step.target, f"step {step.op!r}: target")
        if step.group is not None:
            name(step.group, f"step {step.op!r} on {step.target!r}: group")
        if step.via == "group":
            return self.param(("group", step.target))
        if step.via == "member":
            return self.param(("member", step.target, step.group))
        return self.param(("bare", step.target))

    def pipelined(self, name: str) -> bool:
        return self.design.has_resource(name) and self.design.resource(name).pipeline_config is not None

    def steps(self, steps: list, indent: str, where: str, uses: dict) -> list[str]:
        out = []
        for step in steps:
            member(step.op, ALL_OPS, "step op")
            head = self.target(step)
            if step.op == "read":
                var = f"{head}_value"
                self.latest[step.target] = var
                out.append(f"{indent}{var} = {head}.read()" if id(step) in uses else f"{indent}{head}.read()")
            elif step.op in PRODUCER_WORK:
                pos, kw = [], []
                for key, value in step.args:
                    name(key, f"step {step.op!r} on {step.target!r}: work input name", {"self", "stage_info"})
                    token = self.token(value, step, indent, out, where)
                    (pos.append(token) if key.startswith("arg") and key[3:].isdigit() else kw.append(f"{key}={token}"))
                out.append(f"{indent}{head}.{uses.get(('method', id(step)), step.op)}({', '.join(pos + kw)})")
            else:
                out.append(f"{indent}{head}.{step.op}()")
        return out

    def token(self, value: str, step: Step, indent: str, out: list, where: str) -> str:
        if not self.design.has_resource(value):
            raise refuse(f"{where}: {step} takes {value!r}, which is not a resource; TS passes values between work "
                          f"calls only as tokens", "pass a value read from a resource")
        if not self.pipelined(value):  # a global-memory read, spelled as TS spells it
            head = self.param(("bare", value))
            var = f"{head}_value"
            out.append(f"{indent}{var} = {head}.read()")
            return var
        if value not in self.latest:
            raise refuse(f"{where}: {step} takes {value!r} without reading it first; TS routes values as tokens of "
                          f"consumer work", f"read it first: v = {value}.read(), then pass v")
        return self.latest[value]


def _uses(steps: list) -> dict:
    """Which reads' values a later work step takes (the latest read of each resource)."""
    latest: dict[str, int] = {}
    used: dict = {}
    for step in steps:
        if step.op == "read":
            latest[step.target] = id(step)
        elif step.op in PRODUCER_WORK:
            for _, value in step.args:
                if value in latest:
                    used[latest[value]] = True
    return used


def template(task, shape: _Shape, design: Design, persistent: bool, methods: dict) -> _Template:
    """The schedule of ``task`` as TS lines over parameters.  ``persistent``: in a work-tile loop;
    otherwise the head and tail steps (one tile per CTA) sit before and after the domain loop."""
    where = f"task {task.name!r} (schedule {task.schedule.name!r})"
    name(task.schedule.name, f"task {task.name!r}: schedule name")
    w = _Writer(design)
    flat = [*shape.pre, *shape.head, *shape.loop.body, *shape.tail, *shape.post]
    uses = _uses(flat)
    for step in flat:
        if step.op in PRODUCER_WORK:
            uses[("method", id(step))] = methods[(step.target, step.op, tuple(k for k, _ in step.args))]
    lines = w.steps(shape.pre, "    ", where, uses)
    indent = "    "
    if persistent:
        lines.append("    with work_tile_loop({queue}):")
        indent = "        "
    lines += w.steps(shape.head, indent, where, uses)
    loop = shape.loop
    lines.append(f"{indent}with domain_loop({shape.bounds()}):")  # braces doubled: the lines are format templates
    lines += w.steps(list(loop.body), indent + "    ", where, uses) or [f"{indent}    pass"]
    lines += w.steps(shape.tail, indent, where, uses)
    if persistent:
        lines += [f"{indent}{{queue}}.{op}()" for op in NEXT_TILE]
    lines += w.steps(shape.post, "    ", where, uses)
    params = w.params + ([("queue",)] if persistent else [])
    return _Template(task.schedule.name, params, lines)


def work_methods(design: Design) -> dict:
    """(resource, op, input names) -> method name: one method per distinct signature (TS routes
    every declared input of a work method, so each call site needs its own signature)."""
    seen: dict = {}
    count: dict = {}
    for task in design.tasks:
        for step in task.schedule.steps() if task.schedule else ():
            if step.op in PRODUCER_WORK:
                key = (step.target, step.op, tuple(k for k, _ in step.args))
                for k in key[2]:
                    name(k, f"step {step.op!r} on {step.target!r}: work input name", {"self", "stage_info"})
                if len(set(key[2])) != len(key[2]):
                    raise refuse(f"step {step.op!r} on {step.target!r} names a work input twice ({', '.join(key[2])})",
                                 "give each input of one step its own name")
                if key not in seen:
                    n = count.get(key[:2], 0) + 1
                    count[key[:2]] = n
                    seen[key] = step.op if n == 1 else f"{step.op}_{n}"
    return seen


def reads(design: Design) -> set[str]:
    """Resources some schedule reads (or passes as a global-memory input): they get ``read``."""
    out: set[str] = set()
    for task in design.tasks:
        for step in task.schedule.steps() if task.schedule else ():
            if step.op == "read":
                out.add(step.target)
            if step.op in PRODUCER_WORK:
                out.update(v for _, v in step.args if design.has_resource(v))
    return out


def _param_names(tpl: _Template, task, shared: bool) -> list[str]:
    names: list[str] = []
    for key in tpl.params:
        if key[0] == "queue":
            base = "work_queue"
        elif not shared:
            base = key[1]
        elif key[0] == "group":
            base = "group"
        else:
            base = "dst" if key[1] in task.dst_resources else "src" if key[1] in task.src_resources else "res"
        name, n = base, 2
        while name in names:
            name, n = f"{base}{n}", n + 1
        names.append(name)
    return names


def schedule_functions(templates: list, taken: set, queue: str) -> list[str]:
    out: list[str] = []
    functions: dict[tuple, str] = {}
    used: set[str] = set(taken)
    count: dict[tuple, int] = {}
    for _, tpl in templates:
        count[tpl.key] = count.get(tpl.key, 0) + 1
    for task, tpl in templates:
        if tpl.key in functions:
            tpl.pyname = functions[tpl.key]
            continue
        params = _param_names(tpl, task, shared=count[tpl.key] > 1)
        pyname, n = tpl.name, 2
        while pyname in used:
            pyname, n = f"{tpl.name}_{n}", n + 1
        used.add(pyname)
        functions[tpl.key] = tpl.pyname = pyname
        body = [line.format(*params, queue=params[-1] if params else queue) for line in tpl.lines]
        head = f"def {pyname}({', '.join(params)}):"
        if pyname == tpl.name:
            out += ["", "", "@schedule", head, *body]
        else:  # a second schedule of one name: keep the name pgstudio knows it by
            out += ["", "", head, *body, "# the schedule's name in pgstudio:", f"{pyname}.__name__ = {lit(tpl.name)}",
                    f"{pyname} = schedule({pyname})"]
    return out


def call_arg(key: tuple, queue: str) -> str:
    """What a task passes for a schedule parameter: the resource, ``group.member``, the group or the queue."""
    if key[0] == "queue":
        return queue
    if key[0] == "member":
        return f"{key[2]}.{key[1]}"
    return key[1]


__all__ = ["NEXT_TILE", "bound", "call_arg", "lit", "reads", "refuse", "schedule_functions", "shape", "template",
           "work_methods"]
