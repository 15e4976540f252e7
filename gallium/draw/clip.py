"""Clipping in homogeneous clip space, as Mesa's draw module does it for llvmpipe.

Each vertex gets a clip mask: bit i is set when it lies outside plane i, the
planes being, in order, right ``w - x``, left ``x + w``, top ``w - y``, bottom
``y + w`` (when ``clip_xy``), near ``z + w`` (``z`` with ``clip_halfz``) and far
``w - z`` (when depth clipping is on), then the enabled user clip planes.
A triangle whose vertices' masks are all zero passes untouched; one whose
masks share a bit is dropped; the rest are clipped plane by plane
(Sutherland-Hodgman), in plane order, and the polygon is emitted as a fan
around its first vertex, which becomes every fan triangle's provoking vertex
(flat-shaded inputs are copied to it from the original provoking vertex).

Arithmetic matches draw_pipe_clip.c so that llvmpipe's coverage is
reproduced: distances are float32 dot products; a new vertex is interpolated
from the endpoint nearer the plane with ``t = d / (d - d_other)``;
``out + t*(in - out)`` per component; its window position is
``x * (1/w) * scale + translate`` in plain float32 (unlike unclipped vertices,
whose viewport transform is fused).  Triangles with NaN or infinite
distances are dropped.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

F32 = np.float32

FRUSTUM = np.array(
    [
        [-1, 0, 0, 1],  # right
        [1, 0, 0, 1],  # left
        [0, -1, 0, 1],  # top
        [0, 1, 0, 1],  # bottom
        [0, 0, 1, 1],  # near
        [0, 0, -1, 1],  # far
    ],
    dtype=F32,
)


@dataclass
class ClippedGeometry:
    """Vertices and triangles after clipping (new vertices appended)."""

    pos: np.ndarray  # (V', 4) clip coordinates
    win: np.ndarray  # (V', 3) window coordinates
    oow: np.ndarray  # (V',) 1 / w
    attrs: np.ndarray  # (V', K, 4)
    tris: np.ndarray  # (M', 3)
    prim_ids: np.ndarray  # (M',)
    # with edge flags (polygons drawn as lines or points): each triangle's
    # flags (gallium/draw/polygon.py EDGE0..2, RESET) and each vertex's own
    # edge flag, as draw_pipe_clip.c carries them through clipping
    flags: np.ndarray | None = None  # (M',) int64
    vertex_edges: np.ndarray | None = None  # (V',) bool


def plane_table(
    clip_xy: bool, clip_z: bool | tuple[bool, bool], clip_halfz: bool, user: list
) -> tuple[np.ndarray, list[int]]:
    """(planes (P, 4) float32, active plane indices) in draw's bit order;
    ``clip_z`` one flag for both depth planes or (near, far)."""
    planes = FRUSTUM.copy()
    if clip_halfz:
        planes[4] = (0, 0, 1, 0)
    table = np.concatenate([planes, np.asarray(user, F32).reshape(-1, 4)]) if user else planes
    active = []
    if clip_xy:
        active += [0, 1, 2, 3]
    near, far = clip_z if isinstance(clip_z, tuple) else (clip_z, clip_z)
    if near:
        active.append(4)
    if far:
        active.append(5)
    active += list(range(6, 6 + len(user)))
    return table, active


def _dot4(v: np.ndarray, p: np.ndarray) -> np.ndarray:
    """float32 ``v.x*p.x + v.y*p.y + v.z*p.z + v.w*p.w``, summed left to right."""
    v = v.astype(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        return _dot4_f32(v, p)


def plane_distance(v: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Signed distances of clip-space points ``v`` (N, 4) from plane ``p``
    (negative: outside), the same float32 operations the triangle clipper uses."""
    return _dot4(v, p)


def _dot4_f32(v: np.ndarray, p: np.ndarray) -> np.ndarray:
    """float32 operands: each product and each sum rounds to float32."""
    p = np.asarray(p, F32)
    s = v[..., 0] * p[0]
    s += v[..., 1] * p[1]
    s += v[..., 2] * p[2]
    s += v[..., 3] * p[3]
    return s


