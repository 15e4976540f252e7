"""The clipper's three ways give the same geometry.

``gallium.draw.clip`` clips a few triangles entirely on Python floats rounded
to float32 (``_clip_few``), a few polygons with Python lists
(``_plane_loop_small``) and many with numpy (``_plane_loop``); the last two
use the same float32 distance and interpolation functions.  Random triangles --
crossing the frustum's and user planes, behind the eye, with non-finite
coordinates, every interpolation mode, either provoking vertex -- must come
out bit for bit the same: vertices, their order, triangles, primitive ids.
"""

from __future__ import annotations

from fractions import Fraction

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


def canonical_nans(arrays: list) -> list:
    """The bytes with every NaN made one NaN: where two NaNs meet in an
    operation (a NaN attribute interpolated with a NaN parameter), which one
    x86 passes on depends on the instruction's operand order, so numpy and
    Python floats may differ in the NaN's sign -- never in anything else."""
    out = []
    for b, a in zip(arrays, (F32, F32, F32, F32, np.int64, np.int64)):
        v = np.frombuffer(b, a).copy()
        if a is F32:
            v[np.isnan(v)] = np.nan
        out.append(v.tobytes())
    return out


def run(monkeypatch, small, geometry, user, flatshade_first, depth=(True, False)):
    """``small``: "few" (_clip_few), True (_plane_loop_small) or False (_plane_loop)."""
    pos, win, oow, attrs, tris, prim_ids, interp, scale, translate = geometry
    few = small == "few"
    monkeypatch.setattr(clip, "FEW_TRIANGLES", 1 << 30 if few else -1)
    monkeypatch.setattr(clip, "FEW_VERTICES", 1 << 30)
    monkeypatch.setattr(clip, "SMALL_POLYGONS", 1 << 30 if small else -1)
    planes, active = clip.plane_table(True, depth[0], depth[1], user)
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
    few = run(monkeypatch, "few", geometry, user, flatshade_first)
    assert canonical_nans(few) == canonical_nans(vectorized)


def varied_geometry(rng, n_tris: int, grid: bool = False):
    """Shared vertices, w = 0 and negative, huge and tiny coordinates, NaN and
    inf in positions and attributes, a random mix of interpolation modes;
    ``grid``: small integer coordinates, so that an edge's two distances to a
    plane are often exact opposites (the tie in choosing the endpoint to
    interpolate from)."""
    n = int(rng.integers(3, 3 * n_tris + 1))
    if grid:
        pos = rng.integers(-3, 4, (n, 4)).astype(F32)
        pos[:, 3] = rng.choice([1.0, 2.0], n)
    else:
        pos = rng.normal(0, rng.choice([0.5, 1.5, 40.0]), (n, 4)).astype(F32)
        pos[:, 3] = rng.choice([rng.uniform(-0.5, 2.0), 1.0, 0.0, 1e-30, -1.0], n)
    for _ in range(0 if grid else int(rng.integers(0, 3))):
        pos[rng.integers(0, n), rng.integers(0, 4)] = rng.choice([np.nan, np.inf, -np.inf, 3e38])
    scale = (F32(rng.uniform(1, 900)), F32(rng.uniform(1, 900)), F32(0.5))
    translate = (F32(rng.uniform(0, 900)), F32(rng.uniform(0, 900)), F32(0.5))
    with np.errstate(all="ignore"):
        oow = (F32(1.0) / pos[:, 3]).astype(F32)
        win = (pos[:, :3] * oow[:, None] * np.array(scale, F32) + np.array(translate, F32)).astype(
            F32
        )
    k = int(rng.integers(0, 4))
    attrs = rng.uniform(-2, 2, (n, k, 4)).astype(F32)
    if k and rng.uniform() < 0.2:
        attrs[rng.integers(0, n), rng.integers(0, k), rng.integers(0, 4)] = np.nan
    tris = rng.integers(0, n, (n_tris, 3)).astype(np.int64)
    prim_ids = rng.permutation(n_tris).astype(np.int64)
    interp = [str(m) for m in rng.choice(["perspective", "linear", "constant"], k)]
    return pos, win, oow, attrs, tris, prim_ids, interp, scale, translate


@pytest.mark.parametrize("seed", range(300))
def test_few_triangle_clipping_agrees_bit_for_bit(monkeypatch, seed):
    rng = np.random.default_rng(1000 + seed)
    geometry = varied_geometry(rng, int(rng.integers(1, 5)), grid=seed % 3 == 0)
    user = [list(rng.normal(0, 1, 4)) for _ in range(int(rng.integers(0, 3)))]
    flatshade_first = bool(rng.integers(0, 2))
    depth = (bool(rng.integers(0, 2)), bool(rng.integers(0, 2)))
    few = run(monkeypatch, "few", geometry, user, flatshade_first, depth)
    vectorized = run(monkeypatch, False, geometry, user, flatshade_first, depth)
    assert [len(b) for b in few] == [len(b) for b in vectorized]
    assert canonical_nans(few) == canonical_nans(vectorized)


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


