"""A GEMM generator change, measured: this tree's kernels against another revision's, beside the library.

    python benchmarks/gemm_ab.py --base REV [--only LABEL ...] [--rounds 10] [--results ab.json]
    python benchmarks/gemm_ab.py --base REV --emit-only     # on a machine without a GPU: emit and compile

For every configuration of ``CONFIGS`` (a design, a problem and a tile choice), the kernel that
revision ``REV`` of pgstudio generates ("base", emitted in a subprocess from ``git archive REV``)
and the kernel this tree generates ("this") are compiled, each verified on the same fresh random
data with poisoned outputs, and timed interleaved (``runtime.timing``) with the fastest library
paths a user would write: ``torch.matmul`` / ``cublasGemmEx`` for a GEMM, the PyTorch composition,
``torch.addmm`` and the cuBLAS compositions for the fused designs (``runtime.peers``).  The table
gives x best peer (peer time / kernel time) of both kernels and their ratio.

``--variant NAME=KEY=VALUE`` adds a kernel of this tree built with one of the generator's rule
constants in ``analysis.buildable.gemm_limits`` set otherwise (``lag2=WGMMA_IN_FLIGHT=2``): how the
constants there were chosen.  The sources are emitted (and compiled into ``$PGSTUDIO_CACHE``)
before anything runs on the GPU, so ``--emit-only`` on a CPU machine fills the cache that a GPU
run then loads.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (label, design, M, N, K, dtype, tiles key): the shapes the generator's recent changes aimed at.
CONFIGS: tuple[tuple[str, str, int, int, int, str, str], ...] = (
    ("small-M", "merge_gemm", 128, 8192, 8192, "bfloat16", "128x64x64/s8/k1"),
    ("small-M", "merge_gemm", 128, 8192, 8192, "bfloat16", "128x256x32/s6/k4"),
    ("small-M", "merge_gemm", 128, 8192, 8192, "bfloat16", "128x128x64/s5/k1"),
    ("512", "merge_gemm", 512, 8192, 8192, "bfloat16", "128x256x64/s3/k1"),
    ("512", "merge_gemm", 512, 8192, 8192, "bfloat16", "128x128x64/s5/k1"),
    ("square", "merge_gemm", 4096, 4096, 4096, "bfloat16", "128x256x64/s3/k1"),
    ("ragged", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x256x64/s3/k1"),
    ("ragged", "merge_gemm", 4168, 3008, 1000, "bfloat16", "128x256x64/s3/k1"),
    ("ragged", "merge_gemm_k", 4168, 3000, 1000, "bfloat16", "128x256x64/s3/k1"),
    ("ragged", "merge_gemm_k", 4168, 3008, 1000, "bfloat16", "128x256x64/s3/k1"),
    ("ragged", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x256x64/s3/k1/c1x2"),
    ("ragged-tiles", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x256x64/s3/k1/c2x1"),
    ("ragged-tiles", "merge_gemm", 4168, 3000, 1000, "bfloat16", "256x128x64/s3/k1"),
    ("ragged-tiles", "merge_gemm", 4168, 3000, 1000, "bfloat16", "256x128x64/s3/k1/c2x1"),
    ("ragged-tiles", "merge_gemm", 4168, 3000, 1000, "bfloat16", "256x128x64/s3/k1/c1x2"),
    ("ragged-tiles", "merge_gemm", 4168, 3008, 1000, "bfloat16", "128x256x64/s3/k1/c1x2"),
    ("ragged-192", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x192x64/s4/k1"),
    ("ragged-192", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x192x64/s4/k1/c1x2"),
    ("ragged-192", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x192x64/s4/k1/c2x1"),
    ("ragged-192", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x256x32/s6/k1/c1x2"),
    ("ragged-192", "merge_gemm", 4168, 3000, 1000, "bfloat16", "128x256x64/s3/k1/c1x2"),
    ("ragged-192", "merge_gemm", 4096, 4096, 4096, "bfloat16", "128x192x64/s4/k1"),
    ("even", "merge_gemm", 4224, 3072, 1024, "bfloat16", "128x256x64/s3/k1"),
    ("even", "merge_gemm", 4224, 3072, 4096, "bfloat16", "128x256x64/s3/k1"),
    ("fork", "fork_gemm_act", 8192, 8192, 1024, "float16", "128x256x64/s3/k1"),
    ("fork", "fork_gemm_act", 8192, 8192, 8192, "float16", "128x256x64/s3/k1"),
    ("resadd", "merge_gemm_resadd", 8192, 8192, 1024, "float16", "128x128x64/s4/k1"),
    ("resadd", "merge_gemm_resadd", 8192, 8192, 8192, "float16", "128x256x32/s4/k1"),
    # stream-K against its data-parallel twin (the shapes whose last wave is partly empty)
    ("stream-k", "merge_gemm", 4096, 4096, 4096, "bfloat16", "128x256x64/s3/k1"),
    ("stream-k", "merge_gemm", 4096, 4096, 4096, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm", 8192, 8192, 8192, "bfloat16", "128x256x64/s3/k1"),
    ("stream-k", "merge_gemm", 8192, 8192, 8192, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm", 4096, 14336, 4096, "bfloat16", "128x256x64/s3/k1"),
    ("stream-k", "merge_gemm", 4096, 14336, 4096, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm", 128, 8192, 8192, "bfloat16", "128x256x64/s3/k4"),
    ("stream-k", "merge_gemm", 128, 8192, 8192, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm", 512, 8192, 8192, "bfloat16", "128x256x64/s3/k1"),
    ("stream-k", "merge_gemm", 512, 8192, 8192, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm", 2048, 2048, 2048, "bfloat16", "128x256x64/s3/k1/sk"),
    ("stream-k", "merge_gemm_resadd", 8192, 8192, 8192, "float16", "128x256x32/s4/k1/sk"),
    ("stream-k", "fork_gemm_act", 8192, 8192, 8192, "float16", "128x256x64/s3/k1/sk"),
    ("stream-k", "fork_gemm_act", 8192, 8192, 1024, "float16", "128x256x64/s3/k1/sk"),
)


def design(family: str, m: int, n: int, k: int, dtype: str, key: str):
    """The design of one configuration (``merge_gemm_k``: merge_gemm with B stored N x K)."""
    from pgstudio import examples
    from pgstudio.analysis.buildable.gemm_shapes import GemmTiles
    t = GemmTiles.from_key(key)
    sk = {"stream_k": True} if getattr(t, "stream_k", False) else {}  # (an older revision builds the rest)
    if family in ("merge_gemm", "merge_gemm_k"):
        return examples.merge_gemm(m, n, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype=dtype,
                                   split_k=t.split_k, cluster=t.cluster, b_major="k" if family.endswith("_k") else None,
                                   **sk)
    return examples.CANONICAL[family](m, n, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype=dtype,
                                      compact=t.bn > 128, **sk)


def emit_all(out: str, setting: str = "") -> None:
    """Emit and compile every configuration with the pgstudio on ``sys.path``; pickle the
    sources to ``out`` (``setting``: ``KEY=VALUE`` of a ``gemm_limits`` constant to set first)."""
    if setting:
        from pgstudio.analysis.buildable import gemm_limits
        key, value = setting.split("=", 1)
        if not hasattr(gemm_limits, key):
            raise SystemExit(f"gemm_limits has no constant {key!r}")
        setattr(gemm_limits, key, type(getattr(gemm_limits, key))(value))
    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime.compile import cubin_for
    sources = {}
    for cfg in CONFIGS:
        try:
            src = emit_gemm(design(*cfg[1:]))
        except Exception as exc:  # noqa: BLE001 - an older revision may not build every configuration
            print(f"  {cfg[0]} {cfg[6]}: not built ({type(exc).__name__}: {str(exc)[:160]})")
            continue
        cubin_for(src)
        sources[cfg] = src
    Path(out).write_bytes(pickle.dumps(sources))


def _emit_in(tree: Path, out: Path, setting: str = "") -> None:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import gemm_ab; "
            f"gemm_ab.emit_all({str(out)!r}, {setting!r})")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tempfile.gettempdir())


def emit_variants(base: str, variants: list[str], work: Path) -> dict[str, Path]:
    """{variant: pickle of its sources}: the base revision's, this tree's, and each ``--variant``."""
    work.mkdir(parents=True, exist_ok=True)
    tree = work / ("tree_" + "".join(ch if ch.isalnum() else "_" for ch in base))
    if not (tree / "pgstudio").is_dir():  # extracted once per revision (a GPU machine may have no git)
        tree.mkdir(exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "pgstudio"], check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")  # git archive of this repository: plain files only
    out = {"base": work / "base.pkl", "this": work / "this.pkl"}
    print(f"emitting {len(CONFIGS)} configurations at {base} and in this tree ...", flush=True)
    _emit_in(tree, out["base"])
    _emit_in(ROOT, out["this"])
    for spec in variants:
        name, setting = spec.split("=", 1)
        out[name] = work / f"{name}.pkl"
        _emit_in(ROOT, out[name], setting)
    return out


def require_gpu(tool: str) -> str:
    """'' where a GPU is visible to this process, else the one line that says why ``tool`` cannot run."""
    from pgstudio.errors import PgStudioError
    from pgstudio.runtime.executor import check_gpu
    try:
        check_gpu("inline")
    except PgStudioError as exc:
        return f"{tool}: {exc}"
    return ""


def refuse_without_gpu(tool: str) -> bool:
    """True, after printing the one line that says why, where ``tool`` cannot run for want of a GPU."""
    why = require_gpu(tool)
    if why:
        print(why, file=sys.stderr)
    return bool(why)


def verified_launches(sources: dict, data) -> list:
    """[(name, launch)]: each source's kernel verified on ``data`` first (poisoned outputs against
    the reference; a mismatch raises), then a no-argument launch of it to time."""
    from pgstudio.runtime.gemm_run import GemmLauncher
    launchers = {v: GemmLauncher(src) for v, src in sources.items()}
    for la in launchers.values():
        la.verify(data)
    return [(v, _launch(la, data)) for v, la in launchers.items()]


def _launch(launcher, data):
    """A no-argument launch of one variant's kernel, its arguments packed once (not per timed call)."""
    args = launcher.args(data)
    return lambda: launcher.launch(data, args)


