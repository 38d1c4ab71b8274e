"""graphviz and matplotlib are imported only by ``pgstudio.render``, and only when drawing."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pgstudio"
HEAVY = ("graphviz", "matplotlib")


def test_importing_pgstudio_and_render_loads_no_drawing_library():
    code = ("import sys, pgstudio, pgstudio.render, pgstudio.render.display, pgstudio.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('graphviz', 'matplotlib')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_only_render_modules_import_graphviz_or_matplotlib():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(n.split(".")[0] in HEAVY for n in names) and path.parent.name != "render":
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not offenders, f"graphviz / matplotlib imported outside pgstudio/render: {offenders}"


def test_render_imports_them_inside_functions_only():
    for path in (PACKAGE / "render").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(m.split(".")[0] in HEAVY for m in mods), f"{path.name}:{node.lineno}"
