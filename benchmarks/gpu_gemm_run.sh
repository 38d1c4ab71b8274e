#!/bin/bash
# One GPU run of the GEMM work (issue 11 item 2, issue 15), within about 330 s on one H200:
#   1. compile every benchmark / test GEMM configuration once, in parallel (gemm_precompile.py);
#   2. the GPU tests of the lifted variants (tests/runtime/test_gemm_lifts.py), test_gemm_run.py and
#      test_tuning.py (default tuning: search once, then the cache);
#   3. gemm.py --suite (fp16 and bf16; cuBLAS and the Triton peer), small-M and ragged shapes first;
#   4. fusion.py (the K values with targets first);
#   5. defaults.py (benchmark(examples.merge_copy()) with no options: its default tuning).
# Run from the repository root with PYTHONPATH=$PWD (plus any site folder), writing logs and
# results under $OUT (default ./gpu_out).  Each part has a hard timeout (T_* variables, seconds) and
# the script goes on when one fails; the benchmarks record each item as it finishes and a
# restarted process resumes after an item that took the CUDA context down.
set +e
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
export PGSTUDIO_CACHE=${PGSTUDIO_CACHE:-/tmp/pgstudio_gemm_cache} PYTHONUNBUFFERED=1
ROOT=$PWD
T0=$SECONDS
stamp() { echo "[$1 at $((SECONDS - T0)) s]"; }

timeout ${T_COMPILE:-30} python3 benchmarks/gemm_precompile.py > "$OUT/precompile.log" 2>&1
echo "precompile rc=$?: $(tail -1 "$OUT/precompile.log" | head -c 300)"; grep -E "^  " "$OUT/precompile.log" | head -5

timeout ${T_TESTS:-70} python3 -m pytest -q -p no:cacheprovider \
  tests/runtime/test_gemm_lifts.py tests/runtime/test_gemm_run.py tests/runtime/test_tuning.py > "$OUT/tests.log" 2>&1
echo "gpu tests rc=$?:"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -8
stamp "tests done"

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
SHAPES=${SUITE_SHAPES:-"128x8192x8192 512x8192x8192 4168x3000x1000 2048x2048x2048 4096x4096x4096 8192x8192x8192 \
16384x4096x4096 4096x14336x4096 4096x4096x14336 8192x28672x8192 16384x16384x16384"}
drive ${T_SUITE:-135} python3 gemm.py --suite --rounds ${ROUNDS:-10} --shapes $SHAPES --results "$OUT/suite.jsonl" \
  >> "$OUT/suite_run.log" 2>&1
stamp "suite done"
python3 gemm.py --table --results "$OUT/suite.jsonl" 2>&1 | tail -32

FEND=$((SECONDS + ${T_FUSION:-45}))
drive $((FEND - SECONDS)) python3 fusion.py --ks 1024 8192 --rounds ${ROUNDS:-10} --results "$OUT/fusion.jsonl" \
  >> "$OUT/fusion_run.log" 2>&1
[ $SECONDS -lt $FEND ] && drive $((FEND - SECONDS)) python3 fusion.py --ks 512 2048 --rounds ${ROUNDS:-10} \
  --results "$OUT/fusion.jsonl" >> "$OUT/fusion_run.log" 2>&1
stamp "fusion done"
python3 fusion.py --table --results "$OUT/fusion.jsonl" 2>&1 | tail -20

timeout ${T_DEFAULTS:-35} python3 defaults.py --rounds 20 > "$OUT/defaults.log" 2>&1
echo "defaults rc=$?:"; grep -E "call \(|tuned|merge_copy |device copy |target" "$OUT/defaults.log" | head -12
cp "$PGSTUDIO_CACHE"/tuning/*.json "$OUT/" 2>/dev/null
stamp "all done"
