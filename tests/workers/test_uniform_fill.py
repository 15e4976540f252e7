"""A dense, unmasked, unblended write of a pass-through colour to a 4-byte
UNORM8 target stores its uniform channels (an opaque alpha, a colour whose
red is the same at every corner) with one fill of whole words and only the
varying channels byte by byte (fragment._fill_uniform_channels).  The bytes
must be those of the channel-by-channel stores, in any channel order."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, draw_and_read, make_target

import workers.fragment as fragment
import workers.raster as raster
from gallium import pipe


def vertex(x, y, colour):
    return [x, y, 0.5, 1.0, *colour]


def fill_triangle(c0, c1, c2):
    """The bench fill's full-screen triangle with the given corner colours."""
    return [vertex(-1, -1, c0), vertex(3, -1, c1), vertex(-1, 3, c2)]


CASES = {
    # (corner colours, channels the word fill takes)
    "opaque alpha": (((1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1)), {3}),
    "red and alpha": (((0.4, 0, 0, 1), (0.4, 1, 0, 1), (0.4, 0, 1, 1)), {0, 3}),
    "all four": (((0.2, 0.6, 0.8, 0.5),) * 3, {0, 1, 2, 3}),
    "none": (((1, 0, 0, 0), (0, 1, 0, 1), (0, 0, 1, 0.5)), set()),
}
REAL = fragment._fill_uniform_channels
FORMATS = [
    pipe.Format.R8G8B8A8_UNORM,
    pipe.Format.B8G8R8A8_UNORM,
    pipe.Format.A8B8G8R8_UNORM,
    pipe.Format.R8G8B8X8_UNORM,  # padding byte: stored per channel, X kept
]


def render(screen, monkeypatch, fmt, verts, enabled, colormask=0xF):
    taken = []

    def spy(target, idx, color, channels):
        left = REAL(target, idx, color, channels) if enabled else channels
        taken.append(set(channels) - set(left))
        return left

    monkeypatch.setattr(fragment, "_fill_uniform_channels", spy)
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)
    # the channel-by-channel stores (not fragment.store_planes_interleaved)
    monkeypatch.setattr(fragment, "INTERLEAVED_MIN_PIXELS", 1 << 40)
    ctx = screen.context_create()
    try:
        rt, _ = make_target(screen, ctx, 128, 128, fmt=fmt)
        bind_passthrough(ctx)
        blend = pipe.BlendState(rt=[pipe.RtBlendState(colormask=colormask)])
        ctx.bind_blend_state(ctx.create_blend_state(blend))
        ctx.clear(pipe.Clear.COLOR0, color=(0.3, 0.3, 0.3, 0.3))
        out = draw_and_read(ctx, verts, rt)[0]
    finally:
        ctx.destroy()
    return out, taken


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("case", list(CASES))
def test_word_fill_stores_the_channel_stores_bytes(screen, monkeypatch, fmt, case):
    corners, uniform = CASES[case]
    verts = fill_triangle(*corners)
    want, _ = render(screen, monkeypatch, fmt, verts, enabled=False)
    got, taken = render(screen, monkeypatch, fmt, verts, enabled=True)
    assert np.array_equal(got, want)
    if fmt == pipe.Format.R8G8B8X8_UNORM:
        assert taken == []  # three channels written: not every byte of the word
    else:
        # two 64-row bands, each one rectangle
        assert taken == [uniform, uniform], taken
    if case == "opaque alpha" and fmt != pipe.Format.R8G8B8X8_UNORM:
        assert (got[..., 0 if fmt == pipe.Format.A8B8G8R8_UNORM else 3] == 255).all()


def test_masked_channels_keep_their_bytes(screen, monkeypatch):
    """A colormask without every channel stores per channel: the clear's
    bytes stay in the masked channel."""
    verts = fill_triangle(*CASES["opaque alpha"][0])
    got, taken = render(
        screen, monkeypatch, pipe.Format.R8G8B8A8_UNORM, verts, enabled=True, colormask=0x7
    )
    assert taken == []
    assert (got[..., 3] == 76).all()  # 0.3 * 255 = 76.5, to even
    want, _ = render(
        screen, monkeypatch, pipe.Format.R8G8B8A8_UNORM, verts, enabled=False, colormask=0x7
    )
    assert np.array_equal(got, want)
