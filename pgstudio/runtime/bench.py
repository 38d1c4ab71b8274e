"""``benchmark(design)``: the design, its per-resource-barrier twin and the library, side by side.

In one process, on the same arrays, interleaved round by round (so clock and thermal drift hit
every variant alike): the design's kernel, ``ungrouped(design)``'s kernel, CuPy's own kernels for
the same computation (an ``ElementwiseKernel`` built from the design's expressions and, where the
computation is one ufunc such as ``a + b``, that ufunc) and a device-to-device copy of one
operand, the bandwidth ceiling.  Every variant that computes is verified before it is timed.
The result is a table of medians and ratios that displays in a notebook.  All of it happens in
a GPU worker process (``runtime.isolated``), so a kernel that traps costs that worker only.

Given a tuning (``tuned=``, a ``runtime.tuned.Tuned``) the design runs at it: for a streaming
design the stages, bytes per stage and code options a short cached search found fastest on this
GPU, for a GEMM design the tile shape.  The table says which settings ran and where they came
from; the design as given is a row of its own when the tuning changed it.  Choosing the tuning is
the explorer's work (``explore.bench.tuned_benchmark``, which ``pgstudio.benchmark`` is): this
function times what it is given and never searches.
"""

from __future__ import annotations

import ast
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..codegen.dtypes import dtype as dtype_of
from ..codegen.element import element_code
from ..codegen.kernel import cname
from ..analysis.expr import compute_expr
from ..model.design import Design
from ..model.resource import Memory
from ..model.ungroup import ungrouped
from ._cupy import cupy, require_gpu
from .executor import get_executor
from .isolated import on_gpu
from .progress import Progress
from .run import BUDGET_MS, Launcher, Workload, emit_cached
from .timing import batch_for, estimate_ms, time_interleaved
from .tuned import Tuned

_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}


@dataclass
class Variant:
    name: str
    what: str
    launch: Callable[[], None]
    bytes_moved: int
    launcher: Any = None  # the generated kernel's Launcher (its watchdog is checked after timing)
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def gbps(self) -> float:
        return self.bytes_moved / (self.median_ms * 1e-3) / 1e9


@dataclass(frozen=True)
class BenchRow:
    name: str
    what: str
    median_ms: float
    gbps: float
    runs: int


@dataclass(frozen=True)
class BenchTable:
    """Medians of every variant; ``speedup(a, b)`` = time of b / time of a."""

    design: str
    n: int
    dtype: str
    rows: tuple[BenchRow, ...]
    note: str = ""  # how the design was tuned, when it was

    def row(self, name: str) -> BenchRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no variant {name!r}; variants: {', '.join(r.name for r in self.rows)}")

    def speedup(self, a: str, b: str) -> float:
        return self.row(b).median_ms / self.row(a).median_ms

    def bandwidth_ratio(self, a: str, b: str) -> float:
        return self.row(a).gbps / self.row(b).gbps

    def table(self) -> str:
        first = self.rows[0]
        head = ("variant", "what", "median ms", "GB/s", "time / design")
        lines = [head] + [(r.name, r.what, f"{r.median_ms:.4f}", f"{r.gbps:,.0f}", f"{r.median_ms / first.median_ms:.3f}")
                          for r in self.rows]
        widths = [max(len(ln[i]) for ln in lines) for i in range(len(head))]
        out = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(ln, widths)))
               for ln in lines]
        out.insert(1, "  ".join("-" * w for w in widths))
        out.insert(0, f"{self.design}: {self.n:,} {self.dtype} elements, medians of {first.runs} interleaved runs"
                   + (f"; {self.note}" if self.note else ""))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()



def _source_input(design: Design, name: str) -> str | None:
    """The input tensor ``name`` is a plain copy of (through any chain of copies), else None."""
    r = design.resource(name)
    if r.memory is Memory.GMEM and r.compute.op == "input":
        return name
    ex = compute_expr(design, name)
    if len(ex.operands) == 1 and ex.text.strip() == ex.operands[0]:
        return _source_input(design, ex.operands[0])
    return None