def inside_geometry(rng, n_tris: int):
    """Vertices inside the frustum and on its planes: x = +-w, y = +-w,
    z = w, z = -w or z = 0, signed zeros and subnormals; sometimes one
    coordinate nudged one float32 step outside."""
    geometry = list(varied_geometry(rng, n_tris, grid=False))
    n = geometry[0].shape[0]
    w = rng.choice([1.0, 2.0, 0.5, 1e-30, 3e30], n).astype(F32)
    pos = (rng.uniform(-1, 1, (n, 4)) * w[:, None]).astype(F32)
    pos[:, 3] = w
    for _ in range(int(rng.integers(0, 6))):
        v, c = rng.integers(0, n), rng.integers(0, 3)
        pos[v, c] = rng.choice([w[v], -w[v], F32(0.0), F32(-0.0), F32(1e-45)])
    nudged = rng.uniform() < 0.3
    if nudged:
        v, c = rng.integers(0, n), rng.integers(0, 3)
        edge = F32(w[v] if rng.uniform() < 0.5 else -w[v])
        pos[v, c] = np.nextafter(edge, F32(np.copysign(np.inf, edge)), dtype=F32)
    geometry[0] = pos
    return geometry, nudged


@pytest.mark.parametrize("seed", range(120))
def test_a_few_triangles_wholly_inside_skip_the_clipper_with_its_result(monkeypatch, seed):
    """With the frustum's planes (x and y, and z in [-w, w] or [0, w]), a few
    triangles whose vertices are all finite and inside come back without the
    clipper's distances (clip._inside): the same arrays as the clipper's and
    the vectorized one's, boundaries included; _inside says so exactly when
    every vertex is inside in exact arithmetic."""
    rng = np.random.default_rng(5000 + seed)
    geometry, nudged = inside_geometry(rng, int(rng.integers(1, 5)))
    depth = (bool(rng.integers(0, 2)), bool(rng.integers(0, 2)))
    flatshade_first = bool(rng.integers(0, 2))
    taken = []
    real = clip._inside
    monkeypatch.setattr(clip, "_inside", lambda *a: taken.append(real(*a)) or taken[-1])
    fast = run(monkeypatch, "few", geometry, [], flatshade_first, depth)
    monkeypatch.setattr(clip, "_inside", lambda *a: False)
    few = run(monkeypatch, "few", geometry, [], flatshade_first, depth)
    vectorized = run(monkeypatch, False, geometry, [], flatshade_first, depth)
    assert fast == few
    assert canonical_nans(few) == canonical_nans(vectorized)
    # (Fractions of the float32 values: the exact distances)
    planes, active = clip.plane_table(True, depth[0], depth[1], [])
    exact = [[Fraction(float(c)) for c in planes[j]] for j in active]
    inside = all(
        sum(Fraction(float(x)) * c for x, c in zip(v, p)) >= 0 for v in geometry[0] for p in exact
    )
    assert taken == [inside]
    if not nudged and not depth[0]:
        assert inside


def mode_of(depth: tuple, user: list) -> int:
    planes, active = clip.plane_table(True, depth[0], depth[1], user)
    return clip._frustum_mode(planes, active, (planes.tobytes(), tuple(active)))


def test_only_the_frustums_planes_skip_the_clipper():
    assert mode_of((False, False), []) == 1
    assert mode_of((True, False), []) == 2
    assert mode_of((True, True), []) == 3
    assert mode_of((True, False), [[1.0, 0.0, 0.0, 0.0]]) == 0  # a user plane: the clipper
    planes, active = clip.plane_table(True, False, False, [])
    planes[0] = (-1.0, 0.0, 0.0, 2.0)  # another table's first plane: x <= 2w
    assert clip._frustum_mode(planes, active, (planes.tobytes(), tuple(active))) == 0
    planes[0], planes[4] = clip.FRUSTUM[0], (0.0, 0.0, 1.0, 0.5)  # z >= -w/2
    active = [0, 1, 2, 3, 4, 5]
    assert clip._frustum_mode(planes, active, (planes.tobytes(), tuple(active))) == 0
    V = [[0.0, 0.0, 0.0, 1.0], [0.5, 0.0, -0.5, 1.0], [0.0, 0.5, 0.0, 1.0]]
    assert clip._inside(V, 1) and clip._inside(V, 2) and not clip._inside(V, 3)  # z < 0
    V[1][0] = float(np.nextafter(F32(1.0), F32(2.0)))  # one float32 step right of x = w
    assert not clip._inside(V, 1)
    V[1][0] = 1.0  # on the plane: inside
    assert clip._inside(V, 2)
    V[1][2] = -1.0  # z = -w: inside [-w, w]
    assert clip._inside(V, 2) and not clip._inside(V, 3)
    V[2][3] = float("inf")  # not finite: never inside
    assert not clip._inside(V, 1)
    V[2][3] = float("nan")
    assert not clip._inside(V, 1)
