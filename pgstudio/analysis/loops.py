"""Loop counts for unrolling: how the checker and the simulator shrink a design's loops.

The canonical designs loop over thousands of tiles, far too many to explore, so the unrolled
program (``program.py``) runs every loop a few times.  What must survive the shrinking is every
*relation* between loop bounds that decides whether producers and consumers meet: if the store
task loops one tile more than its loaders, the shrunk store task must still loop one tile more.

Every loop bound -- a start or a stop, a problem symbol or a literal -- is a *point*, in the
*tier* of the shallowest loop it bounds (outermost loops, capped at ``iterations``; inner
loops, capped at ``inner``).  One monotone map per tier shrinks the points:

* points up to the cap keep their value (``domain_loop(1, N)`` still starts at 1);
* the smallest larger point becomes the cap (one more than the largest kept point when that
  point is the cap itself): a big bound shrinks to the cap;
* every further point keeps its distance to the point below it, up to twice the deepest ring
  of the design (2 S: one full round of every stage in both phases).  So bounds that differ
  stay different, in the same order and by the same amount, and bounds that are equal (the
  same symbol, equal symbols, a literal equal to a symbol) stay equal.
* a distance beyond 2 S is shrunk to 2 S (keeping its residue modulo the loop steps).  Such
  counts no longer keep the design's relation between those two bounds; the map records a
  *caveat* naming them, and the checker answers INCOMPLETE rather than SAFE or UNSAFE.

When a loop steps by more than one, every shrunk point keeps its residue modulo the steps, so
``domain_loop(0, N, 2)`` with an even N still runs whole pairs.  ``loops={"num_tiles": 3}``
sets a symbol (``"#5"``: the literal 5) outright; if that makes two different bounds equal or
swaps their order, that is a caveat too.  ``iterations=None`` (or ``inner=None``) keeps the
real values of that tier: exact by construction.

    >>> from pgstudio import examples
    >>> shrink(examples.merge_copy(), iterations=8).counts
    {'num_tiles': 8}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import DesignError
from ..model.design import Design
from ..model.schedule import Loop

OUTER, INNER = "outermost", "inner"


@dataclass(frozen=True)
class LoopCounts:
    """The value every loop bound takes when unrolling (``counts``, keyed by symbol or
    ``"#<literal>"``), the real values they stand for, and the caveats: why these counts do not
    keep every relation between the design's bounds (empty when they do)."""

    counts: dict[str, int]
    real: dict[str, int] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return not self.caveats


def key(bound) -> str:
    """The key of a bound in ``LoopCounts.counts``: the symbol, or ``"#<n>"`` for a literal."""
    return bound if isinstance(bound, str) else f"#{bound}"


def value(bound, problem: Mapping, where: str) -> int:
    """A bound's real value: a literal, or the integer a problem symbol names."""
    v = problem.get(bound, None) if isinstance(bound, str) else bound
    if isinstance(v, bool) or not isinstance(v, int):
        raise DesignError(f"{where}: loop bound {bound!r} is not an integer or an integer problem symbol "
                          f"(problem: {', '.join(f'{k}={v!r}' for k, v in problem.items()) or 'none'})",
                          code="schedule.loop", hint="use integers or names from Design.problem")
    return v


def _loops(nodes, depth: int, out: list) -> None:
    for n in nodes:
        if isinstance(n, Loop):
            out.append((n, depth))
            _loops(n.body, depth + 1, out)


def _cap(name: str, v: int | None) -> int | None:
    if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
        raise DesignError(f"{name}={v!r}: expected a positive integer (or None to keep the real loop counts)",
                          code="check.iterations", hint=f"pass {name}=1 or more")
    return v


def _above(lo: int, residue: int, modulus: int) -> int:
    """The smallest integer >= ``lo`` congruent to ``residue`` modulo ``modulus``."""
    return lo + (residue - lo) % modulus


def shrink(design: Design, iterations: int | None = 4, inner: int | None = 2,
           loops: Mapping[str, int] | None = None) -> LoopCounts:
    """The loop counts to unroll ``design`` with; see the module docstring."""
    caps = {OUTER: _cap("iterations", iterations), INNER: _cap("inner", inner)}
    problem = design.problem_dict
    overrides = dict(loops or {})
    tier: dict[str, str] = {}  # point key -> tier
    real: dict[str, int] = {}
    stops: set[str] = set()
    steps: dict[str, set[int]] = {OUTER: set(), INNER: set()}
    for t in design.tasks:
        found: list = []
        _loops(t.schedule.nodes if t.schedule else (), 0, found)
        for loop, depth in found:
            where = f"task {t.name!r}: {loop}"
            name = OUTER if depth == 0 else INNER
            steps[name].add(value(loop.step, problem, where))
            for bound in (loop.start, loop.stop):
                k = key(bound)
                real[k] = value(bound, problem, where)
                if tier.get(k) != OUTER:
                    tier[k] = name
            stops.add(key(loop.stop))
    deepest = max((r.pipeline_config.num_stages for r in design.pipelined), default=1)
    span = 2 * max(deepest, 1)
    counts: dict[str, int] = {}
    caveats: list[str] = []
    for name, cap in caps.items():
        points = [k for k, t in tier.items() if t == name]
        modulus = math.lcm(*(s for s in steps[name] if s > 0)) if any(s > 0 for s in steps[name]) else 1
        names = {}
        for k in sorted(points):
            if k not in overrides:
                names[real[k]] = f"{names[real[k]]} = {k}" if real[k] in names else k
        image = shrink_points(sorted(names), cap, span, modulus, names, name, deepest)
        images = {k: overrides[k] if k in overrides else image[real[k]][0] for k in points}
        for k, v in images.items():
            if not k.startswith("#") or k in stops or v != real[k]:
                counts[k] = v
        caveats += [note for _, (_, note) in sorted(image.items()) if note]
        caveats += _order_caveats(points, real, images, overrides, name)
    for k, v in overrides.items():
        counts.setdefault(k, v)
    return LoopCounts(counts, {k: real[k] for k in counts if k in real}, tuple(caveats))


