"""The exact 8-bit blend skips its saturation only where the sum cannot exceed 255."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gallium import pipe
from workers.fragment import blend_unorm8

F = pipe.BlendFactor


def _mul8(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = a.astype(np.int64) * b
    return (t + (t >> 8) + 128) >> 8


def _factor(f, src, dst, const, ch):
    """Reference factor per channel, 0..255 (int64)."""
    a3 = slice(3, 4)
    table = {
        F.ONE: np.full_like(src[ch], 255),
        F.ZERO: np.zeros_like(src[ch]),
        F.SRC_COLOR: src[ch],
        F.INV_SRC_COLOR: 255 - src[ch],
        F.SRC_ALPHA: np.broadcast_to(src[a3], src[ch].shape),
        F.INV_SRC_ALPHA: np.broadcast_to(255 - src[a3], src[ch].shape),
        F.DST_COLOR: dst[ch],
        F.INV_DST_COLOR: 255 - dst[ch],
        F.DST_ALPHA: np.broadcast_to(dst[a3], src[ch].shape),
        F.INV_DST_ALPHA: np.broadcast_to(255 - dst[a3], src[ch].shape),
        F.CONST_COLOR: np.broadcast_to(const[ch], src[ch].shape),
        F.INV_CONST_COLOR: np.broadcast_to(255 - const[ch], src[ch].shape),
        F.CONST_ALPHA: np.broadcast_to(const[a3], src[ch].shape),
        F.INV_CONST_ALPHA: np.broadcast_to(255 - const[a3], src[ch].shape),
    }
    return table[f].astype(np.int64)


FACTORS = [
    F.ONE, F.ZERO, F.SRC_COLOR, F.INV_SRC_COLOR, F.SRC_ALPHA, F.INV_SRC_ALPHA, F.DST_COLOR,
    F.INV_DST_COLOR, F.DST_ALPHA, F.INV_DST_ALPHA, F.CONST_COLOR, F.INV_CONST_COLOR,
    F.CONST_ALPHA, F.INV_CONST_ALPHA,
]  # fmt: skip


@pytest.mark.parametrize("alpha", [F.ONE, F.INV_SRC_ALPHA, F.SRC_ALPHA], ids=lambda f: f.name)
def test_every_factor_pair_matches_the_saturating_reference(alpha):
    rng = np.random.default_rng(int(alpha))
    n = 4096
    src = rng.integers(0, 256, (4, n)).astype(np.uint16)
    dst = rng.integers(0, 256, (4, n)).astype(np.uint8)
    src[:, :256] = 255  # the extremes, where a missing saturation would show
    dst[:, :256] = 255
    const = (0.2, 0.6, 0.4, 0.8)
    c8 = np.array([51, 153, 102, 204], np.int64)[:, None]  # 255 * const, exact
    for sf, df in itertools.product(FACTORS, FACTORS):
        rt = pipe.RtBlendState(
            blend_enable=True,
            rgb_func=pipe.BlendFunc.ADD,
            rgb_src_factor=sf,
            rgb_dst_factor=df,
            alpha_func=pipe.BlendFunc.ADD,
            alpha_src_factor=alpha,
            alpha_dst_factor=F.INV_SRC_ALPHA,
        )
        got = blend_unorm8(rt, src, dst, const, None)
        want = np.empty((4, n), np.int64)
        s64, d64 = src.astype(np.int64), dst.astype(np.int64)
        rgb = slice(0, 3)
        want[rgb] = _mul8(s64[rgb], _factor(sf, s64, d64, c8, rgb)) + _mul8(
            d64[rgb], _factor(df, s64, d64, c8, rgb)
        )
        a = slice(3, 4)
        want[a] = _mul8(s64[a], _factor(alpha, s64, d64, c8, a)) + _mul8(
            d64[a], _factor(F.INV_SRC_ALPHA, s64, d64, c8, a)
        )
        np.minimum(want, 255, out=want)
        assert np.array_equal(got, want), (sf.name, df.name, alpha.name)
