"""How many phases of each barrier set each task waits on and arrives at over its whole schedule.

What decides whether producers and consumers meet is not any one loop bound but these totals:
a nested N x K loop against a flat loop of N*K, two loops side by side, two brackets in one
iteration.  ``barrier_uses`` counts them from the resolved plans (the protocol table applied to
the design, ``resolve.py``) with given loop counts, without unrolling.  One function serves the
iteration rule (``schedule.iterations``: at the real counts every task touching a set makes as
many waits and arrivals on it) and the checker (``kept``: the shrunk counts keep what the real
ones decide, else the checker unrolls the real counts or answers INCOMPLETE).

    >>> from pgstudio import examples
    >>> d = examples.merge_copy()
    >>> barrier_uses(d, counts={"num_tiles": 3})["ab.shared_empty"]
    {('load_a', 'wait'): 3, ('load_b', 'wait'): 3, ('store', 'arrive'): 3}
"""

from __future__ import annotations

from typing import Mapping

from ..model.design import Design
from .layout import BarrierLayout, barrier_layout
from .loops import trip_count
from .resolve import ResolvedLoop, TaskPlan, resolve

#: barrier set -> (task, "wait" | "arrive") -> how many times over the whole schedule
Uses = dict[str, dict[tuple[str, str], int]]


def barrier_uses(design: Design, counts: Mapping[str, int] | None = None, layout: BarrierLayout | None = None,
                 plans: Mapping[str, TaskPlan] | None = None) -> Uses:
    """Per barrier set, the waits and arrivals (``arrive`` and ``arrive_expect_tx``) each task
    makes with the loop bounds of ``counts`` (real values for bounds it does not name)."""
    counts = counts or {}
    problem = design.problem_dict
    plans = plans or resolve(design, layout or barrier_layout(design))
    per_cursor: dict[tuple[str, str, str, str], int] = {}  # (set, task, verb, cursor) -> phases

    def walk(task: str, nodes, times: int) -> None:
        # One phase of a set is one pass of a cursor over it: several waits or arrivals on the same
        # slot before the cursor advances count once, and the members of a Merge that one task
        # acquires (each through its own cursor, all on the shared empty barrier) pass it together,
        # so a task's phases on a set are those of its busiest cursor.  A loop body starts afresh.
        seen: set[tuple[str, str, str]] = set()
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                trips = trip_count(n.loop, counts, problem)
                if trips:
                    walk(task, n.body, times * trips)
                else:  # a loop that never runs still names the barriers its body uses
                    walk(task, n.body, 0)
                seen.clear()
                continue
            for a in n.actions:
                verb = "wait" if a.verb == "wait" else "arrive" if a.verb.startswith("arrive") else ""
                if verb and (a.set, verb, a.cursor) not in seen:
                    seen.add((a.set, verb, a.cursor))
                    key = (a.set, task, verb, a.cursor)
                    per_cursor[key] = per_cursor.get(key, 0) + times
            for cur in n.advances:
                seen = {k for k in seen if k[2] != cur}

    for t in design.tasks:
        if t.name in plans:
            walk(t.name, plans[t.name].nodes, 1)
    out: Uses = {}
    for (bset, task, verb, _), n in per_cursor.items():
        per = out.setdefault(bset, {})
        per[(task, verb)] = max(per.get((task, verb), 0), n)
    return out


def unequal(uses: Uses) -> list[tuple[str, dict[tuple[str, str], int]]]:
    """The barrier sets whose tasks make different numbers of waits and arrivals on them."""
    return [(s, per) for s, per in uses.items() if len(set(per.values())) > 1]


def kept(real: Uses, shrunk: Uses, span: int) -> list[str]:
    """Why the shrunk totals do not decide what the real ones do ([] when they do).

    Per barrier set, every total equal to or below ``span`` (twice the deepest ring) keeps its
    value and every larger one stays above it (a ring that wraps, a lead past the stages); every
    two totals keep their order and, up to ``span``, their difference."""
    out = []
    for s, per in real.items():
        small = shrunk.get(s, {})
        keys = sorted(per)
        for k in keys:
            r, u = per[k], small.get(k, 0)
            if (u != r) if r <= span else (u <= span):
                out.append(f"{k[0]!r} makes {r} {k[1]}s on {s} at the real counts but {u} at the shrunk ones")
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                dr, du = per[a] - per[b], small.get(a, 0) - small.get(b, 0)
                if (du != dr) if abs(dr) <= span else (abs(du) <= span or (du > 0) != (dr > 0)):
                    out.append(f"on {s}, {a[0]!r} ({a[1]}s) and {b[0]!r} ({b[1]}s) differ by {dr} at the real "
                               f"counts but by {du} at the shrunk ones")
    return out


__all__ = ["Uses", "barrier_uses", "kept", "unequal"]
