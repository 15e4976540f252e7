"""Setup of a few triangles one at a time (gallium.draw.setup._setup_few)
gives the same TriangleSet, array for array and bit for bit, as the
vectorized setup: random small draws with culling, both winding and fill
rules, every interpolation mode, scissor regions, degenerate triangles,
NaN/inf and subnormal coordinates, wide primitive ids."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gallium.draw.setup as setup

FIELDS = ("c", "dcdx", "dcdy", "bbox", "z", "oow", "inputs", "perspective", "w_is_one",
          "facing", "prim_id", "vx", "vy")  # fmt: skip


def case(seed: int):
    rng = np.random.default_rng(seed)
    v, m, k = int(rng.integers(3, 10)), int(rng.integers(1, 5)), int(rng.integers(0, 4))
    spread = [0.5, 64, 3000, 1e6][seed % 4]
    win = np.stack(
        [rng.normal(64, spread, v), rng.normal(64, spread, v), rng.uniform(0, 1, v)], 1
    ).astype(np.float32)
    if seed % 5 == 0:  # whole pixels: ties on the fill rule
        win[:, :2] = np.round(win[:, :2])
    oow = rng.choice([1.0, 0.5, 2.0, rng.uniform(0.1, 3)], v).astype(np.float32)
    if seed % 7 == 0:
        win[rng.integers(0, v), rng.integers(0, 3)] = np.nan
    if seed % 11 == 0:
        oow[rng.integers(0, v)] = np.inf
    if seed % 13 == 0:
        win[rng.integers(0, v), 0] = np.float32(1e-42)
    attrs = rng.normal(0, 1, (v, k, 4)).astype(np.float32)
    tris = rng.integers(0, v, (m, 3))
    if seed % 3 == 0:
        tris[0] = [0, 1, 1]
    interp = [["perspective", "linear", "constant"][int(rng.integers(0, 3))] for _ in range(k)]
    wide = seed % 9 == 0
    prim = (np.arange(m, dtype=np.int64) | (3 << 32)) if wide else np.arange(m, dtype=np.int32)
    region = tuple(int(x) for x in (*rng.integers(0, 20, 2), *rng.integers(60, 130, 2)))
    kw = dict(
        region=region,
        half_pixel_center=bool(seed % 2),
        bottom_edge_rule=seed % 3 == 1,
        front_ccw=seed % 4 < 2,
        cull_front=seed % 6 == 1,
        cull_back=seed % 6 == 2,
        flatshade_first=seed % 5 < 2,
        prim_ids=prim,
        wide_prim_ids=wide,
    )
    return (win, oow, tris, attrs, interp), kw


@pytest.mark.parametrize("block", range(4))
def test_few_triangles_set_up_one_at_a_time_are_bit_identical(monkeypatch, block):
    nonempty = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN -> int casts, as setup itself
        for seed in range(block * 100, block * 100 + 100):
            args, kw = case(seed)
            monkeypatch.setattr(setup, "SMALL_SETUP", 4)
            few = setup.setup_triangles(*args, **kw)
            monkeypatch.setattr(setup, "SMALL_SETUP", 0)
            wide = setup.setup_triangles(*args, **kw)
            assert few.count == wide.count, seed
            nonempty += few.count > 0
            for f in FIELDS:
                a, b = getattr(few, f), getattr(wide, f)
                assert a.dtype == b.dtype and a.shape == b.shape, (seed, f)
                assert a.tobytes() == b.tobytes(), (seed, f)
    assert nonempty >= 30  # the cases draw something


def test_coordinates_too_large_for_exact_products_take_the_arrays():
    win = np.array([[0, 0, 0], [5e6, 0, 0], [0, 5e6, 0]], np.float32)  # 5e6 * 256 > 2**30
    fixed = np.rint(win[:, :2] * 256).astype(np.int64)
    assert setup._setup_few(
        win, np.ones(3, np.float32), np.array([[0, 1, 2]]), np.zeros((3, 0, 4), np.float32),
        [], fixed, 0, np.float32(0.5), (0, 0, 99, 99), False, False, False, False, False,
        np.arange(1, dtype=np.int32), False,
    ) is None  # fmt: skip
