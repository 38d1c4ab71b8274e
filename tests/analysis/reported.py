"""What every rule test asserts of a finding (tests/analysis/test_rules.py and the codegen rules in
tests/analysis/buildable): the rule reports its code, the message and fix name every expected phrase,
and each finding has a fix hint and the places it is about."""

from __future__ import annotations


def assert_reported(design, code: str, phrases) -> list:
    """The errors of ``code`` in ``design.validate()``, after checking the above."""
    report = design.validate()
    hits = [d for d in report.errors if d.code == code]
    assert hits, f"{code} not reported:\n{report}"
    text = "\n".join(f"{d.message} (fix: {d.hint})" for d in hits)
    for phrase in phrases:
        assert phrase in text, f"{phrase!r} not in:\n{text}"
    assert all(d.hint and d.where for d in hits), hits
    return hits
