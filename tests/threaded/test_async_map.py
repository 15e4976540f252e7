"""``await ctx.transfer_map_async(...)``: readback without blocking the event loop
(issue 21 item 5), on both contexts, under asyncio and trio, cancellation-safe."""

from __future__ import annotations

import asyncio
import threading

import anyio
import numpy as np
import pytest
import trio
from helpers import bind_passthrough, make_target, set_vertices

import gallium
from gallium import pipe

TRI = [[-1, -1, 0, 1, 0, 1, 0, 1], [3, -1, 0, 1, 0, 1, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]
BOX = pipe.Box(0, 0, 0, 32, 32, 1)


def _frame(screen, ctx, gated: bool):
    """A green frame, queued behind a gate on the threaded context (so the map
    has work to wait for); returns (target, gate)."""
    rt, _ = make_target(screen, ctx, 32, 32)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    gate = threading.Event()
    if gated:
        ctx.callback(lambda _: gate.wait(10))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    return rt, gate


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_transfer_map_async_reads_back_while_the_loop_keeps_running(screen, threaded, backend):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, gate = _frame(screen, ctx, threaded)
        out = {}

        async def main():
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    await anyio.sleep(0.005)
                    ticks += 1
                    if ticks == 20:
                        gate.set()  # only a running loop opens the gate

            async with anyio.create_task_group() as tg:
                tg.start_soon(ticker)
                data, xfer = await ctx.transfer_map_async(rt, 0, pipe.Transfer.READ, BOX)
                out["img"] = np.array(data[0])
                ctx.transfer_unmap(xfer)
                out["ticks"] = ticks
                tg.cancel_scope.cancel()

        anyio.run(main, backend=backend)
        assert (out["img"] == [0, 255, 0, 255]).all()
        if threaded:  # it waited for the gate, which the loop opened
            assert out["ticks"] >= 20
            assert ctx.stats.sync_reasons["transfer_map"] == 1
    finally:
        gate.set()
        ctx.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_cancelling_transfer_map_async_leaves_the_context_intact(screen, threaded):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, gate = _frame(screen, ctx, threaded)
        if not threaded:  # hold the direct context's scene on the worker pool instead
            fence = gallium.Fence()
            for _ in range(screen.pool.num_threads):
                screen.pool.submit(_Blocker(fence))
            ctx.flush()

        async def cancelled():
            with trio.move_on_after(0.05) as scope:
                await ctx.transfer_map_async(rt, 0, pipe.Transfer.READ, BOX)
            return scope.cancelled_caught

        assert trio.run(cancelled)
        gate.set()
        if not threaded:
            fence.signal()

        async def again():
            return await ctx.transfer_map_async(rt, 0, pipe.Transfer.READ, BOX)

        data, xfer = asyncio.run(again())
        assert (data == [0, 255, 0, 255]).all()
        ctx.transfer_unmap(xfer)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    finally:
        gate.set()
        ctx.destroy()


class _Blocker:
    """A pool job whose one unit waits for a fence (holds a worker)."""

    def __init__(self, fence):
        self.fence = fence

    def unit_count(self):
        return 1

    def run_unit(self, unit, worker):
        self.fence.wait(10)

    def unit_failed(self, unit, exc):
        raise AssertionError(exc)

    def complete(self):
        pass


def test_transfer_map_async_with_dontblock_returns_none_for_a_busy_resource(screen):
    ctx = screen.context_create(threaded=True)
    try:
        rt, gate = _frame(screen, ctx, True)

        async def main():
            return await ctx.transfer_map_async(
                rt, 0, pipe.Transfer.READ | pipe.Transfer.DONTBLOCK, BOX
            )

        assert asyncio.run(main()) == (None, None)
    finally:
        gate.set()
        ctx.destroy()


def test_transfer_map_async_raises_bad_arguments_at_the_call(screen, ctx):
    rt, _ = make_target(screen, ctx, 8, 8)

    async def main():
        await ctx.transfer_map_async(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 9, 8, 1))

    with pytest.raises(gallium.PipeValueError, match=r"box must lie inside level 0 \(8x8x1\)"):
        asyncio.run(main())
