"""The GPU-only GEMM tools (``benchmarks/gemm_ab.py``, ``gemm_profile.py``, ``staging_turns.py``,
``residual_turns.py``) refuse a
machine without a GPU, and bad arguments, in one line each -- never a traceback from inside CuPy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgstudio.runtime._cupy import gpu_available

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

pytestmark = pytest.mark.skipif(gpu_available(), reason="a GPU is here: the tools would run")


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=BENCH.parent)


@pytest.mark.parametrize("argv, says", [
    (("gemm_profile.py", "--shape", "4168x3000x1000", "--tiles", "128x256x64/s3/k1"), "sees no NVIDIA GPU"),
    (("gemm_profile.py", "--shape", "4168x3000", "--tiles", "128x256x64/s3/k1"), "expected MxNxK"),
    (("gemm_profile.py", "--shape", "128x128x128", "--tiles", "bogus"), "tile key 'bogus'"),
    (("gemm_ab.py", "--base", "HEAD"), "--emit-only emits and compiles without one"),
    (("staging_turns.py", "--shapes", "2048x2048x2048"), "sees no NVIDIA GPU"),
    (("staging_turns.py", "--shapes", "2048x2048"), "expected MxNxK"),
    (("residual_turns.py", "--ks", "1024"), "sees no NVIDIA GPU"),
    (("residual_turns.py", "--ks", "1000", "1030"), "K = 1030: expected a positive multiple of 8"),
])
def test_a_gemm_tool_says_in_one_line_why_it_cannot_run(argv, says):
    run = _run(str(BENCH / argv[0]), *argv[1:])
    assert run.returncode == 2
    assert says in run.stderr and "Traceback" not in run.stderr
