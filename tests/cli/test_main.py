"""The ``pgstudio`` command line: check, demo, example; user mistakes give a message, never a traceback."""

import json
import re
import subprocess
import sys

import pytest

from pgstudio import cli
from pgstudio import examples
from pgstudio.examples import CANONICAL


def merge_copy():
    return examples.merge_copy(num_stages=4, tile_bytes=8192)


def run(capsys, *argv):
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_check_a_valid_design(tmp_path, capsys):
    path = tmp_path / "merge_copy.json"
    path.write_text(merge_copy().to_json())
    status, out, err = run(capsys, "check", str(path))
    assert status == 0 and err == ""
    assert "design 'merge_copy': 0 error(s), 0 warning(s)" in out
    assert "ab.shared_empty  8..11  64..88" in out and "12 barriers, 96 bytes" in out
    assert "smem: data 65536 B + barriers 96 B = 65632 B of 232448 B" in out


def test_check_a_wrong_design_prints_every_error_and_exits_1(tmp_path, capsys):
    obj = json.loads(merge_copy().to_json())
    obj["resources"][3]["pipeline_config"]["num_stages"] = 3  # smem_b: the Merge's stages now differ
    obj["tasks"][2]["num_warps"] = 2  # the store task no longer has the 128 consumer threads declared
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(obj))
    status, out, _ = run(capsys, "check", str(path))
    assert status == 1
    assert "[group.num_stages]" in out and "[config.arrive_count]" in out
    assert "barriers" in out  # the layout table is printed even for a wrong design
    assert "one-click fix: set smem_b's num_stages to 4" in out
    assert "one-click fix: set smem_a's consumer_group to 2 Warps (64 threads)" in out
    assert "checker" not in out  # not asked for


def test_check_runs_the_checker_only_without_rule_errors(tmp_path, capsys):
    obj = json.loads(merge_copy().to_json())
    obj["resources"][3]["pipeline_config"]["num_stages"] = 3
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(obj))
    status, out, _ = run(capsys, "check", str(path), "--exhaustive", "--iterations", "2")
    assert status == 1
    assert "checker: not run: fix the errors above first" in out and "SAFE" not in out
    assert "('smem_b', 3)" not in out and "could not run" not in out
    good = tmp_path / "good.json"
    good.write_text(merge_copy().to_json())
    status, out, _ = run(capsys, "check", str(good), "--exhaustive", "--iterations", "2")
    assert status == 0 and "checker: SAFE" in out and "not run" not in out


@pytest.mark.parametrize("content,phrase", [
    (None, "no design file at"),
    ("{not json", "design file is not valid JSON"),
    ('{"schema": "pgstudio.design", "version": 9}', "version: 9 is not supported"),
])
def test_check_a_missing_or_bad_file_exits_2_with_a_message(tmp_path, capsys, content, phrase):
    path = tmp_path / "d.json"
    if content is not None:
        path.write_text(content)
    status, out, err = run(capsys, "check", str(path))
    assert status == 2 and out == ""
    assert err.startswith("pgstudio check: ") and phrase in err and "Traceback" not in err


def test_check_a_folder_exits_2(tmp_path, capsys):
    status, _, err = run(capsys, "check", str(tmp_path))
    assert status == 2 and "is a folder, expected a design file" in err


def test_example_lists_writes_and_rejects(tmp_path, capsys):
    status, out, _ = run(capsys, "example")
    assert status == 0 and out.split() == list(CANONICAL)
    target = tmp_path / "fork.json"
    status, out, _ = run(capsys, "example", "fork_copy", "--out", str(target))
    assert status == 0 and out.strip() == f"wrote {target}"
    assert json.loads(target.read_text())["name"] == "fork_copy"
    status, out, _ = run(capsys, "example", "fork_copy", "--ungrouped")
    assert status == 0 and json.loads(out)["name"] == "fork_copy_ungrouped" and json.loads(out)["groups"] == []
    status, _, err = run(capsys, "example", "nope")
    assert status == 2 and "no example named 'nope'; examples: merge_copy" in err


def test_an_unknown_command_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["frobnicate"])
    assert exc.value.code == 2


def test_demo_prints_every_canonical_layout(tmp_path):
    out_dir = tmp_path / "demo"
    proc = subprocess.run([sys.executable, "-m", "pgstudio", "demo", "--out", str(out_dir)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in CANONICAL:
        assert f"=== {name}: design '{name}'" in proc.stdout
        assert (out_dir / f"{name}.json").is_file()
    assert "ab.full_0" in proc.stdout and "xy.shared_full" in proc.stdout
    savings = re.findall(r"grouped (\d+) barriers vs ungrouped (\d+) \((\d+) saved\)", proc.stdout)
    assert len(savings) == len(CANONICAL)
    assert all(int(g) < int(u) and int(u) - int(g) == int(n) for g, u, n in savings)
    assert proc.stdout.count("0 error(s)") >= len(CANONICAL)
