"""Recording, inspecting and replaying command streams (Mesa's driver_trace, and more).

``record(screen, path)`` wraps any ``pipe_screen`` in a recording screen (set
``GALLIUM_TRACE=path`` to have ``gallium.create_screen`` do it): every call on
it and on the contexts it creates is recorded with its arguments into a trace
file (format.py).  ``TraceReader(path)`` opens one, checked; ``replay(path)``
re-executes it on numpipe and yields each frame's colour buffer; a frame can
be replayed alone, from the state stored at its start (replay.py).  The
recorder is a wrapping driver: it knows the contract (calls.py), not the
driver it wraps (recorder.py).
"""

from __future__ import annotations

from .context import TraceContext
from .format import TraceFormatError
from .reader import Call, Frame, TraceReader
from .recorder import record, record_from_environment
from .replay import (
    FrameImage,
    HandleMismatchError,
    Replayer,
    TraceReplayError,
    parse_frames,
    replay,
)
from .screen import TraceScreen

__all__ = [
    "Call",
    "Frame",
    "FrameImage",
    "HandleMismatchError",
    "Replayer",
    "TraceContext",
    "TraceFormatError",
    "TraceReader",
    "TraceReplayError",
    "TraceScreen",
    "parse_frames",
    "record",
    "record_from_environment",
    "replay",
]
