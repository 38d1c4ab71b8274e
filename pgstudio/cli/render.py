"""``pgstudio render design.json --out DIR``: the pictures of a design as SVG and PNG.

Writes ``graph``, ``barriers``, ``barriers_vs_ungrouped`` (when the design has groups) and
``timeline`` (simulated) as ``.svg`` and ``.png``.  ``pgstudio demo`` writes the same pictures of
each canonical design under ``<out>/<design>/``.  The render stage returns pictures; writing them
to files is the command line's job, here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..analysis.cost import design_cost
from ..analysis.simulate import simulate
from ..errors import PgStudioError
from ..render import barrier_figure, comparison_figure, dependency_graph, timeline_figure, to_png, to_svg
from ._common import MAX_ITERATIONS, count, design_argument, load_design, output_folder, write_output

__all__ = ["NAME", "HELP", "simulated", "write_pictures", "add_arguments", "run"]

NAME = "render"
HELP = "draw a design: dependency graph, barrier layout and timeline (SVG + PNG)"


def simulated(design: Any, iterations: int, inner: int = 4) -> tuple[Any, str]:
    """(Timeline, "") from the simulator, or (None, why not).  ``inner`` caps inner loops (a GEMM's
    k tiles) so the picture shows a few output tiles rather than one long mainloop."""
    try:
        return simulate(design, iterations=iterations, inner=inner, cost=design_cost(design)[0]), ""
    except (PgStudioError, ValueError) as exc:  # an invalid design cannot be run: say why
        return None, f"timeline skipped: the design cannot be simulated: {exc}"


def write_pictures(design: Any, out: Path, *, iterations: int = 8, inner: int = 4, png: bool = True,
                   highlight: str | None = None) -> tuple[list[Path], list[str]]:
    """Draw and write every picture of ``design`` into ``out``; return (files written, notes)."""
    out = output_folder(out)
    written: list[Path] = []
    notes: list[str] = []

    def save(stem: str, svg: str, png_bytes: Any) -> None:
        written.append(write_output(out / f"{stem}.svg", svg))
        if png:
            written.append(write_output(out / f"{stem}.png", png_bytes()))

    graph = dependency_graph(design, highlight=highlight)
    save("graph", graph.pipe(format="svg").decode(), lambda: graph.pipe(format="png"))
    try:
        fig = barrier_figure(design)
        save("barriers", to_svg(fig), lambda: to_png(fig))
        if design.groups:
            cmp = comparison_figure(design)
            save("barriers_vs_ungrouped", to_svg(cmp), lambda: to_png(cmp))
    except PgStudioError as exc:  # e.g. a group whose members cannot be merged: the graph says why
        notes.append(f"barrier pictures skipped: {exc}")
    timeline, why = simulated(design, iterations, inner)
    if timeline is None:
        notes.append(why)
    else:
        fig = timeline_figure(timeline)
        save("timeline", to_svg(fig), lambda: to_png(fig))
    return written, notes


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--out", default="pgstudio-pictures", help="folder for the pictures (created if missing)")
    p.add_argument("--iterations", type=count(1, MAX_ITERATIONS), default=8,
                   help="outer-loop iterations of the simulated timeline")
    p.add_argument("--inner", type=count(1, MAX_ITERATIONS), default=4,
                   help="iterations of each inner loop (e.g. a GEMM's k tiles)")
    p.add_argument("--no-png", action="store_true", help="write SVG only")
    p.add_argument("--highlight", help="name of a resource, group or task to mark in the graph")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    names = [x.name for x in (*design.resources, *design.groups, *design.tasks)]
    if args.highlight and args.highlight not in names:
        raise PgStudioError(f"--highlight {args.highlight!r} names no resource, group or task of design "
                            f"{design.name!r}; names: {', '.join(names)}")
    written, notes = write_pictures(design, Path(args.out), iterations=args.iterations, inner=args.inner,
                                    png=not args.no_png, highlight=args.highlight)
    for path in written:
        print(f"wrote {path}")
    for note in notes:
        print(note)
    return 0 if not notes else 1
