"""ThreadedContext: Mesa's u_threaded_context, in Python, with an async face.

How it works
------------
The application calls ``pipe_context`` methods on a :class:`ThreadedContext`.
Most calls are not executed; they are *recorded*: the function to run on the
real (direct) context and its arguments are appended to the current
:class:`~threaded._ring.Batch`.  A full batch, or a flush, is *submitted* to a
bounded :class:`~threaded._ring.Ring`; one *driver thread* per context takes
batches out of the ring in order and executes their calls on the direct
context.  The application thread therefore only pays for recording, and
rendering setup runs in parallel with it (and rasterization, on the worker
pool, in parallel with both).

Rules (numbered as in Mesa's u_threaded_context.h, adapted):

1. Execution order equals record order, across batches and syncs.  The
   driver thread is the only thread that calls the direct context, except
   while the application holds a *sync* (below), when the driver thread is
   idle and the ring is empty.  Driver callbacks therefore never run
   concurrently.
2. ``create_*`` of CSOs, shaders, queries, sampler views, surfaces and stream
   output targets run at once on the caller's thread (the direct context's
   create paths touch no context state) and are counted as direct calls.
3. A call that needs a result or the driver's current state *syncs*: it
   submits the current batch, waits until the driver thread has executed
   everything, and runs on the caller's thread while holding the recording
   lock.  Every sync is counted with its reason (``ctx.stats``).
4. Arguments are copied when recorded: state templates are snapshotted, user
   buffers (vertex data, constants, indices, small ``buffer_subdata``) are
   copied into the batch, so the caller may reuse them at once.
5. No-stall paths for buffers: a ``transfer_map`` with DISCARD_WHOLE_RESOURCE
   of a busy buffer gets fresh storage (queued work keeps reading the old
   storage, later work sees the new); a map of a range never written, or of
   an idle buffer, is promoted to UNSYNCHRONIZED; a DISCARD_RANGE map of a
   busy buffer writes to a staging copy applied in order at unmap, and a
   discard of the whole valid range becomes a whole-resource discard; an
   UNSYNCHRONIZED map overlapping a pending staging upload waits after all.
6. ``flush()`` returns its fence at once.  With PIPE_FLUSH_DEFERRED the batch
   is not submitted; the first wait on the fence, from any thread or task,
   submits it.  Submission only needs the recording lock, which the driver
   thread never takes, so no deadlock is possible.
7. An exception raised by a recorded call on the driver thread is caught,
   kept by the direct context (which reports a device reset and fires the
   reset callback), and raised on the application's side at its next sync
   point; the remaining calls of the batch still execute.
8. A full ring blocks the recording call only until the driver thread takes
   its next batch (one batch's execution).  Async producers await
   ``ctx.ready_async()`` between calls instead: it returns at once while the
   ring has room and otherwise suspends the task (the event loop keeps
   running) until the driver thread takes a batch, so their recording calls
   never block at all.

Threading contract: like any pipe_context, a ThreadedContext is used by one
application thread at a time.  Its fences may be waited on, and deferred
fences submitted, from any thread.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from typing import Any

import numpy as np

from gallium.numpipe import objects
from gallium.numpipe.blit import check_blit_info, check_clear_texture, mipmap_blits
from gallium.numpipe.compute import (
    check_compute_cso,
    check_grid_info,
    check_shader_buffers,
    check_shader_images,
)
from gallium.numpipe.context import (
    NumpipeContext,
    _user_bytes,
    check_blend_color,
    check_blend_cso,
    check_clear,
    check_clear_flags_zs,
    check_clip_state,
    check_constant_buffer,
    check_draw_info,
    check_dsa_cso,
    check_flush_flags,
    check_framebuffer_state,
    check_min_samples,
    check_numbers,
    check_rasterizer_cso,
    check_render_condition,
    check_sample_mask,
    check_scissor_states,
    check_shader_cso,
    check_slots,
    check_stencil_ref,
    check_subdata,
    check_surface_clear,
    check_vertex_buffers,
    check_vertex_elements_cso,
    check_viewport_states,
)
from gallium.numpipe.objects import (
    Query,
    SamplerCSO,
    SamplerView,
    TransferObject,
    check_transfer_usage,
)
from gallium.numpipe.resource import Resource
from gallium.numpipe.window import check_window_rectangles
from gallium.pipe.enums import (
    PIPE_MAX_SAMPLERS,
    PIPE_MAX_SHADER_SAMPLER_VIEWS,
    Flush,
    QueryType,
    ShaderType,
    Transfer,
)
from gallium.pipe.errors import ContextDestroyedError, bad_type, bad_value
from gallium.pipe.fence import Fence
from gallium.pipe.state import Box, DrawInfo, FramebufferState

from ._ring import BATCH_SLOTS, QUEUED_BATCHES, Batch, Ring
from .stats import TcStats, counter_for_query

SMALL_SUBDATA = 320  # bytes: buffer_subdata up to this size is copied into the batch
# The driver thread sleeps this long after a batch when another one is queued
# (with none, waiting for the next hands the GIL over): a real sleep (not 0),
# so that a thread waiting for the GIL is sure to take it.
_YIELD_S = 50e-6
# ... and, inside a batch, at the vertex pipeline's stage boundaries once this
# long has passed since the last hand-over (see ``_yield_point``).
_YIELD_EVERY_S = 1e-3
_STOP = object()
_ids = itertools.count(1)


class ThreadedContext:
    """A ``pipe_context`` that records calls for a driver thread (see module doc)."""

    def __init__(
        self,
        pipe: NumpipeContext,
        batch_slots: int = BATCH_SLOTS,
        queued_batches: int = QUEUED_BATCHES,
    ) -> None:
        self.id = next(_ids)
        self.pipe = pipe
        self.screen = pipe.screen
        # the direct context's state appliers, bound once (hot recording paths)
        self._apply_blend = pipe._apply_blend
        self._apply_dsa = pipe._apply_dsa
        self._apply_rasterizer = pipe._apply_rasterizer
        self._apply_vertex_elements = pipe._apply_vertex_elements
        self._apply_blend_color = pipe._apply_blend_color
        self._apply_stencil_ref = pipe._apply_stencil_ref
        self._apply_sample_mask = pipe._apply_sample_mask
        self._draw_vbo = pipe.draw_vbo
        self._flush_call = self._driver_flush
        self.batch_slots = batch_slots
        self.stats = TcStats()
        self.destroyed = False
        self._lock = threading.Lock()  # guards the recording batch; never taken by the driver
        self._ring = Ring(queued_batches)
        self._executed_cv = threading.Condition()
        self._executed_seq = 0  # last batch finished by the driver thread
        self._submitted_seq = 0
        self._batch = Batch(1)
        self._call_seq = 0  # increments per recorded call
        self.stats.recorded_calls_source = lambda: self._call_seq
        self._flushes: list[tuple[int, Fence]] = []  # (call seq, fence) of recorded flushes
        self._staging: dict[int, list[tuple[int, int, int]]] = {}  # res id -> [(batch, lo, hi)]
        # shadow of bindings, for draw validation and busy tracking
        self._bound: dict[str, Any] = {"vs": None, "fs": None, "fb": FramebufferState()}
        self._vbufs: dict[int, Resource] = {}
        self._cbufs: dict[tuple[int, int], Resource] = {}
        self._views: dict[tuple[int, int], Resource] = {}
        self._ssbos: dict[tuple[int, int], Resource] = {}
        self._image_views: dict[tuple[int, int], Resource] = {}
        # (query, end serial) ended with no flush recorded after yet
        self._unflushed_queries: list[tuple[Any, int]] = []
        # guards each query's tc_serial / tc_flushed pair; held only for a few
        # assignments, by the application and the driver thread alike
        self._query_lock = threading.Lock()
        self._last_yield = 0.0
        pipe.yield_point = self._yield_point
        self._thread = threading.Thread(
            target=self._driver_loop, name=f"numpipe-driver-{self.id}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ machinery

    def _record(self, fn: Any, args: tuple = (), slots: int = 1) -> None:
        """Append a call to the current batch (submitting it when full)."""
        if self.destroyed:
            raise ContextDestroyedError("this context has been destroyed")
        with self._lock:
            b = self._batch
            b.calls.append((fn, args))
            b.slots += slots
            self._call_seq += 1
            if b.slots >= self.batch_slots:
                self._submit_locked()

    def _record_locked(self, fn: Any, args: tuple = (), slots: int = 1) -> None:
        """``_record`` for callers that already hold the recording lock."""
        if self.destroyed:
            raise ContextDestroyedError("this context has been destroyed")
        b = self._batch
        b.calls.append((fn, args))
        b.slots += slots
        self._call_seq += 1
        if b.slots >= self.batch_slots:
            self._submit_locked()

    def _submit_locked(self) -> int:
        """Submit the current batch (caller holds the lock); returns its seq."""
        b = self._batch
        if not b.calls:
            return self._submitted_seq
        self._batch = Batch(b.seq + 1)
        self._submitted_seq = b.seq
        self.stats.batches += 1
        if self._ring.put(b):
            self.stats.ring_full_waits += 1
        return b.seq

    def _submit_upto(self, seq: int) -> None:
        """Make sure batch ``seq`` is submitted (any thread; deferred fences)."""
        with self._lock:
            if self._batch.seq <= seq and self._batch.calls:
                self._submit_locked()

    def _wait_executed(self, seq: int) -> None:
        with self._executed_cv:
            while self._executed_seq < seq:
                self._executed_cv.wait()

    def _sync_locked(self, reason: str) -> None:
        """Submit everything and wait until the driver thread has executed it."""
        seq = self._submit_locked()
        self.stats.sync(reason)
        self._wait_executed(seq)

    def sync(self, reason: str = "explicit") -> None:
        """Wait for all recorded work to be executed by the driver thread."""
        with self._lock:
            self._sync_locked(reason)

    def _driver_loop(self) -> None:
        pipe = self.pipe
        pipe.driver_thread_id = threading.get_ident()
        while True:
            batch = self._ring.get()
            if batch is _STOP:
                return
            # Waiting for the batch left the GIL free: count the ~1 ms before
            # the next hand-over from now (a frame's first vertex-pipeline
            # stage does not sleep just because the last batch was long ago).
            self._last_yield = time.perf_counter()
            self._execute(batch.calls)
            batch.executed = True
            self.stats.executed_batches += 1
            with self._executed_cv:
                self._executed_seq = batch.seq
                self._executed_cv.notify_all()
            # Hand the GIL over between batches: a thread waiting for it (an
            # event loop that records, a syncing caller) gets it now instead
            # of after the interpreter's switch interval (5 ms), so the
            # application never waits on this thread for much longer than one
            # batch.  With no batch queued the next get() blocks, which hands
            # it over as well: no sleep then, whose wake-up would take the GIL
            # from the workers just as they start the scene this batch
            # flushed (the fill, two workers: ~2% a frame).
            if len(self._ring):
                time.sleep(_YIELD_S)
            self._last_yield = time.perf_counter()

    def _yield_point(self) -> None:
        """Hand the GIL over if this thread has run ~1 ms without doing so.

        The direct context calls this between the draw pipeline's stages
        (fetch, vertex shader, clipping, setup) of every pass; ``_execute``
        every 64 calls.  A thread waiting for the GIL -- an
        event loop whose ticker or producer is due -- would otherwise wait for
        the interpreter's 5 ms switch interval, and more than once when other
        threads race for it; a real sleep lets it in at once.  Costs about 5%
        of the driver thread's time while it is busy.
        """
        now = time.perf_counter()
        if now - self._last_yield >= _YIELD_EVERY_S:
            time.sleep(_YIELD_S)
            self._last_yield = time.perf_counter()
            self.stats.gil_handoffs += 1

    def _execute(self, calls: list) -> None:
        """Run a batch's calls in order (driver thread).

        Draws cost little here: the direct context queues them and runs its
        queue in passes of many draws (gallium/draw/pipeline.py) at the
        batch's flush or another point where results are needed, offering
        the GIL between the pipeline's stages (``_yield_point``).  State
        calls take a microsecond or so: the clock is checked every 64th.
        """
        light = 0
        for fn, args in calls:
            try:
                fn(*args)
            except BaseException as exc:  # never lose it, never die
                self._driver_error(exc)
            light += 1
            if light >= 64:
                self._yield_point()
                light = 0

    def _driver_error(self, exc: BaseException) -> None:
        self.stats.driver_errors += 1
        self.pipe.record_error(exc, f"the driver thread of context {self.id}")

    def _direct(self) -> None:
        self.stats.direct_calls += 1

    # ------------------------------------------------------------------ busy tracking

    def _use(self, res: Any) -> None:
        if isinstance(res, Resource):
            res.tc_last_use[self.id] = self._call_seq

    def _use_bindings(self) -> None:
        seq = self._call_seq
        for res in self._vbufs.values():
            res.tc_last_use[self.id] = seq
        for res in self._cbufs.values():
            res.tc_last_use[self.id] = seq
        for res in self._views.values():
            res.tc_last_use[self.id] = seq
        for res in self._ssbos.values():
            res.tc_last_use[self.id] = seq
        for res in self._image_views.values():
            res.tc_last_use[self.id] = seq
        fb = self._bound["fb"]
        for s in fb.cbufs:
            if s is not None:
                s.texture.tc_last_use[self.id] = seq
        if fb.zsbuf is not None:
            fb.zsbuf.texture.tc_last_use[self.id] = seq

    def is_busy(self, res: Resource) -> bool:
        """Whether queued or in-flight work of any context may read or write ``res``."""
        u = res.tc_last_use.get(self.id)
        if u is not None:
            covered = False
            for seq, fence in self._flushes:
                if seq > u:
                    if not fence.signalled:
                        return True
                    covered = True
                    break
            if not covered:
                return True
        return bool(res.pending_fences())

    def _prune_flushes(self) -> None:
        if len(self._flushes) > 64:
            # keep the newest few and any unsignalled ones
            keep = [f for f in self._flushes[:-16] if not f[1].signalled]
            self._flushes = keep + self._flushes[-16:]

    # ------------------------------------------------------------------ lifetime

    def destroy(self) -> None:
        if self.destroyed:
            return
        try:
            self.flush().wait(None)
        finally:
            with self._lock:
                self._sync_locked("destroy")
                self.destroyed = True
                self._ring.put(_STOP)
            self._thread.join()
            self.pipe.destroy()

    # ------------------------------------------------------------------ CSO create (direct)

    def create_blend_state(self, state):
        self._direct()
        return self.pipe.create_blend_state(state)

    def create_depth_stencil_alpha_state(self, state):
        self._direct()
        return self.pipe.create_depth_stencil_alpha_state(state)

    def create_rasterizer_state(self, state):
        self._direct()
        return self.pipe.create_rasterizer_state(state)

    def create_sampler_state(self, state):
        self._direct()
        return self.pipe.create_sampler_state(state)

    def create_vs_state(self, state):
        self._direct()
        return self.pipe.create_vs_state(state)

    def create_fs_state(self, state):
        self._direct()
        return self.pipe.create_fs_state(state)

    def create_gs_state(self, state):
        self._direct()
        return self.pipe.create_gs_state(state)

    def create_tcs_state(self, state):
        self._direct()
        return self.pipe.create_tcs_state(state)

    def create_tes_state(self, state):
        self._direct()
        return self.pipe.create_tes_state(state)

    def create_compute_state(self, state):
        self._direct()
        return self.pipe.create_compute_state(state)

    def create_vertex_elements_state(self, elements):
        self._direct()
        return self.pipe.create_vertex_elements_state(elements)

    def create_surface(self, resource, templ):
        self._direct()
        return self.pipe.create_surface(resource, templ)

    def create_sampler_view(self, resource, templ):
        self._direct()
        return self.pipe.create_sampler_view(resource, templ)

    def create_stream_output_target(self, resource, offset, size):
        self._direct()
        return self.pipe.create_stream_output_target(resource, offset, size)

    def create_query(self, query_type, index: int = 0):
        self._direct()
        name = counter_for_query(query_type)
        if name is not None:
            q = Query(QueryType.DRIVER_SPECIFIC, index, self)
            q.driver_counter = name  # type: ignore[attr-defined]
            return q
        return self.pipe.create_query(query_type, index)

    # ------------------------------------------------------------------ CSO bind / destroy (queued)

    def _bind(self, fn, cso) -> None:
        self._record(fn, (cso,))

    # CSO binds are validated here, at the call; the driver only assigns.
    def bind_blend_state(self, cso):
        self._record(self._apply_blend, (check_blend_cso(cso),))

    def bind_depth_stencil_alpha_state(self, cso):
        self._record(self._apply_dsa, (check_dsa_cso(cso),))

    def bind_rasterizer_state(self, cso):
        self._record(self._apply_rasterizer, (check_rasterizer_cso(cso),))

    def bind_sampler_states(self, shader, start, samplers):
        stage, start, samplers = check_slots(
            shader, start, samplers, PIPE_MAX_SAMPLERS, "samplers", SamplerCSO
        )
        self._record(self.pipe.bind_sampler_states, (stage, start, samplers))

    def bind_vs_state(self, cso):
        self._bound["vs"] = check_shader_cso(ShaderType.VERTEX, cso)
        self._record(self.pipe.bind_vs_state, (cso,))

    def bind_fs_state(self, cso):
        self._bound["fs"] = check_shader_cso(ShaderType.FRAGMENT, cso)
        self._record(self.pipe.bind_fs_state, (cso,))

    def bind_gs_state(self, cso):
        self._record(self.pipe.bind_gs_state, (check_shader_cso(ShaderType.GEOMETRY, cso),))

    def bind_tcs_state(self, cso):
        self._record(self.pipe.bind_tcs_state, (cso,))

    def bind_tes_state(self, cso):
        self._record(self.pipe.bind_tes_state, (cso,))

    def bind_compute_state(self, cso):
        self._record(self.pipe.bind_compute_state, (check_compute_cso(cso),))

    def bind_vertex_elements_state(self, cso):
        self._record(self._apply_vertex_elements, (check_vertex_elements_cso(cso),))

    def destroy_blend_state(self, cso):
        self._record(self.pipe.destroy_blend_state, (cso,))

    def destroy_depth_stencil_alpha_state(self, cso):
        self._record(self.pipe.destroy_depth_stencil_alpha_state, (cso,))

    def destroy_rasterizer_state(self, cso):
        self._record(self.pipe.destroy_rasterizer_state, (cso,))

    def destroy_sampler_state(self, cso):
        self._record(self.pipe.destroy_sampler_state, (cso,))

    def destroy_vs_state(self, cso):
        self._record(self.pipe.destroy_vs_state, (cso,))

    def destroy_fs_state(self, cso):
        self._record(self.pipe.destroy_fs_state, (cso,))

    def destroy_gs_state(self, cso):
        self._record(self.pipe.destroy_gs_state, (cso,))

    def destroy_compute_state(self, cso):
        self._record(self.pipe.destroy_compute_state, (cso,))

    def destroy_vertex_elements_state(self, cso):
        self._record(self.pipe.destroy_vertex_elements_state, (cso,))

    delete_blend_state = destroy_blend_state
    delete_depth_stencil_alpha_state = destroy_depth_stencil_alpha_state
    delete_rasterizer_state = destroy_rasterizer_state
    delete_sampler_state = destroy_sampler_state
    delete_vs_state = destroy_vs_state
    delete_fs_state = destroy_fs_state
    delete_vertex_elements_state = destroy_vertex_elements_state

    def surface_destroy(self, surface):
        self._record(self.pipe.surface_destroy, (surface,))

    def sampler_view_destroy(self, view):
        self._record(self.pipe.sampler_view_destroy, (view,))

    def stream_output_target_destroy(self, target):
        self._record(self.pipe.stream_output_target_destroy, (target,))

    # ------------------------------------------------------------------ state (queued, snapshotted)

    # Hot state setters validate and normalise on the caller's thread: errors
    # raise at the call, and the recorded payload is immutable (no snapshot copy).

    def set_blend_color(self, color):
        self._record(self._apply_blend_color, (check_blend_color(color),))

    def set_stencil_ref(self, ref):
        self._record(self._apply_stencil_ref, (check_stencil_ref(ref),))

    def set_sample_mask(self, mask):
        self._record(self._apply_sample_mask, (check_sample_mask(mask),))

    def set_min_samples(self, n):
        self._record(self.pipe._apply_min_samples, (check_min_samples(n),))

    def get_sample_position(self, sample_count, sample_index):
        return self.pipe.get_sample_position(sample_count, sample_index)  # (no state: no sync)

    def set_clip_state(self, state):
        self._record(self.pipe.set_clip_state, (check_clip_state(state),))

    def set_polygon_stipple(self, stipple):
        self._record(self.pipe.set_polygon_stipple, (copy.deepcopy(stipple),))

    def set_scissor_states(self, start, scissors):
        self._record(self.pipe._apply_scissor_states, check_scissor_states(start, scissors))

    def set_viewport_states(self, start, viewports):
        self._record(self.pipe._apply_viewport_states, check_viewport_states(start, viewports))

    def set_window_rectangles(self, include, rects):
        self._record(self.pipe._apply_window_rectangles, check_window_rectangles(include, rects))

    def set_debug_callback(self, cb):
        self._record(self.pipe.set_debug_callback, (cb,))

    def set_tess_state(self, outer, inner):
        self._record(self.pipe.set_tess_state, (outer, inner))

    def set_shader_buffers(self, shader, start, buffers):
        stage, first, bound = check_shader_buffers(shader, start, buffers)
        for i, b in enumerate(bound):
            key = (stage, first + i)
            if b is None:
                self._ssbos.pop(key, None)
                continue
            self._ssbos[key] = b.buffer
            # the program may write anywhere in the range: those bytes hold data now
            self._mark_valid(b.buffer, b.buffer_offset, b.buffer_offset + b.buffer_size)
        self._record(self.pipe._apply_shader_buffers, (stage, first, bound))

    def set_shader_images(self, shader, start, images):
        stage, first, bound = check_shader_images(shader, start, images)
        for i, v in enumerate(bound):
            key = (stage, first + i)
            if v is None:
                self._image_views.pop(key, None)
                continue
            self._image_views[key] = v.resource
            if v.resource.is_buffer:  # the program may write the range
                self._mark_valid(v.resource, v.buf_offset, v.buf_offset + v.buf_size)
        self._record(self.pipe._apply_shader_images, (stage, first, bound))

    def set_stream_output_targets(self, targets, offsets):
        self._record(
            self.pipe.set_stream_output_targets, (list(targets or []), list(offsets or []))
        )

    def set_framebuffer_state(self, state):
        snap = check_framebuffer_state(state)
        self._bound["fb"] = snap
        self._record(self.pipe.set_framebuffer_state, (snap,))

    def set_vertex_buffers(self, start_slot, buffers):
        bindings = check_vertex_buffers(start_slot, buffers)  # all valid, or nothing changes
        copied = 0
        for slot, vb in bindings:
            if vb is not None and not vb.is_user_buffer:
                self._vbufs[slot] = vb.buffer
            else:
                self._vbufs.pop(slot, None)
                if vb is not None:
                    copied += vb.buffer.size
        self.stats.bytes_copied += copied
        self._record(self.pipe._apply_vertex_buffers, (bindings,), 1 + copied // 8)

    def set_constant_buffer(self, shader, index, cb):
        stage, index, binding = check_constant_buffer(shader, index, cb)
        slots = 1
        key = (int(stage), index)
        if binding is not None and binding[0] is None:  # user data: copied into the batch
            data = binding[1].copy()
            binding = (None, data)
            self.stats.bytes_copied += data.size
            slots += data.size // 8
            self._cbufs.pop(key, None)
        elif binding is not None:
            self._cbufs[key] = binding[0]
        else:
            self._cbufs.pop(key, None)
        self._record(self.pipe._apply_constant_buffer, (stage, index, binding), slots)

    def set_sampler_views(self, shader, start, views):
        shader, start, views = check_slots(
            shader, start, views, PIPE_MAX_SHADER_SAMPLER_VIEWS, "views", SamplerView
        )
        for i, v in enumerate(views):
            key = (int(shader), start + i)
            if v is None:
                self._views.pop(key, None)
            else:
                self._views[key] = v.texture
        self._record(self.pipe.set_sampler_views, (shader, start, views))

    def render_condition(self, query, condition=False, mode=0):
        self._record(self.pipe.render_condition, check_render_condition(query, condition, mode))

    def set_active_query_state(self, enable):
        self._record(self.pipe.set_active_query_state, (enable,))

    # ------------------------------------------------------------------ drawing

    def draw_vbo(self, info: DrawInfo) -> None:
        info = check_draw_info(info)  # a private copy, fields checked
        if self._bound["vs"] is None:
            raise bad_value("vertex shader", "must be bound (bind_vs_state) before draw_vbo")
        if self._bound["fs"] is None:
            raise bad_value("fragment shader", "must be bound (bind_fs_state) before draw_vbo")
        fb = self._bound["fb"]
        if fb.width <= 0 or fb.height <= 0:
            raise bad_value("framebuffer", "must be set (width and height > 0) before draw_vbo")
        slots = 2
        if info.index_size:
            if isinstance(info.index, Resource):
                self._use(info.index)
            else:
                data = _user_bytes(info.index, "info.index").copy()
                info.index = data
                self.stats.bytes_copied += data.size
                slots += data.size // 8
        self._use_bindings()
        self._record(self._draw_vbo, (info,), slots)

    def clear(self, buffers, color=None, depth=1.0, stencil=0, scissor_state=None):
        bits, col, depth, stencil = check_clear(buffers, color, depth, stencil)
        self._use_bindings()
        self._record(self.pipe.clear, (bits, col, depth, stencil, scissor_state))

    def clear_render_target(
        self, dst, color, dstx, dsty, width, height, render_condition_enabled=False
    ):
        box = check_surface_clear(dst, dstx, dsty, width, height)
        color = check_numbers("color", color, 4)
        self._use(dst.texture)
        self._record(
            self.pipe.clear_render_target,
            (dst, color, box.x, box.y, box.width, box.height, render_condition_enabled),
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
        box = check_surface_clear(dst, dstx, dsty, width, height)
        clear_flags, depth, stencil = check_clear_flags_zs(clear_flags, depth, stencil)
        self._use(dst.texture)
        self._record(
            self.pipe.clear_depth_stencil,
            (dst, clear_flags, depth, stencil, box.x, box.y, box.width, box.height,
             render_condition_enabled),
        )  # fmt: skip

    def clear_buffer(self, resource, offset, size, value):
        data = _user_bytes(value, "clear_value").copy()
        self._use(resource)
        self._record(self.pipe.clear_buffer, (resource, offset, size, data))

    def resource_copy_region(self, dst, dst_level, dstx, dsty, dstz, src, src_level, src_box):
        self._use(dst)
        self._use(src)
        if isinstance(dst, Resource) and dst.is_buffer:
            self._mark_valid(dst, dstx, dstx + src_box.width)
        self._record(
            self.pipe.resource_copy_region,
            (dst, dst_level, dstx, dsty, dstz, src, src_level, copy.copy(src_box)),
        )

    def blit(self, info):
        b = check_blit_info(info, self.screen)  # a private, checked copy
        self._use(b.src)
        self._use(b.dst)
        self._record(self.pipe._blit, (b,))

    def clear_texture(self, resource, level, box, data):
        clear = check_clear_texture(resource, level, box, data)  # copies the texel
        self._use(resource)
        self._record(self.pipe._clear_texture, (clear,))

    def launch_grid(self, info):
        grid = check_grid_info(info)
        self._use_bindings()
        if grid.indirect is not None:
            grid.indirect.tc_last_use[self.id] = self._call_seq
        self._record(self.pipe.launch_grid, (grid,))

    def texture_barrier(self, flags=0):
        self._record(self.pipe.texture_barrier, (flags,))

    def memory_barrier(self, flags):
        self._record(self.pipe.memory_barrier, (flags,))

    def flush_resource(self, resource):
        self._record(self.pipe.flush_resource, (resource,))

    def invalidate_resource(self, resource):
        if isinstance(resource, Resource) and resource.is_buffer:
            with self._lock:
                self._invalidate_locked(resource)
        else:
            self._record(self.pipe.invalidate_resource, (resource,))

    def emit_string_marker(self, string):
        self._record(self.pipe.emit_string_marker, (string,))

    def generate_mipmap(self, resource, format, base_level, last_level, first_layer, last_layer):
        # the answer needs only the format (as Mesa's tc_generate_mipmap): no sync
        blits = mipmap_blits(
            resource, format, base_level, last_level, first_layer, last_layer, self.screen
        )
        if blits is None:
            return False
        self._use(resource)
        self._record(self.pipe._generate_mipmap, (blits,))
        return True

    # ------------------------------------------------------------------ flush and fences

    def flush(self, flags: int = 0) -> Fence:
        """Return a fence at once; the flush itself runs on the driver thread."""
        flags = check_flush_flags(flags)
        self.pipe.raise_pending_error()
        fence = Fence(label=f"tc {self.id} flush", error_source=self.pipe._take_error)
        with self._lock:
            seq = self._batch.seq
            queries, self._unflushed_queries = self._unflushed_queries, []
            self._record_locked(self._flush_call, (flags, fence, queries))
            self._flushes.append((self._call_seq, fence))
            self._prune_flushes()
            if flags & Flush.DEFERRED:
                fence._submit_hook = lambda s=seq: self._submit_upto(s)
            else:
                self._submit_locked()
        return fence

    def _driver_flush(self, flags: Flush, fence: Fence, queries: list) -> None:
        """Runs on the driver thread: flush the direct context, chain its fence.

        The queries ended before this flush are *flushed* from now on: their
        results can be read without syncing the threaded context (rule 6).
        """
        try:
            inner = self.pipe.flush(flags & ~Flush.DEFERRED)
        except BaseException:
            fence.signal()
            raise
        with self._query_lock:
            for q, serial in queries:
                # a begin/end recorded after this flush was taken makes the
                # query unflushed again: only its own flush may mark it
                if q.tc_serial == serial:
                    q.tc_flushed = True
        inner.add_done_callback(fence.signal)

    def callback(self, fn: Any, data: Any = None, asap: bool = False) -> None:
        """Run ``fn(data)`` on the driver thread, in order (pipe_context::callback).

        ``asap`` is accepted for API compatibility; the call is always queued.
        """
        self._record(fn, (data,))

    def fence_finish(self, fence: Fence, timeout_ns: int) -> bool:
        return fence.finish(timeout_ns)

    # ------------------------------------------------------------------ transfers

    def _mark_valid(self, res: Resource, lo: int, hi: int) -> None:
        with res.lock:
            vlo, vhi = res.tc_valid_range
            if vhi <= vlo:
                res.tc_valid_range = [lo, hi]
            else:
                res.tc_valid_range = [min(vlo, lo), max(vhi, hi)]

    def _valid_overlaps(self, res: Resource, lo: int, hi: int) -> bool:
        vlo, vhi = res.tc_valid_range
        return vhi > vlo and lo < vhi and hi > vlo

    def _invalidate_locked(self, res: Resource) -> np.ndarray:
        """Give a busy buffer fresh storage; queued work keeps the old one."""
        size = res.storage.size
        allocate = getattr(res.screen, "allocate_storage", None)  # (shared for band processes)
        new = np.zeros(size, np.uint8) if allocate is None else allocate(size)
        res.tc_latest_storage = new
        with res.lock:
            res.tc_valid_range = [0, 0]
        self.stats.invalidations += 1
        self._record_locked(self._driver_replace_storage, (res, new))
        return new

    @staticmethod
    def _driver_replace_storage(res: Resource, new: np.ndarray) -> None:
        res.replace_storage(new)
        if res.tc_latest_storage is new:
            res.tc_latest_storage = None

    def _pending_staging_overlap(self, res: Resource, lo: int, hi: int) -> int:
        """Highest batch with a not-yet-executed staging upload overlapping [lo, hi)."""
        pending = self._staging.get(res.id)
        if not pending:
            return 0
        live = [(b, a, z) for (b, a, z) in pending if b > self._executed_seq]
        self._staging[res.id] = live
        hits = [b for (b, a, z) in live if a < hi and z > lo]
        return max(hits) if hits else 0

    def transfer_map(self, resource: Resource, level: int, usage: int, box: Box):
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource created by this screen", resource)
        if not isinstance(box, Box):
            raise bad_type("box", "a pipe.Box", box)
        usage = check_transfer_usage(usage)
        resource.check_box(level, box)
        if resource.is_buffer and usage & Transfer.WRITE and not usage & Transfer.READ:
            with self._lock:
                return self._map_buffer_write_locked(resource, level, usage, box)
        with self._lock:
            self._sync_locked("transfer_map")
            return self.pipe.transfer_map(resource, level, usage, box)

    def _map_buffer_write_locked(self, res: Resource, level: int, usage: Transfer, box: Box):
        lo, hi = box.x, box.x + box.width
        # Promote: writing bytes never written, or to an idle buffer, needs no wait.
        if not usage & Transfer.UNSYNCHRONIZED:
            if not self._valid_overlaps(res, lo, hi) or not self.is_busy(res):
                usage |= Transfer.UNSYNCHRONIZED
                self.stats.promoted_unsynchronized += 1
        # DISCARD_RANGE over the whole valid range is a whole-resource discard.
        if usage & Transfer.DISCARD_RANGE and not usage & Transfer.UNSYNCHRONIZED:
            vlo, vhi = res.tc_valid_range
            if lo <= vlo and hi >= vhi:
                usage = (usage & ~Transfer.DISCARD_RANGE) | Transfer.DISCARD_WHOLE_RESOURCE
        if usage & Transfer.DISCARD_WHOLE_RESOURCE and not usage & Transfer.UNSYNCHRONIZED:
            if self.is_busy(res):
                store = self._invalidate_locked(res)
                return self._map_storage(res, level, usage | Transfer.UNSYNCHRONIZED, box, store)
            usage |= Transfer.UNSYNCHRONIZED
        if usage & Transfer.DISCARD_RANGE and not usage & Transfer.UNSYNCHRONIZED:
            staging = np.zeros(box.width, np.uint8)
            self.stats.staging_uploads += 1
            xfer = TransferObject(
                res,
                level,
                usage,
                copy.copy(box),
                box.width,
                box.width,
                staging,
                staging=staging,
                context=self,
            )
            return staging, xfer
        if usage & Transfer.UNSYNCHRONIZED:
            wait_for = self._pending_staging_overlap(res, lo, hi)
            if wait_for:
                # Rule 5: an unsynchronized map must not overtake a queued staging
                # upload; the upload may still sit in the batch being recorded.
                self.stats.sync("unsynchronized map over pending staging upload")
                if wait_for >= self._batch.seq:
                    self._submit_locked()
                self._wait_executed(wait_for)
            store = res.tc_latest_storage if res.tc_latest_storage is not None else None
            return self._map_storage(res, level, usage, box, store)
        self._sync_locked("transfer_map")
        return self.pipe.transfer_map(res, level, usage, box)

    def _map_storage(self, res, level, usage, box, store):
        data, xfer = self.pipe.map_box(res, level, usage, box, storage=store)
        xfer.context = self
        return data, xfer

    def transfer_flush_region(self, transfer: TransferObject, box: Box) -> None:
        objects.check_flush_region(transfer)

    def transfer_unmap(self, transfer: TransferObject) -> None:
        objects.close_transfer(transfer)
        res = transfer.resource
        if res.is_buffer and transfer.usage & Transfer.WRITE:
            lo, hi = transfer.box.x, transfer.box.x + transfer.box.width
            self._mark_valid(res, lo, hi)
            if transfer.staging is not None:
                data = transfer.staging
                with self._lock:
                    self._use(res)
                    self._staging.setdefault(res.id, []).append((self._batch.seq, lo, hi))
                    self.stats.bytes_copied += data.size
                    self._record_locked(
                        self._driver_write_buffer, (res, lo, data), 1 + data.size // 8
                    )

    def _driver_write_buffer(self, res: Resource, offset: int, data: np.ndarray) -> None:
        """Runs on the driver thread, in call order: an upload copied into the batch.

        Work the direct context already holds that reads the buffer at
        rasterization time (shader buffers, buffer textures) is finished
        first, as llvmpipe's buffer_subdata does; constants are copied per
        draw, so uniform updates between draws never wait here.
        """
        self.pipe._sync_resource(res, True, "threaded upload")
        res.storage[offset : offset + data.size] = data

    def buffer_subdata(self, resource: Resource, usage: int, offset: int, data: Any) -> None:
        usage, offset, raw = check_subdata(resource, usage, offset, data)
        size = raw.size
        if size == 0:
            return
        with self._lock:
            lo, hi = offset, offset + size
            direct_ok = (
                usage & Transfer.UNSYNCHRONIZED
                or not self._valid_overlaps(resource, lo, hi)
                or (
                    not self.is_busy(resource)
                    and not self._pending_staging_overlap(resource, lo, hi)
                )
            )
            self._mark_valid(resource, lo, hi)
            if direct_ok and size > SMALL_SUBDATA:
                # Nothing queued can observe these bytes: write them now.
                store = (
                    resource.tc_latest_storage
                    if resource.tc_latest_storage is not None
                    else resource.storage
                )
                store[offset : offset + size] = raw
                self.stats.promoted_unsynchronized += 1
                return
            copied = raw.copy()
            self.stats.bytes_copied += size
            self._use(resource)
            calls = self._batch.calls
            if size <= SMALL_SUBDATA and calls:
                fn, args = calls[-1]
                if fn == self._driver_write_buffer and args[0] is resource:
                    prev_off, prev = args[1], args[2]
                    if prev_off + prev.size == offset and prev.size + size <= 4 * SMALL_SUBDATA:
                        calls[-1] = (fn, (resource, prev_off, np.concatenate([prev, copied])))
                        self.stats.merged_subdata += 1
                        self._staging.setdefault(resource.id, []).append((self._batch.seq, lo, hi))
                        return
            self._staging.setdefault(resource.id, []).append((self._batch.seq, lo, hi))
            self._record_locked(
                self._driver_write_buffer, (resource, offset, copied), 1 + size // 8
            )

    def texture_subdata(self, resource, level, usage, box, data, stride=0, layer_stride=0):
        raw = _user_bytes(data, "data").copy()
        self.stats.bytes_copied += raw.size
        self._use(resource)
        self._record(
            self.pipe.texture_subdata,
            (resource, level, usage, copy.copy(box), raw, stride, layer_stride),
            1 + raw.size // 8,
        )

    # ------------------------------------------------------------------ queries

    def destroy_query(self, query):
        if getattr(query, "driver_counter", None):
            return
        self._record(self.pipe.destroy_query, (query,))

    def begin_query(self, query) -> bool:
        name = getattr(query, "driver_counter", None)
        if name is not None:
            query.begin_value = getattr(self.stats, name)  # type: ignore[attr-defined]
            query.active, query.ended = True, False
            return True
        with self._lock:
            self._bump_query(query)
            self._record_locked(self.pipe.begin_query, (query,))
        return True

    def _bump_query(self, query) -> int:
        with self._query_lock:
            query.tc_serial = getattr(query, "tc_serial", 0) + 1
            query.tc_flushed = False
            return query.tc_serial

    def end_query(self, query) -> bool:
        name = getattr(query, "driver_counter", None)
        if name is not None:
            query.end_value = getattr(self.stats, name)  # type: ignore[attr-defined]
            query.active, query.ended = False, True
            return True
        with self._lock:
            serial = self._bump_query(query)
            self._unflushed_queries.append((query, serial))
            self._record_locked(self.pipe.end_query, (query,))
        return True

    def get_query_result(self, query, wait: bool = True):
        name = getattr(query, "driver_counter", None)
        if name is not None:
            if not query.ended:
                raise bad_value("query", "has not been ended (end_query)")
            return True, query.end_value - query.begin_value
        if getattr(query, "tc_flushed", False):
            # Rule 6: a flush after end_query has executed; the direct context
            # answers from the query's own fence without touching its state.
            return self.pipe.get_query_result(query, wait)
        with self._lock:
            self._sync_locked("get_query_result")
            return self.pipe.get_query_result(query, wait)

    async def ready_async(self) -> None:
        """Wait, without blocking the event loop, until recording will not block.

        Returns at once while the ring has room for the batch being recorded;
        otherwise suspends the calling task (asyncio or trio) until the driver
        thread takes a batch.  No thread per waiter and no polling: the driver
        thread signals a fence.  Cancelling the wait leaves the context intact.
        """
        if self._ring.has_space():
            return
        self.stats.ready_waits += 1
        fence = Fence(label=f"tc {self.id} ring space")
        self._ring.on_space(fence.signal)
        await fence

    async def get_query_result_async(self, query):
        """Await a query's result without blocking the event loop."""
        name = getattr(query, "driver_counter", None)
        if name is not None:
            return self.get_query_result(query)[1]
        if not getattr(query, "tc_flushed", False):
            await self.flush()
        fence = query.fence
        if fence is not None:
            await fence
        return self.get_query_result(query, wait=True)[1]

    # ------------------------------------------------------------------ misc (synchronous)

    def get_device_reset_status(self):
        return self.pipe.get_device_reset_status()

    def set_device_reset_callback(self, callback):
        self.pipe.set_device_reset_callback(callback)

    def is_resource_referenced(self, resource, level=0, layer=0):
        return 3 if self.is_busy(resource) else 0

    def wait_idle(self) -> None:
        self.flush().wait(None)

    def __repr__(self) -> str:
        return f"<ThreadedContext {self.id} over {self.pipe.__class__.__name__}>"


_ = ShaderType
