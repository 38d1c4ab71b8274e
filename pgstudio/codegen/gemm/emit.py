"""emit_gemm(design): a warp-specialised, persistent tensor-core GEMM kernel from a GEMM design.

The kernel scope: the header comment, the prelude and the architecture's helpers, the signature
(tensor maps, output and input pointers, the problem size, the watchdog, split-K's workspace),
shared-memory alignment, the barriers of ``barrier_layout(design, arch)`` initialised with the
layout's counts (a cluster's shared tile counting its peers' releases), the work units
(``scheduler.py``), then one role branch per task (``task.py``) inside its warpgroup.  The
problem size (M, N, K) is a kernel argument: one compiled kernel serves every shape of the same
tiles; loops over ``num_tiles`` are persistent (tile = blockIdx.x; tile +=
gridDim.x).
"""

from __future__ import annotations

import re

from ...analysis.buildable.gemm_plan import GemmPlan, plan_gemm
from ...analysis.resolve import resolve
from ...analysis.validate import require_valid
from ...model.design import Design
from ..instrument import Instrument
from ..source import KernelParam, KernelSource
from . import scheduler, sm100, tcgen05, wgmma
from . import sm90 as sm90_steps
from .code import Code
from .epilogue import COUNTERS, PARTIALS, SPLIT_K_HELPERS, WORKSPACE, c_type, tensor
from .prelude import DIAG_WORDS, SETMAXNREG, prelude, setmaxnreg
from .stamps import GemmStamps
from .task import Task

DOC = """\
// pgstudio GEMM kernel for design '{name}' ({arch}); generated code, do not edit.
// Tasks -> role branches by warp; schedules -> the protocol table's barrier actions on the
// slots of barrier_layout(design) ({nbar} mbarriers).  {mapping}
"""


def _split_warps(p: GemmPlan) -> int:
    """Warps of the task whose store finishes split tiles (one counter per output tile and warp)."""
    return next(t.num_warps for t in p.design.tasks for s in (t.schedule.steps() if t.schedule else ())
                if s.op == "store" and p.acc in p.design.deps(s.target))


def _kernel_name(design: Design) -> str:
    return "pg_gemm_" + re.sub(r"\W", "_", design.name)


