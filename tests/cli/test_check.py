"""``pgstudio check`` shows the predicted kernel time of the design for its problem."""

from pgstudio import cli, examples
from pgstudio.analysis import predict
from pgstudio.cli.check import predicted_text


def test_check_prints_the_predicted_kernel_time(tmp_path, capsys):
    path = tmp_path / "merge_gemm.json"
    design = examples.merge_gemm()
    path.write_text(design.to_json())
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("predicted kernel time:"))
    assert f"{predict(design):.4f} ms" in line and "512 work units on 132 blocks in 4 round(s)" in line
    assert "fitted on NVIDIA H200" in line


def test_a_design_with_errors_gets_no_prediction():
    assert predicted_text(examples.merge_copy(), errors=True) == \
        "predicted kernel time: none (fix the errors above first)"
