"""Files a user names (``model/files.py``): bounded reads, atomic writes, one-line FileErrors."""

import os
import stat

import pytest

from pgstudio.errors import FileError, PgStudioError
from pgstudio.model import files
from pgstudio.model.limits import MAX_FILE_BYTES


def test_a_read_never_takes_more_than_the_limit(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(64 << 20)
    assert len(files.read_design_bytes(big)) == MAX_FILE_BYTES + 1


@pytest.mark.parametrize("name,phrase", [("missing.json", "no design file at"), (".", "is a folder"),
                                         ("", "no design file named")])
def test_read_errors_name_the_path_and_the_fix(tmp_path, name, phrase):
    with pytest.raises(FileError, match=phrase) as err:
        files.read_design_bytes(tmp_path / name if name else "")
    assert isinstance(err.value, OSError) and isinstance(err.value, PgStudioError) and "fix:" in str(err.value)


def test_write_atomic_replaces_whole_files_only(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    files.write_atomic(path, "one")
    assert path.read_text() == "one" and path.stat().st_mode & 0o777 == 0o644

    def full(*_):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(FileError, match="cannot write .*No space left on device; fix: check free space"):
        files.write_atomic(path, "two")
    assert path.read_text() == "one" and os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("make,phrase", [
    (lambda t: t / "no" / "x.cu", "folder .* does not exist"),
    (lambda t: t, "is a folder, expected a file"),
    (lambda t: (t / "f").write_text("") or t / "f" / "x.cu", "is a file, not a folder"),
])
def test_output_files_must_have_a_folder(tmp_path, make, phrase):
    with pytest.raises(FileError, match=phrase):
        files.write_atomic(make(tmp_path), "x")


def test_output_folders_are_created_but_never_over_a_file(tmp_path):
    assert files.output_folder(tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("")
    with pytest.raises(FileError, match="is a file, expected a folder"):
        files.output_folder(tmp_path / "f")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    """Opening a FIFO waits for a writer forever: a read or a write naming one is refused by kind."""
    fifo = tmp_path / "design.json"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=r"is a FIFO \(named pipe\), expected a design file"):
        files.read_design_bytes(fifo)
    with pytest.raises(FileError, match="is a FIFO .*expected a file to write"):
        files.write_atomic(fifo, "{}")
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # left as it was
