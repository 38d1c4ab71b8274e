"""``emit(design)``: a design -> one warp-specialised CUDA kernel (``KernelSource``).

Shape of the generated kernel (streaming designs)::

    dynamic shared memory = data buffers (smem_layout) + barrier storage (barrier_layout offsets)
    thread 0: mbarrier.init every slot with its layout count; fence.mbarrier_init; __syncthreads()
    if (warp in task 0's range) { cursors; for (tile = block; tile < num_tiles; tile += grid) { steps } }
    else if (warp in task 1's range) { ... }
    (warps no task owns exit at once)

Each step's barrier actions come from the resolver (``analysis.resolve``), i.e. from THE
protocol table and the layout: the generator never decides who arrives where.  tma producers are
one elected thread issuing 1-D bulk copies that complete on the full barrier armed by
``arrive.expect_tx``; async producers copy or compute with 16-byte thread accesses (or cp.async
for AsyncLoad); async consumers compute the target's expression and store 16-byte vectors.  A
tile shorter than the stage (the last one, when the element count is not a multiple) stages its
whole 16-byte vectors (the bulk copy and expect_tx shrink to match) and consumers compute the
few remaining elements straight from global memory.

Every wait is bounded by the watchdog (``ptx.PRELUDE``); ``KernelSource.meta['sites']`` names
the task, barrier set and step of each wait so the runtime can say which barrier hung.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..analysis.buildable import StreamPlan, TaskCode, is_mma_design, plan_stream
from ..analysis.expr import FUNCTIONS
from ..analysis.guard import on_errors
from ..analysis.validate import require_valid
from ..errors import CompileError
from ..model.design import Design
from ..model.kinds import AsyncProducerOp, OpKind, Role, Who
from ..model.names import ALTERNATIVE_TOKENS, CPP_KEYWORDS, CUDA_BUILTINS, CUDA_MACROS
from ..model.resource import Memory
from ..model.targets import ARCHES
from ._writer import Writer
from .dtypes import DTYPES, dtype
from .element import element_code
from .gemm import emit_gemm
from .instrument import DEVICE as INSTRUMENT_DEVICE
from .instrument import Instrument, Stamps
from .ptx import DRAIN_NS, PRELUDE, RECORD_INTS
from .source import KernelParam, KernelSource

__all__ = ["TUNING", "identifiers", "GENERATED_WORDS", "RENAMED_PREFIX", "cname", "emit"]

#: Architectures the generated source is meant for (one cubin each).
#: Tuning knobs emit() accepts, with their allowed values (first = default).
TUNING = {"store": ("wb", "cs"), "load_hint": ("none", "evict_first")}

#: C words, and the types, built-ins and helpers the kernel body writes around a design's names.
_C_WORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false class new delete this template typename namespace using operator private public
protected virtual friend asm u16 u32 u64 uint4 float4 blockIdx threadIdx gridDim blockDim warpSize make_uint4
reinterpret_cast s i unroll pragma define""".split())


def identifiers(*texts: str) -> frozenset[str]:
    """Every identifier of CUDA C ``texts``, outside comments and string literals (PTX text)."""
    words: set[str] = set()
    for text in texts:
        code = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', " ", text, flags=re.S)
        words.update(re.findall(r"\b[A-Za-z_]\w*", code))
    return frozenset(words)


#: Identifiers the generated code already uses at file scope or in the kernel: the prelude, each
#: element type's helpers, the instrumentation, the calls of expression templates, and C++'s
#: reserved words.  A design name that is one of them would hide it, or be it.
GENERATED_WORDS = (_C_WORDS | CPP_KEYWORDS | frozenset(ALTERNATIVE_TOKENS) | CUDA_MACROS | CUDA_BUILTINS
                   | identifiers(PRELUDE, INSTRUMENT_DEVICE, *(t.helpers for t in DTYPES.values()),
                                 *(template for _, template in FUNCTIONS.values())))

