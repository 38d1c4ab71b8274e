"""CuPy, imported on first use: ``import pgstudio`` never imports it, and a missing CuPy or GPU
becomes one clear ``GpuUnavailable`` instead of a deep traceback."""

from __future__ import annotations

import functools
import glob
import os

from ..errors import GpuUnavailable

#: What still works without a GPU (said in every GPU-less message).
WITHOUT_GPU = "without one, kernels still compile (pgstudio compile DESIGN.json) and simulate (pgstudio trace DESIGN.json --simulate)"


def nvidia_device_present() -> bool:
    """Whether this machine shows an NVIDIA driver and device at all (Linux device files), so a
    missing CuPy can be told apart from a missing GPU: installing CuPy helps only with one."""
    return os.path.exists("/proc/driver/nvidia/version") or bool(glob.glob("/dev/nvidia[0-9]*"))


def cupy():
    """The ``cupy`` module, or ``GpuUnavailable`` saying what is missing: no GPU (CuPy would not
    help), or a GPU without CuPy (then how to install it)."""
    try:
        import cupy as cp
    except ImportError as exc:
        if not nvidia_device_present():
            raise GpuUnavailable(f"no GPU here: this machine has no NVIDIA driver or device (and no CuPy); "
                                 f"{WITHOUT_GPU}") from exc
        raise GpuUnavailable("an NVIDIA GPU is present but CuPy is not installed: "
                             "pip install 'pgstudio[gpu]' (cupy-cuda13x)") from exc
    return cp


@functools.lru_cache(maxsize=None)
def _gpu_count() -> tuple[int, str]:
    cp = cupy()
    try:
        return cp.cuda.runtime.getDeviceCount(), ""
    except Exception as exc:  # no driver, no device, insufficient driver ...
        return 0, str(exc).strip() or type(exc).__name__


def gpu_count() -> int:
    """GPUs CuPy sees in this process (0 without CuPy, a driver or a device)."""
    try:
        return _gpu_count()[0]
    except GpuUnavailable:
        return 0


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one GPU."""
    try:
        return _gpu_count()[0] > 0
    except GpuUnavailable:
        return False


def require_gpu() -> None:
    """Raise ``GpuUnavailable`` (with the reason) unless a GPU is usable."""
    n, why = _gpu_count()
    if n == 0:
        raise GpuUnavailable(f"no GPU here: CuPy is installed but sees no device ({why or 'no device'}); "
                             f"{WITHOUT_GPU}")


def sm_count() -> int:
    """Multiprocessors of the current GPU."""
    cp = cupy()
    dev = cp.cuda.Device()
    n = dev.attributes.get("MultiProcessorCount")
    return int(n) if n else int(cp.cuda.runtime.getDeviceProperties(dev.id)["multiProcessorCount"])


def context_usable() -> bool:
    """Can this process still use its GPU?  A trap or an illegal address leaves a sticky error
    in the CUDA context, and every later call fails; a worker in that state must be replaced."""
    try:
        cp = cupy()
        cp.cuda.runtime.deviceSynchronize()
        probe = cp.zeros(1, dtype=cp.int32)
        probe += 1
        return int(probe.get()[0]) == 1
    except Exception:  # noqa: BLE001 - any failure here means the context is gone
        return False
