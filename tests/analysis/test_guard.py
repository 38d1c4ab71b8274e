"""``analysis.guard.on_errors``: on a design with errors an analysis that trips says which error
stops it; on a valid design nothing is caught (a failure there is a bug and stays visible)."""

import dataclasses

import pytest

from pgstudio import DesignError, examples
from pgstudio.analysis import guard
from pgstudio.analysis.check import check
from pgstudio.analysis.simulate import simulate
from pgstudio.codegen.kernel import emit


def without_config(design, name):
    """``name`` loses its pipeline config but its schedule steps stay (a file can say so)."""
    r = design.resource(name)
    return design.replace(resources=[dataclasses.replace(r, pipeline_config=None) if x.name == name else x
                                     for x in design.resources])


def test_a_design_with_nothing_to_check_is_a_design_error_naming_its_first_error():
    d = without_config(examples.merge_gemm(), "tmem_c")
    first = next(x for x in d.validate().diagnostics if x.is_error)
    with pytest.raises(DesignError) as err:
        check(d, 2, inner=1)
    assert err.value.code == "design.invalid"
    assert "the checker cannot run design 'merge_gemm'" in str(err.value) and f"[{first.code}]" in str(err.value)
    assert isinstance(err.value.__cause__, guard.TRIPS)  # the original failure is kept for whoever debugs it

    simulate(d, 2, inner=1)  # the simulator runs it: an arrival on nothing is a step like any other


def test_the_generator_refuses_it_too():
    with pytest.raises(DesignError) as err:
        emit(without_config(examples.merge_gemm(), "tmem_c"), validate=False)
    assert "'tmem_c' has no pipeline_config" in str(err.value) and "fix:" in str(err.value)


def test_on_a_valid_design_a_failure_is_not_hidden():
    with pytest.raises(KeyError):
        with guard.on_errors(examples.merge_copy(), "x"):
            raise KeyError("a bug")


def test_on_a_design_with_errors_the_trip_becomes_one_line():
    d = without_config(examples.merge_copy(), "smem_a")
    with pytest.raises(DesignError, match=r"x cannot run design 'merge_copy': it has \d+ error\(s\), the first \[") as err:
        with guard.on_errors(d, "x"):
            raise IndexError("list index out of range")
    assert "\n" not in str(err.value) and "fix:" in str(err.value)
