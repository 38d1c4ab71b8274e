"""Undo / redo history and design files: bad files give messages, never tracebacks."""

import json
import os

import pytest

from pgstudio import examples
from pgstudio.studio import _files
from pgstudio.studio._files import autosave_path, autosave_stem, load_design, parse_design, save_design, set_aside
from pgstudio.studio._history import History


def test_history_undo_redo_and_branching():
    a, b, c = examples.merge_copy(), examples.fork_copy(), examples.fused_merge_copy()
    h = History(a)
    assert not h.can_undo and not h.push(a)  # an unchanged design records nothing
    assert h.push(b) and h.push(c)
    assert h.undo() == b and h.undo() == a and h.undo() == a
    assert h.redo() == b
    h.push(c)  # a new edit after undo drops the redo branch
    assert not h.can_redo and h.current == c


def test_history_keeps_a_bounded_number_of_designs():
    h = History(examples.merge_copy(), limit=3)
    for n in range(10):
        h.push(examples.merge_copy(num_stages=n + 1))
    assert len(h) == 4


def test_save_then_load_round_trips(tmp_path):
    d = examples.merge_gemm()
    ok, msg = save_design(d, tmp_path / "sub" / "gemm.json")
    assert ok and "gemm.json" in msg
    loaded, msg = load_design(tmp_path / "sub" / "gemm.json")
    assert loaded == d and "loaded design 'merge_gemm'" in msg


def test_bad_files_are_messages(tmp_path):
    (tmp_path / "junk.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something.else", "version": 1}))
    (tmp_path / "new.json").write_text(json.dumps({**json.loads(examples.merge_copy().to_json()), "version": 99}))
    cases = {"junk.json": "not valid JSON", "other.json": "not a pgstudio design", "new.json": "not supported",
             "missing.json": "no design file at", "": "give a file name"}
    for name, words in cases.items():
        design, msg = load_design(tmp_path / name if name else "")
        assert design is None and words in msg, msg
    design, msg = parse_design(b"\xff\xfe", "upload.json")
    assert design is None and msg.startswith("cannot load upload.json")
    ok, msg = save_design(examples.merge_copy(), tmp_path / "junk.json" / "x.json")
    assert not ok and msg.startswith("cannot save")


def test_autosave_path_sits_in_the_folder(tmp_path):
    assert autosave_path("lab", tmp_path) == tmp_path / "lab.pgstudio-autosave.json"


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "/abs/path", "a\\b", "..", "", ".hidden", "my lab",
                                  "CON", "nul", "x\x00y", "\u0430dmin", "n" * 200, "-rf", "\udcff"])
def test_autosave_names_stay_in_their_folder(name, tmp_path):
    path = autosave_path(name, tmp_path)
    assert path.parent == tmp_path and path.name.endswith(".pgstudio-autosave.json")
    assert path.resolve().parent == tmp_path.resolve() and not path.name.startswith((".", "-"))
    assert autosave_stem(name) != name  # not a plain name: the stem carries its hash


def test_autosave_names_are_injective():
    names = ["my lab", "my_lab", "my-lab", "n" * 64 + "a", "n" * 64 + "b", "\u00e9t\u00e9", "\u00e9te", "studio",
             "\u0441tudio", "lab-0123456789", "lab", "CON", "_CON", "con"]
    stems = [autosave_stem(n) for n in names]
    assert len(set(stems)) == len(names), dict(zip(names, stems))
    assert autosave_stem("lab") == "lab" and autosave_stem("my_lab") == "my_lab"  # plain names stay readable


def test_the_write_is_atomic_a_failed_replace_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "d.json"
    _files.write_design(examples.merge_copy(), path)
    before = path.read_bytes()

    def broken(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(_files.os, "replace", broken)
    ok, msg = save_design(examples.fork_copy(), path)
    assert not ok and "No space left on device" in msg
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["d.json"]  # no temporary file left behind


def test_saved_files_are_readable_like_any_other(tmp_path):
    path = tmp_path / "d.json"
    _files.write_design(examples.merge_copy(), path)
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600


def test_saving_onto_a_folder_is_a_message(tmp_path):
    ok, msg = save_design(examples.merge_copy(), tmp_path)
    assert not ok and "is a folder, expected a file" in msg


def test_an_oversized_file_is_refused_without_reading_it_all(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(64 << 20)  # sparse: 64 MB that cost nothing to write
    design, msg = load_design(big)
    assert design is None and "expected at most 8388608" in msg


def test_set_aside_keeps_the_bytes_under_a_new_name_and_never_overwrites(tmp_path):
    path = tmp_path / "s.pgstudio-autosave.json"
    kept = []
    for text in ("{one", "{two"):
        path.write_text(text)
        kept.append(set_aside(path))
    assert not path.exists() and kept[0] != kept[1]
    assert [k.read_text() for k in kept] == ["{one", "{two"]
    assert all(k.parent == tmp_path and ".unreadable-" in k.name and k.name.endswith(".json") for k in kept)
