"""The sm_100a (Blackwell) side of a GEMM kernel: tcgen05.mma into tensor memory.

On sm_100a (``tcgen05.py``) the umma steps are tensor-memory allocation (one warp of the MMA task,
before the role branches; freed after them), tcgen05.mma issued by one thread, and
commit-to-mbarrier: an umma release is ``tcgen05.commit`` to the empty barrier, the producer
commit is ``tcgen05.commit`` to the stage's ``mma_done`` barrier, after which the MMA warpgroup
copies tensor memory to the staging buffer and one elected thread arrives on the full barrier.
"""

from __future__ import annotations

from . import tcgen05
from .code import MMA_BAR_ID
from .epilogue import packed
from .swizzle import unit_addr

#: How the kernel's header comment describes the umma mapping on sm_100a.
MAP_SM100 = """umma on sm_100a: one thread issues tcgen05.mma into tensor memory; an
// umma release = tcgen05.commit to the empty mbarrier (arrives once the MMAs read the stage); the
// producer commit = tcgen05.commit to mma_done, then the MMA warpgroup copies tensor memory to the
// {stage} staging buffer with tcgen05.ld and one elected thread arrives on the full barrier."""


def _tmem_columns(p) -> int:
    return tcgen05.tmem_columns(p.bn, p.design.resource(p.acc).pipeline_config.num_stages)


def mma_done(p):
    """The accumulator's ``mma_done`` set of the layout (``barrier_layout.internal_sets``)."""
    return p.layout.internal_for(p.acc, "mma_done")


def xbar_offset(p, stage: int) -> int:
    """Bytes from ``xbar`` (the end of the pipeline barriers) to ``mma_done[stage]``."""
    return p.layout.slot(mma_done(p).name, stage).offset - p.layout.num_bytes


def tmem_setup(c, p) -> None:
    """Kernel scope, before the CTA barrier: the mma_done barriers (the layout's slots and
    counts) and the tensor-memory allocation."""
    done = mma_done(p)
    c(f"const u32 xbar = bar0 + {p.layout.num_bytes}u;  // sm_100a extras: TMEM address slot, mma_done[stages]")
    with c.block("if (threadIdx.x == 0)"):
        for st in range(done.stages):
            c(f"pg_mbar_init(xbar + {xbar_offset(p, st)}u, {p.layout.slot(done.name, st).arrive_count}u);  "
              f"// mma_done[{st}]: tcgen05.commit of the tile's MMAs")
        c("pg_mbar_init_fence();")
    c(f"if (warp == {p.mma_task.warp_idx}) tmem_alloc(xbar, {_tmem_columns(p)}u);  // the accumulator's tensor memory",
      "tc_fence_before();")


def tmem_base(c) -> None:
    """Kernel scope, after the CTA barrier: every thread reads the allocated address."""
    c("tc_fence_after();", "const u32 tmem_base = ld_shared_u32(xbar);")


def tmem_teardown(c, p) -> None:
    """Kernel scope, after the role branches: every task is done with tensor memory; free it."""
    c("tc_fence_before();", "__syncthreads();")
    with c.block(f"if (warp == {p.mma_task.warp_idx})"):
        c("tc_fence_after();", f"tmem_dealloc(tmem_base, {_tmem_columns(p)}u);")


