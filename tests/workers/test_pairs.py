"""Two triangles that shade as one quad (workers.raster._pair / _dense_pair).

Two triangles sharing an edge whose union is convex are shaded together: the
columns of their union's interior either side of the shared edge without
masks, and -- for pass-through shaders -- the columns the edge crosses once,
each pixel with its own triangle's planes (_dense_mixed).  When both have the
same planes (the halves of a clipped full-screen triangle, an affine quad)
the whole interior is one rectangle.  Every test here renders with the pair
paths and with them switched off and requires the same bytes (colour and
depth), and checks which path ran.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    ADD,
    FS_MUL_ONE,
    OVER,
    PASS_FS,
    PASS_VS,
    bind_depth_test,
    bind_passthrough,
    draw_and_read,
    make_target,
)

import workers.raster as raster
from gallium import pipe
from gallium.numpipe.scene import band_height


def vertex(x, y, z, colour):
    return [x, y, z, 1.0, *colour]


def render(screen, verts, *, w, h, fs=PASS_FS, blend=None, depth=False, scissor=None,
           fmt=pipe.Format.R8G8B8A8_UNORM, threaded=False):  # fmt: skip
    ctx = screen.context_create(threaded=threaded)
    try:
        zs_fmt = pipe.Format.Z32_FLOAT if depth else None
        rt, zs = make_target(screen, ctx, w, h, fmt=fmt, zs_format=zs_fmt)
        bind_passthrough(ctx, vs=PASS_VS, fs=fs)
        if blend is not None:
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[blend])))
        if depth:
            bind_depth_test(ctx)
        if scissor is not None:
            ctx.bind_rasterizer_state(
                ctx.create_rasterizer_state(pipe.RasterizerState(scissor=True))
            )
            ctx.set_scissor_states(0, [pipe.ScissorState(*scissor)])
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.1, 0.2, 0.3, 0.4), depth=1.0)
        return draw_and_read(ctx, verts, rt, zs)
    finally:
        ctx.destroy()


@pytest.fixture
def counted(monkeypatch):
    """Counts _dense_pair and _dense_mixed calls; everything is dense so small
    targets exercise them."""
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)
    calls = {"pair": 0, "mixed": 0}
    real_pair, real_mixed = raster._dense_pair, raster._dense_mixed

    def spy_pair(*args):
        calls["pair"] += 1
        return real_pair(*args)

    def spy_mixed(*args):
        calls["mixed"] += 1
        return real_mixed(*args)

    monkeypatch.setattr(raster, "_dense_pair", spy_pair)
    monkeypatch.setattr(raster, "_dense_mixed", spy_mixed)
    return calls


def both_ways(screen, monkeypatch, calls, verts, **kw):
    """(bytes with pairs, bytes without, pair calls, mixed calls)."""
    merged = render(screen, verts, **kw)
    used = dict(calls)
    with monkeypatch.context() as m:
        m.setattr(raster, "_pair", lambda ts, t: None)
        apart = render(screen, verts, **kw)
    return merged, apart, used["pair"], used["mixed"]


# the fill scene's triangle: clipped into two halves.  With these values and
# these framebuffer sizes float32 set-up gives both halves bit-identical planes.
BIG = [
    vertex(-1.0, -1.0, 0.25, (1, 0, 0, 1)),
    vertex(3.0, -1.0, 0.5, (0, 1, 0, 1)),
    vertex(-1.0, 3.0, 0.75, (0, 0, 1, 1)),
]
# Other alphas (and other sizes) give planes a few ulps apart: two triangles.
BIG_ULPS = [
    vertex(-1.0, -1.0, 0.2, (1, 0, 0, 0.5)),
    vertex(3.0, -1.0, 0.6, (0, 1, 0, 0.7)),
    vertex(-1.0, 3.0, 0.9, (0, 0, 1, 0.3)),
]


@pytest.mark.parametrize(
    "kw",
    [
        dict(w=128, h=128),
        dict(w=256, h=256, fs=FS_MUL_ONE),
        dict(w=128, h=128, blend=OVER, depth=True),
        dict(w=64, h=70, depth=True, fs=FS_MUL_ONE),
        dict(w=128, h=128, scissor=(7, 5, 120, 90)),
        dict(w=64, h=70, fmt=pipe.Format.R32G32B32A32_FLOAT, fs=FS_MUL_ONE),
        dict(w=256, h=256, threaded=True, blend=OVER),
    ],
    ids=["plain", "kernel-2bands", "blend-depth", "kernel-depth", "scissor", "float32", "tc"],
)
def test_halves_with_the_same_planes_are_one_rectangle(screen, monkeypatch, counted, kw):
    merged, apart, used, mixed = both_ways(screen, monkeypatch, counted, BIG, **kw)
    bands = -(-kw["h"] // band_height(kw["w"], kw["h"]))
    assert (used, mixed) == (bands, 0)  # one pair per band, nothing mixed
    for a, b in zip(merged, apart):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    "verts,kw",
    [
        (BIG_ULPS, dict(w=128, h=128, depth=True)),
        (BIG, dict(w=130, h=98, depth=True)),
        (BIG_ULPS, dict(w=200, h=150, blend=OVER, depth=True)),
        (BIG_ULPS, dict(w=200, h=150, fmt=pipe.Format.R32G32B32A32_FLOAT, blend=OVER)),
        (BIG_ULPS, dict(w=131, h=97, scissor=(7, 5, 120, 90), threaded=True)),
    ],
    ids=["other-values", "other-size", "blend", "float32-blend", "scissor-tc"],
)
def test_halves_with_unequal_planes_mix_along_the_edge(screen, monkeypatch, counted, verts, kw):
    merged, apart, used, mixed = both_ways(screen, monkeypatch, counted, verts, **kw)
    bands = -(-kw["h"] // band_height(kw["w"], kw["h"]))
    assert used == bands
    assert mixed >= 1
    for a, b in zip(merged, apart):
        assert a.tobytes() == b.tobytes()


def test_a_kernel_shader_with_unequal_planes_keeps_two_triangles(screen, monkeypatch, counted):
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, BIG_ULPS, w=128, h=128, fs=FS_MUL_ONE, depth=True
    )
    assert (used, mixed) == (0, 0)
    for a, b in zip(merged, apart):
        assert a.tobytes() == b.tobytes()


def test_a_quad_is_shaded_once_per_pixel(screen, monkeypatch, counted):
    # additive blending: a pixel shaded twice would read 2x, a missed one the clear
    c = (10 / 255, 20 / 255, 30 / 255, 40 / 255)
    v = [vertex(-1, -1, 0.5, c), vertex(1, -1, 0.5, c), vertex(-1, 1, 0.5, c), vertex(1, 1, 0.5, c)]
    quad = [v[0], v[1], v[2], v[2], v[1], v[3]]
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, quad, w=150, h=110, blend=ADD
    )
    assert (used, mixed) == (2, 0)
    clear = np.array([26, 51, 76, 102], np.uint8)  # (0.1, 0.2, 0.3, 0.4) in UNORM8
    expect = np.broadcast_to(clear + np.array([10, 20, 30, 40], np.uint8), (110, 150, 4))
    assert np.array_equal(merged[0], expect)
    assert np.array_equal(apart[0], expect)


def test_a_tilted_affine_quad(screen, monkeypatch, counted):
    # colour and depth affine in x, y: both triangles get the same planes here
    def at(x, y):
        return vertex(x, y, 0.5 + x / 4 - y / 8, (0.5 + x / 4, 0.5 - y / 4, 0.25, 1.0))

    pts = [at(-0.5, -1.0), at(1.0, -0.5), at(-1.0, 0.5), at(0.5, 1.0)]  # a tilted square
    quad = [pts[0], pts[1], pts[2], pts[2], pts[1], pts[3]]
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, quad, w=128, h=128, depth=True
    )
    assert (used, mixed) == (2, 0)  # both 64-row bands
    assert merged[0].tobytes() == apart[0].tobytes()
    assert merged[1].tobytes() == apart[1].tobytes()


CORNERS = [
    vertex(-1, -1, 0.3, (1, 0, 0, 1)),
    vertex(1, -1, 0.6, (0, 1, 0, 0.5)),
    vertex(-1, 1, 0.2, (0, 0, 1, 0.25)),
    vertex(1, 1, 0.9, (1, 1, 1, 0.75)),
]


@pytest.mark.parametrize(
    "order",
    [(0, 1, 2, 2, 1, 3), (0, 1, 3, 0, 3, 2), (3, 2, 1, 1, 2, 0), (2, 0, 3, 3, 0, 1)],
    ids=["diag-up", "diag-down", "diag-up-reversed", "diag-down-rotated"],
)
def test_a_quad_with_corner_colours_mixes_either_diagonal(screen, monkeypatch, counted, order):
    # not affine: each triangle has its own planes (colour and depth)
    quad = [CORNERS[i] for i in order]
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, quad, w=160, h=140, blend=OVER, depth=True
    )
    assert used == 3 and mixed >= 3
    for a, b in zip(merged, apart):
        assert a.tobytes() == b.tobytes()


def test_a_horizontal_shared_edge_splits_rows(screen, monkeypatch, counted):
    # a kite whose shared edge p-q is horizontal (at NDC y 0.1: inside a band)
    p = vertex(-0.95, 0.1, 0.5, (1, 0, 0, 1))
    q = vertex(0.95, 0.1, 0.5, (0, 1, 0, 1))
    a = vertex(0.1, -0.95, 0.25, (0, 0, 1, 1))
    b = vertex(-0.1, 0.95, 0.75, (1, 1, 0, 1))
    kite = [a, q, p, p, q, b]
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, kite, w=200, h=128, depth=True
    )
    # band 0 (rows 0-63) holds the lower triangle only; band 1 both: its rows
    # either side of the edge (row 70) go to one triangle each, no mixed columns
    assert (used, mixed) == (1, 0)
    for x, y in zip(merged, apart):
        assert x.tobytes() == y.tobytes()


def test_a_non_convex_pair_is_two_triangles(screen, monkeypatch, counted):
    # a dart: shared edge p-q, both other vertices below p; equal (constant) planes
    c = (0.2, 0.4, 0.6, 0.8)
    p, q = vertex(0.0, -0.6, 0.5, c), vertex(0.0, 0.9, 0.5, c)
    a, b = vertex(-0.9, -0.9, 0.5, c), vertex(0.9, -0.9, 0.5, c)
    dart = [a, p, q, q, p, b]
    merged, apart, used, mixed = both_ways(
        screen, monkeypatch, counted, dart, w=120, h=100, blend=ADD
    )
    assert (used, mixed) == (0, 0)
    assert merged[0].tobytes() == apart[0].tobytes()
    # the notch between a, p and b (NDC y -0.75 at x 0) is not drawn; inside, once
    assert np.array_equal(merged[0][12, 60], [26, 51, 76, 102])
    assert np.array_equal(merged[0][40, 45], [26 + 51, 51 + 102, 76 + 153, 255])


def test_planes_same_rules():
    p = np.array([[0.5, 1.0], [0.0, -2.0], [0.25, 0.0]], np.float32)
    q = p.copy()
    q[1, 0] = -0.0  # a zero slope's sign cannot change a sum whose constant is not -0
    q[2, 1] = -0.0
    assert raster._planes_same(p, q)
    r = p.copy()
    r[0, 1] = 1.0000001
    assert not raster._planes_same(p, r)
    z = np.zeros((3, 2), np.float32)
    nz = z.copy()
    nz[0, 0] = -0.0  # (-0 + -0*x) is -0, (-0 + 0*x) is +0
    assert not raster._planes_same(nz, nz.copy())
    nan = p.copy()
    nan[0, 0] = np.nan
    assert not raster._planes_same(nan, nan.copy())
    # a (3,) plane (depth, 1/w): the same rules on its one constant term
    z1 = np.array([0.5, 0.0, -0.0], np.float32)
    assert raster._planes_same(z1, np.array([0.5, -0.0, 0.0], np.float32))
    assert not raster._planes_same(z1, np.array([0.5, 0.0, 1e-30], np.float32))
    assert not raster._planes_same(
        np.array([-0.0, 1, 2], np.float32), np.array([-0.0, 1, 2], np.float32)
    )
    assert raster._planes_same(np.array([0.0, 1, 2], np.float32), np.array([0.0, 1, 2], np.float32))
    assert not raster._planes_same(
        np.array([np.nan, 1, 2], np.float32), np.array([np.nan, 1, 2], np.float32)
    )
