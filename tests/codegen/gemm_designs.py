"""The GEMM designs the tensor-core generator covers, by name (shared by codegen and runtime tests)."""

from pgstudio.examples import fork_gemm_act, fused_merge_gemm, merge_gemm, merge_gemm_resadd, ungrouped

BUILDERS = {
    "merge_gemm": merge_gemm,
    "fused_merge_gemm": fused_merge_gemm,
    "merge_gemm_resadd": merge_gemm_resadd,
    "fork_gemm_act": fork_gemm_act,
    "merge_gemm_async_b": lambda **kw: merge_gemm(b_producer="async", **kw),
}


def gemm_design(name: str, twin: bool = False, **kw):
    d = BUILDERS[name](**kw)
    return ungrouped(d) if twin else d


#: (name, twin) for every design and its ungrouped twin.
ALL = [(n, t) for n in BUILDERS for t in (False, True)]


def kernel_counts(design, arch: str) -> dict[int, int]:
    """Byte offset of every barrier slot -> the count the kernel must initialise it with: the
    layout's, except on sm_90a, where an umma release is one arrive per MMA warpgroup, so each
    set the MMA task releases counts (warpgroups - 1) more arrivals per release, from each block
    of its cluster.  Derived here from the resolved plan, not from the generator's own rule."""
    from pgstudio import barrier_layout
    from pgstudio.analysis.resolve import resolve
    layout = barrier_layout(design, arch)
    mma = next(t for t in design.tasks if t.schedule and any(s.op == "mma" for s in t.schedule.steps()))
    released: dict[str, int] = {}
    for rs in resolve(design, layout)[mma.name].steps():
        for a in rs.actions:
            if a.after_mma and a.role == "empty":
                released[a.set] = released.get(a.set, 0) + 1
    extra = mma.num_warps // 4 - 1 if arch == "sm_90a" else 0
    peers = {s.name: s.peers for s in layout.all_sets}
    return {s.offset: s.arrive_count + released.get(s.set, 0) * extra * peers[s.set] for s in layout.all_slots}


def _fp32_output(design):
    """``design`` with its output D stored as float32 (the epilogue writes fp32 from fp16 / bf16 operands)."""
    import dataclasses
    out = design.resource("gmem_d")
    return design.with_resource(dataclasses.replace(out, dtype="float32"), design.deps("gmem_d"))


