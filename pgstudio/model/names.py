"""Names of resources, groups and tasks become C++ identifiers and graph node ids, so they must
be plain identifiers that no generated name can collide with.

Every other piece of text in a design that can reach generated code -- a schedule's name, a
step's target, group and work-input names, loop-bound symbols, graph names, a dtype or compute-op
word, a problem text value -- is a *word*: ASCII letters, digits and '_', not starting with a
digit, at most ``MAX_NAME_CHARS`` long (``word_problem``).  A word cannot hold a quote, a ';',
a comment end, a newline, a '#' or a look-alike letter, so pasting it anywhere -- code or comment
-- cannot change the code around it.  A work input may also be a number literal (``0.5f``).
Expressions are the one other kind of text; they go through the expression grammar.
"""

from __future__ import annotations

import keyword
import re

from ..errors import DesignError
from .limits import MAX_NAME_CHARS

#: C++ words a name may not take (it would not compile in generated code).
CPP_KEYWORDS = frozenset("""
alignas alignof and asm auto bool break case catch char class const constexpr continue decltype
default delete do double else enum explicit extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public register return
short signed sizeof static struct switch template this throw true try typedef typename union
unsigned using virtual void volatile while half float4 int4 uint4 dim3 threadIdx blockIdx blockDim
gridDim warpSize
""".split())

#: Generated code reserves names with this prefix.
RESERVED_PREFIX = "pg_"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a design element, or None when it can.

    >>> name_problem("smem_a") is None
    True
    >>> name_problem("2d")
    "name '2d' is not an identifier (letters, digits and '_', not starting with a digit)"
    >>> name_problem("pg_bar")
    "name 'pg_bar' starts with 'pg_' or '__', which generated code reserves"
    """
    if not isinstance(name, str) or not name:
        return f"name {name!r} is not a non-empty string"
    if len(name) > MAX_NAME_CHARS:
        return f"name {name[:MAX_NAME_CHARS]!r}... has {len(name)} characters, expected at most {MAX_NAME_CHARS}"
    if not name.isascii() or not name.isidentifier():
        return f"name {name!r} is not an identifier (letters, digits and '_', not starting with a digit)"
    if keyword.iskeyword(name) or name in CPP_KEYWORDS:
        return f"name {name!r} is a reserved word in Python or CUDA C++"
    if name.startswith(RESERVED_PREFIX) or name.startswith("__"):
        return f"name {name!r} starts with {RESERVED_PREFIX!r} or '__', which generated code reserves"
    return None


def check_name(name: object, what: str) -> str:
    """Return ``name`` or raise ``DesignError`` naming the rule and the fix."""
    problem = name_problem(name)
    if problem:
        raise DesignError(f"{what} {problem}", code="name.identifier",
                          hint="use a name like 'smem_a' (it becomes a name in generated code and diagrams)")
    return name  # type: ignore[return-value]


#: A number literal as a work input may record it (``2``, ``0.5``, ``1e-3``, ``0.5f``).
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?")


def word_problem(text: object) -> str | None:
    """Why ``text`` is not a word (see the module docstring), or None when it is."""
    if not isinstance(text, str) or not text:
        return f"{text!r} is not a non-empty string"
    if len(text) > MAX_NAME_CHARS:
        return f"{text[:MAX_NAME_CHARS]!r}... has {len(text)} characters, expected at most {MAX_NAME_CHARS}"
    if not text.isascii() or not text.isidentifier():
        return f"{text!r} is not a plain word (ASCII letters, digits and '_', not starting with a digit)"
    return None


def check_word(text: object, what: str, code: str, *, number: bool = False) -> str:
    """Return ``text`` or raise ``DesignError``: it must be a word (or, with ``number``, a number
    literal), because it may be written into generated code."""
    problem = word_problem(text)
    if problem and number and isinstance(text, str) and len(text) <= MAX_NAME_CHARS and NUMBER.fullmatch(text):
        problem = None
    if problem:
        raise DesignError(f"{what} {problem}", code=code,
                          hint="use a name like 'smem_a' (text of a design can reach generated code, so it is "
                               "kept to plain words)")
    return text  # type: ignore[return-value]