def run_config(cfg, sources: dict, rounds: int) -> dict:
    """Verify every variant's kernel of one configuration and the peers, then time them interleaved."""
    import cupy as cp

    from pgstudio.runtime import peers as P
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmLauncher, GemmWorkload
    from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved
    label, fam, m, n, k, dt, key = cfg
    have = {v: s[cfg] for v, s in sources.items() if cfg in s}
    with cp.cuda.Stream(non_blocking=True):  # one stream for the kernels, CuPy, cuBLAS and PyTorch
        data = GemmWorkload.make(design(fam, m, n, k, dt, key), have["this"], m, n, k)
        launchers = {v: GemmLauncher(src) for v, src in have.items()}
        for la in launchers.values():
            la.verify(data)
        variants = [(v, _launch(la, data)) for v, la in launchers.items()]
        a, b, ref, tol = data.arrays["gmem_a"], data.arrays["gmem_b"], data.reference(), TOLERANCE[dt]
        if fam == "merge_gemm_resadd":
            out, scratch = cp.empty((m, n), dtype=cp.uint16), cp.empty((m, n), dtype=cp.uint16)
            peers = P.residual_peers(a, b, data.arrays["gmem_r"], out, scratch, m, n, k, dt)
            outs = {"gmem_d": out}
        elif fam == "fork_gemm_act":
            d0, d1 = cp.empty((m, n), dtype=cp.uint16), cp.empty(a.shape, dtype=cp.uint16)
            peers = P.activation_peers(a, b, d0, d1, m, n, k, dt)
            outs = {"gmem_d0": d0, "gmem_d1": d1}
        else:
            out = cp.empty((m, n), dtype=cp.uint16)
            peers = P.gemm_peers(a, b, out, m, n, k, dt, b_major=data.b_major)
            outs = {"gmem_d": out}
        for p in peers:
            P.verify_peer(p, outs, ref, dt, tol)
        variants += [(p.label, p.call) for p in peers]
        times = time_interleaved(variants, rounds, batch=batch_for(estimate_ms(variants[0][1])))
        for la in launchers.values():
            la.check_watchdog()
    med = {name: statistics.median(ts) for name, ts in times.items()}
    best = min((p.label for p in peers), key=lambda x: med[x])
    return {"label": label, "design": fam, "shape": [m, n, k], "dtype": dt, "tiles": key, "best_peer": best,
            "best_ms": med[best], "ms": {v: med[v] for v in launchers}, "x": {v: med[best] / med[v] for v in launchers}}


