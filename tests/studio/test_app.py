"""The Studio driven through its widgets, headless: set widget values and click buttons as a user
would, then check the Design it holds and what the panes say (their model state: no browser)."""


import pytest

from pgstudio import examples
from pgstudio.model import PipelineGroupMode, ungrouped
from pgstudio.model.derive import DERIVED, derive_design

pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402


def streaming():
    """merge_copy with per-resource barriers and derived schedules: a valid start with no group."""
    return derive_design(ungrouped(examples.merge_copy()), replace_attached=True)


@pytest.fixture
def studio(tmp_path):
    return Studio(streaming(), folder=tmp_path, debounce=0)


def codes(s):
    return s.report.codes()


def diag_text(s):
    return " ".join(s.diagnostics.texts)


def test_opens_valid_and_every_pane_draws(studio):
    assert studio.report.ok
    assert "✔ valid" in studio.status.value and "16 barriers" in studio.status.value
    assert "no problems found" in studio.diagnostics.head.value
    studio.redraw_all()
    html = studio.views.html
    assert "<svg" in html["graph"].value
    studio.barriers.draw_static.click()
    assert "16 barriers" in studio.barriers.head.value and "data:image/svg+xml" in studio.barriers.static.value
    assert "timeline of" in studio.timeline.head.value
    assert studio.timeline.figure is not None and studio.barriers.figure is not None  # the Plotly widgets
    assert "SAFE" in html["checker"].value
    assert "__global__" in html["source"].value and "mbarrier" in html["source"].value
    assert "not available" not in "".join(h.value for h in html.values())


def test_add_resource_button_then_name_and_type_fields(studio):
    editor = studio.editors["resources"]
    editor.add.click()
    assert studio.design.has_resource("smem_1") and editor.list.value == "smem_1"
    assert codes(studio).count("pipeline.endpoints") == 2
    assert "pipeline.endpoints" in diag_text(studio) and "fix:" in diag_text(studio)
    editor.name.value = "smem_c"  # the text box commits on Enter / blur
    assert studio.design.has_resource("smem_c") and not studio.design.has_resource("smem_1")
    editor.pipeline.value = "TmaUmma"
    cfg = studio.design.resource("smem_c").pipeline_config
    assert cfg.pipeline_type.value == "TmaUmma" and cfg.consumer_group.num_threads == 1
    editor.name.value = "bad name"
    assert "not an identifier" in studio.message_text
    assert editor.name.value == "smem_c"  # the refused value is put back
    editor.remove.click()
    assert not studio.design.has_resource("smem_c") and studio.report.ok


def test_merge_group_from_the_group_editor_changes_the_barrier_layout(studio):
    groups = studio.editors["groups"]
    groups.new.click()
    assert groups.list.value == "group_1" and "group.members" in codes(studio)
    groups.members.value = ("smem_a", "smem_b")
    assert studio.design.group("group_1").member_names == ("smem_a", "smem_b")
    assert studio.report.ok, str(studio.report)
    assert "12 barriers" in studio.status.value and "saves 4" in studio.status.value
    # the schedules were re-derived: the consumer releases the group once
    store = studio.design.task("store").schedule
    assert store.name == DERIVED and [s.target for s in store.steps() if s.op == "release"] == ["group_1"]
    assert "calls group.release() once. (N+1)·S barriers" in groups.info.value
    groups.mode.value = "FusedMerge"
    assert studio.design.group("group_1").mode is PipelineGroupMode.FusedMerge
    assert "8 barriers" in studio.status.value and studio.report.ok
    # the editor's note on the mode is read off the protocol table
    assert "one shared full barrier, one shared empty barrier" in groups.info.value
    assert "calls group.wait() and group.release() once. 2·S barriers" in groups.info.value


def test_invalid_mix_appears_and_goes(studio):
    studio.add_group("ab", ["smem_a", "smem_b"])
    assert studio.report.ok
    studio.editors["resources"].select("smem_b")
    studio.editors["resources"].pipeline.value = "TmaUmma"
    assert "group.collapsed_kind" in codes(studio)
    assert "group.collapsed_kind" in diag_text(studio) and "✖" in studio.status.value
    studio.editors["resources"].pipeline.value = "TmaAsync"
    assert "group.collapsed_kind" not in diag_text(studio)
    assert studio.report.ok and "✔ valid" in studio.status.value


