"""``pgstudio compile``: NVRTC refusing the kernel of a design that validates is a bug in
pgstudio (exit 70), a design with errors is the user's to fix (exit 2).

NVRTC's refusal is planted (``compile_cubin`` replaced), so these tests need no compiler."""

import dataclasses

import pytest

from pgstudio import cli, examples
from pgstudio.cli import EXIT_BUG, EXIT_USAGE
from pgstudio.cli import compile as compile_cmd
from pgstudio.errors import CompileError
from pgstudio.model.config import CooperativeGroup
from pgstudio.model.kinds import Agent


def refuse(src, *args, **kwargs):
    raise CompileError(f"NVRTC rejected the kernel of design {src.design!r} for {src.arch}: line 1: planted", "log")


@pytest.fixture
def nvrtc_refuses(monkeypatch):
    monkeypatch.setattr(compile_cmd, "compile_cubin", refuse)


def write(tmp_path, design):
    path = tmp_path / "design.json"
    path.write_text(design.to_json())
    return str(path)


def test_nvrtc_rejecting_a_valid_design_is_a_bug(tmp_path, capsys, nvrtc_refuses):
    design = examples.merge_copy()
    assert design.validate().ok
    status = cli.main(["compile", write(tmp_path, design), "--arch", "sm_90a", "--quiet"])
    err = capsys.readouterr().err
    assert status == EXIT_BUG
    assert "internal error, this is a bug" in err and "GeneratedCodeRejected" in err
    assert "which validates for sm_90a" in err and "planted" in err


def test_nvrtc_rejecting_a_valid_design_is_a_bug_with_no_validate_too(tmp_path, capsys, nvrtc_refuses):
    status = cli.main(["compile", write(tmp_path, examples.merge_copy()), "--arch", "sm_100a", "--quiet",
                       "--no-validate"])
    assert status == EXIT_BUG and "GeneratedCodeRejected" in capsys.readouterr().err


def test_nvrtc_rejecting_a_design_with_errors_compiled_on_request_is_the_users_mistake(tmp_path, capsys,
                                                                                        nvrtc_refuses):
    d = examples.merge_copy()
    r = d.resource("smem_a")  # a consumer group of the wrong size: an error, yet the generator builds it
    bad = d.with_resource(dataclasses.replace(r, pipeline_config=dataclasses.replace(
        r.pipeline_config, consumer_group=CooperativeGroup(Agent.Thread, 32))))
    assert not bad.validate().ok
    status = cli.main(["compile", write(tmp_path, bad), "--arch", "sm_90a", "--quiet", "--no-validate"])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and "planted" in err and "bug" not in err


def test_a_design_with_errors_is_refused_before_nvrtc(tmp_path, capsys, nvrtc_refuses):
    design = examples.merge_copy()
    bad = design.with_resource(dataclasses.replace(design.resource("gmem_d"),
                                                   compute=dataclasses.replace(design.resource("gmem_d").compute,
                                                                               expr="smem_a * 1e39")))
    status = cli.main(["compile", write(tmp_path, bad), "--quiet"])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and "compute.expr" in err and "float32 range" in err
