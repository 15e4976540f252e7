"""The recording driver: a pipe_screen / pipe_context that wraps another one.

How it works
------------
:class:`TraceScreen` wraps any object implementing the ``pipe_screen``
contract and :class:`TraceContext` any ``pipe_context`` (the threaded or the
direct numpipe context, or another wrapper): every call is forwarded to the
wrapped object unchanged, and when it returns, a *record* -- ``(op, target id,
argument snapshot, result)`` -- is appended to the recorder's pending list.
That append and the snapshot (see snapshot.py) are all a call pays; encoding,
hashing, compression and writing happen later: the pending list is encoded
at every flush (and when it grows past ``PENDING_CALLS`` records or
``PENDING_BYTES`` bytes, which bounds the memory), by the thread that
flushes, and a writer thread compresses and writes what the encoder produced.
The objects the application receives are the wrapped driver's own objects;
the recorder knows them by identity (``id``), registers each when the call
that created it returns, and notices when the application lets go of one (a
weak-reference finalizer appends a ``@release`` record).

Frames and segments.  A flush with PIPE_FLUSH_END_OF_FRAME ends a frame.
Until the first such flush has been seen, any flush after rendering work also
ends a *segment* (a trace of a program that never marks frames has a frame at
each such flush).  At the end of a segment the encoder writes what a replayer
needs to start at the next one: the live objects (each by a reference to its
definition blob), every context's bound state, open mappings.

Resource contents at a segment start are not copied at the boundary.
Instead the recorder notes, per resource, the segment in which it was last
*touched* (read or written by a call: a draw touches everything bound, a
clear its buffers, a copy its source and destination, a map for writing its
resource...).  At a resource's first touch in a segment, unless that touch
overwrites it completely (a full-surface clear, a whole-buffer upload), a
``@content`` record naming the contents it has at that point is emitted just
before the touching call: by reference to the digest the recorder already
knows when nothing has written the resource since that digest was taken, and
otherwise after reading it back through the context being recorded (a
transfer_map for reading: on a threaded context this waits for the queued
work, the one cost recording adds on the GPU side; bench/README.md measures
it).  A replayer starting at segment ``s`` creates the live objects, sets the
bound state and loads each ``@content`` it meets for a resource it has not
loaded yet; every resource it needs is then bit-identical to the recording,
because contents are read back exactly where the recorded frame first used
them.  A resource still untouched since its creation needs nothing (a fresh
resource is fresh in the replay too).  What cannot be read back (a mapping
the driver refuses) marks the segment as not startable, and a replayer then
starts at an earlier one.

Threads: a TraceContext, like any context, is used by one thread at a time;
several contexts (and the screen) may record from several threads.  Appends
to the shared pending list are atomic; the encoder takes the processed prefix
off the list under its lock, so records are encoded once, in list order.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from typing import Any

import numpy as np

from ..pipe.enums import Transfer
from . import calls
from . import snapshot as snap
from .calls import OPS, level_boxes
from .format import REF_MARK, TEMPLATE_FIELDS, TEMPLATE_MARK

PENDING_CALLS = 65536  # records held before they are encoded anyway
PENDING_BYTES = 64 << 20  # bytes of user data held before they are encoded anyway

FRESH = "fresh"  # a resource's contents are as created (nothing has written it)
WHOLE = "whole"  # @content of a first use that overwrites the resource whole

_OP_SCREEN = OPS[calls.SCREEN_CREATE]
_OP_CONTENT = OPS[calls.CONTENT]
_OP_RELEASE = OPS[calls.RELEASE]
_OP_WRITE = OPS[calls.WRITE]
BOUNDARY_MARK = -1  # op of the pending entry that ends a segment
# Flat records of the hottest calls (context.py): op + FLAT_* heads a tuple of plain values.
FLAT_REF = 1 << 20  # (FLAT_REF + op, context, object id or 0 for None): args (object,)
FLAT_VALUES = 2 << 20  # (FLAT_VALUES + op, context, *args)
FLAT_TEMPLATE = 3 << 20  # (FLAT_TEMPLATE + op, context, template index, *its one tuple field)


def expand_flat(item: tuple) -> tuple:
    """A flat record as ``(op, context, args, result)``."""
    kind, op = divmod(item[0], FLAT_REF)
    if kind == 1:
        args = ((REF_MARK, item[2]) if item[2] else None,)
    elif kind == 2:
        args = item[2:]
    else:
        args = ((TEMPLATE_MARK, item[2], (item[3:],)),)
    return (op, item[1], args, None)


class ObjInfo:
    """What the recorder knows of one object it registered."""

    __slots__ = ("kind", "ref_tuple", "res", "tid")

    def __init__(self, tid: int, kind: str, res: ResInfo | None = None) -> None:
        self.tid, self.kind, self.res = tid, kind, res
        self.ref_tuple = (REF_MARK, tid)  # how records name it (snapshot.py)


class ResInfo(ObjInfo):
    """A resource: its level boxes and the state of its contents (module doc)."""

    __slots__ = (
        "boxes", "content", "depth", "ref", "samples", "seg", "single", "stencil", "width0",
    )  # fmt: skip

    def __init__(self, tid: int, resource: Any, templ: Any) -> None:
        super().__init__(tid, "resource")
        self.res = self
        try:
            self.ref = weakref.ref(resource)
        except TypeError:
            self.ref = lambda: resource
        self.boxes = level_boxes(templ)
        self.width0 = int(templ.width0)
        self.samples = int(getattr(templ, "nr_samples", 0) or 0)
        self.single = len(self.boxes) == 1 and self.boxes[0].depth == 1
        self.seg = -1
        self.content: Any = FRESH
        fmt = getattr(templ, "format", 0)
        self.depth, self.stencil = _zs_bits(fmt)

    def covers(self, level: int, box: Any) -> bool:
        """True when ``box`` of ``level`` is the whole resource."""
        if not self.single or level != 0:
            return False
        b = self.boxes[0]
        return (box.x, box.y, box.z, box.width, box.height, box.depth) == (
            0,
            0,
            0,
            b.width,
            b.height,
            b.depth,
        )


class ContentRef:
    """Contents read back from a resource: level data until encoded, then digests."""

    __slots__ = ("levels", "names")

    def __init__(self, levels: list[bytes]) -> None:
        self.levels: list[bytes] | None = levels
        self.names: list[bytes] | None = None


def _zs_bits(fmt: Any) -> tuple[bool, bool]:
    from ..util.format import try_describe

    desc = try_describe(fmt) if fmt else None
    if desc is None:
        return False, False
    return bool(desc.is_depth), bool(desc.is_stencil)


class Recorder:
    """What the trace wrappers of one trace file share (see module doc)."""

    def __init__(
        self,
        path: str | os.PathLike,
        level: int = 6,
        pending_calls: int = PENDING_CALLS,
        pending_bytes: int = PENDING_BYTES,
    ) -> None:
        from .encoder import TraceEncoder
        from .writer import TraceWriter

        self.path = os.fspath(path)
        self.pend: list = []
        self.objs: dict[int, ObjInfo] = {}
        self.snap = snap.Snapshotter(self.objs)
        self.segment = 0
        self.eof_seen = False
        self.renders = False  # rendering since the last boundary
        self.broken = False  # a read-back failed in this segment
        self.pending_bytes = 0
        self.pending_calls_limit = pending_calls
        self.pending_bytes_limit = pending_bytes
        self.closed = False
        self.lock = threading.RLock()  # one encoder pass at a time
        self._touch_lock = threading.Lock()
        self._tids = itertools.count(1)
        self._immortal: list = []  # registered objects that cannot be weakly referenced
        self.writer = TraceWriter(self.path, level)
        self.encoder = TraceEncoder(self, self.writer)

    # -- objects ---------------------------------------------------------------------

    def register(self, obj: Any, kind: str, res: ResInfo | None = None) -> ObjInfo:
        info = ObjInfo(next(self._tids), kind, res)
        self._watch(obj, info)
        return info

    def register_resource(self, obj: Any, templ: Any) -> ResInfo:
        info = ResInfo(next(self._tids), obj, templ)
        self._watch(obj, info)
        return info

    def _watch(self, obj: Any, info: ObjInfo) -> None:
        key = id(obj)
        self.objs[key] = info
        try:
            fin = weakref.finalize(obj, self._released, key, info)
            fin.atexit = False
        except TypeError:
            self._immortal.append(obj)

    def _released(self, key: int, info: ObjInfo) -> None:
        if self.objs.get(key) is info:
            del self.objs[key]
        if not self.closed:
            self.pend.append((_OP_RELEASE, 0, (info.tid,), None))

    def resource_info(self, ctx: Any, res: Any) -> ResInfo | None:
        """The ResInfo of a resource argument (adopting one created before tracing)."""
        info = self.objs.get(id(res))
        if info is not None:
            return info.res
        if res is None or not all(hasattr(res, f) for f in ("target", "format", "width0")):
            return None
        return self.adopt(ctx, res)

    def adopt(self, ctx: Any, res: Any) -> ResInfo:
        """A resource the application made before tracing began: recorded as if
        created now, its contents read back at its first touch."""
        from ..pipe.state import ResourceTemplate

        templ = ResourceTemplate(
            **{f: getattr(res, f) for f in TEMPLATE_FIELDS[ResourceTemplate] if hasattr(res, f)}
        )
        info = self.register_resource(res, templ)
        info.content = None
        self.pend.append(
            (OPS[calls.ADOPT], ctx.screen._tid, (self.snap.template(templ),), info.ref_tuple)
        )
        return info

    # -- contents --------------------------------------------------------------------

    def touch(self, ctx: Any, info: ResInfo, write: bool, full: bool = False) -> None:
        """Note a call's use of a resource (module doc), before the call runs.

        A resource's first touch in a segment is taken under a lock, and its
        segment noted only once its ``@content`` record is in the list: a context
        on another thread that sees the note can rely on the record being before
        its own calls."""
        if info.seg != self.segment:
            with self._touch_lock:
                seg = self.segment
                if info.seg != seg:
                    if full:  # what it held does not matter: a replay may start here
                        self.pend.append((_OP_CONTENT, ctx._tid, (info.tid, WHOLE), None))
                    else:
                        content = info.content
                        if content is None:
                            content = info.content = self.capture(ctx, info)
                        if content is not FRESH:
                            self.pend.append((_OP_CONTENT, ctx._tid, (info.tid, content), None))
                    info.seg = seg
        if write:
            info.content = None

    def capture(self, ctx: Any, info: ResInfo) -> ContentRef | None:
        """Read a resource back through ``ctx`` (every level, every layer).

        A multisampled resource cannot be: a mapping shows one value a pixel, not its
        samples, so this segment cannot be a start (None)."""
        if info.samples > 1:
            self.broken = True
            return None
        res = info.ref()
        pipe = ctx._pipe
        levels = []
        try:
            for level, box in enumerate(info.boxes):
                data, xfer = pipe.transfer_map(res, level, Transfer.READ, box)
                try:
                    levels.append(np.ascontiguousarray(data).tobytes())
                finally:
                    pipe.transfer_unmap(xfer)
        except Exception:  # a mapping the driver refuses: this segment cannot be a start
            self.broken = True
            return None
        self.pending_bytes += sum(map(len, levels))
        return ContentRef(levels)

    # -- segments ----------------------------------------------------------------------

    def end_segment(self, ctx: Any, eof: bool) -> None:
        self.pend.append((BOUNDARY_MARK, ctx._tid, (eof, self.renders, self.broken), None))
        self.segment += 1
        self.renders = False
        self.broken = False
        if eof:
            self.eof_seen = True

    def drain(self) -> None:
        """Encode every pending record (any thread)."""
        with self.lock:
            if self.pend:
                self.encoder.process()
            self.pending_bytes = 0

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.drain()
            self.closed = True
            self.encoder.finish()
            self.writer.close()


class Kwargs(dict):
    """Keyword arguments of a recorded call (the last item of its arguments)."""


# -------------------------------------------------------------------------- entry points

_env_recorder: Recorder | None = None
_env_screens = 0
_env_files = 0
_env_lock = threading.Lock()


def record(
    screen: Any,
    path: str | os.PathLike,
    level: int = 6,
    pending_calls: int = PENDING_CALLS,
    pending_bytes: int = PENDING_BYTES,
) -> Any:
    """Wrap ``screen`` so that it and every context it creates are recorded to ``path``.

    Returns the recording screen (a :class:`~gallium.trace.screen.TraceScreen`):
    use it in place of ``screen``.  The trace is finished when the returned
    screen is destroyed (or ``close_trace()`` / the ``with`` block ends, or at
    interpreter exit).  ``level``: zlib compression level; ``pending_calls`` /
    ``pending_bytes``: how much is held before it is encoded even without a
    flush (the memory the recorder may use).
    """
    from .screen import TraceScreen

    rec = Recorder(path, level, pending_calls, pending_bytes)
    atexit.register(rec.close)
    return TraceScreen(screen, rec)


def record_from_environment(screen: Any) -> Any:
    """``GALLIUM_TRACE=path``: the process's screens record into one file.

    The file is finished when the last of those screens is destroyed (or at
    exit); a screen created after that records into ``path.1`` (then
    ``path.2``...), never over the finished file.
    """
    global _env_recorder, _env_screens, _env_files
    path = os.environ.get("GALLIUM_TRACE")
    if not path:
        return screen
    with _env_lock:
        if _env_recorder is None or _env_recorder.closed:
            name = path if _env_files == 0 else f"{path}.{_env_files}"
            _env_files += 1
            _env_recorder = Recorder(name)
            atexit.register(_env_recorder.close)
        _env_screens += 1
        rec = _env_recorder
    from .screen import TraceScreen

    return TraceScreen(screen, rec, owns_recorder=False, on_destroy=_env_screen_destroyed)


def _env_screen_destroyed(rec: Recorder) -> None:
    global _env_screens
    with _env_lock:
        _env_screens -= 1
        last = _env_screens == 0 and rec is _env_recorder
    if last:
        rec.close()
    else:
        rec.drain()
