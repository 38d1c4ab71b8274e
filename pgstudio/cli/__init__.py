"""``pgstudio`` on the command line: one module per command, listed here in the order ``--help`` shows them.

The command line sits on top of the house: it imports the stages (model, analysis, render,
codegen, runtime) and none of them imports it.  Each command module has ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> exit status``.  A user's mistake (a bad file, a bad
value, a bad output path) raises ``PgStudioError``; ``main`` prints it as one line and exits with
status 2, never with a traceback.  Anything else is pgstudio's fault: ``main`` prints a short
"this is a bug" report naming the exception and where it was raised, and exits with status 70
(``EXIT_BUG``, sysexits' EX_SOFTWARE); ``PGSTUDIO_TRACEBACK=1`` adds the traceback for whoever
fixes it.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from types import ModuleType

from ..errors import PgStudioError
from . import bench, check, compile, demo, emit, example, export_ts, import_ts, lab, render, sweep, trace
from ._common import load_design


def _version() -> str:
    """The installed distribution's version (what pyproject.toml says), without importing the
    package's top level, which the command line sits below."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pgstudio")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"

#: Every command, in the order ``pgstudio --help`` lists them.
COMMANDS: tuple[ModuleType, ...] = (demo, check, example, render, emit, compile, bench, sweep, trace, lab,
                                    import_ts, export_ts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pgstudio", description="design, check, draw, compile and benchmark "
                                     "mbarrier pipelines and PipelineGroups")
    parser.add_argument("--version", action="version", version=f"pgstudio {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


#: Exit status of a user's mistake (argparse uses it for bad flags too).
EXIT_USAGE = 2
#: Exit status of an internal error: a bug in pgstudio (sysexits' EX_SOFTWARE).
EXIT_BUG = 70


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PgStudioError as exc:
        print(f"pgstudio {args.command}: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes a report instead of a traceback
        print(bug_report(args.command, exc), file=sys.stderr)
        if os.environ.get("PGSTUDIO_TRACEBACK"):
            traceback.print_exception(exc)
        return EXIT_BUG


def one_line(exc: PgStudioError) -> str:
    """The error as one line: an error that lists several (``emit`` on a design with errors: a
    head line, then one indented ``[code] message (fix: ...)`` line each) gives its head, the
    first of them and how many more ``pgstudio check`` lists."""
    head, *rest = [line.strip() for line in str(exc).strip().splitlines()] or [""]
    if not rest:
        return " ".join(head.split())
    more = f"; {len(rest) - 1} more: pgstudio check lists every one" if len(rest) > 1 else ""
    return " ".join(f"{head.rstrip(':')}: {rest[0]}{more}".split())


def bug_report(command: str, exc: BaseException) -> str:
    """Two lines: what went wrong and where (the innermost pgstudio frame), and what to do."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}pgstudio{os.sep}" in f.filename] or frames
    where = ""
    if ours:
        f = ours[-1]
        path = f.filename[f.filename.rfind(f"pgstudio{os.sep}"):] if f"pgstudio{os.sep}" in f.filename else f.filename
        where = f" at {path}:{f.lineno} in {f.name}"
    text = " ".join(str(exc).split())[:300]
    return (f"pgstudio {command}: internal error, this is a bug in pgstudio {_version()}: "
            f"{type(exc).__name__}: {text}{where}\n"
            f"please report it with the command line and the design file; PGSTUDIO_TRACEBACK=1 shows the traceback")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pgstudio")
    except PackageNotFoundError:
        return "(not installed)"


__all__ = ["COMMANDS", "EXIT_BUG", "EXIT_USAGE", "bug_report", "build_parser", "load_design", "main", "one_line"]
