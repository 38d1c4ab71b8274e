"""``@schedule`` as TS runs it: calling the decorated function with resources records a tree.

Inside the function every argument is a proxy: synchronisation calls (``acquire``, ``commit``,
``wait``, ``release`` and their ``try_`` probes), work calls (the resource's ``@producer_work`` /
``@consumer_work`` methods, or TS's unnamed ``producer_work()`` / ``consumer_work()``) and a work
queue's bookkeeping are recorded; a consumer work call returns tokens that a later work call
takes as inputs.  ``with domain_loop(...)`` (one per schedule, not nested) and
``with work_tile_loop(wq)`` (the outermost, at most one) open loops; loop bounds written as
module-level names keep their names (``_bounds.py``).  TS's grammar errors are raised here, as
``ScheduleError``, with TS's rules; constructs pgstudio cannot model raise ``DesignError``.

The result, a ``Schedule``, is TS-shaped; ``_convert.py`` turns it into pgstudio's
``CapturedSchedule`` when the ``TaskManager`` builds the design.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..errors import DesignError, ScheduleError
from ._active import ACTIVE as _ACTIVE
from ._active import builder as _builder
from ._bounds import bound_names
from ._group import MemberRef, PipelineGroup
from ._guards import unsupported
from ._resource import MemoryResource, WorkQueue
from ._work import named_work

#: Barrier operations and their side.
SYNC = {"try_acquire": "producer", "acquire": "producer", "commit": "producer",
        "try_wait": "consumer", "wait": "consumer", "release": "consumer"}
#: TS's unnamed work calls: name -> (side, auxiliary).
UNNAMED = {"producer_work": ("producer", False), "consumer_work": ("consumer", False),
           "producer_aux_work": ("producer", True), "consumer_aux_work": ("consumer", True)}
#: A work queue's own calls (persistent-loop bookkeeping).
QUEUE_OPS = ("get_and_advance_work_tile", "fetch_work_tile", "init_work_tile")
#: Literal work inputs TS forwards as compile-time constants.
LITERALS = (bool, int, float, str)


@dataclass(eq=False)
class Token:
    """What a work call returns; a consumer output names the resource it was read from."""

    step: "TsStep"
    resource: str
    variable: Any = None  # None: TS's non-routable token (pipeline ops, work without returns=)


@dataclass(eq=False)
class TsStep:
    """One recorded call.  ``op`` is a barrier op, ``work``, or a work queue op."""

    target: Any  # a TS resource, a PipelineGroup or a WorkQueue
    op: str
    side: str
    via: str  # "bare" | "member" | "group"
    group: PipelineGroup | None = None
    label: str | None = None
    auxiliary: bool = False
    args: tuple[tuple[str, Any], ...] = ()  # input name -> Token or literal
    routed: bool = False  # some later work call took one of its tokens


@dataclass(eq=False)
class TsLoop:
    """``with domain_loop(start, end, step):``; bounds are ints or recovered names."""

    start: Any
    end: Any
    step: Any
    body: list = field(default_factory=list)
    num_bounds: int = 3  # how many bounds the script wrote: ``domain_loop(0, 1)`` keeps a one-iteration loop

    @property
    def kept(self) -> bool:
        """Written ``domain_loop(start, end)``: a loop of its own even when it runs once (``_convert``)."""
        return self.num_bounds == 2


@dataclass(eq=False)
class TsWorkTileLoop:
    """``with work_tile_loop(wq):``."""

    queue: WorkQueue
    body: list = field(default_factory=list)


@dataclass(eq=False)
class Schedule:
    """A captured TS schedule: its name, the tree, its arguments, the loop symbols it named and
    the globals of the module it was written in (where a script keeps ``problem``)."""

    name: str
    body: list
    resources: tuple
    symbols: dict[str, int]
    module: dict[str, Any]


@dataclass
class _Builder:
    name: str
    module: dict[str, Any]
    stack: list[list] = field(default_factory=lambda: [[]])
    domain_loops: int = 0
    in_domain_loop: bool = False
    work_tile_loops: int = 0
    symbols: dict[str, int] = field(default_factory=dict)

    def add(self, node: Any) -> None:
        self.stack[-1].append(node)


class _Proxy:
    """A schedule argument: calls record steps (module docstring)."""

    def __init__(self, target: Any, via: str, group: PipelineGroup | None) -> None:
        self._target, self._via, self._group = target, via, group

    def __getattr__(self, name: str) -> Callable[..., Any]:
        target = self._target
        if name in SYNC:
            return functools.partial(self._sync, name)
        if isinstance(target, PipelineGroup):
            for member in target.members:  # a member reached through its group inside a schedule: group.member
                if member.name == name:
                    return _Proxy(member, "member", target)
        if isinstance(target, WorkQueue) and name in QUEUE_OPS:
            return functools.partial(self._record, TsStep(target, name, "consumer", "bare"))
        if name in UNNAMED and not isinstance(target, WorkQueue):
            side, aux = UNNAMED[name]
            return functools.partial(self._work, None, side, aux, ())
        spec = None if isinstance(target, PipelineGroup) else named_work(type(target)).get(name)
        if spec is not None:
            return functools.partial(self._work, name, spec.side, spec.auxiliary, spec.returns)
        raise AttributeError(f"{self._describe()} has no schedule method {name!r}; available: "
                             f"{', '.join(self._available())}")

    def _describe(self) -> str:
        t = self._target
        return f"group {t.name!r}" if isinstance(t, PipelineGroup) else f"resource {t.name!r}"

    def _available(self) -> list[str]:
        t = self._target
        names = list(SYNC)
        if isinstance(t, PipelineGroup):
            names += [m.name for m in t.members]
        elif isinstance(t, WorkQueue):
            names += list(QUEUE_OPS)
        else:
            names += [*UNNAMED, *named_work(type(t))]
        return names

    def _record(self, step: TsStep, *args: Any, **kwargs: Any) -> Token:
        if args or kwargs:
            raise ScheduleError(f"{step.target.name}.{step.op}() takes no inputs", code="schedule.args")
        _builder(f"{step.target.name}.{step.op}()").add(step)
        return Token(step, step.target.name)

    def _sync(self, op: str, *args: Any, **kwargs: Any) -> Token:
        step = TsStep(self._target, op, SYNC[op], self._via, self._group)
        return self._record(step, *args, **kwargs)

    def _work(self, label: str | None, side: str, aux: bool, returns: tuple, *args: Any, **kwargs: Any):
        target = self._target
        if isinstance(target, PipelineGroup):
            raise DesignError(f"ts: work on group {target.name!r} itself cannot be modelled yet: pgstudio records work "
                              f"on a member", code="ts.unsupported", hint=f"call it on {target.name}.<member>")
        where = f"{target.name}.{label or ('consumer_work' if side == 'consumer' else 'producer_work')}()"
        builder = _builder(where)
        inputs = [(f"arg{i}", v) for i, v in enumerate(args)] + list(kwargs.items())
        for key, value in inputs:
            if isinstance(value, Token):
                if value.variable is None:
                    raise ScheduleError(f"{where} input {key!r} is not routable: the call that returned it declares "
                                        f"no returns=", code="schedule.args",
                                        hint="declare @consumer_work(returns=...) on the method that reads the value")
                value.step.routed = True
            elif not isinstance(value, LITERALS):
                raise ScheduleError(f"{where} input {key!r} must be a work-call output token, got "
                                    f"{type(value).__name__}", code="schedule.args",
                                    hint="pass the value a consumer work call returned (v = src.read(); dst.load(v))")
        step = TsStep(target, "work", side, self._via, self._group, label, aux, tuple(inputs))
        builder.add(step)
        if side == "consumer" and returns:
            tokens = tuple(Token(step, target.name, r) for r in returns)
            return tokens[0] if len(tokens) == 1 else tokens
        return Token(step, target.name)


def _proxy_for(value: Any, fn_name: str) -> _Proxy:
    if isinstance(value, MemberRef):
        return _Proxy(value.member, "member", value.group)
    if isinstance(value, PipelineGroup):
        return _Proxy(value, "group", value)
    if isinstance(value, MemoryResource):
        if value.pipeline_group is not None:
            raise ScheduleError(f"resource {value.name!r} belongs to PipelineGroup {value.pipeline_group.name!r} and "
                                f"must be passed as `group.member`, not the bare member", code="schedule.bare_member",
                                hint=f"pass {value.pipeline_group.name}.{value.name} to {fn_name}(...)")
        return _Proxy(value, "bare", None)
    raise ScheduleError(f"@schedule arguments must be resources (or group members such as `group.member`); "
                        f"{fn_name}() got {type(value).__name__}", code="schedule.binding",
                        hint="pass the resource objects the schedule works on")


def schedule(fn: Callable[..., None]) -> Callable[..., Schedule]:
    """Decorator: calling ``fn(resources...)`` records its calls into a ``Schedule`` (TS's @schedule)."""

    @functools.wraps(fn)
    def traced(*resources: Any) -> Schedule:
        proxies = [_proxy_for(r, fn.__name__) for r in resources]
        builder = _Builder(fn.__name__, fn.__globals__)
        token = _ACTIVE.set(builder)
        try:
            fn(*proxies)
        finally:
            _ACTIVE.reset(token)
        if len(builder.stack) != 1:
            raise ScheduleError(f"schedule {fn.__name__!r} left a loop open", code="schedule.loop")
        return Schedule(fn.__name__, builder.stack[0], tuple(resources), dict(builder.symbols), fn.__globals__)

    return traced


# -- loops --------------------------------------------------------------------------------------

class DomainLoopProxy:
    """What ``with domain_loop(...) as d`` gives: per-iteration blocks, not modelled yet."""

    def first_iter(self):
        raise unsupported("domain_loop(...).first_iter()")

    def last_iter(self):
        raise unsupported("domain_loop(...).last_iter()")

    def every(self, period: int, *, start: int = 0):
        raise unsupported(f"domain_loop(...).every({period}, start={start})")


@contextlib.contextmanager
def _loop(builder: _Builder, node: Any, flag: str | None, proxy: Any) -> Iterator[Any]:
    builder.stack.append(node.body)
    if flag:
        setattr(builder, flag, True)
    try:
        yield proxy
    finally:
        if flag:
            setattr(builder, flag, False)
        builder.stack.pop()
        builder.add(node)


def domain_loop(*bounds: Any, unroll: int | None = None):
    """The loop over the task's domain: ``domain_loop(end)``, ``(start, end)`` or ``(start, end, step)``."""
    frame = sys._getframe(1)
    builder = _builder("domain_loop()")
    if not 1 <= len(bounds) <= 3:
        raise ScheduleError(f"domain_loop() takes 1 to 3 bounds, got {len(bounds)}", code="schedule.loop",
                            hint="write domain_loop(end), domain_loop(start, end) or domain_loop(start, end, step)")
    if any(callable(b) for b in bounds):
        raise DesignError("ts: a dynamic domain (domain_loop(MyTask.get_domain)) cannot be modelled yet: pgstudio "
                          "loops run a count fixed by the problem shape", code="ts.unsupported",
                          hint="give the bound as an int or a name from `problem`")
    named = bound_names(frame, bounds)
    for value in bounds:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DesignError(f"ts: domain_loop() bound {value!r} cannot be modelled: pgstudio needs whole-number "
                              f"bounds", code="ts.unsupported", hint="give the bound as an int")
    for name, value in zip(named, bounds):
        if isinstance(name, str):
            builder.symbols[name] = value
    start, end, step = (0, named[0], 1) if len(named) == 1 else (*named, 1) if len(named) == 2 else named
    if bounds[-1] == 0 and len(bounds) == 3:
        raise ScheduleError("domain_loop() step must not be 0", code="schedule.loop")
    if builder.in_domain_loop:
        raise ScheduleError("domain_loop() cannot be nested inside another domain_loop()", code="schedule.loop",
                            hint="one domain loop per schedule; the persistent outer loop is work_tile_loop(wq)")
    if builder.domain_loops:
        raise ScheduleError(f"schedule {builder.name!r} has a second domain_loop(); TS allows one per schedule",
                            code="schedule.loop", hint="merge the two loops, or split the work into two tasks")
    builder.domain_loops += 1
    return _loop(builder, TsLoop(start, end, step, num_bounds=len(bounds)), "in_domain_loop", DomainLoopProxy())


class WorkTileLoopProxy:
    """What ``with work_tile_loop(wq) as wtl`` gives: skippable regions, not modelled yet."""

    def skippable(self):
        raise unsupported("work_tile_loop(...).skippable()")


def work_tile_loop(wq: Any, *, skip_if: Callable[..., Any] | None = None):
    """The persistent loop over work tiles that ``wq`` hands out (the outermost loop)."""
    builder = _builder("work_tile_loop()")
    queue = getattr(wq, "_target", wq)
    if not isinstance(queue, WorkQueue):
        raise ScheduleError(f"work_tile_loop() takes the schedule's WorkQueue argument, got {type(queue).__name__}",
                            code="schedule.loop", hint="pass the WorkQueue resource to the schedule and loop over it")
    if skip_if is not None:
        raise unsupported("work_tile_loop(wq, skip_if=...)")
    if builder.in_domain_loop or len(builder.stack) > 1:
        raise ScheduleError("work_tile_loop() must be the outermost loop of a schedule", code="schedule.loop",
                            hint="open the domain loop inside the work-tile loop")
    if builder.work_tile_loops:
        raise ScheduleError(f"schedule {builder.name!r} has a second work_tile_loop(); TS allows one per schedule",
                            code="schedule.loop")
    builder.work_tile_loops += 1
    return _loop(builder, TsWorkTileLoop(queue), None, WorkTileLoopProxy())


__all__ = ["DomainLoopProxy", "Schedule", "Token", "TsLoop", "TsStep", "TsWorkTileLoop", "WorkTileLoopProxy",
           "domain_loop", "schedule", "work_tile_loop"]
