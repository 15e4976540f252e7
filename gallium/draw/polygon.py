"""Polygon state: offset, two-sided colour, culling and fill modes, as Mesa's
draw module and llvmpipe apply them.

llvmpipe splits the rasterizer state between two places
(lp_state_rasterizer.c): while nothing needs the draw module's primitive
pipeline, its own triangle setup offsets depth and picks the back colours
(lp_state_setup.c); once polygons are unfilled, or points or lines smoothed,
or lines or polygons stippled, the draw module's stages do it instead
(draw_pipe_cull.c, draw_pipe_twoside.c, draw_pipe_offset.c,
draw_pipe_flatshade.c, draw_pipe_unfilled.c), and their arithmetic differs:

=====================  ==================================  ==================================
                       llvmpipe's setup                     the draw module's stages
=====================  ==================================  ==================================
facing                 the snapped fixed-point area          the float32 determinant of the
                                                             window coordinates (zero: back)
depth offset           added to each fragment's depth        added to each vertex's z and
                       (then clamped with it)                clamped to [0, 1] there
offset slopes          from the triangle as set up (its      from the triangle as assembled,
                       vertices in setup's order)            over the determinant
=====================  ==================================  ==================================

:class:`PolygonState` holds what a vertex program needs of both;
:func:`setup_offset` is the setup's arithmetic (gallium/draw/setup.py
calls it), :func:`pipeline_triangles` the draw module's stages from the
clipper's output up to the primitives handed to setup: each filled
triangle, and the lines and points of unfilled ones, in submission order.

Everything here is a pure function of its arrays (no state, no threads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pipe.enums import PolygonMode

F32 = np.float32
I32 = np.int32

# edge flags of a triangle: edge 0 runs v0 -> v1, 1 v1 -> v2, 2 v2 -> v0
# (DRAW_PIPE_EDGE_FLAG_0..2); RESET starts a new line-stipple pattern
EDGE0, EDGE1, EDGE2, RESET = 1, 2, 4, 8
EDGES_ALL = EDGE0 | EDGE1 | EDGE2


@dataclass(frozen=True)
class PolygonOffset:
    """``offset_units`` (already scaled by the depth format's minimum
    resolvable difference, or raw for float depth and with
    ``offset_units_unscaled``), ``offset_scale`` and ``offset_clamp`` as
    float32, and whether the depth buffer holds floats (the units then scale
    with the exponent of the triangle's largest z)."""

    units: np.float32
    scale: np.float32
    clamp: np.float32
    float_depth: bool
    point: bool
    line: bool
    tri: bool

    @property
    def any(self) -> bool:
        return self.point or self.line or self.tri


def minimum_resolvable_depth(desc: object | None) -> float:
    """util_get_depth_format_mrd: 1 / (2**bits - 1) for a UNORM depth
    format, D24's for float depth or no depth buffer (double precision)."""
    if desc is not None:
        z = next((c for c in getattr(desc, "channels", ()) if c.name == "Z"), None)
        if z is not None and z.type == "UNORM":
            return 1.0 / ((1 << z.bits) - 1)
    return 1.0 / ((1 << 24) - 1)


def polygon_offset(rast: object, zs_desc: object | None) -> PolygonOffset | None:
    """The rasterizer's polygon offset against the bound depth format
    (``zs_desc``, a FormatDesc or None), or None when it offsets nothing."""
    point, line, tri = bool(rast.offset_point), bool(rast.offset_line), bool(rast.offset_tri)
    if not (point or line or tri):
        return None
    float_depth = False
    if zs_desc is not None:
        z = next((c for c in zs_desc.channels if c.name == "Z"), None)
        float_depth = z is not None and z.type == "FLOAT"
    units = float(rast.offset_units)
    if rast.offset_units_unscaled:
        units_f = F32(units)
        float_depth_units = False
    elif float_depth:
        units_f = F32(units)
        float_depth_units = True
    else:  # (double maths, then a float: lp_make_setup_variant_key)
        units_f = F32(units * minimum_resolvable_depth(zs_desc) * 2)
        float_depth_units = False
    return PolygonOffset(
        units_f, F32(rast.offset_scale), F32(rast.offset_clamp), float_depth_units, point, line, tri
    )


def _exponent_units(maxz: np.ndarray) -> np.ndarray:
    """2**(exponent(maxz) - 23) as float32 bits, clamped at 0 (the smallest
    step of a float32 near ``maxz``; zero for tiny values), computed on the
    bit pattern as both Mesa paths do."""
    bits = np.asarray(maxz, F32).view(I32) & I32(0xFF << 23)
    bits = bits - I32(23 << 23)
    return np.maximum(bits, I32(0)).view(F32)


def _clamp_offset(zoffset: np.ndarray, clamp: np.float32, setup: bool) -> np.ndarray:
    if clamp > 0:
        return np.minimum(zoffset, clamp) if setup else np.where(zoffset < clamp, zoffset, clamp)
    if clamp < 0:
        return np.maximum(zoffset, clamp) if setup else np.where(zoffset > clamp, zoffset, clamp)
    return zoffset


def setup_offset(p: np.ndarray, ooa: np.ndarray, off: PolygonOffset) -> np.ndarray:
    """llvmpipe's setup (lp_do_offset_tri): the offset of each triangle's
    depth, ``p`` (M, 3 vertices, 3) its window coordinates in setup's order,
    ``ooa`` 1 / its float area (M,); returns (M,) float32, which the
    rasterizer adds to every fragment's interpolated depth (lp_bld_interp.c:
    llvmpipe keeps it in the position's a0.x)."""
    p = p.astype(F32, copy=False)
    d01 = (p[:, 0] - p[:, 1]).astype(F32)  # (M, 3) x, y, z
    d20 = (p[:, 2] - p[:, 0]).astype(F32)
    with np.errstate(over="ignore", invalid="ignore"):
        # cross(e, f).xy in the setup's lanes: (dz20*dy01 - dy20*dz01, dx20*dz01 - dz20*dx01)
        rx = (d20[:, 2] * d01[:, 1] - d20[:, 1] * d01[:, 2]).astype(F32)
        ry = (d20[:, 0] * d01[:, 2] - d20[:, 2] * d01[:, 0]).astype(F32)
        dzdx = np.abs((rx * ooa).astype(F32))
        dzdy = np.abs((ry * ooa).astype(F32))
        # (an unordered compare: a NaN dzdx is kept)
        biggest = np.where(~(dzdx <= dzdy), dzdx, dzdy)
        mult = (biggest * off.scale).astype(F32)
        if off.float_depth:
            az = np.abs(p[:, :, 2])
            maxz = np.maximum(np.maximum(az[:, 0], az[:, 1]), az[:, 2])
            zoffset = (_exponent_units(maxz) * off.units).astype(F32) + mult
        else:
            zoffset = off.units + mult
        return _clamp_offset(zoffset.astype(F32), off.clamp, True)


def pipeline_offset(win3: np.ndarray, det: np.ndarray, off: PolygonOffset) -> np.ndarray:
    """The draw module's offset stage (draw_pipe_offset.c): the offset of
    each triangle's depth from its window coordinates ``win3`` (M, 3, 3) as
    assembled and its determinant ``det`` (M,)."""
    v = win3.astype(F32, copy=False)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        inv_det = (F32(1.0) / det).astype(F32)
        e = (v[:, 0] - v[:, 2]).astype(F32)
        f = (v[:, 1] - v[:, 2]).astype(F32)
        a = (e[:, 1] * f[:, 2] - e[:, 2] * f[:, 1]).astype(F32)
        b = (e[:, 2] * f[:, 0] - e[:, 0] * f[:, 2]).astype(F32)
        dzdx = np.abs((a * inv_det).astype(F32))
        dzdy = np.abs((b * inv_det).astype(F32))
        mult = (np.where(dzdx > dzdy, dzdx, dzdy) * off.scale).astype(F32)
        if off.float_depth:
            z0, z1, z2 = np.abs(v[:, 0, 2]), np.abs(v[:, 1, 2]), np.abs(v[:, 2, 2])
            m01 = np.where(z0 > z1, z0, z1)
            maxz = np.where(m01 > z2, m01, z2)
            zoffset = (off.units * _exponent_units(maxz)).astype(F32) + mult
        else:
            zoffset = off.units + mult
        return _clamp_offset(zoffset.astype(F32), off.clamp, False)


def saturate(z: np.ndarray) -> np.ndarray:
    """SATURATE: values below 0 become 0, above 1 become 1 (NaN stays)."""
    return np.where(z < 0, F32(0.0), np.where(z > 1, F32(1.0), z)).astype(F32)


def determinant(win: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """draw_pipe_cull.c's det = cross(v0 - v2, v1 - v2).z in float32 (window
    coordinates; positive for clockwise on screen, rows growing downward)."""
    w = win.astype(F32, copy=False)
    v0, v1, v2 = w[tris[:, 0]], w[tris[:, 1]], w[tris[:, 2]]
    with np.errstate(over="ignore", invalid="ignore"):
        ex = (v0[:, 0] - v2[:, 0]).astype(F32)
        ey = (v0[:, 1] - v2[:, 1]).astype(F32)
        fx = (v1[:, 0] - v2[:, 0]).astype(F32)
        fy = (v1[:, 1] - v2[:, 1]).astype(F32)
        return (ex * fy - ey * fx).astype(F32)


def fill_modes(rast: object) -> tuple[PolygonMode, PolygonMode]:
    """(mode of counter-clockwise, of clockwise triangles), by the
    determinant's sign as draw_pipe_unfilled.c picks them."""
    front, back = PolygonMode(rast.fill_front), PolygonMode(rast.fill_back)
    return (front, back) if rast.front_ccw else (back, front)


@dataclass
class PolygonPieces:
    """What the draw module's stages make of a pass's clipped triangles:
    every triangle kept gets three vertices of its own (``win``, ``oow``,
    ``pos``, ``attrs``: rows 3t, 3t+1, 3t+2), and ``runs`` lists, in
    submission order, runs of one kind of primitive over them -- ("tri",
    triangle numbers), ("line", (L, 2) vertex rows, their triangle numbers,
    whether each starts a new stipple pattern), ("point", vertex rows, their
    triangle numbers).  ``prim_ids[t]`` is triangle t's primitive id."""

    win: np.ndarray
    oow: np.ndarray
    pos: np.ndarray
    attrs: np.ndarray
    prim_ids: np.ndarray
    runs: list


def pipeline_triangles(
    pos: np.ndarray,
    win: np.ndarray,
    oow: np.ndarray,
    attrs: np.ndarray,
    tris: np.ndarray,
    prim_ids: np.ndarray,
    flags: np.ndarray | None,
    vertex_edges: np.ndarray | None,
    *,
    rast: object,
    cull_front: bool,
    cull_back: bool,
    offset: PolygonOffset | None,
    twoside: tuple[tuple[int, ...], tuple[int, ...]] | None,
    flat_slots: list[int],
) -> PolygonPieces:
    """The draw module's cull, twoside, offset, flatshade and unfilled
    stages over clipped triangles (window coordinates ``win``), in that
    order (draw_pipe_validate.c)."""
    det = determinant(win, tris)
    ccw = det < 0
    front = np.where(det != 0, ccw == bool(rast.front_ccw), False)  # (zero area: back)
    keep = np.ones(tris.shape[0], bool)
    if cull_front:
        keep &= ~front
    if cull_back:
        keep &= front
    if not keep.all():
        tris, prim_ids, det = tris[keep], prim_ids[keep], det[keep]
        if flags is not None:
            flags = flags[keep]
    m = tris.shape[0]
    v = tris.reshape(-1)
    win3 = win[v].reshape(m, 3, 3).astype(F32, copy=True)
    attrs3 = attrs[v].reshape(m, 3, *attrs.shape[1:]).copy()
    if twoside is not None and m:
        back = det * F32(-1.0 if rast.front_ccw else 1.0) < 0
        if back.any():
            fs, bs = list(twoside[0]), list(twoside[1])
            attrs3[np.ix_(back, [0, 1, 2], fs)] = attrs3[np.ix_(back, [0, 1, 2], bs)]
    ccw_mode, cw_mode = fill_modes(rast)
    mode = np.where(det >= 0, int(cw_mode), int(ccw_mode))
    if offset is not None and m:
        # draw_pipe_offset.c decides once per draw (at its first triangle
        # after a flush, and llvmpipe flushes the draw module after every
        # draw): the first triangle's fill mode says whether the draw's
        # triangles are offset, whatever their own modes
        enabled = {
            int(PolygonMode.FILL): offset.tri,
            int(PolygonMode.LINE): offset.line,
            int(PolygonMode.POINT): offset.point,
        }
        draw = prim_ids.astype(np.int64) >> 32
        firsts = np.flatnonzero(np.r_[True, draw[1:] != draw[:-1]])
        decided = np.array([enabled[int(mode[i])] for i in firsts], bool)
        on = np.repeat(decided, np.diff(np.r_[firsts, m]))
        if on.any():
            zo = pipeline_offset(win3[on], det[on], offset)
            win3[on, :, 2] = saturate((win3[on, :, 2] + zo[:, None]).astype(F32))
    unfilled = mode != int(PolygonMode.FILL)
    if flat_slots and unfilled.any():  # the provoking vertex's flat inputs on all three
        pv = 0 if rast.flatshade_first else 2
        fl = list(flat_slots)
        attrs3[np.ix_(unfilled, [0, 1, 2], fl)] = attrs3[unfilled][:, pv : pv + 1][:, :, fl]
    if flags is None:
        flags = np.full(m, EDGES_ALL | RESET, np.int64)
    ve = (
        np.ones((m, 3), bool)
        if vertex_edges is None
        else np.asarray(vertex_edges, bool)[v].reshape(m, 3)
    )
    runs: list = []
    if m:
        cuts = np.flatnonzero(mode[1:] != mode[:-1]) + 1
        for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), m]):
            t = np.arange(a, b, dtype=np.int64)
            kind = int(mode[a])
            if kind == int(PolygonMode.FILL):
                runs.append(("tri", t))
            elif kind == int(PolygonMode.LINE):
                # draw_pipe_unfilled.c lines(): v2->v0, v0->v1, v1->v2, each
                # where the triangle's flag and its first vertex's are set
                f = flags[t]
                starts = np.stack([(f & EDGE2) != 0, (f & EDGE0) != 0, (f & EDGE1) != 0], 1)
                starts &= ve[t][:, [2, 0, 1]]
                segs = np.array([[2, 0], [0, 1], [1, 2]], np.int64)
                ti, ei = np.nonzero(starts)
                lines = 3 * t[ti][:, None] + segs[ei]
                first = np.zeros(ti.size, bool)
                if ti.size:  # each triangle's first line resets the stipple pattern
                    first[0] = True
                    first[1:] = ti[1:] != ti[:-1]
                    first &= (f[ti] & RESET) != 0
                runs.append(("line", lines, t[ti], first))
            else:
                f = flags[t]
                on = np.stack([(f & EDGE0) != 0, (f & EDGE1) != 0, (f & EDGE2) != 0], 1)
                on &= ve[t]
                ti, vi = np.nonzero(on)
                runs.append(("point", 3 * t[ti] + vi, t[ti]))
    return PolygonPieces(
        win3.reshape(-1, 3),
        oow[v],
        pos[v],
        attrs3.reshape(-1, *attrs.shape[1:]),
        prim_ids,
        runs,
    )
