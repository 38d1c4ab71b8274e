"""The launch contract (``runtime.launch``) for GEMM kernels: their workload and launcher.

``run.run_gemm(design, m, n, k)`` emits (``codegen.gemm``), compiles and loads the kernel (shared
``compile.load`` cache), builds fresh random inputs (``GemmWorkload``), encodes their TMA tensor
maps, poisons every output with NaN, launches on a persistent grid (one block per SM, at most one
per output tile), reads the watchdog record, and compares each output with a float32 reference
computed by ``matmul`` (cuBLAS on the GPU).  ``gemm_bench.benchmark_gemm`` times the design, its
twin and the library peers on one such workload.

16-bit data lives in ``uint16`` arrays (bfloat16 has no NumPy / CuPy dtype); ``storage.to_float32``
reads them back; float32 operands (run on the tf32 tensor cores) and float32 outputs are float32
arrays.  A split-K kernel (problem key ``SPLIT_K``) gets its workspace of partial sums and its tile
counters from the launcher, per problem shape.  The launch goes through the driver
(``cuLaunchKernel``) so the tensor maps travel as 128-byte by-value parameters.  A workload may
hold NumPy arrays (``xp=numpy``): its reference and its comparison then run on the host, which is
how the CPU tests check them; only a CuPy workload has tensor maps and can be launched.
"""

from __future__ import annotations

import ast
import ctypes
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..codegen.gemm.epilogue import PARTIALS
from ..codegen.gemm.prelude import DIAG_WORDS, STATUS
from ..codegen.source import KernelSource
from ..errors import DesignError, KernelHangError
from ..model.design import Design
from ..model.resource import Memory
from ._cupy import cupy, require_gpu
from . import data
from .launch import GEMM, Launcher, Workload, gemm_flops
from .storage import to_bits, to_float32
from .tensormap import check_map, encode_2d
from .verify import PEAK, Check, VerificationError

#: Largest error of an output relative to the largest reference magnitude, by dtype: fp32
#: accumulation then one rounding to the output type, with margin for K-long sums.
TOLERANCE = {"float16": 5e-3, "bfloat16": 2e-2, "float32": 5e-3}  # float32 operands: tf32 products
BUDGET_MS = 2000.0
_POISON = 0x7FFF  # NaN in float16 and in bfloat16


def is_gemm(design: Design) -> bool:
    """Does ``design`` compute an MMA (so ``benchmark`` dispatches here)?"""
    return any(r.memory is Memory.TMEM and r.compute.op == "mma" for r in design.resources)


def dims(space: str, m: int, n: int, k: int) -> tuple[int, int]:
    """(rows, cols) of a tensor laid out over ``space`` ("MK", "KN", "MN", ...)."""
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


def gemm_sources(design: Design) -> tuple[str, str]:
    """The global tensors behind the accumulator's A and B operands."""
    acc = next(r for r in design.resources if r.memory is Memory.TMEM and r.compute.op == "mma")
    return tuple(next(x for x in design.deps(r) if design.resource(x).memory is Memory.GMEM)
                 for r in design.deps(acc.name))  # type: ignore[return-value]


def tensor_maps(src: KernelSource, m: int, n: int, k: int, dtype: str) -> Iterator[tuple]:
    """(parameter, tensor, rows, cols, box rows, box cols, swizzle, element type) of every TMA map
    of ``src`` at M x N x K: what the launcher encodes, and the null runtime checks."""
    for param, tensor, space, box_rows, box_cols, swizzle, *dt in src.info["tensor_maps"]:
        rows, cols = dims(space, m, n, k)
        yield param, tensor, rows, cols, box_rows, box_cols, swizzle, (dt or [dtype])[0]


def check_maps(src: KernelSource, m: int, n: int, k: int, dtype: str) -> None:
    """The tensor-map rules of ``src`` at M x N x K (``tensormap.check_map``), with no GPU."""
    for _, tensor, rows, cols, box_rows, box_cols, swizzle, dt in tensor_maps(src, m, n, k, dtype):
        check_map(rows, cols, box_rows, dt, tensor, box_cols=box_cols, swizzle=swizzle)


def _host(a: Any) -> Any:
    return a.get() if hasattr(a, "get") else a


