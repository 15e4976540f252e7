"""LAYER and VIEWPORT_INDEX: the layer and the viewport (one of 16) each
primitive is drawn to, decided as Mesa 22.3's draw module and llvmpipe decide them.

Theory of operation
-------------------
When the last vertex stage (the geometry shader, else the tessellation
evaluation shader, else the vertex shader) writes LAYER or VIEWPORT_INDEX,
the pipeline's stages for triangles, lines and points come here instead of
their usual path.  Each value is the output's x channel read as an unsigned
32-bit integer.

* **Per primitive** (lp_setup_tri.c, lp_setup_line.c, lp_setup_point.c): the
  layer and the viewport are those of the provoking vertex -- a triangle's
  last vertex (its first with ``flatshade_first``), a line's last (first), a
  point's own.  A viewport index of 16 or more (a negative one is a large
  unsigned one) means viewport 0 (``lp_clamp_viewport_idx``).  The layer goes
  on as written (``TriangleSet.layer``); the sink clamps it to the
  framebuffer's last layer (``MIN2(layer, fb_max_layer)``).  The primitive's
  scissor is its viewport's: the set-up bounding boxes are cut to that
  viewport's draw region (the framebuffer, and its scissor when enabled).
* **The viewport transform of a vertex** (draw_cliptest_tmp.h): the draw
  module walks the vertices with the primitive lengths of what it was given
  and transforms every vertex with the viewport of the *first* vertex of its
  primitive -- which need not be the provoking one:

  - a vertex shader's primitives are assembled first, each with copies of its
    vertices (draw_prim_assembler.c), so a vertex takes the viewport of its
    primitive's first vertex as the draw module orders it (a quad's first
    vertex for both of its triangles): here each primitive gets its own
    copies of its vertices (:func:`triangle_leads`);
  - a geometry shader's output primitives are its strips: every vertex of a
    strip takes the viewport of the strip's first vertex
    (:func:`strip_leads`);
  - a tessellation evaluation shader's domain points are walked with the
    tessellator's primitive lengths (3, 2 or 1) although they are points,
    not primitives: point j of a run takes the viewport of point ``j - j %
    3`` (for triangles) of the same run -- a run being one draw's instance,
    cut every 4096 input vertices (1024 for an indexed draw) as llvmpipe's
    vsplit cuts draws (:func:`tess_leads`).  Where the points of a patch are
    not a multiple of 3, a patch's first points take the previous patch's
    viewport: llvmpipe's images show it, and so do numpipe's.

  This transform is draw_pt_post_vs.c's plain float32 one (``x * (1/w) *
  scale + translate``, not fused; gallium/draw/viewport.py).
* **Clipping** (draw_pipe_clip.c): the vertices the clipper makes take the
  provoking vertex's viewport, and the clipped polygon's first vertex (the
  provoking vertex of every triangle it is cut into) gets the flat
  attributes -- so LAYER and VIEWPORT_INDEX -- of the original provoking
  vertex: clipping changes neither.  Here each viewport's primitives are
  clipped in a call of their own and put back in order.

With LAYER written and VIEWPORT_INDEX not, only the layer is tagged: the
transform and the regions are the usual ones.

The pipeline's stages (gallium/draw/pipeline.py: triangles with the polygon
stages, lines with stipple, points) run as for any program with a
:class:`PrimitiveLayers` for the pass: it transforms the vertices, clips each
viewport's primitives, gives each primitive its draw region, and tags the
set-up triangles -- the primitive ids the stages carry are ``draw << 32 |
the primitive's index in the pass`` meanwhile.  Everything here is a pure
function of its arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..pipe.enums import PIPE_MAX_VIEWPORTS, Prim
from . import clip
from .primitives import TriangleSet
from .viewport import viewport_transform

F32 = np.float32


@dataclass
class LayerSource:
    """Per-vertex LAYER and VIEWPORT_INDEX values of a stage's output vertices."""

    layer: np.ndarray | None  # (V,) int64: the LAYER output's bits (None: not written)
    viewport: np.ndarray | None  # (V,) int64: VIEWPORT_INDEX, clamped to 0..15 (None: not written)
    # (V,) the vertex whose viewport transforms each vertex (geometry shader
    # strips, tessellated domain points); None: each primitive's first vertex
    # (a vertex shader's primitives: the stages copy the vertices per primitive)
    lead: np.ndarray | None = None


