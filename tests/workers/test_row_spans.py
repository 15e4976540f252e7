"""The sparse path's exact row spans (``workers.raster._row_spans``) against
the edge functions evaluated pixel by pixel: random integer edges of every
sign, flat ones (dx == 0) included, and values far beyond a float's exact
quotients' reach."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import workers.raster as raster


def brute(c, dcdx, dcdy, y, xs):
    inside = np.ones(xs.size, bool)
    for i in range(3):
        inside &= (c[i] - (int(dcdx[i]) << 8) * xs + (int(dcdy[i]) << 8) * y) > 0
    return inside


@pytest.mark.parametrize("edges", ["independent", "triangles"])
@pytest.mark.parametrize("seed", range(6))
def test_row_spans_equal_the_edge_functions(seed, edges):
    """``independent``: edges of any signs (some rows with no right or no
    left edge, so every edge takes the general form); ``triangles``: dx
    summing to zero per row as set-up triangles' do (a right, a left and a
    third edge of any kind, flat included)."""
    rng = np.random.default_rng(seed)
    n = 300
    big = 1 << 36 if seed % 2 else 1 << 14
    dcdx = rng.integers(-64, 65, (n, 3))
    dcdx[rng.random((n, 3)) < 0.15] = 0  # flat edges
    if edges == "triangles":
        dcdx[:, 2] = -dcdx[:, 0] - dcdx[:, 1]
        dcdx[(dcdx == 0).all(axis=1), :2] = (3, -5)
        dcdx[:, 2] = -dcdx[:, 0] - dcdx[:, 1]
        dcdx = rng.permuted(dcdx, axis=1)  # the flat or third edge anywhere
    kinds = [kind for _, kind in raster._edge_slots(dcdx << 8)]
    assert kinds == (["right", "left", "any"] if edges == "triangles" else ["any"] * 3)
    if edges == "triangles":
        assert (dcdx == 0).any(axis=1).sum() > 10  # flat third edges
    dcdy = rng.integers(-64, 65, (n, 3))
    c = rng.integers(-big, big, (n, 3)) + rng.integers(-8, 9, (n, 3)) * 256
    ts = SimpleNamespace(
        c=c.astype(np.int64), dcdx=dcdx.astype(np.int64), dcdy=dcdy.astype(np.int64)
    )
    ids = np.arange(n, dtype=np.int64)
    ya = rng.integers(-4, 20, n)
    yb = ya + rng.integers(0, 12, n)
    x0 = rng.integers(-6, 10, n)
    x1 = x0 + rng.integers(0, 30, n)
    pk, y, xl, xr = raster._row_spans(ts, ids, ya, yb, x0, x1)
    assert pk.size == int((yb - ya + 1).sum())
    xs = np.arange(-10, 50)
    nonempty = 0
    for j in range(pk.size):
        t = int(pk[j])
        inside = brute(c[t], dcdx[t], dcdy[t], int(y[j]), xs) & (xs >= x0[t]) & (xs <= x1[t])
        got = (xs >= xl[j]) & (xs <= xr[j])
        assert np.array_equal(got, inside), (t, int(y[j]))
        nonempty += bool(inside.any())
    assert nonempty > 50  # not vacuous: many rows cover pixels
    rows = np.concatenate([np.arange(a, b + 1) for a, b in zip(ya, yb)])
    assert np.array_equal(y, rows)
    assert np.array_equal(pk, np.repeat(ids, yb - ya + 1))
