"""``pgstudio bench`` and ``pgstudio sweep`` on the null runtime (``--executor null``): no GPU needed,
status 0, and the tables say that nothing was measured."""

import pytest

from pgstudio import examples
from pgstudio.cli import main
from pgstudio.runtime.verify import NULL_RUNTIME


def test_bench_on_the_null_runtime_prints_a_table_that_measured_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "mc.json"
    f.write_text(examples.merge_copy().to_json())
    status = main(["bench", str(f), "--executor", "null", "--rounds", "2", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert f"nothing was verified or timed ({NULL_RUNTIME})" in out and "merge_copy_ungrouped" in out
    assert f"times: not measured ({NULL_RUNTIME})" in out and "Traceback" not in err


@pytest.mark.nvrtc
def test_sweep_on_the_null_runtime_runs_the_timing_jobs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "mc.json"
    f.write_text(examples.merge_copy().to_json())
    status = main(["sweep", str(f), "--stages", "4", "--tiles", "4096", "--grouping", "designed", "--executor", "null",
                   "--no-results", "--quiet"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "1 variants: 1 compiled, not timed; ran on null runtime" in out
    assert f"best: none ({NULL_RUNTIME}: compiled 1 of 1 variants for sm_90a and ran their timing jobs" in out
