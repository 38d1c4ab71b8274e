"""Edits of the design itself: its name and problem shape (``m=4096 n=4096 ...``)."""

from __future__ import annotations

from typing import Any, Iterable

from ..design import Design
from ..names import name_problem
from ..problem import gemm_units
from .common import EditError

__all__ = [
    "rename_design",
    "parse_problem",
    "problem_text",
    "set_problem",
    "derived_problem",
    "set_problem_value",
    "blank_design",
]

# -- the design itself ---------------------------------------------------------------------------

def rename_design(d: Design, name: str) -> Design:
    problem = name_problem((name or "").strip())
    if problem:
        raise EditError(f"design {problem}", code="name.identifier", hint="use a name like 'my_gemm'")
    return d.replace(name=name.strip())


def parse_problem(text: str) -> tuple[tuple[str, Any], ...]:
    """``"num_tiles=64, num_k_tiles=8, dtype=float16"`` -> pairs (numbers become ints)."""
    out = []
    for part in text.replace(";", ",").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.isidentifier() or not value:
            raise EditError(f"problem entry {part!r} is not name=value", code="edit.problem",
                            hint="write it like num_tiles=64, num_k_tiles=8")
        try:
            out.append((key, int(value)))
        except ValueError:
            try:
                out.append((key, float(value)))
            except ValueError:
                out.append((key, value))
    return tuple(out)


def problem_text(d: Design) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.problem)


def set_problem(d: Design, text: str) -> Design:
    return d.replace(problem=derived_problem(parse_problem(text)))


#: Problem symbols that follow from others: GEMM tiles from M / N / K and the tile shape,
#: streaming tiles from the element counts.  An edit of a source symbol recomputes them.
def derived_problem(problem: Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """``problem`` with ``num_tiles`` / ``num_k_tiles`` recomputed from M, N, K, BM, BN, BK and SPLIT_K
    (a GEMM, ``problem.gemm_units``) or from num_elements and tile_elems (streaming), where those are whole numbers > 0."""
    p = dict(problem)

    def whole(*keys: str) -> bool:
        return all(isinstance(p.get(k), int) and not isinstance(p.get(k), bool) and p[k] > 0 for k in keys)

    splits = p["SPLIT_K"] if whole("SPLIT_K") else 1
    if whole("M", "N", "BM", "BN"):
        p["num_tiles"] = gemm_units(p["M"], p["N"], 1, p["BM"], p["BN"], 1, splits)[0]
    elif whole("num_elements", "tile_elems"):
        p["num_tiles"] = -(-p["num_elements"] // p["tile_elems"])
    if whole("K", "BK"):
        p["num_k_tiles"] = gemm_units(1, 1, p["K"], 1, 1, p["BK"], splits)[1]
    return tuple(p.items())


def set_problem_value(d: Design, key: str, value: Any) -> Design:
    """Set one problem symbol (text is read as a number when it is one); the symbols that follow
    from it are recomputed (``derived_problem``).  An empty value removes the symbol."""
    key = (key or "").strip()
    if not key.isidentifier():
        raise EditError(f"problem symbol {key!r} is not an identifier", code="edit.problem",
                        hint="use a name like M, BK or num_tiles")
    pairs = [(k, v) for k, v in d.problem if k != key]
    text = str(value).strip()
    if text:
        parsed = parse_problem(f"{key}={text}")[0][1]
        pairs = [(k, parsed if k == key else v) for k, v in d.problem] if key in d.problem_dict else [*pairs, (key, parsed)]
    return d.replace(problem=derived_problem(pairs))


def blank_design(name: str = "my_design") -> Design:
    """What ``Studio()`` opens when there is nothing to restore: an empty design of 64 tiles."""
    return Design(name, problem={"num_tiles": 64})


