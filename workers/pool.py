"""The screen-wide worker pool that executes scenes.

Theory of operation
-------------------
A *job* (a scene's bands: :class:`workers.job.SceneJob`; a compute grid's
kernel calls: gallium/numpipe/compute.py) is a list of independent work units
plus a completion step.
``WorkerPool.submit(job, after=fence)`` queues the job's units once ``after``
is signalled; workers pop units from one shared FIFO, so a fast worker simply
takes more units (llvmpipe's "threads take whole tiles from a shared
iterator").  When the last unit of a job finishes, the worker that finished it
runs ``job.complete()``, which signals the job's fence.

Guarantees:

* A unit is executed by exactly one worker, so the memory a unit writes (its
  band of the framebuffer) needs no locks, and results do not depend on the
  number of workers or on which worker ran what.
* Jobs submitted with ``after=`` the previous job's fence run strictly after
  it: a context chains its scenes this way, so its scenes complete in order.
  Jobs of different contexts interleave freely.
* An exception in a unit never kills a worker: it is handed to
  ``job.unit_failed(unit, exc)`` and the job still completes.
* ``num_threads == 0`` runs every unit on the submitting thread, inside
  ``submit`` (llvmpipe's LP_NUM_THREADS=0).
* With ``processes`` (two or more workers), a job that ``wants_process()``
  (a heavy scene: workers/bandproc.py) has its units run by each worker's
  band process, the worker waiting for it without holding the GIL; the
  results are the same bytes.  If a band process cannot take a unit before
  drawing anything, the worker runs it itself and the pool stops using
  processes (``process_failure`` says why).

Workers are daemon threads named ``numpipe-worker-N``; ``shutdown()`` stops
them after the queue drains.  Each worker limits numexpr to one thread, since
the pool itself is the parallelism.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import Protocol

import numpy as np

from gallium.pipe.fence import Fence


class Job(Protocol):
    """What the pool needs from a unit of parallel work."""

    def unit_count(self) -> int: ...

    def run_unit(self, unit: int, worker: int) -> None: ...

    def unit_failed(self, unit: int, exc: BaseException) -> None: ...

    def complete(self) -> None: ...


class _Entry:
    __slots__ = ("job", "lock", "remaining")

    def __init__(self, job: Job, count: int) -> None:
        self.job = job
        self.remaining = count
        self.lock = threading.Lock()


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
        self._queue: deque[tuple[_Entry, int]] = deque()
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
        count = job.unit_count()
        if count == 0:
            job.complete()
            return
        entry = _Entry(job, count)
        if self.num_threads == 0:
            for unit in range(count):
                self._run(entry, unit, 0)
            return
        with self._cv:
            if self._stopping:
                raise RuntimeError("the worker pool has been shut down")
            for unit in range(count):
                self._queue.append((entry, unit))
            self._cv.notify_all()

    # -- workers ---------------------------------------------------------------------

    def _worker(self, index: int) -> None:
        try:
            import numexpr

            numexpr.set_num_threads(1)
        except Exception:  # numexpr is optional for correctness
            pass
        while True:
            with self._cv:
                while not self._queue and not self._stopping:
                    self._cv.wait()
                if not self._queue:
                    break
                entry, unit = self._queue.popleft()
            self._run(entry, unit, index)
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
        with entry.lock:
            entry.remaining -= 1
            last = entry.remaining == 0
        if last:
            try:
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
        with self._cv:
            return len(self._queue)
