"""Undo / redo history and design files: bad files give messages, never tracebacks."""

import json

from pgstudio import examples
from pgstudio.studio._files import autosave_path, load_design, parse_design, save_design
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
             "missing.json": "no such file", "": "give a file name"}
    for name, words in cases.items():
        design, msg = load_design(tmp_path / name if name else "")
        assert design is None and words in msg, msg
    design, msg = parse_design(b"\xff\xfe", "upload.json")
    assert design is None and msg.startswith("cannot load upload.json")
    ok, msg = save_design(examples.merge_copy(), tmp_path / "junk.json" / "x.json")
    assert not ok and msg.startswith("cannot save")


def test_autosave_path_sits_in_the_folder(tmp_path):
    assert autosave_path("lab", tmp_path) == tmp_path / "lab.pgstudio-autosave.json"
