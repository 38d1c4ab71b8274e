"""The Sweep tab: it is there, it parses its fields, it shows the sweep (faked at the runtime
boundary, and for real on the no-GPU path) and turns failures into messages."""

import pytest

from pgstudio import examples
from pgstudio.runtime.sweep import OK, SweepRow, SweepTable
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
    studio.sweep.stages.value = "2 four"
    assert studio.sweep.run() is None
    assert "stages: &#x27;four&#x27; is not a whole number" in studio.sweep.results.value
    studio.sweep.stages.value = "2"
    for box in studio.sweep.groupings.values():
        box.value = False
    assert studio.sweep.run() is None and "pick at least one grouping" in studio.sweep.results.value


def test_a_sweep_of_the_current_design_is_shown(studio, monkeypatch):
    seen = {}

    def fake_sweep(design, stages, tiles, groupings, progress=True, on_progress=None):
        seen.update(design=design.name, stages=stages, tiles=tiles, groupings=groupings, progress=progress)
        on_progress(1, 2, "designed 2x1024B")
        rows = (SweepRow("designed", 2, 1024, OK, 0.5, 3000.0, 2048, 4, runs=3),
                SweepRow("ungrouped", 2, 1024, OK, 0.6, 2500.0, 2048, 4, runs=3))
        return SweepTable(design.name, 1 << 20, "float32", rows)

    monkeypatch.setattr(_sweep, "sweep", fake_sweep)
    studio.sweep.stages.value, studio.sweep.tiles.value = "2", "1024"
    table = studio.sweep.run()
    assert seen == {"design": "merge_copy", "stages": [2], "tiles": [1024],
                    "groupings": ["designed", "ungrouped", "Merge", "FusedMerge"], "progress": False}
    assert table.best.label == "designed 2x1024B" and "best: designed 2x1024B" in studio.sweep.note.value
    assert "sweep of merge_copy: best designed 2x1024B" in studio.sweep.results.value
    assert not studio.sweep.button.disabled


def test_a_failing_sweep_is_a_message(studio, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("cudaErrorLaunchFailure")

    monkeypatch.setattr(_sweep, "sweep", boom)
    assert studio.sweep.run() is None
    assert "sweep failed: RuntimeError: cudaErrorLaunchFailure" in studio.sweep.results.value


def test_without_a_gpu_invalid_variants_still_show(studio):
    from pgstudio.runtime._cupy import gpu_available
    if gpu_available():
        pytest.skip("the no-GPU path")
    studio.sweep.stages.value, studio.sweep.tiles.value = "4 40", "8192"
    table = studio.sweep.run()
    assert table is not None and table.best is None
    html = studio.sweep.results.value
    assert "designed 40x8192B invalid: [smem.capacity]" in html and "not run" in html
