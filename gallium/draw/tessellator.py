"""The fixed-function tessellator: a patch's domain points and primitives from
its tessellation levels, as Mesa's draw module makes them.

Mesa's draw module (draw_tess.c) tessellates with the Direct3D 11 reference
tessellator (gallium/auxiliary/tessellator, Microsoft's CHWTessellator).
Its rules, which this module follows so that the primitive count, the
domain points and their order equal llvmpipe's:

* Levels.  A patch is culled when any outer level is not > 0 (NaN too).
  Outer and inner levels are clamped to [1, 64] for equal spacing (then
  rounded up to integers), [2, 64] for fractional-even and [1, 63] for
  fractional-odd spacing; a NaN inner level becomes the lower bound.  With
  fractional-odd spacing, an inner level is at least 1 + 2^-16 when any level
  is above 1 + 2^-17, so that a ring of points always surrounds the centre.
  Isoline density is clamped to [1, 64] and always rounded up (equal
  spacing); the detail level follows the spacing.  Levels become 16.16
  fixed point (round half to even).
* Parity.  Fractional-odd and -even spacing fix the parity; equal spacing
  takes each level's own parity (an inner level of 1 counts as even).
* Points along an edge of level ``t``: each half of the edge carries
  ``ceil(t/2)`` points (odd: ``ceil(t/2 + 1/2)``); with a fractional level the
  points lie between the positions for ``floor`` and ``ceil`` of the half
  level, the one that moves ("split point") chosen by the ruler function;
  positions are 16.16 fixed point with reciprocal tables; the other half is
  mirrored (``1 - x``), the midpoint is exactly 1/2.
* Order.  The outer ring first, edge after edge (triangles: from the
  corner V=1 along the U=0 edge; quads: from U=0,V=1 along U=0 then V=0,
  U=1, V=1), then the inner rings spiralling inwards, then (even parity) the
  centre point or centre row.  Triangles stitch each ring to the next with
  the ruler-function transition on the outermost ring and mirrored
  diagonals inside; a quad's centre is a strip of quads.  Isolines are
  ``density`` lines (the last, at v = 1, left out) of ``detail`` segments.
* Winding: the reference tessellator emits clockwise triangles in its own
  convention; draw_tess.c asks for them clockwise when the shader's
  ``TES_VERTEX_ORDER_CW`` is 0 and counter-clockwise when it is 1.

Domain points come back as float32 (u, v); the evaluation shader's
TESSCOORD is (u, v, 1 - u - v) for triangles and (u, v, 0) otherwise.
Each distinct set of levels is tessellated once (a cache), so a mesh of many
patches with the same levels costs one tessellation.
"""

from __future__ import annotations

import functools
import math
import struct

import numpy as np

# domains (TES_PRIM_MODE: pipe primitive numbers) and spacings (pipe_tess_spacing)
LINES, TRIANGLES, QUADS = 1, 4, 7
FRACTIONAL_ODD, FRACTIONAL_EVEN, EQUAL = 0, 1, 2
MAX_LEVEL = 64.0  # PIPE_CAP / GL_MAX_TESS_GEN_LEVEL

_FRAC = 16
_ONE = 1 << _FRAC
_HALF = _ONE >> 1
_ONE_THIRD = 0x5555
_TWO_THIRDS = 0xAAAA
_FRAC_MASK = _ONE - 1
_INT_MASK = 0x7FFF0000
_EPSILON = 2.0**-16
_ODD, _EVEN = "odd", "even"

# 1/n in 16.16 fixed point, rounded to nearest, for n segments (index 0 unused)
_RECIPROCAL = [0xFFFFFFFF] + [round(_ONE / n) for n in range(1, 65)]
# where the i-th point of a half edge ends up at the highest level (ruler function)
_FINAL_POSITION = (
    0, 32, 16, 8, 17, 4, 18, 9, 19, 2, 20, 10, 21, 5, 22, 11, 23,
    1, 24, 12, 25, 6, 26, 13, 27, 3, 28, 14, 29, 7, 30, 15, 31,
)  # fmt: skip
_LOOP_START = (
    1, 1, 17, 9, 9, 5, 5, 5, 5, 3, 3, 3, 3, 3, 3, 3, 3,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
)  # fmt: skip
_LOOP_END = (
    0, 0, 17, 17, 25, 25, 25, 25, 29, 29, 29, 29, 29, 29, 29, 29, 31,
    31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 32,
)  # fmt: skip


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _flush(x: float) -> float:
    """Denormals to signed zero (the reference's comparisons)."""
    return math.copysign(0.0, x) if x != 0 and abs(x) < 2.0**-126 else x


