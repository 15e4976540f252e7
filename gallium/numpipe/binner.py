"""The draw pipeline's sink: set-up primitives into the context's scene.

Theory of operation
-------------------
A draw is queued with a :class:`FragmentSnapshot`: references to the
fragment-side state of its call -- the fragment stage's constant buffers on
a :class:`FragmentBase` holding the rest (fragment shader, textures, blend,
depth/stencil/alpha, stencil reference, blend colour, sample mask, window
rectangles, the multisample options (min samples, the rasterizer's
multisample and pixel-centre flags), the occlusion counters and statistics
queries active then).  The context makes a new snapshot whenever any of that
changes and hands the same object to every draw until then; it interns equal
bases, so a frame that switches between a few states has a few bases (and a
constant set per draw makes only a small snapshot a draw).

When the draw pipeline (gallium/draw/pipeline.py) has set up a pass, it
hands the pass's triangles, each with its draw, to :meth:`Binner.emit`, in
submission order.  The binner turns each snapshot into the rasterizer's
:class:`~workers.fragment.FragmentState` -- once per snapshot and scene, as a
copy of its base's state with the snapshot's constants after the first --
and appends the triangles to the context's current scene (one command for
draws with different states: a multi-state command), which bins them by band
when it is flushed.  Everything here runs on the thread that runs
the context's queue.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..draw.primitives import select_triangles
from ..pipe.enums import QueryType
from .memory import writes_memory

_COUNTING = (
    QueryType.PRIMITIVES_GENERATED,
    QueryType.PIPELINE_STATISTICS,
    QueryType.PRIMITIVES_EMITTED,
    QueryType.SO_STATISTICS,
    QueryType.SO_OVERFLOW_PREDICATE,
    QueryType.SO_OVERFLOW_ANY_PREDICATE,
)
_SO_QUERIES = frozenset(_COUNTING[2:])


class FragmentBase:
    """The fragment side of a draw at its call but its constants: shader,
    textures, blend, depth/stencil/alpha, stencil reference, blend colour,
    sample mask, window rectangles, the occlusion counters and statistics
    queries active then."""

    __slots__ = (
        "blend",
        "blend_color",
        "counters",
        "dsa",
        "fs",
        "fs_inputs",
        "memory",
        "raster",
        "sample_mask",
        "sample_opts",
        "stat_queries",
        "stencil_ref",
        "textures",
        "window",
    )

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


class FragmentSnapshot:
    """The fragment side of a draw at its call (never changed once made): a
    :class:`FragmentBase` and the fragment stage's constant buffers, as
    ``(resource or None, bytes)`` per slot."""

    __slots__ = ("_epoch", "_scene", "_state", "base", "consts", "volatile")

    def __init__(self, base: FragmentBase, consts: tuple) -> None:
        self.base = base
        self.consts = consts
        # constants read from a buffer resource: their bytes are copied into
        # the state when it is built, so a state built in one run of the
        # queue is not reused in a later one (the buffer may have changed)
        self.volatile = any(res is not None for res, _ in consts)
        self._epoch = -1
        self._scene = -1  # the serial of the scene the state was built for
        self._state = None

    @property
    def sample_mask(self) -> int:
        return self.base.sample_mask

    @property
    def stat_queries(self) -> tuple:
        return self.base.stat_queries

    @property
    def window(self) -> tuple:
        return self.base.window


class Binner:
    """Builds each snapshot's fragment state and adds primitives to the scene."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.epoch = 0  # runs of the queue (see FragmentSnapshot.volatile)
        self._templates: dict[tuple, Any] = {}  # this scene's states, by all but constants
        self._templates_scene = -1

    def emit(self, ts: Any, draws: list, draw_of: np.ndarray | None) -> None:
        """Add a pass's triangles (``draw_of[t]``: triangle t's draw) to the scene."""
        ctx = self.ctx
        ctx.stats["triangles"] += ts.count
        if ts.count == 0:
            return
        if ts.layer is not None:  # (a LAYER output: gallium/draw/layers.py)
            layer = np.minimum(ts.layer, ctx._current_scene().max_layer)
            if layer.any():
                self._emit_layers(ts, draws, draw_of, layer)
                return
        self._emit_layer(ts, draws, draw_of, 0)

    def _emit_layers(self, ts: Any, draws: list, draw_of: Any, layer: np.ndarray) -> None:
        """``emit`` for triangles going to several layers (``layer``: each
        one's, clamped to the framebuffer's last, as llvmpipe clamps it):
        layer by layer, each in submission order -- primitives on different
        layers never touch the same pixels."""
        for lay in np.unique(layer).tolist():
            idx = np.flatnonzero(layer == lay)
            part = ts if idx.size == ts.count else select_triangles(ts, idx)
            self._emit_layer(part, draws, None if draw_of is None else draw_of[idx], lay)

    def _emit_layer(self, ts: Any, draws: list, draw_of: Any, layer: int) -> None:
        """Add triangles of ``draws`` going to ``layer`` to the scene."""
        frags = [d.fragment for d in draws]
        f0 = frags[0]
        if ts.viewport is not None and any(d.depth_ranges for d in draws):
            # (fragments clamp to their primitive's viewport's depth range)
            ts.depth_range = _depth_ranges(ts, draws, draw_of)
        if any(f.window != (False, ()) for f in frags):
            self._emit_windowed(ts, frags, draw_of, layer)
            return
        if draw_of is None or all(f is f0 for f in frags):
            self._add(ts, [f0], None, len(draws), layer=layer)
            return
        # each distinct snapshot once, in order of first use
        index: dict[int, int] = {}
        uniq: list[FragmentSnapshot] = []
        per_draw = []
        for f in frags:
            k = index.get(id(f))
            if k is None:
                k = index[id(f)] = len(uniq)
                uniq.append(f)
            per_draw.append(k)
        self._add(ts, uniq, np.array(per_draw, np.int32)[draw_of], len(draws), layer=layer)

    def _emit_windowed(self, ts: Any, frags: list, draw_of: Any, layer: int = 0) -> None:
        """``emit`` for draws some of which have window rectangles: run by run
        of draws sharing a snapshot, in order, each clipped to its window
        regions (window.py).  A region's triangles never share a command with
        another region's: the rasterizer pairs neighbouring triangles."""
        from .window import clip_to, regions

        if draw_of is None:
            runs = [(frags[0], ts, len(frags))]
        else:
            tri_frag = np.array([id(f) for f in frags], np.int64)[draw_of]
            cuts = (np.flatnonzero(tri_frag[1:] != tri_frag[:-1]) + 1).tolist()
            runs = []
            for a, b in zip([0, *cuts], [*cuts, ts.count]):
                part = select_triangles(ts, np.arange(a, b))
                runs.append((frags[int(draw_of[a])], part, np.unique(draw_of[a:b]).size))
        scene = self.ctx._current_scene()
        for f, part, ndraws in runs:
            if f.window == (False, ()):
                self._add(part, [f], None, ndraws, layer=layer)
                continue
            include, rects = f.window
            pieces = [clip_to(part, r) for r in regions(include, rects, scene.width, scene.height)]
            pieces = [p for p in pieces if p.count]
            for i, piece in enumerate(pieces):
                self._add(piece, [f], None, ndraws if i == 0 else 1, join=i == 0, layer=layer)

    def _add(
        self,
        ts: Any,
        frags: list,
        tri_frag: np.ndarray | None,
        ndraws: int,
        join: bool = True,
        layer: int = 0,
    ) -> None:
        """Add ``ndraws`` draws' triangles, shaded with ``frags[tri_frag[t]]``,
        to the scene's ``layer`` (joining the previous command only when ``join``)."""
        ctx = self.ctx
        scene = ctx._current_scene()
        live = (1 << scene.samples) - 1  # the framebuffer's samples
        dropped = [k for k, f in enumerate(frags) if (f.sample_mask & live) == 0]
        if dropped:  # a zero sample mask: those draws leave no fragment
            if tri_frag is None:
                return
            keep = np.flatnonzero(~np.isin(tri_frag, dropped))
            if keep.size == 0:
                return
            ts, tri_frag = select_triangles(ts, keep), tri_frag[keep]
        for k, f in enumerate(frags):
            if f.stat_queries:
                # every covered fragment invokes the shader (numpipe skips the
                # work for fragments an early depth test rejects, but counts them)
                from workers.raster import covered_pixels

                mine = (
                    ts if tri_frag is None else select_triangles(ts, np.flatnonzero(tri_frag == k))
                )
                n = covered_pixels(mine)
                for q in f.stat_queries:
                    q.stats.ps_invocations += n
        states = [self._state_of(f, scene) for f in frags]
        if ts.smooth:
            states = [_smooth_state(st, ts) for st in states]
        if ts.stipple is not None and any(f.base.raster[2] is not None for f in frags):
            states, tri_frag = _stipple_states(states, frags, ts, tri_frag)
        if ts.depth_range is not None:
            states, tri_frag = _depth_range_states(states, ts, tri_frag)
        before = len(scene.commands)
        if tri_frag is None or len(states) == 1:
            scene.add_draw(states[0], ts, join, layer)
        else:
            scene.add_draws(states, ts, tri_frag, layer)
        made = len(scene.commands) - before
        ctx.stats["draw_commands"] += made
        ctx.stats["merged_draws"] += ndraws - made

    def _state_of(self, frag: FragmentSnapshot, scene: Any) -> Any:
        if frag._scene == scene.seq and (not frag.volatile or frag._epoch == self.epoch):
            return frag._state
        return self._state(frag, scene)

    def accessing(self, resources: list) -> None:
        """A pass is about to write or read ``resources`` (stream output,
        shader memory): rasterizer work that uses them (the current scene,
        scenes in flight) goes first."""
        self.ctx._before_pipeline_write(resources)

    def count(self, queries: tuple, counts: Any) -> None:
        so_gen, so_written = counts.so_generated, counts.so_written
        for q in queries:
            if q.type in _SO_QUERIES:
                if so_gen is not None:
                    for st in range(4):
                        q.so_generated[st] += so_gen[st]
                        q.so_written[st] += so_written[st]
                continue
            if q.type == QueryType.PRIMITIVES_GENERATED:
                # (with stream output bound, the primitives of each vertex
                # stream as stream output decomposed them, as llvmpipe counts)
                if so_gen is not None:
                    q.primitives += so_gen[q.index] if q.index < 4 else 0
                elif q.index == 0:
                    q.primitives += counts.primitives_generated
            elif q.type == QueryType.PIPELINE_STATISTICS:
                st = q.stats
                st.ia_vertices += counts.ia_vertices
                st.ia_primitives += counts.ia_primitives
                st.vs_invocations += counts.vs_invocations
                st.gs_invocations += counts.gs_invocations
                st.gs_primitives += counts.gs_primitives
                st.c_invocations += counts.c_invocations
                st.c_primitives += counts.c_primitives
                st.hs_invocations += counts.hs_invocations
                st.ds_invocations += counts.ds_invocations

    def end_scene(self) -> None:
        """The scene was submitted: drop its templates (they hold its shaders,
        textures and queries, which must not outlive it here)."""
        self._templates.clear()
        self._templates_scene = -1

    def _state(self, frag: FragmentSnapshot, scene: Any) -> Any:
        """The FragmentState of ``frag`` for ``scene`` (made once per scene):
        a copy of the state of the first snapshot alike but for constants
        and counters (a colour uniform set per draw makes one snapshot a
        draw), with this one's."""
        if self._templates_scene != scene.seq:
            self._templates.clear()
            self._templates_scene = scene.seq
        base = frag.base
        got = self._templates.get(id(base))
        # (the template's state holds the base: its id stays its own)
        if got is None:
            got = self._templates[id(base)] = (base, self._build_state(frag, scene))
            st = got[1]
        else:
            st = object.__new__(type(got[1]))
            st.__dict__.update(got[1].__dict__)
            st.__dict__.pop("_variants", None)  # (made with the template's constants)
            st.consts = _state_consts(frag)
            st.stats = {}
        # (the serial, not the scene: a snapshot outlives its scenes)
        frag._state, frag._scene, frag._epoch = st, scene.seq, self.epoch
        return st

    def _build_state(self, snap: FragmentSnapshot, scene: Any) -> Any:
        from workers.fragment import FragmentState, passthrough_slots, texpass_info

        frag = snap.base

        fs = frag.fs
        kern = fs.kernel
        nc = len(scene.cbufs)
        all_cbufs = fs.shader.get_property("FS_COLOR0_WRITES_ALL_CBUFS", 0)
        color_outputs: list[int | None] = []
        for i in range(nc):
            color_outputs.append(kern.output_index("COLOR", 0 if all_cbufs else i))
        depth_out = kern.output_index("POSITION")
        stencil_out = kern.output_index("STENCIL")
        consts = _state_consts(snap)
        textures = frag.textures
        if textures is not None:
            scene.resources.update(textures.resources())
        memory = frag.memory
        if memory is not None:
            scene.resources.update(memory.resources)
        blend = frag.blend
        origin = fs.shader.get_property("FS_COORD_ORIGIN", "UPPER_LEFT")
        center = fs.shader.get_property("FS_COORD_PIXEL_CENTER", "HALF_INTEGER")
        fs_inputs = frag.fs_inputs
        depth_clamp, clamp_color, _ = frag.raster  # (the stipple: _stipple_states)
        logicop = int(blend.state.logicop_func) if blend.state.logicop_enable else None
        # (clamped colours are the shader's outputs clamped, a logic op reads
        # the destination: no plane shortcuts)
        plain = memory is None and not clamp_color and logicop is None
        st = FragmentState(
            kernel=kern,
            fs_inputs=fs_inputs,
            consts=consts,
            textures=textures,
            color_outputs=color_outputs,
            depth_output=depth_out,
            stencil_output=stencil_out,
            blend=list(blend.rt[:nc]),
            blend_enabled=any(rt.blend_enable for rt in blend.rt[:nc]),
            blend_color=frag.blend_color,
            dsa=frag.dsa.state,
            stencil_ref=frag.stencil_ref,
            coord_lower_left=origin == "LOWER_LEFT",
            coord_integer_center=center == "INTEGER",
            fb_height=scene.height,
            counters=frag.counters,
            needs_quads=needs_quads(fs.shader),
            # (clamped colours are the shader's outputs clamped: no plane shortcuts)
            passthrough=passthrough_slots(kern, fs_inputs) if plain else None,
            texpass=texpass_info(kern, fs_inputs) if plain else None,
            memory=memory,
            side_effects=memory is not None and writes_memory(fs.shader),
            depth_clamp=depth_clamp,
            clamp_color=clamp_color,
            logicop=logicop,
        )
        dsa = frag.dsa.state
        ms = st.msaa = sample_state(frag, scene)
        if ms is not None and (
            ms.alpha_to_coverage or ms.alpha_to_one or ms.mask_output is not None
            or ms.centroid_slots
        ):  # fmt: skip
            # fragments are dropped or changed after shading, or inputs taken
            # off the set-up planes: the general paths
            st.passthrough = st.texpass = None
        tests = scene.zsbuf is not None and (dsa.depth.enabled or dsa.stencil[0].enabled)
        if fs.shader.get_property("FS_EARLY_DEPTH_STENCIL", 0) and tests:
            # the program asks for the tests before it runs (GL's early_fragment_tests)
            st.early_tests = st.early_z = True
        else:
            st.early_z = bool(
                scene.zsbuf is not None
                and dsa.depth.enabled
                and not dsa.stencil[0].enabled
                and not dsa.alpha.enabled
                and depth_out is None
                and stencil_out is None
                and not kern.uses_kill
                and not kern.uses_fbfetch
                and not st.side_effects  # (every covered fragment runs the shader)
                and (
                    st.msaa is None
                    # (alpha-to-one too: the early paths write colours as shaded)
                    or not (
                        st.msaa.alpha_to_coverage
                        or st.msaa.alpha_to_one
                        or st.msaa.mask_output is not None
                    )
                )
            )
        if blend.uses_src1:
            st.src1_output = kern.output_index("COLOR", 1)  # type: ignore[attr-defined]
        return st


