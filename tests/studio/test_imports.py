"""ipywidgets is imported by pgstudio.studio alone, and only when the Studio is used; the studio
draws through render/ and runs through runtime/, never importing their libraries itself."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pgstudio"


def imported(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_only_the_studio_imports_ipywidgets():
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if "ipywidgets" in set(imported(p)) and p.parent.name != "studio"]
    assert not offenders


def test_the_studio_imports_no_drawing_or_gpu_library():
    for p in (PACKAGE / "studio").glob("*.py"):
        assert not set(imported(p)) & {"graphviz", "matplotlib", "cupy", "cuda"}, p.name


def test_derive_is_standard_library_only():
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    assert set(imported(PACKAGE / "model" / "derive.py")) <= allowed


def test_importing_pgstudio_studio_loads_no_widgets():
    code = "import sys, pgstudio, pgstudio.studio; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
