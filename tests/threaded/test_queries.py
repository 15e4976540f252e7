"""Queries and their async face, on threaded and direct contexts alike."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import trio
from conftest import get_screen
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe

FULL = [(-1, -1), (3, -1), (-1, 3)]


def tri(points, z=0.0, color=(1, 1, 1, 1)):
    return np.array([[x, y, z, 1, *color] for x, y in points], np.float32)


def draw(ctx, verts):
    set_vertices(ctx, verts)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))


def depth_setup(screen, ctx, size):
    rt, _ = make_target(screen, ctx, size, size, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
    bind_passthrough(ctx)
    dsa = ctx.create_depth_stencil_alpha_state(
        pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
    )
    ctx.bind_depth_stencil_alpha_state(dsa)
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 0), depth=1.0)
    return rt


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_occlusion_counter_is_exact_and_summed_over_all_bands(workers, threaded):
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    try:
        size = 256  # four 64-pixel bands
        rt = depth_setup(screen, ctx, size)
        q_all = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        ctx.begin_query(q_all)
        draw(ctx, tri([(-1, -1), (3, -1), (-1, 3)], z=0.5, color=(1, 0, 0, 1)))
        ctx.end_query(q_all)
        # a triangle behind the first one everywhere: no sample passes
        q_hidden = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        ctx.begin_query(q_hidden)
        draw(ctx, tri([(-1, -1), (3, -1), (-1, 3)], z=0.9))
        ctx.end_query(q_hidden)
        # a triangle in front covering exactly the lower-left half: x + y < 0 in
        # NDC, pixel centres strictly inside -> 256*255/2 pixels (diagonal excluded
        # by the fill rule on one side of the diagonal, see below)
        q_half = ctx.create_query(pipe.QueryType.OCCLUSION_PREDICATE)
        q_half_n = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        ctx.begin_query(q_half)
        ctx.begin_query(q_half_n)
        draw(ctx, tri([(-1, -1), (1, -1), (-1, 1)], z=0.1, color=(0, 1, 0, 1)))
        ctx.end_query(q_half_n)
        ctx.end_query(q_half)
        ctx.flush()
        assert ctx.get_query_result(q_all, True) == (True, size * size)
        assert ctx.get_query_result(q_hidden, True) == (True, 0)
        img = read_rgba8(ctx, rt)
        green = int((img == [0, 255, 0, 255]).all(axis=-1).sum())
        ok, n = ctx.get_query_result(q_half_n, True)
        assert ok and n == green
        # pixel (x, y) is inside when x + y < 255 (centres on the diagonal x+y = 255
        # are on the hypotenuse, a right edge here, so excluded)
        assert green == sum(min(size, 255 - y) for y in range(size))
        assert ctx.get_query_result(q_half, True) == (True, True)
    finally:
        ctx.destroy()


def test_timestamp_and_time_elapsed_are_ordered_and_positive(screen, ctx):
    depth_setup(screen, ctx, 64)
    t0 = ctx.create_query(pipe.QueryType.TIMESTAMP)
    el = ctx.create_query(pipe.QueryType.TIME_ELAPSED)
    t1 = ctx.create_query(pipe.QueryType.TIMESTAMP)
    ctx.end_query(t0)
    ctx.begin_query(el)
    for z in np.linspace(0.9, 0.1, 20):
        draw(ctx, tri(FULL, z=float(z)))
    ctx.end_query(el)
    ctx.end_query(t1)
    ctx.flush()
    ok0, a = ctx.get_query_result(t0, True)
    ok1, b = ctx.get_query_result(t1, True)
    okel, e = ctx.get_query_result(el, True)
    assert ok0 and ok1 and okel
    assert 0 < a < b <= screen.get_timestamp()
    assert 0 < e <= b - a + 1


def test_get_query_result_does_not_sync_after_a_flush_has_run(screen, threaded_ctx):
    ctx = threaded_ctx
    depth_setup(screen, ctx, 64)
    q = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.begin_query(q)
    draw(ctx, tri(FULL, z=0.5))
    ctx.end_query(q)
    ctx.flush().wait(10)
    syncs = ctx.stats.syncs
    assert ctx.get_query_result(q, True) == (True, 64 * 64)
    assert ctx.stats.syncs == syncs


def test_get_query_result_without_wait_reports_not_ready_then_ready(screen, direct_ctx):
    ctx = direct_ctx
    depth_setup(screen, ctx, 64)
    q = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.begin_query(q)
    draw(ctx, tri(FULL, z=0.5))
    ctx.end_query(q)
    ok, value = ctx.get_query_result(q, False)
    # not waiting may or may not find it finished, but must flush so it finishes
    if not ok:
        assert value is None
        ctx.flush().wait(10)
        ok, value = ctx.get_query_result(q, False)
    assert (ok, value) == (True, 64 * 64)


@pytest.mark.asyncio
async def test_query_result_awaited_under_asyncio(screen, ctx):
    depth_setup(screen, ctx, 64)
    q = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.begin_query(q)
    draw(ctx, tri([(-1, -1), (1, -1), (-1, 1)], z=0.5))
    ctx.end_query(q)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    t = asyncio.ensure_future(ticker())
    value = await ctx.get_query_result_async(q)
    t.cancel()
    assert value == sum(min(64, 63 - y) for y in range(64))
    assert ticks >= 1  # the loop kept running while the result was pending


def test_query_result_awaited_under_trio(screen, ctx):
    depth_setup(screen, ctx, 64)
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    ctx.begin_query(q)
    for _ in range(3):
        draw(ctx, tri(FULL))
    ctx.end_query(q)
    assert trio.run(ctx.get_query_result_async, q) == 3


def test_pipeline_statistics_count_what_was_drawn(screen, ctx):
    depth_setup(screen, ctx, 64)
    q = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    ctx.begin_query(q)
    draw(ctx, np.concatenate([tri(FULL, z=0.5), tri([(-1, -1), (1, -1), (-1, 1)], z=0.2)]))
    ctx.end_query(q)
    ctx.flush()
    ok, st = ctx.get_query_result(q, True)
    assert ok
    assert (st.ia_vertices, st.ia_primitives, st.vs_invocations) == (6, 2, 6)
    assert st.c_invocations == 2
    # The big triangle is clipped to the viewport square; the clipper emits the
    # corner (1, 1) twice (once per plane), so its fan has 3 triangles, one of
    # zero area.  Like llvmpipe, primitives are counted before the area test.
    assert st.c_primitives == 4


def test_driver_queries_expose_threaded_statistics(screen, threaded_ctx):
    ctx = threaded_ctx
    n = screen.get_driver_query_info()
    infos = [screen.get_driver_query_info(i) for i in range(n)]
    names = [i.name for i in infos]
    assert "tc-recorded-calls" in names and "tc-syncs" in names and "tc-batches" in names
    info = infos[names.index("tc-recorded-calls")]
    q = ctx.create_query(info.query_type)
    ctx.begin_query(q)
    for i in range(10):
        ctx.set_blend_color(pipe.BlendColor(color=(i / 10, 0, 0, 1)))
    ctx.end_query(q)
    assert ctx.get_query_result(q, True) == (True, 10)
    st = ctx.stats.as_dict()
    assert st["recorded_calls"] >= 10
    assert set(st) >= {
        "batches",
        "recorded_calls",
        "direct_calls",
        "syncs",
        "bytes_copied",
        "invalidations",
    }


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_set_active_query_state_false_pauses_queries_but_time_elapsed(screen, threaded):
    """Issue 21 item 6: set_active_query_state(False) did nothing.  Draws made
    while queries are paused count in no occlusion, primitives-generated or
    pipeline-statistics query; TIME_ELAPSED keeps running (context.rst)."""
    ctx = screen.context_create(threaded=threaded)
    try:
        make_target(screen, ctx, 64, 64)
        bind_passthrough(ctx)
        queries = {
            t: ctx.create_query(t)
            for t in (
                pipe.QueryType.OCCLUSION_COUNTER,
                pipe.QueryType.PRIMITIVES_GENERATED,
                pipe.QueryType.PIPELINE_STATISTICS,
                pipe.QueryType.TIME_ELAPSED,
            )
        }
        for q in queries.values():
            ctx.begin_query(q)
        full = tri(FULL)
        draw(ctx, full)  # counted
        ctx.set_active_query_state(False)
        draw(ctx, full)  # paused: not counted
        draw(ctx, full)
        ctx.set_active_query_state(True)
        draw(ctx, full)  # counted again
        for q in queries.values():
            ctx.end_query(q)
        ctx.flush().wait(10)
        result = {t: ctx.get_query_result(q, True)[1] for t, q in queries.items()}
        assert result[pipe.QueryType.OCCLUSION_COUNTER] == 2 * 64 * 64
        assert result[pipe.QueryType.PRIMITIVES_GENERATED] == 2
        stats = result[pipe.QueryType.PIPELINE_STATISTICS]
        assert (stats.ia_primitives, stats.ps_invocations) == (2, 2 * 64 * 64)
        assert result[pipe.QueryType.TIME_ELAPSED] > 0
    finally:
        ctx.destroy()
