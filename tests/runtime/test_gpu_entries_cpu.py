"""The GPU-side entries of the runtime on a machine without one: each stops at the GPU with one
``GpuUnavailable`` in words (what is missing, what still works), never a CuPy, loader or
attribute error from deep inside.  NumPy arrays never need the GPU at all."""

from __future__ import annotations

import numpy as np
import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.errors import GpuUnavailable
from pgstudio.runtime._cupy import gpu_available

pytestmark = pytest.mark.skipif(gpu_available(), reason="the no-GPU path")


class DeviceArray:
    """An array of some other library (as a CuPy array is, to this process without CuPy)."""

    size = 4


def test_comparing_a_device_array_needs_the_gpu_and_numpy_arrays_do_not():
    from pgstudio.runtime.verify import compare
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        compare(DeviceArray(), DeviceArray(), "float32")
    ok = compare(np.ones(4, np.float32), np.ones(4, np.float32), "float32", "gmem_d")
    assert ok.ok and ok.tensor == "gmem_d" and ok.n == 4


def test_storage_of_a_device_array_needs_the_gpu():
    from pgstudio.runtime.storage import array_module, to_bits
    assert array_module(np.zeros(2)) is np
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        array_module(DeviceArray())
    with pytest.raises(GpuUnavailable):
        to_bits(DeviceArray(), "bfloat16")


def test_naming_the_device_needs_the_gpu():
    from pgstudio.runtime.recorded import device_name
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        device_name()


def test_launchers_need_the_gpu():
    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime.gemm_run import GemmLauncher
    from pgstudio.runtime.stream_run import StreamLauncher
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        StreamLauncher(emit(examples.merge_copy()))
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        GemmLauncher(emit_gemm(examples.merge_gemm(256, 256, 128)))


def test_a_trace_in_a_worker_without_a_gpu_says_so():
    from pgstudio.runtime.executor.embedded import EmbeddedExecutor
    from pgstudio.runtime.trace import trace
    ex = EmbeddedExecutor(cpu_workers=1, gpus=[])
    try:
        with pytest.raises(GpuUnavailable, match="no GPU"):
            trace(examples.merge_copy(), n=4096, executor=ex)
    finally:
        ex.close()
