"""``pgstudio`` on the command line: one module per command, listed here in the order ``--help`` shows them.

The command line sits on top of the house: it imports the stages (model, analysis, render,
codegen, runtime) and none of them imports it.  Each command module has ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> exit status``.  A user's mistake (a bad file, a bad
value) raises ``PgStudioError``; ``main`` prints it as one line and exits with status 2, never with
a traceback.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from ..errors import PgStudioError
from . import bench, check, compile, demo, emit, example, export_ts, import_ts, lab, render, sweep, trace
from ._common import load_design

#: Every command, in the order ``pgstudio --help`` lists them.
COMMANDS: tuple[ModuleType, ...] = (demo, check, example, render, emit, compile, bench, sweep, trace, lab,
                                    import_ts, export_ts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pgstudio", description="design, check, draw, compile and benchmark "
                                     "mbarrier pipelines and PipelineGroups")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PgStudioError as exc:
        print(f"pgstudio {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.
        return 0


__all__ = ["COMMANDS", "build_parser", "load_design", "main"]
