"""The worker pool (workers/pool.py): jobs hand out their units lazily, take
turns, run sequentially when they ask to, and stop when cancelled."""

from __future__ import annotations

import threading
import tracemalloc

import pytest

from workers.pool import WorkerPool


class Job:
    """Records which worker ran which unit; ``stop`` cancels it; ``gate`` holds
    every unit until set; ``fail`` units raise."""

    def __init__(self, count, *, per_turn=None, sequential=False, fail=(), gate=None, delay=0.0):
        self.count = count
        if per_turn is not None:
            self.units_per_turn = per_turn
        self.sequential = sequential
        self.fail = set(fail)
        self.gate = gate
        self.delay = delay
        self.ran: list[int] = []
        self.failed: list[int] = []
        self.completed = 0
        self.done = threading.Event()
        self.stop = False
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.cancel_after_failure = False

    def unit_count(self):
        return self.count

    def cancelled(self):
        return self.stop or (self.cancel_after_failure and bool(self.failed))

    def run_unit(self, unit, worker):
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.gate is not None:
                assert self.gate.wait(30)
            if self.delay:
                threading.Event().wait(self.delay)
            if unit in self.fail:
                raise RuntimeError(f"unit {unit}")
            with self.lock:
                self.ran.append(unit)
        finally:
            with self.lock:
                self.in_flight -= 1

    def unit_failed(self, unit, exc):
        with self.lock:
            self.failed.append(unit)

    def complete(self):
        with self.lock:
            self.completed += 1
        self.done.set()


@pytest.fixture
def pool():
    p = WorkerPool(2, processes=False)
    yield p
    p.shutdown()


def _wait_for(predicate, timeout=30.0):
    event = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if predicate():
            return True
        event.wait(0.01)
    return predicate()


def test_a_job_of_a_trillion_units_is_one_entry_and_takes_turns(pool):
    big = Job(10**12, per_turn=1)
    try:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            pool.submit(big)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert grown < 16 << 10  # one queue entry, not 10^12 units
        assert _wait_for(lambda: len(big.ran) >= 50)
        small = Job(5)
        pool.submit(small)
        assert small.done.wait(30)  # between the big job's units
        assert sorted(small.ran) == [0, 1, 2, 3, 4] and small.completed == 1
        assert not big.done.is_set()
        assert 0 < 10**12 - pool.queued < 10**9
    finally:
        big.stop = True
    assert big.done.wait(30)
    assert big.completed == 1
    assert sorted(big.ran) == list(range(len(big.ran)))  # each unit once, from the cursor
    assert pool.queued == 0


def test_a_sequential_job_runs_one_unit_at_a_time_in_order(pool):
    seq = Job(30, sequential=True, delay=0.004)
    other = Job(20, per_turn=1, delay=0.004)
    pool.submit(seq)
    pool.submit(other)
    assert seq.done.wait(30) and other.done.wait(30)
    assert seq.ran == list(range(30))
    assert seq.most_in_flight == 1  # two workers, one unit at a time
    assert sorted(other.ran) == list(range(20))


def test_units_of_jobs_without_turns_stay_first_come_first_served(pool):
    gate = threading.Event()
    first = Job(8, gate=gate)
    second = Job(3)
    pool.submit(first)
    pool.submit(second)
    assert _wait_for(lambda: first.in_flight == 2)
    assert pool.queued == 6 + 3  # the second job waits behind the first one's units
    gate.set()
    assert first.done.wait(30) and second.done.wait(30)
    assert sorted(first.ran) == list(range(8)) and sorted(second.ran) == [0, 1, 2]


@pytest.mark.parametrize("threads", [0, 2])
def test_a_cancelled_job_drops_its_other_units_and_completes_once(threads):
    pool = WorkerPool(threads, processes=False)
    try:
        job = Job(10**9, per_turn=1, sequential=True, fail={7})
        job.cancel_after_failure = True
        pool.submit(job)
        assert job.done.wait(30)
        assert job.ran == [0, 1, 2, 3, 4, 5, 6] and job.failed == [7]
        assert job.completed == 1
        assert pool.queued == 0
        # a failure alone does not cancel: every other unit still runs
        plain = Job(12, fail={3, 8})
        pool.submit(plain)
        assert plain.done.wait(30)
        assert sorted(plain.ran) == [0, 1, 2, 4, 5, 6, 7, 9, 10, 11]
        assert sorted(plain.failed) == [3, 8] and plain.completed == 1
    finally:
        pool.shutdown()


def test_an_idle_worker_holds_no_finished_job(pool):
    """Before: each worker kept the last job it ran (the loop's local) while
    it waited for the next, so a finished scene or grid -- its targets and
    buffers -- stayed alive until the pool had other work (the stress soak:
    a round's compute buffers, 3 MiB of shared blocks, after the round)."""
    import gc
    import weakref

    refs = []
    for n in (1, 2, 7):  # units on one worker, on both, several each
        job = Job(n)
        pool.submit(job)
        assert job.done.wait(30) and sorted(job.ran) == list(range(n))
        refs.append(weakref.ref(job))
        del job
    cancelled = Job(50, delay=0.001)
    pool.submit(cancelled)
    cancelled.stop = True
    assert cancelled.done.wait(30)
    refs.append(weakref.ref(cancelled))
    del cancelled

    def all_freed():
        gc.collect()
        return all(r() is None for r in refs)

    # (a worker lets go of a job once back at its wait, just after completing it)
    assert _wait_for(all_freed, timeout=5.0)