def clip_triangles(
    pos: np.ndarray,
    win: np.ndarray,
    oow: np.ndarray,
    attrs: np.ndarray,
    tris: np.ndarray,
    prim_ids: np.ndarray,
    *,
    planes: np.ndarray,
    active: list[int],
    interp: list[str],
    flatshade_first: bool,
    scale: tuple[float, float, float],
    translate: tuple[float, float, float],
    flags: np.ndarray | None = None,
    vertex_edges: np.ndarray | None = None,
) -> ClippedGeometry:
    """Clip ``tris`` (indices into the vertex arrays) against the active planes.

    With ``flags`` (each triangle's edge flags) and ``vertex_edges`` (each
    vertex's edge flag) the result carries both through clipping, as
    draw_pipe_clip.c does: an edge cut by a plane keeps its flag, the new
    edge along a frustum plane takes the cut edge's flag and its new
    vertex none (never drawn: a polygon in line mode shows no frustum
    edge), along a user plane both are set; the fan's triangles are flagged
    as emit_poly flags them."""
    m = tris.shape[0]
    if m == 0 or not active:
        return ClippedGeometry(pos, win, oow, attrs, tris, prim_ids, flags, vertex_edges)
    pos = pos.astype(F32, copy=False)
    if flags is not None:
        return _clip_with_edges(
            pos, win, oow, attrs, tris, prim_ids, flags, vertex_edges, planes, active, interp,
            flatshade_first, scale, translate,
        )  # fmt: skip
    if m <= FEW_TRIANGLES and pos.shape[0] <= FEW_VERTICES:
        return _clip_few(
            pos, win, oow, attrs, tris, prim_ids, planes, active, interp, flatshade_first,
            scale, translate,
        )  # fmt: skip
    with np.errstate(invalid="ignore", over="ignore"):
        # every active plane at once: the same float32 operations as _dot4
        # (products and left-to-right sums), on contiguous coordinate columns
        cols = np.ascontiguousarray(pos.T)  # (4, V)
        p = planes[list(active)].astype(F32, copy=False)[:, :, None]  # (A, 4, 1)
        dist = p[:, 0] * cols[0]  # (A, V)
        for k in (1, 2, 3):
            dist += p[:, k] * cols[k]
    outside = dist < 0
    bits = np.zeros(pos.shape[0], np.int64)
    for j in range(len(active)):
        bits |= outside[j].astype(np.int64) << j
    t0, t1, t2 = tris[:, 0], tris[:, 1], tris[:, 2]
    tb0, tb1, tb2 = bits[t0], bits[t1], bits[t2]
    or_mask = tb0 | tb1 | tb2
    and_mask = tb0 & tb1 & tb2
    fv = np.isfinite(cols).all(axis=0)
    finite = fv[t0] & fv[t1] & fv[t2]
    plain = (or_mask == 0) & finite
    needs = (or_mask != 0) & (and_mask == 0) & finite
    if not needs.any():
        keep = plain
        return ClippedGeometry(pos, win, oow, attrs, tris[keep], prim_ids[keep])

    return _clip_polygons(
        pos,
        win,
        oow,
        attrs,
        tris,
        prim_ids,
        plain,
        needs,
        or_mask,
        planes=planes,
        active=active,
        interp=interp,
        flatshade_first=flatshade_first,
        scale=scale,
        translate=translate,
    )


class _VertexTable:
    """The vertex arrays plus the vertices clipping creates, appended in chunks."""

    def __init__(self, pos, win, oow, attrs):
        self.pos, self.win, self.oow, self.attrs = pos, win, oow, attrs
        self.base = pos.shape[0]

    def append(self, pos, win, oow, attrs) -> np.ndarray:
        first = self.pos.shape[0]
        self.pos = np.concatenate([self.pos, pos])
        self.win = np.concatenate([self.win, win])
        self.oow = np.concatenate([self.oow, oow])
        self.attrs = np.concatenate([self.attrs, attrs])
        return np.arange(first, first + pos.shape[0])


def slots_index(idx: list[int]) -> slice | list[int]:
    """Attribute slots as a slice when consecutive (basic indexing is much
    cheaper than a list of indices on small arrays)."""
    if idx == list(range(idx[0], idx[-1] + 1)):
        return slice(idx[0], idx[-1] + 1)
    return idx


def _interp(table: _VertexTable, t, out_i, in_i, lin, persp, scale, translate):
    """LINTERP(t, out, in) = ``out + t*(in - out)`` for many new vertices at once.

    Every operation is a float32 operation, as in draw_pipe_clip.c's interp();
    ``linear`` attributes get the screen-space ``t`` of the first of x, y that
    differs between the endpoints (draw's noperspective correction).
    """
    t = t.astype(F32)
    p_out, p_in = table.pos[out_i], table.pos[in_i]
    tc = t[:, None]
    pos = p_out + tc * (p_in - p_out)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w_oow = F32(1.0) / pos[:, 3]
        win = (pos[:, :3] * w_oow[:, None]) * scale + translate
        attr = table.attrs[out_i].copy()
        a_out, a_in = table.attrs[out_i], table.attrs[in_i]
        if persp:
            ps = slots_index(persp)
            attr[:, ps] = a_out[:, ps] + tc[:, :, None] * (a_in[:, ps] - a_out[:, ps])
        if lin:
            t_np = t.copy()
            done = np.zeros(t.shape[0], bool)
            for k in range(2):
                pick = ~done & (p_in[:, k] != p_out[:, k])
                if pick.any():
                    in_c = p_in[pick, k] / p_in[pick, 3]
                    out_c = p_out[pick, k] / p_out[pick, 3]
                    dst_c = pos[pick, k] / pos[pick, 3]
                    t_np[pick] = (dst_c - out_c) / (in_c - out_c)
                done |= pick
            tn = t_np[:, None, None]
            ls = slots_index(lin)
            attr[:, ls] = a_out[:, ls] + tn * (a_in[:, ls] - a_out[:, ls])
    return pos, win.astype(F32), w_oow.astype(F32), attr


