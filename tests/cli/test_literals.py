"""A number literal no float32 holds (a 309-digit integer, ``1e39``) is one clear error in every
command that reads the expression, never an internal error (exit 70)."""

import dataclasses

import pytest

from pgstudio import cli, examples
from pgstudio.cli import EXIT_BUG
from pgstudio.model.resource import Compute

BIG = "1" + "0" * 308


@pytest.fixture(params=[f"smem_a * {BIG}", "smem_a * 1e39", "smem_b + 1e-46f"], ids=["309 digits", "1e39", "1e-46"])
def design_file(request, tmp_path):
    d = examples.merge_copy()
    d = d.with_resource(dataclasses.replace(d.resource("gmem_d"), compute=Compute("store", request.param)))
    path = tmp_path / "design.json"
    path.write_text(d.to_json())
    return str(path)


@pytest.mark.parametrize("argv, status", [
    (["check"], 1), (["emit"], 2), (["compile", "--quiet"], 2), (["export-ts"], 2), (["render", "--no-png"], 0)])
def test_every_command_reports_the_literal_in_one_line(design_file, tmp_path, capsys, argv, status):
    out_flag = ["--out", str(tmp_path / "out")] if argv[0] in ("render", "export-ts", "emit") else []
    got = cli.main([argv[0], design_file, *argv[1:], *out_flag])
    out, err = capsys.readouterr()
    assert got == status != EXIT_BUG, err
    assert "Traceback" not in err and "OverflowError" not in out + err
    if status:
        assert "expression" in out + err and "float32" in out + err
        assert max(len(line) for line in (out + err).splitlines()) < 700  # the literal is abbreviated
