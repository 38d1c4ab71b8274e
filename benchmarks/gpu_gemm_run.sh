#!/bin/bash
# One GPU run of the GEMM and timeline work, in parts that each fit a 10-minute command on one H200:
#   PARTS="tests stream suite fusion"   (default)   or   PARTS="predict suite"   ...
#   precompile  compile every benchmark / test GEMM configuration once, in parallel (gemm_precompile.py);
#   tests       the GPU tests: library peers, lifted variants, every GEMM design and twin, tuning, streaming;
#   stream      stream.py: merge_copy against a device copy and CuPy (the streaming figures);
#   suite       gemm.py --suite: x best library (torch.matmul, cublasGemmEx) per shape, small-M and ragged first;
#   fusion      fusion.py: the fused designs against the PyTorch composition and addmm, the K values with targets first;
#   predict     predict.py --quick: the calibrated kernel-time model against a measured sweep, recorded and refitted;
#   turns       staging_turns.py: three stages with whole-tile staging against four with the staging in turns.
#   residual    residual_turns.py: merge_gemm_resadd's residual layouts (whole tile, column slices) against PyTorch.
# Run from the repository root with PYTHONPATH=$PWD, writing logs and results under $OUT (default
# ./gpu_out).  Each part has a hard timeout (T_* variables, seconds) and the script goes on when one
# fails; the benchmarks record each item as it finishes and a restarted process resumes after an
# item that took the CUDA context down.
set +e
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
export PGSTUDIO_CACHE=${PGSTUDIO_CACHE:-/tmp/pgstudio_gemm_cache} PYTHONUNBUFFERED=1
ROOT=$PWD
T0=$SECONDS
PARTS=${PARTS:-"precompile tests stream suite fusion"}
has() { [[ " $PARTS " == *" $1 "* ]]; }
stamp() { echo "[$1 at $((SECONDS - T0)) s]"; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader

if has precompile; then
  timeout ${T_COMPILE:-40} python3 benchmarks/gemm_precompile.py > "$OUT/precompile.log" 2>&1
  echo "precompile rc=$?: $(tail -1 "$OUT/precompile.log" | head -c 300)"
fi

if has tests; then
  GPU_TESTS=${GPU_TESTS:-"tests/runtime/test_peers.py tests/runtime/test_gemm_lifts.py tests/runtime/test_gemm_run.py \
tests/explore/test_tuning.py tests/runtime/test_gpu.py"}
  X=""; python3 -c "import xdist" 2>/dev/null && X="-n 4"  # in parallel where pytest-xdist is installed
  timeout ${T_TESTS:-150} python3 -m pytest -q -p no:cacheprovider $X $GPU_TESTS > "$OUT/tests.log" 2>&1
  echo "gpu tests rc=$?:"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -12
  stamp "tests done"
fi

if has stream; then
  timeout ${T_STREAM:-60} python3 benchmarks/stream.py --rounds 15 > "$OUT/stream.log" 2>&1
  echo "stream rc=$?:"; grep -iE "merge_copy|device copy|target|x " "$OUT/stream.log" | head -16
  stamp "stream done"
fi

# resumable driver: rerun while the process died (rc > 1: context lost, crash) and time is left
drive() {  # drive SECONDS command...
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do
    timeout $((end - SECONDS)) "$@"; local rc=$?
    [ $rc -le 1 ] && return $rc
    echo "  (process rc=$rc, resuming)"
  done
}
cd "$ROOT/benchmarks"
if has suite; then
  SHAPES=${SUITE_SHAPES:-"128x8192x8192 512x8192x8192 4168x3000x1000 2048x2048x2048 4096x4096x4096 8192x8192x8192 \
16384x4096x4096 4096x14336x4096 4096x4096x14336 8192x28672x8192"}
  drive ${T_SUITE:-200} python3 gemm.py --suite --rounds ${ROUNDS:-10} --dtypes ${SUITE_DTYPES:-bfloat16} \
    --shapes $SHAPES --results "$OUT/suite.jsonl" >> "$OUT/suite_run.log" 2>&1
  stamp "suite done"
  python3 gemm.py --table --results "$OUT/suite.jsonl" 2>&1 | tail -24
fi

if has fusion; then
  FEND=$((SECONDS + ${T_FUSION:-110}))
  drive $((FEND - SECONDS)) python3 fusion.py --ks 1024 8192 --dtypes float16 --rounds ${ROUNDS:-10} \
    --results "$OUT/fusion.jsonl" >> "$OUT/fusion_run.log" 2>&1
  [ $SECONDS -lt $FEND ] && drive $((FEND - SECONDS)) python3 fusion.py --ks 512 2048 --dtypes float16 \
    --rounds ${ROUNDS:-10} --results "$OUT/fusion.jsonl" >> "$OUT/fusion_run.log" 2>&1
  stamp "fusion done"
  python3 fusion.py --table --results "$OUT/fusion.jsonl" 2>&1 | tail -20
fi

cd "$ROOT"
if has turns; then
  timeout ${T_TURNS:-120} python3 benchmarks/staging_turns.py --rounds ${ROUNDS:-10} > "$OUT/turns.log" 2>&1
  echo "turns rc=$?:"; tail -9 "$OUT/turns.log"
  stamp "turns done"
fi
if has residual; then
  timeout ${T_RESIDUAL:-150} python3 benchmarks/residual_turns.py --rounds ${ROUNDS:-10} > "$OUT/residual.log" 2>&1
  echo "residual rc=$?:"; tail -6 "$OUT/residual.log" | cut -c1-240
  stamp "residual done"
fi
if has predict; then
  # recorded and fitted where the package ships them (the fit names its recordings relative to itself)
  timeout ${T_PREDICT:-300} python3 benchmarks/predict.py --quick --rounds 5 \
    --record pgstudio/analysis/fitted/h200_sweep.json --fit pgstudio/analysis/fitted/h200.json > "$OUT/predict.log" 2>&1
  echo "predict rc=$?:"; tail -30 "$OUT/predict.log"
  cp pgstudio/analysis/fitted/h200_sweep.json pgstudio/analysis/fitted/h200.json "$OUT/" 2>/dev/null
  stamp "predict done"
fi
cp "$PGSTUDIO_CACHE"/tuning/*.json "$OUT/" 2>/dev/null
stamp "all done"
