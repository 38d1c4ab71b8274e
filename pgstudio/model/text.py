"""What a piece of design text may hold, and how it is shown and used as a file name.

Names and words (``model.names``) are plain identifiers; a few fields are free text (a compute
expression before the grammar parses it, an ``input`` resource's note).  Free text is ONE line
of printable characters: no control character (tab and newline included), no line or paragraph
separator, no bidirectional override, no lone surrogate and no Unicode non-character.  Those
are the characters that break the pictures' formats (an XML parser refuses ``\\x01`` in a
graphviz HTML-like label; UTF-8 cannot encode a lone surrogate; ``\\x00`` ends graphviz's input),
reorder what a reader sees, or split a one-line message.

* ``text_problem`` / ``check_text`` refuse such text (the loaders call it, naming the field);
* ``visible`` shows any text on one printable line (the pictures and messages call it, so a
  value that came in by another road still draws);
* ``file_stem`` turns any text into a file name that stays in its folder.

Stdlib only: the model layer imports nothing above it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ..errors import DesignError

#: Characters that reorder the text around them (the "Trojan source" controls).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: File names Windows reserves in every folder, whatever the extension.
RESERVED_STEMS = frozenset(["con", "prn", "aux", "nul", "clock$", "conin$", "conout$",
                            *(f"com{i}" for i in "0123456789\u00b9\u00b2\u00b3"),
                            *(f"lpt{i}" for i in "0123456789\u00b9\u00b2\u00b3")])

#: The longest file stem ``file_stem`` returns (most file systems allow 255 bytes per name).
MAX_STEM_CHARS = 64

_PLAIN_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_HASHED = re.compile(r".*-[0-9a-f]{10}")


def is_control(ch: str) -> bool:
    """Is ``ch`` a character that no line of design text may hold (see the module docstring)?

    >>> [is_control(c) for c in ("a", "\\t", "\\x7f", "\\u2028", "\\ud800", "\\ufffe", "é")]
    [False, True, True, True, True, True, False]
    """
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cs", "Zl", "Zp") or ch in BIDI_CONTROLS:
        return True
    code = ord(ch)
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def _codepoint(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _kind(ch: str) -> str:
    if unicodedata.category(ch) == "Cs":
        return "a lone surrogate"
    if ch in BIDI_CONTROLS:
        return "a bidirectional control"
    if unicodedata.category(ch) in ("Zl", "Zp"):
        return "a line break"
    if unicodedata.category(ch) == "Cc":
        return "a control character"
    return "a Unicode non-character"


def visible(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x01``, ``\\u2028``):
    one printable line that any picture format and any terminal can carry.

    >>> visible("a\\x01b\\udc80")
    'a\\\\x01b\\\\udc80'
    """
    if not any(is_control(c) for c in text):
        return text
    return "".join(_codepoint(c) if is_control(c) else c for c in text)


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be a line of design text, or None when it can.

    >>> text_problem("max(smem_a, 0.f)") is None
    True
    >>> text_problem("a\\nb")
    "character \\\\x0a (a control character) at position 1 of 'a\\\\x0ab'"
    """
    for i, ch in enumerate(value):
        if is_control(ch):
            shown = visible(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return f"character {_codepoint(ch)} ({_kind(ch)}) at position {i} of '{shown}'"
    return None


def check_text(field: str, value: object) -> object:
    """Return ``value``; raise a one-line ``DesignError`` naming ``field`` when it is text that
    holds a control character (non-text values pass: their own rule speaks for them)."""
    problem = text_problem(value) if isinstance(value, str) else None
    if problem:
        raise DesignError(f"{field}: {problem}", code="design.text",
                          hint="remove the character: text in a design is one line of printable characters")
    return value


def file_stem(text: str) -> str:
    """A file name (without extension) for ``text`` that stays in its folder on every system.

    A plain stem (ASCII letters, digits, '_', '-', '.'; no '..'; not a reserved device name;
    at most ``MAX_STEM_CHARS``) is kept as it is; any other text becomes its plain part and a
    hash of the whole text, so two different texts never share a file.

    >>> file_stem("merge_copy")
    'merge_copy'
    >>> file_stem("../../etc/passwd")
    'etc_passwd-3754d6cb3a'
    >>> file_stem("CON")
    'CON-a3dbc4b644'
    """
    if (_PLAIN_STEM.fullmatch(text) and ".." not in text and len(text) <= MAX_STEM_CHARS
            and text.split(".")[0].lower() not in RESERVED_STEMS and not _HASHED.fullmatch(text)
            and not text.endswith(".")):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    plain = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")[:MAX_STEM_CHARS - 11] or "design"
    return f"{plain}-{digest}"


__all__ = ["BIDI_CONTROLS", "MAX_STEM_CHARS", "RESERVED_STEMS", "check_text", "file_stem", "is_control",
           "text_problem", "visible"]
