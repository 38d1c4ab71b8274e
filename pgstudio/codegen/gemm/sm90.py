"""The sm_90a (Hopper) side of a GEMM task: wgmma into registers, staged for the epilogue.

How the umma kind runs on sm_90a (see ``wgmma.py``): the accumulator lives in the registers of
the MMA warpgroup(s); an umma consumer release (the table's commit-arrive, ``after_mma``) is one
elected arrive per MMA warpgroup after its ``wgmma.wait_group`` retired the stage's MMAs
(deferred by ``GemmPlan.mma_lag`` k steps, the wgmma groups kept in flight; the kernel's init
count of the empty barrier counts each warpgroup, ``GemmPlan.init_count``); an umma producer
acquire waits for the staging buffer just
before the registers are written to it (the registers are the accumulator until then), and its
commit is one elected arrive after every MMA thread has written its fragment to the staging
buffer.
"""

from __future__ import annotations

from contextlib import nullcontext

from ...analysis.resolve import ResolvedStep
from . import wgmma
from .code import MMA_BAR_ID
from .swizzle import unit_addr

#: How the kernel's header comment describes the umma mapping on sm_90a.
MAP_SM90 = """umma on sm_90a: wgmma from 128B-swizzled smem, fp32
// accumulators in the MMA warpgroups' registers; consumer release = one elected arrive per MMA
// warpgroup after its wgmma.wait_group retired the stage ({lag} k step(s) later; the stage's empty
// barrier counts {wgs} arrivals per release); producer commit = one elected arrive
// after the registers were staged to shared memory ({stage} staging, the emulated tensor memory)."""


