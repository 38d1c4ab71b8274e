"""What the exhaustive checker may spend: states, memory and seconds.

A design can have more interleavings than any machine can hold (a big fuzzed file, many stages,
many iterations).  The checker must then answer INCOMPLETE with the figures -- how far it got,
which budget stopped it, how to raise it -- rather than run out of memory or run for hours.

* ``max_states``: distinct states kept by the search;
* ``max_memory``: bytes, for the unrolled program (estimated before it is built, from the steps
  the loop counts make the tasks execute and the pipeline stages: ``program_bytes``) and the
  states kept (estimated as the search keeps them: ``search.state_bytes``);
* ``max_seconds``: wall time from the call, shared by every step of the check (a ``Deadline``):
  choosing the loop counts, unrolling the program, compiling it into transitions and the tables
  of the reduction, the search itself, and cutting the witness down.  The long steps poll the
  deadline as they go (per executed step, per instruction, per chunk of a table), so a check
  returns soon after its budget whatever step was running: INCOMPLETE, naming the step it was in.
  (Cutting a witness down is skipped past the deadline: the whole run is a witness too.)

The defaults keep every canonical design well inside (they need < 1 MB and < 0.1 s at 8
iterations) and a runaway design near a gigabyte and two minutes.
"""

from __future__ import annotations

import gc
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import DesignError

MAX_STATES = 200_000
MAX_MEMORY = 1 << 30
MAX_SECONDS = 120.0
#: Memory per executed step of the unrolled program, with its state-space tables (measured: 2.0 to
#: 4.4 KB on the canonical designs and chains of groups; the sparse range tables grow with log n).
PROGRAM_BYTES = 4096


@dataclass(frozen=True)
class Budget:
    max_states: int = MAX_STATES
    max_memory: int = MAX_MEMORY
    max_seconds: float | None = MAX_SECONDS

    def __post_init__(self) -> None:
        for name in ("max_states", "max_memory"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise DesignError(f"check({name}={v!r}): expected a positive integer", code="check.budget",
                                  hint=f"pass {name}=1 or more")
        v = self.max_seconds
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0):
            raise DesignError(f"check(max_seconds={v!r}): expected a positive number of seconds, or None for no limit",
                              code="check.budget", hint="pass max_seconds=1 or more, or None")

    def program_too_big(self, steps: int, stages: int) -> str:
        """Why a program of ``steps`` executed steps over pipelines of ``stages`` stages in all is
        not built ("" when it fits; see ``program_bytes``)."""
        need = program_bytes(steps, stages)
        if need <= self.max_memory:
            return ""
        return (f"the unrolled program has {steps:,} steps over {stages:,} pipeline stages, about {_mb(need)} before "
                f"any state is explored, more than the memory budget (max_memory={_mb(self.max_memory)})")

    def stopped(self, stop: str, states: int, kept_bytes: int, seconds: float) -> str:
        """Why the search stopped, with the figures (``stop``: "states", "memory" or "seconds")."""
        if stop == "states":
            return f"the search stopped at its budget of {self.max_states:,} states (max_states)"
        if stop == "memory":
            per = kept_bytes // max(states, 1)
            return (f"the search stopped after {states:,} states at its memory budget (max_memory="
                    f"{_mb(self.max_memory)}, about {per:,} B per state)")
        return (f"the search stopped after {seconds:.2g} s at its time budget (max_seconds={self.max_seconds:g}) with "
                f"{states:,} states explored")

    def out_of_time(self, stop: OutOfTime) -> str:
        """Why the check stopped inside a step before the search could answer (see ``Deadline``)."""
        return (f"the checker stopped after {stop.seconds:.2g} s at its time budget (max_seconds={self.max_seconds:g}) "
                f"while {stop.step}")


class OutOfTime(Exception):
    """A long step of the checker found its deadline passed; ``check`` answers INCOMPLETE with
    ``step`` (what it was doing, with how far it got) instead of a verdict."""

    def __init__(self, step: str, seconds: float) -> None:
        super().__init__(f"out of time after {seconds:.2g} s while {step}")
        self.step, self.seconds = step, seconds


class Deadline:
    """A point in wall time (``time.perf_counter``) that the checker's long steps poll.
    ``Deadline(None)`` never passes, so a step polls it unconditionally."""

    __slots__ = ("t0", "at")

    def __init__(self, seconds: float | None, t0: float | None = None) -> None:
        self.t0 = time.perf_counter() if t0 is None else t0
        self.at = None if seconds is None else self.t0 + seconds

    def passed(self) -> bool:
        return self.at is not None and time.perf_counter() > self.at

    def left(self) -> float | None:
        """Seconds left (never below 0), None without a limit."""
        return None if self.at is None else max(self.at - time.perf_counter(), 0.0)

    def check(self, step: str | object) -> None:
        """Raise ``OutOfTime`` once the deadline passed; ``step`` says what the caller is doing
        (a callable is called for the text only then, to keep polling cheap)."""
        if self.at is not None and time.perf_counter() > self.at:
            raise OutOfTime(step() if callable(step) else str(step), time.perf_counter() - self.t0)

    def spans(self, n: int, step: str | object, size: int = 1 << 14):
        """``(lo, hi)`` spans of ``range(n)`` of ``size`` items, polling the deadline before each:
        a table built span by span stops within one span of its deadline."""
        for lo in range(0, n, size):
            self.check(step)
            yield lo, min(lo + size, n)


@contextmanager
def collector_paused():
    """Python's cycle collector held off while the checker runs.  The checker builds hundreds of
    thousands of small objects a second, which sets off the collector's full passes; in a process
    holding a big heap (a notebook kernel after a long session, a test run) one such pass walks
    every object the process has and can stall the check for a second, past its deadline, in a
    place no poll can interrupt.  The checker's own structures are acyclic (tuples, frozen
    dataclasses, dicts of them), so reference counting frees them as before; the collector
    resumes, as it was, when the check returns."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: A deadline that never passes: the default of every step that polls one.
NEVER = Deadline(None, 0.0)


def program_bytes(steps: int, stages: int) -> int:
    """Memory of an unrolled program of ``steps`` executed steps over pipelines with ``stages``
    stages in all: ``PROGRAM_BYTES`` per step, plus the checker's bit masks -- one bit per barrier
    slot and two per buffer stage, at most four bits per stage, in one mask per slot and a few
    per step -- which grow with the stages times the steps."""
    objects = 4 * stages
    return steps * PROGRAM_BYTES + (objects // 8 + 32) * (4 * steps + objects)


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB" if n >= 1 << 20 else f"{n:,} B"


__all__ = ["Budget", "Deadline", "collector_paused",
           "MAX_MEMORY", "MAX_SECONDS", "MAX_STATES", "NEVER", "OutOfTime", "PROGRAM_BYTES", "program_bytes"]
