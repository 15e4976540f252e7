"""Window rectangles (``set_window_rectangles``, GL_EXT_window_rectangles).

Up to PIPE_MAX_WINDOW_RECTANGLES rectangles (min inclusive, max exclusive,
as scissors) are ORed together: in *include* mode a fragment outside all of
them is discarded, in *exclude* mode one inside any of them.  They apply to
draws only (context.rst: not to clears; blits carry their own).

A draw is cut rather than tested per fragment: the pixels a fragment may
reach form a set of disjoint rectangles (:func:`regions`, from the grid the
rectangles' edges make), and each set-up triangle is added once per region
it meets with its bounding box clipped to that region (:func:`clip_to`) --
exactly what the scissor does to a bounding box, so every rasterizer path
respects it.  No pixel lies in two regions, so no fragment is drawn twice.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..draw.primitives import select_triangles

Rect = tuple[int, int, int, int]  # minx, miny, maxx, maxy (max exclusive)
# (set_window_rectangles' check is the contract's: gallium.pipe.checks)


def regions(include: bool, rects: tuple[Rect, ...], width: int, height: int) -> list[Rect] | None:
    """The disjoint rectangles of a ``width`` x ``height`` framebuffer where
    fragments survive (inclusive ``(x0, y0, x1, y1)``), or None when every
    pixel does (exclude mode without rectangles).  The rectangles' edges cut
    the framebuffer into cells each wholly inside or outside every
    rectangle; a row of cells gives one region per run of kept cells."""
    if not include and not rects:
        return None

    def edges(lo: int, hi: int, size: int) -> list[int]:
        return sorted({0, size, *(min(max(r[k], 0), size) for r in rects for k in (lo, hi))})

    xs, ys = edges(0, 2, width), edges(1, 3, height)
    out: list[Rect] = []
    for y0, y1 in itertools.pairwise(ys):
        start = None
        for x0 in xs[:-1]:
            inside = any(r[0] <= x0 < r[2] and r[1] <= y0 < r[3] for r in rects)
            if inside == include:
                start = x0 if start is None else start
                continue
            if start is not None:
                out.append((start, y0, x0 - 1, y1 - 1))
                start = None
        if start is not None:
            out.append((start, y0, width - 1, y1 - 1))
    return out


def clip_to(ts: Any, region: Rect) -> Any:
    """The triangles of ``ts`` that meet ``region`` (inclusive), their
    bounding boxes clipped to it."""
    x0, y0, x1, y1 = region
    b = ts.bbox
    nb = np.stack(
        [np.maximum(b[:, 0], x0), np.maximum(b[:, 1], y0),
         np.minimum(b[:, 2], x1), np.minimum(b[:, 3], y1)], axis=1,
    ).astype(b.dtype)  # fmt: skip
    keep = np.flatnonzero((nb[:, 0] <= nb[:, 2]) & (nb[:, 1] <= nb[:, 3]))
    out = select_triangles(ts, keep)
    out.bbox = nb[keep]
    return out
