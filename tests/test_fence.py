"""Fences: returned by every flush, awaitable under asyncio and trio, cancellation-safe."""

from __future__ import annotations

import threading
import time

import anyio
import numpy as np
import pytest
import trio
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

import gallium
from gallium import pipe

TRI = [[-1, -1, 0, 1, 1, 0, 0, 1], [3, -1, 0, 1, 1, 0, 0, 1], [-1, 3, 0, 1, 1, 0, 0, 1]]


def _draw_red(screen, ctx):
    rt, _ = make_target(screen, ctx, 32, 32)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    return rt


def test_flush_returns_a_fence_even_with_no_work(ctx):
    fence = ctx.flush()
    assert isinstance(fence, gallium.Fence)
    assert fence.wait(5.0) is True
    assert fence.signalled


@pytest.mark.asyncio
async def test_await_flush_under_asyncio(screen, ctx):
    rt = _draw_red(screen, ctx)
    await ctx.flush()
    img = read_rgba8(ctx, rt)
    assert (img == [255, 0, 0, 255]).all()


def test_await_fence_under_trio(screen, ctx):
    rt = _draw_red(screen, ctx)

    async def main():
        fence = ctx.flush()
        await fence
        return fence.signalled

    assert trio.run(main) is True
    assert (read_rgba8(ctx, rt) == [255, 0, 0, 255]).all()


def test_await_under_anyio_both_backends(screen, ctx):
    _draw_red(screen, ctx)

    async def main():
        await ctx.flush()
        return "done"

    assert anyio.run(main, backend="asyncio") == "done"
    assert anyio.run(main, backend="trio") == "done"


def test_fence_finish_blocks_until_signalled_from_another_thread():
    fence = gallium.Fence()
    screen = gallium.create_screen(num_threads=1)
    threading.Timer(0.05, fence.signal).start()
    assert screen.fence_finish(None, fence, 0) is False
    assert screen.fence_finish(None, fence, pipe.PIPE_TIMEOUT_INFINITE) is True


def test_cancelling_one_waiter_leaves_the_fence_and_other_waiters_intact():
    fence = gallium.Fence()
    results = []

    async def waiter(name):
        await fence
        results.append(name)

    async def main():
        async with trio.open_nursery() as nursery:
            with trio.CancelScope() as scope:
                nursery.start_soon(waiter, "kept")
                inner = trio.CancelScope()

                async def cancelled_waiter():
                    with inner:
                        await fence
                        results.append("cancelled")

                nursery.start_soon(cancelled_waiter)
                await trio.sleep(0.01)
                inner.cancel()
                await trio.sleep(0.01)
                assert not fence.signalled
                threading.Timer(0.01, fence.signal).start()
            assert not scope.cancelled_caught

    trio.run(main)
    assert results == ["kept"]
    assert fence.signalled


@pytest.mark.asyncio
async def test_fail_after_timeout_does_not_break_the_fence():
    import asyncio

    fence = gallium.Fence()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await fence
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, fence.signal)
    await fence
    assert fence.signalled


def test_awaiting_does_not_poll_or_spawn_threads():
    fence = gallium.Fence()
    before = threading.active_count()

    async def main():
        async with trio.open_nursery() as n:
            for _ in range(50):
                n.start_soon(fence.wait_async)
            await trio.sleep(0.02)
            assert threading.active_count() == before
            t0 = time.process_time()
            await trio.sleep(0.1)
            # 50 parked waiters cost no CPU while the fence is pending
            assert time.process_time() - t0 < 0.05
            fence.signal()

    trio.run(main)
    assert np.all([fence.signalled])


# -- robustness (issue 21 item 2) ------------------------------------------------------


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_raising_done_callback_stops_neither_waiters_nor_the_next_frame(screen, threaded, caplog):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt = _draw_red(screen, ctx)
        fence = ctx.flush()
        woken = threading.Event()
        fence.add_done_callback(lambda: 1 / 0)  # first in line, raises
        fence.add_done_callback(woken.set)
        assert fence.wait(10) and woken.wait(10)  # the second callback still ran
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 1, 1))  # and the next frame completes
        assert ctx.flush().wait(10)
        assert (read_rgba8(ctx, rt) == [0, 0, 255, 255]).all()
        assert any("done-callback" in r.getMessage() for r in caplog.records)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    finally:
        ctx.destroy()


def test_a_raising_done_callback_on_a_bare_fence_wakes_every_waiter():
    fence = gallium.Fence()
    seen = []
    fence.add_done_callback(lambda: seen.append(1))
    fence.add_done_callback(lambda: {}["boom"])
    fence.add_done_callback(lambda: seen.append(3))

    async def waiter():
        await fence
        seen.append("awaited")

    async def main():
        async with trio.open_nursery() as n:
            n.start_soon(waiter)
            await trio.sleep(0.01)
            fence.signal()

    trio.run(main)
    assert seen == [1, 3, "awaited"]


