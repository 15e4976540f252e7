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

from ..pipe.enums import PIPE_TIMEOUT_INFINITE, Clear, Flush, ShaderType, Transfer
from . import calls
from . import snapshot as snap
from .calls import OPS, level_boxes

PENDING_CALLS = 65536  # records held before they are encoded anyway
PENDING_BYTES = 64 << 20  # bytes of user data held before they are encoded anyway

FRESH = "fresh"  # a resource's contents are as created (nothing has written it)
_EOF = int(Flush.END_OF_FRAME)
_WRITE = int(Transfer.WRITE)
_PERSISTENT = int(Transfer.PERSISTENT)
_COMPUTE = int(ShaderType.COMPUTE)

_OP_SCREEN = OPS[calls.SCREEN_CREATE]
_OP_CONTENT = OPS[calls.CONTENT]
_OP_RELEASE = OPS[calls.RELEASE]
_OP_WRITE = OPS[calls.WRITE]
BOUNDARY_MARK = -1  # op of the pending entry that ends a segment
_USER_BUFFERS = (bytes, bytearray, memoryview, np.ndarray)


class ObjInfo:
    """What the recorder knows of one object it registered."""

    __slots__ = ("kind", "res", "tid")

    def __init__(self, tid: int, kind: str, res: ResInfo | None = None) -> None:
        self.tid, self.kind, self.res = tid, kind, res


class ResInfo(ObjInfo):
    """A resource: its level boxes and the state of its contents (module doc)."""

    __slots__ = ("boxes", "content", "depth", "ref", "seg", "single", "stencil", "width0")

    def __init__(self, tid: int, resource: Any, templ: Any) -> None:
        super().__init__(tid, "resource")
        self.res = self
        try:
            self.ref = weakref.ref(resource)
        except TypeError:
            self.ref = lambda: resource
        self.boxes = level_boxes(templ)
        self.width0 = int(templ.width0)
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

    def __init__(self, path: str | os.PathLike, level: int = 6) -> None:
        from .encoder import TraceEncoder
        from .writer import TraceWriter

        self.path = os.fspath(path)
        self.pend: list = []
        self.objs: dict[int, ObjInfo] = {}
        self.segment = 0
        self.eof_seen = False
        self.renders = False  # rendering since the last boundary
        self.broken = False  # a read-back failed in this segment
        self.pending_bytes = 0
        self.closed = False
        self.lock = threading.RLock()  # one encoder pass at a time
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
        snap.KEEP.add(type(obj))
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

    def resource_info(self, ctx: TraceContext, res: Any) -> ResInfo | None:
        """The ResInfo of a resource argument (adopting one created before tracing)."""
        info = self.objs.get(id(res))
        if info is not None:
            return info.res
        if res is None or not all(hasattr(res, f) for f in ("target", "format", "width0")):
            return None
        return self.adopt(ctx, res)

    def adopt(self, ctx: TraceContext, res: Any) -> ResInfo:
        """A resource the application made before tracing began: recorded as if
        created now, its contents read back at its first touch."""
        from ..pipe.state import ResourceTemplate

        templ = ResourceTemplate(
            **{
                f: getattr(res, f)
                for f in snap.TEMPLATE_FIELDS[ResourceTemplate]
                if hasattr(res, f)
            }
        )
        info = self.register_resource(res, templ)
        info.content = None
        self.pend.append((OPS[calls.ADOPT], ctx.screen._tid, (snap.template(templ),), res))
        return info

    # -- contents --------------------------------------------------------------------

    def touch(self, ctx: TraceContext, info: ResInfo, write: bool, full: bool = False) -> None:
        """Note a call's use of a resource (module doc), before the call runs."""
        if info.seg != self.segment:
            info.seg = self.segment
            if not full:
                content = info.content
                if content is None:
                    content = info.content = self.capture(ctx, info)
                if content is not FRESH:
                    self.pend.append((_OP_CONTENT, ctx._tid, (info.tid, content), None))
        if write:
            info.content = None

    def capture(self, ctx: TraceContext, info: ResInfo) -> ContentRef | None:
        """Read a resource back through ``ctx`` (every level, every layer)."""
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

    def end_segment(self, ctx: TraceContext, eof: bool) -> None:
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


