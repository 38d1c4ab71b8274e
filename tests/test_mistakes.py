"""The planted mistakes the rules catch (``mistakes.RULE_MISTAKES``): each one's ``validate()``
reports its rule's code, which the canonical design it was planted in does not; the checker's
mistakes (``MISTAKES``) are tested by tests/analysis/test_check.py."""

from __future__ import annotations

import pytest

from pgstudio import DesignError, examples, mistakes
from pgstudio.codegen import emit

#: Each rule mistake and the canonical design it is planted in.
PLANTED_IN = {"one_tile": "merge_copy", "zero_trip": "merge_copy", "skipped_acquire": "merge_copy",
              "two_phase_round": "merge_gemm", "register_overdraft": "merge_gemm"}


def test_every_rule_mistake_names_its_design():
    assert set(mistakes.RULE_MISTAKES) == set(PLANTED_IN)
    assert not set(mistakes.RULE_MISTAKES) & set(mistakes.MISTAKES)


@pytest.mark.parametrize("name", sorted(mistakes.RULE_MISTAKES))
def test_each_rule_mistake_reports_its_rule(name):
    build, code = mistakes.RULE_MISTAKES[name]
    assert code not in examples.example(PLANTED_IN[name]).validate().codes()
    design = build()
    report = design.validate()
    hits = [d for d in report.diagnostics if d.code == code]
    assert hits and all(d.hint for d in hits), str(report)
    assert design.name == name and mistakes.mistake(name).validate().codes() == report.codes()
    if code == "schedule.trip_count":  # a warning: the design runs, it just tests nothing
        assert report.ok and all(not d.is_error for d in hits)
    else:
        assert not report.ok and any(d.is_error for d in hits)
        with pytest.raises(DesignError):
            emit(design)


def test_the_messages_say_what_went_wrong():
    said = {n: " ".join(f"{d.message} {d.hint}" for d in b().validate().diagnostics if d.code == c)
            for n, (b, c) in mistakes.RULE_MISTAKES.items()}
    assert "its 4-stage ring never wraps" in said["one_tile"]
    assert "the cause is a zero trip count: task load_b: domain_loop(0, 0, 1) runs 0 times" in said["zero_trip"]
    assert "commit twice into a stage before it is released" in said["skipped_acquire"]
    assert "each round of its 128 arrivals completes 2 phases" in said["two_phase_round"]
    assert "66560 registers" in said["register_overdraft"] and "64512" in said["register_overdraft"]


def test_an_unknown_mistake_lists_both_tables():
    with pytest.raises(DesignError, match="register_overdraft") as info:
        mistakes.mistake("nope")
    assert "never_releases" in str(info.value) and info.value.code == "mistakes.unknown"