def _plane_loop(table, tris, src, or_mask, planes, active, lin, persp, scale_v, translate_v):
    """Sutherland-Hodgman, plane by plane, on every polygon at once (numpy):
    returns the polygons as padded rows of vertex ids, their vertex counts and
    which are still alive."""
    poly = tris[src].astype(np.int64)  # (S, MAXV)
    count = np.full(src.shape[0], 3, np.int64)
    masks = or_mask[src]
    alive = np.ones(src.shape[0], bool)
    for j, plane in enumerate(active):
        rows = np.nonzero(alive & ((masks >> j) & 1).astype(bool))[0]
        if rows.size == 0:
            continue
        vid = poly[rows]  # (R, MAXV)
        n = count[rows]
        width = vid.shape[1]
        col = np.arange(width)
        valid = col[None, :] < n[:, None]
        d = _dot4(table.pos[vid], planes[plane])  # (R, MAXV)
        bad = ~(np.isfinite(d) | ~valid).all(axis=1)
        # the edge from column k goes to column k+1, wrapping at the row's count
        nxt_col = np.where(col[None, :] + 1 < n[:, None], col[None, :] + 1, 0)
        vid_n = np.take_along_axis(vid, nxt_col, axis=1)
        d_n = np.take_along_axis(d, nxt_col, axis=1)
        inside = d >= 0
        cross = valid & (inside != (d_n >= 0))
        keep = valid & inside
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            denom = d_n - d
            # draw interpolates from the endpoint nearer the plane
            going_out = inside
            base_is_next = np.where(going_out, -d_n < d, ~(-d < d_n))
            t = np.where(base_is_next, d_n / denom, -d / denom)
        r_idx, k_idx = np.nonzero(cross)
        out_i = np.where(base_is_next[r_idx, k_idx], vid_n[r_idx, k_idx], vid[r_idx, k_idx])
        in_i = np.where(base_is_next[r_idx, k_idx], vid[r_idx, k_idx], vid_n[r_idx, k_idx])
        new_ids = table.append(
            *_interp(table, t[r_idx, k_idx], out_i, in_i, lin, persp, scale_v, translate_v)
        )
        # lay out each row: per column, the kept vertex then the new one
        emit = keep.astype(np.int64) + cross.astype(np.int64)
        new_n = emit.sum(axis=1)
        start = np.cumsum(emit, axis=1) - emit
        out = np.zeros((rows.size, max(int(new_n.max()), 3)), np.int64)
        kr, kk = np.nonzero(keep)
        out[kr, start[kr, kk]] = vid[kr, kk]
        out[r_idx, start[r_idx, k_idx] + keep[r_idx, k_idx]] = new_ids
        if out.shape[1] > poly.shape[1]:  # widen (np.pad costs ~20 us a call)
            wider = np.zeros((poly.shape[0], out.shape[1]), poly.dtype)
            wider[:, : poly.shape[1]] = poly
            poly = wider
        poly[rows] = 0
        poly[rows, : out.shape[1]] = out
        count[rows] = new_n
        alive[rows] &= ~bad & (new_n >= 3)
    return poly, count, alive


# Up to this many polygons to clip, the per-plane bookkeeping runs in Python
# lists (_plane_loop_small): a full-screen triangle's two planes cost ~40 numpy
# calls each in _plane_loop.  Same arithmetic, same vertex order.
SMALL_POLYGONS = 4


def _plane_loop_small(table, tris, src, or_mask, planes, active, lin, persp, scale_v, translate_v):
    """:func:`_plane_loop` for a few polygons: the distances and the new
    vertices are computed by the same float32 functions (``_dot4``,
    ``_interp``), once per plane for every polygon; only the walk around
    each polygon is done element by element."""
    polys = [[int(v) for v in tris[i]] for i in src]
    masks = [int(or_mask[i]) for i in src]
    alive = [True] * len(polys)
    for j, plane in enumerate(active):
        rows = [r for r in range(len(polys)) if alive[r] and (masks[r] >> j) & 1]
        if not rows:
            continue
        ids = [v for r in rows for v in polys[r]]
        d_all = _dot4(table.pos[ids], planes[plane])
        t_new, out_new, in_new, layouts = [], [], [], []
        at = 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for r in rows:
                vid = polys[r]
                n = len(vid)
                d = d_all[at : at + n]
                at += n
                bad = not bool(np.isfinite(d).all())
                out = []
                for k in range(n):
                    kn = k + 1 if k + 1 < n else 0
                    dk, dn = d[k], d[kn]
                    inside = bool(dk >= 0)
                    if inside:
                        out.append(vid[k])
                    if inside != bool(dn >= 0):
                        denom = dn - dk
                        # draw interpolates from the endpoint nearer the plane
                        base_is_next = bool(-dn < dk) if inside else not bool(-dk < dn)
                        t_new.append(dn / denom if base_is_next else -dk / denom)
                        out_new.append(vid[kn] if base_is_next else vid[k])
                        in_new.append(vid[k] if base_is_next else vid[kn])
                        out.append(-len(t_new))  # the len(t_new)-th new vertex
                layouts.append((r, out, bad))
        if t_new:
            new_ids = table.append(
                *_interp(
                    table,
                    np.array(t_new, F32),
                    np.array(out_new, np.int64),
                    np.array(in_new, np.int64),
                    lin,
                    persp,
                    scale_v,
                    translate_v,
                )
            )
        for r, out, bad in layouts:
            polys[r] = [v if v >= 0 else int(new_ids[-v - 1]) for v in out]
            alive[r] = alive[r] and not bad and len(polys[r]) >= 3
    width = max(3, max((len(p) for p in polys), default=3))
    poly = np.zeros((len(polys), width), np.int64)
    for r, p in enumerate(polys):
        poly[r, : len(p)] = p
    count = np.array([len(p) for p in polys], np.int64)
    return poly, count, np.array(alive, bool)


