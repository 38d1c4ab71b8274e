"""The house rules of imports (docs/architecture.md), read from the folders alone.

A design flows one way -- model -> analysis -> render / codegen -> runtime -> explore -> studio / ts
-> cli -- and every import, at module level, inside a function or under ``TYPE_CHECKING``, points
backwards along that arrow.  Siblings do not import each other: render is a branch of its own beside
codegen and runtime (pictures never run kernels, kernels never draw), and studio and ts are two
front ends.  The explorer sits above the runtime: it asks the runtime to time, never the reverse.  Each heavy
library belongs to one stage, ``model`` and ``analysis`` use the standard library only, nothing loads
a module by a string, and ``import pgstudio`` loads no heavy library.  The one exception is listed in
``ALLOWED`` with its reason.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import pgstudio

ROOT = Path(pgstudio.__file__).parent

#: The stage of each top-level module or package, in the order a design flows through them.
#: A module may import the stages before its own, and modules of its own stage's package.
LAYERS: dict[str, float] = {
    "errors": 0,
    "model": 1, "examples": 1.1, "mistakes": 1.2,  # designs built from the model alone
    "analysis": 2, "exercises": 2.5,  # exercises are answered by the analysis
    "render": 3, "codegen": 3,
    "runtime": 4,
    "explore": 5,  # variants, sweeps and tuning, above the runtime that times them
    "studio": 6, "ts": 6,
    "cli": 7,
    "__init__": 8, "__main__": 8,
}

#: Branches whose packages never import each other, in either direction.
SIBLINGS = ({"render", "codegen"}, {"render", "runtime"}, {"studio", "ts"})

#: (importer, imported) -> why this one upward import is right.
ALLOWED: dict[tuple[str, str], str] = {
    ("pgstudio.model.design", "pgstudio.analysis.validate"):
        "Design.validate(), the model's API for every diagnostic at once: the method's body delegates to the rule table",
    ("pgstudio.model.design", "pgstudio.ts._export"):
        "Design.to_ts(), a design written as a TS script: the method's body delegates to the TS exporter",
}

HEAVY = {"graphviz": "render", "matplotlib": "render", "plotly": "render", "cupy": "runtime", "ipywidgets": "studio", "ray": "runtime"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module_level_only: bool = False):
    """(absolute name imported, line) for every import in ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import) and (inner or not module_level_only):
                for alias in child.names:
                    yield alias.name, child.lineno
            elif isinstance(child, ast.ImportFrom) and (inner or not module_level_only):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    name = ".".join(base + ([child.module] if child.module else []))
                else:
                    name = child.module
                for alias in child.names:  # from .pkg import module / from .module import name
                    yield f"{name}.{alias.name}", child.lineno
            if module_level_only and not inner:
                continue
            yield from visit(child, inner)

    return list(visit(tree, True))


def _files():
    return sorted(ROOT.rglob("*.py"))


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _known(name: str) -> str | None:
    """The pgstudio module ``name`` refers to (``pkg.mod.attr`` -> ``pkg.mod``), or None."""
    parts = name.split(".")
    while parts:
        candidate = ROOT.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return None


def _edges():
    """(importer, imported pgstudio module, line) for every import of a pgstudio module."""
    for path in _files():
        importer = _module_name(path)
        for name, line in _imports(path):
            if name and name.split(".")[0] == "pgstudio":
                target = _known(name)
                if target is not None and target != importer:
                    yield importer, target, line


def test_the_scan_sees_relative_lazy_and_type_checking_imports():
    design = ROOT / "model" / "design.py"
    top = {_known(name) for name, _ in _imports(design, True)}
    assert "pgstudio.model.group" in top and "pgstudio.errors" in top
    assert "pgstudio.analysis.validate" not in top  # imported inside validate(), not at module level
    assert "pgstudio.analysis.validate" in {_known(name) for name, _ in _imports(design)}
    assert _known("pgstudio.render.display.bundle") == "pgstudio.render.display"


def test_every_module_belongs_to_a_stage():
    stages = {_stage(_module_name(p)) for p in _files()}
    assert stages <= set(LAYERS), f"stages without a layer: {sorted(stages - set(LAYERS))}"


def test_every_import_points_backwards():
    wrong = []
    for importer, target, line in _edges():
        a, b = _stage(importer), _stage(target)
        if a == b or b == "errors" or (importer, target) in ALLOWED:
            continue
        sibling = any({a, b} <= group for group in SIBLINGS)
        if LAYERS[b] >= LAYERS[a] or sibling:
            wrong.append(f"{importer}:{line} imports {target} ({a} -> {b})")
    assert not wrong, "imports against the flow model -> analysis -> render / codegen -> runtime -> explore -> " \
                      "studio / ts -> cli:\n" + "\n".join(wrong)


def test_runtime_and_render_are_branches_below_the_explorer():
    """What the layers above mean for the GPU: the runtime imports neither the explorer nor render,
    render imports neither the runtime nor the explorer, and the explorer reaches the GPU only
    through the runtime (it imports it; CuPy is the runtime's alone)."""
    edges = {(_stage(i), _stage(t)) for i, t, _ in _edges()}
    assert ("explore", "runtime") in edges  # the scan sees the explorer's use of the runtime
    for low, high in (("runtime", "explore"), ("runtime", "render"), ("render", "runtime"), ("render", "explore"),
                      ("model", "explore"), ("analysis", "explore"), ("codegen", "explore")):
        assert (low, high) not in edges, f"{low}/ imports {high}/"


def test_the_allow_list_is_short_and_still_needed():
    edges = {(i, t) for i, t, _ in _edges()}
    assert len(ALLOWED) <= 3
    assert set(ALLOWED) <= edges, f"allow-list entries no longer needed: {sorted(set(ALLOWED) - edges)}"


def test_no_module_import_cycles():
    """No two modules import each other through any chain, apart from the allowed upward edges."""
    graph: dict[str, set[str]] = {}
    for importer, target, _ in _edges():
        if (importer, target) not in ALLOWED:
            graph.setdefault(importer, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in list(graph):
        if v not in index:
            connect(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("path", [p for p in _files() if _stage(_module_name(p)) in ("model", "analysis")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_model_and_analysis_import_only_the_standard_library(path):
    for name, line in _imports(path):
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or top in ("__future__", "pgstudio"), \
            f"{path.relative_to(ROOT)}:{line} imports {name}"


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_heavy_library_is_imported_by_its_stage_only(path):
    stage = _stage(_module_name(path))
    for name, line in _imports(path):
        owner = HEAVY.get(name.split(".")[0])
        assert owner is None or owner == stage, f"{path.relative_to(ROOT)}:{line} imports {name} (only {owner}/ may)"


def test_nothing_loads_a_module_by_name():
    """Modules are imported by import statements the scan above can see, never by strings."""
    offenders = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if name in ("import_module", "__import__"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_import_pgstudio_loads_no_heavy_library():
    code = ("import sys, pgstudio, pgstudio.examples, pgstudio.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'graphviz', 'matplotlib', 'cupy', 'ipywidgets', 'cuda', 'ray'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