def _smooth_state(st: Any, ts: Any) -> Any:
    """The state of smooth points or lines (gallium/draw/smooth.py): the
    draw's, the coverage coordinate (the set's last input slot) read into one
    more IN register and the colour alphas multiplied by the coverage
    (workers/raster.py _smooth_coverage); made once per state."""
    cache = st.__dict__.setdefault("_variants", {})
    var = cache.get(ts.smooth)
    if var is None:
        regs = [reg for reg, _, _ in st.fs_inputs] + list(st.kernel.input_decls)
        reg = max(regs, default=-1) + 1
        var = object.__new__(type(st))
        var.__dict__.update(st.__dict__)
        var.__dict__.pop("_variants", None)
        var.fs_inputs = [*st.fs_inputs, (reg, "attr", ts.inputs.shape[1] - 1)]
        var.smooth = (ts.smooth, reg)
        var.early_z = False  # (a point's kill; the alphas change)
        var.passthrough = var.texpass = None
        var.stats = {}
        cache[ts.smooth] = var
    return var


def _depth_ranges(ts: Any, draws: list, draw_of: Any) -> np.ndarray:
    """Each triangle's depth clamp range: its draw's range of its viewport
    ((M, 2); NaN where its draw does not clamp depth)."""
    table = np.full((len(draws), 16, 2), np.nan)
    for k, d in enumerate(draws):
        if d.depth_ranges:
            table[k] = d.depth_ranges
    return table[0 if draw_of is None else draw_of, ts.viewport]


