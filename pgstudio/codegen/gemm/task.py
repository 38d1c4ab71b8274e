"""emit_gemm(design): a warp-specialised, persistent tensor-core GEMM kernel from a GEMM design.

Every task becomes one role branch (a warp range); its resolved plan (``analysis.resolve``: THE
protocol table, ``model/protocol.py``, bound to the slots and init counts of
``barrier_layout(design)``) is walked step by step, and each barrier action of the plan becomes
code -- the walker reads cursors, barrier sets, verbs, who and bytes from the plan and derives
none of them.  Work steps become code: a tma ``load`` issues 128-byte-swizzled TMA box copies
that complete on the member's full barrier; an async ``load`` copies with cp.async (AsyncLoad)
or loads and stores (AsyncThread) into the same swizzled layout; ``mma`` issues wgmma (sm_90a)
or tcgen05.mma (sm_100a); ``store`` computes the output expression (the checked grammar of
``ops.py``) and writes guarded 16-byte chunks to global memory.

How the umma kind runs on sm_90a (see ``wgmma.py``): the accumulator lives in the registers of
the MMA warpgroup(s); an umma consumer release (the table's commit-arrive, ``after_mma``) is one
elected arrive after ``wgmma.wait_group`` retired the stage's MMAs (deferred by one k step, so
one wgmma group stays in flight); an umma producer acquire waits for the staging buffer just
before the registers are written to it (the registers are the accumulator until then), and its
commit is one elected arrive after every MMA thread has written its fragment to the staging
buffer.  On sm_100a (``tcgen05.py``) the same steps are tensor-memory allocation, tcgen05.mma
and commit-to-mbarrier.

The problem size (M, N, K) is a kernel argument: one compiled kernel serves every shape of the
same tiles; loops over ``num_tiles`` are persistent (tile = blockIdx.x; tile += gridDim.x).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from ..analysis.build.gemm_plan import SPACES, GemmPlan, plan_gemm
from ..analysis.resolve import BarrierAction, ResolvedLoop, ResolvedStep, TaskPlan, resolve
from ..analysis.validate import require_valid
from ..model.design import Design
from ..model.kinds import AsyncProducerOp, OpKind, Role, Side, Verb, Who
from . import tcgen05, wgmma
from .gemm_prelude import DIAG_WORDS, prelude
from .gemm_store import COUNTERS, SPLIT_K_HELPERS, WORKSPACE, StoreSteps, c_type, tensor
from .source import KernelParam, KernelSource
from .swizzle import unit_addr

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

#: Named barrier the MMA task syncs on before its elected thread signals (0 is __syncthreads).
MMA_BAR_ID = 1

DOC = """\
// pgstudio GEMM kernel for design '{name}' ({arch}); generated code, do not edit.
// Tasks -> role branches by warp; schedules -> the protocol table's barrier actions on the
// slots of barrier_layout(design) ({nbar} mbarriers).  {mapping}
"""
MAP_SM90 = """umma on sm_90a: wgmma from 128B-swizzled smem, fp32
// accumulators in the MMA warpgroups' registers; consumer release = one elected arrive after
// wgmma.wait_group retired the stage (one k step later); producer commit = one elected arrive
// after the registers were staged to shared memory ({stage} staging, the emulated tensor memory)."""
MAP_SM100 = """umma on sm_100a: one thread issues tcgen05.mma into tensor memory; an
// umma release = tcgen05.commit to the empty mbarrier (arrives once the MMAs read the stage); the
// producer commit = tcgen05.commit to mma_done, then the MMA warpgroup copies tensor memory to the
// {stage} staging buffer with tcgen05.ld and one elected thread arrives on the full barrier."""