#: What a renamed design name starts with: design names cannot start with 'pg_' (``model.names``),
#: and no other generated name starts with this, so renaming is one-to-one.
RENAMED_PREFIX = "pg_n_"


def cname(name: str) -> str:
    """A design name as the C identifier of the streaming kernel: the name itself, or, when the
    generated code already uses it (``GENERATED_WORDS``, ``pg_`` / ``PG_`` / ``__`` names), the
    name behind ``RENAMED_PREFIX``.  Two names never map to one identifier: ``u32`` becomes
    ``pg_n_u32`` and ``u32_`` stays ``u32_``.

    >>> cname("gmem_a"), cname("u32"), cname("u32_"), cname("expf")
    ('gmem_a', 'pg_n_u32', 'u32_', 'pg_n_expf')
    """
    if name in GENERATED_WORDS or name.startswith(("pg_", "PG_", "__")):
        return RENAMED_PREFIX + name
    return name


def emit(design: Design, *, arch: str = "sm_90a", validate: bool = True, watchdog: bool = True,
         tuning: Mapping[str, Any] | None = None, instrument: Instrument | None = None,
         **gemm_options: Any) -> KernelSource:
    """The warp-specialised kernel of ``design`` for ``arch``.

    A design that validates with no errors for ``arch`` always emits: what the generators can
    build is a rule (``codegen.*``, ``analysis.buildable``).  With errors, ONE ``DesignError`` lists
    them all.  ``validate=False`` skips the design rules (to build deliberately wrong kernels,
    e.g. for watchdog tests); what the generator itself cannot build is still refused.
    ``tuning`` picks streaming code variants (``TUNING``).  ``instrument`` (an ``Instrument``)
    builds a kernel that stamps every step of a sample of blocks (``codegen.instrument``; MMA
    designs: ``codegen.gemm.stamps``).  MMA designs go to ``codegen.gemm.emit_gemm(design, arch=...,
    **gemm_options)``.  Options that do not apply raise ``CompileError``.
    """
    if arch not in ARCHES:
        raise CompileError(f"arch {arch!r} is not a target; use one of {', '.join(ARCHES)}")
    knobs = dict(tuning or {})
    for k, v in knobs.items():
        if k not in TUNING or v not in TUNING[k]:
            allowed = "; ".join(f"{n}: {', '.join(vals)}" for n, vals in TUNING.items())
            raise CompileError(f"tuning {k}={v!r} is not known; allowed: {allowed}")
    mma = is_mma_design(design)
    if gemm_options and not mma:
        raise CompileError(f"options {', '.join(sorted(gemm_options))} apply to MMA designs only; "
                           f"{design.name!r} is a streaming design")
    if validate:
        require_valid(design, arch)
    with on_errors(design, "the code generator"):  # validate=False: a design with errors may leave nothing to build
        if mma:
            return emit_gemm(design, arch=arch, validate=False, instrument=instrument,
                             **gemm_options)  # validated above when asked
        plan = plan_stream(design).require(design.name, arch)
        return _Kernel(plan, arch, watchdog, {k: knobs.get(k, vals[0]) for k, vals in TUNING.items()},
                       instrument).source()