def _depth_range_states(states: list, ts: Any, tri_frag: Any) -> tuple:
    """The states of triangles clamping depth to a viewport's range other than
    their state's (viewport 0's): copies with that range (llvmpipe clamps to
    the primitive's viewport: lp_state_fs.c lp_build_depth_clamp).  Returns
    (the states in use, each triangle's state or None for one state)."""
    tf = np.zeros(ts.count, np.int32) if tri_frag is None else tri_frag
    ranges = ts.depth_range
    keyed = ~np.isnan(ranges[:, 0])
    variants = list(states)
    out = tf.copy()
    if keyed.any():
        rows = np.unique(np.column_stack([tf[keyed], ranges[keyed]]), axis=0)
        for k, lo, hi in rows.tolist():
            st = states[int(k)]
            if (lo, hi) == tuple(st.depth_clamp):
                continue
            cache = st.__dict__.setdefault("_variants", {})
            var = cache.get(("depth", lo, hi))
            if var is None:  # (made once per state and range)
                var = object.__new__(type(st))
                var.__dict__.update(st.__dict__)
                var.__dict__.pop("_variants", None)
                var.depth_clamp = (lo, hi)
                var.stats = {}
                cache[("depth", lo, hi)] = var
            mine = keyed & (tf == int(k)) & (ranges[:, 0] == lo) & (ranges[:, 1] == hi)
            out = np.where(mine, len(variants), out).astype(np.int32)
            variants.append(var)
    used = np.unique(out)
    if used.size == 1:
        return [variants[int(used[0])]], None
    index = np.full(len(variants), -1, np.int32)
    index[used] = np.arange(used.size, dtype=np.int32)
    return [variants[int(u)] for u in used], index[out]


