"""The draw pipeline: a context's draws, queued, then run through the vertex
pipeline in passes of many draws (Mesa's draw module: draw_context.c, draw_pt.c).

Theory of operation
-------------------
A context hands each draw to its :class:`DrawPipeline` as a :class:`Draw`:
the validated ``DrawInfo``, the index bytes, and references to the state the
draw needs -- its :class:`VertexProgram`, vertex buffers, vertex-stage
constant buffers, viewport, draw region, and the fragment side as an object
this module never looks into.  These are snapshots: the context replaces such
an object when the state behind it changes and never mutates one, so a
queued draw keeps the state of its call.  Resource *contents* are read when
the queue runs; the context runs the queue before anything writes a resource
that queued draws read (it keeps their set) and wherever results
become observable (flush, maps, query results, compute), so reading late
reads the same bytes.  Everything here runs on the thread that calls the
context (the application's, or a threaded context's driver thread).

:meth:`DrawPipeline.run` cuts the queue into *passes*: maximal runs of
consecutive draws with the same vertex program (vertex and geometry shader,
vertex elements, rasterizer state, clip planes, linkage to the fragment
shader), viewport (all 16 when the program writes VIEWPORT_INDEX), kind of
primitive and stream output binding -- and a draw
that reads (as vertices, indices or constants) a buffer the pass writes by
stream output starts a pass of its own, so that it reads what the draws
before it wrote.  Each pass goes through the stages once, over all its
draws:

======================  =====================================================
``fetch.py``            index reading per draw (repeated index ranges read
                        once), one vertex fetch per distinct vertex-buffer set
``vs.py``               one vertex shader kernel call; a constant buffer that
                        differs between the draws is read per lane
``tess.py``             PATCHES draws: one control shader call over the pass's
                        patches, the tessellator (``tessellator.py``) once per
                        distinct set of levels, one evaluation shader call
                        over every domain point; its primitives go on
``assemble.py``         each draw's primitives from its own vertex stream
``gs.py``               one geometry kernel call over the pass's primitives
``so.py``               stream output: the pass's primitives (each vertex
                        stream's) written to its draws' targets in draw
                        order, before clipping; with ``rasterizer_discard``
                        a pass ends here (after its counts)
``clip.py``/``lines``   clipping of triangles / lines (points: ``points.py``)
``viewport.py``         the viewport transform
``setup.py``/``lines``  set-up triangles (TriangleSets), each draw's triangles
/``points.py``          within its own draw region
``layers.py``           with the three above when the last vertex stage writes
                        LAYER or VIEWPORT_INDEX: each primitive's layer and
                        viewport, the viewport of each vertex's transform,
                        clipping per viewport, each viewport's draw region
emit                    the pass's set-up primitives, in submission order, to
                        the sink, each with its draw (and so its draw's
                        fragment state)
======================  =====================================================

Every stage works per vertex or per primitive and never mixes draws, and each
primitive carries its draw (in the high half of a 64-bit primitive id through
clipping and setup), so every draw's primitives come out bit-identical to a
pass of that draw alone, in the same order (tests/draw/test_batching.py
compares the two on random draw sequences).  The sink (the driver's
rasterizer front: gallium/numpipe/context.py) builds each draw's fragment
state and bins the primitives into its scene.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..pipe.enums import Prim
from . import assemble, clip, layers, polygon, vs
from .fetch import fetch_attributes, read_indices
from .primitives import TriangleSet, select_triangles
from .setup import setup_triangles
from .viewport import viewport_transform

F32 = np.float32

# The queue runs when it holds this many draws or vertices (memory stays bounded).
MAX_QUEUED_DRAWS = 4096
MAX_QUEUED_VERTICES = 1 << 20

# primitive classes of a pass
TRIANGLES, POINTS, LINES, GEOMETRY = "triangles", "points", "lines", "geometry"

_LINE_MODES = frozenset(
    {Prim.LINES, Prim.LINE_STRIP, Prim.LINE_LOOP, Prim.LINES_ADJACENCY, Prim.LINE_STRIP_ADJACENCY}
)


@dataclass(frozen=True, eq=False)
class VertexProgram:
    """The vertex side that a pass's draws share (compared by identity: the
    context interns equal programs, so draws with equal state share one)."""

    vs: Any  # the vertex shader CSO (.kernel, .shader)
    gs: Any  # the geometry shader CSO, or None
    elements: tuple  # vertex elements
    rast: Any  # pipe.RasterizerState
    cull_front: bool
    cull_back: bool
    ucps: tuple  # the enabled user clip planes
    link: tuple  # ((output register or None, interpolation), ...) per attribute slot
    sprite: tuple  # attribute slots taking point sprite coordinates
    vs_textures: Any  # TextureBindings of the vertex stage, or None
    gs_textures: Any
    max_point_size: float
    max_line_width: float
    keep: tuple = ()  # objects the context identified this program by
    # a multisampled framebuffer with rast.multisample: the set-up keeps every
    # primitive whose box holds a sample (gallium/draw/setup.py)
    multisample: bool = False
    so_info: Any = None  # the last vertex stage's so.StreamOutputInfo, or None
    tess: Any = None  # tess.TessState when tessellation shaders are bound
    vs_memory: Any = None  # the vertex shader's buffers and images (ExecEnv.memory), or None
    gs_memory: Any = None
    memory_writes: bool = False  # a vertex-side stage stores to memory: one pass a draw
    # the LAYER and VIEWPORT_INDEX outputs of the stage before the rasterizer
    # (registers, or None): see gallium/draw/layers.py
    layer_out: int | None = None
    viewport_out: int | None = None

    @property
    def layered(self) -> bool:
        """Whether primitives choose their layer or viewport (gallium/draw/layers.py)."""
        return self.layer_out is not None or self.viewport_out is not None

    @property
    def fused_viewport(self) -> bool:
        """Whether the viewport transform is draw_llvm's fused one (the vertex
        shader rasterized, writing no VIEWPORT_INDEX), not draw_pt_post_vs.c's
        (gallium/draw/viewport.py)."""
        return self.gs is None and self.tess is None and self.viewport_out is None

    @property
    def last_vertex_stage(self) -> Any:
        """The shader whose outputs a geometry shader (or the rasterizer) reads."""
        return self.tess.tes if self.tess is not None else self.vs

    # polygon state (gallium/draw/polygon.py): the depth offset, whether the
    # draw module's stages handle polygons (llvmpipe's "need pipeline"),
    # whether some polygons are drawn as lines or points, two-sided colour
    # ((front slots), (back slots)), and vertex outputs carried past the
    # fragment shader's slots (the back colours, the point size of polygons
    # drawn as points): ((output register or None, interpolation), ...)
    offset: Any = None
    pipeline: bool = False
    unfilled: bool = False
    twoside: tuple | None = None
    extra: tuple = ()
    psize_slot: int | None = None
    edgeflag: Any = None  # the vertex shader's EDGEFLAG output register
    clip_near: bool = True
    clip_far: bool = True
    clamp_color: bool = False  # clamp_vertex_color
    # line stipple (gallium/draw/lines.py stipple_lines): (factor, pattern,
    # rectangular) or None
    line_stipple: Any = None
    # smooth points and lines (gallium/draw/smooth.py): point_smooth or
    # line_smooth without multisample, and whether the points' radius is
    # their vertices' PSIZE
    point_smooth: bool = False
    line_smooth: bool = False
    smooth_psize: bool = False

    @property
    def interp(self) -> list[str]:
        return [mode for _, mode in self.link]

    @property
    def slots(self) -> tuple:
        """Every attribute slot a vertex carries: the fragment shader's, then ``extra``."""
        return self.link + self.extra if self.extra else self.link

    @property
    def interp_all(self) -> list[str]:
        return [mode for _, mode in self.slots]

    def planes(self) -> tuple[np.ndarray, list[int]]:
        rast = self.rast
        return clip.plane_table(
            True, (self.clip_near, self.clip_far), rast.clip_halfz, list(self.ucps)
        )


