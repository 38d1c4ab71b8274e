"""The mainloop steps of a GEMM task: operand loads into the stages and the MMA that reads them.

A tma ``load`` issues one 128-, 64- or 32-byte-swizzled TMA box per panel that completes on the
member's full barrier (on a cluster's shared tile, this block's half, multicast to both blocks);
an async ``load`` copies 16-byte units with cp.async (AsyncLoad) or loads and stores them
(AsyncThread) into the same swizzled layout.  ``mma`` computes where each MMA instruction's
operands start in the stage, then hands over to the architecture's issue (``sm90.py``: wgmma,
``sm100.py``: tcgen05.mma).
"""

from __future__ import annotations

from ...analysis.buildable.gemm_limits import SPACES
from ...analysis.resolve import ResolvedStep
from ...model.kinds import AsyncProducerOp, OpKind, Verb
from .epilogue import c_type, tensor
from .swizzle import unit_addr


class MainloopSteps:
    """The load and mma steps of a GEMM task (mixed into ``task.Task``, whose cursors, loops and
    plan they read)."""

    def coords(self, space: str, who: str) -> tuple[str, str]:
        """(row0, col0) of a tile of ``space`` in the current loop iteration (a tile with a K
        dimension is used inside the k loop: ``codegen.k_loop``)."""
        base = {"M": "m0", "N": "n0", "K": "k0"}
        r, cl = SPACES[space]
        return base[r], base[cl]

    def load(self, rs: ResolvedStep) -> None:
        c, p, s = self.c, self.p, rs.step
        tile = p.tiles[s.target]
        row0, col0 = self.coords(tile.space, repr(s.target))
        if s.target in p.turn_slices:  # a residual's column slice: the one of this turn
            col0 = f"({col0} + turn * {tile.cols})"
        dst = f"(base + {tile.offset}u + (u32)s_{self.v(rs.cursor)} * {tile.stage_bytes}u)"
        copies = [a for a in rs.actions if a.verb is Verb.COMPLETE_TX]
        if copies and s.target == p.multicast:  # a cluster's shared tile: this block's half, to both blocks
            half = tile.rows // 2
            tm = p.tensor_map_for[(tile.source, half, tile.panel_cols)].param
            with c.block("if (tt == 0)"):
                c(f"// TMA multicast: rows [{half} * cl_rank, +{half}) of every panel land in both blocks of the "
                  "cluster and complete_tx on each block's own full barrier")
                for q in range(tile.panels):
                    c(f"tma_load_2d_mc({dst} + {q * tile.panel_stride}u + (u32)cl_rank * {half * tile.panel}u, &{tm}, "
                      f"{col0} + {q * tile.panel_cols}, {row0} + cl_rank * {half}, {self.addr(copies[0])}, 0x3);")
            return
        if copies:  # the copy engine lands the tile's bytes on the full barrier, one box per panel
            tm = p.tensor_map_for[(tile.source, tile.rows, tile.panel_cols)].param
            with c.block("if (tt == 0)"):
                for q in range(tile.panels):
                    c(f"tma_load_2d({dst} + {q * tile.panel_stride}u, &{tm}, {col0} + {q * tile.panel_cols}, {row0}, "
                      f"{self.addr(copies[0])});")
            return
        self.thread_load(rs, tile, row0, col0, dst)

    def thread_load(self, rs: ResolvedStep, tile, row0: str, col0: str, dst: str) -> None:
        """An async producer's load: every thread copies its 16-byte units, zero-filling past the edge."""
        c = self.c
        upr = tile.cols * tile.esz // 16  # 16-byte units per row
        units = tile.rows * upr  # a multiple of the task's threads (codegen.chunk_split)
        op = self.d.resource(rs.step.target).pipeline_config.async_producer_op
        rdim, cdim = SPACES[tile.space]
        with c.block(""):
            c(f"const u32 dst = {dst};")
            c("#pragma unroll 4")
            with c.block(f"for (int it = 0; it < {units // self.nt}; ++it)"):
                c(f"const int idx = it * {self.nt} + tt, r = idx / {upr}, u = idx % {upr};",
                  f"const u32 d = {unit_addr('dst', tile.panel, tile.panel_stride, 'r', '(u32)u * 16u')};",
                  f"const int gr = {row0} + r, gc = {col0} + {16 // tile.esz} * u;",
                  f"const bool ok = gr < {rdim} && gc < {cdim};",
                  f"const {c_type(tile.dtype)}* src = {tensor(tile.source)} + (ok ? (size_t)gr * {cdim} + gc : 0);")
                if op is AsyncProducerOp.AsyncLoad:
                    c("cp_async_16(d, src, ok ? 16u : 0u);  // out of bounds: zero-fill")
                else:
                    c("st_shared_v4(d, ok ? *(const uint4*)src : make_uint4(0u, 0u, 0u, 0u));")

    def operand_descs(self) -> tuple[str, str, str, str]:
        """(A offset, B offset, B leading byte offset, B stride byte offset) of MMA instruction
        ``kk`` of a k tile, as C expressions in ``kk`` and the warpgroup's block (``wgm``, ``wgn``
        on sm_90a).  A K-major panel row gives 32 bytes of K to each instruction; a 16-bit N-major
        B (b_major "mn") gives 16 K rows of 128 bytes (2048 bytes), in panels of 64 columns."""
        p = self.p
        ta, tb = p.tiles[p.a], p.tiles[p.b]
        kb = "(u32)kk * 32u"

        def kmajor(t) -> str:
            return f"({kb} / {t.panel}u) * {t.panel_stride}u + ({kb} % {t.panel}u)"

        a_off = kmajor(ta)
        if self.sm90:
            a_off += f" + (u32)(wgm * {p.mma_repeats} + r) * {64 * ta.panel}u"
        if p.b_major == "mn":
            b_off, lbo = "(u32)kk * 2048u", f"{tb.panel_stride}u"
            sbo = "1024u"
            if self.sm90 and p.wg_grid[1] > 1:
                b_off += f" + (u32)wgn * {p.wg_cols // tb.panel_cols * tb.panel_stride}u"
        else:
            b_off, lbo, sbo = kmajor(tb), "16u", f"{8 * tb.panel}u"
            if self.sm90 and p.wg_grid[1] > 1:
                b_off += f" + (u32)wgn * {p.wg_cols * tb.panel}u"
        return a_off, b_off, lbo, sbo

    def mma(self, rs: ResolvedStep) -> None:
        """The MMAs of one k tile: the operand stages, then the architecture's issue."""
        p, c = self.p, self.c
        sa, sb = self.stage_cursor(p.a), self.stage_cursor(p.b)
        ta, tb = p.tiles[p.a], p.tiles[p.b]
        a_st = f"(base + {ta.offset}u + (u32){sa} * {ta.stage_bytes}u)"
        b_st = f"(base + {tb.offset}u + (u32){sb} * {tb.stage_bytes}u)"
        if any(p.tiles[x].producer is OpKind.ASYNC for x in (p.a, p.b)):
            c("fence_proxy_async();  // thread-written operand stage -> async-proxy (tensor core) reads")
        if self.sm90:
            self.wgmma_k_tile(a_st, b_st, self.operand_descs())
        else:
            self.umma_k_tile(self.v(rs.cursor), a_st, b_st, self.operand_descs())


__all__ = ["MainloopSteps"]
