"""The autosave never replaces work before it can be restored: offers, visits, names, files."""

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from pgstudio import examples
from pgstudio.model import PipelineGroupMode, ungrouped
from pgstudio.model.derive import derive_design

pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402
from pgstudio.studio import _autosave, _restore  # noqa: E402

FILE = "studio.pgstudio-autosave.json"


def streaming():
    return derive_design(ungrouped(examples.merge_copy()), replace_attached=True)


def versions(path):
    doc = json.loads(path.read_text())
    return doc["versions"]


def test_an_earlier_visit_is_offered_and_nothing_is_written_before_the_choice(tmp_path):
    first = Studio(streaming(), folder=tmp_path, debounce=0)
    first.add_group("ab", ["smem_a", "smem_b"])
    saved = tmp_path / FILE
    before = saved.read_bytes()
    assert versions(saved)[0]["design"]["groups"][0]["name"] == "ab"
    second = Studio(streaming(), folder=tmp_path, debounce=0)  # a new kernel with the notebook's start
    assert second.banner.shown and "merge_copy_ungrouped" in second.banner.text.value
    second.add_resource("smem_r")  # programmatic edits while the offer is open write nothing
    second.undo()
    assert saved.read_bytes() == before
    second.banner.restore.click()
    assert second.design == first.design and not second.banner.shown
    second.undo()
    assert second.design == streaming()


def test_the_notebook_case_reload_then_run_all_keeps_the_edit(tmp_path):
    """The page builds its studio from a template and edits it at once, on every load."""
    def page():
        s = Studio(examples.merge_gemm(), name="00_studio", folder=tmp_path, debounce=0)
        s.add_resource("smem_r")
        s.undo()
        return s
    visit = page()
    visit.set_group(visit.design.groups[0].name, mode=PipelineGroupMode.FusedMerge)
    edited = visit.design
    for _ in range(3):  # reloads ("Run All") without choosing
        reloaded = page()
        assert reloaded.banner.shown
    reloaded.banner.restore.click()
    assert reloaded.design == edited


def test_discard_is_not_offered_again_and_keep_both_writes_a_copy(tmp_path):
    Studio(streaming(), folder=tmp_path, debounce=0).add_group("ab", ["smem_a", "smem_b"])
    s = Studio(streaming(), folder=tmp_path, debounce=0)
    s.banner.discard.click()
    assert not s.banner.shown and "discarded" in s.message_text
    assert versions(tmp_path / FILE)[0]["dismissed"] is True  # still in the file
    assert not Studio(streaming(), folder=tmp_path, debounce=0).banner.shown

    Studio(streaming(), folder=tmp_path, debounce=0).add_group("ab", ["smem_a", "smem_b"])
    s = Studio(streaming(), folder=tmp_path, debounce=0)
    s.banner.keep_both.click()
    kept = [p for p in tmp_path.iterdir() if ".kept-" in p.name]
    assert len(kept) == 1 and json.loads(kept[0].read_text())["groups"][0]["name"] == "ab"
    s.add_resource("smem_r")  # carries on: now autosaved
    assert "smem_r" in json.dumps(versions(tmp_path / FILE)[0]["design"])


def test_the_last_visits_are_kept_with_time_stamps(tmp_path):
    designs = []
    for i in range(_autosave.KEEP + 2):
        s = Studio(streaming(), folder=tmp_path, debounce=0)
        if s.banner.shown:
            s.banner.discard.click()
        s.add_resource(f"extra_{i}")
        designs.append(s.design.resources[-1].name)
    vs = versions(tmp_path / FILE)
    assert len(vs) == _autosave.KEEP and all(v["saved"][:4].isdigit() and "T" in v["saved"] for v in vs)
    assert [v["design"]["resources"][-1]["name"] for v in vs] == designs[::-1][:_autosave.KEEP]


def test_a_studio_opened_without_a_design_starts_from_the_newest_autosave(tmp_path):
    first = Studio(streaming(), folder=tmp_path, debounce=0)
    first.add_group("ab", ["smem_a", "smem_b"])
    again = Studio(folder=tmp_path, debounce=0)
    assert again.design == first.design and not again.banner.shown


def test_a_design_file_of_the_older_format_is_offered_and_kept(tmp_path):
    (tmp_path / FILE).write_text(examples.fork_copy().to_json())
    s = Studio(streaming(), folder=tmp_path, debounce=0)
    assert s.banner.shown and "fork_copy" in s.banner.text.value
    s.banner.restore.click()
    s.add_resource("smem_r")
    names = [v["design"]["name"] for v in versions(tmp_path / FILE)]
    assert names == ["fork_copy", "fork_copy"]  # this visit's edit and the older file, both kept


