"""``pgstudio compile design.json [--arch ...]``: NVRTC cubins for sm_90a / sm_100a, no GPU needed.

Where NVRTC is missing the command says so in one line (``GpuUnavailable``), never with a traceback.
"""

from __future__ import annotations

import argparse

from ..codegen.kernel import emit
from ..model.targets import ARCHES
from ..runtime.compile import compile_cubin
from ..runtime.progress import Progress
from ._common import design_argument, load_design

NAME = "compile"
HELP = "compile a design's kernel to sm_90a / sm_100a cubins with NVRTC (no GPU needed)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--arch", nargs="+", default=list(ARCHES), choices=ARCHES, help="targets to compile for")
    p.add_argument("--no-validate", action="store_true", help="compile even when design.validate() reports errors")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    lines = []
    with Progress(len(args.arch), "compile", "target", enabled=not args.quiet) as bar:
        for arch in args.arch:
            cub = compile_cubin(emit(design, arch=arch, validate=not args.no_validate))
            lines.append(f"{design.name}: {arch} cubin, {len(cub):,} B, {cub.seconds * 1e3:.0f} ms (NVRTC, no GPU needed)")
            bar.update(1, arch)
    print("\n".join(lines))
    return 0
