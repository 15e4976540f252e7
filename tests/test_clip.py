"""The clipper's two walks around the polygons give the same geometry.

``gallium.draw.clip`` clips a few polygons with Python lists
(``_plane_loop_small``) and many with numpy (``_plane_loop``); both use the
same float32 distance and interpolation functions.  Random triangles --
crossing the frustum's and user planes, behind the eye, with non-finite
coordinates, every interpolation mode, either provoking vertex -- must come
out bit for bit the same: vertices, their order, triangles, primitive ids.
"""

from __future__ import annotations

import numpy as np
import pytest

import gallium.draw.clip as clip

F32 = np.float32


def random_geometry(rng, n_tris: int):
    n = 3 * n_tris
    pos = rng.normal(0, 1.2, (n, 4)).astype(F32)
    pos[:, 3] = rng.uniform(-0.3, 2.0, n)  # some behind the eye
    if rng.uniform() < 0.3:
        pos[rng.integers(0, n), rng.integers(0, 4)] = [np.nan, np.inf, -np.inf][rng.integers(0, 3)]
    scale = (F32(64.0), F32(48.0), F32(0.5))
    translate = (F32(64.0), F32(48.0), F32(0.5))
    with np.errstate(all="ignore"):
        oow = (F32(1.0) / pos[:, 3]).astype(F32)
        win = (pos[:, :3] * oow[:, None] * np.array(scale, F32) + np.array(translate, F32)).astype(
            F32
        )
    k = 3
    attrs = rng.uniform(-1, 1, (n, k, 4)).astype(F32)
    tris = np.arange(n, dtype=np.int64).reshape(-1, 3)
    prim_ids = np.arange(n_tris, dtype=np.int64)
    interp = ["perspective", "linear", "constant"]
    return pos, win, oow, attrs, tris, prim_ids, interp, scale, translate


def run(monkeypatch, small: bool, geometry, user, flatshade_first):
    pos, win, oow, attrs, tris, prim_ids, interp, scale, translate = geometry
    monkeypatch.setattr(clip, "SMALL_POLYGONS", 1 << 30 if small else -1)
    planes, active = clip.plane_table(True, True, False, user)
    g = clip.clip_triangles(
        pos, win, oow, attrs, tris, prim_ids,
        planes=planes, active=active, interp=interp, flatshade_first=flatshade_first,
        scale=scale, translate=translate,
    )  # fmt: skip
    return [a.tobytes() for a in (g.pos, g.win, g.oow, g.attrs, g.tris, g.prim_ids)]


@pytest.mark.parametrize("seed", range(40))
def test_small_and_vectorized_clipping_agree(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    geometry = random_geometry(rng, int(rng.integers(1, 7)))
    user = [list(rng.normal(0, 1, 4))] if rng.uniform() < 0.4 else []
    flatshade_first = bool(rng.integers(0, 2))
    small = run(monkeypatch, True, geometry, user, flatshade_first)
    vectorized = run(monkeypatch, False, geometry, user, flatshade_first)
    assert small == vectorized


def test_a_full_screen_triangle_becomes_the_screen_square():
    pos = np.array([[-1, -1, 0, 1], [3, -1, 0, 1], [-1, 3, 0, 1]], F32)
    scale, translate = (F32(8), F32(8), F32(0.5)), (F32(8), F32(8), F32(0.5))
    win = (pos[:, :3] * np.array(scale, F32) + np.array(translate, F32)).astype(F32)
    planes, active = clip.plane_table(True, True, False, [])
    g = clip.clip_triangles(
        pos, win, np.ones(3, F32), np.zeros((3, 1, 4), F32),
        np.array([[0, 1, 2]], np.int64), np.zeros(1, np.int64),
        planes=planes, active=active, interp=["perspective"], flatshade_first=False,
        scale=scale, translate=translate,
    )  # fmt: skip
    # a fan of three: the hypotenuse passes through the corner (16, 16), so one
    # triangle has no area (setup drops it)
    assert g.tris.shape == (3, 3)
    corners = {tuple(v) for v in g.win[np.unique(g.tris)][:, :2].tolist()}
    assert corners == {(0.0, 0.0), (16.0, 0.0), (0.0, 16.0), (16.0, 16.0)}
