"""Test markers: `gpu` tests skip where no usable GPU + CuPy exists; `nvrtc` where the NVRTC
wheels are missing, `cluster` where Ray is missing and `ts` where the TS wheel is missing (all fail
instead when the environment variable CI is set: CI installs them); `browser` where Debian
chromium + Playwright are missing.
Each run keeps IPython state in its own temp folder, so two runs on one machine share no files."""

from __future__ import annotations

import atexit
import functools
import os
import secrets
import shutil
import sys

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
def ts_available() -> bool:
    try:
        import cutlass.experimental.task_scheduling  # noqa: F401  (NVIDIA's TS, the `ts` extra)
        return True
    except Exception:
        return False


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
              "ts": (ts_available, "the TS wheel (nvidia-cutlass-dsl, pgstudio's `ts` extra) is not installed"),
              "browser": (browser_available, "Playwright or Debian chromium not installed"),
              "cluster": (ray_available, "Ray not installed (pip install 'pgstudio[cluster]')")}
    # In CI (env CI set) broken code generation and a lost TS round trip must fail: nvrtc, cluster
    # and ts tests run even without their wheels, and fail with the error that says what is missing.
    must_run = {"nvrtc", "cluster", "ts"} if os.environ.get("CI") else set()
    for item in items:
        for marker, (available, why) in checks.items():
            if marker in item.keywords and marker not in must_run and not available():
                item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session", autouse=True)
def private_ipython_dir(tmp_path_factory):
    """Kernels this run starts (executed notebooks) keep IPython's profile and history database in
    this run's temp folder, not in the user's ~/.ipython, which a second test run on the same
    machine would write at the same time."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        yield
        # a shell a test made in this process closes its history database now, while the folder
        # exists (pytest may remove it before the shell's own exit hook would run)
        shell_module = sys.modules.get("IPython.core.interactiveshell")
        if shell_module is not None and shell_module.InteractiveShell.initialized():
            shell = shell_module.InteractiveShell.instance()
            shell.atexit_operations()
            atexit.unregister(shell.atexit_operations)  # done: it must not run a second time
            shell_module.InteractiveShell.clear_instance()


@pytest.fixture(scope="session")
def ray_local(tmp_path_factory):
    """One local Ray instance for the session: 2 CPUs (and the GPUs Ray finds), no dashboard,
    files under pytest's temporary directory, the auth token from the environment (Ray would
    otherwise write ~/.ray/auth_token), a kernel cache of its own."""
    import ray  # tests that use this are marked `cluster`: skipped without Ray, failing in CI
    tmp = tmp_path_factory.mktemp("ray")
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_TOKEN", "PGSTUDIO_CACHE")}
    os.environ["RAY_AUTH_TOKEN"] = saved["RAY_AUTH_TOKEN"] or secrets.token_hex(16)  # not ~/.ray/auth_token
    os.environ["PGSTUDIO_CACHE"] = str(tmp / "cache")  # Ray's workers inherit it: a cache of their own
    started = not ray.is_initialized()
    for attempt in range(3 if started else 0):
        # Ray gives its raylet a fixed 30 s to register; on a loaded 2-core machine that can pass
        # (an Exception naming the startup), so the start is tried again, a bounded number of times
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(tmp / f"r{attempt}"),
                     object_store_memory=100 * 1024 * 1024)
            break
        except Exception as exc:
            ray.shutdown()
            if attempt == 2 or "timed out during startup" not in str(exc):
                raise
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    yield ray
    if started:
        ray.shutdown()