def shrink_points(values: list[int], cap: int | None, span: int, modulus: int, names: Mapping[int, str] | None = None,
                  tier: str = OUTER, deepest: int = 0) -> dict[int, tuple[int, str]]:
    """Real value -> (shrunk value, caveat or "") for one tier's sorted distinct values (see the
    module docstring; ``cap`` None keeps every value; ``names`` names the bounds in caveats).

        >>> {v: img for v, (img, _) in shrink_points([0, 1, 4096, 4097], 4, 8, 1).items()}
        {0: 0, 1: 1, 4096: 4, 4097: 5}
        >>> {v: (img, bool(note)) for v, (img, note) in shrink_points([4, 5, 4096], 4, 8, 1).items()}
        {4: (4, False), 5: (5, False), 4096: (13, True)}
    """
    if cap is None:
        return {v: (v, "") for v in values}
    out: dict[int, tuple[int, str]] = {}
    prev_real = prev_img = None
    for v in values:
        note = ""
        if v <= cap:
            img = v
        elif prev_real is None or prev_real <= cap:  # the first big bound shrinks to the cap
            img = _above(max(cap, prev_img + 1 if prev_img is not None else cap), v, modulus)
        else:
            gap = v - prev_real
            if gap <= span:
                img = prev_img + gap
            else:
                img = prev_img + _above(span, gap, modulus)
                names = names or {}
                ring = f" (twice the deepest ring, {deepest} stages)" if deepest else ""
                note = (f"{tier} loop bounds {names.get(prev_real, prev_real)} = {prev_real} and "
                        f"{names.get(v, v)} = {v} differ by {gap}; the checker keeps differences of up to {span} "
                        f"iterations{ring} and unrolls them as {prev_img} and {img}")
        out[v] = (img, note)
        prev_real, prev_img = v, img
    return out


def _order_caveats(points, real, images, overrides, tier: str) -> list[str]:
    """Caveats for ``loops=`` values that make different bounds equal or swap their order."""
    set_by_user = [k for k in points if k in overrides]
    out = []
    for a in set_by_user:
        for b in points:
            if a == b or (b in set_by_user and b < a):
                continue
            ra, rb, ia, ib = real[a], real[b], images[a], images[b]
            if (ra < rb) != (ia < ib) or (ra == rb) != (ia == ib):
                out.append(f"loops= sets {a} to {ia}, but its real value {ra} is "
                           f"{'equal to' if ra == rb else 'less than' if ra < rb else 'greater than'} {tier} bound "
                           f"{b} ({rb}), which unrolls as {ib}")
    return out


def loop_counts(design: Design, iterations: int | None = 4, inner: int | None = 2,
                loops: Mapping[str, int] | None = None) -> dict[str, int]:
    """The value each loop bound takes when unrolling (``shrink(...).counts``)."""
    return shrink(design, iterations, inner, loops).counts


def trip_count(loop: Loop, counts: Mapping[str, int], problem: Mapping) -> int:
    """Iterations of ``loop`` with its bounds taken from ``counts`` (real values otherwise)."""
    def bound(b) -> int:
        k = key(b)
        return counts[k] if k in counts else value(b, problem, str(loop))
    start, stop, step = bound(loop.start), bound(loop.stop), value(loop.step, problem, str(loop))
    if step <= 0:
        raise DesignError(f"{loop}: step must be positive", code="schedule.loop", hint="use a positive step")
    return max(0, -(-(stop - start) // step))


def executed_steps(design: Design, counts: Mapping[str, int]) -> int:
    """How many steps the tasks execute with these loop counts (the unrolled program's size),
    counted without unrolling: a budget can refuse a program too big to build."""
    problem = design.problem_dict

    def size(nodes) -> int:
        n = 0
        for node in nodes:
            n += trip_count(node, counts, problem) * size(node.body) if isinstance(node, Loop) else 1
        return n

    return sum(size(t.schedule.nodes) for t in design.tasks if t.schedule is not None)


__all__ = ["LoopCounts", "executed_steps", "key", "loop_counts", "shrink", "shrink_points", "trip_count", "value"]
