"""A check over emitted CUDA text: shared memory that threads write (the generic proxy) and the
async proxy then reads (a TMA store, wgmma / tcgen05.mma operands) is ordered by
``fence.proxy.async.shared::cta`` between the two.

The fence must sit between the write and the read in causality order, in one of two places:

* the writer's, after its ``st.shared`` stores and before it signals them (an mbarrier arrive, a
  named barrier) or reads them through the async proxy itself;
* the reader's, after the wait that made the writes visible to it and before the async read --
  the only place for ``cp.async`` writes, which land after the writer has moved on.

The kernel is read as the generator writes it: role branches start at a ``// task`` comment,
buffers are addressed as ``base + <offset>u`` (GEMM) or ``PG_BUF_<name>`` (streaming), directly or
through ``u32`` locals, and one buffer is one such offset (the generator never lets a thread write
a buffer at an offset the async reads do not start from).  ``missing_fences`` names every write
that nothing fences; ``fenced_pairs`` every (write, read) pair the check found ordered, so a test
can tell "all fenced" from "nothing to fence".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Calls that write shared memory through the generic proxy, synchronously.
STORES = re.compile(r"\bst_shared_\w+\(|\*reinterpret_cast<(?!const)[\w ]+\*>\(\s*pg_smem\b[^;]*\)\s*=[^=]")
#: Generic-proxy copies into shared memory that land later (cp.async, non-bulk).
CP_ASYNC = re.compile(r"\b(?:cp_async_16|pg_cp_async16)\(")
#: Async-proxy reads of shared memory: TMA / bulk stores from smem, MMA operand descriptors.
ASYNC_READS = re.compile(r"\b(?:tma_store_\w+|pg_bulk_s2g\w*|gmma_desc|umma_desc)\(")
FENCE = re.compile(r"\bfence_proxy_async\(\)|fence\.proxy\.async")
#: What publishes a thread's writes to other threads.
SIGNALS = re.compile(r"\b(?:pg_mbar_arrive\w*|named_bar_sync|__syncthreads|pg_cp_async_arrive_noinc)\(")
#: What makes other threads' writes visible to this one.
WAITS = re.compile(r"\b(?:wd_wait|pg_wait|pg_mbar_try_wait|named_bar_sync|__syncthreads)\(")
TASK = re.compile(r"//\s*task '?(\w+)'?:")
BUFFER = re.compile(r"\bbase \+ (\d+)u|\bPG_BUF_(\w+)")
DECL = re.compile(r"\bu32\s+([^;]*);")


@dataclass(frozen=True)
class Event:
    line: int  # 1-based line of the kernel text
    task: str
    kind: str  # "store" | "cp.async" | "read" | "fence" | "signal" | "wait"
    buffer: str | None
    text: str

    def __str__(self) -> str:
        return f"line {self.line} ({self.task}): {self.text}"


def _declarators(text: str) -> list[tuple[str, str]]:
    """``a = (x, y), b = z`` -> [("a", "(x, y)"), ("b", "z")]: split at top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [(m.group(1), m.group(2)) for p in parts if (m := re.match(r"\s*(\w+)\s*=\s*(.+)", p, re.S))]


def events(code: str) -> list[Event]:
    """The kernel's shared-memory events, in text order, inside its role branches."""
    out: list[Event] = []
    task: str | None = None
    names: dict[str | None, dict[str, str]] = {None: {}}

    def buffer_of(text: str) -> str | None:
        local = {**names[None], **names.get(task, {})}
        best = None
        for m in BUFFER.finditer(text):
            if best is None or m.start() < best[0]:
                best = (m.start(), f"smem+{m.group(1)}" if m.group(1) else m.group(2))
        for name, buf in local.items():
            m = re.search(rf"\b{name}\b", text)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), buf)
        return best[1] if best else None

    for i, raw in enumerate(code.splitlines(), 1):
        marker = TASK.search(raw)
        if marker:
            task = marker.group(1)
            names.setdefault(task, {})
        line = raw.split("//", 1)[0]
        for decl in DECL.finditer(line):
            for name, init in _declarators(decl.group(1)):
                buf = buffer_of(init)
                if buf is not None:
                    names[task][name] = buf
        if task is None or not line.strip():
            continue
        for kind, pattern in (("fence", FENCE), ("wait", WAITS), ("store", STORES), ("cp.async", CP_ASYNC),
                              ("read", ASYNC_READS), ("signal", SIGNALS)):
            if pattern.search(line):
                out.append(Event(i, task, kind, buffer_of(line) if kind in ("store", "cp.async", "read") else None,
                                 line.strip()))
    return out


def _writer_fenced(evs: list[Event], k: int) -> bool:
    """The first fence, signal or async read after write ``k`` in its task is a fence."""
    w = evs[k]
    for e in evs[k + 1:]:
        if e.task != w.task:
            return False
        if e.kind in ("fence", "signal", "read"):
            return e.kind == "fence"
    return False


def _reader_fenced(evs: list[Event], k: int) -> bool:
    """The last fence or wait before async read ``k`` in its task is a fence."""
    r = evs[k]
    for e in reversed(evs[:k]):
        if e.task != r.task:
            return False
        if e.kind in ("fence", "wait"):
            return e.kind == "fence"
    return False


def _pairs(code: str) -> list[tuple[Event, Event, bool]]:
    evs = events(code)
    reads = [(k, e) for k, e in enumerate(evs) if e.kind == "read" and e.buffer is not None]
    out = []
    for k, w in enumerate(evs):
        if w.kind not in ("store", "cp.async") or w.buffer is None:
            continue
        by_writer = w.kind == "store" and _writer_fenced(evs, k)
        for j, r in reads:
            if r.buffer == w.buffer:
                out.append((w, r, by_writer or _reader_fenced(evs, j)))
    return out


def fenced_pairs(code: str) -> list[tuple[Event, Event]]:
    """Every (generic write, async read) of one buffer that a proxy fence orders."""
    return [(w, r) for w, r, ok in _pairs(code) if ok]


def missing_fences(code: str) -> list[str]:
    """One line per generic write to a buffer the async proxy reads with no fence between them."""
    said: dict[Event, list[Event]] = {}
    for w, r, ok in _pairs(code):
        if not ok:
            said.setdefault(w, []).append(r)
    return [f"{w} writes {w.buffer} through the generic proxy; {r} reads it through the async proxy, and no "
            f"fence.proxy.async orders them (the writer's before it signals, or the reader's after its wait)"
            for w, rs in said.items() for r in rs[:1]]


__all__ = ["Event", "events", "fenced_pairs", "missing_fences"]
