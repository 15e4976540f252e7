"""Dense rectangles shade at most SHADE_LANES lanes per kernel call
(workers.raster._dense_rect): the rectangle's lane rows are cut at even rows,
so every 2x2 quad -- and every derivative -- is the one a single call sees.
Each test renders with tiny chunks and with one call per rectangle and
requires the same bytes (colour and depth) and the number of kernel calls."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS, bind_depth_test, bind_passthrough, draw_and_read, make_target

import workers.raster as raster
from gallium import pipe

# colour from the input and its screen-space derivatives; pixels whose red
# derivative term is above a threshold are killed (a per-pixel KILL_IF)
FS_DERIV_KILL = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0..2]
IMM[0] FLT32 {64.0, 48.0, 0.5, 0.97}
  0: DDX TEMP[0], IN[0]
  1: DDY TEMP[1], IN[0]
  2: MUL TEMP[0], TEMP[0], IMM[0].xxxx
  3: MAD TEMP[2], TEMP[1], IMM[0].yyyy, TEMP[0]
  4: MAD OUT[0], IN[0], IMM[0].zzzz, TEMP[2]
  5: SLT TEMP[1].x, IMM[0].wwww, IN[0].xxxx
  6: KILL_IF -TEMP[1].xxxx
  7: END
"""


def vertex(x, y, z, colour):
    return [x, y, z, 1.0, *colour]


# the fill scene's triangle, clipped into two halves whose float32 planes are
# bit-identical at 128x128: each band is one rectangle without edges
FULL = [
    vertex(-1.0, -1.0, 0.25, (1, 0, 0, 1)),
    vertex(3.0, -1.0, 0.5, (0, 1, 0, 1)),
    vertex(-1.0, 3.0, 0.75, (0, 0, 1, 1)),
]
OVERLAP = [  # three crossing triangles at different depths, edges everywhere
    vertex(-0.9, -0.8, 0.7, (0.9, 0.1, 0.2, 1.0)),
    vertex(0.95, -0.3, 0.1, (0.1, 0.8, 0.2, 1.0)),
    vertex(-0.2, 0.9, 0.4, (0.3, 0.3, 0.9, 1.0)),
    vertex(0.8, 0.85, 0.2, (0.6, 0.0, 0.6, 1.0)),
    vertex(-0.85, 0.1, 0.6, (0.2, 0.7, 0.7, 1.0)),
    vertex(0.3, -0.95, 0.3, (0.9, 0.9, 0.1, 1.0)),
    vertex(-1, -1, 0.9, (0.0, 0.5, 0.5, 1.0)),
    vertex(1, -1, 0.9, (0.5, 0.5, 0.0, 1.0)),
    vertex(1, 1, 0.9, (0.5, 0.0, 0.5, 1.0)),
]


def render(screen, monkeypatch, verts, lanes, *, w, h, threaded=False):
    monkeypatch.setattr(raster, "SHADE_LANES", lanes)
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)  # small targets shade dense rectangles
    calls = {"shade": 0}
    real = raster._shade

    def spy(*args, **kwargs):
        calls["shade"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(raster, "_shade", spy)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, w, h, zs_format=pipe.Format.Z32_FLOAT)
        bind_passthrough(ctx, vs=PASS_VS, fs=FS_DERIV_KILL)
        bind_depth_test(ctx)
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.1, 0.2, 0.3, 0.4), depth=1.0)
        out = draw_and_read(ctx, verts, rt, zs)
    finally:
        ctx.destroy()
    return out, calls["shade"]


def test_a_full_rectangle_in_chunks_of_four_rows(screen, monkeypatch):
    # 128x128: two bands of 64 rows, one rectangle each; 4 lane rows a call:
    # 16 calls per band instead of one
    whole, n_whole = render(screen, monkeypatch, FULL, 1 << 18, w=128, h=128)
    cut, n_cut = render(screen, monkeypatch, FULL, 128 * 4, w=128, h=128)
    assert (n_whole, n_cut) == (2, 32)
    for a, b in zip(whole, cut):
        assert a.tobytes() == b.tobytes()
    killed = (whole[0] == [26, 51, 76, 102]).all(axis=-1)  # the clear colour
    assert 0 < killed.sum() < killed.size  # some pixels killed, not all


@pytest.mark.parametrize("lanes", [2, 97 * 2, 97 * 6 + 5], ids=["two-rows", "rows", "odd"])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_crossing_triangles_in_chunks(screen, monkeypatch, lanes, threaded):
    # odd sizes: rectangles start and end on odd rows and columns
    whole, n_whole = render(screen, monkeypatch, OVERLAP, 1 << 18, w=97, h=75, threaded=threaded)
    cut, n_cut = render(screen, monkeypatch, OVERLAP, lanes, w=97, h=75, threaded=threaded)
    assert n_cut > n_whole
    for a, b in zip(whole, cut):
        assert a.tobytes() == b.tobytes()
    depth = np.ascontiguousarray(whole[1]).view(np.float32)
    assert (depth < 1.0).any() and (depth == 1.0).any()
