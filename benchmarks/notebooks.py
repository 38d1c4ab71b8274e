#!/usr/bin/env python3
"""The GPU tables the teaching notebooks show: every design a notebook benchmarks
(``timed_or_compiled(examples.X())`` cells in notebooks/_build.py), benchmarked on this machine's
GPU -- each variant verified on fresh random data with a poisoned output before it is timed.

Without ``--record`` it prints the tables.  With ``--record`` it also writes them to
notebooks/recorded/<design>.json (``pgstudio.runtime.recorded``), labelled with the GPU's name,
the date and this command; the notebooks, which run without a GPU (``make notebooks``), then show
them as "recorded on an NVIDIA H200 on <date>".  Run ``make notebooks`` afterwards so the
committed outputs show the new recordings.

    python benchmarks/notebooks.py [--record] [--only merge_gemm,merge_copy]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pgstudio
from pgstudio import examples, runtime
from pgstudio.runtime import recorded

ROOT = Path(__file__).resolve().parents[1]


def designs() -> list[str]:
    """What the notebooks benchmark, read from notebooks/_build.py (one list, not two)."""
    spec = importlib.util.spec_from_file_location("notebooks_build", ROOT / "notebooks" / "_build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build.recorded_designs()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write notebooks/recorded/<design>.json")
    parser.add_argument("--only", default="", help="comma-separated design names (default: all the notebooks show)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or designs()
    if not runtime.gpu_available():
        print("no GPU here: nothing to time, nothing recorded (the notebooks say no recording exists yet)")
        return 1
    device = recorded.device_name()
    for name in names:
        table = pgstudio.benchmark(examples.example(name), progress=False)  # verifies every variant first
        print(f"{name} on {device}:\n{table}\n")
        if args.record:
            path = recorded.record(name, table, ROOT / "notebooks" / recorded.FOLDER, device=device)
            print(f"recorded in {path.relative_to(ROOT)}\n")
    if args.record:
        print("now run `make notebooks` so the committed notebooks show these recordings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
