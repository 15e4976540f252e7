"""Allocator tuning for numpy temporaries.

Rasterizer kernels work on band-sized arrays (64 rows of the framebuffer,
typically 64k-260k elements, 256 KiB to 1 MiB).  glibc serves allocations of
that size with a fresh ``mmap`` and returns them with ``munmap`` on free, so
every numpy temporary costs page faults on first touch: measured here, a
five-operation kernel over 64x1024 pixels takes 0.36 ms with the default
allocator and 0.11 ms once such blocks stay in the heap.

``tune_allocator()`` raises glibc's mmap and trim thresholds (``mallopt``) so
freed temporaries are reused, and makes every thread allocate from the one
main heap (``M_ARENA_MAX`` 1).  The second part bounds the first: by default
glibc gives threads heaps of their own (*arenas*, up to 8 per core), and
with trimming off each arena keeps the largest working set any thread that
used it ever had.  Threads come and go here (a driver thread per threaded
context, the application's own), so resident memory climbed towards arenas
x peak: from 193 to 330 MiB (after gc and ``malloc_trim``) in 20 s of the
stress soak, still rising, with 13 MiB of it in use.  With one heap, what
stays is the process's peak working set, once, and ``malloc_trim`` can
return its free pages.  (Threads that allocated before the first screen keep
the heaps they have.)  Sharing the heap costs no measurable time: numpy
allocates holding the GIL, so threads rarely contend for the heap's lock
(two threads each running a band kernel: 0.195 s and 0.195 s, 0.176 s and
0.183 s, one heap against one per thread, alternated).

It changes the whole process's allocator, so it is done once, when the first
screen is created, and can be turned off with ``NUMPIPE_MALLOPT=0``.  Memory
that numpy frees stays in the heap up to the peak working set of the
kernels (bounded by bands x workers, not by the framebuffer size).  On
systems without glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_THRESHOLD = 1 << 30

_lock = threading.Lock()
_done: bool | None = None


def tune_allocator() -> bool:
    """Apply the mallopt settings once; True if they are in effect."""
    global _done
    with _lock:
        if _done is not None:
            return _done
        _done = False
        if os.environ.get("NUMPIPE_MALLOPT", "1") in ("0", "false", "no"):
            return False
        name = ctypes.util.find_library("c")
        if not name:
            return False
        try:
            libc = ctypes.CDLL(name)
            ok = libc.mallopt(_M_MMAP_THRESHOLD, _THRESHOLD) == 1
            ok = libc.mallopt(_M_TRIM_THRESHOLD, _THRESHOLD) == 1 and ok
            ok = libc.mallopt(_M_ARENA_MAX, 1) == 1 and ok
        except (OSError, AttributeError):
            return False
        _done = ok
        return ok
