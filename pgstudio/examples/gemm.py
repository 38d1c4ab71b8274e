"""GEMM designs after the warp-specialised mainloop: LoadA and LoadB fill smem_a / smem_b, one MMA
task consumes both into a tensor-memory accumulator that an epilogue drains (or adds a residual to,
or forks into an activation)."""

from __future__ import annotations


from ..model.capture import domain_loop, schedule
from ..errors import DesignError
from ..model.config import (CooperativeGroup, create_async_umma_pipeline_cfg,
                           create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg,
                           create_umma_async_pipeline_cfg)
from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.kinds import Agent, AsyncProducerOp
from ..model.problem import gemm_problem
from ..model.protocol import PipelineGroupMode
from ..model.resource import Compute, GmemTensor, MemoryResource, TmemAccumulator
from ..model.targets import DTYPE_BYTES, residual_turns_ok
from ..model.task import Task

from .streaming import WARPGROUP, load_schedule

__all__ = [
    "gemm_load_schedule",
    "merge_mma_schedule",
    "fused_mma_schedule",
    "epilogue_schedule",
    "resadd_epilogue_schedule",
    "merge_gemm",
    "fused_merge_gemm",
    "merge_gemm_resadd",
    "act_schedule",
    "fork_mma_schedule",
    "fork_gemm_load_schedule",
    "fork_gemm_act",
]

# -- GEMM designs -----------------------------------------------------------------------------------


@schedule
def gemm_load_schedule(src, dst):
    """A tma operand loader: per output tile, per k tile: acquire, copy, commit."""
    with domain_loop(0, "num_tiles", 1):
        with domain_loop(0, "num_k_tiles", 1):
            dst.try_acquire()
            dst.acquire()
            dst.load(src)
            dst.commit()


@schedule
def merge_load_schedule(src_a, src_b, group):
    """One loader for both members of a Merge (A and B): per k tile, acquire both stages (their
    one shared empty barrier), copy both tiles, commit both.  One warp issues both tiles' bulk
    copies, which leaves another warp of its warpgroup to other work."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        with domain_loop(0, "num_k_tiles", 1):
            group.member(a).try_acquire()
            group.member(a).acquire()
            group.member(b).try_acquire()
            group.member(b).acquire()
            group.member(a).load(src_a)
            group.member(b).load(src_b)
            group.member(a).commit()
            group.member(b).commit()


@schedule
def merge_mma_schedule(acc, group):
    """The MMA task of a Merge: wait A and B, MMA into the accumulator, release the group once."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        acc.try_acquire()
        acc.acquire()
        with domain_loop(0, "num_k_tiles", 1):
            group.member(a).try_wait()
            group.member(a).wait()
            group.member(b).try_wait()
            group.member(b).wait()
            acc.mma(group.member(a).read(), group.member(b).read())
            group.release()
        acc.commit()


