"""SmemAllocator / BarrierAllocator, used as a TS script's set-up uses them."""

import pytest

from pgstudio import (BarrierAllocator, DesignError, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode,
                      SmemAllocator, TmemAccumulator, create_tma_umma_pipeline_cfg, create_umma_async_pipeline_cfg)
from pgstudio.analysis.layout import DATA_ALIGN, SMEM_CAPACITY


def tile(name, stages=4, nbytes=16384, aliases=None):
    return MemoryResource(name=name, pipeline_config=create_tma_umma_pipeline_cfg(num_stages=stages, num_bytes=nbytes),
                          aliases=aliases)


def test_the_seeds_setup():
    smem_a, smem_b = tile("smem_a"), tile("smem_b", nbytes=8192)
    ab_sync = PipelineGroup(name="ab_sync", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)
    allocator = SmemAllocator()
    assert allocator.add_resource(smem_a) == 0
    assert allocator.add_resource(smem_b) == 4 * 16384
    assert allocator.barriers.num_bytes == 0  # grouped members own no barriers
    assert allocator.add_pipeline_group(ab_sync) == 0
    assert allocator.barriers.num_barriers == 12  # (N+1)S
    assert allocator.data_bytes == 4 * 16384 + 4 * 8192
    assert allocator.total_bytes == allocator.data_bytes + 96
    assert allocator.report() == "smem: data 98304 B + barriers 96 B = 98400 B of 232448 B"


def test_an_ungrouped_resource_brings_its_own_barriers():
    alloc = SmemAllocator()
    alloc.add_resource(tile("smem_a", stages=3))
    assert alloc.barriers.num_barriers == 6 and alloc.barriers.offsets == {"smem_a": 0}
    alloc.add_resource(tile("smem_b", stages=2), grouped=True)  # the caller says a group will own them
    assert alloc.barriers.num_barriers == 6


def test_data_is_aligned_and_unstaged_resources_take_no_smem():
    alloc = SmemAllocator()
    alloc.add_resource(tile("smem_a", stages=1, nbytes=48))
    assert alloc.add_resource(tile("smem_b", stages=1, nbytes=48)) == DATA_ALIGN
    assert alloc.add_resource(GmemTensor("gmem_a")) == 2 * DATA_ALIGN
    tmem = TmemAccumulator("tmem_c", create_umma_async_pipeline_cfg(num_stages=2, num_bytes=65536))
    alloc.add_resource(tmem)
    # tensor memory takes no shared-memory data, but its barriers live in shared memory
    assert alloc.data["tmem_c"][1] == 0
    assert alloc.barriers.num_barriers == 2 + 2 + 4 and alloc.barriers.layouts["tmem_c"].num_barriers == 4


def test_an_alias_shares_its_buffer():
    alloc = SmemAllocator()
    x = tile("smem_x")
    y = tile("smem_y", aliases="smem_x")
    PipelineGroup("xy", [x, y], PipelineGroupMode.Fork)
    alloc.add_resource(x)
    assert alloc.add_resource(y) == 0 and alloc.data_bytes == 4 * 16384


def test_a_barrier_allocator_can_own_the_group_storage():
    smem_a, smem_b = tile("smem_a"), tile("smem_b")
    group = PipelineGroup("ab", [smem_a, smem_b], PipelineGroupMode.FusedMerge)
    barriers = BarrierAllocator()
    barriers.add_resource(tile("smem_c", stages=2))
    assert barriers.add_pipeline_group(group) == 4 * 8
    assert barriers.num_barriers == 4 + 8 and barriers.layouts["ab"].num_barriers == 8
    with pytest.raises(DesignError, match="'ab' already has barrier storage") as err:
        barriers.add_pipeline_group(group)
    assert err.value.code == "alloc.twice"
    shared = SmemAllocator(barriers=barriers)
    shared.add_resource(smem_a)
    assert shared.total_bytes == 4 * 16384 + 12 * 8


def test_exceeding_the_capacity_raises_and_changes_nothing():
    alloc = SmemAllocator()
    big = 114 * 1024  # one fits; two (233472 B) do not
    alloc.add_resource(tile("smem_a", stages=1, nbytes=big))
    before = (dict(alloc.data), alloc.data_bytes, alloc.barriers.num_bytes)
    with pytest.raises(DesignError) as err:
        alloc.add_resource(tile("smem_b", stages=1, nbytes=big))
    assert err.value.code == "smem.capacity"
    assert f"expected at most {SMEM_CAPACITY} B per block" in str(err.value) and "232448" in str(err.value)
    assert "data 233472 B + barriers 32 B = 233504 B" in str(err.value)
    assert (dict(alloc.data), alloc.data_bytes, alloc.barriers.num_bytes) == before


def test_exactly_full_fits():
    alloc = SmemAllocator(capacity=4 * 16384 + 64)
    alloc.add_resource(tile("smem_a"))  # 64 KiB of data + 8 barriers
    assert alloc.total_bytes == alloc.capacity
    with pytest.raises(DesignError, match="smem_a' already has data storage"):
        alloc.add_resource(tile("smem_a"))
