"""Test markers: `gpu` tests skip where no usable GPU + CuPy exists; `nvrtc` where the NVRTC
wheels are missing and `cluster` where Ray is missing (both fail instead when the environment
variable CI is set); `browser` where Debian chromium + Playwright are missing."""

from __future__ import annotations

import functools
import os
import shutil

import pytest


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@functools.lru_cache(maxsize=None)
def nvrtc_available() -> bool:
    try:
        from cuda.bindings import nvrtc
        err, *_ = nvrtc.nvrtcVersion()  # (err, major, minor)
        return err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    except Exception:
        return False


@functools.lru_cache(maxsize=None)
def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except Exception:
        return False
    return True


@functools.lru_cache(maxsize=None)
def browser_available() -> bool:
    try:
        import playwright  # noqa: F401
    except Exception:
        return False
    return shutil.which("chromium") is not None


def pytest_collection_modifyitems(config, items):
    checks = {"gpu": (gpu_available, "no usable GPU / CuPy here"),
              "nvrtc": (nvrtc_available, "NVRTC wheels (cuda-bindings, nvidia-cuda-nvrtc) not installed"),
              "browser": (browser_available, "Playwright or Debian chromium not installed"),
              "cluster": (ray_available, "Ray not installed (pip install 'pgstudio[cluster]')")}
    # In CI (env CI set) broken code generation must fail: nvrtc tests run even without the
    # wheels, and fail with the error that says how to install them, instead of skipping.
    must_run = {"nvrtc", "cluster"} if os.environ.get("CI") else set()
    for item in items:
        for marker, (available, why) in checks.items():
            if marker in item.keywords and marker not in must_run and not available():
                item.add_marker(pytest.mark.skip(reason=why))
