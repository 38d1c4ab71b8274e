"""``pgstudio`` on the command line: demo | check | example | (render | emit | bench | lab as they land).

Every command prints a clear message and exits non-zero on bad input; no traceback reaches the
user for a problem of theirs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from .errors import PgStudioError

COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], Callable[[argparse.ArgumentParser], None], str]] = {}


def command(name: str, help: str):
    """Register ``fn(args) -> exit status`` with an ``add_args(parser)`` helper."""
    def wrap(fn):
        COMMANDS[name] = (fn, getattr(fn, "add_args", lambda p: None), help)
        return fn
    return wrap


def load_design(path: str):
    from .model.design import Design
    p = Path(path)
    if not p.is_file():
        raise PgStudioError(f"no design file at {path!r}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PgStudioError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    return Design.from_json(data)


def _check_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="a design JSON file (pgstudio example NAME --out FILE writes one)")
    p.add_argument("--exhaustive", action="store_true", help="also run the exhaustive deadlock / race checker")
    p.add_argument("--iterations", type=int, default=4, help="iterations of the domain loop the checker explores")


def cmd_check(args: argparse.Namespace) -> int:
    from .analysis.layout import barrier_layout, smem_layout
    design = load_design(args.design)
    report = design.validate(checker=args.exhaustive, iterations=args.iterations)
    print(report)
    print()
    print(barrier_layout(design).table())
    print(smem_layout(design).report())
    return 0 if report.ok else 1


cmd_check.add_args = _check_args
command("check", "validate a design file: all diagnostics and the barrier layout")(cmd_check)


def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="pgstudio-demo", help="folder for the files the demo writes")


def cmd_demo(args: argparse.Namespace) -> int:
    from . import examples
    from .analysis.layout import barrier_layout, smem_layout
    status = 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, build in examples.CANONICAL.items():
        design = build()
        twin = examples.ungrouped(design)
        report = design.validate()
        layout, twin_layout = barrier_layout(design), barrier_layout(twin)
        print(f"=== {name}: {design.summary()}")
        print(report)
        print(layout.table())
        print(smem_layout(design).report())
        saved = twin_layout.num_barriers - layout.num_barriers
        print(f"grouped {layout.num_barriers} barriers vs ungrouped {twin_layout.num_barriers} ({saved} saved)")
        (out / f"{name}.json").write_text(design.to_json())
        status |= 0 if report.ok else 1
        for hook in DEMO_HOOKS:
            hook(name, design, out)
        print()
    print(f"design files written to {out}/")
    return status


cmd_demo.add_args = _demo_args
command("demo", "build, validate and lay out the canonical designs")(cmd_demo)

#: Later stages (pictures, compile, benchmark) add per-design steps to the demo here.
DEMO_HOOKS: list[Callable] = []


def add_demo_hook(fn: Callable) -> None:
    """Add ``fn(name, design, out)`` to the demo once (modules may be imported again)."""
    key = (fn.__module__, fn.__qualname__)
    if key not in {(h.__module__, h.__qualname__) for h in DEMO_HOOKS}:
        DEMO_HOOKS.append(fn)


def _example_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="canonical design name; omit to list them")
    p.add_argument("--out", help="write the design JSON here (default: print it)")
    p.add_argument("--ungrouped", action="store_true", help="the per-resource-barrier twin instead")


def cmd_example(args: argparse.Namespace) -> int:
    from . import examples
    if not args.name:
        print("\n".join(examples.CANONICAL))
        return 0
    design = examples.example(args.name)
    if args.ungrouped:
        design = examples.ungrouped(design)
    if args.out:
        Path(args.out).write_text(design.to_json())
        print(f"wrote {args.out}")
    else:
        print(design.to_json())
    return 0


cmd_example.add_args = _example_args
command("example", "list canonical designs or write one as JSON")(cmd_example)


def _load_extensions() -> None:
    """Commands living beside their stage register themselves on import (missing ones are skipped)."""
    import importlib
    for mod in ("pgstudio.analysis.cli_check", "pgstudio.render.cli", "pgstudio.codegen.cli",
                "pgstudio.runtime.cli", "pgstudio.runtime.cli_sweep", "pgstudio.studio.cli"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def build_parser() -> argparse.ArgumentParser:
    _load_extensions()
    parser = argparse.ArgumentParser(prog="pgstudio", description="design, check, draw, compile and benchmark "
                                     "mbarrier pipelines and PipelineGroups")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (fn, add_args, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
        p.set_defaults(func=fn)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
