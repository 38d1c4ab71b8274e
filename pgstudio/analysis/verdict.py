"""The checker's answer: SAFE, UNSAFE (with the kind and a witness trace) or INCOMPLETE.

A ``Verdict`` displays itself in a notebook cell (``_repr_html_``: the summary, the finding and
the witness as a table, one row per step with the barrier state it left behind), gives
``diagnostics()`` for ``Design.validate(checker=True)`` and ``summary()`` for one line.  Its
``timeline`` is the witness as a ``Timeline`` whose time axis counts steps, so the timeline
picture can draw it.

INCOMPLETE is never safe; ``reason`` says why there is no verdict, with the figures and how to
get one: the search stopped at its budget (states, memory or seconds), or the loop counts it
unrolled do not keep a relation between the design's loop bounds (``loops.py``).  In the second
case a finding at those counts is kept (``kind``, ``message``, ``witness``) as a *possible*
finding: the witness is a real run at the shrunk counts, which may not be one of the design's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.diagnostic import Diagnostic, error, warning
from .statespace import KINDS
from .timeline import Timeline

SAFE, UNSAFE, INCOMPLETE = "SAFE", "UNSAFE", "INCOMPLETE"

#: How to fix each kind of finding.
HINTS = {
    "deadlock": "make producer and consumer run the same iterations, release every stage that is waited on, and give "
                "each barrier the init count of the arrivals it really gets",
    "write_while_held": "acquire a stage before writing it and release it only after reading it; views of one buffer "
                        "need the ordering of one Fork group",
    "read_before_write": "wait before reading, and make the expected tx bytes (num_bytes) equal the bytes the copy lands",
    "arrive_count": "set the cooperative group to the number of threads that really arrive (semantics.md section 2)",
    "early_release": "move the release after the tma / umma step that reads the stage",
    "unbalanced": "give the producer's and the consumer's domain_loop the same bounds",
}


@dataclass(frozen=True)
class TraceRow:
    """One step of a witness: who moved, what it did, and the barrier it touched afterwards."""

    index: int
    agent: str
    step: str
    action: str
    iteration: int
    barrier: str = ""  # "set[stage]"
    state: str = ""  # the slot after the step: "pending p, tx t, phase n"
    note: str = ""  # the violation, on the last row


@dataclass(frozen=True)
class Verdict:
    design: str
    status: str
    kind: str | None = None
    message: str = ""
    where: tuple[str, ...] = ()
    witness: tuple[TraceRow, ...] = ()
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    method: str = "reduced"
    loops: tuple[tuple[str, int], ...] = ()
    max_states: int = 0
    reason: str = ""  # INCOMPLETE: why there is no verdict, with the figures
    cause: str = ""  # INCOMPLETE: "budget" (states, memory or seconds) or "loops" (shrunk counts inexact)
    timeline: Timeline | None = field(default=None, compare=False, repr=False)

    @property
    def safe(self) -> bool:
        return self.status == SAFE

    @property
    def unsafe(self) -> bool:
        return self.status == UNSAFE

    @property
    def incomplete(self) -> bool:
        return self.status == INCOMPLETE

    def _scope(self) -> str:
        return ", ".join(f"{n}={v}" for n, v in self.loops) or "no loops"

    def summary(self) -> str:
        stats = f"{self.states} states ({self.method}), {self.seconds:.2f} s, {self._scope()}"
        if self.status == SAFE:
            return f"SAFE: no deadlock or race in any interleaving; {stats}"
        if self.status == UNSAFE:
            return f"UNSAFE ({self.kind}): {KINDS[self.kind]}; witness of {len(self.witness)} steps; {stats}"
        found = f"possible {self.kind} ({KINDS[self.kind]}), but " if self.kind else ""
        return f"INCOMPLETE: {found}{self.reason}; not known to be safe; {stats}"

    def diagnostics(self) -> list[Diagnostic]:
        """Diagnostics for a ``Report``: an error for UNSAFE, a warning for INCOMPLETE, none for SAFE."""
        if self.status == UNSAFE:
            return [error(f"check.{self.kind}", f"checker: {self.message} (witness: {len(self.witness)} steps, "
                          f"{self._scope()})", self.where, HINTS.get(self.kind, ""))]
        if self.status == INCOMPLETE:
            found = f"possible {self.kind}: {self.message}; " if self.kind else ""
            return [warning("check.incomplete",
                            f"checker: no verdict ({self._scope()}): {found}{self.reason}; the design is not known to "
                            f"be safe", self.where, self.hint())]
        return []

    def hint(self) -> str:
        """How to get a verdict (INCOMPLETE), or how to fix the finding (UNSAFE)."""
        if self.status == UNSAFE:
            return HINTS.get(self.kind, "")
        if self.status != INCOMPLETE:
            return ""
        if self.cause == "loops":
            return ("check with loops={...} values that keep the bounds' relation (e.g. the real ones when they "
                    "are small), or iterations=None to unroll the real counts")
        return "raise the budget (max_states, max_memory, max_seconds) or check fewer iterations or stages"

    def table(self) -> str:
        rows = [("#", "agent", "step", "action", "it", "barrier", "after")]
        rows += [(str(r.index), r.agent, r.step, r.action, str(r.iteration), r.barrier, r.state or r.note)
                 for r in self.witness]
        widths = [min(max(len(r[i]) for r in rows), 48) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c[:w].ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)

    def __str__(self) -> str:
        text = self.summary()
        if self.witness:
            text += f"\n{self.message}\nwitness:\n{self.table()}"
        return text

__all__ = ["HINTS", "INCOMPLETE", "SAFE", "TraceRow", "UNSAFE", "Verdict"]
