"""Names of resources, groups, tasks and designs become names in generated code and diagrams."""

import pytest

from pgstudio import Design, DesignError, GmemTensor, MemoryResource, Task, TmemAccumulator
from pgstudio.model.names import name_problem


@pytest.mark.parametrize("name", ["smem_a", "A", "_x", "tile2", "gmem_D0"])
def test_identifiers_are_accepted(name):
    assert name_problem(name) is None
    assert MemoryResource(name=name).name == name


@pytest.mark.parametrize("name,why", [
    ("", "is not a non-empty string"),
    (3, "is not a non-empty string"),
    ("smem a", "is not an identifier"),
    ("2a", "is not an identifier"),
    ("a-b", "is not an identifier"),
    ("smém", "is not an identifier"),
    ("class", "is a reserved word in Python or CUDA C++"),
    ("lambda", "is a reserved word"),
    ("threadIdx", "is a reserved word"),
    ("pg_bar", "starts with 'pg_' or '__'"),
    ("__x", "starts with 'pg_' or '__'"),
])
@pytest.mark.parametrize("make", [
    lambda n: MemoryResource(name=n), lambda n: GmemTensor(n), lambda n: TmemAccumulator(n),
    lambda n: Task(n, 0, 1), lambda n: Design(n)])
def test_non_identifiers_are_rejected_everywhere(name, why, make):
    with pytest.raises(DesignError) as err:
        make(name)
    assert err.value.code == "name.identifier"
    assert f"name {name!r} {why}" in str(err.value)
