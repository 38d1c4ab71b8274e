"""``benchmark(design)``: the design, its per-resource-barrier twin and the library, side by side.

In one process, on the same arrays, interleaved round by round (so clock and thermal drift hit
every contender alike): the design's kernel, ``ungrouped(design)``'s kernel, CuPy's own kernels for
the same computation (an ``ElementwiseKernel`` built from the design's expressions and, where the
computation is one ufunc such as ``a + b``, that ufunc) and a device-to-device copy of one
operand, the bandwidth ceiling.  A GEMM design goes to ``gemm_bench.benchmark_gemm`` (its twin
and the library GEMMs).  Every contender that computes is verified before it is timed.  The
result is one ``BenchTable`` of medians and ratios for either kind, which displays in a notebook.
All of it happens in a GPU worker process (``runtime.isolated``), so a kernel that traps costs
that worker only.

Given a tuning (``tuned=``, a ``runtime.tuned.Tuned``) the design runs at it: for a streaming
design the stages, bytes per stage and code options a short cached search found fastest on this
GPU, for a GEMM design the tile shape.  The table says which settings ran and where they came
from; the design as given is a row of its own when the tuning changed it.  Choosing the tuning is
the explorer's work (``explore.bench.tuned_benchmark``, which ``pgstudio.benchmark`` is): this
function times what it is given and never searches.

With ``executor="null"`` every step runs on the null runtime (``runtime.null``): the same
contenders, verified "not run", timed by a clock that reads nothing; the table says so.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Mapping

from ..analysis.expr import compute_expr
from ..codegen.dtypes import dtype as dtype_of
from ..codegen.element import element_code
from ..codegen.kernel import cname
from ..model.design import Design
from ..model.resource import Memory
from ..model.targets import DTYPE_BYTES
from ..model.ungroup import ungrouped
from ._cupy import cupy
from .backend import CUDA, Backend, backend_for
from .bench_table import BenchRow, BenchTable
from .contender import Contender, interleave, nothing, table_of
from .executor import get_executor
from .isolated import on_gpu
from .launch import Workload
from .reference import inputs as input_names
from .reference import outputs as output_names
from .run import emit_cached
from .stream_run import BUDGET_MS
from .tuned import Tuned

_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}


def _source_input(design: Design, name: str) -> str | None:
    """The input tensor ``name`` is a plain copy of (through any chain of copies), else None."""
    r = design.resource(name)
    if r.memory is Memory.GMEM and r.compute.op == "input":
        return name
    ex = compute_expr(design, name)
    if len(ex.operands) == 1 and ex.text.strip() == ex.operands[0]:
        return _source_input(design, ex.operands[0])
    return None


def ufunc_of(design: Design, dtype: str) -> tuple[str, str, str, str] | None:
    """(ufunc, left input, right input, output) when ``design`` computes exactly ``cp.<ufunc>(x, y)``
    into its one output (fp32 / fp16), else None."""
    outs = output_names(design)
    if dtype == "bfloat16" or len(outs) != 1:
        return None
    tree = compute_expr(design, outs[0]).tree
    if isinstance(tree, ast.BinOp) and type(tree.op) in _UFUNCS and all(isinstance(x, ast.Name)
                                                                         for x in (tree.left, tree.right)):
        a, b = (_source_input(design, x.id) for x in (tree.left, tree.right))
        if a and b:
            return _UFUNCS[type(tree.op)], a, b, outs[0]
    return None


def elementwise_source(design: Design, dtype: str) -> tuple[str, str, str, str, str]:
    """(input parameters, output parameters, body, name, preamble) of CuPy's ``ElementwiseKernel``
    computing every output of ``design`` in one pass, from the design's own expressions."""
    dt = dtype_of(dtype)
    ins, outs = input_names(design), output_names(design)
    store = "float32" if dtype == "float32" else "uint16"  # 16-bit types as raw bits, converted like ours
    names = {n: f"p_{cname(n)}" for n in (*ins, *outs)}
    code = element_code(design, list(outs), dt, lambda n: dt.to_float(names[n]))
    body = " ".join([*code.lines, *(f"{names[o]} = {dt.from_float(code.values[o])};" for o in outs)])
    preamble = "typedef unsigned short u16;\ntypedef unsigned int u32;\n" + dt.scalar
    return (", ".join(f"{store} {names[i]}" for i in ins), ", ".join(f"{store} {names[o]}" for o in outs), body,
            f"pg_peer_{design.name}", preamble)


