"""``pgstudio emit design.json``: write the design's CUDA kernel to a .cu file."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..codegen.kernel import emit
from ..model.targets import ARCHES
from ._common import design_argument, load_design, write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "emit"
HELP = "write a design's warp-specialised CUDA kernel (.cu)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("-o", "--out", help="the .cu file to write (default: the design file's name with .cu)")
    p.add_argument("--arch", default=ARCHES[0], choices=ARCHES, help="target the source is written for")
    p.add_argument("--no-validate", action="store_true",
                   help="emit even when design.validate() reports errors (the kernel may hang; its watchdog says where)")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    src = emit(design, arch=args.arch, validate=not args.no_validate)
    out = write_output(Path(args.out) if args.out else Path(args.design).with_suffix(".cu"), src.code, keep=args.design)
    print(f"wrote {out}: kernel {src.entry}, {len(src.code.splitlines())} lines, block {src.block[0]} threads, "
          f"{src.smem_bytes} B shared memory, {len(design.tasks)} task branches")
    return 0
