"""Primitive assembly: vertex streams to triangles (draw_pt_decompose.h rules).

``triangles(mode, n, cuts, flatshade_first)`` returns an ``(M, 3)`` array of
vertex positions in the stream and the primitive id of each triangle.  Each
primitive restart cut starts an independent sequence.  Vertex order follows
Mesa's draw module so the provoking vertex (last, or first with
``flatshade_first``) and the winding of strips and fans come out the same.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..pipe.enums import Prim
from ..pipe.errors import UnsupportedError, bad_value

TRIANGLE_MODES = {
    Prim.TRIANGLES,
    Prim.TRIANGLE_STRIP,
    Prim.TRIANGLE_FAN,
    Prim.QUADS,
    Prim.QUAD_STRIP,
    Prim.POLYGON,
}
LINE_MODES = {Prim.LINES, Prim.LINE_STRIP, Prim.LINE_LOOP}
ADJACENCY_MODES = {
    Prim.LINES_ADJACENCY: 4,
    Prim.LINE_STRIP_ADJACENCY: 4,
    Prim.TRIANGLES_ADJACENCY: 6,
    Prim.TRIANGLE_STRIP_ADJACENCY: 6,
}


def adjacency_primitives(
    mode: Prim, n: int, cuts: np.ndarray, flatshade_first: bool = False
) -> np.ndarray:
    """A draw's primitives with adjacency as (P, 4) or (P, 6) stream positions:
    LINES_ADJACENCY in groups of four (the line is the middle two),
    LINE_STRIP_ADJACENCY one per vertex but the last three, TRIANGLES_ADJACENCY
    in groups of six (the triangle is vertices 0, 2 and 4), and
    TRIANGLE_STRIP_ADJACENCY as the draw module orders it (see
    :func:`_strip_adjacency`); restarts cut."""
    mode = Prim(mode)
    if mode not in ADJACENCY_MODES:
        raise bad_value("info.mode", "is not an adjacency mode", mode)
    width = ADJACENCY_MODES[mode]
    parts = []
    for a, b in _segments(n, cuts):
        k = b - a
        if mode == Prim.TRIANGLE_STRIP_ADJACENCY:
            parts.append(a + _strip_adjacency(k, flatshade_first))
            continue
        if mode == Prim.LINE_STRIP_ADJACENCY:
            s = a + np.arange(max(k - 3, 0), dtype=np.int64)
        else:
            s = a + width * np.arange(k // width, dtype=np.int64)
        parts.append(s[:, None] + np.arange(width, dtype=np.int64)[None, :])
    if not parts:
        return np.zeros((0, width), np.int64)
    return np.concatenate(parts)


def _strip_adjacency(count: int, first: bool) -> np.ndarray:
    """One TRIANGLE_STRIP_ADJACENCY sequence of ``count`` vertices as (P, 6)
    positions in the order (v0, adjacent, v1, adjacent, v2, adjacent) that
    Mesa's draw module hands a geometry shader (draw_decompose_tmp.h).

    Triangle j (i = 2j) has vertices i, i+2, i+4 and adjacent vertices i-2
    (1 for the first), i+6 (i+5 for the last) and i+3.  Odd triangles swap to
    keep the winding: the first two vertices and their adjacent ones with the
    last vertex provoking, the last two with the first vertex provoking.
    """
    m = max((count - 4) // 2, 0)
    i = 2 * np.arange(m, dtype=np.int64)
    v0, v1, v2 = i, i + 2, i + 4
    before = np.where(i == 0, 1, i - 2)
    side = i + 3
    after = np.where(i + 7 < count, i + 6, i + 5)
    odd = (i & 2) != 0
    even_order = np.stack([v0, before, v1, after, v2, side], 1)
    if first:
        odd_order = np.stack([v0, side, v2, after, v1, before], 1)
    else:
        odd_order = np.stack([v1, before, v0, side, v2, after], 1)
    return np.where(odd[:, None], odd_order, even_order)


def _segments(n: int, cuts: np.ndarray) -> list[tuple[int, int]]:
    bounds = [0, *[int(c) for c in cuts if 0 < c < n], n]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _one_sequence(mode: Prim, base: int, count: int, first: bool) -> np.ndarray:
    if mode == Prim.TRIANGLES:
        m = count // 3
        return np.arange(base, base + m * 3, dtype=np.int64).reshape(m, 3)
    i = np.arange(count, dtype=np.int64)
    if mode == Prim.TRIANGLE_STRIP:
        k = i[: max(count - 2, 0)]
        odd = k & 1
        if first:
            t = np.stack([k, k + 1 + odd, k + 2 - odd], axis=1)
        else:
            t = np.stack([k + odd, k + 1 - odd, k + 2], axis=1)
        return base + t
    if mode == Prim.TRIANGLE_FAN:
        k = i[: max(count - 2, 0)]
        zero = np.zeros_like(k)
        t = (
            np.stack([k + 1, k + 2, zero], axis=1)
            if first
            else np.stack([zero, k + 1, k + 2], axis=1)
        )
        return base + t
    if mode == Prim.POLYGON:
        k = i[: max(count - 2, 0)]
        zero = np.zeros_like(k)
        t = (
            np.stack([zero, k + 1, k + 2], axis=1)
            if first
            else np.stack([k + 1, k + 2, zero], axis=1)
        )
        return base + t
    if mode in (Prim.QUADS, Prim.QUAD_STRIP):
        if mode == Prim.QUADS:
            q = np.arange(count // 4, dtype=np.int64) * 4
            a, b, c, d = q, q + 1, q + 2, q + 3
        else:
            q = np.arange(max((count - 2) // 2, 0), dtype=np.int64) * 2
            a, b, c, d = q + 2, q, q + 1, q + 3
        if first:
            # the quad's last vertex provokes whatever the convention, as
            # llvmpipe's draw module assembles quads
            # (PIPE_CAP_QUADS_FOLLOW_PROVOKING_VERTEX_CONVENTION is 0):
            # each triangle starts with it
            t1 = np.stack([d, a, b], axis=1)
            t2 = np.stack([d, b, c], axis=1)
        else:
            t1 = np.stack([a, b, d], axis=1)
            t2 = np.stack([b, c, d], axis=1)
        t = np.stack([t1, t2], axis=1).reshape(-1, 3)
        return base + t
    raise bad_value("info.mode", "is not a triangle mode", mode)


def triangles(
    mode: Prim, n: int, cuts: np.ndarray, flatshade_first: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of a draw as stream positions, plus their primitive ids."""
    mode = Prim(mode)
    if mode in (Prim.TRIANGLES_ADJACENCY, Prim.TRIANGLE_STRIP_ADJACENCY):
        # the triangle of each primitive: its positions 0, 2 and 4
        t = adjacency_primitives(mode, n, cuts, flatshade_first)[:, [0, 2, 4]]
        return t, np.arange(t.shape[0], dtype=np.int64)
    if mode not in TRIANGLE_MODES:
        if mode in LINE_MODES or mode == Prim.POINTS or mode in ADJACENCY_MODES:
            # (the context sets points and lines up itself)
            raise bad_value("mode", "must be a triangle mode here", mode.name)
        raise UnsupportedError(f"primitive mode {mode.name} is not supported by numpipe")
    parts = []
    prim_ids = []
    prim_base = 0
    for a, b in _segments(n, cuts):
        t = _one_sequence(mode, a, b - a, flatshade_first)
        parts.append(t)
        per_prim = 2 if mode in (Prim.QUADS, Prim.QUAD_STRIP) else 1
        ids = prim_base + np.arange(t.shape[0], dtype=np.int64) // per_prim
        prim_ids.append(ids)
        prim_base += t.shape[0] // per_prim
    if not parts:
        return np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
    if len(parts) == 1:  # (no restart cut: most draws)
        return parts[0], prim_ids[0]
    return np.concatenate(parts), np.concatenate(prim_ids)


