"""How a design LOOKS: the dependency graph (graphviz), the barrier layout and the timeline
(matplotlib).  Functions here return ``graphviz.Digraph`` / ``matplotlib.figure.Figure`` objects
or SVG text and write no files (only ``pgstudio render`` does).  graphviz and matplotlib are
imported when a picture is first drawn, not when this package is imported.
"""

from ._figure import to_png, to_svg
from .barriers import barrier_figure, comparison_figure, layout_svg
from .graph import dependency_graph, graph_svg
from .modes import modes_figure, modes_svg
from .timeline import timeline_figure, timeline_svg

__all__ = ["barrier_figure", "comparison_figure", "dependency_graph", "graph_svg", "layout_svg", "modes_figure",
           "modes_svg", "timeline_figure", "timeline_svg", "to_png", "to_svg"]
