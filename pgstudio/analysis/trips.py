"""Pipelined loops that run zero times or once: the trip counts a pipeline's tests never exercise.

A ring of S stages shows its phase logic only once it wraps: the first S acquires pass on fresh
empty barriers, and the first wait on a parity that has flipped comes in round 1.  A pipelined
loop whose bound resolves to 1 (a problem of one tile, one k tile) never gets there, so a
design that "works" at that size has tested none of it; one whose bound resolves to 0 leaves
the other side waiting forever when that side's count differs (``schedule.iterations`` says
so, naming the zero trip count found here as the cause).

``short_loops`` finds, per task, the loops with such a trip count whose body synchronises on a
pipelined resource or group; the rules read it, nothing else decides it.

    >>> from pgstudio import examples
    >>> d = examples.merge_copy()
    >>> [str(s) for s in short_loops(d.replace(problem={**d.problem_dict, "num_tiles": 1}))]
    ['task load_a: domain_loop(0, num_tiles, 1) runs once (num_tiles=1)', \
'task load_b: domain_loop(0, num_tiles, 1) runs once (num_tiles=1)', \
'task store: domain_loop(0, num_tiles, 1) runs once (num_tiles=1)']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..errors import DesignError
from ..model.design import Design
from ..model.schedule import SYNC_OPS, Loop, Step
from .loops import trip_count

#: Trip counts a pipelined loop should not have: 0 (the loop never runs) and 1 (the ring never wraps).
SHORT_TRIPS = (0, 1)


@dataclass(frozen=True)
class ShortLoop:
    """Task ``task``'s loop ``loop`` runs ``trips`` times (0 or 1) with the bounds ``values``
    (symbol=value) and synchronises on ``targets`` (resources and groups) in its body."""

    task: str
    loop: str
    trips: int
    values: tuple[tuple[str, int], ...]
    targets: tuple[str, ...]

    @property
    def runs(self) -> str:
        return "once" if self.trips == 1 else f"{self.trips} times"

    def __str__(self) -> str:
        bounds = f" ({', '.join(f'{k}={v}' for k, v in self.values)})" if self.values else ""
        return f"task {self.task}: {self.loop} runs {self.runs}{bounds}"


def short_loops(design: Design) -> list[ShortLoop]:
    """Every loop of every task whose trip count is 0 or 1 and whose body holds a barrier step
    on a pipelined resource or a group (a bound that is no integer or symbol is skipped:
    ``schedule.loop`` reports it)."""
    problem = design.problem_dict
    out: list[ShortLoop] = []
    for t in design.tasks:
        for loop in _loops(t.schedule.nodes if t.schedule else ()):
            targets = tuple(dict.fromkeys(s.target for s in _steps(loop.body) if s.op in SYNC_OPS))
            if not targets:
                continue
            try:
                trips = trip_count(loop, {}, problem)
            except (DesignError, KeyError, TypeError, ValueError):
                continue
            if trips in SHORT_TRIPS:
                values = tuple((b, problem[b]) for b in dict.fromkeys((loop.start, loop.stop, loop.step))
                               if isinstance(b, str) and b in problem)
                out.append(ShortLoop(t.name, str(loop), trips, values, targets))
    return out


def _loops(nodes) -> Iterator[Loop]:
    for n in nodes:
        if isinstance(n, Loop):
            yield n
            yield from _loops(n.body)


def _steps(nodes) -> Iterator[Step]:
    for n in nodes:
        if isinstance(n, Loop):
            yield from _steps(n.body)
        else:
            yield n


__all__ = ["SHORT_TRIPS", "ShortLoop", "short_loops"]
