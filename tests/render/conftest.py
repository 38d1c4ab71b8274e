"""Timelines built by hand (the simulator is a separate module): a Merge of two producers into
one consumer, with S stages, so producers block on the shared empty barrier once the consumer
is slower, and the consumer blocks on the full barrier of the slower producer."""

from __future__ import annotations

import pytest

from pgstudio.analysis.timeline import ARRIVE, BLOCKED, PHASE_FLIP, SYNC, WORK, Event, Timeline


def merge_timeline(iterations: int = 6, stages: int = 2, load_ns=(40.0, 55.0), store_ns: float = 70.0,
                   design: str = "merge_copy") -> Timeline:
    producers = (("load_a", 0, 1, "ab.full_0", load_ns[0]), ("load_b", 1, 1, "ab.full_1", load_ns[1]))
    consumer = ("store", 4, 4)
    events: list[Event] = []
    full_at: dict[tuple[str, int], float] = {}
    released: dict[int, float] = {}
    ready = {p[0]: 0.0 for p in producers}
    ready[consumer[0]] = 0.0
    for k in range(iterations):
        stage, phase = k % stages, (k // stages) & 1
        for name, warp, nw, full, dur in producers:
            w = (warp, nw)
            t = ready[name]
            free = released[k - stages] if k >= stages else 0.0
            start = max(t, free)
            if start > t:
                events.append(Event(name, "blocked", BLOCKED, t, start, "ab", "ab.shared_empty", -1, stage,
                                    phase ^ 1, k, w))
            events.append(Event(name, "acquire", SYNC, start, start + 2, f"smem_{name[-1]}", "ab.shared_empty", -1,
                                stage, phase ^ 1, k, w))
            end = start + 2 + dur
            events.append(Event(name, "load", WORK, start + 2, end, f"smem_{name[-1]}", full, -1, stage, phase, k, w))
            events.append(Event(name, "arrive", ARRIVE, end, end, f"smem_{name[-1]}", full, -1, stage, phase, k, w))
            events.append(Event(name, "phase_flip", PHASE_FLIP, end, end, f"smem_{name[-1]}", full, -1, stage, phase,
                                k, w))
            events.append(Event(name, "commit", SYNC, end, end + 1, f"smem_{name[-1]}", full, -1, stage, phase, k, w))
            full_at[(full, k)] = end
            ready[name] = end + 1
        name, warp, nw = consumer
        w = (warp, nw)
        t = ready[name]
        last_full = max((p[3] for p in producers), key=lambda f: full_at[(f, k)])
        start = max(t, full_at[(last_full, k)])
        if start > t:
            events.append(Event(name, "blocked", BLOCKED, t, start, "ab", last_full, -1, stage, phase, k, w))
        events.append(Event(name, "wait", SYNC, start, start + 2, "ab", last_full, -1, stage, phase, k, w))
        end = start + 2 + store_ns
        events.append(Event(name, "store", WORK, start + 2, end, "gmem_d", "", -1, stage, -1, k, w))
        events.append(Event(name, "release", SYNC, end, end + 2, "ab", "ab.shared_empty", -1, stage, phase, k, w))
        events.append(Event(name, "arrive", ARRIVE, end + 2, end + 2, "ab", "ab.shared_empty", -1, stage, phase, k, w))
        events.append(Event(name, "phase_flip", PHASE_FLIP, end + 2, end + 2, "ab", "ab.shared_empty", -1, stage, phase,
                            k, w))
        released[k] = end + 2
        ready[name] = end + 2
    tasks = [(p[0], p[1], p[2]) for p in producers] + [consumer]
    return Timeline.from_events(design, events, tasks)


@pytest.fixture
def hand_timeline():
    return merge_timeline
