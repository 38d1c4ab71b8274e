#!/usr/bin/env python3
"""Instrumented builds on the GPU: what stamping costs, and the simulator calibrated against them.

1. Overhead: merge_copy (fp32, 8 KiB x 4 stages) plain and instrumented (2 sampled blocks, 512
   records per lane), the plain kernel twice (the spread between two copies of one kernel is the
   noise floor), interleaved round by round on the same arrays; medians.  The same for each
   canonical GEMM design at its problem (2 sampled blocks, every k step of their tiles recorded).
   Target: instrumented <= 1.03x plain.
2. Calibration: merge_copy, fork_copy and fused_merge_copy traced with one block per SM (what
   the cost model assumes); simulated (datasheet model) vs measured steady-state period, the
   cost model fitted to the measured timelines, and the period again with the fitted model.
   With ``--out DIR``: ``calibration.json`` (fitted constants, report), ``calibration.png``
   (simulated with the fitted model above measured, per design), ``trace_merge_copy.json``
   (Chrome / Perfetto) and ``timeline_merge_copy.png`` (measured, default occupancy).

    PYTHONPATH=$PWD python3 benchmarks/instrument.py [--rounds 30] [--out DIR] [--no-calibrate]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

from pgstudio import examples
from pgstudio.analysis.calibrate import calibration_report, fit, timeline_stats
from pgstudio.analysis.cost import H200
from pgstudio.analysis.simulate import simulate
from pgstudio.codegen.instrument import Instrument
from pgstudio.runtime.bench import Contender, interleave, kernel_contender
from pgstudio.runtime.run import emit_cached
from pgstudio.runtime.stream_run import StreamWorkload
from pgstudio.runtime.trace import decode, trace, traced_launcher

SIZES = (1 << 28, 1 << 24)  # 1 GiB per operand (the headline), and the design's default 64 MiB
CAL_N = 1 << 26
CAL_DESIGNS = ("merge_copy", "fork_copy", "fused_merge_copy")


def overhead(n: int, rounds: int) -> dict:
    design = examples.merge_copy(num_elements=n)
    work = StreamWorkload.make(design, n, "float32")
    spec = Instrument()
    src = emit_cached(design, instrument=spec)
    la = traced_launcher(src)
    la.verify(work)
    args = la.args(work)
    vs = [kernel_contender(design, work, "plain", "default build"),
          Contender("instrumented", f"{spec.blocks} blocks x {spec.capacity} records", lambda: la.launch(work, args),
                    work.amount, work.unit, la),
          kernel_contender(design, work, "plain again", "same kernel, second launcher")]
    interleave(vs, rounds=rounds, progress=False)
    tr = decode(src, la.buffer.get())  # what the last timed launch recorded
    assert not tr.problems(), tr.problems()[:3]
    report(f"merge_copy fp32, {n:,} elements per operand ({3 * n * 4 / 2**30:.2f} GiB moved), medians of {rounds} "
           "interleaved runs", vs, tr, lambda la: f"blocks/SM {la.blocks_per_sm}, {la.lk.num_regs} regs")
    return {"n": n, "ratio": vs[1].median_ms / vs[0].median_ms, "noise": vs[2].median_ms / vs[0].median_ms}


def report(title: str, vs: list[Contender], tr, launcher_words) -> None:
    """The rows of plain / instrumented / plain again, and what the last traced launch recorded."""
    plain = vs[0].median_ms
    print(title)
    for v in vs:
        print(f"  {v.name:<13} {v.what:<30} {v.median_ms:8.4f} ms  {v.rate:7,.0f} {v.unit}  {v.median_ms / plain:6.4f}x  "
              f"({launcher_words(v.launcher)})")
    print(f"  stamps of the last launch: {tr.summary()}")
    print()


GEMM_DESIGNS = ("merge_gemm", "fused_merge_gemm", "merge_gemm_resadd", "fork_gemm_act")
#: Stamp records per task lane of a GEMM trace: every k step of a block's tiles at the default problems.
#: What a GEMM trace records (the default window: 2 work units x 16 k tiles per sampled block).
GEMM_SPEC = Instrument(blocks=2)


def gemm_contenders(design, sources, work=None) -> tuple:
    """(work, contenders): each (label, what, KernelSource) of ``design`` loaded, verified on fresh
    random inputs with poisoned outputs, and ready to time on one workload (made from the first
    source unless given).  Call it on a created stream (``cupy().cuda.Stream``)."""
    from pgstudio.runtime.gemm_run import GemmLauncher, GemmWorkload
    m, n, k = sources[0][2].info["problem"]
    work = work or GemmWorkload.make(design, sources[0][2], m, n, k)
    vs = []
    for label, what, src in sources:
        la = GemmLauncher(src)
        checks = la.verify(work)
        assert all(c.ok for c in checks), (label, checks)
        args = la.args(work)
        vs.append(Contender(label, what, (lambda la=la, args=args: la.launch(work, args)), work.amount, work.unit, la))
    return work, vs


def gemm_overhead(name: str, rounds: int) -> dict:
    """A GEMM design at its problem: plain, instrumented (2 sampled blocks), plain again; and the
    plain kernel's time per k tile (its median over the k tiles of the busiest block)."""
    from pgstudio.runtime._cupy import cupy
    design = examples.example(name)
    spec = GEMM_SPEC
    plain_src, ins_src = emit_cached(design), emit_cached(design, instrument=spec)
    with cupy().cuda.Stream(non_blocking=True):
        work, vs = gemm_contenders(design, [("plain", "default build", plain_src),
                                            ("instrumented", f"{spec.blocks} blocks x {spec.tiles} units x {spec.k_tiles} k tiles",
                                             ins_src),
                                            ("plain again", "same kernel, second launcher", plain_src)])
        interleave(vs, rounds=rounds, progress=False)
        cupy().cuda.get_current_stream().synchronize()
        tr = decode(ins_src, vs[1].launcher.buffer.get())  # what the last timed launch recorded
    assert not tr.problems(), tr.problems()[:3]
    report(f"{name} {work.m}x{work.n}x{work.k} {work.dtype}, medians of {rounds} interleaved runs", vs, tr,
           lambda la: f"{la.lk.num_regs} regs")
    p = design.problem_dict
    per_block = -(-p["num_tiles"] // vs[0].launcher.grid(work))
    plain = vs[0].median_ms
    return {"name": name, "ratio": vs[1].median_ms / plain, "noise": vs[2].median_ms / plain,
            "k_period_ns": plain * 1e6 / (per_block * p["num_k_tiles"])}


def _k_window(tl, first: int = 4, last: int = 15) -> tuple[float, float]:
    """The time span of k tiles first..last of a GEMM timeline's MMA lane (one window for the
    simulated and the measured picture: iterations of a GEMM lane mix k-tile and tile counts)."""
    starts = {e.iteration: e.start for e in tl.lane("mma") if e.op == "mma"}
    return starts.get(first, 0.0), starts.get(last, max(e.end for e in tl.events))


def _side_by_side(pairs, path: Path, windows=None) -> None:
    """Simulated (fitted) above measured, per design, as one PNG (``windows``: per pair, a
    function of a timeline giving its time window; default iterations 8..15)."""
    from matplotlib import image

    from pgstudio.render import to_png
    from pgstudio.render._figure import new_figure
    from pgstudio.render.timeline import timeline_figure
    pngs = []
    for sim, meas in pairs:
        for tl in (sim, meas):
            kw = {"time": windows(tl)} if windows else {"iterations": (8, 15)}
            pngs.append(image.imread(io.BytesIO(to_png(timeline_figure(tl, width=11.0, **kw), dpi=80))))
    heights = [p.shape[0] / 80 for p in pngs]
    fig = new_figure(11.0, sum(heights))
    top = 1.0
    for p, h in zip(pngs, heights):
        ax = fig.add_axes((0, top - h / sum(heights), 1, h / sum(heights)))
        ax.imshow(p)
        ax.axis("off")
        top -= h / sum(heights)
    path.write_bytes(to_png(fig, dpi=80))


def calibrate(out: Path | None) -> dict:
    runs = []
    for name in CAL_DESIGNS:
        design = examples.example(name)
        tr = trace(design, n=CAL_N, instrument=Instrument(blocks=2, capacity=512), blocks_per_sm=1)
        assert tr.meta_dict["verified"] and not tr.problems()
        for tl in tr.timelines():
            runs.append((design, tl))
        f = tr.fits[tr.blocks[0]]
        print(f"  traced {name}: grid {tr.meta_dict['grid']}, {tr.summary().split(': ', 1)[1]}; "
              f"timer step {f.step_ns} ns, {1 / f.ns_per_cycle:.3f} GHz SM clock")
    t0 = time.perf_counter()
    result = fit(runs)
    print(f"  {result}  ({time.perf_counter() - t0:.1f} s)")
    report = calibration_report(runs, H200, result.cost,
                                note=f"(measured: median over {len(runs) // len(CAL_DESIGNS)} sampled blocks, one block "
                                     f"per SM, {CAL_N:,} fp32 elements, 8 KiB x 4 stages)")
    for name in CAL_DESIGNS:  # what the fit compared: measured vs simulated with the fitted model
        meas = timeline_stats(next(tl for d, tl in runs if d.name == name))
        sim = timeline_stats(simulate(examples.example(name), 24, cost=result.cost))
        print(f"  {name}: " + ", ".join(f"{k} {v:.0f}/{sim.get(k, float('nan')):.0f}" for k, v in sorted(meas.items()))
              + "  (ns, measured/fitted)")
    print()
    print(report.table())
    print()
    print(f"H200_FITTED_VALUES = {result.values()}")
    if out is not None:
        (out / "calibration.json").write_text(json.dumps({
            "fitted": result.values(), "objective": [result.before, result.after],
            "report": [vars(r) for r in report.rows]}, indent=1))
        pairs = []
        for name in CAL_DESIGNS:
            meas = next(tl for d, tl in runs if d.name == name)
            pairs.append((simulate(examples.example(name), 24, cost=result.cost), meas))
        _side_by_side(pairs, out / "calibration.png")
    return {"fit": result, "report": report}


def timeline_files(out: Path, plain_k_ns: dict[str, float]) -> None:
    """The trace and picture files; ``plain_k_ns``: each GEMM design's plain time per k tile."""
    from pgstudio.render import to_png
    from pgstudio.render.timeline import timeline_figure
    tr = trace(examples.merge_copy(), instrument=Instrument(blocks=2, capacity=512))
    tr.save(str(out / "trace_merge_copy.json"))
    (out / "timeline_merge_copy.png").write_bytes(to_png(timeline_figure(tr.timeline(), iterations=(0, 11))))
    print(f"  merge_copy at default occupancy: {tr.timeline().summary()}")
    pairs = []
    for name in GEMM_DESIGNS:  # the measured GEMM pipeline beside the calibrated simulator's
        design = examples.example(name)
        tr = trace(design, instrument=GEMM_SPEC)
        assert tr.meta_dict["verified"] and not tr.problems(), tr.problems()[:3]
        meas = tr.timeline()
        sim = simulate(design, 24, cost="calibrated")
        stages = design.resource("smem_a").pipeline_config.num_stages
        lead = meas.issued_ahead("load_a", "mma", stages)[stages:]
        plain = plain_k_ns[name]
        simulated = sim.period("mma")
        print(f"  {name}: k-tile period: plain kernel {plain:.0f} ns (its time / the k tiles of the busiest "
              f"block), traced (instrumented) {meas.period('mma'):.0f} ns, calibrated simulator "
              f"{simulated:.0f} ns ({simulated / plain - 1:+.1%}); load_a runs {sorted(lead)[len(lead) // 2]} of {stages} stages ahead "
              f"of the MMA (median over {len(lead)} k tiles); {meas.meta_dict['copies_landed_by']} copies landed "
              "before their wait")
        tr.save(str(out / f"trace_{name}.json"))
        pairs.append((sim, meas))
    _side_by_side(pairs, out / "timeline_gemm.png", windows=_k_window)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--out", help="folder for the JSON and PNG files")
    p.add_argument("--no-calibrate", action="store_true")
    args = p.parse_args(argv)
    out = Path(args.out) if args.out else None
    t0 = time.perf_counter()
    results = [overhead(n, args.rounds) for n in SIZES]
    gemms = [gemm_overhead(name, args.rounds) for name in GEMM_DESIGNS]
    if not args.no_calibrate:
        print("calibration (one block per SM)")
        calibrate(out)
        print()
    if out is not None:
        timeline_files(out, {r["name"]: r["k_period_ns"] for r in gemms})
    print(f"summary ({time.perf_counter() - t0:.0f} s)")
    ok = True
    for r in results:
        good = r["ratio"] <= 1.03
        ok &= good if r["n"] == SIZES[0] else True
        print(f"  instrumented / plain, merge_copy {r['n']:>11,} elements: {r['ratio']:.4f}x "
              f"(plain vs plain {r['noise']:.4f}x)  target <= 1.03x  {'PASS' if good else 'MISS'}")
    for r in gemms:
        good = r["ratio"] <= 1.03
        ok &= good
        print(f"  instrumented / plain, {r['name']:<17} at its problem: {r['ratio']:.4f}x "
              f"(plain vs plain {r['noise']:.4f}x)  target <= 1.03x  {'PASS' if good else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
