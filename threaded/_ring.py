"""Batches and the ring they travel through.

A :class:`Batch` is a list of recorded calls ``(function, args)`` plus a slot
count (Mesa counts 8-byte slots; a call costs one slot plus one per 8 bytes of
data copied into it).  The :class:`Ring` holds at most ``capacity`` batches
that are submitted but not yet taken by the driver thread.  ``put`` blocks
while the ring is full (the producer waits, work is never dropped and memory
never grows without bound); ``get`` blocks while it is empty.

A full ring blocks ``put`` only until the driver thread takes its next batch.
Async producers avoid even that: ``ThreadedContext.ready_async`` registers an
``on_space`` callback (run by the driver thread when it takes a batch) that
signals a fence the producer awaits, so the event loop keeps running.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from gallium.pipe.fence import Fence

BATCH_SLOTS = 1536  # Mesa: TC_SLOTS_PER_BATCH
QUEUED_BATCHES = 8  # Mesa: TC_MAX_BATCHES - 2 (one recording, one executing)


class Batch:
    """Calls recorded between two submissions, executed in order by the driver thread.

    ``seq`` is given when the batch is submitted (batches execute in ``seq``
    order); ``done`` is signalled by the driver thread once every call of the
    batch has run, which is what a sync waits for.
    """

    __slots__ = ("calls", "done", "executed", "seq", "slots")

    def __init__(self, calls: list[tuple[Any, tuple]] | None = None) -> None:
        self.seq = 0
        self.calls: list[tuple[Any, tuple]] = [] if calls is None else calls
        self.slots = 0
        self.done = Fence(label="batch executed")
        self.executed = False

    def __len__(self) -> int:
        return len(self.calls)


class Ring:
    """A bounded FIFO of batches between one producer side and one driver thread."""

    def __init__(self, capacity: int = QUEUED_BATCHES) -> None:
        self.capacity = capacity
        self._items: deque[Any] = deque()
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._space_waiters: list[Any] = []  # callbacks run when a slot frees
        self.full_waits = 0

    def put(self, item: Any, force: bool = False) -> bool:
        """Append, blocking while full (unless ``force``); True if it had to wait.

        ``force`` is for a context torn down from a thread the driver thread
        may be waiting on (a fence callback): it must not wait for space.
        """
        waited = False
        with self._lock:
            while len(self._items) >= self.capacity and not force:
                waited = True
                self.full_waits += 1
                self._not_full.wait()
            self._items.append(item)
            self._not_empty.notify()
        return waited

    def has_space(self) -> bool:
        with self._lock:
            return len(self._items) < self.capacity

    def on_space(self, callback: Any) -> None:
        """Call ``callback()`` (from the driver thread) once a slot is free."""
        with self._lock:
            if len(self._items) < self.capacity:
                run = True
            else:
                self._space_waiters.append(callback)
                run = False
        if run:
            callback()

    def get(self) -> Any:
        with self._lock:
            while not self._items:
                self._not_empty.wait()
            item = self._items.popleft()
            self._not_full.notify()
            waiters, self._space_waiters = self._space_waiters, []
        for cb in waiters:
            cb()
        return item

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