@dataclass
class GemmWorkload(Workload):
    """Inputs (their storage and float32 values) and outputs of one GEMM problem, the reference
    they are compared with and the tensor maps of every kernel launched over them."""

    design: Design
    m: int
    n: int
    k: int
    dtype: str
    arrays: dict[str, Any]
    values: dict[str, Any]  # float32 of the inputs as stored
    out_dtypes: dict[str, str] = field(default_factory=dict)  # output -> its element type (default: dtype)
    b_major: str = "mn"
    outputs: tuple[str, ...] = ()
    xp: Any = None  # the array module (CuPy; NumPy for a host workload)
    _maps: dict[str, dict[str, Any]] = field(default_factory=dict)
    _ref: dict[str, Any] | None = None

    kind = GEMM

    @classmethod
    def make(cls, design: Design, src: KernelSource, m: int, n: int, k: int, seed: int | None = None,
             xp: Any = None) -> "GemmWorkload":
        xp = xp if xp is not None else cupy()
        info = src.info
        dtype = str(info["dtype"])
        spaces = dict(info["gmem_spaces"])
        rng = data.rng(xp, seed)
        arrays, values = {}, {}
        for name in info["inputs"]:
            rows, cols = dims(spaces[name], m, n, k)
            bits = to_bits(rng.standard_normal((rows, cols), dtype=xp.float32), dtype)
            arrays[name], values[name] = bits, to_float32(bits, dtype)
        outs = dict(info.get("out_dtypes") or ())
        for name in info["outputs"]:
            arrays[name] = xp.empty(dims(spaces[name], m, n, k),
                                    dtype=xp.float32 if outs.get(name, dtype) == "float32" else xp.uint16)
        work = cls(design, m, n, k, dtype, arrays, values, outs, str(info["b_major"]), tuple(info["outputs"]), xp)
        work.maps_for(src)
        return work

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.m, self.n, self.k)

    @property
    def amount(self) -> float:
        return gemm_flops(self.m, self.n, self.k)

    @property
    def on_gpu(self) -> bool:
        return self.xp.__name__ != "numpy"

    def out_dtype(self, name: str) -> str:
        return self.out_dtypes.get(name, self.dtype)

    def maps_for(self, src: KernelSource) -> dict[str, Any]:
        """The TMA maps of ``src``'s parameters over these arrays, encoded once per kernel (on the
        host only checked: a NumPy array has no device address to encode)."""
        if src.key not in self._maps:
            if not self.on_gpu:
                check_maps(src, self.m, self.n, self.k, self.dtype)
                self._maps[src.key] = {}
            else:
                self._maps[src.key] = {
                    param: encode_2d(self.arrays[tensor].data.ptr, rows, cols, box_rows, dt, tensor, box_cols=box_cols,
                                     swizzle=swizzle)
                    for param, tensor, rows, cols, box_rows, box_cols, swizzle, dt
                    in tensor_maps(src, self.m, self.n, self.k, self.dtype)}
        return self._maps[src.key]

    def poison(self) -> None:
        for name in self.outputs:
            arr = self.arrays[name]
            arr.fill(self.xp.nan if arr.dtype == self.xp.float32 else _POISON)

    def reference(self) -> dict[str, Any]:
        """Every output in float32: the accumulator is ``matmul`` of the float32 inputs (cuBLAS)."""
        if self._ref is None:
            d, xp = self.design, self.xp
            acc = next(r for r in d.resources if r.memory is Memory.TMEM and r.compute.op == "mma")
            a_res, b_res = d.deps(acc.name)
            source = {r.name: next(x for x in d.deps(r.name) if d.resource(x).memory is Memory.GMEM)
                      for r in d.resources if r.memory is Memory.SMEM and r.pipeline_config is not None}
            a, b = self.values[source[a_res]], self.values[source[b_res]]
            prod = xp.matmul(a, b if self.b_major == "mn" else b.T)
            outs = {}
            for name in self.outputs:
                out = d.resource(name)
                ins = list(d.deps(name))
                vals = {i: prod if i == acc.name else self.values[source[i]] for i in ins}
                outs[name] = evaluate(out.compute.expr or ins[0], vals, xp)
            self._ref = outs
        return self._ref

    def check(self, label: str = "") -> tuple[Check, ...]:
        """Compare every output with the reference; ``VerificationError`` on a mismatch."""
        xp = self.xp
        checks = []
        for name, want in self.reference().items():
            got = to_float32(self.arrays[name], self.out_dtype(name))
            scale = float(xp.abs(want).max()) or 1.0
            bad = int(xp.isnan(got).sum())
            err = float(xp.abs(got - want).max()) / scale
            tol = max(TOLERANCE[self.dtype], TOLERANCE[self.out_dtype(name)])
            if bad or not err <= tol:
                where = xp.argwhere(xp.isnan(got) | (xp.abs(got - want) > tol * scale))
                first = tuple(int(x) for x in _host(where[0])) if where.size else ()
                raise VerificationError(f"{label or f'design {self.design.name!r}'} at M={self.m} N={self.n} "
                                        f"K={self.k} {self.dtype}: output {name!r} differs from cuBLAS: max error "
                                        f"{err:.3g} x max|ref| (tolerance {tol}), {bad} NaN (unwritten), first bad "
                                        f"element {first}")
            checks.append(Check(name, int(got.size), err, err * scale, 0, -1, measure=PEAK))
        return tuple(checks)


