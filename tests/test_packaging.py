"""Set-up files agree: environment.yml mirrors pyproject.toml's dependencies and lower bounds,
the README opens with the two set-up commands, and CI runs the README's test command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: pip name -> conda-forge name where they differ; None: not on conda-forge (a binary stands in).
CONDA_NAME = {"graphviz": "python-graphviz", "matplotlib": "matplotlib-base", "graphviz-pure": None}
#: Extras that environment.yml mirrors; the GPU-only ones are named there in a comment.
MIRRORED = ("render", "studio", "nvrtc", "cluster", "ts", "dev", "docs")
GPU_ONLY = ("gpu", "triton")


def _requirement(spec: str) -> tuple[str, str]:
    name, bound = re.match(r"([A-Za-z0-9_.\-]+)(.*)", spec.replace(" ", "")).groups()
    return name.lower(), bound


def _environment() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out: dict[str, str] = {}
    for dep in env["dependencies"]:
        for spec in (dep["pip"] if isinstance(dep, dict) else [dep]):
            if not spec.startswith("-"):
                name, bound = _requirement(spec)
                out[name] = bound
    return out


def test_environment_yml_mirrors_pyproject_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = _environment()
    missing = []
    wanted = [("dependencies", spec) for spec in project["dependencies"]]
    wanted += [(extra, spec) for extra in MIRRORED for spec in project["optional-dependencies"][extra]]
    for extra, spec in wanted:
        name, bound = _requirement(spec)
        if name == "pgstudio":
            continue
        conda = CONDA_NAME.get(name, name)
        if conda is None:
            continue
        if conda not in env or env[conda] != bound:
            missing.append(f"{extra}: {name}{bound} (environment.yml has {conda}{env.get(conda, ' nothing')})")
    assert not missing, "environment.yml does not mirror pyproject.toml:\n" + "\n".join(missing)
    assert "graphviz" in env, "environment.yml must bring the graphviz binary (dot)"


def test_every_extra_is_mirrored_or_named_for_gpu_machines():
    """An extra environment.yml does not install is a GPU-only one whose requirements it names in
    a comment, with the same lower bounds."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) == set(MIRRORED) | set(GPU_ONLY)
    comments = " ".join(line for line in (ROOT / "environment.yml").read_text().splitlines()
                        if line.lstrip().startswith("#"))
    for extra in GPU_ONLY:
        for spec in extras[extra]:
            if not spec.startswith("pgstudio"):
                assert spec.replace(" ", "") in comments, f"environment.yml names no {spec} (extra {extra!r})"


def test_readme_opens_with_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    first_block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert text.index("make demo") < text.index("## ")


def test_ci_installs_the_cluster_extra():
    """The Ray executor's tests run in CI (they fail there instead of skipping when Ray is missing)."""
    makefile = (ROOT / "Makefile").read_text()
    extras = re.search(r"^EXTRAS \?= (.*)$", makefile, re.M).group(1).split(",")
    assert "cluster" in extras and "nvrtc" in extras


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test\s*$", ci, re.M)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: ", makefile, re.M) and re.search(r"^demo: ", makefile, re.M)
