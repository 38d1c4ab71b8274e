"""What one barrier slot means, in words: who waits on it with which parity in which iterations,
how many threads (and warps) arrive, and which shared-memory bytes it guards.

The static barrier picture (``barriers.py``) and the interactive grid's hover (``interactive.py``)
say the same things; the rules come from the model (``protocol.wait_parity``, ``protocol.waiter``)
and the layout (``Buffer.stage_range``).
"""

from __future__ import annotations

from typing import Any

from ..model.protocol import wait_parity, waiter
from . import style

#: Rounds a picture spells out (iterations stage, stage + S, stage + 2S).
ROUNDS = 3


def iterations(stages: int, stage: int, rounds: int = ROUNDS) -> list[int]:
    """The iterations that use ``stage`` of an S-stage pipeline: ``stage + r * S``."""
    return [stage + r * stages for r in range(rounds)]


def parities(role: str, rounds: int = ROUNDS) -> list[int]:
    """The parity the waiting side passes on in rounds 0, 1, 2, ... of a ``role`` barrier."""
    side = waiter(role)
    return [wait_parity(side, r) for r in range(rounds)]


def parity_text(bset: Any, stage: int) -> str:
    """'the producer waits with parity 1, 0, 1 in iterations 1, 4, 7, ...'."""
    its = ", ".join(map(str, iterations(bset.stages, stage)))
    pars = ", ".join(map(str, parities(bset.role)))
    who = f"the {waiter(bset.role)}"
    if getattr(bset, "arch", "") and bset.waiters:  # a generator's own barrier: its task, not a side
        who = ", ".join(bset.waiters)
    return f"{who} waits with parity {pars} in iterations {its}, ..."


def buffer_of(buffers: dict[str, Any] | None, resource: str) -> Any:
    """The resource's data buffer in a ``{name: Buffer}`` map, or None (tensor memory, no layout)."""
    return (buffers or {}).get(resource)


def fmt_range(start: int, end: int) -> str:
    """Bytes ``[start, end)`` short: '[16K, 32K)' when both are whole KiB, else exact."""
    if start % 1024 == 0 and end % 1024 == 0:
        return f"[{start // 1024}K, {end // 1024}K)"
    return f"[{start}, {end})"


def guard_lines(bset: Any, stage: int, buffers: dict[str, Any] | None) -> list[str]:
    """'guards smem_a stage 1: shared bytes 16384..32767', one per member with a buffer."""
    out = []
    for m in bset.members:
        buf = buffer_of(buffers, m)
        if buf is not None:
            start, end = buf.stage_range(stage)
            out.append(f"guards {m} stage {stage}: shared bytes {start}..{end - 1}")
        else:
            out.append(f"guards {m} stage {stage}")
    return out


def arrivers_text(bset: Any) -> str:
    """Who arrives on a set: its tasks, how when it is not a plain arrive ('mma (tcgen05.commit)'),
    and a cluster's peers ('mma + peer mma (mapa)')."""
    text = ", ".join(bset.arrivers) or "-"
    if getattr(bset, "via", ""):
        text += f" ({bset.via})"
    if getattr(bset, "peer_arrivers", ()):
        text += f" + peer {', '.join(bset.peer_arrivers)} (mapa)"
    return text


def peers_text(bset: Any) -> str:
    """'counts the releases of 2 blocks (1 each); 8192 of its tx bytes land from the peers', or ''."""
    parts = []
    if getattr(bset, "peers", 1) > 1:
        parts.append(f"counts the arrivals of {bset.peers} blocks of a cluster ({bset.block_count} each)")
    if getattr(bset, "peer_tx", 0):
        parts.append(f"{bset.peer_tx} of its tx bytes land from the peer blocks' multicast copies")
    return "; ".join(parts)


def arrive_text(slot: Any) -> str:
    """'arrivals per phase: 128 threads = 4 warps + 16384 tx bytes'."""
    tx = f" + {slot.tx_bytes} tx bytes" if slot.tx_bytes else ""
    return f"arrivals per phase: {style.fmt_threads(slot.arrive_count)}{tx}"


__all__ = ["ROUNDS", "arrive_text", "arrivers_text", "buffer_of", "fmt_range", "guard_lines", "iterations", "parities",
           "parity_text", "peers_text"]
