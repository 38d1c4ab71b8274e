"""The canonical designs, by name.  Each function returns a valid ``Design``.

Streaming designs (``merge_copy``, ``fork_copy``, ``fused_merge_copy``) move 1-D tiles of
``tile_bytes`` through ``num_stages`` stages; GEMM designs follow the warp-specialised GEMM
mainloop: LoadA and LoadB fill smem_a / smem_b, one MMA task consumes both into a tensor-memory
accumulator that an epilogue drains.  ``ungrouped(design)`` gives the per-resource-barrier twin of any of them.
"""

from __future__ import annotations

from typing import Callable

from .model.capture import domain_loop, schedule
from .errors import DesignError
from .model.config import (CooperativeGroup, create_async_async_pipeline_cfg, create_async_umma_pipeline_cfg,
                           create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg,
                           create_umma_async_pipeline_cfg)
from .model.derive import adopt_derived
from .model.design import Design
from .model.edits import blank_design
from .model.group import PipelineGroup
from .model.kinds import Agent, AsyncProducerOp
from .model.problem import gemm_problem, stream_problem
from .model.protocol import PipelineGroupMode, is_group_op
from .model.resource import Compute, GmemTensor, MemoryResource, TmemAccumulator
from .model.targets import DATA_ALIGN, DTYPE_BYTES, SMEM_CAPACITY
from .model.task import Task
from .model.ungroup import ungrouped

WARPGROUP = CooperativeGroup(Agent.Warp, 4)
ONE = CooperativeGroup(Agent.Thread, 1)

# -- schedules shared by the designs (group members reached as group.member) --------------------


@schedule
def load_schedule(src, dst):
    """A tma producer: acquire the stage, copy one tile into it, commit."""
    with domain_loop(0, "num_tiles", 1):
        dst.try_acquire()
        dst.acquire()
        dst.load(src)
        dst.commit()


@schedule
def merge_store_schedule(output, group):
    """A Merge consumer: wait each member, read both, store, release the group once."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        group.member(a).try_wait()
        group.member(a).wait()
        group.member(b).try_wait()
        group.member(b).wait()
        val_a = group.member(a).read()
        val_b = group.member(b).read()
        output.store(val_a=val_a, val_b=val_b)
        group.release()


@schedule
def fused_store_schedule(output, group):
    """The FusedMerge consumer: one collapsed wait and one collapsed release."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        group.try_wait()
        group.wait()
        val_a = group.member(a).read()
        val_b = group.member(b).read()
        output.store(val_a=val_a, val_b=val_b)
        group.release()


@schedule
def fork_load_schedule(src, group):
    """A Fork producer: acquire each member, load once (one buffer), commit the group once."""
    first = group.members[0].name
    with domain_loop(0, "num_tiles", 1):
        for m in group.member_names:
            group.member(m).try_acquire()
            group.member(m).acquire()
        group.member(first).load(src)
        group.commit()


@schedule
def consume_store_schedule(src, output):
    """An async consumer: wait, read, store to global memory, release."""
    with domain_loop(0, "num_tiles", 1):
        src.try_wait()
        src.wait()
        val = src.read()
        output.store(val=val)
        src.release()


def _stream_tiles(names, num_stages, tile_bytes, dtype, consumer=WARPGROUP, aliases=None):
    out = []
    for i, n in enumerate(names):
        cfg = create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, consumer_group=consumer)
        out.append(MemoryResource(n, cfg, Compute("copy"), dtype, (tile_bytes // DTYPE_BYTES[dtype],),
                                  aliases if i and aliases else None))
    return out


def merge_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
               num_elements: int = 1 << 24, mode: PipelineGroupMode = PipelineGroupMode.Merge) -> Design:
    """D = A + B: LoadA and LoadB tasks fill smem_a / smem_b; one store task reads both, stores
    D and releases the Merge group once."""
    gmem_a, gmem_b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)
    smem_a, smem_b = _stream_tiles(["smem_a", "smem_b"], num_stages, tile_bytes, dtype)
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", "smem_a + smem_b"), dtype=dtype)
    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=mode)
    store = fused_store_schedule if mode is PipelineGroupMode.FusedMerge else merge_store_schedule
    tasks = [
        Task("load_a", 0, 1, [gmem_a], [smem_a], load_schedule(gmem_a, ab.smem_a)),
        Task("load_b", 1, 1, [gmem_b], [smem_b], load_schedule(gmem_b, ab.smem_b)),
        Task("store", 4, 4, [smem_a, smem_b], [gmem_d], store(gmem_d, ab)),
    ]
    name = "fused_merge_copy" if mode is PipelineGroupMode.FusedMerge else "merge_copy"
    return Design(name, [gmem_a, gmem_b, smem_a, smem_b, gmem_d],
                  {smem_a: [gmem_a], smem_b: [gmem_b], gmem_d: [smem_a, smem_b]}, [ab], tasks,
                  stream_problem(num_elements, tile_bytes, dtype))


