"""A user's mistakes on the command line end in one line naming the problem and the fix, exit 2;
pgstudio's own failures end in a short "this is a bug" report, exit 70; never a traceback."""

from __future__ import annotations

import json

import pytest

from pgstudio import cli, examples


@pytest.fixture
def design_file(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(examples.merge_copy().to_json())
    return path


def run(capsys, *argv):
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse: usage line + one error line
        status = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("argv,phrases", [
    (["check", "{tmp}/missing.json"], ["no design file at", "missing.json", "fix: check the path"]),
    (["check", "{tmp}"], ["is a folder, expected a design file", "fix: name the JSON file inside it"]),
    (["check", "{tmp}/bad.json"], ["design file is not valid JSON", "fix:"]),
    (["check", "{tmp}/stages.json"], ["num_stages is 0, expected an integer from 1 to 64", "fix:"]),
    (["emit", "{d}", "-o", "{tmp}/no/such/folder/k.cu"], ["folder", "does not exist", "fix: create it first"]),
    (["emit", "{d}", "-o", "{tmp}"], ["is a folder, expected a file to write", "fix: give a file name"]),
    (["emit", "{tmp}/d.cu"], ["is the design file itself", "fix: give another output path"]),
    (["render", "{d}", "--out", "{d}", "--no-png"], ["is a file, expected a folder", "fix: give a folder name"]),
    (["trace", "{d}", "--simulate", "--out", "{tmp}/nowhere/t.json"], ["does not exist", "fix:"]),
    (["example", "merge_copy", "--out", "{tmp}/x/y.json"], ["does not exist", "fix:"]),
    (["example", "nope"], ["no example named 'nope'"]),
])
def test_a_user_mistake_is_one_line_and_exit_2(tmp_path, design_file, capsys, argv, phrases):
    (tmp_path / "bad.json").write_text("{not json")
    obj = json.loads(design_file.read_text())
    obj["resources"][2]["pipeline_config"]["num_stages"] = 0
    (tmp_path / "stages.json").write_text(json.dumps(obj))
    (tmp_path / "d.cu").write_text(design_file.read_text())  # a design file that ends in .cu
    before = sorted(p.name for p in tmp_path.iterdir())
    status, out, err = run(capsys, *(a.format(tmp=tmp_path, d=design_file) for a in argv))
    line = one_line(err)
    assert status == 2 and line.startswith(f"pgstudio {argv[0]}: "), err
    for phrase in phrases:
        assert phrase in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing half-written, no design replaced


@pytest.mark.parametrize("argv,phrase", [
    (["check", "{d}", "--iterations", "0"], "argument --iterations: 0 is out of range, expected 1 to 1000"),
    (["check", "{d}", "--iterations", "1000000000"], "out of range, expected 1 to 1000"),
    (["check", "{d}", "--max-states", "many"], "'many' is not a whole number"),
    (["render", "{d}", "--inner", "-3"], "argument --inner"),
    (["sweep", "{d}", "--stages", "0"], "argument --stages"),
    (["bench", "{d}", "--budget-ms", "nan"], "argument --budget-ms"),
])
def test_a_flag_out_of_range_is_an_argparse_error(design_file, capsys, argv, phrase):
    status, _, err = run(capsys, *(a.format(d=design_file) for a in argv))
    assert status == 2 and phrase in err and "usage:" in err


def test_outputs_are_written_whole_and_an_existing_output_is_replaced(design_file, tmp_path, capsys):
    target = tmp_path / "k.cu"
    target.write_text("old")
    status, out, err = run(capsys, "emit", design_file, "-o", target)
    assert status == 0 and err == "" and f"wrote {target}" in out
    assert "__global__" in target.read_text() and sorted(p.name for p in tmp_path.iterdir()) == ["d.json", "k.cu"]


def test_an_internal_error_is_a_short_bug_report_with_exit_70(design_file, capsys, monkeypatch):
    from pgstudio.cli import check as check_cmd

    def broken(design):
        return 1 // 0
    monkeypatch.setattr(check_cmd, "diagnostics", broken)
    status, out, err = run(capsys, "check", design_file)
    lines = err.strip().splitlines()
    assert status == cli.EXIT_BUG == 70 and len(lines) == 2
    assert lines[0].startswith("pgstudio check: internal error, this is a bug in pgstudio")
    assert "ZeroDivisionError: integer division or modulo by zero at pgstudio/cli/check.py:" in lines[0]  # our frame
    assert "please report it" in lines[1] and "PGSTUDIO_TRACEBACK=1" in lines[1]


def test_pgstudio_traceback_shows_the_traceback_for_whoever_fixes_it(design_file, capsys, monkeypatch):
    from pgstudio.cli import check as check_cmd

    def broken(design):
        raise RuntimeError("boom")
    monkeypatch.setattr(check_cmd, "diagnostics", broken)
    monkeypatch.setenv("PGSTUDIO_TRACEBACK", "1")
    status = cli.main(["check", str(design_file)])
    err = capsys.readouterr().err
    assert status == 70 and "Traceback (most recent call last)" in err and "RuntimeError: boom" in err


def test_an_error_that_lists_several_is_one_line_with_the_first_and_a_count(tmp_path, capsys):
    obj = json.loads(examples.merge_copy().to_json())
    obj["resources"][3]["pipeline_config"]["num_stages"] = 3  # the Merge's stages differ
    obj["tasks"][2]["num_warps"] = 2  # the store task has fewer threads than its groups declare
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(obj))
    status, out, err = run(capsys, "emit", path, "-o", tmp_path / "k.cu")
    line = one_line(err)
    assert status == 2 and line.startswith("pgstudio emit: design 'merge_copy' cannot be built for sm_90a: 3 error(s): ")
    assert "[group.num_stages]" in line and "fix:" in line and line.endswith("; 2 more: pgstudio check lists every one")
    assert not (tmp_path / "k.cu").exists()


@pytest.mark.parametrize("flag", ["--png", "--results"])
def test_a_sweep_output_in_a_missing_folder_is_one_line(design_file, tmp_path, capsys, flag):
    target = tmp_path / "no" / "such" / "x.out" if flag == "--png" else tmp_path / "d.json" / "r.jsonl"
    status, out, err = run(capsys, "sweep", design_file, "--compile-only", "--stages", "2", "--tiles", "1024",
                           "--grouping", "designed", "--executor", "inline", "--quiet", flag, target)
    line = one_line(err)
    assert status == 2 and line.startswith("pgstudio sweep: ") and "fix:" in line, err
