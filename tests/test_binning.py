"""Binning of set-up triangles into bands (``scene.bin_by_band``): for every
band, the triangles whose rows meet it, in submission order -- by the numpy
path and by the few-triangle path alike."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gallium.numpipe.scene import bin_by_band


def brute(bbox, nbands, rows):
    out = []
    for b in range(nbands):
        out.append([t for t, (_, y0, _, y1) in enumerate(bbox) if y0 // rows <= b <= y1 // rows])
    return out


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9, 40])
def test_bands_hold_the_triangles_that_meet_them_in_order(n):
    rng = np.random.default_rng(n)
    for _ in range(200):
        nbands = int(rng.integers(1, 12))
        rows = int(rng.choice([64, 128, 512]))
        y0 = rng.integers(0, nbands * rows, n)
        y1 = np.minimum(y0 + rng.integers(0, 3 * rows, n), nbands * rows - 1)
        bbox = np.stack([np.zeros(n), y0, np.full(n, 9), y1], axis=1).astype(np.int32)
        start, tris = bin_by_band(SimpleNamespace(count=n, bbox=bbox), nbands, rows)
        want = brute(bbox.tolist(), nbands, rows)
        assert start.dtype == np.int64 and tris.dtype == np.int64
        assert start.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
        assert [tris[start[b] : start[b + 1]].tolist() for b in range(nbands)] == want


def test_an_empty_set_has_empty_bands():
    start, tris = bin_by_band(SimpleNamespace(count=0, bbox=np.zeros((0, 4), np.int32)), 3)
    assert start.tolist() == [0, 0, 0, 0] and tris.size == 0
