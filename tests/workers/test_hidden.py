"""Hidden 4x4 tiles of the sparse path (workers.raster._HiddenTiles).

Fragments of a triangle lying wholly behind another triangle of the same
draw that covers the whole tile are never expanded.  Each test renders a
scene of overlapping triangles (few distinct depths, so many exact ties)
with the test on and off and requires the same colour and depth bytes, and
checks whether fragments were dropped.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import PASS_FS, PASS_VS, bind_passthrough, make_target, read_rgba8, set_vertices

import workers.raster as raster
from gallium import pipe

FUNCS = [pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GREATER,
         pipe.CompareFunc.GEQUAL]  # fmt: skip


def triangles(seed: int, n: int, size: float, tie_levels: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, (n, 1, 2))
    off = rng.normal(0, size, (n, 3, 2))
    xy = (c + off).reshape(-1, 2)
    base = rng.integers(0, tie_levels, n) / tie_levels * 1.6 - 0.8
    tilt = np.where(rng.uniform(size=n) < 0.5, 0.0, rng.normal(0, 0.02, n))
    z = (base[:, None] + tilt[:, None] * rng.normal(size=(n, 3))).reshape(-1)
    col = np.repeat(rng.uniform(0, 1, (n, 4)), 3, axis=0)
    return np.concatenate([xy, z[:, None], np.ones((3 * n, 1)), col], 1).astype(np.float32)


def render(verts, func, zs_format=pipe.Format.Z24_UNORM_S8_UINT, threaded=False, workers=2):
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, 160, 128, zs_format=zs_format)
        bind_passthrough(ctx, vs=PASS_VS, fs=PASS_FS)
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=func)
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
        near = func in (pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL)
        ctx.clear(
            pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL,
            color=(0, 0, 0, 1),
            depth=0.95 if near else 0.05,
            stencil=0x5A,
        )
        set_vertices(ctx, verts)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
        ctx.flush()
        return read_rgba8(ctx, rt).tobytes(), read_rgba8(ctx, zs).tobytes()
    finally:
        ctx.destroy()


@pytest.fixture
def dropped(monkeypatch):
    """Counts the fragments the hidden-tile test drops."""
    counts = []
    real = raster._HiddenTiles.visible_segments

    def spy(self, y, xl, xr, tri):
        lo, cnt, span = real(self, y, xl, xr, tri)
        counts.append(int(np.maximum(xr - xl + 1, 0).sum()) - int(cnt.sum()))
        return lo, cnt, span

    monkeypatch.setattr(raster._HiddenTiles, "visible_segments", spy)
    return counts


def both_ways(monkeypatch, verts, func, **kw):
    on = render(verts, func, **kw)
    with monkeypatch.context() as m:
        m.setattr(raster, "_hidden_tiles", lambda *a: None)
        off = render(verts, func, **kw)
    return on, off


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_hidden_tiles_drop_fragments_and_nothing_else(monkeypatch, dropped, func):
    verts = triangles(int(func), 600, 0.09, tie_levels=5)
    on, off = both_ways(monkeypatch, verts, func)
    assert sum(dropped) > 300
    assert on == off  # colour, and depth with the stencil bits kept


@pytest.mark.parametrize(
    "kw",
    [dict(zs_format=pipe.Format.Z16_UNORM), dict(threaded=True), dict(workers=1)],
    ids=["z16", "threaded", "one-worker"],
)
def test_hidden_tiles_formats_and_contexts(monkeypatch, dropped, kw):
    verts = triangles(11, 600, 0.09, tie_levels=4)
    on, off = both_ways(monkeypatch, verts, pipe.CompareFunc.LESS, **kw)
    assert sum(dropped) > 1000
    assert on == off


def test_float_depth_is_not_tested_by_tiles(monkeypatch, dropped):
    verts = triangles(12, 400, 0.09, tie_levels=4)
    on, off = both_ways(monkeypatch, verts, pipe.CompareFunc.LESS, zs_format=pipe.Format.Z32_FLOAT)
    assert dropped == []
    assert on == off


def test_a_big_triangle_in_front_hides_the_small_ones_behind(monkeypatch, dropped):
    # the occluder goes the dense way; the small triangles behind it are dropped
    small = triangles(13, 300, 0.05, tie_levels=3)
    small[:, 2] = np.abs(small[:, 2]) * 0.5 + 0.3  # behind z = 0.2
    big = np.array(
        [[-0.9, -0.9, 0.2, 1, 1, 0, 0, 1], [0.9, -0.9, 0.2, 1, 1, 0, 0, 1],
         [0.0, 0.9, 0.2, 1, 1, 0, 0, 1]], np.float32)  # fmt: skip
    verts = np.concatenate([small, big])
    on, off = both_ways(monkeypatch, verts, pipe.CompareFunc.LESS)
    assert sum(dropped) > 500
    assert on == off


def test_segments_keep_span_order_and_columns():
    """Pieces are cut at tile edges, in span order, left to right; with no
    tile hidden they cover every span exactly."""
    nt = 10
    ht = raster._HiddenTiles(
        np.full(4 * nt, np.iinfo(np.int64).max, np.int64), 0, nt, np.zeros(5, np.int64), True
    )
    y = np.array([0, 5, 9, 3, 14])
    xl = np.array([1, 4, 7, 9, 0])
    xr = np.array([2, 13, 6, 30, 3])  # span 2 is empty
    tri = np.array([0, 1, 2, 3, 4])
    lo, cnt, span = ht.visible_segments(y, xl, xr, tri)
    cols = [list(range(a, a + c)) for a, c in zip(lo.tolist(), cnt.tolist())]
    assert span.tolist() == [0, 1, 1, 1, 3, 3, 3, 3, 3, 3, 4]
    assert cols[:4] == [[1, 2], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13]]
    assert [c for piece in cols[4:10] for c in piece] == list(range(9, 31))
    # hide tile (row 1, column 2) for triangle 1: columns 8-11 of row 5 go
    ht.thr[1 * nt + 2] = -1
    lo, cnt, span = ht.visible_segments(y, xl, xr, tri)
    assert [(a, c) for a, c, s in zip(lo, cnt, span) if s == 1] == [(4, 4), (12, 2)]


def test_covered_tiles_equal_brute_force_coverage(monkeypatch):
    """Every tile bound equals the minimum over the triangles covering all 16
    of its pixels (edge functions and bounding box, pixel by pixel)."""
    checked = []
    real = raster._hidden_tiles

    def spy(scene, state, ts, ids, y0, y1):
        ht = real(scene, state, ts, ids, y0, y1)
        _, zmax = raster._depth_bounds(scene, state, ts)
        want = np.full(ht.thr.size, np.iinfo(np.int64).max, np.int64)
        ys, xs = np.mgrid[y0:y1, 0 : scene.width]
        for t in ids.tolist():
            x0, ty0, x1, ty1 = (int(v) for v in ts.bbox[t])
            inside = (xs >= x0) & (xs <= x1) & (ys >= ty0) & (ys <= ty1)
            for i in range(3):
                e = ts.c[t, i] - (ts.dcdx[t, i] << 8) * xs + (ts.dcdy[t, i] << 8) * ys
                inside &= e > 0
            h, w = inside.shape  # whole tiles: 64-row bands, 160 columns
            tiles = np.flatnonzero(inside.reshape(h // 4, 4, w // 4, 4).all(axis=(1, 3)))
            want[tiles] = np.minimum(want[tiles], zmax[t])
        assert np.array_equal(ht.thr, want)
        checked.append(int((want != np.iinfo(np.int64).max).sum()))
        return ht

    monkeypatch.setattr(raster, "_hidden_tiles", spy)
    render(triangles(14, 300, 0.2, tie_levels=4), pipe.CompareFunc.LESS)
    assert len(checked) >= 2 and sum(checked) > 500


def test_spans_kept_or_made_per_batch_give_the_same_bytes(monkeypatch, dropped):
    """The row spans made for the tiles are kept for the batches up to
    KEEP_SPANS pairs; past it, tiles are found chunk by chunk and the
    batches make their own spans."""
    verts = triangles(15, 600, 0.09, tie_levels=5)
    made = []
    row_spans = raster._row_spans
    monkeypatch.setattr(raster, "_row_spans", lambda *a: made.append(1) or row_spans(*a))
    monkeypatch.setattr(raster, "SPARSE_PLANE_PIXELS", 3000)  # several batches
    kept = render(verts, pipe.CompareFunc.LEQUAL)
    kept_calls, kept_dropped = len(made), sum(dropped)
    made.clear()
    dropped.clear()
    monkeypatch.setattr(raster, "KEEP_SPANS", 40)
    chunked = render(verts, pipe.CompareFunc.LEQUAL)
    assert kept == chunked
    assert sum(dropped) == kept_dropped > 300
    assert kept_calls == 2  # one per band (64-row bands of 128 rows)
    assert len(made) > 2 * kept_calls
