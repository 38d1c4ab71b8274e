"""The store steps of a GEMM kernel: read a chunk of every input, compute the output, write it.

A store computes its output's expression (the checked grammar of ``analysis.expr``) over chunks
of 8 elements: each thread of the storing task takes chunks ``tt, tt + threads, ...`` of the
output tile, reads its inputs -- the accumulator from its staging buffer, other staged tiles from
their swizzled panels (``swizzle.unit_addr``) -- and writes 16 bytes (a 16-bit output) or 32
bytes (float32) to global memory, guarded at the problem's edge.

**Split-K** (problem key ``SPLIT_K`` = S > 1): each output tile is S work units, each summing a
share of the k tiles.  The store that reads the accumulator then runs in two passes:

1. every warp writes its chunks of the unit's partial sums (fp32) to the workspace ``pg_ws``
   (one BM x BN block per unit), makes them visible (``__threadfence``) and counts itself done
   on the counter of its tile and warp (``pg_cnt``, one per output tile and storing warp);
2. the warp that counts last -- its S - 1 twins of the other units are done -- adds their
   partials to its own, computes the output and stores it, and resets the counter to 0 for the
   next launch.

No unit ever waits for another, so the order in which the persistent blocks take units cannot
deadlock; a unit with no k tiles (K shorter than S k tiles) adds zeros.
"""

from __future__ import annotations

from typing import Any, Callable

from ...analysis.buildable.gemm_limits import CHUNK_ELEMS, SPACES, sliced_by_columns
from ...analysis.expr import compute_expr
from ...model.targets import DTYPE_BYTES
from .swizzle import unit_addr

#: Helpers the split-K store and the stream-K hand-over need (L2-coherent global accesses of the
#: partial sums).
SPLIT_K_HELPERS = r"""
__device__ __forceinline__ void st_global_cg_v4(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
__device__ __forceinline__ float4 ld_global_cg_v4(const float* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
  return v;
}
"""
#: Kernel parameters of split-K and stream-K: the partial sums and their counters, and the
#: ``KernelParam.resource`` tag both carry (the runtime passes them the launcher's workspace).
WORKSPACE, COUNTERS, PARTIALS = "pg_ws", "pg_cnt", "partials"


def tensor(name: str) -> str:
    """The C name of gmem tensor ``name``'s pointer: prefixed, so that no design name (``o``,
    ``src``, ``M``, ``tile`` ...) can be a local of the kernel or hide one."""
    return f"g_{name}"


def c_type(dtype: str) -> str:
    """C element type of a gmem tensor: 16-bit types are raw ``u16`` storage."""
    return "float" if dtype == "float32" else "u16"


#: Chunks a thread reads before it computes and stores them: their shared-memory loads overlap
#: (one chunk at a time leaves the storing warps waiting on each load's latency).
BATCH = 4
#: A chunk loop of at most this many chunks per thread is unrolled (``compute_in_place``).
UNROLL_CHUNKS = 32


def packed(v: str, dtype: str) -> str:
    """The 16 bytes of 8 floats ``v[0..7]`` packed into a 16-bit ``dtype``: a ``uint4`` expression."""
    return (f"make_uint4(pack_{dtype}x2({v}[0], {v}[1]), pack_{dtype}x2({v}[2], {v}[3]), "
            f"pack_{dtype}x2({v}[4], {v}[5]), pack_{dtype}x2({v}[6], {v}[7]))")


def batch_of(iters: int, limit: int = BATCH) -> int:
    """Chunks a thread reads together: the most of 1, 2, 4 (at most ``limit``) dividing ``iters``."""
    return max(b for b in (1, 2, 4) if b <= limit and iters % b == 0)


