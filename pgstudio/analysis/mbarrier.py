"""An exact model of one mbarrier, shared by the simulator and the checker.

An mbarrier holds a *pending* arrival count, a signed transaction count (*tx*, bytes) and the
number of phases it has completed (*phase*; its parity is ``phase & 1``).  ``mbarrier.init``
sets pending to the init count.  A phase completes the moment pending reaches 0 while tx is 0:
the phase number advances and pending is reloaded with the init count (tx is 0 then by
definition).  So, exactly as on the GPU:

* too few arrivals (init count larger than the arrivals sent) -> the phase never completes;
* too many (init count smaller) -> the phase completes early and the remaining arrivals count
  towards the next phase, which may complete with nobody's data in it;
* a copy that lands more bytes than were expected drives tx through 0: the phase completes when
  the expected bytes have landed and the rest land (as negative tx) in the next phase.

``try_wait.parity(p)`` returns true when the phase with parity ``p`` has completed, i.e. when
the current (incomplete) phase's parity differs from ``p``.  It cannot tell a phase from the one
two phases later: a waiter that falls two phases behind waits forever, as on the GPU.

States are small immutable tuples (``Mbarrier``) so the checker can hash them; the init count
is kept beside the state (it never changes).  Every function returns a new state.

    >>> b = init(2)
    >>> b
    Mbarrier(pending=2, tx=0, phase=0)
    >>> r = arrive(b, 2, 1); r.state
    Mbarrier(pending=1, tx=0, phase=0)
    >>> arrive(r.state, 2, 1).state, arrive(r.state, 2, 1).completed
    (Mbarrier(pending=2, tx=0, phase=1), 1)
"""

from __future__ import annotations

from typing import NamedTuple


class Mbarrier(NamedTuple):
    """One mbarrier's state: arrivals still pending in this phase, tx bytes still expected
    (negative when bytes landed before they were expected), phases completed so far."""

    pending: int
    tx: int
    phase: int

    @property
    def parity(self) -> int:
        """Parity of the current (incomplete) phase."""
        return self.phase & 1

    def passes(self, parity: int) -> bool:
        """Would ``try_wait.parity(parity)`` return true?  (The phase of that parity completed.)"""
        return (self.phase & 1) != parity


class ArriveResult(NamedTuple):
    """What a batch of arrivals did: the new state, how many phases it completed, how many of
    its arrivals landed after it had completed a phase (leaked into a later phase), and how many
    landed while pending was already 0 with bytes outstanding (more arrivals than the count:
    undefined on the GPU, modelled as pending going negative)."""

    state: Mbarrier
    completed: int
    leaked: int
    excess: int


class TxResult(NamedTuple):
    """What landing bytes did: the new state, the bytes that landed in this call, and whether the
    phase completed.  When the phase completes part-way through a copy, ``landed`` is less than
    the bytes given: the rest belong to the next phase (land them with another call)."""

    state: Mbarrier
    landed: int
    completed: bool


def init(count: int) -> Mbarrier:
    """A freshly initialised barrier (``mbarrier.init [addr], count``)."""
    return Mbarrier(count, 0, 0)


def _complete(bar: Mbarrier, count: int) -> Mbarrier:
    return Mbarrier(count, 0, bar.phase + 1)


def arrive(bar: Mbarrier, count: int, n: int = 1) -> ArriveResult:
    """``n`` arrivals, one after another (``mbarrier.arrive`` by ``n`` threads)."""
    pending, tx, phase = bar
    completed = leaked = excess = 0
    remaining = n
    while remaining:
        if pending <= 0:  # nothing pending but the phase is open (bytes outstanding)
            excess += remaining
            pending -= remaining
            break
        take = min(remaining, pending)
        pending -= take
        remaining -= take
        if completed:
            leaked += take
        if pending == 0 and tx == 0:
            phase += 1
            pending = count
            completed += 1
    return ArriveResult(Mbarrier(pending, tx, phase), completed, leaked, excess)


def expect_tx(bar: Mbarrier, nbytes: int) -> Mbarrier:
    """``mbarrier.expect_tx``: expect ``nbytes`` more in this phase (never completes a phase)."""
    return Mbarrier(bar.pending, bar.tx + nbytes, bar.phase)


def arrive_expect_tx(bar: Mbarrier, count: int, nbytes: int) -> ArriveResult:
    """``mbarrier.arrive.expect_tx``: expect ``nbytes`` then arrive once, atomically."""
    return arrive(expect_tx(bar, nbytes), count, 1)


def complete_tx(bar: Mbarrier, count: int, nbytes: int) -> TxResult:
    """Bytes of a copy land (``complete_tx``).  If no arrival is pending and the phase expects
    fewer bytes than land, the phase completes once the expected bytes are in; the call then
    reports only those as landed."""
    pending, tx, phase = bar
    if pending == 0 and 0 < tx <= nbytes:
        return TxResult(_complete(bar, count), tx, True)
    return TxResult(Mbarrier(pending, tx - nbytes, phase), nbytes, False)


def land(bar: Mbarrier, count: int, nbytes: int) -> tuple[Mbarrier, int]:
    """All ``nbytes`` of a copy land at once (the simulator's view): returns the new state and
    the number of phases completed on the way."""
    flips = 0
    while nbytes:
        res = complete_tx(bar, count, nbytes)
        bar, nbytes = res.state, nbytes - res.landed
        flips += res.completed
    return bar, flips


__all__ = ["ArriveResult", "Mbarrier", "TxResult", "arrive", "arrive_expect_tx", "complete_tx", "expect_tx", "init",
           "land"]