def _clamp(x: float, lower: float, upper: float) -> float:
    """min(upper, max(lower, x)) with the reference's IEEE 754R rules: NaN
    gives ``lower``, denormals compare as zero."""
    if math.isnan(x) or _flush(x) <= lower:
        return lower
    return x if _flush(x) < upper else upper


def _to_fixed(x: float) -> int:
    """A non-negative float as unsigned 15.16 fixed point, half to even."""
    if math.isnan(x) or x <= 0:
        return 0
    if x >= 2.0**15:
        return 0x7FFFFFFF
    return round(x * _ONE)  # (exact in a double; round() is half to even)


def _to_float(f: int) -> float:
    return float(f >> _FRAC) + float(f & _FRAC_MASK) / _ONE


def _ceil(f: int) -> int:
    return (f & _INT_MASK) + _ONE if f & _FRAC_MASK else f


def _remove_msb(v: int) -> int:
    return v & ~(1 << (v.bit_length() - 1)) if v > 0 else 0


class _Level:
    """One level's placement of points along an edge (the reference's
    TESS_FACTOR_CONTEXT), for a parity."""

    __slots__ = ("fraction", "half_points", "inv_ceil", "inv_floor", "odd", "split")

    def __init__(self, fixed: int, odd: bool) -> None:
        self.odd = odd
        half = (fixed + 1) // 2
        if odd or half == _HALF:  # (a level of 1 behaves as odd)
            half += _HALF
        floor_half = half & _INT_MASK
        ceil_half = _ceil(half)
        self.fraction = half - floor_half
        self.half_points = ceil_half >> _FRAC
        if ceil_half == floor_half:
            self.split = self.half_points + 1  # (never reached)
        elif odd:
            fh = floor_half >> _FRAC
            self.split = 0 if floor_half == _ONE else (_remove_msb(fh - 1) << 1) + 1
        else:
            self.split = (_remove_msb(floor_half >> _FRAC) << 1) + 1
        floor_segments = (floor_half * 2) >> _FRAC
        ceil_segments = (ceil_half * 2) >> _FRAC
        if odd:
            floor_segments -= 1
            ceil_segments -= 1
        self.inv_floor = _RECIPROCAL[floor_segments]
        self.inv_ceil = _RECIPROCAL[ceil_segments]

    def place(self, point: int) -> int:
        """The fixed-point position of point ``point`` along the edge."""
        flip = point >= self.half_points
        if flip:
            point = (self.half_points << 1) - point - (1 if self.odd else 0)
        if point == self.half_points:
            return _HALF
        on_ceil = point
        on_floor = point - 1 if point > self.split else point
        loc = on_floor * self.inv_floor * (_ONE - self.fraction) + on_ceil * self.inv_ceil * (
            self.fraction
        )
        loc = (loc + _HALF) >> _FRAC
        return _ONE - loc if flip else loc