def elementwise_peer(work: Workload) -> Callable[[], None]:
    """CuPy's ``ElementwiseKernel`` computing every output of the design in one pass."""
    cp = cupy()
    d, dt = work.design, dtype_of(work.dtype)
    store = "float32" if work.dtype == "float32" else "uint16"  # 16-bit types as raw bits, converted like ours
    names = {n: f"p_{cname(n)}" for n in (*work.inputs, *work.outputs)}
    code = element_code(d, list(work.outputs), dt, lambda n: dt.to_float(names[n]))
    body = " ".join([*code.lines, *(f"{names[o]} = {dt.from_float(code.values[o])};" for o in work.outputs)])
    preamble = "typedef unsigned short u16;\ntypedef unsigned int u32;\n" + dt.scalar
    kern = cp.ElementwiseKernel(", ".join(f"{store} {names[i]}" for i in work.inputs),
                                ", ".join(f"{store} {names[o]}" for o in work.outputs), body,
                                f"pg_peer_{d.name}", preamble=preamble)
    view = (lambda a: a.view(cp.uint16)) if work.dtype == "float16" else (lambda a: a)
    ins = [view(a) for a in work.inputs.values()]
    outs = [view(a) for a in work.outputs.values()]
    return lambda: kern(*ins, *outs)


def ufunc_peer(work: Workload) -> tuple[str, Callable[[], None]] | None:
    """``cp.<ufunc>(x, y, out=d)`` when the design computes exactly that (fp32 / fp16), else None."""
    if work.dtype == "bfloat16" or len(work.outputs) != 1:
        return None
    cp = cupy()
    (out_name, out), = work.outputs.items()
    ex = compute_expr(work.design, out_name)
    tree = ex.tree
    if isinstance(tree, ast.BinOp) and type(tree.op) in _UFUNCS and all(isinstance(x, ast.Name)
                                                                         for x in (tree.left, tree.right)):
        a, b = (_source_input(work.design, x.id) for x in (tree.left, tree.right))
        if a and b:
            name = _UFUNCS[type(tree.op)]
            fn = getattr(cp, name)
            x, y = work.inputs[a], work.inputs[b]
            return f"cp.{name}", lambda: fn(x, y, out=out)
    return None


def kernel_variant(design: Design, work: Workload, label: str, what: str, *, validate: bool = True,
                   tuning: Mapping[str, Any] | None = None, blocks_per_sm: int | None = None,
                   budget_ms: float = BUDGET_MS, watchdog: bool = True) -> Variant:
    """A generated kernel of ``design`` as a benchmark variant over ``work``, verified first."""
    s = emit_cached(design, validate=validate, tuning=dict(tuning or {}), watchdog=watchdog)
    la = Launcher(s, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms)
    la.verify(work)
    args = la.args(work)
    return Variant(label, what, lambda: la.launch(work, args), work.bytes_moved, la)


def interleave(variants: list[Variant], *, rounds: int = 30, warmup: int = 3, progress: bool = True,
               on_progress: Callable[[int, int, str], None] | None = None) -> None:
    """Time every variant once per round, round after round; fills ``Variant.times`` (ms per
    launch) and checks the generated kernels' watchdogs afterwards.

    ``runtime.timing`` times each variant as a batch of back-to-back launches queued behind a
    GPU hold, so a short kernel's time is the GPU's and not the host's launch cost (the same
    rule for the design, its twin, CuPy's kernels and the device copy); the order rotates, so
    no variant is always first.
    """
    bar = Progress(rounds * len(variants), "benchmark", "launch", enabled=progress, on_update=on_progress)
    try:
        batch = batch_for(estimate_ms(variants[0].launch))
        times = time_interleaved([(str(i), v.launch) for i, v in enumerate(variants)], rounds, warmup=warmup,
                                 batch=batch, on_launch=lambda i: bar.update(1, variants[int(i)].name))
    finally:
        bar.close()
    for i, v in enumerate(variants):
        v.times.extend(times[str(i)])
    for v in variants:
        if v.launcher is not None:
            v.launcher.check_watchdog()


