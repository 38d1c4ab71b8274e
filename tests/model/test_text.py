"""Design text is one printable line; ``visible`` shows any text on one; ``file_stem`` keeps a file
in its folder and never gives two texts the same name."""

from __future__ import annotations

import random

import pytest

from pgstudio import DesignError
from pgstudio.model.text import MAX_STEM_CHARS, check_text, file_stem, is_control, text_problem, visible

REFUSED = ["\x00", "\t", "\n", "\r", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\u202e", "\u2066", "\ud800",
           "\udfff", "\ufffe", "\uffff", "\ufdd0", "\U0001fffe"]
KEPT = ["a", " ", "~", "é", "\u00a0", "\u4e2d", "\U0001f600", "\u200d", "\\", '"', "<", "&"]


@pytest.mark.parametrize("ch", REFUSED)
def test_control_characters_are_refused_with_the_field_and_the_fix(ch):
    with pytest.raises(DesignError) as info:
        check_text("resources[0].compute.expr", f"ab{ch}cd")
    message = str(info.value)
    assert message.startswith("resources[0].compute.expr: character \\")
    assert "at position 2" in message
    assert "\n" not in message and all(not is_control(c) for c in message)
    assert "printable" in info.value.hint


@pytest.mark.parametrize("ch", KEPT)
def test_printable_text_passes(ch):
    assert check_text("name", f"x{ch}y") == f"x{ch}y"
    assert text_problem(f"x{ch}y") is None
    assert visible(f"x{ch}y") == f"x{ch}y"


def test_non_text_values_are_left_to_their_own_rule():
    assert check_text("num_stages", 4) == 4
    assert check_text("aliases", None) is None


def test_visible_text_is_one_printable_line_that_names_each_character():
    for ch in REFUSED:
        shown = visible(f"a{ch}b")
        assert not any(is_control(c) for c in shown)
        assert shown.encode("utf-8")  # a lone surrogate no longer stops UTF-8
        assert shown.startswith("a\\") and shown.endswith("b")
    assert visible("a\x01b") == "a\\x01b"
    assert visible("\u2028") == "\\u2028"
    assert visible("\U0001fffe") == "\\U0001fffe"


HOSTILE_STEMS = ["../../etc/passwd", "..", ".", "", "a/b", "a\\b", "CON", "nul", "Com1.txt", "LPT9", "aux.json",
                 "x\x00y", "a" * 5000, "name.", " lead", "my lab", "my_lab", "\ud800", "\u202eevil", "C:evil",
                 "-rf", "x" * 60 + "-0123456789"]


@pytest.mark.parametrize("text", HOSTILE_STEMS)
def test_file_stems_stay_in_their_folder(text, tmp_path):
    stem = file_stem(text)
    assert stem and len(stem) <= MAX_STEM_CHARS
    assert "/" not in stem and "\\" not in stem and "\x00" not in stem and ":" not in stem
    assert ".." not in stem and not stem.startswith((".", "-")) and not stem.endswith(".")
    assert stem.split(".")[0].lower() not in {"con", "prn", "aux", "nul", "com1", "lpt9"}
    path = tmp_path / f"{stem}.json"
    assert path.resolve().parent == tmp_path.resolve()
    path.write_text("{}")  # the file system takes it


def test_plain_stems_are_kept_and_no_two_texts_share_a_stem():
    assert file_stem("merge_copy") == "merge_copy"
    assert file_stem("fork_gemm_act.v2") == "fork_gemm_act.v2"
    rng = random.Random(7)
    alphabet = "ab_ -./\\:\x00.CONul\u00e9"
    texts = {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(3000)}
    texts |= set(HOSTILE_STEMS)
    by_stem: dict[str, list[str]] = {}
    for t in sorted(texts):
        by_stem.setdefault(file_stem(t), []).append(t)
    shared = {stem: ts for stem, ts in by_stem.items() if len(ts) > 1}
    assert not shared, f"texts sharing a stem: {shared!r}"
    assert file_stem("my lab") != file_stem("my_lab")
    assert file_stem("a" * 70) != file_stem("a" * 71)
