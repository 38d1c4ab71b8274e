"""What the barrier layout says beyond the protocol table: a cluster's shared tile counts its
peers' releases, and sm_100a's mma_done barriers are slots of their own after the tensor-memory
slot.  (The protocol table's counts, order and offsets: ``test_layout.py``.)"""

import pytest

from pgstudio import barrier_layout, examples, smem_layout
from pgstudio.analysis.barrier_layout import BARRIER_BYTES, COMMIT, TMEM_SLOT_BYTES, internal_bytes
from pgstudio.model.kinds import Role


@pytest.mark.parametrize("shape, tile", [((1, 2), "smem_a"), ((2, 1), "smem_b")])
def test_the_shared_tiles_empty_barrier_counts_both_blocks_releases(shape, tile):
    plain, paired = barrier_layout(examples.merge_gemm()), barrier_layout(examples.merge_gemm(cluster=shape))
    empty = paired.set_for(tile, "empty")
    assert empty.name == "ab.shared_empty" and empty.peers == 2
    assert empty.init_count == 2 * plain.set_for(tile, "empty").init_count == 2 and empty.block_count == 1
    assert empty.peer_arrivers == empty.arrivers == ("mma",)
    assert all(paired.slot(empty.name, st).arrive_count == 2 for st in range(empty.stages))
    full = paired.set_for(tile, "full")
    own = examples.merge_gemm().resource(tile).pipeline_config.num_bytes
    assert (full.tx_bytes, full.peer_tx, full.peers, full.init_count) == (own, own // 2, 1, 1)
    # nothing else changes: the other operand, the accumulator, every slot's place
    other = [s for s in paired.sets if s not in (empty, full)]
    assert other == [s for s in plain.sets if s.name not in (empty.name, full.name)]
    assert [(s.index, s.offset) for s in paired.slots] == [(s.index, s.offset) for s in plain.slots]


def test_the_ungrouped_twin_doubles_the_tiles_own_empty_barrier():
    lay = barrier_layout(examples.ungrouped(examples.merge_gemm(cluster=(1, 2))))
    assert {s.name: s.peers for s in lay.sets if s.peers > 1} == {"smem_a.empty": 2}
    assert lay.set_for("smem_b", "empty").init_count == 1


def test_the_table_shows_the_peers_arrivals_and_bytes():
    text = barrier_layout(examples.merge_gemm(cluster=(1, 2))).table()
    row = next(line for line in text.splitlines() if line.startswith("ab.shared_empty"))
    assert "2 (1 x 2 blocks)" in row and "mma + peer mma (mapa)" in row
    assert "16384 (8192 from peers)" in next(line for line in text.splitlines() if line.startswith("ab.full_0"))


def test_sm100a_has_one_mma_done_barrier_per_accumulator_stage_after_the_tensor_memory_slot():
    d = examples.merge_gemm_resadd()
    lay = barrier_layout(d, arch="sm_100a")
    (done,) = lay.internal
    stages = d.resource("tmem_c").pipeline_config.num_stages
    assert (done.name, done.label, done.role, done.stages, done.init_count, done.tx_bytes) == \
        ("tmem_c.mma_done", "mma_done", Role.FULL, stages, 1, 0)
    assert (done.arrivers, done.waiters, done.via, done.arch) == (("mma",), ("mma",), COMMIT, "sm_100a")
    assert lay.internal_for("tmem_c", "mma_done") == done and lay.internal_for("smem_a", "mma_done") is None
    assert done.first == lay.num_barriers  # slot indices continue after the protocol table's
    offsets = [lay.slot(done.name, st).offset for st in range(stages)]
    assert offsets == [lay.num_bytes + TMEM_SLOT_BYTES + BARRIER_BYTES * st for st in range(stages)]
    assert [s.index for s in lay.all_slots] == list(range(len(lay.all_slots)))
    # the shared-memory layout requests exactly these bytes past the pipeline barriers
    sl = smem_layout(d, arch="sm_100a", barriers=lay)
    assert sl.extra_bytes == internal_bytes(d, "sm_100a") == TMEM_SLOT_BYTES + BARRIER_BYTES * stages
    assert "tcgen05.commit" in lay.table() and "tmem_c.mma_done [sm_100a]" in lay.table()


def test_mma_done_is_sm100a_only_and_the_default_follows_the_designs_targets():
    d = examples.merge_gemm()
    assert barrier_layout(d).internal == () and barrier_layout(d, arch="sm_90a").internal == ()
    both = d.with_targets("sm_90a", "sm_100a")
    assert [s.name for s in barrier_layout(both).internal] == ["tmem_c.mma_done"]
    assert barrier_layout(both).sets == barrier_layout(d).sets  # the protocol table's slots do not move
    assert internal_bytes(d, "sm_90a") == 0
    assert barrier_layout(examples.merge_copy(), arch="sm_100a").internal == ()  # no accumulator, no mma_done
