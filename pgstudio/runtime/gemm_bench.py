"""``benchmark_gemm(design)``: a GEMM design, its ungrouped twin and every library GEMM a user would
call instead, on one workload, interleaved.

The library peers are ``runtime.peers.gemm_peers`` (torch.matmul when PyTorch is here, and
cublasGemmEx through CuPy), each verified against the float32 reference on poisoned outputs
before it is timed; the design and its twin are verified by the launch contract
(``Launcher.verify``).  The table (``bench_table.BenchTable``, the streaming benchmark's too)
names the fastest library row and divides by it.  It runs on a created stream, so PyTorch's
launches are on the stream the events time.  On the null runtime (``backend=NULL``) the same rows
are built and none of them runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..codegen.gemm import emit_gemm
from ..model.design import Design
from ..model.ungroup import ungrouped
from ._cupy import cupy
from .backend import CUDA, Backend
from .contender import Contender, interleave, nothing, table_of
from .bench_table import BenchTable
from .gemm_run import TOLERANCE, gemm_sources
from .launch import Workload
from .tuned import Tuned


def library_gemm(design: Design, work: Workload, backend: Backend = CUDA) -> list[Contender]:
    """Every library GEMM of ``work``'s problem, each verified first; on the null runtime the same
    rows, launching nothing."""
    from .peers import GEMM_PEERS, gemm_peer_labels, gemm_peers, verify_peer
    if not backend.measured:
        return [Contender(label, GEMM_PEERS[label], nothing, work.amount, work.unit, peer=True)
                for label in gemm_peer_labels()]
    cp = cupy()
    m, n, k = work.shape
    a, b = gemm_sources(design)
    scratch = cp.empty((m, n), dtype=cp.float32 if work.dtype == "float32" else cp.uint16)
    want = work.values[a] @ (work.values[b] if work.b_major == "mn" else work.values[b].T)
    out = []
    for peer in gemm_peers(work.arrays[a], work.arrays[b], scratch, m, n, k, work.dtype, work.b_major):
        verify_peer(peer, {"D": scratch}, {"D": want}, work.dtype, TOLERANCE[work.dtype])
        out.append(Contender(peer.label, GEMM_PEERS.get(peer.label, "library"), peer.call, work.amount, work.unit,
                             peer=True))
    return out


def benchmark_gemm(design: Design, m: int | None = None, n: int | None = None, k: int | None = None, *,
                   rounds: int = 10, warmup: int = 2, seed: int | None = None, twin: bool = True,
                   b_major: str | None = None, peers: bool = True, tuned: Tuned | None = None,
                   backend: Backend = CUDA, progress: bool = False,
                   on_progress: Callable[[int, int, str], None] | None = None, **_: Any) -> BenchTable:
    """The design, its ungrouped twin and every library GEMM on the same data (module docstring).

    ``tuned`` (a ``runtime.tuned.Tuned``, e.g. ``explore.tuning.tune_gemm_design(design)``, which
    ``explore.bench.tuned_benchmark`` passes): run its design, the tuner's choice for this problem
    and GPU, with the design as given beside it when that differs; the table's note says which
    choice ran and where it came from."""
    backend.require()
    kw = dict(rounds=rounds, warmup=warmup, seed=seed, twin=twin, b_major=b_major, peers=peers, tuned=tuned,
              backend=backend, progress=progress, on_progress=on_progress)
    if not backend.measured:
        return _benchmark_gemm(design, m, n, k, **kw)
    with cupy().cuda.Stream(non_blocking=True):
        return _benchmark_gemm(design, m, n, k, **kw)


def _benchmark_gemm(design: Design, m, n, k, *, rounds: int, warmup: int, seed, twin: bool, b_major, peers: bool,
                    tuned: Tuned | None, backend: Backend, progress: bool, on_progress) -> BenchTable:
    p = design.problem_dict
    m, n, k = m or p["M"], n or p["N"], k or p["K"]
    src = emit_gemm(design, b_major=b_major)
    b_major = str(src.info["b_major"])
    work = backend.gemm_workload(design, src, m, n, k, seed)
    given, note = design, ""
    if tuned is not None:
        design, note = tuned.design, tuned.describe()
    designs = [(design, f"pgstudio, {len(design.groups)} group(s)" + (f", {note.split(' (')[0]}" if note else ""))]
    if twin and design.groups:
        designs.append((ungrouped(design), "pgstudio, per-resource barriers"))
    if note and design.to_json() != given.to_json():
        designs.append((dataclasses.replace(given, name=f"{given.name}_as_designed"), "pgstudio, the design as given"))
    contenders = []
    for d, what in designs:
        la = backend.launcher(emit_gemm(d, b_major=b_major))
        la.verify(work)
        args = la.args(work)
        contenders.append(Contender(d.name, what, (lambda la=la, args=args: la.launch(work, args)), work.amount,
                                    work.unit, la))
    if peers:
        contenders += library_gemm(design, work, backend)
    interleave(contenders, rounds=rounds, warmup=warmup, progress=progress, on_progress=on_progress,
               clock=backend.clock)
    return table_of(given.name, work, contenders, note, backend)


__all__ = ["benchmark_gemm", "library_gemm"]
