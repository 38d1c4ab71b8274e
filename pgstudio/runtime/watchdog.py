"""Turn a generated kernel's watchdog record into words and a ``KernelHangError``.

The kernel keeps (``codegen.ptx.RECORD``) the wait that began earliest among those that gave up:
which wait site, the stage, the phase parity
it waited for, the iteration, the block and thread, and how long it waited.  The wait site names
the task, the barrier set and the schedule step (``KernelSource.info['sites']``); the set gives
the slot (``first + stage``) and the arrive count it was initialised with.
"""

from __future__ import annotations

from typing import Sequence

from ..codegen.ptx import RECORD
from ..codegen.source import KernelSource
from ..errors import KernelHangError


def decode(src: KernelSource, rec: Sequence[int], budget_ms: float | None = None) -> dict:
    """The record as a dict of names (empty when the kernel did not abort)."""
    if not rec[RECORD["aborted"]]:
        return {}
    info = src.info
    sites = {s[0]: s for s in info.get("sites", ())}
    sets = {s[0]: s for s in info.get("sets", ())}
    site = sites.get(rec[RECORD["site"]])
    out = {
        "kernel": src.entry, "design": src.design, "stage": rec[RECORD["stage"]], "phase": rec[RECORD["parity"]],
        "iteration": rec[RECORD["iteration"]], "block": rec[RECORD["block"]], "thread": rec[RECORD["thread"]],
        "waited_ms": rec[RECORD["waited_us"]] / 1000.0, "complete": bool(rec[RECORD["complete"]]),
    }
    if budget_ms is not None:
        out["budget_ms"] = budget_ms
    if site is not None:
        _, task, bset, step, line = site
        out.update(task=task, barrier=bset, step=step, line=line)
        s = sets.get(bset)
        if s is not None:
            out.update(slot=s[1] + out["stage"], arrive_count=s[3], tx_bytes=s[4])
    return out


def message(r: dict) -> str:
    if "task" not in r:
        return (f"kernel {r['kernel']} stopped by its watchdog (block {r['block']}, thread {r['thread']}, "
                f"iteration {r['iteration']}); the record names no known wait site")
    tx = f" and {r['tx_bytes']} transaction bytes" if r.get("tx_bytes") else ""
    return (f"kernel {r['kernel']} of design {r['design']!r} hung: task {r['task']!r} waited "
            f"{r['waited_ms']:.0f} ms (the earliest of the waits that gave up) on barrier {r['barrier']!r} slot {r.get('slot', '?')} "
            f"(stage {r['stage']}, phase parity {r['phase']}) at iteration {r['iteration']} in block {r['block']} "
            f"(thread {r['thread']}), step `{r['step']}` (generated line {r['line']}); that barrier completes a "
            f"phase after {r.get('arrive_count', '?')} arrivals{tx}: check that the tasks arriving on it "
            f"really make that many (design.validate() reports arrive-count mismatches)")


def raise_if_hung(src: KernelSource, rec: Sequence[int], budget_ms: float | None = None) -> None:
    r = decode(src, rec, budget_ms)
    if r:
        raise KernelHangError(message(r), r)


__all__ = ["decode", "message", "raise_if_hung"]
