"""The accumulator's staging in turns (``smem_layout.Staging.turns``): what the generator emits for
a tile taken in two or four turns, and that the simulator and the kernel-time model run the same
turns.  The kernels' results on the GPU: tests/runtime/test_gemm_lifts.py (``turns*``)."""

from __future__ import annotations

import re

import pytest

from pgstudio.analysis.predict import predict_workload
from pgstudio.analysis.simulate import Simulator
from pgstudio.analysis.workload import workload
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.errors import DesignError
from pgstudio.examples import fork_gemm_act, merge_gemm
from pgstudio.model.targets import SMEM_CAPACITY


@pytest.mark.parametrize("turns, kw", [(2, {}), (4, {"acc_stages": 2})])
def test_each_turn_is_staged_committed_and_stored_once(turns, kw):
    d = merge_gemm(4096, 4096, 4096, num_stages=4, bm=128, bn=256, bk=64, dtype="bfloat16", **kw)
    src = emit_gemm(d)
    code = src.code
    assert src.smem_bytes <= SMEM_CAPACITY
    width = 256 // turns
    # the epilogue runs its tile body once per turn and stores that turn's panels of 64 columns
    assert f"for (int turn = 0; turn < {turns}; ++turn)" in code
    stores = re.findall(r"tma_store_2d\(&tm_gmem_d, stg \+ (\d+)u, n0 \+ turn \* (\d+) \+ (\d+), m0\);", code)
    assert [(int(o), int(w), int(c)) for o, w, c in stores] == [(q * 16384, width, q * 64) for q in range(width // 64)]
    # the MMA waits for the stage, writes the turn's columns and commits, once per turn
    assert code.count("// umma commit: results in place") == turns
    assert code.count("// the umma producer's acquire: wait until the epilogue released this staging buffer") == turns
    for t in range(turns):
        assert f"for (int q = {t * width // 8}; q < {(t + 1) * width // 8}; ++q)" in code
    stage_bytes = 128 * width * 2
    assert code.count(f"(u32)s_tmem_c * {stage_bytes}u;") == turns + 1  # each turn's write, the epilogue's store


def test_a_tile_that_fits_whole_keeps_its_one_commit_and_sm100a_keeps_whole_staging():
    code = emit_gemm(merge_gemm(num_stages=3, dtype="bfloat16")).code
    assert "int turn" not in code and code.count("// umma commit: results in place") == 1
    with pytest.raises(DesignError, match="smem.capacity"):
        emit_gemm(merge_gemm(num_stages=4, dtype="bfloat16").with_targets("sm_100a"), arch="sm_100a")


def test_the_fork_takes_turns_while_its_relu_task_stores_as_before():
    code = emit_gemm(fork_gemm_act(num_stages=4, bm=128, bn=256, bk=64, compact=True)).code
    assert "for (int turn = 0; turn < 2; ++turn)" in code and code.count("// umma commit: results in place") == 2


@pytest.mark.parametrize("kw, turns", [({}, 2), ({"acc_stages": 2}, 4), ({"num_stages": 3}, 1)])
def test_the_simulator_runs_the_kernels_turns(kw, turns):
    d = merge_gemm(4096, 4096, 4096, **{"num_stages": 4, **kw}, bm=128, bn=256, bk=64, dtype="bfloat16")
    assert workload(d).staging_turns == turns
    sim = Simulator(d, iterations=3, inner=4)
    runs = dict(zip(sim.program.tasks, sim.program.runs))
    commits = [r for r in runs["mma"] if r.step.op == "commit" and r.step.target == "tmem_c"]
    stores = [r for r in runs["epilogue"] if r.step.op == "store"]
    assert len(commits) == 3 * turns and len(stores) == 3 * turns
    assert {r.work_bytes for r in stores} == {stores[0].work_bytes} and stores[0].work_bytes * turns == 128 * 256 * 4
    tl = sim.run()
    assert tl.meta_dict["status"] == "complete"


def test_the_kernel_time_model_counts_the_waits_between_turns():
    whole = workload(merge_gemm(4096, 4096, 4096, num_stages=3, bm=128, bn=256, bk=64, dtype="bfloat16"))
    turned = workload(merge_gemm(4096, 4096, 4096, num_stages=4, bm=128, bn=256, bk=64, dtype="bfloat16"))
    assert (whole.staging_turns, turned.staging_turns) == (1, 2)
    same_depth = turned.replace(staging_turns=1)
    assert predict_workload(turned).ms > predict_workload(same_depth).ms


def test_where_the_warpgroups_split_bn_each_writes_only_its_own_turns_columns():
    d = merge_gemm(4096, 4096, 4096, num_stages=5, bm=64, bn=256, bk=64, dtype="bfloat16")
    code = emit_gemm(d).code
    assert code.count("if ((unsigned)col >= 128u) continue;  // another turn's column") == 2
    assert "const int col = wgn * 128 + 8 * q + 2 * (lane & 3) - 128;" in code
