"""Hostile text for the picture sinks (DOT, HTML, file names), and where to plant it: every string
field of a canonical design's JSON file."""

from __future__ import annotations

import json

PAYLOADS = [
    '"', '"]; evil [label="PGXDOT"]; x [label="', "<", ">", "&", "&amp;", "{}", "|", "a\\", "\\", "\\l\\n\\N\\G",
    "a\nb", "a\rb", "a\u2028b", "a\x00b", "a\x01b\x1b[2J", "\x7f", "a\udc80b", "\ud800", "x" * 1000,
    "<script>alert('PGXHTML')</script>", '<img src=x onerror="PGXHTML">', "<<B>PGXDOT</B>>", "]]>", "-->",
    "../../etc/passwd", "CON", "nul", "a:b", "n1 -> n2", "subgraph", "\u202ePGX",
]


def string_fields(obj, path=()):
    """The path of every string value in a JSON object."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from string_fields(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from string_fields(v, path + (i,))
    elif isinstance(obj, str):
        yield path


def planted(obj, path, payload) -> str:
    """The JSON text of ``obj`` with ``payload`` at ``path`` (``obj`` is left as it was)."""
    node = obj
    for key in path[:-1]:
        node = node[key]
    old, node[path[-1]] = node[path[-1]], payload
    try:
        return json.dumps(obj)
    finally:
        node[path[-1]] = old
