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
