"""Compile a ``KernelSource`` to a cubin with NVRTC, cache it, and load it as a CuPy RawModule.

``compile_cubin`` needs only the NVRTC wheels (``cuda-bindings`` + ``nvidia-cuda-nvrtc``), no GPU:
it is how CI proves every design compiles for sm_90a and sm_100a.  It asks NVRTC for the exact
target (``-arch=sm_90a``: a real sm_90a cubin, not sm_90 with PTX) and checks the result says so.
NVRTC runs in a child process that is killed at a deadline (``timeout_s``: ``COMPILE_TIMEOUT_S``
by default, ``$PGSTUDIO_COMPILE_TIMEOUT`` seconds where set; None compiles in this process), so a
compile that would run for minutes ends in one ``CompileError`` naming the limit.  A design that
validates stays far inside it: ``codegen.source_size`` bounds the source, and the canonical
designs compile in one to two seconds on one core.

``load`` (GPU) writes the cubin into the cache folder and loads it with
``cupy.RawModule(path=...)``; loaded kernels are memoised in-process, compiled cubins on disk,
both keyed by ``KernelSource.key`` (source + options + arch).  The folder is
``$PGSTUDIO_CACHE`` or ``~/.cache/pgstudio/kernels``.
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codegen.source import KernelSource
from ..errors import CompileError, GpuUnavailable
from . import _nvrtc_child

#: Options every compile gets (arch is added per target).
BASE_OPTIONS = ("-std=c++17",)
#: Seconds one NVRTC compile may run before its child process is killed: the largest design that
#: validates (about 1 MB of CUDA, ``codegen.source_size``) needs about 75 s on one core.
COMPILE_TIMEOUT_S = 120.0
#: Environment variable that sets the default deadline (seconds; ``none`` compiles in-process).
TIMEOUT_ENV = "PGSTUDIO_COMPILE_TIMEOUT"


@dataclass(frozen=True)
class Cubin:
    """A compiled kernel image for one arch."""

    key: str
    arch: str
    data: bytes
    log: str
    seconds: float
    cached: bool = False

    def __len__(self) -> int:
        return len(self.data)


def cache_dir() -> Path:
    root = os.environ.get("PGSTUDIO_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "pgstudio" / "kernels"


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise GpuUnavailable(
            "compiling needs NVRTC: pip install 'pgstudio[nvrtc]' (cuda-bindings and nvidia-cuda-nvrtc, 13.0 series)"
        ) from exc
    return nvrtc


def _explain(src: KernelSource, log: str) -> str:
    """First error of an NVRTC log, with the design element of its line."""
    for m in re.finditer(r"\((\d+)\): error: (.*)", log):
        line = int(m.group(1))
        elem = src.element_at(line)
        return f"line {line}: {m.group(2)}" + (f" (generated for {elem})" if elem else "")
    return log.strip().splitlines()[-1] if log.strip() else "no log"


class CompileTimeout(CompileError):
    """NVRTC ran past its deadline and was stopped: a limit to raise or a kernel to shrink, not
    NVRTC refusing the code."""


def default_timeout() -> float | None:
    """The compile deadline: ``$PGSTUDIO_COMPILE_TIMEOUT`` (seconds, or ``none``), else ``COMPILE_TIMEOUT_S``."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return COMPILE_TIMEOUT_S
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise CompileError(f"{TIMEOUT_ENV}={text!r}: expected a positive number of seconds, or none")
    return value


def compile_cubin(src: KernelSource, arch: str | None = None, *, options: tuple[str, ...] = (),
                  timeout_s: float | None | str = "default") -> Cubin:
    """Compile ``src`` for ``arch`` (default: the source's) and check the image's target.

    NVRTC runs in a child process killed after ``timeout_s`` seconds ("default":
    ``default_timeout()``; None: in this process, without a deadline)."""
    _nvrtc()  # a clear GpuUnavailable when the wheels are missing
    arch = arch or src.arch
    if timeout_s == "default":
        timeout_s = default_timeout()
    if timeout_s is not None and not (isinstance(timeout_s, (int, float)) and 0 < timeout_s < float("inf")):
        raise CompileError(f"compile_cubin(timeout_s={timeout_s!r}): expected a positive number of seconds, or None")
    opts = list(dict.fromkeys([f"-arch={arch}", *BASE_OPTIONS, *src.options, *options]))
    t0 = time.perf_counter()
    name = f"{src.entry}.cu"
    if timeout_s is None:
        try:
            out = _nvrtc_child.nvrtc_compile(src.code, name, opts)
        except _nvrtc_child.Unusable as exc:
            raise GpuUnavailable(f"NVRTC is not usable here: {exc}") from exc
    else:
        out = _in_child(src, arch, name, opts, float(timeout_s))
    if not out["ok"]:
        raise CompileError(f"NVRTC rejected the kernel of design {src.design!r} for {arch}: {_explain(src, out['log'])}",
                           out["log"])
    check_target(out["ptx"].decode(errors="replace"), out["cubin"], arch)
    return Cubin(src.key if arch == src.arch else f"{src.key}-{arch}", arch, out["cubin"], out["log"],
                 time.perf_counter() - t0)


