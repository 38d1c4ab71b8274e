"""Compile a ``KernelSource`` to a cubin with NVRTC, cache it, and load it as a CuPy RawModule.

``compile_cubin`` needs only the NVRTC wheels (``cuda-bindings`` + ``nvidia-cuda-nvrtc``), no GPU:
it is how CI proves every design compiles for sm_90a and sm_100a.  It asks NVRTC for the exact
target (``-arch=sm_90a``: a real sm_90a cubin, not sm_90 with PTX) and checks the result says so.

``load`` (GPU) writes the cubin into the cache folder and loads it with
``cupy.RawModule(path=...)``; loaded kernels are memoised in-process, compiled cubins on disk,
both keyed by ``KernelSource.key`` (source + options + arch).  The folder is
``$PGSTUDIO_CACHE`` or ``~/.cache/pgstudio/kernels``.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codegen.source import KernelSource
from ..errors import CompileError, GpuUnavailable

#: Options every compile gets (arch is added per target).
BASE_OPTIONS = ("-std=c++17",)


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


def _check(nvrtc, result, what: str):
    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"NVRTC {what} failed: {err}")
    return rest[0] if len(rest) == 1 else rest


def _explain(src: KernelSource, log: str) -> str:
    """First error of an NVRTC log, with the design element of its line."""
    for m in re.finditer(r"\((\d+)\): error: (.*)", log):
        line = int(m.group(1))
        elem = src.element_at(line)
        return f"line {line}: {m.group(2)}" + (f" (generated for {elem})" if elem else "")
    return log.strip().splitlines()[-1] if log.strip() else "no log"


def compile_cubin(src: KernelSource, arch: str | None = None, *, options: tuple[str, ...] = ()) -> Cubin:
    """Compile ``src`` for ``arch`` (default: the source's) and check the image's target."""
    nvrtc = _nvrtc()
    arch = arch or src.arch
    t0 = time.perf_counter()
    try:
        prog = _check(nvrtc, nvrtc.nvrtcCreateProgram(src.code.encode(), f"{src.entry}.cu".encode(), 0, [], []),
                      "create program")
    except RuntimeError as exc:  # the wheel is there but its library is not
        raise GpuUnavailable(f"NVRTC is not usable here: {exc}") from exc
    opts = [f"-arch={arch}", *BASE_OPTIONS, *src.options, *options]
    opts = list(dict.fromkeys(opts))
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        size = _check(nvrtc, nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        buf = _out_buffer(size)
        _check(nvrtc, nvrtc.nvrtcGetProgramLog(prog, buf), "log")
        log = buf[:size].rstrip(b"\0 ").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"NVRTC rejected the kernel of design {src.design!r} for {arch}: {_explain(src, log)}",
                               log)
        size = _check(nvrtc, nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        cubin = _out_buffer(size)
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin")
        cubin = cubin[:size]
        size = _check(nvrtc, nvrtc.nvrtcGetPTXSize(prog), "ptx size")
        ptx = _out_buffer(size)
        _check(nvrtc, nvrtc.nvrtcGetPTX(prog, ptx), "ptx")
        ptx = ptx[:size]
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    check_target(ptx.decode(errors="replace"), cubin, arch)
    return Cubin(src.key if arch == src.arch else f"{src.key}-{arch}", arch, cubin, log, time.perf_counter() - t0)


def _out_buffer(size: int) -> bytes:
    """A fresh buffer NVRTC may write ``size`` bytes into.

    NVRTC's bindings write into the bytes object they are given.  ``b" " * size`` is CPython's one
    shared ``b" "`` object when ``size`` is 1 (an empty log is its 1-byte terminator), and NVRTC
    writing NUL into it turned every ``b" "`` of the process into ``b"\\x00"`` (``" ".encode()``
    included).  Objects of two or more bytes are never shared, so one byte more keeps the write
    private; callers slice the ``size`` bytes back."""
    return bytes(size + 1)


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


def cubin_for(src: KernelSource) -> Cubin:
    """The cubin of ``src`` for its arch: from the disk cache when present, else compiled and stored."""
    path = cubin_path(src)
    if path.is_file():
        data = path.read_bytes()
        return Cubin(src.key, src.arch, data, "", 0.0, cached=True)
    cub = compile_cubin(src)
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


__all__ = ["BASE_OPTIONS", "Cubin", "LoadedKernel", "cache_dir", "check_target", "clear_memory_cache",
           "compile_cubin", "cubin_for", "cubin_path", "forget", "is_loaded", "load", "store_cubin"]
