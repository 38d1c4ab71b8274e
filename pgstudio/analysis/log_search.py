"""The coordinate search both fits use: the simulator's cost model (``calibrate.fit_stats``) and
the kernel-time model's machine (``kernel_fit.fit_machine``).

Constants such as a bandwidth or a latency are positive and matter by their ratio, so each is
searched on a log scale: from the start, every constant in turn is multiplied and divided by a
step; the first move that lowers the objective is kept and the sweep over the constants starts
again, until no move helps; then the next, smaller step.  Deterministic (same start, same
objective: same result) and derivative-free, which suits objectives built from a simulator's
discrete events.  Standard library only.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, TypeVar


#: The steps, largest first, each about the square root of the one before: a fit coarse to fine.
STEPS = (2.0, 1.41, 1.19, 1.09, 1.04, 1.02, 1.01)


class Replaceable(Protocol):
    def replace(self, **changes: float) -> "Replaceable": ...


M = TypeVar("M", bound=Replaceable)


def log_search(start: M, params: Sequence[str], objective: Callable[[M], float], steps: Sequence[float],
               allowed: Callable[[str, float, float], bool]) -> tuple[M, float, float]:
    """``(best, objective(start), objective(best))``: ``params`` of ``start`` (a frozen dataclass
    with ``replace``) moved by the factors ``steps`` (and their inverses), a move taken only where
    ``allowed(name, value, start_value)``."""
    best, best_val = start, objective(start)
    first = best_val
    for scale in steps:
        improved = True
        while improved:
            improved = False
            for p in params:
                for f in (scale, 1 / scale):
                    value = getattr(best, p) * f
                    if not allowed(p, value, getattr(start, p)):
                        continue
                    cand = best.replace(**{p: value})
                    v = objective(cand)
                    if v < best_val - 1e-12:
                        best, best_val, improved = cand, v, True
                        break
    return best, first, best_val


__all__ = ["STEPS", "log_search"]
