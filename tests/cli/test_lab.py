"""`pgstudio lab`: opens JupyterLab on a folder, with clear messages for what is missing."""

import subprocess

from pgstudio import cli
from pgstudio.cli import lab as lab_cli


def test_lab_missing_folder_is_a_message(tmp_path, capsys):
    assert cli.main(["lab", str(tmp_path / "nope")]) == 2
    assert "no folder" in capsys.readouterr().err


def test_lab_without_jupyterlab_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lab_cli.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["lab", str(tmp_path)]) == 2
    assert "pgstudio[studio]" in capsys.readouterr().err


def test_lab_starts_jupyter_lab_on_the_folder(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(subprocess, "call", lambda cmd: seen.setdefault("cmd", cmd) and 0)
    assert cli.main(["lab", str(tmp_path), "--port", "8899"]) == 0
    assert seen["cmd"][1:4] == ["-m", "jupyter", "lab"]
    assert str(tmp_path) in seen["cmd"] and "--port=8899" in seen["cmd"]
    # notebooks are saved tidy: the contents manager's pre-save hook strips widget views and state
    assert "--ContentsManager.pre_save_hook=pgstudio.studio._notebook_save.pre_save_hook" in seen["cmd"]


def test_lab_as_root_passes_allow_root(tmp_path, monkeypatch):
    """JupyterLab refuses to run as root unless told; pgstudio tells it when it runs as root (a
    container) or when asked with --allow-root, and not otherwise."""
    seen = []
    monkeypatch.setattr(subprocess, "call", lambda cmd: seen.append(cmd) and 0)
    monkeypatch.setattr(lab_cli, "_is_root", lambda: False)
    assert cli.main(["lab", str(tmp_path)]) == 0 and "--allow-root" not in seen[-1]
    assert cli.main(["lab", str(tmp_path), "--allow-root"]) == 0 and "--allow-root" in seen[-1]
    monkeypatch.setattr(lab_cli, "_is_root", lambda: True)
    assert cli.main(["lab", str(tmp_path)]) == 0 and "--allow-root" in seen[-1]
