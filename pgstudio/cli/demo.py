"""``pgstudio demo``: every canonical design, end to end -- the main job on the canonical designs.

For each design: its diagnostics, barrier layout and shared memory, grouped vs ungrouped barrier
counts, the exhaustive checker's verdict, the simulated period, its pictures; then merge_copy's kernel,
benchmarked on a GPU or compiled for every architecture without one.  The steps are called here,
in order: no stage registers itself with the command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import examples
from ..analysis.check import check
from ..analysis.cost import design_cost
from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.simulate import simulate
from ..analysis.validate import validate
from ..codegen.kernel import emit
from ..errors import GpuUnavailable
from ..explore.bench import tuned_benchmark
from ..model.design import Design
from ..model.targets import ARCHES
from ..runtime._cupy import gpu_available
from ..runtime.compile import compile_cubin
from ._common import output_folder, write_output
from .render import write_pictures

__all__ = ["NAME", "HELP", "KERNEL_DESIGN", "add_arguments", "analyse", "pictures", "kernel", "run"]

NAME = "demo"
HELP = "build, validate, check, draw and compile the canonical designs"

#: The design whose kernel the demo writes, compiles and (on a GPU) benchmarks.
KERNEL_DESIGN = "merge_copy"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="pgstudio-demo", help="folder for the files the demo writes")


def analyse(name: str, design: Design, out: Path) -> bool:
    """Print what pgstudio knows about one design and write its JSON; True when it is valid."""
    twin = examples.ungrouped(design)
    report = validate(design)
    layout, twin_layout = barrier_layout(design), barrier_layout(twin)
    print(f"=== {name}: {design.summary()}")
    print(report)
    print(layout.table())
    print(smem_layout(design).report())
    saved = twin_layout.num_barriers - layout.num_barriers
    print(f"grouped {layout.num_barriers} barriers vs ungrouped {twin_layout.num_barriers} ({saved} saved)")
    write_output(out / f"{name}.json", design.to_json())
    print(f"checker: {check(design, 8).summary()}")
    cost, what = design_cost(design)
    tl = simulate(design, iterations=8, inner=4, cost=cost)
    print(f"simulated (8 iterations, inner loops 4, {what}): {tl.end:.0f} ns, period {tl.period():.0f} ns")
    return report.ok


def pictures(name: str, design: Design, out: Path, said: set[str]) -> None:
    written, notes = write_pictures(design, out / name)
    stems = sorted({p.stem for p in written})
    print(f"pictures: {out / name}/{{{','.join(stems)}}}.svg/.png")
    for note in notes:
        if note not in said:
            said.add(note)
            print(note)


def kernel(name: str, design: Design, out: Path) -> None:
    """Write the kernel; benchmark it on a GPU, else compile it for every architecture."""
    src = emit(design)
    path = out / f"{name}.cu"
    write_output(path, src.code)
    print(f"kernel: wrote {path} ({len(src.code.splitlines())} lines)")
    if gpu_available():
        print(tuned_benchmark(design, rounds=10, progress=False))
        return
    for arch in ARCHES:
        try:
            cub = compile_cubin(emit(design, arch=arch))
        except GpuUnavailable as exc:
            print(f"kernel: not compiled: {exc}")
            break
        print(f"kernel: compiled for {arch}: {len(cub):,} B cubin in {cub.seconds * 1e3:.0f} ms")
    print("kernel: no GPU is present, so nothing was run or timed (pgstudio bench needs CuPy and a GPU)")


def run(args: argparse.Namespace) -> int:
    out = output_folder(args.out)
    status = 0
    said: set[str] = set()
    for name, build in examples.CANONICAL.items():
        design = build()
        status |= 0 if analyse(name, design, out) else 1
        pictures(name, design, out, said)
        if name == KERNEL_DESIGN:
            kernel(name, design, out)
        print()
    print(f"design files written to {out}/")
    return status