def output_bits(outputs: dict, reg: int | None, n: int) -> np.ndarray | None:
    """An output's x channel over ``n`` vertices as unsigned 32-bit values
    (int64): four channels (vertex and evaluation shaders) or (n, 4) rows (a
    geometry shader's).  None when there is no such output; zeros when it
    was declared but never written."""
    if reg is None:
        return None
    v = outputs.get(reg)
    if v is None:
        return np.zeros(n, np.int64)
    a = np.asarray(v if isinstance(v, np.ndarray) and v.ndim == 2 else v[0])
    if a.ndim == 2:
        a = a[:, 0]
    if a.dtype.itemsize == 4:
        a = a.view(np.uint32)
    else:  # (not a 32-bit register: its value)
        a = a.astype(np.int64).astype(np.uint32)
    return np.broadcast_to(a, (n,)).astype(np.int64)


def clamp_viewport(index: np.ndarray) -> np.ndarray:
    """lp_clamp_viewport_idx / draw_clamp_viewport_idx: 16 or more (or a
    negative index, read unsigned) is viewport 0."""
    return np.where(index < PIPE_MAX_VIEWPORTS, index, 0)


def vertex_source(
    outputs: dict, n: int, layer_reg: int | None, viewport_reg: int | None, lead: Any = None
) -> LayerSource:
    """The LayerSource of ``n`` output vertices."""
    vp = output_bits(outputs, viewport_reg, n)
    layer = output_bits(outputs, layer_reg, n)
    return LayerSource(layer, None if vp is None else clamp_viewport(vp), lead)


def strip_leads(n: int, cuts: np.ndarray) -> np.ndarray:
    """Each of a geometry shader's ``n`` output vertices' strip's first vertex
    (``cuts``: where strips start, after the first)."""
    starts = np.concatenate([[0], np.asarray(cuts, np.int64)])
    lengths = np.diff(np.append(starts, n))
    return np.repeat(starts, lengths)


