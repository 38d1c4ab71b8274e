"""Run a GEMM design's kernel: data, launch, verification against cuBLAS, timing.

``run_gemm(design, m, n, k)`` emits (``codegen.gemm``), compiles and loads the kernel (shared
``compile.load`` cache), builds fresh random inputs, encodes their TMA tensor maps, poisons every
output with NaN, launches on a persistent grid (one block per SM, at most one per output tile),
reads the watchdog record, and compares each output with a float32 reference computed by
``cupy.matmul`` (cuBLAS).  ``benchmark_gemm(design)`` times the design, its ungrouped twin and
every library GEMM a user would call instead (``runtime.peers``: torch.matmul, cublasGemmEx) on
the same data, each verified before it is timed, and names the fastest.

16-bit data lives in ``uint16`` arrays (bfloat16 has no NumPy / CuPy dtype); ``to_float32`` reads
them back; float32 operands (run on the tf32 tensor cores) and float32 outputs are float32 arrays.
A split-K kernel (problem key ``SPLIT_K``) gets its workspace of partial sums and its tile
counters from the launcher, per problem shape.  The launch goes through the driver
(``cuLaunchKernel``) so the tensor maps travel as 128-byte by-value parameters.
"""

from __future__ import annotations

import ast
import ctypes
import re
import statistics
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..codegen.gemm import emit_gemm
from ..codegen.gemm.prelude import DIAG_WORDS, STATUS
from ..codegen.source import KernelSource
from ..errors import DesignError, KernelHangError
from ..model.design import Design
from ..model.resource import Memory
from ..model.ungroup import ungrouped
from ._cupy import cupy, require_gpu
from .storage import to_bits, to_float32
from .tensormap import TmaDesc, encode_2d
from .timing import batch_for, estimate_ms, time_interleaved
from .tuned import Tuned
from .verify import VerificationError

#: Largest error of an output relative to the largest reference magnitude, by dtype: fp32
#: accumulation then one rounding to the output type, with margin for K-long sums.
TOLERANCE = {"float16": 5e-3, "bfloat16": 2e-2, "float32": 5e-3}  # float32 operands: tf32 products
BUDGET_MS = 2000.0
_POISON = 0x7FFF  # NaN in float16 and in bfloat16


def is_gemm(design: Design) -> bool:
    """Does ``design`` compute an MMA (so ``benchmark`` dispatches here)?"""
    return any(r.memory is Memory.TMEM and r.compute.op == "mma" for r in design.resources)


def _dims(space: str, m: int, n: int, k: int) -> tuple[int, int]:
    size = {"M": m, "N": n, "K": k}
    return size[space[0]], size[space[1]]


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b}


