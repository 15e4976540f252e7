"""Rasterize a draw in one band of a scene: coverage, interpolation, shading,
fragment ops.

A band is a strip of whole 64x64 tiles across the framebuffer
(``Scene.band_rows`` rows); workers/band.py walks a band's commands in order.
For a draw it takes the triangles binned to the band and chooses, run by run
in submission order, between two ways of turning them into shaded fragments:

* **dense** — one big triangle at a time over the rectangle where it meets the
  band: its exact x-extent within the band's rows (so the two halves of a
  clipped full-screen triangle each cover half the band, not all of it).
  Attribute planes are evaluated by broadcasting a row vector against a column
  vector, and an edge whose function is positive on all four corners of the
  rectangle is not evaluated at all.
* **sparse** — many small triangles at once.  The covered columns of every
  (triangle, row) pair are solved exactly from the integer edge functions
  (``_row_spans``) and expanded into one lane per covered pixel, or into 2x2
  quads over pairs of rows when the shader takes derivatives.  Opaque
  depth-tested fragments are resolved in closed form before shading (the
  winner of each pixel by scatter-min, ``_depth_winners``); otherwise pixels
  hit by several triangles of a batch are applied in submission order as
  *layers* (the k-th hit of each pixel).

A pure pass-through fragment shader (``MOV OUT[k], IN[j]`` only) runs no
kernel at all: its outputs stay interpolation planes (``PlaneColour``,
``PixelPlaneColour``) that UNORM8 stores evaluate directly.

Both paths evaluate attribute planes with the same float32 operations,
``(a0 + dadx*x) + dady*y`` (depth with llvmpipe's fused form), so a pixel gets
the same value whichever path, band height or worker count produced it.
Big triangles are split into their interior columns (no coverage mask) and
the strips beside them (masked).
Lanes are grouped in 2x2 quads aligned to even pixel coordinates so that
DDX/DDY work; helper lanes (uncovered pixels of a partly covered quad) are
shaded but never written.  Everything here runs on a worker thread and only
touches its own band of the framebuffer.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from gallium.numpipe.sampler import separable_texels
from gallium.numpipe.scene import DENSE_MIN_PIXELS, ClearCmd, DrawCmd, Scene
from gallium.pipe.enums import CompareFunc
from gallium.tgsi.compiler import ExecEnv
from gallium.util.format import unpack_rgba
from gallium.util.fp32 import F32, fma32

from .fragment import (
    FragmentState,
    MixedPlaneColour,
    PixelPlaneColour,
    PlaneColour,
    TexelWords,
    compare,
    depth_stencil,
    flat_unorm8,
    resident_colour,
    target_run,
    unorm8_prescale,
    write_color,
)
from .msaa import centroid_offsets as msaa_centroid
from .msaa import coverage_mask as msaa_coverage
from .msaa import sample_position as msaa_position

# (DENSE_MIN_PIXELS, from the scene: a triangle whose span covers at least
# this many pixels of a band goes dense.)
# Sparse batches are cut so a batch never has more candidate quads than this.
SPARSE_MAX_QUADS = 1 << 17
# ... and when no shader kernel runs (pass-through pixel lists: the planes are
# evaluated straight into the stores), no more candidate pixels than this.
# With two workers each numpy call of a batch may wait for the GIL the other
# worker holds between its calls, so fewer, bigger calls win: the medium bench
# scene with two workers ~190 ms a frame with 4 * SPARSE_MAX_QUADS pixels a
# batch, 150-180 with 2**20, 149-172 with 2**21 (and ~70 MB more peak memory
# than 2**19) in alternating runs; the same on one worker.  Since a run
# carries its depth keys across batches (_RunDepth), 2**21 is ~5% faster than
# 2**20 with two workers (frames alternating in one process; 2**22 ~4% slower,
# 3 * 2**20 the same as 2**21; ~4% slower on one worker, whose bigger arrays
# leave the cache) for ~30 MB more peak memory.  A shaded batch
# keeps the smaller bound: its kernel's temporaries grow with it.
SPARSE_PLANE_PIXELS = 1 << 21

_OX = np.array([0, 1, 0, 1], np.int64)
_OY = np.array([0, 0, 1, 1], np.int64)
_OXF = _OX.astype(F32)
_OYF = _OY.astype(F32)


# numpy's ufunc buffer size (elements) while a worker computes over a
# rectangle at least ROW_BUFFER_MIN_WIDTH pixels wide.  A (rows, width)
# broadcast such as ``rows[None, :] + cols[:, None]`` cannot be flattened into
# one loop; with the default buffer of 8192 elements numpy copies its operands
# through the buffer a few rows at a time, while a buffer no longer than about
# twice a row lets it run the inner loop on each row in place.  Measured here
# on a 512x1024 float32 plane: 290-360 us with the default, 100-130 us with
# 512; stored into a strided UNORM8 channel (the fill's store) 570-730 us
# against 370-450 us.  Narrow rectangles (and the sparse path's (n, 4)
# arrays) are faster with the default, so only wide ones change it.  The
# buffer size changes no value (elementwise arithmetic only; no float sums).
ROW_BUFFER = 512
ROW_BUFFER_MIN_WIDTH = 384


class _RowBuffers:
    """``with _RowBuffers(width):`` -- numpy's buffer size for a rectangle
    ``width`` pixels wide on this thread (see ROW_BUFFER), restored after."""

    __slots__ = ("old", "width")

    def __init__(self, width: int) -> None:
        self.width = width
        self.old: int | None = None

    def __enter__(self) -> None:
        if self.width >= ROW_BUFFER_MIN_WIDTH:
            self.old = np.setbufsize(ROW_BUFFER)

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            np.setbufsize(self.old)
            self.old = None


# ----------------------------------------------------------------------------
# clears
# ----------------------------------------------------------------------------


def _clear_depth_stencil(
    zs: Any, cmd: ClearCmd, y0: int, y1: int, known: int | None = None, cols: slice | None = None
) -> int | None:
    """The depth/stencil part of a clear of ``zs`` over the band's rows (its
    colour part is deferred: ResidentColour.defer_clear), or over columns
    ``cols`` of them (a scissored clear).

    Returns the one word every pixel of the rows holds afterwards when the
    clear sets every bit of a packed integer word over whole rows (see
    _RunDepth), else None; ``known`` (the rows' word before) when it clears
    neither depth nor stencil."""
    if zs is None or (cmd.depth_word is None and cmd.stencil is None):
        return known
    layout = zs.layout
    at = (slice(y0, y1), slice(None) if cols is None else cols)
    if layout.split:
        if cmd.depth_word is not None:
            zs.words[at] = cmd.depth_word
        if cmd.stencil is not None and zs.stencil is not None:
            zs.stencil[at] = cmd.stencil & 0xFF
        return None
    view = zs.words[at]
    if layout.z_float:
        if cmd.depth_word is not None:
            view[...] = np.float32(cmd.depth_word)
        return None
    value = 0
    if cmd.depth_word is not None:
        value |= int(cmd.depth_word)
    if cmd.stencil is not None and layout.s_bits:
        value |= (cmd.stencil & ((1 << layout.s_bits) - 1)) << layout.s_shift
    if cmd.zs_mask_keep:
        keep = np.asarray(cmd.zs_mask_keep, view.dtype)
        view[...] = (view & keep) | np.asarray(value, view.dtype)
        return None
    view[...] = value
    return value if cols is None else None


# ----------------------------------------------------------------------------
# draws
# ----------------------------------------------------------------------------


def _tri_ints(ts, t: int) -> tuple:
    """Triangle ``t``'s edge terms and vertices as Python integers --
    ``(c, dcdx, dcdy, vx, vy, bbox)``, lists of 3 (bbox 4; the vertices None
    when the set has none) -- for the dense paths' span and corner
    arithmetic; cached per triangle set (a pure function of it: racing
    workers store equal lists)."""
    cache = ts.__dict__.get("_ints")
    if cache is None:
        cache = ts.__dict__.setdefault("_ints", {})
    got = cache.get(t)
    if got is None:
        vx, vy = (None, None) if ts.vx is None else (ts.vx[t].tolist(), ts.vy[t].tolist())
        got = cache[t] = (
            ts.c[t].tolist(),
            ts.dcdx[t].tolist(),
            ts.dcdy[t].tolist(),
            vx,
            vy,
            ts.bbox[t].tolist(),
        )
    return got


def _span(ts, t: int, r0: int, r1: int) -> tuple[int, int] | None:
    """Pixel columns where triangle ``t`` can cover pixels of rows r0..r1.

    The triangle is clipped to the slab of those rows' centres (in the snapped
    1/256-pixel coordinates the edge functions use) and the x-extent of the
    result, widened by one pixel on each side, is returned.
    """
    _, _, _, xs, ys, _ = _tri_ints(ts, t)
    lo, hi = r0 * 256, r1 * 256
    pts: list[float] = [x for x, y in zip(xs, ys) if lo <= y <= hi]
    for a, b in ((0, 1), (1, 2), (2, 0)):
        ya, yb = ys[a], ys[b]
        if ya == yb:
            continue
        for yc in (lo, hi):
            if min(ya, yb) < yc < max(ya, yb):
                pts.append(xs[a] + (yc - ya) * (xs[b] - xs[a]) / (yb - ya))
    if not pts:
        return None
    return math.floor(min(pts) / 256) - 1, math.ceil(max(pts) / 256) + 1


def _draw(
    scene: Scene, cmd: DrawCmd, ids: np.ndarray, y0: int, y1: int, band: int, zs_word=None
) -> None:
    """Rasterize the draw's triangles ``ids`` in the band's rows y0..y1 - 1.
    ``zs_word``: the one word every depth/stencil pixel of the band holds,
    when known (workers/band.py)."""
    state: FragmentState = cmd.state
    ts = cmd.tris
    n = ids.size
    if n == 0:
        return
    if state.kernel.uses_fbfetch:
        _fbfetch_draw(scene, state, ts, ids, y0, y1, band)
        return
    hiz: Any = False  # the band's occluded tiles, made for the first sparse run
    # Walk runs of equal kind in submission order (their bounds found by
    # numpy: a band of a medium frame has thousands of sparse triangles;
    # a few big ones in Python, where each numpy call costs more than the
    # arithmetic).
    if state.side_effects or state.early_tests:  # (one invocation a covered pixel: sparse)
        dense: Any = [False]
        cuts: list = []
    elif n <= 8:
        dense = [
            (bx1 - bx0 + 1) * (min(by1, y1 - 1) - max(by0, y0) + 1) >= DENSE_MIN_PIXELS
            for bx0, by0, bx1, by1 in ts.bbox[ids].tolist()
        ]
        cuts = [i for i in range(1, n) if dense[i] != dense[i - 1]]
    else:
        bb = ts.bbox[ids]
        rows = np.minimum(bb[:, 3], y1 - 1) - np.maximum(bb[:, 1], y0) + 1
        area = (bb[:, 2] - bb[:, 0] + 1) * rows
        dense = area >= DENSE_MIN_PIXELS
        cuts = (np.flatnonzero(dense[1:] != dense[:-1]) + 1).tolist()
    for start, end in zip([0, *cuts], [*cuts, n]):
        kind = bool(dense[start])
        if kind:
            i = start
            while i < end:
                t = int(ids[i])
                pair = _pair(ts, t) if i + 1 < end and int(ids[i + 1]) == t + 1 else None
                if pair is not None and state.reads_primid and ts.prim_id[t] != ts.prim_id[t + 1]:
                    pair = None
                if pair is not None and (pair[0] or _mixable(state, ts)):
                    _dense_pair(scene, state, ts, t, pair, y0, y1, band)
                    i += 2
                else:
                    _dense_triangle(scene, state, ts, t, y0, y1, band)
                    i += 1
        else:
            if hiz is False:
                hiz = _hidden_tiles(scene, state, ts, ids, y0, y1)
            # (the band's words are known only to the draw's first run)
            known = zs_word if start == 0 else None
            _sparse_run(scene, state, ts, ids[start:end], y0, y1, band, hiz, start, known)


def _fbfetch_draw(scene: Scene, state: FragmentState, ts, ids: np.ndarray, y0, y1, band) -> None:
    """A shader with FBFETCH reads the colour its fragment will blend into:
    the triangles are shaded and written one at a time, in order, so each
    reads what the ones before it wrote (as llvmpipe's per-triangle
    rasterization does; a triangle covers a pixel once).  ``_fbfetch``
    answers the reads from the scene installed here."""
    _fetch.scene = scene
    try:
        for k in range(ids.size):
            t = int(ids[k])
            bx0, by0, bx1, by1 = ts.bbox[t].tolist()
            if (bx1 - bx0 + 1) * (min(by1, y1 - 1) - max(by0, y0) + 1) >= DENSE_MIN_PIXELS:
                _dense_triangle(scene, state, ts, t, y0, y1, band)
            else:
                _sparse_run(scene, state, ts, ids[k : k + 1], y0, y1, band, None, k)
    finally:
        _fetch.scene = None


_fetch = threading.local()


def _fbfetch(geom) -> Any:
    """FBFETCH's reader for the lanes of ``geom`` (runtime.fbfetch): colour
    buffer ``index`` at each lane's pixel, unpacked as its format says --
    float32 values, or integer bits -- after the band's deferred clears and
    kept rectangles are stored (workers/fragment.py ResidentColour)."""
    scene = getattr(_fetch, "scene", None)
    px, py = geom.coords()

    def read(index: int) -> Any:
        if scene is None or index >= len(scene.cbufs) or scene.cbufs[index] is None:
            return None
        band = resident_colour()
        if band is not None:
            band.release_all()
        target = scene.cbufs[index]
        h, w = target.raw.shape[:2]
        x = np.clip(np.asarray(px, np.int64), 0, w - 1)  # (helper lanes past the edge)
        y = np.clip(np.asarray(py, np.int64), 0, h - 1)
        vals = unpack_rgba(target.desc, target.raw[y, x])
        if vals.dtype != F32:
            vals = vals.view(F32)
        return [np.ascontiguousarray(vals[:, c]) for c in range(4)]

    return read


def _dense_triangle(scene: Scene, state: FragmentState, ts, t: int, y0: int, y1: int, band: int):
    """One big triangle over the band: its interior columns without a coverage
    mask, the strips either side of them with one."""
    bx0, by0, bx1, by1 = _tri_ints(ts, t)[5]
    wy0 = max(by0, y0)
    wy1 = min(by1, y1 - 1)
    if wy0 > wy1:
        return
    span = _span(ts, t, wy0, wy1)
    if span is None:
        return
    wx0, wx1 = max(bx0, span[0]), min(bx1, span[1])
    if wx0 > wx1:
        return
    # Columns covered in every row: each edge's bound is linear in y, so the
    # intersection over the rows is the intersection of the first and last
    # rows' spans.  Its ends are moved inwards to quad boundaries (even x).
    lo_a, hi_a = _row_span(ts, t, wy0)
    lo_b, hi_b = _row_span(ts, t, wy1)
    in_lo = (max(lo_a, lo_b, wx0) + 1) & ~1
    in_hi = ((min(hi_a, hi_b, wx1) + 1) & ~1) - 1
    if in_hi - in_lo + 1 < 16:
        _dense_rect(scene, state, ts, t, wx0, wx1, wy0, wy1, band, True)
        return
    if wx0 < in_lo:
        _dense_rect(scene, state, ts, t, wx0, in_lo - 1, wy0, wy1, band, True)
    _dense_rect(scene, state, ts, t, in_lo, in_hi, wy0, wy1, band, False)
    if in_hi < wx1:
        _dense_rect(scene, state, ts, t, in_hi + 1, wx1, wy0, wy1, band, True)


def _pair(ts, t: int) -> tuple[bool, int] | None:
    """How triangles t and t+1 can be shaded as one convex quad, or None.

    They qualify when they share an edge in opposite directions (so they lie
    either side of it and the fill rule gives each pixel on it to exactly one
    of them), their union is convex and they face the same way.  Returns
    ``(same, edge)``: ``edge`` is the shared edge's index in t (t covers a
    pixel of the union exactly where that edge function is positive);
    ``same`` says every pixel gets the same values from either triangle (the
    same attribute, depth and 1/w planes: equal floats, constant terms not
    -0, so even the sign of a zero result cannot differ), as for the halves
    of a clipped full-screen triangle or of an affinely textured quad.
    Cached per triangle set (a pure function of it; racing workers agree)."""
    cache = ts.__dict__.setdefault("_pairs", {})
    if t not in cache:
        cache[t] = _pair_uncached(ts, t)
    return cache[t]


def _planes_same(p: np.ndarray, q: np.ndarray) -> bool:
    """Plane coefficients (3, ...) [a0, dadx, dady] that evaluate to the same
    float32 everywhere: equal (no NaN) and no constant term is -0."""
    a, b = p.tolist(), q.tolist()
    if a != b:  # (Python floats compare as np.array_equal: NaN never equal, -0 == 0)
        return False
    a0 = a[0] if isinstance(a[0], list) else [a[0]]
    return not any(x == 0.0 and math.copysign(1.0, x) < 0.0 for x in a0)


def _pair_uncached(ts, t: int) -> tuple[bool, int] | None:
    u = t + 1
    if u >= ts.count or ts.vx is None or bool(ts.facing[t]) != bool(ts.facing[u]):
        return None
    va = list(zip(ts.vx[t].tolist(), ts.vy[t].tolist()))
    vb = list(zip(ts.vx[u].tolist(), ts.vy[u].tolist()))
    if len(set(va)) != 3 or len(set(vb)) != 3:
        return None
    for i in range(3):
        p, q = va[i], va[(i + 1) % 3]
        for j in range(3):
            if vb[j] == q and vb[(j + 1) % 3] == p:
                a = va[(i + 2) % 3]
                b = vb[(j + 2) % 3]
                # convex iff p and q lie strictly on opposite sides of the line ab
                ex, ey = b[0] - a[0], b[1] - a[1]
                sp = ex * (p[1] - a[1]) - ey * (p[0] - a[0])
                sq = ex * (q[1] - a[1]) - ey * (q[0] - a[0])
                if not ((sp > 0 and sq < 0) or (sp < 0 and sq > 0)):
                    return None
                same = (
                    bool(ts.w_is_one[t]) == bool(ts.w_is_one[u])
                    and _planes_same(ts.z[t], ts.z[u])
                    and (ts.zoffset is None or ts.zoffset[t] == ts.zoffset[u])
                    and _planes_same(ts.oow[t], ts.oow[u])
                    and all(
                        _planes_same(ts.inputs[t, k], ts.inputs[u, k])
                        for k in range(ts.inputs.shape[1])
                    )
                )
                return same, i
    return None


def _mixable(state: FragmentState, ts) -> bool:
    """Whether a pair with different planes can share one rectangle: a
    pass-through shader (no kernel) whose outputs are the input planes, so
    each pixel can take its own triangle's planes (MixedPlaneColour)."""
    return state.passthrough is not None and _planes_direct(state, ts)


