"""The house rules of imports (ARCHITECTURE.md): model/ and analysis/ use the standard library
only; each heavy library belongs to one stage; ``import pgstudio`` loads none of them."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import pgstudio

ROOT = Path(pgstudio.__file__).parent
HEAVY = {"graphviz": "render", "matplotlib": "render", "cupy": "runtime", "ipywidgets": "studio"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module_level_only: bool):
    """Absolute names of what ``path`` imports (relative imports resolved)."""
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
                yield name, child.lineno
                if not child.module:  # from . import x
                    for alias in child.names:
                        yield f"{name}.{alias.name}", child.lineno
            if module_level_only and not inner:
                continue
            yield from visit(child, inner)

    return list(visit(tree, True))


def _files(*subdirs):
    return sorted(p for d in subdirs for p in (ROOT / d).rglob("*.py"))


def test_the_scan_sees_relative_and_lazy_imports():
    design = ROOT / "model" / "design.py"
    top = {name for name, _ in _imports(design, True)}
    assert "pgstudio.model.group" in top and "pgstudio.errors" in top
    assert "pgstudio.analysis.validate" not in top  # imported inside validate(), not at module level
    assert "pgstudio.analysis.validate" in {name for name, _ in _imports(design, False)}


@pytest.mark.parametrize("path", _files("model", "analysis"), ids=lambda p: str(p.relative_to(ROOT)))
def test_model_and_analysis_import_only_the_standard_library_at_module_level(path):
    allowed_pkg = ("pgstudio.model", "pgstudio.errors") + (("pgstudio.analysis",) if "analysis" in path.parts else ())
    for name, line in _imports(path, module_level_only=True):
        top = name.split(".")[0]
        ok = top in sys.stdlib_module_names or top == "__future__" or name.startswith(allowed_pkg)
        assert ok, f"{path.relative_to(ROOT)}:{line} imports {name} at module level"


@pytest.mark.parametrize("path", _files("."), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_heavy_library_is_imported_by_its_stage_only(path):
    stage = path.relative_to(ROOT).parts[0]
    for name, line in _imports(path, module_level_only=False):
        owner = HEAVY.get(name.split(".")[0])
        assert owner is None or owner == stage, f"{path.relative_to(ROOT)}:{line} imports {name} (only {owner}/ may)"


def test_import_pgstudio_loads_no_heavy_library():
    code = ("import sys, pgstudio, pgstudio.examples, pgstudio.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'graphviz', 'matplotlib', 'cupy', 'ipywidgets', 'cuda'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
