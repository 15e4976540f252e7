"""The threaded context's rules, one test per rule (threaded/context.py docstring).

Where a rule is about not waiting, the driver thread is held on a gate and a
timer opens the gate later: an implementation that waits would still finish
(no hang), but too late, and the test fails on the elapsed time.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8

from gallium import pipe
from threaded import ThreadedContext

RED = (1.0, 0.0, 0.0, 1.0)
GREEN = (0.0, 1.0, 0.0, 1.0)
HOLD = 1.0  # seconds the driver thread is held in the no-wait tests


def full_screen(color) -> np.ndarray:
    pos = [(-1, -1, 0, 1), (3, -1, 0, 1), (-1, 3, 0, 1)]
    return np.array([[*p, *color] for p in pos], np.float32)


@pytest.fixture
def tc(screen):
    c = screen.context_create(threaded=True)
    yield c
    c.destroy()


def small_tc(screen, slots: int, queued: int) -> ThreadedContext:
    return ThreadedContext(screen.context_create(threaded=False), slots, queued)


def hold_driver(ctx, seconds: float = HOLD) -> threading.Event:
    """Block the driver thread until the returned gate opens (a timer opens it)."""
    gate = threading.Event()
    ctx.callback(lambda _: gate.wait(10))
    threading.Timer(seconds, gate.set).start()
    return gate


def vertex_buffer(screen, ctx, data: np.ndarray, size: int = 1024):
    vb = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=size,
            bind=pipe.Bind.VERTEX_BUFFER,
        )
    )
    ctx.buffer_subdata(vb, pipe.Transfer.WRITE, 0, data)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vb)])
    return vb


DRAW = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3)


# -- 1. recording ----------------------------------------------------------------


def test_execution_order_equals_record_order_across_batches_and_syncs(screen):
    ctx = small_tc(screen, slots=4, queued=2)
    try:
        rt, _ = make_target(screen, ctx, 8, 8)
        seen: list[int] = []
        for i in range(300):
            ctx.callback(seen.append, i)
            if i % 37 == 0:
                ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
                read_rgba8(ctx, rt)  # a map of a target in use: a wait in the stream
        ctx.sync()
        assert seen == list(range(300))
        assert ctx.stats.batches >= 300 // 4
        assert ctx.stats.sync_reasons["transfer_map"] == 9
    finally:
        ctx.destroy()


def test_a_full_ring_blocks_the_producer_and_drops_nothing(screen):
    ctx = small_tc(screen, slots=1, queued=2)
    try:
        seen: list[int] = []
        gate = threading.Event()
        ctx.callback(lambda _: gate.wait(10))
        recorded = []

        def producer():
            for i in range(50):
                ctx.callback(seen.append, i)
                recorded.append(i)

        t = threading.Thread(target=producer)
        t.start()
        time.sleep(0.3)
        # the driver holds one batch; the ring holds two; the producer is stuck
        # submitting the next one: it cannot run away from the driver
        assert len(recorded) <= 4
        assert len(ctx._ring) == 2
        gate.set()
        t.join(10)
        ctx.sync()
        assert seen == list(range(50))
        assert ctx.stats.ring_full_waits >= 1
    finally:
        ctx.destroy()


def _async_producer(ctx, backend: str, calls: int) -> dict:
    """An async producer that awaits ctx.ready_async() between calls while the
    driver thread is held by a gate that only *another task* on the same loop
    opens: if any recording call blocked the loop, the gate would never open."""
    import anyio

    gate = threading.Event()
    ctx.callback(lambda _: gate.wait(10))
    seen: list[int] = []
    out = {"waits": 0, "ticks_while_full": 0, "blocked_puts": 0}
    ready0 = ctx.stats.ready_waits

    async def producer(opened: anyio.Event) -> None:
        for i in range(calls):
            if not ctx._ring.has_space():
                out["waits"] += 1
            full_before = ctx.stats.ring_full_waits
            await ctx.ready_async()
            ctx.callback(seen.append, i)
            out["blocked_puts"] += ctx.stats.ring_full_waits - full_before
            await anyio.sleep(0)
        opened.set()

    async def opener() -> None:
        # runs only while the producer is suspended: the loop is free
        while ctx._ring.has_space():
            await anyio.sleep(0.01)
        out["ticks_while_full"] += 1
        gate.set()

    async def main() -> None:
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer, done)
            tg.start_soon(opener)
        await done.wait()

    anyio.run(main, backend=backend)
    ctx.sync()
    out["seen"] = seen
    out["ready_waits"] = ctx.stats.ready_waits - ready0
    return out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_an_async_producer_awaiting_ready_never_blocks_its_loop(screen, backend):
    ctx = small_tc(screen, slots=1, queued=2)
    try:
        out = _async_producer(ctx, backend, 40)
        assert out["seen"] == list(range(40))
        assert out["ticks_while_full"] == 1  # the opener ran while the ring was full
        assert out["waits"] >= 1  # the producer found the ring full and awaited
        assert out["ready_waits"] == out["waits"]
        assert out["blocked_puts"] == 0  # ... and never blocked inside a recording call
    finally:
        ctx.destroy()


def test_cancelling_ready_async_leaves_the_context_intact(screen):
    import asyncio

    ctx = small_tc(screen, slots=1, queued=1)
    try:
        gate, started = threading.Event(), threading.Event()
        ctx.callback(lambda _: (started.set(), gate.wait(10)))
        assert started.wait(10)  # the driver holds the first batch
        seen: list[int] = []
        ctx.callback(seen.append, 0)  # a second batch fills the one-batch ring

        async def main() -> bool:
            try:
                await asyncio.wait_for(ctx.ready_async(), 0.05)
            except TimeoutError:
                return True
            return False

        assert not ctx._ring.has_space()
        assert asyncio.run(main())  # timed out: the ring stayed full
        gate.set()
        ctx.callback(seen.append, 1)
        ctx.sync()
        assert seen == [0, 1]
        asyncio.run(ctx.ready_async())  # space again: returns at once
    finally:
        ctx.destroy()


def test_driver_callbacks_never_run_concurrently(screen):
    ctx = small_tc(screen, slots=8, queued=4)
    try:
        rt, _ = make_target(screen, ctx, 8, 8)
        busy = threading.Lock()
        overlaps = []

        def cb(_):
            if not busy.acquire(blocking=False):
                overlaps.append(1)
                return
            time.sleep(0.0005)
            busy.release()

        orig_map = ctx.pipe.transfer_map

        def checked_map(*a, **k):  # runs on the application thread during a sync
            if not busy.acquire(blocking=False):
                overlaps.append(2)
                return orig_map(*a, **k)
            try:
                return orig_map(*a, **k)
            finally:
                busy.release()

        ctx.pipe.transfer_map = checked_map
        for i in range(200):
            ctx.callback(cb)
            if i % 20 == 0:
                read_rgba8(ctx, rt)
        ctx.sync()
        assert overlaps == []
    finally:
        ctx.destroy()


# -- 2. direct vs queued ---------------------------------------------------------------


def test_create_calls_run_on_the_caller_without_waiting(screen, tc):
    hold_driver(tc)
    t0 = time.perf_counter()
    before = tc.stats.direct_calls
    blend = tc.create_blend_state(pipe.BlendState())
    dsa = tc.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState())
    rast = tc.create_rasterizer_state(pipe.RasterizerState())
    fs = tc.create_fs_state(pipe.ShaderState(tokens="FRAG\nDCL OUT[0], COLOR\n  0: END\n"))
    q = tc.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=4,
            height0=4,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf = tc.create_surface(res, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    elapsed = time.perf_counter() - t0
    assert elapsed < HOLD / 2
    assert tc.stats.direct_calls - before == 6
    assert all(o is not None for o in (blend, dsa, rast, fs, q, surf))


def test_every_sync_is_counted_with_its_reason(screen, tc):
    rt, _ = make_target(screen, tc, 8, 8)
    before = tc.stats.syncs
    read_rgba8(tc, rt)  # nothing uses it: no wait
    assert tc.stats.syncs == before
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    read_rgba8(tc, rt)  # the clear uses it: the map waits for it
    q = tc.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    tc.begin_query(q)
    tc.end_query(q)
    tc.get_query_result(q, True)
    assert tc.stats.syncs - before == 2
    assert tc.stats.sync_reasons["transfer_map"] == 1
    assert tc.stats.sync_reasons["get_query_result"] == 1


# -- 3. no-stall paths ------------------------------------------------------------------


def _two_targets(screen, ctx):
    rt1, _ = make_target(screen, ctx, 8, 8)
    s1 = ctx._bound["fb"] if isinstance(ctx, ThreadedContext) else None
    rt2 = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=8,
            height0=8,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf2 = ctx.create_surface(rt2, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    return rt1, rt2, surf2, s1


def test_discard_whole_resource_map_of_a_busy_buffer_does_not_wait(screen, tc):
    rt1, rt2, surf2, _ = _two_targets(screen, tc)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    hold_driver(tc)
    tc.draw_vbo(DRAW)  # queued behind the held driver: it still needs the red vertices
    t0 = time.perf_counter()
    data, xfer = tc.transfer_map(
        vb,
        0,
        pipe.Transfer.WRITE | pipe.Transfer.DISCARD_WHOLE_RESOURCE,
        pipe.Box(0, 0, 0, 96, 1, 1),
    )
    elapsed = time.perf_counter() - t0
    data[:] = full_screen(GREEN).view(np.uint8).reshape(-1)
    tc.transfer_unmap(xfer)
    tc.set_framebuffer_state(pipe.FramebufferState(width=8, height=8, cbufs=[surf2]))
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    tc.draw_vbo(DRAW)  # recorded after the map: sees the green vertices
    assert elapsed < HOLD / 2
    assert tc.stats.invalidations == 1
    assert (read_rgba8(tc, rt1) == [255, 0, 0, 255]).all()
    assert (read_rgba8(tc, rt2) == [0, 255, 0, 255]).all()


def test_map_of_a_range_never_written_is_promoted_to_unsynchronized(screen, tc):
    make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))  # bytes [0, 96) valid
    hold_driver(tc)
    tc.draw_vbo(DRAW)
    before = tc.stats.promoted_unsynchronized
    t0 = time.perf_counter()
    data, xfer = tc.transfer_map(vb, 0, pipe.Transfer.WRITE, pipe.Box(512, 0, 0, 256, 1, 1))
    data[:] = 7
    tc.transfer_unmap(xfer)
    assert time.perf_counter() - t0 < HOLD / 2
    assert tc.stats.promoted_unsynchronized - before == 1
    assert vb.valid_range == [0, 768]


def test_map_of_an_idle_buffer_does_not_sync(screen, tc):
    vb = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, width0=256, bind=pipe.Bind.VERTEX_BUFFER
        )
    )
    tc.buffer_subdata(vb, pipe.Transfer.WRITE, 0, np.arange(64, dtype=np.uint8))
    tc.flush().wait(10)
    syncs = tc.stats.syncs
    data, xfer = tc.transfer_map(vb, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 64, 1, 1))
    data[:] = 255
    tc.transfer_unmap(xfer)
    assert tc.stats.syncs == syncs
    tc.sync()
    assert (vb.storage[:64] == 255).all()


def test_discard_of_the_whole_valid_range_becomes_a_whole_resource_discard(screen, tc):
    make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))  # valid range [0, 96)
    hold_driver(tc)
    tc.draw_vbo(DRAW)
    t0 = time.perf_counter()
    _, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE, pipe.Box(0, 0, 0, 96, 1, 1)
    )
    tc.transfer_unmap(xfer)
    assert time.perf_counter() - t0 < HOLD / 2
    assert tc.stats.invalidations == 1
    assert tc.stats.staging_uploads == 0


def test_discard_range_map_writes_a_staging_copy_applied_in_order_at_unmap(screen, tc):
    rt1, rt2, surf2, _ = _two_targets(screen, tc)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))
    tc.buffer_subdata(vb, pipe.Transfer.WRITE, 512, np.ones(256, np.uint8))  # valid [0, 768)
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    hold_driver(tc)
    tc.draw_vbo(DRAW)
    t0 = time.perf_counter()
    data, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE, pipe.Box(0, 0, 0, 96, 1, 1)
    )
    assert time.perf_counter() - t0 < HOLD / 2
    data[:] = full_screen(GREEN).view(np.uint8).reshape(-1)
    tc.transfer_unmap(xfer)  # the staged bytes go into the queue here, in order
    tc.set_framebuffer_state(pipe.FramebufferState(width=8, height=8, cbufs=[surf2]))
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    tc.draw_vbo(DRAW)
    assert tc.stats.staging_uploads == 1
    assert tc.stats.invalidations == 0
    assert (read_rgba8(tc, rt1) == [255, 0, 0, 255]).all()
    assert (read_rgba8(tc, rt2) == [0, 255, 0, 255]).all()


def test_small_buffer_subdata_is_copied_when_recorded(screen, tc):
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, width0=320, bind=pipe.Bind.VERTEX_BUFFER
        )
    )
    tc.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.zeros(320, np.uint8))  # make it valid
    hold_driver(tc, 0.3)
    src = np.arange(320, dtype=np.uint16).astype(np.uint8)
    tc.buffer_subdata(buf, pipe.Transfer.WRITE, 0, src)
    src[:] = 0  # changing the source afterwards has no effect
    tc.sync()
    assert np.array_equal(buf.storage, np.arange(320, dtype=np.uint16).astype(np.uint8))


def test_adjacent_small_subdata_writes_merge_into_one_record(screen, tc):
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, width0=128, bind=pipe.Bind.VERTEX_BUFFER
        )
    )
    tc.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.zeros(128, np.uint8))
    hold_driver(tc, 0.2)
    calls = tc.stats.recorded_calls
    for i in range(4):
        tc.buffer_subdata(buf, pipe.Transfer.WRITE, 32 * i, np.full(32, i + 1, np.uint8))
    assert tc.stats.recorded_calls - calls == 1
    assert tc.stats.merged_subdata == 3
    tc.sync()
    assert np.array_equal(buf.storage, np.repeat(np.arange(1, 5, dtype=np.uint8), 32))


def test_unsynchronized_map_overlapping_a_pending_staging_upload_waits(screen, tc):
    make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))
    tc.buffer_subdata(vb, pipe.Transfer.WRITE, 512, np.ones(256, np.uint8))  # valid [0, 768)
    hold_driver(tc, 0.5)
    tc.draw_vbo(DRAW)
    data, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE, pipe.Box(0, 0, 0, 64, 1, 1)
    )
    data[:] = 9
    tc.transfer_unmap(xfer)
    t0 = time.perf_counter()
    data, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.UNSYNCHRONIZED, pipe.Box(32, 0, 0, 64, 1, 1)
    )
    waited = time.perf_counter() - t0
    seen = data[:32].copy()  # the staged bytes have landed before we got the map
    tc.transfer_unmap(xfer)
    assert waited > 0.2
    assert tc.stats.sync_reasons["unsynchronized map over pending staging upload"] == 1
    assert (seen == 9).all()


def test_unsynchronized_map_elsewhere_does_not_wait(screen, tc):
    make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vb = vertex_buffer(screen, tc, full_screen(RED))
    tc.buffer_subdata(vb, pipe.Transfer.WRITE, 512, np.ones(256, np.uint8))
    hold_driver(tc)
    tc.draw_vbo(DRAW)
    _, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE, pipe.Box(0, 0, 0, 64, 1, 1)
    )
    tc.transfer_unmap(xfer)
    t0 = time.perf_counter()
    _, xfer = tc.transfer_map(
        vb, 0, pipe.Transfer.WRITE | pipe.Transfer.UNSYNCHRONIZED, pipe.Box(800, 0, 0, 64, 1, 1)
    )
    tc.transfer_unmap(xfer)
    assert time.perf_counter() - t0 < HOLD / 2


# -- 6. deferred flushes -------------------------------------------------------------------


def test_deferred_flush_is_submitted_by_a_waiter_on_another_thread(screen, tc):
    rt, _ = make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vertex_buffer(screen, tc, full_screen(GREEN))
    tc.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    tc.draw_vbo(DRAW)
    batches = tc.stats.batches
    fence = tc.flush(pipe.Flush.DEFERRED)
    assert tc.stats.batches == batches  # nothing submitted yet
    result = []
    t = threading.Thread(target=lambda: result.append(screen.fence_finish(None, fence, 10**10)))
    t.start()
    t.join(10)
    assert result == [True]
    assert (read_rgba8(tc, rt) == [0, 255, 0, 255]).all()


def test_deferred_fence_awaited_under_trio_and_asyncio(screen, tc):
    import asyncio

    import trio

    make_target(screen, tc, 8, 8)
    bind_passthrough(tc)
    vertex_buffer(screen, tc, full_screen(GREEN))
    tc.draw_vbo(DRAW)
    f1 = tc.flush(pipe.Flush.DEFERRED)
    trio.run(f1.wait_async)
    assert f1.signalled
    tc.draw_vbo(DRAW)
    f2 = tc.flush(pipe.Flush.DEFERRED)

    async def aw():
        await f2

    asyncio.run(aw())
    assert f2.signalled


# -- 7. errors ------------------------------------------------------------------------------


def _raise_on_driver(what: str) -> None:
    raise RuntimeError(f"{what}: raised by a recorded call")


def test_an_error_on_the_driver_thread_does_not_drop_the_rest_of_the_batch(screen, tc):
    seen = []
    tc.callback(seen.append, 1)
    tc.callback(_raise_on_driver, "bad")
    tc.callback(seen.append, 2)
    with pytest.raises(RuntimeError, match="bad: raised by a recorded call"):
        tc.flush().wait(10)
    assert seen == [1, 2]
    assert tc.stats.driver_errors == 1


def test_bad_state_is_rejected_at_the_call_before_anything_is_queued(screen, tc):
    calls = tc.stats.recorded_calls
    with pytest.raises(TypeError, match=r"viewports\[0\] must be a pipe.ViewportState"):
        tc.set_viewport_states(0, ["not a viewport"])
    with pytest.raises(ValueError, match=r"ref.ref_value must be two values in 0..255"):
        tc.set_stencil_ref(pipe.StencilRef(ref_value=(1, 300)))
    assert tc.stats.recorded_calls == calls
    tc.flush().wait(10)
    assert tc.get_device_reset_status() == pipe.ResetStatus.NO_RESET


# -- draws recorded back to back ------------------------------------------------------------


def _setup_small_draws(ctx, screen, n, *, blend_const=False):
    """Target, pipeline and n small triangles; returns (target, index array)."""
    rt, _ = make_target(screen, ctx, 64, 64)
    bind_passthrough(ctx)
    if blend_const:
        rt_blend = pipe.RtBlendState(
            blend_enable=True,
            rgb_func=pipe.BlendFunc.ADD,
            rgb_src_factor=pipe.BlendFactor.CONST_COLOR,
            rgb_dst_factor=pipe.BlendFactor.ZERO,
            alpha_func=pipe.BlendFunc.ADD,
            alpha_src_factor=pipe.BlendFactor.ONE,
            alpha_dst_factor=pipe.BlendFactor.ZERO,
        )
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[rt_blend])))
    rng = np.random.default_rng(9)
    centres = rng.uniform(-0.9, 0.9, (n, 1, 2))
    offs = np.array([[-0.08, -0.08], [0.08, -0.08], [0.0, 0.09]])
    xy = (centres + offs).reshape(-1, 2)
    col = np.repeat(rng.uniform(0.2, 1.0, (n, 4)), 3, axis=0)
    verts = np.concatenate([xy, np.zeros((3 * n, 1)), np.ones((3 * n, 1)), col], 1)
    vertex_buffer(screen, ctx, verts.astype(np.float32), size=verts.nbytes)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    return rt, np.arange(3 * n, dtype=np.uint16)


def _batching(*ctxs):
    """Queue draws and run them in passes (whatever NUMPIPE_DRAW_BATCH says)."""
    for ctx in ctxs:
        getattr(ctx, "pipe", ctx).batch_draws = True
    return ctxs


def _small_draws(ctx, n, index, first=0, bad_at=None):
    """Draws first..n-1, one triangle each, a blend colour and stencil ref set before each."""
    for i in range(first, n):
        ctx.set_blend_color(pipe.BlendColor(color=(i / n, 1 - i / n, 0.5, 1.0)))
        ctx.set_stencil_ref(pipe.StencilRef(ref_value=(i % 256, 0)))
        start = 3 * i if i != bad_at else 3 * n  # an index range past the buffer's end
        ctx.draw_vbo(
            pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=start, count=3, index_size=2, index=index)
        )


@pytest.mark.parametrize("blend_const", [False, True], ids=["plain", "blend-colour"])
def test_back_to_back_draws_share_a_vertex_pass_and_render_as_one_by_one(screen, blend_const):
    """Draws with fragment-side state between them take one vertex-pipeline
    pass on both contexts, and draw what one pass per draw draws."""
    direct, threaded = _batching(
        screen.context_create(threaded=False),
        small_tc(screen, slots=4096, queued=8),  # the whole frame in one batch
    )
    alone = screen.context_create(threaded=False)
    alone.batch_draws = False  # every draw its own pass, at its call
    try:
        images = []
        for ctx in (direct, threaded, alone):
            rt, index = _setup_small_draws(ctx, screen, 120, blend_const=blend_const)
            _small_draws(ctx, 120, index)
            ctx.flush().wait(10)
            images.append(read_rgba8(ctx, rt))
        assert (images[0][..., 3] > 0).sum() > 800  # a real picture
        assert np.array_equal(images[0], images[1])
        assert np.array_equal(images[0], images[2])
        for ctx, passes in ((direct, 1), (threaded.pipe, 1), (alone, 120)):
            assert ctx.stats["draw_passes"] == passes
        # one raster command for the frame on both (with the blend colour
        # changing per draw: 120 states in it)
        for ctx in (direct, threaded.pipe):
            assert (ctx.stats["draw_commands"], ctx.stats["merged_draws"]) == (1, 119)
    finally:
        direct.destroy()
        threaded.destroy()
        alone.destroy()


def _quad_draws(ctx, screen, n, seed):
    """n quads, each from its own user vertex buffer bound just before its
    draw (immediate-mode style); some share the same slot, some use a second
    per-instance colour buffer with a different start instance."""
    rt, _ = make_target(screen, ctx, 96, 64)
    bind_passthrough(ctx)
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(0, 1, 1, pipe.Format.R32G32B32A32_FLOAT),  # per instance
            ]
        )
    )
    rng = np.random.default_rng(seed)
    colours = rng.uniform(0, 1, (4, 4)).astype(np.float32)
    for i in range(n):
        x0, y0 = rng.uniform(-1, 0.6, 2)
        x1, y1 = x0 + rng.uniform(0.1, 0.4), y0 + rng.uniform(0.1, 0.4)
        pos = np.array(
            [[x0, y0, 0.5, 1], [x1, y0, 0.5, 1], [x0, y1, 0.5, 1], [x1, y1, 0.5, 1]], np.float32
        )[[0, 1, 2, 2, 1, 3]]
        ctx.set_vertex_buffers(
            0,
            [
                pipe.VertexBuffer(stride=16, buffer_offset=0, buffer=pos),
                pipe.VertexBuffer(stride=16, buffer_offset=0, buffer=colours),
            ],
        )
        ctx.draw_vbo(
            pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6, start_instance=i % 4)
        )
    return rt


def test_draws_with_their_own_vertex_buffers_share_a_vertex_pass(screen):
    """Vertex buffers bound between draws do not break a run: each draw's
    vertices are fetched from its own buffers (and start instance), the rest
    of the vertex pipeline runs once."""
    direct, threaded = _batching(
        screen.context_create(threaded=False),
        small_tc(screen, slots=4096, queued=8),  # the whole frame in one batch
    )
    try:
        images = []
        for ctx in (direct, threaded):
            rt = _quad_draws(ctx, screen, 40, seed=3)
            ctx.flush().wait(10)
            images.append(read_rgba8(ctx, rt))
        assert (images[0][..., 3] > 0).sum() > 1000  # a real picture
        assert len({tuple(p) for p in images[0].reshape(-1, 4)}) >= 4  # all four instance colours
        assert np.array_equal(images[0], images[1])
        for ctx in (direct, threaded.pipe):  # 40 draws, 40 vertex buffers, one pass
            assert ctx.stats["draw_passes"] == 1
    finally:
        direct.destroy()
        threaded.destroy()


def test_a_bad_draw_in_a_run_raises_at_the_call_and_the_others_still_draw(screen):
    """A draw whose index range leaves the index data raises at the call on
    both contexts (nothing is recorded for it): the 39 good draws around it
    still run as one pass, and the threaded frame is the direct one's."""
    direct, threaded = _batching(
        screen.context_create(threaded=False), small_tc(screen, slots=4096, queued=8)
    )
    try:
        images = []
        for ctx in (direct, threaded):
            rt, index = _setup_small_draws(ctx, screen, 40)
            with pytest.raises(ValueError, match=r"index range \[120, 123\) must lie inside"):
                _small_draws(ctx, 40, index, bad_at=17)  # raises at the call...
            _small_draws(ctx, 40, index, first=18)  # ...so finish the frame by hand
            ctx.flush().wait(10)
            images.append(read_rgba8(ctx, rt))
            assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        assert np.array_equal(images[0], images[1])
        for ctx in (direct, threaded.pipe):  # the 39 good draws, one pass
            assert (ctx.stats["draws"], ctx.stats["draw_passes"]) == (39, 1)
        assert threaded.stats.driver_errors == 0
    finally:
        direct.destroy()
        threaded.destroy()


