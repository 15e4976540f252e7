"""set_window_rectangles: draws keep exactly the pixels the rectangles allow."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    ADD,
    FS_MUL_ONE,
    PASS_FS,
    bind_passthrough,
    make_target,
    read_rgba8,
    set_vertices,
)

import gallium
from gallium import pipe
from gallium.numpipe.window import regions

W, H = 200, 150
CLEAR = (0.0, 0.0, 0.0, 0.0)


def _scene():
    """A full-screen gradient quad (dense and pair paths) and a fan of small
    triangles (sparse path), additively blended: a pixel drawn twice shows."""
    rng = np.random.default_rng(5)
    big = np.array(
        [[-1, -1, 0, 1, 0.2, 0.0, 0.1, 0.5], [1, -1, 0, 1, 0.0, 0.3, 0.1, 0.5],
         [1, 1, 0, 1, 0.1, 0.1, 0.3, 0.5], [-1, -1, 0, 1, 0.2, 0.0, 0.1, 0.5],
         [1, 1, 0, 1, 0.1, 0.1, 0.3, 0.5], [-1, 1, 0, 1, 0.3, 0.2, 0.0, 0.5]], np.float32
    )  # fmt: skip
    small = []
    for _ in range(300):
        cx, cy = rng.uniform(-1, 1, 2)
        pts = rng.uniform(-0.06, 0.06, (3, 2)) + np.array([cx, cy])
        col = rng.uniform(0, 0.4, 4)
        small += [[p[0], p[1], 0, 1, *col] for p in pts]
    return np.concatenate([big, np.array(small, np.float32)])


def _render(ctx, screen, window=None, fs=PASS_FS):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx, fs=fs)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[ADD])))
    ctx.clear(pipe.Clear.COLOR0, color=CLEAR)
    if window is not None:
        ctx.set_window_rectangles(*window)
    verts = _scene()
    set_vertices(ctx, verts)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
    ctx.flush()
    return read_rgba8(ctx, rt)


RECTS = [
    pipe.ScissorState(10, 5, 90, 60),
    pipe.ScissorState(50, 40, 160, 120),  # overlaps the first
    pipe.ScissorState(150, 0, 400, 20),  # beyond the framebuffer
    pipe.ScissorState(30, 100, 30, 140),  # empty
]


def _mask(include):
    inside = np.zeros((H, W), bool)
    for r in RECTS:
        inside[r.miny : r.maxy, r.minx : r.maxx] = True
    return inside if include else ~inside


@pytest.mark.parametrize("include", [True, False], ids=["include", "exclude"])
@pytest.mark.parametrize("fs", [PASS_FS, FS_MUL_ONE], ids=["planes", "kernel"])
def test_draws_keep_the_allowed_pixels(screen, ctx, include, fs):
    full = _render(ctx, screen, fs=fs)
    clipped = _render(ctx, screen, (include, RECTS), fs=fs)
    mask = _mask(include)
    assert mask.sum() > 5000 and (~mask).sum() > 5000
    assert np.array_equal(clipped, np.where(mask[..., None], full, 0))


@pytest.mark.parametrize("threaded", [False, True])
def test_draws_of_one_pass_keep_their_own_rectangles(screen, threaded):
    # queued draws run as one pass; each keeps the window rectangles of its
    # call: the scene's draws in thirds, none / include / exclude / none
    ctx = screen.context_create(threaded=threaded)
    try:
        verts = _scene()
        thirds = np.array_split(np.arange(len(verts) // 3), 4)
        windows = [(False, []), (True, RECTS), (False, RECTS), (False, [])]

        def render(with_windows):
            rt, _ = make_target(screen, ctx, W, H)
            bind_passthrough(ctx)
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[ADD])))
            ctx.clear(pipe.Clear.COLOR0, color=CLEAR)
            set_vertices(ctx, verts)
            for part, window in zip(thirds, windows):
                if with_windows:
                    ctx.set_window_rectangles(*window)
                ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=3 * int(part[0]),
                                           count=3 * part.size))  # fmt: skip
            ctx.flush()
            return read_rgba8(ctx, rt)

        got = render(True)
        expect = np.zeros_like(got, np.int32)
        for part, window in zip(thirds, windows):
            # each draw alone, masked by its own window (additive blending)
            ctx.set_window_rectangles(False, [])
            rt, _ = make_target(screen, ctx, W, H)
            bind_passthrough(ctx)
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[ADD])))
            ctx.clear(pipe.Clear.COLOR0, color=CLEAR)
            set_vertices(ctx, verts)
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=3 * int(part[0]),
                                       count=3 * part.size))  # fmt: skip
            ctx.flush()
            alone = read_rgba8(ctx, rt).astype(np.int32)
            mask = np.ones((H, W), bool) if not window[1] else _mask(window[0])
            expect += np.where(mask[..., None], alone, 0)
        # (additions of whole UNORM8 values, saturating)
        assert np.array_equal(got, np.minimum(expect, 255).astype(np.uint8))
    finally:
        ctx.destroy()


def test_clears_ignore_window_rectangles_and_none_excluded_is_everything(screen, ctx):
    rt, _ = make_target(screen, ctx, W, H)
    ctx.set_window_rectangles(True, [pipe.ScissorState(0, 0, 4, 4)])
    ctx.clear(pipe.Clear.COLOR0, color=(1.0, 0.0, 0.0, 1.0))
    ctx.flush()
    assert (read_rgba8(ctx, rt) == (255, 0, 0, 255)).all()
    corner = _render(ctx, screen)  # still clipped to the 4x4 corner
    full = _render(ctx, screen, (False, []))
    assert np.array_equal(corner[:4, :4], full[:4, :4]) and (corner[4:] == 0).all()
    assert (full[4:] != 0).any()
    # include with no rectangles: nothing is drawn
    assert (_render(ctx, screen, (True, [])) == 0).all()


def test_regions_are_disjoint_and_exact():
    rng = np.random.default_rng(3)
    for _ in range(50):
        rects = []
        for _ in range(rng.integers(0, 9)):
            x0, y0 = rng.integers(0, 40, 2)
            rects.append(
                (int(x0), int(y0), int(x0 + rng.integers(0, 20)), int(y0 + rng.integers(0, 20)))
            )
        for include in (True, False):
            got = regions(include, tuple(rects), 37, 29)
            if got is None:
                assert not include and not rects
                continue
            count = np.zeros((29, 37), int)
            for x0, y0, x1, y1 in got:
                assert 0 <= x0 <= x1 < 37 and 0 <= y0 <= y1 < 29
                count[y0 : y1 + 1, x0 : x1 + 1] += 1
            inside = np.zeros((29, 37), bool)
            for x0, y0, x1, y1 in rects:
                inside[y0:y1, x0:x1] = True
            assert np.array_equal(count, (inside if include else ~inside).astype(int))


def test_cap_and_checks(screen, ctx):
    assert screen.get_param(pipe.Cap.MAX_WINDOW_RECTANGLES) == 8
    with pytest.raises(gallium.PipeValueError, match="rects"):
        ctx.set_window_rectangles(True, [pipe.ScissorState()] * 9)
    with pytest.raises(gallium.PipeTypeError, match=r"rects\[0\]"):
        ctx.set_window_rectangles(True, [(0, 0, 1, 1)])
    with pytest.raises(gallium.PipeValueError, match=r"rects\[0\].minx"):
        ctx.set_window_rectangles(True, [pipe.ScissorState(-1, 0, 1, 1)])
    with pytest.raises(gallium.PipeTypeError, match="include"):
        ctx.set_window_rectangles("yes", [])


def test_a_quad_split_between_regions_is_not_drawn_across_the_gap(screen, ctx):
    # the halves of a diamond fall in different regions: the rasterizer must
    # never shade them as one quad (which would paint the gap between)
    diamond = np.array(
        [[0, -0.9, 0, 1, 1, 1, 1, 1], [-0.9, 0, 0, 1, 1, 1, 1, 1], [0, 0.9, 0, 1, 1, 1, 1, 1],
         [0, -0.9, 0, 1, 1, 1, 1, 1], [0, 0.9, 0, 1, 1, 1, 1, 1], [0.9, 0, 0, 1, 1, 1, 1, 1]],
        np.float32,
    )  # fmt: skip
    size = 512  # big halves: the dense paths
    rt, _ = make_target(screen, ctx, size, size)
    bind_passthrough(ctx)
    ctx.clear(pipe.Clear.COLOR0, color=CLEAR)
    rects = [pipe.ScissorState(0, 0, 236, size), pipe.ScissorState(276, 0, size, size)]
    ctx.set_window_rectangles(True, rects)
    set_vertices(ctx, diamond)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    ctx.flush()
    img = read_rgba8(ctx, rt)
    assert (img[:, 236:276] == 0).all()
    assert (img[200:300, 200:236] == 255).all() and (img[200:300, 276:300] == 255).all()


def test_regions_never_share_a_quad(screen, ctx):
    # A trapezoid drawn as (v1, v2, v3), (v0, v1, v3): only the second
    # triangle's box reaches the left strip, so the strip's part is that one
    # triangle and the next region's part starts with the first -- the two
    # share an edge, and shaded as one quad the pair would fill the middle
    # of the second region once more (additive blending shows a pixel drawn
    # twice).  The regions leave out one column only.
    v = [(-0.9, -0.8), (0.9, -0.8), (0.5, 0.8), (-0.5, 0.8)]
    col = [0.25, 0.25, 0.25, 0.25]
    tris = [v[1], v[2], v[3], v[0], v[1], v[3]]
    quad = np.array([[x, y, 0, 1, *col] for x, y in tris], np.float32)
    size = 512

    def render(window):
        rt, _ = make_target(screen, ctx, size, size)
        bind_passthrough(ctx)
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[ADD])))
        ctx.clear(pipe.Clear.COLOR0, color=(0.1, 0.1, 0.1, 0.1))
        ctx.set_window_rectangles(*window)
        set_vertices(ctx, quad)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        ctx.flush()
        return read_rgba8(ctx, rt)

    # regions left and right of column 120 (left of the first triangle's box,
    # NDC -0.5 = column 128; the strip wide enough for the dense paths)
    gap = 120
    split = (True, [pipe.ScissorState(0, 0, gap, size), pipe.ScissorState(gap + 1, 0, size, size)])
    full = render((False, []))
    expect = full.copy()
    expect[:, gap] = 26  # the clear colour, rint(0.1 * 255)
    assert (full[:, gap] != 26).any()
    assert np.array_equal(render(split), expect)
