"""``pgstudio compile design.json [--arch ...]``: NVRTC cubins for sm_90a / sm_100a, no GPU needed.

Where NVRTC is missing the command says so in one line (``GpuUnavailable``), never with a traceback.

A design that validates always compiles (the ``codegen.*`` rules say what the generators build),
so NVRTC refusing the kernel of a valid design is a bug in pgstudio, not the user's mistake: it
is raised as ``GeneratedCodeRejected`` (not a ``PgStudioError``), which ``main`` reports as a bug
(exit 70) with NVRTC's first error.  Only a design compiled with ``--no-validate`` that has
errors for that target gets NVRTC's refusal as a user's mistake (exit 2).
"""

from __future__ import annotations

import argparse

from ..analysis.validate import validate
from ..codegen.kernel import emit
from ..errors import CompileError
from ..model.targets import ARCHES
from ..runtime.compile import CompileTimeout, compile_cubin
from ..runtime.progress import Progress
from ._common import design_argument, load_design

__all__ = ["NAME", "HELP", "GeneratedCodeRejected", "add_arguments", "run"]

NAME = "compile"
HELP = "compile a design's kernel to sm_90a / sm_100a cubins with NVRTC (no GPU needed)"


class GeneratedCodeRejected(RuntimeError):
    """NVRTC refused the kernel generated for a design that validates: pgstudio's fault."""


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
            src = emit(design, arch=arch, validate=not args.no_validate)
            try:
                cub = compile_cubin(src)
            except CompileTimeout:
                raise  # stopped at the deadline ($PGSTUDIO_COMPILE_TIMEOUT): one line, not a bug report
            except CompileError as exc:
                if args.no_validate and not validate(design.with_targets(arch)).ok:
                    raise  # a design with errors, compiled on request: NVRTC's refusal is the user's to fix
                raise GeneratedCodeRejected(f"NVRTC rejected the kernel of design {design.name!r}, which validates "
                                            f"for {arch}: {exc}") from exc
            lines.append(f"{design.name}: {arch} cubin, {len(cub):,} B, {cub.seconds * 1e3:.0f} ms (NVRTC, no GPU needed)")
            bar.update(1, arch)
    print("\n".join(lines))
    return 0
