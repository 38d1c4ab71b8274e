"""``pgstudio sweep``: the table, the results file and the exit status; on Ray, and for a Ray
address where nothing answers (one line and status 2 within the connect timeout, not a wait)."""

import socket
import subprocess
import sys
import time

import pytest

from pgstudio import examples
from pgstudio.cli import main
from pgstudio.runtime._cupy import gpu_available
from pgstudio.runtime.executor.cluster import CONNECT_TIMEOUT_S


def _closed_port() -> int:
    """A local port nothing listens on: bound by the system, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.nvrtc
@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_without_a_gpu_every_variant_is_compiled_and_the_cli_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "d.json"
    f.write_text(examples.merge_gemm().to_json())
    results = tmp_path / "r.jsonl"
    code = main(["sweep", str(f), "--stages", "2", "9", "--tiles", "128x128x64", "--grouping", "designed",
                 "--results", str(results), "--quiet", "--executor", "inline"])
    out = capsys.readouterr().out
    assert code == 0, out
    row = next(ln for ln in out.splitlines() if ln.startswith("designed") and "128x128x64" in ln)
    assert row.split()[:4] == ["designed", "2", "128x128x64", "compiled"]
    assert any(f"designed 9x128x128x64 invalid: [{code}]" in out for code in ("smem.capacity", "gemm.smem"))
    assert "nothing was timed" in out and "1 compiled, not timed, 1 invalid" in out
    assert results.is_file() and len(results.read_text().splitlines()) == 3


@pytest.mark.cluster
def test_the_cli_runs_a_sweep_on_ray(ray_local, tmp_path, capsys):
    f = tmp_path / "d.json"
    f.write_text(examples.merge_copy().to_json())
    code = main(["sweep", str(f), "--stages", "2", "--tiles", "4096", "--grouping", "designed", "ungrouped",
                 "--compile-only", "--ray", "local", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 variants: 2 compiled, not timed; ran on ray: 1 node(s)" in out
    assert (tmp_path / "d.sweep.jsonl").is_file()  # the default results file, beside the design
    assert ray_local.is_initialized()  # a Ray it did not start is left running


@pytest.mark.cluster
def test_the_cli_with_an_unreachable_ray_address_exits_2_within_the_timeout(tmp_path):
    """In a process of its own (this one may already have joined the session's Ray instance, which
    an executor reuses whatever its address)."""
    f = tmp_path / "d.json"
    f.write_text(examples.merge_copy().to_json())
    address = f"127.0.0.1:{_closed_port()}"
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pgstudio", "sweep", str(f), "--compile-only", "--no-results",
                          "--quiet", "--ray", address], capture_output=True, text=True, timeout=60 + CONNECT_TIMEOUT_S)
    took = time.monotonic() - t0
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no Ray cluster answers at {address!r}" in lines[0] and "--ray local" in lines[0], \
        out.stderr
    assert took < 30 + CONNECT_TIMEOUT_S, f"took {took:.0f} s"  # ray.init alone waits for minutes
