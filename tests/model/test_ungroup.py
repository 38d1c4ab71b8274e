"""``ungrouped(design)``: the per-resource-barrier twin with rewritten schedules."""

import pytest

from pgstudio import barrier_layout, ungrouped
from pgstudio.examples import CANONICAL, fork_copy, fused_merge_copy, merge_copy


def steps(design, task):
    return [str(s) for s in design.task(task).schedule.body]


def test_merge_twin_releases_each_member():
    twin = ungrouped(merge_copy())
    assert twin.name == "merge_copy_ungrouped" and twin.groups == ()
    assert steps(twin, "store")[-2:] == ["smem_a.release()", "smem_b.release()"]
    assert steps(twin, "store")[:2] == ["smem_a.try_wait()", "smem_a.wait()"]


def test_fused_merge_twin_waits_each_member_in_try_wait_wait_pairs():
    assert steps(ungrouped(fused_merge_copy()), "store")[:4] == [
        "smem_a.try_wait()", "smem_a.wait()", "smem_b.try_wait()", "smem_b.wait()"]


def test_aliased_fork_twin_gets_its_own_buffers_and_loads():
    twin = ungrouped(fork_copy())
    assert all(r.aliases is None for r in twin.resources)
    # without the shared full barrier each member needs its own copy, between its acquire and commit
    assert steps(twin, "load") == [
        "smem_x.try_acquire()", "smem_x.acquire()", "smem_y.try_acquire()", "smem_y.acquire()",
        "smem_x.load(arg0=gmem_a)", "smem_x.commit()", "smem_y.load(arg0=gmem_a)", "smem_y.commit()"]


@pytest.mark.parametrize("name", list(CANONICAL))
def test_every_twin_is_valid_and_has_2S_barriers_per_resource(name):
    design = CANONICAL[name]()
    twin = ungrouped(design)
    assert twin.validate().ok, str(twin.validate())
    assert barrier_layout(twin).num_barriers == sum(2 * r.num_stages for r in twin.pipelined)
