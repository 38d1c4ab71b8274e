"""Results computed once per ``Design`` value: its barrier layouts and resolved plans.

A Design is immutable, and one ``validate()`` asks for the same layout and the same resolved
plans from many rules (the count rules, the phase leads, the barrier uses, the generators' plan
checks): at 251 resources that repeated work was most of the validation time.  The memo is
keyed by the design object itself (its identity, held by a weak reference, so a design that is
dropped takes its entries with it, and an edit, which makes a new Design, starts afresh); hashing
a design's whole value on every lookup would cost what it saves.
"""

from __future__ import annotations

import weakref
from typing import Any

_TABLES: dict[int, tuple[weakref.ref, dict]] = {}


def memo_of(design: Any) -> dict:
    """The memo table of ``design`` (created on first use, dropped with the design)."""
    key = id(design)
    hit = _TABLES.get(key)
    if hit is not None and hit[0]() is design:
        return hit[1]
    table: dict = {}
    _TABLES[key] = (weakref.ref(design, lambda _ref, key=key: _TABLES.pop(key, None)), table)
    return table


def forget(design: Any) -> None:
    """Drop what the memo holds for ``design`` (a benchmark timing the first, cold computation)."""
    _TABLES.pop(id(design), None)


__all__ = ["forget", "memo_of"]