@dataclass(slots=True, eq=False)
class Draw:
    """One queued draw and the state it was called with."""

    info: Any  # a validated private pipe.DrawInfo
    index: np.ndarray | None  # the index bytes (indexed draws)
    program: VertexProgram
    buffers: dict  # vertex buffer slot -> fetch.BoundVertexBuffer
    consts: tuple  # the vertex stage's constant buffers (uint8 arrays or None)
    gs_consts: tuple
    viewport: tuple  # (scale, translate)
    region: tuple[int, int, int, int]  # the draw region, inclusive
    fragment: Any  # the fragment side, for the sink
    queries: tuple = ()  # primitive-counting queries active at the call
    kind: str = TRIANGLES
    so: Any = None  # the so.Binding it writes (stream output), or None
    tess_consts: tuple = ((), ())  # the control and evaluation stages' constant buffers
    # when the program writes VIEWPORT_INDEX: the 16 viewports ((scale,
    # translate) each) and draw regions (inclusive, as ``region``), and with
    # depth clamping their depth ranges ((lo, hi) each; for the sink)
    viewports: tuple | None = None
    regions: tuple | None = None
    depth_ranges: tuple | None = None


@dataclass(slots=True)
class DrawCounts:
    """What one draw adds to primitive-counting queries (PIPE_QUERY_*)."""

    primitives_generated: int = 0
    ia_vertices: int = 0
    ia_primitives: int = 0
    vs_invocations: int = 0
    gs_invocations: int = 0
    gs_primitives: int = 0
    c_invocations: int = 0
    c_primitives: int = 0
    # per vertex stream, when the draw wrote stream output: primitives made, written
    so_generated: tuple | None = None
    so_written: tuple | None = None
    hs_invocations: int = 0  # tessellation control shader invocations (patches)
    ds_invocations: int = 0  # tessellation evaluation shader invocations


class Sink(Protocol):
    """Where a pass's set-up primitives go (the driver's rasterizer front)."""

    def emit(self, tris: TriangleSet, draws: list[Draw], draw_of: np.ndarray | None) -> None:
        """The set-up triangles of consecutive draws, in submission order:
        triangle t is ``draws[draw_of[t]]``'s (every one ``draws[0]``'s when
        ``draw_of`` is None).  Their fragment state is each draw's
        ``fragment``."""

    def count(self, queries: tuple, counts: DrawCounts) -> None:
        """One draw's primitive counts, for its queries."""

    def accessing(self, resources: list) -> None:
        """The pass is about to write (stream output, shader stores) or read
        (shader loads) these resources: work the sink holds or has submitted
        that uses them must be done first."""


def kind_of(mode: Prim, has_gs: bool, tess_output: str | None = None) -> str:
    """The primitive class of a pass: that of the geometry shader, else of
    the tessellator's output (points, lines, triangles), else of the mode."""
    if has_gs:
        return GEOMETRY
    if tess_output is not None:
        return {"points": POINTS, "lines": LINES}.get(tess_output, TRIANGLES)
    if mode == Prim.POINTS:
        return POINTS
    if mode in _LINE_MODES:
        return LINES
    return TRIANGLES


@dataclass
class _Stream:
    """Index reading and assembly of one draw (shared by draws of equal ranges)."""

    n: int  # stream length (vertices after restarts are removed)
    cuts: np.ndarray
    uniq: np.ndarray  # the distinct vertex ids
    inverse: np.ndarray  # each stream entry's position among them
    prims: Any = None  # (P, k) stream positions of the primitives, by kind
    prim_ids: Any = None
    edges: Any = None  # (P,) edge flags of triangles (polygons drawn as lines or points)
    resets: Any = None  # (P,) lines starting a new stipple pattern (line stipple)
    _local: Any = None
    _ids: Any = None

    def local(self) -> np.ndarray:
        """The primitives as positions among the distinct vertices (P, k)."""
        if self._local is None:
            self._local = self.inverse[self.prims]
        return self._local

    def ids(self) -> np.ndarray:
        """The primitives' ids (0, 1, ... unless assembly numbered them)."""
        if self._ids is None:
            ids = self.prim_ids
            self._ids = np.arange(self.prims.shape[0], dtype=np.int64) if ids is None else ids
        return self._ids


