"""``log_search``: the coordinate search over log-scaled constants both fits use."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pgstudio.analysis.log_search import STEPS, log_search


@dataclass(frozen=True)
class Consts:
    bandwidth: float = 1.0
    latency: float = 1.0

    def replace(self, **changes: float) -> "Consts":
        return replace(self, **changes)


def _far_from(target: Consts):
    return lambda c: sum(math.log(getattr(c, k) / getattr(target, k)) ** 2 for k in ("bandwidth", "latency"))


def test_it_walks_each_constant_to_the_minimum_on_a_log_scale():
    target = Consts(bandwidth=5.0, latency=0.3)
    best, first, last = log_search(Consts(), ("bandwidth", "latency"), _far_from(target), STEPS,
                                   lambda *_: True)
    assert first == _far_from(target)(Consts()) > 1.0
    assert abs(math.log(best.bandwidth / 5.0)) < math.log(1.01) and abs(math.log(best.latency / 0.3)) < math.log(1.01)
    assert last == _far_from(target)(best) < 1e-3


def test_a_move_the_rule_forbids_is_never_taken_and_untouched_constants_stay():
    target = Consts(bandwidth=5.0, latency=0.3)
    within_2x = lambda _, value, start: 0.5 <= value / start <= 2.0  # noqa: E731
    best, _, _ = log_search(Consts(), ("bandwidth",), _far_from(target), STEPS, within_2x)
    assert best.bandwidth == 2.0 and best.latency == 1.0


def test_the_same_start_gives_the_same_result():
    objective = _far_from(Consts(bandwidth=3.0, latency=7.0))
    runs = [log_search(Consts(), ("bandwidth", "latency"), objective, STEPS[:4], lambda *_: True) for _ in range(2)]
    assert runs[0] == runs[1]