def _stipple_states(states: list, frags: list, ts: Any, tri_frag: Any) -> tuple:
    """The states of triangles drawn with the polygon stipple (``ts.stipple``,
    gallium/draw/polygon.py) are their draw's state with the stipple's rows:
    (the states in use, each triangle's state or None for one state)."""
    tf = np.zeros(ts.count, np.int32) if tri_frag is None else tri_frag
    variants = list(states)
    remap = np.arange(len(states), dtype=np.int32)
    for k, f in enumerate(frags):
        rows = f.base.raster[2]
        if rows is None:
            continue
        st = states[k]
        cache = st.__dict__.setdefault("_variants", {})
        var = cache.get("stipple")
        if var is None:  # (made once per state: a copy with the rows, and KILL's rules)
            var = object.__new__(type(st))
            var.__dict__.update(st.__dict__)
            var.__dict__.pop("_variants", None)
            var.stipple = np.array(rows, np.uint32)
            var.early_z = False
            var.passthrough = var.texpass = None
            var.stats = {}
            cache["stipple"] = var
        remap = np.append(remap, len(variants)).astype(np.int32)
        tf = np.where(ts.stipple & (tf == k), len(variants), tf).astype(np.int32)
        variants.append(var)
    used = np.unique(tf)
    if used.size == 1:
        return [variants[int(used[0])]], None
    index = np.full(len(variants), -1, np.int32)
    index[used] = np.arange(used.size, dtype=np.int32)
    return [variants[int(u)] for u in used], index[tf]


