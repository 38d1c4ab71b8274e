"""A captured schedule, as data: the steps one task performs, inside its domain loop.

``@schedule`` functions are run once, at task creation, against recording proxies
(``capture.py``); what they did is kept here as plain names so it can be validated, simulated,
checked, drawn, saved to JSON and turned into code without running user code again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

from ..errors import DesignError
from .kinds import Op, Side
from .limits import MAX_ARGS, MAX_LOOP_DEPTH, MAX_PROBLEM_VALUE, MAX_STEPS, check_count, whole_problem
from .names import check_word

__all__ = [
    "PRODUCER_SYNC",
    "CONSUMER_SYNC",
    "SYNC_OPS",
    "PRODUCER_WORK",
    "CONSUMER_WORK",
    "WORK_OPS",
    "ALL_OPS",
    "SIDE_OF",
    "TRY_OPS",
    "VIAS",
    "Step",
    "Loop",
    "Node",
    "CapturedSchedule",
]

#: Barrier operations, by side.
PRODUCER_SYNC = (Op.TRY_ACQUIRE, Op.ACQUIRE, Op.COMMIT)
CONSUMER_SYNC = (Op.TRY_WAIT, Op.WAIT, Op.RELEASE)
SYNC_OPS = PRODUCER_SYNC + CONSUMER_SYNC
#: Work operations: read is consumer work; load / store / mma are producer work.
PRODUCER_WORK = (Op.LOAD, Op.STORE, Op.MMA)
CONSUMER_WORK = (Op.READ,)
WORK_OPS = PRODUCER_WORK + CONSUMER_WORK
ALL_OPS = SYNC_OPS + WORK_OPS
#: Which side an op belongs to, and which ops are work (``Op.side``, ``Op.is_work``), by op text.
SIDE_OF = {op.value: op.side for op in Op}
_WORK = frozenset(WORK_OPS)
#: try_ op -> the blocking op it must directly precede.
TRY_OPS = {Op.TRY_ACQUIRE: Op.ACQUIRE, Op.TRY_WAIT: Op.WAIT}

VIAS = ("bare", "member", "group")


@dataclass(frozen=True)
class Step:
    """One recorded call: ``op`` on ``target`` (a resource, or a group when via == "group").

    ``via`` says how it was reached: a bare resource, ``group.member``, or the group object.
    ``group`` names the group for the latter two.  ``args`` lists work inputs as
    (parameter, resource-or-value) pairs, e.g. (("val_a", "smem_a"),).
    """

    op: str
    target: str
    via: str = "bare"
    group: str | None = None
    args: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # the text of a step reaches generated code (names, comments): fixed sets and words only
        if self.op not in SIDE_OF:
            raise DesignError(f"step op {self.op!r} is not one of {', '.join(SIDE_OF)}", code="schedule.step")
        if self.via not in VIAS:
            raise DesignError(f"step via {self.via!r} is not one of {', '.join(VIAS)}", code="schedule.step")
        check_word(self.target, f"step {self.op}: target", "schedule.step")
        if self.group is not None:
            check_word(self.group, f"step {self.op} on {self.target}: group", "schedule.step")
        args = tuple(tuple(a) for a in self.args) if not isinstance(self.args, (str, bytes)) else None
        if args is None or not all(len(a) == 2 for a in args):
            raise DesignError(f"step {self.op} on {self.target}: work inputs {self.args!r} are not (name, value) pairs",
                              code="schedule.step")
        check_count(len(args), f"step {self.op} on {self.target}: work inputs", MAX_ARGS, "schedule.size")
        for key, value in args:
            check_word(key, f"step {self.op} on {self.target}: work input name", "schedule.step")
            check_word(value, f"step {self.op} on {self.target}: work input {key}", "schedule.step", number=True)
        object.__setattr__(self, "args", args)

    @property
    def side(self) -> Side:
        return SIDE_OF[self.op]

    @property
    def is_work(self) -> bool:
        return self.op in _WORK

    def __str__(self) -> str:
        head = self.target if self.via != "member" else f"{self.group}.{self.target}"
        inner = ", ".join(f"{k}={v}" for k, v in self.args)
        return f"{head}.{self.op}({inner})"


@dataclass(frozen=True)
class Loop:
    """``with domain_loop(start, stop, step):`` and the nodes inside it.

    Bounds are ints or names of problem-shape symbols (``Design.problem``)."""

    start: Union[int, str]
    stop: Union[int, str]
    step: Union[int, str]
    body: tuple["Node", ...]

    def __post_init__(self) -> None:
        for label, bound, low in (("start", self.start, 0), ("stop", self.stop, 0), ("step", self.step, 1)):
            if isinstance(bound, str):
                check_word(bound, f"domain_loop {label}", "schedule.loop")
                continue
            problem = whole_problem(bound, low, MAX_PROBLEM_VALUE)
            if problem:
                raise DesignError(f"domain_loop {label} {problem} or the name of a problem symbol", code="schedule.loop",
                                  hint="use whole numbers (a positive step) or names from Design.problem")
        if not isinstance(self.body, tuple):
            object.__setattr__(self, "body", tuple(self.body))

    def __str__(self) -> str:
        return f"domain_loop({self.start}, {self.stop}, {self.step})"


Node = Union[Step, Loop]


@dataclass(frozen=True)
class CapturedSchedule:
    """The whole schedule of one task: top-level nodes (usually one domain loop)."""

    name: str
    nodes: tuple[Node, ...]

    def __post_init__(self) -> None:
        check_word(self.name, "schedule name", "schedule.name")
        if not isinstance(self.nodes, tuple):
            object.__setattr__(self, "nodes", tuple(self.nodes))
        count = 0
        for node, depth in _nodes(self.nodes):
            if isinstance(node, Loop) and depth >= MAX_LOOP_DEPTH:
                raise DesignError(f"schedule {self.name!r}: domain loops nest more than {MAX_LOOP_DEPTH} deep",
                                  code="schedule.size", hint="flatten the loops")
            if isinstance(node, Step):
                count += 1
            elif not isinstance(node, Loop):
                raise DesignError(f"schedule {self.name!r}: {node!r} is not a step or a domain loop", code="schedule.node")
        check_count(count, f"schedule {self.name!r}: steps", MAX_STEPS, "schedule.size")
        object.__setattr__(self, "_size", count)  # not a field: kept out of ==, repr and files

    @property
    def size(self) -> int:
        """Recorded steps, in and out of loops (counted once, at construction)."""
        return self._size  # type: ignore[attr-defined]

    def steps(self) -> Iterator[Step]:
        """Every step, depth first, in program order."""
        yield from _walk(self.nodes)

    @property
    def loop(self) -> Loop | None:
        """The outermost domain loop, if any."""
        return next((n for n in self.nodes if isinstance(n, Loop)), None)

    @property
    def body(self) -> tuple[Step, ...]:
        """The steps of one iteration of the domain loop (all steps when there is no loop)."""
        loop = self.loop
        return tuple(_walk(loop.body)) if loop else tuple(self.steps())

    def segments(self) -> Iterator[tuple[Step, ...]]:
        """The units a bracket must close within: each top-level domain loop's body (nested
        loops flattened into it), and each run of steps outside any loop."""
        run: list[Step] = []
        for node in self.nodes:
            if isinstance(node, Loop):
                if run:
                    yield tuple(run)
                    run = []
                yield tuple(_walk(node.body))
            else:
                run.append(node)
        if run:
            yield tuple(run)

    def text(self) -> str:
        """The schedule as Python-like text (shown in the studio and the CLI)."""
        lines = [f"@schedule  # {self.name}"]
        _text(self.nodes, 0, lines)
        return "\n".join(lines)


_END = object()


def _nodes(nodes) -> Iterator[tuple[Node, int]]:
    """Every node with the number of loops around it, without recursion (a file may nest deeply;
    nothing below ``MAX_LOOP_DEPTH + 1`` loops is visited)."""
    stack = [(iter(nodes), 0)]
    while stack:
        it, depth = stack[-1]
        node = next(it, _END)
        if node is _END:
            stack.pop()
            continue
        yield node, depth
        if isinstance(node, Loop) and depth < MAX_LOOP_DEPTH:
            stack.append((iter(node.body), depth + 1))


def _walk(nodes) -> Iterator[Step]:
    for node in nodes:
        if isinstance(node, Loop):
            yield from _walk(node.body)
        else:
            yield node


def _text(nodes, depth: int, lines: list[str]) -> None:
    pad = "    " * (depth + 1)
    for node in nodes:
        if isinstance(node, Loop):
            lines.append(f"{pad}with {node}:")
            _text(node.body, depth + 1, lines)
        else:
            lines.append(f"{pad}{node}")
