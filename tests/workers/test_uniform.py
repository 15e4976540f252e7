"""Channels a plane colour stores as one UNORM8 value over a rectangle
(fragment.PlaneColour.uniform8) and the blend source built on them (Src8)."""

from __future__ import annotations

import numpy as np
import pytest

from gallium import pipe
from workers.fragment import MixedPlaneColour, PlaneColour, Src8, blend_unorm8

F32 = np.float32


def reference(pc):
    """Every pixel's UNORM8 values the long way (clamped float sums, truncated)."""
    return np.stack([pc.unorm8_scaled(c).astype(np.uint16) for c in range(4)])


def plane(a0, dadx, dady, w=37, h=23, x0=5, y0=3):
    """A PlaneColour whose four channels have the given (a0, dadx, dady)."""
    coef = np.array([a0, dadx, dady], F32)  # (3, 4)
    return PlaneColour(coef, np.arange(x0, x0 + w), np.arange(y0, y0 + h))


CASES = [
    # constant; varying but inside one UNORM8 step; varying across steps; clamped high
    ((0.5, 100.4 / 255, 0.2, 2.0), (0.0, 0.0005 / 255, 0.0, 0.0), (0.0, 0.0005 / 255, 1.0, 0.0)),
    # clamped low and high from both sides; a slope of exactly zero in one axis
    ((-3.0, 0.25, 1.5, 1.0), (0.0, 0.0, -0.001, 0.0), (0.0, 0.0, 0.0, 0.0)),
]


@pytest.mark.parametrize("a0, dadx, dady", CASES)
def test_uniform_channels_match_every_pixel(a0, dadx, dady):
    pc = plane(a0, dadx, dady)
    stack = reference(pc)
    assert np.array_equal(pc.unorm8_stack(), stack)  # uniform channels stored as fills
    got = pc.uniform8()
    for c in range(4):
        values = np.unique(stack[c])
        want = int(values[0]) if values.size == 1 else None
        assert got[c] == want, (c, values[:5])


def test_uniform_examples_exact():
    pc = plane((0.5, 100.4 / 255, 0.2, 2.0), (0.0, 0.0005 / 255, 0.0, 0.0), (0.0, 0.0, 0.01, 0.0))
    # 0.5 -> 128; 100.4 + up to ~0.02 -> 100; 0.2 + 0.01 * (3..25) -> 58..115; 2.0 -> 255
    assert pc.uniform8() == (128, 100, None, 255)


def test_non_finite_corners_are_never_uniform():
    for bad in (np.nan, np.inf, -np.inf):
        pc = plane((bad, 0.5, 0.5, 0.5), (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0))
        assert pc.uniform8() == (None, 128, 128, 128)


def test_mixed_is_uniform_only_where_both_agree():
    a = plane((0.5, 0.5, 0.25, 0.75), (0.0,) * 4, (0.0,) * 4)
    b = plane((0.5, 0.25, 0.25, 0.75), (0.0,) * 4, (0.0,) * 4)
    sel = np.tri(23, 37, dtype=bool)
    mixed = MixedPlaneColour(a, b, sel)
    assert mixed.uniform8() == (128, None, 64, 191)
    want = np.where(sel, reference(a), reference(b))
    assert np.array_equal(mixed.unorm8_stack(), want)


def test_src8_gives_the_stack_values_or_their_constants():
    pc = plane((0.3, 0.1, 0.2, 0.6), (0.01, 0.0, 0.02, 0.0), (0.02, 0.0, 0.0, 0.0))
    stack = reference(pc)
    src = Src8(pc, pc.uniform8())
    assert src.uniform == (None, 26, None, 153)
    rgb = src[slice(0, 3)]
    assert rgb.shape == stack[0:3].shape and np.array_equal(rgb, stack[0:3])
    alpha = src[slice(3, 4)]
    assert alpha.shape == (1, 1, 1) and int(alpha[0, 0, 0]) == 153


@pytest.mark.parametrize(
    "sf, df",
    [
        (pipe.BlendFactor.SRC_ALPHA, pipe.BlendFactor.INV_SRC_ALPHA),
        (pipe.BlendFactor.DST_ALPHA, pipe.BlendFactor.ONE),
        (pipe.BlendFactor.SRC_COLOR, pipe.BlendFactor.INV_DST_COLOR),
        (pipe.BlendFactor.SRC_ALPHA_SATURATE, pipe.BlendFactor.ONE),
        (pipe.BlendFactor.ONE, pipe.BlendFactor.ZERO),
    ],
)
@pytest.mark.parametrize("in_place", [False, True])
def test_blend_with_uniform_source_and_in_place_output(sf, df, in_place):
    """The same bytes as the full uint16 stacks, also when writing into dst."""
    rng = np.random.default_rng(int(sf) * 31 + int(df))
    pc = plane((0.3, 0.1, 0.2, 0.6), (0.01, 0.0, 0.02, 0.0), (0.02, 0.0, 0.0, 0.0))
    rt = pipe.RtBlendState(
        blend_enable=True,
        rgb_func=pipe.BlendFunc.ADD,
        rgb_src_factor=sf,
        rgb_dst_factor=df,
        alpha_func=pipe.BlendFunc.ADD,
        alpha_src_factor=pipe.BlendFactor.ONE,
        alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
    )
    dst = rng.integers(0, 256, pc.shape).astype(np.uint16)
    want = blend_unorm8(rt, reference(pc), dst.copy(), (0, 0, 0, 0), None)
    d = dst.copy()
    src = Src8(pc, pc.uniform8())
    got = blend_unorm8(rt, src, d, (0, 0, 0, 0), None, out=d if in_place else None)
    assert np.array_equal(got, want)
    if in_place:
        assert got is d


def test_mixed_columns_in_runs_store_each_pixels_own_planes():
    """A rectangle in runs of columns (one triangle's, crossed, the other's)
    stores what the fully mixed rectangle stores; the runs' own clamp tests
    differ from the whole rectangle's (a's plane leaves [0, 1] on b's side)."""
    h, w = 19, 40
    a = plane((0.2, 0.5, 0.9, 0.5), (0.03, 0.0, -0.02, 0.0), (0.001, 0.0, 0.0, 0.0), w=w, h=h)
    b = plane((0.8, 0.5, 0.1, 0.25), (-0.01, 0.0, 0.01, 0.0), (0.002, 0.0, 0.0, 0.0), w=w, h=h)
    x = np.arange(w)[None, :]
    y = np.arange(h)[:, None]
    sel = x < 12 + y  # a on the left, b on the right, the edge crossing columns 12..30
    parts = [(0, 12, 0), (12, 31, 2), (31, w, 1)]
    assert sel[:, :12].all() and not sel[:, 31:].any()
    want = np.where(sel, reference(a), reference(b))
    whole = MixedPlaneColour(a, b, sel)
    runs = MixedPlaneColour(a, b, sel, parts)
    assert np.array_equal(whole.unorm8_stack(), want)
    assert np.array_equal(runs.unorm8_stack(), want)
    # alpha: 128 on a's side, 64 on b's: not uniform as a whole
    assert runs.uniform8()[3] is None
    # a's plane clamps somewhere over the whole rectangle but not over its own columns
    assert not a._scaled_lines()[2][0] and a.col_slice(0, 12)._scaled_lines()[2][0]