def _state_consts(frag: FragmentSnapshot) -> list:
    """The snapshot's constant buffers for the rasterizer.  User constants were
    copied when bound; a buffer's are copied now (they are small): the
    rasterizer reads them after the pass, and a later write to the buffer
    must not reach this draw."""
    return [None if c is None else (c.copy() if res is not None else c) for res, c in frag.consts]


def sample_state(frag: FragmentBase, scene: Any) -> Any:
    """The draw's multisample state (workers/msaa.py), or None when it is
    the single-sample default."""
    from workers.msaa import SampleState

    blend = frag.blend.state
    samples = scene.samples
    if samples == 1 and not (blend.alpha_to_coverage or blend.alpha_to_one):
        return None
    min_samples, multisample, half_pixel_center, force = frag.sample_opts
    kern = frag.fs.kernel
    svs = set(kern.system_value_decls.values())
    decls = kern.input_decls
    # force_persample_interp: every input at the sample (and so shaded per sample)
    force = force and samples > 1 and multisample
    sample_slots = frozenset(
        slot
        for reg, kind, slot in frag.fs_inputs
        if kind == "attr"
        and decls.get(reg) is not None
        and (force or decls[reg].location == "SAMPLE")
    )
    per_sample = bool(
        samples > 1
        and multisample
        and (min_samples > 1 or svs & {"SAMPLEID", "SAMPLEPOS"} or sample_slots)
    )
    centroid_slots = frozenset(
        slot
        for reg, kind, slot in frag.fs_inputs
        if kind == "attr"
        and decls.get(reg) is not None
        and decls[reg].location == "CENTROID"
        and decls[reg].interpolate != "CONSTANT"
        and samples > 1
        and multisample
        and not force
    )
    return SampleState(
        samples=samples,
        multisample=multisample and samples > 1,
        mask=frag.sample_mask & ((1 << samples) - 1),
        per_sample=per_sample,
        alpha_to_coverage=bool(blend.alpha_to_coverage),
        alpha_to_one=bool(blend.alpha_to_one),
        pixel_offset=0.5 if half_pixel_center else 0.0,
        mask_output=kern.output_index("SAMPLEMASK"),
        sample_slots=sample_slots,
        centroid_slots=centroid_slots,
    )


def counting_queries(active: list) -> tuple:
    """The active queries that count primitives (the draw pipeline adds to them)."""
    return tuple(q for q in active if q.type in _COUNTING)


# Opcodes that make a fragment shader look at its neighbours in the 2x2 quad.
_QUAD_OPCODES = frozenset(
    {"DDX", "DDY", "DDX_FINE", "DDY_FINE", "TEX", "TXB", "TXP", "TEX2", "TXB2", "LODQ"}
    | {"SAMPLE", "SAMPLE_B", "SAMPLE_C", "INTERP_OFFSET", "INTERP_SAMPLE", "INTERP_CENTROID"}
)


def needs_quads(shader: Any) -> bool:
    return any(inst.opcode in _QUAD_OPCODES for inst in shader.instructions)