def evaluate(expr: str, values: dict[str, Any], xp: Any = None):
    """Evaluate a store expression (names, numbers, + - * /, unary -, max, min) over arrays of
    module ``xp`` (default CuPy), without ``eval``: a design may come from a file."""
    cp = xp if xp is not None else cupy()
    text = re.sub(r"(\d+\.\d*|\.\d+|\d+)f\b", r"\1", expr.replace(".f", ".0"))

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Name) and node.id in values:
            return values[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min") \
                and len(node.args) == 2:
            fn = cp.maximum if node.func.id == "max" else cp.minimum
            return fn(ev(node.args[0]), ev(node.args[1]))
        raise DesignError(f"store expression {expr!r}: cannot evaluate {ast.dump(node)[:60]} for the reference",
                          code="gemm.expr", hint="use names, numbers, + - * /, max and min")

    return ev(ast.parse(text, mode="eval"))


@dataclass
class GemmData:
    """Inputs (uint16 storage and their float32 values), outputs and the tensor maps of one shape."""

    m: int
    n: int
    k: int
    dtype: str
    arrays: dict[str, Any]
    values: dict[str, Any]  # float32 of the inputs as stored
    maps: dict[str, TmaDesc] = field(default_factory=dict)
    out_dtypes: dict[str, str] = field(default_factory=dict)  # output -> its element type (default: dtype)

    def out_dtype(self, name: str) -> str:
        return self.out_dtypes.get(name, self.dtype)

    @classmethod
    def make(cls, src: KernelSource, m: int, n: int, k: int, seed: int | None = None) -> "GemmData":
        cp = cupy()
        info = src.info
        dtype = str(info["dtype"])
        spaces = dict(info["gmem_spaces"])
        rng = cp.random.default_rng(seed)
        arrays, values = {}, {}
        for name in info["inputs"]:
            rows, cols = _dims(spaces[name], m, n, k)
            bits = to_bits(rng.standard_normal((rows, cols), dtype=cp.float32), dtype)
            arrays[name], values[name] = bits, to_float32(bits, dtype)
        outs = dict(info.get("out_dtypes") or ())
        for name in info["outputs"]:
            arrays[name] = cp.empty(_dims(spaces[name], m, n, k),
                                    dtype=cp.float32 if outs.get(name, dtype) == "float32" else cp.uint16)
        data = cls(m, n, k, dtype, arrays, values, out_dtypes=outs)
        data.encode(src)
        return data

    def encode(self, src: KernelSource) -> None:
        for param, tensor, space, box_rows, box_cols, swizzle, *dtype in src.info["tensor_maps"]:
            rows, cols = _dims(space, self.m, self.n, self.k)
            self.maps[param] = encode_2d(self.arrays[tensor].data.ptr, rows, cols, box_rows, (dtype or [self.dtype])[0],
                                         tensor, box_cols=box_cols, swizzle=swizzle)

    def poison(self, src: KernelSource) -> None:
        cp = cupy()
        for name in src.info["outputs"]:
            arr = self.arrays[name]
            arr.fill(cp.nan if arr.dtype == cp.float32 else _POISON)


class GemmLauncher:
    """A loaded GEMM kernel, its persistent grid and its watchdog record."""

    def __init__(self, src: KernelSource, budget_ms: float = BUDGET_MS) -> None:
        from .compile import load
        require_gpu()
        cp = cupy()
        from cuda.bindings import driver as cu
        self.cu, self.src, self.budget_ms = cu, src, budget_ms
        self.loaded = load(src)
        self.fn = cu.CUfunction(self.loaded.kernel.kernel.ptr)
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.abort = cp.zeros(1, dtype=cp.int32)
        self.diag = cp.zeros(DIAG_WORDS, dtype=cp.int32)
        self.split = src.info.get("split_k") or (1, 0)  # (parts, storing warps)
        self._workspace: dict[tuple[int, int], tuple[Any, Any]] = {}

    def tiles(self, data: GemmData) -> int:
        bm, bn, _ = self.src.info["tile"]
        return -(-data.m // bm) * -(-data.n // bn)

    def grid(self, data: GemmData) -> int:
        """Persistent: one block per SM, at most one per work unit (output tile x split); with
        clusters (``__cluster_dims__`` in the kernel) a whole number of clusters, one per unit of
        CM x CN tiles."""
        cm, cn = self.src.info.get("cluster") or (1, 1)
        if cm * cn > 1:
            bm, bn, _ = self.src.info["tile"]
            tiles_m, tiles_n = -(-data.m // bm), -(-data.n // bn)
            units = -(-tiles_m // cm) * -(-tiles_n // cn)
            return max(1, min(units, self.sms // (cm * cn))) * cm * cn
        return max(1, min(self.tiles(data) * self.split[0], self.sms))

    def workspace(self, data: GemmData) -> tuple[Any, Any]:
        """Split-K: (fp32 partial sums, one BM x BN block per work unit; zeroed counters, one per
        output tile and storing warp), allocated once per problem shape."""
        key = (data.m, data.n)
        if key not in self._workspace:
            cp = cupy()
            bm, bn, _ = self.src.info["tile"]
            parts, warps = self.split
            units = self.tiles(data) * parts
            self._workspace[key] = (cp.empty(units * bm * bn, dtype=cp.float32),
                                    cp.zeros(self.tiles(data) * warps, dtype=cp.int32))
        return self._workspace[key]

    def reset_counters(self, data: GemmData) -> None:
        """Split-K counters back to zero (a launch the watchdog stopped may have left some set)."""
        if self.split[0] > 1:
            self.workspace(data)[1].fill(0)

    def args(self, data: GemmData) -> tuple:
        """The parameter objects in kernel order, and the void** array pointing at them."""
        objs: list[Any] = []
        for p in self.src.params:
            if p.kind == "tensormap":
                objs.append(data.maps[p.name])
            elif p.kind == "ptr":
                if p.resource == "watchdog":  # a design's tensor may be named wd_abort too
                    arr = self.abort if p.name == "wd_abort" else self.diag
                elif p.resource == "split_k":
                    arr = self.workspace(data)[0 if p.dtype == "float32" else 1]
                else:
                    arr = data.arrays[p.name]
                objs.append(ctypes.c_uint64(arr.data.ptr))
            elif p.kind == "i32":
                objs.append(ctypes.c_int32({"M": data.m, "N": data.n, "K": data.k}[p.name]))
            elif p.kind == "u64":
                objs.append(ctypes.c_uint64(int(self.budget_ms * 1e6)))
            else:
                raise DesignError(f"kernel parameter {p.name!r} has unknown kind {p.kind!r}", code="gemm.param")
        ptrs = (ctypes.c_void_p * len(objs))(*[ctypes.addressof(o) for o in objs])
        return objs, ptrs

    def launch(self, data: GemmData, args: tuple | None = None) -> None:
        objs, ptrs = args or self.args(data)
        cp = cupy()
        stream = cp.cuda.get_current_stream().ptr
        (err,) = self.cu.cuLaunchKernel(self.fn, self.grid(data), 1, 1, *self.src.block, self.src.smem_bytes,
                                        self.cu.CUstream(stream), ctypes.addressof(ptrs), 0)
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel of {self.src.entry} failed: {err}")

    def check_watchdog(self) -> None:
        rec = [int(x) for x in self.diag.get()]
        if not rec[0]:
            return
        info = self.src.info
        slots = {s[0]: (s[1], s[2]) for s in info["slots"]}
        tasks = info["tasks"]
        what = STATUS.get(rec[0], f"status {rec[0]}")
        record = {"status": rec[0], "block": rec[1], "thread": rec[2], "slot": rec[3], "stage": rec[4],
                  "parity": rec[5], "tile": rec[6], "k_tile": rec[7], "waited_us": rec[8],
                  "task": tasks[rec[9]] if 0 <= rec[9] < len(tasks) else None,
                  "barrier": slots.get(rec[3], ("?", "?"))[0]}
        self.abort.fill(0)
        self.diag.fill(0)
        if rec[0] == 1:
            raise KernelHangError(
                f"kernel {self.src.entry} of design {self.src.design!r} hung: task {record['task']!r} waited "
                f"{rec[8] / 1000:.0f} ms on barrier {record['barrier']} (slot {rec[3]}, stage {rec[4]}, parity {rec[5]}) "
                f"at output tile {rec[6]}, k tile {rec[7]}, block {rec[1]} thread {rec[2]}", record)
        raise KernelHangError(f"kernel {self.src.entry} of design {self.src.design!r} stopped: {what}", record)


def reference(design: Design, src: KernelSource, data: GemmData) -> dict[str, Any]:
    """Every output in float32: the accumulator is cupy.matmul of the float32 inputs (cuBLAS)."""
    cp = cupy()
    info = src.info
    acc = next(r for r in design.resources if r.memory is Memory.TMEM and r.compute.op == "mma")
    a_res, b_res = design.deps(acc.name)
    source = {}
    for r in design.resources:
        if r.memory is Memory.SMEM and r.pipeline_config is not None:
            source[r.name] = next(d for d in design.deps(r.name) if design.resource(d).memory is Memory.GMEM)
    a = data.values[source[a_res]]
    b = data.values[source[b_res]]
    prod = cp.matmul(a, b if info["b_major"] == "mn" else b.T)
    outs = {}
    for name in info["outputs"]:
        out = design.resource(name)
        ins = list(design.deps(name))
        vals = {i: prod if i == acc.name else data.values[source[i]] for i in ins}
        outs[name] = evaluate(out.compute.expr or ins[0], vals)
    return outs


def verify(design: Design, src: KernelSource, launcher: GemmLauncher, data: GemmData) -> dict[str, float]:
    """Poison the outputs, launch once, and compare with the reference; raise on a mismatch."""
    cp = cupy()
    data.poison(src)
    launcher.reset_counters(data)
    launcher.launch(data)
    cp.cuda.get_current_stream().synchronize()
    launcher.check_watchdog()
    ref = reference(design, src, data)
    errs = {}
    for name, want in ref.items():
        got = to_float32(data.arrays[name], data.out_dtype(name))
        scale = float(cp.abs(want).max()) or 1.0
        bad = int(cp.isnan(got).sum())
        err = float(cp.abs(got - want).max()) / scale
        errs[name] = err if not bad else float("nan")
        tol = max(TOLERANCE[data.dtype], TOLERANCE[data.out_dtype(name)])
        if bad or not err <= tol:
            where = cp.argwhere(cp.isnan(got) | (cp.abs(got - want) > tol * scale))
            first = tuple(int(x) for x in where[0].get()) if where.size else ()
            raise VerificationError(f"design {design.name!r} ({src.arch}) at M={data.m} N={data.n} K={data.k} "
                                 f"{data.dtype}: output {name!r} differs from cuBLAS: max error {err:.3g} x max|ref| "
                                 f"(tolerance {tol}), {bad} NaN (unwritten), first bad element {first}")
    return errs


@dataclass
class GemmResult:
    design: str
    m: int
    n: int
    k: int
    dtype: str
    errors: dict[str, float]
    ms: float | None = None

    @property
    def tflops(self) -> float:
        return 2.0 * self.m * self.n * self.k / (self.ms * 1e-3) / 1e12 if self.ms else float("nan")


def run_gemm(design: Design, m: int | None = None, n: int | None = None, k: int | None = None, *,
             seed: int | None = None, b_major: str | None = None, timing: bool = False,
             reps: int = 10, warmup: int = 2, budget_ms: float = BUDGET_MS) -> GemmResult:
    """Verify (and optionally time) ``design`` at M x N x K (default: the design's problem)."""
    require_gpu()
    p = design.problem_dict
    m, n, k = m or p["M"], n or p["N"], k or p["K"]
    src = emit_gemm(design, b_major=b_major)
    launcher = GemmLauncher(src, budget_ms)
    data = GemmData.make(src, m, n, k, seed)
    errs = verify(design, src, launcher, data)
    res = GemmResult(design.name, m, n, k, data.dtype, errs)
    if timing:
        args = launcher.args(data)
        def launch() -> None:
            launcher.launch(data, args)
        res.ms = statistics.median(time_interleaved([("design", launch)], reps, warmup=warmup,
                                                    batch=batch_for(estimate_ms(launch)))["design"])
        launcher.check_watchdog()
    return res


def gemm_sources(design: Design) -> tuple[str, str]:
    """The global tensors behind the accumulator's A and B operands."""
    acc = next(r for r in design.resources if r.memory is Memory.TMEM and r.compute.op == "mma")
    return tuple(next(x for x in design.deps(r) if design.resource(x).memory is Memory.GMEM)
                 for r in design.deps(acc.name))  # type: ignore[return-value]


@dataclass
class GemmBenchTable:
    """The design, its twin and every library peer, timed interleaved on the same data.

    ``peers``: the rows that are library calls (``runtime.peers``); ``best_peer`` the fastest of
    them, which ``x best library`` divides by (above 1: the design is faster)."""

    design: str
    m: int
    n: int
    k: int
    dtype: str
    rows: list[tuple[str, float, float]]  # (variant, median ms, TFLOP/s)
    peers: tuple[str, ...] = ()
    note: str = ""

    @property
    def best_peer(self) -> tuple[str, float] | None:
        """(label, median ms) of the fastest library row, None when no peer ran."""
        timed = [(name, ms) for name, ms, _ in self.rows if name in self.peers]
        return min(timed, key=lambda x: x[1]) if timed else None

    def vs_best_library(self, variant: str | None = None) -> float:
        """Best library time / ``variant``'s time (the design by default); nan without a peer."""
        best = self.best_peer
        ms = next(r[1] for r in self.rows if r[0] == (variant or self.rows[0][0]))
        return best[1] / ms if best else float("nan")

    def table(self) -> str:
        best = self.best_peer
        lines = [f"{self.design}: {self.m}x{self.n}x{self.k} {self.dtype}" + (f" ({self.note})" if self.note else ""),
                 f"{'variant':<34} {'median ms':>10} {'TFLOP/s':>9} {'x best library':>15}"]
        for name, ms, tf in self.rows:
            rel = f"{best[1] / ms:.3f}" if best else "-"
            lines.append(f"{name:<34} {ms:>10.4f} {tf:>9.1f} {rel:>15}")
        lines.append(f"best library: {best[0]} ({best[1]:.4f} ms), fastest of {', '.join(self.peers)}" if best
                     else "no library peer ran")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def benchmark_gemm(design: Design, m: int | None = None, n: int | None = None, k: int | None = None, *,
                   rounds: int = 10, warmup: int = 2, seed: int | None = None, twin: bool = True,
                   b_major: str | None = None, peers: bool = True, tuned: Tuned | None = None,
                   **_: Any) -> GemmBenchTable:
    """The design, its ungrouped twin and every library GEMM a user would call instead
    (``runtime.peers.gemm_peers``: torch.matmul, cublasGemmEx) on the same data, interleaved;
    each verified first against the float32 reference on poisoned outputs.  It runs on a created
    stream, so PyTorch's launches are on the stream the events time.

    ``tuned`` (a ``runtime.tuned.Tuned``, e.g. ``explore.tuning.tune_gemm_design(design)``, which
    ``explore.bench.tuned_benchmark`` passes): run its design, the tuner's choice for this problem and GPU, with the design as given
    beside it when that differs; the table's note says which choice ran and where it came from."""
    require_gpu()
    cp = cupy()
    with cp.cuda.Stream(non_blocking=True):
        return _benchmark_gemm(design, m, n, k, rounds=rounds, warmup=warmup, seed=seed, twin=twin,
                               b_major=b_major, peers=peers, tuned=tuned)


def _benchmark_gemm(design: Design, m, n, k, *, rounds: int, warmup: int, seed, twin: bool, b_major, peers: bool,
                    tuned: Tuned | None):
    from .peers import gemm_peers, verify_peer
    cp = cupy()
    p = design.problem_dict
    m, n, k = m or p["M"], n or p["N"], k or p["K"]
    src = emit_gemm(design, b_major=b_major)
    b_major = str(src.info["b_major"])
    data = GemmData.make(src, m, n, k, seed)
    variants = []
    given, note = design, ""
    if tuned is not None:
        design, note = tuned.design, tuned.describe()
    designs = [design] + ([ungrouped(design)] if twin and design.groups else [])
    if note and design.to_json() != given.to_json():
        designs.append(dataclasses.replace(given, name=f"{given.name}_as_designed"))
    for d in designs:
        s = emit_gemm(d, b_major=b_major)
        la = GemmLauncher(s)
        data.encode(s)
        verify(d, s, la, data)
        maps = dict(data.maps)
        args = la.args(GemmData(m, n, k, data.dtype, data.arrays, data.values, maps, data.out_dtypes))
        variants.append((d.name, (lambda la=la, args=args: la.launch(data, args)), la))
    labels: list[str] = []
    if peers:
        a, b = gemm_sources(design)
        scratch = cp.empty((m, n), dtype=cp.float32 if data.dtype == "float32" else cp.uint16)
        want = data.values[a] @ (data.values[b] if b_major == "mn" else data.values[b].T)
        for peer in gemm_peers(data.arrays[a], data.arrays[b], scratch, m, n, k, data.dtype, b_major):
            verify_peer(peer, {"D": scratch}, {"D": want}, data.dtype, TOLERANCE[data.dtype])
            variants.append((peer.label, peer.call, None))
            labels.append(peer.label)
    named = [(name, fn) for name, fn, _ in variants]
    times = time_interleaved(named, rounds, warmup=warmup, batch=batch_for(estimate_ms(named[0][1])))
    for _, _, la in variants:
        if la is not None:
            la.check_watchdog()
    flops = 2.0 * m * n * k
    rows = [(name, statistics.median(t), flops / (statistics.median(t) * 1e-3) / 1e12) for name, t in times.items()]
    return GemmBenchTable(given.name, m, n, k, data.dtype, rows, tuple(labels), note)


__all__ = ["GemmBenchTable", "GemmData", "GemmLauncher", "GemmResult", "TOLERANCE", "benchmark_gemm", "gemm_sources",
           "evaluate", "is_gemm", "reference", "run_gemm", "to_bits", "to_float32", "verify"]
