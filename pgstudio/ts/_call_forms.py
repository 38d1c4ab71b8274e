"""Whose a TypeError is when a TS script calls a pgstudio.ts name: the script's, or pgstudio's.

Python raises a call's argument-binding ``TypeError`` in the *caller's* frame, so a call form that
TS takes but pgstudio.ts does not (other positional or keyword arguments) ends on the script's own
line, where it looks like the script's mistake.  It is not: the script is valid TS.  So ``load()``
asks this module about every ``TypeError``:

- the call that failed is read from the script's source (the exact span Python records for the
  failing instruction) and its callee is looked up in the script's frame, without running
  anything again;
- if the callee is a pgstudio.ts name, the call's *form* (how many positional arguments, which
  keywords) is bound to the signature of TS's own name, where TS is installed: TS takes it ->
  "pgstudio does not take this call form of NAME yet"; TS refuses it too -> "fix the script",
  with TS's signature; TS absent -> the first, without claiming either way;
- a ``TypeError`` raised inside pgstudio.ts is pgstudio's ("cannot build this yet") unless TS
  refuses the script's call into pgstudio by its form too, or the function that refused its
  arguments is one the script defined (a schedule called with more resources than it takes).

Nothing of TS is copied: its names are imported and their signatures read.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import inspect
import io
import re
import sys
import traceback
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DesignError

_PACKAGE = Path(__file__).resolve().parent
_BINDING = re.compile(r"^(?P<qual>[\w.<>]+)\(\) (takes|got|missing)\b")


@dataclass(frozen=True)
class Call:
    """A failing call in the script: its line, the callee and the call's form."""

    line: int
    callee: Any
    on_instance: bool  # a method called on an object: TS's function takes the object first
    positional: int | None  # None: a *args or **kwargs makes the form unknown
    keywords: tuple[str, ...]


def _facade() -> types.ModuleType:
    """pgstudio.ts itself, imported before anything can ask this module (no import cycle)."""
    return sys.modules[__name__.rpartition(".")[0]]


