#!/usr/bin/env python3
"""Does "valid" mean "it compiles"?  A corpus of canonical-design variants through validate, emit, NVRTC.

The corpus:

* GEMM: each canonical GEMM design x stages {2, 3, 5, 7} x BM {64, 128, 256} x BN {64, 128, 256}
  x BK {32, 64, 128} x dtype {float16, bfloat16, float32} (1296 designs);
* streaming: each canonical streaming design x stages {2, 3, 5, 7} x tile bytes {256, 1024, 4096,
  16384, 32768} x dtype {float32, float16, bfloat16} (180 designs).

Every design targets sm_90a and sm_100a (``Design.targets``; ``--targets sm_90a`` checks one).
For every design: does ``validate()`` report zero errors; does ``codegen.emit`` build it for
sm_90a and for sm_100a (and if not, which exception and code refused it); does NVRTC compile
every emitted source to a cubin of that target.  "valid but refused" counts designs with zero
validation errors that emit or NVRTC refuses for one of their targets: it must be 0.

Compiles run in a process pool (``--jobs``, default 2), once per distinct source, and cubins are
kept in the on-disk cache (``$PGSTUDIO_CACHE`` or ``~/.cache/pgstudio/kernels``), so a second run
only re-validates and re-emits.  Needs the ``nvrtc`` extra; ``--no-compile`` stops after emit.

    PYTHONPATH=$PWD python3 benchmarks/buildable.py [--jobs 2] [--no-compile] [--show 5] [--targets sm_90a]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.model.targets import ARCHES

GEMMS = ("merge_gemm", "merge_gemm_resadd", "fork_gemm_act", "fused_merge_gemm")
STAGES = (2, 3, 5, 7)
TILE = (64, 128, 256)
BK = (32, 64, 128)
DTYPES = ("float16", "bfloat16", "float32")
TILE_BYTES = (256, 1024, 4096, 16384, 32768)


def corpus(targets=ARCHES):
    """(family, label, design) for every variant, each built for ``targets``."""
    for name, stages, bm, bn, bk, dt in itertools.product(GEMMS, STAGES, TILE, TILE, BK, DTYPES):
        label = f"{name} S={stages} BM={bm} BN={bn} BK={bk} {dt}"
        d = examples.example(name, num_stages=stages, bm=bm, bn=bn, bk=bk, dtype=dt)
        yield "gemm", label, d.with_targets(*targets)
    for name, stages, tb, dt in itertools.product(examples.STREAMING, STAGES, TILE_BYTES, DTYPES):
        label = f"{name} S={stages} tile={tb} B {dt}"
        yield "stream", label, examples.example(name, num_stages=stages, tile_bytes=tb, dtype=dt).with_targets(*targets)


@dataclass
class Outcome:
    family: str
    label: str
    valid: bool
    codes: tuple[str, ...]  # validation error codes
    emitted: dict = field(default_factory=dict)  # arch -> KernelSource
    refused: dict = field(default_factory=dict)  # arch -> "ExceptionType[code]: message"
    compiled: dict = field(default_factory=dict)  # arch -> True / "nvrtc: message"


def _why(exc: Exception) -> str:
    code = getattr(exc, "code", "")
    return f"{type(exc).__name__}[{code}]: {str(exc).splitlines()[0][:160]}" if code else \
        f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


def _compile(src):
    from pgstudio.runtime.compile import cubin_for
    t0 = time.perf_counter()
    try:
        cub = cubin_for(src)
        return src.key, True, "", time.perf_counter() - t0, cub.cached
    except Exception as exc:  # noqa: BLE001 - a refusal is a result here
        return src.key, False, _why(exc), time.perf_counter() - t0, False


def run(jobs: int, compile_: bool, targets=ARCHES) -> list[Outcome]:
    outcomes = []
    t0 = time.perf_counter()
    for family, label, design in corpus(targets):
        report = design.validate()
        o = Outcome(family, label, report.ok, tuple(d.code for d in report.errors))
        for arch in ARCHES:
            try:
                o.emitted[arch] = emit(design, arch=arch, validate=False)
            except Exception as exc:  # noqa: BLE001
                o.refused[arch] = _why(exc)
        outcomes.append(o)
    print(f"validated and emitted {len(outcomes)} designs in {time.perf_counter() - t0:.1f} s")
    if not compile_:
        return outcomes
    sources = {}
    for o in outcomes:
        for src in o.emitted.values():
            sources.setdefault(src.key, src)
    t0 = time.perf_counter()
    results = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for key, ok, why, secs, cached in pool.map(_compile, sources.values(), chunksize=4):
            results[key] = (ok, why, secs, cached)
    fresh = [r[2] for r in results.values() if not r[3]]
    print(f"compiled {len(sources)} distinct sources ({len(fresh)} fresh, {len(sources) - len(fresh)} from the cache) "
          f"in {time.perf_counter() - t0:.1f} s with {jobs} process(es)"
          + (f"; a fresh compile took {sum(fresh) / len(fresh):.2f} s on average" if fresh else ""))
    for o in outcomes:
        for arch, src in o.emitted.items():
            ok, why, _, _ = results[src.key]
            o.compiled[arch] = True if ok else why
    return outcomes


def summarise(outcomes: list[Outcome], compile_: bool, show: int, targets=ARCHES) -> int:
    refused_valid = 0
    for family in ("gemm", "stream", None):
        rows = [o for o in outcomes if family is None or o.family == family]
        valid = [o for o in rows if o.valid]
        head = f"{family or 'all'}: {len(rows)} designs, {len(valid)} validate with zero errors"
        print(head)
        for arch in ARCHES:
            em = sum(arch in o.emitted for o in rows)
            em_v = sum(arch in o.emitted for o in valid)
            line = f"  {arch}: emit {em} ({em_v} of the valid)"
            if compile_:
                cc = sum(o.compiled.get(arch) is True for o in rows)
                cc_v = sum(o.compiled.get(arch) is True for o in valid)
                line += f", NVRTC-compile {cc} ({cc_v} of the valid)"
            print(line)
        bad = [o for o in valid if any(arch in o.refused or (compile_ and o.compiled.get(arch) is not True)
                                       for arch in targets)]
        print(f"  valid but refused for a target ({' or '.join(targets)}): {len(bad)}")
        if family is None:
            refused_valid = len(bad)
    print()
    reasons = Counter()
    examples_of = defaultdict(list)
    for o in outcomes:
        if not o.valid:
            continue
        for arch in targets:
            why = o.refused.get(arch) or (o.compiled.get(arch) if compile_ and o.compiled.get(arch) is not True else None)
            if why:
                key = f"{arch} {why.split(':')[0]}"
                reasons[key] += 1
                examples_of[key].append(f"{o.label}: {why}")
    if reasons:
        print("why valid designs were refused (arch, exception[code]: count):")
        for key, n in reasons.most_common():
            print(f"  {key}: {n}")
            for ex in examples_of[key][:show]:
                print(f"      {ex}")
    codes = Counter(c for o in outcomes for c in set(o.codes))
    print("validation error codes (designs with the code):", ", ".join(f"{c} {n}" for c, n in codes.most_common()) or "none")
    return refused_valid


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="compile processes")
    ap.add_argument("--no-compile", action="store_true", help="validate and emit only")
    ap.add_argument("--show", type=int, default=2, help="examples printed per refusal reason")
    ap.add_argument("--targets", nargs="+", default=list(ARCHES), choices=ARCHES, help="the designs' targets")
    args = ap.parse_args(argv)
    outcomes = run(args.jobs, not args.no_compile, tuple(args.targets))
    refused = summarise(outcomes, not args.no_compile, args.show, tuple(args.targets))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
