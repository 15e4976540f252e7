"""Points: clipping and setup, as Mesa's draw module and llvmpipe do them.

Each vertex of a POINTS draw (or of a geometry shader's POINTS output) is a
point of ``point_size`` pixels (or the vertex shader's PSIZE with
``point_size_per_vertex``), at least one.  A point whose centre lies outside
the clip volume (or a user clip plane) is dropped, as GL clips points; the
others become a square, as llvmpipe sets them up: the centre snapped to 1/256
pixel, the snapped width halved down on the left and top, the square's edges
under the triangle fill rule (left and top edges in, right and bottom out).
Here the square is two triangles, front-facing whatever the winding rules,
never culled, every attribute constant over it (the vertex's values) except
the sprite coordinates: a PCOORD input, and with
``point_quad_rasterization`` the GENERIC inputs ``sprite_coord_enable``
names, run (s, t, 0, 1) from 0 to 1 across the point, with llvmpipe's
coefficients (``s = (0.5 - ds*(x - offset)) + ds*px``, ds = 1 / the snapped
width, t likewise down the rows, or up them for PIPE_SPRITE_COORD_LOWER_LEFT).
"""

from __future__ import annotations

import numpy as np

from ..pipe.enums import SpriteCoord
from . import clip
from .primitives import TriangleSet
from .setup import FIXED_ONE, setup_triangles, subpixel_snap

F32 = np.float32


