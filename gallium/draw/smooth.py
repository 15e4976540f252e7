"""Smooth (antialiased) points and lines, as Mesa's draw module makes them
for llvmpipe (draw_pipe_aapoint.c, draw_pipe_aaline.c with the NIR lowering
of nir_draw_helpers.c).

A smooth point becomes a square of two triangles around its centre, a
smooth line a rectangle of two triangles half a pixel longer at each end
and ``half width`` either side; every vertex keeps the primitive's
attributes and gets one more, the *coverage coordinate* -- for points
(s, t, k, 1) with (s, t) running from -1 to 1 across the square and k the
radius where the falloff starts; for lines (w, w, l, l) with the signed
distances across and along the rectangle.  The triangles are set up as any
triangle under the draw module's "no cull" rasterizer state (front_ccw on,
the last vertex provoking, nothing culled), and the fragment shader's colour
alphas are multiplied by a coverage computed from the interpolated
coordinate (workers/raster.py ``_smooth_coverage``: points killed beyond the
unit circle).  Points and lines keep their draw module arithmetic in
float32; the line's angle comes from the C library's atan2f, cosf and sinf,
as the draw module computes it.

Everything here is a pure function of its arrays.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from .primitives import TriangleSet, empty_set
from .setup import setup_triangles

F32 = np.float32

_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
for _name in ("atan2f", "cosf", "sinf"):
    getattr(_libm, _name).restype = ctypes.c_float
_libm.atan2f.argtypes = [ctypes.c_float, ctypes.c_float]
_libm.cosf.argtypes = [ctypes.c_float]
_libm.sinf.argtypes = [ctypes.c_float]


def _with_coverage(attrs: np.ndarray, coverage: np.ndarray) -> np.ndarray:
    """(V, K, 4) attributes plus the coverage coordinate as slot K."""
    out = np.empty((attrs.shape[0], attrs.shape[1] + 1, 4), F32)
    out[:, :-1] = attrs
    out[:, -1] = coverage
    return out


def _setup(
    win, oow, attrs, interp, n, prims, region, half_pixel_center, bottom_edge_rule, pair, kind
):
    """Two triangles a primitive, ``pair`` of its four vertices, under the
    no-cull rasterizer."""
    base = 4 * np.arange(n, dtype=np.int64)[:, None, None]
    tris = (base + np.array(pair)[None]).reshape(-1, 3)
    if not isinstance(region, tuple):
        region = tuple(np.repeat(r, 2) for r in region)
    ts = setup_triangles(
        win, oow, tris, attrs, [*interp, "perspective"], region=region,
        half_pixel_center=half_pixel_center, bottom_edge_rule=bottom_edge_rule,
        front_ccw=True, prim_ids=np.arange(2 * n, dtype=np.int64), wide_prim_ids=True,
    )  # fmt: skip
    ts.prim_id = np.asarray(prims)[ts.prim_id.astype(np.int64) // 2]
    ts.smooth = kind
    return ts


def smooth_points(
    win, oow, attrs, interp, pts, prims, size, *, per_vertex: bool, point_size: float,
    region, half_pixel_center: bool, bottom_edge_rule: bool,
) -> TriangleSet:  # fmt: skip
    """Set up the points at vertices ``pts`` (already clipped) as smooth
    points: radius half the vertex's size (``per_vertex``), else 1 for
    sizes up to 2 and half the size above."""
    k_slots = attrs.shape[1]
    m = pts.size
    if m == 0:
        ts = empty_set(k_slots + 1)
        ts.smooth = "point"
        return ts
    if per_vertex:
        radius = (F32(0.5) * size.astype(F32)).astype(F32)
    else:
        r = F32(1.0) if point_size <= 2.0 else F32(F32(0.5) * F32(point_size))
        radius = np.full(m, r, F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = (F32(1.0) / radius).astype(F32)
        k = ((F32(1.0) - (F32(2.0) * k).astype(F32)).astype(F32) + (k * k).astype(F32)).astype(F32)
        c = win[pts].astype(F32)
        win4 = np.repeat(c[:, None], 4, axis=1)
        sx = np.array([-1, 1, 1, -1], F32)
        sy = np.array([-1, -1, 1, 1], F32)
        win4[..., 0] = (c[:, 0:1] + sx * radius[:, None]).astype(F32)
        win4[..., 1] = (c[:, 1:2] + sy * radius[:, None]).astype(F32)
    cov = np.empty((m, 4, 4), F32)
    cov[..., 0], cov[..., 1] = sx, sy
    cov[..., 2] = k[:, None]
    cov[..., 3] = 1.0
    a = _with_coverage(np.repeat(attrs[pts], 4, axis=0), cov.reshape(-1, 4))
    return _setup(
        win4.reshape(-1, 3), np.repeat(oow[pts], 4), a, interp, m, prims, region,
        half_pixel_center, bottom_edge_rule, [[0, 1, 2], [0, 2, 3]], "point",
    )  # fmt: skip


def smooth_lines(
    win, oow, attrs, interp, lines, prims, flat_values, *, line_width: float, region,
    half_pixel_center: bool, bottom_edge_rule: bool,
) -> TriangleSet:  # fmt: skip
    """Set up segments ``lines`` (L, 2) as smooth lines: rectangles
    ``half_width`` (1 for widths up to 1, else width / 2 + 1/2) to either
    side, half a pixel past each end; the flat inputs ``flat_values`` (the
    provoking vertex's, on both ends: the draw module's flatshade stage)."""
    k_slots = attrs.shape[1]
    n = lines.shape[0]
    if n == 0:
        ts = empty_set(k_slots + 1)
        ts.smooth = "line"
        return ts
    hw = F32(1.0) if line_width <= 1.0 else F32(F32(F32(0.5) * F32(line_width)) + F32(0.5))
    w = win.astype(F32)
    p0, p1 = w[lines[:, 0]], w[lines[:, 1]]
    with np.errstate(invalid="ignore", over="ignore"):
        dx = (p1[:, 0] - p0[:, 0]).astype(F32)
        dy = (p1[:, 1] - p0[:, 1]).astype(F32)
        angles = [_libm.atan2f(float(y), float(x)) for x, y in zip(dx.tolist(), dy.tolist())]
        c_a = np.array([_libm.cosf(a) for a in angles], F32)
        s_a = np.array([_libm.sinf(a) for a in angles], F32)
        length = (F32(0.5) * np.sqrt((dx * dx).astype(F32) + (dy * dy).astype(F32))).astype(F32)
        half_length = np.where(
            length < F32(0.5), (F32(2.0) * length).astype(F32), (length + F32(0.5)).astype(F32)
        ).astype(F32)
        t_l, t_w = F32(0.5), hw
        # (the corners: 0 and 1 at the first end, 2 and 3 at the second)
        offs = []
        for sl, sw in ((-1, 1), (-1, -1), (1, 1), (1, -1)):
            ox = (F32(sl) * t_l * c_a).astype(F32) - (F32(sw) * t_w * s_a).astype(F32)
            oy = (F32(sl) * t_l * s_a).astype(F32) + (F32(sw) * t_w * c_a).astype(F32)
            offs.append((ox.astype(F32), oy.astype(F32)))
        win4 = np.empty((n, 4, 3), F32)
        for i, (ox, oy) in enumerate(offs):
            end = p0 if i < 2 else p1
            win4[:, i, 0] = (end[:, 0] + ox).astype(F32)
            win4[:, i, 1] = (end[:, 1] + oy).astype(F32)
            win4[:, i, 2] = end[:, 2]
    cov = np.empty((n, 4, 4), F32)
    for i, (sw, sl) in enumerate(((-1, -1), (1, -1), (-1, 1), (1, 1))):
        cov[:, i, 0] = F32(sw) * hw
        cov[:, i, 1] = hw
        cov[:, i, 2] = F32(sl) * half_length
        cov[:, i, 3] = half_length
    ends = np.repeat(lines, 2, axis=1).reshape(-1)  # vertex i of the rectangle: end i // 2
    per_vertex = attrs[ends]
    for slot, mode in enumerate(interp):
        if mode == "constant":
            per_vertex[:, slot] = np.repeat(flat_values[:, slot], 4, axis=0)
    a = _with_coverage(per_vertex, cov.reshape(-1, 4))
    # triangles (v2, v1, v0) and (v3, v1, v2), as draw_pipe_aaline.c emits them
    return _setup(
        win4.reshape(-1, 3), oow[ends], a, interp, n, prims, region, half_pixel_center,
        bottom_edge_rule, [[2, 1, 0], [3, 1, 2]], "line",
    )  # fmt: skip