class Sm100Steps:
    """The tcgen05 steps of the MMA task (mixed into ``task.Task``)."""

    def umma_k_tile(self, acc: str, a_st: str, b_st: str, offsets: tuple[str, str, str, str]) -> None:
        """One k tile of tcgen05.mma, issued by one thread into accumulator stage ``s_<acc>``."""
        p, c = self.p, self.c
        ta, tb = p.tiles[p.a], p.tiles[p.b]
        a_off, b_off, lbo_b, sbo_b = offsets
        ma, mb_ = tcgen05.SWIZZLE_MODE[ta.panel], tcgen05.SWIZZLE_MODE[tb.panel]
        idesc = tcgen05.instr_desc(128, p.bn, p.dtype, 1 if p.b_major == "mn" else 0)
        issue = f"umma_{tcgen05.KIND[p.dtype]}"
        c(f"const u32 a_st = {a_st}, b_st = {b_st};", "tc_fence_after();")
        with c.block("if (tt == 0)"):
            c("#pragma unroll")
            with c.block(f"for (int kk = 0; kk < {p.k_steps}; ++kk)"):
                c(f"const u64 da = umma_desc(a_st + {a_off}, 16u, {8 * ta.panel}u, {ma}u);",
                  f"const u64 db = umma_desc(b_st + {b_off}, {lbo_b}, {sbo_b}, {mb_}u);",
                  f"{issue}(tmem_base + (u32)s_{acc} * {p.bn}u, da, db, {idesc}u, (kt > 0 || kk > 0) ? 1u : 0u);")

    def stage_tmem(self, full) -> None:
        """sm_100a: the MMAs' completion is committed to this stage's ``mma_done`` barrier; the
        task's warpgroup then copies tensor memory (warp w%4 reads lanes 32*(w%4)..) to the
        staging buffer, so an epilogue of any width can drain it; one elected arrive follows."""
        c, p = self.c, self.p
        st = p.staging
        v = self.v(full.cursor)
        done = f"(xbar + {xbar_offset(p, 0)}u + 8u * (u32)s_{v})"  # the layout's mma_done[s]
        # mma_done[s] completes its phase 0 first: the opposite parity of the producer cursor,
        # whose phase starts at 1 (START_PHASE)
        c(f"if (tt == 0) umma_commit({done});  // arrives once every MMA of this tile completed")
        probe = self.ins.probe(done, f"ph_{v} ^ 1u") if self.ins else ""
        if probe:  # instrumented: did the MMAs of this tile still run when the copy-out began?
            c(probe)
        c(f"if (!wd_wait({done}, ph_{v} ^ 1u, wd_abort, wd_diag, wd_budget_ns, -1, s_{v}, tile, kt, {self.i})) "
          f"goto {self.label};",
          "tc_fence_after();",
          f"const u32 stg = base + {st.offset}u + (u32)s_{v} * {st.stage_bytes}u;",
          "const int row = 32 * (warp & 3) + lane;  // TMEM lane = tile row", "#pragma unroll 1")
        with c.block(f"for (int j = 0; j < {p.bn // 8}; ++j)"):
            c("float v[8];", f"tmem_ld8(tmem_base + ((u32)(32 * (warp & 3)) << 16) + (u32)s_{v} * {p.bn}u + 8u * (u32)j, v);")
            if st.dtype == "float32":
                c(f"st_shared_v4(stg + (u32)row * {st.pitch}u + (u32)j * 32u, make_uint4(__float_as_uint(v[0]), "
                  "__float_as_uint(v[1]), __float_as_uint(v[2]), __float_as_uint(v[3])));",
                  f"st_shared_v4(stg + (u32)row * {st.pitch}u + (u32)j * 32u + 16u, make_uint4(__float_as_uint(v[4]), "
                  "__float_as_uint(v[5]), __float_as_uint(v[6]), __float_as_uint(v[7])));")
            else:
                d = st.dtype
                at = (unit_addr("stg", st.panel, st.panel_stride, "row", "(u32)j * 16u") if st.swizzled
                      else f"stg + (u32)row * {st.pitch}u + (u32)j * 16u")
                c(f"st_shared_v4({at}, {packed('v', d)});")
        if p.tma_stores:
            c("fence_proxy_async();  // the staging writes -> the TMA engine that stores them")
        c("tc_fence_before();", "__threadfence_block();", f"named_bar_sync({MMA_BAR_ID}, 128);",
          f"if (tt == 0) pg_mbar_arrive({self.addr(full)});  // umma commit: results in place")


__all__ = ["MAP_SM100", "Sm100Steps", "mma_done", "tmem_base", "tmem_setup", "tmem_teardown", "xbar_offset"]
