"""runtime._cupy on a CPU: a CuPy that imports but finds no driver or device reads as zero GPUs with
the reason in words; a GPU context that cannot be reached is never called usable; the SM count
falls back to the device properties where the attribute table lacks it.

The CuPy here is a stand-in module put into ``sys.modules`` (no CuPy is installed on a CPU
machine): it answers like CuPy's runtime calls do, so what is under test is pgstudio's reading of
those answers, not CuPy.
"""

from __future__ import annotations

import sys
import types

import pytest

from pgstudio.errors import GpuUnavailable
from pgstudio.runtime import _cupy


def _fake_cupy(count=None, error=None, attributes=None, props=None, sync_error=None):
    """A module shaped like the parts of CuPy that ``_cupy`` calls."""
    def get_device_count():
        if error is not None:
            raise error
        return count

    def device_synchronize():
        if sync_error is not None:
            raise sync_error

    device = types.SimpleNamespace(id=0, attributes=dict(attributes or {}))
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count, deviceSynchronize=device_synchronize,
                                    getDeviceProperties=lambda i: dict(props or {}))
    cuda = types.SimpleNamespace(runtime=runtime, Device=lambda: device)
    return types.SimpleNamespace(__name__="cupy", cuda=cuda)


@pytest.fixture
def with_cupy(monkeypatch):
    """Install a stand-in CuPy for one test; the memoised device count is forgotten both ways."""
    def install(mod):
        monkeypatch.setitem(sys.modules, "cupy", mod)
        _cupy._gpu_count.cache_clear()
        return mod
    yield install
    _cupy._gpu_count.cache_clear()


def test_a_cupy_that_finds_no_driver_counts_no_gpu_and_says_why(with_cupy):
    with_cupy(_fake_cupy(error=RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient  ")))
    assert _cupy.gpu_count() == 0 and not _cupy.gpu_available()
    with pytest.raises(GpuUnavailable) as info:
        _cupy.require_gpu()
    text = str(info.value)
    assert "CuPy is installed but sees no device (cudaErrorInsufficientDriver: CUDA driver version is insufficient)" in text
    assert "pgstudio compile DESIGN.json" in text  # what still works without a GPU


def test_an_error_without_words_is_named_by_its_type(with_cupy):
    class CUDARuntimeError(Exception):
        pass
    with_cupy(_fake_cupy(error=CUDARuntimeError()))
    with pytest.raises(GpuUnavailable, match=r"sees no device \(CUDARuntimeError\)"):
        _cupy.require_gpu()


def test_a_cupy_that_sees_devices_counts_them(with_cupy):
    with_cupy(_fake_cupy(count=2))
    assert _cupy.gpu_count() == 2 and _cupy.gpu_available()
    _cupy.require_gpu()  # nothing to say
    with_cupy(_fake_cupy(count=0))
    assert _cupy.gpu_count() == 0
    with pytest.raises(GpuUnavailable, match=r"sees no device \(no device\)"):
        _cupy.require_gpu()


def test_the_sm_count_comes_from_the_attributes_or_the_device_properties(with_cupy):
    with_cupy(_fake_cupy(attributes={"MultiProcessorCount": 132}))
    assert _cupy.sm_count() == 132
    with_cupy(_fake_cupy(attributes={}, props={"multiProcessorCount": 78}))
    assert _cupy.sm_count() == 78


def test_a_context_that_cannot_synchronize_is_not_usable(with_cupy):
    with_cupy(_fake_cupy(count=1, sync_error=RuntimeError("cudaErrorIllegalAddress")))
    assert _cupy.context_usable() is False


@pytest.mark.skipif(_cupy.gpu_available(), reason="the no-GPU path")
def test_without_cupy_no_context_is_usable_and_no_sm_is_counted():
    assert _cupy.context_usable() is False
    with pytest.raises(GpuUnavailable):
        _cupy.sm_count()
