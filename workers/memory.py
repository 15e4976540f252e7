"""Allocator tuning for numpy temporaries.

Rasterizer kernels work on band-sized arrays (64 rows of the framebuffer,
typically 64k-260k elements, 256 KiB to 1 MiB).  glibc serves allocations of
that size with a fresh ``mmap`` and returns them with ``munmap`` on free, so
every numpy temporary costs page faults on first touch: measured here, a
five-operation kernel over 64x1024 pixels takes 0.36 ms with the default
allocator and 0.11 ms once such blocks stay in the heap.

``tune_allocator()`` raises glibc's mmap and trim thresholds (``mallopt``) so
freed temporaries are reused.  It changes the whole process's allocator, so
it is done once, when the first screen is created, and can be turned off with
``NUMPIPE_MALLOPT=0``.  Memory that numpy frees stays in the heap up to the
peak working set of the kernels (bounded by bands x workers, not by the
framebuffer size).  On systems without glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
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
        except (OSError, AttributeError):
            return False
        _done = ok
        return ok
