"""Triangle setup: window coordinates to edge planes and attribute planes.

This is llvmpipe's ``lp_setup_tri.c`` + ``lp_state_setup.c`` arithmetic,
vectorized over every triangle of a draw at once (numpy arrays indexed by
triangle), so that numpipe covers exactly the pixels llvmpipe covers and
interpolates attributes the same way:

* Positions snap to 1/256 pixel: ``X = rint((x - 0.5) * 256)`` (round half to
  even; the 0.5 is dropped when ``half_pixel_center`` is off).
* The fixed-point area ``dx01*dy20 - dx20*dy01`` decides the winding; zero
  area is never drawn; negative area swaps v0/v1 (v1/v2 with
  ``flatshade_first``) so the provoking vertex stays put.
* Edge i runs from vertex i to i+1 with ``dcdx = Y_i - Y_j``, ``dcdy = X_i -
  X_j``; at integer pixel (px, py) its value is
  ``E = dcdx*(X_i - 256 px) - dcdy*(Y_i - 256 py)``, plus 1 on left edges
  (dcdx < 0) and top edges (dcdx == 0, dcdy > 0; mirrored by
  ``bottom_edge_rule``).  A pixel is covered when all three E are > 0.
* Attributes: ``a(px, py) = a0 + dadx*px + dady*py`` with a0 taken at the
  pixel centre, all in float32 with llvmpipe's operation order; perspective
  attributes are premultiplied by 1/w and later multiplied by the reciprocal
  of the interpolated 1/w.

Everything here is a pure function of its arrays: no threads, no state.
"""

from __future__ import annotations

import numpy as np

from ..util.ieee import ieee
from .clip import slots_index
from .polygon import PolygonOffset, setup_offset
from .primitives import TriangleSet, empty_set, take_rows

F32 = np.float32
FIXED_ORDER = 8
FIXED_ONE = 1 << FIXED_ORDER
_NEXT = np.array([1, 2, 0])


@ieee
def subpixel_snap(v: np.ndarray) -> np.ndarray:
    """llvmpipe's subpixel_snap for points and lines: util_iround(256 * v) as
    it is built on x86-64, ``(int)(f + 0.5f)`` (``(int)(f - 0.5f)`` below
    zero) in float32 -- halves round away from zero, unlike the round-to-even
    conversion its triangle setup uses (calc_fixed_position, SSE)."""
    return iround(F32(FIXED_ONE) * np.asarray(v, F32))


def iround(v: np.ndarray) -> np.ndarray:
    """Mesa's util_iround on x86-64: float32 ``f + 0.5`` (or ``f - 0.5``) truncated."""
    f = np.asarray(v, F32)
    with np.errstate(invalid="ignore", over="ignore"):
        up = np.trunc((f + F32(0.5)).astype(F32))
        down = np.trunc((f - F32(0.5)).astype(F32))
        return np.where(f >= 0, up, down).astype(np.int64)


