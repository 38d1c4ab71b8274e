"""Recorded GPU tables for pages without a GPU: a recording is labelled with its device, date and
command; a missing one is said to be missing; a damaged one is an error that names the file."""

from __future__ import annotations

import json

import pytest

from pgstudio.runtime import recorded


def test_record_load_show(tmp_path):
    table = "merge_copy: 268,435,456 float32 elements, medians of 30 interleaved runs\nvariant  median ms\n..."
    path = recorded.record("merge_copy", table, tmp_path, device="NVIDIA H200")
    assert path == tmp_path / "merge_copy.json"
    rec = recorded.load("merge_copy", tmp_path)
    assert rec.device == "NVIDIA H200" and rec.table == table and rec.command == recorded.COMMAND
    words = recorded.show("merge_copy", tmp_path)
    assert words.startswith(f"recorded on an NVIDIA H200 on {rec.date[:10]} ({recorded.COMMAND}")
    assert "verified" in words and words.endswith(table)


def test_no_recording_says_so_and_how_to_make_one(tmp_path):
    words = recorded.show("fork_copy", tmp_path)
    assert words.startswith("no recording of fork_copy exists yet")
    assert recorded.COMMAND in words and "notebooks/recorded/fork_copy.json" in words
    assert recorded.load("fork_copy", tmp_path) is None


@pytest.mark.parametrize("content", ["{not json", json.dumps({"schema": "other"}),
                                     json.dumps({"schema": recorded.SCHEMA, "design": "x"})])
def test_a_damaged_recording_names_the_file(tmp_path, content):
    (tmp_path / "x.json").write_text(content)
    with pytest.raises(ValueError, match="x.json"):
        recorded.load("x", tmp_path)


@pytest.mark.gpu
def test_a_recording_of_a_real_benchmark_names_its_gpu(tmp_path):
    """On a GPU: what benchmarks/notebooks.py --record writes -- a verified benchmark's table, the
    device CUDA reports -- and what a notebook then shows."""
    from pgstudio import examples, runtime

    table = runtime.benchmark(examples.merge_copy(num_elements=1 << 20), rounds=3, progress=False)
    recorded.record("merge_copy", table, tmp_path)
    rec = recorded.load("merge_copy", tmp_path)
    assert rec.device == recorded.device_name() and rec.device.startswith("NVIDIA")
    assert rec.table == str(table) and "median" in rec.table
    assert recorded.show("merge_copy", tmp_path).startswith(f"recorded on an {rec.device} on ")