def benchmark(design: Design, *, n: int | None = None, rounds: int = 30, warmup: int = 3, seed: int | None = None,
              budget_ms: float = BUDGET_MS, blocks_per_sm: int | None = None, tuning: Mapping[str, Any] | None = None,
              twin: bool = True, peers: bool = True, copy: bool = True, progress: bool = True,
              validate: bool = True, executor: Any = None, tuned: Tuned | None = None,
              on_progress: Callable[[int, int, str], None] | None = None) -> BenchTable:
    """Time ``design`` against its ungrouped twin, CuPy and a device copy; see the module docstring.

    ``tuned``: the tuning to run ``design`` at (``explore.tuning`` chooses one), with the design as
    given beside it when the tuning changed it; None runs the design exactly as given.

    It runs in a GPU worker process (``executor``: the default worker processes, or ``"inline"``
    for this process): a kernel that traps raises ``KernelFault`` here, with the likely cause,
    and this process stays usable.  ``progress`` draws a tqdm bar; ``on_progress(done, total,
    text)`` receives each step with its ETA.
    """
    ex = get_executor(executor)
    if ex.name != "inline":
        kwargs = dict(n=n, rounds=rounds, warmup=warmup, seed=seed, budget_ms=budget_ms, blocks_per_sm=blocks_per_sm,
                      tuning=dict(tuning) if tuning else None, twin=twin, peers=peers, copy=copy, validate=validate,
                      tuned=tuned)
        return on_gpu(benchmark, design, kwargs, executor=ex, what="benchmark", progress=progress,
                      on_progress=on_progress)
    require_gpu()  # one clear GpuUnavailable before any CuPy call can fail deep inside
    from .gemm_run import is_gemm
    if is_gemm(design):  # tensor-core designs: the twin and cuBLAS instead of CuPy elementwise peers
        from .gemm_run import benchmark_gemm
        return benchmark_gemm(design, rounds=rounds, warmup=warmup, seed=seed, twin=twin, peers=peers, tuned=tuned)
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}))
    count = int(n or src.info["num_elements"])
    work = Workload.make(design, count, str(src.info["dtype"]), seed)
    opts = dict(validate=validate, tuning=tuning, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms)
    given, note, tuned_opts = design, "", opts
    if tuned is not None:
        design, note = tuned.design, tuned.describe()
        tuned_opts = {**opts, "tuning": {**dict(tuning or {}), **dict(tuned.options)}}
    what = f"pgstudio, {len(design.groups)} group(s)" + (f", {note.split(' (')[0]}" if note else "")
    variants = [kernel_variant(design, work, design.name, what, **tuned_opts)]
    if note and (design.to_json() != given.to_json() or tuned_opts != opts):
        variants.append(kernel_variant(given, work, f"{given.name} as designed", "pgstudio, the design as given",
                                       **opts))
    if twin and design.groups:
        variants.append(kernel_variant(ungrouped(design), work, f"{design.name}_ungrouped",
                                       "pgstudio, per-resource barriers", **tuned_opts))
    if peers:
        for label, fn in [("cupy elementwise", elementwise_peer(work)), *filter(None, [ufunc_peer(work)])]:
            work.poison()
            fn()
            work.check(label)
            variants.append(Variant(label, "CuPy" if label.startswith("cp.") else "CuPy ElementwiseKernel",
                                    fn, work.bytes_moved))
    if copy and work.inputs and work.outputs:
        src_arr, dst_arr = next(iter(work.inputs.values())), next(iter(work.outputs.values()))
        nbytes = src_arr.nbytes
        variants.append(Variant("device copy", f"cudaMemcpy D2D of one operand ({nbytes / 2**30:.2f} GiB)",
                                lambda: dst_arr.data.copy_from_device_async(src_arr.data, nbytes), 2 * nbytes))
    interleave(variants, rounds=rounds, warmup=warmup, progress=progress, on_progress=on_progress)
    rows = tuple(BenchRow(v.name, v.what, v.median_ms, v.gbps, len(v.times)) for v in variants)
    return BenchTable(design.name, work.n, work.dtype, rows, note)


__all__ = ["BenchRow", "BenchTable", "Variant", "benchmark", "elementwise_peer", "interleave", "kernel_variant",
           "ufunc_peer"]
