#!/usr/bin/env python3
"""What an instrumented GEMM build's stamps cost, part by part (a diagnosis, not a figure).

For each design: the plain kernel, the instrumented one recording every step of its sampled
blocks, and instrumented variants with one part
of the stamp left out (the record's global store, the cycle-counter reads, the wait probes, the
timer reads, the lanes of the MMA task, the lanes of every task but the MMA's, every lane), one
whose stamps are warp-uniform (no branch around them), and one sampling the grid's first blocks
instead of its last, and the default build (which records a window: ``Instrument.tiles`` x
``k_tiles``), all interleaved on one stream;
each variant is verified first on fresh inputs with poisoned outputs.  The difference between a
variant and the full instrumented build is what the part left out costs.

    PYTHONPATH=$PWD python3 benchmarks/instrument_cost.py [--designs merge_gemm_resadd ...] [--rounds 15]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys

from pgstudio import examples
from pgstudio.codegen.instrument import SAMPLE, Instrument
from pgstudio.runtime.bench import interleave
from pgstudio.runtime.run import emit_cached

from instrument import gemm_contenders  # noqa: E402  (benchmarks/ is this script's folder)


CAP = "(pg_ins_b < PG_INS_BLOCKS && tt == 0) ? PG_INS_CAP : 0u"


def _without(code: str, old: str, new: str) -> str:
    assert old in code, old
    return code.replace(old, new)


def variants(src):
    """(label, source) of the instrumented build and of each build with one part left out."""
    code = src.code

    def lanes_off(text: str) -> str:
        return _without(text, CAP, "0u")

    def mma_part(text: str) -> tuple[int, int]:
        start = text.index("// task 'mma'")
        return start, text.index("done_mma_stamped: ;", start)  # the sampled blocks' MMA branch

    a, b = mma_part(code)
    off = lanes_off(code)
    c, d = mma_part(off)
    out = [("instrumented", code),
           ("- record store", _without(code, "slab[1 + n] = make_uint4(", "if (code == 0xFFFFFFFFu) slab[1 + n] = make_uint4(")),
           ("- clock reads", _without(code, 'asm volatile("mov.u32 %0, %%clock;" : "=r"(c));', "c = 0u;")),
           ("- probes", re.sub(r"if \(pg_ins_n < pg_ins_cap\) pg_ins_bk = pg_ins_ready\([^;]*;", "", code)),
           ("- MMA lane", code[:a] + lanes_off(code[a:b]) + code[b:]),
           ("MMA lane only", off[:c] + code[a:b] + off[d:]),
           ("no lane records", off),
           ("- timer reads", _without(code, "make_uint4(timed ? (u32)pg_globaltimer() : 0u, c, d,", "make_uint4(0u, c, d,")),
           ("warp-uniform", _without(_without(_without(code,
               "if (pg_ins_n < pg_ins_cap) { pg_ins_c = pg_ins_clk(); pg_ins_bk = 0; }", "pg_ins_c = pg_ins_clk(); pg_ins_bk = 0;"),
               "if (pg_ins_n < pg_ins_cap) pg_ins_bk = pg_ins_ready(", "pg_ins_bk = pg_ins_ready("),
               "if (pg_ins_cap) pg_ins_put(", "pg_ins_put(")),
           ("first 2 blocks", _without(code, SAMPLE, "blockIdx.x"))]
    return [(label, dataclasses.replace(src, code=text)) for label, text in out]


def measure(name: str, rounds: int) -> None:
    from pgstudio.runtime._cupy import cupy
    design = examples.example(name)
    plain = emit_cached(design)
    ins = emit_cached(design, instrument=Instrument(blocks=2, capacity=4096, tiles=None, k_tiles=None))
    window = Instrument(blocks=2)
    windowed = emit_cached(design, instrument=window)
    tiny = emit_cached(design, instrument=Instrument(blocks=2, tiles=1, k_tiles=1))
    # the sampled blocks run the stamped branches but record nothing (a condition the compiler cannot fold)
    idle = dataclasses.replace(windowed, code=_without(windowed.code, CAP, CAP.replace("tt == 0", "tt == 0 && gridDim.z == 2u")))
    with cupy().cuda.Stream(non_blocking=True):
        work, vs = gemm_contenders(design, [("plain", "", plain)] + [(label, "", src) for label, src in variants(ins)]
                                   + [(f"window {window.tiles} x {window.k_tiles} (default)", "", windowed),
                                      ("window 1 x 1", "", tiny), ("stamped branches, no records", "", idle)])
        interleave(vs, rounds=rounds, progress=False)
    base = vs[0].median_ms
    print(f"{name} {work.m}x{work.n}x{work.k}: " + ", ".join(f"{v.name} {v.median_ms / base:.3f}x" for v in vs))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--designs", nargs="+", default=["merge_gemm", "merge_gemm_resadd", "fork_gemm_act"])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    for name in args.designs:
        measure(name, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