def fused_merge_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
                     num_elements: int = 1 << 24) -> Design:
    """D = A + B with both barrier sides shared: 2S barriers."""
    return merge_copy(num_stages, tile_bytes, dtype, num_elements, PipelineGroupMode.FusedMerge)


def fork_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
              num_elements: int = 1 << 24) -> Design:
    """One load fills smem_x (viewed also as smem_y); two consumer tasks store D0 = x and
    D1 = max(y, 0)."""
    gmem_a = GmemTensor("gmem_a", dtype=dtype)
    smem_x, smem_y = _stream_tiles(["smem_x", "smem_y"], num_stages, tile_bytes, dtype, aliases="smem_x")
    gmem_d0 = GmemTensor("gmem_d0", compute=Compute("store", "smem_x"), dtype=dtype)
    gmem_d1 = GmemTensor("gmem_d1", compute=Compute("store", "max(smem_y, 0.f)"), dtype=dtype)
    xy = PipelineGroup(name="xy", members=[smem_x, smem_y], mode=PipelineGroupMode.Fork)
    tasks = [
        Task("load", 0, 1, [gmem_a], [smem_x, smem_y], fork_load_schedule(gmem_a, xy)),
        Task("copy_out", 4, 4, [smem_x], [gmem_d0], consume_store_schedule(xy.smem_x, gmem_d0)),
        Task("relu_out", 8, 4, [smem_y], [gmem_d1], consume_store_schedule(xy.smem_y, gmem_d1)),
    ]
    return Design("fork_copy", [gmem_a, smem_x, smem_y, gmem_d0, gmem_d1],
                  {smem_x: [gmem_a], smem_y: [gmem_a], gmem_d0: [smem_x], gmem_d1: [smem_y]}, [xy], tasks,
                  stream_problem(num_elements, tile_bytes, dtype))


# -- generated designs: chains of groups ----------------------------------------------------------

#: The deepest chain: one loader, one task per later group and one store task, one warp each,
#: in a block of at most 32 warps (1024 threads).
MAX_CHAIN_GROUPS = 31
#: The widest chain group (members per group; 31 groups of 8 make a 251-resource design).
MAX_CHAIN_WIDTH = 16
WARP = CooperativeGroup(Agent.Warp, 1)


def _sync_all(group, *ops):
    """``ops`` (a probe and its blocking op, or a signal) once on the group object where the
    protocol table collapses them for the group's mode, else on each member."""
    if is_group_op(group.mode, ops[-1]):
        for op in ops:
            getattr(group, op)()
        return
    for m in group.member_names:
        for op in ops:
            getattr(group.member(m), op)()


def _wait_all(group):
    """Consumer side of a chain group: wait (once, or per member)."""
    _sync_all(group, "try_wait", "wait")


def _release_all(group):
    """Consumer side of a chain group: release (once, or per member)."""
    _sync_all(group, "release")


def _fill_all(group, *srcs):
    """Producer side: acquire every member, fill each from ``srcs`` (one source each, or all of
    them for every member), commit per member or once (where the group object takes commit)."""
    once = is_group_op(group.mode, "commit")
    for i, m in enumerate(group.member_names):
        member = group.member(m)
        member.try_acquire()
        member.acquire()
        member.load(*(srcs[i:i + 1] if len(srcs) == len(group.members) else srcs))
        if not once:
            member.commit()
    if once:
        group.commit()


@schedule
def chain_load_schedule(group, a, b):
    """The chain's head: one elected thread bulk-copies gmem_a and gmem_b into group 0 (a wider
    group's members copy them in turn)."""
    with domain_loop(0, "num_tiles", 1):
        _fill_all(group, *((a, b)[i % 2] for i in range(len(group.members))))


@schedule
def chain_step_schedule(prev, nxt):
    """One link of the chain: wait for group k-1, compute group k from it, release group k-1."""
    with domain_loop(0, "num_tiles", 1):
        _wait_all(prev)
        vals = [prev.member(m).read() for m in prev.member_names]
        _fill_all(nxt, *vals)
        _release_all(prev)


@schedule
def chain_store_schedule(prev, output):
    """The chain's tail: wait for the last group, store D from both members, release."""
    with domain_loop(0, "num_tiles", 1):
        _wait_all(prev)
        vals = [prev.member(m).read() for m in prev.member_names]
        output.store(*vals)
        _release_all(prev)