class DrawPipeline:
    """One context's draw queue and the stages that run it."""

    def __init__(self, sink: Sink, yield_point: Callable[[], None] | None = None) -> None:
        self.sink = sink
        self.yield_point: Callable[[], None] = yield_point or _no_yield
        self.queue: list[Draw] = []
        self.queued_vertices = 0
        self.stats = {"passes": 0, "draws": 0}

    # -- the queue ----------------------------------------------------------------

    def add(self, draw: Draw) -> bool:
        """Queue a draw; returns whether the queue is now due to run (bound passed)."""
        self.queue.append(draw)
        info = draw.info
        self.queued_vertices += info.count * info.instance_count
        return len(self.queue) >= MAX_QUEUED_DRAWS or self.queued_vertices >= MAX_QUEUED_VERTICES

    def run(self) -> list[BaseException]:
        """Run every queued draw, in order.  Returns the errors of draws that
        failed (each draw runs as if alone: a failing draw does not take its
        neighbours with it)."""
        draws, self.queue = self.queue, []
        self.queued_vertices = 0
        errors: list[BaseException] = []
        if not draws:
            return errors
        cache: dict = {}
        i, n = 0, len(draws)
        while i < n:
            d0 = draws[i]
            j = i + 1
            while (
                j < n
                and draws[j].program is d0.program
                and draws[j].kind == d0.kind
                and draws[j].viewport == d0.viewport
                and (
                    (d0.kind in (TRIANGLES, GEOMETRY) and not d0.program.pipeline)
                    or draws[j].region == d0.region
                )
                and (d0.viewports is None or draws[j].viewports == d0.viewports)
                and draws[j].so is d0.so
                and (d0.so is None or not _reads(draws[j], d0.so.storages))
                and not d0.program.memory_writes
            ):
                j += 1
            group = draws[i:j]
            try:
                self._run_pass(group, cache)
            except Exception as exc:
                if len(group) == 1:
                    errors.append(exc)
                else:  # draw by draw: each error stays with its own draw
                    for d in group:
                        try:
                            self._run_pass([d], cache)
                        except Exception as exc2:
                            errors.append(exc2)
            i = j
        return errors

    # -- one pass ------------------------------------------------------------------

    def _run_pass(self, group: list[Draw], cache: dict) -> None:
        self.stats["passes"] += 1
        self.stats["draws"] += len(group)
        kind = group[0].kind
        streams = [self._stream(d, cache) for d in group]
        verts = _PassVertices(group, streams)
        prog = group[0].program
        touched = _memory_resources(prog)
        if touched:  # (rasterization in flight that uses them goes first)
            self.sink.accessing(touched)
        self.yield_point()
        self._vertex_shader(group, verts)
        self.yield_point()
        if group[0].program.tess is not None:
            verts = self._tessellate(group, streams, verts)
            self.yield_point()
        if kind == TRIANGLES:
            self._triangles(group, streams, verts)
        elif kind == POINTS:
            self._points(group, streams, verts)
        elif kind == LINES:
            self._lines(group, streams, verts)
        else:
            self._geometry(group, streams, verts)

    def _stream(self, d: Draw, cache: dict) -> _Stream:
        """Index reading, distinct vertices and assembly of one draw (cached
        for draws of the same index bytes and range in this run)."""
        info = d.info
        indexed = info.index_size
        restart = bool(info.primitive_restart and indexed)
        key = (
            id(d.index) if indexed else None,
            indexed,
            info.start,
            info.count,
            info.index_bias if indexed else 0,
            restart,
            info.restart_index if restart else 0,
            info.mode,
            d.kind,
            d.program.rast.flatshade_first,
            id(d.program.gs) if d.kind == GEOMETRY else None,
            d.program.unfilled,
            d.program.line_stipple is not None,
        )
        hit = cache.get(key)
        if hit is not None and hit[0] is d.index:
            return hit[1]
        ids, cuts = read_indices(
            d.index,
            indexed,
            info.start,
            info.count,
            info.index_bias if indexed else 0,
            restart,
            info.restart_index,
        )
        if indexed and ids.size:
            uniq, inverse = np.unique(ids, return_inverse=True)
        else:
            uniq, inverse = ids, np.arange(ids.size)
        s = _Stream(ids.size, cuts, uniq, inverse)
        mode = info.mode
        flat_first = d.program.rast.flatshade_first
        if mode == Prim.PATCHES:  # whole patches; the tessellator makes the primitives
            vpp = info.vertices_per_patch
            s.prims = np.arange(ids.size // vpp * vpp, dtype=np.int64).reshape(-1, vpp)
            s.prim_ids = np.arange(s.prims.shape[0], dtype=np.int64)
        elif d.kind == TRIANGLES:
            s.prims, s.prim_ids = assemble.triangles(mode, ids.size, cuts, flat_first)
            if d.program.unfilled:
                s.edges = assemble.edge_flags(mode, ids.size, cuts, flat_first)
        elif d.kind == LINES:
            from . import lines as ln

            s.prims, s.prim_ids = ln.segments(mode, ids.size, cuts)
            if d.program.line_stipple is not None:
                s.resets = ln.segment_resets(mode, ids.size, cuts)
        elif d.kind == GEOMETRY:
            from . import gs as geo

            s.prims = geo.input_primitives(d.program.gs.shader, mode, ids.size, cuts, flat_first)
        cache[key] = (d.index, s)
        return s

    def _vertex_shader(self, group: list[Draw], verts: _PassVertices) -> None:
        prog = group[0].program
        n = verts.n
        fetched = _fetch(group, verts)
        self.yield_point()
        lane_draw = verts.lane_draw()
        consts = vs.pass_constants([d.consts for d in group], lane_draw)
        sysvals = (
            vs.system_values(prog.vs.kernel, verts.vids, verts.iids, verts.per_draw())
            if prog.vs.kernel.system_value_decls
            else {}
        )
        res = vs.run_vertex_shader(
            prog.vs, fetched, n, consts, sysvals, prog.vs_textures, prog.vs_memory
        )
        if prog.clamp_color and prog.gs is None and prog.tess is None:
            vs.clamp_colors(prog.vs.kernel, res)  # (the last vertex stage's colours)
        verts.res = res
        verts.pos = vs.positions(prog.vs.kernel, res, n)
        if prog.gs is None and prog.tess is None:
            polygons = group[0].kind == TRIANGLES  # (the extra slots serve polygons only)
            verts.attrs = vs.attributes(res, n, prog.slots if polygons else prog.link)
            if prog.unfilled and prog.edgeflag is not None:  # (1.0: an edge starts here)
                verts.edges = vs._bcast(res.outputs[prog.edgeflag][0], n, F32) == F32(1.0)

    def _tessellate(self, group: list[Draw], streams: list[_Stream], verts: Any) -> Any:
        """The control and evaluation stages over the pass's patches
        (gallium/draw/tess.py); the domain points become the pass's vertices."""
        from . import tess

        prog = group[0].program
        patches, patch_ids, tags, _ = verts.primitives(streams)
        out = tess.run(
            prog.tess, prog.vs, verts.res, verts.n, patches, patch_ids, tags,
            ([d.tess_consts[0] for d in group], [d.tess_consts[1] for d in group]), len(group),
        )  # fmt: skip
        return _TessVertices(out, prog, group, verts, (patch_ids, tags))

    # -- triangles -----------------------------------------------------------------

    def _triangles(self, group: list[Draw], streams: list[_Stream], verts: _PassVertices) -> None:
        prog = group[0].program
        tris, prims, tags, ntri = verts.primitives(streams)
        so_counts = self._stream_output(group, {0: (tris, tags, verts.res.outputs, verts.n)})
        discard = prog.rast.rasterizer_discard
        sets: list = []
        if not discard:
            flags = verts.primitive_edges(streams) if prog.unfilled else None
            src = verts.layer_source() if prog.layered else None
            leads = None
            if src is not None and src.lead is None:  # (a vertex shader's primitives)
                leads = layers.triangle_leads(group, tris, tags)
            sets, nclipped_by_draw = self._triangle_stage(
                group, verts.pos, verts.attrs, tris, prims, tags, flags, verts.edges, src, leads
            )
        if any(d.queries for d in group):
            for k, (d, s) in enumerate(zip(group, streams)):
                if d.queries:
                    ninst = d.info.instance_count
                    self.sink.count(
                        d.queries,
                        verts.draw_counts(
                            k,
                            primitives_generated=(
                                s.prim_ids.size and (int(s.prim_ids.max()) + 1) * ninst
                            ),
                            ia_vertices=s.n * ninst,
                            ia_primitives=int(ntri[k]),
                            vs_invocations=s.uniq.size * ninst,
                            c_invocations=int(ntri[k]),
                            c_primitives=0 if discard else int(nclipped_by_draw[k]),
                            **_so_fields(so_counts, k),
                        ),
                    )
        for ts in sets:
            self._emit(group, ts)

    def _triangle_stage(
        self, group, pos, attrs, tris, prims, tags, flags=None, vertex_edges=None, src=None,
        leads=None,
    ) -> tuple:  # fmt: skip
        """Viewport transform, clipping and setup of triangles ``tris`` (with
        primitive ids ``prims``, draws ``tags`` and, for polygons drawn as
        lines or points, edge ``flags`` and the vertices' edge flags):
        (TriangleSets in submission order, whose primitive ids carry the draw
        in their high half; triangles clipping left per draw).  ``src``: the
        LAYER / VIEWPORT_INDEX values when the program writes them
        (gallium/draw/layers.py; ``leads``: each triangle's first vertex, for
        a vertex shader's triangles)."""
        prog = group[0].program
        rast = prog.rast
        scale, translate = group[0].viewport
        lay = None
        if src is None:
            win, oow = viewport_transform(pos, scale, translate, prog.fused_viewport)
            wide = tags.astype(np.int64) << 32 | prims.astype(np.int64)
        else:
            lay = layers.PrimitiveLayers(
                group, src, tris[:, 0] if rast.flatshade_first else tris[:, 2], tags, prims
            )
            pos, attrs, vertex_edges, tris, win, oow = lay.transform(
                pos, attrs, vertex_edges, tris, leads, prog.fused_viewport
            )
            wide = lay.ids
        planes, active = prog.planes()
        common = {
            "planes": planes,
            "active": active,
            "interp": prog.interp_all,
            "flatshade_first": rast.flatshade_first,
            "flags": flags,
            "vertex_edges": vertex_edges,
        }
        if lay is not None and lay.vp is not None:  # (new vertices in each one's viewport)
            geo = lay.clip_triangles(pos, win, oow, attrs, tris, common)
        else:
            geo = clip.clip_triangles(
                pos, win, oow, attrs, tris, wide, scale=scale, translate=translate, **common
            )
        self.yield_point()
        draw_of = geo.prim_ids >> 32
        nclipped = (
            np.bincount(draw_of, minlength=len(group)) if len(group) > 1 else [geo.tris.shape[0]]
        )
        k = len(prog.link)
        if prog.pipeline:
            sets = self._polygon_stages(group, geo, planes, None if lay is None else lay.regions)
        else:  # llvmpipe's setup offsets depth and picks the back colours
            offset = prog.offset if prog.offset is not None and prog.offset.tri else None
            ts = setup_triangles(
                geo.win,
                geo.oow,
                geo.tris,
                geo.attrs,
                prog.interp,
                region=_regions(group, draw_of) if lay is None else lay.regions(geo.prim_ids),
                half_pixel_center=rast.half_pixel_center,
                bottom_edge_rule=rast.bottom_edge_rule,
                multisample=prog.multisample,
                front_ccw=rast.front_ccw,
                cull_front=prog.cull_front,
                cull_back=prog.cull_back,
                flatshade_first=rast.flatshade_first,
                prim_ids=geo.prim_ids,
                wide_prim_ids=True,
                offset=offset,
                twoside=prog.twoside,
                nslots=k,
            )
            sets = [ts]
        if lay is not None:
            for ts in sets:
                lay.tag(ts)
        return sets, nclipped

    def _polygon_stages(
        self, group: list[Draw], geo: Any, planes: np.ndarray, region_of: Any = None
    ) -> list:
        """The draw module's polygon stages (gallium/draw/polygon.py) and the
        setup of what they make: filled triangles, and the lines and points
        of polygons drawn as such, run by run in submission order.
        ``region_of(ids)``: the draw regions of the primitives with ``ids``
        (layered programs: gallium/draw/layers.py), else the draws' one."""
        from . import lines as ln
        from .points import setup_points

        prog = group[0].program
        rast = prog.rast
        interp = prog.interp
        k = len(prog.link)
        pieces = polygon.pipeline_triangles(
            geo.pos, geo.win, geo.oow, geo.attrs, geo.tris, geo.prim_ids, geo.flags,
            geo.vertex_edges, rast=rast, cull_front=prog.cull_front, cull_back=prog.cull_back,
            offset=prog.offset, twoside=prog.twoside,
            flat_slots=[i for i, mode in enumerate(interp) if mode == "constant"],
        )  # fmt: skip
        attrs = pieces.attrs
        if attrs.shape[1] != k:
            attrs = np.ascontiguousarray(attrs[:, :k])
        region = group[0].region
        common = {"half_pixel_center": rast.half_pixel_center, "multisample": prog.multisample}
        out = []
        # polygon stipple: draw_pipe_pstipple.c binds its stipple shader at a
        # draw's first filled triangle, flushing nothing (suspend_flushing), so
        # every primitive the vertex buffer stage still holds -- a draw's, up
        # to its capacity -- is rasterized with it: a draw with a filled
        # triangle is stippled whole (its lines and points too), one without
        # is not
        stippling = bool(rast.poly_stipple_enable)
        previous = None  # the kind of the run before (a triangle or point resets line stipple)
        filled = np.zeros(0, np.int64)  # draws with a filled triangle
        if stippling:
            tri_runs = [r[1] for r in pieces.runs if r[0] == "tri"]
            if tri_runs:
                filled = np.unique(pieces.prim_ids[np.concatenate(tri_runs)] >> 32)
        for run in pieces.runs:
            if run[0] == "tri":
                t = run[1]
                ts = setup_triangles(
                    pieces.win, pieces.oow, 3 * t[:, None] + np.arange(3), attrs, interp,
                    region=region if region_of is None else region_of(pieces.prim_ids[t]),
                    bottom_edge_rule=rast.bottom_edge_rule,
                    front_ccw=rast.front_ccw, cull_front=prog.cull_front,
                    cull_back=prog.cull_back, flatshade_first=rast.flatshade_first,
                    prim_ids=pieces.prim_ids[t], wide_prim_ids=True, **common,
                )  # fmt: skip
            elif run[0] == "line":
                segs, tri_of = run[1], run[2]
                win, oow, lattrs, flat = pieces.win, pieces.oow, attrs, None
                if prog.line_stipple is not None:  # (a filled triangle or point before resets)
                    resets = run[3].copy()
                    if resets.size and previous != "line":
                        resets[0] = True
                    factor, pattern, rectangular = prog.line_stipple
                    flat = attrs[segs[:, 0 if rast.flatshade_first else 1]]
                    win, oow, lattrs, segs, sub = ln.stipple_lines(
                        win, oow, attrs, segs, resets,
                        factor=factor, pattern=pattern, rectangular=rectangular,
                    )  # fmt: skip
                    tri_of, flat = tri_of[sub], flat[sub]
                ts = ln.setup_lines(
                    win, oow, segs, lattrs, interp,
                    width=min(rast.line_width, prog.max_line_width),
                    region=region if region_of is None else region_of(pieces.prim_ids[tri_of]),
                    bottom_edge_rule=rast.bottom_edge_rule, prim_ids=pieces.prim_ids[tri_of],
                    flat_values=(
                        flat if flat is not None
                        else attrs[segs[:, 0 if rast.flatshade_first else 1]]
                    ),
                    last_pixel=rast.line_last_pixel, smooth=prog.line_smooth, **common,
                )  # fmt: skip
            else:
                pts, tri_of = run[1], run[2]
                if prog.psize_slot is not None and rast.point_size_per_vertex:
                    size = pieces.attrs[pts, prog.psize_slot, 0].astype(F32)
                else:
                    size = np.full(pts.size, F32(rast.point_size), F32)
                size = np.minimum(size, F32(prog.max_point_size))
                ts, _ = setup_points(
                    pieces.win, pieces.oow, pieces.pos, attrs, interp, pts,
                    pieces.prim_ids[tri_of], size, rast=rast, planes=planes, active=[],
                    sprite=prog.sprite, smooth=prog.point_smooth,
                    region=(
                        region if region_of is None else list(region_of(pieces.prim_ids[tri_of]))
                    ),
                    per_vertex_size=prog.psize_slot is not None and rast.point_size_per_vertex,
                )  # fmt: skip
            if stippling and ts.count and filled.size:
                ts.stipple = np.isin(ts.prim_id.astype(np.int64) >> 32, filled)
            previous = run[0]
            out.append(ts)
        return out

    # -- points --------------------------------------------------------------------

    def _points(self, group: list[Draw], streams: list[_Stream], verts: _PassVertices) -> None:

        prog = group[0].program
        rast = prog.rast
        n = verts.n
        pts_parts, prim_parts, tag_parts = [], [], []
        for k, s in enumerate(streams if prog.tess is None else ()):
            ninst = group[k].info.instance_count
            base = verts.base[k]
            nu = s.uniq.size
            local = (
                np.concatenate([i * nu + s.inverse for i in range(ninst)])
                if ninst > 1
                else s.inverse
            )
            pts_parts.append(local + base)
            prim_parts.append(np.tile(np.arange(s.n, dtype=np.int64), ninst))
            tag_parts.append(np.full(s.n * ninst, k, np.int64))
        if prog.tess is not None:
            pts, prims, tags, npts = verts.primitives(streams)
            pts = pts[:, 0]
        else:
            pts, prims, tags = _cat(pts_parts), _cat(prim_parts), _cat(tag_parts)
            npts = [s.n * group[k].info.instance_count for k, s in enumerate(streams)]
        so_counts = self._stream_output(
            group, {0: (pts[:, None], tags, verts.res.outputs, verts.n)}
        )
        if rast.rasterizer_discard:
            self._count_discarded(group, streams, verts, so_counts, npts)
            return
        psize_reg = prog.last_vertex_stage.kernel.output_index("PSIZE")
        if rast.point_size_per_vertex and psize_reg is not None:
            size = vs._bcast(verts.res.outputs[psize_reg][0], n, F32)[pts]
        else:
            size = np.full(pts.size, F32(rast.point_size), F32)
        size = np.minimum(size, F32(prog.max_point_size))  # (NaN stays NaN: dropped)
        ts, kept_ids = self._point_setup(
            group, verts.pos, verts.attrs, prog.interp, pts, prims, tags, size,
            verts.layer_source() if prog.layered else None, prog.smooth_psize,
        )  # fmt: skip
        if any(d.queries for d in group):
            kept = np.bincount(kept_ids >> 32, minlength=len(group))
            for k, (d, s) in enumerate(zip(group, streams)):
                if d.queries:
                    ninst = d.info.instance_count
                    self.sink.count(
                        d.queries,
                        verts.draw_counts(
                            k,
                            primitives_generated=int(npts[k]),
                            ia_vertices=s.n * ninst,
                            ia_primitives=int(npts[k]),
                            vs_invocations=s.uniq.size * ninst,
                            c_invocations=int(npts[k]),
                            c_primitives=int(kept[k]),
                            **_so_fields(so_counts, k),
                        ),
                    )
        self._emit(group, ts)

    def _point_setup(self, group, pos, attrs, interp, pts, prims, tags, size, src, per_vertex):
        """Viewport transform, clipping and setup of the points at vertices
        ``pts`` (see gallium/draw/points.py): (TriangleSet with draw-tagged
        primitive ids, the draw-tagged ids of the points clipping left).
        ``src``: the LAYER / VIEWPORT_INDEX values when the program writes
        them (gallium/draw/layers.py: a point's own viewport and scissor, the
        transform in its strip's first vertex's viewport)."""
        from .points import setup_points

        prog = group[0].program
        lay = None
        region: Any = group[0].region
        if src is None:
            scale, translate = group[0].viewport
            win, oow = viewport_transform(pos, scale, translate, prog.fused_viewport)
            wide = tags << 32 | prims
        else:
            lay = layers.PrimitiveLayers(group, src, pts, tags, prims)
            *_, win, oow = lay.transform(pos, attrs, None, pts, None, prog.fused_viewport)
            wide = lay.ids
            if src.viewport is not None:  # (a list: a region per point, see setup_points)
                region = list(lay.regions(wide))
        rast = prog.rast
        if prog.viewport_out is not None and rast.point_tri_clip:
            # (llvmpipe's draw module leaves points unclipped in x and y only
            # with one viewport: lp_state_derived.c bypass_clip_points)
            rast = dataclasses.replace(rast, point_tri_clip=False)
        planes, active = prog.planes()
        ts, kept_ids = setup_points(
            win, oow, pos, attrs, interp, pts, wide, size,
            rast=rast, planes=planes, active=active, sprite=prog.sprite, region=region,
            multisample=prog.multisample, smooth=prog.point_smooth, per_vertex_size=per_vertex,
        )  # fmt: skip
        if lay is not None:
            lay.tag(ts)
            kept_ids = lay.wide(kept_ids)
        return ts, kept_ids

    # -- lines ---------------------------------------------------------------------

    def _lines(self, group: list[Draw], streams: list[_Stream], verts: _PassVertices) -> None:
        prog = group[0].program
        lines, prims, tags, nin = verts.primitives(streams)
        rast = prog.rast
        so_counts = self._stream_output(group, {0: (lines, tags, verts.res.outputs, verts.n)})
        if rast.rasterizer_discard:
            self._count_discarded(group, streams, verts, so_counts, nin)
            return
        flat = verts.attrs[lines[:, 0] if rast.flatshade_first else lines[:, 1]]
        resets = verts.primitive_edges(streams, "resets") if prog.line_stipple else None
        src = verts.layer_source() if prog.layered else None
        ts, nout = self._line_stage(
            group, verts.pos, verts.attrs, prog.interp, lines, prims, tags, flat, resets, src,
            lines[:, 0] if src is not None and src.lead is None else None,
        )  # fmt: skip
        if any(d.queries for d in group):
            for k, (d, s) in enumerate(zip(group, streams)):
                if d.queries:
                    ninst = d.info.instance_count
                    self.sink.count(
                        d.queries,
                        verts.draw_counts(
                            k,
                            primitives_generated=int(nin[k]),
                            ia_vertices=s.n * ninst,
                            ia_primitives=int(nin[k]),
                            vs_invocations=s.uniq.size * ninst,
                            c_invocations=int(nin[k]),
                            c_primitives=int(nout[k]),
                            **_so_fields(so_counts, k),
                        ),
                    )
        self._emit(group, ts)

    def _line_stage(
        self, group, pos, attrs, interp, lines, prims, tags, flat, resets=None, src=None,
        leads=None,
    ) -> tuple:  # fmt: skip
        """Viewport transform, clipping and setup of segments ``lines`` (see
        gallium/draw/lines.py; ``flat`` each segment's provoking-vertex
        inputs): (TriangleSet with draw-tagged primitive ids, segments
        clipping left per draw).  ``src``: the LAYER / VIEWPORT_INDEX values
        when the program writes them (gallium/draw/layers.py; ``leads``: each
        segment's first vertex, for a vertex shader's lines)."""
        from . import lines as ln

        prog = group[0].program
        rast = prog.rast
        scale, translate = group[0].viewport
        lay = None
        if src is None:
            win, oow = viewport_transform(pos, scale, translate, prog.fused_viewport)
        else:
            lay = layers.PrimitiveLayers(
                group, src, lines[:, 0] if rast.flatshade_first else lines[:, 1], tags, prims
            )
            pos, attrs, _, lines, win, oow = lay.transform(
                pos, attrs, None, lines, leads, prog.fused_viewport
            )
        planes, active = prog.planes()
        common = {"planes": planes, "active": active, "interp": interp}
        order = np.arange(lines.shape[0], dtype=np.int64)  # (unique, for the clipper)
        if lay is not None and lay.vp is not None:  # (new vertices in each one's viewport)
            pos, win, oow, attrs, lines, kept = lay.clip_lines(pos, win, oow, attrs, lines, common)
        else:
            pos, win, oow, attrs, lines, kept = ln.clip_lines(
                pos, win, oow, attrs, lines, order, scale=scale, translate=translate, **common
            )
        flat = flat[kept]  # (kept is ascending: the segments clipping left)
        if prog.line_stipple is not None:
            factor, pattern, rectangular = prog.line_stipple
            win, oow, attrs, lines, sub = ln.stipple_lines(
                win, oow, attrs, lines, resets[kept],
                factor=factor, pattern=pattern, rectangular=rectangular,
            )  # fmt: skip
            kept, flat = kept[sub], flat[sub]
        self.yield_point()
        ts = ln.setup_lines(
            win, oow, lines, attrs, interp,
            width=min(rast.line_width, prog.max_line_width),
            region=group[0].region if lay is None else lay.regions(lay.ids[kept]),
            half_pixel_center=rast.half_pixel_center, bottom_edge_rule=rast.bottom_edge_rule,
            multisample=prog.multisample, prim_ids=kept, flat_values=flat,
            last_pixel=rast.line_last_pixel, smooth=prog.line_smooth,
        )  # fmt: skip
        seg = ts.prim_id.astype(np.int64)
        if lay is None:
            ts.prim_id = tags[seg] << 32 | prims[seg]
        else:
            ts.prim_id = lay.ids[seg]
            lay.tag(ts)
        nout = np.bincount(tags[kept], minlength=len(group))
        return ts, nout

    # -- geometry shaders --------------------------------------------------------

    def _geometry(self, group: list[Draw], streams: list[_Stream], verts: _PassVertices) -> None:
        from . import gs as geo
        from . import lines as ln

        prog = group[0].program
        rast = prog.rast
        gs = prog.gs
        verts_in, prim_ids, tags, nin = verts.primitives(streams)
        self.yield_point()
        ninv = geo.invocations(gs.shader)
        lane_draw = np.repeat(tags, ninv) if len(group) > 1 else None
        consts = vs.pass_constants([d.gs_consts for d in group], lane_draw)
        so_info = prog.so_info if any(d.so is not None for d in group) else None
        other = [st for st in so_info.streams() if st] if so_info is not None else []
        out = geo.run_geometry(
            gs, prog.last_vertex_stage, verts.res, verts.pos, verts_in, prim_ids, tags, consts,
            prog.gs_textures, other, prog.gs_memory,
        )  # fmt: skip
        if prog.clamp_color:
            for r in vs.color_registers(gs.kernel):
                if r in out.outputs:
                    out.outputs[r] = vs.clamp_unit(out.outputs[r])
        self.yield_point()
        kind = gs.shader.get_property("GS_OUTPUT_PRIMITIVE")
        so_counts = None
        if so_info is not None:
            so_streams = {}
            for st in so_info.streams():
                o = out if st == 0 else out.streams[st]
                p = _strip_primitives(kind, o.pos.shape[0], o.cuts, rast.flatshade_first)
                so_streams[st] = (p, o.draw[p[:, 0]], _channels(o.outputs), o.pos.shape[0])
            so_counts = self._stream_output(group, so_streams)
        if rast.rasterizer_discard:
            gen = out.primitives_by_draw
            self._count_discarded(group, streams, verts, so_counts, nin, gen, ninv)
            return
        slots = prog.slots
        n = out.pos.shape[0]
        attrs = np.zeros((n, len(slots), 4), F32)
        interp = prog.interp
        for slot, (reg, _) in enumerate(slots):
            if reg is not None and reg in out.outputs:
                attrs[:, slot] = out.outputs[reg]
        if kind != "TRIANGLE_STRIP" and prog.extra:  # (only polygons use them)
            attrs = np.ascontiguousarray(attrs[:, : len(prog.link)])
        src = None
        if prog.layered:  # (each vertex transformed in its strip's first vertex's viewport)
            src = layers.vertex_source(
                out.outputs, n, prog.layer_out, prog.viewport_out, layers.strip_leads(n, out.cuts)
            )
        if kind == "TRIANGLE_STRIP":
            tris, _ = assemble.triangles(Prim.TRIANGLE_STRIP, n, out.cuts, rast.flatshade_first)
            first = tris[:, 0]
            flags = (
                assemble.edge_flags(Prim.TRIANGLE_STRIP, n, out.cuts, rast.flatshade_first)
                if prog.unfilled
                else None
            )
            sets, nout = self._triangle_stage(
                group, out.pos, attrs, tris, out.prim[first], out.draw[first], flags, None, src
            )
        elif kind == "LINE_STRIP":
            segs, _ = ln.segments(Prim.LINE_STRIP, n, out.cuts)
            flat = attrs[segs[:, 0] if rast.flatshade_first else segs[:, 1]]
            first = segs[:, 0]
            resets = ln.segment_resets(Prim.LINE_STRIP, n, out.cuts)
            ts, nout = self._line_stage(
                group, out.pos, attrs, interp, segs, out.prim[first], out.draw[first], flat,
                resets, src,
            )  # fmt: skip
            sets = [ts]
        else:  # POINTS
            psize = out.outputs.get(gs.kernel.output_index("PSIZE"))
            pts = np.arange(n, dtype=np.int64)
            if psize is None or not rast.point_size_per_vertex:
                size = np.full(n, F32(rast.point_size), F32)
            else:
                size = psize[:, 0].astype(F32)
            size = np.minimum(size, F32(prog.max_point_size))
            ts, kept_ids = self._point_setup(
                group, out.pos, attrs, interp, pts, out.prim, out.draw, size, src,
                psize is not None and rast.point_size_per_vertex,
            )  # fmt: skip
            nout = np.bincount(kept_ids >> 32, minlength=len(group))
            sets = [ts]
        if any(d.queries for d in group):
            for k, (d, s) in enumerate(zip(group, streams)):
                if d.queries:
                    ninst = d.info.instance_count
                    self.sink.count(
                        d.queries,
                        verts.draw_counts(
                            k,
                            primitives_generated=int(out.primitives_by_draw[k]),
                            ia_vertices=s.n * ninst,
                            ia_primitives=int(nin[k]),
                            vs_invocations=s.uniq.size * ninst,
                            gs_invocations=int(nin[k]) * ninv,
                            gs_primitives=int(out.primitives_by_draw[k]),
                            c_invocations=int(out.primitives_by_draw[k]),
                            c_primitives=int(nout[k]),
                            **_so_fields(so_counts, k),
                        ),
                    )
        for ts in sets:
            self._emit(group, ts)

    # -- stream output and rasterizer discard ----------------------------------------

    def _stream_output(self, group: list[Draw], streams: dict) -> np.ndarray | None:
        """Write the pass's primitives to its draws' stream output targets
        (gallium/draw/so.py).  ``streams[s] = (verts (P, k), draw of each,
        outputs, vertex count)`` per vertex stream.  Returns None when no draw
        writes, else the (generated, written) counts per draw and stream."""
        from . import so

        info = group[0].program.so_info
        if info is None or all(d.so is None for d in group):
            return None
        self.sink.accessing([r for d in group if d.so is not None for r in d.so.resources()])
        prims = {
            st: so.StreamPrimitives(v, tags, outs, n)
            for st, (v, tags, outs, n) in streams.items()
            if st in info.streams()
        }
        return so.emit(info, [d.so for d in group], prims, len(group))

    def _count_discarded(self, group, streams, verts, so_counts, nin, gen=None, ninv=0) -> None:
        """The counts of draws whose primitives go no further than stream
        output (rasterizer_discard): nothing reaches the clipper."""
        for k, (d, s) in enumerate(zip(group, streams)):
            if not d.queries:
                continue
            ninst = d.info.instance_count
            made = int(gen[k]) if gen is not None else int(nin[k])
            self.sink.count(
                d.queries,
                verts.draw_counts(
                    k,
                    primitives_generated=made,
                    ia_vertices=s.n * ninst,
                    ia_primitives=int(nin[k]),
                    vs_invocations=s.uniq.size * ninst,
                    gs_invocations=int(nin[k]) * ninv,
                    gs_primitives=made if gen is not None else 0,
                    **_so_fields(so_counts, k),
                ),
            )

    # -- emit ------------------------------------------------------------------------

    def _emit(self, group: list[Draw], ts: TriangleSet) -> None:
        """Hand the pass's set-up primitives to the sink in submission order
        (draw after draw), with the draw of each."""
        wide = ts.prim_id.astype(np.int64)  # (an empty set comes back as int32)
        tag = wide >> 32
        ts.prim_id = (wide & 0xFFFFFFFF).astype(np.int32)
        if len(group) == 1:
            self.sink.emit(ts, group, None)
            return
        if ts.count == 0:
            return
        if not bool((tag[1:] >= tag[:-1]).all()):
            order = np.argsort(tag, kind="stable")
            ts = select_triangles(ts, order)
            tag = tag[order]
        self.sink.emit(ts, group, tag)


class _PassVertices:
    """The vertices of a pass: each draw's distinct vertices, instance after
    instance, draw after draw; and what the stages computed for them.

    Consecutive draws of one instance that read the same index stream (the
    same object: the same bytes and range) are handled as one *run*, with
    array operations over the run instead of one per draw -- a frame that
    draws one mesh many times costs the same few numpy calls whatever the
    number of draws.
    """

    def __init__(self, group: list[Draw], streams: list[_Stream]) -> None:
        self.group = group
        self.streams = streams
        # runs: (first draw, draws, stream) of consecutive single-instance
        # draws with one stream; an instanced draw is a run of its own
        runs: list[tuple[int, int, _Stream]] = []
        for k, (d, st) in enumerate(zip(group, streams)):
            if (
                runs
                and runs[-1][2] is st
                and d.info.instance_count == 1
                and group[runs[-1][0]].info.instance_count == 1
            ):
                runs[-1] = (runs[-1][0], runs[-1][1] + 1, st)
            else:
                runs.append((k, 1, st))
        self.runs = runs
        counts = np.empty(len(group), np.int64)
        vid_parts, iid_parts = [], []
        instanced = False
        for k0, m, st in runs:
            nu = st.uniq.size
            ninst = group[k0].info.instance_count
            counts[k0 : k0 + m] = nu * ninst
            if ninst == 1:
                vid_parts.append(st.uniq if m == 1 else np.tile(st.uniq, m))
                iid_parts.append(m * nu)
            else:
                instanced = True
                vid_parts.append(np.tile(st.uniq, ninst))
                iid_parts.append(np.repeat(np.arange(ninst, dtype=np.int64), nu))
        self.counts = counts
        self.base = np.zeros(len(group), np.int64)
        np.cumsum(counts[:-1], out=self.base[1:])
        self.n = int(counts.sum())
        self.vids = _cat(vid_parts)
        if not instanced:
            self.iids = np.zeros(self.n, np.int64)
        else:
            self.iids = _cat(
                [np.zeros(p, np.int64) if isinstance(p, int) else p for p in iid_parts]
            )
        self.res: Any = None
        self.pos: Any = None
        self.attrs: Any = None
        self.edges: np.ndarray | None = None  # each vertex's edge flag (EDGEFLAG output)
        self._lane_draw: np.ndarray | None = None

    def draw_counts(self, k: int, **fields: Any) -> DrawCounts:
        """Draw k's counts for its queries."""
        return DrawCounts(**fields)

    def layer_source(self) -> layers.LayerSource:
        """The vertex shader's LAYER / VIEWPORT_INDEX values (each primitive's
        first vertex transforms it: gallium/draw/layers.py)."""
        prog = self.group[0].program
        return layers.vertex_source(self.res.outputs, self.n, prog.layer_out, prog.viewport_out)

    def lane_draw(self) -> np.ndarray | None:
        """Each vertex's draw (None for a pass of one draw)."""
        if len(self.group) == 1:
            return None
        if self._lane_draw is None:
            self._lane_draw = np.repeat(np.arange(len(self.group), dtype=np.int64), self.counts)
        return self._lane_draw

    def per_draw(self) -> Any:
        """The draws' parameters per vertex (scalars for a pass of one draw)."""
        from types import SimpleNamespace

        infos = [d.info for d in self.group]

        def col(values: list[int]) -> Any:
            if len(values) == 1:
                return values[0]
            return np.repeat(np.array(values, np.int64), self.counts)

        return SimpleNamespace(
            bias=col([i.index_bias if i.index_size else 0 for i in infos]),
            base=col([i.index_bias if i.index_size else i.start for i in infos]),
            start_instance=col([i.start_instance for i in infos]),
            drawid=col([i.drawid for i in infos]),
        )

    def primitive_edges(self, streams: list[_Stream], name: str = "edges") -> np.ndarray:
        """A per-primitive array of the streams (their edge flags, or their
        stipple ``resets``) in :meth:`primitives`' order."""
        parts = []
        for k0, m, st in self.runs:
            ninst = self.group[k0].info.instance_count
            v = getattr(st, name)
            parts.append(np.tile(v, ninst * m) if ninst * m > 1 else v)
        return _cat(parts)

    def primitives(self, streams: list[_Stream]) -> tuple:
        """The draws' primitives, instance after instance, draw after draw, as
        vertex indices of the pass: (prims (P, k), primitive ids, draws, how
        many each draw has).  Primitive ids count each instance from 0."""
        group = self.group
        parts, id_parts, tag_parts = [], [], []
        counts = np.empty(len(group), np.int64)
        for k0, m, st in self.runs:
            local = st.local()  # (P, k) positions among the stream's distinct vertices
            pid = st.ids()
            ninst = group[k0].info.instance_count
            nu = st.uniq.size
            if ninst > 1:
                local = np.concatenate([i * nu + local for i in range(ninst)])
                pid = np.tile(pid, ninst)
            p = local.shape[0]
            counts[k0 : k0 + m] = p
            if m == 1:
                base = int(self.base[k0])
                parts.append(local + base if base else local)
                id_parts.append(pid)
            else:  # m draws of one stream: each one's vertices follow the last's
                offsets = self.base[k0] + nu * np.arange(m, dtype=np.int64)
                parts.append((local[None] + offsets[:, None, None]).reshape(m * p, -1))
                id_parts.append(np.tile(pid, m))
            tag_parts.append((k0, m, p))
        if len(group) == 1:
            return parts[0], id_parts[0], np.zeros(counts[0], np.int64), counts
        tags = np.repeat(np.arange(len(group), dtype=np.int64), counts)
        return _cat(parts), _cat(id_parts), tags, counts


class _TessVertices:
    """A tessellated pass's vertices: the evaluation shader's domain points,
    and the tessellator's primitives (what the stages after tessellation
    read in place of :class:`_PassVertices`)."""

    def __init__(
        self, out: Any, prog: VertexProgram, group: list[Draw], before: Any, patches: tuple
    ) -> None:
        self.out = out
        self.patches = patches  # (each patch's id in its instance, its draw)
        self.group = group
        self.n = out.n
        self.res = _Outputs(out.outputs)
        kernel = prog.tess.tes.kernel
        if prog.clamp_color and prog.gs is None:  # (the last vertex stage's colours)
            vs.clamp_colors(kernel, self.res)
        self.pos = vs.positions(kernel, self.res, self.n)
        polygons = group[0].kind == TRIANGLES  # (the extra slots serve polygons only)
        self.attrs = (
            vs.attributes(self.res, self.n, prog.slots if polygons else prog.link)
            if prog.gs is None
            else None
        )
        self.edges = None  # (no EDGEFLAG output: the tessellator's edges are all drawn)
        self._counts = np.bincount(out.tags, minlength=len(group))
        self.before = before

    def primitives(self, streams: list) -> tuple:
        out = self.out
        return out.prims, out.prim_ids, out.tags, self._counts

    def layer_source(self) -> layers.LayerSource:
        """The evaluation shader's LAYER / VIEWPORT_INDEX values, each domain
        point transformed as the draw module walks them (gallium/draw/layers.py)."""
        prog = self.group[0].program
        out = self.out
        lead = None
        if prog.viewport_out is not None:
            per = {"points": 1, "lines": 2}.get(prog.tess.output(), 3)
            lead = layers.tess_leads(out.point_patch, *self.patches, self.group, per)
        return layers.vertex_source(out.outputs, self.n, prog.layer_out, prog.viewport_out, lead)

    def primitive_edges(self, streams: list, name: str = "edges") -> np.ndarray:
        """Every edge of a tessellated triangle is a boundary edge (each starts
        its polygon's stipple count anew, as the draw module's triangles do);
        each tessellated line starts the line stipple anew."""
        from .assemble import edge_flags

        if name == "resets":
            return np.ones(len(self.out.prims), bool)
        one = edge_flags(Prim.TRIANGLES, 3, np.zeros(0, np.int64), False)
        return np.tile(one, len(self.out.prims))

    def draw_counts(self, k: int, **fields: Any) -> DrawCounts:
        if self.group[0].program.gs is None:  # the tessellator's primitives
            fields["primitives_generated"] = int(self._counts[k])
        fields["ia_primitives"] = int(self.out.patches_by_draw[k])  # (patches read)
        fields["hs_invocations"] = (
            int(self.out.patches_by_draw[k]) if self.group[0].program.tess.tcs is not None else 0
        )
        fields["ds_invocations"] = int(self.out.points_by_draw[k])
        return DrawCounts(**fields)


@dataclass
class _Outputs:
    """A kernel result's outputs (what the stages read of a KernelResult)."""

    outputs: dict


def _fetch(group: list[Draw], verts: _PassVertices) -> list:
    """Vertex fetch for a pass: one fetch per distinct set of vertex buffers
    (draws bind the same set object while their bindings are unchanged)."""
    elements = list(group[0].program.elements)
    if len(group) == 1 or all(d.buffers is group[0].buffers for d in group):
        infos = [d.info for d in group]
        if len(group) == 1 or all(i.start_instance == infos[0].start_instance for i in infos):
            start_instance: Any = infos[0].start_instance
        else:
            start_instance = np.repeat(
                np.array([i.start_instance for i in infos], np.int64), verts.counts
            )
        return fetch_attributes(elements, group[0].buffers, verts.vids, verts.iids, start_instance)
    # several sets: fetch each set's vertices, then put them in pass order
    sets: dict[int, list[int]] = {}
    for k, d in enumerate(group):
        sets.setdefault(id(d.buffers), []).append(k)
    lane_draw = verts.lane_draw()
    out: list[list[Any]] | None = None
    for ks in sets.values():
        sel = np.flatnonzero(np.isin(lane_draw, ks))
        start_instance = np.array([group[k].info.start_instance for k in range(len(group))])[
            lane_draw[sel]
        ]
        part = fetch_attributes(
            elements, group[ks[0]].buffers, verts.vids[sel], verts.iids[sel], start_instance
        )
        if out is None:
            out = [[np.empty(verts.n, c.dtype) for c in chans] for chans in part]
        for e, chans in enumerate(part):
            for c, values in enumerate(chans):
                out[e][c][sel] = values
    return out or []


def _regions(group: list[Draw], draw_of: np.ndarray) -> Any:
    """The draw region of each triangle (one tuple when the draws share it)."""
    r0 = group[0].region
    if len(group) == 1 or all(d.region == r0 for d in group):
        return r0
    table = np.array([d.region for d in group], np.int64)
    rows = table[draw_of]
    return rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]


