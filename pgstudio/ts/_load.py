"""``load(path)``: run a TS design script under pgstudio.ts and return the design it built.

SECURITY: this executes the script -- arbitrary Python, with the user's rights.  It is meant for
the user's own TS scripts; pgstudio never runs one implicitly (a design file is JSON and loading
it executes nothing).

While the script runs, its TS imports resolve to pgstudio.ts: ``cutlass.pipeline`` to
``pgstudio.ts.pipeline``, ``cutlass.experimental.task_scheduling`` and its submodules to
``pgstudio.ts``; any other ``cutlass`` module (the CuTe DSL) is refused with a clear message.
The real ``cutlass`` modules, if installed, are hidden for that time and restored afterwards, so
a script behaves the same with or without TS installed.  The script runs as ``__main__`` with
``sys.argv == [path]``.  It must build exactly one ``TaskManager``.

A failure is one line that says whose it is: the script's ("fix the script") only where TS would
refuse it too; a call form of a TS name that pgstudio.ts does not take, a TS attribute it does not
model, or a failure inside pgstudio.ts is pgstudio's (``_call_forms.py``, ``_unmodelled.py``).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.abc
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Iterator

from ..errors import DesignError, PgStudioError
from ..model.design import Design
from ._call_forms import classify
from ._manager import capture_managers, stop_capture
from ._unmodelled import missing_attribute

#: TS's submodules, all answered by pgstudio.ts (``pipeline`` by pgstudio.ts.pipeline).
TS_SUBMODULES = ("enums", "memory", "pipeline_group", "resources", "schedule_builder", "task", "task_manager",
                 "exhaustive_checker", "schedule_legacy_adapter")
TS_PACKAGE = "cutlass.experimental.task_scheduling"


def _stub(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"pgstudio.ts stand-in for {name} while a TS script is loaded")
    module.__path__ = []  # a package, so its TS submodules import

    def __getattr__(attr: str) -> Any:
        raise AttributeError(f"ts: {name}.{attr} is not available under pgstudio.ts: pgstudio reads the design part "
                             f"of a TS script (resources, groups, schedules, tasks), not CuTe DSL code")

    module.__getattr__ = __getattr__
    return module


class _RefuseCutlass(importlib.abc.MetaPathFinder):
    """Any ``cutlass`` module pgstudio.ts does not stand in for fails with a clear message."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "cutlass" or fullname.startswith("cutlass."):
            raise ImportError(f"ts: {fullname} is not available under pgstudio.ts: pgstudio reads the design part of "
                              f"a TS script (resources, groups, schedules, tasks), not CuTe DSL code; keep kernel code "
                              f"out of the script pgstudio loads", name=fullname)
        return None


@contextlib.contextmanager
def ts_imports() -> Iterator[None]:
    """While active, ``import cutlass.experimental.task_scheduling...`` gives pgstudio.ts (module docstring)."""
    ts = sys.modules[__name__.rpartition(".")[0]]  # pgstudio.ts, imported before anything can call this
    aliases: dict[str, types.ModuleType] = {"cutlass": _stub("cutlass"), "cutlass.experimental": _stub(
        "cutlass.experimental"), "cutlass.pipeline": ts.pipeline, TS_PACKAGE: ts, f"{TS_PACKAGE}.pipeline": ts.pipeline}
    aliases.update({f"{TS_PACKAGE}.{sub}": ts for sub in TS_SUBMODULES})
    aliases["cutlass"].pipeline = ts.pipeline
    aliases["cutlass"].experimental = aliases["cutlass.experimental"]
    aliases["cutlass.experimental"].task_scheduling = ts
    hidden = {k: sys.modules.pop(k) for k in [k for k in sys.modules if k == "cutlass" or k.startswith("cutlass.")]}
    finder = _RefuseCutlass()
    sys.modules.update(aliases)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k == "cutlass" or k.startswith("cutlass.")]:
            del sys.modules[k]
        sys.modules.update(hidden)


def _raised_in_pgstudio(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc`` is pgstudio.ts's own code (a call form of TS that it
    does not take), rather than the script's or a library's the script called."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve().is_relative_to(Path(__file__).resolve().parent)


def _script_line(exc: BaseException, path: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return f", line {frames[-1].lineno}" if frames else ""


def load(path: str | Path) -> Design:
    """Run the TS script at ``path`` and return the design its ``TaskManager`` built (see the
    module docstring, and its security note)."""
    p = Path(path)
    try:
        source = p.read_text()
    except OSError as exc:
        raise PgStudioError(f"cannot read TS script {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # a binary file given as a script
        raise PgStudioError(f"cannot read TS script {str(path)!r}: it is not UTF-8 text ({exc.reason} at byte "
                            f"{exc.start}); give a Python script") from None
    filename = str(p)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        raise DesignError(f"ts: {filename}, line {exc.lineno}: {exc.msg}", code="ts.script",
                          hint="fix the script's syntax") from None
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename, "__builtins__": builtins}
    token, managers = capture_managers()
    argv = sys.argv
    try:
        sys.argv = [filename]
        with ts_imports():
            exec(code, namespace)
    except DesignError as exc:
        raise type(exc)(f"{filename}{_script_line(exc, filename)}: {exc.args[0] if exc.args else exc}",
                        code=exc.code) from exc
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # say where, in one line, and whose failure it is
        call_form = classify(exc, filename, source, namespace) if isinstance(exc, TypeError) else None
        if call_form is not None:  # a call of a pgstudio.ts name: TS's verdict on its form decides
            raise call_form from exc
        missing = missing_attribute(exc) if isinstance(exc, AttributeError) else None
        if missing is not None:  # a TS attribute of a class pgstudio.ts models, not modelled yet
            raise type(missing)(f"{filename}{_script_line(exc, filename)}: {missing.message}", code=missing.code,
                                hint=missing.hint) from exc
        where = f"{type(exc).__name__}{_script_line(exc, filename)}: {exc}"
        if _raised_in_pgstudio(exc):  # a TS call pgstudio.ts does not take: not the script's fault
            raise DesignError(f"ts: pgstudio cannot build this yet: running {filename} raised {where}",
                              code="ts.unsupported", hint="keep this part in TS, or tell pgstudio's maintainers "
                              "which TS call it refused") from exc
        raise DesignError(f"ts: running {filename} raised {where}", code="ts.script",
                          hint="fix the script (it runs once, under pgstudio.ts names)") from exc
    finally:
        sys.argv = argv
        stop_capture(token)
    if len(managers) != 1:
        raise DesignError(f"ts: {filename} built {len(managers)} TaskManager(s), expected exactly one",
                          code="ts.script", hint="build one TaskManager(tasks=..., resource_dependency_graph=...) at "
                          "module level (or in a function the script calls)")
    return managers[0].design


__all__ = ["TS_PACKAGE", "load", "ts_imports"]