def _clip_polygons(
    pos,
    win,
    oow,
    attrs,
    tris,
    prim_ids,
    plain,
    needs,
    or_mask,
    *,
    planes,
    active,
    interp,
    flatshade_first,
    scale,
    translate,
) -> ClippedGeometry:
    """Sutherland-Hodgman on every triangle that needs it at once.

    Polygons are rows of vertex indices (padded, with a count per row); each
    plane of a polygon's original clip mask is applied in order, as draw does.
    For an edge ``prev -> v`` the output gets ``prev`` when it is inside
    (distance >= 0) and a new vertex when exactly one end is outside, so the
    rows come out in the same order as draw's per-polygon loop.
    """
    flat = [i for i, m in enumerate(interp) if m == "constant"]
    lin = [i for i, m in enumerate(interp) if m == "linear"]
    persp = [i for i, m in enumerate(interp) if m == "perspective"]
    scale_v = np.asarray(scale, F32)
    translate_v = np.asarray(translate, F32)
    table = _VertexTable(pos, win, oow, attrs)

    src = np.nonzero(needs)[0]  # original triangle of each polygon
    loop = _plane_loop_small if src.size <= SMALL_POLYGONS else _plane_loop
    poly, count, alive = loop(
        table, tris, src, or_mask, planes, active, lin, persp, scale_v, translate_v
    )
    alive &= count >= 3

    live = np.nonzero(alive)[0]
    poly, count, src = poly[live], count[live], src[live]
    provoking = tris[src, 0 if flatshade_first else 2]
    if flat and live.size:
        first = poly[:, 0]
        fix = first != provoking
        if fix.any():
            rows = np.nonzero(fix)[0]
            old = first[rows]
            a = table.attrs[old].copy()
            a[:, flat] = table.attrs[provoking[rows]][:, flat]
            # a fresh vertex, so that other triangles sharing the old one keep theirs
            poly[rows, 0] = table.append(table.pos[old], table.win[old], table.oow[old], a)

    # fans: (0, i-1, i) with the first vertex provoking, or (i-1, i, 0)
    width = poly.shape[1]
    fr, fi = np.nonzero(np.arange(2, width)[None, :] < count[:, None])
    fi = fi + 2
    v0, va, vb = poly[fr, 0], poly[fr, fi - 1], poly[fr, fi]
    fan = np.stack([v0, va, vb] if flatshade_first else [va, vb, v0], axis=1)

    # drop the created vertices no fan uses, renumbering the rest
    base = table.base
    created = fan[fan >= base]
    if created.size <= 64:  # np.unique costs ~40 us on a handful of ids
        used_new = np.array(sorted(set(created.tolist())), np.int64)
    else:
        used_new = np.unique(created)
    remap = np.full(table.pos.shape[0] - base, -1, np.int64)
    remap[used_new - base] = np.arange(used_new.size) + base
    fan = np.where(fan >= base, remap[np.maximum(fan - base, 0)], fan)
    sel = used_new

    plain_idx = np.nonzero(plain)[0]
    keys = np.concatenate([plain_idx, src[fr]])
    order = np.argsort(keys, kind="stable")
    return ClippedGeometry(
        np.concatenate([pos, table.pos[sel]]),
        np.concatenate([win, table.win[sel]]),
        np.concatenate([oow, table.oow[sel]]),
        np.concatenate([attrs, table.attrs[sel]]),
        np.concatenate([tris[plain_idx], fan])[order],
        np.concatenate([prim_ids[plain_idx], prim_ids[src[fr]]])[order],
    )


# ----------------------------------------------------------------------------
# a few triangles: Python floats
# ----------------------------------------------------------------------------

# Up to this many triangles over at most FEW_VERTICES vertices (a full-screen
# triangle or quad), clip_triangles runs on Python floats: the same float32
# operations in the same order, each result rounded to float32 (for +, -, *
# and / of float32 operands, rounding the double result to float32 is exact
# rounding), where the numpy path costs ~60-80 calls of a few microseconds.
FEW_TRIANGLES = 4
FEW_VERTICES = 12

