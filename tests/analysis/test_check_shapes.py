"""The checker at its defaults against the unrolled reference, over loop *shapes*.

Each task of a small design (the ungrouped merge copy: two loaders, one store, 1 or 2 stages)
gets its bracket body in one of five shapes -- flat ``N``, nested ``N x K``, side by side
``N x (A then B)``, two top-level loops ``A then B``, two brackets per iteration ``N x 2`` --
with bounds of their own (problem symbols), drawn so that the totals of the tasks often agree
(trip counts 0, 1, S-1, S, S+1 and beyond the checker's caps) and sometimes miss by one.  The
reference explores the real counts; ``check(design)`` runs at its defaults, so it shrinks the
loops.  What must hold: never SAFE where the reference finds a deadlock or a race, and UNSAFE
only where the reference finds one too (a finding at counts that lose the real totals is
INCOMPLETE, a *possible* one).
"""

from __future__ import annotations

import importlib
import os
import random
from collections import Counter

import pytest

from pgstudio import examples
from pgstudio.analysis.check import check
from pgstudio.model.schedule import CapturedSchedule, Loop
from pgstudio.model.task import Task
from pgstudio.model.ungroup import ungrouped

from unrolled_reference import reference_findings

check_module = importlib.import_module("pgstudio.analysis.check")

DESIGNS = int(os.environ.get("PGSTUDIO_SHAPE_DESIGNS", 500))
SHAPES = ("flat", "nested", "side", "sequential", "twice")
REFERENCE_CAP = 20_000


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0] or [1]


def _shape(rng: random.Random, shape: str, total: int, body: tuple, sym) -> tuple[tuple, dict[str, int]]:
    """Top-level nodes running ``body`` ``total`` times in ``shape`` (bounds as fresh symbols)."""
    if shape == "flat":
        vals = [total]
    elif shape == "nested":
        a = rng.choice(_divisors(total)) if total else rng.randint(0, 3)
        vals = [a, total // a if a else rng.randint(0, 6)]
    elif shape == "side":
        a = rng.choice(_divisors(total)) if total else 0
        per = total // a if a else rng.randint(0, 4)
        b = rng.randint(0, per)
        vals = [a if total else rng.randint(0, 2), b, per - b]
    elif shape == "sequential":
        b = rng.randint(0, total)
        vals = [b, total - b]
    else:
        vals = [total // 2] if total % 2 == 0 else [total // 2, 1]  # an odd total: one more flat bracket
    if rng.random() < 0.3:  # miss by one somewhere
        i = rng.randrange(len(vals))
        vals[i] = max(0, vals[i] + rng.choice((-1, 1)))
    names = [sym() for _ in vals]
    problem = dict(zip(names, vals))
    if shape == "flat":
        nodes = (Loop(0, names[0], 1, body),)
    elif shape == "nested":
        nodes = (Loop(0, names[0], 1, (Loop(0, names[1], 1, body),)),)
    elif shape == "side":
        nodes = (Loop(0, names[0], 1, (Loop(0, names[1], 1, body), Loop(0, names[2], 1, body))),)
    elif shape == "sequential":
        nodes = (Loop(0, names[0], 1, body), Loop(0, names[1], 1, body))
    else:
        nodes = (Loop(0, names[0], 1, body + body),) + ((Loop(0, names[1], 1, body),) if len(names) > 1 else ())
    return nodes, problem


def draw(rng: random.Random):
    stages = rng.randint(1, 2)
    d = ungrouped(examples.merge_copy(num_stages=stages))
    total = rng.choice([0, 1, stages - 1, stages, stages + 1, 2 * stages + 1, 5, 6, 8])
    problem = dict(d.problem_dict)
    shapes = {}
    counter = iter(range(100))
    for t in d.tasks:
        shape = rng.choice(SHAPES)
        body = t.schedule.nodes[0].body
        nodes, more = _shape(rng, shape, total, body, lambda: f"n{next(counter)}")
        problem.update(more)
        shapes[t.name] = shape
        d = d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources,
                                       CapturedSchedule(t.schedule.name, nodes)))
    return d.replace(problem=problem), shapes


@pytest.mark.parametrize("exact", [True, False], ids=["real-counts-when-small", "shrunk-only"])
def test_the_defaults_are_sound_at_every_loop_shape(monkeypatch, exact):
    """Half the designs as ``check`` runs them (small real counts are unrolled exactly), half
    with that fallback off, so every verdict comes from shrunk counts or is INCOMPLETE."""
    if not exact:
        monkeypatch.setattr(check_module, "EXACT_STEPS", 0)
    rng = random.Random(20261202 + exact)
    per_shape: Counter = Counter()
    verdicts: Counter = Counter()
    unsound, spurious = [], []
    compared = 0
    while compared < DESIGNS // 2:
        d, shapes = draw(rng)
        ref, _, capped = reference_findings(d, REFERENCE_CAP)
        if capped:
            continue
        compared += 1
        kinds = {f[0] for f in ref}
        v = check(d)
        shape = "+".join(sorted(set(shapes.values())))
        per_shape[shape] += 1
        verdicts[(v.status, "finding" if kinds else "clean")] += 1
        if v.safe and kinds:
            unsound.append((shapes, dict(d.problem_dict), sorted(kinds), v.summary()))
        if v.unsafe and (not kinds or v.kind not in kinds):
            spurious.append((shapes, dict(d.problem_dict), sorted(kinds), v.summary()))
    print(f"\n{'exact fallback' if exact else 'shrunk only'}: {compared} designs; verdicts {dict(verdicts)}")
    for s in SHAPES:
        print(f"  tasks shaped {s}: {sum(n for k, n in per_shape.items() if s in k.split('+'))} designs")
    assert not unsound, unsound[:3]
    assert not spurious, spurious[:3]
    assert verdicts[("SAFE", "clean")] and verdicts[("UNSAFE", "finding")]  # both answers are met
