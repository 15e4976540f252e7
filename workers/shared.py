"""Memory that band processes see: memfd-backed blocks and their views.

Theory of operation
-------------------
A screen with band processes (see workers/bandproc.py) allocates the storage
of its larger resources with :func:`allocate`: an anonymous memory file
(``memfd_create``) of the resource's size, mapped shared and handed out as a
uint8 numpy array.  The parent keeps the file descriptor open while the
block lives; a band process maps the same pages by opening
``/proc/<parent pid>/fd/<fd>``, so nothing is copied and both sides see every
write.

Each block has a *serial* (never reused, unlike file descriptor numbers).
:func:`locate` finds the block an array's memory lies in, so a pickler can
send any view of a block as (serial, offset, shape, strides, dtype) instead
of its bytes.  When the last array of a block is garbage collected its file
descriptor is closed and its serial queued for :func:`take_dropped`, which
the parent passes on to the band processes so they unmap it too.

Guarantees: an allocation is zero-filled, like ``np.zeros``; a block that
cannot be made (no memfd on this system, no memory) raises OSError and the
caller falls back to private memory.
"""

from __future__ import annotations

import bisect
import itertools
import mmap
import os
import threading
import weakref

import numpy as np

_byte_bounds = getattr(getattr(np.lib, "array_utils", None), "byte_bounds", None) or np.byte_bounds


class _Map(mmap.mmap):
    """An mmap that weak references can point to (for the block's finaliser)."""


_lock = threading.Lock()
_serials = itertools.count(1)
_starts: list[int] = []  # sorted start addresses of live blocks
# start -> (end, serial, fd, nbytes, weak reference to the mapping)
_blocks: dict[int, tuple[int, int, int, int, weakref.ref]] = {}
_dropped: list[int] = []  # serials whose blocks died since take_dropped


def available() -> bool:
    return hasattr(os, "memfd_create") and os.path.isdir(f"/proc/{os.getpid()}/fd")


def allocate(nbytes: int) -> np.ndarray:
    """A zero-filled uint8 array of ``nbytes`` bytes in a new shared block."""
    nbytes = max(int(nbytes), 1)
    fd = os.memfd_create("numpipe", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
        mm = _Map(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    except BaseException:
        os.close(fd)
        raise
    arr = np.frombuffer(mm, np.uint8)
    start = arr.__array_interface__["data"][0]
    end = start + nbytes
    serial = next(_serials)
    with _lock:
        # A dead block's pages are unmapped before its finaliser runs (mmap's
        # deallocation unmaps, then clears weak references, without the GIL
        # between), so entries of dead blocks may overlap this one: forget them.
        i = bisect.bisect_right(_starts, start) - 1
        if i >= 0 and _blocks[_starts[i]][0] > start:
            _blocks.pop(_starts.pop(i))
        i = bisect.bisect_left(_starts, start)
        while i < len(_starts) and _starts[i] < end:
            _blocks.pop(_starts.pop(i))
        _starts.insert(i, start)
        _blocks[start] = (end, serial, fd, nbytes, weakref.ref(mm))
    weakref.finalize(mm, _release, start, serial, fd)
    return arr


def _release(start: int, serial: int, fd: int) -> None:
    with _lock:
        entry = _blocks.get(start)
        if entry is not None and entry[1] == serial:  # (not a newer block at that address)
            del _blocks[start]
            _starts.remove(start)
        _dropped.append(serial)
    os.close(fd)


def locate(arr: np.ndarray) -> tuple[int, int, int, int] | None:
    """(serial, fd, block bytes, offset of arr's first element) of the block
    ``arr``'s memory lies in, or None for private memory."""
    addr = arr.__array_interface__["data"][0]
    with _lock:
        i = bisect.bisect_right(_starts, addr) - 1
        if i < 0:
            return None
        start = _starts[i]
        end, serial, fd, nbytes, alive = _blocks[start]
    if addr >= end or alive() is None:
        # (a block being deallocated: its pages are unmapped already, and the
        # address may belong to private memory now)
        return None
    # the whole extent of the view must lie in the block too
    lo, hi = _byte_bounds(arr)
    if lo < start or hi > end:
        return None
    return serial, fd, nbytes, addr - start


def take_dropped() -> list[int]:
    """Serials of the blocks freed since the last call."""
    with _lock:
        out = list(_dropped)
        _dropped.clear()
    return out


def live_blocks() -> int:
    with _lock:
        return len(_starts)


# -- the band process's side ----------------------------------------------------------


class Attached:
    """Blocks of one parent process mapped into this one, by serial."""

    def __init__(self, parent_pid: int) -> None:
        self.parent_pid = parent_pid
        self.maps: dict[int, mmap.mmap] = {}

    def view(self, serial: int, fd: int, nbytes: int, offset: int, shape, strides, dtype: str):
        mm = self.maps.get(serial)
        if mm is None:
            f = os.open(f"/proc/{self.parent_pid}/fd/{fd}", os.O_RDWR)
            try:
                mm = mmap.mmap(f, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(f)
            self.maps[serial] = mm
        return np.ndarray(shape, np.dtype(dtype), buffer=mm, offset=offset, strides=strides)

    def drop(self, serials) -> None:
        for s in serials:
            self.maps.pop(s, None)  # (closed when the last view of it goes)