@schedule
def fused_mma_schedule(acc, group):
    """A FusedMerge consumer: one collapsed wait, MMA, one collapsed release."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        acc.try_acquire()
        acc.acquire()
        with domain_loop(0, "num_k_tiles", 1):
            group.try_wait()
            group.wait()
            acc.mma(group.member(a).read(), group.member(b).read())
            group.release()
        acc.commit()


@schedule
def epilogue_schedule(acc, output):
    """Drain the accumulator to global memory."""
    with domain_loop(0, "num_tiles", 1):
        acc.try_wait()
        acc.wait()
        val = acc.read()
        output.store(val=val)
        acc.release()


@schedule
def resadd_epilogue_schedule(output, group):
    """Merge consumer of accumulator and residual: D = C + R, one release."""
    with domain_loop(0, "num_tiles", 1):
        group.tmem_c.try_wait()
        group.tmem_c.wait()
        group.smem_r.try_wait()
        group.smem_r.wait()
        c = group.tmem_c.read()
        r = group.smem_r.read()
        output.store(val_c=c, val_r=r)
        group.release()


def _operands(num_stages, bm, bn, bk, dtype, names=("smem_a", "smem_b"), b_async=False):
    eb = DTYPE_BYTES[dtype]
    a = MemoryResource(names[0], create_tma_umma_pipeline_cfg(num_stages=num_stages, num_bytes=bm * bk * eb),
                       Compute("copy"), dtype, (bm, bk))
    b_cfg = (create_async_umma_pipeline_cfg(num_stages=num_stages, num_bytes=bn * bk * eb, producer_group=WARPGROUP,
                                            async_producer_op=AsyncProducerOp.AsyncLoad) if b_async
             else create_tma_umma_pipeline_cfg(num_stages=num_stages, num_bytes=bn * bk * eb))
    b = MemoryResource(names[1], b_cfg, Compute("copy"), dtype, (bn, bk))
    return a, b


def _accumulator(bm, bn, acc_stages=1, consumer=WARPGROUP):
    return TmemAccumulator("tmem_c", create_umma_async_pipeline_cfg(
        num_stages=acc_stages, num_bytes=bm * bn * 4, consumer_group=consumer), Compute("mma"), "float32", (bm, bn))


def _b_major(b_major: str | None, dtype: str) -> str:
    """Where B is stored: as asked, else N x K ("k") for float32 operands (the tensor cores read
    tf32 B K-major only) and K x N ("mn") for 16-bit ones."""
    return b_major or ("k" if dtype == "float32" else "mn")


def merge_gemm(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 3, bm: int = 128, bn: int | None = None,
               bk: int = 64, dtype: str = "float16", mode: PipelineGroupMode = PipelineGroupMode.Merge,
               b_producer: str = "tma", *, b_major: str | None = None, split_k: int = 1,
               cluster: tuple[int, int] = (1, 1), stream_k: bool = False, acc_stages: int = 1) -> Design:
    """D = A @ B (a Merge of the two operand tiles): LoadA, LoadB -> MMA (releases the group once) -> epilogue.

    Warp layout (sized for the H200's tensor cores): warpgroup 0 holds load_a (warp 0), load_b
    (warp 1) and the epilogue (warps 2..3); the MMA task is two warpgroups (warps 4..11, 64 rows
    of the 128 x 256 tile each, 128 fp32 accumulators per thread).  Twelve warps keep 168
    registers per thread, which the 128 accumulators need.  One accumulator stage: on sm_90a it
    is a shared-memory staging buffer, and the MMA only waits for it after a whole mainloop.
    ``b_producer="async"`` loads B with threads (cp.async: an AsyncUmma member next to the TmaUmma
    A, a heterogeneous Merge) from warpgroup 3, the epilogue moves to warpgroup 4, and BN
    defaults to 128 (the 20-warp block leaves 96 registers per thread).

    ``b_major`` (problem key): "mn" stores B K x N, "k" N x K (default: "k" for float32 operands,
    which run on the tf32 tensor cores, else "mn").  ``split_k`` > 1 cuts each output tile's K
    range into that many work units (problem key ``SPLIT_K``; for few output tiles, e.g. small M).
    ``cluster`` = (1, 2) pairs the blocks along N so each pair shares its A tile, half loaded by
    each block for both (TMA multicast; problem keys ``CLUSTER_M``, ``CLUSTER_N``); (2, 1) shares B.
    ``stream_k`` shares the tiles past the last full wave among all blocks by k tiles (problem key
    ``STREAM_K``): 3.9 waves of tiles take 3.9 rounds instead of 4.  ``acc_stages``: stages of the
    accumulator (on sm_90a, staging buffers); where whole tiles do not fit beside the operand
    stages each holds part of a tile, taken in turns (``smem_layout.Staging.turns``): four stages
    of 128 x 256 x 64 take a tile in two turns through one stage, or in four through two.
    """
    if b_producer not in ("tma", "async"):
        raise DesignError(f"b_producer is {b_producer!r}, expected 'tma' or 'async'", code="examples.b_producer")
    bn = bn or (256 if b_producer == "tma" else 128)
    gmem_a = GmemTensor("gmem_a", dtype=dtype)
    gmem_b = GmemTensor("gmem_b", dtype=dtype)
    smem_a, smem_b = _operands(num_stages, bm, bn, bk, dtype, b_async=b_producer == "async")
    is_async = b_producer == "async"
    tmem_c = _accumulator(bm, bn, acc_stages, consumer=WARPGROUP if is_async else CooperativeGroup(Agent.Warp, 2))
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", "tmem_c"), dtype=dtype)
    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=mode)
    mma = fused_mma_schedule if mode is PipelineGroupMode.FusedMerge else merge_mma_schedule
    tasks = [
        Task("mma", 4, 8, [smem_a, smem_b], [tmem_c], mma(tmem_c, ab)),
        Task("epilogue", 16 if is_async else 2, 4 if is_async else 2, [tmem_c], [gmem_d],
             epilogue_schedule(tmem_c, gmem_d)),
        Task("load_a", 0, 1, [gmem_a], [smem_a], gemm_load_schedule(gmem_a, ab.smem_a)),
        Task("load_b", 12 if is_async else 1, 4 if is_async else 1, [gmem_b], [smem_b],
             gemm_load_schedule(gmem_b, ab.smem_b)),
    ]
    name = ("fused_merge_gemm" if mode is PipelineGroupMode.FusedMerge else "merge_gemm") + \
        ("_async_b" if b_producer == "async" else "")
    return Design(name, [gmem_a, gmem_b, smem_a, smem_b, tmem_c, gmem_d],
                  {smem_a: [gmem_a], smem_b: [gmem_b], tmem_c: [smem_a, smem_b], gmem_d: [tmem_c]}, [ab], tasks,
                  gemm_problem(m, n, k, bm, bn, bk, dtype, b_major=_b_major(b_major, dtype), split_k=split_k,
                               cluster=cluster, stream_k=stream_k))


def fused_merge_gemm(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 3, bm: int = 128, bn: int = 256,
                     bk: int = 64, dtype: str = "float16", *, b_major: str | None = None, split_k: int = 1,
                     stream_k: bool = False) -> Design:
    """D = A @ B with A and B on one shared full and one shared empty barrier (2S barriers)."""
    return merge_gemm(m, n, k, num_stages, bm, bn, bk, dtype, PipelineGroupMode.FusedMerge, b_major=b_major,
                      split_k=split_k, stream_k=stream_k)


def merge_gemm_resadd(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 4, bm: int = 128,
                      bn: int = 128, bk: int = 64, dtype: str = "float16", *, b_major: str | None = None,
                      split_k: int = 1, compact: bool = False, stream_k: bool = False, turns: int = 1,
                      acc_stages: int = 1, drain_warps: int | None = None) -> Design:
    """D = A @ B + R: Merge A/B before the MMA, Merge accumulator/residual before the epilogue.

    Loaders in warpgroup 0, the MMA as two warpgroups (warps 4..11, 64 fp32 accumulators per
    thread at BN=128), the epilogue in warpgroup 3; the accumulator and the residual tile (one
    Merge) have ``acc_stages`` stages each.  ``compact=True`` puts the epilogue in warp 3 of
    warpgroup 0 (one warp), so the block has 12 warps and 168 registers per thread: room for the
    128 accumulators per thread of BN=256.

    ``turns`` = 2 or 4 stages the residual in column slices, (BM, BN / turns) each: the epilogue
    loads R in its own small pipeline, one slice per turn, and the accumulator's staging takes
    each tile in as many turns (``smem_layout.turn_slices``, sm_90a), so a 128 x 256 x 64
    mainloop keeps its operand stages (four stages beside quarter slices, three beside two stages
    of them) instead of giving them up for a whole residual tile.

    ``drain_warps`` (compact only): the epilogue's warps.  1 keeps a loader warp per tile and the
    epilogue in warp 3; 2 loads A and B with one warp (``merge_load_schedule``), the residual with
    the next, and drains with warps 2..3.  The default is 2 with slices, where each turn waits for
    the drain (on an H100, 8192 x 8192 x 1024 with R in 4 turns x 2: 4 % less time than one warp
    draining in place, 11 % less than one warp storing by threads; 1 % at K = 8192), else 1."""
    gmem_a, gmem_b, gmem_r = (GmemTensor(n_, dtype=dtype) for n_ in ("gmem_a", "gmem_b", "gmem_r"))
    smem_a, smem_b = _operands(num_stages, bm, bn, bk, dtype)
    if not residual_turns_ok(turns, bn):
        raise DesignError(f"merge_gemm_resadd(turns={turns!r}, bn={bn}): the residual comes in 1, 2 or 4 column "
                          "slices of BN", code="examples.turns",
                          hint="pass turns=1 (a whole residual tile), 2 or 4 with BN 128 or 256")
    if drain_warps is None:
        drain_warps = 2 if compact and turns > 1 else 1
    if drain_warps not in (1, 2) or (drain_warps == 2 and not compact):
        raise DesignError(f"merge_gemm_resadd(drain_warps={drain_warps!r}, compact={compact}): the compact layout's "
                          "epilogue has 1 or 2 warps; the other layout's is a warpgroup",
                          code="examples.drain_warps", hint="pass drain_warps=1, or 2 with compact=True")
    drain = CooperativeGroup(Agent.Warp, drain_warps) if compact else WARPGROUP
    tmem_c = _accumulator(bm, bn, acc_stages, consumer=drain)
    r_cols = bn // turns
    smem_r = MemoryResource("smem_r", create_tma_async_pipeline_cfg(
        num_stages=acc_stages, num_bytes=bm * r_cols * DTYPE_BYTES[dtype], consumer_group=drain), Compute("copy"),
        dtype, (bm, r_cols))
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", "tmem_c + smem_r"), dtype=dtype)
    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)
    cr = PipelineGroup(name="cr", members=[tmem_c, smem_r], mode=PipelineGroupMode.Merge)
    if drain_warps == 2:  # one warp loads A and B, the next R, warps 2..3 drain
        loads = [Task("load_ab", 0, 1, [gmem_a, gmem_b], [smem_a, smem_b], merge_load_schedule(gmem_a, gmem_b, ab))]
    else:
        loads = [Task("load_a", 0, 1, [gmem_a], [smem_a], gemm_load_schedule(gmem_a, ab.smem_a)),
                 Task("load_b", 1, 1, [gmem_b], [smem_b], gemm_load_schedule(gmem_b, ab.smem_b))]
    r_warp = len(loads)
    tasks = [
        Task("mma", 4, 8, [smem_a, smem_b], [tmem_c], merge_mma_schedule(cr.tmem_c, ab)),
        Task("epilogue", r_warp + 1 if compact else 12, drain_warps if compact else 4, [tmem_c, smem_r], [gmem_d],
             resadd_epilogue_schedule(gmem_d, cr)),
        *loads,
        Task("load_r", r_warp, 1, [gmem_r], [smem_r], load_schedule(gmem_r, cr.smem_r)),
    ]
    return Design("merge_gemm_resadd", [gmem_a, gmem_b, gmem_r, smem_a, smem_b, tmem_c, smem_r, gmem_d],
                  {smem_a: [gmem_a], smem_b: [gmem_b], smem_r: [gmem_r], tmem_c: [smem_a, smem_b],
                   gmem_d: [tmem_c, smem_r]}, [ab, cr], tasks,
                  gemm_problem(m, n, k, bm, bn, bk, dtype, b_major=_b_major(b_major, dtype), split_k=split_k,
                               stream_k=stream_k))


@schedule
def act_schedule(src, output):
    """The activation consumer of the forked A tile: D1 = relu(A), per k tile."""
    with domain_loop(0, "num_tiles", 1):
        with domain_loop(0, "num_k_tiles", 1):
            src.try_wait()
            src.wait()
            val = src.read()
            output.store(val=val)
            src.release()


@schedule
def fork_mma_schedule(acc, a, b):
    """MMA task of fork_gemm_act: A comes through the Fork, B through its own pipeline."""
    with domain_loop(0, "num_tiles", 1):
        acc.try_acquire()
        acc.acquire()
        with domain_loop(0, "num_k_tiles", 1):
            a.try_wait()
            a.wait()
            b.try_wait()
            b.wait()
            acc.mma(a.read(), b.read())
            a.release()
            b.release()
        acc.commit()


@schedule
def fork_gemm_load_schedule(src, group):
    """Load one A tile per k step into the Fork's one buffer and commit the group once."""
    first = group.members[0].name
    with domain_loop(0, "num_tiles", 1):
        with domain_loop(0, "num_k_tiles", 1):
            for m in group.member_names:
                group.member(m).try_acquire()
                group.member(m).acquire()
            group.member(first).load(src)
            group.commit()


def fork_gemm_act(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 3, bm: int = 128, bn: int = 128,
                  bk: int = 64, dtype: str = "float16", *, b_major: str | None = None, split_k: int = 1,
                  compact: bool = False, stream_k: bool = False) -> Design:
    """D0 = A @ B and D1 = relu(A) from one loaded A tile, forked to the MMA and to a ReLU task.

    Loaders in warpgroup 0, the MMA as two warpgroups (warps 4..11), the epilogue and the ReLU
    task in warpgroups 3 and 4.  ``compact=True`` puts the epilogue and the ReLU task in warps 2
    and 3 (one warp each): 12 warps, 168 registers per thread, room for BN=256.

    D1 does not depend on the N tile: every output tile's k loop forks A to the ReLU task, which
    waits on and releases every stage (the Fork's shared empty barrier needs it) and stores its
    N-tile column's slice of the k tile (1 / tiles_n of its rows), so D1 is written once, no load
    is spent on it, and the ReLU task never holds a stage longer than the MMA does."""
    eb = DTYPE_BYTES[dtype]
    drain = CooperativeGroup(Agent.Warp, 1) if compact else WARPGROUP
    gmem_a, gmem_b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)
    smem_a = MemoryResource("smem_a", create_tma_umma_pipeline_cfg(num_stages=num_stages, num_bytes=bm * bk * eb),
                            Compute("copy"), dtype, (bm, bk))
    smem_act = MemoryResource("smem_act", create_tma_async_pipeline_cfg(
        num_stages=num_stages, num_bytes=bm * bk * eb, consumer_group=drain), Compute("copy"), dtype, (bm, bk),
        aliases="smem_a")
    smem_b = MemoryResource("smem_b", create_tma_umma_pipeline_cfg(num_stages=num_stages, num_bytes=bn * bk * eb),
                            Compute("copy"), dtype, (bn, bk))
    tmem_c = _accumulator(bm, bn, consumer=drain)
    gmem_d0 = GmemTensor("gmem_d0", compute=Compute("store", "tmem_c"), dtype=dtype)
    gmem_d1 = GmemTensor("gmem_d1", compute=Compute("store", "max(smem_act, 0.f)"), dtype=dtype)
    fa = PipelineGroup(name="fa", members=[smem_a, smem_act], mode=PipelineGroupMode.Fork)
    tasks = [
        Task("mma", 4, 8, [smem_a, smem_b], [tmem_c], fork_mma_schedule(tmem_c, fa.smem_a, smem_b)),
        Task("epilogue", 2 if compact else 12, 1 if compact else 4, [tmem_c], [gmem_d0], epilogue_schedule(tmem_c, gmem_d0)),
        Task("act", 3 if compact else 16, 1 if compact else 4, [smem_act], [gmem_d1], act_schedule(fa.smem_act, gmem_d1)),
        Task("load_a", 0, 1, [gmem_a], [smem_a, smem_act], fork_gemm_load_schedule(gmem_a, fa)),
        Task("load_b", 1, 1, [gmem_b], [smem_b], gemm_load_schedule(gmem_b, smem_b)),
    ]
    return Design("fork_gemm_act", [gmem_a, gmem_b, smem_a, smem_act, smem_b, tmem_c, gmem_d0, gmem_d1],
                  {smem_a: [gmem_a], smem_act: [gmem_a], smem_b: [gmem_b], tmem_c: [smem_a, smem_b],
                   gmem_d0: [tmem_c], gmem_d1: [smem_act]}, [fa], tasks,
                  gemm_problem(m, n, k, bm, bn, bk, dtype, b_major=_b_major(b_major, dtype), split_k=split_k,
                               stream_k=stream_k))