def _fail(_data):
    raise RuntimeError("the real fault")


def test_a_raising_reset_callback_does_not_replace_the_real_error(screen, caplog):
    ctx = screen.context_create(threaded=True)
    try:

        def callback(status):
            raise KeyError("in the reset callback")

        ctx.set_device_reset_callback(callback)
        ctx.callback(_fail)
        with pytest.raises(RuntimeError, match="the real fault") as info:
            ctx.flush().wait(10)
        assert (
            "numpipe: the device reset callback raised KeyError: 'in the reset callback'"
            in info.value.__notes__
        )
        assert ctx.get_device_reset_status() == pipe.ResetStatus.GUILTY_CONTEXT_RESET
        assert any("reset callback raised" in r.getMessage() for r in caplog.records)
        ctx.flush().wait(10)  # reported once
    finally:
        ctx.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_screen_destroy_signals_flushed_frames_and_a_later_flush_raises(threaded):
    screen = gallium.create_screen(num_threads=1)
    ctx = screen.context_create(threaded=threaded)
    make_target(screen, ctx, 256, 256)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    fences = []
    for _ in range(6):
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        fences.append(ctx.flush())
    screen.destroy()
    done = 0
    for f in fences:  # every flushed frame completes or fails: none is left hanging
        try:
            assert f.wait(10)
            done += 1
        except gallium.pipe.ContextDestroyedError as exc:
            assert str(exc) == "the screen was destroyed before this work ran"
    assert all(f.signalled for f in fences)
    t0 = time.perf_counter()
    with pytest.raises(gallium.pipe.ContextDestroyedError, match="screen of this context"):
        ctx.flush()
    with pytest.raises(gallium.pipe.ContextDestroyedError, match="screen has been destroyed"):
        screen.context_create(threaded=threaded)
    ctx.destroy()
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("workers", [0, 1, 2])
def test_a_fence_callback_that_destroys_its_own_context_does_not_deadlock(threaded, workers):
    screen = gallium.create_screen(num_threads=workers)
    try:
        ctx = screen.context_create(threaded=threaded)
        _draw_red(screen, ctx)
        # (deferred on the threaded context: the frame runs only once waited
        # for, so the next draw is surely recorded when the callback runs)
        fence = ctx.flush(pipe.Flush.DEFERRED)
        destroyed = threading.Event()
        fence.add_done_callback(lambda: (ctx.destroy(), destroyed.set()))
        try:
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))  # unflushed
        except gallium.pipe.ContextDestroyedError:
            assert not threaded and workers == 0  # the frame ran, and destroyed, inline
        assert fence.wait(10)
        assert destroyed.wait(10)
        assert ctx.destroyed
        if threaded:
            ctx._thread.join(10)
            assert not ctx._thread.is_alive()
        with pytest.raises(gallium.pipe.ContextDestroyedError):
            ctx.flush()
    finally:
        screen.destroy()


def test_a_recorded_callback_that_destroys_its_own_context_does_not_deadlock(screen):
    ctx = screen.context_create(threaded=True)
    seen = []
    ctx.callback(lambda _: ctx.destroy())
    ctx.callback(seen.append, "after")  # the rest of the batch still runs
    ctx.flush()
    ctx._thread.join(10)
    assert not ctx._thread.is_alive()
    assert ctx.destroyed and seen == ["after"]
    with pytest.raises(gallium.pipe.ContextDestroyedError):
        ctx.set_blend_color(pipe.BlendColor())


@pytest.mark.parametrize(
    "timeout, error, message",
    [
        (float("nan"), gallium.PipeTypeError, "timeout_ns must be an integer; got float"),
        (-1, gallium.PipeValueError, "timeout_ns must be in [0, 18446744073709551615]; got -1"),
        (None, gallium.PipeTypeError, "timeout_ns must be an integer; got NoneType"),
        (1.5, gallium.PipeTypeError, "timeout_ns must be an integer; got float"),
    ],
)
def test_the_threaded_fence_finish_validates_its_timeout_as_the_screen_does(
    screen, threaded_ctx, timeout, error, message
):
    fence = threaded_ctx.flush()
    for finish in (
        lambda: screen.fence_finish(None, fence, timeout),
        lambda: threaded_ctx.fence_finish(fence, timeout),
        lambda: fence.finish(timeout),
    ):
        with pytest.raises(error) as info:
            finish()
        assert type(info.value) is error and str(info.value) == message
