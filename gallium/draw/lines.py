"""Lines: assembly, clipping and setup, as Mesa's draw module and llvmpipe do them.

Theory of operation
-------------------
A line draw (LINES, LINE_STRIP, LINE_LOOP) becomes segments of stream
positions; after the vertex shader each segment is clipped against the
active planes the way draw_pipe_clip.c clips a line (the largest parameter
``t`` from each end over the planes in order; dropped when the two meet; the
new end interpolated from the end outside, flat inputs kept from the
provoking vertex).  Setup follows llvmpipe's line setup (lp_setup_line.c):

* the *diamond exit* rule decides whether each end's pixel is drawn: an end
  inside its pixel's diamond starts a line there and does not end one; an
  end outside is drawn when the line leaves the diamond on the far side
  (for x-major lines the tests are on x and then the crossing of the pixel
  row, for y-major ones on y and the pixel column);
* where the rasterizer's own fill rule at the end edge would disagree with
  that decision, the end moves by half a pixel along the line;
* the segment becomes a parallelogram ``round(line_width)`` pixels across the
  minor axis, in 1/256 pixel, rasterized with the triangle fill rule (here as
  two triangles sharing a diagonal, which cover exactly its pixels);
* attributes vary along the major axis only: ``dadx = (a1 - a2) * dx * (1 +
  (dy/dx)^2) / (dx^2 + dy^2)`` for x-major lines (``dady`` likewise for
  y-major), anchored at the first vertex; z and 1/w the same way.

Every step is float32 and integer arithmetic in llvmpipe's order, so the
pixels match its images (tests/reference/scenes.py ``lines``).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..pipe.enums import Prim
from ..pipe.errors import bad_value
from . import assemble
from . import clip as dclip
from .primitives import TriangleSet, empty_set
from .setup import FIXED_ONE, iround, setup_triangles, subpixel_snap

F32 = np.float32
LINE_MODES = (
    Prim.LINES,
    Prim.LINE_STRIP,
    Prim.LINE_LOOP,
    Prim.LINES_ADJACENCY,
    Prim.LINE_STRIP_ADJACENCY,
)


def segments(mode: Prim, n: int, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A line draw's segments as (L, 2) stream positions and their primitive ids
    (restart ``cuts`` start new strips and loops; adjacency modes give each
    primitive's middle two vertices)."""
    if mode not in LINE_MODES:
        raise bad_value("info.mode", "is not a line mode", mode)
    if mode in (Prim.LINES_ADJACENCY, Prim.LINE_STRIP_ADJACENCY):  # the middle two
        lines = assemble.adjacency_primitives(mode, n, cuts)[:, 1:3].copy()
        return lines, np.arange(lines.shape[0], dtype=np.int64)
    bounds = [0, *(int(c) for c in cuts), n]
    parts = []
    for a, b in itertools.pairwise(bounds):
        k = b - a
        if mode == Prim.LINES:
            s = a + 2 * np.arange(k // 2, dtype=np.int64)
            parts.append(np.stack([s, s + 1], 1))
        elif k >= 2:
            s = np.arange(a, b - 1, dtype=np.int64)
            seg = np.stack([s, s + 1], 1)
            if mode == Prim.LINE_LOOP:
                seg = np.concatenate([seg, [[b - 1, a]]])
            parts.append(seg)
    if not parts:
        return np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    lines = np.concatenate(parts)
    return lines, np.arange(lines.shape[0], dtype=np.int64)


def segment_resets(mode: Prim, n: int, cuts: np.ndarray) -> np.ndarray:
    """Which of :func:`segments`' segments start a new line-stipple pattern
    (draw_decompose_tmp.h's DRAW_PIPE_RESET_STIPPLE): every one of LINES,
    each strip's first of the strip and loop modes."""
    lines, _ = segments(mode, n, cuts)
    if mode in (Prim.LINES, Prim.LINES_ADJACENCY):
        return np.ones(lines.shape[0], bool)
    first = np.zeros(lines.shape[0], bool)
    if lines.shape[0]:
        # a strip's first segment starts at its first vertex: after a cut
        starts = {0, *(int(c) for c in cuts)}
        first = np.isin(lines[:, 0], np.array(sorted(starts), np.int64))
        if mode == Prim.LINE_STRIP_ADJACENCY:  # (the middle two of each group of four)
            first = np.isin(lines[:, 0] - 1, np.array(sorted(starts), np.int64))
        if mode == Prim.LINE_LOOP:  # (the closing segment runs back to the first vertex)
            first &= lines[:, 1] > lines[:, 0]
    return first


def stipple_lines(win, oow, attrs, lines, resets, *, factor: int, pattern: int, rectangular: bool):
    """draw_pipe_stipple.c: each segment cut into the runs its pattern
    lights, one bit per pixel of its length (the larger of |dx|, |dy| in
    window coordinates, or the Euclidean length for rectangular lines),
    ``factor`` pixels a bit, the pixel counter running on from segment to
    segment and back to 0 where ``resets`` says.  A run's ends are new
    vertices at t = i / length along the segment, every value interpolated
    linearly in t (as the draw module does, position and 1/w included).
    Returns (win, oow, attrs, lines, source segment of each new segment)."""
    m = lines.shape[0]
    if m == 0:
        return win, oow, attrs, lines, np.zeros(0, np.int64)
    w = win.astype(F32, copy=False)
    x0, y0 = w[lines[:, 0], 0], w[lines[:, 0], 1]
    x1, y1 = w[lines[:, 1], 0], w[lines[:, 1], 1]
    with np.errstate(over="ignore", invalid="ignore"):
        if rectangular:
            dx = (x1 - x0).astype(F32)
            dy = (y1 - y0).astype(F32)
            length = np.sqrt(((dx * dx).astype(F32) + (dy * dy).astype(F32)).astype(F32))
        else:
            dx = np.where(x0 > x1, x0 - x1, x1 - x0).astype(F32)
            dy = np.where(y0 > y1, y0 - y1, y1 - y0).astype(F32)
            length = np.where(dx > dy, dx, dy).astype(F32)
        finite = np.isfinite(length)
        intlen = np.where(finite, np.ceil(np.where(finite, length, 0)), 0).astype(np.int64)
    # each segment's first counter value: the pixels since the last reset
    before = np.cumsum(intlen) - intlen
    last_reset = np.maximum.accumulate(np.where(resets, np.arange(m), -1))
    counter0 = before - np.where(last_reset >= 0, before[np.maximum(last_reset, 0)], 0)
    owner = np.repeat(np.arange(m, dtype=np.int64), intlen)
    i = np.arange(owner.size, dtype=np.int64) - np.repeat(before, intlen)
    lit = (pattern >> (((counter0[owner] + i) // factor) & 15)) & 1 == 1
    prev_lit = np.concatenate([[False], lit[:-1]]) & (i > 0)
    starts = np.flatnonzero(lit & ~prev_lit)
    # a run ends at the next unlit pixel of its segment, or at the segment's end
    ends = np.flatnonzero(~lit & prev_lit)
    seg = owner[starts]
    pos = np.searchsorted(ends, starts)
    has_end = pos < ends.size
    if ends.size:
        end_at = np.where(has_end, ends[np.minimum(pos, ends.size - 1)], -1)
    else:  # (nothing unlit: every run ends with its segment)
        end_at = np.full(starts.size, -1, np.int64)
    closed = has_end & (owner[np.maximum(end_at, 0)] == seg)
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = (i[starts].astype(F32) / length[seg]).astype(F32)
        t1 = np.where(
            closed, (i[np.maximum(end_at, 0)].astype(F32) / length[seg]).astype(F32), F32(1.0)
        ).astype(F32)
    a, b = lines[seg, 0], lines[seg, 1]
    out = np.stack([a, b], 1)
    new_w, new_o, new_a = [win], [oow], [attrs]
    nv = win.shape[0]
    for end, t, cond in ((0, t0, t0 > 0), (1, t1, t1 < 1)):
        sel = np.flatnonzero(cond)
        if sel.size == 0:
            continue
        tc = t[sel]
        va, vb = a[sel], b[sel]
        with np.errstate(over="ignore", invalid="ignore"):
            new_w.append(_lerp(win[va], win[vb], tc[:, None]))
            new_o.append(_lerp(oow[va], oow[vb], tc))
            new_a.append(_lerp(attrs[va], attrs[vb], tc[:, None, None]))
        out[sel, end] = nv + np.arange(sel.size)
        nv += sel.size
    return (
        np.concatenate(new_w), np.concatenate(new_o), np.concatenate(new_a), out, seg,
    )  # fmt: skip


def _lerp(v0: np.ndarray, v1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """float32 ``v0 + t*(v1 - v0)`` (screen_interp)."""
    v0 = v0.astype(F32, copy=False)
    return (v0 + (t * (v1.astype(F32, copy=False) - v0).astype(F32)).astype(F32)).astype(F32)


def clip_lines(pos, win, oow, attrs, lines, prims, *, planes, active, interp, scale, translate):
    """Clip segments against the active planes (draw_pipe_clip.c's line rule).

    Returns (pos, win, oow, attrs, lines, prims) with the clipped ends
    appended as new vertices."""
    if lines.shape[0] == 0 or not active:
        return pos, win, oow, attrs, lines, prims
    pos = pos.astype(F32, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        dist = np.stack([dclip.plane_distance(pos, planes[p]) for p in active])  # (A, V)
    outside = dist < 0
    bits = np.zeros(pos.shape[0], np.int64)
    for j in range(len(active)):
        bits |= outside[j].astype(np.int64) << j
    b0, b1 = bits[lines[:, 0]], bits[lines[:, 1]]
    finite = np.isfinite(pos).all(axis=1)
    ok = finite[lines[:, 0]] & finite[lines[:, 1]] & ((b0 & b1) == 0)
    needs = ok & ((b0 | b1) != 0)
    keep = ok.copy()
    if not needs.any():
        return pos, win, oow, attrs, lines[keep], prims[keep]
    idx = np.flatnonzero(needs)
    v0, v1 = lines[idx, 0], lines[idx, 1]
    mask = b0[idx] | b1[idx]
    t0 = np.zeros(idx.size, F32)
    t1 = np.zeros(idx.size, F32)
    alive = np.ones(idx.size, bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(len(active)):
            on = alive & (mask >> j & 1).astype(bool)
            if not on.any():
                continue
            dp0, dp1 = dist[j, v0], dist[j, v1]
            alive &= ~(on & ~(np.isfinite(dp0) & np.isfinite(dp1)))
            c1 = on & (dp1 < 0)
            t1 = np.where(c1, np.maximum(t1, (dp1 / (dp1 - dp0)).astype(F32)), t1)
            c0 = on & (dp0 < 0)
            t0 = np.where(c0, np.maximum(t0, (dp0 / (dp0 - dp1)).astype(F32)), t0)
            alive &= ~(on & ((t0 + t1) >= F32(1.0)))
    keep[idx[~alive]] = False
    idx, v0, v1, t0, t1 = idx[alive], v0[alive], v1[alive], t0[alive], t1[alive]
    table = dclip._VertexTable(pos, win, oow, attrs)
    lin = [i for i, m in enumerate(interp) if m == "linear"]
    persp = [i for i, m in enumerate(interp) if m == "perspective"]
    lines = lines.copy()
    for end, t, out_v, in_v in ((0, t0, v0, v1), (1, t1, v1, v0)):
        moved = bits[out_v] != 0
        if not moved.any():
            continue
        sel = np.flatnonzero(moved)
        new = dclip._interp(table, t[sel], out_v[sel], in_v[sel], lin, persp, scale, translate)
        ids = table.append(*new)
        lines[idx[sel], end] = ids
    return table.pos, table.win, table.oow, table.attrs, lines[keep], prims[keep]


_snap = subpixel_snap


def _ge0(x: np.ndarray) -> np.ndarray:
    return x >= 0


def _frac(x: np.ndarray) -> np.ndarray:
    return (x - np.floor(x)).astype(F32)


def line_corners(win, lines, width: float, half_pixel_center: bool, last_pixel: bool = False):
    """The parallelogram of each segment in 1/256 pixel (lp_setup_line.c,
    non-rectangular lines): (x (L, 4), y (L, 4), keep (L,), info_dx, info_dy,
    oneoverarea), the last three for the attribute planes (see the module
    docstring); ``keep`` drops zero-length segments.  ``last_pixel``
    (line_last_pixel): the end's pixel is drawn whatever the diamond-exit
    rule says -- the end moves to its pixel's far side along the major axis
    (llvmpipe ignores the state; this is the spec's meaning)."""
    po = F32(0.5) if half_pixel_center else F32(0.0)
    x1, y1 = win[lines[:, 0], 0].astype(F32), win[lines[:, 0], 1].astype(F32)
    x2, y2 = win[lines[:, 1], 0].astype(F32), win[lines[:, 1], 1].astype(F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dx = (x1 - x2).astype(F32)
        dy = (y1 - y2).astype(F32)
        area = (dx * dx + dy * dy).astype(F32)
        keep = (area != 0) & np.isfinite(area)
        ooa = (F32(1.0) / area).astype(F32)
        half = F32(0.5)
        x1d = ((x1 - np.floor(x1)) - half).astype(F32)
        y1d = ((y1 - np.floor(y1)) - half).astype(F32)
        x2d = ((x2 - np.floor(x2)) - half).astype(F32)
        y2d = ((y2 - np.floor(y2)) - half).astype(F32)
        fw = int(iround(max(F32(1.0), F32(width)))) * FIXED_ONE
        xmaj = np.abs(dx) >= np.abs(dy)

        # ---- x-major
        dydx = (dy / dx).astype(F32)
        y2dx = np.where((y2d == -half) & (dy < 0), half, y2d)
        ds_x = np.where(
            (np.abs(x1d) + np.abs(y1d)) < half,
            True,
            np.where(
                _ge0(x1d) == _ge0(-dx),
                False,
                np.where(
                    _ge0(-y1d) != _ge0(dy),
                    True,
                    _between(_frac(y1) + x1d * dydx, False),
                ),
            ),
        )
        de_x = np.where(
            (np.abs(x2d) + np.abs(y2dx)) < half,
            False,
            np.where(
                _ge0(x2d) != _ge0(-dx),
                False,
                np.where(
                    _ge0(-y2dx) == _ge0(dy),
                    True,
                    _between(_frac(y2) + x2d * dydx, False),
                ),
            ),
        )
        info_dx_x = (dx * (F32(1.0) + dydx * dydx)).astype(F32)
        neg = dx < 0
        # (offsets of the first and second corner pair; after the swap the
        # pairs belong to the other ends, the diffs stay the original ends')
        # whether the rasterizer's own rule already draws each end's pixel
        wds = _ge0(-x1d) != _ge0(dx)
        wde = (_ge0(x2d) == _ge0(-dx)) | (x2d == 0)
        xo_s = np.where(neg, -x1d - half, -x1d + half).astype(F32)  # moves the start end
        xo_e = np.where(neg, -x2d - half, -x2d + half).astype(F32)  # moves the end end
        mv_s = wds != ds_x
        mv_e = wde != de_x
        if last_pixel:  # the end on its pixel's far side: the pixel drawn, the next not
            xo_e = np.where(neg, -x2d + half, -x2d - half).astype(F32)
            mv_e = np.ones_like(mv_e)
        # x_offset goes with corners 0/3 (V1), x_offset_end with 1/2 (V2)
        # dx >= 0: V1 = v1 (start), V2 = v2;  dx < 0: V1 = v2, V2 = v1
        off_v1 = np.where(neg, np.where(mv_e, xo_e, F32(0)), np.where(mv_s, xo_s, F32(0)))
        off_v2 = np.where(neg, np.where(mv_s, xo_s, F32(0)), np.where(mv_e, xo_e, F32(0)))
        xo1, xo2 = off_v1.astype(F32), off_v2.astype(F32)
        yo1, yo2 = (xo1 * dydx).astype(F32), (xo2 * dydx).astype(F32)
        V1x, V1y = np.where(neg, x2, x1), np.where(neg, y2, y1)
        V2x, V2y = np.where(neg, x1, x2), np.where(neg, y1, y2)
        ax0 = _snap((V1x + xo1) - po)
        ax1 = _snap((V2x + xo2) - po)
        ay0 = _snap((V1y + yo1) - po)
        ay1 = _snap((V2y + yo2) - po)
        X_x = np.stack([ax0, ax1, ax1, ax0], 1)
        Y_x = np.stack([ay0 - fw // 2, ay1 - fw // 2, ay1 + fw // 2, ay0 + fw // 2], 1)

        # ---- y-major
        dxdy = (dx / dy).astype(F32)
        x2dy = np.where((x2d == -half) & (dx < 0), half, x2d)
        ds_y = np.where(
            (np.abs(x1d) + np.abs(y1d)) < half,
            True,
            np.where(
                _ge0(-y1d) == _ge0(dy),
                False,
                np.where(
                    _ge0(x1d) != _ge0(-dx),
                    True,
                    _between(_frac(x1) + y1d * dxdy, False),
                ),
            ),
        )
        de_y = np.where(
            (np.abs(x2dy) + np.abs(y2d)) < half,
            False,
            np.where(
                _ge0(-y2d) != _ge0(dy),
                False,
                np.where(
                    _ge0(x2dy) == _ge0(-dx),
                    True,
                    _between(_frac(x2) + y2d * dxdy, True),
                ),
            ),
        )
        info_dy_y = (dy * (F32(1.0) + dxdy * dxdy)).astype(F32)
        pos_dy = dy > 0
        wds_y = _ge0(y1d) == _ge0(dy)
        wde_y = (_ge0(-y2d) == _ge0(dy)) | (y2d == 0)
        yo_s = np.where(pos_dy, -y1d + half, -y1d - half).astype(F32)
        yo_e = np.where(pos_dy, -y2d + half, -y2d - half).astype(F32)
        mv_s = wds_y != ds_y
        mv_e = wde_y != de_y
        if last_pixel:
            yo_e = np.where(pos_dy, -y2d - half, -y2d + half).astype(F32)
            mv_e = np.ones_like(mv_e)
        # dy <= 0: V1 = v1, V2 = v2;  dy > 0: swapped
        yoff_v1 = np.where(pos_dy, np.where(mv_e, yo_e, F32(0)), np.where(mv_s, yo_s, F32(0)))
        yoff_v2 = np.where(pos_dy, np.where(mv_s, yo_s, F32(0)), np.where(mv_e, yo_e, F32(0)))
        yq1, yq2 = yoff_v1.astype(F32), yoff_v2.astype(F32)
        xq1, xq2 = (yq1 * dxdy).astype(F32), (yq2 * dxdy).astype(F32)
        W1x, W1y = np.where(pos_dy, x2, x1), np.where(pos_dy, y2, y1)
        W2x, W2y = np.where(pos_dy, x1, x2), np.where(pos_dy, y1, y2)
        bx0 = _snap((W1x + xq1) - po)
        bx1 = _snap((W2x + xq2) - po)
        by0 = _snap((W1y + yq1) - po)
        by1 = _snap((W2y + yq2) - po)
        X_y = np.stack([bx0 - fw // 2, bx1 - fw // 2, bx1 + fw // 2, bx0 + fw // 2], 1)
        Y_y = np.stack([by0, by1, by1, by0], 1)

    X = np.where(xmaj[:, None], X_x, X_y)
    Y = np.where(xmaj[:, None], Y_x, Y_y)
    info_dx = np.where(xmaj, info_dx_x, F32(0.0)).astype(F32)
    info_dy = np.where(xmaj, F32(0.0), info_dy_y).astype(F32)
    return X, Y, keep, info_dx, info_dy, ooa


def _between(v: np.ndarray, closed_low: bool) -> np.ndarray:
    v = v.astype(F32)
    return ((v >= 0) if closed_low else (v > 0)) & (v < 1)


def setup_lines(
    win, oow, lines, attrs, interp, *, width, region, half_pixel_center, bottom_edge_rule,
    prim_ids, flat_values, multisample=False, last_pixel=False, smooth=False,
) -> TriangleSet:  # fmt: skip
    """Set up segments ``lines`` (L, 2) as llvmpipe does: two triangles each
    over its parallelogram, with the line's own attribute, z and 1/w planes.
    ``flat_values`` (L, K, 4): each segment's provoking-vertex inputs.
    ``region``: the draw region, one tuple or four arrays with a row per
    segment (see setup_triangles).  ``smooth``: antialiased lines instead
    (gallium/draw/smooth.py)."""
    if smooth:
        from .smooth import smooth_lines

        return smooth_lines(
            win, oow, attrs, interp, lines, prim_ids, flat_values, line_width=width,
            region=region if isinstance(region[0], int) else list(region),
            half_pixel_center=half_pixel_center, bottom_edge_rule=bottom_edge_rule,
        )  # fmt: skip
    k = attrs.shape[1]
    if lines.shape[0] == 0:
        return empty_set(k)
    X, Y, keep, idx_dx, idx_dy, ooa = line_corners(win, lines, width, half_pixel_center, last_pixel)
    lines, X, Y = lines[keep], X[keep], Y[keep]
    idx_dx, idx_dy, ooa = idx_dx[keep], idx_dy[keep], ooa[keep]
    prim_ids, flat_values = prim_ids[keep], flat_values[keep]
    if not isinstance(region[0], int):  # a region per segment: two triangles each
        region = tuple(np.repeat(np.asarray(r)[keep], 2) for r in region)
    n = lines.shape[0]
    if n == 0:
        return empty_set(k)
    po = F32(0.5) if half_pixel_center else F32(0.0)
    corners = np.empty((n, 4, 3), F32)
    corners[..., 0] = X.astype(F32) / F32(FIXED_ONE) + po
    corners[..., 1] = Y.astype(F32) / F32(FIXED_ONE) + po
    corners[..., 2] = 0.0
    base = 4 * np.arange(n, dtype=np.int64)[:, None, None]
    tris = (base + np.array([[0, 1, 2], [0, 2, 3]])[None]).reshape(-1, 3)
    ts = setup_triangles(
        corners.reshape(-1, 3),
        np.ones(4 * n, F32),
        tris,
        np.zeros((4 * n, k, 4), F32),
        ["linear"] * k,
        region=region,
        half_pixel_center=half_pixel_center,
        bottom_edge_rule=bottom_edge_rule,
        prim_ids=np.arange(2 * n, dtype=np.int64),
        wide_prim_ids=True,
        multisample=multisample,
    )
    if ts.count == 0:
        return ts
    seg = ts.prim_id.astype(np.int64) // 2
    # the planes: the parallelogram's winding follows the line, so a triangle
    # that came out "back-facing" is still the line's: lines face the front
    ts.facing = np.ones(ts.count, bool)
    ts.prim_id = prim_ids[seg]
    v1, v2 = lines[seg, 0], lines[seg, 1]
    ddx, ddy, oa = idx_dx[seg], idx_dy[seg], ooa[seg]
    x1 = (win[v1, 0] - po).astype(F32)
    y1 = (win[v1, 1] - po).astype(F32)

    def plane(a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
        """[a0, dadx, dady] (M, 3, ...) of lp_setup_line.c's linear_coef."""
        a1 = a1.astype(F32)
        a2 = a2.astype(F32)
        ext = (slice(None),) + (None,) * (a1.ndim - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            da21 = (a1 - a2).astype(F32)
            dadx = ((da21 * ddx[ext]) * oa[ext]).astype(F32)
            dady = ((da21 * ddy[ext]) * oa[ext]).astype(F32)
            a0 = (a1 - (dadx * x1[ext] + dady * y1[ext])).astype(F32)
        return np.stack([a0, dadx, dady], 1)

    ts.z = plane(win[v1, 2], win[v2, 2])
    ts.oow = plane(oow[v1], oow[v2])
    ts.w_is_one = (oow[v1] == 1.0) & (oow[v2] == 1.0)
    inputs = np.zeros((ts.count, k, 3, 4), F32)
    perspective = np.zeros(k, bool)
    for slot, mode in enumerate(interp):
        if mode == "constant":
            inputs[:, slot, 0] = flat_values[seg, slot]
            continue
        a1, a2 = attrs[v1, slot], attrs[v2, slot]
        if mode == "perspective":
            perspective[slot] = True
            a1 = (a1 * oow[v1][:, None]).astype(F32)
            a2 = (a2 * oow[v2][:, None]).astype(F32)
        inputs[:, slot] = plane(a1, a2)
    ts.inputs = inputs
    ts.perspective = perspective
    return ts
