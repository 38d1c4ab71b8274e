"""``pgstudio compile`` and ``pgstudio bench``, and the demo's compile-and-benchmark step.

Where CuPy, a GPU or NVRTC is missing these commands say so in one line (``GpuUnavailable``),
never with a traceback.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import cli
from ..codegen.kernel import ARCHES, emit
from ._cupy import gpu_available, require_gpu


def _compile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="a design JSON file")
    p.add_argument("--arch", nargs="+", default=list(ARCHES), choices=ARCHES, help="targets to compile for")
    p.add_argument("--no-validate", action="store_true", help="compile even when design.validate() reports errors")


def cmd_compile(args: argparse.Namespace) -> int:
    from .compile import compile_cubin
    design = cli.load_design(args.design)
    for arch in args.arch:
        cub = compile_cubin(emit(design, arch=arch, validate=not args.no_validate))
        print(f"{design.name}: {arch} cubin, {len(cub):,} B, {cub.seconds * 1e3:.0f} ms (NVRTC, no GPU needed)")
    return 0


cmd_compile.add_args = _compile_args
cli.command("compile", "compile a design's kernel to sm_90a / sm_100a cubins with NVRTC (no GPU needed)")(cmd_compile)


def _bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="a design JSON file")
    p.add_argument("--n", type=int, help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--rounds", type=int, default=30, help="interleaved timed runs of every variant")
    p.add_argument("--budget-ms", type=float, default=1000.0, help="watchdog budget of every barrier wait")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def cmd_bench(args: argparse.Namespace) -> int:
    design = cli.load_design(args.design)
    require_gpu()  # one clear line when there is no CuPy or no GPU
    from .bench import benchmark
    table = benchmark(design, n=args.n, rounds=args.rounds, budget_ms=args.budget_ms, progress=not args.quiet)
    print(table)
    return 0


cmd_bench.add_args = _bench_args
cli.command("bench", "verify and time a design against its ungrouped twin, CuPy and a device copy (GPU)")(cmd_bench)


def demo_step(name: str, design, out: Path) -> None:
    """``pgstudio demo``: write merge_copy's kernel; benchmark it on a GPU, else compile it only."""
    if name != "merge_copy":
        return
    src = emit(design)
    path = Path(out) / f"{name}.cu"
    path.write_text(src.code)
    print(f"kernel: wrote {path} ({len(src.code.splitlines())} lines)")
    if gpu_available():
        from .bench import benchmark
        print(benchmark(design, rounds=10, progress=False))
        return
    from ..errors import GpuUnavailable
    from .compile import compile_cubin
    for arch in ARCHES:
        try:
            cub = compile_cubin(emit(design, arch=arch))
        except GpuUnavailable as exc:
            print(f"kernel: not compiled: {exc}")
            break
        print(f"kernel: compiled for {arch}: {len(cub):,} B cubin in {cub.seconds * 1e3:.0f} ms")
    print("kernel: no GPU is present, so nothing was run or timed (pgstudio bench needs CuPy and a GPU)")


cli.add_demo_hook(demo_step)