class _Code:
    """Lines with indentation and a line -> design element map."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.map: list[tuple[int, str]] = []

    def __call__(self, *lines: str) -> None:
        for text in lines:
            for ln in text.split("\n"):
                self.lines.append(("  " * self.depth + ln) if ln else "")

    def mark(self, element: str) -> None:
        self.map.append((len(self.lines) + 1, element))

    @contextmanager
    def block(self, head: str, tail: str = "}"):
        self(head + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self(tail)


def _cursor_vars(cursors) -> dict[str, str]:
    """C name stem of each cursor: its owner (resource or group), with the side when one task
    walks both sides of one owner."""
    owners = [c.owner for c in cursors]
    return {c.name: c.owner if owners.count(c.owner) == 1 else f"{c.owner}_{c.side}" for c in cursors}


class _Task(StoreSteps):
    """Emits one task's role branch by walking its resolved plan (``analysis.resolve``): cursor
    names, barrier sets, verbs, who and bytes all come from the plan; this class only decides how
    each action and each piece of work is written for the target architecture."""

    def __init__(self, plan: GemmPlan, task, tplan: TaskPlan, index: int, code: _Code) -> None:
        self.p, self.t, self.plan, self.i, self.c = plan, task, tplan, index, code
        self.d: Design = plan.design
        self.sm90 = plan.arch == "sm_90a"
        self.is_mma = task is plan.mma_task
        self.nt = task.num_threads
        self.sets = {s.name: s for s in plan.layout.sets}
        self.var = _cursor_vars(tplan.cursors)
        self.pending_acquire: dict[str, list[BarrierAction]] = {}  # sm_90 lazy accumulator waits, by cursor
        self.deferred: dict[str, list[BarrierAction]] = {}  # sm_90 umma releases, by cursor
        self.label = f"done_{task.name}"
        self.loops: list[str] = []
        self.split = plan.split_k
        self.nkt = "num_k_tiles" if self.split == 1 else "unit_k_tiles"  # k tiles of this work unit

    # -- cursors ---------------------------------------------------------------------------------
    def v(self, cursor: str) -> str:
        return self.var[cursor]

    def advance(self, cursor: str) -> None:
        v, stages = self.v(cursor), self.plan.cursor(cursor).stages
        self.c(f"if (++s_{v} == {stages}) {{ s_{v} = 0; ph_{v} ^= 1u; }}")

    def stage_cursor(self, resource: str) -> str:
        """The stage index variable through which this task reads ``resource``."""
        return f"s_{self.v(self.plan.cursor_of(resource, Side.CONSUMER).name)}"

    # -- barrier actions -------------------------------------------------------------------------
    def addr(self, a: BarrierAction, stage: str | None = None) -> str:
        return f"(bar0 + 8u * ({self.sets[a.set].first} + {stage or 's_' + self.v(a.cursor)}))"

    def wait_code(self, a: BarrierAction) -> str:
        v = self.v(a.cursor)
        s = f"s_{v}"
        return (f"if (!wd_wait({self.addr(a)}, ph_{v}, wd_abort, wd_diag, wd_budget_ns, "
                f"{self.sets[a.set].first} + {s}, {s}, tile, kt, {self.i})) goto {self.label};")

    def holds_accumulator(self, rs: ResolvedStep) -> bool:
        """sm_90: the MMA task's umma producer side is the accumulator in its registers."""
        return self.is_mma and rs.kind is OpKind.UMMA and rs.side is Side.PRODUCER

    @staticmethod
    def mma_releases(rs: ResolvedStep) -> list[BarrierAction]:
        """An umma consumer's commit-arrives on the empty barrier of the stages its MMAs read."""
        return [a for a in rs.actions if a.after_mma and a.role is Role.EMPTY]

    # -- walking ---------------------------------------------------------------------------------
    def emit(self) -> None:
        t, c = self.t, self.c
        c.mark(f"task:{t.name}")
        c(f"// task '{t.name}': warps {t.warp_idx}..{t.warp_idx + t.num_warps - 1}, schedule {t.schedule.name}")
        c(f"[[maybe_unused]] const int tt = threadIdx.x - {t.warp_idx * 32};  // thread index within the task")
        c("[[maybe_unused]] int tile = blockIdx.x, kt = 0, mb = 0, nb = 0, m0 = 0, n0 = 0, k0 = 0;")
        if self.split > 1:
            c("[[maybe_unused]] int sk = 0, kt0 = 0, unit_k_tiles = 0;  // split of the tile, its first k tile, its k tiles")
        for cur in self.plan.cursors:
            v = self.v(cur.name)
            c(f"int s_{v} = 0; u32 ph_{v} = {cur.start_phase}u;  // cursor {cur.name}: stage, phase")
        if self.is_mma and self.sm90:
            released = dict.fromkeys(a.cursor for rs in self.plan.steps() for a in self.mma_releases(rs))
            for cur in released:
                c(f"int pend_{self.v(cur)} = 0;  // stage of {self.plan.cursor(cur).owner} whose umma release "
                  "waits for wgmma.wait_group")
            r, wg_n = self.p.mma_repeats, self.p.wg_grid[1]
            c("const int wgi = tt >> 7, wl = (tt >> 5) & 3;  // warpgroup in the task, warp in the warpgroup",
              f"[[maybe_unused]] const int wgm = wgi / {wg_n}, wgn = wgi % {wg_n};  // its block along M and N",
              f"float acc[{r}][{self.p.wg_cols // 2}];  // the emulated tensor-memory accumulator")
        self.walk(self.plan.nodes)
        c(f"{self.label}: ;")
        if self.t.name in self.p.tma_store_tasks:
            c("if (tt == 0) bulk_wait_all();  // this task's TMA stores have reached global memory")
        if self.is_mma and self.sm90:
            c("wgmma_wait<0>();  // nothing may stay in flight past here")

    def walk(self, nodes) -> None:
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                self.loop(n)
            else:
                self.step(n)

    def loop(self, n: ResolvedLoop) -> None:
        c = self.c
        if n.loop.stop == "num_tiles":
            cm, cn = self.p.cluster
            head = "for (tile = cl_id; tile < num_tiles; tile += cl_count)" if cm * cn > 1 else \
                "for (tile = blockIdx.x; tile < num_tiles; tile += gridDim.x)"
            with c.block(head):
                if cm * cn > 1:  # a work unit is a cluster's CM x CN tiles; this block takes its own
                    c("tile_coords(tile, tiles_m_c, tiles_n_c, mb, nb);",
                      f"mb = mb * {cm}{' + cl_rank' if cm > 1 else ''}; nb = nb * {cn}{' + cl_rank' if cn > 1 else ''};")
                elif self.split > 1:  # a work unit: split sk of output tile tile / SPLIT_K, its share of the k tiles
                    sp = self.split
                    c(f"sk = tile % {sp}; tile_coords(tile / {sp}, tiles_m, tiles_n, mb, nb);",
                      f"kt0 = sk * k_tiles_all / {sp}; unit_k_tiles = (sk + 1) * k_tiles_all / {sp} - kt0;")
                else:
                    c("tile_coords(tile, tiles_m, tiles_n, mb, nb);")
                c(f"m0 = mb * {self.p.bm}; n0 = nb * {self.p.bn};")
                self.loops.append("tile")
                self.walk(n.body)
                self.loops.pop()
        else:  # num_k_tiles, the only other loop a plan admits (codegen.gemm_loop)
            deferred_before = set(self.deferred)
            with c.block(f"for (kt = 0; kt < {self.nkt}; ++kt)"):
                c(f"k0 = (kt0 + kt) * {self.p.bk};" if self.split > 1 else f"k0 = kt * {self.p.bk};")
                self.loops.append("k")
                if self.is_mma and self.sm90:
                    self.prescan_releases(n.body)
                self.walk(n.body)
                self.loops.pop()
            if self.is_mma and self.sm90 and set(self.deferred) - deferred_before:
                c("wgmma_wait<0>();")
                with c.block(f"if ({self.nkt} > 0)"):
                    self.flush_releases()
                self.deferred.clear()

    def prescan_releases(self, body) -> None:
        for n in body:
            if isinstance(n, ResolvedStep):
                for a in self.mma_releases(n):
                    self.deferred.setdefault(a.cursor, []).append(a)

    def flush_releases(self) -> None:
        """sm_90: every MMA warpgroup retired the stage; one elected thread releases it."""
        c = self.c
        c(f"named_bar_sync({MMA_BAR_ID}, {self.nt});")
        with c.block("if (tt == 0)"):
            for cur, acts in self.deferred.items():
                for a in acts:
                    self.release(a, f"// umma release of {self.plan.cursor(cur).owner}", "pend_" + self.v(cur))

    # -- steps -----------------------------------------------------------------------------------
    def step(self, rs: ResolvedStep) -> None:
        c, s = self.c, rs.step
        c.mark(f"{'group' if s.via == 'group' else 'resource'}:{s.target}")
        c(f"// {s}")
        # work: what the step does to the stage (its complete_tx is the tma copy itself)
        if s.op == "load":
            return self.load(rs)
        if s.op == "mma":
            return self.mma(rs)
        if s.op == "store":
            return self.store(rs)
        # barrier actions, as the plan gives them (probes and reads have none)
        waited = False
        for a in rs.actions:
            if a.verb is Verb.WAIT:
                if self.sm90 and self.holds_accumulator(rs):
                    self.pending_acquire.setdefault(a.cursor, []).append(a)
                    c("// deferred: the registers hold the accumulator; its staging buffer is awaited at commit")
                else:
                    c(self.wait_code(a))
                    waited = True
            elif a.verb is Verb.ARRIVE_EXPECT_TX:
                c(f"if (tt == 0) pg_mbar_arrive_expect_tx({self.addr(a)}, {a.bytes}u);  // expect_tx before the copies")
            elif a.verb is Verb.ARRIVE:
                self.arrive(rs, a)
            else:  # pragma: no cover - complete_tx belongs to a load, handled above
                raise AssertionError(f"{s}: unexpected barrier action {a}")
        if waited and not self.sm90 and self.holds_accumulator(rs):
            c("tc_fence_after();")
        for cur in rs.advances:
            self.advance(cur)

    def release(self, a: BarrierAction, note: str, stage: str | None = None) -> None:
        """One arrive on ``a``'s barrier; on a cluster's shared tile, on the peer block's too (its
        TMA writes this block's stage, so it waits for this block's release)."""
        if a.set in self.p.peer_sets:
            addr = self.addr(a, stage)
            self.c(f"pg_mbar_arrive_cluster({addr});  {note}",
                   f"pg_mbar_arrive_cluster(peer_addr({addr}, (u32)cl_rank ^ 1u));  // ... and in the peer block")
        else:
            self.c(f"pg_mbar_arrive({self.addr(a, stage)});  {note}")

    def arrive(self, rs: ResolvedStep, a: BarrierAction) -> None:
        c = self.c
        if a.who is Who.ALL and a.role is Role.FULL:  # async producer: every thread arrives after its writes
            s = rs.step
            op = self.d.resource(s.target).pipeline_config.async_producer_op if s.via != "group" else \
                self.d.group(s.target).members[0].pipeline_config.async_producer_op
            if op is AsyncProducerOp.AsyncLoad:
                c(f"pg_cp_async_arrive_noinc({self.addr(a)});  // arrives when this thread's cp.async landed")
            else:
                c("fence_proxy_async();  // generic-proxy stores -> async-proxy (tensor core / TMA) readers",
                  f"pg_mbar_arrive({self.addr(a)});")
        elif a.who is Who.ALL:
            self.release(a, "// async release: every thread arrives")
        elif a.after_mma and a.role is Role.FULL:  # umma producer: the accumulator's results are in place
            if self.sm90:
                self.stage_accumulator(a.cursor)
                if self.p.tma_stores:
                    c("fence_proxy_async();  // the staging writes -> the TMA engine that stores them")
                c("__threadfence_block();", f"named_bar_sync({MMA_BAR_ID}, {self.nt});",
                  f"if (tt == 0) pg_mbar_arrive({self.addr(a)});  // umma commit: results in place")
            else:
                self.stage_tmem(a)
        elif a.after_mma:  # umma release
            if self.sm90:
                v = self.v(a.cursor)
                c(f"pend_{v} = s_{v};  // released after wgmma.wait_group retires it (next k step)")
            else:
                c(f"if (tt == 0) umma_commit({self.addr(a)});  // umma release: arrives once the MMAs read it")
        elif a.set in self.p.peer_sets:
            with c.block("if (tt == 0)"):
                self.release(a, "// one elected arrive")
        else:
            c(f"if (tt == 0) pg_mbar_arrive({self.addr(a)});  // one elected arrive")

    # -- work ------------------------------------------------------------------------------------
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
        upr = tile.cols * tile.esz // 16  # 16-byte units per row
        units = tile.rows * upr  # a multiple of the task's threads (codegen.chunk_split)
        op = self.d.resource(s.target).pipeline_config.async_producer_op
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
        p, c = self.p, self.c
        acc = self.v(rs.cursor)
        sa, sb = self.stage_cursor(p.a), self.stage_cursor(p.b)
        ta, tb = p.tiles[p.a], p.tiles[p.b]
        a_st = f"(base + {ta.offset}u + (u32){sa} * {ta.stage_bytes}u)"
        b_st = f"(base + {tb.offset}u + (u32){sb} * {tb.stage_bytes}u)"
        trans_b = 1 if p.b_major == "mn" else 0
        modes = wgmma.SWIZZLE_MODE if self.sm90 else tcgen05.SWIZZLE_MODE
        a_off, b_off, lbo_b, sbo_b = self.operand_descs()
        ma, mb_ = modes[ta.panel], modes[tb.panel]
        if any(p.tiles[x].producer is OpKind.ASYNC for x in (p.a, p.b)):
            c("fence_proxy_async();  // thread-written operand stage -> async-proxy (tensor core) reads")
        if self.sm90:
            name = wgmma.mma_function(p.wg_cols, p.dtype, trans_b)[0]
            c(f"const u32 a_st = {a_st}, b_st = {b_st};", "wgmma_fence();", "#pragma unroll")
            with c.block(f"for (int kk = 0; kk < {p.k_steps}; ++kk)"):
                c("const u32 scale_d = (kt > 0 || kk > 0) ? 1u : 0u;  // first k step: D = A*B",
                  f"const u64 db = gmma_desc(b_st + {b_off}, {lbo_b}, {sbo_b}, {mb_}u);", "#pragma unroll")
                with c.block(f"for (int r = 0; r < {p.mma_repeats}; ++r)"):
                    c(f"const u64 da = gmma_desc(a_st + {a_off}, 16u, {8 * ta.panel}u, {ma}u);",
                      f"{name}(acc[r], da, db, scale_d);")
            c("wgmma_commit();", "wgmma_wait<1>();  // the previous k step's wgmma group has retired")
            if self.deferred:
                with c.block("if (kt > 0)"):
                    self.flush_releases()
        else:
            idesc = tcgen05.instr_desc(128, p.bn, p.dtype, trans_b)
            issue = f"umma_{tcgen05.KIND[p.dtype]}"
            c(f"const u32 a_st = {a_st}, b_st = {b_st};", "tc_fence_after();")
            with c.block("if (tt == 0)"):
                c("#pragma unroll")
                with c.block(f"for (int kk = 0; kk < {p.k_steps}; ++kk)"):
                    c(f"const u64 da = umma_desc(a_st + {a_off}, 16u, {8 * ta.panel}u, {ma}u);",
                      f"const u64 db = umma_desc(b_st + {b_off}, {lbo_b}, {sbo_b}, {mb_}u);",
                      f"{issue}(tmem_base + (u32)s_{acc} * {p.bn}u, da, db, {idesc}u, (kt > 0 || kk > 0) ? 1u : 0u);")

    def stage_accumulator(self, cursor: str) -> None:
        """sm_90: the lazy acquire, then each thread writes its fragment to the staging buffer."""
        c, p = self.c, self.p
        st = p.staging
        for a in self.pending_acquire.pop(cursor, []):
            c("// the umma producer's acquire: wait until the epilogue released this staging buffer")
            c(self.wait_code(a))
        c(f"const u32 stg = base + {st.offset}u + (u32)s_{self.v(cursor)} * {st.stage_bytes}u;", "#pragma unroll")
        with c.block(f"for (int r = 0; r < {p.mma_repeats}; ++r)"):
            c(f"const int row0 = (wgm * {p.mma_repeats} + r) * 64 + 16 * wl + (lane >> 2);", "#pragma unroll")
            with c.block(f"for (int q = 0; q < {p.wg_cols // 8}; ++q)"):
                col0 = f"wgn * {p.wg_cols} + " if p.wg_grid[1] > 1 else ""
                c(f"const int col = {col0}8 * q + 2 * (lane & 3);", "#pragma unroll")
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

    def stage_tmem(self, full: BarrierAction) -> None:
        """sm_100a: the MMAs' completion is committed to this stage's ``mma_done`` barrier; the
        task's warpgroup then copies tensor memory (warp w%4 reads lanes 32*(w%4)..) to the
        staging buffer, so an epilogue of any width can drain it; one elected arrive follows."""
        c, p = self.c, self.p
        st = p.staging
        v = self.v(full.cursor)
        done = f"(xbar + 8u + 8u * (u32)s_{v})"
        # mma_done[s] completes its phase 0 first: the opposite parity of the producer cursor,
        # whose phase starts at 1 (START_PHASE)
        c(f"if (tt == 0) umma_commit({done});  // arrives once every MMA of this tile completed",
          f"if (!wd_wait({done}, ph_{v} ^ 1u, wd_abort, wd_diag, wd_budget_ns, -1, s_{v}, tile, kt, {self.i})) "
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
                c(f"st_shared_v4({at}, make_uint4(pack_{d}x2(v[0], v[1]), "
                  f"pack_{d}x2(v[2], v[3]), pack_{d}x2(v[4], v[5]), pack_{d}x2(v[6], v[7])));")
        if p.tma_stores:
            c("fence_proxy_async();  // the staging writes -> the TMA engine that stores them")
        c("tc_fence_before();", "__threadfence_block();", f"named_bar_sync({MMA_BAR_ID}, 128);",
          f"if (tt == 0) pg_mbar_arrive({self.addr(full)});  // umma commit: results in place")


def _split_warps(p: GemmPlan) -> int:
    """Warps of the task whose store finishes split tiles (one counter per output tile and warp)."""
    return next(t.num_warps for t in p.design.tasks for s in (t.schedule.steps() if t.schedule else ())
                if s.op == "store" and p.acc in p.design.deps(s.target))


def _kernel_name(design: Design) -> str:
    return "pg_gemm_" + re.sub(r"\W", "_", design.name)


def emit_gemm(design: Design, *, arch: str = "sm_90a", b_major: str | None = None,
              acc_stage_dtype: str | None = None, validate: bool = True) -> KernelSource:
    """The CUDA C++ of ``design``'s GEMM kernel for ``arch`` ("sm_90a" runs on H100 / H200;
    "sm_100a" is compile-only).  ``b_major``: "mn" when gmem B is K x N row-major (D = A @ B),
    "k" when it is stored N x K; None: the problem's ``b_major`` (default "mn").  ``acc_stage_dtype``
    (sm_90a): the dtype of the shared-memory staging of the accumulator; None picks float32 when it fits, else the output dtype.
    ``validate=False`` skips the design rules (to build deliberately wrong kernels); what the
    generator cannot build (``codegen.*``) is refused either way, as one ``DesignError``."""
    if validate:
        require_valid(design, arch)
    p = plan_gemm(design, arch, b_major, acc_stage_dtype).require(design.name, arch)
    plans = resolve(design, p.layout)
    c = _Code()
    sm90 = arch == "sm_90a"
    mapping = (MAP_SM90 if sm90 else MAP_SM100).format(stage=p.staging.dtype)
    c(DOC.format(name=design.name, arch=arch, nbar=p.layout.num_barriers, mapping=mapping).rstrip("\n"))
    c(prelude())
    if sm90:
        c(wgmma.helpers(), wgmma.mma_function(p.wg_cols, p.dtype, 1 if p.b_major == "mn" else 0)[1])
    else:
        c(tcgen05.helpers())
    if p.split_k > 1:
        c(SPLIT_K_HELPERS)
    if p.cluster_size > 1:
        c(CLUSTER_HELPERS)
    feat = wgmma.GUARD if sm90 else tcgen05.GUARD
    entry = _kernel_name(design)
    params = [KernelParam(m.param, "tensormap", m.dtype, m.tensor) for m in p.tensor_maps]
    params += [KernelParam(o, "ptr", p.out_dtypes[o], o) for o in p.outputs]
    params += [KernelParam(i, "ptr", p.dtype, i) for i in p.pointer_inputs]
    params += [KernelParam(n, "i32") for n in ("M", "N", "K")]
    params += [KernelParam("wd_abort", "ptr", "int32", "watchdog"), KernelParam("wd_diag", "ptr", "int32", "watchdog"),
               KernelParam("wd_budget_ns", "u64", "", "watchdog")]
    if p.split_k > 1:
        params += [KernelParam(WORKSPACE, "ptr", "float32", "split_k"), KernelParam(COUNTERS, "ptr", "int32", "split_k")]
    sig = []
    for prm in params:
        if prm.kind == "tensormap":
            sig.append(f"const __grid_constant__ TmaDesc {prm.name}")
        elif prm.kind == "ptr" and prm.resource in ("watchdog", "split_k"):
            sig.append(f"{'float' if prm.dtype == 'float32' else 'int'}* {prm.name}")
        elif prm.kind == "ptr":
            sig.append(f"const {c_type(prm.dtype)}* __restrict__ {tensor(prm.name)}" if prm.name in p.pointer_inputs
                       else f"{c_type(prm.dtype)}* __restrict__ {tensor(prm.name)}")
        elif prm.kind == "i32":
            sig.append(f"int {prm.name}")
        else:
            sig.append(f"u64 {prm.name}")
    dims = f" __cluster_dims__({p.cluster_size}, 1, 1)" if p.cluster_size > 1 else ""
    c(f'extern "C" __global__ void __launch_bounds__({p.num_threads}, 1){dims}')
    c(f"{entry}({', '.join(sig)}) {{")
    c.depth += 1
    c(f"#if !{feat}")
    c("if (threadIdx.x == 0) wd_report(wd_abort, wd_diag, 3, -1, -1, 0u, -1, -1, 0ull, -1);  // built for another arch")
    c("#else")
    c("extern __shared__ __align__(1024) unsigned char smem_raw[];",
      "const u32 raw = pg_smem_u32(smem_raw);",
      f"const u32 base = {'(raw + 1023u) & ~1023u' if p.aligned_by_hand else 'raw'};  "
      "// 128B-swizzle tiles need 1024-B alignment")
    with c.block("if (base & 1023u)"):
        c("if (threadIdx.x == 0) wd_report(wd_abort, wd_diag, 2, -1, -1, 0u, -1, -1, 0ull, -1);", "return;")
    c(f"const u32 bar0 = base + {p.barrier_offset}u;  // barrier_layout(design): {p.layout.num_barriers} slots",
      "const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;",
      f"const int tiles_m = (M + {p.bm - 1}) / {p.bm}, tiles_n = (N + {p.bn - 1}) / {p.bn};")
    if p.cluster_size > 1:
        cm, cn = p.cluster
        c(f"// a cluster of {p.cluster_size} blocks along {'N' if cn > 1 else 'M'} works on {cm} x {cn} neighbouring tiles "
          f"and shares their {'A' if cn > 1 else 'B'} tile ({p.multicast!r}, TMA multicast)",
          f"const int cl_rank = (int)cluster_rank(), cl_id = blockIdx.x / {p.cluster_size}, "
          f"cl_count = gridDim.x / {p.cluster_size};",
          f"const int tiles_m_c = (tiles_m + {cm - 1}) / {cm}, tiles_n_c = (tiles_n + {cn - 1}) / {cn};")
    c(f"const int num_tiles = {'tiles_m_c * tiles_n_c' if p.cluster_size > 1 else 'tiles_m * tiles_n'}"
      f"{f' * {p.split_k}' if p.split_k > 1 else ''}, "
      f"{'k_tiles_all' if p.split_k > 1 else 'num_k_tiles'} = (K + {p.bk - 1}) / {p.bk};",
      f"(void)lane; (void){'k_tiles_all' if p.split_k > 1 else 'num_k_tiles'};")
    with c.block("if (threadIdx.x == 0)"):
        for bset in p.layout.sets:
            peers = p.cluster_size if bset.name in p.peer_sets else 1  # released by both blocks of a cluster
            for st in range(bset.stages):
                c(f"pg_mbar_init(bar0 + {8 * (bset.first + st)}u, {bset.init_count * peers}u);  // {bset.name}[{st}]"
                  + (f", tx {bset.tx_bytes} B" if bset.tx_bytes else "") + (f", x{peers}: both blocks release" if peers > 1 else ""))
        c("pg_mbar_init_fence();")
    mma_w0 = p.mma_task.warp_idx
    if not sm90:
        cols = tcgen05.tmem_columns(p.bn, design.resource(p.acc).pipeline_config.num_stages)
        c(f"const u32 xbar = bar0 + {p.layout.num_bytes}u;  // sm_100a extras: TMEM address slot, mma_done[stages]")
        with c.block("if (threadIdx.x == 0)"):
            for st in range(design.resource(p.acc).pipeline_config.num_stages):
                c(f"pg_mbar_init(xbar + {8 + 8 * st}u, 1u);  // mma_done[{st}]: tcgen05.commit of the tile's MMAs")
            c("pg_mbar_init_fence();")
        c(f"if (warp == {mma_w0}) tmem_alloc(xbar, {cols}u);  // the accumulator's tensor memory",
          "tc_fence_before();")
    c("cluster_sync();  // the barriers of both blocks are initialised before either block's TMA signals them"
      if p.cluster_size > 1 else "__syncthreads();")
    if not sm90:
        c("tc_fence_after();", "const u32 tmem_base = ld_shared_u32(xbar);")
    c("const int wg = warp >> 2;  // warpgroup: the MMA warpgroups, then each other warpgroup's tasks")
    first = True
    n_wg = p.num_threads // 128
    for wg in range(n_wg):
        if wg in p.mma_wgs and wg != p.mma_wgs[0]:
            continue
        if wg in p.mma_wgs:
            cond = f"wg >= {p.mma_wgs[0]} && wg <= {p.mma_wgs[-1]}"
        else:
            cond = f"wg == {wg}"
        with c.block(("if" if first else "else if") + f" ({cond})"):
            tasks = [p.mma_task] if wg in p.mma_wgs else \
                [t for t in design.tasks if t is not p.mma_task and t.warp_idx // 4 <= wg <= (t.warp_idx + t.num_warps - 1) // 4]
            for t in tasks:
                idx = design.tasks.index(t)
                if t is p.mma_task and not sm90:
                    cond_t = f"warp >= {t.warp_idx} && warp < {t.warp_idx + 4}"  # one warpgroup; thread 0 issues
                else:
                    cond_t = f"warp >= {t.warp_idx} && warp < {t.warp_idx + t.num_warps}"
                with c.block(f"if ({cond_t})"):
                    _Task(p, t, plans[t.name], idx, c).emit()
        first = False
    if not sm90:
        c("tc_fence_before();", "__syncthreads();")
        with c.block(f"if (warp == {mma_w0})"):
            c("tc_fence_after();", f"tmem_dealloc(tmem_base, {cols}u);")
    if p.cluster_size > 1:
        c("cluster_sync();  // no block leaves while its peer may still signal its barriers or write its stages")
    c("#endif")
    c.depth -= 1
    c("}")
    code = "\n".join(c.lines) + "\n"
    slots = tuple((sl.index, sl.set, sl.stage) for sl in p.layout.slots)
    meta = (("kind", "gemm"), ("dtype", p.dtype), ("b_major", p.b_major), ("tile", (p.bm, p.bn, p.bk)),
            ("tensor_maps", tuple((m.param, m.tensor, m.space, m.box_rows, m.box_cols, m.swizzle, m.dtype)
                                  for m in p.tensor_maps)),
            ("out_dtypes", tuple(sorted(p.out_dtypes.items()))),
            ("split_k", (p.split_k, _split_warps(p)) if p.split_k > 1 else None),
            ("cluster", p.cluster),
            ("gmem_spaces", tuple(sorted(p.gmem_spaces.items()))), ("outputs", p.outputs),
            ("inputs", tuple(sorted({t.source for t in p.tiles.values()}))),
            ("slots", slots), ("tasks", tuple(t.name for t in design.tasks)),
            ("staging", p.staging.dtype if p.staging else "tmem"), ("launch_regs", p.launch_regs),
            ("diag_words", DIAG_WORDS),
            ("problem", (p.problem["M"], p.problem["N"], p.problem["K"])))
    return KernelSource(design=design.name, code=code, entry=entry, smem_bytes=p.smem_bytes,
                        block=(p.num_threads, 1, 1), grid=None, params=tuple(params), line_map=tuple(c.map),
                        arch=arch, options=("-std=c++17",), meta=meta)
