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

__all__ = [
    "CPP_KEYWORDS",
    "ALTERNATIVE_TOKENS",
    "CUDA_MACROS",
    "CUDA_BUILTINS",
    "MACRO_FAMILY",
    "RESERVED_PREFIX",
    "suggest_name",
    "name_problem",
    "check_name",
    "NUMBER",
    "word_problem",
    "check_word",
]

#: Every keyword of C++20 (the dialects NVRTC compiles) and the C words it also reserves: a name
#: that is one of them does not compile where generated code declares it.
CPP_KEYWORDS = frozenset("""
alignas alignof asm auto bool break case catch char char8_t char16_t char32_t class concept const consteval
constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int long mutable namespace
new noexcept nullptr operator private protected public register reinterpret_cast requires return short signed
sizeof static static_assert static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while
""".split())

#: C++'s alternative tokens: each IS an operator (``xor`` is ``^``), never an identifier.
ALTERNATIVE_TOKENS = {"and": "&&", "and_eq": "&=", "bitand": "&", "bitor": "|", "compl": "~", "not": "!",
                      "not_eq": "!=", "or": "||", "or_eq": "|=", "xor": "^", "xor_eq": "^="}

#: Macros NVRTC's built-in headers define (a name that is one expands into their text), and the
#: CUDA built-in variables and vector types a kernel reads.
CUDA_MACROS = frozenset("NULL assert alloca offsetof va_arg va_copy va_end va_start".split())
CUDA_BUILTINS = frozenset("""
threadIdx blockIdx blockDim gridDim warpSize clusterIdx clusterDim half float4 int4 uint4 dim3
""".split())

#: Families of macros NVRTC's headers define (``CUDART_VERSION``, ``NV_IS_DEVICE``,
#: ``cudaStreamDefault`` ...): every name of such a family is kept for them.
MACRO_FAMILY = re.compile(r"(?:CUDART_|CUDA_|CU_|NV_|cuda[A-Z]).*")

#: Generated code reserves names with this prefix.
RESERVED_PREFIX = "pg_"


def _reserved(name: str) -> str | None:
    """What ``name`` already is in Python or in the CUDA C++ that generated code is compiled as."""
    if name in ALTERNATIVE_TOKENS:
        return f"a C++ alternative token (it means {ALTERNATIVE_TOKENS[name]!r})"
    if name in CPP_KEYWORDS:
        return "a C++ keyword"
    if name in CUDA_MACROS or MACRO_FAMILY.fullmatch(name):
        return "a macro that NVRTC's headers define"
    if name in CUDA_BUILTINS:
        return "a CUDA built-in"
    if keyword.iskeyword(name):
        return "a Python keyword"
    if name[0] == "_" and name[1:2].isupper():
        return "reserved by C++ ('_' and a capital letter start the compiler's own names)"
    return None


def suggest_name(name: object) -> str:
    """A name close to ``name`` that is one (the fix a message offers).

    >>> suggest_name("xor"), suggest_name("NULL"), suggest_name("2d"), suggest_name("pg_bar")
    ('xor_1', 'NULL_1', 'x2d', 'bar')
    """
    text = name if isinstance(name, str) else ""
    base = re.sub(r"\W+", "_", text.encode("ascii", "ignore").decode())[:MAX_NAME_CHARS - 2]
    for prefix in (RESERVED_PREFIX, "_"):
        while base.startswith(prefix):
            base = base[len(prefix):]
    if not base:
        return "smem_a"
    if base[0].isdigit():
        base = "x" + base
    if name_problem(base) is None and base != name:
        return base
    for candidate in (f"{base}_1", f"t_{base}"):
        if name_problem(candidate) is None:
            return candidate
    return "smem_a"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a design element, or None when it can.

    >>> name_problem("smem_a") is None
    True
    >>> name_problem("2d")
    "name '2d' is not an identifier (letters, digits and '_', not starting with a digit)"
    >>> name_problem("pg_bar")
    "name 'pg_bar' starts with 'pg_' or '__', which generated code reserves"
    >>> name_problem("bitand")
    "name 'bitand' is a reserved word in Python or CUDA C++: a C++ alternative token (it means '&')"
    """
    if not isinstance(name, str) or not name:
        return f"name {name!r} is not a non-empty string"
    if len(name) > MAX_NAME_CHARS:
        return f"name {name[:MAX_NAME_CHARS]!r}... has {len(name)} characters, expected at most {MAX_NAME_CHARS}"
    if not name.isascii() or not name.isidentifier():
        return f"name {name!r} is not an identifier (letters, digits and '_', not starting with a digit)"
    if name.startswith(RESERVED_PREFIX) or name.startswith("__"):
        return f"name {name!r} starts with {RESERVED_PREFIX!r} or '__', which generated code reserves"
    why = _reserved(name)
    if why:
        return f"name {name!r} is a reserved word in Python or CUDA C++: {why}"
    return None


def check_name(name: object, what: str) -> str:
    """Return ``name`` or raise ``DesignError`` naming the rule and the fix."""
    problem = name_problem(name)
    if problem:
        raise DesignError(f"{what} {problem}", code="name.identifier",
                          hint=f"rename it, e.g. to {suggest_name(name)!r} (a name becomes a name in generated code "
                               "and diagrams)")
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