def _in_child(src: KernelSource, arch: str, name: str, opts: list[str], timeout_s: float) -> dict:
    """``_nvrtc_child.nvrtc_compile`` in a child process, killed once ``timeout_s`` passed."""
    job = pickle.dumps({"code": src.code, "name": name, "options": opts})
    # -P: the script's folder (runtime/, with a trace.py) is not put first on the child's sys.path
    proc = subprocess.Popen([sys.executable, "-P", _nvrtc_child.__file__], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        data, err = proc.communicate(job, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise CompileTimeout(f"NVRTC ran past the compile deadline of {timeout_s:g} s on the kernel of design "
                           f"{src.design!r} for {arch} ({len(src.code):,} characters) and was stopped; raise it "
                           f"(compile_cubin(timeout_s=...), or {TIMEOUT_ENV}) or make the kernel smaller") from None
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0 or not data:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise CompileError(f"the NVRTC process for design {src.design!r} ({arch}) failed with exit status "
                           f"{proc.returncode}: {last}")
    out = pickle.loads(data)
    if "unusable" in out:
        raise GpuUnavailable(f"NVRTC is not usable here: {out['unusable']}")
    return out


def check_target(ptx: str, cubin: bytes, arch: str) -> None:
    """The PTX must say ``.target <arch>`` and the cubin must name it (sm_90a, not plain sm_90)."""
    m = re.search(r"^\.target\s+(\S+)", ptx, re.M)
    if m is None or m.group(1).rstrip(",") != arch:
        raise CompileError(f"NVRTC produced PTX for {m.group(1) if m else 'no target'}, expected {arch}")
    check_target_cubin(cubin, arch)


# -- cache + load (GPU) -------------------------------------------------------------------------------

_LOADED: dict[str, Any] = {}


def cubin_path(src: KernelSource) -> Path:
    """Where the disk cache keeps the cubin of ``src``."""
    return cache_dir() / f"{src.entry}-{src.key}.cubin"


def store_cubin(src: KernelSource, data: bytes) -> Path:
    """Put a cubin of ``src`` into the disk cache (one compiled elsewhere: a worker, a Ray node)."""
    check_target_cubin(data, src.arch)
    path = cubin_path(src)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # atomic: a parallel process never reads half a file
    return path


def check_target_cubin(data: bytes, arch: str) -> None:
    if arch.encode() not in data:
        raise CompileError(f"the cubin does not name {arch}; refusing to load a different target")


def cubin_for(src: KernelSource, *, timeout_s: float | None | str = "default") -> Cubin:
    """The cubin of ``src`` for its arch: from the disk cache when present, else compiled (within
    ``timeout_s``, as ``compile_cubin``) and stored."""
    path = cubin_path(src)
    if path.is_file():
        data = path.read_bytes()
        return Cubin(src.key, src.arch, data, "", 0.0, cached=True)
    cub = compile_cubin(src, timeout_s=timeout_s)
    store_cubin(src, cub.data)
    return cub


@dataclass
class LoadedKernel:
    """A launchable kernel: the CuPy RawKernel, its source and where the cubin came from."""

    source: KernelSource
    kernel: Any  # cupy.RawKernel
    module: Any  # cupy.RawModule (kept alive with the kernel)
    cubin: Cubin
    load_seconds: float

    @property
    def num_regs(self) -> int:
        return int(self.kernel.num_regs)


def load(src: KernelSource) -> LoadedKernel:
    """Compile (or fetch) ``src`` and load it on the current GPU, memoised by ``src.key``."""
    from ._cupy import cupy, require_gpu
    require_gpu()
    cp = cupy()
    key = f"{src.key}@{cp.cuda.Device().id}"
    hit = _LOADED.get(key)
    if hit is not None:
        return hit
    t0 = time.perf_counter()
    cub = cubin_for(src)
    cc = str(cp.cuda.Device().compute_capability)
    want = src.arch[3:].rstrip("a")
    if cc != want:
        raise GpuUnavailable(f"this GPU is sm_{cc}; the kernel was built for {src.arch}, which runs only on "
                             f"compute capability {want[:-1]}.{want[-1]}")
    mod = cp.RawModule(path=str(cubin_path(src)))
    kern = mod.get_function(src.entry)
    if src.smem_bytes > 48 * 1024:
        kern.max_dynamic_shared_size_bytes = src.smem_bytes
    loaded = LoadedKernel(src, kern, mod, cub, time.perf_counter() - t0)
    _LOADED[key] = loaded
    return loaded


def is_loaded(src: KernelSource) -> bool:
    """True when ``src`` is already loaded in this process (on any device)."""
    return any(k.startswith(f"{src.key}@") for k in _LOADED)


def forget(src: KernelSource) -> None:
    """Unload ``src`` from this process (a sweep's GPU worker loads thousands of kernels, once each)."""
    for key in [k for k in _LOADED if k.startswith(f"{src.key}@")]:
        del _LOADED[key]


def clear_memory_cache() -> None:
    """Forget loaded kernels (the disk cache stays)."""
    _LOADED.clear()


__all__ = ["BASE_OPTIONS", "COMPILE_TIMEOUT_S", "CompileTimeout", "Cubin", "LoadedKernel", "cache_dir",
           "check_target", "clear_memory_cache", "compile_cubin", "cubin_for", "cubin_path", "default_timeout",
           "forget", "is_loaded", "load", "store_cubin"]