def _num_points(fixed: int, odd: bool) -> int:
    if odd:
        return (_ceil(_HALF + (fixed + 1) // 2) * 2) >> _FRAC
    return ((_ceil((fixed + 1) // 2) * 2) >> _FRAC) + 1


class _Mesh:
    """Points (fixed-point u, v) and indices as the reference builds them,
    with its index remapping for the last edge of a ring."""

    def __init__(self, clockwise: bool) -> None:
        self.u: list[int] = []
        self.v: list[int] = []
        self.index: list[int] = []
        self.clockwise = clockwise
        self.patch: tuple | None = None  # ("ring", ...) or ("invert", ...) remapping

    def point(self, u: int, v: int) -> None:
        self.u.append(u)
        self.v.append(v)

    def _remap(self, i: int) -> int:
        p = self.patch
        if p is None:
            return i
        if p[0] == "ring":
            _, in_delta, in_bad, in_repl, out_base, out_delta, out_bad, out_repl = p
            if i >= out_base:
                return out_repl if i == out_bad else i + out_delta
            return in_repl if i == in_bad else i + in_delta
        _, base, bad, repl, end = p
        if i >= base:
            return repl if i == bad else end - i
        return repl if i == bad else i

    def tri(self, a: int, b: int, c: int) -> None:
        """A triangle given clockwise in the reference's convention."""
        r = self._remap
        if self.clockwise:
            self.index += (r(a), r(b), r(c))
        else:
            self.index += (r(a), r(c), r(b))


def _stitch_regular(m: _Mesh, trapezoid: bool, diagonals: str, n_inside: int, ib: int, ob: int):
    inside, outside = ib, ob
    if trapezoid:
        m.tri(outside, outside + 1, inside)
        outside += 1
    if diagonals == "inside_to_outside":
        for _ in range(n_inside - 1):
            m.tri(inside, outside, outside + 1)
            m.tri(inside, outside + 1, inside + 1)
            inside += 1
            outside += 1
    elif diagonals == "inside_to_outside_except_middle":
        p = 0
        while p < n_inside // 2 - 1:
            m.tri(outside, outside + 1, inside)
            m.tri(inside, outside + 1, inside + 1)
            inside += 1
            outside += 1
            p += 1
        m.tri(outside, inside + 1, inside)
        m.tri(outside, outside + 1, inside + 1)
        inside += 1
        outside += 1
        p += 2
        while p < n_inside:
            m.tri(outside, outside + 1, inside)
            m.tri(inside, outside + 1, inside + 1)
            inside += 1
            outside += 1
            p += 1
    else:  # mirrored
        p = 0
        while p < n_inside // 2:
            m.tri(outside, inside + 1, inside)
            m.tri(outside, outside + 1, inside + 1)
            inside += 1
            outside += 1
            p += 1
        while p < n_inside - 1:
            m.tri(inside, outside, outside + 1)
            m.tri(inside, outside + 1, inside + 1)
            inside += 1
            outside += 1
            p += 1
    if trapezoid:
        m.tri(outside, outside + 1, inside)


def _stitch_transition(
    m: _Mesh, ib: int, in_half: int, in_odd: bool, ob: int, out_half: int, out_odd: bool
) -> None:
    """The outermost ring to the first inner ring, their levels arbitrary."""
    if in_odd:
        in_half -= 1
    if out_odd:
        out_half -= 1
    outside, inside = ob, ib
    start = min(_LOOP_START[in_half], _LOOP_START[out_half])
    end = max(_LOOP_END[in_half], _LOOP_END[out_half])
    if _FINAL_POSITION[0] < out_half:
        m.tri(outside, outside + 1, inside)
        outside += 1
    for i in range(start, end + 1):
        if _FINAL_POSITION[i] < in_half:
            m.tri(inside, outside, inside + 1)
            inside += 1
        if _FINAL_POSITION[i] < out_half:
            m.tri(outside, outside + 1, inside)
            outside += 1
    if in_odd != out_odd or in_odd:
        if in_odd == out_odd:  # a quad in the middle
            m.tri(inside, outside, inside + 1)
            m.tri(inside + 1, outside, outside + 1)
            inside += 1
            outside += 1
        elif not in_odd:  # a triangle pointing inside
            m.tri(inside, outside, outside + 1)
            outside += 1
        else:  # a triangle pointing outside
            m.tri(inside, outside, inside + 1)
            inside += 1
    for i in range(end, start - 1, -1):
        if _FINAL_POSITION[i] < out_half:
            m.tri(outside, outside + 1, inside)
            outside += 1
        if _FINAL_POSITION[i] < in_half:
            m.tri(inside, outside, inside + 1)
            inside += 1
    if _FINAL_POSITION[0] < out_half:
        m.tri(outside, outside + 1, inside)
        outside += 1


def _bounds(spacing: int) -> tuple[float, float]:
    if spacing == FRACTIONAL_EVEN:
        return 2.0, 64.0
    if spacing == FRACTIONAL_ODD:
        return 1.0, 63.0
    return 1.0, 64.0


def _parity(level: float, spacing: int, inside: bool) -> bool:
    """Whether a (processed) level is tessellated with odd parity."""
    if spacing == EQUAL:
        even = int(level) % 2 == 0 or (inside and level == 1.0)
        return not even
    return spacing == FRACTIONAL_ODD


def _process(spacing: int, outer: list[float], inner: list[float], quad: bool) -> tuple | None:
    """Clamped (and for equal spacing rounded) levels, or None when culled."""
    if any(not (t > 0) for t in outer):
        return None
    lower, upper = _bounds(spacing)
    outer = [_clamp(t, lower, upper) for t in outer]
    if spacing == EQUAL:
        outer = [float(math.ceil(t)) for t in outer]
    # (a quad's raw inner levels count too, a triangle's do not)
    frame = [*outer, *inner] if quad else outer
    if spacing == FRACTIONAL_ODD and any(t > 1.0 + _EPSILON / 2 for t in frame):
        lower = _f32(1.0 + _EPSILON)  # force a picture frame
    inner = [_clamp(t, lower, upper) for t in inner]
    if spacing == EQUAL:
        inner = [float(math.ceil(t)) for t in inner]
    return outer, inner


def _minimum(spacing: int, fixed: list[int]) -> bool:
    return spacing in (EQUAL, FRACTIONAL_ODD) and all(f == _ONE for f in fixed)


def _triangles(m: _Mesh, spacing: int, outer: list[float], inner: float, point_mode: bool):
    processed = _process(spacing, outer, [inner], quad=False)
    if processed is None:
        return
    outer, (inner,) = processed
    out_odd = [_parity(t, spacing, False) for t in outer]
    in_odd = _parity(inner, spacing, True)
    fout = [_to_fixed(t) for t in outer]
    fin = _to_fixed(inner)
    if _minimum(spacing, [*fout, fin]):
        m.point(0, _ONE)
        m.point(0, 0)
        m.point(_ONE, 0)
        if not point_mode:
            m.tri(0, 1, 2)
        return
    out_ctx = [_Level(f, o) for f, o in zip(fout, out_odd)]
    in_ctx = _Level(fin, in_odd)
    n_out = [_num_points(f, o) for f, o in zip(fout, out_odd)]
    n_in = max(4 if in_odd else 3, _num_points(fin, in_odd))
    # outer ring, clockwise from V=1 along U=0 (V decreasing), W=0 ... U decreasing
    for edge in range(3):
        end = n_out[edge] - 1
        for p in range(end):
            q = p if edge & 1 else end - p
            x = out_ctx[edge].place(q)
            if edge == 0:
                m.point(0, x)
            else:
                m.point(x, _ONE - x if edge == 2 else 0)
    inside_base = len(m.u)
    rings = n_in >> 1
    for ring in range(1, rings):
        end = n_in - 1 - ring
        perp = in_ctx.place(ring) * _TWO_THIRDS
        perp = (perp + _HALF) >> _FRAC
        shift = (perp + 1) // 2
        for edge in range(3):
            for p in range(ring, end):
                q = p if edge & 1 else end - (p - ring)
                x = in_ctx.place(q)
                if edge == 0:
                    m.point(perp, x - shift)
                elif edge == 1:
                    m.point(x - shift, perp)
                else:
                    m.point(x - shift, _ONE - (x - shift) - perp)
    if not in_odd:
        m.point(_ONE_THIRD, _ONE_THIRD)
    if point_mode:
        return
    # connectivity: ring after ring, edge after edge
    n_rings = (n_in + 1) >> 1
    ctx_half = [c.half_points for c in out_ctx]
    ctx_odd = list(out_odd)
    n_edge = list(n_out)
    inside, outside = inside_base, 0
    for ring in range(1, n_rings):
        n_inside = n_in - 2 * ring
        inside0, outside0 = inside, outside
        for edge in range(3):
            if edge == 2:  # the ring's last edge wraps to its first points
                out_base = n_inside
                m.patch = (
                    "ring", inside, n_inside - 1, inside0,
                    out_base, outside - out_base, out_base + n_edge[edge] - 1, outside0,
                )  # fmt: skip
                ib, ob = 0, out_base
            else:
                ib, ob = inside, outside
            if ring == 1:
                _stitch_transition(
                    m, ib, in_ctx.half_points, in_odd, ob, ctx_half[edge], ctx_odd[edge]
                )
            else:
                _stitch_regular(m, True, "mirrored", n_inside, ib, ob)
            m.patch = None
            outside += n_edge[edge] - 1
            inside += n_inside - 1
            n_edge[edge] = n_inside
        if ring == 1:
            ctx_half = [in_ctx.half_points] * 3
            ctx_odd = [in_odd] * 3
    if in_odd:
        m.tri(outside, outside + 1, outside + 2)


def _quads(m: _Mesh, spacing: int, outer: list[float], inner: list[float], point_mode: bool):
    processed = _process(spacing, outer, inner, quad=True)
    if processed is None:
        return
    outer, inner = processed
    out_odd = [_parity(t, spacing, False) for t in outer]
    in_odd = [_parity(t, spacing, True) for t in inner]
    fout = [_to_fixed(t) for t in outer]
    fin = [_to_fixed(t) for t in inner]
    if _minimum(spacing, [*fout, *fin]):
        for u, v in ((0, 0), (_ONE, 0), (_ONE, _ONE), (0, _ONE)):
            m.point(u, v)
        if not point_mode:
            m.tri(0, 1, 3)
            m.tri(1, 2, 3)
        return
    out_ctx = [_Level(f, o) for f, o in zip(fout, out_odd)]
    in_ctx = [_Level(f, o) for f, o in zip(fin, in_odd)]
    n_out = [_num_points(f, o) for f, o in zip(fout, out_odd)]
    n_in = [max(4 if o else 3, _num_points(f, o)) for f, o in zip(fin, in_odd)]
    # outer ring, clockwise from U=0,V=1: along U=0, V=0, U=1, V=1
    for edge in range(4):
        end = n_out[edge] - 1
        for p in range(end):
            q = p if edge in (1, 2) else end - p
            x = out_ctx[edge].place(q)
            if edge & 1:
                m.point(x, _ONE if edge == 3 else 0)
            else:
                m.point(_ONE if edge == 2 else 0, x)
    inside_base = len(m.u)
    rings = min(n_in) >> 1
    for ring in range(1, rings):
        ends = (n_in[0] - 1 - ring, n_in[1] - 1 - ring)
        for edge in range(4):
            a, b = edge & 1, (edge + 1) & 1
            perp = in_ctx[a].place(ring if edge < 2 else ends[a])
            for p in range(ring, ends[b]):
                q = p if edge in (1, 2) else ends[b] - (p - ring)
                x = in_ctx[b].place(q)
                if b:
                    m.point(perp, x)
                else:
                    m.point(x, perp)
    if n_in[0] > n_in[1] and not in_odd[1]:  # even: a degenerate centre row
        for p in range(rings, n_in[0] - rings):
            m.point(in_ctx[0].place(p), _HALF)
    elif n_in[1] >= n_in[0] and not in_odd[0]:
        for p in range(n_in[1] - 1 - rings, rings - 1, -1):
            m.point(_HALF, in_ctx[1].place(p))
    if point_mode:
        return
    rows = ((n_in[0] + 1) >> 1, (n_in[1] + 1) >> 1)
    n_rings = min(rows)
    degenerate = (rows[1] - 1 if not in_odd[1] else -1, rows[0] - 1 if not in_odd[0] else -1)
    ctx_half = [c.half_points for c in out_ctx]
    ctx_odd = list(out_odd)
    n_edge = list(n_out)
    inside, outside = inside_base, 0
    for ring in range(1, n_rings):
        n_inside = (n_in[0] - 2 * ring, n_in[1] - 2 * ring)
        inside0, outside0 = inside, outside
        for edge in range(4):
            par = (edge + 1) & 1
            if edge == 3:
                if ring == degenerate[par]:
                    base = inside + 1
                    bad = outside + n_edge[edge] - 1
                    m.patch = ("invert", base, bad, outside0, (base << 1) - 1)
                    ib, ob = base, outside
                else:
                    out_base = n_inside[par]
                    m.patch = (
                        "ring", inside, n_inside[par] - 1, inside0,
                        out_base, outside - out_base, out_base + n_edge[edge] - 1, outside0,
                    )  # fmt: skip
                    ib, ob = 0, out_base
            elif edge == 2 and ring == degenerate[par]:
                m.patch = ("invert", inside, -1, -1, inside << 1)
                ib, ob = inside, outside
            else:
                ib, ob = inside, outside
            if ring == 1:
                _stitch_transition(
                    m, ib, in_ctx[par].half_points, in_odd[par], ob, ctx_half[edge], ctx_odd[edge]
                )
            else:
                _stitch_regular(m, True, "mirrored", n_inside[par], ib, ob)
            m.patch = None
            outside += n_edge[edge] - 1
            if edge == 2 and ring == degenerate[par]:
                inside -= n_inside[par] - 1
            else:
                inside += n_inside[par] - 1
            n_edge[edge] = n_inside[par]
        if ring == 1:
            ctx_half = [in_ctx[e & 1].half_points for e in range(4)]
            ctx_odd = [in_odd[e & 1] for e in range(4)]
    # the centre: a strip of quads when the shorter axis is odd
    if n_in[0] > n_in[1] and in_odd[1]:
        quads = (((n_in[0] >> 1) - (n_in[1] >> 1)) << 1) + (1 if in_odd[0] else 2)
        base = outside + quads + 2
        m.patch = ("invert", base, base, outside, base + base + quads)
        _stitch_regular(m, False, "inside_to_outside", quads + 1, base, outside + 1)
        m.patch = None
    elif n_in[1] >= n_in[0] and in_odd[0]:
        quads = (((n_in[1] >> 1) - (n_in[0] >> 1)) << 1) + (1 if in_odd[1] else 2)
        base = outside + quads + 1
        m.patch = ("invert", base, -1, -1, base + base + quads)
        diag = "inside_to_outside" if not in_odd[1] else "inside_to_outside_except_middle"
        _stitch_regular(m, False, diag, quads + 1, base, outside)
        m.patch = None


def _isolines(m: _Mesh, spacing: int, outer: list[float], point_mode: bool) -> None:
    density, detail = outer[0], outer[1]
    if not (density > 0) or not (detail > 0):
        return
    lower, upper = _bounds(spacing)
    density = _clamp(density, 1.0, 64.0)
    detail = _clamp(detail, lower, upper)
    if spacing == EQUAL:
        detail = float(math.ceil(detail))
    detail_odd = _parity(detail, spacing, False) if spacing == EQUAL else spacing == FRACTIONAL_ODD
    fdetail = _to_fixed(detail)
    detail_ctx = _Level(fdetail, detail_odd)
    per_line = _num_points(fdetail, detail_odd)
    density = float(math.ceil(density))
    density_odd = int(density) % 2 == 1
    fdensity = _to_fixed(density)
    density_ctx = _Level(fdensity, density_odd)
    lines = _num_points(fdensity, density_odd) - 1  # (not the line at v = 1)
    for line in range(lines):
        v = density_ctx.place(line)
        for p in range(per_line):
            m.point(detail_ctx.place(p), v)
    if point_mode:
        return
    for line in range(lines):
        base = line * per_line
        for p in range(1, per_line):
            m.index += (base + p - 1, base + p)


@functools.lru_cache(maxsize=4096)
def _tessellate(
    domain: int, spacing: int, cw: bool, point_mode: bool, outer: tuple, inner: tuple
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = _Mesh(clockwise=not cw)
    if domain == TRIANGLES:
        _triangles(m, spacing, list(outer[:3]), inner[0], point_mode)
    elif domain == QUADS:
        _quads(m, spacing, list(outer), list(inner), point_mode)
    else:
        _isolines(m, spacing, list(outer[:2]), point_mode)
    u = np.array([_to_float(x) for x in m.u], np.float32)
    v = np.array([_to_float(x) for x in m.v], np.float32)
    if point_mode:
        index = np.arange(u.size, dtype=np.int64)
    else:
        index = np.array(m.index, np.int64)
    for a in (u, v, index):
        a.setflags(write=False)
    return u, v, index


def tessellate(
    domain: int, spacing: int, cw: bool, point_mode: bool, outer, inner
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One patch: (u, v) float32 domain points and the output primitives'
    point indices, flat (triangles: 3 per primitive; isolines: 2; point
    mode: 1).  ``outer``/``inner`` are the patch's levels (float32 values:
    4 and 2); nothing comes back for a culled patch."""
    key_outer = tuple(float(x) for x in np.asarray(outer, np.float32)[:4])
    key_inner = tuple(float(x) for x in np.asarray(inner, np.float32)[:2])
    return _tessellate(int(domain), int(spacing), bool(cw), bool(point_mode), key_outer, key_inner)