def elementwise_peer(work: Workload) -> Callable[[], None]:
    """CuPy's ``ElementwiseKernel`` computing every output of the design in one pass."""
    cp = cupy()
    in_params, out_params, body, name, preamble = elementwise_source(work.design, work.dtype)
    kern = cp.ElementwiseKernel(in_params, out_params, body, name, preamble=preamble)
    view = (lambda a: a.view(cp.uint16)) if work.dtype == "float16" else (lambda a: a)
    ins = [view(a) for a in work.inputs.values()]
    outs = [view(a) for a in work.outputs.values()]
    return lambda: kern(*ins, *outs)


def ufunc_peer(work: Workload) -> tuple[str, Callable[[], None]] | None:
    """``cp.<ufunc>(x, y, out=d)`` when the design computes exactly that (``ufunc_of``), else None."""
    found = ufunc_of(work.design, work.dtype)
    if found is None:
        return None
    name, a, b, out_name = found
    fn = getattr(cupy(), name)
    x, y, out = work.inputs[a], work.inputs[b], work.outputs[out_name]
    return f"cp.{name}", lambda: fn(x, y, out=out)


def library(work: Workload, backend: Backend = CUDA) -> list[tuple[str, str, Callable[[], None]]]:
    """(label, what, launch) of every CuPy path computing the design; on the null runtime the same
    labels, launching nothing."""
    ufunc = ufunc_of(work.design, work.dtype)
    if not backend.measured:
        return [("cupy elementwise", "CuPy ElementwiseKernel", nothing),
                *([(f"cp.{ufunc[0]}", "CuPy", nothing)] if ufunc else [])]
    found = [("cupy elementwise", elementwise_peer(work)), *filter(None, [ufunc_peer(work)])]
    return [(label, "CuPy" if label.startswith("cp.") else "CuPy ElementwiseKernel", fn) for label, fn in found]


def device_copy(work: Workload, backend: Backend = CUDA) -> Contender:
    """A device-to-device copy of one operand: the bandwidth ceiling."""
    nbytes = work.shape[0] * DTYPE_BYTES[work.dtype]
    launch: Callable[[], None] = nothing
    if backend.measured:
        src_arr, dst_arr = next(iter(work.inputs.values())), next(iter(work.outputs.values()))
        launch = lambda: dst_arr.data.copy_from_device_async(src_arr.data, nbytes)  # noqa: E731
    return Contender("device copy", f"cudaMemcpy D2D of one operand ({nbytes / 2**30:.2f} GiB)", launch, 2 * nbytes)


def kernel_contender(design: Design, work: Workload, label: str, what: str, *, validate: bool = True,
                     tuning: Mapping[str, Any] | None = None, blocks_per_sm: int | None = None,
                     budget_ms: float = BUDGET_MS, watchdog: bool = True, backend: Backend = CUDA) -> Contender:
    """A generated kernel of ``design`` as a benchmark contender over ``work``, verified first."""
    s = emit_cached(design, validate=validate, tuning=dict(tuning or {}), watchdog=watchdog)
    la = backend.launcher(s, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms)
    la.verify(work)
    args = la.args(work)
    return Contender(label, what, lambda: la.launch(work, args), work.amount, work.unit, la)


