"""The screen-wide worker pool that executes scenes and compute grids.

Theory of operation
-------------------
A *job* (a scene's bands: :class:`workers.job.SceneJob`; a compute grid's
kernel calls: gallium/numpipe/compute.py) is a count of independent work
units plus a completion step.  ``WorkerPool.submit(job, after=fence)``
queues the job once ``after`` is signalled: the queue holds jobs, not units,
and each job hands out its units one after another from a cursor, so a job of
10^9 units costs one queue entry (units are numbers made when taken).
Workers take units from the job at the head of the queue, so a fast worker
simply takes more units (llvmpipe's "threads take whole tiles from a shared
iterator").  When the last unit of a job finishes, the worker that finished it
runs ``job.complete()``, which signals the job's fence.

Turns: a job that sets ``units_per_turn`` (a compute grid: 1) goes to the back
of the queue after handing out that many units, so the jobs queued behind it
-- other contexts' scenes and grids -- get units in between: a grid of any
size delays another context's frame by at most one of its kernel calls per
worker.  Other jobs (scenes: a few bands each) hand out all their units in
one turn, first come first served.

Guarantees:

* A unit is executed by exactly one worker, so the memory a unit writes (its
  band of the framebuffer) needs no locks, and results do not depend on the
  number of workers or on which worker ran what.
* A job that sets ``sequential`` (a grid with atomics) has one unit in flight
  at a time, in unit order, on whichever worker takes it: its results are the
  same as on one thread, and it still takes turns with the other jobs.
* Jobs submitted with ``after=`` the previous job's fence run strictly after
  it: a context chains its scenes this way, so its scenes complete in order.
  Jobs of different contexts interleave freely.
* An exception in a unit never kills a worker: it is handed to
  ``job.unit_failed(unit, exc)`` and the job still completes.  A job whose
  ``cancelled()`` says True (a grid after a failed call) hands out no more
  units: the rest are dropped and the job completes when the units in flight
  are done.
* Every unit and completion step runs with numpy's floating-point errors
  ignored (inf and NaN are values: gallium/util/ieee.py).
* ``num_threads == 0`` runs every unit on the submitting thread, inside
  ``submit`` (llvmpipe's LP_NUM_THREADS=0).
* With ``processes`` (two or more workers), a job that ``wants_process()``
  (a heavy scene: workers/bandproc.py) has its units run by each worker's
  band process, the worker waiting for it without holding the GIL; the
  results are the same bytes.  If a band process cannot take a unit before
  drawing anything, the worker runs it itself and the pool stops using
  processes (``process_failure`` says why).

Workers are daemon threads named ``numpipe-worker-N``; ``shutdown()`` stops
them after the queue drains.  A job submitted after ``shutdown()`` (or chained
after one still running then) is not run: it fails with a
``ContextDestroyedError`` and completes, so its fence is signalled and no
waiter hangs.  Each worker limits numexpr to one thread, since
the pool itself is the parallelism.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import Protocol

import numpy as np

from gallium.pipe.errors import ContextDestroyedError
from gallium.pipe.fence import Fence


class Job(Protocol):
    """What the pool needs from a unit of parallel work.  Optional: a positive
    ``units_per_turn`` int, a ``sequential`` bool, ``cancelled() -> bool``
    and ``wants_process() -> bool`` (see the module docstring)."""

    def unit_count(self) -> int: ...

    def run_unit(self, unit: int, worker: int) -> None: ...

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        """``unit`` -1: the job as a whole (its completion, or refused at shutdown)."""

    def complete(self) -> None: ...


class _Entry:
    """A queued job: the cursor of the units it has handed out, and how many
    are still to finish."""

    __slots__ = ("count", "job", "lock", "next", "remaining", "sequential", "slice", "turn")

    def __init__(self, job: Job, count: int) -> None:
        self.job = job
        self.count = count
        self.next = 0  # the next unit to hand out
        self.remaining = count  # units not finished (or dropped) yet
        self.turn = 0  # units handed out in this turn
        per_turn = getattr(job, "units_per_turn", None)
        self.slice = per_turn if isinstance(per_turn, int) and per_turn > 0 else count
        self.sequential = bool(getattr(job, "sequential", False))
        self.lock = threading.Lock()

    def cancelled(self) -> bool:
        check = getattr(self.job, "cancelled", None)
        return bool(check is not None and check())


class WorkerPool:
    """A fixed set of threads executing the units of submitted jobs."""

    def __init__(
        self,
        num_threads: int | None = None,
        name: str = "numpipe-worker",
        processes: bool | None = None,
    ) -> None:
        if num_threads is None:
            num_threads = os.cpu_count() or 1
        if num_threads < 0:
            raise ValueError(f"num_threads must be >= 0; got {num_threads}")
        self.num_threads = num_threads
        if processes is None:
            processes = os.environ.get("NUMPIPE_PROCESSES", "1") != "0"
        from . import shared

        self.processes = bool(processes) and num_threads >= 2 and shared.available()
        self.process_failure: str | None = None
        self._procs: list = [None] * num_threads  # worker -> its BandProcess
        self.process_units = [0] * max(num_threads, 1)
        self._queue: deque[_Entry] = deque()  # jobs with units to hand out
        self._cv = threading.Condition()
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self.units_run = [0] * max(num_threads, 1)
        for i in range(num_threads):
            t = threading.Thread(target=self._worker, args=(i,), name=f"{name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    # -- submission ----------------------------------------------------------------

    def submit(self, job: Job, after: Fence | None = None) -> None:
        """Queue ``job``'s units, once ``after`` (if given) is signalled."""
        if after is not None and not after.signalled:
            after.add_done_callback(lambda: self._enqueue(job))
        else:
            self._enqueue(job)

    def _enqueue(self, job: Job) -> None:
        if self._stopping:
            self._refuse(job)
            return
        count = job.unit_count()
        if count == 0:
            self._complete(job)
            return
        entry = _Entry(job, count)
        if self.num_threads == 0:
            while entry.next < entry.count:
                if entry.cancelled():
                    self._drop(entry, entry.count - entry.next)
                    return
                unit = entry.next
                entry.next += 1
                self._run(entry, unit, 0)
            return
        with self._cv:
            stopping = self._stopping
            if not stopping:
                self._queue.append(entry)
                self._cv.notify_all()
        if stopping:
            self._refuse(job)

    def _refuse(self, job: Job) -> None:
        """A job arriving after shutdown: it fails, and its fence is signalled."""
        try:
            job.unit_failed(
                -1, ContextDestroyedError("the screen was destroyed before this work ran")
            )
        finally:
            self._complete(job)

    def _take(self) -> tuple[_Entry, int | None, int]:
        """(entry, unit, dropped): the next unit of the job at the head of the
        queue (None with the count of units dropped when the job was
        cancelled).  Called with ``_cv`` held and the queue not empty."""
        entry = self._queue[0]
        if entry.cancelled():
            self._queue.popleft()
            dropped = entry.count - entry.next
            entry.next = entry.count
            return entry, None, dropped
        unit = entry.next
        entry.next += 1
        entry.turn += 1
        if entry.next >= entry.count or entry.sequential:
            self._queue.popleft()  # (a sequential job comes back when the unit is done)
            entry.turn = 0
        elif entry.turn >= entry.slice:
            self._queue.rotate(-1)  # its turn is over: to the back of the queue
            entry.turn = 0
        if self._queue:
            self._cv.notify()
        return entry, unit, 0

    # -- workers ---------------------------------------------------------------------

    def _worker(self, index: int) -> None:
        try:
            import numexpr

            numexpr.set_num_threads(1)
        except Exception:  # numexpr is optional for correctness
            pass
        while True:
            # not the last job while waiting: a finished scene or grid (its
            # targets, buffers, shared blocks) must not live on in a worker
            entry = None
            with self._cv:
                while not self._queue and not self._stopping:
                    self._cv.wait()
                if not self._queue:
                    break
                entry, unit, dropped = self._take()
            if unit is None:
                self._drop(entry, dropped)
                continue
            self._run(entry, unit, index)
            if entry.sequential and entry.next < entry.count:
                with self._cv:  # its next unit, after the others' turns
                    self._queue.append(entry)
                    self._cv.notify()
        proc = self._procs[index]
        if proc is not None:
            self._procs[index] = None
            proc.close()

    def _run(self, entry: _Entry, unit: int, worker: int) -> None:
        job = entry.job
        try:
            with np.errstate(all="ignore"):  # inf and NaN are values (gallium/util/ieee.py)
                self._run_unit(job, unit, worker)
        except BaseException as exc:  # never let a worker die
            try:
                job.unit_failed(unit, exc)
            except BaseException:
                pass
        self.units_run[worker] += 1
        self._finished(entry, 1)

    def _drop(self, entry: _Entry, count: int) -> None:
        """Units of a cancelled job that will never run."""
        if count:
            self._finished(entry, count)

    def _finished(self, entry: _Entry, count: int) -> None:
        with entry.lock:
            entry.remaining -= count
            last = entry.remaining == 0
        if last:
            self._complete(entry.job)

    @staticmethod
    def _complete(job: Job) -> None:
        try:
            with np.errstate(all="ignore"):
                job.complete()
        except BaseException as exc:
            try:
                job.unit_failed(-1, exc)
            except BaseException:
                pass

    def _run_unit(self, job: Job, unit: int, worker: int) -> None:
        if self.processes and getattr(job, "wants_process", None) and job.wants_process():
            self._run_in_process(job, unit, worker)
        else:
            job.run_unit(unit, worker)

    def _run_in_process(self, job, unit: int, worker: int) -> None:
        from .bandproc import BandProcess, NotPortable, Unavailable

        proc = self._procs[worker]
        if proc is None:
            proc = self._procs[worker] = BandProcess()
        try:
            proc.run(job.scene, unit)  # (only scene jobs want a process)
        except NotPortable:  # this scene only: run it here
            job.run_unit(unit, worker)
            return
        except Unavailable as exc:  # nothing was drawn: run it here, and from now on
            self.process_failure = str(exc)
            self.processes = False
            job.run_unit(unit, worker)
            return
        self.process_units[worker] += 1

    def process_pids(self) -> list[int]:
        """Process ids of the band processes running now."""
        return [pid for pid, _ in self.band_processes()]

    def band_processes(self) -> list[tuple[int, int]]:
        """(process id, resident KiB once started) of the band processes running now."""
        return [
            (p.pid, p.idle_rss_kib)
            for p in list(self._procs)
            if p is not None and p.pid is not None and p.proc.poll() is None
        ]

    # -- lifetime --------------------------------------------------------------------

    def shutdown(self, wait: bool = True) -> None:
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if wait:
            for t in self._threads:
                if t is not threading.current_thread():
                    t.join()
        if self.processes or any(self.process_units):
            from .bandproc import _ARENAS

            _ARENAS.release()  # the scene arenas kept for the next scenes

    @property
    def queued(self) -> int:
        """Units queued and not handed out yet."""
        with self._cv:
            return sum(e.count - e.next for e in self._queue)