_F32_NATIVE = struct.Struct("f")  # native: a C cast, overflow gives inf
_pack, _unpack = _F32_NATIVE.pack, _F32_NATIVE.unpack


def _r(x: float) -> float:
    """``x`` rounded to float32 (as numpy rounds a float32 operation's result)."""
    return _unpack(_pack(x))[0]


_DEFAULT_NAN = -math.nan  # what x86 makes of 0/0 (sign bit set), as numpy's division does


def _div(a: float, b: float) -> float:
    """float32 ``a / b`` with IEEE results for a zero divisor (numpy's, errors ignored)."""
    if b == 0.0:
        if a != a:
            return a
        if a == 0.0:
            return _DEFAULT_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return _r(a / b)


_STRUCTS: dict[int, struct.Struct] = {}


def _rl(values: list) -> list:
    """Each of ``values`` rounded to float32: independent results of one step
    rounded together (one struct call instead of one per value)."""
    n = len(values)
    st = _STRUCTS.get(n)
    if st is None:
        st = _STRUCTS[n] = struct.Struct(f"{n}f")
    return list(st.unpack(st.pack(*values)))


def _dots_few(points: list, planes: list) -> list:
    """:func:`_dot4` of every point against every plane (a list per plane):
    the products, then the left-to-right sums, each rounded to float32."""
    prods = _rl([v[c] * p[c] for p in planes for v in points for c in range(4)])
    s = prods[0::4]
    for c in (1, 2, 3):
        s = _rl([a + b for a, b in zip(s, prods[c::4])])
    n = len(points)
    return [s[j * n : (j + 1) * n] for j in range(len(planes))]


def _lerps_few(t: list, a: list, b: list) -> list:
    """float32 ``a + t*(b - a)`` (LINTERP) per value, ``t`` per value."""
    d = _rl([y - x for x, y in zip(a, b)])
    m = _rl([u * x for u, x in zip(t, d)])
    return _rl([x + y for x, y in zip(a, m)])


# the active planes' float32 coefficients as lists, per plane table (draws
# clip against the same few tables; read-only lists)
_PLANE_LISTS: dict[tuple, list] = {}

# Which of the frustum's plane sets a table's active planes are (per plane
# table): 0 none of them (user planes, a partial set), 1 x and y (-w <= x, y
# <= w), 2 and -w <= z <= w, 3 and 0 <= z <= w (clip_halfz).  A vertex's
# distance from each of those planes sums at most two non-zero products, each
# exact (w and +-x, say), and rounding keeps a sum's sign (and gives 0 only
# for 0; the products by 0 add signed zeros, which change nothing), so the sign of
# the float32 distance the clipper computes is that of the exact one: the
# vertex is inside exactly when the comparisons hold.
_FRUSTUM_MODES: dict[tuple, int] = {}


def _frustum_mode(planes: np.ndarray, active: list[int], key: tuple) -> int:
    mode = _FRUSTUM_MODES.get(key)
    if mode is None:
        rows = planes.astype(F32, copy=False).tolist()
        mode = 0
        if active[:4] == [0, 1, 2, 3] and rows[:4] == FRUSTUM[:4].tolist():
            if len(active) == 4:
                mode = 1
            elif active == [0, 1, 2, 3, 4, 5] and rows[5] == FRUSTUM[5].tolist():
                mode = {(0.0, 0.0, 1.0, 1.0): 2, (0.0, 0.0, 1.0, 0.0): 3}.get(tuple(rows[4]), 0)
        if len(_FRUSTUM_MODES) >= 64:
            _FRUSTUM_MODES.clear()
        _FRUSTUM_MODES[key] = mode
    return mode


def _inside(V: list, mode: int) -> bool:
    """Whether every vertex of ``V`` (lists x, y, z, w) is finite and inside
    the planes of frustum mode ``mode`` (1-3, see _FRUSTUM_MODES): then no
    triangle over them is clipped or dropped.  Comparisons only: ~2 us for a
    triangle instead of the clipper's distances (~25 us)."""
    isfinite = math.isfinite
    for x, y, z, w in V:
        if not (-w <= x <= w and -w <= y <= w):
            return False
        if mode == 2 and not -w <= z <= w:
            return False
        if mode == 3 and not 0.0 <= z <= w:
            return False
        if not (isfinite(x) and isfinite(y) and isfinite(z) and isfinite(w)):
            return False
    return True


