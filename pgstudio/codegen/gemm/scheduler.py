"""The tile scheduler of a GEMM kernel: which work unit each persistent block takes, in what order.

A block loops over work units (``tile = blockIdx.x; tile += gridDim.x``): with ``SPLIT_K`` = S a
work unit is one of an output tile's S shares of the k tiles; with a cluster of CM x CN blocks a
unit is the cluster's CM x CN neighbouring tiles and each block takes its own (``cl_rank``).
With ``STREAM_K`` = 1 the units are the tiles of the full waves (whole, data-parallel), then two
per block for the tiles that are left: block w's share of their k tiles
(``gemm_limits.stream_k_units``), which touches at most two tiles -- the head of the next tile
first (a partial sum it hands over), then the rest of its first tile.  The block holding a tile's
last k tile finishes it (``unit_stores``): it waits for the other blocks' partials, which are each
block's first stream-K unit, so no wait depends on another wait.  A
unit's output tile comes from ``tile_coords``: groups of ``GROUP_M`` tile rows, walked column by
column inside a group, so that neighbouring blocks in time share their A and B panels in L2.
"""

from __future__ import annotations

from ...analysis.buildable.gemm_limits import STREAM_K_MIN_K_TILES

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
    if p.stream_k:
        return lines + [
            f"const int out_tiles = tiles_m * tiles_n, num_k_tiles = (K + {p.bk - 1}) / {p.bk};",
            "// stream-K (gemm_limits.stream_k_units): whole tiles for the full waves, the rest shared by k tiles",
            "int dp_tiles = out_tiles / (int)gridDim.x * (int)gridDim.x;",
            f"int sk_workers = min((int)gridDim.x, (out_tiles - dp_tiles) * num_k_tiles / {STREAM_K_MIN_K_TILES});",
            "if (dp_tiles == out_tiles || sk_workers < out_tiles - dp_tiles) { dp_tiles = out_tiles; sk_workers = 0; }",
            "const int sk_iters = (out_tiles - dp_tiles) * num_k_tiles;",
            "const int num_tiles = dp_tiles + (sk_workers > 0 ? 2 * (int)gridDim.x : 0);",
            "(void)lane; (void)sk_iters;"]
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
    elif p.stream_k:
        lines = stream_k_coords()
    elif p.split_k > 1:  # a work unit: split sk of output tile tile / SPLIT_K, its share of the k tiles
        sp = p.split_k
        lines = [f"sk = tile % {sp}; tile_coords(tile / {sp}, tiles_m, tiles_n, mb, nb);",
                 f"kt0 = sk * k_tiles_all / {sp}; unit_k_tiles = (sk + 1) * k_tiles_all / {sp} - kt0;"]
    else:
        lines = ["tile_coords(tile, tiles_m, tiles_n, mb, nb);"]
    return lines + [f"m0 = mb * {p.bm}; n0 = nb * {p.bn};"]


def stream_k_coords() -> list[str]:
    """The work unit ``tile`` of a stream-K kernel: its output tile, its k tiles (``kt0``,
    ``unit_k_tiles``; 0: nothing to do), whether it finishes the tile (``unit_stores``), and for
    a shared tile its index among the shared ones (``sk_tile``) and its worker (``sk_w``)."""
    return [
        "if (tile < dp_tiles) {",
        "  sk_tile = -1; sk_w = -1; kt0 = 0; unit_k_tiles = num_k_tiles; unit_stores = 1;",
        "  tile_coords(tile, tiles_m, tiles_n, mb, nb);",
        "} else {",
        "  const int v = tile - dp_tiles, second = v / (int)gridDim.x;",
        "  sk_w = v % (int)gridDim.x; sk_tile = 0; kt0 = 0; unit_k_tiles = 0;",
        "  if (sk_w < sk_workers) {",
        "    const int beg = (int)((long long)sk_w * sk_iters / sk_workers);",
        "    const int end = (int)((long long)(sk_w + 1) * sk_iters / sk_workers);",
        "    const int t0 = beg / num_k_tiles, cut = (t0 + 1) * num_k_tiles;",
        "    const bool crosses = end > cut;  // its share runs into the next tile: that head first",
        "    if (crosses && second == 0) { sk_tile = t0 + 1; unit_k_tiles = end - cut; }",
        "    else if (second == (crosses ? 1 : 0)) { sk_tile = t0; kt0 = beg - t0 * num_k_tiles; "
        "unit_k_tiles = min(end, cut) - beg; }",
        "  }",
        "  unit_stores = unit_k_tiles > 0 && kt0 + unit_k_tiles == num_k_tiles;  // it holds the last k tile",
        "  tile_coords(dp_tiles + sk_tile, tiles_m, tiles_n, mb, nb);",
        "}",
    ]


#: Helpers of a stream-K kernel beside the partial sums' L2 loads and stores it shares with
#: split-K (``epilogue.SPLIT_K_HELPERS``): the finishing block reads the count of partials
#: handed over with an acquire.
STREAM_K_HELPERS = r"""
// A release add: the block's writes that the barrier before it ordered (cumulativity) are
// visible device-wide before the count is.
__device__ __forceinline__ void red_release_gpu(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v; asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v;
}
// The finishing block waits until `want` blocks counted their partials in, within the watchdog's budget.
__device__ __noinline__ bool sk_wait_partials(const int* cnt, int want, int* abort_flag, int* diag, u64 budget_ns,
                                              int tile, int task) {
  const u64 t0 = pg_globaltimer();
  for (u32 spin = 1;; ++spin) {
    if (ld_acquire_gpu(cnt) >= want) return true;
    if ((spin & 15) == 0) {
      if (*(volatile int*)abort_flag) return false;
      const u64 dt = pg_globaltimer() - t0;
      if (dt > budget_ns) { wd_report(abort_flag, diag, 1, -1, -1, 0u, tile, -1, dt, task); return false; }
    }
    __nanosleep(64);
  }
}
"""


__all__ = ["CLUSTER_HELPERS", "GROUP_M", "STREAM_K_HELPERS", "TILE_ORDER", "stream_k_coords", "tile_loop",
           "tile_loop_rest", "unit_coords", "work_units"]