def _dense_pair(
    scene: Scene, state: FragmentState, ts, t: int, pair, y0: int, y1: int, band: int
) -> None:
    """Triangles t and t+1 (see :func:`_pair`) over the band: the columns
    their union covers in every row as unmasked rectangles (one, with t's
    planes, when the planes are the same; otherwise the columns either side
    of the shared edge per triangle and the columns it crosses with each
    pixel's own planes), the strips beside them per triangle with masks."""
    u = t + 1
    rows = []
    for k in (t, u):
        bx0, by0, bx1, by1 = _tri_ints(ts, k)[5]
        ky0, ky1 = max(by0, y0), min(by1, y1 - 1)
        span = _span(ts, k, ky0, ky1) if ky0 <= ky1 else None
        if span is not None:
            kx0, kx1 = max(bx0, span[0]), min(bx1, span[1])
            if kx0 <= kx1:
                rows.append((k, kx0, kx1, ky0, ky1))
    if len(rows) < 2:
        for k, *_ in rows:
            _dense_triangle(scene, state, ts, k, y0, y1, band)
        return
    wx0 = min(r[1] for r in rows)
    wx1 = max(r[2] for r in rows)
    wy0 = min(r[3] for r in rows)
    wy1 = max(r[4] for r in rows)
    # The union is convex: its covered columns in any row are the union of
    # the two (adjacent) row spans, and the columns covered in every row are
    # those covered in the first and in the last.
    bounds = []
    for y in (wy0, wy1):
        spans = [s for s in (_row_span(ts, t, y), _row_span(ts, u, y)) if s[0] <= s[1]]
        if not spans:
            bounds = None
            break
        bounds.append((min(s[0] for s in spans), max(s[1] for s in spans)))
    in_lo, in_hi = 0, -1
    if bounds:
        in_lo = (max(bounds[0][0], bounds[1][0], wx0) + 1) & ~1
        in_hi = ((min(bounds[0][1], bounds[1][1], wx1) + 1) & ~1) - 1
    if in_hi - in_lo + 1 < 16:
        _dense_triangle(scene, state, ts, t, y0, y1, band)
        _dense_triangle(scene, state, ts, u, y0, y1, band)
        return
    for k, kx0, kx1, ky0, ky1 in rows:
        if kx0 < in_lo:
            _dense_rect(scene, state, ts, k, kx0, min(kx1, in_lo - 1), ky0, ky1, band, True)
    same, edge = pair
    if same:
        _dense_rect(scene, state, ts, t, in_lo, in_hi, wy0, wy1, band, False)
    else:
        _split_interior(scene, state, ts, t, edge, in_lo, in_hi, wy0, wy1, band)
    for k, kx0, kx1, ky0, ky1 in rows:
        if in_hi < kx1:
            _dense_rect(scene, state, ts, k, max(kx0, in_hi + 1), kx1, ky0, ky1, band, True)