def _clip_few(
    pos, win, oow, attrs, tris, prim_ids, planes, active, interp, flatshade_first, scale, translate
) -> ClippedGeometry:
    """clip_triangles for a few triangles (see FEW_TRIANGLES): the clip masks,
    the walk around each polygon plane by plane, the new vertices, the fans
    and the renumbering of :func:`_clip_polygons`, vertex by vertex."""
    key = (planes.tobytes(), tuple(active))
    V = pos.tolist()
    mode = _frustum_mode(planes, active, key)
    if mode and _inside(V, mode):  # nothing to clip or drop: what the walk below returns then
        return ClippedGeometry(pos, win, oow, attrs, tris.copy(), prim_ids.copy())
    P = _PLANE_LISTS.get(key)
    if P is None:
        if len(_PLANE_LISTS) >= 64:
            _PLANE_LISTS.clear()
        P = _PLANE_LISTS[key] = planes[list(active)].astype(F32, copy=False).tolist()
    nv = len(V)
    dist = _dots_few(V, P)  # per active plane, per vertex
    bits = [0] * nv
    for j, row in enumerate(dist):
        for i, d in enumerate(row):
            if d < 0:
                bits[i] |= 1 << j
    fin = [all(map(math.isfinite, v)) for v in V]
    T = tris.tolist()
    plain, src, masks = [], [], []
    for i, (a, b, c) in enumerate(T):
        o = bits[a] | bits[b] | bits[c]
        ok = fin[a] and fin[b] and fin[c]
        plain.append(o == 0 and ok)
        if o and not bits[a] & bits[b] & bits[c] and ok:
            src.append(i)
            masks.append(o)
    if not src:
        keep = np.array(plain, bool)
        return ClippedGeometry(pos, win, oow, attrs, tris[keep], prim_ids[keep])

    flat = [i for i, m in enumerate(interp) if m == "constant"]
    lin = [i for i, m in enumerate(interp) if m == "linear"]
    persp = [i for i, m in enumerate(interp) if m == "perspective"]
    scale_v = np.asarray(scale, F32).tolist()
    trans_v = np.asarray(translate, F32).tolist()
    W, O, A = win.tolist(), oow.tolist(), attrs.tolist()
    # vertices clipping creates: id nv + k is new_*[k]
    new_pos: list = []
    new_win: list = []
    new_oow: list = []
    new_attr: list = []

    def pos_of(v):
        return V[v] if v < nv else new_pos[v - nv]

    def attr_of(v):
        return A[v] if v < nv else new_attr[v - nv]

    def add_all(pending: list) -> None:
        """_interp's new vertices ``out + t*(in - out)`` for one plane's
        (t, out, in) triples, in order (each step rounded for all at once)."""
        po = [pos_of(o) for _, o, _ in pending]
        pi = [pos_of(i) for _, _, i in pending]
        # the position and the perspective inputs interpolate with the clip t:
        # one lerp for all of them (elementwise: the same roundings)
        m = 4 + 4 * len(persp)
        a_all: list = []
        b_all: list = []
        for (_, o, i), a, b in zip(pending, po, pi):
            a_all += a
            b_all += b
            if persp:
                ao, ai = attr_of(o), attr_of(i)
                for k in persp:
                    a_all += ao[k]
                    b_all += ai[k]
        vals = _lerps_few([t for t, _, _ in pending for _ in range(m)], a_all, b_all)
        ps = [vals[m * j : m * j + 4] for j in range(len(pending))]
        w_oow = [_div(1.0, p[3]) for p in ps]
        w = _rl([p[c] * o for p, o in zip(ps, w_oow) for c in range(3)])
        w = _rl([w[3 * i + c] * scale_v[c] for i in range(len(ps)) for c in range(3)])
        w = _rl([w[3 * i + c] + trans_v[c] for i in range(len(ps)) for c in range(3)])
        attrs_new = [[list(slot) for slot in attr_of(o)] for _, o, _ in pending]
        for j, attr in enumerate(attrs_new):
            for q, k in enumerate(persp):
                attr[k] = vals[m * j + 4 + 4 * q : m * j + 8 + 4 * q]
        if lin:
            ts = []
            for (t, _, _), a, b, p in zip(pending, po, pi, ps):
                for k in (0, 1):  # the screen-space t of the first of x, y that differs
                    if b[k] != a[k]:
                        in_c, out_c = _div(b[k], b[3]), _div(a[k], a[3])
                        dst_c = _div(p[k], p[3])
                        t = _div(_r(dst_c - out_c), _r(in_c - out_c))
                        break
                ts.append(t)
            n4 = 4 * len(lin)
            vals = _lerps_few(
                [t for t in ts for _ in range(n4)],
                [x for _, o, _ in pending for k in lin for x in attr_of(o)[k]],
                [x for _, _, i in pending for k in lin for x in attr_of(i)[k]],
            )
            for j, attr in enumerate(attrs_new):
                for q, k in enumerate(lin):
                    attr[k] = vals[j * n4 + 4 * q : j * n4 + 4 * q + 4]
        new_pos.extend(ps)
        new_win.extend(w[3 * i : 3 * i + 3] for i in range(len(ps)))
        new_oow.extend(w_oow)
        new_attr.extend(attrs_new)

    polys = [list(T[i]) for i in src]
    alive = [True] * len(polys)
    for j, plane in enumerate(P):
        # distances of this plane's polygons' vertices: the original ones
        # known, those earlier planes created computed together
        dj = None
        pending: list = []  # (t, out, in) of the vertices this plane creates
        for r in range(len(polys)):
            if not (alive[r] and masks[r] >> j & 1):
                continue
            if dj is None:
                dj = dist[j] + (_dots_few(new_pos, [plane])[0] if new_pos else [])
            vid = polys[r]
            n = len(vid)
            d = [dj[v] for v in vid]
            bad = not all(map(math.isfinite, d))
            out = []
            for k in range(n):
                kn = k + 1 if k + 1 < n else 0
                dk, dn = d[k], d[kn]
                inside = dk >= 0
                if inside:
                    out.append(vid[k])
                if inside != (dn >= 0):
                    denom = _r(dn - dk)
                    # draw interpolates from the endpoint nearer the plane
                    base_is_next = (-dn < dk) if inside else not (-dk < dn)
                    t = _div(dn, denom) if base_is_next else _div(-dk, denom)
                    out_v, in_v = (vid[kn], vid[k]) if base_is_next else (vid[k], vid[kn])
                    pending.append((t, out_v, in_v))
                    out.append(nv + len(new_pos) + len(pending) - 1)
            polys[r] = out
            alive[r] = not bad and len(out) >= 3
        if pending:
            add_all(pending)
    live = [r for r in range(len(polys)) if alive[r]]
    if flat:
        for r in live:
            first = polys[r][0]
            provoking = T[src[r]][0 if flatshade_first else 2]
            if first != provoking:
                a = [list(slot) for slot in attr_of(first)]
                for k in flat:
                    a[k] = list(attr_of(provoking)[k])
                if first < nv:
                    p, w, o = V[first], W[first], O[first]
                else:
                    p, w, o = new_pos[first - nv], new_win[first - nv], new_oow[first - nv]
                new_pos.append(p)
                new_win.append(w)
                new_oow.append(o)
                new_attr.append(a)
                polys[r][0] = nv + len(new_pos) - 1
    fan, fan_src = [], []
    for r in live:
        v = polys[r]
        for i in range(2, len(v)):
            fan.append((v[0], v[i - 1], v[i]) if flatshade_first else (v[i - 1], v[i], v[0]))
            fan_src.append(src[r])
    # the created vertices the fans use, renumbered in order
    used = sorted({v for tri in fan for v in tri if v >= nv})
    remap = {v: nv + i for i, v in enumerate(used)}
    fan = [[remap.get(v, v) for v in tri] for tri in fan]
    k = attrs.shape[1]
    sel = [v - nv for v in used]
    plain_idx = [i for i, ok in enumerate(plain) if ok]
    keys = plain_idx + fan_src
    fan_arr = np.array(fan, np.int64).reshape(-1, 3)
    out_tris = np.concatenate([tris[plain_idx], fan_arr]) if plain_idx else fan_arr
    out_prims = np.concatenate([prim_ids[plain_idx], prim_ids[fan_src]])
    if keys != sorted(keys):  # (a stable sort of sorted keys moves nothing)
        order = np.argsort(np.array(keys, np.int64), kind="stable")
        out_tris, out_prims = out_tris[order], out_prims[order]
    ns = len(sel)
    return ClippedGeometry(
        np.concatenate([pos, np.array([new_pos[i] for i in sel], F32).reshape(ns, 4)]),
        np.concatenate([win, np.array([new_win[i] for i in sel], F32).reshape(ns, 3)]),
        np.concatenate([oow, np.array([new_oow[i] for i in sel], F32)]),
        np.concatenate([attrs, np.array([new_attr[i] for i in sel], F32).reshape(ns, k, 4)]),
        out_tris,
        out_prims,
    )


