"""ThreadedContext: Mesa's u_threaded_context, in Python, with an async face.

How it works
------------
The application calls ``pipe_context`` methods on a :class:`ThreadedContext`.
Each call is checked at once, on the application's thread, with the
contract's checks (:mod:`gallium.pipe.checks`) -- the same checks the wrapped
context runs, so a bad argument or an unsupported feature raises at the call
with the same error on either context, and nothing bad is ever recorded.
Most calls are then not executed; they are *recorded*: the wrapped context's
unchecked entry point (``pipe._apply_*``, :mod:`gallium.pipe.protocols`) and
the checked arguments are appended to the current
:class:`~threaded._ring.Batch`.  A full batch, or a flush, is *submitted* to a
bounded :class:`~threaded._ring.Ring`; one *driver thread* per context takes
batches out of the ring in order and executes their calls on the wrapped
context.  The application thread therefore only pays for checking and
recording, and rendering setup runs in parallel with it (and rasterization,
on the worker pool, in parallel with both).

The wrapped context is any object implementing the pipe_context contract of
:mod:`gallium.pipe.protocols`; this package imports nothing but
:mod:`gallium.pipe`.

Rules (numbered as in Mesa's u_threaded_context.h, adapted):

1. Execution order equals record order, across batches and syncs.  The
   driver thread is the only thread that changes the wrapped context's
   state.  The application thread calls it only where the contract allows
   any thread (creating CSOs, views and queries; mapping, unmapping and
   writing resources no queued work uses; reading a flushed query), or
   while it holds a *sync* (below), when the driver thread is idle and the
   ring is empty.  Driver callbacks therefore never run concurrently.
2. ``create_*`` of CSOs, shaders, queries, sampler views, surfaces and stream
   output targets run at once on the caller's thread and are counted as
   direct calls.
3. A call that needs the driver's current state *syncs*: it submits the
   current batch, waits until the driver thread has executed everything, and
   runs on the caller's thread while holding the recording lock.  Every sync,
   and every wait of a map for the work using its resource, is counted with
   its reason (``ctx.stats``).
4. Arguments are copied when recorded: the checks return private copies of
   state templates, user buffers (vertex data, constants, indices, uploads)
   are copied into the batch, so the caller may reuse them at once.
5. No-stall paths.  What each recorded call reads and writes is one table,
   :mod:`threaded.access`; from it every resource knows its last recorded use
   (busy until a flush recorded after it completes) and every buffer the
   bytes ever written (``valid_range``).  A map of a resource no recorded
   work uses (or whose work is complete) waits for nothing; one in use waits
   for the driver thread to run the queue and then as the wrapped context's
   own map waits (for the scenes that read or write the resource).
   For buffers: a ``transfer_map`` with DISCARD_WHOLE_RESOURCE of a busy
   buffer gets fresh storage (queued work keeps the old storage, later work
   sees the new); a write to a range never written, or to an idle buffer, is
   promoted to UNSYNCHRONIZED; a DISCARD_RANGE map of a busy buffer writes to
   a staging copy applied in order at unmap, and a discard of the whole valid
   range becomes a whole-resource discard; an UNSYNCHRONIZED map overlapping
   a pending staging upload waits after all.  A map with DONTBLOCK that would
   wait returns ``(None, None)`` instead, having flushed the work it would
   wait for.  ``transfer_map_async`` takes the same steps, awaiting each
   fence instead of blocking on it.
6. ``flush()`` returns its fence at once.  With PIPE_FLUSH_DEFERRED the batch
   is not submitted; the first wait on the fence, from any thread or task,
   submits the recorded calls up to the flush.  Recording takes no lock (one
   thread records); submitting takes the recording lock, which the driver
   thread never takes, so no deadlock is possible.
7. An exception raised by a recorded call on the driver thread is a fault:
   it is kept by the wrapped context (which reports a device reset and fires
   the reset callback, once per episode) and raised on the application's
   side at its next sync point; the remaining calls of the batch still
   execute.  Bad arguments never get there (they raise at the call).
8. A full ring blocks the recording call only until the driver thread takes
   its next batch (one batch's execution).  Async producers await
   ``ctx.ready_async()`` between calls instead: it returns at once while the
   ring has room and otherwise suspends the task (the event loop keeps
   running) until the driver thread takes a batch, so their recording calls
   never block at all.
9. ``destroy()`` drains the queue and stops the driver thread.  Called from
   the driver thread (a recorded callback) or from a fence callback, it
   cannot wait for work that thread may have to finish: it queues the stop
   and returns, and the driver thread tears down after the last batch.

Threading contract: like any pipe_context, a ThreadedContext is used by one
application thread at a time.  Its fences may be waited on, and deferred
fences submitted, from any thread.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Generator
from typing import Any

import numpy as np

from gallium.pipe import checks
from gallium.pipe.blit import check_blit_info, check_clear_texture, mipmap_blits
from gallium.pipe.checks import (
    check_blend_color,
    check_blend_cso,
    check_dsa_cso,
    check_rasterizer_cso,
    check_sample_mask,
    check_stencil_ref,
)
from gallium.pipe.enums import Flush, QueryType, ShaderType, Transfer
from gallium.pipe.errors import ContextDestroyedError, bad_type
from gallium.pipe.fence import Fence
from gallium.pipe.objects import Query, Resource, TransferObject
from gallium.pipe.state import Box, DrawInfo, FramebufferState, RasterizerState

from ._ring import BATCH_SLOTS, QUEUED_BATCHES, Batch, Ring
from .access import CALLS
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
_DEFAULT_RASTERIZER = RasterizerState()
# the draw stages and their keys in ThreadedContext._bound
_STAGE_KEYS = (
    (ShaderType.VERTEX, "vs"),
    (ShaderType.TESS_CTRL, "tcs"),
    (ShaderType.TESS_EVAL, "tes"),
    (ShaderType.GEOMETRY, "gs"),
    (ShaderType.FRAGMENT, "fs"),
)
_NO_FLAGS = Flush(0)
_TRACKING_LOCK = threading.Lock()


class _Tracking:
    """What threaded contexts know about one resource (``Resource.tc``)."""

    __slots__ = ("last_use", "latest")

    def __init__(self) -> None:
        self.last_use: dict[int, int] = {}  # context id -> flush count at its last use
        self.latest: Resource | None = None  # fresh storage swapped in, not yet executed


def _tracking(res: Resource) -> _Tracking:
    t = res.tc
    if t is None:
        with _TRACKING_LOCK:
            t = res.tc
            if t is None:
                t = res.tc = _Tracking()
    return t


class _DeadCalls(list):
    """The call list of a destroyed context: recording into it raises."""

    def append(self, item: Any) -> None:
        raise ContextDestroyedError("this context has been destroyed")


class _CounterQuery(Query):
    """A driver query of the threaded context's own counters (``ctx.stats``)."""

    def __init__(self, index: int, counter: str) -> None:
        self.type = QueryType.DRIVER_SPECIFIC
        self.index = index
        self.driver_counter = counter
        self.begin_value = self.end_value = 0