#: Designs the generator builds beyond its first, narrower limits: BK=32
#: (64-byte swizzle panels), BM=64 with two MMA warpgroups splitting BN, tf32 operands, a float32
#: output, split-K, and the compact fused layouts at BN=256.  Name -> builder(**shape_and_dtype).
LIFTED = {
    "bk16": lambda **kw: merge_gemm(bk=16, num_stages=8, **kw),  # 32-byte swizzle panels
    "bk32": lambda **kw: merge_gemm(bk=32, num_stages=6, **kw),
    "bk32_b_k": lambda **kw: merge_gemm(bk=32, num_stages=6, b_major="k", **kw),
    "bk32_async_b_k": lambda **kw: merge_gemm(bk=32, num_stages=4, b_producer="async", b_major="k", **kw),
    "bm64_split_n": lambda **kw: merge_gemm(bm=64, bn=256, **kw),
    "bm64_bn128": lambda **kw: merge_gemm(bm=64, bn=128, num_stages=4, **kw),
    "fp32_out": lambda **kw: _fp32_output(merge_gemm(bn=128, num_stages=4, **kw)),
    "split_k2": lambda **kw: merge_gemm(bn=128, num_stages=4, split_k=2, **kw),
    "split_k4": lambda **kw: merge_gemm(split_k=4, **kw),
    "resadd_split_k3": lambda **kw: merge_gemm_resadd(split_k=3, **kw),
    "fork_split_k2": lambda **kw: fork_gemm_act(split_k=2, **kw),
    "resadd_compact": lambda **kw: merge_gemm_resadd(compact=True, bn=256, bk=32, **kw),
    "fork_compact": lambda **kw: fork_gemm_act(compact=True, bn=256, **kw),
    # stream-K: the tiles past the last full wave shared among the blocks by k tiles
    "stream_k": lambda **kw: merge_gemm(stream_k=True, **kw),
    "stream_k_bn128": lambda **kw: merge_gemm(bn=128, num_stages=4, stream_k=True, **kw),
    "resadd_stream_k": lambda **kw: merge_gemm_resadd(stream_k=True, **kw),
    "fork_stream_k": lambda **kw: fork_gemm_act(compact=True, bn=256, stream_k=True, **kw),
    # clusters of two blocks: pairs along N share A, along M share B (TMA multicast, both release)
    "cluster_n2": lambda **kw: merge_gemm(cluster=(1, 2), **kw),
    "cluster_n2_bn128": lambda **kw: merge_gemm(bn=128, num_stages=4, cluster=(1, 2), **kw),  # odd tile columns
    "cluster_m2": lambda **kw: merge_gemm(cluster=(2, 1), **kw),
    "cluster_m2_b_k": lambda **kw: merge_gemm(bk=32, num_stages=6, b_major="k", cluster=(2, 1), **kw),
    # the accumulator's staging takes each tile in turns (smem_layout.Staging.turns), leaving room for a
    # fourth 128 x 256 x 64 stage: two turns of half a tile, four through two stages of a quarter
    "turns2": lambda **kw: merge_gemm(num_stages=4, **kw),
    "turns4": lambda **kw: merge_gemm(num_stages=4, acc_stages=2, **kw),
    "turns2_cluster_n2": lambda **kw: merge_gemm(num_stages=4, cluster=(1, 2), **kw),
    "turns2_stream_k": lambda **kw: merge_gemm(num_stages=4, stream_k=True, **kw),
    "fork_turns2": lambda **kw: fork_gemm_act(compact=True, bn=256, num_stages=4, **kw),
    # BM = 64: the two MMA warpgroups split BN, so each turn's columns are one warpgroup's
    "turns2_bm64": lambda **kw: merge_gemm(bm=64, bn=256, num_stages=5, **kw),
    # the residual in column slices (smem_layout.turn_slices): loaded a slice per turn beside the staging
    "resadd_turns4": lambda **kw: merge_gemm_resadd(compact=True, bn=256, num_stages=4, turns=4, **kw),
    "resadd_turns4_acc2": lambda **kw: merge_gemm_resadd(compact=True, bn=256, num_stages=3, turns=4, acc_stages=2, **kw),
    "resadd_turns4_acc2_drain1": lambda **kw: merge_gemm_resadd(compact=True, bn=256, num_stages=3, turns=4, acc_stages=2,
                                                                drain_warps=1, **kw),
    "resadd_turns2": lambda **kw: merge_gemm_resadd(compact=True, bn=256, num_stages=3, turns=2, **kw),
    "resadd_turns2_bn128": lambda **kw: merge_gemm_resadd(num_stages=4, turns=2, **kw),
    "resadd_turns2_bm64": lambda **kw: merge_gemm_resadd(compact=True, bm=64, bn=256, num_stages=4, turns=2, **kw),
    "resadd_turns4_stream_k": lambda **kw: merge_gemm_resadd(compact=True, bn=256, num_stages=4, turns=4, stream_k=True,
                                                             **kw),
}
#: tf32 (float32 operands; B stored N x K): name -> builder(**shape).
LIFTED_TF32 = {
    "tf32_bk8": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=8, num_stages=8, **kw),  # 32-byte panels
    "tf32_bk16": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=16, num_stages=6, **kw),  # 64-byte panels
    "tf32_bk32": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=32, num_stages=4, **kw),
    "tf32_bk64": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=64, num_stages=2, **kw),
    "tf32_async_b": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=32, num_stages=3, b_producer="async", **kw),
    "tf32_resadd": lambda **kw: merge_gemm_resadd(dtype="float32", bk=32, num_stages=3, **kw),
    "tf32_bm64_split_k2": lambda **kw: merge_gemm(dtype="float32", bm=64, bn=128, bk=32, num_stages=4, split_k=2, **kw),
    "tf32_cluster_n2": lambda **kw: merge_gemm(dtype="float32", bn=128, bk=32, num_stages=4, cluster=(1, 2), **kw),
}