def tess_leads(
    point_patch: np.ndarray,
    patch_ids: np.ndarray,
    patch_draw: np.ndarray,
    group: list,
    per: int,
) -> np.ndarray:
    """The vertex whose viewport transforms each tessellated domain point:
    point j of its run takes point ``j - j % per``'s (``per``: vertices of
    the tessellator's primitives).  ``point_patch``: each point's patch (of
    the pass, ascending); ``patch_ids``, ``patch_draw``: each patch's id in
    its draw's instance and its draw."""
    n = point_patch.size
    if n == 0 or per == 1:
        return np.arange(n, dtype=np.int64)
    q = patch_ids.size
    chunk = np.array(
        [max(1, (1024 if d.info.index_size else 4096) // d.info.vertices_per_patch) for d in group],
        np.int64,
    )[patch_draw]
    run_start = np.arange(q, dtype=np.int64) - np.asarray(patch_ids, np.int64) % chunk
    first_point = np.searchsorted(point_patch, np.arange(q, dtype=np.int64))
    run_first = first_point[run_start][point_patch]
    j = np.arange(n, dtype=np.int64)
    return j - (j - run_first) % per


def triangle_leads(group: list, tris: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """Each vertex-shader triangle's assembled primitive's first vertex: the
    triangle's first, but a quad's first for both of its triangles -- the
    draw module assembles QUADS and QUAD_STRIP into quads (draw_decompose_tmp.h
    with PASS_QUADS: (a, b, c, d), and for a strip (q+2, q, q+1, q+3), or
    (q+3, q+2, q, q+1) with flatshade_first); numpipe's two triangles of a
    quad are consecutive (gallium/draw/assemble.py: (a, b, d), (b, c, d),
    or (d, a, b), (d, b, c) with flatshade_first)."""
    lead = tris[:, 0].copy()
    for k, d in enumerate(group):
        mode = d.info.mode
        if mode not in (Prim.QUADS, Prim.QUAD_STRIP):
            continue
        sel = np.flatnonzero(tags == k) if len(group) > 1 else np.arange(tris.shape[0])
        pair = sel[np.arange(sel.size) - np.arange(sel.size) % 2]
        column = 1 if mode == Prim.QUADS and d.program.rast.flatshade_first else 0
        lead[sel] = tris[pair, column]
    return lead


def viewport_rows(viewports: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The 16 viewports' scales and translates as (16, 3) float32 arrays."""
    return (
        np.array([s for s, _ in viewports], F32).reshape(-1, 3),
        np.array([t for _, t in viewports], F32).reshape(-1, 3),
    )


def viewport_regions(group: list, draw_of: np.ndarray, vp: np.ndarray) -> tuple:
    """Each primitive's draw region: its draw's region of viewport ``vp``
    (four arrays, inclusive bounds)."""
    r0 = group[0].regions
    if len(group) == 1 or all(d.regions == r0 for d in group):
        rows = np.array(r0, np.int64).reshape(-1, 4)[vp]
    else:
        rows = np.array([d.regions for d in group], np.int64)[draw_of, vp]
    return rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]


def _draw_regions(group: list, draw_of: np.ndarray) -> Any:
    """Each primitive's draw's region (one tuple when the draws share it)."""
    r0 = group[0].region
    if len(group) == 1 or all(d.region == r0 for d in group):
        return r0
    rows = np.array([d.region for d in group], np.int64)[draw_of]
    return rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]


# -- a pass's primitives -------------------------------------------------------------

_LOW = (1 << 32) - 1


class PrimitiveLayers:
    """The layers and viewports of a pass's primitives (triangles, segments
    or points: ``provoking`` each one's provoking vertex), for its stages.

    ``ids`` are the ids the stages carry instead of the draw-tagged
    primitive ids: the draw in the high half (as always), the primitive's
    index in the pass in the low half; :meth:`tag` turns them back."""

    def __init__(self, group: list, src: LayerSource, provoking, tags, prims) -> None:
        self.group = group
        self.src = src
        self.tags = np.asarray(tags, np.int64)
        self.prims = np.asarray(prims, np.int64)
        self.layer = None if src.layer is None else src.layer[provoking]
        self.vp = None if src.viewport is None else src.viewport[provoking]
        self.ids = self.tags << 32 | np.arange(self.tags.size, dtype=np.int64)

    def transform(self, pos, attrs, edges, prim_verts, leads, fused: bool) -> tuple:
        """The viewport transform: (pos, attrs, edges, prim_verts, win, oow),
        the vertices copied per primitive when ``leads`` (each primitive's
        first vertex: a vertex shader's primitives) are given and the
        program writes VIEWPORT_INDEX."""
        src = self.src
        if src.viewport is None:  # (the layer only: the usual transform)
            scale, translate = self.group[0].viewport
            win, oow = viewport_transform(pos, scale, translate, fused)
            return pos, attrs, edges, prim_verts, win, oow
        scales, translates = viewport_rows(self.group[0].viewports)
        if leads is not None:  # each primitive its own vertices (draw_prim_assembler.c)
            m, k = prim_verts.shape
            take = prim_verts.reshape(-1)
            pos, attrs = pos[take], attrs[take]
            edges = None if edges is None else edges[take]
            vpv = np.repeat(src.viewport[leads], k)
            prim_verts = np.arange(m * k, dtype=np.int64).reshape(m, k)
        else:  # (a strip's first vertex, a tessellated point's, or the vertex's own)
            vpv = src.viewport if src.lead is None else src.viewport[src.lead]
        win, oow = viewport_transform(pos, scales[vpv], translates[vpv], fused=False)
        return pos, attrs, edges, prim_verts, win, oow

    def regions(self, ids: np.ndarray) -> Any:
        """The draw regions of the primitives with ``ids``: each one's
        viewport's in its draw (the draws' one region without VIEWPORT_INDEX)."""
        ids = np.asarray(ids, np.int64)
        draw_of = ids >> 32
        if self.vp is None:
            return _draw_regions(self.group, draw_of)
        return viewport_regions(self.group, draw_of, self.vp[ids & _LOW])

    def tag(self, ts: TriangleSet) -> None:
        """Give set-up triangles (their primitive ids: ``ids``) the draw-tagged
        primitive ids, layers and viewports of their primitives."""
        ids = ts.prim_id.astype(np.int64)
        t = ids & _LOW
        ts.prim_id = ids >> 32 << 32 | self.prims[t]
        ts.layer = None if self.layer is None else self.layer[t]
        ts.viewport = None if self.vp is None else self.vp[t]

    def wide(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` as the draw-tagged primitive ids."""
        ids = np.asarray(ids, np.int64)
        return ids >> 32 << 32 | self.prims[ids & _LOW]

    def clip_triangles(self, pos, win, oow, attrs, tris, common: dict) -> Any:
        """clip.clip_triangles with each triangle's new vertices in its own
        viewport: one call per viewport, the results merged in triangle
        order (edge flags too)."""
        ids, vp = self.ids, self.vp
        scales, translates = viewport_rows(self.group[0].viewports)
        used = np.unique(vp)
        flags = common.get("flags")
        if used.size <= 1:
            g = int(used[0]) if used.size else 0
            return clip.clip_triangles(
                pos, win, oow, attrs, tris, ids, scale=scales[g], translate=translates[g], **common
            )
        base = pos.shape[0]
        extra: list[list] = [[], [], [], [], []]
        tri_parts, id_parts, flag_parts = [], [], []
        offset = base
        for g in used.tolist():
            sel = np.flatnonzero(vp == g)
            args = dict(common, flags=None if flags is None else flags[sel])
            geo = clip.clip_triangles(
                pos, win, oow, attrs, tris[sel], ids[sel], scale=scales[g],
                translate=translates[g], **args,
            )  # fmt: skip
            t = geo.tris
            tri_parts.append(np.where(t >= base, t + (offset - base), t))
            id_parts.append(geo.prim_ids)
            flag_parts.append(geo.flags)
            arrays = (geo.pos, geo.win, geo.oow, geo.attrs, geo.vertex_edges)
            for part, arr in zip(extra, arrays):
                if arr is not None:
                    part.append(arr[base:])
            offset += geo.pos.shape[0] - base
        merged = np.concatenate(id_parts)
        order = np.argsort(merged & _LOW, kind="stable")
        edges = None
        if flags is not None:  # (the clipper's vertex edge flags: the given ones, else all set)
            given = common.get("vertex_edges")
            given = np.ones(base, bool) if given is None else given.astype(bool)
            edges = np.concatenate([given, *extra[4]])
        return clip.ClippedGeometry(
            *(np.concatenate([a, *more]) for a, more in zip((pos, win, oow, attrs), extra)),
            np.concatenate(tri_parts)[order],
            merged[order],
            None if flags is None else np.concatenate(flag_parts)[order],
            edges,
        )

    def clip_lines(self, pos, win, oow, attrs, segs, common: dict) -> tuple:
        """lines.clip_lines per viewport, merged in segment order: (pos, win,
        oow, attrs, segments, the indices of the segments clipping left)."""
        from . import lines as ln

        order = np.arange(segs.shape[0], dtype=np.int64)
        vp = self.vp
        scales, translates = viewport_rows(self.group[0].viewports)
        used = np.unique(vp)
        if used.size <= 1:
            g = int(used[0]) if used.size else 0
            return ln.clip_lines(
                pos, win, oow, attrs, segs, order, scale=scales[g], translate=translates[g],
                **common,
            )  # fmt: skip
        base = pos.shape[0]
        extra: list[list] = [[], [], [], []]
        seg_parts, id_parts = [], []
        offset = base
        for g in used.tolist():
            sel = np.flatnonzero(vp == g)
            p2, w2, o2, a2, s2, k2 = ln.clip_lines(
                pos, win, oow, attrs, segs[sel], order[sel], scale=scales[g],
                translate=translates[g], **common,
            )  # fmt: skip
            seg_parts.append(np.where(s2 >= base, s2 + (offset - base), s2))
            id_parts.append(k2)
            for part, arr in zip(extra, (p2, w2, o2, a2)):
                part.append(arr[base:])
            offset += p2.shape[0] - base
        kept = np.concatenate(id_parts)
        srt = np.argsort(kept, kind="stable")
        merged = [np.concatenate([a, *more]) for a, more in zip((pos, win, oow, attrs), extra)]
        return (*merged, np.concatenate(seg_parts)[srt], kept[srt])
