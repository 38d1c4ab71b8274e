"""The per-design memo: one validate computes a design's layout and resolved plans once, an edit
(a new Design) computes its own, and a dropped design takes its entries with it."""

from __future__ import annotations

import gc
import importlib

from pgstudio.analysis import memo
from pgstudio.examples import chain, merge_copy

# the modules (the package re-exports functions of the same names)
layout_module = importlib.import_module("pgstudio.analysis.barrier_layout")
resolve_module = importlib.import_module("pgstudio.analysis.resolve")


def test_one_validate_builds_each_layout_and_the_plans_once(monkeypatch):
    calls = {"layout": 0, "resolve_task": 0}
    real_layout, real_task = layout_module._layout, resolve_module.resolve_task

    def counted_layout(*a, **kw):
        calls["layout"] += 1
        return real_layout(*a, **kw)

    def counted_task(*a, **kw):
        calls["resolve_task"] += 1
        return real_task(*a, **kw)
    monkeypatch.setattr(layout_module, "_layout", counted_layout)
    monkeypatch.setattr(resolve_module, "resolve_task", counted_task)
    d = chain(7, "Merge", width=3)
    report = d.validate()
    # one layout per arch asked for (all targets, and each target's), not one per rule
    assert 1 <= calls["layout"] <= 1 + len(d.targets)
    assert calls["resolve_task"] == len(d.tasks)
    assert str(d.validate()) == str(report)  # a second validate computes nothing again ...
    assert calls["resolve_task"] == len(d.tasks)
    edited = d.replace(name="edited")  # ... and an edit, a new Design, starts afresh
    edited.validate()
    assert calls["resolve_task"] == 2 * len(d.tasks)


def test_the_plans_are_the_callers_own_and_follow_the_layout_asked_for(monkeypatch):
    d = merge_copy()
    plans = resolve_module.resolve(d)
    plans.clear()  # a caller's dict: emptying it does not empty the memo
    assert set(resolve_module.resolve(d)) == {t.name for t in d.tasks}
    calls = []
    real = resolve_module.resolve_task
    monkeypatch.setattr(resolve_module, "resolve_task", lambda *a, **kw: calls.append(a[2]) or real(*a, **kw))
    resolve_module.resolve(d)
    assert calls == []  # the design's own layout: from the memo
    other = layout_module.barrier_layout(merge_copy(num_stages=3))
    resolve_module.resolve(d, other)
    assert calls and all(layout is other for layout in calls)  # another layout: resolved against it


def test_a_dropped_design_takes_its_entries_with_it():
    d = chain(3, "Fork", width=2)
    layout_module.barrier_layout(d)
    key = id(d)
    assert key in memo._TABLES
    del d
    gc.collect()
    assert key not in memo._TABLES