def test_two_names_of_one_file_are_refused_not_mixed(tmp_path, monkeypatch):
    a = Studio(streaming(), name="my lab", folder=tmp_path, debounce=0)
    b = Studio(streaming(), name="my_lab", folder=tmp_path, debounce=0)
    a.add_resource("smem_r")
    b.add_resource("smem_q")
    assert a.autosave_file != b.autosave_file  # the names map to two files
    # force a collision of the mapping: the file names its studio, and the other is refused
    monkeypatch.setattr(_restore, "autosave_path", lambda name, folder: a.autosave_file)
    before = a.autosave_file.read_bytes()
    c = Studio(streaming(), name="another", folder=tmp_path, debounce=0)
    assert c.autosave_file is None and "autosave is off" in c.message_text and "'my lab'" in c.message_text
    c.add_resource("smem_r")
    assert a.autosave_file.read_bytes() == before


@pytest.mark.parametrize("mask,mode", [(0o077, 0o600), (0o022, 0o644), (0o002, 0o664)])
def test_autosaves_are_written_with_the_users_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        Studio(streaming(), folder=tmp_path, debounce=0).add_resource("smem_r")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / FILE).stat().st_mode) == mode


def test_a_killed_write_leaves_no_temporary_file_after_the_next_save(tmp_path):
    script = textwrap.dedent(f"""
        import os, signal
        from pgstudio import examples
        from pgstudio.studio import _autosave
        def die(src, dst):
            os.kill(os.getpid(), signal.SIGKILL)
        _autosave.os.replace = die
        f = _autosave.AutosaveFile("studio", __import__("pathlib").Path({str(tmp_path / FILE)!r}))
        f.save(examples.merge_copy())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -9
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].endswith(".tmp")  # what a killed writer leaves
    live = tmp_path / f".{FILE}.{os.getpid()}.beef.tmp"  # a write in progress of a live process stays
    live.write_text("{")
    Studio(streaming(), folder=tmp_path, debounce=0).add_resource("smem_r")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([FILE, live.name])


@pytest.mark.timeout(30)
def test_a_fifo_at_the_autosave_path_turns_autosave_off_without_hanging(tmp_path):
    fifo = tmp_path / FILE
    os.mkfifo(fifo)
    s = Studio(folder=tmp_path, debounce=0)
    assert s.autosave_file is None and "not a regular file" in s.message_text
    s.add_resource("smem_r")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_unreadable_autosave_is_a_message_and_kept_aside(tmp_path):
    path = tmp_path / FILE
    path.write_text("{oops")
    s = Studio(folder=tmp_path, debounce=0)
    kept = [p for p in tmp_path.iterdir() if ".unreadable-" in p.name]
    assert "could not be read" in s.message_text and f"kept as {kept[0]}" in s.message_text and not s.banner.shown
    s.open_example("merge_copy")
    assert kept[0].read_text() == "{oops"  # the next edit autosaves beside it, never over it
    assert versions(path)[0]["design"]["name"] == "merge_copy"


def test_an_autosave_that_cannot_be_kept_aside_turns_autosave_off(tmp_path, monkeypatch):
    def refuse(path):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(_restore, "set_aside", refuse)
    path = tmp_path / FILE
    path.write_text("{oops")
    s = Studio(folder=tmp_path, debounce=0)
    assert "autosave is off" in s.message_text and s.autosave_file is None
    s.open_example("merge_copy")
    assert path.read_text() == "{oops"


def test_an_autosave_broken_after_the_offer_is_kept_aside_on_restore(tmp_path):
    Studio(streaming(), folder=tmp_path, debounce=0).add_group("ab", ["smem_a", "smem_b"])
    s = Studio(streaming(), folder=tmp_path, debounce=0)
    assert s.banner.shown
    (tmp_path / FILE).write_text("[]")
    s.banner.restore.click()
    assert "kept as" in s.message_text and s.design == streaming()
    assert [p.read_text() for p in tmp_path.iterdir() if ".unreadable-" in p.name] == ["[]"]


def test_a_studio_name_cannot_write_outside_its_folder(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    s = Studio(streaming(), name="../escaped", folder=folder, debounce=0)
    assert "autosave name '../escaped' is saved as 'escaped-" in s.message_text
    s.add_group("ab", ["smem_a", "smem_b"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert [p.name for p in folder.iterdir()] == [s.autosave_file.name]
