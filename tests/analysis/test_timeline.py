"""The timeline's own rules: which barrier role a wait is on, and where a lane's time goes."""

import re

from pgstudio import examples
from pgstudio.analysis.cost import H200
from pgstudio.analysis.simulate import simulate
from pgstudio.analysis.timeline import role_of


def test_a_barrier_set_name_says_whether_a_wait_is_for_data_or_for_a_free_stage():
    assert role_of("ab.shared_empty") == role_of("tmem_c.empty") == role_of("smem_a.empty") == "empty"
    assert role_of("ab.full_0") == role_of("smem_a.full") == role_of("tmem_c.full") == "full"


def _shares(text: str) -> dict[str, tuple[int, int]]:
    return {m[1]: (int(m[2]), int(m[3])) for m in re.finditer(r"  (\w+): blocked on full (\d+) %, on empty (\d+) %", text)}


def test_waiting_names_the_side_a_pipeline_waits_on():
    d = examples.merge_copy()
    starved = simulate(d, 24, cost=H200.replace(bulk_latency_ns=50_000.0))  # the copies' latency is the limit
    flooded = simulate(d, 24, cost=H200.replace(thread_bytes_per_ns=0.01))  # the consumer is the limit
    s, f = _shares(starved.waiting()), _shares(flooded.waiting())
    assert set(s) == set(f) == {"load_a", "load_b", "store"}
    assert s["store"][0] > 50 and f["store"][0] < 10  # the consumer waits for data only when starved
    assert f["load_a"][1] > 50 and f["load_a"][0] == 0  # the loaders wait for free stages, never for data
    copy = re.search(r"load_a\.tma: (\d+) copies land (\d+) ns after issue", starved.waiting())
    assert copy and int(copy[1]) == len([e for e in starved.lane("load_a.tma") if e.kind == "work"])
    assert 50_000 <= int(copy[2]) < 52_000  # the latency, and the transfer behind it