def test_the_driver_thread_sleeps_between_batches_only_when_one_is_queued(screen, monkeypatch):
    """After a batch the driver thread offers the GIL with a short sleep when
    another batch is already queued (so a waiting event loop gets it before
    the next batch runs); with none queued it goes straight to waiting for
    the next, which hands the GIL over as well, and no wake-up takes it from
    the workers that the batch's flush just started."""
    import types

    import threaded.context as tcm

    ctx = small_tc(screen, slots=4096, queued=8)
    try:
        ctx.sync()
        slept: list[float] = []

        def sleep(seconds: float) -> None:
            if threading.current_thread() is ctx._thread:
                slept.append(seconds)
            time.sleep(seconds)

        clock = types.SimpleNamespace(perf_counter=time.perf_counter, sleep=sleep)
        monkeypatch.setattr(tcm, "time", clock)
        monkeypatch.setattr(tcm, "_YIELD_EVERY_S", 1e9)  # no sleeps inside batches
        for _ in range(3):  # one batch each, nothing queued behind it
            ctx.flush().wait(10)
        assert slept == []
        gate = threading.Event()
        ctx.callback(lambda _: gate.wait(10))
        fences = [ctx.flush() for _ in range(4)]  # the held batch, then three queued
        gate.set()
        for f in fences:
            assert f.wait(10)
        ctx.sync()
        # after the held batch 3 were queued, then 2, then 1, then none
        assert slept == [tcm._YIELD_S] * 3
        assert ctx.stats.executed_batches >= 7
    finally:
        ctx.destroy()