class Sm90Steps:
    """The wgmma steps of the MMA task (mixed into ``task.Task``)."""

    def declare_accumulator(self) -> None:
        """The MMA task's registers: its warpgroup's block, the accumulator."""
        c = self.c
        r, wg_n = self.p.mma_repeats, self.p.wg_grid[1]
        c("const int wgi = tt >> 7, wl = (tt >> 5) & 3;  // warpgroup in the task, warp in the warpgroup",
          f"[[maybe_unused]] const int wgm = wgi / {wg_n}, wgn = wgi % {wg_n};  // its block along M and N",
          f"float acc[{r}][{self.p.wg_cols // 2}];  // the emulated tensor-memory accumulator")

    def prescan_releases(self, body) -> None:
        for n in body:
            if isinstance(n, ResolvedStep):
                for a in self.mma_releases(n):
                    self.deferred.setdefault(a.cursor, []).append(a)

    def flush_releases(self, back: int, note: str) -> None:
        """sm_90: this warpgroup's ``wgmma.wait_group`` retired the MMAs of the stage ``back``
        cursor steps behind the current one; its elected thread arrives (the barrier counts one
        arrival per MMA warpgroup: ``GemmPlan.init_count``).  No meeting of the warpgroups: each
        gives the stage back as soon as its own MMAs have read it."""
        c = self.c
        with c.block("if ((tt & 127) == 0)"):
            for cur, acts in self.deferred.items():
                v, stages = self.v(cur), self.plan.cursor(cur).stages
                back_s = back % stages
                stage = f"(s_{v} >= {back_s} ? s_{v} - {back_s} : s_{v} + {stages - back_s})" if back_s else f"s_{v}"
                for a in acts:
                    self.release(a, f"// umma release of {self.plan.cursor(cur).owner} ({note})", stage)

    def drain_releases(self, deferred_before: set) -> None:
        """After the k loop: the releases still deferred (the stages of the last ``mma_lag`` k
        tiles; the cursor has passed them), once every wgmma group retired."""
        c = self.c
        if set(self.deferred) - deferred_before:
            c("wgmma_wait<0>();")
            for back in range(self.p.mma_lag, 0, -1):
                with c.block(f"if ({self.nkt} >= {back})"):
                    self.flush_releases(back, f"k tile {self.nkt} - {back}")
            self.deferred.clear()

    def wgmma_k_tile(self, a_st: str, b_st: str, offsets: tuple[str, str, str, str]) -> None:
        """One k tile of wgmma per warpgroup (R repeats along M), then the previous step's releases."""
        p, c = self.p, self.c
        ta, tb = p.tiles[p.a], p.tiles[p.b]
        a_off, b_off, lbo_b, sbo_b = offsets
        ma, mb_ = wgmma.SWIZZLE_MODE[ta.panel], wgmma.SWIZZLE_MODE[tb.panel]
        name = wgmma.mma_function(p.wg_cols, p.dtype, 1 if p.b_major == "mn" else 0)[0]
        c(f"const u32 a_st = {a_st}, b_st = {b_st};", "wgmma_fence();", "#pragma unroll")
        with c.block(f"for (int kk = 0; kk < {p.k_steps}; ++kk)"):
            c("const u32 scale_d = (kt > 0 || kk > 0) ? 1u : 0u;  // first k step: D = A*B",
              f"const u64 db = gmma_desc(b_st + {b_off}, {lbo_b}, {sbo_b}, {mb_}u);", "#pragma unroll")
            with c.block(f"for (int r = 0; r < {p.mma_repeats}; ++r)"):
                c(f"const u64 da = gmma_desc(a_st + {a_off}, 16u, {8 * ta.panel}u, {ma}u);",
                  f"{name}(acc[r], da, db, scale_d);")
        lag = self.p.mma_lag
        c("wgmma_commit();", f"wgmma_wait<{lag}>();  // the wgmma group of {lag} k tile(s) back has retired")
        if self.deferred and lag:
            with c.block(f"if (kt >= {lag})"):
                self.flush_releases(lag, f"k tile kt - {lag}")

    def commit_accumulator(self, a) -> None:
        """The umma producer commit: registers staged, the MMA threads meet, one elected arrive."""
        c = self.c
        waits = self.pending_acquire.pop(a.cursor, [])
        turns = self.p.staging.turns
        for turn in range(turns):
            if turn:  # the next turn of the tile: the stage the epilogue releases once it stored this one
                c(f"// turn {turn + 1} of {turns}: the tile's next {self.p.staging.turn_cols} columns")
                self.advance(a.cursor)
            with c.block("") if turns > 1 else nullcontext():
                self.stage_accumulator(a.cursor, waits, turn)
            if self.p.tma_stores:
                c("fence_proxy_async();  // the staging writes -> the TMA engine that stores them")
            c("__threadfence_block();", f"named_bar_sync({MMA_BAR_ID}, {self.nt});",
              f"if (tt == 0) pg_mbar_arrive({self.addr(a)});  // umma commit: results in place")

    def stream_k_slots(self, body) -> None:
        """Each MMA thread's fragment in a tile's partial-sum slot, as float4 groups: group g of
        thread tt at float ``(g * threads + tt) * 4`` (a warp's 16-byte accesses are contiguous)."""
        c, p = self.c, self.p
        per_r = p.wg_cols // 8  # float4 groups of one repeat's wg_cols / 2 accumulators
        c("#pragma unroll")
        with c.block(f"for (int r = 0; r < {p.mma_repeats}; ++r)"):
            c("#pragma unroll")
            with c.block(f"for (int g = 0; g < {per_r}; ++g)"):
                c(f"const size_t at = ((size_t)(r * {per_r} + g) * {self.nt} + (size_t)tt) * 4;")
                body()

    def stream_k_finish(self) -> None:
        """Stream-K, the unit that finishes a shared tile: wait until the blocks before it on
        this tile have handed over their partial sums (one count each), then add them to the
        registers; the commit that follows stages and stores the tile as a whole one."""
        c, p = self.c, self.p
        from .epilogue import COUNTERS, WORKSPACE
        with c.block("if (sk_tile >= 0)"):
            c("// the first worker on this tile (gemm_limits.stream_k_units: worker w starts at w * sk_iters / sk_workers)",
              "const int first_w = (int)((((long long)sk_tile * num_k_tiles + 1) * sk_workers - 1) / sk_iters);",
              "const int peers = sk_w - first_w;")
            with c.block("if (peers > 0)"):
                with c.block("if (tt == 0)"):
                    c(f"if (sk_wait_partials({COUNTERS} + sk_tile, peers, wd_abort, wd_diag, wd_budget_ns, tile, {self.i})) "
                      f"{COUNTERS}[sk_tile] = 0;  // every partial is in: ready for the next launch")
                c(f"named_bar_sync({MMA_BAR_ID}, {self.nt});", f"if (*(volatile int*)wd_abort) goto {self.label};")
                with c.block("for (int w = first_w; w < sk_w; ++w)"):
                    c(f"const float* const src = {WORKSPACE} + (size_t)w * {p.bm * p.bn}u;")

                    def add() -> None:
                        c("const float4 v = ld_global_cg_v4(src + at);",
                          "acc[r][4 * g] += v.x; acc[r][4 * g + 1] += v.y; acc[r][4 * g + 2] += v.z; acc[r][4 * g + 3] += v.w;")
                    self.stream_k_slots(add)

    def stream_k_hand_over(self) -> None:
        """Stream-K, a unit that does not hold its tile's last k tile: its partial sums go to
        its worker's slot, made visible, and counted on the tile's counter."""
        c, p = self.c, self.p
        from .epilogue import COUNTERS, WORKSPACE
        c("wgmma_wait<0>();  // every MMA of the unit has written the registers",
          f"float* const dst = {WORKSPACE} + (size_t)sk_w * {p.bm * p.bn}u;")
        self.stream_k_slots(lambda: c("st_global_cg_v4(dst + at, acc[r][4 * g], acc[r][4 * g + 1], acc[r][4 * g + 2], "
                                      "acc[r][4 * g + 3]);"))
        c(f"named_bar_sync({MMA_BAR_ID}, {self.nt});  // every MMA thread's partials written ...",
          f"if (tt == 0) red_release_gpu({COUNTERS} + sk_tile, 1);  // ... then counted in, released device-wide")

    def stage_accumulator(self, cursor: str, waits, turn: int = 0) -> None:
        """sm_90: the lazy acquire (``waits``), then each thread writes its fragment -- of turn
        ``turn``'s columns when the tile takes several turns (``Staging.turns``) -- to the staging
        buffer."""
        c, p = self.c, self.p
        st = p.staging
        for a in waits:
            c("// the umma producer's acquire: wait until the epilogue released this staging buffer")
            c(self.wait_code(a))
        width = st.turn_cols
        c(f"const u32 stg = base + {st.offset}u + (u32)s_{self.v(cursor)} * {st.stage_bytes}u;", "#pragma unroll")
        with c.block(f"for (int r = 0; r < {p.mma_repeats}; ++r)"):
            c(f"const int row0 = (wgm * {p.mma_repeats} + r) * 64 + 16 * wl + (lane >> 2);", "#pragma unroll")
            spread = p.wg_grid[1] > 1
            q0, q1 = (0, p.wg_cols // 8) if st.turns == 1 or spread else (turn * width // 8, (turn + 1) * width // 8)
            with c.block(f"for (int q = {q0}; q < {q1}; ++q)"):
                col0 = f"wgn * {p.wg_cols} + " if spread else ""
                shift = f" - {turn * width}" if turn else ""
                c(f"const int col = {col0}8 * q + 2 * (lane & 3){shift};")
                if st.turns > 1 and spread:
                    c(f"if ((unsigned)col >= {width}u) continue;  // another turn's column")
                c("#pragma unroll")
                with c.block("for (int h = 0; h < 2; ++h)"):
                    c("const float v0 = acc[r][4 * q + 2 * h], v1 = acc[r][4 * q + 2 * h + 1];")
                    if st.dtype == "float32":
                        c(f"st_shared_f2(stg + (u32)(row0 + 8 * h) * {st.pitch}u + (u32)col * 4u, v0, v1);")
                    elif st.swizzled:  # a TMA-layout panel: the swizzle spreads the 8 rows over all banks
                        c("const int row = row0 + 8 * h;", "const u32 bcol = (u32)col * 2u;",
                          f"st_shared_u32({unit_addr('stg', st.panel, st.panel_stride, 'row', 'bcol & ~15u')} + "
                          f"(bcol & 15u), pack_{st.dtype}x2(v0, v1));")
                    else:
                        c(f"st_shared_u32(stg + (u32)(row0 + 8 * h) * {st.pitch}u + (u32)col * 2u, pack_{st.dtype}x2(v0, v1));")

__all__ = ["MAP_SM90", "Sm90Steps"]