class ThreadedContext:
    """A ``pipe_context`` that records calls for a driver thread (see module doc)."""

    def __init__(
        self,
        pipe: Any,
        batch_slots: int = BATCH_SLOTS,
        queued_batches: int = QUEUED_BATCHES,
    ) -> None:
        self.id = next(_ids)
        self.pipe = pipe
        self.screen = pipe.screen
        self.support = pipe.support
        # the wrapped context's entry point for every recorded call (access.CALLS)
        self._driver = {name: getattr(pipe, acc.driver, None) for name, acc in CALLS.items()}
        d = self._driver
        # the hot ones, bound once
        self._apply_blend = d["bind_blend_state"]
        self._apply_dsa = d["bind_depth_stencil_alpha_state"]
        self._apply_rasterizer = d["bind_rasterizer_state"]
        self._apply_vertex_elements = d["bind_vertex_elements_state"]
        self._apply_blend_color = d["set_blend_color"]
        self._apply_stencil_ref = d["set_stencil_ref"]
        self._apply_sample_mask = d["set_sample_mask"]
        self._draw_vbo = d["draw_vbo"]
        self._flush_call = self._driver_flush
        self.batch_slots = batch_slots
        self.stats = TcStats()
        self.destroyed = False
        self._lock = threading.Lock()  # taken to submit; never taken by the driver
        self._ring = Ring(queued_batches)
        self._batch = Batch()
        self._last_batch: Batch | None = None  # the last one submitted
        self._submitted_seq = 0
        self._submitted_calls = 0
        self.stats.recorded_calls_source = lambda: self._submitted_calls + len(self._batch.calls)
        self._flush_count = 0  # flushes recorded: a resource use is stamped with it
        self._flushes: list[tuple[int, Fence]] = []  # (flush count, fence) of recorded flushes
        self._staging: dict[Resource, list[tuple[Batch, int, int]]] = {}
        # shadow of bindings: draw validation at the call, and busy tracking
        self._bound: dict[str, Any] = {
            "vs": None,
            "fs": None,
            "gs": None,
            "tcs": None,
            "tes": None,
            "dsa": None,
            "velems": None,
            "rast": _DEFAULT_RASTERIZER,
            "fb": FramebufferState(),
            "compute": None,
        }
        self._vbufs: dict[int, Resource] = {}
        self._cbufs: dict[tuple[int, int], Resource] = {}
        self._views: dict[tuple[int, int], Resource] = {}
        self._samplers: set[tuple[int, int]] = set()  # (stage, slot) of bound sampler states
        # the bound draw stages whose programs filter textures (None: not
        # known since the last bind of a shader or rasterizer state)
        self._sampling: list | None = None
        self._ssbos: dict[tuple[int, int], tuple[Resource, int, int]] = {}
        self._image_views: dict[tuple[int, int], tuple[Resource, int, int | None]] = {}
        self._so_targets: tuple = ()  # the bound stream output targets (draws write them)
        self._globals: dict[int, Resource] = {}  # set_global_binding's buffers (grids write them)
        # bindless handles made through this context (for the checks at the
        # call) and the resources the resident ones let every draw and grid use
        self._tex_handles: dict[int, Resource] = {}
        self._img_handles: dict[int, tuple[Resource, int, int | None]] = {}
        self._resident: dict[int, tuple[Resource, int, int | None]] = {}
        # (query, end serial) ended with no flush recorded after yet
        self._unflushed_queries: list[tuple[Any, int]] = []
        # guards each query's tc_serial / tc_flushed pair; held only for a few
        # assignments, by the application and the driver thread alike
        self._query_lock = threading.Lock()
        self._last_yield = 0.0
        self._teardown_here = False  # destroy() could not wait: the driver thread tears down
        pipe.yield_point = self._yield_point
        self._thread = threading.Thread(
            target=self._driver_loop, name=f"numpipe-driver-{self.id}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ machinery

    def _record(self, fn: Any, args: tuple = (), slots: int = 1) -> None:
        """Append a call to the current batch (submitting it when full).

        Takes no lock: only the application thread records, and a deferred
        fence submitted from another thread takes the calls up to its flush
        out of the batch under the lock (``_submit_deferred``) without
        disturbing an append.
        """
        b = self._batch
        b.calls.append((fn, args))
        b.slots += slots
        if b.slots >= self.batch_slots:
            self._submit_full()

    def _submit_full(self) -> None:
        with self._lock:
            self._submit_locked()

    def _record_locked(self, fn: Any, args: tuple = (), slots: int = 1) -> None:
        """``_record`` for callers that already hold the recording lock."""
        b = self._batch
        b.calls.append((fn, args))
        b.slots += slots
        if b.slots >= self.batch_slots:
            self._submit_locked()

    def _record_call(self, name: str, args: tuple, slots: int = 1) -> None:
        """Record call ``name`` of access.CALLS: mark what it touches, then record it."""
        acc = CALLS[name]
        if acc.touches_resources:
            self._note_access(acc, args)
        self._record(self._driver[name], args, slots)

    def _note_access(self, acc: Any, args: tuple) -> None:
        for res in acc.reads(*args):
            self._use(res)
        for res, start, end in acc.writes(*args):
            self._use(res)
            if end is not None:
                res.mark_valid(start, end)
            elif res.is_buffer:
                res.mark_valid(0, res.width0)
        if acc.bound is not None:
            self._use_bindings(acc.bound)

    def _put_locked(self, b: Batch, force: bool = False) -> None:
        """Number and submit ``b`` (caller holds the lock)."""
        self._submitted_seq += 1
        b.seq = self._submitted_seq
        self._submitted_calls += len(b.calls)
        self._last_batch = b
        self.stats.batches += 1
        if self._ring.put(b, force):
            self.stats.ring_full_waits += 1

    def _submit_locked(self, force: bool = False) -> Batch | None:
        """Submit the current batch (caller holds the lock); returns the last
        batch submitted (None if none ever was)."""
        b = self._batch
        if b.calls:
            self._batch = Batch()
            self._put_locked(b, force)
        if self._staging and not force:
            self._forget_executed_staging()
        return self._last_batch

    def _forget_executed_staging(self) -> None:
        """Drop the staging records of uploads that ran (application thread,
        lock held): only pending ones order a map, and a record must not keep
        its buffer alive -- before, a context that wrote many buffers once
        each kept every one of them, destroyed or not."""
        for res, pending in list(self._staging.items()):
            live = [p for p in pending if not p[0].executed]
            if not live:
                del self._staging[res]
            elif len(live) < len(pending):
                self._staging[res] = live

    def _submit_deferred(self, fence: Fence) -> None:
        """Submit the recorded calls up to deferred ``fence``'s flush (any thread)."""
        with self._lock:
            calls = self._batch.calls
            flush = self._flush_call
            for k in range(len(calls) - 1, -1, -1):
                fn, args = calls[k]
                if fn == flush and args[1] is fence:
                    break
            else:
                return  # submitted already
            prefix = calls[: k + 1]
            del calls[: k + 1]  # (an append meanwhile lands after the flush: kept)
            self._put_locked(Batch(prefix))

    def _sync_locked(self, reason: str) -> None:
        """Submit everything and wait until the driver thread has executed it."""
        last = self._submit_locked()
        self.stats.sync(reason)
        if last is not None:
            last.done.wait(None)

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
                break
            # Waiting for the batch left the GIL free: count the ~1 ms before
            # the next hand-over from now (a frame's first vertex-pipeline
            # stage does not sleep just because the last batch was long ago).
            self._last_yield = time.perf_counter()
            self._execute(batch.calls)
            # drop the calls' arguments (CSOs, resources, copied uploads) now:
            # the batch itself is kept as the last submitted until the next
            batch.calls = []
            batch.executed = True
            self.stats.executed_batches += 1
            batch.done.signal()
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
        if self._teardown_here:
            try:
                pipe.destroy()
            except BaseException as exc:  # nobody is left to report it to
                self._driver_error(exc)

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
        _tracking(res).last_use[self.id] = self._flush_count

    def _use_bindings(self, kind: str) -> None:
        """Mark the bound resources a draw, clear or grid uses (access.CALLS).

        (Called for every draw: empty binding tables are skipped and the
        stamp written inline, as ``_use`` writes it.)
        """
        me, stamp = self.id, self._flush_count
        if kind == "draw" or kind == "compute":
            if kind == "draw":
                for res in self._vbufs.values():
                    (res.tc or _tracking(res)).last_use[me] = stamp
                for t in self._so_targets:
                    if t is not None:  # the draws may write the whole range
                        self._use(t.buffer)
                        t.buffer.mark_valid(t.buffer_offset, t.buffer_offset + t.buffer_size)
            for res in self._cbufs.values():
                (res.tc or _tracking(res)).last_use[me] = stamp
            for res in self._views.values():
                (res.tc or _tracking(res)).last_use[me] = stamp
            if self._ssbos:
                for res, start, end in self._ssbos.values():
                    self._use(res)  # the program may write anywhere in the range
                    res.mark_valid(start, end)
            if self._image_views or self._resident:
                for res, start, end in [*self._image_views.values(), *self._resident.values()]:
                    self._use(res)
                    if end is not None:
                        res.mark_valid(start, end)
            if kind == "compute":
                for res in self._globals.values():  # (a grid may write anywhere in them)
                    self._use(res)
                    res.mark_valid(0, res.width0)
        if kind == "draw" or kind == "clear":
            fb = self._bound["fb"]
            for s in fb.cbufs:
                if s is not None:
                    res = s.texture
                    (res.tc or _tracking(res)).last_use[me] = stamp
            if fb.zsbuf is not None:
                res = fb.zsbuf.texture
                (res.tc or _tracking(res)).last_use[me] = stamp

    def _busy_fences(self, res: Resource) -> list[Fence] | None:
        """The fences to wait for before ``res`` is idle; None: recorded work of
        this context uses it that no recorded flush covers yet."""
        t = res.tc
        u = None if t is None else t.last_use.get(self.id)
        fences = []
        if u is not None:
            for count, fence in self._flushes:
                if count > u:
                    if not fence.signalled:
                        fences.append(fence)
                    break
            else:
                return None
        fences.extend(res.pending_fences())
        return fences

    def is_busy(self, res: Resource) -> bool:
        """Whether queued or in-flight work of any context may read or write ``res``."""
        fences = self._busy_fences(res)
        return fences is None or bool(fences)

    def _prune_flushes(self) -> None:
        if len(self._flushes) > 64:
            # keep the newest few and any unsignalled ones
            keep = [f for f in self._flushes[:-16] if not f[1].signalled]
            self._flushes = keep + self._flushes[-16:]

    # ------------------------------------------------------------------ lifetime

    def destroy(self) -> None:
        """Drain the queue, stop the driver thread, destroy the wrapped context.

        Raises the first error of the drained work not reported yet (never
        one already reported).  From the driver thread or a fence callback it
        returns at once (rule 9).
        """
        if self.destroyed:
            return
        here = threading.get_ident() == self._thread.ident
        if here or Fence.in_callback() or self.screen.destroyed:
            self._teardown_here = True  # (before the stop: the driver thread reads it there)
            with self._lock:
                self._submit_locked(force=True)
                self._retire_locked(force=True)
            if not here and self.screen.destroyed:
                self._thread.join()
            return
        try:
            with self._lock:
                self._sync_locked("destroy")
                self._retire_locked()
            self._thread.join()
        finally:
            self.pipe.destroy()

    def _retire_locked(self, force: bool = False) -> None:
        self.destroyed = True
        self._batch = Batch(_DeadCalls())
        self._ring.put(_STOP, force)

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

    # -- bindless handles: made after a sync, as u_threaded_context makes them
    # (the handle is the answer); residency and deletes are recorded

    def create_texture_handle(self, view, state):
        view, state = checks.check_texture_handle(view, state, self.support)
        self.sync("create_texture_handle")
        handle = self.pipe._apply_create_texture_handle(view, state)
        self._tex_handles[handle] = view.texture
        return handle

    def delete_texture_handle(self, handle):
        h = checks.check_handle(handle, self._tex_handles, "texture")
        del self._tex_handles[h]
        self._resident.pop(h, None)
        self._record_call("delete_texture_handle", (h,))

    def make_texture_handle_resident(self, handle, resident):
        h = checks.check_handle(handle, self._tex_handles, "texture")
        if resident:
            self._resident[h] = (self._tex_handles[h], 0, None)
        else:
            self._resident.pop(h, None)
        self._record_call("make_texture_handle_resident", (h, bool(resident)))

    def create_image_handle(self, image):
        v = checks.check_image_handle(image, self.support)
        self.sync("create_image_handle")
        handle = self.pipe._apply_create_image_handle(v)
        if v.resource.is_buffer:  # (a program may write the range)
            self._img_handles[handle] = (v.resource, v.buf_offset, v.buf_offset + v.buf_size)
        else:
            self._img_handles[handle] = (v.resource, 0, None)
        return handle

    def delete_image_handle(self, handle):
        h = checks.check_handle(handle, self._img_handles, "image")
        del self._img_handles[h]
        self._resident.pop(h, None)
        self._record_call("delete_image_handle", (h,))

    def make_image_handle_resident(self, handle, access, resident):
        h = checks.check_handle(handle, self._img_handles, "image")
        access = checks.check_image_access(access)
        if resident:
            self._resident[h] = self._img_handles[h]
        else:
            self._resident.pop(h, None)
        self._record_call("make_image_handle_resident", (h, access, bool(resident)))

    def create_stream_output_target(self, resource, offset, size):
        self._direct()
        return self.pipe.create_stream_output_target(resource, offset, size)

    def create_query(self, query_type, index: int = 0):
        self._direct()
        name = counter_for_query(query_type)
        if name is not None:
            return _CounterQuery(checks.check_int("index", index, 0), name)
        return self.pipe.create_query(query_type, index)

    # ------------------------------------------------------------------ CSO bind / destroy (queued)

    # CSO binds are validated here, at the call; the driver only assigns.  The
    # hottest calls (these binds and the small state setters below) inline
    # ``_record``: a state call costs the application ~15 plain method calls,
    # and the call into ``_record`` was a fifth of it.
    def bind_blend_state(self, cso):
        b = self._batch
        b.calls.append((self._apply_blend, (check_blend_cso(cso),)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def bind_depth_stencil_alpha_state(self, cso):
        cso = self._bound["dsa"] = check_dsa_cso(cso)
        b = self._batch
        b.calls.append((self._apply_dsa, (cso,)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def bind_rasterizer_state(self, cso):
        rast = check_rasterizer_cso(cso)
        self._bound["rast"] = _DEFAULT_RASTERIZER if rast is None else rast.state
        self._sampling = None
        b = self._batch
        b.calls.append((self._apply_rasterizer, (rast,)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def bind_sampler_states(self, shader, start, samplers):
        args = checks.check_sampler_states(shader, start, samplers)
        stage, start, csos = args
        for i, cso in enumerate(csos):
            if cso is None:
                self._samplers.discard((int(stage), start + i))
            else:
                self._samplers.add((int(stage), start + i))
        self._record_call("bind_sampler_states", args)

    def _bind_shader(self, stage: ShaderType, key: str, cso: Any) -> None:
        self._bound[key] = checks.check_shader_cso(stage, cso)
        self._sampling = None
        self._record_call("bind_shader", (stage, cso))

    def bind_vs_state(self, cso):
        self._bind_shader(ShaderType.VERTEX, "vs", cso)

    def bind_fs_state(self, cso):
        self._bind_shader(ShaderType.FRAGMENT, "fs", cso)

    def bind_gs_state(self, cso):
        self._bind_shader(ShaderType.GEOMETRY, "gs", cso)

    def bind_tcs_state(self, cso):
        stage = ShaderType.TESS_CTRL
        self._bound["tcs"] = checks.check_tess_bind(stage, cso, self.support)
        self._sampling = None
        self._record_call("bind_shader", (stage, cso))

    def bind_tes_state(self, cso):
        stage = ShaderType.TESS_EVAL
        self._bound["tes"] = checks.check_tess_bind(stage, cso, self.support)
        self._sampling = None
        self._record_call("bind_shader", (stage, cso))

    def bind_compute_state(self, cso):
        self._bound["compute"] = checks.check_compute_cso(cso)
        self._record_call("bind_compute_state", (cso,))

    def bind_vertex_elements_state(self, cso):
        self._bound["velems"] = check = checks.check_vertex_elements_cso(cso)
        self._record(self._apply_vertex_elements, (check,))

    def _destroy_cso(self, direct: Any, cso: Any) -> None:
        direct(cso)  # the wrapped context's check of the handle (touches no state)
        self._record_call("delete_state", (cso,))

    def destroy_blend_state(self, cso):
        self._destroy_cso(self.pipe.destroy_blend_state, cso)

    def destroy_depth_stencil_alpha_state(self, cso):
        self._destroy_cso(self.pipe.destroy_depth_stencil_alpha_state, cso)

    def destroy_rasterizer_state(self, cso):
        self._destroy_cso(self.pipe.destroy_rasterizer_state, cso)

    def destroy_sampler_state(self, cso):
        self._destroy_cso(self.pipe.destroy_sampler_state, cso)

    def destroy_vs_state(self, cso):
        self._destroy_cso(self.pipe.destroy_vs_state, cso)

    def destroy_fs_state(self, cso):
        self._destroy_cso(self.pipe.destroy_fs_state, cso)

    def destroy_gs_state(self, cso):
        self._destroy_cso(self.pipe.destroy_gs_state, cso)

    def destroy_tcs_state(self, cso):
        self._destroy_cso(self.pipe.destroy_tcs_state, cso)

    def destroy_tes_state(self, cso):
        self._destroy_cso(self.pipe.destroy_tes_state, cso)

    def destroy_compute_state(self, cso):
        self._destroy_cso(self.pipe.destroy_compute_state, cso)

    def destroy_vertex_elements_state(self, cso):
        self._destroy_cso(self.pipe.destroy_vertex_elements_state, cso)

    delete_blend_state = destroy_blend_state
    delete_depth_stencil_alpha_state = destroy_depth_stencil_alpha_state
    delete_rasterizer_state = destroy_rasterizer_state
    delete_sampler_state = destroy_sampler_state
    delete_vs_state = destroy_vs_state
    delete_fs_state = destroy_fs_state
    delete_vertex_elements_state = destroy_vertex_elements_state

    def surface_destroy(self, surface):
        self._record_call("surface_destroy", (checks.destroy_surface(surface),))

    def sampler_view_destroy(self, view):
        self._record_call("sampler_view_destroy", (checks.destroy_sampler_view(view),))

    def stream_output_target_destroy(self, target):
        self._direct()  # (marks it destroyed: recorded draws holding it keep writing it)
        self.pipe.stream_output_target_destroy(target)

    # ------------------------------------------------------------------ state (queued)

    # Hot state setters validate and normalise on the caller's thread: errors
    # raise at the call, and the recorded payload is immutable (no snapshot copy).

    def set_blend_color(self, color):
        b = self._batch
        b.calls.append((self._apply_blend_color, (check_blend_color(color),)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def set_stencil_ref(self, ref):
        b = self._batch
        b.calls.append((self._apply_stencil_ref, (check_stencil_ref(ref),)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def set_sample_mask(self, mask):
        b = self._batch
        b.calls.append((self._apply_sample_mask, (check_sample_mask(mask),)))
        b.slots += 1
        if b.slots >= self.batch_slots:
            self._submit_full()

    def set_min_samples(self, n):
        self._record_call("set_min_samples", (checks.check_min_samples(n, self.support),))

    def get_sample_position(self, sample_count, sample_index):
        return self.pipe.get_sample_position(sample_count, sample_index)  # (no state: no sync)

    def set_clip_state(self, state):
        self._record_call("set_clip_state", (checks.check_clip_state(state),))

    def set_polygon_stipple(self, stipple):
        self._record_call("set_polygon_stipple", (checks.check_polygon_stipple(stipple),))

    def set_scissor_states(self, start, scissors):
        self._record_call("set_scissor_states", checks.check_scissor_states(start, scissors))

    def set_viewport_states(self, start, viewports):
        self._record_call("set_viewport_states", checks.check_viewport_states(start, viewports))

    def set_window_rectangles(self, include, rects):
        self._record_call(
            "set_window_rectangles", checks.check_window_rectangles(include, rects, self.support)
        )

    def set_debug_callback(self, cb):
        self._record_call("set_debug_callback", (checks.check_debug_callback(cb),))

    def set_tess_state(self, outer, inner):
        self._record_call("set_tess_state", checks.check_tess_state(outer, inner, self.support))

    def set_shader_buffers(self, shader, start, buffers):
        stage, first, bound = checks.check_shader_buffers(shader, start, buffers)
        for i, b in enumerate(bound):
            key = (stage, first + i)
            if b is None:
                self._ssbos.pop(key, None)
            else:
                self._ssbos[key] = (b.buffer, b.buffer_offset, b.buffer_offset + b.buffer_size)
        self._record_call("set_shader_buffers", (stage, first, bound))

    def set_shader_images(self, shader, start, images):
        stage, first, bound = checks.check_shader_images(shader, start, images)
        for i, v in enumerate(bound):
            key = (stage, first + i)
            if v is None:
                self._image_views.pop(key, None)
            elif v.resource.is_buffer:  # the program may write the range
                self._image_views[key] = (v.resource, v.buf_offset, v.buf_offset + v.buf_size)
            else:
                self._image_views[key] = (v.resource, 0, None)
        self._record_call("set_shader_images", (stage, first, bound))

    def set_stream_output_targets(self, targets, offsets):
        targets, offsets = checks.check_stream_output_targets(targets, offsets, self.support)
        self._so_targets = targets  # (draws write their buffers: _use_bindings)
        self._record_call("set_stream_output_targets", (targets, offsets))

    def set_global_binding(self, first, count, resources, handles):
        """Synchronous, as Mesa's tc_set_global_binding: the handles hold the
        buffers' addresses when it returns (the caller puts them in the
        grid's input at once)."""
        args = checks.check_global_binding(first, count, resources, handles, self.support)
        first, count, bound = args[0], args[1], args[2]
        with self._lock:
            self._sync_locked("set_global_binding")
            self.pipe._apply_global_binding(*args)
        for i in range(count):
            res = None if bound is None else bound[i]
            if res is None:
                self._globals.pop(first + i, None)
            else:
                self._globals[first + i] = res

    def set_framebuffer_state(self, state):
        snap = checks.check_framebuffer_state(state, self.support)
        self._bound["fb"] = snap
        self._record_call("set_framebuffer_state", (snap,))

    def set_vertex_buffers(self, start_slot, buffers):
        bindings = checks.check_vertex_buffers(start_slot, buffers)  # all valid, or nothing
        copied = 0
        for slot, vb in bindings:
            if vb is not None and not vb.is_user_buffer:
                self._vbufs[slot] = vb.buffer
            else:
                self._vbufs.pop(slot, None)
                if vb is not None:
                    copied += vb.buffer.size
        self.stats.bytes_copied += copied
        self._record(self._driver["set_vertex_buffers"], (bindings,), 1 + copied // 8)

    def set_constant_buffer(self, shader, index, cb):
        stage, index, binding = checks.check_constant_buffer(shader, index, cb)
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
        self._record(self._driver["set_constant_buffer"], (stage, index, binding), slots)

    def set_sampler_views(self, shader, start, views):
        shader, start, views = checks.check_sampler_views(shader, start, views)
        for i, v in enumerate(views):
            key = (int(shader), start + i)
            if v is None:
                self._views.pop(key, None)
            else:
                self._views[key] = v.texture
        self._record_call("set_sampler_views", (shader, start, views))

    def render_condition(self, query, condition=False, mode=0):
        self._record_call("render_condition", checks.check_render_condition(query, condition, mode))

    def set_active_query_state(self, enable):
        self._record_call("set_active_query_state", (checks.check_bool("enable", enable),))

    # ------------------------------------------------------------------ drawing

    def draw_vbo(self, info: DrawInfo) -> None:
        support = self.support
        info = checks.check_draw_info(info, support)  # a private copy, fields checked
        b = self._bound
        checks.check_draw_state(
            info, b["vs"], b["fs"], b["gs"], b["velems"], b["rast"], b["fb"], support,
            so_targets=self._so_targets, tcs=b["tcs"], tes=b["tes"],
            dsa=None if b["dsa"] is None else b["dsa"].state,
        )  # fmt: skip
        sampling = self._sampling
        if sampling is None:  # (the stages whose programs filter, since the last bind)
            shaders = {stage: b[key] for stage, key in _STAGE_KEYS}
            stages = checks.draw_stages(shaders, b["rast"].rasterizer_discard)
            sampling = self._sampling = [(st, cso) for st, cso in stages if cso.sampler_pairs]
        if sampling:
            self._check_sampler_bindings(sampling, "draw_vbo")
        slots = 2
        if info.index_size and not isinstance(info.index, Resource):
            data = checks.user_bytes(info.index, "info.index").copy()
            info.index = data
            self.stats.bytes_copied += data.size
            slots += data.size // 8
        self._record_call("draw_vbo", (info,), slots)

    def clear(self, buffers, color=None, depth=1.0, stencil=0, scissor_state=None):
        args = checks.check_clear(buffers, color, depth, stencil, scissor_state)
        self._record_call("clear", args)

    def clear_render_target(
        self, dst, color, dstx, dsty, width, height, render_condition_enabled=False
    ):
        self._record_call(
            "clear_render_target",
            checks.check_clear_render_target(
                dst, color, dstx, dsty, width, height, render_condition_enabled
            ),
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
        self._record_call(
            "clear_depth_stencil",
            checks.check_clear_depth_stencil(
                dst, clear_flags, depth, stencil, dstx, dsty, width, height,
                render_condition_enabled,
            ),
        )  # fmt: skip

    def clear_buffer(self, resource, offset, size, value):
        args = checks.check_clear_buffer(resource, offset, size, value)
        self.stats.bytes_copied += args[3].size
        self._record_call("clear_buffer", args, 1 + args[3].size // 8)

    def resource_copy_region(self, dst, dst_level, dstx, dsty, dstz, src, src_level, src_box):
        self._record_call(
            "resource_copy_region",
            checks.check_copy_region(dst, dst_level, dstx, dsty, dstz, src, src_level, src_box),
        )

    def blit(self, info):
        self._record_call("blit", (check_blit_info(info, self.screen),))  # a private copy

    def clear_texture(self, resource, level, box, data):
        clear = check_clear_texture(resource, level, box, data)  # copies the texel
        self._record_call("clear_texture", (clear,))

    def _check_sampler_bindings(self, stages: list, call: str) -> None:
        for stage, cso in stages:
            st = int(stage)
            views = {slot for s, slot in self._views if s == st}
            samplers = {slot for s, slot in self._samplers if s == st}
            checks.check_sampler_bindings(stage, cso, views, samplers, call)

    def launch_grid(self, info):
        grid = checks.check_grid_info(info, self.support)
        cso = self._bound["compute"]
        checks.check_launch(grid, cso)
        if cso.sampler_pairs:
            self._check_sampler_bindings([(ShaderType.COMPUTE, cso)], "launch_grid")
        self._record_call("launch_grid", (grid,))

    def texture_barrier(self, flags=0):
        self._record_call("texture_barrier", (checks.check_barrier_flags(flags),))

    def memory_barrier(self, flags):
        self._record_call("memory_barrier", (checks.check_barrier_flags(flags),))

    def flush_resource(self, resource):
        self._record_call("flush_resource", (checks.check_resource("resource", resource),))

    def invalidate_resource(self, resource):
        checks.check_resource("resource", resource)
        if resource.is_buffer:
            with self._lock:
                self._invalidate_locked(resource)
        else:
            self._record_call("invalidate_resource", (resource,))

    def emit_string_marker(self, string):
        self._record_call("emit_string_marker", (checks.check_string_marker(string),))

    def generate_mipmap(self, resource, format, base_level, last_level, first_layer, last_layer):
        # the answer needs only the format (as Mesa's tc_generate_mipmap): no sync
        blits = mipmap_blits(
            resource, format, base_level, last_level, first_layer, last_layer, self.screen
        )
        if blits is None:
            return False
        self._record_call("generate_mipmap", (blits,))
        return True

    # ------------------------------------------------------------------ flush and fences

    def _check_screen(self) -> None:
        if self.destroyed:
            raise ContextDestroyedError("this context has been destroyed")
        if self.screen.destroyed:
            raise ContextDestroyedError("the screen of this context has been destroyed")

    def flush(self, flags: int = 0) -> Fence:
        """Return a fence at once; the flush itself runs on the driver thread."""
        flags = checks.check_flush_flags(flags)
        self._check_screen()
        self.pipe.raise_pending_error()
        with self._lock:
            return self._flush_locked(flags)

    def _flush_locked(self, flags: Flush = _NO_FLAGS) -> Fence:
        fence = Fence(label=f"tc {self.id} flush", error_source=self.pipe.take_error)
        queries, self._unflushed_queries = self._unflushed_queries, []
        self._record_locked(self._flush_call, (flags, fence, queries))
        self._flush_count += 1
        self._flushes.append((self._flush_count, fence))
        self._prune_flushes()
        if flags & Flush.DEFERRED:
            fence._submit_hook = lambda: self._submit_deferred(fence)
        else:
            self._submit_locked()
        return fence

    def _driver_flush(self, flags: Flush, fence: Fence, queries: list) -> None:
        """Runs on the driver thread: flush the wrapped context, chain its fence.

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
        self._record(checks.check_callable("fn", fn), (data,))

    def fence_finish(self, fence: Fence, timeout_ns: int) -> bool:
        if not isinstance(fence, Fence):
            raise bad_type("fence", "a gallium.Fence", fence)
        return fence.finish(checks.check_fence_timeout(timeout_ns))

    # ------------------------------------------------------------------ transfers

    def _invalidate_locked(self, res: Resource) -> Resource:
        """Give a busy buffer fresh storage; queued work keeps the old one.

        The storage is a new resource of the same template (Mesa's
        ``tres->latest``): maps and direct writes go to it until the
        recorded replacement has executed.
        """
        new = self.screen.resource_create(res.template())
        _tracking(res).latest = new
        with res.lock:
            res.valid_range = [0, 0]  # the new storage holds nothing anyone wrote
        self.stats.invalidations += 1
        # (the table marks the use; the valid range was just emptied, not filled)
        self._note_access(CALLS["replace_buffer_storage"], (res, new))
        self._record_locked(self._driver_replace, (res, new))
        return new

    def _driver_replace(self, res: Resource, new: Resource) -> None:
        self._driver["replace_buffer_storage"](res, new)
        t = res.tc
        if t is not None and t.latest is new:
            t.latest = None
        self.screen.resource_destroy(new)  # (its storage lives on in ``res``)

    @staticmethod
    def _latest(res: Resource) -> Resource:
        t = res.tc
        latest = None if t is None else t.latest
        return res if latest is None else latest

    def _pending_staging_overlap(self, res: Resource, lo: int, hi: int) -> Batch | None:
        """The newest batch holding a not-yet-executed staging upload overlapping [lo, hi)."""
        pending = self._staging.get(res)
        if not pending:
            return None
        live = [(b, a, z) for (b, a, z) in pending if not b.executed]
        if live:
            self._staging[res] = live
        else:
            del self._staging[res]
        hits = [b for (b, a, z) in live if a < hi and z > lo]
        return max(hits, key=lambda b: b.seq or 1 << 62) if hits else None

    def _synced_map_steps(self, res: Resource, level: int, usage: Transfer, box: Box):
        """Map ``res`` after the recorded work that uses it (rule 5).

        Nothing recorded uses it (or that work is complete): mapped at once.
        Otherwise, as Mesa's threaded context does, the driver thread runs the
        queue first (the map waits for each submitted batch, recording no
        new work), and then the wrapped context maps it as its own map does,
        waiting for what it must (the scenes that read or write the resource,
        not the vertex work that only fetched from it).  With DONTBLOCK it
        returns ``(None, None)`` instead of waiting, having flushed the work
        it would wait for, so that a later try succeeds.
        """
        with self._lock:
            fences = self._busy_fences(res)
            idle = fences is not None and all(f.signalled for f in fences)
            if not idle and usage & Transfer.DONTBLOCK:
                if fences is None:
                    self._flush_locked()
                return None, None
        if idle:
            return self._map_now(res, level, usage, box)
        self.stats.sync("transfer_map")
        while True:
            with self._lock:
                last = self._submit_locked()
            if last is None or last.executed:
                break  # the driver thread is idle: the wrapped context is ours now
            yield last.done
        data, xfer = yield from self.pipe._map_steps(res, level, usage, box)
        xfer.context = self
        return data, xfer

    def _map_now(self, res: Resource, level: int, usage: Transfer, box: Box) -> tuple:
        data, xfer = self.pipe._apply_transfer_map(self._latest(res), level, usage, box)
        xfer.resource = res
        xfer.context = self
        return data, xfer

    def _map_steps(self, resource: Any, level: Any, usage: Any, box: Any) -> Generator:
        """transfer_map as steps: yields the fences to wait for, returns (data, transfer).

        The blocking and the awaitable face run the same steps
        (``Fence.run`` / ``Fence.run_async``).
        """
        self._check_screen()
        res, level, usage, box = checks.check_transfer_map(resource, level, usage, box)
        self.pipe.raise_pending_error()  # a map is a sync point
        if res.is_buffer and usage & Transfer.WRITE and not usage & Transfer.READ:
            return (yield from self._buffer_write_steps(res, level, usage, box))
        if not usage & Transfer.UNSYNCHRONIZED:
            return (yield from self._synced_map_steps(res, level, usage, box))
        return self._map_now(res, level, usage, box)

    def _buffer_write_steps(self, res: Resource, level: int, usage: Transfer, box: Box):
        """Rule 5's paths for a write-only buffer map; returns the map."""
        lo, hi = box.x, box.x + box.width
        dontblock = bool(usage & Transfer.DONTBLOCK)
        with self._lock:
            # Promote: writing bytes never written, or to an idle buffer, needs no wait.
            if not usage & Transfer.UNSYNCHRONIZED:
                if not res.valid_overlaps(lo, hi) or not self.is_busy(res):
                    usage |= Transfer.UNSYNCHRONIZED
                    self.stats.promoted_unsynchronized += 1
            # DISCARD_RANGE over the whole valid range is a whole-resource discard.
            if usage & Transfer.DISCARD_RANGE and not usage & Transfer.UNSYNCHRONIZED:
                vlo, vhi = res.valid_range
                if lo <= vlo and hi >= vhi:
                    usage = (usage & ~Transfer.DISCARD_RANGE) | Transfer.DISCARD_WHOLE_RESOURCE
            if usage & Transfer.DISCARD_WHOLE_RESOURCE and not usage & Transfer.UNSYNCHRONIZED:
                usage |= Transfer.UNSYNCHRONIZED
                if self.is_busy(res):
                    # fresh storage: no queued upload can land in it
                    self._invalidate_locked(res)
                    return self._map_now(res, level, usage, box)
            if usage & Transfer.DISCARD_RANGE and not usage & Transfer.UNSYNCHRONIZED:
                staging = np.zeros(box.width, np.uint8)
                self.stats.staging_uploads += 1
                xfer = TransferObject(
                    res, level, usage, box, box.width, box.width, staging, staging=staging,
                    context=self,
                )  # fmt: skip
                return staging, xfer
            wait_for = None
            if usage & Transfer.UNSYNCHRONIZED:
                # Rule 5: an unsynchronized map must not overtake a queued staging
                # upload; the upload may still sit in the batch being recorded.
                wait_for = self._pending_staging_overlap(res, lo, hi)
                if wait_for is not None and wait_for is self._batch:
                    self._submit_locked()
        if usage & Transfer.UNSYNCHRONIZED:
            if wait_for is not None:
                if dontblock:
                    return None, None
                self.stats.sync("unsynchronized map over pending staging upload")
                yield wait_for.done
            return self._map_now(res, level, usage, box)
        # a synchronized write to bytes queued work may use
        return (yield from self._synced_map_steps(res, level, usage, box))

    def transfer_map(self, resource: Resource, level: int, usage: int, box: Box):
        """Map a box of a resource; returns (data, transfer), or (None, None) for
        a DONTBLOCK map that would wait (rule 5)."""
        return Fence.run(self._map_steps(resource, level, usage, box))

    async def transfer_map_async(self, resource: Resource, level: int, usage: int, box: Box):
        """``transfer_map`` that awaits the work using the resource instead of
        blocking (asyncio or trio; cancelling it leaves the context intact)."""
        return await Fence.run_async(self._map_steps(resource, level, usage, box))

    def transfer_flush_region(self, transfer: TransferObject, box: Box) -> None:
        checks.check_flush_region(transfer, box)

    def transfer_unmap(self, transfer: TransferObject) -> None:
        checks.check_transfer(transfer)
        res = transfer.resource
        if transfer.staging is None:
            self.pipe._apply_transfer_unmap(transfer)
            return
        data = transfer.staging
        lo, hi = transfer.box.x, transfer.box.x + transfer.box.width
        self._staging.setdefault(res, []).append((self._batch, lo, hi))
        self.stats.bytes_copied += data.size
        self._record_call("buffer_subdata", (res, Transfer.WRITE, lo, data), 1 + data.size // 8)

    def buffer_subdata(self, resource: Resource, usage: int, offset: int, data: Any) -> None:
        usage, offset, raw = checks.check_subdata(resource, usage, offset, data)
        size = raw.size
        if size == 0:
            return
        lo, hi = offset, offset + size
        with self._lock:
            direct_ok = (
                usage & Transfer.UNSYNCHRONIZED
                or not resource.valid_overlaps(lo, hi)
                or (
                    not self.is_busy(resource)
                    and self._pending_staging_overlap(resource, lo, hi) is None
                )
            )
            if direct_ok and size > SMALL_SUBDATA:
                # Nothing queued can observe these bytes: write them now.
                resource.mark_valid(lo, hi)
                self.pipe._apply_buffer_subdata(
                    self._latest(resource), Transfer.WRITE | Transfer.UNSYNCHRONIZED, offset, raw
                )
                self.stats.promoted_unsynchronized += 1
                return
            copied = raw.copy()
            self.stats.bytes_copied += size
            write = self._driver["buffer_subdata"]
            self._note_access(CALLS["buffer_subdata"], (resource, usage, offset, copied))
            self._staging.setdefault(resource, []).append((self._batch, lo, hi))
            calls = self._batch.calls
            if size <= SMALL_SUBDATA and calls:
                fn, args = calls[-1]
                if fn == write and args[0] is resource and args[1] == usage:
                    prev_off, prev = args[2], args[3]
                    if prev_off + prev.size == offset and prev.size + size <= 4 * SMALL_SUBDATA:
                        merged = np.concatenate([prev, copied])
                        calls[-1] = (fn, (resource, usage, prev_off, merged))
                        self.stats.merged_subdata += 1
                        return
            self._record_locked(write, (resource, usage, offset, copied), 1 + size // 8)

    def texture_subdata(self, resource, level, usage, box, data, stride=0, layer_stride=0):
        res, level, usage, box, raw, stride, layer_stride = checks.check_texture_subdata(
            resource, level, usage, box, data, stride, layer_stride
        )
        need = (box.depth - 1) * layer_stride + (box.height - 1) * stride
        raw = raw[: need + box.width * res.block_bytes].copy()
        self.stats.bytes_copied += raw.size
        self._record_call(
            "texture_subdata",
            (res, level, usage, box, raw, stride, layer_stride),
            1 + raw.size // 8,
        )

    # ------------------------------------------------------------------ queries

    def destroy_query(self, query):
        q = checks.destroy_query(query)
        if isinstance(q, _CounterQuery):
            return
        self._record_call("destroy_query", (q,))

    def begin_query(self, query) -> bool:
        q = checks.begin_query(query)
        if isinstance(q, _CounterQuery):
            q.begin_value = getattr(self.stats, q.driver_counter)
            return True
        self._bump_query(q)
        self._record_call("begin_query", (q,))
        return True

    def _bump_query(self, query) -> int:
        with self._query_lock:
            query.tc_serial = getattr(query, "tc_serial", 0) + 1
            query.tc_flushed = False
            return query.tc_serial

    def end_query(self, query) -> bool:
        q = checks.end_query(query)
        if isinstance(q, _CounterQuery):
            q.end_value = getattr(self.stats, q.driver_counter)
            return True
        serial = self._bump_query(q)
        self._unflushed_queries.append((q, serial))
        self._record_call("end_query", (q,))
        return True

    def get_query_result_resource(self, query, wait, result_type, index, resource, offset):
        """Recorded: the driver thread writes the result in order (waiting
        there, not here, when ``wait``)."""
        self._record_call(
            "get_query_result_resource",
            checks.check_query_result_resource(query, wait, result_type, index, resource, offset),
        )

    def get_query_result(self, query, wait: bool = True):
        q = checks.check_query_result(query)
        if isinstance(q, _CounterQuery):
            return True, q.end_value - q.begin_value
        if getattr(q, "tc_flushed", False):
            # Rule 6: a flush after end_query has executed; the wrapped context
            # answers from the query's own fence without touching its state.
            return self.pipe.get_query_result(q, wait)
        with self._lock:
            self._sync_locked("get_query_result")
            return self.pipe.get_query_result(q, wait)

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
        q = checks.check_query_result(query)
        if isinstance(q, _CounterQuery):
            return self.get_query_result(q)[1]
        if not getattr(q, "tc_flushed", False):
            await self.flush()
        fence = q.fence
        if fence is not None:
            await fence
        return self.get_query_result(q, wait=True)[1]

    # ------------------------------------------------------------------ misc (synchronous)

    def get_device_reset_status(self):
        return self.pipe.get_device_reset_status()

    def set_device_reset_callback(self, callback):
        self.pipe.set_device_reset_callback(callback)

    def is_resource_referenced(self, resource, level=0, layer=0):
        checks.check_resource("resource", resource)
        return 3 if self.is_busy(resource) else 0

    def wait_idle(self) -> None:
        self.flush().wait(None)

    def __repr__(self) -> str:
        return f"<ThreadedContext {self.id} over {self.pipe.__class__.__name__}>"