def setup_points(
    win: np.ndarray,
    oow: np.ndarray,
    pos: np.ndarray,
    attrs: np.ndarray,
    interp: list[str],
    pts: np.ndarray,
    prims: np.ndarray,
    size: np.ndarray,
    *,
    rast: object,
    planes: np.ndarray,
    active: list[int],
    sprite: tuple[int, ...],
    region: object,
    multisample: bool = False,
    smooth: bool = False,
    per_vertex_size: bool = False,
) -> tuple[TriangleSet, np.ndarray]:
    """Clip and set up the points at vertices ``pts`` (window coordinates
    ``win``, clip coordinates ``pos``), with primitive ids ``prims`` and
    sizes ``size`` (already limited to the largest point size): (the points'
    TriangleSet, whose primitive ids are ``prims``' values, and the
    primitive ids of the points clipping left).  ``region`` is the draw
    region: one tuple, or a list of four arrays (one per bound) with a row
    per point (see setup_triangles)."""
    per_point = not isinstance(region, tuple)  # (four arrays, a row per point)
    # clip: the centre against the active planes
    centre = pos[pts]
    keep = np.isfinite(centre).all(axis=1) & np.isfinite(size)
    if getattr(rast, "point_tri_clip", False) and active:
        # d3d-style points (draw_pipe_clip.c clip_point_guard_xy): not
        # clipped in x and y -- only a centre with w <= 0 is dropped -- so a
        # point whose centre leaves the viewport still draws its square
        keep &= centre[:, 3] > 0
        active = [p for p in active if p >= 4]
    with np.errstate(invalid="ignore", over="ignore"):
        for p in active:
            keep &= clip.plane_distance(centre, planes[p]) >= 0
    if not keep.all():
        pts, prims, size = pts[keep], prims[keep], size[keep]
        if per_point:
            region = [r[keep] for r in region]
    if smooth:  # antialiased points (gallium/draw/smooth.py)
        from .smooth import smooth_points

        ts = smooth_points(
            win, oow, attrs, interp, pts, prims, size, per_vertex=per_vertex_size,
            point_size=float(rast.point_size), region=region,
            half_pixel_center=rast.half_pixel_center, bottom_edge_rule=rast.bottom_edge_rule,
        )  # fmt: skip
        return ts, prims
    m = pts.size
    po = F32(0.5) if rast.half_pixel_center else F32(0.0)
    win4 = np.empty((m, 4, 3), F32)
    if rast.point_quad_rasterization or rast.multisample:
        # the square's corners in 1/256 pixels, exactly as llvmpipe's point setup
        fxy = subpixel_snap((win[pts, :2] - po).astype(F32))
        fw = np.maximum(subpixel_snap(size), FIXED_ONE)
        lo = fxy - (fw // 2)[:, None]
        hi = lo + fw[:, None]
        cx = np.stack([lo[:, 0], hi[:, 0], hi[:, 0], lo[:, 0]], 1)  # corners 0..3
        cy = np.stack([lo[:, 1], lo[:, 1], hi[:, 1], hi[:, 1]], 1)
        win4[..., 0] = cx.astype(F32) / F32(FIXED_ONE) + po
        win4[..., 1] = cy.astype(F32) / F32(FIXED_ONE) + po
    else:
        # GL's legacy point rule (llvmpipe's legacy_points): a whole number
        # of pixels around the pixel the snapped centre falls in; the
        # square's sides on pixel boundaries, so no pixel centre is on one
        fw, x0, y0 = legacy_point_box(win[pts, :2], size, rast.bottom_edge_rule)
        x1 = x0 + fw // FIXED_ONE
        y1 = y0 + fw // FIXED_ONE
        cx = np.stack([x0, x1, x1, x0], 1)
        cy = np.stack([y0, y0, y1, y1], 1)
        win4[..., 0] = cx.astype(F32) + (po - F32(0.5))
        win4[..., 1] = cy.astype(F32) + (po - F32(0.5))
    win4[..., 2] = win[pts, 2][:, None]
    oow4 = np.repeat(oow[pts], 4)
    attrs4 = np.repeat(attrs[pts], 4, axis=0)
    base = 4 * np.arange(m, dtype=np.int64)[:, None]
    tris = (base[:, :, None] + np.array([[0, 1, 2], [0, 2, 3]])[None]).reshape(-1, 3)
    if per_point:  # one row per triangle: two a point
        region = tuple(np.repeat(r, 2) for r in region)
    ts = setup_triangles(
        win4.reshape(-1, 3),
        oow4,
        tris,
        attrs4,
        [
            "constant" if mode == "constant" and k not in sprite else "linear"
            for k, mode in enumerate(interp)
        ],
        region=region,
        half_pixel_center=rast.half_pixel_center,
        bottom_edge_rule=rast.bottom_edge_rule,
        multisample=multisample,
        front_ccw=False,  # the corners wind clockwise: front-facing
        prim_ids=np.arange(2 * m, dtype=np.int64),  # (each triangle's point: id // 2)
        wide_prim_ids=True,
    )
    point = ts.prim_id.astype(np.int64) // 2
    ts.prim_id = prims[point]
    if sprite and ts.count:
        ds = (F32(FIXED_ONE) / fw.astype(F32)).astype(F32)
        dt = -ds if rast.sprite_coord_mode == SpriteCoord.LOWER_LEFT else ds
        s0 = F32(0.5) - ds * (win[pts, 0] - po)
        t0 = F32(0.5) - dt * (win[pts, 1] - po)
        coef = np.zeros((m, 3, 4), F32)
        coef[:, 0, 0], coef[:, 1, 0] = s0, ds
        coef[:, 0, 1], coef[:, 2, 1] = t0, dt
        coef[:, 0, 3] = 1.0
        for slot in sprite:
            ts.inputs[:, slot] = coef[point]
    return ts, prims


def legacy_point_box(xy: np.ndarray, size: np.ndarray, bottom_edge_rule: bool) -> tuple:
    """llvmpipe's legacy points (lp_setup_point.c, point_quad_rasterization
    off): (the width rounded to whole pixels, in 1/256 pixel; the first
    column and row covered).  The centre snaps without the half-pixel
    offset; an odd width is centred on the pixel the centre falls in, an
    even one on the pixel corner nearest to it."""
    x0 = subpixel_snap(xy[:, 0])
    y0 = subpixel_snap(xy[:, 1]) - (1 if bottom_edge_rule else 0)
    fw = np.maximum(FIXED_ONE, (subpixel_snap(size) + FIXED_ONE // 2 - 1) & ~(FIXED_ONE - 1))
    w = fw >> 8
    odd = (w & 1) == 1
    bx = np.where(odd, (x0 >> 8) - (w - 1) // 2, ((x0 + FIXED_ONE // 2) >> 8) - w // 2)
    by = np.where(odd, (y0 >> 8) - (w - 1) // 2, ((y0 + FIXED_ONE // 2) >> 8) - w // 2)
    return fw, bx, by