def table(rows: list[dict], names: list[str]) -> str:
    head = f"{'configuration':<52}" + "".join(f"{v:>9}" for v in names) + f"{'this/base':>10}  best peer"
    lines = [head, "-" * len(head)]
    for r in rows:
        what = f"{r['label']} {r['design']} {'x'.join(map(str, r['shape']))} {r['tiles']}"
        if "error" in r:
            lines.append(f"{what:<52}  {r['error'][:120]}")
            continue
        ratio = r["ms"]["base"] / r["ms"]["this"] if "base" in r["ms"] else float("nan")
        lines.append(f"{what:<52}" + "".join(f"{r['x'].get(v, float('nan')):>9.3f}" for v in names)
                     + f"{ratio:>10.3f}  {r['best_peer']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the git revision to compare with (HEAD, a tag, a commit)")
    ap.add_argument("--only", nargs="*", default=[], help="configuration labels to run (default: all)")
    ap.add_argument("--variant", action="append", default=[], help="NAME=KEY=VALUE of a gemm_limits constant")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--results", default="gemm_ab.json")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "pgstudio_gemm_ab"))
    ap.add_argument("--emit-only", action="store_true", help="emit and compile, run nothing (no GPU needed)")
    args = ap.parse_args(argv)
    why = "" if args.emit_only else require_gpu("gemm_ab.py")
    if why:
        print(why + " (--emit-only emits and compiles without one)", file=sys.stderr)
        return 2
    paths = emit_variants(args.base, args.variant, Path(args.work).resolve())
    if args.emit_only:
        print(f"emitted and compiled into {os.environ.get('PGSTUDIO_CACHE', 'the kernel cache')}")
        return 0
    sources = {v: pickle.loads(p.read_bytes()) for v, p in paths.items()}
    names = list(sources)
    rows = []
    for cfg in CONFIGS:
        if args.only and cfg[0] not in args.only:
            continue
        t0 = time.perf_counter()
        try:
            row = run_config(cfg, sources, args.rounds)
        except Exception as exc:  # noqa: BLE001 - a failed verification is a row, and the run goes on
            traceback.print_exc()
            row = {"label": cfg[0], "design": cfg[1], "shape": list(cfg[2:5]), "tiles": cfg[6],
                   "error": f"{type(exc).__name__}: {exc}"}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
        Path(args.results).write_text(json.dumps(rows, indent=1))
    import cupy as cp
    print(f"\n{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: x best peer (peer time / kernel time), "
          f"base = {args.base}; every kernel verified on fresh poisoned data first, all timed interleaved\n")
    print(table(rows, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
