"""The tile scheduler of a GEMM kernel: which work unit each persistent block takes, in what order.

A block loops over work units (``tile = blockIdx.x; tile += gridDim.x``): with ``SPLIT_K`` = S a
work unit is one of an output tile's S shares of the k tiles; with a cluster of CM x CN blocks a
unit is the cluster's CM x CN neighbouring tiles and each block takes its own (``cl_rank``).  A
unit's output tile comes from ``tile_coords``: groups of ``GROUP_M`` tile rows, walked column by
column inside a group, so that neighbouring blocks in time share their A and B panels in L2.
"""

from __future__ import annotations

#: Output tiles of one group of M-tile rows walked before moving along N (L2 reuse).
GROUP_M = 8

#: The persistent tile order (C++), appended to the prelude.
TILE_ORDER = r"""
// -- persistent tile order: groups of GROUP_M tile rows, column by column inside a group --
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int& mb, int& nb) {
  const int width = PG_GROUP_M * tiles_n;
  const int g = tile / width, first = g * PG_GROUP_M;
  const int rows = min(tiles_m - first, PG_GROUP_M);
  const int r = tile - g * width;
  mb = first + r % rows;
  nb = r / rows;
}
"""

#: What a kernel of a cluster of blocks needs beside the prelude: its rank, a cluster-wide barrier,
#: the peer's address of a shared-memory word, a release arrive that reaches the peer, and the TMA
#: load that lands in every block of a mask (the same offset, each block's own mbarrier).
CLUSTER_HELPERS = r"""
__device__ __forceinline__ u32 cluster_rank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
__device__ __forceinline__ u32 peer_addr(u32 addr, u32 rank) {
  u32 r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank)); return r;
}
// The default .release.cta arrive: what it orders is this block's finished MMA reads of the stage
// before the peer's TMA overwrites it.  (A .release.cluster arrive measured 3.3x slower: a
// cluster-scope fence on every release.)
__device__ __forceinline__ void pg_mbar_arrive_cluster(u32 addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" :: "r"(addr) : "memory");
}
__device__ __forceinline__ void tma_load_2d_mc(u32 dst, const TmaDesc* map, int c0, int c1, u32 bar, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;" :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
"""


def work_units(p) -> list[str]:
    """Kernel-scope lines: the output tiles along M and N, the cluster's units, ``num_tiles`` (the
    work units) and the k tiles of the problem."""
    lines = [f"const int tiles_m = (M + {p.bm - 1}) / {p.bm}, tiles_n = (N + {p.bn - 1}) / {p.bn};"]
    if p.cluster_size > 1:
        cm, cn = p.cluster
        lines += [f"// a cluster of {p.cluster_size} blocks along {'N' if cn > 1 else 'M'} works on {cm} x {cn} neighbouring tiles "
                  f"and shares their {'A' if cn > 1 else 'B'} tile ({p.multicast!r}, TMA multicast)",
                  f"const int cl_rank = (int)cluster_rank(), cl_id = blockIdx.x / {p.cluster_size}, "
                  f"cl_count = gridDim.x / {p.cluster_size};",
                  f"const int tiles_m_c = (tiles_m + {cm - 1}) / {cm}, tiles_n_c = (tiles_n + {cn - 1}) / {cn};"]
    k_tiles = "k_tiles_all" if p.split_k > 1 else "num_k_tiles"
    lines += [f"const int num_tiles = {'tiles_m_c * tiles_n_c' if p.cluster_size > 1 else 'tiles_m * tiles_n'}"
              f"{f' * {p.split_k}' if p.split_k > 1 else ''}, {k_tiles} = (K + {p.bk - 1}) / {p.bk};",
              f"(void)lane; (void){k_tiles};"]
    return lines


def tile_loop(p, also: str = "") -> str:
    """The head of a task's persistent loop over the work units (``also``: a further condition
    that ends it early, e.g. an instrumented build's window of recorded units)."""
    first, step = ("cl_id", "cl_count") if p.cluster[0] * p.cluster[1] > 1 else ("blockIdx.x", "gridDim.x")
    return f"for (tile = {first}; tile < num_tiles{f' && {also}' if also else ''}; tile += {step})"


def tile_loop_rest(p) -> str:
    """The head of the loop that takes the work units a ``tile_loop(p, also)`` left."""
    return f"for (; tile < num_tiles; tile += {'cl_count' if p.cluster[0] * p.cluster[1] > 1 else 'gridDim.x'})"


def unit_coords(p) -> list[str]:
    """First lines of the loop body: the output tile (``mb``, ``nb``, ``m0``, ``n0``) of the work
    unit ``tile`` and, with split-K, its share of the k tiles (``sk``, ``kt0``, ``unit_k_tiles``)."""
    cm, cn = p.cluster
    if cm * cn > 1:  # a work unit is a cluster's CM x CN tiles; this block takes its own
        lines = ["tile_coords(tile, tiles_m_c, tiles_n_c, mb, nb);",
                 f"mb = mb * {cm}{' + cl_rank' if cm > 1 else ''}; nb = nb * {cn}{' + cl_rank' if cn > 1 else ''};"]
    elif p.split_k > 1:  # a work unit: split sk of output tile tile / SPLIT_K, its share of the k tiles
        sp = p.split_k
        lines = [f"sk = tile % {sp}; tile_coords(tile / {sp}, tiles_m, tiles_n, mb, nb);",
                 f"kt0 = sk * k_tiles_all / {sp}; unit_k_tiles = (sk + 1) * k_tiles_all / {sp} - kt0;"]
    else:
        lines = ["tile_coords(tile, tiles_m, tiles_n, mb, nb);"]
    return lines + [f"m0 = mb * {p.bm}; n0 = nb * {p.bn};"]


__all__ = ["CLUSTER_HELPERS", "GROUP_M", "TILE_ORDER", "tile_loop", "tile_loop_rest", "unit_coords", "work_units"]