def emit_gemm(design: Design, *, arch: str = "sm_90a", b_major: str | None = None,
              acc_stage_dtype: str | None = None, validate: bool = True,
              instrument: Instrument | None = None) -> KernelSource:
    """The CUDA C++ of ``design``'s GEMM kernel for ``arch`` ("sm_90a" runs on H100 / H200;
    "sm_100a" is compile-only).  ``b_major``: "mn" when gmem B is K x N row-major (D = A @ B),
    "k" when it is stored N x K; None: the problem's ``b_major`` (default "mn").  ``acc_stage_dtype``
    (sm_90a): the dtype of the shared-memory staging of the accumulator; None picks float32 when it fits, else the output dtype.
    ``validate=False`` skips the design rules (to build deliberately wrong kernels); what the
    generator cannot build (``codegen.*``) is refused either way, as one ``DesignError``.
    ``instrument`` (an ``Instrument``): a build whose sampled blocks stamp every task's steps
    (``stamps.py``), with the stamp buffer as the kernel's last parameter; every other block runs
    the plain build's role branches, line for line."""
    if validate:
        require_valid(design, arch)
    p = plan_gemm(design, arch, b_major, acc_stage_dtype).require(design.name, arch)
    plans = resolve(design, p.layout)
    stamps = GemmStamps(p, plans, instrument) if instrument is not None else None
    c = Code()
    sm90 = arch == "sm_90a"
    mapping = (sm90_steps.MAP_SM90 if sm90 else sm100.MAP_SM100).format(stage=p.staging.dtype, wgs=p.umma_arrivals,
                                                                            lag=p.mma_lag)
    c(DOC.format(name=design.name, arch=arch, nbar=p.layout.num_barriers, mapping=mapping).rstrip("\n"))
    c(prelude())
    if sm90:
        c(wgmma.helpers(), wgmma.mma_function(p.wg_cols, p.dtype, 1 if p.b_major == "mn" else 0)[1])
    else:
        c(tcgen05.helpers())
    if p.unit_k_range:  # partial sums through L2: split-K and stream-K
        c(SPLIT_K_HELPERS)
    if p.stream_k:
        c(scheduler.STREAM_K_HELPERS)
    if p.cluster_size > 1:
        c(scheduler.CLUSTER_HELPERS)
    if stamps:
        c(stamps.prelude())
    regs = p.registers.changes() if p.registers else {}
    if regs:
        c(SETMAXNREG)
    feat = wgmma.GUARD if sm90 else tcgen05.GUARD
    entry = _kernel_name(design)
    params = [KernelParam(m.param, "tensormap", m.dtype, m.tensor) for m in p.tensor_maps]
    params += [KernelParam(o, "ptr", p.out_dtypes[o], o) for o in p.outputs]
    params += [KernelParam(i, "ptr", p.dtype, i) for i in p.pointer_inputs]
    params += [KernelParam(n, "i32") for n in ("M", "N", "K")]
    params += [KernelParam("wd_abort", "ptr", "int32", "watchdog"), KernelParam("wd_diag", "ptr", "int32", "watchdog"),
               KernelParam("wd_budget_ns", "u64", "", "watchdog")]
    if p.unit_k_range:  # split-K / stream-K: the partial sums and their counters (runtime.gemm_run sizes them)
        params += [KernelParam(WORKSPACE, "ptr", "float32", PARTIALS), KernelParam(COUNTERS, "ptr", "int32", PARTIALS)]
    if stamps:
        params.append(stamps.param)
    sig = []
    for prm in params:
        if prm.kind == "tensormap":
            sig.append(f"const __grid_constant__ TmaDesc {prm.name}")
        elif prm.kind == "ptr" and prm.resource in ("watchdog", PARTIALS):
            sig.append(f"{'float' if prm.dtype == 'float32' else 'int'}* {prm.name}")
        elif prm.kind == "ptr":
            sig.append(f"const {c_type(prm.dtype)}* __restrict__ {tensor(prm.name)}" if prm.name in p.pointer_inputs
                       else f"{c_type(prm.dtype)}* __restrict__ {tensor(prm.name)}")
        elif prm.kind == "i32":
            sig.append(f"int {prm.name}")
        elif prm.kind == "trace":
            sig.append(stamps.c_arg)
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
      "const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;")
    c(*scheduler.work_units(p))
    with c.block("if (threadIdx.x == 0)"):
        for bset in p.layout.sets:  # the layout's counts (GemmPlan.init_count): peers' and warpgroups' releases
            count = p.init_count(bset.name)
            for st in range(bset.stages):
                slot = p.layout.slot(bset.name, st)
                c(f"pg_mbar_init(bar0 + {slot.offset}u, {count}u);  // {bset.name}[{st}]"
                  + (f", tx {slot.tx_bytes} B" if slot.tx_bytes else "")
                  + (f", x{bset.peers}: both blocks release" if bset.peers > 1 else "")
                  + (f", layout count {slot.arrive_count}: each of the {p.umma_arrivals} MMA warpgroups "
                     "arrives for the umma release" if count != slot.arrive_count else ""))
        c("pg_mbar_init_fence();")
    if not sm90:
        sm100.tmem_setup(c, p)
    c("cluster_sync();  // the barriers of both blocks are initialised before either block's TMA signals them"
      if p.cluster_size > 1 else "__syncthreads();")
    if not sm90:
        sm100.tmem_base(c)
    c("const int wg = warp >> 2;  // warpgroup: the MMA warpgroups, then each other warpgroup's tasks")
    if stamps:
        c(stamps.sampled_line())
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
            if wg in regs:  # the whole warpgroup, before its warps part into their tasks
                c(setmaxnreg(regs[wg], p.registers.launch))
            tasks = [p.mma_task] if wg in p.mma_wgs else \
                [t for t in design.tasks if t is not p.mma_task and t.warp_idx // 4 <= wg <= (t.warp_idx + t.num_warps - 1) // 4]
            for t in tasks:
                idx = design.tasks.index(t)
                if t is p.mma_task and not sm90:
                    cond_t = f"warp >= {t.warp_idx} && warp < {t.warp_idx + 4}"  # one warpgroup; thread 0 issues
                else:
                    cond_t = f"warp >= {t.warp_idx} && warp < {t.warp_idx + t.num_warps}"
                with c.block(f"if ({cond_t})"):
                    if stamps:  # sampled blocks run the stamped role branch, every other block the plain one
                        with c.block("if (pg_ins_sampled)"):
                            Task(p, t, plans[t.name], idx, c, stamps).emit()
                        with c.block("else"):
                            Task(p, t, plans[t.name], idx, c).emit()
                    else:
                        Task(p, t, plans[t.name], idx, c).emit()
        first = False
    if not sm90:
        sm100.tmem_teardown(c, p)
    if p.cluster_size > 1:
        c("cluster_sync();  // no block leaves while its peer may still signal its barriers or write its stages")
    c("#endif")
    c.depth -= 1
    c("}")
    code = c.text()
    slots = tuple((sl.index, sl.set, sl.stage) for sl in p.layout.slots)
    meta = (("kind", "gemm"), ("dtype", p.dtype), ("b_major", p.b_major), ("tile", (p.bm, p.bn, p.bk)),
            ("tensor_maps", tuple((m.param, m.tensor, m.space, m.box_rows, m.box_cols, m.swizzle, m.dtype)
                                  for m in p.tensor_maps)),
            ("out_dtypes", tuple(sorted(p.out_dtypes.items()))),
            ("split_k", (p.split_k, _split_warps(p)) if p.split_k > 1 else None),
            ("cluster", p.cluster), ("stream_k", p.stream_k),
            ("gmem_spaces", tuple(sorted(p.gmem_spaces.items()))), ("outputs", p.outputs),
            ("inputs", tuple(sorted({t.source for t in p.tiles.values()}))),
            ("slots", slots), ("tasks", tuple(t.name for t in design.tasks)),
            ("staging", p.staging.dtype if p.staging else "tmem"), ("launch_regs", p.launch_regs),
            ("diag_words", DIAG_WORDS),
            ("problem", (p.problem["M"], p.problem["N"], p.problem["K"])))
    if stamps:
        meta += (stamps.meta(),)
    return KernelSource(design=design.name, code=code, entry=entry, smem_bytes=p.smem_bytes,
                        block=(p.num_threads, 1, 1), grid=None, params=tuple(params), line_map=tuple(c.map),
                        arch=arch, options=("-std=c++17",), meta=meta)


__all__ = ["emit_gemm"]