def gemm_grid(m: int, n: int, tile: tuple[int, ...], cluster: tuple[int, int] | None, split: int, sms: int,
              stream_k: bool = False) -> int:
    """Persistent: one block per SM, at most one per work unit (output tile x split); with
    clusters (``__cluster_dims__`` in the kernel) a whole number of clusters, one per unit of
    CM x CN tiles; with stream-K every SM (fewer tiles than SMs are shared by k tiles).

    >>> gemm_grid(4096, 4096, (128, 256, 64), None, 1, 132), gemm_grid(256, 256, (128, 256, 64), None, 2, 132)
    (132, 4)
    >>> gemm_grid(4096, 4096, (128, 128, 64), (2, 1), 1, 132)  # 66 clusters of 2
    132
    >>> gemm_grid(256, 256, (128, 256, 64), None, 1, 132, stream_k=True)
    132
    """
    if stream_k:
        return sms
    bm, bn = tile[0], tile[1]
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    cm, cn = cluster or (1, 1)
    if cm * cn > 1:
        units = -(-tiles_m // cm) * -(-tiles_n // cn)
        return max(1, min(units, sms // (cm * cn))) * cm * cn
    return max(1, min(tiles_m * tiles_n * split, sms))


def split_k_sizes(m: int, n: int, tile: tuple[int, ...], split: tuple[int, int]) -> tuple[int, int]:
    """Split-K workspace: (fp32 partial sums: one BM x BN block per work unit, counters: one per
    output tile and storing warp) of an M x N output; ``split`` is (parts, storing warps).

    >>> split_k_sizes(1000, 776, (128, 128, 64), (2, 4))  # 8 x 7 tiles
    (1835008, 224)
    """
    bm, bn = tile[0], tile[1]
    tiles = -(-m // bm) * -(-n // bn)
    return tiles * split[0] * bm * bn, tiles * split[1]


def stream_k_sizes(tile: tuple[int, ...], grid: int) -> tuple[int, int]:
    """Stream-K workspace: (fp32 partial sums: one BM x BN block per block of the grid -- each
    hands over at most one partial tile -- and counters: one per shared tile, fewer than the
    blocks).

    >>> stream_k_sizes((128, 256, 64), 132)
    (4325376, 132)
    """
    return grid * tile[0] * tile[1], grid


def gemm_params(src: KernelSource, work: GemmWorkload, maps: dict[str, Any], abort: Any, diag: Any,
                workspace: Callable[[], tuple[Any, Any]], budget_ms: float, stamps: Any = None) -> tuple[list, Any]:
    """The parameter objects of ``src`` in kernel order -- tensor maps by value, device pointers,
    the problem's M, N, K, the watchdog budget in ns -- and the ``void**`` array pointing at them
    (what ``cuLaunchKernel`` takes).  ``workspace()``: the split-K buffers, asked for only by a
    kernel that has them; ``stamps``: an instrumented kernel's stamp buffer."""
    objs: list[Any] = []
    for p in src.params:
        if p.kind == "tensormap":
            objs.append(maps[p.name])
        elif p.kind == "ptr":
            if p.resource == "watchdog":  # a design's tensor may be named wd_abort too
                arr = abort if p.name == "wd_abort" else diag
            elif p.resource == PARTIALS:
                arr = workspace()[0 if p.dtype == "float32" else 1]
            else:
                arr = work.arrays[p.name]
            objs.append(ctypes.c_uint64(arr.data.ptr))
        elif p.kind == "i32":
            objs.append(ctypes.c_int32({"M": work.m, "N": work.n, "K": work.k}[p.name]))
        elif p.kind == "u64":
            objs.append(ctypes.c_uint64(int(budget_ms * 1e6)))
        elif p.kind == "trace" and stamps is not None:
            objs.append(ctypes.c_uint64(stamps.data.ptr))
        else:
            raise DesignError(f"kernel parameter {p.name!r} has unknown kind {p.kind!r}", code="gemm.param",
                              hint="the GEMM generator passes tensormap, ptr, i32 and u64 parameters")
    ptrs = (ctypes.c_void_p * len(objs))(*[ctypes.addressof(o) for o in objs])
    return objs, ptrs


def gemm_hang(src: KernelSource, rec: list[int]) -> KernelHangError | None:
    """The watchdog's diagnostic words ``rec`` of a launch of ``src`` as the error in words: which
    task waited how long on which barrier, slot, stage and parity, at which tile; None when the
    launch was not stopped."""
    if not rec[0]:
        return None
    info = src.info
    slots = {s[0]: (s[1], s[2]) for s in info["slots"]}
    tasks = info["tasks"]
    what = STATUS.get(rec[0], f"status {rec[0]}")
    record = {"status": rec[0], "block": rec[1], "thread": rec[2], "slot": rec[3], "stage": rec[4],
              "parity": rec[5], "tile": rec[6], "k_tile": rec[7], "waited_us": rec[8],
              "task": tasks[rec[9]] if 0 <= rec[9] < len(tasks) else None,
              "barrier": slots.get(rec[3], ("?", "?"))[0]}
    if rec[0] == 1:
        return KernelHangError(
            f"kernel {src.entry} of design {src.design!r} hung: task {record['task']!r} waited "
            f"{rec[8] / 1000:.0f} ms on barrier {record['barrier']} (slot {rec[3]}, stage {rec[4]}, parity {rec[5]}) "
            f"at output tile {rec[6]}, k tile {rec[7]}, block {rec[1]} thread {rec[2]}", record)
    return KernelHangError(f"kernel {src.entry} of design {src.design!r} stopped: {what}", record)


class GemmLauncher(Launcher):
    """A loaded GEMM kernel, its persistent grid and its watchdog record."""

    def __init__(self, src: KernelSource, budget_ms: float = BUDGET_MS) -> None:
        from .compile import load
        require_gpu()
        cp = cupy()
        from cuda.bindings import driver as cu
        self.cu, self.src, self.budget_ms = cu, src, budget_ms
        self.lk = load(src)
        self.fn = cu.CUfunction(self.lk.kernel.kernel.ptr)
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.abort = cp.zeros(1, dtype=cp.int32)
        self.diag = cp.zeros(DIAG_WORDS, dtype=cp.int32)
        self.split = src.info.get("split_k") or (1, 0)  # (parts, storing warps)
        self.stream_k = bool(src.info.get("stream_k"))
        self._workspace: dict[tuple[int, int], tuple[Any, Any]] = {}
        ins = dict(src.info.get("instrument") or ())  # an instrumented build: its stamp buffer
        self.buffer = cp.zeros(int(ins["buffer_bytes"]) // 4, dtype=cp.uint32) if ins else None

    @property
    def label(self) -> str:
        return f"design {self.src.design!r} ({self.src.arch})"

    def grid(self, work: GemmWorkload) -> int:
        """Persistent (``gemm_grid``) over this GPU's SMs."""
        return gemm_grid(work.m, work.n, self.src.info["tile"], self.src.info.get("cluster"), self.split[0], self.sms,
                         self.stream_k)

    def workspace(self, work: GemmWorkload) -> tuple[Any, Any]:
        """Split-K / stream-K: (fp32 partial sums, zeroed counters; ``split_k_sizes``,
        ``stream_k_sizes``), allocated once per problem shape."""
        key = (work.m, work.n)
        if key not in self._workspace:
            cp = cupy()
            partials, counters = (stream_k_sizes(self.src.info["tile"], self.grid(work)) if self.stream_k else
                                  split_k_sizes(work.m, work.n, self.src.info["tile"], self.split))
            self._workspace[key] = (cp.empty(partials, dtype=cp.float32), cp.zeros(counters, dtype=cp.int32))
        return self._workspace[key]

    def reset(self, work: GemmWorkload | None = None) -> None:
        """Split-K / stream-K counters back to zero (a launch the watchdog stopped may have left
        some set); an instrumented kernel's stamp buffer too (each launch records from its start)."""
        if (self.split[0] > 1 or self.stream_k) and work is not None:
            self.workspace(work)[1].fill(0)
        if self.buffer is not None:
            self.buffer.data.memset_async(0, self.buffer.nbytes)

    def args(self, work: GemmWorkload) -> tuple:
        """The parameter objects in kernel order, and the void** array pointing at them (``gemm_params``)."""
        return gemm_params(self.src, work, work.maps_for(self.src), self.abort, self.diag, lambda: self.workspace(work),
                           self.budget_ms, self.buffer)

    def launch(self, work: GemmWorkload, args: tuple | None = None) -> None:
        objs, ptrs = args or self.args(work)
        cp = cupy()
        stream = cp.cuda.get_current_stream().ptr
        (err,) = self.cu.cuLaunchKernel(self.fn, self.grid(work), 1, 1, *self.src.block, self.src.smem_bytes,
                                        self.cu.CUstream(stream), ctypes.addressof(ptrs), 0)
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel of {self.src.entry} failed: {err}")

    def check_watchdog(self) -> None:
        err = gemm_hang(self.src, [int(x) for x in self.diag.get()])
        if err is None:
            return
        self.abort.fill(0)
        self.diag.fill(0)
        raise err


__all__ = ["BUDGET_MS", "GemmLauncher", "GemmWorkload", "TOLERANCE", "check_maps", "dims", "evaluate", "gemm_grid",
           "gemm_hang", "gemm_params", "gemm_sources", "is_gemm", "split_k_sizes", "stream_k_sizes", "tensor_maps"]
