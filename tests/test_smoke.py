"""The canonical designs build, validate and lay out; JSON round trips."""

import pytest

import pgstudio
from pgstudio import examples


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_canonical_design_is_valid_and_round_trips(name):
    design = examples.example(name)
    report = design.validate()
    assert report.ok, str(report)
    assert pgstudio.Design.from_json(design.to_json()) == design
    twin = examples.ungrouped(design)
    assert twin.validate().ok, str(twin.validate())
    assert pgstudio.barrier_layout(twin).num_barriers > pgstudio.barrier_layout(design).num_barriers
