"""What the GEMM kernel may do with an accumulator's staging: store it as it is, or compute the
one output over it in place (``accumulators.stored_in_place``)."""

from __future__ import annotations

import dataclasses

from pgstudio import examples
from pgstudio.analysis.accumulators import copied_out, stored_in_place
from pgstudio.model.design import Design


def _acc(d: Design):
    return d.resource("tmem_c")


def test_a_residual_add_is_computed_in_place_in_the_staging_type_only():
    d = examples.merge_gemm_resadd()
    assert stored_in_place(d, _acc(d), "float16") == "gmem_d"
    assert stored_in_place(d, _acc(d), "float32") is None  # D is float16: a float32 staging is not D's layout


def test_a_copied_accumulator_is_not_computed_in_place():
    d = examples.merge_gemm()
    assert copied_out(d, _acc(d), "float16") and stored_in_place(d, _acc(d), "float16") is None


def test_a_second_reader_of_the_accumulator_keeps_the_staging_unwritten():
    d = examples.merge_gemm_resadd()
    epi = next(t for t in d.tasks if t.name == "epilogue")
    peek = dataclasses.replace(epi, name="peek", warp_idx=epi.warp_idx + 12)
    two = Design(d.name, list(d.resources), {r: list(d.deps(r.name)) for r in d.resources if d.deps(r.name)},
                 list(d.groups), [*d.tasks, peek], d.problem_dict)
    assert stored_in_place(two, _acc(two), "float16") is None


def test_an_output_from_a_global_input_is_not_computed_in_place():
    """An input read straight from global memory has no staged chunks beside the accumulator's."""
    d = examples.merge_gemm_resadd()
    deps = {r: list(d.deps(r.name)) for r in d.resources if d.deps(r.name)}
    same = Design(d.name, list(d.resources), deps, list(d.groups), list(d.tasks), d.problem_dict)
    assert stored_in_place(same, _acc(same), "float16") == "gmem_d"  # rebuilt as it was: still in place
    deps[d.resource("gmem_d")] = ["tmem_c", "gmem_r"]
    odd = Design(d.name, list(d.resources), deps, list(d.groups), list(d.tasks), d.problem_dict)
    assert stored_in_place(odd, _acc(odd), "float16") is None