def _chain_tile_bytes(n_groups: int, num_stages: int, dtype: str, width: int = 2) -> int:
    """The largest power-of-two tile (16 B .. 4 KiB) whose buffers and barriers fit in shared memory."""
    barriers = (width + 1) * n_groups * num_stages * 8
    tile = 4096

    def buffer(t: int) -> int:  # each buffer starts on a DATA_ALIGN boundary
        return -(-num_stages * t // DATA_ALIGN) * DATA_ALIGN
    while tile > 16 and width * n_groups * buffer(tile) + barriers + 1024 > SMEM_CAPACITY:
        tile //= 2
    return max(tile, 16, DTYPE_BYTES.get(dtype, 4))


def chain(n_groups: int, mode: PipelineGroupMode | str = PipelineGroupMode.Merge, num_stages: int = 4,
          tile_bytes: int | None = None, dtype: str = "float32", num_elements: int = 1 << 22,
          width: int = 2) -> Design:
    """A generated design: a chain of ``n_groups`` two-member groups, each computed from the one before.

    Group 0 (``s0_a``, ``s0_b``) is bulk-copied from ``gmem_a`` / ``gmem_b`` by one elected
    thread; task ``step_k`` waits for group k-1 and fills group k from both of its members,
    ``sk_a = a + b`` and ``sk_b = 0.5 (b - a)``; task ``store`` writes ``gmem_d = a + b`` of the
    last group.  That step has determinant 1 and eigenvalues exp(+-i acos(3/4)), an irrational
    rotation, so values neither grow nor repeat with depth (|step^k| < 1.7 for every k), and
    with power-of-two factors the float result does not depend on FMA contraction: the kernel
    and the reference agree bit for bit in every dtype, however deep the chain.  Every task is one warp, so a block holds at most
    ``MAX_CHAIN_GROUPS`` groups.  ``mode`` (Merge, Fork or FusedMerge) applies to every group.
    ``tile_bytes=None`` picks the largest power-of-two tile up to 4 KiB whose stages fit in
    shared memory.  Chains exist to measure how analysis and code generation scale with the
    depth of a design, and to exercise every group mode at depth.

    ``width`` > 2 makes each group ``width`` members wide (``s{k}_a``, ``s{k}_b``, ``s{k}_c`` ...),
    member i computed as ``0.5 (p_i + p_{i+1})`` of the group before (a mean: values stay in
    range, and with a power-of-two factor stay exact); group 0's members copy ``gmem_a`` and
    ``gmem_b`` in turn and ``gmem_d`` sums the last group.  31 groups of 8 make a design of 251
    resources: the scale benchmark's largest (``benchmarks/scale.py``).  Each buffer takes at least
    ``DATA_ALIGN`` bytes, so 31 groups of 7 (220 resources) is the widest chain that fits in shared
    memory; ``validate()`` reports a wider one (``smem.capacity``).
    """
    if isinstance(mode, str):
        try:
            mode = PipelineGroupMode[mode]
        except KeyError:
            raise DesignError(f"chain mode is {mode!r}, expected one of "
                              f"{', '.join(m.name for m in PipelineGroupMode)}", code="examples.chain") from None
    if isinstance(n_groups, bool) or not isinstance(n_groups, int) or not 1 <= n_groups <= MAX_CHAIN_GROUPS:
        raise DesignError(f"chain of {n_groups!r} groups: expected an integer from 1 to {MAX_CHAIN_GROUPS} "
                          f"(one warp per task: a loader, {MAX_CHAIN_GROUPS - 1} steps and a store fill a "
                          f"32-warp block)", code="examples.chain")
    if dtype not in DTYPE_BYTES:
        raise DesignError(f"chain dtype is {dtype!r}, expected one of {', '.join(DTYPE_BYTES)}", code="examples.chain")
    if isinstance(width, bool) or not isinstance(width, int) or not 2 <= width <= MAX_CHAIN_WIDTH:
        raise DesignError(f"chain width {width!r}: expected an integer from 2 to {MAX_CHAIN_WIDTH} members per group",
                          code="examples.chain")
    tile_bytes = _chain_tile_bytes(n_groups, num_stages, dtype, width) if tile_bytes is None else tile_bytes
    tile = (tile_bytes // DTYPE_BYTES[dtype],)
    gmem_a, gmem_b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)

    def member(name: str, expr: str | None):
        if expr is None:
            cfg = create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, consumer_group=WARP)
            return MemoryResource(name, cfg, Compute("copy"), dtype, tile)
        cfg = create_async_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, producer_group=WARP,
                                              consumer_group=WARP)
        return MemoryResource(name, cfg, Compute("elementwise", expr), dtype, tile)

    letters = "abcdefghijklmnop"[:width]
    ms = [member(f"s0_{x}", None) for x in letters]
    group = PipelineGroup(name="g0", members=ms, mode=mode)
    resources, deps = [gmem_a, gmem_b, *ms], {m: [(gmem_a, gmem_b)[i % 2]] for i, m in enumerate(ms)}
    groups = [group]
    tasks = [Task("load", 0, 1, [gmem_a, gmem_b], ms, chain_load_schedule(group, gmem_a, gmem_b))]
    for k in range(1, n_groups):
        ps, prev = ms, group
        if width == 2:
            pa, pb = ps
            ms = [member(f"s{k}_a", f"{pa.name} + {pb.name}"), member(f"s{k}_b", f"0.5f * ({pb.name} - {pa.name})")]
            deps.update({m: list(ps) for m in ms})
        else:
            ms = [member(f"s{k}_{x}", f"0.5f * ({ps[i].name} + {ps[(i + 1) % width].name})") for i, x in enumerate(letters)]
            deps.update({m: [ps[i], ps[(i + 1) % width]] for i, m in enumerate(ms)})
        group = PipelineGroup(name=f"g{k}", members=ms, mode=mode)
        resources += ms
        groups.append(group)
        tasks.append(Task(f"step_{k}", k, 1, ps, ms, chain_step_schedule(prev, group)))
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", " + ".join(m.name for m in ms)), dtype=dtype)
    resources.append(gmem_d)
    deps[gmem_d] = list(ms)
    tasks.append(Task("store", n_groups, 1, ms, [gmem_d], chain_store_schedule(group, gmem_d)))
    name = f"chain_{mode.name.lower()}_{n_groups}" + (f"x{width}" if width != 2 else "")
    return Design(name, resources, deps, groups, tasks, stream_problem(num_elements, tile_bytes, dtype))


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
               cluster: tuple[int, int] = (1, 1)) -> Design:
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
    """
    if b_producer not in ("tma", "async"):
        raise DesignError(f"b_producer is {b_producer!r}, expected 'tma' or 'async'", code="examples.b_producer")
    bn = bn or (256 if b_producer == "tma" else 128)
    gmem_a = GmemTensor("gmem_a", dtype=dtype)
    gmem_b = GmemTensor("gmem_b", dtype=dtype)
    smem_a, smem_b = _operands(num_stages, bm, bn, bk, dtype, b_async=b_producer == "async")
    is_async = b_producer == "async"
    tmem_c = _accumulator(bm, bn, consumer=WARPGROUP if is_async else CooperativeGroup(Agent.Warp, 2))
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
                               cluster=cluster))


def fused_merge_gemm(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 3, bm: int = 128, bn: int = 256,
                     bk: int = 64, dtype: str = "float16", *, b_major: str | None = None, split_k: int = 1) -> Design:
    """D = A @ B with A and B on one shared full and one shared empty barrier (2S barriers)."""
    return merge_gemm(m, n, k, num_stages, bm, bn, bk, dtype, PipelineGroupMode.FusedMerge, b_major=b_major,
                      split_k=split_k)


def merge_gemm_resadd(m: int = 4096, n: int = 4096, k: int = 4096, num_stages: int = 4, bm: int = 128,
                      bn: int = 128, bk: int = 64, dtype: str = "float16", *, b_major: str | None = None,
                      split_k: int = 1, compact: bool = False) -> Design:
    """D = A @ B + R: Merge A/B before the MMA, Merge accumulator/residual before the epilogue.

    Loaders in warpgroup 0, the MMA as two warpgroups (warps 4..11, 64 fp32 accumulators per
    thread at BN=128), the epilogue in warpgroup 3; the accumulator and the residual tile (one
    Merge) have one stage each.  ``compact=True`` puts the epilogue in warp 3 of warpgroup 0
    (one warp), so the block has 12 warps and 168 registers per thread: room for the 128
    accumulators per thread of BN=256."""
    gmem_a, gmem_b, gmem_r = (GmemTensor(n_, dtype=dtype) for n_ in ("gmem_a", "gmem_b", "gmem_r"))
    smem_a, smem_b = _operands(num_stages, bm, bn, bk, dtype)
    drain = CooperativeGroup(Agent.Warp, 1) if compact else WARPGROUP
    tmem_c = _accumulator(bm, bn, consumer=drain)
    smem_r = MemoryResource("smem_r", create_tma_async_pipeline_cfg(
        num_stages=1, num_bytes=bm * bn * DTYPE_BYTES[dtype], consumer_group=drain), Compute("copy"), dtype, (bm, bn))
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", "tmem_c + smem_r"), dtype=dtype)
    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)
    cr = PipelineGroup(name="cr", members=[tmem_c, smem_r], mode=PipelineGroupMode.Merge)
    tasks = [
        Task("mma", 4, 8, [smem_a, smem_b], [tmem_c], merge_mma_schedule(cr.tmem_c, ab)),
        Task("epilogue", 3 if compact else 12, 1 if compact else 4, [tmem_c, smem_r], [gmem_d],
             resadd_epilogue_schedule(gmem_d, cr)),
        Task("load_a", 0, 1, [gmem_a], [smem_a], gemm_load_schedule(gmem_a, ab.smem_a)),
        Task("load_b", 1, 1, [gmem_b], [smem_b], gemm_load_schedule(gmem_b, ab.smem_b)),
        Task("load_r", 2, 1, [gmem_r], [smem_r], load_schedule(gmem_r, cr.smem_r)),
    ]
    return Design("merge_gemm_resadd", [gmem_a, gmem_b, gmem_r, smem_a, smem_b, tmem_c, smem_r, gmem_d],
                  {smem_a: [gmem_a], smem_b: [gmem_b], smem_r: [gmem_r], tmem_c: [smem_a, smem_b],
                   gmem_d: [tmem_c, smem_r]}, [ab, cr], tasks,
                  gemm_problem(m, n, k, bm, bn, bk, dtype, b_major=_b_major(b_major, dtype), split_k=split_k))


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
                  compact: bool = False) -> Design:
    """D0 = A @ B and D1 = relu(A) from one loaded A tile, forked to the MMA and to a ReLU task.

    Loaders in warpgroup 0, the MMA as two warpgroups (warps 4..11), the epilogue and the ReLU
    task in warpgroups 3 and 4.  ``compact=True`` puts the epilogue and the ReLU task in warps 2
    and 3 (one warp each): 12 warps, 168 registers per thread, room for BN=256.

    D1 does not depend on the N tile: every output tile's k loop forks A to the ReLU task, which
    waits on and releases every stage (the Fork's shared empty barrier needs it) but stores only
    in the first N-tile column, so D1 is written once and no load is spent on it."""
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
                  gemm_problem(m, n, k, bm, bn, bk, dtype, b_major=_b_major(b_major, dtype), split_k=split_k))


#: Every canonical design by name.
CANONICAL: dict[str, Callable[..., Design]] = {
    "merge_copy": merge_copy,
    "fork_copy": fork_copy,
    "fused_merge_copy": fused_merge_copy,
    "merge_gemm": merge_gemm,
    "merge_gemm_resadd": merge_gemm_resadd,
    "fork_gemm_act": fork_gemm_act,
    "fused_merge_gemm": fused_merge_gemm,
}
#: The streaming (copy / elementwise) designs the streaming code generator covers.
STREAMING = ("merge_copy", "fork_copy", "fused_merge_copy")


#: What "New design" offers: a label -> the canonical design it starts from (None: an empty design).
TEMPLATES: dict[str, str | None] = {
    "Streaming Merge: D = A + B": "merge_copy",
    "Streaming Fork: D0 = A, D1 = relu(A)": "fork_copy",
    "Streaming FusedMerge: D = A + B": "fused_merge_copy",
    "GEMM mainloop: D = A @ B": "merge_gemm",
    "GEMM + residual: D = A @ B + R": "merge_gemm_resadd",
    "Fork GEMM + activation": "fork_gemm_act",
    "Empty design": None,
}


def template(label: str) -> Design:
    """A new design from one of ``TEMPLATES``: problem shape, dtypes, warpgroups and groups of the
    canonical design, with schedules that follow the design (derived: a mode switch re-derives them)."""
    if label not in TEMPLATES:
        raise DesignError(f"no template named {label!r}; templates: {', '.join(TEMPLATES)}", code="examples.unknown")
    name = TEMPLATES[label]
    return blank_design() if name is None else adopt_derived(example(name))


def example(name: str, **kwargs) -> Design:
    """A canonical design by name (``pgstudio.examples.example("merge_copy")``)."""
    if name not in CANONICAL:
        from .errors import DesignError
        raise DesignError(f"no example named {name!r}; examples: {', '.join(CANONICAL)}", code="examples.unknown")
    return CANONICAL[name](**kwargs)


__all__ = [*CANONICAL, "CANONICAL", "MAX_CHAIN_GROUPS", "MAX_CHAIN_WIDTH", "STREAMING", "TEMPLATES", "chain", "example",
           "template", "ungrouped"]
