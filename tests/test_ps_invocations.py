"""PIPE_QUERY_PIPELINE_STATISTICS' ps_invocations: every covered fragment of
the draws while the query is active (inside the framebuffer and the scissor,
before any per-fragment test) -- the count an occlusion query gets when every
fragment passes, for triangles, lines and points."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, set_vertices, tied_triangles

from gallium import pipe

W, H = 96, 80


@pytest.fixture(params=[False, True], ids=["direct", "threaded"])
def qctx(screen, request):
    ctx = screen.context_create(threaded=request.param)
    make_target(screen, ctx, W, H, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
    bind_passthrough(ctx)
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.ALWAYS)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    yield ctx
    ctx.destroy()


def rasterizer(ctx, **state):
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState(**state)))


def counted(ctx, draws):
    """(ps_invocations, occlusion count) over ``draws``: (mode, vertices) pairs."""
    stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    occ = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 0), depth=0.5)
    ctx.begin_query(stats)
    ctx.begin_query(occ)
    for mode, verts in draws:
        set_vertices(ctx, verts)
        ctx.draw_vbo(pipe.DrawInfo(mode=mode, start=0, count=len(verts)))
    ctx.end_query(occ)
    ctx.end_query(stats)
    ctx.flush()
    ok, st = ctx.get_query_result(stats, True)
    assert ok
    return st.ps_invocations, ctx.get_query_result(occ, True)[1]


def quad(x0, y0, x1, y1):
    c = (0.2, 0.4, 0.6, 1.0)
    v = [(x0, y0), (x1, y0), (x0, y1), (x1, y0), (x1, y1), (x0, y1)]
    return np.array([[x, y, 0.3, 1.0, *c] for x, y in v], np.float32)


def test_a_full_screen_quad_and_a_scissored_one(qctx):
    rasterizer(qctx)
    assert counted(qctx, [(pipe.Prim.TRIANGLES, quad(-1, -1, 1, 1))]) == (W * H, W * H)
    # larger than the screen: clipped to it
    assert counted(qctx, [(pipe.Prim.TRIANGLES, quad(-3, -2, 2, 4))]) == (W * H, W * H)
    rasterizer(qctx, scissor=True)
    qctx.set_scissor_states(0, [pipe.ScissorState(3, 5, 40, 17)])  # max exclusive
    assert counted(qctx, [(pipe.Prim.TRIANGLES, quad(-1, -1, 1, 1))]) == (37 * 12, 37 * 12)


def test_overlapping_culled_and_offscreen_triangles(qctx):
    rasterizer(qctx, cull_face=pipe.Face.BACK)
    tris = tied_triangles(7, 400, 0.15, tie_levels=5)
    tris[:, :2] *= 1.3  # some of them partly off the screen
    ps, occ = counted(qctx, [(pipe.Prim.TRIANGLES, tris)])
    assert ps == occ
    # about half are back-facing and culled: fewer than the unculled count
    rasterizer(qctx)
    ps_all, occ_all = counted(qctx, [(pipe.Prim.TRIANGLES, tris)])
    assert ps_all == occ_all
    assert 0 < ps < ps_all


def test_lines_and_points(qctx):
    rng = np.random.default_rng(3)
    n = 60
    verts = np.zeros((2 * n, 8), np.float32)
    verts[:, :2] = rng.uniform(-1.2, 1.2, (2 * n, 2))
    verts[:, 2:4] = (0.3, 1.0)
    verts[:, 4:] = 1.0
    rasterizer(qctx, line_width=3.0, point_size=5.0)
    for mode in (pipe.Prim.LINES, pipe.Prim.LINE_STRIP, pipe.Prim.POINTS):
        ps, occ = counted(qctx, [(mode, verts)])
        assert ps == occ and ps > 0, mode.name


def test_nothing_rasterized_counts_nothing(qctx):
    rasterizer(qctx, rasterizer_discard=True)
    assert counted(qctx, [(pipe.Prim.TRIANGLES, quad(-1, -1, 1, 1))])[0] == 0
    rasterizer(qctx)
    qctx.set_sample_mask(0)
    assert counted(qctx, [(pipe.Prim.TRIANGLES, quad(-1, -1, 1, 1))]) == (0, 0)
    qctx.set_sample_mask(0xFFFFFFFF)
    # outside the query: not counted
    set_vertices(qctx, quad(-1, -1, 1, 1))
    qctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    assert counted(qctx, []) == (0, 0)


def test_counted_in_groups_of_rows(qctx, monkeypatch):
    """Many triangles are counted a group of rows at a time: the same count."""
    import workers.raster as raster

    monkeypatch.setattr(raster, "_COUNT_ROWS", 7)  # a few triangles a group
    rasterizer(qctx)
    tris = tied_triangles(8, 300, 0.2, tie_levels=3)
    ps, occ = counted(
        qctx, [(pipe.Prim.TRIANGLES, tris), (pipe.Prim.TRIANGLES, quad(-1, -1, 1, 1))]
    )
    assert ps == occ > W * H