def _in_package(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(_PACKAGE)


def _segment(source: str, frame: traceback.FrameSummary) -> str | None:
    """The source span of the failing instruction (byte offsets, as CPython records them)."""
    if None in (frame.lineno, frame.end_lineno, frame.colno, frame.end_colno):
        return None
    lines = source.encode().splitlines()[frame.lineno - 1:frame.end_lineno]
    if not lines:
        return None
    if len(lines) == 1:
        return lines[0][frame.colno:frame.end_colno].decode(errors="replace")
    lines[0], lines[-1] = lines[0][frame.colno:], lines[-1][:frame.end_colno]
    return b"\n".join(lines).decode(errors="replace")


def _lookup(node: ast.expr, frame: types.FrameType) -> Any:
    """The value of a dotted name (``PipelineConfig.create_tma_async_pipeline_cfg``, ``wq.create``)
    in ``frame``; anything else is not evaluated (it could run code)."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_lookup(node.value, frame), node.attr)
    raise LookupError(ast.dump(node))


def _call_at(exc: BaseException, tb_index: int, source: str) -> Call | None:
    """The call that the ``tb_index``-th frame of ``exc``'s traceback was making."""
    frames = traceback.extract_tb(exc.__traceback__)
    tb = exc.__traceback__
    for _ in range(tb_index):
        tb = tb.tb_next
    text = _segment(source, frames[tb_index])
    try:
        node = ast.parse(text.strip(), mode="eval").body if text else None
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    try:
        callee = _lookup(node.func, tb.tb_frame)
        on_instance = inspect.ismethod(callee) and not inspect.isclass(callee.__self__)
    except Exception:  # noqa: BLE001 -- not a plain dotted name (``SmemAllocator().add``): the message names it
        callee = _named_in_message(exc)
        on_instance = isinstance(node.func, ast.Attribute) and inspect.isfunction(callee) and \
            "." in callee.__qualname__
    if callee is None:
        return None
    unknown = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
    return Call(frames[tb_index].lineno, callee, on_instance, None if unknown else len(node.args),
                tuple(k.arg for k in node.keywords if k.arg is not None))


def _named_in_message(exc: BaseException) -> Any:
    """The pgstudio.ts callable a binding message names (``SmemAllocator.add_resource() takes
    ...``; ``X.__init__`` is the class ``X``), or None."""
    facade = _facade()
    m = _BINDING.match(str(exc))
    if not m:
        return None
    head, *rest = m["qual"].split(".")
    if rest[-1:] == ["__init__"]:
        rest = rest[:-1]
    obj = vars(facade).get(head) if head in facade.__all__ else None
    try:
        for part in rest:
            obj = inspect.getattr_static(obj, part)
    except AttributeError:
        return None
    return obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj


def _pgstudio_name(callee: Any) -> str | None:
    """The TS-style name of a pgstudio.ts callable (``PipelineConfig``,
    ``PipelineConfig.create_tma_async_pipeline_cfg``, ``SmemAllocator.add_resource``), or None."""
    facade = _facade()
    func = callee.__func__ if inspect.ismethod(callee) else callee
    public = any(func is v for v in vars(facade).values())
    if not public and not str(getattr(func, "__module__", "")).startswith(facade.__name__):
        return None
    if inspect.isclass(func):
        return func.__name__
    qual = getattr(func, "__qualname__", "")
    if inspect.ismethod(callee) and not inspect.isclass(callee.__self__):
        owner = next((c for c in type(callee.__self__).__mro__ if c.__module__.startswith(facade.__name__)
                      and callee.__name__ in vars(c)), None)
        qual = f"{owner.__name__}.{callee.__name__}" if owner else qual
    return qual if qual and "<" not in qual else None


@functools.lru_cache(maxsize=1)
def _ts_modules() -> tuple[types.ModuleType, ...]:
    """TS's modules, where TS is installed (imported on the first question, never while a script
    runs: ``load()`` asks after its TS imports are restored)."""
    if importlib.util.find_spec("cutlass") is None:
        return ()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            import cutlass.experimental.task_scheduling as ts
            import cutlass.pipeline as pipeline
            from cutlass.experimental.task_scheduling import (enums, memory, pipeline_group, resources,
                                                              schedule_builder, task, task_manager)
        except Exception:  # noqa: BLE001 -- a TS this machine cannot import answers nothing
            return ()
    return (pipeline, ts, enums, memory, pipeline_group, resources, schedule_builder, task, task_manager)


def _ts_object(name: str) -> Any:
    head, *rest = name.split(".")
    for mod in _ts_modules():
        obj = getattr(mod, head, None)
        if obj is None:
            continue
        try:
            for part in rest:
                obj = inspect.getattr_static(obj, part)
        except AttributeError:
            return None
        return obj
    return None


def ts_takes(name: str, call: Call) -> tuple[bool | None, str]:
    """Whether TS's ``name`` takes ``call``'s form -- True / False, or None (no TS, no such TS name,
    or a form with ``*args`` / ``**kwargs``) -- and, where it does not, TS's reason."""
    if call.positional is None:
        return None, ""
    obj = _ts_object(name)
    if obj is None:
        return None, ""
    bound_self = inspect.isfunction(obj) and call.on_instance
    func = obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None, ""
    params = list(signature.parameters.values())
    if isinstance(obj, classmethod) and params:
        signature = signature.replace(parameters=params[1:])
    try:
        signature.bind(*[None] * (call.positional + bound_self), **{k: None for k in call.keywords})
    except TypeError as exc:
        return False, str(exc)
    return True, ""


def signature_text(obj: Any) -> str:
    """``(a, b, c=..., *, d=...)``: the parameters of a callable, without annotations or values."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        star = star or p.kind is p.VAR_POSITIONAL
        parts.append(f"{prefix}{p.name}" + ("=..." if p.default is not p.empty else ""))
    return f"({', '.join(parts)})"


def _defined_by_script(exc: BaseException, namespace: dict[str, Any], filename: str) -> str | None:
    """The name of a function the script defined that refused its arguments (the message's
    ``NAME() takes ...``), or None."""
    m = _BINDING.match(str(exc))
    if not m:
        return None
    qual = m["qual"]
    candidates = list(namespace.values())
    candidates += [v for c in list(candidates) if inspect.isclass(c) for v in vars(c).values()]
    for value in candidates:
        value = inspect.unwrap(value) if callable(value) else value
        code = getattr(value, "__code__", None)
        if code is not None and code.co_filename == filename and getattr(value, "__qualname__", "") == qual:
            return qual
    return None


def classify(exc: TypeError, filename: str, source: str, namespace: dict[str, Any]) -> DesignError | None:
    """The one-line error for a ``TypeError`` at or under a script's call of a pgstudio.ts name
    (module docstring), or None when the call is not one (the caller words it)."""
    frames = traceback.extract_tb(exc.__traceback__)
    script = [i for i, f in enumerate(frames) if f.filename == filename]
    if not script:
        return None
    inside = _in_package(frames[-1].filename)
    if inside and (own := _defined_by_script(exc, namespace, filename)):
        return DesignError(f"ts: {filename}, line {frames[script[-1]].lineno}: {exc}", code="ts.script",
                           hint=f"call {own} with the arguments it declares (TS calls it the same way)")
    if not inside and script[-1] != len(frames) - 1:
        return None  # raised in another library the script called
    call = _call_at(exc, script[-1], source)
    name = None if call is None else _pgstudio_name(call.callee)
    if name is None:
        return None
    takes, why = ts_takes(name, call)
    where = f"ts: {filename}, line {call.line}"
    if takes is False:
        ts_sig = signature_text(_ts_callable(name))
        return DesignError(f"{where}: {exc}; TS refuses this call too ({why})", code="ts.script",
                           hint=f"fix the script: TS's {name} takes {ts_sig}")
    if inside:
        return None  # TS takes the form: pgstudio's own failure, worded by the caller
    ours = signature_text(call.callee)
    also = ", which TS takes" if takes else ""
    return DesignError(f"{where}: pgstudio does not take this call form of {name} yet{also} ({exc})",
                       code="ts.unsupported", hint=f"call it as pgstudio.ts takes it, {name}{ours}, or keep this "
                       f"part in TS")


def _ts_callable(name: str) -> Any:
    obj = _ts_object(name)
    return obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj


__all__ = ["Call", "classify", "signature_text", "ts_takes"]