def test_the_driver_thread_offers_the_gil_between_vertex_pipeline_stages(screen, monkeypatch):
    """A long batch does not keep the GIL from an event loop: the driver thread
    passes a yield point after index reading, fetch, the vertex shader and
    clipping of every vertex-pipeline pass, and every 64 calls, and sleeps
    there once ~1 ms has passed since it last did."""
    import threaded.context as tcm

    (ctx,) = _batching(small_tc(screen, slots=4096, queued=8))
    try:
        rt, index = _setup_small_draws(ctx, screen, 30)
        ctx.sync()
        points: list[int] = []
        offer = ctx.pipe.yield_point
        ctx.pipe.yield_point = lambda: (points.append(threading.get_ident()), offer())
        monkeypatch.setattr(tcm, "_YIELD_EVERY_S", 0.0)  # every yield point sleeps
        before = ctx.stats.gil_handoffs
        _small_draws(ctx, 30, index)  # 90 calls, queued by the direct context
        ctx.set_sample_mask(0xFFFFFFFF)  # fragment-side: the pass goes on
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush().wait(10)
        # one pass of 31 draws at the flush: 4 stage boundaries
        assert points == [ctx._thread.ident] * 4
        assert ctx.pipe.stats["draw_passes"] == 1
        # ... and the 64th of the batch's 93 calls
        assert ctx.stats.gil_handoffs - before == 4 + 1
        # a vertex-side state call between draws starts a new pass
        before = ctx.stats.gil_handoffs
        points.clear()
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState()))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=3, count=3))
        ctx.flush().wait(10)
        assert points == [ctx._thread.ident] * 8
        assert ctx.stats.gil_handoffs - before == 8
        assert ctx.pipe.stats["draw_passes"] == 3
        assert (read_rgba8(ctx, rt)[..., 3] > 0).sum() > 100  # and it drew
    finally:
        ctx.destroy()
