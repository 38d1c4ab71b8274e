"""Task: a warp range, the resources it consumes / produces (kept by name), its captured schedule."""

import dataclasses

import pytest

from pgstudio import DesignError, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode, Task
from pgstudio import create_tma_async_pipeline_cfg


def tile(name):
    return MemoryResource(name=name, pipeline_config=create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024))


def test_a_task_keeps_resource_names_and_its_warp_range():
    a, d = tile("smem_a"), GmemTensor("gmem_d")
    t = Task("store", 4, 2, [a], [d])
    assert (t.src_resources, t.dst_resources) == (("smem_a",), ("gmem_d",))
    assert (t.num_threads, list(t.warps), str(t)) == (64, [4, 5], "store (warps 4..5)")
    assert Task("store", 4, 2, ["smem_a"], ["gmem_d"]) == t  # names and objects mean the same


def test_a_group_member_reference_stands_for_its_resource():
    a, b = tile("smem_a"), tile("smem_b")
    g = PipelineGroup("ab", [a, b], PipelineGroupMode.Merge)
    assert Task("t", 0, 4, [g.smem_a, g.smem_b], []).src_resources == ("smem_a", "smem_b")


@pytest.mark.parametrize("warp_idx,num_warps,quoted", [
    (-1, 1, "warp_idx is -1, expected an integer from 0 to 31"),
    (0, 0, "num_warps is 0, expected an integer from 1 to 32"),
    (0, True, "num_warps is True, expected an integer from 1 to 32"),
    (1.5, 1, "warp_idx is 1.5, expected an integer from 0 to 31"),
    (32, 1, "warp_idx is 32, expected an integer from 0 to 31"),
    (0, 10 ** 6, "num_warps is 1000000, expected an integer from 1 to 32"),
])
def test_bad_warp_ranges_are_rejected(warp_idx, num_warps, quoted):
    with pytest.raises(DesignError, match=quoted) as err:
        Task("t", warp_idx, num_warps)
    assert err.value.code == "task.warps"


def test_bad_resource_lists_and_schedules_are_rejected():
    with pytest.raises(DesignError, match="src_resources is 'smem_a', expected a list") as err:
        Task("t", 0, 1, "smem_a")
    assert err.value.code == "task.resource"
    with pytest.raises(DesignError, match="dst_resources is \\[3\\]"):
        Task("t", 0, 1, [], [3])
    with pytest.raises(DesignError, match="task schedule must be a @schedule function, got function") as err:
        Task("t", 0, 1, schedule=lambda: None)
    assert err.value.code == "task.schedule"


def test_task_names_must_be_identifiers():
    with pytest.raises(DesignError, match="task name '1st' is not an identifier"):
        Task("1st", 0, 1)


def test_a_task_is_frozen():
    t = Task("t", 0, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.num_warps = 2


# -- warp ranges ---------------------------------------------------------------------------------


def _overlaps_warp_by_warp(ranges):
    """The obvious definition, warp by warp: for each task, its lowest warp an earlier task holds."""
    used, out = {}, []
    for name, lo, n in ranges:
        for w in range(lo, lo + n):
            if w in used:
                out.append((used[w], name, w))
                break
        for w in range(lo, lo + n):
            used.setdefault(w, name)
    return out


def test_warp_overlaps_agree_with_the_warp_by_warp_definition():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pgstudio.model.task import warp_overlaps

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)), max_size=7))
    def check(spans):
        ranges = [(f"t{i}", lo, n) for i, (lo, n) in enumerate(spans)]
        tasks = [Task(name, lo, n) for name, lo, n in ranges]
        got = [(o.owner, o.task, o.warp) for o in warp_overlaps(tasks)]
        assert got == _overlaps_warp_by_warp(ranges)

    check()


def test_a_hundred_million_warps_is_refused_by_value_before_any_work():
    with pytest.raises(DesignError, match="num_warps") as e:
        Task("huge", 0, 10**8)
    assert "1 to 32" in e.value.hint


def test_warp_overlaps_cost_what_the_ranges_cost_not_the_warps():
    """The overlap rule works on ranges: even ranges far wider than a block (plain records here,
    since a Task refuses them) cost a few range records, nothing per warp."""
    import tracemalloc
    from types import SimpleNamespace as Rec

    from pgstudio.model.task import warp_overlaps

    tasks = [Rec(name="load", warp_idx=0, num_warps=1), Rec(name="huge", warp_idx=0, num_warps=10**8),
             Rec(name="store", warp_idx=5, num_warps=10**8)]
    tracemalloc.start()
    try:
        found = warp_overlaps(tasks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(o.owner, o.task, o.warp) for o in found] == [("load", "huge", 0), ("huge", "store", 5)]
    assert peak < 100_000  # bytes: a few range records, nothing per warp
