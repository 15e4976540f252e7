"""Colour clears wait for the band's next write to the target
(ResidentColour.defer_clear): a write that replaces every byte of the band's
rows drops the clear, anything else writes it first, and the band's end (or a
timestamp marker) writes what is still pending.  Every test renders with and
without the deferral and requires the same bytes, and counts the clears'
fills."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import OVER, bind_passthrough, draw_and_read, make_target, read_rgba8

import workers.band as band_mod
import workers.fragment as fragment
import workers.raster as raster
from gallium import pipe


def vertex(x, y, colour):
    return [x, y, 0.5, 1.0, *colour]


# the fill scene's triangle: at 128x128 both clipped halves have the same
# planes, so each 64-row band is one rectangle over every pixel of its rows
FULL = [vertex(-1, -1, (1, 0, 0, 1)), vertex(3, -1, (0, 1, 0, 1)), vertex(-1, 3, (0, 0, 1, 1))]
HALF = [vertex(-1, -1, (1, 0, 0, 1)), vertex(1, -1, (0, 1, 0, 1)), vertex(-1, 1, (0, 0, 1, 1))]
CLEAR = (0.1, 0.2, 0.3, 0.4)
REAL_FILL = fragment.fill_rows


def render(screen, monkeypatch, defer, verts, *, blend=None, colormask=0xF,
           fmt=pipe.Format.R8G8B8A8_UNORM, threaded=False, draws=1):  # fmt: skip
    monkeypatch.setattr(band_mod, "DEFER_CLEARS", defer)
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)
    fills = []

    def spy(raw, packed):
        fills.append(raw.shape[0])
        return REAL_FILL(raw, packed)

    monkeypatch.setattr(fragment, "fill_rows", spy)
    monkeypatch.setattr(band_mod, "fill_rows", spy)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 128, 128, fmt=fmt)
        bind_passthrough(ctx)
        rtb = pipe.RtBlendState(colormask=colormask) if blend is None else blend
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[rtb])))
        ctx.clear(pipe.Clear.COLOR0, color=CLEAR)
        if draws:
            out = draw_and_read(ctx, verts, rt)[0]
        else:
            ctx.flush()
            out = read_rgba8(ctx, rt)
    finally:
        ctx.destroy()
    return out, fills


def both(screen, monkeypatch, verts, **kw):
    deferred, fills = render(screen, monkeypatch, True, verts, **kw)
    plain, plain_fills = render(screen, monkeypatch, False, verts, **kw)
    assert plain_fills == [64, 64]  # one fill per band
    assert deferred.tobytes() == plain.tobytes()
    return deferred, fills


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_full_opaque_pass_drops_the_clear(screen, monkeypatch, threaded):
    out, fills = both(screen, monkeypatch, FULL, threaded=threaded)
    assert fills == []  # neither band wrote the clear
    assert not (out == np.array([26, 51, 76, 102], np.uint8)).all(axis=-1).any()


@pytest.mark.parametrize(
    "fmt", [pipe.Format.R32G32B32A32_FLOAT, pipe.Format.R32G32_FLOAT, pipe.Format.R32_FLOAT]
)
def test_a_full_opaque_pass_drops_a_float_targets_clear(screen, monkeypatch, fmt):
    """Every channel of a float target written: every byte replaced."""
    out, fills = both(screen, monkeypatch, FULL, fmt=fmt)
    assert fills == []
    first = np.frombuffer(out.tobytes(), np.float32)[0]
    assert first == np.float32(1.0) - np.float32(0.5 / 128)  # red at the first pixel centre


def test_a_masked_float_channel_writes_the_clear_first(screen, monkeypatch):
    out, fills = both(screen, monkeypatch, FULL, fmt=pipe.Format.R32G32B32A32_FLOAT, colormask=0x7)
    assert fills == [64, 64]
    assert (np.frombuffer(out.tobytes(), np.float32).reshape(-1, 4)[:, 3] == np.float32(0.4)).all()


CLEARED = [26, 51, 76, 102]  # CLEAR as RGBA8 bytes


@pytest.mark.parametrize(
    "case",
    [
        dict(verts=HALF),  # a part of each band
        dict(verts=FULL, blend=OVER),  # blending reads the cleared bytes
        dict(verts=FULL, colormask=0x7),  # alpha keeps the cleared byte
        dict(verts=FULL, fmt=pipe.Format.B8G8R8X8_UNORM),  # the padding byte stays
        dict(verts=FULL, draws=0),  # nothing else: the band's end writes it
    ],
    ids=["partial", "blend", "colormask", "padding", "no-draw"],
)
def test_anything_else_writes_the_clear_first(screen, monkeypatch, case):
    kind = dict(case)
    out, fills = both(screen, monkeypatch, case.pop("verts"), **case)
    assert fills == [64, 64]
    if kind["verts"] is HALF:
        assert out[64, 122].tolist() == CLEARED  # outside the triangle (x + y > 0)
        assert out[64, 5].tolist() != CLEARED  # inside
    if kind.get("colormask") == 0x7:
        assert (out[..., 3] == 102).all()
    if kind.get("draws") == 0:
        assert (out == CLEARED).all()


@pytest.mark.parametrize("bb", [16, 12, 3, 4])
def test_fill_rows_writes_the_packed_pixel_everywhere_and_nothing_else(bb):
    """fill_rows over rows of a wider surface (a row pitch): pixels of 16 and
    12 bytes take the row-copy path, 3-byte ones too, 4-byte ones the word
    fill; a one-pixel-wide view the broadcast."""
    packed = (np.arange(bb, dtype=np.uint8) * 37 + 5).astype(np.uint8)
    for width in (33, 1):
        surface = np.full((9, 40, bb), 0xEE, np.uint8)
        view = surface[2:7, 3 : 3 + width]
        fragment.fill_rows(view, packed)
        assert (view == packed).all()
        mask = np.ones(surface.shape[:2], bool)
        mask[2:7, 3 : 3 + width] = False
        assert (surface[mask] == 0xEE).all()
