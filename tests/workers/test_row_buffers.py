"""numpy's ufunc buffer size while a worker computes over a wide rectangle
(``workers.raster._RowBuffers``): set to ROW_BUFFER for rectangles at least
ROW_BUFFER_MIN_WIDTH pixels wide, left alone for narrower ones, restored
afterwards (also after an exception), and never changing a byte of output."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import OVER, bind_passthrough, draw_and_read, make_target

import workers.fragment as fragment
import workers.raster as raster
from gallium import pipe


def vertex(x, y, colour):
    return [x, y, 0.5, 1.0, *colour]


FULL = [vertex(-1, -1, (1, 0, 0, 1)), vertex(3, -1, (0, 1, 0, 1)), vertex(-1, 3, (0, 0, 1, 1))]


def quad(x0, y0, x1, y1, colours):
    a, b, c, d = (vertex(x, y, col) for (x, y), col in zip(
        [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], colours))  # fmt: skip
    return [a, b, c, a, c, d]


# two layers of quads with four different corner colours (split along the
# diagonal: mixed columns) over an opaque wide triangle, blended OVER
CORNERS_A = [(0.2, 0.4, 0.6, 0.5), (0.9, 0.1, 0.3, 0.5), (0.1, 0.8, 0.2, 0.5), (0.7, 0.7, 0.1, 0.5)]
CORNERS_B = [(0.5, 0.5, 0.5, 0.3), (0.0, 1.0, 0.2, 0.6), (1.0, 0.0, 0.9, 0.4), (0.3, 0.6, 0.9, 0.7)]
LAYERS = FULL + quad(-1, -1, 1, 1, CORNERS_A) + quad(-0.8, -0.9, 0.6, 0.7, CORNERS_B)


def test_the_context_sets_and_restores_the_buffer_size():
    before = np.getbufsize()
    try:
        np.setbufsize(4096)
        with raster._RowBuffers(raster.ROW_BUFFER_MIN_WIDTH):
            assert np.getbufsize() == raster.ROW_BUFFER
        assert np.getbufsize() == 4096
        with raster._RowBuffers(raster.ROW_BUFFER_MIN_WIDTH - 1):
            assert np.getbufsize() == 4096  # narrow: unchanged
        assert np.getbufsize() == 4096
        with pytest.raises(RuntimeError), raster._RowBuffers(2048):
            assert np.getbufsize() == raster.ROW_BUFFER
            raise RuntimeError("inside")
        assert np.getbufsize() == 4096
    finally:
        np.setbufsize(before)


def render(screen, w, h, verts, *, blend=None, threaded=False):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, w, h)
        bind_passthrough(ctx)
        if blend is not None:
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[blend])))
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        return draw_and_read(ctx, verts, rt)[0]
    finally:
        ctx.destroy()


@pytest.mark.parametrize("width, expected", [(512, "row"), (256, "default")])
def test_wide_rectangles_store_with_row_buffers(screen, monkeypatch, width, expected):
    seen = []
    real = fragment.PlaneColour.store_unorm8

    def spy(self, c, out):
        seen.append(np.getbufsize())
        return real(self, c, out)

    monkeypatch.setattr(fragment.PlaneColour, "store_unorm8", spy)
    # the channel-by-channel stores (not fragment.store_planes_interleaved)
    monkeypatch.setattr(fragment, "INTERLEAVED_MIN_PIXELS", 1 << 40)
    render(screen, width, 128, FULL)
    # two bands, each one rectangle as wide as the target: R, G and B
    # stored per band (the alpha, one value, goes in with a word fill:
    # fragment._fill_uniform_channels)
    want = raster.ROW_BUFFER if expected == "row" else 8192
    assert seen == [want] * 6
    assert np.getbufsize() == 8192  # the calling thread's is untouched


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("scene", ["fill", "layers"])
def test_row_buffers_change_no_byte(screen, monkeypatch, threaded, scene):
    verts, blend = (FULL, None) if scene == "fill" else (LAYERS, OVER)
    with_rows = render(screen, 640, 192, verts, blend=blend, threaded=threaded)
    monkeypatch.setattr(raster, "ROW_BUFFER_MIN_WIDTH", 1 << 30)
    without = render(screen, 640, 192, verts, blend=blend, threaded=threaded)
    assert with_rows.tobytes() == without.tobytes()
    # not vacuous: the frame has many distinct colours, no pixel left black
    assert len(np.unique(with_rows.reshape(-1, 4), axis=0)) > 1000
    assert not (with_rows[..., :3] == 0).all(axis=-1).any()
