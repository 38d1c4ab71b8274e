"""One GEMM configuration and its library peers, launched for Nsight Compute.

    ncu --clock-control none --profile-from-start off --csv --page raw \
        --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x \
        python benchmarks/gemm_profile.py --shape 4168x3000x1000 --tiles 128x256x64/s3/k1/c1x2 [--design merge_gemm]

(docs/gemm.md, "Where the ragged shape loses", quotes what this printed on an H200: the kernel,
its time, its L2 bytes and SM throughput beside cuBLAS's ``nvjet_sm90_...`` kernel.)

The kernel of the configuration is built and verified on fresh random data with a poisoned output
(so that a profile never describes a kernel that computes the wrong thing), every library peer
(``torch.matmul``, ``cublasGemmEx``) is verified the same way, and then each is launched once
between ``cudaProfilerStart`` and ``cudaProfilerStop``: run under ``ncu --profile-from-start off``
the report holds exactly those launches, ours first, in the order printed.  Without ncu it prints
the verified launch order and exits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", required=True, help="MxNxK")
    ap.add_argument("--tiles", required=True, help="a gemm_shapes tiles key, e.g. 128x256x64/s3/k1")
    ap.add_argument("--design", default="merge_gemm", choices=("merge_gemm", "merge_gemm_k"),
                    help="merge_gemm, or merge_gemm_k (B stored N x K)")
    ap.add_argument("--dtype", default="bfloat16")
    args = ap.parse_args(argv)
    try:
        m, n, k = (int(v) for v in args.shape.lower().split("x"))
    except ValueError:
        ap.error(f"--shape {args.shape!r}: expected MxNxK, e.g. 4168x3000x1000")
    from gemm_ab import design, require_gpu

    from pgstudio.errors import PgStudioError
    try:
        d = design(args.design, m, n, k, args.dtype, args.tiles)
    except (PgStudioError, ValueError, KeyError) as exc:
        print(f"gemm_profile.py: {args.design} {args.shape} {args.tiles}: {exc}", file=sys.stderr)
        return 2
    why = require_gpu("gemm_profile.py")
    if why:
        print(why, file=sys.stderr)
        return 2

    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime import peers as P
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmLauncher, GemmWorkload

    src = emit_gemm(d)
    with cp.cuda.Stream(non_blocking=True):
        data = GemmWorkload.make(d, src, m, n, k)
        la = GemmLauncher(src)
        la.verify(data)
        out = cp.empty((m, n), dtype=cp.uint16)
        peers = P.gemm_peers(data.arrays["gmem_a"], data.arrays["gmem_b"], out, m, n, k, args.dtype,
                             b_major=data.b_major)
        for p in peers:
            P.verify_peer(p, {"gmem_d": out}, data.reference(), args.dtype, TOLERANCE[args.dtype])
        launch_args = la.args(data)
        la.launch(data, launch_args)  # warm: the first launch of a module loads it
        cp.cuda.get_current_stream().synchronize()
        cp.cuda.profiler.start()
        la.launch(data, launch_args)
        for p in peers:
            p.call()
        cp.cuda.get_current_stream().synchronize()
        cp.cuda.profiler.stop()
        la.check_watchdog()
    print(f"profiled, in order: pgstudio {d.name} {args.tiles}, " + ", ".join(p.label for p in peers)
          + f" ({m}x{n}x{k} {args.dtype}; each verified first)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
