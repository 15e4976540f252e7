"""The viewport transform (gallium.draw.viewport.viewport_transform) against
its definition, vertex by vertex and component by component, as draw_llvm
computes it: ``1/w`` in float32, ``x_c * (1/w)`` in float32, then
``fma(., scale, translate)`` rounded once to float32 (the float32 product is
exact in float64)."""

from __future__ import annotations

import numpy as np
import pytest

from gallium.draw.viewport import viewport_transform

F32 = np.float32


def reference(clip: np.ndarray, scale, translate):
    win = np.empty((clip.shape[0], 3), F32)
    oow = np.empty(clip.shape[0], F32)
    with np.errstate(all="ignore"):
        for v in range(clip.shape[0]):
            oow[v] = F32(1.0) / clip[v, 3]
            for i in range(3):
                x = F32(clip[v, i] * oow[v])
                win[v, i] = F32(
                    np.float64(x) * np.float64(F32(scale[i])) + np.float64(F32(translate[i]))
                )
    return win, oow


@pytest.mark.parametrize("seed", range(30))
def test_viewport_transform_is_its_definition_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    clip = (rng.standard_normal((n, 4)) * 10.0 ** rng.uniform(-3, 3, (n, 4))).astype(F32)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-42, 1.0]
    for _ in range(int(rng.integers(0, 4))):  # w = 0, +-inf, NaN, subnormals, ...
        clip[rng.integers(0, n), rng.integers(0, 4)] = special[int(rng.integers(len(special)))]
    scale = tuple(rng.uniform(-600, 600, 3))
    translate = tuple(rng.uniform(-600, 600, 3))
    want_win, want_oow = reference(clip, scale, translate)
    with np.errstate(all="ignore"):
        win, oow = viewport_transform(clip, scale, translate)
    assert win.dtype == F32 and win.shape == (n, 3) and win.flags.c_contiguous
    assert win.view(np.uint32).tolist() == want_win.view(np.uint32).tolist()
    assert oow.view(np.uint32).tolist() == want_oow.view(np.uint32).tolist()