def test_show_in_graph_highlights_the_element(studio):
    studio.add_group("ab", ["smem_a"])
    row = studio.diagnostics.rows[0]
    assert row.diag.code == "group.members"
    plain = studio.views.html["graph"].value
    studio.views.show("barriers")
    row.show.click()
    assert studio.views.visible == "graph" and studio.views.highlight == "ab"
    assert studio.views.html["graph"].value != plain


def test_edges_and_tasks_editors(studio):
    edges = studio.editors["edges"]
    edges.dep.value, edges.res.value = "gmem_b", "smem_a"
    edges.add.click()
    assert ("gmem_b", "smem_a") in [(d, k) for k, deps in studio.design.graph for d in deps]
    assert "graph.edge_unrealised" in codes(studio)
    edges.list.value = ("gmem_b", "smem_a")
    edges.remove.click()
    assert studio.report.ok
    tasks = studio.editors["tasks"]
    tasks.add.click()
    assert tasks.list.value == "task_1"
    tasks.src.value = ("smem_a",)
    assert studio.design.task("task_1").src_resources == ("smem_a",)
    assert "pipeline.endpoints" in codes(studio)  # smem_a now has two consumer tasks
    assert "smem_a.wait()" in tasks.schedule.value  # the derived schedule is shown
    tasks.remove.click()
    assert studio.report.ok


def test_undo_redo_buttons(studio):
    before = studio.design
    studio.editors["resources"].add.click()
    after = studio.design
    assert studio.undo_button.disabled is False
    studio.undo_button.click()
    assert studio.design == before and studio.redo_button.disabled is False
    studio.redo_button.click()
    assert studio.design == after


def test_save_load_and_bad_upload(studio, tmp_path):
    studio.files.path.value = str(tmp_path / "mine.json")
    studio.files.save.click()
    assert "saved design" in studio.message_text
    studio.open_example("fork_copy")
    assert studio.design.name == "fork_copy"
    studio.files.load.click()
    assert studio.design == streaming()
    assert not studio.load_bytes(b"[1, 2]", "list.json")
    assert "cannot load list.json" in studio.message_text and studio.design == streaming()
    studio.files.path.value = str(tmp_path / "nope.json")
    studio.files.load.click()
    assert "no design file at" in studio.message_text


def test_design_tab_problem_derive_and_attached_schedules(tmp_path):
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)
    tasks = s.editors["tasks"]
    # the canonical hand-written schedules are what derivation gives: they follow the design from the start
    assert all(t.schedule.name == DERIVED for t in s.design.tasks) and s.report.ok
    assert s.attach_schedule("epilogue", examples.epilogue_schedule(s.design.resource("tmem_c"),
                                                                    s.design.resource("gmem_d"))), s.message_text
    tasks.select("epilogue")
    assert "attached: epilogue_schedule" in tasks.schedule_head.value
    problem = s.editors["design"]
    problem.fields["K"].value = "8192"  # num_k_tiles follows K / BK
    assert s.design.problem_dict["num_k_tiles"] == 128 and problem.fields["num_k_tiles"].disabled
    problem.fields["BM"].value = "nonsense"
    assert s.design.problem_dict["BM"] == "nonsense" and s.design.problem_dict["num_tiles"] == 512
    problem.new_key.value, problem.new_value.value = "9x", "1"
    problem.add_key.click()
    assert "not an identifier" in s.message_text and "9x" not in s.design.problem_dict
    problem.derive.click()
    assert all(t.schedule.name == DERIVED for t in s.design.tasks)


def test_debounce_redraws_once_edits_pause(tmp_path):
    s = Studio(streaming(), folder=tmp_path, debounce=0.05)
    drawn = []
    s.views.update = lambda snap, everything=None: drawn.append(snap.design)  # count redraws

    async def burst():
        import asyncio
        for _ in range(3):
            s.add_resource()
        assert drawn == [] and s._debouncer.pending
        await asyncio.sleep(0.2)

    import asyncio
    asyncio.run(burst())
    assert len(drawn) == 1 and drawn[0] == s.design


def test_panes_say_what_is_missing_instead_of_failing(studio, monkeypatch):
    import html

    from pgstudio.studio import _snapshot

    def missing(*args, **kwargs):  # as if graphviz were not installed
        raise ImportError("No module named 'graphviz'")

    monkeypatch.setattr(_snapshot, "dependency_graph", missing)
    studio.add_resource()
    studio.redraw_all()
    graph = html.unescape(studio.views.html["graph"].value)
    assert "not available: No module named 'graphviz'" in graph and "pgstudio[render]" in graph
    assert "needs a valid design" in studio.timeline.head.value
    assert "24 barriers" in studio.barriers.head.value  # the counts stay