# ----------------------------------------------------------------------------
# with edge flags (polygons drawn as lines or points)
# ----------------------------------------------------------------------------

_E0, _E1, _E2, _RESET = 1, 2, 4, 8


def _clip_with_edges(
    pos, win, oow, attrs, tris, prim_ids, flags, vertex_edges, planes, active, interp,
    flatshade_first, scale, translate,
) -> ClippedGeometry:  # fmt: skip
    """clip_triangles carrying edge flags (see there): the polygons walk
    the planes one by one in Python, their distances and new vertices
    computed by the same float32 functions as _plane_loop_small's (so
    every vertex is bit-identical to the clipper's without edge flags)."""
    with np.errstate(invalid="ignore", over="ignore"):
        cols = np.ascontiguousarray(pos.T)
        p = planes[list(active)].astype(F32, copy=False)[:, :, None]
        dist = p[:, 0] * cols[0]
        for k in (1, 2, 3):
            dist += p[:, k] * cols[k]
    outside = dist < 0
    bits = np.zeros(pos.shape[0], np.int64)
    for j in range(len(active)):
        bits |= outside[j].astype(np.int64) << j
    tb = bits[tris]
    or_mask = tb[:, 0] | tb[:, 1] | tb[:, 2]
    and_mask = tb[:, 0] & tb[:, 1] & tb[:, 2]
    fv = np.isfinite(cols).all(axis=0)
    finite = fv[tris[:, 0]] & fv[tris[:, 1]] & fv[tris[:, 2]]
    plain = (or_mask == 0) & finite
    needs = (or_mask != 0) & (and_mask == 0) & finite
    vedges = np.ones(pos.shape[0], bool) if vertex_edges is None else vertex_edges.astype(bool)
    if not needs.any():
        return ClippedGeometry(
            pos, win, oow, attrs, tris[plain], prim_ids[plain], flags[plain], vedges
        )
    flat = [i for i, mode in enumerate(interp) if mode == "constant"]
    lin = [i for i, mode in enumerate(interp) if mode == "linear"]
    persp = [i for i, mode in enumerate(interp) if mode == "perspective"]
    scale_v = np.asarray(scale, F32)
    translate_v = np.asarray(translate, F32)
    table = _VertexTable(pos, win, oow, attrs)
    vflag = vedges.tolist()  # each vertex's edge flag, new ones appended
    src = np.nonzero(needs)[0]
    polys = [[int(v) for v in tris[i]] for i in src]
    edges = [[bool(f & _E0), bool(f & _E1), bool(f & _E2)] for f in flags[src].tolist()]
    masks = [int(or_mask[i]) for i in src]
    alive = [True] * len(polys)
    for j, plane in enumerate(active):
        user = plane >= 6
        rows = [r for r in range(len(polys)) if alive[r] and (masks[r] >> j) & 1]
        if not rows:
            continue
        ids = [v for r in rows for v in polys[r]]
        d_all = _dot4(table.pos[ids], planes[plane])
        t_new, out_new, in_new, new_flags, layouts = [], [], [], [], []
        at = 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for r in rows:
                vid, ev = polys[r], edges[r]
                n = len(vid)
                d = d_all[at : at + n]
                at += n
                bad = not bool(np.isfinite(d).all())
                out, out_e = [], []
                for k in range(n):
                    kn = k + 1 if k + 1 < n else 0
                    dk, dn = d[k], d[kn]
                    inside = bool(dk >= 0)
                    if inside:
                        out.append(vid[k])
                        out_e.append(ev[k])
                    if inside != bool(dn >= 0):
                        denom = dn - dk
                        base_is_next = bool(-dn < dk) if inside else not bool(-dk < dn)
                        t_new.append(dn / denom if base_is_next else -dk / denom)
                        out_new.append(vid[kn] if base_is_next else vid[k])
                        in_new.append(vid[k] if base_is_next else vid[kn])
                        if inside:  # going out
                            out_e.append(True if user else ev[k])
                            new_flags.append(user)
                        else:  # coming back in: the edge and the flag of the start
                            out_e.append(ev[k])
                            new_flags.append(-1 - vid[k])  # (resolved below)
                        out.append(-len(t_new))
                layouts.append((r, out, out_e, bad))
        if t_new:
            new_ids = table.append(
                *_interp(
                    table, np.array(t_new, F32), np.array(out_new, np.int64),
                    np.array(in_new, np.int64), lin, persp, scale_v, translate_v,
                )
            )  # fmt: skip
            for f in new_flags:
                vflag.append(bool(f) if isinstance(f, bool) else vflag[-1 - f])
        for r, out, out_e, bad in layouts:
            polys[r] = [v if v >= 0 else int(new_ids[-v - 1]) for v in out]
            edges[r] = out_e
            alive[r] = alive[r] and not bad and len(polys[r]) >= 3
    if flatshade_first:
        edge_first, edge_middle, edge_last = _E0, _E1, _E2
    else:
        edge_first, edge_middle, edge_last = _E2, _E0, _E1
    fan, fan_flags, fan_src = [], [], []
    for r in range(len(polys)):
        if not alive[r]:
            continue
        v, ev = polys[r], edges[r]
        provoking = int(tris[src[r], 0 if flatshade_first else 2])
        if flat and v[0] != provoking:  # a fresh first vertex with the provoking flat inputs
            first = v[0]
            a = table.attrs[first].copy()
            a[flat] = table.attrs[provoking][flat]
            v = [int(table.append(table.pos[[first]], table.win[[first]],
                                  table.oow[[first]], a[None])[0]), *v[1:]]  # fmt: skip
            vflag.append(vflag[first])
        n = len(v)
        first_bit = edge_first if ev[0] else 0
        for i in range(2, n):
            f = (_RESET | first_bit | edge_middle) if i == 2 else edge_middle
            if not ev[i - 1]:
                f &= ~edge_middle
            if i == n - 1 and ev[i]:
                f |= edge_last
            fan.append((v[0], v[i - 1], v[i]) if flatshade_first else (v[i - 1], v[i], v[0]))
            fan_flags.append(f)
            fan_src.append(int(src[r]))
    plain_idx = np.nonzero(plain)[0]
    keys = np.concatenate([plain_idx, np.array(fan_src, np.int64)])
    order = np.argsort(keys, kind="stable")
    fan_arr = np.array(fan, np.int64).reshape(-1, 3)
    return ClippedGeometry(
        table.pos,
        table.win,
        table.oow,
        table.attrs,
        np.concatenate([tris[plain_idx], fan_arr])[order],
        np.concatenate([prim_ids[plain_idx], prim_ids[np.array(fan_src, np.int64)]])[order],
        np.concatenate([flags[plain_idx], np.array(fan_flags, np.int64)])[order],
        np.array(vflag, bool),
    )