def _memory_resources(prog: VertexProgram) -> list:
    """The resources a program's vertex-side stages load from or store to."""
    out: list = []
    tess = prog.tess
    for mem in (
        prog.vs_memory,
        prog.gs_memory,
        tess.tcs_memory if tess is not None else None,
        tess.tes_memory if tess is not None else None,
    ):
        if mem is not None:
            out += mem.resources
    return out


def _so_fields(so_counts: Any, k: int) -> dict:
    """Draw k's stream output counts as DrawCounts fields."""
    if so_counts is None:
        return {}
    generated, written = so_counts
    return {"so_generated": tuple(generated[k].tolist()), "so_written": tuple(written[k].tolist())}


def _strip_primitives(kind: str, n: int, cuts: np.ndarray, flatshade_first: bool) -> np.ndarray:
    """A geometry shader's output strips as independent primitives (P, k)."""
    from . import lines as ln

    if kind == "TRIANGLE_STRIP":
        return assemble.triangles(Prim.TRIANGLE_STRIP, n, cuts, flatshade_first)[0]
    if kind == "LINE_STRIP":
        return ln.segments(Prim.LINE_STRIP, n, cuts)[0]
    return np.arange(n, dtype=np.int64)[:, None]


def _channels(outputs: dict) -> dict:
    """(N, 4) output rows as four channels (the vertex shader's layout)."""
    return {reg: [rows[:, c] for c in range(4)] for reg, rows in outputs.items()}


def _reads(draw: Draw, storages: tuple) -> bool:
    """Whether a draw's vertex stage reads any of ``storages`` (stream
    output buffers a pass writes: such a draw starts a pass of its own)."""
    mine = [s for s in storages if s is not None]
    if not mine:
        return False
    reads = [b.data for b in draw.buffers.values()]
    if draw.index is not None:
        reads.append(draw.index)
    reads += [c for c in (*draw.consts, *draw.gs_consts) if c is not None]
    return any(isinstance(r, np.ndarray) and np.may_share_memory(r, s) for r in reads for s in mine)


def _cat(parts: list) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _no_yield() -> None:
    """The default yield point: nothing to hand over."""