class _Kernel:
    def __init__(self, plan: StreamPlan, arch: str, watchdog: bool, tuning: dict[str, Any],
                 instrument: Instrument | None = None) -> None:
        self.p = plan
        self.dt = dtype(plan.dtype)
        self.ins = Stamps(plan, instrument) if instrument is not None else None
        self.arch = arch
        self.watchdog = watchdog
        self.tuning = tuning
        self.w = Writer()
        self.sites: list[tuple[int, str, str, str, int]] = []  # (site, task, set, step, line)
        self.set_const = {s.name: f"PG_BAR_{i}" for i, s in enumerate(plan.layout.sets)}
        self.buf_const = {b.resource: f"PG_BUF_{cname(b.resource)}" for b in plan.smem.buffers}
        self.entry = f"pg_{plan.design.name}"

    # -- the file -------------------------------------------------------------------------------
    def source(self) -> KernelSource:
        p, w = self.p, self.w
        d = p.design
        w.add(f"// pgstudio: warp-specialised kernel for design {d.name!r}", "kernel")
        w.add(f"// {p.tile_elems} {p.dtype} elements per tile ({p.tile_bytes} B); {p.threads} threads; "
              f"{p.smem.total_bytes} B dynamic shared memory ({p.smem.data_bytes} B data + "
              f"{p.smem.barrier_bytes} B barriers); target {self.arch}")
        w.add(PRELUDE.strip("\n"))
        w.add(self.dt.helpers.strip("\n"))
        if self.ins:
            w.add(self.ins.prelude())
        w.add("")
        w.add(f"#define PG_TILE {p.tile_elems}")
        w.add(f"#define PG_ES {self.dt.size}")
        w.add(f"#define PG_TILE_VECS {p.tile_bytes // 16}")
        w.add(f"#define PG_DRAIN_NS {DRAIN_NS}ull")
        w.add("// barrier storage (barrier_layout): offset of each set's stage-0 slot from PG_BAR_BASE")
        w.add(f"constexpr u32 PG_BAR_BASE = {p.smem.barrier_offset};")
        for s in p.layout.sets:
            off = p.layout.slots[s.first].offset
            w.add(f"constexpr u32 {self.set_const[s.name]} = {off};  // {s.name}: {s.stages} stages, arrive count "
                  f"{s.init_count}, tx {s.tx_bytes} B", f"barrier {s.name}")
        w.add("// data buffers (smem_layout): byte offset of stage 0")
        for b in p.smem.buffers:
            alias = f", a view of {b.alias_of}" if b.alias_of else ""
            w.add(f"constexpr u32 {self.buf_const[b.resource]} = {b.offset};  // {b.resource}: {b.stages} x "
                  f"{b.stage_bytes} B{alias}", f"buffer {b.resource}")
        w.add("")
        self._kernel()
        params = [KernelParam(cname(n), "ptr", p.dtype, n) for n, _ in p.tensors]
        params += [KernelParam("pg_n", "i64"), KernelParam("pg_rec", "watchdog"), KernelParam("pg_budget_ns", "u64")]
        params += [self.ins.param] if self.ins else []
        meta = (
            ("kind", "stream"), ("dtype", p.dtype), ("tile_elems", p.tile_elems), ("vec", self.dt.vec),
            ("tensors", p.tensors), ("sites", tuple(self.sites)), ("record_ints", RECORD_INTS),
            ("sets", tuple((s.name, s.first, s.stages, s.init_count, s.tx_bytes) for s in p.layout.sets)),
            ("tasks", tuple((t.task.name, t.task.warp_idx, t.task.num_warps) for t in p.tasks)),
            ("num_elements", int(d.problem_dict.get("num_elements", 1 << 24))),
            ("tuning", tuple(sorted(self.tuning.items()))), ("watchdog", self.watchdog),
        ) + ((self.ins.meta(),) if self.ins else ())
        return KernelSource(d.name, w.text(), self.entry, p.smem.total_bytes, (p.threads, 1, 1), None,
                            tuple(params), tuple(w.map), self.arch, ("-std=c++17",), meta)

    def _kernel(self) -> None:
        p, w = self.p, self.w
        args = [f"{'const ' if not out else ''}{self.dt.c_type}* __restrict__ {cname(n)}" for n, out in p.tensors]
        args += ["const long long pg_n", "int* __restrict__ pg_rec", "const u64 pg_budget_ns"]
        args += [self.ins.c_arg] if self.ins else []
        head = f'extern "C" __global__ void __launch_bounds__({p.threads}) {self.entry}(\n    ' + \
               ",\n    ".join(args) + ") {"
        with w.block(head, "kernel entry"):
            w.add("extern __shared__ __align__(128) unsigned char pg_smem[];")
            w.add("const u32 pg_smem_base = pg_smem_u32(pg_smem);")
            w.add("const u32 pg_bar = pg_smem_base + PG_BAR_BASE;")
            w.add("const long long pg_num_tiles = (pg_n + PG_TILE - 1) / PG_TILE;")
            w.add("const int pg_warp = (int)(threadIdx.x >> 5);")
            with w.block("if (threadIdx.x == 0) {  // one thread initialises every barrier, then fences", "init"):
                for s in p.layout.sets:
                    w.add(f"for (u32 s = 0; s < {s.stages}; ++s) pg_mbar_init(pg_bar + {self.set_const[s.name]} + 8u * s, "
                          f"{s.init_count}u);  // {s.name}", f"barrier {s.name}")
                w.add("pg_mbar_init_fence();")
            w.add("__syncthreads();")
            for tc in p.tasks:
                self._task(tc)
            w.add("// warps that no task owns have nothing to do")

    # -- one role -------------------------------------------------------------------------------
    def _task(self, tc: TaskCode) -> None:
        _p, w = self.p, self.w
        t = tc.task
        lo, hi = t.warp_idx, t.warp_idx + t.num_warps
        self.cur = {c.name: f"pg_c{i}" for i, c in enumerate(tc.plan.cursors)}
        steps = list(tc.plan.steps())
        copies = any(a.verb == "complete_tx" for s in steps for a in s.actions)
        self.ok_flag = copies
        who = "one elected thread" if tc.elected else f"{t.num_threads} threads"
        with w.block(f"if (pg_warp >= {lo} && pg_warp < {hi}) {{  // task {t.name}: warps {lo}..{hi - 1}, {who}",
                     f"task {t.name}"):
            if tc.elected:
                w.add(f"if (threadIdx.x != {lo * 32}u) return;  // one elected thread runs this role")
            else:
                w.add(f"const int pg_tt = (int)threadIdx.x - {lo * 32};  // thread within the task")
            for c in tc.plan.cursors:
                v = self.cur[c.name]
                w.add(f"int {v}_i = 0; u32 {v}_p = {c.start_phase}u;  // cursor {c.name} (index, phase), "
                      f"{c.stages} stages", f"cursor {c.name}")
            if copies:
                w.add("bool pg_ok = true;")
                if self.tuning["load_hint"] == "evict_first":
                    w.add("const u64 pg_policy = pg_policy_evict_first();  // inputs are read once")
            w.add("long long pg_it = 0;")
            if self.ins:
                self.ins.task_begin(w, tc)
            loop = "for (long long pg_tile = blockIdx.x; pg_tile < pg_num_tiles; pg_tile += gridDim.x, ++pg_it) {"
            with w.block(loop, f"task {t.name}: domain_loop(0, num_tiles, 1)"):
                w.add("const long long pg_base = pg_tile * PG_TILE;")
                w.add("const int pg_valid = (pg_n - pg_base) < PG_TILE ? (int)(pg_n - pg_base) : PG_TILE;")
                w.add("const int pg_vecs = (pg_valid * PG_ES) >> 4;  // whole 16-byte vectors staged in smem")
                if any(a.verb in ("arrive_expect_tx", "complete_tx") for s in steps for a in s.actions):
                    w.add("const u32 pg_copy_bytes = (u32)pg_vecs << 4;")
                for s in steps:
                    self._step(tc, s)
            if self.ins:
                self.ins.task_end(w)
            if copies:
                w.add("if (!pg_ok) pg_drain(PG_DRAIN_NS);  // aborting: let issued copies land before exiting")
            w.add("return;")

    def _slot(self, set_name: str, cursor: str) -> str:
        return f"pg_bar + {self.set_const[set_name]} + ((u32){self.cur[cursor]}_i << 3)"

    def _one(self, tc: TaskCode, code: str) -> str:
        return code if tc.elected else f"if (pg_tt == 0) {code}"

    def _step(self, tc: TaskCode, rs) -> None:
        w, step = self.w, rs.step
        w.add(f"// {step}", f"{tc.task.name}: {step}")
        if self.ins:
            self.ins.step_begin(w, rs)
        for a in rs.actions:
            slot = self._slot(a.set, a.cursor)
            if a.verb == "wait":
                if self.ins:
                    self.ins.probe(w, slot, f"{self.cur[a.cursor]}_p")
                site = len(self.sites)
                line = w.next_line
                self.sites.append((site, tc.task.name, a.set, str(step), line))
                stage, phase = f"{self.cur[a.cursor]}_i", f"{self.cur[a.cursor]}_p"
                fail = "{ pg_ok = false; break; }" if self.ok_flag else "break;"
                if self.watchdog:
                    w.add(f"if (!pg_wait(pg_rec, pg_budget_ns, {slot}, {phase}, {site}, {stage}, pg_it)) {fail}")
                else:
                    w.add(f"while (!pg_mbar_try_wait({slot}, {phase})) {{ }}")
            elif a.verb == "arrive_expect_tx":
                mult = self._tx_multiple(a.bytes)
                nbytes = "pg_copy_bytes" if mult == 1 else f"{mult}u * pg_copy_bytes"
                w.add(self._one(tc, f"pg_mbar_arrive_expect_tx({slot}, {nbytes});"))
            elif a.verb == "complete_tx":
                self._bulk_copy(tc, rs, slot)
            elif a.verb == "arrive":
                if a.who is Who.ONE:
                    w.add(self._one(tc, f"pg_mbar_arrive({slot});"))
                elif a.role is Role.FULL and self._async_load(rs):  # a producer's arrival
                    w.add(f"pg_cp_async_arrive_noinc({slot});  // arrives once this thread's cp.async landed")
                else:
                    w.add(f"pg_mbar_arrive({slot});")
            else:  # pragma: no cover - the protocol table has no other verbs
                raise CompileError(f"unknown barrier action {a.verb!r}")
        if step.op in ("load", "store") and rs.kind is not OpKind.TMA:
            self._thread_work(tc, rs)
        for c in rs.advances:
            v = self.cur[c]
            stages = tc.plan.cursor(c).stages
            w.add(f"if (++{v}_i == {stages}) {{ {v}_i = 0; {v}_p ^= 1u; }}")
        if self.ins:
            self.ins.step_end(w)

    def _tx_multiple(self, nbytes: int) -> int:
        """Tiles one expect_tx covers (every stage is one tile: ``codegen.tile_uniform``)."""
        return nbytes // self.p.tile_bytes

    def _async_load(self, rs) -> bool:
        """Do the committed members arrive through cp.async (one op per commit: ``codegen.async_producer_op``)?"""
        d = self.p.design
        name = d.group(rs.step.target).member_names[0] if rs.step.via == "group" else rs.step.target
        return d.resource(name).pipeline_config.async_producer_op is AsyncProducerOp.AsyncLoad

    # -- work -----------------------------------------------------------------------------------
    def _stage_addr(self, resource: str, cursor: str) -> str:
        stage = self.p.design.resource(resource).pipeline_config.num_bytes
        return f"{self.buf_const[resource]} + (u32){self.cur[cursor]}_i * {stage}u"

    def _bulk_copy(self, tc: TaskCode, rs, slot: str) -> None:
        target = rs.step.target
        src = cname(self.p.exprs[target].operands[0])
        dst = f"pg_smem_base + {self._stage_addr(target, rs.cursor)}"
        hint = self.tuning["load_hint"] != "none"
        call = f"pg_bulk_g2s_hint({dst}, {src} + pg_base, pg_copy_bytes, {slot}, pg_policy)" if hint else \
            f"pg_bulk_g2s({dst}, {src} + pg_base, pg_copy_bytes, {slot})"
        self.w.add(self._one(tc, f"if (pg_copy_bytes) {call};"))

    def _operand(self, tc: TaskCode, name: str, vec: str) -> str:
        """A uint4 expression: 16 bytes of ``name`` at vector ``vec`` of the current tile."""
        r = self.p.design.resource(name)
        if r.memory is Memory.GMEM:
            return f"*reinterpret_cast<const uint4*>({cname(name)} + pg_base + (long long){vec} * PG_VEC)"
        cur = self.p.consumer_cursor(tc, name)
        return f"*reinterpret_cast<const uint4*>(pg_smem + {self._stage_addr(name, cur)} + {vec} * 16)"

    def _thread_work(self, tc: TaskCode, rs) -> None:
        p, w = self.p, self.w
        target = rs.step.target
        ex = p.exprs[target]  # a computed resource: codegen.store_target, codegen.stage_input
        to_gmem = rs.kind is None
        async_load = not to_gmem and self._async_load(rs)
        nthreads = tc.task.num_threads

        def body(vec: str) -> list[str]:
            if to_gmem:
                dst = f"{cname(target)} + pg_base + (long long){vec} * PG_VEC"
            else:
                dst_smem = f"{self._stage_addr(target, rs.cursor)} + {vec} * 16"
            if async_load:
                src = cname(ex.operands[0])
                return [f"pg_cp_async16(pg_smem_base + {dst_smem}, {src} + pg_base + (long long){vec} * PG_VEC);"]
            plain = len(ex.operands) == 1 and ex.text.strip() == ex.operands[0]
            if plain:
                val = self._operand(tc, ex.operands[0], vec)
                lines = [f"const uint4 pg_u = {val};"]
            else:
                names = {o: f"pg_x{i}[pg_i]" for i, o in enumerate(ex.operands)}
                lines = [f"float pg_x{i}[PG_VEC]; pg_unpack({self._operand(tc, o, vec)}, pg_x{i});"
                         for i, o in enumerate(ex.operands)]
                lines += ["float pg_r[PG_VEC];", "#pragma unroll",
                          f"for (int pg_i = 0; pg_i < PG_VEC; ++pg_i) pg_r[pg_i] = {ex.to_c(names)};",
                          "const uint4 pg_u = pg_pack(pg_r);"]
            if not to_gmem:
                lines.append(f"*reinterpret_cast<uint4*>(pg_smem + {dst_smem}) = pg_u;")
            elif self.tuning["store"] == "cs":
                lines.append(f"pg_st_global_cs({dst}, pg_u);")
            else:
                lines.append(f"*reinterpret_cast<uint4*>({dst}) = pg_u;")
            return lines

        vecs = p.tile_bytes // 16
        iters = -(-vecs // nthreads)
        with w.block("if (pg_valid == PG_TILE) {  // a whole tile: a fixed trip count the compiler unrolls"):
            w.add("#pragma unroll" if iters <= 16 else "#pragma unroll 4")
            with w.block(f"for (int pg_j = 0; pg_j < {iters}; ++pg_j) {{"):
                w.add(f"const int pg_v = pg_tt + pg_j * {nthreads};")
                guard = vecs % nthreads != 0
                if guard:
                    w.add("if (pg_v < PG_TILE_VECS) {")
                    w.depth += 1
                for ln in body("pg_v"):
                    w.add(ln)
                if guard:
                    w.depth -= 1
                    w.add("}")
        with w.block("else {  // the last, shorter tile", tail="}"):
            with w.block(f"for (int pg_v = pg_tt; pg_v < pg_vecs; pg_v += {nthreads}) {{"):
                for ln in body("pg_v"):
                    w.add(ln)
            if to_gmem:
                w.add("// elements past the last whole vector: computed from global memory directly")
                with w.block(f"for (int pg_e = pg_vecs * PG_VEC + pg_tt; pg_e < pg_valid; pg_e += {nthreads}) {{"):
                    code = element_code(p.design, [target], self.dt, lambda n: f"pg_ld1({cname(n)} + pg_base + pg_e)",
                                        p.exprs)
                    for ln in code.lines:
                        w.add(ln)
                    w.add(f"pg_st1({cname(target)} + pg_base + pg_e, {code.values[target]});")