def benchmark(design: Design, *, n: int | None = None, rounds: int = 30, warmup: int = 3, seed: int | None = None,
              budget_ms: float = BUDGET_MS, blocks_per_sm: int | None = None, tuning: Mapping[str, Any] | None = None,
              twin: bool = True, peers: bool = True, copy: bool = True, progress: bool = True,
              validate: bool = True, executor: Any = None, tuned: Tuned | None = None,
              on_progress: Callable[[int, int, str], None] | None = None) -> BenchTable:
    """Time ``design`` against its ungrouped twin, CuPy and a device copy; see the module docstring.

    ``tuned``: the tuning to run ``design`` at (``explore.tuning`` chooses one), with the design as
    given beside it when the tuning changed it; None runs the design exactly as given.

    It runs in a GPU worker process (``executor``: the default worker processes, ``"inline"`` for
    this process, or ``"null"`` for the null runtime): a kernel that traps raises ``KernelFault``
    here, with the likely cause, and this process stays usable.  ``progress`` draws a tqdm bar;
    ``on_progress(done, total, text)`` receives each step with its ETA.
    """
    ex = get_executor(executor)
    if not ex.in_process:
        kwargs = dict(n=n, rounds=rounds, warmup=warmup, seed=seed, budget_ms=budget_ms, blocks_per_sm=blocks_per_sm,
                      tuning=dict(tuning) if tuning else None, twin=twin, peers=peers, copy=copy, validate=validate,
                      tuned=tuned)
        return on_gpu(benchmark, design, kwargs, executor=ex, what="benchmark", progress=progress,
                      on_progress=on_progress)
    backend = backend_for(ex)
    backend.require()  # one clear GpuUnavailable before any CuPy call can fail deep inside
    from .gemm_run import is_gemm
    if is_gemm(design):  # tensor-core designs: the twin and the library GEMMs instead of CuPy elementwise peers
        from .gemm_bench import benchmark_gemm
        return benchmark_gemm(design, rounds=rounds, warmup=warmup, seed=seed, twin=twin, peers=peers, tuned=tuned,
                              backend=backend, progress=progress, on_progress=on_progress)
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}))
    count = int(n or src.info["num_elements"])
    work = backend.stream_workload(design, count, str(src.info["dtype"]), seed)
    opts = dict(validate=validate, tuning=tuning, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms)
    given, note, tuned_opts = design, "", opts
    if tuned is not None:
        design, note = tuned.design, tuned.describe()
        tuned_opts = {**opts, "tuning": {**dict(tuning or {}), **dict(tuned.options)}}
    what = f"pgstudio, {len(design.groups)} group(s)" + (f", {note.split(' (')[0]}" if note else "")
    contenders = [kernel_contender(design, work, design.name, what, backend=backend, **tuned_opts)]
    if note and (design.to_json() != given.to_json() or tuned_opts != opts):
        contenders.append(kernel_contender(given, work, f"{given.name} as designed", "pgstudio, the design as given",
                                           backend=backend, **opts))
    if twin and design.groups:
        contenders.append(kernel_contender(ungrouped(design), work, f"{design.name}_ungrouped",
                                           "pgstudio, per-resource barriers", backend=backend, **tuned_opts))
    if peers:
        for label, desc, fn in library(work, backend):
            work.poison()
            fn()
            work.check(label)
            contenders.append(Contender(label, desc, fn, work.amount, work.unit, peer=True))
    if copy and input_names(work.design) and output_names(work.design):
        contenders.append(device_copy(work, backend))
    interleave(contenders, rounds=rounds, warmup=warmup, progress=progress, on_progress=on_progress,
               clock=backend.clock)
    return table_of(design.name, work, contenders, note, backend)


__all__ = ["BenchRow", "BenchTable", "Contender", "benchmark", "device_copy", "elementwise_peer", "elementwise_source",
           "interleave", "kernel_contender", "library", "table_of", "ufunc_of", "ufunc_peer"]