@ieee
def setup_triangles(
    win: np.ndarray,
    oow: np.ndarray,
    tris: np.ndarray,
    attrs: np.ndarray,
    interp: list[str],
    *,
    region: tuple[int, int, int, int],
    half_pixel_center: bool = True,
    bottom_edge_rule: bool = False,
    front_ccw: bool = False,
    cull_front: bool = False,
    cull_back: bool = False,
    flatshade_first: bool = False,
    prim_ids: np.ndarray | None = None,
    wide_prim_ids: bool = False,
    multisample: bool = False,
    offset: PolygonOffset | None = None,
    twoside: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    nslots: int | None = None,
) -> TriangleSet:
    """Set up triangles.

    ``win`` (V, 3) window coordinates, ``oow`` (V,) 1/w,
    ``tris`` (M, 3) vertex indices, ``attrs`` (V, K, 4) per-vertex values of
    the K fragment shader inputs, ``interp[k]`` one of "constant", "linear",
    "perspective".  ``region`` is the draw region (x0, y0, x1, y1) inclusive:
    the framebuffer, intersected with the scissor when enabled; four ints, or
    four arrays with one entry per triangle (triangles of draws with
    different regions set up at once).
    ``wide_prim_ids``: keep ``prim_ids`` as given (int64 tags) instead of int32.
    ``multisample``: bounding boxes hold every pixel a sample of which the
    triangle may cover (llvmpipe's box in pixel-corner coordinates), not just
    the pixels whose centres it may cover.
    ``offset``: polygon offset as llvmpipe's setup computes it (each
    triangle's ``zoffset``, added to its fragments' depth: see
    gallium/draw/polygon.py).  ``nslots``: the fragment shader's attribute
    slots, when ``attrs`` carries more (slots past them only feed
    ``twoside``: (front slots, back slots), whose back values replace the
    front ones on back-facing triangles, as llvmpipe's setup does).
    """
    k = attrs.shape[1] if attrs.ndim == 3 else 0
    if nslots is not None:
        k = nslots
    m = tris.shape[0]
    if m == 0:
        return empty_set(k)
    if prim_ids is None:
        prim_ids = np.arange(m, dtype=np.int32)
    pixel_offset = F32(0.5) if half_pixel_center else F32(0.0)

    # Fixed-point snap (lp_setup_tri.c calc_fixed_position): float32 maths then RNE.
    xy = win[:, :2]
    with np.errstate(invalid="ignore", over="ignore"):  # (non-finite vertices: dropped below)
        fixed = np.rint((xy - pixel_offset).astype(F32, copy=False) * F32(FIXED_ONE)).astype(
            np.int64
        )
    # the boxes' coordinates: the snapped ones, or pixel corners for multisampling
    corner = round(float(pixel_offset) * FIXED_ONE) if multisample else 0
    plain = offset is None and twoside is None and (nslots is None or nslots == attrs.shape[1])
    if m <= SMALL_SETUP and plain:
        few = _setup_few(
            win, oow, tris, attrs, interp, fixed, k, pixel_offset, region, bottom_edge_rule,
            front_ccw, cull_front, cull_back, flatshade_first, prim_ids, wide_prim_ids, corner,
        )  # fmt: skip
        if few is not None:
            return few
    X = fixed[tris, 0]  # (M, 3)
    Y = fixed[tris, 1]
    dx01 = X[:, 0] - X[:, 1]
    dy01 = Y[:, 0] - Y[:, 1]
    dx20 = X[:, 2] - X[:, 0]
    dy20 = Y[:, 2] - Y[:, 0]
    area = dx01 * dy20 - dx20 * dy01
    ccw = area > 0
    front = np.where(ccw, front_ccw, not front_ccw)
    keep = area != 0
    if cull_front:
        keep &= ~front
    if cull_back:
        keep &= front
    # per vertex, then per triangle (reductions over short axes are slow in numpy)
    fv = np.isfinite(win[:, 0]) & np.isfinite(win[:, 1]) & np.isfinite(oow)
    finite = fv[tris[:, 0]] & fv[tris[:, 1]] & fv[tris[:, 2]]
    keep &= finite
    order = tris.copy()
    neg = ~ccw
    # Negative area: swap so the winding is positive, keeping the provoking
    # vertex (two selections per column: ~7x cheaper than masked assignments)
    a, b = (1, 2) if flatshade_first else (0, 1)
    order[:, a] = np.where(neg, tris[:, b], tris[:, a])
    order[:, b] = np.where(neg, tris[:, a], tris[:, b])
    prim_ids = np.asarray(prim_ids)
    if not keep.all():
        order, front, prim_ids = order[keep], front[keep], prim_ids[keep]
        if not isinstance(region[0], int):
            region = tuple(r[keep] for r in region)
    if order.shape[0] == 0:
        return empty_set(k)
    X = fixed[order, 0]
    Y = fixed[order, 1]

    # Edge planes.
    Xn = X[:, _NEXT]  # vertex i+1 of edge i (np.roll costs ~20 us a call)
    Yn = Y[:, _NEXT]
    dcdx = Y - Yn
    dcdy = X - Xn
    c = dcdx * X - dcdy * Y
    if bottom_edge_rule:
        bias = (dcdx < 0) | ((dcdx == 0) & (dcdy < 0))
    else:
        bias = (dcdx < 0) | ((dcdx == 0) & (dcdy > 0))
    c = c + bias.astype(np.int64)

    # Bounding box in pixels (lp_setup_tri.c do_triangle_ccw).
    adj = 1 if bottom_edge_rule else 0
    X0, X1, X2, Y0, Y1, Y2 = X[:, 0], X[:, 1], X[:, 2], Y[:, 0], Y[:, 1], Y[:, 2]
    if corner:
        X0, X1, X2, Y0, Y1, Y2 = (v + corner for v in (X0, X1, X2, Y0, Y1, Y2))
    bx0 = np.minimum(np.minimum(X0, X1), X2) >> FIXED_ORDER
    bx1 = (np.maximum(np.maximum(X0, X1), X2) - 1) >> FIXED_ORDER
    by0 = (np.minimum(np.minimum(Y0, Y1), Y2) + adj) >> FIXED_ORDER
    by1 = (np.maximum(np.maximum(Y0, Y1), Y2) - 1 + adj) >> FIXED_ORDER
    rx0, ry0, rx1, ry1 = region
    bx0 = np.maximum(bx0, rx0)
    by0 = np.maximum(by0, ry0)
    bx1 = np.minimum(bx1, rx1)
    by1 = np.minimum(by1, ry1)
    visible = (bx0 <= bx1) & (by0 <= by1)
    if not visible.all():
        order, front, prim_ids = order[visible], front[visible], prim_ids[visible]
        X, Y = X[visible], Y[visible]
        c, dcdx, dcdy = c[visible], dcdx[visible], dcdy[visible]
        bx0, by0, bx1, by1 = bx0[visible], by0[visible], bx1[visible], by1[visible]
    mm = order.shape[0]
    if mm == 0:
        return empty_set(k)
    bbox = np.stack([bx0, by0, bx1, by1], axis=1).astype(np.int32)

    # Attribute planes (lp_state_setup.c init_args / calc_coef4), float32.
    p = take_rows(win, order)  # (M, 3 verts, 3)
    x0c = (p[:, 0, 0] - pixel_offset).astype(F32, copy=False)
    y0c = (p[:, 0, 1] - pixel_offset).astype(F32, copy=False)
    fdx01 = (p[:, 0, 0] - p[:, 1, 0]).astype(F32, copy=False)
    fdy01 = (p[:, 0, 1] - p[:, 1, 1]).astype(F32, copy=False)
    fdx20 = (p[:, 2, 0] - p[:, 0, 0]).astype(F32, copy=False)
    fdy20 = (p[:, 2, 1] - p[:, 0, 1]).astype(F32, copy=False)
    e = (fdx01 * fdy20).astype(F32, copy=False)
    f = (fdy01 * fdx20).astype(F32, copy=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ooa = (F32(1.0) / (e - f)).astype(F32, copy=False)
        dy20_ooa = (fdy20 * ooa).astype(F32, copy=False)
        dy01_ooa = (fdy01 * ooa).astype(F32, copy=False)
        dx20_ooa = (fdx20 * ooa).astype(F32, copy=False)
        dx01_ooa = (fdx01 * ooa).astype(F32, copy=False)

    def coefs(v0, v1, v2, ext) -> tuple:
        da01 = (v0 - v1).astype(F32, copy=False)
        da20 = (v2 - v0).astype(F32, copy=False)
        with np.errstate(over="ignore", invalid="ignore"):
            dadx = (da01 * dy20_ooa[ext] - da20 * dy01_ooa[ext]).astype(F32, copy=False)
            dady = (da20 * dx01_ooa[ext] - da01 * dx20_ooa[ext]).astype(F32, copy=False)
            a0 = (v0 - (dadx * x0c[ext] + dady * y0c[ext])).astype(F32, copy=False)
        return a0, dadx, dady

    def plane(a: np.ndarray) -> np.ndarray:
        """a: (M, 3 verts, ...) -> (M, 3, ...) [a0, dadx, dady]."""
        a = a.astype(F32, copy=False)
        if a.ndim == 2:
            return np.stack(coefs(a[:, 0], a[:, 1], a[:, 2], slice(None)), axis=1)
        # attributes: the same float32 operations with the triangles on the
        # last axis (long inner loops), handed back as an (M, 3, ...) view
        rest = a.shape[2:]
        t = np.ascontiguousarray(a.reshape(mm, 3, -1).transpose(1, 2, 0))  # (3, N, M)
        out = np.stack(coefs(t[0], t[1], t[2], (None, slice(None))))  # (3, N, M)
        return np.moveaxis(out.reshape(3, *rest, mm), -1, 0)

    zplane = plane(p[:, :, 2])
    zoffset = setup_offset(p, ooa, offset) if offset is not None else None
    v_oow = oow[order]
    oowplane = plane(v_oow)
    w_is_one = (v_oow[:, 0] == 1.0) & (v_oow[:, 1] == 1.0) & (v_oow[:, 2] == 1.0)

    inputs = np.zeros((mm, k, 3, 4), F32)
    perspective = np.zeros(k, bool)
    if k:
        va = take_rows(attrs, order)  # (M, 3, K, 4)
        if twoside is not None and not front.all():
            back = ~front
            fs, bs = list(twoside[0]), list(twoside[1])
            va[np.ix_(back, [0, 1, 2], fs)] = va[np.ix_(back, [0, 1, 2], bs)]
        if va.shape[2] != k:
            va = np.ascontiguousarray(va[:, :, :k])
        pv = va[:, 0] if flatshade_first else va[:, 2]  # provoking vertex (M, K, 4)
        lin = [i for i, mode in enumerate(interp) if mode == "linear"]
        persp = [i for i, mode in enumerate(interp) if mode == "perspective"]
        const = [i for i, mode in enumerate(interp) if mode == "constant"]
        # plane() stacks [a0, dadx, dady] on axis 1: (M, 3, L, 4) -> (M, L, 3, 4).
        if lin:
            inputs[:, slots_index(lin)] = np.moveaxis(plane(va[:, :, slots_index(lin)]), 1, 2)
        if persp:
            perspective[persp] = True
            sl = slots_index(persp)
            pre = (va[:, :, sl] * v_oow[:, :, None, None]).astype(F32, copy=False)
            inputs[:, sl] = np.moveaxis(plane(pre), 1, 2)
        if const:
            inputs[:, const, 0] = pv[:, const]
    return TriangleSet(
        count=mm,
        c=c,
        dcdx=dcdx,
        dcdy=dcdy,
        bbox=bbox,
        z=zplane,
        oow=oowplane,
        inputs=inputs,
        perspective=perspective,
        w_is_one=w_is_one,
        facing=front,
        prim_id=prim_ids if wide_prim_ids else prim_ids.astype(np.int32),
        vx=X,
        vy=Y,
        zoffset=zoffset,
    )


# Up to this many triangles, setup runs triangle by triangle on Python
# integers and numpy float32 scalars (_setup_few): a draw of one clipped
# full-screen triangle made ~80 numpy calls here, ~0.35 ms.
SMALL_SETUP = 4
_FEW_LIMIT = 1 << 30  # snapped coordinates within this: every int64 product is exact


def _plane_few(g: tuple, a0, a1, a2) -> tuple:
    """One triangle's [a0, dadx, dady] from its vertices' values (float32
    scalars or arrays), ``g`` its (dy20/area, dy01/area, dx01/area,
    dx20/area, x0, y0): setup_triangles' plane() for a single triangle."""
    dy20_ooa, dy01_ooa, dx01_ooa, dx20_ooa, x0c, y0c = g
    da01 = a0 - a1
    da20 = a2 - a0
    dadx = da01 * dy20_ooa - da20 * dy01_ooa
    dady = da20 * dx01_ooa - da01 * dx20_ooa
    return a0 - (dadx * x0c + dady * y0c), dadx, dady


def _setup_few(
    win, oow, tris, attrs, interp, fixed, k, pixel_offset, region, bottom_edge_rule,
    front_ccw, cull_front, cull_back, flatshade_first, prim_ids, wide_prim_ids, corner=0,
) -> TriangleSet | None:  # fmt: skip
    """setup_triangles for a few triangles: the same integer and float32
    operations, in the same order, one triangle at a time (float32 scalars
    round exactly as the arrays do).  None when a snapped coordinate is too
    large for Python integers to agree with int64 arithmetic."""
    fx = fixed[:, 0].tolist()
    fy = fixed[:, 1].tolist()
    if max(map(abs, fx + fy), default=0) >= _FEW_LIMIT:
        return None
    fv = (np.isfinite(win[:, 0]) & np.isfinite(win[:, 1]) & np.isfinite(oow)).tolist()
    per_tri = None
    if isinstance(region[0], int):
        rx0, ry0, rx1, ry1 = region
    else:  # one region per triangle
        per_tri = list(zip(*(np.asarray(r).tolist() for r in region)))
    adj = 1 if bottom_edge_rule else 0
    lin = [i for i, mode in enumerate(interp) if mode == "linear"]
    persp = [i for i, mode in enumerate(interp) if mode == "perspective"]
    const = [i for i, mode in enumerate(interp) if mode == "constant"]
    pids = np.asarray(prim_ids)
    rows = []  # (order, front, prim index, c, dcdx, dcdy, bbox, X, Y)
    for i, (t0, t1, t2) in enumerate(tris.tolist()):
        if per_tri is not None:
            rx0, ry0, rx1, ry1 = per_tri[i]
        X = [fx[t0], fx[t1], fx[t2]]
        Y = [fy[t0], fy[t1], fy[t2]]
        area = (X[0] - X[1]) * (Y[2] - Y[0]) - (X[2] - X[0]) * (Y[0] - Y[1])
        ccw = area > 0
        front = front_ccw if ccw else not front_ccw
        if area == 0 or (cull_front and front) or (cull_back and not front):
            continue
        if not (fv[t0] and fv[t1] and fv[t2]):
            continue
        order = [t0, t1, t2]
        if not ccw:  # swap so the winding is positive, keeping the provoking vertex
            if flatshade_first:
                order = [t0, t2, t1]
            else:
                order = [t1, t0, t2]
        X = [fx[v] for v in order]
        Y = [fy[v] for v in order]
        dcdx = [Y[0] - Y[1], Y[1] - Y[2], Y[2] - Y[0]]
        dcdy = [X[0] - X[1], X[1] - X[2], X[2] - X[0]]
        c = []
        for e in range(3):
            if bottom_edge_rule:
                bias = dcdx[e] < 0 or (dcdx[e] == 0 and dcdy[e] < 0)
            else:
                bias = dcdx[e] < 0 or (dcdx[e] == 0 and dcdy[e] > 0)
            c.append(dcdx[e] * X[e] - dcdy[e] * Y[e] + int(bias))
        bx0 = max((min(X) + corner) >> FIXED_ORDER, rx0)
        bx1 = min((max(X) + corner - 1) >> FIXED_ORDER, rx1)
        by0 = max((min(Y) + corner + adj) >> FIXED_ORDER, ry0)
        by1 = min((max(Y) + corner - 1 + adj) >> FIXED_ORDER, ry1)
        if bx0 > bx1 or by0 > by1:
            continue
        rows.append((order, front, i, c, dcdx, dcdy, (bx0, by0, bx1, by1), X, Y))
    mm = len(rows)
    if mm == 0:
        return empty_set(k)
    z = np.empty((mm, 3), F32)
    oowp = np.empty((mm, 3), F32)
    inputs = np.zeros((mm, k, 3, 4), F32)
    w_is_one = np.empty(mm, bool)
    one = F32(1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for r, (order, *_rest) in enumerate(rows):
            p = win[order]  # (3 verts, 3) float32
            x0c = p[0, 0] - pixel_offset
            y0c = p[0, 1] - pixel_offset
            fdx01 = p[0, 0] - p[1, 0]
            fdy01 = p[0, 1] - p[1, 1]
            fdx20 = p[2, 0] - p[0, 0]
            fdy20 = p[2, 1] - p[0, 1]
            ooa = one / (fdx01 * fdy20 - fdy01 * fdx20)
            g = (fdy20 * ooa, fdy01 * ooa, fdx01 * ooa, fdx20 * ooa, x0c, y0c)
            z[r] = _plane_few(g, p[0, 2], p[1, 2], p[2, 2])
            vo = oow[order]
            oowp[r] = _plane_few(g, vo[0], vo[1], vo[2])
            w_is_one[r] = bool((vo == one).all())
            if k:
                va = attrs[order]  # (3, K, 4)
                for slot in lin:
                    inputs[r, slot] = _plane_few(g, va[0, slot], va[1, slot], va[2, slot])
                for slot in persp:
                    pre = [va[j, slot] * vo[j] for j in range(3)]
                    inputs[r, slot] = _plane_few(g, *pre)
                for slot in const:
                    inputs[r, slot, 0] = va[0 if flatshade_first else 2, slot]
    perspective = np.zeros(k, bool)
    if k and persp:
        perspective[persp] = True
    kept = np.array([row[2] for row in rows], np.int64)
    prim = pids[kept]
    return TriangleSet(
        count=mm,
        c=np.array([row[3] for row in rows], np.int64),
        dcdx=np.array([row[4] for row in rows], np.int64),
        dcdy=np.array([row[5] for row in rows], np.int64),
        bbox=np.array([row[6] for row in rows], np.int32),
        z=z,
        oow=oowp,
        inputs=inputs,
        perspective=perspective,
        w_is_one=w_is_one,
        facing=np.array([row[1] for row in rows], bool),
        prim_id=prim if wide_prim_ids else prim.astype(np.int32),
        vx=np.array([row[7] for row in rows], np.int64),
        vy=np.array([row[8] for row in rows], np.int64),
    )
