"""The unrolled program is bounded: a file may name a billion k tiles, and the simulator keeps
real inner-loop counts by default; past ``MAX_UNROLLED_STEPS`` it says so instead of filling memory."""

import time

import pytest

from pgstudio import DesignError, examples
from pgstudio.analysis.program import MAX_UNROLLED_STEPS, unroll
from pgstudio.analysis.simulate import simulate


def test_a_huge_inner_loop_is_a_clear_error_in_bounded_time():
    d = examples.merge_gemm()
    d = d.replace(problem={**d.problem_dict, "num_k_tiles": 10 ** 9})
    start = time.perf_counter()
    with pytest.raises(DesignError, match=f"would execute [0-9]+ steps, more than {MAX_UNROLLED_STEPS}") as err:
        simulate(d, iterations=8)  # inner=None: the real k-tile count
    assert err.value.code == "analysis.size" and "num_k_tiles=1000000000" in str(err.value)
    assert "fewer iterations" in str(err.value)
    assert time.perf_counter() - start < 30


def test_capped_inner_loops_of_the_same_design_unroll():
    d = examples.merge_gemm()
    d = d.replace(problem={**d.problem_dict, "num_k_tiles": 10 ** 9})
    program = unroll(d, iterations=8, inner=4)
    assert 0 < sum(len(r) for r in program.runs) < MAX_UNROLLED_STEPS
