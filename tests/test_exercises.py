"""The notebooks' exercises: pgstudio computes each right answer (so a check cell cannot drift from
what pgstudio does), accepts it, refuses a wrong one with a hint, and asks for an answer when the
reader has not written one yet."""

from __future__ import annotations

import pytest

from pgstudio.exercises import EXERCISES, check, verdict

WRONG = {"pipeline_barriers": 3, "stage_and_parity": (0, 1), "merge_barriers": 12, "fork_tx_bytes": 32768,
         "fused_init_count": 2, "allowed_mode": "Merge", "checker_kind": "deadlock"}
#: Worked by hand from semantics.md (sections 4 and 5); pgstudio must agree.
BY_HAND = {"pipeline_barriers": 6, "stage_and_parity": (1, 0), "merge_barriers": 16, "fork_tx_bytes": 128 * 64 * 2,
           "fused_init_count": 1 + 64, "allowed_mode": "Fork", "checker_kind": "early_release"}


def test_every_exercise_has_a_wrong_answer_and_a_worked_one():
    assert set(WRONG) == set(EXERCISES) == set(BY_HAND)


@pytest.mark.parametrize("key", sorted(EXERCISES))
def test_right_wrong_and_no_answer(key, capsys):
    right = EXERCISES[key].solve()
    assert right == BY_HAND[key]
    assert verdict(key, right)[0] is True
    ok, words = verdict(key, WRONG[key])
    assert ok is False and words.startswith("not quite") and "Hint:" in words
    ok, words = verdict(key, ...)
    assert ok is None and "in place of ..." in words
    check(key, right)
    assert capsys.readouterr().out.startswith("right: ")


def test_answers_in_the_obvious_forms_count():
    assert verdict("stage_and_parity", [1, 0])[0] is True  # a list is as good as a tuple
    assert verdict("allowed_mode", " fork ")[0] is True and verdict("allowed_mode", "'Fork'")[0] is True
    assert verdict("pipeline_barriers", True)[0] is False and verdict("pipeline_barriers", "6")[0] is False


def test_an_unknown_exercise_lists_the_known_ones():
    with pytest.raises(KeyError, match="merge_barriers"):
        check("merge_barrier", 16)