def _split_interior(scene, state, ts, t: int, edge: int, x0, x1, y0, y1, band) -> None:
    """A rectangle every pixel of which triangle t or t+1 covers, t exactly
    where its shared edge ``edge`` is positive: the columns (or rows) wholly
    on one side go to that triangle, the columns the edge crosses are shaded
    once with each pixel's own planes."""
    u = t + 1
    cs, dxs, dys = _tri_ints(ts, t)[:3]
    c = cs[edge]
    dx = dxs[edge] << 8
    dy = dys[edge] << 8
    if dx == 0:
        # horizontal edge: t's rows are those where c + dy*y > 0 (a prefix or a suffix)
        ys = np.arange(y0, y1 + 1, dtype=np.int64)
        on_t = (c + dy * ys) > 0
        k = int(np.count_nonzero(on_t))
        first, second = (t, u) if on_t[0] else (u, t)
        split = y0 + (k if on_t[0] else (ys.size - k))
        if split > y0:
            _dense_rect(scene, state, ts, first, x0, x1, y0, split - 1, band, False)
        if split <= y1:
            _dense_rect(scene, state, ts, second, x0, x1, split, y1, band, False)
        return
    # t covers x <= (c + dy*y - 1) // dx when dx > 0, x >= (-(c + dy*y)) // -dx + 1
    # when dx < 0: linear in y, so the first and the last row bound every row.
    if dx > 0:
        ks = [(c + dy * y - 1) // dx for y in (y0, y1)]
        left, right = t, u
        left_end, right_start = min(ks), max(ks) + 1
    else:
        ms = [(-(c + dy * y)) // -dx + 1 for y in (y0, y1)]
        left, right = u, t
        left_end, right_start = min(ms) - 1, max(ms)
    m0, m1 = max(left_end + 1, x0), min(right_start - 1, x1)
    if not (scene.zsbuf is not None and state.depth_enabled):
        # one set of fragment operations for the whole interior: each
        # triangle's columns store its planes alone, the crossed ones both
        parts = []
        if min(left_end, x1) >= x0:
            parts.append((0, min(left_end, x1) - x0 + 1, int(left != t)))
        if m0 <= m1:
            parts.append((m0 - x0, m1 - x0 + 1, 2))
        if max(right_start, x0) <= x1:
            parts.append((max(right_start, x0) - x0, x1 - x0 + 1, int(right != t)))
        _dense_mixed(scene, state, ts, t, c, dx, dy, x0, x1, y0, y1, band, parts)
        return
    if min(left_end, x1) >= x0:
        _dense_rect(scene, state, ts, left, x0, min(left_end, x1), y0, y1, band, False)
    if m0 <= m1:
        _dense_mixed(scene, state, ts, t, c, dx, dy, m0, m1, y0, y1, band)
    if max(right_start, x0) <= x1:
        _dense_rect(scene, state, ts, right, max(right_start, x0), x1, y0, y1, band, False)


def _dense_mixed(scene, state, ts, t: int, c, dx, dy, x0, x1, y0, y1, band, parts=None) -> None:
    """Pass-through outputs over a rectangle covered by t and t+1 together:
    t's planes where its shared edge ``c - dx*x + dy*y`` is positive, t+1's
    elsewhere; one set of fragment operations for the whole rectangle.
    ``parts``: runs of columns (x0, x1, kind) relative to the rectangle,
    kind 0 all t's, 1 all t+1's, 2 crossed by the edge (None: all crossed)."""
    with _RowBuffers(x1 - x0 + 1):
        _dense_mixed_rect(scene, state, ts, t, c, dx, dy, x0, x1, y0, y1, band, parts)


def _dense_mixed_rect(scene, state, ts, t: int, c, dx, dy, x0, x1, y0, y1, band, parts) -> None:
    u = t + 1
    px = np.arange(x0, x1 + 1, dtype=np.int64)
    py = np.arange(y0, y1 + 1, dtype=np.int64)
    on_t, counts = _edge_sides(c, dx, dy, px, py, parts)
    outputs = {}
    for reg, slot in state.passthrough.items():
        table = _unorm8_table(ts, slot)
        outputs[reg] = MixedPlaneColour(
            PlaneColour(ts.inputs[t, slot], px, py, table[t]),
            PlaneColour(ts.inputs[u, slot], px, py, table[u]),
            on_t,
            parts,
            dx > 0,  # (t covers x below the edge's crossing: c - dx*x + dy*y > 0)
            counts,
        )
    z: object = F32(0.0)
    if scene.zsbuf is not None and state.depth_enabled:
        h, w = py.size, px.size
        zt = _sub2(_dense_depth(ts, px, py, t), h, w, (slice(None),) * 2)
        zu = _sub2(_dense_depth(ts, px, py, u), h, w, (slice(None),) * 2)
        z = np.where(on_t, zt, zu)
    _fragment_ops(
        scene,
        state,
        (slice(y0, y1 + 1), slice(x0, x1 + 1)),
        True,
        None,
        outputs,
        z,
        bool(ts.facing[t]),
        band,
    )


def _edge_sides(c: int, dx: int, dy: int, px, py, parts) -> tuple[np.ndarray, dict]:
    """Where ``c - dx*x + dy*y > 0`` (an edge function in 1/256 pixels,
    ``dx`` not 0) over the columns ``px`` x rows ``py``: the (h, w) mask, and
    for each crossed run of ``parts`` (kind 2; None: all columns crossed)
    each row's count of pixels inside, keyed by the run's (first, end)
    columns.  The inside of a row is one run of columns, below a bound when
    dx > 0 and above one when dx < 0: solved per row in integers (the
    inequality's own arithmetic) instead of evaluated at every pixel in
    int64 (~0.3 ms for a 512x1024 band)."""
    h, w = py.size, px.size
    lim = c + dy * py  # (h,): inside where dx*x < lim
    on_t = np.empty((h, w), bool)
    counts = {}
    for p0, p1, kind in [(0, w, 2)] if parts is None else parts:
        if kind != 2:
            on_t[:, p0:p1] = kind == 0
            continue
        n = p1 - p0
        cols = np.arange(n, dtype=np.int64)
        if dx > 0:  # x <= (lim - 1) // dx
            cnt = np.clip((lim - 1) // dx - int(px[p0]) + 1, 0, n)
            on_t[:, p0:p1] = cols[None, :] < cnt[:, None]
        else:  # x >= (-lim) // -dx + 1
            cnt = np.clip(int(px[p1 - 1]) - ((-lim) // -dx + 1) + 1, 0, n)
            on_t[:, p0:p1] = cols[None, :] >= (n - cnt)[:, None]
        counts[p0, p1] = cnt
    return on_t, counts


def _row_span(ts, t: int, y: int) -> tuple[int, int]:
    """Covered columns [lo, hi] of row y (hi < lo when none), in Python integers:
    the same solution of ``c - dx*x + dy*y > 0`` as :func:`_row_spans`."""
    lo, hi = -(1 << 40), 1 << 40
    cs, dxs, dys = _tri_ints(ts, t)[:3]
    for c, dx, dy in zip(cs, dxs, dys):
        dx <<= 8
        dy <<= 8
        a = c + dy * y
        if dx > 0:
            hi = min(hi, (a - 1) // dx)
        elif dx < 0:
            lo = max(lo, (-a) // (-dx) + 1)
        elif a <= 0:
            return 0, -1
    return lo, hi


# Lanes per fragment-shader kernel call on a dense rectangle (64 rows of a
# 1024-wide band).  Measured on the 40-instruction shader, CPU ms per
# 1024x1024 frame: 2^18 lanes a call 150-190, 2^17 114-135, 2^16 96-105,
# 2^15 98-112, 2^14 114-150: a vec4 temporary of 2^16 lanes is 1 MB, so a
# few of them stay in the 4 MB L2.
SHADE_LANES = 1 << 16


def _dense_rect(
    scene: Scene, state: FragmentState, ts, t: int, wx0, wx1, wy0, wy1, band: int, edges: bool
):
    """Shade and write triangle ``t`` over the write region [wx0, wx1] x [wy0, wy1].

    ``edges``: some edge may cross the region, so coverage is tested (an edge
    positive on all four corners is skipped); otherwise every pixel is covered.
    """
    with _RowBuffers(wx1 - wx0 + 1):
        _dense_rect_work(scene, state, ts, t, wx0, wx1, wy0, wy1, band, edges)


def _dense_rect_work(scene, state, ts, t: int, wx0, wx1, wy0, wy1, band: int, edges: bool):
    # Lane rectangle aligned to whole quads around the write region.
    lx0, ly0 = wx0 & ~1, wy0 & ~1
    lx1, ly1 = wx1 | 1, wy1 | 1
    px = np.arange(lx0, lx1 + 1, dtype=np.int64)
    py = np.arange(ly0, ly1 + 1, dtype=np.int64)
    h, w = py.size, px.size
    cover = None
    cs, dxs, dys = _tri_ints(ts, t)[:3]
    for i in range(3) if edges else ():
        c = cs[i]
        dx = dxs[i] << 8
        dy = dys[i] << 8
        corners = [c - dx * x + dy * y for x in (wx0, wx1) for y in (wy0, wy1)]
        if min(corners) > 0:
            continue  # the whole write region is inside this edge
        if max(corners) <= 0:
            return  # the whole region is outside this edge
        inside = ((c - dx * px)[None, :] + (dy * py)[:, None]) > 0
        cover = inside if cover is None else (cover & inside)
    sub = (slice(wy0 - ly0, wy1 - ly0 + 1), slice(wx0 - lx0, wx1 - lx0 + 1))
    if cover is not None and not cover[sub].any():
        return
    if state.passthrough is not None and _planes_direct(state, ts):
        _dense_planes(scene, state, ts, t, wx0, wx1, wy0, wy1, band, cover, sub)
        return
    if state.texpass is not None and _dense_texpass(
        scene, state, ts, t, wx0, wx1, wy0, wy1, band, None if cover is None else cover[sub]
    ):
        return
    # The kernel shades whole quads, at most SHADE_LANES lanes a call: the
    # lane rows are cut at even rows, so each quad (and every derivative) is
    # the same as in one call, and so is each pixel's value.
    step = max(2, (SHADE_LANES // w) & ~1)
    for r0 in range(0, h, step):
        r1 = min(h, r0 + step)  # lane rows r0:r1 (r0, r1 even)
        cy0, cy1 = max(wy0, ly0 + r0), min(wy1, ly0 + r1 - 1)  # written rows
        ch = r1 - r0
        csub = (slice(cy0 - ly0 - r0, cy1 - ly0 - r0 + 1), sub[1])
        if cover is not None and not cover[r0:r1][csub].any():
            continue
        geom = _DenseGeom(px, py[r0:r1], t)
        outputs, kill, z = _shade(state, ts, geom, ch * w, (ch // 2, w // 2), bool(ts.facing[t]))
        alive = None if cover is None else cover[r0:r1]
        if kill is not None:
            k2 = kill.reshape(ch, w)
            alive = ~k2 if alive is None else (alive & ~k2)
        _fragment_ops(
            scene,
            state,
            (slice(cy0, cy1 + 1), slice(wx0, wx1 + 1)),
            True,
            None if alive is None else alive[csub],
            _sub_outputs(outputs, ch, w, csub),
            _sub2(z, ch, w, csub),
            bool(ts.facing[t]),
            band,
        )


def _planes_direct(state: FragmentState, ts) -> bool:
    """Whether the pass-through outputs are the input planes themselves: no
    perspective division, or w = 1 at every vertex of the draw.  Decided per
    draw so that every path (dense, pixel lists) treats a pixel alike."""
    if not any(ts.perspective[slot] for slot in state.passthrough.values()):
        return True
    flag = ts.__dict__.get("_all_w_one")
    if flag is None:
        flag = ts.__dict__["_all_w_one"] = bool(ts.w_is_one.all())
    return flag


def _dense_planes(scene, state: FragmentState, ts, t: int, wx0, wx1, wy0, wy1, band, cover, sub):
    """A pass-through shader over a write region: no kernel, the outputs are
    the input planes (PlaneColour), and depth only where it is tested."""
    px = np.arange(wx0, wx1 + 1, dtype=np.int64)
    py = np.arange(wy0, wy1 + 1, dtype=np.int64)
    outputs = {
        reg: PlaneColour(ts.inputs[t, slot], px, py, _unorm8_table(ts, slot)[t])
        for reg, slot in state.passthrough.items()
    }
    z: object = F32(0.0)
    if scene.zsbuf is not None and state.depth_enabled:
        z = _sub2(_dense_depth(ts, px, py, t), py.size, px.size, (slice(None),) * 2)
    _fragment_ops(
        scene,
        state,
        (slice(wy0, wy1 + 1), slice(wx0, wx1 + 1)),
        True,
        None if cover is None else cover[sub],
        outputs,
        z,
        bool(ts.facing[t]),
        band,
    )


def _dense_texpass(scene, state: FragmentState, ts, t: int, wx0, wx1, wy0, wy1, band, alive):
    """A one-TEX shader over a write region whose texture coordinates are
    axis-aligned (s depends on x only, t on y only: a zero dady for s, a zero
    dadx for t, no perspective division): the sampler filters the grid of
    columns x rows at once (sampler.separable_texels) and the packed texels
    go to the store.  Returns False (nothing done) when that does not apply."""
    tp = state.texpass
    if state.textures is None or (ts.perspective[tp.slot] and not ts.w_is_one[t]):
        return False  # (nothing bound: the kernel path raises the error)
    coef = ts.inputs[t, tp.slot]  # (3, 4): a0, dadx, dady
    if coef[2, tp.s] != 0 or coef[1, tp.t] != 0:
        return False
    fx = np.arange(wx0, wx1 + 1, dtype=np.int64).astype(F32)
    fy = np.arange(wy0, wy1 + 1, dtype=np.int64).astype(F32)
    # the same float32 operations as _DenseGeom.plane: (a0 + dadx*x) + dady*y,
    # where dady*y (for s) and dadx*x (for t) are zeros
    s_cols = coef[1, tp.s] * fx
    s_cols += coef[0, tp.s]
    s_cols += coef[2, tp.s] * fy[0]
    t_rows = coef[2, tp.t] * fy
    t_rows += coef[1, tp.t] * fx[0] + coef[0, tp.t]
    res = separable_texels(state.textures, tp.unit, tp.unit, s_cols, t_rows)
    if res is None:
        return False
    z: object = F32(0.0)
    if scene.zsbuf is not None and state.depth_enabled:
        px = np.arange(wx0, wx1 + 1, dtype=np.int64)
        py = np.arange(wy0, wy1 + 1, dtype=np.int64)
        z = _sub2(_dense_depth(ts, px, py, t), py.size, px.size, (slice(None),) * 2)
    _fragment_ops(
        scene,
        state,
        (slice(wy0, wy1 + 1), slice(wx0, wx1 + 1)),
        True,
        alive,
        {tp.out: TexelWords(*res)},
        z,
        bool(ts.facing[t]),
        band,
    )
    return True


def _pixel_planes(state: FragmentState, ts, geom) -> dict:
    """Pass-through outputs of a pixel list as PixelPlaneColour (no kernel)."""
    out: dict = {}
    for reg, slot in state.passthrough.items():
        cols = _unorm8_columns(ts, slot)
        out[reg] = PixelPlaneColour(
            ts.inputs[:, slot], cols, geom.tq, geom.fx, geom.fy, _flat_unorm8(ts, slot, cols)
        )
    return out


def _flat_unorm8(ts, slot: int, cols: np.ndarray) -> tuple[int | None, ...]:
    """flat_unorm8 of input ``slot`` over the whole set, computed once per set."""
    cache = ts.__dict__.setdefault("_flat_unorm8", {})
    flat = cache.get(slot)
    if flat is None:
        flat = cache[slot] = flat_unorm8(cols)
    return flat


def _unorm8_table(ts, slot: int) -> np.ndarray:
    """unorm8_prescale of input ``slot``'s planes for every triangle of the set,
    computed once per set (workers racing here compute the same table)."""
    cache = ts.__dict__.setdefault("_unorm8_scaled", {})
    table = cache.get(slot)
    if table is None:
        table = cache[slot] = unorm8_prescale(ts.inputs[:, slot])
    return table


def _unorm8_columns(ts, slot: int) -> np.ndarray:
    """:func:`_unorm8_table` channel-major, (4, 3, M) contiguous: pixel lists
    gather one coefficient of one channel at a time from it."""
    cache = ts.__dict__.setdefault("_unorm8_cols", {})
    cols = cache.get(slot)
    if cols is None:
        cols = cache[slot] = np.ascontiguousarray(np.transpose(_unorm8_table(ts, slot), (2, 1, 0)))
    return cols


def _sub_outputs(outputs: dict, h: int, w: int, sub: tuple[slice, slice]) -> dict:
    return {k: _sub4(stack, h, w, sub) for k, stack in outputs.items()}


def _sub2(v, h: int, w: int, sub: tuple[slice, slice]):
    if v is None or np.ndim(v) == 0:
        return v
    return np.asarray(v).reshape(h, w)[sub]


def _sub4(stack: np.ndarray, h: int, w: int, sub: tuple[slice, slice]) -> np.ndarray:
    return stack.reshape(4, h, w)[(slice(None), *sub)]


class _DenseGeom:
    """Lane geometry of a dense rectangle: lanes are row-major pixels."""

    dense = True

    def __init__(self, px: np.ndarray, py: np.ndarray, t: int) -> None:
        self.px, self.py, self.t = px, py, t
        self.fx = px.astype(F32)
        self.fy = py.astype(F32)

    def plane(self, coef: np.ndarray) -> np.ndarray:
        """coef (3,) [a0, dadx, dady] -> (a0 + dadx*x) + dady*y as (h*w,) float32."""
        a0, dadx, dady = F32(coef[0]), F32(coef[1]), F32(coef[2])
        row = dadx * self.fx
        row += a0
        col = dady * self.fy
        return np.add(row[None, :], col[:, None]).reshape(-1)

    def plane4(self, coef: np.ndarray) -> np.ndarray:
        """coef (3, 4) -> all four channels as a (4, h*w) stack (same maths as plane)."""
        row = coef[1][:, None] * self.fx[None, :]
        row += coef[0][:, None]
        col = coef[2][:, None] * self.fy[None, :]
        return np.add(row[:, None, :], col[:, :, None]).reshape(4, -1)

    def plane_exact(self, coef: np.ndarray) -> np.ndarray | np.float32:
        """fma(dady, y, fma(dadx, x, a0)), llvmpipe's exact evaluation order.

        A constant plane (dadx = dady = 0) is returned as a scalar: depth
        tests then compare one value against the buffer.
        """
        if coef[1] == 0 and coef[2] == 0:
            return F32(coef[0])
        inner = fma32(F32(coef[1]), self.px, F32(coef[0]))
        return fma32(F32(coef[2]), self.py[:, None], inner[None, :]).reshape(-1)

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        h, w = self.py.size, self.px.size
        return (
            np.broadcast_to(self.px[None, :], (h, w)).reshape(-1),
            np.broadcast_to(self.py[:, None], (h, w)).reshape(-1),
        )


class _SparseGeom:
    """Lane geometry of a quad list: lane 4*q + 2*dy + dx."""

    dense = False

    def __init__(self, qx: np.ndarray, qy: np.ndarray, tq: np.ndarray) -> None:
        self.qx, self.qy, self.tq = qx, qy, tq
        self.px = qx[:, None] + _OX  # (nq, 4)
        self.py = qy[:, None] + _OY
        self.fx = self.px.astype(F32)
        self.fy = self.py.astype(F32)

    def plane(self, coef: np.ndarray) -> np.ndarray:
        """coef (nq, 3) per quad -> (a0 + dadx*x) + dady*y as (4*nq,) float32."""
        row = coef[:, 1:2] * self.fx
        row += coef[:, 0:1]
        col = coef[:, 2:3] * self.fy
        row += col
        return row.reshape(-1)

    def plane4(self, coef: np.ndarray) -> np.ndarray:
        """coef (nq, 3, 4) -> (4, 4*nq) stack (same maths as plane)."""
        c = np.moveaxis(coef, 2, 0)  # (4, nq, 3)
        row = c[:, :, 1:2] * self.fx[None]
        row += c[:, :, 0:1]
        col = c[:, :, 2:3] * self.fy[None]
        row += col
        return row.reshape(4, -1)

    def plane_exact(self, coef: np.ndarray) -> np.ndarray:
        inner = fma32(coef[:, 1:2], self.px, coef[:, 0:1])
        return fma32(coef[:, 2:3], self.py, inner).reshape(-1)

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        return self.px.reshape(-1), self.py.reshape(-1)


class _PixelGeom:
    """Lane geometry of a pixel list (no quads: the shader takes no derivatives)."""

    dense = False

    def __init__(self, px: np.ndarray, py: np.ndarray, tri: np.ndarray) -> None:
        self.px, self.py, self.tq = px, py, tri
        self._fx: np.ndarray | None = None
        self._fy: np.ndarray | None = None

    @property
    def fx(self) -> np.ndarray:
        """float32 pixel columns (made when first asked for: the depth test of
        every fragment needs only the integer coordinates)."""
        if self._fx is None:
            self._fx = self.px.astype(F32)
        return self._fx

    @property
    def fy(self) -> np.ndarray:
        if self._fy is None:
            self._fy = self.py.astype(F32)
        return self._fy

    def plane(self, coef: np.ndarray) -> np.ndarray:
        row = coef[:, 1] * self.fx
        row += coef[:, 0]
        row += coef[:, 2] * self.fy
        return row

    def plane_of(self, cols: np.ndarray) -> np.ndarray:
        """``plane`` of each lane's triangle's plane, ``cols`` the set's planes
        as contiguous columns (3, M) [a0, dadx, dady]: each coefficient is
        gathered from its column (no (n, 3) table): the same values."""
        tq = self.tq
        row = np.take(cols[1], tq)
        row *= self.fx
        row += np.take(cols[0], tq)
        row += np.take(cols[2], tq) * self.fy
        return row

    def attr4(self, ts, slot: int) -> np.ndarray:
        """plane4 of input ``slot`` of each lane's triangle, as a (4, n) stack,
        gathered channel by channel from the set's input planes as contiguous
        columns (_input_columns): the same values as plane4 of the gathered
        (n, 3, 4) coefficients, without that table."""
        cols = _input_columns(ts)[slot]  # (3, 4, M)
        tq = self.tq
        fx, fy = self.fx, self.fy
        out = np.empty((4, tq.size), F32)
        for c in range(4):
            row = out[c]
            np.take(cols[1, c], tq, out=row)
            row *= fx
            row += np.take(cols[0, c], tq)
            row += np.take(cols[2, c], tq) * fy
        return out

    def plane4(self, coef: np.ndarray) -> np.ndarray:
        c = np.moveaxis(coef, 2, 0)  # (4, n, 3)
        row = c[:, :, 1] * self.fx[None]
        row += c[:, :, 0]
        row += c[:, :, 2] * self.fy[None]
        return row

    def plane_exact(self, coef: np.ndarray) -> np.ndarray:
        inner = fma32(coef[:, 1], self.px, coef[:, 0])
        return fma32(coef[:, 2], self.py, inner)

    def depth(self, ts) -> np.ndarray:
        """``plane_exact`` of each pixel's triangle's depth plane, gathering each
        coefficient from a contiguous float64 column (no (n, 3) float32 table
        and its strided columns and casts): the same values."""
        cols = ts.__dict__.get("_z_cols64")
        if cols is None:
            cols = ts.__dict__["_z_cols64"] = np.ascontiguousarray(ts.z.T, np.float64)
        # fma32 in place: the float64 products take the int64 coordinates as
        # they are (exact), each sum rounds once to float32
        t = np.multiply(np.take(cols[1], self.tq), self.px)
        t += np.take(cols[0], self.tq)
        inner = t.astype(F32)
        t = np.multiply(np.take(cols[2], self.tq), self.py, out=t)
        t += inner
        z = t.astype(F32)
        if ts.zoffset is not None:  # (llvmpipe's polygon offset: gallium/draw/polygon.py)
            z += np.take(ts.zoffset, self.tq)
        return z

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        return self.px, self.py


def _input_columns(ts) -> np.ndarray:
    """The set's input planes as (K, 3, 4, M) float32: every coefficient of
    every channel a contiguous column over the triangles (made once per set;
    workers racing here make equal copies)."""
    cols = ts.__dict__.get("_in_cols")
    if cols is None:
        cols = ts.__dict__["_in_cols"] = np.ascontiguousarray(ts.inputs.transpose(1, 2, 3, 0))
    return cols


def _oow_columns(ts) -> np.ndarray:
    """The set's 1/w planes as (3, M) contiguous columns (once per set)."""
    cols = ts.__dict__.get("_oow_cols")
    if cols is None:
        cols = ts.__dict__["_oow_cols"] = np.ascontiguousarray(ts.oow.T)
    return cols


def _coef(ts, geom, arr: np.ndarray) -> np.ndarray:
    """Pick a triangle's coefficients: (3, ...) for dense, (nq, 3, ...) for sparse."""
    if geom.dense:
        return arr[geom.t]
    return arr[geom.tq]


def _shade(state: FragmentState, ts, geom, n: int, quad_shape, facing, z=None, helpers=None):
    """Interpolate the FS inputs, run the fragment shader; return outputs, kill, z.

    ``z``: the fragments' depth when the caller has it already; ``helpers``:
    lanes that run only for their quad's derivatives (their stores and
    atomics never land).
    """
    if z is None:
        if isinstance(geom, _PixelGeom):
            z = geom.depth(ts)
        elif geom.dense:
            z = _dense_depth(ts, geom.px, geom.py, geom.t)
        else:
            z = geom.plane_exact(_coef(ts, geom, ts.z))
            if ts.zoffset is not None:
                z = z + np.repeat(ts.zoffset[geom.tq], 4)
    if state.passthrough is not None and isinstance(geom, _PixelGeom) and _planes_direct(state, ts):
        return _pixel_planes(state, ts, geom), None, z
    rcp_w = None
    if ts.perspective.any():
        w_one = ts.w_is_one[geom.t] if geom.dense else bool(ts.w_is_one[geom.tq].all())
        if not w_one:
            if isinstance(geom, _PixelGeom):
                oow = geom.plane_of(_oow_columns(ts))
            else:
                oow = geom.plane(_coef(ts, geom, ts.oow))
            with np.errstate(divide="ignore", invalid="ignore"):
                rcp_w = np.divide(F32(1.0), oow, out=oow)
    ms = state.msaa
    at_sample = ms.sample_slots if ms is not None and ms.per_sample else ()
    at_centroid = ms.centroid_slots if ms is not None else ()
    centroid: Any = False  # (made when first needed: None when every lane is at its centre)
    rcp_sample = None
    inputs: list = []
    stacks: dict[int, tuple] = {}  # id(channel 0) -> (its (4, n) stack, channel list)
    for reg, kind, slot in state.fs_inputs:
        while len(inputs) <= reg:
            inputs.append(None)
        if kind == "attr":
            if isinstance(geom, _PixelGeom):
                stack = geom.attr4(ts, slot)
            else:
                coef = _coef(ts, geom, ts.inputs)[..., slot, :, :]  # (3, 4) or (nq, 3, 4)
                stack = geom.plane4(coef)
            divided = rcp_w is not None and ts.perspective[slot]
            if slot in at_centroid:
                if centroid is False:
                    centroid = _centroid_lanes(state, ts, geom, n)
                if centroid is not None:
                    coef = _coef(ts, geom, ts.inputs)[..., slot, :, :]
                    stack = _at_centroid(ts, geom, coef, stack, centroid, divided, n)
                    divided = False  # (divided at the centroid)
            if divided and slot in at_sample:  # (1/w at the sample too: msaa.sample_tris)
                if rcp_sample is None:
                    oow = geom.plane(_coef(ts, geom, ts.oow_sample))
                    with np.errstate(divide="ignore", invalid="ignore"):
                        rcp_sample = np.divide(F32(1.0), oow, out=oow)
                stack *= rcp_sample[None, :]
            elif divided:
                stack *= rcp_w[None, :]
            chans = [stack[c] for c in range(4)]
            stacks[id(chans[0])] = (stack, chans)
            inputs[reg] = chans
        elif kind == "pos":
            px, py = geom.coords()
            off = F32(0.0) if state.coord_integer_center else F32(0.5)
            offy = off
            if ms is not None and ms.per_sample and ms.multisample:
                off, offy = (F32(v) for v in msaa_position(ms.samples, state.sample))
            fx = px.astype(F32) + off
            fy = py.astype(F32) + offy
            if state.coord_lower_left:
                fy = F32(state.fb_height) - fy
            if isinstance(geom, _PixelGeom):
                wv = geom.plane_of(_oow_columns(ts))
            else:
                wv = geom.plane(_coef(ts, geom, ts.oow))
            zv = z if np.ndim(z) else np.full(n, z, F32)
            inputs[reg] = [fx, fy, zv, wv]
        elif kind == "face":
            if geom.dense:
                f = F32(1.0) if facing else F32(-1.0)
            else:
                f = np.where(ts.facing[geom.tq], F32(1.0), F32(-1.0))
                if isinstance(geom, _SparseGeom):
                    f = f.repeat(4)
            inputs[reg] = [f, F32(0.0), F32(0.0), F32(1.0)]
        elif kind == "primid":  # integer bits, as every TGSI register holds them
            if geom.dense:
                pid = ts.prim_id[geom.t : geom.t + 1].astype(np.int32).view(F32)[0]
            else:
                pid = ts.prim_id[geom.tq].astype(np.int32).view(F32)
                if isinstance(geom, _SparseGeom):
                    pid = pid.repeat(4)
            inputs[reg] = [pid, pid, pid, pid]
        else:
            inputs[reg] = None
    system_values = (
        _sample_values(state, ts, geom, n)
        if state.kernel.system_value_decls or state.msaa is not None
        else {}
    )
    if state.kernel.uses_fbfetch:
        system_values["__FBFETCH__"] = _fbfetch(geom)
    env = ExecEnv(
        n=n,
        inputs=inputs,
        consts=state.consts,
        quad_shape=quad_shape,
        textures=state.textures,
        system_values=system_values,
        memory=state.memory,
        helper_mask=helpers,
    )
    res = state.kernel(env)
    outputs = {reg: _stacked(chans, n, stacks) for reg, chans in res.outputs.items()}
    kill = None if res.kill is None else np.broadcast_to(res.kill, (n,))
    if state.smooth is not None:
        kind, reg = state.smooth
        outputs, kill = _smooth_coverage(state, kind, inputs[reg], outputs, kill, n)
    return outputs, kill, z


def _smooth_coverage(state: FragmentState, kind: str, coord: list, outputs: dict, kill, n: int):
    """Smooth points and lines (gallium/draw/smooth.py): the alpha of every
    colour output times the coverage from the interpolated coordinate, as
    Mesa 22.3's nir_lower_aapoint_fs / nir_lower_aaline_fs compute it for
    llvmpipe.  A point's fragments beyond the unit circle (1 < s^2 + t^2)
    are killed; its factor is (1 - d) / (1 - k) where k >= d, else 1 (the
    NIR lowering's choice, kept).  A line's is sat(hw - |x|) * sat(hl - |y|)."""
    x, y, zc, wc = (np.asarray(c, F32) for c in coord)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if kind == "point":
            dist = (x * x + y * y).astype(F32)
            out = wc < dist
            kill = out if kill is None else (kill | out)
            cov = ((F32(1.0) / (wc - zc)) * (wc - dist)).astype(F32)
            factor = np.where(zc >= dist, cov, wc).astype(F32)
        else:
            a = (y - np.abs(x)).astype(F32)
            b = (wc - np.abs(zc)).astype(F32)
            # (saturate: NaN to 0)
            a = np.where(a > 0, np.where(a < 1, a, F32(1.0)), F32(0.0)).astype(F32)
            b = np.where(b > 0, np.where(b < 1, b, F32(1.0)), F32(0.0)).astype(F32)
            factor = (a * b).astype(F32)
    factor = np.broadcast_to(factor, (n,))
    out = dict(outputs)
    for reg in _colour_output_regs(state):
        if reg in out:
            stack = np.array(out[reg], F32)
            stack[3] = stack[3] * factor
            out[reg] = stack
    return out, kill


def _colour_output_regs(state: FragmentState) -> list[int]:
    """Every COLOR output register of the fragment shader."""
    regs = state.__dict__.get("_colour_regs")
    if regs is None:
        decls = state.kernel.output_decls
        regs = sorted(r for r, d in decls.items() if d.semantic == "COLOR")
        state.__dict__["_colour_regs"] = regs
    return regs


def _lane_tris(geom, n: int) -> np.ndarray:
    """Each lane's triangle."""
    tri = np.full(n, geom.t) if geom.dense else geom.tq
    if isinstance(geom, _SparseGeom):
        tri = np.repeat(tri, 4)
    return tri.astype(np.int64)


def _lane_coefs(geom, coef: np.ndarray, n: int) -> np.ndarray:
    """Plane coefficients per lane: (3, n) of a (3,) / (nq, 3) / (n, 3) coef,
    (3, 4, n) of a (3, 4) / (nq, 3, 4) / (n, 3, 4) one."""
    if geom.dense:
        return np.broadcast_to(coef[..., None], (*coef.shape, n))
    c = np.moveaxis(coef, 0, -1)  # (3, [4,] nq or n)
    return np.repeat(c, 4, axis=-1) if isinstance(geom, _SparseGeom) else c


def _centroid_lanes(state: FragmentState, ts, geom, n: int):
    """The CENTROID offsets of the lanes (msaa.centroid_offsets), or None."""
    ms = state.msaa
    if not ms.multisample or ms.samples < 2:
        return None
    px, py = geom.coords()
    cover = msaa_coverage(ts, _lane_tris(geom, n), px.reshape(-1), py.reshape(-1))
    return msaa_centroid(ms, cover & ms.mask)


def _at_centroid(ts, geom, coef, stack, centroid, divided: bool, n: int) -> np.ndarray:
    """An input's (4, n) stack moved from the centre to the lanes' centroids
    (and divided by w there when it is perspective-corrected)."""
    ox, oy = centroid
    c = _lane_coefs(geom, coef, n)  # (3, 4, n)
    stack = stack + c[1] * ox + c[2] * oy
    if divided:
        w = _lane_coefs(geom, _coef(ts, geom, ts.oow), n)  # (3, n)
        oow = geom.plane(_coef(ts, geom, ts.oow)) + w[1] * ox + w[2] * oy
        with np.errstate(divide="ignore", invalid="ignore"):
            stack *= (F32(1.0) / oow.astype(F32))[None, :]
    return stack.astype(F32, copy=False)


def _sample_values(state: FragmentState, ts, geom, n: int) -> dict[str, list]:
    """The fragment shader's multisample system values (tgsi.rst): SAMPLEID
    and SAMPLEPOS (the pass's sample when shading per sample, else 0 and the
    centre), SAMPLEMASK (the samples of the pixel the primitive covers, and
    the sample mask; only the pass's sample when shading per sample)."""
    ms = state.msaa
    samples = ms.samples if ms is not None and ms.multisample else 1
    per_sample = ms is not None and ms.per_sample and samples > 1
    s = state.sample if per_sample else 0
    sid = np.array(s, np.int32).view(F32)
    pos = [F32(v) for v in (msaa_position(samples, s) if per_sample else (0.5, 0.5))]
    if samples > 1:
        px, py = geom.coords()
        cover = msaa_coverage(ts, _lane_tris(geom, n), px.reshape(-1), py.reshape(-1))
        cover &= ms.mask if not per_sample else ms.mask & (1 << s)
        mask = cover.astype(np.int32).reshape(np.shape(px)).reshape(-1).view(F32)
    else:
        mask = np.array(1, np.int32).view(F32)
    return {
        "SAMPLEID": [sid, sid, sid, sid],
        "SAMPLEPOS": [pos[0], pos[1], F32(0.0), F32(0.0)],
        "SAMPLEMASK": [mask, mask, mask, mask],
        "__SAMPLE_INFO__": [samples, per_sample],
        "__SAMPLE_POSITIONS__": np.array([msaa_position(samples, k) for k in range(samples)], F32),
    }


def _stacked(chans: list, n: int, stacks: dict[int, tuple[np.ndarray, list]]) -> np.ndarray:
    """An output register as one (4, n) array.

    When the shader passed an interpolated input through unchanged (the
    kernel hands back the very channel arrays it was given), the input's stack
    is reused as is.
    """
    known = stacks.get(id(chans[0]))
    if known is not None and all(chans[c] is known[1][c] for c in range(4)):
        return known[0]
    out = np.empty((4, n), F32)
    for c in range(4):
        v = chans[c]
        if isinstance(v, np.ndarray) and v.dtype != F32 and v.dtype.itemsize == 4:
            v = v.view(F32)  # integer results keep their bits
        out[c] = v
    return out


def _lanes(v, n: int):
    if np.ndim(v) == 0:
        return v
    a = np.asarray(v)
    return a.reshape(-1) if a.size == n else np.broadcast_to(a, (n,))


def _row_spans(ts, ids: np.ndarray, ya: np.ndarray, yb: np.ndarray, x0: np.ndarray, x1: np.ndarray):
    """Exact covered column interval of every (triangle, row) pair.

    For row y, edge i covers x where ``c - dx*x + dy*y > 0`` (the same integer
    edge function as everywhere else), which solves to ``x <= (A-1) // dx``
    when dx > 0 and ``x >= (-A) // (-dx) + 1`` when dx < 0, with
    ``A = c + dy*y``; a flat edge (dx == 0) covers the whole row or none of
    it.  Rows run from ``ya`` to ``yb`` per triangle.  Returns
    (pair -> local triangle, y, xl, xr); an empty span has xr < xl.

    Each edge's quotient is ``(base + step*j) // den`` over the triangle's
    rows j = 0, 1, ..., with the sign of dx folded into per-triangle
    ``base`` and ``step``.  A triangle's edges' dx sum to zero, so it has a
    right edge (dx > 0, bounds xr) and a left one (dx < 0, bounds xl): those
    two need no selection per pair, and only the third edge goes through
    the general form (see :func:`_edge_slots`).
    """
    nrows = yb - ya + 1
    pk = np.repeat(np.arange(ids.size), nrows)
    j = np.arange(pk.size)
    j -= np.take(np.cumsum(nrows) - nrows, pk)  # the row within its triangle
    y = np.take(ya, pk) + j
    xl = np.take(x0, pk)
    xr = np.take(x1, pk)
    dx = ts.dcdx[ids] << 8  # (m, 3)
    dy = ts.dcdy[ids] << 8
    a0 = ts.c[ids] + dy * ya[:, None]  # A at each triangle's first row
    left = dx < 0
    base = np.where(left, -a0, a0 - 1)
    step = np.where(left, -dy, dy)
    den = np.abs(dx)
    # a flat edge covers the row iff A - 1 >= 0, i.e. iff (A - 1) // 2**62 is 0
    # and not -1 (|A| is far below 2**62)
    den[den == 0] = 1 << 62
    tri = np.arange(ids.size)
    for e, kind in _edge_slots(dx):
        q = np.take(base[tri, e], pk)
        q += np.take(step[tri, e], pk) * j
        q //= np.take(den[tri, e], pk)
        if kind == "right":
            np.minimum(xr, q, out=xr)
        elif kind == "left":
            q += 1
            np.maximum(xl, q, out=xl)
        else:
            # per triangle: a right edge bounds xr by q, a left one xl by q + 1;
            # a flat one empties the row (xr <= -2**61) when q is -1
            d = dx[tri, e]
            mul_r = np.where(d > 0, 1, np.where(d < 0, 0, 2 * _NO_BOUND))
            off_r = np.where(d > 0, 0, _NO_BOUND)
            bound = q * np.take(mul_r, pk)
            bound += np.take(off_r, pk)
            np.minimum(xr, bound, out=xr)
            np.multiply(q, np.take((d < 0).astype(np.int64), pk), out=bound)
            bound += np.take(np.where(d < 0, 1, -_NO_BOUND), pk)
            np.maximum(xl, bound, out=xl)
    return pk, y, xl, xr


# A column bound no span reaches (2**61: quotients stay far below it).
_NO_BOUND = 1 << 61

# covered_pixels takes the triangles in groups of at most this many rows.
_COUNT_ROWS = 1 << 20


def covered_pixels(ts) -> int:
    """How many pixels the triangles of ``ts`` cover, each pixel once per
    triangle: the fragments the rasterizer makes of them before any
    per-fragment test (their exact row spans inside their bounding boxes,
    which the setup clipped to the framebuffer and scissor)."""
    if ts.count == 0:
        return 0
    b = ts.bbox.astype(np.int64)
    rows = b[:, 3] - b[:, 1] + 1
    ends = np.cumsum(rows)
    total = 0
    start = 0
    while start < ts.count:
        # the triangles whose rows fit in one group (at least one)
        limit = (ends[start - 1] if start else 0) + _COUNT_ROWS
        stop = max(start + 1, int(np.searchsorted(ends, limit, side="right")))
        ids = np.arange(start, stop)
        _, _, xl, xr = _row_spans(ts, ids, b[ids, 1], b[ids, 3], b[ids, 0], b[ids, 2])
        total += int(np.maximum(xr - xl + 1, 0).sum())
        start = stop
    return total


def _edge_slots(dx: np.ndarray) -> list:
    """Which edge of each triangle (rows of ``dx``) _row_spans takes as its
    right edge, its left edge and its third: [(edge per triangle, kind)].
    Set-up triangles always have both (their dx sum to zero and are not all
    zero); if some row has not, every edge takes the general form."""
    tri = np.arange(dx.shape[0])
    right = np.argmax(dx, axis=1)
    left = np.argmin(dx, axis=1)
    if (dx[tri, right] > 0).all() and (dx[tri, left] < 0).all():
        return [(right, "right"), (left, "left"), (3 - right - left, "any")]
    return [(np.full(tri.size, e), "any") for e in range(3)]


# Tiles of the occlusion test (_hidden_tiles): 4x4 pixels.
HIZ_SHIFT = 2
# Below this many triangles of a draw in a band the test costs more than it saves
# (a few dozen numpy calls per band and draw).
HIZ_MIN_TRIANGLES = 64


class _HiddenTiles:
    """For one draw in one band: per 4x4 tile, the depth bound that a triangle
    covering the whole tile guarantees, and per triangle its own depth bounds;
    also the row spans of the draw's triangles in the band, which the bounds
    are made from and the sparse batches use.

    With an opaque, depth-writing LESS or LEQUAL test, a fragment whose depth
    is strictly greater than another fragment's at the same pixel, in the same
    draw, can never be the one that ends up in the pixel -- whatever the
    order -- so it need not be made at all.  If triangle T covers every pixel
    of a tile, no fragment of T in it is deeper than T's deepest (quantized)
    depth over its bounding box; a triangle U whose shallowest depth over its
    bounding box is deeper than that has nothing visible in the tile.  Depths
    are the exact quantized values the depth test compares (the same
    llvmpipe fused multiply-adds, clamp and rounding, each monotonic in x and
    in y, so a box's extremes are at its corners).  GREATER and GEQUAL mirror
    this.  The result is the same framebuffer; what changes is that on the
    medium bench scene about half the fragments are never expanded.
    ``thr`` is None when no tile is covered whole: nothing is hidden.
    """

    def __init__(self, thr, base_ty, ntx, bound, use_min, spans=None):
        self.thr, self.base_ty, self.ntx = thr, base_ty, ntx
        self.bound = bound  # per triangle of the set: its shallowest (min) or deepest depth
        self.use_min = use_min
        # (pk, y, xl, xr, first): _row_spans of the draw's triangles in the
        # band (pk indexes the draw's ids) and each triangle's first pair
        self._spans = spans

    def spans(self, i0: int, i1: int):
        """_row_spans of the draw's triangles i0 .. i1 - 1 (pk relative to i0),
        or None when they were not kept."""
        if self._spans is None:
            return None
        pk, y, xl, xr, first = self._spans
        sl = slice(int(first[i0]), int(first[i1]))
        return pk[sl] - i0, y[sl], xl[sl], xr[sl]

    def visible_segments(self, y, xl, xr, tri):
        """Cut row spans (row ``y``, columns ``xl..xr`` of triangle ``tri``;
        empty when xr < xl) at tile boundaries and keep the pieces in tiles
        that may show them.  Returns (first column, length, span) per kept
        piece, in span order and left to right, so the fragments they expand
        to keep their order."""
        one = 1 << HIZ_SHIFT
        a = xl >> HIZ_SHIFT
        nseg = np.where(xr >= xl, (xr >> HIZ_SHIFT) - a + 1, 0)
        span = np.repeat(np.arange(nseg.size), nseg)
        row = (y >> HIZ_SHIFT) - self.base_ty
        row *= self.ntx  # per span: the first tile of its row of tiles
        # the tile of every piece: its span's first tile plus its place in the span
        tile = np.arange(span.size, dtype=np.int64)
        tile += np.take(row + a - (np.cumsum(nseg) - nseg), span)
        limit = np.take(self.thr, tile)
        mine = np.take(np.take(self.bound, tri), span)
        keep = (mine <= limit) if self.use_min else (mine >= limit)
        if not keep.all():
            # one index, two takes: ~2.5x faster than boolean masks
            kept = np.flatnonzero(keep)
            span, tile = np.take(span, kept), np.take(tile, kept)
        col = tile - np.take(row, span)
        col <<= HIZ_SHIFT  # the piece's tile's first column
        lo = np.maximum(np.take(xl, span), col)
        col += one - 1
        count = np.minimum(np.take(xr, span), col)
        count -= lo
        count += 1
        return lo, count, span


def _depth_bounds(scene, state: FragmentState, ts) -> tuple[np.ndarray, np.ndarray]:
    """Every triangle's (min, max) quantized depth over its bounding box's
    corners, as _depth_winners quantizes; triangles with non-finite depth
    planes get bounds that neither hide nor are hidden.  Cached on the set."""
    layout = scene.zsbuf.layout
    lo, hi = state.depth_clamp
    key = ("_depth_bounds", float(lo), float(hi), int(layout.z_bits))
    hit = ts.__dict__.get(key)
    if hit is not None:
        return hit
    maxv = F32((1 << layout.z_bits) - 1)
    corners = []
    for z in _corner_depths(ts):
        zc = np.clip(z, F32(lo), F32(hi))
        zc *= maxv
        corners.append(np.rint(zc).astype(np.int64))
    zq = np.stack(corners)
    zmin, zmax = zq.min(axis=0), zq.max(axis=0)
    bad = ~np.isfinite(ts.z).all(axis=1)
    if bad.any():
        big = np.iinfo(np.int64)
        zmin[bad], zmax[bad] = big.min, big.max
    ts.__dict__[key] = (zmin, zmax)
    return zmin, zmax


def _corner_depths(ts) -> list[np.ndarray]:
    """Every triangle's depth (``_PixelGeom.depth``'s fused multiply-adds) at
    its bounding box's four corners: the extremes of its fragments' depths,
    each operation being monotonic in x and in y.  Cached on the set."""
    hit = ts.__dict__.get("_corner_depths")
    if hit is None:
        bb = ts.bbox.astype(np.int64)
        cols = np.ascontiguousarray(ts.z.T, np.float64)
        hit = ts.__dict__["_corner_depths"] = [
            fma32(cols[2], bb[:, cy], fma32(cols[1], bb[:, cx], cols[0]))
            for cx, cy in ((0, 1), (2, 1), (0, 3), (2, 3))
        ]
        if ts.zoffset is not None:  # (adding a constant keeps the order)
            hit = ts.__dict__["_corner_depths"] = [z + ts.zoffset for z in hit]
    return hit


def _dense_depth(ts, px: np.ndarray, py: np.ndarray, t: int):
    """Triangle ``t``'s depth over the columns ``px`` x rows ``py`` (row-major,
    or one value for a constant plane), with its polygon offset added as
    llvmpipe adds it to each fragment's interpolated depth."""
    z = _DenseGeom(px, py, t).plane_exact(ts.z[t])
    return z if ts.zoffset is None else z + ts.zoffset[t]


def _depths_in_range(state: FragmentState, ts) -> bool:
    """Whether every fragment depth of the set lies in the depth range, so
    clamping it changes nothing (finite corners inside [lo, hi])."""
    lo, hi = state.depth_clamp
    key = ("_depths_in_range", float(lo), float(hi))
    hit = ts.__dict__.get(key)
    if hit is None:
        corners = _corner_depths(ts)
        hit = ts.__dict__[key] = bool(
            all(np.isfinite(z).all() and z.min(initial=lo) >= lo and z.max(initial=hi) <= hi
                for z in corners)
        )  # fmt: skip
    return hit


# The row spans _hidden_tiles makes are kept for the batches up to this many
# (triangle, row) pairs (32 bytes each); beyond it, batches make their own.
KEEP_SPANS = 1 << 20


def _hidden_tiles(scene, state: FragmentState, ts, ids: np.ndarray, y0: int, y1: int):
    """The band's _HiddenTiles for a draw, or None when the test does not apply:
    only where the sparse path resolves depth in closed form (opaque,
    depth-writing LESS/LEQUAL/GREATER/GEQUAL, nothing counted, early depth,
    a quantized depth buffer), so every occluding fragment is sure to be
    tested and written.

    A triangle covers a 4x4 tile whole when its spans on the tile's first
    and last rows both contain the tile's columns: each edge bounds a row's
    span monotonically in y (one integer solution per row, _row_spans), so
    the span on every row between contains their intersection."""
    zs = scene.zsbuf
    if (
        ids.size < HIZ_MIN_TRIANGLES
        or zs is None
        or not state.early_z
        or state.needs_quads
        or not _opaque_winners_possible(state)
    ):
        return None
    if not _winners_layout(zs):
        return None
    use_min = int(state.dsa.depth.func) in _MIN_FUNCS
    zmin, zmax = _depth_bounds(scene, state, ts)
    bb = ts.bbox[ids].astype(np.int64)
    ya = np.maximum(bb[:, 1], y0)
    yb = np.minimum(bb[:, 3], y1 - 1)
    nrows = np.maximum(yb - ya + 1, 0)
    first = np.zeros(ids.size + 1, np.int64)
    np.cumsum(nrows, out=first[1:])
    keep = int(first[-1]) <= KEEP_SPANS
    one = 1 << HIZ_SHIFT
    base_ty = y0 >> HIZ_SHIFT
    ntx = (scene.width + one - 1) >> HIZ_SHIFT
    nty = ((y1 - 1) >> HIZ_SHIFT) - base_ty + 1
    big = np.iinfo(np.int64)
    thr = np.full(nty * ntx, big.max if use_min else big.min, np.int64)
    covering = zmax if use_min else zmin  # what a triangle guarantees in a tile it covers
    any_full = False
    kept = []
    # triangles in chunks of at most KEEP_SPANS pairs (one when keeping them)
    start = 0
    while start < ids.size:
        end = int(np.searchsorted(first, first[start] + KEEP_SPANS, side="right")) - 1
        end = ids.size if keep else max(end, start + 1)
        sl = slice(start, end)
        spans = _row_spans(ts, ids[sl], ya[sl], yb[sl], bb[sl, 0], bb[sl, 2])
        if keep:
            kept = spans
        tiles = (thr, base_ty, ntx, use_min)
        any_full |= _cover_tiles(*tiles, spans, ya[sl], yb[sl], covering[ids[sl]])
        start = end
    spans = (*kept, first) if keep else None
    if not any_full:
        thr = None
    if thr is None and spans is None:
        return None
    return _HiddenTiles(thr, base_ty, ntx, zmin if use_min else zmax, use_min, spans)


def _cover_tiles(thr, base_ty: int, ntx: int, use_min: bool, spans, ya, yb, covering) -> bool:
    """Fold into ``thr`` the depth bound of every tile a triangle covers whole
    (rows of tiles inside the triangle's rows; on each, the columns inside
    the spans of its first and last row).  Returns whether any tile was."""
    _, _, xl, xr = spans
    one = 1 << HIZ_SHIFT
    nrows = yb - ya + 1
    first = np.cumsum(nrows) - nrows  # each triangle's first pair
    ty0 = (ya + one - 1) >> HIZ_SHIFT
    ntr = np.maximum(((yb + 1) >> HIZ_SHIFT) - ty0, 0)
    k, ty = _expand(ty0, ntr)  # (triangle, row of tiles)
    if not k.size:
        return False
    top = np.take(first - ya, k)
    top += ty << HIZ_SHIFT  # the pair of the tile row's first row
    bottom = top + (one - 1)
    lo = np.maximum(np.take(xl, top), np.take(xl, bottom))
    hi = np.minimum(np.take(xr, top), np.take(xr, bottom))
    tx0 = (lo + (one - 1)) >> HIZ_SHIFT
    ntiles = np.maximum(((hi + 1) >> HIZ_SHIFT) - tx0, 0)
    if not ntiles.any():
        return False
    owner, tx = _expand(tx0, ntiles)
    tile = np.take((ty - base_ty) * ntx, owner)
    tile += tx
    (np.minimum if use_min else np.maximum).at(thr, tile, np.take(np.take(covering, k), owner))
    return True


def _sparse_run(
    scene: Scene,
    state: FragmentState,
    ts,
    ids: np.ndarray,
    y0,
    y1,
    band,
    hiz=None,
    at: int = 0,
    zs_word: int | None = None,
) -> None:
    """Shade and write a run of small triangles, in batches of bounded size
    (``at``: the run's first triangle in the draw's triangles of the band;
    ``zs_word``: the one word every depth/stencil pixel of the band holds,
    when known)."""
    bb = ts.bbox[ids].astype(np.int64)
    ya = np.maximum(bb[:, 1], y0)
    yb = np.minimum(bb[:, 3], y1 - 1)
    # bound a batch by its candidate pixels (bounding-box area in the band)
    cost = (bb[:, 2] - bb[:, 0] + 2) * (yb - ya + 2)
    cum = np.cumsum(cost)
    planes_only = (
        not state.needs_quads and state.passthrough is not None and _planes_direct(state, ts)
    )
    bound = SPARSE_PLANE_PIXELS if planes_only else 4 * SPARSE_MAX_QUADS
    run_depth = None
    if not state.needs_quads and state.early_z and _opaque_winners_possible(state):
        r0, r1 = int(ya.min()), int(yb.max()) + 1
        zs = scene.zsbuf
        if (
            zs is not None
            and _winners_layout(zs)
            and int(cum[-1]) >= RUN_DEPTH_MIN_RATIO * (r1 - r0) * target_run(zs)[1]
        ):
            run_depth = _RunDepth(scene, state, y0, r0, r1, zs_word)
    start = 0
    while start < ids.size:
        base = cum[start - 1] if start else 0
        end = max(int(np.searchsorted(cum, base + bound, side="right")), start + 1)
        sl = slice(start, end)
        if state.needs_quads:
            _quad_batch(scene, state, ts, ids[sl], ya[sl], yb[sl], bb[sl, 0], bb[sl, 2], band)
        else:
            args = (ids[sl], ya[sl], yb[sl], bb[sl, 0], bb[sl, 2])
            _pixel_batch(scene, state, ts, *args, band, hiz, run_depth, at + start)
        start = end


def _expand(lo: np.ndarray, count: np.ndarray, step: int = 1):
    """For intervals (lo, count): the owning interval of every element, and its value."""
    owner = np.repeat(np.arange(count.size), count)
    # element j of interval i is lo[i] + step * (j - start[i]): one repeat of
    # the per-interval offset lo - step * start, plus step * j
    offset = lo - step * (np.cumsum(count) - count)
    value = np.arange(owner.size, dtype=np.int64)
    if step != 1:
        value *= step
    value += np.take(offset, owner)  # (take releases the GIL, repeat does not)
    return owner, value


def _pixel_batch(scene, state, ts, ids, ya, yb, x0, x1, band, hiz=None, run_depth=None, at=0):
    """Shaders without derivatives: one lane per covered pixel, nothing else.
    ``at``: the batch's first triangle in the draw's triangles of the band
    (where ``hiz`` keeps their row spans)."""
    spans = None if hiz is None else hiz.spans(at, at + ids.size)
    if spans is None:
        spans = _row_spans(ts, ids, ya, yb, x0, x1)
    pk, y, xl, xr = spans
    count = np.maximum(xr - xl + 1, 0)
    if not count.any():
        return
    tri = np.take(ids, pk)  # per span
    if hiz is not None and hiz.thr is not None:
        lo, count, seg_span = hiz.visible_segments(y, xl, xr, tri)
        if lo.size == 0:
            return
        y, tri = np.take(y, seg_span), np.take(tri, seg_span)  # per piece
        xl = lo
    owner, px = _expand(xl, count)
    py = np.take(y, owner)
    tri = np.take(tri, owner)
    geom = _PixelGeom(px, py, tri)
    if state.early_z:
        _early_z_batch(scene, state, ts, geom, band, run_depth)
        return
    outputs, kill, z = _shade(state, ts, geom, px.size, None, None)
    alive = None if kill is None else ~kill
    _resolve_and_write(scene, state, ts, geom, tri, px, py, alive, outputs, z, band)


_scratch = threading.local()
_UNSET = np.iinfo(np.int64).max


def _scratch_array(size: int) -> np.ndarray:
    """A per-thread int64 array of at least ``size`` entries indexed by band pixel.

    Users set the entries at the keys they touch before reading any of them
    and read no others, so the array never needs clearing (a band can hold
    millions of pixels) and what a user leaves behind is never seen.
    """
    arr = getattr(_scratch, "arr", None)
    if arr is None or arr.size < size:
        arr = np.full(max(size, 1 << 16), _UNSET, np.int64)
        _scratch.arr = arr
    return arr


def _run_scratch(size: int) -> np.ndarray:
    """A per-thread int64 array of at least ``size`` entries for _RunDepth's
    keys (apart from _scratch_array's: a run's keys live across its batches)."""
    arr = getattr(_scratch, "keys", None)
    if arr is None or arr.size < size:
        arr = np.empty(max(size, 1 << 16), np.int64)
        _scratch.keys = arr
    return arr


def _pixel_keys(scene, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    return (py % scene.band_rows) * scene.width + px


def _layers(scene, px: np.ndarray, py: np.ndarray) -> list[np.ndarray] | None:
    """Split fragments (ordered by triangle) into layers of distinct pixels.

    Layer k holds the k-th fragment of every pixel, in order: each wave takes
    every pixel's first remaining fragment (a scatter-min of fragment
    indices).  Returns None when no pixel repeats (one layer: everything).
    """
    n = px.size
    key = _pixel_keys(scene, px, py)
    firsts = _scratch_array(scene.band_rows * scene.width)
    remaining = np.arange(n)
    layers = []
    while remaining.size:
        k = key[remaining]
        firsts[k] = n
        np.minimum.at(firsts, k, remaining)
        is_first = firsts[k] == remaining
        if not layers and is_first.all():
            return None
        layers.append(remaining[is_first])
        remaining = remaining[~is_first]
    return layers


def _early_z_batch(scene, state: FragmentState, ts, geom, band: int, run_depth=None) -> None:
    """Depth-test first, shade only what survives (llvmpipe's early depth test).

    Allowed when the shader cannot change a fragment's fate (no depth or
    stencil output, no KILL) and neither alpha test nor stencil is on: then
    testing before shading gives the same result, and colour interpolation
    is spent only on fragments that are written.
    """
    px, py, tri = geom.px, geom.py, geom.tq
    z = geom.depth(ts)
    if _opaque_winners_possible(state):
        clamp = not _depths_in_range(state, ts)
        winners = _depth_winners(scene, state, px, py, z, run_depth, clamp)
        if winners is not None:
            if winners.size:
                # (np.take gathers from a contiguous array ~1.8x faster than
                # indexing with an integer array)
                sgeom = _PixelGeom(
                    np.take(px, winners), np.take(py, winners), np.take(tri, winners)
                )
                if state.passthrough is not None and _planes_direct(state, ts):
                    outputs = _pixel_planes(state, ts, sgeom)  # (no depth needed)
                else:
                    zw = np.take(z, winners) if np.ndim(z) else z
                    outputs, _, _ = _shade(state, ts, sgeom, winners.size, None, None, zw)
                _colour_writes(scene, state, (sgeom.py, sgeom.px), False, None, outputs)
            return
    layers = _layers(scene, px, py) or [np.arange(px.size)]
    survivors = []
    for m in layers:
        zl = z[m] if np.ndim(z) else z
        passed = depth_stencil(state, scene.zsbuf, (py[m], px[m]), False, None, zl, None, None)
        count = int(np.count_nonzero(passed))
        for counter in state.counters:
            counter.add(count)
        survivors.append(m[passed])
    sizes = [s.size for s in survivors]
    if not any(sizes):
        return
    keep = np.concatenate(survivors)
    sgeom = _PixelGeom(px[keep], py[keep], tri[keep])
    outputs, kill, _ = _shade(state, ts, sgeom, keep.size, None, None)
    start = 0
    for n in sizes:
        if n:
            sl = slice(start, start + n)
            alive = None if kill is None else ~kill[sl]
            _colour_writes(
                scene, state, (sgeom.py[sl], sgeom.px[sl]), False, alive,
                {r: stack[:, sl] for r, stack in outputs.items()},
            )  # fmt: skip
        start += n


def _early_tests(scene, state: FragmentState, ts, geom) -> np.ndarray:
    """Depth/stencil-test pixel fragments (ordered by triangle) before
    shading, in submission order per pixel (layers), writing what passes;
    returns which passed."""
    px, py = geom.px, geom.py
    z = geom.depth(ts)
    passed = np.zeros(px.size, bool)
    for m in _layers(scene, px, py) or [np.arange(px.size)]:
        zl = z[m] if np.ndim(z) else z
        ok = depth_stencil(state, scene.zsbuf, (py[m], px[m]), False, None, zl, None, None)
        count = int(np.count_nonzero(ok))
        for counter in state.counters:
            counter.add(count)
        passed[m] = ok
    return passed


_MIN_FUNCS = {int(CompareFunc.LESS): False, int(CompareFunc.LEQUAL): True}
_MAX_FUNCS = {int(CompareFunc.GREATER): False, int(CompareFunc.GEQUAL): True}


def _opaque_winners_possible(state: FragmentState) -> bool:
    """Depth-tested, depth-writing, unblended, uncounted: the last write wins."""
    d = state.dsa.depth
    f = int(d.func)
    return (
        d.writemask
        and (f in _MIN_FUNCS or f in _MAX_FUNCS)
        and not state.counters
        and not state.blend_enabled
        and not state.side_effects  # (every passing fragment runs the shader)
        and not state.kernel.uses_kill  # (early tests: a killed winner writes no colour)
        and state.logicop is None
    )


def _winners_layout(zs) -> bool:
    """Whether _depth_winners handles this depth buffer: integer depth in
    the low bits of the words (stencil, if any, above it), words adjacent in
    a row, rows a whole number of words apart (padding allowed)."""
    layout = zs.layout
    return not (
        layout.z_float
        or layout.split
        or (layout.s_bits and layout.z_shift)
        or layout.z_bits > 31
        or target_run(zs) is None
    )


def _depth_winners(
    scene, state: FragmentState, px, py, z, run_depth=None, clamp: bool = True
) -> np.ndarray | None:
    """Closed form of a sequence of opaque depth-tested writes per pixel.

    With LESS, fragment i passes iff z_i < min(buffer, z_1..z_i-1), so the
    pixel ends with the *first* fragment holding the minimum depth (if it
    beats the buffer); with LEQUAL the *last* one; GREATER/GEQUAL mirror
    that.  Depths are compared in the buffer's quantised form, exactly as
    the sequential test would.  Writes the depth buffer; returns the winning
    fragments' indices (one per pixel), or None for a format this does not
    handle.  ``run_depth``, a :class:`_RunDepth` of the sparse run the
    fragments belong to, carries the pixels' best depths from batch to batch;
    ``clamp=False`` when the depths are known to lie in the depth range.
    """
    zs = scene.zsbuf
    layout = zs.layout
    if not _winners_layout(zs):
        return None
    n = px.size
    zq = _quantized(state, layout, z, n, clamp)
    if run_depth is not None:
        if n <= RUN_ORDER_LIMIT:
            return run_depth.resolve(px, py, zq)
        run_depth.stale()  # this batch writes past its keys
    f = int(state.dsa.depth.func)
    use_min = f in _MIN_FUNCS
    take_last = _MIN_FUNCS.get(f, _MAX_FUNCS.get(f))
    # the words as one run (rows may be padded: index by the row pitch)
    run, rw = target_run(zs)
    flat = py * rw + px  # index into the framebuffer's pixel words
    words = run[flat]
    stored = words >> np.asarray(layout.z_shift, words.dtype) if layout.z_shift else words
    if not layout.z_at_top:
        stored = stored & np.asarray((1 << layout.z_bits) - 1, words.dtype)
    stored = stored.astype(np.int64)  # ufunc.at is fast only on matching dtypes
    key = flat - (int(py.min()) // scene.band_rows) * scene.band_rows * rw
    best = _scratch_array(scene.band_rows * rw)
    if n < _ORDER_ONE:
        winners = _winners_one_pass(best, key, zq, stored, use_min, take_last, n)
    else:
        winners = _winners_two_passes(best, key, zq, stored, use_min, take_last, n)
    if winners.size:
        new = np.take(zq, winners).astype(words.dtype)
        if layout.z_shift:
            new <<= np.asarray(layout.z_shift, words.dtype)
        if layout.s_bits:
            new |= np.take(words, winners) & np.asarray(layout.s_mask, words.dtype)
        run[flat[winners]] = new
    return winners


def _quantized(state: FragmentState, layout, z, n: int, clamp: bool = True) -> np.ndarray:
    """Fragment depths as the depth buffer holds them (int64): clamped to
    the viewport's depth range, scaled to the format's range and rounded
    to nearest even, as llvmpipe converts them.  ``clamp=False``: the
    depths are known to lie in the range already (:func:`_depths_in_range`)."""
    lo, hi = state.depth_clamp
    maxv = F32((1 << layout.z_bits) - 1)
    if np.ndim(z):
        if clamp:
            zc = np.clip(z, F32(lo), F32(hi))
            zc *= maxv
        else:
            zc = np.multiply(z, maxv)
        return np.rint(zc, out=zc).astype(np.int64)
    return np.full(n, int(np.rint(F32(min(max(z, lo), hi)) * maxv)), np.int64)


# Keys of a _RunDepth: the quantized depth (at most 31 bits, _winners_layout)
# above 31 order bits; a run orders at most RUN_ORDER_LIMIT fragments before
# it reloads its keys from the depth buffer.
_RUN_ORDER_BITS = 31
RUN_ORDER_LIMIT = 1 << (_RUN_ORDER_BITS - 1)
# A sparse run resolves depth with a _RunDepth when its triangles' candidate
# pixels (bounding boxes) number at least this many times the words of the
# rows it touches (loading them is one contiguous pass; otherwise each batch
# gathers and scatters only the pixels it hits).
RUN_DEPTH_MIN_RATIO = 1.0


class _RunDepth:
    """The depth test of one sparse run of opaque triangles in one band,
    resolved in closed form across all its batches.

    ``best`` holds one key per pixel of the rows the run touches: the depth
    in the buffer's quantized form above an order field, the same keys as
    :func:`_winners_one_pass` uses.  The keys are loaded once from the depth
    buffer (with the buffer's order) and then kept from batch to batch:
    fragment orders continue across batches, so a fragment meeting an
    earlier batch's winner compares with it exactly as it would with the
    depth that winner wrote (LESS and GREATER keep the earlier one on equal
    depths, LEQUAL and GEQUAL take the later).  Each batch scatters its own
    fragments' keys with one scatter-min (or -max), writes its winners'
    depths and returns them: the same winners and bytes as resolving each
    batch against the buffer, without gathering the buffer's words and
    scattering their keys again per batch.

    ``word``: the one word every pixel of the band holds, when known (the
    band was just cleared): the first load then fills the keys with that
    word's key instead of converting the rows' words one by one.
    """

    def __init__(
        self, scene, state: FragmentState, y0: int, r0: int, r1: int, word: int | None = None
    ) -> None:
        zs = scene.zsbuf
        self.layout = zs.layout
        self.run, self.rw = target_run(zs)
        f = int(state.dsa.depth.func)
        self.use_min = f in _MIN_FUNCS
        take_last = _MIN_FUNCS.get(f, _MAX_FUNCS.get(f))
        # orders rise where the reduction prefers small orders and the first
        # should win (LESS) or prefers large ones and the last should (GEQUAL)
        self.rising = self.use_min != take_last
        self.base = y0 * self.rw  # word index of the band's first row
        self.lo = (r0 - y0) * self.rw  # keys of rows r0 .. r1 - 1
        self.hi = (r1 - y0) * self.rw
        self.y0 = y0
        self.best = _run_scratch(scene.band_rows * self.rw)
        self.stencil = None  # the rows' one stencil value, when they hold one (_load)
        self.word = word
        self.used = RUN_ORDER_LIMIT  # load before the first batch

    def stale(self) -> None:
        """A batch wrote depths past the keys: load them again before the next."""
        self.used = RUN_ORDER_LIMIT
        self.word = None

    def _load(self) -> None:
        """Keys of the buffer's depths, with the order that loses (LEQUAL,
        GEQUAL) or keeps (LESS, GREATER) the pixel on an equal depth."""
        words = self.run[self.base + self.lo : self.base + self.hi]  # (the last row unpadded)
        keys = self.best[self.lo : self.lo + words.size]
        if self.word is not None:
            # every pixel holds one word: its key, made by the same steps
            # from a one-word array, filled in (pixels' words are written
            # back only by batches, so later loads read the buffer)
            one = self.best[self.lo : self.lo + 1]
            words = np.asarray([self.word], words.dtype)
            self.word = None
            self._keys(one, words)
            keys.fill(int(one[0]))
            return
        self._keys(keys, words)

    def _keys(self, keys: np.ndarray, words: np.ndarray) -> None:
        layout = self.layout
        np.copyto(keys, words, casting="unsafe")
        self.stencil = None
        if layout.s_bits:
            # the run does not test or write stencil (early depth): when the
            # rows hold one stencil value, winners' words take it without
            # gathering their old words
            s = np.bitwise_and(words, np.asarray(layout.s_mask, words.dtype))
            if s.size and s.min() == s.max():
                self.stencil = np.asarray(s[0], words.dtype)
        if layout.z_shift:
            keys >>= layout.z_shift
        if not layout.z_at_top:
            keys &= (1 << layout.z_bits) - 1
        keys <<= _RUN_ORDER_BITS
        if not self.rising:
            keys |= (1 << _RUN_ORDER_BITS) - 1
        self.used = 0

    def resolve(self, px: np.ndarray, py: np.ndarray, zq: np.ndarray) -> np.ndarray:
        """Winners of one batch (fragment indices, one per pixel they keep);
        writes their depths.  ``zq`` (quantized depths) becomes the keys."""
        n = px.size
        if self.used + n > RUN_ORDER_LIMIT:
            self._load()
        key = py - self.y0
        key *= self.rw
        key += px
        mine = zq
        mine <<= _RUN_ORDER_BITS
        if self.rising:
            mine += np.arange(self.used + 1, self.used + 1 + n, dtype=np.int64)
        else:
            top = RUN_ORDER_LIMIT - self.used
            mine += np.arange(top, top - n, -1, dtype=np.int64)
        self.used += n
        (np.minimum if self.use_min else np.maximum).at(self.best, key, mine)
        winners = np.flatnonzero(np.take(self.best, key) == mine)
        if winners.size:
            layout = self.layout
            flat = np.take(key, winners)
            flat += self.base
            new = np.take(mine, winners)
            new >>= _RUN_ORDER_BITS
            new = new.astype(self.run.dtype)
            if layout.z_shift:
                new <<= np.asarray(layout.z_shift, new.dtype)
            if self.stencil is not None:
                new |= self.stencil
            elif layout.s_bits:
                new |= self.run[flat] & np.asarray(layout.s_mask, new.dtype)
            self.run[flat] = new
        return winners


# Fragment order fields of _winners_one_pass: 1 .. _ORDER_ONE in the low bits.
_ORDER_BITS = 21
_ORDER_ONE = 1 << (_ORDER_BITS - 1)


def _winners_one_pass(best, key, zq, stored, use_min: bool, take_last: bool, n: int):
    """The winning fragment of each pixel with one scatter-min (or -max).

    Each fragment's key is ``zq << 21 | order``.  Among equal depths the
    order decides: the winner must be the first fragment (LESS, GREATER) or
    the last (LEQUAL, GEQUAL), so ``order`` is ``index + 1`` where the
    reduction prefers it small and the first should win (LESS) or prefers it
    large and the last should win (GEQUAL), else ``2**20 - index``.  The
    buffer's depth enters with order 0 or ``2**21 - 1``: it keeps the pixel
    against an equal depth for LESS and GREATER, and gives it up for LEQUAL
    and GEQUAL.  Keys are unique per fragment, so the winners are the
    fragments whose key is their pixel's result."""
    idx = np.arange(n, dtype=np.int64)
    if use_min != take_last:  # LESS (min, first) and GEQUAL (max, last)
        order = idx + 1
        buffer_order = 0
    else:  # LEQUAL (min, last) and GREATER (max, first)
        order = _ORDER_ONE - idx
        buffer_order = (1 << _ORDER_BITS) - 1
    mine = zq << _ORDER_BITS
    mine |= order
    best[key] = (stored << _ORDER_BITS) | buffer_order
    (np.minimum if use_min else np.maximum).at(best, key, mine)
    winners = np.flatnonzero(np.take(best, key) == mine)
    return winners


def _winners_two_passes(best, key, zq, stored, use_min: bool, take_last: bool, n: int):
    """:func:`_winners_one_pass` for batches too long for its order field:
    the best depth per pixel first, then the first (or last) fragment holding it."""
    # best depth per pixel, starting from the buffer's value
    best[key] = stored
    (np.minimum if use_min else np.maximum).at(best, key, zq)
    bz = np.take(best, key)
    cand = zq == bz
    if take_last:
        cand &= (zq <= stored) if use_min else (zq >= stored)
    else:
        cand &= (zq < stored) if use_min else (zq > stored)
    idx = np.nonzero(cand)[0]
    best[key] = -1 if take_last else n
    ck = key[idx]
    (np.maximum if take_last else np.minimum).at(best, ck, idx)
    winners = idx[best[ck] == idx]
    return winners


def _quad_batch(scene, state, ts, ids, ya, yb, x0, x1, band) -> None:
    """Shaders with derivatives: 2x2 quads over each pair of rows' spans."""
    ya2 = ya & ~1
    yb2 = yb | 1
    pk, y, xl, xr = _row_spans(ts, ids, ya2, yb2, x0, x1)
    outside = (y < ya[pk]) | (y > yb[pk])
    xr = np.where(outside, xl - 1, xr)
    # rows come in (even, odd) pairs per triangle: one quad row each
    xl2, xr2 = xl.reshape(-1, 2), xr.reshape(-1, 2)
    qk = pk[::2]
    qyr = y[::2]
    full = xr2 >= xl2
    any_row = full.any(axis=1)
    big = np.iinfo(np.int64).max
    lo = np.where(full, xl2, big).min(axis=1) & ~1
    hi = np.where(full, xr2, -big).max(axis=1)
    nq = np.where(any_row, (hi - lo) // 2 + 1, 0)
    if not nq.any():
        return
    qrow, qx = _expand(lo, nq, 2)
    qy = qyr[qrow]
    tri = ids[qk[qrow]]
    px = qx[:, None] + _OX
    cover = (px >= xl2[qrow][:, _OY]) & (px <= xr2[qrow][:, _OY])
    keep = cover.any(axis=1)
    qx, qy, tri, cover = qx[keep], qy[keep], tri[keep], cover[keep]
    nq = qx.size
    if nq == 0:
        return
    geom = _SparseGeom(qx, qy, tri)
    alive = cover.reshape(-1)
    lx, ly = geom.coords()
    if state.early_tests:  # depth/stencil first, then shade with the failures as helpers
        lanes = np.flatnonzero(alive)
        pgeom = _PixelGeom(lx[lanes], ly[lanes], np.repeat(tri, 4)[lanes])
        passed = np.zeros(alive.size, bool)
        passed[lanes] = _early_tests(scene, state, ts, pgeom)
        outputs, kill, _ = _shade(state, ts, geom, 4 * nq, (nq, 1), None, helpers=~passed)
        if kill is not None:
            passed &= ~kill
        sel = np.flatnonzero(passed)
        if sel.size:
            idx = (ly[sel], lx[sel])
            _colour_writes(
                scene, state, idx, False, None, {r: st[:, sel] for r, st in outputs.items()}
            )
        return
    helpers = ~alive if state.side_effects else None
    outputs, kill, z = _shade(state, ts, geom, 4 * nq, (nq, 1), None, helpers=helpers)
    if kill is not None:
        alive = alive & ~kill
    _resolve_and_write(scene, state, ts, geom, np.repeat(tri, 4), lx, ly, alive, outputs, z, band)


def _resolve_and_write(scene, state, ts, geom, tri, px, py, alive, outputs, z, band) -> None:
    """Apply fragments to the framebuffer in submission order.

    Fragments come ordered by triangle.  When several hit one pixel they are
    split into layers (the k-th hit of each pixel) applied one after another,
    so every pixel sees its fragments in the order the triangles were drawn.
    """
    if alive is not None:
        sel = np.nonzero(alive)[0]
        if sel.size == 0:
            return
        px, py, tri = px[sel], py[sel], tri[sel]
        outputs = {r: stack[:, sel] for r, stack in outputs.items()}
        z = z[sel] if np.ndim(z) else z
    facing = ts.facing[tri]
    layers = _layers(scene, px, py)
    if layers is None:
        _fragment_ops(scene, state, (py, px), False, None, outputs, z, facing, band)
        return
    for m in layers:
        _fragment_ops(
            scene,
            state,
            (py[m], px[m]),
            False,
            None,
            {r: stack[:, m] for r, stack in outputs.items()},
            z[m] if np.ndim(z) else z,
            facing[m],
            band,
        )


# ----------------------------------------------------------------------------
# fragment operations
# ----------------------------------------------------------------------------


def _clamp_colours(state: FragmentState, outputs: dict) -> dict:
    """clamp_fragment_color: the colour outputs clamped to [0, 1] (NaN to 0,
    as a max then a min of llvmpipe's do)."""
    regs = {r for r in state.color_outputs if r is not None}
    regs.add(getattr(state, "src1_output", None))
    out = dict(outputs)
    for r in regs:
        if r in out:
            v = np.asarray(out[r])
            out[r] = np.where(v > 0, np.where(v < 1, v, F32(1.0)), F32(0.0)).astype(F32)
    return out


def _stipple_mask(state: FragmentState, idx, dense: bool) -> np.ndarray:
    """The polygon stipple's bit for each pixel: row (y mod 32), column
    (x mod 32) counted from the word's top bit, y counted from the bottom
    when the fragment shader's origin is the lower left (the draw module's
    stipple shader reads the fragment position as the shader declares it)."""
    if dense:
        ys = np.arange(idx[0].start, idx[0].stop)[:, None]
        xs = np.arange(idx[1].start, idx[1].stop)[None, :]
    else:
        ys, xs = idx
    if state.coord_lower_left:
        ys = state.fb_height - 1 - ys
    rows = state.stipple[np.asarray(ys) & 31]
    return ((rows >> (31 - (np.asarray(xs) & 31)).astype(np.uint32)) & 1).astype(bool)


def _fragment_ops(scene, state: FragmentState, idx, dense: bool, alive, outputs, z, facing, band):
    """Alpha test, alpha-to-coverage and sample mask, depth/stencil, count,
    colour writes for one set of distinct pixels."""
    if state.clamp_color:
        outputs = _clamp_colours(state, outputs)
    if state.stipple is not None:
        on = _stipple_mask(state, idx, dense)
        alive = on if alive is None else (alive & on)
    if state.depth_output is not None and state.depth_output in outputs:
        z = np.asarray(outputs[state.depth_output][2], F32)
    alpha = state.dsa.alpha
    if alpha.enabled and state.color_outputs and state.color_outputs[0] is not None:
        a = outputs[state.color_outputs[0]][3]
        ok = compare(alpha.func, a, F32(alpha.ref_value))
        ok = np.broadcast_to(ok, _shape_of(idx, dense))
        alive = ok if alive is None else (alive & ok)
    if state.msaa is not None:
        alive, outputs = _sample_ops(state, idx, dense, alive, outputs)
    if scene.zsbuf is not None:
        stencil_value = None
        if state.stencil_output is not None and state.stencil_output in outputs:
            sv = np.asarray(outputs[state.stencil_output][1])
            stencil_value = sv.view(np.uint32) if sv.dtype == F32 else sv
        alive = depth_stencil(state, scene.zsbuf, idx, dense, alive, z, facing, stencil_value)
    if alive is not None and not dense and not alive.all():
        keep = np.nonzero(alive)[0]
        idx = (idx[0][keep], idx[1][keep])
        outputs = {r: stack[:, keep] for r, stack in outputs.items()}
        alive = None
    count = _count(idx, dense, alive)
    for counter in state.counters:
        counter.add(count)
    if count == 0:
        return
    _colour_writes(scene, state, idx, dense, alive, outputs)


def _sample_ops(state: FragmentState, idx, dense: bool, alive, outputs):
    """lp_state_fs.c's order after the alpha test: alpha-to-coverage (sample
    s of N kept where alpha > s / N; 0.5 without multisampling), alpha-to-one
    (the colour outputs' alpha set to 1), the SAMPLEMASK output's bit for
    the pass's sample.  Returns the new alive mask and outputs."""
    ms = state.msaa
    shape = _shape_of(idx, dense)
    multi = ms.multisample and ms.samples > 1
    c0 = state.color_outputs[0] if state.color_outputs else None
    if ms.alpha_to_coverage and c0 is not None and c0 in outputs:
        a = np.asarray(outputs[c0][3], F32)
        ref = F32(F32(1.0 / ms.samples) * F32(state.sample)) if multi else F32(0.5)
        ok = np.broadcast_to(a > ref, shape)
        alive = ok if alive is None else (alive & ok)
    if ms.alpha_to_one:
        outputs = dict(outputs)
        for reg in {r for r in state.color_outputs if r is not None and r in outputs}:
            stack = np.array(outputs[reg], F32)
            stack[3] = F32(1.0)
            outputs[reg] = stack
    if ms.mask_output is not None and ms.mask_output in outputs:
        bits = np.asarray(outputs[ms.mask_output][0], F32).view(np.int32)
        bit = state.sample if multi else 0
        ok = np.broadcast_to((bits >> bit) & 1 != 0, shape)
        alive = ok if alive is None else (alive & ok)
    return alive, outputs


def _colour_writes(scene, state: FragmentState, idx, dense: bool, alive, outputs) -> None:
    """Blend and write every bound colour buffer for the given pixels."""
    if state.clamp_color:
        outputs = _clamp_colours(state, outputs)
    src1_reg = getattr(state, "src1_output", None)
    for i, target in enumerate(scene.cbufs):
        if target is None or i >= len(state.color_outputs):
            continue
        reg = state.color_outputs[i]
        if reg is None or reg not in outputs:
            continue
        src1 = outputs.get(src1_reg) if src1_reg is not None else None
        write_color(target, idx, dense, alive, outputs[reg], state.blend[i], state, src1)


def _shape_of(idx, dense: bool) -> tuple[int, ...]:
    if dense:
        return (idx[0].stop - idx[0].start, idx[1].stop - idx[1].start)
    return (idx[0].shape[0],)


def _count(idx, dense: bool, alive) -> int:
    if alive is not None:
        return int(np.count_nonzero(alive))
    shape = _shape_of(idx, dense)
    return shape[0] * shape[1] if dense else shape[0]
