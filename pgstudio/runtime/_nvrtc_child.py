"""One NVRTC compile, in this process or as a child process that a deadline can stop.

NVRTC cannot be interrupted: a call that runs for minutes holds its thread until it returns.
``compile.compile_cubin`` therefore runs it here as a script in a child process (``python
_nvrtc_child.py``: it imports nothing of pgstudio, so it starts in a fraction of a second), hands
it the program on stdin and reads the result from stdout; past its deadline the parent kills the
child.  ``nvrtc_compile`` is the same compile in the calling process (``timeout_s=None``).

The protocol is a pickle each way: ``{"code", "name", "options"}`` in, and out ``{"ok", "log",
"cubin", "ptx"}``, or ``{"unusable": text}`` when NVRTC cannot be loaded or create a program.
"""

from __future__ import annotations

import pickle
import sys


def _out_buffer(size: int) -> bytes:
    """A fresh buffer NVRTC may write ``size`` bytes into.

    NVRTC's bindings write into the bytes object they are given.  ``b" " * size`` is CPython's one
    shared ``b" "`` object when ``size`` is 1 (an empty log is its 1-byte terminator), and NVRTC
    writing NUL into it turned every ``b" "`` of the process into ``b"\\x00"`` (``" ".encode()``
    included).  Objects of two or more bytes are never shared, so one byte more keeps the write
    private; callers slice the ``size`` bytes back."""
    return bytes(size + 1)


class Unusable(Exception):
    """NVRTC is missing here, or its library does not load."""


def nvrtc_compile(code: str, name: str, options: list[str]) -> dict:
    """Compile ``code`` with ``options``: ``{"ok", "log", "cubin", "ptx"}`` (cubin and ptx empty
    when NVRTC refused the program).  Raises ``Unusable`` when NVRTC cannot run here."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise Unusable(str(exc)) from exc

    def check(result, what: str):
        err, *rest = result
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:  # an IntEnum: its str() is the bare number
            raise RuntimeError(f"NVRTC {what} failed: {getattr(err, 'name', err)}")
        return rest[0] if len(rest) == 1 else rest

    def read(size_call, get_call, what: str) -> bytes:
        size = check(size_call(prog), f"{what} size")
        buf = _out_buffer(size)
        check(get_call(prog, buf), what)
        return buf[:size]

    try:
        prog = check(nvrtc.nvrtcCreateProgram(code.encode(), name.encode(), 0, [], []), "create program")
    except RuntimeError as exc:  # the wheel is there but its library is not
        raise Unusable(str(exc)) from exc
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        log = read(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, "log")
        log = log.rstrip(b"\0 ").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return {"ok": False, "log": log, "cubin": b"", "ptx": b""}
        cubin = read(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, "cubin")
        ptx = read(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, "ptx")
        return {"ok": True, "log": log, "cubin": cubin, "ptx": ptx}
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def main() -> None:
    job = pickle.load(sys.stdin.buffer)
    try:
        out = nvrtc_compile(job["code"], job["name"], job["options"])
    except Unusable as exc:
        out = {"unusable": str(exc)}
    pickle.dump(out, sys.stdout.buffer)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()


__all__ = ["Unusable", "nvrtc_compile"]
