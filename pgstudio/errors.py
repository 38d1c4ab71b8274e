"""The exceptions pgstudio raises.

Each subclasses the built-in a caller would already catch, so ``except ValueError`` around a
group construction (as in TS) keeps working.  Messages are lower-case, quote the offending names
and values, state the expected value and say how to fix it (semantics.md section 7).
"""

from __future__ import annotations

__all__ = [
    "PgStudioError",
    "DesignError",
    "FileError",
    "ScheduleError",
    "CompileError",
    "KernelHangError",
    "GpuUnavailable",
    "KernelFault",
]


class PgStudioError(Exception):
    """Base of every pgstudio error."""


class DesignError(PgStudioError, ValueError):
    """A design breaks a construction rule (groups, configs, resources, tasks, files).

    ``code`` is the stable diagnostic code of the rule, so tools can react to it without parsing
    the message.  ``diagnostics``: every error when one exception reports several (``emit`` on a
    design with errors lists them all; ``code`` is then the first one's).
    """

    def __init__(self, message: str, code: str = "", hint: str = "", diagnostics: tuple = ()) -> None:
        super().__init__(message if not hint else f"{message}; fix: {hint}")
        self.message = message  # without the fix, for a diagnostic that carries the hint apart
        self.code = code
        self.hint = hint
        self.diagnostics = tuple(diagnostics)


class FileError(PgStudioError, OSError):
    """A file or folder the user named cannot be read or written (missing, a folder where a file
    belongs, no permission, a full disk); the message names the path and the fix."""

    def __init__(self, message: str, hint: str = "") -> None:
        Exception.__init__(self, message if not hint else f"{message}; fix: {hint}")
        self.hint = hint

    def __str__(self) -> str:  # OSError's own str() would print (errno, strerror)
        return str(self.args[0])


class ScheduleError(DesignError):
    """A captured ``@schedule`` breaks a schedule rule (semantics.md section 6)."""


class CompileError(PgStudioError, RuntimeError):
    """NVRTC rejected generated source; carries the compiler log."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class KernelHangError(PgStudioError, RuntimeError):
    """The watchdog of a generated kernel expired: a barrier wait never completed.

    ``record`` holds what the kernel wrote down (task, barrier set, slot, stage, phase,
    iteration, block).
    """

    def __init__(self, message: str, record: dict | None = None) -> None:
        super().__init__(message)
        self.record = dict(record or {})


class GpuUnavailable(PgStudioError, ImportError):
    """No usable GPU or no CuPy: pgstudio says so instead of failing deep inside."""


class KernelFault(PgStudioError, RuntimeError):
    """A kernel trapped (illegal address, launch failure), ran past its time limit, or took its
    worker process down.  The worker was replaced; the caller's process and CUDA state are
    untouched.  ``cause`` names the likely cause (``design.validate()``'s findings, the watchdog
    record) when one is known.
    """

    def __init__(self, message: str, cause: str = "") -> None:
        super().__init__(message if not cause else f"{message}; likely cause: {cause}")
        self.cause = cause
