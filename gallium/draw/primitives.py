"""The set-up primitives the draw module hands to a scene: triangles as
edge and attribute planes, arrays indexed by triangle.

Points and lines are set up as triangles too (gallium/draw/points.py,
gallium/draw/lines.py), so a :class:`TriangleSet` is the one format between the
vertex pipeline (gallium/draw/) and the rasterizer (workers/), which reads it
through the scene (gallium/numpipe/scene.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` for an array of rows: each row is copied as one opaque item
    (numpy's fancy indexing copies row elements one by one, ~5-10x slower
    for rows of a few floats)."""
    a = np.ascontiguousarray(a)
    row = a.dtype.itemsize * int(np.prod(a.shape[1:], dtype=np.int64))
    if a.ndim < 2 or row == 0:
        return a[idx]
    items = a.reshape(a.shape[0], -1).view(np.dtype((np.void, row)))[:, 0]
    return items[idx].view(a.dtype).reshape(*np.shape(idx), *a.shape[1:])


@dataclass
class TriangleSet:
    """Set-up triangles of one draw, in submission order (arrays indexed by triangle)."""

    count: int
    c: np.ndarray  # (M, 3) int64 edge constants, fill-rule bias included
    dcdx: np.ndarray  # (M, 3) int64: E changes by -dcdx*256 per pixel step in x
    dcdy: np.ndarray  # (M, 3) int64: E changes by +dcdy*256 per pixel step in y
    bbox: np.ndarray  # (M, 4) int32 x0, y0, x1, y1 inclusive, clipped to the draw region
    z: np.ndarray  # (M, 3) float32 a0, dadx, dady of window z
    oow: np.ndarray  # (M, 3) float32 a0, dadx, dady of 1/w
    inputs: np.ndarray  # (M, K, 3, 4) float32 a0, dadx, dady of each FS input
    perspective: np.ndarray  # (K,) bool: input k needs the 1/w correction
    w_is_one: np.ndarray  # (M,) bool: all three vertices have w == 1 (no correction needed)
    facing: np.ndarray  # (M,) bool: front facing
    prim_id: np.ndarray  # (M,) int32 primitive index within the draw
    vx: np.ndarray | None = None  # (M, 3) int64 snapped vertex x, 1/256 pixel (centre at 256 px)
    vy: np.ndarray | None = None  # (M, 3) int64 snapped vertex y
    # (M,) float32 polygon offset added to each fragment's interpolated depth
    # (llvmpipe's setup: gallium/draw/polygon.py), or None for none
    zoffset: np.ndarray | None = None
    # (M,) bool: drawn with the polygon stipple (gallium/draw/polygon.py), or None for none
    stipple: np.ndarray | None = None
    # smooth points or lines (gallium/draw/smooth.py): "point" or "line", the
    # last input slot their coverage coordinate, not the fragment shader's;
    # "" for anything else
    smooth: str = ""
    # when the last vertex stage writes LAYER / VIEWPORT_INDEX (gallium/draw/layers.py):
    # each triangle's layer as written (uint32 bits; the sink clamps it to the
    # framebuffer's layers) and its viewport (clamped: 0..15)
    layer: np.ndarray | None = None  # (M,) int64
    viewport: np.ndarray | None = None  # (M,) int64
    # (M, 2) float64: the depth clamp range of each triangle's viewport (NaN:
    # its state's), set by the sink for programs writing VIEWPORT_INDEX
    depth_range: np.ndarray | None = None


def empty_set(k: int) -> TriangleSet:
    z3 = np.zeros((0, 3), np.int64)
    return TriangleSet(
        0,
        z3,
        z3.copy(),
        z3.copy(),
        np.zeros((0, 4), np.int32),
        np.zeros((0, 3), F32),
        np.zeros((0, 3), F32),
        np.zeros((0, k, 3, 4), F32),
        np.zeros(k, bool),
        np.zeros(0, bool),
        np.zeros(0, bool),
        np.zeros(0, np.int32),
        np.zeros((0, 3), np.int64),
        np.zeros((0, 3), np.int64),
    )


def select_triangles(ts: TriangleSet, idx: np.ndarray) -> TriangleSet:
    """The triangles ``idx`` of ``ts`` (in that order) as a TriangleSet."""
    return TriangleSet(
        int(idx.size),
        ts.c[idx],
        ts.dcdx[idx],
        ts.dcdy[idx],
        ts.bbox[idx],
        ts.z[idx],
        ts.oow[idx],
        ts.inputs[idx],
        ts.perspective,
        ts.w_is_one[idx],
        ts.facing[idx],
        ts.prim_id[idx],
        None if ts.vx is None else ts.vx[idx],
        None if ts.vy is None else ts.vy[idx],
        None if ts.zoffset is None else ts.zoffset[idx],
        None if ts.stipple is None else ts.stipple[idx],
        ts.smooth,
        None if ts.layer is None else ts.layer[idx],
        None if ts.viewport is None else ts.viewport[idx],
        None if ts.depth_range is None else ts.depth_range[idx],
    )


def concat_triangle_sets(parts: list[TriangleSet]) -> TriangleSet:
    """One TriangleSet holding ``parts``' triangles in order (same inputs layout)."""
    if len(parts) == 1:
        return parts[0]

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    has_v = all(p.vx is not None for p in parts)

    def tagged(name: str) -> np.ndarray | None:
        """Per-triangle tags (layer, viewport): all parts' or none (0 where missing)."""
        if all(getattr(p, name) is None for p in parts):
            return None
        return np.concatenate(
            [
                np.zeros(p.count, np.int64) if getattr(p, name) is None else getattr(p, name)
                for p in parts
            ]
        )

    return TriangleSet(
        sum(p.count for p in parts),
        cat("c"),
        cat("dcdx"),
        cat("dcdy"),
        cat("bbox"),
        cat("z"),
        cat("oow"),
        cat("inputs"),
        parts[0].perspective,
        cat("w_is_one"),
        cat("facing"),
        cat("prim_id"),
        cat("vx") if has_v else None,
        cat("vy") if has_v else None,
        _cat_offsets(parts),
        _cat_flags(parts, "stipple"),
        parts[0].smooth,
        tagged("layer"),
        tagged("viewport"),
        None
        if all(p.depth_range is None for p in parts)
        else np.concatenate(
            [
                np.full((p.count, 2), np.nan) if p.depth_range is None else p.depth_range
                for p in parts
            ]
        ),
    )


def _cat_flags(parts: list[TriangleSet], name: str) -> np.ndarray | None:
    """A per-triangle flag of the parts (None: all off)."""
    if all(getattr(p, name) is None for p in parts):
        return None
    return np.concatenate(
        [getattr(p, name) if getattr(p, name) is not None else np.zeros(p.count, bool)
         for p in parts]
    )  # fmt: skip


def _cat_offsets(parts: list[TriangleSet]) -> np.ndarray | None:
    """The parts' depth offsets (scenes join only parts that all have them or none)."""
    if all(p.zoffset is None for p in parts):
        return None
    return np.concatenate(
        [p.zoffset if p.zoffset is not None else np.zeros(p.count, F32) for p in parts]
    )