def _forward(name: str, kind_of_result: str | None = None):
    """A method that forwards the call and records it as it was made."""
    op = OPS[name]
    attr = calls.SCREEN_ATTR.get(name, name)

    def method(self, *args, **kw):
        result = getattr(self._inner, attr)(*args, **kw)
        a = snap.args(args)
        if kw:
            a = (*a, Kwargs(snap.value(kw)))
        rec = result
        if kind_of_result == "info":
            rec = snap.value(result)
        self._pend.append((op, self._tid, a, rec))
        return result

    method.__name__ = attr
    method.__qualname__ = attr
    method.__doc__ = f"``{attr}``: forwarded to the wrapped object and recorded."
    return method


class Kwargs(dict):
    """Keyword arguments of a recorded call (the last item of its arguments)."""


class TraceScreen:
    """A ``pipe_screen`` that records every call made on it and its contexts."""

    def __init__(
        self, screen: Any, recorder: Recorder, owns_recorder: bool = True, on_destroy: Any = None
    ) -> None:
        self._inner = screen
        self._tr = recorder
        self._pend = recorder.pend
        self._owns = owns_recorder
        self._on_destroy = on_destroy
        info = recorder.register(self, "screen")
        self._tid = info.tid
        name = screen.get_name() if hasattr(screen, "get_name") else type(screen).__name__
        self._pend.append((_OP_SCREEN, 0, (str(name),), self))

    @property
    def trace_path(self) -> str:
        return self._tr.path

    def resource_create(self, templ):
        res = self._inner.resource_create(templ)
        self._tr.register_resource(res, templ)
        self._pend.append((OPS["resource_create"], self._tid, (snap.template(templ),), res))
        return res

    def context_create(self, priv=None, flags=0, **kw):
        pipe = self._inner.context_create(priv, flags, **kw)
        ctx = TraceContext(self, pipe)
        a = (snap.value(priv), flags)
        if kw:
            a = (*a, Kwargs(snap.value(kw)))
        self._pend.append((OPS["context_create"], self._tid, a, ctx))
        return ctx

    def resource_destroy(self, resource):
        self._inner.resource_destroy(resource)
        self._pend.append((OPS["resource_destroy"], self._tid, (resource,), None))

    def fence_finish(self, ctx, fence, timeout_ns=PIPE_TIMEOUT_INFINITE):
        inner = ctx._pipe if isinstance(ctx, TraceContext) else ctx
        ok = self._inner.fence_finish(inner, fence, timeout_ns)
        self._pend.append((OPS["screen_fence_finish"], self._tid, (ctx, fence, timeout_ns), ok))
        return ok

    def destroy(self):
        """Destroy the wrapped screen and finish the trace file."""
        self._pend.append((OPS["screen_destroy"], self._tid, (), None))
        try:
            self._inner.destroy()
        finally:
            if self._owns:
                self._tr.close()
            elif self._on_destroy is not None:
                self._on_destroy(self._tr)

    def close_trace(self) -> None:
        """Finish the trace file now (the screen stays usable, unrecorded)."""
        self._tr.close()

    def __enter__(self) -> TraceScreen:
        return self

    def __exit__(self, *exc) -> None:
        self._tr.close()

    def __getattr__(self, name: str) -> Any:
        # non-contract attributes of the wrapped screen (numpipe's pool, ...)
        if name.startswith("__") or name in ("_inner", "_tr"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"<TraceScreen {self._tr.path!r} over {self._inner!r}>"


for _name, _kind in calls.SCREEN_METHODS.items():
    if _name not in TraceScreen.__dict__ and calls.SCREEN_ATTR.get(_name, _name) not in (
        TraceScreen.__dict__
    ):
        setattr(
            TraceScreen,
            calls.SCREEN_ATTR.get(_name, _name),
            _forward(_name, "info" if _kind == calls.INFO else None),
        )


class TraceContext:
    """A ``pipe_context`` that records every call (module doc)."""

    def __init__(self, screen: TraceScreen, pipe: Any) -> None:
        tr = screen._tr
        self._tr = tr
        self._pend = tr.pend
        self._pipe = self._inner = pipe
        self.screen = screen
        self._tid = tr.register(self, "context").tid
        # resources bound for draws and grids: key -> (ResInfo, written, compute stage)
        self._bound: dict[Any, tuple[ResInfo, bool, bool]] = {}
        self._draw_seg = -1  # segment in which the bound resources were last touched by a draw
        self._grid_seg = -1
        self._outputs: list[tuple[ResInfo, bool, int]] = []  # fb: (res, full-size, clear bits)
        self._render_cond = False
        self._window_rects = False
        self._maps: dict[int, Any] = {}  # id(transfer) -> mapped data (written at unmap)
        self._persistent: list[list] = []  # [transfer, data, bytes last recorded]

    # ------------------------------------------------------------------ helpers

    def _res(self, res: Any) -> ResInfo | None:
        info = self._tr.objs.get(id(res))
        if info is not None:
            return info.res
        return self._tr.resource_info(self, res)

    def _touch(self, res: Any, write: bool, full: bool = False) -> None:
        info = self._res(res)
        if info is not None:
            self._tr.touch(self, info, write, full)

    def _touch_bound(self, compute: bool) -> None:
        tr = self._tr
        for info, write, stage_compute in list(self._bound.values()):
            if stage_compute == compute:
                tr.touch(self, info, write)
        if compute:
            self._grid_seg = tr.segment
        else:
            self._draw_seg = tr.segment

    def _bind(self, key: Any, res: Any, write: bool, compute: bool = False) -> None:
        info = self._res(res) if res is not None else None
        if info is None:
            self._bound.pop(key, None)
            return
        self._bound[key] = (info, write, compute)
        if compute:
            self._grid_seg = -1
        else:
            self._draw_seg = -1

    def _persistent_writes(self) -> None:
        """Record what the application wrote through persistent mappings since the last look."""
        for entry in self._persistent:
            xfer, data, last = entry
            now = np.ascontiguousarray(data).tobytes()
            if now != last:
                entry[2] = now
                self._pend.append((_OP_WRITE, self._tid, (xfer, now), None))

    def _record(self, name: str, args: tuple, result: Any = None) -> None:
        self._pend.append((OPS[name], self._tid, args, result))
        if len(self._pend) >= PENDING_CALLS or self._tr.pending_bytes >= PENDING_BYTES:
            self._tr.drain()

    def _data(self, data: Any) -> Any:
        self._tr.pending_bytes += snap.nbytes(data)
        return snap.value(data)

    # ------------------------------------------------------------------ hot state calls

    def set_blend_color(self, color):
        self._pipe.set_blend_color(color)
        self._pend.append((_OP_SET_BLEND_COLOR, self._tid, (snap.template(color),), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    def set_stencil_ref(self, ref):
        self._pipe.set_stencil_ref(ref)
        self._pend.append((_OP_SET_STENCIL_REF, self._tid, (snap.template(ref),), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    def set_sample_mask(self, mask):
        self._pipe.set_sample_mask(mask)
        self._pend.append((_OP_SET_SAMPLE_MASK, self._tid, (mask,), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    def bind_blend_state(self, cso):
        self._pipe.bind_blend_state(cso)
        self._pend.append((_OP_BIND_BLEND, self._tid, (cso,), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    def bind_depth_stencil_alpha_state(self, cso):
        self._pipe.bind_depth_stencil_alpha_state(cso)
        self._pend.append((_OP_BIND_DSA, self._tid, (cso,), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    def bind_rasterizer_state(self, cso):
        self._pipe.bind_rasterizer_state(cso)
        self._pend.append((_OP_BIND_RAST, self._tid, (cso,), None))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()

    # ------------------------------------------------------------------ bindings of resources

    def set_framebuffer_state(self, state):
        self._pipe.set_framebuffer_state(state)
        for key in [k for k in self._bound if k[0] == "fb"]:
            del self._bound[key]
        outputs = []
        for i, surf in enumerate([*state.cbufs, state.zsbuf]):
            sinfo = self._tr.objs.get(id(surf)) if surf is not None else None
            if sinfo is None or sinfo.res is None:
                continue
            info = sinfo.res
            zs = i == len(state.cbufs)
            self._bound["fb", i] = (info, True, False)
            b = info.boxes[0]
            full = info.single and (state.width, state.height) == (b.width, b.height)
            if zs:
                bits = (int(Clear.DEPTH) if info.depth else 0) | (
                    int(Clear.STENCIL) if info.stencil else 0
                )
            else:
                bits = int(Clear.COLOR0) << i
            outputs.append((info, full, bits))
        self._outputs = outputs
        self._draw_seg = -1
        self._record("set_framebuffer_state", (snap.template(state),))

    def set_vertex_buffers(self, start_slot, buffers):
        self._pipe.set_vertex_buffers(start_slot, buffers)
        for i, vb in enumerate(buffers):
            buf = getattr(vb, "buffer", None) if vb is not None else None
            if buf is None or isinstance(buf, _USER_BUFFERS):
                self._bound.pop(("vb", start_slot + i), None)
                self._tr.pending_bytes += snap.nbytes(buf)
            else:
                self._bind(("vb", start_slot + i), buf, False)
        self._record("set_vertex_buffers", (start_slot, snap.value(list(buffers))))

    def set_constant_buffer(self, shader, index, cb):
        self._pipe.set_constant_buffer(shader, index, cb)
        buf = getattr(cb, "buffer", None) if cb is not None else None
        key = ("cb", int(shader), index)
        if buf is not None:
            self._bind(key, buf, False, int(shader) == _COMPUTE)
        elif key in self._bound:
            del self._bound[key]
        user = getattr(cb, "user_buffer", None) if cb is not None else None
        if user is not None:
            self._tr.pending_bytes += snap.nbytes(user)
        self._record("set_constant_buffer", (shader, index, snap.value(cb)))

    def set_sampler_views(self, shader, start, views):
        self._pipe.set_sampler_views(shader, start, views)
        objs = self._tr.objs
        compute = int(shader) == _COMPUTE
        for i, view in enumerate(views):
            vinfo = objs.get(id(view)) if view is not None else None
            key = ("view", int(shader), start + i)
            if vinfo is None or vinfo.res is None:
                self._bound.pop(key, None)
            else:
                self._bound[key] = (vinfo.res, False, compute)
                self._draw_seg = self._grid_seg = -1
        self._record("set_sampler_views", (shader, start, list(views)))

    def set_shader_buffers(self, shader, start, buffers):
        self._pipe.set_shader_buffers(shader, start, buffers)
        compute = int(shader) == _COMPUTE
        for i, b in enumerate(buffers):
            self._bind(("ssbo", int(shader), start + i), getattr(b, "buffer", None), True, compute)
        self._record("set_shader_buffers", (shader, start, snap.value(list(buffers))))

    def set_shader_images(self, shader, start, images):
        self._pipe.set_shader_images(shader, start, images)
        compute = int(shader) == _COMPUTE
        for i, v in enumerate(images):
            self._bind(
                ("image", int(shader), start + i), getattr(v, "resource", None), True, compute
            )
        self._record("set_shader_images", (shader, start, snap.value(list(images))))

    def set_stream_output_targets(self, targets, offsets):
        self._pipe.set_stream_output_targets(targets, offsets)
        for key in [k for k in self._bound if k[0] == "so"]:
            del self._bound[key]
        for i, t in enumerate(targets):
            tinfo = self._tr.objs.get(id(t)) if t is not None else None
            if tinfo is not None and tinfo.res is not None:
                self._bound["so", i] = (tinfo.res, True, False)
        self._draw_seg = -1
        self._record("set_stream_output_targets", (list(targets), snap.value(list(offsets))))

    def render_condition(self, query, condition=False, mode=0):
        self._pipe.render_condition(query, condition, mode)
        self._render_cond = query is not None
        self._record("render_condition", (query, condition, mode))

    def set_window_rectangles(self, include, rects):
        self._pipe.set_window_rectangles(include, rects)
        self._window_rects = bool(include) or len(rects) > 0
        self._record("set_window_rectangles", (include, snap.value(list(rects))))

    # ------------------------------------------------------------------ work

    def draw_vbo(self, info):
        tr = self._tr
        if self._draw_seg != tr.segment:
            self._touch_bound(False)
        index = info.index
        if index is not None and info.index_size:
            if id(index) in tr.objs:
                self._touch(index, False)
            else:
                tr.pending_bytes += snap.nbytes(index)
        indirect = info.indirect
        if indirect is not None:
            for b in (
                getattr(indirect, "buffer", None),
                getattr(indirect, "indirect_draw_count", None),
            ):
                if b is not None:
                    self._touch(b, False)
        if info.count_from_stream_output is not None:
            tr.broken = True  # the target's fill level is GPU state: not captured
        if self._persistent:
            self._persistent_writes()
        self._pipe.draw_vbo(info)
        tr.renders = True
        self._pend.append((_OP_DRAW_VBO, self._tid, (snap.template(info),), None))
        if len(self._pend) >= PENDING_CALLS or tr.pending_bytes >= PENDING_BYTES:
            tr.drain()

    def clear(self, buffers, color=None, depth=1.0, stencil=0, scissor_state=None):
        tr = self._tr
        bits = int(buffers)
        whole = scissor_state is None and not self._render_cond and not self._window_rects
        for info, full_size, need in self._outputs:
            if bits & need:
                tr.touch(self, info, True, whole and full_size and bits & need == need)
        if self._persistent:
            self._persistent_writes()
        self._pipe.clear(buffers, color, depth, stencil, scissor_state)
        tr.renders = True
        self._record(
            "clear", (buffers, snap.value(color), depth, stencil, snap.value(scissor_state))
        )

    def clear_render_target(
        self, dst, color, dstx, dsty, width, height, render_condition_enabled=False
    ):
        sinfo = self._tr.objs.get(id(dst))
        if sinfo is not None and sinfo.res is not None:
            self._tr.touch(self, sinfo.res, True, False)
        self._pipe.clear_render_target(
            dst, color, dstx, dsty, width, height, render_condition_enabled
        )
        self._tr.renders = True
        self._record(
            "clear_render_target",
            (dst, snap.value(color), dstx, dsty, width, height, render_condition_enabled),
        )

    def clear_depth_stencil(
        self,
        dst,
        clear_flags,
        depth,
        stencil,
        dstx,
        dsty,
        width,
        height,
        render_condition_enabled=False,
    ):
        sinfo = self._tr.objs.get(id(dst))
        if sinfo is not None and sinfo.res is not None:
            self._tr.touch(self, sinfo.res, True, False)
        self._pipe.clear_depth_stencil(
            dst, clear_flags, depth, stencil, dstx, dsty, width, height, render_condition_enabled
        )
        self._tr.renders = True
        self._record(
            "clear_depth_stencil",
            (dst, clear_flags, depth, stencil, dstx, dsty, width, height, render_condition_enabled),
        )

    def clear_buffer(self, resource, offset, size, value):
        info = self._res(resource)
        if info is not None:
            self._tr.touch(self, info, True, offset == 0 and size == info.width0 and info.single)
        self._pipe.clear_buffer(resource, offset, size, value)
        self._tr.renders = True
        self._record("clear_buffer", (resource, offset, size, self._data(value)))

    def clear_texture(self, resource, level, box, data):
        self._touch(resource, True)
        self._pipe.clear_texture(resource, level, box, data)
        self._tr.renders = True
        self._record("clear_texture", (resource, level, snap.value(box), self._data(data)))

    def resource_copy_region(self, dst, dst_level, dstx, dsty, dstz, src, src_level, src_box):
        self._touch(src, False)
        self._touch(dst, True)
        if self._persistent:
            self._persistent_writes()
        self._pipe.resource_copy_region(dst, dst_level, dstx, dsty, dstz, src, src_level, src_box)
        self._tr.renders = True
        self._record(
            "resource_copy_region",
            (dst, dst_level, dstx, dsty, dstz, src, src_level, snap.value(src_box)),
        )

    def blit(self, info):
        src = getattr(getattr(info, "src", None), "resource", None)
        dst = getattr(getattr(info, "dst", None), "resource", None)
        if src is not None:
            self._touch(src, False)
        if dst is not None:
            self._touch(dst, True)
        if self._persistent:
            self._persistent_writes()
        self._pipe.blit(info)
        self._tr.renders = True
        self._record("blit", (snap.value(info),))

    def launch_grid(self, info):
        tr = self._tr
        if self._grid_seg != tr.segment:
            self._touch_bound(True)
        indirect = getattr(info, "indirect", None)
        if indirect is not None:
            self._touch(indirect, False)
        if self._persistent:
            self._persistent_writes()
        self._pipe.launch_grid(info)
        tr.renders = True
        self._record("launch_grid", (snap.value(info),))

    def generate_mipmap(self, resource, format, base_level, last_level, first_layer, last_layer):
        self._touch(resource, True)
        ok = self._pipe.generate_mipmap(
            resource, format, base_level, last_level, first_layer, last_layer
        )
        self._tr.renders = True
        self._record(
            "generate_mipmap",
            (resource, format, base_level, last_level, first_layer, last_layer),
            snap.value(ok),
        )
        return ok

    def buffer_subdata(self, resource, usage, offset, data):
        info = self._res(resource)
        if info is not None:
            full = offset == 0 and snap.nbytes(data) >= info.width0 and info.single
            self._tr.touch(self, info, True, full)
        self._pipe.buffer_subdata(resource, usage, offset, data)
        self._record("buffer_subdata", (resource, usage, offset, self._data(data)))

    def texture_subdata(self, resource, level, usage, box, data, stride=0, layer_stride=0):
        info = self._res(resource)
        if info is not None:
            self._tr.touch(self, info, True, info.covers(level, box))
        self._pipe.texture_subdata(resource, level, usage, box, data, stride, layer_stride)
        self._record(
            "texture_subdata",
            (resource, level, usage, snap.value(box), self._data(data), stride, layer_stride),
        )

    # ------------------------------------------------------------------ transfers

    def _map_touch(self, resource, level, usage, box) -> None:
        if int(usage) & _WRITE:
            info = self._res(resource)
            if info is not None:
                self._tr.touch(self, info, True, info.covers(level, box))

    def _mapped(self, resource, level, usage, box, result):
        data, xfer = result
        if xfer is not None:
            self._tr.register(xfer, "transfer")
            if int(usage) & _WRITE:
                self._maps[id(xfer)] = data
                if int(usage) & _PERSISTENT:
                    self._persistent.append([xfer, data, np.ascontiguousarray(data).tobytes()])
        self._record("transfer_map", (resource, level, usage, snap.value(box)), xfer)
        return result

    def transfer_map(self, resource, level, usage, box):
        self._map_touch(resource, level, usage, box)
        return self._mapped(
            resource, level, usage, box, self._pipe.transfer_map(resource, level, usage, box)
        )

    async def transfer_map_async(self, resource, level, usage, box):
        self._map_touch(resource, level, usage, box)
        result = await self._pipe.transfer_map_async(resource, level, usage, box)
        return self._mapped(resource, level, usage, box, result)

    def transfer_flush_region(self, transfer, box):
        self._pipe.transfer_flush_region(transfer, box)
        self._record("transfer_flush_region", (transfer, snap.value(box)))

    def transfer_unmap(self, transfer):
        data = self._maps.pop(id(transfer), None)
        payload = None
        if data is not None:
            payload = np.ascontiguousarray(data).tobytes()
            self._tr.pending_bytes += len(payload)
            self._persistent = [e for e in self._persistent if e[0] is not transfer]
        self._pipe.transfer_unmap(transfer)
        self._record("transfer_unmap", (transfer, payload))

    # ------------------------------------------------------------------ flush

    def flush(self, flags=0):
        tr = self._tr
        eof = bool(int(flags) & _EOF)
        boundary = eof or (tr.renders and not tr.eof_seen)
        if boundary:
            # what the frame shows: contents of its outputs even if it never touched them
            for info, _full, _bits in self._outputs:
                tr.touch(self, info, False)
        if self._persistent:
            self._persistent_writes()
        fence = self._pipe.flush(flags)
        if fence is not None:
            tr.register(fence, "fence")
        self._pend.append((_OP_FLUSH, self._tid, (flags,), fence))
        if boundary:
            tr.end_segment(self, eof)
        tr.drain()
        return fence

    def fence_finish(self, fence, timeout_ns):
        ok = self._pipe.fence_finish(fence, timeout_ns)
        self._record("fence_finish", (fence, timeout_ns), ok)
        return ok

    # ------------------------------------------------------------------ queries (answers recorded)

    def get_query_result(self, query, wait=True):
        result = self._pipe.get_query_result(query, wait)
        self._record("get_query_result", (query, wait), snap.value(result))
        return result

    async def get_query_result_async(self, query):
        result = await self._pipe.get_query_result_async(query)
        self._record("get_query_result", (query, True), snap.value(result))
        return result

    # ------------------------------------------------------------------ creation

    def _create(self, name: str, obj: Any, args: tuple, res: Any = None) -> Any:
        info = self._res(res) if res is not None else None
        self._tr.register(obj, name, info)
        self._record(name, args, obj)
        return obj

    def create_surface(self, resource, templ):
        surf = self._pipe.create_surface(resource, templ)
        return self._create("create_surface", surf, (resource, snap.template(templ)), resource)

    def create_sampler_view(self, resource, templ):
        view = self._pipe.create_sampler_view(resource, templ)
        return self._create("create_sampler_view", view, (resource, snap.template(templ)), resource)

    def create_stream_output_target(self, resource, buffer_offset, buffer_size):
        t = self._pipe.create_stream_output_target(resource, buffer_offset, buffer_size)
        return self._create(
            "create_stream_output_target", t, (resource, buffer_offset, buffer_size), resource
        )

    def create_query(self, query_type, index=0):
        q = self._pipe.create_query(query_type, index)
        return self._create("create_query", q, (query_type, index))

    def create_vertex_elements_state(self, elements):
        cso = self._pipe.create_vertex_elements_state(elements)
        return self._create("create_vertex_elements_state", cso, (snap.value(list(elements)),))

    def destroy(self):
        self._tr.drain()
        self._pipe.destroy()
        self._record("destroy", ())
        self._tr.drain()

    def __getattr__(self, name: str) -> Any:
        # non-contract attributes of the wrapped context (threaded stats, ready_async...)
        if name.startswith("__") or name in ("_pipe", "_inner", "_tr"):
            raise AttributeError(name)
        return getattr(self._pipe, name)

    def __repr__(self) -> str:
        return f"<TraceContext over {self._pipe!r}>"


def _create_method(name: str):
    op = OPS[name]

    def method(self, state):
        cso = getattr(self._pipe, name)(state)
        self._tr.register(cso, name)
        self._pend.append((op, self._tid, (snap.value(state),), cso))
        return cso

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: forwarded, the new object registered, recorded."
    return method


def _plain_method(name: str):
    op = OPS[name]

    def method(self, *args, **kw):
        result = getattr(self._pipe, name)(*args, **kw)
        a = snap.args(args)
        if kw:
            a = (*a, Kwargs(snap.value(kw)))
        self._pend.append((op, self._tid, a, snap.value(result)))
        if len(self._pend) >= PENDING_CALLS:
            self._tr.drain()
        return result

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: forwarded and recorded."
    return method


for _name, _kind in calls.CONTEXT_METHODS.items():
    if _name in TraceContext.__dict__:
        continue
    if _kind == calls.CREATE:
        setattr(TraceContext, _name, _create_method(_name))
    else:
        setattr(TraceContext, _name, _plain_method(_name))

_OP_SET_BLEND_COLOR = OPS["set_blend_color"]
_OP_SET_STENCIL_REF = OPS["set_stencil_ref"]
_OP_SET_SAMPLE_MASK = OPS["set_sample_mask"]
_OP_BIND_BLEND = OPS["bind_blend_state"]
_OP_BIND_DSA = OPS["bind_depth_stencil_alpha_state"]
_OP_BIND_RAST = OPS["bind_rasterizer_state"]
_OP_DRAW_VBO = OPS["draw_vbo"]
_OP_FLUSH = OPS["flush"]


# -------------------------------------------------------------------------- entry points

_env_recorder: Recorder | None = None
_env_screens = 0
_env_files = 0
_env_lock = threading.Lock()


def record(screen: Any, path: str | os.PathLike, level: int = 6) -> TraceScreen:
    """Wrap ``screen`` so that it and every context it creates are recorded to ``path``.

    Returns the recording screen: use it in place of ``screen``.  The trace is
    finished when the returned screen is destroyed (or ``close_trace()`` /
    the ``with`` block ends, or at interpreter exit).
    """
    rec = Recorder(path, level)
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
