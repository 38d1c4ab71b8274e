"""The mbarrier model: counts, tx bytes, phases and parity waits exactly as on the GPU."""

from hypothesis import given
from hypothesis import strategies as st

from pgstudio.analysis import mbarrier
from pgstudio.analysis.mbarrier import Mbarrier


def test_init_and_arrivals_complete_a_phase_and_reload_the_count():
    b = mbarrier.init(3)
    assert b == Mbarrier(pending=3, tx=0, phase=0)
    r = mbarrier.arrive(b, 3, 2)
    assert (r.state, r.completed, r.leaked, r.excess) == (Mbarrier(1, 0, 0), 0, 0, 0)
    r = mbarrier.arrive(r.state, 3, 1)
    assert (r.state, r.completed) == (Mbarrier(3, 0, 1), 1)


def test_too_many_arrivals_complete_early_and_leak_into_the_next_phase():
    # init count 64, but a warpgroup (128 threads) arrives: two phases complete at once
    r = mbarrier.arrive(mbarrier.init(64), 64, 128)
    assert (r.state, r.completed, r.leaked) == (Mbarrier(64, 0, 2), 2, 64)
    # 100 arrivals on a count of 64: one phase, 36 arrivals already in the next one
    r = mbarrier.arrive(mbarrier.init(64), 64, 100)
    assert (r.state, r.completed, r.leaked) == (Mbarrier(28, 0, 1), 1, 36)


def test_too_few_arrivals_never_complete_the_phase():
    r = mbarrier.arrive(mbarrier.init(256), 256, 128)
    assert (r.state, r.completed) == (Mbarrier(128, 0, 0), 0)
    assert not r.state.passes(0)


def test_expect_tx_keeps_the_phase_open_until_the_bytes_land():
    r = mbarrier.arrive_expect_tx(mbarrier.init(1), 1, 4096)
    assert (r.state, r.completed) == (Mbarrier(0, 4096, 0), 0)
    t = mbarrier.complete_tx(r.state, 1, 1024)
    assert (t.state, t.landed, t.completed) == (Mbarrier(0, 3072, 0), 1024, False)
    t = mbarrier.complete_tx(t.state, 1, 3072)
    assert (t.state, t.landed, t.completed) == (Mbarrier(1, 0, 1), 3072, True)


def test_bytes_before_the_expect_make_tx_negative_and_the_arrive_completes():
    t = mbarrier.complete_tx(mbarrier.init(1), 1, 4096)
    assert (t.state, t.completed) == (Mbarrier(1, -4096, 0), False)
    r = mbarrier.arrive_expect_tx(t.state, 1, 4096)
    assert (r.state, r.completed) == (Mbarrier(1, 0, 1), 1)


def test_a_copy_larger_than_expected_completes_the_phase_part_way():
    # expect half of an 8 KiB copy: the phase completes when 4 KiB are in, the rest is next phase's
    r = mbarrier.arrive_expect_tx(mbarrier.init(1), 1, 4096)
    t = mbarrier.complete_tx(r.state, 1, 8192)
    assert (t.state, t.landed, t.completed) == (Mbarrier(1, 0, 1), 4096, True)
    t = mbarrier.complete_tx(t.state, 1, 8192 - 4096)
    assert (t.state, t.landed, t.completed) == (Mbarrier(1, -4096, 1), 4096, False)
    # the next round's expect of 4 KiB then completes the phase with none of its own bytes in
    r = mbarrier.arrive_expect_tx(t.state, 1, 4096)
    assert (r.state, r.completed) == (Mbarrier(1, 0, 2), 1)
    assert mbarrier.land(mbarrier.arrive_expect_tx(mbarrier.init(1), 1, 4096).state, 1, 8192) == (Mbarrier(1, -4096, 1), 1)


def test_an_arrival_with_nothing_pending_is_excess():
    r = mbarrier.arrive_expect_tx(mbarrier.init(1), 1, 64)  # pending 0, bytes outstanding
    r = mbarrier.arrive(r.state, 1, 1)
    assert (r.excess, r.state.pending) == (1, -1)


def test_parity_waits_pass_once_the_phase_of_that_parity_completed():
    fresh = mbarrier.init(1)
    assert fresh.passes(1)  # a producer's first acquire (parity 1) passes on a fresh empty barrier
    assert not fresh.passes(0)  # a consumer's first wait (parity 0) blocks until phase 0 completes
    one = mbarrier.arrive(fresh, 1).state
    assert one.phase == 1 and one.passes(0) and not one.passes(1)
    two = mbarrier.arrive(one, 1).state
    # a waiter two phases behind cannot tell: parity 0 looks like the current phase again
    assert two.phase == 2 and not two.passes(0)


@given(st.integers(1, 64), st.lists(st.integers(1, 40), min_size=1, max_size=8))
def test_without_bytes_only_the_total_of_the_arrivals_matters(count, batches):
    one_by_one = mbarrier.init(count)
    for n in batches:
        for _ in range(n):
            one_by_one = mbarrier.arrive(one_by_one, count, 1).state
    at_once = mbarrier.arrive(mbarrier.init(count), count, sum(batches))
    assert at_once.state == one_by_one
    assert at_once.completed == sum(batches) // count


@given(st.integers(1, 4), st.lists(st.integers(16, 4096), min_size=1, max_size=4))
def test_a_stage_completes_exactly_when_every_arrival_and_byte_is_in(producers, sizes):
    count = producers
    b = mbarrier.init(count)
    for _ in range(producers - 1):
        b = mbarrier.arrive(b, count, 1).state
    b = mbarrier.arrive_expect_tx(b, count, sum(sizes)).state
    for i, size in enumerate(sizes):
        assert b.phase == 0
        b, flips = mbarrier.land(b, count, size)
        assert flips == (1 if i == len(sizes) - 1 else 0)
    assert b == Mbarrier(count, 0, 1)
