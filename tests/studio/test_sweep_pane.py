"""The Sweep tab: it is there, it parses its fields, fills in the design's defaults, shows the
sweep (faked at the runtime boundary, and for real on the no-GPU path), loads a results file
and turns failures into messages."""

import pytest

from pgstudio import examples
from pgstudio.explore.sweep import OK, SweepRow, SweepTable
from pgstudio.studio import Studio, _sweep


@pytest.fixture
def studio(tmp_path):
    return Studio(examples.merge_copy(), folder=tmp_path, debounce=0)


def test_the_tab_sits_after_the_other_views(studio):
    tab = studio.views.tab
    assert tab.titles[-1] == "Sweep" and tab.children[-1] is studio.sweep.widget
    assert tab.titles[-2] == "Compile & Benchmark"


def test_fields_are_parsed_with_clear_messages(studio):
    assert _sweep.parse_ints("2, 4 8", "stages") == [2, 4, 8]
    assert _sweep.parse_tiles("4096, 128x256x64") == [(4096,), (128, 256, 64)]
    studio.sweep.stages.value = "2 four"
    assert studio.sweep.run() is None
    assert "stages: &#x27;four&#x27; is not a whole number" in studio.sweep.results.value
    studio.sweep.stages.value, studio.sweep.tiles.value = "2", "12ab"
    assert studio.sweep.run() is None and "tiles: tile &#x27;12ab&#x27; is neither" in studio.sweep.results.value
    studio.sweep.tiles.value = ""
    for box in studio.sweep.groupings.values():
        box.value = False
    assert studio.sweep.run() is None and "pick at least one grouping" in studio.sweep.results.value


def test_defaults_follow_the_design(studio):
    studio.sweep.fill_defaults()
    assert studio.sweep.stages.value == "2 4 6 8" and studio.sweep.tiles.value == "1024 2048 4096 8192"
    assert [g for g, b in studio.sweep.groupings.items() if b.value] == ["designed", "ungrouped", "FusedMerge"]
    gemm = _sweep.SweepPane(lambda: examples.merge_gemm())
    gemm.fill_defaults()
    assert gemm.tiles.value == "128x64x64 128x64x128 128x128x64 128x128x128 128x256x64 128x256x128"
    assert gemm.stages.value == "2 3 4 5 6 7 8"


def test_a_sweep_of_the_current_design_is_shown(studio, monkeypatch):
    seen = {}

    def fake_sweep(design, stages, tiles, groupings, executor=None, results=None, compile_only=None,
                   progress=True, on_progress=None):
        seen.update(design=design.name, stages=stages, tiles=tiles, groupings=groupings, progress=progress,
                    executor=executor, compile_only=compile_only)
        on_progress(1, 2, "1/2 [00:01<00:01, 1.00 step/s] compiled designed 2x1024B")
        rows = (SweepRow("designed", 2, (1024,), OK, 0.5, 3000.0, 2048, 4, runs=3),
                SweepRow("ungrouped", 2, (1024,), OK, 0.6, 2500.0, 2048, 4, runs=3))
        return SweepTable(design.name, "1,048,576 float32 elements", "GB/s", rows)

    monkeypatch.setattr(_sweep, "sweep", fake_sweep)
    studio.sweep.stages.value, studio.sweep.tiles.value = "2", "1024"
    studio.sweep.compile_only.value = True
    table = studio.sweep.run()
    assert seen == {"design": "merge_copy", "stages": [2], "tiles": [(1024,)], "groupings": ["designed", "ungrouped"],
                    "progress": False, "executor": "embedded", "compile_only": True}
    assert (studio.sweep.progress.value, studio.sweep.progress.max) == (1, 2)
    assert table.best.label == "designed 2x1024B" and "best: designed 2x1024B" in studio.sweep.note.value
    html = studio.sweep.results.value
    assert "<table class='pg-table pg-sweep-table'>" in html and "<svg" in html
    assert not studio.sweep.button.disabled


def test_a_failing_sweep_is_a_message(studio, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("cudaErrorLaunchFailure")

    monkeypatch.setattr(_sweep, "sweep", boom)
    assert studio.sweep.run() is None
    assert "sweep failed: RuntimeError: cudaErrorLaunchFailure" in studio.sweep.results.value


@pytest.mark.nvrtc
def test_without_a_gpu_the_sweep_compiles_and_lists_invalid_variants(studio, tmp_path, monkeypatch):
    from pgstudio.runtime._cupy import gpu_available
    if gpu_available():
        pytest.skip("the no-GPU path")
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    studio.sweep.stages.value, studio.sweep.tiles.value = "4 40", "8192"
    studio.sweep.executor.value = "inline"
    studio.sweep.results_file.value = str(tmp_path / "r.jsonl")
    table = studio.sweep.run()
    assert table is not None and table.best is None
    html = studio.sweep.results.value
    assert "[smem.capacity]" in html and "compiled" in html and "nothing was timed" in studio.sweep.note.value
    # the results file loads back as the same table, without running anything
    studio.sweep.results.value = ""
    loaded = studio.sweep.load()
    assert [(r.label, r.status) for r in loaded.rows] == [(r.label, r.status) for r in table.rows]
    assert "[smem.capacity]" in studio.sweep.results.value
    studio.sweep.results_file.value = str(tmp_path / "missing.jsonl")
    assert studio.sweep.load() is None and "cannot read sweep results" in studio.sweep.results.value
