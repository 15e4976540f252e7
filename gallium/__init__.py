"""numpipe: a Gallium3D-style software GPU driver in Python.

``gallium.create_screen()`` returns the software screen "numpipe"; its
``context_create()`` returns a :class:`threaded.ThreadedContext` (or the direct
context with ``threaded=False`` / ``GALLIUM_THREAD=0``).  The interface types
live in :mod:`gallium.pipe`, shaders in :mod:`gallium.tgsi`.
"""

from __future__ import annotations

import os

from . import pipe
from .pipe.errors import PipeError, PipeTypeError, PipeValueError, UnsupportedError
from .pipe.fence import Fence

__version__ = "0.1.0"


def create_screen(
    num_threads: int | None = None,
    processes: bool | None = None,
    *,
    trace: str | os.PathLike | bool | None = None,
):
    """Create the numpipe screen.

    ``num_threads`` is the size of the rasterizer worker pool (default:
    ``os.cpu_count()``; 0 rasterizes on the flushing thread).  ``processes``:
    with two or more workers, let each worker hand the bands of heavy scenes
    (an estimated 40 ms or more of band work that contends for the GIL: many
    small triangles, TGSI kernels or blending over large areas) to a band
    process of its own (default: on, unless the environment sets
    ``NUMPIPE_PROCESSES=0``; see workers/bandproc.py).  The output is the
    same either way.

    ``trace``: a path records every call on the screen and its contexts into
    that trace file (:mod:`gallium.trace`); None (the default) does so when
    the environment sets ``GALLIUM_TRACE=path`` (as Mesa's trace driver does,
    one file for all the process's screens); False never records.
    """
    import threaded

    from .numpipe.screen import NumpipeScreen

    # the composition: the software driver's screen, its contexts wrapped by
    # the threaded frontend (which knows only the contract, gallium.pipe), and
    # the whole wrapped by the trace recorder when asked (which knows only the
    # contract too)
    screen = NumpipeScreen(num_threads, processes, frontend=threaded.FRONTEND)
    if trace is None and os.environ.get("GALLIUM_TRACE"):
        from .trace.recorder import record_from_environment

        return record_from_environment(screen)
    if trace:
        from .trace.recorder import record

        return record(screen, trace)
    return screen


__all__ = [
    "Fence",
    "PipeError",
    "PipeTypeError",
    "PipeValueError",
    "UnsupportedError",
    "create_screen",
    "pipe",
]