# Edge flags of the triangles ``triangles`` assembles (draw_decompose_tmp.h):
# bit 0 the edge v0 -> v1, bit 1 v1 -> v2, bit 2 v2 -> v0 of each triangle as
# assembled, set where the edge is on the primitive's boundary (the
# diagonals of quads and the inner edges of polygons are not), and bit 3 on
# each primitive's first triangle (a new line-stipple pattern).  Only
# polygons drawn as lines or points look at them (gallium/draw/polygon.py).
_E0, _E1, _E2, _RESET = 1, 2, 4, 8
_ALL = _E0 | _E1 | _E2


def _sequence_edges(mode: Prim, count: int, first: bool) -> np.ndarray:
    if mode in (Prim.TRIANGLES, Prim.TRIANGLE_STRIP, Prim.TRIANGLE_FAN):
        m = count // 3 if mode == Prim.TRIANGLES else max(count - 2, 0)
        return np.full(m, _ALL | _RESET, np.int64)
    if mode in (Prim.QUADS, Prim.QUAD_STRIP):
        m = count // 4 if mode == Prim.QUADS else max((count - 2) // 2, 0)
        pair = (_RESET | _E0 | _E2, _E0 | _E1) if not first else (_RESET | _E0 | _E1, _E1 | _E2)
        return np.tile(np.array(pair, np.int64), m)
    if mode == Prim.POLYGON:
        m = max(count - 2, 0)
        if not first:  # (k+1, k+2, 0): E0 always, E2 on the first, E1 on the last
            always, start, finish = _E0, _E2, _E1
        else:  # (0, k+1, k+2): E1 always, E0 on the first, E2 on the last
            always, start, finish = _E1, _E0, _E2
        flags = np.full(m, always, np.int64)
        if m:
            flags[0] |= start | _RESET
            flags[-1] |= finish
        return flags
    raise bad_value("info.mode", "is not a triangle mode", mode)


def edge_flags(mode: Prim, n: int, cuts: np.ndarray, flatshade_first: bool) -> np.ndarray:
    """The edge flags of the triangles :func:`triangles` returns for the
    same arguments, one int per triangle (see above)."""
    mode = Prim(mode)
    if mode == Prim.TRIANGLES_ADJACENCY:
        m = adjacency_primitives(mode, n, cuts).shape[0]
        return np.full(m, _ALL | _RESET, np.int64)
    parts = [_sequence_edges(mode, b - a, flatshade_first) for a, b in _segments(n, cuts)]
    if not parts:
        return np.zeros(0, np.int64)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
