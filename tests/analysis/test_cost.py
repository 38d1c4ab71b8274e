"""Which step costs a design is simulated with where users look (the studio, ``pgstudio trace --simulate``)."""

from pgstudio import examples
from pgstudio.analysis.cost import H200, calibrated_cost, design_cost
from pgstudio.analysis.fitted import default_machine
from pgstudio.analysis.predict import prediction
from pgstudio.analysis.simulate import simulate


def test_a_design_with_a_problem_is_simulated_with_the_calibrated_model_and_says_so():
    d = examples.merge_gemm()
    cost, what = design_cost(d)
    assert cost == calibrated_cost(d) and cost != H200
    assert what == f"calibrated model: {default_machine().label()}" and "fitted on" in what
    # its simulated k-tile period is the kernel-time model's, not the datasheet's ~1.8x slower one
    period = simulate(d, 8, inner=4, cost=cost).period()
    assert abs(period - prediction(d).period_ns) / prediction(d).period_ns < 0.1
    assert simulate(d, 8, inner=4).period() > 1.5 * period


def test_where_the_model_cannot_size_a_design_the_datasheet_model_stands_in(monkeypatch):
    import pgstudio.analysis.cost as cost_mod
    bare = examples.merge_copy().replace(problem={})  # no element count, no loops: nothing to size
    cost, what = design_cost(bare)
    assert cost == H200 and what.startswith("datasheet H200 model")

    def unsizable(design, machine=None):
        raise ZeroDivisionError("no elements")
    monkeypatch.setattr(cost_mod, "calibrated_cost", unsizable)  # a valid design the model cannot read
    d = examples.merge_copy()
    cost, what = design_cost(d)
    assert cost == H200 and simulate(d, 4, cost=cost).meta_dict["status"] == "complete"