class StoreSteps:
    """The store step of a GEMM task (mixed into ``codegen.gemm._Task``, whose cursors, loops
    and plan it reads)."""

    def store(self, rs) -> None:
        c, p = self.c, self.p
        out = self.d.resource(rs.step.target)
        ins = list(self.d.deps(out.name))
        expr = compute_expr(self.d, out.name)  # checked: compute.expr
        space = p.gmem_spaces[out.name]
        row0, col0 = self.coords(space, repr(out.name))
        rdim, cdim = SPACES[space]
        rows, cols = {"MN": (p.bm, p.bn), "MK": (p.bm, p.bk)}[space]
        turned = space == "MN" and self.t.name in p.turn_tasks and out.name not in p.tma_stores
        if turned:  # the tile in turns (``Staging.turns``): this turn's columns, from the staging and the slices
            cols = p.staging.turn_cols
            col0 = f"({col0} + turn * {cols})"
        sliced = "tile" in self.loops and sliced_by_columns(space)
        chunks = rows * cols // CHUNK_ELEMS  # a multiple of the task's threads (codegen.chunk_split)
        span = None
        if sliced:
            c("// the output does not depend on the N tile: each N-tile column stores its own slice of every",
              "// k tile (contiguous rows), so each element is written once and every k tile costs each block",
              "// 1 / tiles_n of the tile's stores (one column storing whole k tiles holds the stage for longer",
              "// than the mainloop takes over it)")
            span = ("lo", "hi")
        loop = _Chunks(self, chunks // self.nt, cols // CHUNK_ELEMS, row0, col0, rdim, cdim, span=span)
        if self.split > 1 and p.acc in ins:
            return self.split_store(out, ins, expr, loop)
        if out.name in p.tma_stores:
            if out.name in p.in_place:
                self.compute_in_place(out, ins, expr, rows, p.staging.turn_cols)
            return self.tma_store(out)
        raw = ins == [p.acc] and expr.text.strip() == p.acc and p.staging.dtype == p.out_dtypes[out.name]
        with c.block(""):
            if sliced:
                c(f"const int slice = ({chunks} + tiles_n - 1) / tiles_n, lo = nb * slice, hi = min(lo + slice, {chunks});")
            if raw:  # one chunk is 16 bytes of a 16-bit type, 32 of float32: copied 16 bytes at a time
                c("// the output is the staged accumulator itself: its chunks go out as they are")
                halves = range(CHUNK_ELEMS * DTYPE_BYTES[p.staging.dtype] // 16)
                dst = f"{tensor(out.name)} + (size_t)gr{{u}} * {cdim} + gc{{u}}"
                step = 16 // DTYPE_BYTES[p.staging.dtype]
                loop.emit(lambda u: [c(f"const uint4 v{u}_{h} = ld_shared_v4({self.acc_unit(u, 16 * h)});") for h in halves],
                          lambda u: [c(f"*(uint4*)({dst.format(u=u)} + {step * h}) = v{u}_{h};") for h in halves])
            else:
                loop.emit(lambda u: [self.read(name, u) for name in ins],
                          lambda u: self.write(out, expr.to_c({n: f"x_{n}{u}[e]" for n in ins}), cdim, u))

    def compute_in_place(self, out, ins, expr, rows: int, cols: int) -> None:
        """The output computed over the staging buffer (``GemmPlan.in_place``): each thread reads
        its chunks of every input and writes the output's over the accumulator's, in the
        staging's type and swizzle, for the TMA store that follows.  No global address and no
        edge guard (the engine clips the problem's edges), and the chunk loop is unrolled when
        it is short, so a thread's addresses are its base plus constants: a drain costs its
        shared-memory traffic, not its index arithmetic."""
        c, p = self.c, self.p
        chunks = rows * cols // CHUNK_ELEMS
        iters, cpr = chunks // self.nt, cols // CHUNK_ELEMS
        batch = batch_of(iters)
        dt = p.staging.dtype
        c(f"// {out.name} computed over the staging buffer, in place, then stored from it by the TMA engine")
        rows_per = self.nt // cpr if self.nt % cpr == 0 else 0  # rows one pass of the threads covers
        if rows_per:  # a thread keeps its chunk column and steps down the rows
            c(f"const int r_tt = tt / {cpr}, j_tt = tt % {cpr};")
        c("#pragma unroll" if iters <= UNROLL_CHUNKS else "#pragma unroll 1")
        with c.block(f"for (int it = 0; it < {iters}; it += {batch})"):
            for u in range(batch):
                if rows_per:
                    c(f"const int r{u} = (it + {u}) * {rows_per} + r_tt, j{u} = j_tt;")
                else:
                    c(f"const int idx{u} = (it + {u}) * {self.nt} + tt, r{u} = idx{u} / {cpr}, j{u} = idx{u} % {cpr};")
                for name in ins:
                    self.read(name, u)
            for u in range(batch):
                self.compute(u, expr.to_c({n: f"x_{n}{u}[e]" for n in ins}))
                c(f"st_shared_v4({self.acc_unit(u)}, {packed(f'o{u}', dt)});")
        c("fence_proxy_async();  // the threads' writes -> the TMA engine that stores them")
        self.meet("every chunk written before the store")

    def meet(self, why: str) -> None:
        """The storing task's threads meet: on its named barrier, or a warp's ``__syncwarp``."""
        if self.nt > 32:
            self.c(f"named_bar_sync({self.p.store_barrier(self.t.name)}, {self.nt});  // {why}")
        else:
            self.c(f"__syncwarp();  // {why}")

    def tma_store(self, out) -> None:
        """The output is in the staging buffer, in its type and TMA layout (the staged accumulator
        itself, or computed there: ``compute_in_place``): one thread has the TMA engine store each
        panel (the engine clips the problem's edges), waits until the engine has read the staging
        buffer, and the task's threads meet before they release it."""
        c, p = self.c, self.p
        st = p.staging
        tm = next(m.param for m in p.tensor_maps if m.tensor == out.name)
        if out.name not in p.in_place:
            c("// the output is the staged accumulator itself: the TMA engine stores its panels")
        with c.block("if (tt == 0)"):
            c(f"const u32 stg = base + {st.offset}u + (u32){self.stage_cursor(p.acc)} * {st.stage_bytes}u;")
            turn = f"turn * {st.turn_cols} + " if st.turns > 1 else ""  # this turn's columns of the tile
            for q in range(st.turn_cols // st.panel_cols):
                c(f"tma_store_2d(&{tm}, stg + {q * st.panel_stride}u, n0 + {turn}{q * st.panel_cols}, m0);")
            c("bulk_commit();", "bulk_wait_read();  // the engine has read the staging buffer")
        self.meet("... before any thread of the task releases it")

    def split_store(self, out, ins, expr, loop) -> None:
        """Split-K: own partial to the workspace; the last warp of a tile's units finishes it."""
        c, p, sp = self.c, self.p, self.split
        acc, block = p.acc, p.bm * p.bn
        c(f"// split-K: unit {sp} x tile; partial sums to {WORKSPACE}, the last of the {sp} units stores")
        with c.block(""):
            c(f"float* const ws_own = {WORKSPACE} + (size_t)tile * {block}u;")

            def put(u: int) -> None:
                for h in (0, 4):
                    c(f"st_global_cg_v4(ws_own + r{u} * {p.bn} + 8 * j{u} + {h}, x_{acc}{u}[{h}], x_{acc}{u}[{h + 1}], "
                      f"x_{acc}{u}[{h + 2}], x_{acc}{u}[{h + 3}]);")
            loop.emit(lambda u: self.read(acc, u), put)
            nw = self.t.num_warps
            c("__threadfence(); __syncwarp();  // this warp's partials are visible before it counts itself done",
              f"int* const cnt = {COUNTERS} + (tile / {sp}) * {nw} + (tt >> 5);", "int last = 0;",
              f"if (lane == 0) last = atomicAdd(cnt, 1) == {sp - 1};", "last = __shfl_sync(0xffffffffu, last, 0);")
            with c.block("if (last)"):
                c("__threadfence();  // the other units' partials, before reading them",
                  f"const float* const ws_tile = {WORKSPACE} + (size_t)(tile - sk) * {block}u;")

                def finish(u: int) -> None:
                    c("#pragma unroll")
                    with c.block(f"for (int s = 0; s < {sp}; ++s)"):
                        src = f"ws_tile + (size_t)s * {block}u + r{u} * {p.bn} + 8 * j{u}"
                        c("if (s == sk) continue;",
                          f"const float4 lo = ld_global_cg_v4({src}), hi = ld_global_cg_v4({src} + 4);",
                          f"x_{acc}{u}[0] += lo.x; x_{acc}{u}[1] += lo.y; x_{acc}{u}[2] += lo.z; x_{acc}{u}[3] += lo.w;",
                          f"x_{acc}{u}[4] += hi.x; x_{acc}{u}[5] += hi.y; x_{acc}{u}[6] += hi.z; x_{acc}{u}[7] += hi.w;")
                    self.write(out, expr.to_c({n: f"x_{n}{u}[e]" for n in ins}), loop.cdim, u)
                loop.emit(lambda u: [self.read(name, u) for name in ins], finish, batch=4)
                c("if (lane == 0) *cnt = 0;  // ready for the next launch")

    def acc_unit(self, u: int, extra: int = 0) -> str:
        """Address of chunk (r<u>, j<u>) of the accumulator's staging (plus ``extra`` bytes)."""
        p = self.p
        st = p.staging
        width = CHUNK_ELEMS * DTYPE_BYTES[st.dtype]
        if st.swizzled:
            stage = f"(base + {st.offset}u + (u32){self.stage_cursor(p.acc)} * {st.stage_bytes}u)"
            return unit_addr(stage, st.panel, st.panel_stride, f"r{u}", f"(u32)j{u} * {width}u + {extra}u")
        return (f"base + {st.offset}u + (u32){self.stage_cursor(p.acc)} * {st.stage_bytes}u + (u32)r{u} * {st.pitch}u "
                f"+ (u32)j{u} * {width}u + {extra}u")

    def read(self, name: str, u: int) -> None:
        """``float x_<name><u>[8]``: chunk (r<u>, j<u>) of input ``name`` from its shared-memory stage."""
        c, p = self.c, self.p
        stage = self.stage_cursor(name)
        c(f"float x_{name}{u}[8];")
        if name == p.acc:
            if p.staging.dtype == "float32":
                self.floats(f"{name}{u}", self.acc_unit(u), self.acc_unit(u, 16))
            else:
                self.halves(f"{name}{u}", p.staging.dtype, self.acc_unit(u))
            if self.split > 1:
                c(f"if ({self.nkt} == 0) for (int e = 0; e < 8; ++e) x_{name}{u}[e] = 0.f;  // a unit without k tiles")
            return
        t = p.tiles[name]
        stage_base = f"(base + {t.offset}u + (u32){stage} * {t.stage_bytes}u)"
        width = CHUNK_ELEMS * DTYPE_BYTES[t.dtype]

        def unit(extra: int) -> str:
            return unit_addr(stage_base, t.panel, t.panel_stride, f"r{u}", f"(u32)j{u} * {width}u + {extra}u")

        if t.dtype == "float32":
            self.floats(f"{name}{u}", unit(0), unit(16))
        else:
            self.halves(f"{name}{u}", t.dtype, unit(0))

    def floats(self, x: str, lo: str, hi: str) -> None:
        self.c(f"const uint4 lo_{x} = ld_shared_v4({lo}), hi_{x} = ld_shared_v4({hi});",
               f"x_{x}[0] = __uint_as_float(lo_{x}.x); x_{x}[1] = __uint_as_float(lo_{x}.y); "
               f"x_{x}[2] = __uint_as_float(lo_{x}.z); x_{x}[3] = __uint_as_float(lo_{x}.w);",
               f"x_{x}[4] = __uint_as_float(hi_{x}.x); x_{x}[5] = __uint_as_float(hi_{x}.y); "
               f"x_{x}[6] = __uint_as_float(hi_{x}.z); x_{x}[7] = __uint_as_float(hi_{x}.w);")

    def halves(self, x: str, dtype: str, addr: str) -> None:
        self.c(f"const uint4 v_{x} = ld_shared_v4({addr});",
               f"unpack_{dtype}x2(v_{x}.x, x_{x}[0], x_{x}[1]); unpack_{dtype}x2(v_{x}.y, x_{x}[2], x_{x}[3]);",
               f"unpack_{dtype}x2(v_{x}.z, x_{x}[4], x_{x}[5]); unpack_{dtype}x2(v_{x}.w, x_{x}[6], x_{x}[7]);")

    def write(self, out, body: str, cdim: str, u: int) -> None:
        """Compute chunk u's 8 outputs and write them: 16 bytes of a 16-bit type, 32 of float32."""
        c, dt = self.c, self.p.out_dtypes[out.name]
        dst = f"({tensor(out.name)} + (size_t)gr{u} * {cdim} + gc{u})"
        self.compute(u, body)
        o = f"o{u}"
        if dt == "float32":
            c(f"*(uint4*){dst} = make_uint4(__float_as_uint({o}[0]), __float_as_uint({o}[1]), "
              f"__float_as_uint({o}[2]), __float_as_uint({o}[3]));",
              f"*(uint4*)({dst} + 4) = make_uint4(__float_as_uint({o}[4]), __float_as_uint({o}[5]), "
              f"__float_as_uint({o}[6]), __float_as_uint({o}[7]));")
        else:
            c(f"*(uint4*){dst} = {packed(o, dt)};")

    def compute(self, u: int, body: str) -> None:
        """``float o<u>[8]``: chunk u's 8 outputs, ``body`` (the output's expression) per element."""
        self.c(f"float o{u}[8];", "#pragma unroll", f"for (int e = 0; e < 8; ++e) o{u}[e] = {body};")


class _Chunks:
    """The loop of a storing task over its chunks of an output tile: chunk ``idx = it * threads +
    tt`` is row ``idx / cpr``, column chunk ``idx % cpr``; ``emit`` reads a batch of chunks
    (``r<u>``, ``j<u>``: the tile position of chunk u of the batch), then writes each one that
    lies inside the problem (``gr<u>``, ``gc<u>``)."""

    def __init__(self, task, iters: int, cpr: int, row0: str, col0: str, rdim: str, cdim: str,
                 span: tuple[str, str] | None = None) -> None:
        self.t, self.iters, self.cpr = task, iters, cpr
        self.row0, self.col0, self.rdim, self.cdim = row0, col0, rdim, cdim
        self.span = span  # (lo, hi): C expressions of the chunk range to store, else the whole tile

    def emit(self, reads: Callable[[int], Any], writes: Callable[[int], Any], batch: int = BATCH) -> None:
        c, nt = self.t.c, self.t.nt
        batch = batch_of(self.iters, batch)
        c("#pragma unroll 1")
        if self.span is None:
            head = f"for (int it = 0; it < {self.iters}; it += {batch})"
            index = [f"(it + {u}) * {nt} + tt" for u in range(batch)]
        else:  # chunks lo..hi-1: a chunk past hi reads chunk lo (inside the tile) and writes nothing
            lo, hi = self.span
            head = f"for (int it = {lo}; it < {hi}; it += {batch * nt})"
            index = [f"it + {u * nt} + tt < {hi} ? it + {u * nt} + tt : {lo}" for u in range(batch)]
        with c.block(head):
            for u in range(batch):
                c(f"const int idx{u} = {index[u]}, r{u} = idx{u} / {self.cpr}, j{u} = idx{u} % {self.cpr};")
                reads(u)
            for u in range(batch):
                c(f"const int gr{u} = {self.row0} + r{u}, gc{u} = {self.col0} + {CHUNK_ELEMS} * j{u};")
                inside = f"gr{u} < {self.rdim} && gc{u} < {self.cdim}"
                if self.span is not None:
                    inside = f"it + {u * nt} + tt < {self.span[1]} && {inside}"
                with c.block(f"if ({inside})"):
                    writes(u)


__all__ = ["BATCH", "COUNTERS", "PARTIALS", "SPLIT_K_HELPERS", "StoreSteps", "WORKSPACE", "c_type", "tensor"]
