"""The direct numpipe context: Gallium's ``pipe_context`` on the software rasterizer.

Theory of operation
-------------------
A :class:`NumpipeContext` is used by one thread at a time (the application's
thread when it is used directly, or the driver thread of a
``ThreadedContext``).  State calls store validated state.  ``draw_vbo``
validates a draw and queues it, with references to the state of its call,
in the context's :class:`~gallium.draw.pipeline.DrawPipeline`; the queue runs
(index reading, vertex fetch, vertex shader, primitive assembly, clipping,
viewport transform, setup: many draws per pass) when its results are needed
or it is full, and its set-up triangles go, with each draw's fragment state,
into the current :class:`~gallium.numpipe.scene.Scene`
(gallium/numpipe/binner.py).  ``clear`` runs the queue and records a clear
command.  ``flush`` runs the queue and hands the scene to the screen's worker
pool, chained after the previous scene, and returns the scene's fence;
rasterization of that scene overlaps with the recording of the next one.

Synchronisation: ``transfer_map``, ``buffer_subdata``/``texture_subdata``,
copies and query results first run the queue when queued draws use the
resource (or count into the query), then wait for the scenes that use it
(flushing the current scene first when it uses it), unless the usage flags
say not to.  Creating
CSOs, shaders, surfaces and views touches no context state and is safe from
any thread while the context is in use (the threaded context relies on this).

Errors: bad arguments raise at once, naming the argument.  An exception on a
worker is kept with its scene and raised at the context's next sync point
(flush, fence wait, map, query result); it also marks a device reset
(``get_device_reset_status``) and fires the reset callback.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workers.job import SceneJob

from ..draw.fetch import BoundVertexBuffer
from ..draw.indirect import indirect_commands
from ..draw.pipeline import GEOMETRY, Draw, DrawPipeline, VertexProgram, kind_of
from ..draw.viewport import depth_range
from ..draw.vs import link as link_outputs
from ..draw.vs import sprite_slots
from ..pipe import checks
from ..pipe.checks import user_bytes as _user_bytes
from ..pipe.enums import (
    PIPE_MAX_VIEWPORTS,
    PIPE_TIMEOUT_INFINITE,
    Barrier,
    Bind,
    Clear,
    Format,
    QueryType,
    RenderCond,
    ResetStatus,
    ShaderType,
    TextureTarget,
    Transfer,
)
from ..pipe.errors import (
    ContextDestroyedError,
    UnsupportedError,
    add_origin_note,
    bad_type,
    bad_value,
    check_int,
)
from ..pipe.fence import Fence
from ..pipe.state import (
    BlendColor,
    BlendState,
    Box,
    ClipState,
    ComputeState,
    ConstantBuffer,
    DepthStencilAlphaState,
    DrawInfo,
    FramebufferState,
    PolyStipple,
    RasterizerState,
    SamplerState,
    SamplerViewTemplate,
    ScissorState,
    ShaderState,
    StencilRef,
    SurfaceTemplate,
    VertexBuffer,
    ViewportState,
)
from ..util.format import pack_rgba, try_describe
from . import objects
from .binner import Binner, FragmentBase, FragmentSnapshot, counting_queries
from .compute import ComputeCSO
from .memory import StageMemory
from .objects import (
    BlendCSO,
    DepthStencilAlphaCSO,
    Query,
    RasterizerCSO,
    SamplerCSO,
    SamplerView,
    ShaderCSO,
    Surface,
    TransferObject,
    VertexElementsCSO,
)
from .resource import Resource
from .scene import (
    ClearCmd,
    OcclusionCounter,
    Scene,
    make_color_target,
    make_depth_target,
)
from .screen import MAX_DRAW_VERTICES, MAX_LINE_WIDTH, MAX_POINT_WIDTH, MAX_TEXTURE_SIZE  # noqa: F401

F32 = np.float32

_INTEGER_SV = frozenset(
    {
        "VERTEXID",
        "INSTANCEID",
        "VERTEXID_NOBASE",
        "BASEVERTEX",
        "BASEINSTANCE",
        "DRAWID",
        "PRIM_ID",
        "INVOCATIONID",
        "SAMPLEID",
        "THREAD_ID",
        "BLOCK_ID",
        "BLOCK_SIZE",
        "GRID_SIZE",
    }
)


# PIPE_CLEAR_* bits as plain ints (a Flag's & and | build enum members: ~1-2 us each)
_CLEAR_COLOR0 = int(Clear.COLOR0)
_CLEAR_DEPTH = int(Clear.DEPTH)
_CLEAR_STENCIL = int(Clear.STENCIL)


_DEPTH_WORDS: dict[tuple, float | int] = {}


def _clear_depth_word(layout: Any, depth: float) -> float | int:
    """The stored depth value a clear to ``depth`` writes.  Frames clear to
    one depth, so it is cached per layout and float32 bit pattern (-0.0 and
    0.0 differ in a float depth buffer)."""
    z = np.float32(depth)
    key = (layout, z.tobytes())
    word = _DEPTH_WORDS.get(key)
    if word is None:
        from ..util.format import depth_to_word

        w = depth_to_word(layout, z)
        word = float(w) if layout.z_float else int(w)
        if len(_DEPTH_WORDS) >= 256:
            _DEPTH_WORDS.clear()
        _DEPTH_WORDS[key] = word
    return word


def polygon_program(rast: RasterizerState, last: Any, link: list, pipeline: bool, zs: Any) -> dict:
    """The polygon fields of a VertexProgram (gallium/draw/pipeline.py) for
    rasterizer state ``rast``, the last vertex stage's kernel ``last``, the
    linkage ``link`` and the bound depth format ``zs`` (a FormatDesc or
    None): depth offset, two-sided colour, fill modes, depth clipping."""
    from ..draw.polygon import polygon_offset
    from ..pipe.enums import PolygonMode

    extra: list = []
    twoside = None
    if rast.light_twoside:
        front, back = [], []
        for slot, (reg, mode) in enumerate(link):
            for index in (0, 1):
                if reg is not None and reg == last.output_index("COLOR", index):
                    breg = last.output_index("BCOLOR", index)
                    if breg is not None:
                        front.append(slot)
                        back.append(len(link) + len(extra))
                        extra.append((breg, mode))
        twoside = (tuple(front), tuple(back)) if front else None
    unfilled = rast.fill_front != PolygonMode.FILL or rast.fill_back != PolygonMode.FILL
    psize_slot = None
    if unfilled and rast.point_size_per_vertex and last.output_index("PSIZE") is not None:
        psize_slot = len(link) + len(extra)
        extra.append((last.output_index("PSIZE"), "perspective"))
    near, far, _ = depth_clip_modes(rast)
    return {
        "offset": polygon_offset(rast, zs),
        "pipeline": pipeline,
        "unfilled": unfilled,
        "twoside": twoside,
        "extra": tuple(extra),
        "psize_slot": psize_slot,
        "edgeflag": last.output_index("EDGEFLAG"),
        "clip_near": near,
        "clip_far": far,
        "clamp_color": bool(rast.clamp_vertex_color),
        "line_stipple": (
            (
                int(rast.line_stipple_factor) + 1,
                int(rast.line_stipple_pattern),
                bool(rast.line_smooth or rast.multisample),
            )
            if rast.line_stipple_enable
            else None
        ),
        # (draw_pipe_validate.c: the aa stages only without multisample)
        "point_smooth": bool(rast.point_smooth and not rast.multisample),
        "line_smooth": bool(rast.line_smooth and not rast.multisample),
        "smooth_psize": bool(rast.point_size_per_vertex) and last.output_index("PSIZE") is not None,
    }


def _viewport_scissor(vp: ViewportState, region: tuple) -> tuple:
    """llvmpipe's "fake viewport scissor" (lp_setup.c): while the rasterizer
    state has point_size_per_vertex (which llvmpipe takes for its setup's
    point_tri_clip), every primitive is also scissored to viewport 0's
    rectangle, rounded as lp_setup_set_viewports rounds it (float32, then
    truncated).  An empty intersection is the empty region."""
    sx, sy = F32(vp.scale[0]), F32(abs(F32(vp.scale[1])))
    x0 = F32(F32(vp.translate[0]) - sx)
    y0 = F32(F32(vp.translate[1]) - sy)
    with np.errstate(invalid="ignore", over="ignore"):
        box = [
            F32(x0 + F32(0.499)),
            F32(F32(F32(sx * F32(2.0)) + x0) - F32(0.501)),
            F32(y0 + F32(0.499)),
            F32(F32(F32(sy * F32(2.0)) + y0) - F32(0.501)),
        ]
    if not all(np.isfinite(v) and abs(v) < 2**31 for v in box):
        return region
    vx0, vx1, vy0, vy1 = (int(v) for v in box)  # (C's truncation)
    rx0, ry0, rx1, ry1 = region
    out = (max(rx0, vx0), max(ry0, vy0), min(rx1, vx1), min(ry1, vy1))
    if out[0] > out[2] or out[1] > out[3]:
        return (0, 0, -1, -1)
    return out


def _fragment_fields(rast: RasterizerState) -> tuple:
    """The rasterizer fields the fragment side reads (FragmentBase)."""
    return (
        rast.multisample,
        rast.half_pixel_center,
        depth_clip_modes(rast)[2],
        rast.clip_halfz,
        rast.clamp_fragment_color,
        rast.poly_stipple_enable,
        rast.force_persample_interp,
    )


def depth_clip_modes(rast: RasterizerState) -> tuple[bool, bool, bool]:
    """(clip at the near plane, at the far plane, clamp fragment depth to
    the viewport's range): Mesa 18's ``depth_clip`` (off: neither plane
    clips and depth is clamped), unless the newer ``depth_clip_near``,
    ``depth_clip_far`` and ``depth_clamp`` fields are set."""
    dc = bool(rast.depth_clip)
    near = dc if rast.depth_clip_near is None else bool(rast.depth_clip_near)
    far = dc if rast.depth_clip_far is None else bool(rast.depth_clip_far)
    clamp = (not dc) if rast.depth_clamp is None else bool(rast.depth_clamp)
    return near, far, clamp


class NumpipeContext:
    """``pipe_context`` of the numpipe software driver (used by one thread at a time).

    Each application-facing method checks its arguments with
    :mod:`gallium.pipe.checks` and hands the checked values to its unchecked
    twin ``_apply_*`` (the entry points a wrapping frontend records for its
    driver thread, see :mod:`gallium.pipe.protocols`).
    """

    def __init__(self, screen: Any, priv: Any = None, flags: int = 0) -> None:
        self.screen = screen
        self.support = screen.support
        self.priv = priv
        self.flags = flags
        self.destroyed = False
        # bound CSOs (None binds the default state)
        self._default_blend = objects.make_blend(BlendState(), self.support)
        self._default_dsa = objects.make_dsa(DepthStencilAlphaState(), self.support)
        self._default_rast = objects.make_rasterizer(RasterizerState(), self.support)
        self._blend: BlendCSO = self._default_blend
        self._dsa: DepthStencilAlphaCSO = self._default_dsa
        self._rast: RasterizerCSO = self._default_rast
        # the bound draw stages whose programs filter textures (None: not
        # known since the last bind of a shader or rasterizer state)
        self._sampling: list | None = None
        self._shaders: dict[ShaderType, ShaderCSO | None] = {
            s: None for s in ShaderType if s != ShaderType.TYPES
        }
        self._velems: VertexElementsCSO | None = None
        self._samplers: dict[ShaderType, list[SamplerCSO | None]] = {}
        self._compute: Any = None  # compute.ComputeCSO
        self._ssbos: dict[ShaderType, dict[int, Any]] = {}  # slot -> pipe.ShaderBuffer
        self._images: dict[ShaderType, dict[int, Any]] = {}  # slot -> pipe.ImageView
        # bindless handles (context.rst "Bindless"): handle -> (view, SamplerState)
        # / pipe.ImageView, and the resident ones (in the order made resident)
        self._tex_handles: dict[int, tuple[SamplerView, SamplerState]] = {}
        self._img_handles: dict[int, Any] = {}
        self._resident_tex: dict[int, tuple[SamplerView, SamplerState]] = {}
        self._resident_img: dict[int, Any] = {}
        self._handle_ids = itertools.count(1)
        # non-CSO state
        self._vbufs: dict[int, VertexBuffer] = {}
        self._constbufs: dict[ShaderType, dict[int, tuple[Any, np.ndarray]]] = {}
        self._views: dict[ShaderType, list[SamplerView | None]] = {}
        self._fb = FramebufferState()
        self._targets: dict[int, tuple] = {}  # id(surface) -> (surface, storage, ColorTarget)
        self._zs_target: tuple | None = None  # (surface, storage, (w, h), DepthTarget)
        self._viewports = [ViewportState() for _ in range(PIPE_MAX_VIEWPORTS)]
        self._scissors = [ScissorState() for _ in range(PIPE_MAX_VIEWPORTS)]
        self._blend_color = (0.0, 0.0, 0.0, 0.0)
        self._stencil_ref = (0, 0)
        self._sample_mask = 0xFFFFFFFF
        self._min_samples = 1
        self._window: tuple[bool, tuple] = (False, ())  # window rectangles: exclude none
        self._clip = ClipState()
        self._stipple: tuple[int, ...] = (0,) * 32  # set_polygon_stipple's rows
        self._render_cond: tuple[Query | None, bool, RenderCond] = (None, False, RenderCond.WAIT)
        self._so_targets: tuple = ()  # bound stream output targets
        self._globals: dict[int, Resource] = {}  # set_global_binding's buffers by slot
        self._tess_levels: tuple = ((1.0,) * 4, (1.0,) * 2)  # set_tess_state's defaults
        # scenes
        self._scene: Scene | None = None
        self._scene_seq = 0
        self._last_fence: Fence = Fence.completed("initial")
        # queries: every begun one, and those counting now (all of them but
        # while set_active_query_state(False) pauses them, TIME_ELAPSED only)
        self._begun_queries: list[Query] = []
        self._active_queries: list[Query] = []
        self._queries_paused = False
        # errors / reset
        self._lock = threading.Lock()
        self._errors: list[tuple[int, BaseException]] = []
        self._reset_status = ResetStatus.NO_RESET
        self._reset_callback: Callable[[ResetStatus], None] | None = None
        self._reset_pending_callback = False
        self._reset_announced = False  # the callback fired for the current reset
        self._debug_callback: Any = None
        # Set by a wrapping frontend: the thread that executes recorded calls.
        # Sync-point error reporting belongs to the application side, never to it.
        self.driver_thread_id: int | None = None
        # Called between the vertex pipeline's stages; a ThreadedContext sets
        # it to hand the GIL to a waiting event loop (see threaded.context).
        self.yield_point: Callable[[], None] = _no_yield
        # The draw queue (see draw_vbo and _queued_draw).  batch_draws off:
        # every draw runs alone at once (the same pixels; for tests).
        self.batch_draws = os.environ.get("NUMPIPE_DRAW_BATCH", "1") != "0"
        self._binner = Binner(self)
        self._draws = DrawPipeline(self._binner, lambda: self.yield_point())
        self._draws_epoch = 0  # runs of the queue
        self._queued_epoch = 0  # the run after which _queued was last filled
        self._queued: set[Any] = set()  # resources the queued draws read or write
        parts = "program vbufs vconsts gconsts tcconsts teconsts frag ftex viewport region so"
        parts += " viewports regions dranges"
        self._snap: dict[str, Any] = dict.fromkeys(parts.split())
        self._snap_deps: dict[str, list] = {}
        self._snap_resources: dict[str, list] = {}
        self._programs: dict[tuple, VertexProgram] = {}  # interned
        # the linkage of the last vertex stage to the fragment shader and what
        # follows from it with the rasterizer state (_part_program): made once
        # per combination and frame, as draws switch between a few shaders
        self._linkage: dict[tuple, tuple] = {}
        self._frags: dict[tuple, FragmentBase] = {}  # interned
        self._frag_snaps: dict[tuple, FragmentSnapshot] = {}  # interned too
        self._counting: tuple = ()  # active queries counting primitives
        self.stats = {
            "draws": 0,
            "triangles": 0,
            "scenes": 0,
            "clears": 0,
            "syncs": 0,
            "draw_passes": 0,  # vertex-pipeline passes the draws took (many draws a pass)
            "merged_draws": 0,  # draws rasterized as part of the previous draw's command
            "draw_commands": 0,  # raster commands the draws became
        }

    # ------------------------------------------------------------------ basics

    def _check_alive(self) -> None:
        if self.destroyed:
            raise ContextDestroyedError("this context has been destroyed")
        # (a wrapper's queued calls still run: the scenes they flush fail, once each)
        if self.screen.destroyed and self.driver_thread_id != threading.get_ident():
            raise ContextDestroyedError("the screen of this context has been destroyed")

    def destroy(self) -> None:
        """Flush outstanding work, wait for it, and release the context.

        An error of that work not yet reported is raised (once); one already
        reported is not.  Called from a fence callback (on the thread that
        signals the fence) or with the screen already destroyed, it submits
        the outstanding work and returns without waiting for it.
        """
        if self.destroyed:
            return
        if self.screen.destroyed:
            self.destroyed = True
            return
        try:
            fence = self._submit_scene()
            if not Fence.in_callback():
                fence.wait(None)
                self.raise_pending_error()
        finally:
            self.destroyed = True

    # ------------------------------------------------------------------ CSOs

    def create_blend_state(self, state: BlendState) -> BlendCSO:
        return objects.make_blend(state, self.support)

    def bind_blend_state(self, cso: BlendCSO | None) -> None:
        self._check_alive()
        self._apply_blend(checks.check_blend_cso(cso))

    def _apply_blend(self, cso: BlendCSO | None) -> None:
        self._blend = cso if cso is not None else self._default_blend
        self._snap["fbase"] = self._snap["frag"] = None

    def destroy_blend_state(self, cso: BlendCSO) -> None:
        checks.check_cso("cso", cso, BlendCSO, "a blend CSO from create_blend_state")

    def create_depth_stencil_alpha_state(
        self, state: DepthStencilAlphaState
    ) -> DepthStencilAlphaCSO:
        return objects.make_dsa(state, self.support)

    def bind_depth_stencil_alpha_state(self, cso: DepthStencilAlphaCSO | None) -> None:
        self._check_alive()
        self._apply_dsa(checks.check_dsa_cso(cso))

    def _apply_dsa(self, cso: DepthStencilAlphaCSO | None) -> None:
        self._dsa = cso if cso is not None else self._default_dsa
        self._snap["fbase"] = self._snap["frag"] = None

    def destroy_depth_stencil_alpha_state(self, cso: DepthStencilAlphaCSO) -> None:
        checks.check_cso(
            "cso", cso, DepthStencilAlphaCSO, "a CSO from create_depth_stencil_alpha_state"
        )

    def create_rasterizer_state(self, state: RasterizerState) -> RasterizerCSO:
        return objects.make_rasterizer(state, self.support)

    def bind_rasterizer_state(self, cso: RasterizerCSO | None) -> None:
        self._check_alive()
        self._apply_rasterizer(checks.check_rasterizer_cso(cso))

    def _apply_rasterizer(self, cso: RasterizerCSO | None) -> None:
        old = self._rast.state
        self._rast = cso if cso is not None else self._default_rast
        self._sampling = None
        self._invalidate("program", "region", "regions", "dranges")
        if _fragment_fields(old) != _fragment_fields(self._rast.state):
            # (the multisample state: FragmentBase.sample_opts; depth clamp,
            # colour clamp, stipple: FragmentBase.raster)
            self._snap["fbase"] = self._snap["frag"] = None

    def destroy_rasterizer_state(self, cso: RasterizerCSO) -> None:
        checks.check_cso("cso", cso, RasterizerCSO, "a CSO from create_rasterizer_state")

    def create_sampler_state(self, state: SamplerState) -> SamplerCSO:
        return objects.make_sampler(state, self.support)

    def bind_sampler_states(
        self, shader: ShaderType, start: int, samplers: Sequence[SamplerCSO | None]
    ) -> None:
        self._check_alive()
        self._apply_sampler_states(*checks.check_sampler_states(shader, start, samplers))

    def _apply_sampler_states(self, stage: ShaderType, start: int, samplers: list) -> None:
        slots = self._samplers.setdefault(stage, [])
        while len(slots) < start + len(samplers):
            slots.append(None)
        slots[start : start + len(samplers)] = samplers
        self._invalidate(*_TEXTURE_PART.get(stage, ("ftex", "fbase", "frag")))

    def destroy_sampler_state(self, cso: SamplerCSO) -> None:
        checks.check_cso("cso", cso, SamplerCSO, "a CSO from create_sampler_state")

    def _create_shader(self, stage: ShaderType, state: ShaderState) -> ShaderCSO:
        if not isinstance(state, ShaderState):
            raise bad_type("state", "a pipe.ShaderState", state)
        return objects.make_shader(stage, state.tokens, "state.tokens", state)

    def _bind_shader(self, stage: ShaderType, cso: ShaderCSO | None) -> None:
        self._check_alive()
        self._apply_shader(stage, checks.check_shader_cso(stage, cso))

    def _apply_shader(self, stage: ShaderType, cso: ShaderCSO | None) -> None:
        self._shaders[stage] = cso
        self._sampling = None
        if stage == ShaderType.FRAGMENT:
            self._invalidate("program", "fbase", "frag")
        else:
            self._invalidate("program", "gconsts")

    def _destroy_shader(self, stage: ShaderType, cso: ShaderCSO) -> None:
        if not isinstance(cso, ShaderCSO) or cso.stage != stage:
            raise bad_type("cso", f"a {stage.name.lower()} shader CSO", cso)

    def create_vs_state(self, state: ShaderState) -> ShaderCSO:
        return self._create_shader(ShaderType.VERTEX, state)

    def bind_vs_state(self, cso: ShaderCSO | None) -> None:
        self._bind_shader(ShaderType.VERTEX, cso)

    def destroy_vs_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.VERTEX, cso)

    def create_fs_state(self, state: ShaderState) -> ShaderCSO:
        return self._create_shader(ShaderType.FRAGMENT, state)

    def bind_fs_state(self, cso: ShaderCSO | None) -> None:
        self._bind_shader(ShaderType.FRAGMENT, cso)

    def destroy_fs_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.FRAGMENT, cso)

    def create_gs_state(self, state: ShaderState) -> ShaderCSO:
        cso = self._create_shader(ShaderType.GEOMETRY, state)
        from ..draw.gs import check_geometry_shader

        check_geometry_shader(cso.shader)
        return cso

    def bind_gs_state(self, cso: ShaderCSO | None) -> None:
        self._bind_shader(ShaderType.GEOMETRY, cso)

    def destroy_gs_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.GEOMETRY, cso)

    def create_tcs_state(self, state: ShaderState) -> ShaderCSO:
        from ..draw.tess import check_tcs

        cso = self._create_shader(ShaderType.TESS_CTRL, state)
        check_tcs(cso.shader)
        return cso

    def bind_tcs_state(self, cso: ShaderCSO | None) -> None:
        self._check_alive()
        stage = ShaderType.TESS_CTRL
        self._apply_shader(stage, checks.check_tess_bind(stage, cso, self.support))

    def destroy_tcs_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.TESS_CTRL, cso)

    def create_tes_state(self, state: ShaderState) -> ShaderCSO:
        from ..draw.tess import check_tes

        cso = self._create_shader(ShaderType.TESS_EVAL, state)
        check_tes(cso.shader)
        return cso

    def bind_tes_state(self, cso: ShaderCSO | None) -> None:
        self._check_alive()
        stage = ShaderType.TESS_EVAL
        self._apply_shader(stage, checks.check_tess_bind(stage, cso, self.support))

    def destroy_tes_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.TESS_EVAL, cso)

    def create_compute_state(self, state: ComputeState) -> Any:
        from .compute import make_compute

        return make_compute(state)

    def bind_compute_state(self, cso: Any) -> None:
        self._check_alive()
        self._apply_compute(checks.check_compute_cso(cso))

    def _apply_compute(self, cso: Any) -> None:
        self._compute = cso

    def destroy_compute_state(self, cso: Any) -> None:
        checks.check_cso("cso", cso, ComputeCSO, "a compute state from create_compute_state")

    def launch_grid(self, info: Any) -> None:
        """Run a grid of the bound compute program (see gallium/numpipe/compute.py)."""
        self._check_alive()
        grid = checks.check_grid_info(info, self.support)
        checks.check_launch(grid, self._compute)
        self._check_sampler_bindings([(ShaderType.COMPUTE, self._compute)], "launch_grid")
        self._apply_launch_grid(grid)

    def set_global_binding(
        self, first: int, count: int, resources: Sequence[Any] | None, handles: Any
    ) -> None:
        """Map buffers into compute programs' GLOBAL memory: slot k's buffer
        occupies the 32-bit addresses from ``compute.global_base(k)``, which
        is added to ``handles[i][0]`` (the offset the caller put there)."""
        self._check_alive()
        self._apply_global_binding(
            *checks.check_global_binding(first, count, resources, handles, self.support)
        )

    def _apply_global_binding(self, first: int, count: int, resources: Any, handles: Any) -> None:
        from .compute import global_base

        for i in range(count):
            res = None if resources is None else resources[i]
            if res is None:
                self._globals.pop(first + i, None)
                continue
            self._globals[first + i] = res
            h = handles[i]
            h[0] = (global_base(first + i) + int(h[0])) & 0xFFFFFFFF

    def _apply_launch_grid(self, grid: Any) -> None:
        """Run a checked grid (a :class:`gallium.pipe.checks.Grid`)."""
        from .compute import (
            ComputeJob,
            buffer_views,
            global_views,
            image_units,
            indirect_grid,
            resident_image_units,
        )

        cso = self._compute
        # the grid runs after everything recorded before it, and later calls see its results
        self._submit_scene()
        if grid.indirect is not None:
            self._sync_resource(grid.indirect, False, "launch_grid")
        dims = indirect_grid(grid)
        self.stats["launches"] = self.stats.get("launches", 0) + 1
        if 0 in dims:
            return
        for q in self._active_queries:
            if q.type == QueryType.PIPELINE_STATISTICS:  # every invocation of every block
                bx, by, bz = grid.block
                q.stats.cs_invocations += dims[0] * dims[1] * dims[2] * bx * by * bz
        consts = []
        for idx, arr in enumerate(self._const_arrays(ShaderType.COMPUTE)):
            res = self._constbufs[ShaderType.COMPUTE][idx][0] if arr is not None else None
            consts.append(arr.copy() if res is not None else arr)
        self._scene_seq += 1
        seq = self._scene_seq
        units = image_units(self._images.get(ShaderType.COMPUTE, {}))
        image_handles = resident_image_units(units, self._resident_img.items())
        job = ComputeJob(
            cso,
            grid.block,
            dims,
            buffer_views(self._ssbos.get(ShaderType.COMPUTE, {})),
            consts,
            self._texture_bindings(ShaderType.COMPUTE),
            grid.input,
            label=f"grid {seq}",
            images=units,
            image_handles=image_handles,
            globals_=global_views(self._globals),
        )
        prev = self._last_fence
        self._last_fence = job.fence
        self.screen.pool.submit(job, after=prev)
        job.fence.wait(None)
        if job.errors:
            self._job_failed(seq, job.errors)

    def create_vertex_elements_state(self, elements: Sequence[Any]) -> VertexElementsCSO:
        return objects.make_vertex_elements(elements)

    def bind_vertex_elements_state(self, cso: VertexElementsCSO | None) -> None:
        self._check_alive()
        self._apply_vertex_elements(checks.check_vertex_elements_cso(cso))

    def _apply_vertex_elements(self, cso: VertexElementsCSO | None) -> None:
        self._velems = cso
        self._invalidate("program")

    def destroy_vertex_elements_state(self, cso: VertexElementsCSO) -> None:
        checks.check_cso("cso", cso, VertexElementsCSO, "a CSO from create_vertex_elements_state")

    # Mesa's own spelling of the destroy triplet members.
    delete_blend_state = destroy_blend_state
    delete_depth_stencil_alpha_state = destroy_depth_stencil_alpha_state
    delete_rasterizer_state = destroy_rasterizer_state
    delete_sampler_state = destroy_sampler_state
    delete_vs_state = destroy_vs_state
    delete_fs_state = destroy_fs_state
    delete_vertex_elements_state = destroy_vertex_elements_state

    # ------------------------------------------------------------------ views

    def create_surface(self, resource: Resource, templ: SurfaceTemplate) -> Surface:
        surf = objects.make_surface(self, resource, templ, self.support)
        desc = try_describe(surf.format)
        if desc is not None and (desc.is_depth or desc.is_stencil):
            if not resource.bind & Bind.DEPTH_STENCIL:
                raise bad_value("resource", "must have PIPE_BIND_DEPTH_STENCIL for a depth surface")
        elif not resource.bind & Bind.RENDER_TARGET:
            raise bad_value("resource", "must have PIPE_BIND_RENDER_TARGET for a colour surface")
        return surf

    def surface_destroy(self, surface: Surface) -> None:
        self._apply_surface_destroy(checks.destroy_surface(surface))

    def _apply_surface_destroy(self, surface: Surface) -> None:
        """The driver's side of surface_destroy (nothing to free: numpy owns the memory)."""

    def create_sampler_view(self, resource: Resource, templ: SamplerViewTemplate) -> SamplerView:
        return objects.make_sampler_view(self, resource, templ)

    # -- bindless handles -------------------------------------------------------------
    #
    # A handle is a 64-bit integer (bit 32 set, the top bit clear: SAMP2HND /
    # IMG2HND's handles of bound slots have it) that shaders read from any
    # register; a resident handle's view is sampled (or its image accessed)
    # by every stage's draws and grids recorded while it is resident
    # (TextureBindings / ComputeMemory give it a unit after the bound ones).
    # A handle nothing answers reads zeros.

    def create_texture_handle(self, view: SamplerView, state: SamplerState) -> int:
        self._check_alive()
        return self._apply_create_texture_handle(
            *checks.check_texture_handle(view, state, self.support)
        )

    def _apply_create_texture_handle(self, view: SamplerView, state: SamplerState) -> int:
        handle = _HANDLE_BASE | next(self._handle_ids)
        self._tex_handles[handle] = (view, state)
        return handle

    def delete_texture_handle(self, handle: int) -> None:
        self._check_alive()
        self._apply_delete_texture_handle(checks.check_handle(handle, self._tex_handles, "texture"))

    def _apply_delete_texture_handle(self, handle: int) -> None:
        del self._tex_handles[handle]
        if self._resident_tex.pop(handle, None) is not None:
            self._residency_changed()

    def make_texture_handle_resident(self, handle: int, resident: bool) -> None:
        self._check_alive()
        h = checks.check_handle(handle, self._tex_handles, "texture")
        self._apply_make_texture_handle_resident(h, bool(resident))

    def _apply_make_texture_handle_resident(self, handle: int, resident: bool) -> None:
        if resident:
            self._resident_tex[handle] = self._tex_handles[handle]
        else:
            self._resident_tex.pop(handle, None)
        self._residency_changed()

    def create_image_handle(self, image: Any) -> int:
        self._check_alive()
        return self._apply_create_image_handle(checks.check_image_handle(image, self.support))

    def _apply_create_image_handle(self, image: Any) -> int:
        handle = _HANDLE_BASE | next(self._handle_ids)
        self._img_handles[handle] = image
        return handle

    def delete_image_handle(self, handle: int) -> None:
        self._check_alive()
        self._apply_delete_image_handle(checks.check_handle(handle, self._img_handles, "image"))

    def _apply_delete_image_handle(self, handle: int) -> None:
        del self._img_handles[handle]
        self._resident_img.pop(handle, None)

    def make_image_handle_resident(self, handle: int, access: int, resident: bool) -> None:
        self._check_alive()
        h = checks.check_handle(handle, self._img_handles, "image")
        access = checks.check_image_access(access)
        self._apply_make_image_handle_resident(h, access, bool(resident))

    def _apply_make_image_handle_resident(self, handle: int, access: int, resident: bool) -> None:
        # (images are read and written whatever ``access`` says, as on a GPU)
        if resident:
            self._resident_img[handle] = self._img_handles[handle]
        else:
            self._resident_img.pop(handle, None)

    def _residency_changed(self) -> None:
        """Every stage's texture bindings change (the draws' vertex side and
        fragment side alike)."""
        self._invalidate("program", "ftex", "fbase", "frag")

    def sampler_view_destroy(self, view: SamplerView) -> None:
        self._apply_sampler_view_destroy(checks.destroy_sampler_view(view))

    def _apply_sampler_view_destroy(self, view: SamplerView) -> None:
        """The driver's side of sampler_view_destroy (nothing to free)."""

    def set_sampler_views(
        self, shader: ShaderType, start: int, views: Sequence[SamplerView | None]
    ) -> None:
        self._check_alive()
        self._apply_sampler_views(*checks.check_sampler_views(shader, start, views))

    def _apply_sampler_views(self, stage: ShaderType, start: int, views: list) -> None:
        slots = self._views.setdefault(stage, [])
        while len(slots) < start + len(views):
            slots.append(None)
        slots[start : start + len(views)] = views
        self._invalidate(*_TEXTURE_PART.get(stage, ("ftex", "fbase", "frag")))

    def create_stream_output_target(
        self, resource: Resource, buffer_offset: int, buffer_size: int
    ) -> objects.StreamOutputTarget:
        args = checks.check_stream_output_target(resource, buffer_offset, buffer_size)
        return objects.StreamOutputTarget(self, *args)

    def stream_output_target_destroy(self, target: objects.StreamOutputTarget) -> None:
        # (queued draws and the bindings keep writing it)
        checks.destroy_stream_output_target(target)

    def set_stream_output_targets(self, targets: Sequence[Any], offsets: Sequence[int]) -> None:
        """Bind stream output targets; an offset sets a target's internal
        offset (the bytes written so far), -1 keeps it (append)."""
        self._check_alive()
        self._apply_stream_output_targets(
            *checks.check_stream_output_targets(targets, offsets, self.support)
        )

    def _apply_stream_output_targets(self, targets: tuple, offsets: tuple) -> None:
        # the offsets apply after the queued draws wrote their primitives
        queued = self._queued
        if self._draws.queue and (
            any(t is not None for t in self._so_targets)
            or any(t is not None and t.resource in queued for t in targets)
        ):
            self._run_draws()
        for t, off in zip(targets, offsets):
            if t is not None and off != -1:
                t.internal_offset = off
        self._so_targets = tuple(targets)
        self._invalidate("so")

    # ------------------------------------------------------------------ non-CSO state

    def set_blend_color(self, color: BlendColor) -> None:
        self._check_alive()
        self._apply_blend_color(checks.check_blend_color(color))

    def _apply_blend_color(self, color: tuple[float, float, float, float]) -> None:
        self._blend_color = color
        self._snap["fbase"] = self._snap["frag"] = None

    def set_stencil_ref(self, ref: StencilRef) -> None:
        self._check_alive()
        self._apply_stencil_ref(checks.check_stencil_ref(ref))

    def _apply_stencil_ref(self, ref: tuple[int, int]) -> None:
        self._stencil_ref = ref
        self._snap["fbase"] = self._snap["frag"] = None

    def set_sample_mask(self, mask: int) -> None:
        self._check_alive()
        self._apply_sample_mask(checks.check_sample_mask(mask))

    def _apply_sample_mask(self, mask: int) -> None:
        self._sample_mask = mask
        self._snap["fbase"] = self._snap["frag"] = None

    def set_min_samples(self, min_samples: int) -> None:
        """More than 1: shade once per sample of a multisampled framebuffer."""
        self._check_alive()
        self._apply_min_samples(checks.check_min_samples(min_samples, self.support))

    def _apply_min_samples(self, min_samples: int) -> None:
        if min_samples != self._min_samples:
            self._min_samples = min_samples
            self._snap["fbase"] = self._snap["frag"] = None

    def get_sample_position(self, sample_count: int, sample_index: int) -> tuple[float, float]:
        """Where sample ``sample_index`` of a ``sample_count``-sample pixel lies
        (x, y in [0, 1) from the pixel's top-left corner)."""
        from workers.msaa import sample_position

        count = check_int("sample_count", sample_count)
        if count not in (0, 1, 2, 4):
            raise bad_value("sample_count", "must be 1, 2 or 4 (the supported counts)", count)
        index = check_int("sample_index", sample_index, 0, max(1, count) - 1)
        return sample_position(count, index)

    def set_clip_state(self, state: ClipState) -> None:
        self._check_alive()
        self._apply_clip_state(checks.check_clip_state(state))

    def _apply_clip_state(self, state: ClipState) -> None:
        self._clip = state
        self._invalidate("program")

    def set_polygon_stipple(self, stipple: PolyStipple) -> None:
        self._check_alive()
        self._apply_polygon_stipple(checks.check_polygon_stipple(stipple))

    def _apply_polygon_stipple(self, stipple: PolyStipple) -> None:
        self._stipple = tuple(stipple.stipple)
        if self._rast.state.poly_stipple_enable:
            self._invalidate("fbase", "frag")

    def set_scissor_states(self, start: int, scissors: Sequence[ScissorState]) -> None:
        self._check_alive()
        self._apply_scissor_states(*checks.check_scissor_states(start, scissors))

    def _apply_scissor_states(self, start: int, scissors: tuple[ScissorState, ...]) -> None:
        for i, sc in enumerate(scissors):
            self._scissors[start + i] = sc
        self._invalidate("region", "regions")

    def set_viewport_states(self, start: int, viewports: Sequence[ViewportState]) -> None:
        self._check_alive()
        self._apply_viewport_states(*checks.check_viewport_states(start, viewports))

    def _apply_viewport_states(self, start: int, viewports: tuple[ViewportState, ...]) -> None:
        for i, vp in enumerate(viewports):
            self._viewports[start + i] = vp
        self._invalidate("viewport", "viewports", "dranges")
        if self._rast.state.point_size_per_vertex:
            self._invalidate("region", "regions")  # (_viewport_scissor)
        if depth_clip_modes(self._rast.state)[2]:  # (fragments clamp to its depth range)
            self._invalidate("fbase", "frag")

    def set_window_rectangles(self, include: bool, rects: Sequence[ScissorState]) -> None:
        """Clip later draws to (or away from) up to 8 rectangles (window.py)."""
        self._check_alive()
        self._apply_window_rectangles(*checks.check_window_rectangles(include, rects, self.support))

    def _apply_window_rectangles(self, include: bool, rects: tuple) -> None:
        self._window = (include, rects)
        self._snap["fbase"] = self._snap["frag"] = None

    def set_tess_state(self, default_outer_level: Any, default_inner_level: Any) -> None:
        """The levels a patch takes when no control shader writes them."""
        self._check_alive()
        self._apply_tess_state(
            *checks.check_tess_state(default_outer_level, default_inner_level, self.support)
        )

    def _apply_tess_state(self, outer: tuple, inner: tuple) -> None:
        self._tess_levels = (outer, inner)
        self._invalidate("program")

    def set_debug_callback(self, callback: Any) -> None:
        self._check_alive()
        self._apply_debug_callback(checks.check_debug_callback(callback))

    def _apply_debug_callback(self, callback: Any) -> None:
        self._debug_callback = callback

    def set_shader_buffers(self, shader: ShaderType, start: int, buffers: Sequence[Any]) -> None:
        self._check_alive()
        self._apply_shader_buffers(*checks.check_shader_buffers(shader, start, buffers))

    def _apply_shader_buffers(self, stage: ShaderType, start: int, buffers: list) -> None:
        """Bind validated shader buffers (see checks.check_shader_buffers)."""
        _bind_slots(self._ssbos.setdefault(stage, {}), start, buffers)
        if stage != ShaderType.COMPUTE:
            self._invalidate(*(("fbase", "frag") if stage == ShaderType.FRAGMENT else ("program",)))

    def set_shader_images(self, shader: ShaderType, start: int, images: Sequence[Any]) -> None:
        self._check_alive()
        self._apply_shader_images(*checks.check_shader_images(shader, start, images))

    def _apply_shader_images(self, stage: ShaderType, start: int, images: list) -> None:
        """Bind validated image views (see checks.check_shader_images)."""
        _bind_slots(self._images.setdefault(stage, {}), start, images)
        if stage != ShaderType.COMPUTE:
            self._invalidate(*(("fbase", "frag") if stage == ShaderType.FRAGMENT else ("program",)))

    def set_constant_buffer(
        self, shader: ShaderType, index: int, cb: ConstantBuffer | None
    ) -> None:
        self._check_alive()
        stage, index, binding = checks.check_constant_buffer(shader, index, cb)
        if binding is not None and binding[0] is None:  # user bytes: draws read them later
            binding = (None, binding[1].copy())
        self._apply_constant_buffer(stage, index, binding)

    def _apply_constant_buffer(self, stage: ShaderType, index: int, binding: Any) -> None:
        """Bind a validated constant buffer (see checks.check_constant_buffer; user
        bytes are the context's own: copied by the caller)."""
        self._invalidate(_CONST_PART.get(stage, "frag"))
        slots = self._constbufs.setdefault(stage, {})
        if binding is None:
            slots.pop(index, None)
        else:
            slots[index] = binding

    def set_framebuffer_state(self, state: FramebufferState) -> None:
        self._check_alive()
        self._apply_framebuffer_state(checks.check_framebuffer_state(state, self.support))

    def _apply_framebuffer_state(self, new: FramebufferState) -> None:
        if _fb_key(new) != _fb_key(self._fb) and (self._scene is not None or self._draws.queue):
            self._submit_scene()
        if _fb_samples(new) != _fb_samples(self._fb):
            self._invalidate("program")  # (VertexProgram.multisample)
        zs_format = (None if self._fb.zsbuf is None else self._fb.zsbuf.format,)
        self._fb = new
        self._invalidate("region", "regions", "fbase", "frag")
        if zs_format != (None if new.zsbuf is None else new.zsbuf.format,):
            self._invalidate("program")  # (the polygon offset's units depend on it)

    def set_vertex_buffers(self, start_slot: int, buffers: Sequence[VertexBuffer | None]) -> None:
        self._check_alive()
        self._apply_vertex_buffers(checks.check_vertex_buffers(start_slot, buffers))

    def _apply_vertex_buffers(self, bindings: list[tuple[int, VertexBuffer | None]]) -> None:
        """Bind validated, private vertex buffers (see checks.check_vertex_buffers)."""
        self._invalidate("vbufs")
        for slot, vb in bindings:
            if vb is None:
                self._vbufs.pop(slot, None)
            else:
                self._vbufs[slot] = vb

    # ------------------------------------------------------------------ drawing

    def _current_scene(self) -> Scene:
        if self._scene is None:
            fb = self._fb
            if fb.width <= 0 or fb.height <= 0:
                raise bad_value("framebuffer", "must be set (width and height > 0) before drawing")
            cbufs = []
            resources = set()
            # a surface's ColorTarget (views of its storage) is made once and
            # reused while the surface and its storage stay the same objects
            targets = {}
            for s in fb.cbufs:
                if s is None:
                    cbufs.append(None)
                    continue
                res = s.texture
                hit = self._targets.get(id(s))
                size = (fb.width, fb.height)
                if hit is None or hit[0] is not s or hit[1] is not res.storage or hit[3] != size:
                    hit = (s, res.storage, _color_target(s, fb.width, fb.height), size)
                targets[id(s)] = hit
                cbufs.append(hit[2])
                resources.add(res)
            self._targets = targets
            zs = None
            if fb.zsbuf is not None:
                # made once and reused as the colour targets are (scenes only read it)
                s = fb.zsbuf
                res = s.texture
                size = (fb.width, fb.height)
                hit = self._zs_target
                if hit is None or hit[0] is not s or hit[1] is not res.storage or hit[2] != size:
                    zs = make_depth_target(res, s.level, s.first_layer, res.storage)
                    zs.words = zs.words[: fb.height, : fb.width]
                    if zs.stencil is not None:
                        zs.stencil = zs.stencil[: fb.height, : fb.width]
                    hit = self._zs_target = (s, res.storage, size, zs)
                zs = hit[3]
                resources.add(res)
            self._scene_seq += 1
            scene = Scene(fb.width, fb.height, cbufs, zs, label=f"scene {self._scene_seq}")
            samples = _fb_samples(fb)
            if samples > 1:
                scene.set_samples(samples, *self._sample_targets(samples))
            scene.max_layer = _fb_max_layer(fb)
            scene.layer_source = self._layer_targets
            scene.resources |= resources
            scene.seq = self._scene_seq  # type: ignore[attr-defined]
            self._scene = scene
        return self._scene

    def _layer_targets(self, layer: int) -> tuple:
        """Layer ``layer`` (counted from each surface's first layer) of the
        bound surfaces as a scene draws into it: (colour targets, depth
        target, the colour and depth targets of samples 1..), cropped to the
        framebuffer as layer 0's (Scene.layer_targets: made when a primitive
        first goes to the layer)."""
        fb = self._fb
        h, w = fb.height, fb.width
        samples = _fb_samples(fb)
        per_sample: list[tuple[list, Any]] = []
        for sample in range(samples):
            row = []
            for s in fb.cbufs:
                if s is None:
                    row.append(None)
                    continue
                res = s.texture
                t = make_color_target(
                    res, s.level, s.first_layer + layer, res.storage, _desc(s), sample
                )
                row.append(_cropped(t, w, h))
            zs = None
            if fb.zsbuf is not None:
                s = fb.zsbuf
                zs = make_depth_target(
                    s.texture, s.level, s.first_layer + layer, s.texture.storage, sample
                )
                zs.words = zs.words[:h, :w]
                if zs.stencil is not None:
                    zs.stencil = zs.stencil[:h, :w]
            per_sample.append((row, zs))
        return (
            per_sample[0][0],
            per_sample[0][1],
            [row for row, _ in per_sample[1:]],
            [zs for _, zs in per_sample[1:]],
        )

    def _sample_targets(self, samples: int) -> tuple[list, list]:
        """The colour and depth targets of samples 1..samples-1 of the bound
        surfaces (cropped to the framebuffer, as sample 0's)."""
        fb = self._fb
        h, w = fb.height, fb.width
        cbufs, zss = [], []
        for sample in range(1, samples):
            row = []
            for s in fb.cbufs:
                if s is None:
                    row.append(None)
                    continue
                res = s.texture
                t = make_color_target(res, s.level, s.first_layer, res.storage, _desc(s), sample)
                row.append(_cropped(t, w, h))
            cbufs.append(row)
            zs = None
            if fb.zsbuf is not None:
                s = fb.zsbuf
                zs = make_depth_target(s.texture, s.level, s.first_layer, s.texture.storage, sample)
                zs.words = zs.words[:h, :w]
                if zs.stencil is not None:
                    zs.stencil = zs.stencil[:h, :w]
            zss.append(zs)
        return cbufs, zss

    def _render_condition_passes(self) -> bool:
        query, condition, mode = self._render_cond
        if query is None:
            return True
        wait = mode in (RenderCond.WAIT, RenderCond.BY_REGION_WAIT)
        ok, value = self._query_result(query, wait)
        if not ok:
            return True
        truth = bool(value) if not isinstance(value, tuple) else bool(value[0])
        return truth != bool(condition)

    def clear(
        self,
        buffers: int,
        color: Sequence[float] | None = None,
        depth: float = 1.0,
        stencil: int = 0,
        scissor_state: Any = None,
    ) -> None:
        """Clear the bound surfaces named by ``buffers`` (PIPE_CLEAR_* bits)."""
        self._check_alive()
        self._apply_clear(*checks.check_clear(buffers, color, depth, stencil, scissor_state))

    def _apply_clear(
        self, bits: int, color: tuple | None, depth: float, stencil: int, scissor: Any
    ) -> None:
        if not self._render_condition_passes():
            return
        rect = None
        if scissor is not None:  # (context.rst: clear only the scissor rectangle)
            fb = self._fb
            rect = (
                min(scissor.minx, fb.width),
                min(scissor.miny, fb.height),
                min(scissor.maxx, fb.width),
                min(scissor.maxy, fb.height),
            )
            if rect[0] >= rect[2] or rect[1] >= rect[3]:
                return  # nothing to clear
            if rect == (0, 0, fb.width, fb.height):
                rect = None
        self._run_draws()  # the clear comes after them
        scene = self._current_scene()
        colors = []
        for i, target in enumerate(scene.cbufs):
            if target is None or not bits & (_CLEAR_COLOR0 << i):
                continue
            from workers.fragment import pack_clear_color

            colors.append((i, pack_clear_color(target, color)))
        depth_word = None
        sval = None
        keep = 0
        zs = scene.zsbuf
        if zs is not None and bits & (_CLEAR_DEPTH | _CLEAR_STENCIL):
            layout = zs.layout
            if bits & _CLEAR_DEPTH and layout.z_bits:
                depth_word = _clear_depth_word(layout, depth)
            if bits & _CLEAR_STENCIL and layout.s_bits:
                sval = int(stencil) & 0xFF
            if not layout.z_float and not layout.split:
                if depth_word is None and layout.z_bits:
                    keep |= layout.z_mask
                if sval is None and layout.s_bits:
                    keep |= layout.s_mask
        cmd = ClearCmd(colors, depth_word, sval, keep, rect=rect)
        self._clear_other_layers(cmd, bits, color)
        scene.add_clear(cmd)
        self.stats["clears"] += 1

    def _clear_other_layers(self, cmd: ClearCmd, bits: int, color: Any) -> None:
        """A layered surface's layers after its first, and every sample after
        the first of a multisampled one, are cleared with it (llvmpipe clears
        every layer and sample of the framebuffer)."""
        fb = self._fb
        h, w = fb.height, fb.width
        samples = _fb_samples(fb)

        def planes(s: Surface) -> list[tuple[int, int]]:
            return [
                (layer, sample)
                for layer in range(s.first_layer, s.last_layer + 1)
                for sample in range(samples)
                if (layer, sample) != (s.first_layer, 0)
            ]

        for i, s in enumerate(fb.cbufs):
            if s is None or not bits & (_CLEAR_COLOR0 << i):
                continue
            from workers.fragment import pack_clear_color

            for layer, sample in planes(s):
                t = make_color_target(
                    s.texture, s.level, layer, s.texture.storage, _desc(s), sample
                )
                t.raw, t.typed = t.raw[:h, :w], None if t.typed is None else t.typed[:h, :w]
                if t.words is not None:
                    t.words = t.words[:h, :w]
                cmd.extra_colors.append((t, pack_clear_color(t, color)))
        s = fb.zsbuf
        if s is not None and bits & (_CLEAR_DEPTH | _CLEAR_STENCIL):
            for layer, sample in planes(s):
                zs = make_depth_target(s.texture, s.level, layer, s.texture.storage, sample)
                zs.words = zs.words[:h, :w]
                if zs.stencil is not None:
                    zs.stencil = zs.stencil[:h, :w]
                cmd.extra_zs.append(zs)

    def clear_render_target(
        self,
        dst: Surface,
        color: Sequence[float],
        dstx: int,
        dsty: int,
        width: int,
        height: int,
        render_condition_enabled: bool = False,
    ) -> None:
        self._check_alive()
        self._apply_clear_render_target(
            *checks.check_clear_render_target(
                dst, color, dstx, dsty, width, height, render_condition_enabled
            )
        )

    def _apply_clear_render_target(self, dst: Surface, color: tuple, box: Box, cond: bool) -> None:
        if cond and not self._render_condition_passes():
            return
        dstx, dsty, width, height = box.x, box.y, box.width, box.height
        self._sync_resource(dst.texture, write=True, reason="clear_render_target")
        desc = try_describe(dst.format)
        packed = pack_rgba(
            desc, np.asarray(color, np.float32 if not desc.is_integer else np.int64).reshape(1, 4)
        )[0]
        view = dst.texture.level_view(dst.level, box.z, box.depth)
        view[:, dsty : dsty + height, dstx : dstx + width] = packed

    def clear_depth_stencil(
        self,
        dst: Surface,
        clear_flags: int,
        depth: float,
        stencil: int,
        dstx: int,
        dsty: int,
        width: int,
        height: int,
        render_condition_enabled: bool = False,
    ) -> None:
        self._check_alive()
        self._apply_clear_depth_stencil(
            *checks.check_clear_depth_stencil(
                dst, clear_flags, depth, stencil, dstx, dsty, width, height,
                render_condition_enabled,
            )
        )  # fmt: skip

    def _apply_clear_depth_stencil(
        self, dst: Surface, clear_flags: int, depth: float, stencil: int, box: Box, cond: bool
    ) -> None:
        if cond and not self._render_condition_passes():
            return
        dstx, dsty, width, height = box.x, box.y, box.width, box.height
        self._sync_resource(dst.texture, write=True, reason="clear_depth_stencil")
        sl = (slice(dsty, dsty + height), slice(dstx, dstx + width))
        for layer in range(dst.first_layer, dst.last_layer + 1):  # every layer of the surface
            target = make_depth_target(dst.texture, dst.level, layer, dst.texture.storage)
            _clear_zs_box(target, sl, clear_flags, depth, stencil)

    def clear_buffer(self, resource: Resource, offset: int, size: int, value: Any) -> None:
        self._check_alive()
        self._apply_clear_buffer(*checks.check_clear_buffer(resource, offset, size, value))

    def _apply_clear_buffer(
        self, resource: Resource, offset: int, size: int, pattern: np.ndarray
    ) -> None:
        if not size:
            return
        self._sync_resource(resource, write=True, reason="clear_buffer")
        resource.storage[offset : offset + size] = np.tile(pattern, size // pattern.size)
        resource.mark_valid(offset, offset + size)

    def resource_copy_region(
        self,
        dst: Resource,
        dst_level: int,
        dstx: int,
        dsty: int,
        dstz: int,
        src: Resource,
        src_level: int,
        src_box: Box,
    ) -> None:
        self._check_alive()
        self._apply_resource_copy_region(
            *checks.check_copy_region(dst, dst_level, dstx, dsty, dstz, src, src_level, src_box)
        )

    def _apply_resource_copy_region(
        self, dst: Resource, dst_level: int, dbox: Box, src: Resource, src_level: int, src_box: Box
    ) -> None:
        dstx, dsty, dstz = dbox.x, dbox.y, dbox.z
        self._sync_resource(src, write=False, reason="resource_copy_region")
        self._sync_resource(dst, write=True, reason="resource_copy_region")
        if src.is_buffer:
            data = src.storage[src_box.x : src_box.x + src_box.width].copy()
            dst.storage[dstx : dstx + src_box.width] = data
            dst.mark_valid(dstx, dstx + src_box.width)
            return
        # every sample of a multisample destination (lp_resource_copy_ms: a
        # single-sample source's texels to each); sample 0 of a multisample
        # source into a single-sample destination
        for k in range(max(1, dst.nr_samples)):
            sk = min(k, max(1, src.nr_samples) - 1)
            sv = src.level_view(src_level, src_box.z, src_box.depth, sample=sk)[
                :, src_box.y : src_box.y + src_box.height, src_box.x : src_box.x + src_box.width
            ].copy()
            dv = dst.level_view(dst_level, dstz, src_box.depth, sample=k)
            dv[:, dsty : dsty + src_box.height, dstx : dstx + src_box.width] = sv

    def draw_vbo(self, info: DrawInfo) -> None:
        """Draw primitives (context.rst "Drawing").

        The draw is validated now and queued, with the state of this call,
        for the draw pipeline (gallium/draw/pipeline.py), which runs the
        queue in passes of many draws at the next point where results can be
        observed (flush, a map or write of a resource the draws use, a query
        result, a clear, compute) or when the queue is full.  With
        ``batch_draws`` off (``NUMPIPE_DRAW_BATCH=0``) every draw runs alone
        at once: the same pixels, one pass per draw.
        """
        self._check_alive()
        info = checks.check_draw_info(info, self.support)
        shaders = self._shaders
        checks.check_draw_state(
            info,
            shaders[ShaderType.VERTEX],
            shaders[ShaderType.FRAGMENT],
            shaders[ShaderType.GEOMETRY],
            self._velems,
            self._rast.state,
            self._fb,
            self.support,
            so_targets=self._so_targets,
            tcs=shaders[ShaderType.TESS_CTRL],
            tes=shaders[ShaderType.TESS_EVAL],
            dsa=self._dsa.state,
        )
        sampling = self._sampling
        if sampling is None:  # (the stages whose programs filter, since the last bind)
            stages = checks.draw_stages(shaders, self._rast.state.rasterizer_discard)
            sampling = self._sampling = [(st, cso) for st, cso in stages if cso.sampler_pairs]
        if sampling:
            self._check_sampler_bindings(sampling, "draw_vbo")
        self._apply_draw_vbo(info)

    def _check_sampler_bindings(self, stages: Any, call: str) -> None:
        for stage, cso in stages:
            if cso.sampler_pairs:
                views = self._views.get(stage, ())
                samplers = self._samplers.get(stage, ())
                checks.check_sampler_bindings(
                    stage,
                    cso,
                    {i for i, v in enumerate(views) if v is not None},
                    {i for i, s in enumerate(samplers) if s is not None},
                    call,
                )

    def _apply_draw_vbo(self, info: DrawInfo) -> None:
        """draw_vbo of a checked ``info`` whose draw was checked against the
        bound state (by draw_vbo, or by a wrapping context against the same
        state: the threaded context's recorded draws).  Everything that could
        make the draw fail was checked, so a draw accepted here runs."""
        if info.indirect is not None:
            self._draw_indirect(info)
            return
        if info.count_from_stream_output is not None:
            info = self._draw_auto(info)
        if info.count == 0 or info.instance_count == 0:
            return
        if not self._render_condition_passes():
            return
        shaders = self._shaders
        gs = shaders[ShaderType.GEOMETRY]
        tes = shaders[ShaderType.TESS_EVAL]
        if self._rast.state.rasterizer_discard and not self._counting:
            last = gs if gs is not None else tes if tes is not None else shaders[ShaderType.VERTEX]
            if last.so is None or not any(t is not None for t in self._so_targets):
                return  # (nothing to write, nothing to count)
        index_data = None
        if info.index_size:
            if isinstance(info.index, Resource):
                index_data = info.index.storage
            else:  # user indices: the draw runs later, the caller may reuse them
                index_data = _user_bytes(info.index, "info.index").copy()
        kind = kind_of(info.mode, gs is not None, None if tes is None else tes.tess_output)
        draw = self._queued_draw(info, index_data, kind)
        self.stats["draws"] += 1
        if self._draws.add(draw) or not self.batch_draws:
            self._run_draws()

    def _draw_indirect(self, info: DrawInfo) -> None:
        """An indirect draw: its commands are read now, after every earlier
        call that writes their buffers (as llvmpipe's util_draw_indirect maps
        them), and drawn as the draws they describe (gallium/draw/indirect.py)."""
        ind = info.indirect
        self._sync_resource(ind.buffer, False, "indirect draw")
        count_word = None
        if ind.indirect_draw_count is not None:
            self._sync_resource(ind.indirect_draw_count, False, "indirect draw count")
            count_word = ind.indirect_draw_count.storage
        limit = self.support.max_draw_vertices
        for sub in indirect_commands(info, ind.buffer.storage, count_word, limit):
            self._apply_draw_vbo(sub)

    def _draw_auto(self, info: DrawInfo) -> DrawInfo:
        """Resolve a draw from stream output (draw_auto): its count is the
        target's bytes written divided by vertex buffer 0's stride, as the draw
        module resolves it, after every queued draw has written."""
        target = info.count_from_stream_output
        if target.resource in self._queued:
            self._run_draws()
        vb = self._vbufs.get(0)
        stride = vb.stride if vb is not None else 0
        out = copy.copy(info)
        out.count = target.internal_offset // stride if stride else 0
        out.count_from_stream_output = None
        limit = self.support.max_draw_vertices
        if limit and out.count * out.instance_count > limit:
            raise UnsupportedError(
                f"numpipe draws at most {limit:,} vertices a call (a draw from "
                f"stream output of {out.count:,} vertices x {out.instance_count:,} instances)"
            )
        return out

    # -- the state a queued draw keeps (see gallium/draw/pipeline.py) -------------
    #
    # Each part is made when a draw needs it after the state behind it changed
    # (the setter drops it: ``self._snap[name] = None``), then shared by the
    # draws until the next change.  A part that reads a resource's storage
    # also records (resource, storage) pairs: a threaded context's buffer
    # invalidation swaps storage without a state call, and a draw after it
    # must not see the old bytes.  ``_queued`` holds every resource the
    # queued draws read or write, so that a map or write of one of them runs
    # the queue first.

    def _queued_draw(self, info: DrawInfo, index_data: Any, kind: str) -> Draw:
        snap = self._snap
        deps = self._snap_deps
        if deps:
            for name in [
                n for n, pairs in deps.items() if any(r.storage is not s for r, s in pairs)
            ]:
                snap[name] = None
                del deps[name]
        if self._queued_epoch != self._draws_epoch:  # the queue ran: register again
            self._queued_epoch = self._draws_epoch
            for resources in self._snap_resources.values():
                self._queued.update(resources)
        make = self._make_part
        prog = snap["program"]
        if prog is None:
            prog = make("program")
        buffers = snap["vbufs"]
        if buffers is None:
            buffers = make("vbufs")
        consts = snap["vconsts"]
        if consts is None:
            consts = make("vconsts")
        gs_consts = _NO_CONSTS
        if kind == GEOMETRY:
            gs_consts = snap["gconsts"]
            if gs_consts is None:
                gs_consts = make("gconsts")
        frag = snap["frag"]
        if frag is None:
            frag = make("frag")
        viewport = snap["viewport"]
        if viewport is None:
            viewport = make("viewport")
        region = snap["region"]
        if region is None:
            region = make("region")
        if info.index_size and isinstance(info.index, Resource):
            self._queued.add(info.index)
        tess_consts = _NO_TESS_CONSTS
        if prog.tess is not None:
            tc = snap["tcconsts"]
            if tc is None:
                tc = make("tcconsts")
            te = snap["teconsts"]
            if te is None:
                te = make("teconsts")
            tess_consts = (tc, te)
        so = None
        if prog.so_info is not None and self._so_targets:
            so = snap["so"]
            if so is None:
                so = make("so")
        viewports = regions = dranges = None
        if prog.viewport_out is not None:  # (viewport arrays: gallium/draw/layers.py)
            viewports = snap["viewports"]
            if viewports is None:
                viewports = make("viewports")
            regions = snap["regions"]
            if regions is None:
                regions = make("regions")
            dranges = snap["dranges"]
            if dranges is None:
                dranges = make("dranges")
        return Draw(
            info, index_data, prog, buffers, consts, gs_consts, viewport, region, frag,
            self._counting, kind, so, tess_consts, viewports, regions, dranges or None,
        )  # fmt: skip

    def _invalidate(self, *names: str) -> None:
        snap = self._snap
        for name in names:
            snap[name] = None
            self._snap_deps.pop(name, None)
            self._snap_resources.pop(name, None)

    def _make_part(self, name: str) -> Any:
        resources: list[Any] = []
        deps: list[tuple[Any, Any]] = []
        part = getattr(self, "_part_" + name)(resources, deps)
        self._snap[name] = part
        if deps:
            self._snap_deps[name] = deps
        if resources:
            self._snap_resources[name] = resources
            self._queued.update(resources)
        return part

    def _part_program(self, resources: list, deps: list) -> VertexProgram:
        vs = self._shaders[ShaderType.VERTEX]
        gs = self._shaders[ShaderType.GEOMETRY]
        fs = self._shaders[ShaderType.FRAGMENT]
        tes = self._shaders[ShaderType.TESS_EVAL]
        rast = self._rast.state
        last = gs if gs is not None else tes if tes is not None else vs
        link, sprite, poly = self._link_program(last, fs)
        ucps = tuple(tuple(self._clip.ucp[i]) for i in range(8) if rast.clip_plane_enable >> i & 1)
        vtex, vkey = self._stage_textures(ShaderType.VERTEX, resources, deps)
        gtex, gkey = (
            self._stage_textures(ShaderType.GEOMETRY, resources, deps) if gs else (None, ())
        )

        tess = None
        tkey: tuple = ()
        tcs = self._shaders[ShaderType.TESS_CTRL] if tes is not None else None
        if tes is not None:
            from ..draw.tess import TessState

            tctex, tckey = self._stage_textures(ShaderType.TESS_CTRL, resources, deps)
            tetex, tekey = self._stage_textures(ShaderType.TESS_EVAL, resources, deps)
            tcmem, tcmkey = self._stage_memory(ShaderType.TESS_CTRL, tcs, resources, deps)
            temem, temkey = self._stage_memory(ShaderType.TESS_EVAL, tes, resources, deps)
            tess = TessState(tcs, tes, *self._tess_levels, tctex, tetex, tcmem, temem)
            tkey = (id(tcs), id(tes), self._tess_levels, tckey, tekey, tcmkey, temkey)
        vmem, vmkey = self._stage_memory(ShaderType.VERTEX, vs, resources, deps)
        gmem, gmkey = self._stage_memory(ShaderType.GEOMETRY, gs, resources, deps)
        tkey += (vmkey, gmkey)
        memory_writes = any(cso is not None and cso.writes_memory for cso in (vs, gs, tcs, tes))
        # (by identity: CSOs compare by value, and the program keeps them alive)
        multisample = bool(rast.multisample) and _fb_samples(self._fb) > 1
        key = (id(vs), id(gs), id(self._velems), id(self._rast), ucps, link, sprite)
        key += (vkey, gkey, multisample, tkey, poly["offset"])
        prog = self._programs.get(key)
        if prog is None:
            if len(self._programs) >= 256:
                self._programs.clear()
            prog = self._programs[key] = VertexProgram(
                vs=vs,
                gs=gs,
                elements=tuple(self._velems.elements) if self._velems is not None else (),
                rast=rast,
                cull_front=self._rast.cull_front,
                cull_back=self._rast.cull_back,
                ucps=ucps,
                link=link,
                sprite=sprite,
                vs_textures=vtex,
                gs_textures=gtex,
                max_point_size=MAX_POINT_WIDTH,
                max_line_width=MAX_LINE_WIDTH,
                keep=(self._velems, self._rast),
                multisample=multisample,
                so_info=last.so,
                tess=tess,
                vs_memory=vmem,
                gs_memory=gmem,
                memory_writes=memory_writes,
                **poly,
                layer_out=last.kernel.output_index("LAYER"),
                viewport_out=last.kernel.output_index("VIEWPORT_INDEX"),
            )
        return prog

    def _link_program(self, last: Any, fs: Any) -> tuple:
        """(the linkage of ``last``'s outputs to the fragment shader's inputs
        as a tuple, the sprite slots, the polygon fields of the program) for
        the bound rasterizer and depth format; remembered until the scene is
        submitted (the entry holds the objects its key names by identity)."""
        rcso = self._rast
        zs = self._fb.zsbuf
        zs_format = None if zs is None else zs.format
        key = (id(last), id(fs), id(rcso), zs_format)
        hit = self._linkage.get(key)
        if hit is not None and hit[0] is last and hit[1] is fs and hit[2] is rcso:
            return hit[3]
        rast = rcso.state
        if fs is not None:
            _, link = link_outputs(last.kernel.output_decls, fs.kernel, rast.flatshade)
            sprite = sprite_slots(fs.kernel, rast)
        else:  # (rasterizer discard: nothing is linked)
            link, sprite = [], ()
        poly = polygon_program(rast, last.kernel, link, rcso.pipeline, self._zs_desc())
        out = (tuple(link), sprite, poly)
        if len(self._linkage) >= 64:
            self._linkage.clear()
        self._linkage[key] = (last, fs, rcso, out)
        return out

    def _zs_desc(self) -> Any:
        zs = self._fb.zsbuf
        return try_describe(zs.format) if zs is not None else None

    def _stage_textures(self, stage: ShaderType, resources: list, deps: list) -> tuple:
        """(TextureBindings of a stage or None, a key that identifies them)."""
        views = self._views.get(stage, [])
        samplers = self._samplers.get(stage, [])
        resident = self._resident_tex
        if not views and not samplers and not resident:
            return None, ()
        for v in [*views, *(view for view, _ in resident.values())]:
            if v is not None:
                resources.append(v.texture)
                deps.append((v.texture, v.texture.storage))
        key = (
            tuple((id(v), id(v.texture.storage)) if v is not None else None for v in views),
            tuple(id(s) for s in samplers),
            tuple((h, id(v), id(v.texture.storage)) for h, (v, _) in resident.items()),
        )
        return self._texture_bindings(stage), key

    def _part_so(self, resources: list, deps: list) -> Any:
        """The bound stream output targets and the storage each writes."""
        from ..draw.so import Binding

        storages = []
        for t in self._so_targets:
            if t is None:
                storages.append(None)
                continue
            resources.append(t.resource)
            deps.append((t.resource, t.resource.storage))
            storages.append(t.resource.storage)
        if not resources:
            return None
        return Binding(self._so_targets, tuple(storages))

    def _before_pipeline_write(self, resources: list) -> None:
        """The draw pipeline is about to write or read ``resources`` (stream
        output, shader memory): rasterization that uses them goes first (see
        Binner.accessing)."""
        scene = self._scene
        if scene is not None and any(r in scene.resources for r in resources):
            self._submit_scene()
        for r in resources:
            for f in r.pending_fences():
                f.wait(None)

    def _stage_memory(self, stage: ShaderType, cso: Any, resources: list, deps: list) -> tuple:
        """(the stage's StageMemory or None, a key that identifies it): the
        shader buffers and images bound to ``stage``, when its program
        declares any."""
        if cso is None or not cso.declares_memory:
            return None, ()
        buffers = dict(self._ssbos.get(stage, {}))
        images = dict(self._images.get(stage, {}))
        for res in [b.buffer for b in buffers.values()] + [v.resource for v in images.values()]:
            resources.append(res)
            deps.append((res, res.storage))
        key = (
            tuple((slot, id(b), id(b.buffer.storage)) for slot, b in sorted(buffers.items())),
            tuple((slot, id(v), id(v.resource.storage)) for slot, v in sorted(images.items())),
        )
        return StageMemory.capture(buffers, images), key

    def _part_vbufs(self, resources: list, deps: list) -> dict:
        out = {}
        for slot, vb in self._vbufs.items():
            buf = vb.buffer
            if isinstance(buf, Resource):
                resources.append(buf)
                deps.append((buf, buf.storage))
                data = buf.storage
            else:
                data = buf
            out[slot] = BoundVertexBuffer(data, vb.stride, vb.buffer_offset)
        return out

    def _stage_consts(self, stage: ShaderType, resources: list, deps: list) -> tuple:
        for res, _ in self._constbufs.get(stage, {}).values():
            if res is not None:
                resources.append(res)
                deps.append((res, res.storage))
        return tuple(self._const_arrays(stage))

    def _part_vconsts(self, resources: list, deps: list) -> tuple:
        return self._stage_consts(ShaderType.VERTEX, resources, deps) or _NO_CONSTS

    def _part_gconsts(self, resources: list, deps: list) -> tuple:
        return self._stage_consts(ShaderType.GEOMETRY, resources, deps) or _NO_CONSTS

    def _part_tcconsts(self, resources: list, deps: list) -> tuple:
        return self._stage_consts(ShaderType.TESS_CTRL, resources, deps) or _NO_CONSTS

    def _part_teconsts(self, resources: list, deps: list) -> tuple:
        return self._stage_consts(ShaderType.TESS_EVAL, resources, deps) or _NO_CONSTS

    def _part_viewport(self, resources: list, deps: list) -> tuple:
        vp = self._viewports[0]
        return (tuple(float(v) for v in vp.scale), tuple(float(v) for v in vp.translate))

    def _part_viewports(self, resources: list, deps: list) -> tuple:
        """The 16 viewports (a program that writes VIEWPORT_INDEX chooses among them)."""
        return tuple(
            (tuple(float(v) for v in vp.scale), tuple(float(v) for v in vp.translate))
            for vp in self._viewports
        )

    def _part_dranges(self, resources: list, deps: list) -> tuple:
        """The 16 viewports' depth ranges when depth clamping is on (the
        fragments of a program that writes VIEWPORT_INDEX clamp to their
        primitive's: Binner), else () ."""
        rast = self._rast.state
        if not depth_clip_modes(rast)[2]:
            return ()
        return tuple(
            depth_range(vp.scale[2], vp.translate[2], rast.clip_halfz) for vp in self._viewports
        )

    def _part_region(self, resources: list, deps: list) -> tuple:
        """The framebuffer, intersected with the scissor when enabled (inclusive)."""
        for s in [*self._fb.cbufs, self._fb.zsbuf]:
            if s is not None:
                resources.append(s.texture)
        return self._draw_region(0)

    def _part_regions(self, resources: list, deps: list) -> tuple:
        """The draw region of each of the 16 viewports (its own scissor)."""
        for s in [*self._fb.cbufs, self._fb.zsbuf]:
            if s is not None:
                resources.append(s.texture)
        return tuple(self._draw_region(i) for i in range(PIPE_MAX_VIEWPORTS))

    def _draw_region(self, index: int) -> tuple[int, int, int, int]:
        """Viewport ``index``'s draw region (lp_setup.c draw_regions): the
        framebuffer, intersected with scissor ``index`` when the scissor test
        is on, and the first one with viewport 0's rectangle while
        point_size_per_vertex is set (_viewport_scissor: llvmpipe does it for
        the first only).  Inclusive bounds; empty when x1 < x0 or y1 < y0."""
        fb = self._fb
        region = (0, 0, fb.width - 1, fb.height - 1)
        if self._rast.state.scissor:
            sc = self._scissors[index]
            region = (
                max(0, int(sc.minx)),
                max(0, int(sc.miny)),
                min(fb.width, int(sc.maxx)) - 1,
                min(fb.height, int(sc.maxy)) - 1,
            )
        if index == 0 and self._rast.state.point_size_per_vertex:
            region = _viewport_scissor(self._viewports[0], region)
        return region

    def _part_frag(self, resources: list, deps: list) -> FragmentSnapshot | None:
        """The fragment side of a draw: the constant buffers of the fragment
        stage on the rest (``fbase``), made apart so that a constant set per
        draw makes only this small object.  None for a rasterizer_discard
        draw without a fragment shader: nothing is shaded."""
        if self._shaders[ShaderType.FRAGMENT] is None:
            return None
        base = self._snap["fbase"]
        if base is None:
            base = self._make_part("fbase")
        slots = self._constbufs.get(ShaderType.FRAGMENT, {})
        consts: list[tuple[Any, Any]] = []
        if slots:
            consts = [(None, None)] * (max(slots) + 1)
            for idx, (res, data) in slots.items():
                if res is not None:
                    off, size = data
                    consts[idx] = (res, res.storage[off : off + size])
                    resources.append(res)
                    deps.append((res, res.storage))
                else:
                    consts[idx] = (None, data)
        # the same base and constants as a snapshot made before in this frame:
        # that one (draws switching between a few states share a few)
        key = (id(base), tuple(id(c) for _, c in consts))
        snap = self._frag_snaps.get(key)
        if snap is None or snap.base is not base:
            if len(self._frag_snaps) >= 256:
                self._frag_snaps.clear()
            snap = self._frag_snaps[key] = FragmentSnapshot(base, tuple(consts))
        return snap

    def _part_fbase(self, resources: list, deps: list) -> FragmentBase:
        """Everything of a draw's fragment side but the constants (interned:
        a frame switching between a few states has a few of these)."""
        fs = self._shaders[ShaderType.FRAGMENT]
        ftex = self._snap["ftex"]
        if ftex is None:
            ftex = self._make_part("ftex")
        textures, tkey = ftex
        memory, mkey = self._stage_memory(ShaderType.FRAGMENT, fs, resources, deps)
        counters: tuple = ()
        stat_queries: tuple = ()
        if self._active_queries:
            counters = tuple(q.counter for q in self._active_queries if q.counter is not None)
            stat_queries = tuple(
                q for q in self._active_queries if q.type == QueryType.PIPELINE_STATISTICS
            )
        rast = self._rast.state
        sample_opts = (
            self._min_samples,
            bool(rast.multisample),
            bool(rast.half_pixel_center),
            bool(rast.force_persample_interp),
        )
        raster = self._fragment_raster_state()
        key = (  # (by identity: the base keeps the objects alive)
            raster,
            id(fs),
            tkey,
            id(self._blend),
            id(self._dsa),
            self._stencil_ref,
            self._blend_color,
            self._sample_mask,
            self._window,
            sample_opts,
            tuple(id(c) for c in counters),
            tuple(id(q) for q in stat_queries),
            mkey,
        )
        base = self._frags.get(key)
        if base is None:
            if len(self._frags) >= 256:
                self._frags.clear()
            base = self._frags[key] = FragmentBase(
                fs=fs,
                fs_inputs=fs.fs_inputs,
                textures=textures,
                blend=self._blend,
                dsa=self._dsa,
                stencil_ref=self._stencil_ref,
                blend_color=self._blend_color,
                sample_mask=self._sample_mask,
                window=self._window,
                sample_opts=sample_opts,
                counters=counters,
                stat_queries=stat_queries,
                memory=memory,
                raster=raster,
            )
        return base

    def _fragment_raster_state(self) -> tuple:
        """The rasterizer state fragments see: ((depth clamp range), clamp
        fragment colours, the polygon stipple's rows or None) -- the
        viewport's depth range (within [0, 1], where llvmpipe always
        restricts depth) when depth clamping is on."""
        rast = self._rast.state
        lo, hi = 0.0, 1.0
        if depth_clip_modes(rast)[2]:
            vp = self._viewports[0]
            lo, hi = depth_range(vp.scale[2], vp.translate[2], rast.clip_halfz)
        stipple = self._stipple if rast.poly_stipple_enable else None
        return ((lo, hi), bool(rast.clamp_fragment_color), stipple)

    def _part_ftex(self, resources: list, deps: list) -> tuple:
        """The fragment stage's texture bindings and their key (see _stage_textures)."""
        return self._stage_textures(ShaderType.FRAGMENT, resources, deps)

    def _const_arrays(self, stage: ShaderType) -> list[Any]:
        """The stage's constant buffers as byte arrays (None for an empty slot)."""
        slots = self._constbufs.get(stage, {})
        if not slots:
            return []
        out: list[Any] = [None] * (max(slots) + 1)
        for idx, (res, data) in slots.items():
            if res is not None:
                off, size = data
                out[idx] = res.storage[off : off + size]
            else:
                out[idx] = data
        return out

    def _texture_bindings(self, stage: ShaderType) -> Any:
        from .sampler import TextureBindings

        return TextureBindings.capture(
            self._views.get(stage, []),
            self._samplers.get(stage, []),
            list(self._resident_tex.items()),
        )

    def _run_draws(self) -> None:
        """Run the queued draws (their set-up primitives go into the scene).

        A draw that fails here (a shader fault: everything an application
        controls was checked when the draw was queued) is kept as a driver
        error, raised at the next sync point with a device reset reported;
        the other draws still draw.
        """
        if not self._draws.queue:
            return
        self._draws_epoch += 1
        self._queued.clear()
        self._binner.epoch += 1
        passes = self._draws.stats["passes"]
        for exc in self._draws.run():
            self.record_error(exc, "the draw pipeline")
        self.stats["draw_passes"] += self._draws.stats["passes"] - passes

    # ------------------------------------------------------------------ flush and sync

    def _submit_scene(self) -> Fence:
        self._run_draws()
        # equal states are interned within a frame; a new frame starts afresh
        # (an old snapshot must not keep a replaced storage or texture alive)
        self._programs.clear()
        self._linkage.clear()
        self._frags.clear()
        self._frag_snaps.clear()
        self._binner.end_scene()
        scene = self._scene
        if scene is None or scene.empty:
            self._scene = None
            return self._last_fence
        self._scene = None
        scene.finish_recording()
        seq = scene.seq  # type: ignore[attr-defined]
        scene.on_complete.append(self._scene_done)
        for res in scene.resources:
            res.add_pending(scene.fence)
        scene.fence.set_error_source(lambda s=seq: self.take_error(upto=s))
        self.stats["scenes"] += 1
        prev = self._last_fence
        self._last_fence = scene.fence
        for q in list(self._pending_query_scenes(scene)):
            q.fence = scene.fence
            q.pending_scene = None
        self.screen.pool.submit(SceneJob(scene), after=prev)
        return scene.fence

    def _pending_query_scenes(self, scene: Scene):
        return [q for q in getattr(scene, "queries", [])]

    def _scene_done(self, scene: Scene) -> None:
        if scene.errors:
            self._job_failed(scene.seq, scene.errors)  # type: ignore[attr-defined]

    def _job_failed(self, seq: int, errors: list[BaseException]) -> None:
        """A scene or grid failed: one fault, reported once at the next sync point.

        Its first error is what the application sees; the others of the same
        job (more bands of the same scene, say) are named in a note on it,
        not raised again at later sync points or by destroy().
        """
        first, rest = errors[0], errors[1:]
        if rest:
            more = "; ".join(f"{type(e).__name__}: {e}" for e in rest[:3])
            first.add_note(
                f"numpipe: {len(rest)} more unit(s) of the same work failed: {more}"
                + ("; ..." if len(rest) > 3 else "")
            )
        with self._lock:
            self._errors.append((seq, first))
            self._mark_reset_locked()

    def _mark_reset_locked(self) -> None:
        """A fault happened (caller holds the lock): a reset to report.

        Only faults get here -- an exception on a worker, in a band process or
        on a wrapping frontend's driver thread; bad arguments raise at the
        call.  The callback fires once per reset episode: from the first
        fault's report until the application reads
        ``get_device_reset_status``, more faults add to the same reset
        instead of announcing new ones.
        """
        self._reset_status = ResetStatus.GUILTY_CONTEXT_RESET
        if not self._reset_announced:
            self._reset_pending_callback = True

    def take_error(self, upto: int | None = None) -> BaseException | None:
        """Remove and return the oldest unreported error (of scenes up to ``upto``).

        Fires the reset callback first if this error starts a reset to
        announce; a callback that raises never replaces the error (its
        exception is attached to the error as a note and logged).
        """
        with self._lock:
            found = next(
                (i for i, (seq, _) in enumerate(self._errors) if upto is None or seq <= upto),
                None,
            )
            if found is None:
                return None
            _, err = self._errors.pop(found)
        self._fire_reset_callback(err)
        return err

    _take_error = take_error

    def _fire_reset_callback(self, err: BaseException) -> None:
        cb = None
        with self._lock:
            if self._reset_pending_callback and self._reset_callback is not None:
                cb = self._reset_callback
                self._reset_pending_callback = False
                self._reset_announced = True
        if cb is None:
            return
        try:
            cb(ResetStatus.GUILTY_CONTEXT_RESET)
        except Exception as exc:
            err.add_note(f"numpipe: the device reset callback raised {type(exc).__name__}: {exc}")
            _log.exception("the device reset callback raised; the reset's error is still reported")

    def record_error(self, exc: BaseException, where: str) -> None:
        """Keep a fault raised on a thread other than the application's (a
        wrapping frontend's driver thread): a reset, reported at the next sync."""
        add_origin_note(exc, where)
        with self._lock:
            self._errors.append((self._scene_seq, exc))
            self._mark_reset_locked()

    def raise_pending_error(self) -> None:
        """Raise the oldest error not yet reported (a sync point).

        A no-op on the driver thread of a threaded context: there the error
        stays recorded until the application reaches a sync point.
        """
        if self.driver_thread_id == threading.get_ident():
            return
        err = self.take_error()
        if err is not None:
            raise err

    def flush(self, flags: int = 0) -> Fence:
        """Submit recorded work; return a fence signalled when it completes."""
        flags = checks.check_flush_flags(flags)
        self._check_alive()
        self.raise_pending_error()
        fence = self._submit_scene()
        return fence

    def flush_resource(self, resource: Resource) -> None:
        self._check_alive()
        self._apply_flush_resource(checks.check_resource("resource", resource))

    def _apply_flush_resource(self, resource: Resource) -> None:
        """(Nothing to resolve: no compression, no multisampling.)"""

    def texture_barrier(self, flags: int = 0) -> None:
        self._check_alive()
        self._apply_texture_barrier(checks.check_barrier_flags(flags))

    def _apply_texture_barrier(self, flags: int) -> None:
        self._submit_scene()

    def memory_barrier(self, flags: int) -> None:
        """Make shader stores before the barrier visible to what ``flags``
        name after it.  Later shaders' loads (scenes run in order) and maps
        (they wait for the scenes that use a resource) need the work submitted;
        what the draw pipeline reads on this thread -- vertex, index, constant
        and indirect buffers, stream output targets -- needs it done."""
        self._check_alive()
        self._apply_memory_barrier(checks.check_barrier_flags(flags))

    def _apply_memory_barrier(self, flags: int) -> None:
        fence = self._submit_scene()
        if flags & _PIPELINE_READS:
            fence.wait(None)

    def _uses_resource(self, resource: Resource) -> bool:
        return resource in self._queued or (
            self._scene is not None and resource in self._scene.resources
        )

    def _sync_resource(
        self, resource: Resource, write: bool, reason: str, dontblock: bool = False
    ) -> bool:
        """Wait until no submitted or recorded work uses ``resource``.

        With ``dontblock`` it waits for nothing: if it would, it returns False
        (having submitted the recorded work that uses the resource, so that
        the work progresses and a later try succeeds).
        """
        return Fence.run(self._sync_steps(resource, dontblock))

    def _sync_steps(self, resource: Resource, dontblock: bool = False):
        """``_sync_resource`` as steps: yields the fences to wait for."""
        if self._uses_resource(resource):
            self._run_draws()  # (the draws may not touch it: then the scene need not go)
            if self._scene is not None and resource in self._scene.resources:
                self._submit_scene()
                if dontblock:
                    return False
        fences = resource.pending_fences()
        if fences:
            if dontblock:
                return False
            yield from fences
        self.raise_pending_error()
        return True

    def _map_steps(self, resource: Any, level: Any, usage: Any, box: Any):
        """transfer_map as steps (blocking or awaited: Fence.run / Fence.run_async)."""
        self._check_alive()
        resource, level, usage, box = checks.check_transfer_map(resource, level, usage, box)
        if not usage & Transfer.UNSYNCHRONIZED:
            dontblock = bool(usage & Transfer.DONTBLOCK)
            if not (yield from self._sync_steps(resource, dontblock)):
                return None, None
        return self._apply_transfer_map(resource, level, usage, box)

    def transfer_map(
        self, resource: Resource, level: int, usage: int, box: Box
    ) -> tuple[np.ndarray | None, TransferObject | None]:
        """Map a box of a resource; returns (data, transfer), or (None, None)
        for a DONTBLOCK map of a resource in use."""
        return Fence.run(self._map_steps(resource, level, usage, box))

    async def transfer_map_async(self, resource: Resource, level: int, usage: int, box: Box):
        """``transfer_map`` awaiting the work that uses the resource (asyncio or trio)."""
        return await Fence.run_async(self._map_steps(resource, level, usage, box))

    def _apply_transfer_map(self, resource: Resource, level: int, usage: Transfer, box: Box):
        """The mapping itself: no check, no synchronisation (any thread)."""
        store = resource.storage
        if resource.is_buffer:
            data = store[box.x : box.x + box.width]
            xfer = TransferObject(
                resource, level, usage, copy.copy(box), box.width, box.width, data, context=self
            )
            return data, xfer
        lay = resource.level_layout(level)
        full = resource.level_view(level, box.z, box.depth, storage=store)
        data = full[:, box.y : box.y + box.height, box.x : box.x + box.width]
        xfer = TransferObject(
            resource,
            level,
            usage,
            copy.copy(box),
            lay.row_stride,
            lay.layer_stride,
            data,
            context=self,
        )
        return data, xfer

    def transfer_flush_region(self, transfer: TransferObject, box: Box) -> None:
        checks.check_flush_region(transfer, box)

    def transfer_unmap(self, transfer: TransferObject) -> None:
        self._apply_transfer_unmap(checks.check_transfer(transfer))

    def _apply_transfer_unmap(self, transfer: TransferObject) -> None:
        """The driver's side of an unmap (any thread): the written bytes are valid."""
        res = transfer.resource
        if res.is_buffer and transfer.usage & Transfer.WRITE:
            res.mark_valid(transfer.box.x, transfer.box.x + transfer.box.width)

    def buffer_subdata(self, resource: Resource, usage: int, offset: int, data: Any) -> None:
        """Write ``data`` into a buffer at ``offset`` (map + copy + unmap in one)."""
        self._check_alive()
        usage, offset, raw = checks.check_subdata(resource, usage, offset, data)
        if raw.size:
            self._apply_buffer_subdata(resource, usage, offset, raw)

    def _apply_buffer_subdata(
        self, resource: Resource, usage: Transfer, offset: int, raw: np.ndarray
    ) -> None:
        """Write checked bytes; without UNSYNCHRONIZED, after the work using the
        buffer (with it: at once, from any thread)."""
        if not usage & Transfer.UNSYNCHRONIZED:
            self._sync_resource(resource, True, "buffer_subdata")
        resource.storage[offset : offset + raw.size] = raw
        resource.mark_valid(offset, offset + raw.size)

    def texture_subdata(
        self,
        resource: Resource,
        level: int,
        usage: int,
        box: Box,
        data: Any,
        stride: int = 0,
        layer_stride: int = 0,
    ) -> None:
        self._check_alive()
        self._apply_texture_subdata(
            *checks.check_texture_subdata(resource, level, usage, box, data, stride, layer_stride)
        )

    def _apply_texture_subdata(
        self,
        resource: Resource,
        level: int,
        usage: Transfer,
        box: Box,
        raw: np.ndarray,
        stride: int,
        layer_stride: int,
    ) -> None:
        if not usage & Transfer.UNSYNCHRONIZED:
            self._sync_resource(resource, True, "texture_subdata")
        bb = resource.block_bytes
        row = box.width * bb
        src = np.lib.stride_tricks.as_strided(
            raw, shape=(box.depth, box.height, row), strides=(layer_stride, stride, 1)
        )
        view = resource.level_view(level, box.z, box.depth)
        view[:, box.y : box.y + box.height, box.x : box.x + box.width] = src.reshape(
            box.depth, box.height, box.width, bb
        )

    def invalidate_resource(self, resource: Resource) -> None:
        self._check_alive()
        self._apply_invalidate_resource(checks.check_resource("resource", resource))

    def _apply_invalidate_resource(self, resource: Resource) -> None:
        """(A hint: the contents may be dropped.  numpipe keeps them.)"""

    def _apply_replace_buffer_storage(self, dst: Resource, src: Resource) -> None:
        """Give ``dst`` the storage of ``src`` (a frontend's buffer invalidation;
        Mesa's replace_buffer_storage).  Work that captured the old storage
        keeps it."""
        dst.replace_storage(src.storage)

    def is_resource_referenced(self, resource: Resource, level: int = 0, layer: int = 0) -> int:
        checks.check_resource("resource", resource)
        if self._uses_resource(resource):
            return 3  # PIPE_REFERENCED_FOR_READ | WRITE
        return 3 if resource.busy else 0

    # ------------------------------------------------------------------ queries

    def create_query(self, query_type: QueryType, index: int = 0) -> Query:
        return objects.make_query(query_type, index, self, self.support)

    def destroy_query(self, query: Query) -> None:
        self._apply_destroy_query(checks.destroy_query(query))

    def _apply_destroy_query(self, query: Query) -> None:
        if query in self._begun_queries:
            self._begun_queries.remove(query)
        if query in self._active_queries:
            self._active_queries.remove(query)
            self._queries_changed()

    def begin_query(self, query: Query) -> bool:
        self._check_alive()
        self._apply_begin_query(checks.begin_query(query))
        return True

    def _apply_begin_query(self, query: Query) -> None:
        if counting_queries([query]):
            self._run_draws()  # queued draws may still count into its last interval
        query.fence = None
        query.pending_scene = None
        query.stats = objects.PipelineStatistics()
        query.primitives = 0
        query.so_generated = [0, 0, 0, 0]
        query.so_written = [0, 0, 0, 0]
        if query.type in (
            QueryType.OCCLUSION_COUNTER,
            QueryType.OCCLUSION_PREDICATE,
            QueryType.OCCLUSION_PREDICATE_CONSERVATIVE,
        ):
            query.counter = OcclusionCounter()
        if query.type == QueryType.TIME_ELAPSED:
            query.begin_marker = self._time_marker()  # type: ignore[attr-defined]
        self._begun_queries.append(query)
        if not self._queries_paused or query.type == QueryType.TIME_ELAPSED:
            self._active_queries.append(query)
            self._queries_changed()

    def _queries_changed(self) -> None:
        self._counting = counting_queries(self._active_queries)
        self._snap["fbase"] = self._snap["frag"] = None  # (counters, statistics queries)

    def end_query(self, query: Query) -> bool:
        self._check_alive()
        self._apply_end_query(checks.end_query(query))
        return True

    def _apply_end_query(self, query: Query) -> None:
        if query in self._begun_queries:
            self._begun_queries.remove(query)
        if query in self._active_queries:
            self._active_queries.remove(query)
            self._queries_changed()
        if query.type in (QueryType.TIMESTAMP, QueryType.TIME_ELAPSED):
            query.end_marker = self._time_marker()  # type: ignore[attr-defined]
        if self._draws.queue:  # their primitives go into the current scene
            if self._fb.width <= 0 or self._fb.height <= 0:
                self._run_draws()  # (rasterizer_discard draws: no scene to hold them)
            else:
                self._current_scene()
        if self._scene is not None and (not self._scene.empty or self._draws.queue):
            if not hasattr(self._scene, "queries"):
                self._scene.queries = []  # type: ignore[attr-defined]
            self._scene.queries.append(query)  # type: ignore[attr-defined]
            query.pending_scene = self._scene
            query.fence = None
        else:
            query.pending_scene = None
            query.fence = self._last_fence

    def _time_marker(self) -> Any:
        """A timestamp marker after everything recorded so far.

        In a scene it is a marker command (stamped by every band); without a
        framebuffer to build a scene on, the marker stamps when the previous
        scene completes.
        """
        self._run_draws()  # the marker comes after them
        if self._scene is not None or (self._fb.width > 0 and self._fb.height > 0):
            return self._current_scene().add_marker(self.screen.get_timestamp)
        marker = _FenceMarker(self.screen.get_timestamp)
        self._last_fence.add_done_callback(marker.stamp)
        return marker

    def query_fence(self, query: Query) -> Fence:
        """The fence after which the query's result is final (flushes if needed)."""
        if query.pending_scene is not None:
            if query.pending_scene is self._scene:
                self._submit_scene()
        fence = query.fence
        if fence is None:
            fence = self._last_fence
        return fence

    def get_query_result(self, query: Query, wait: bool = True) -> tuple[bool, Any]:
        """``(True, value)`` once the result is known; ``(False, None)`` if not
        ready and ``wait`` is false."""
        self._check_alive()
        return self._query_result(checks.check_query_result(query), wait)

    def _query_result(self, query: Query, wait: bool) -> tuple[bool, Any]:
        fence = self.query_fence(query)
        if not fence.signalled:
            if not wait:
                return False, None
            fence.wait(None)
        else:
            self.raise_pending_error()
        return True, query.result()

    def get_query_result_resource(
        self,
        query: Query,
        wait: bool,
        result_type: int,
        index: int,
        resource: Resource,
        offset: int,
    ) -> None:
        """Write a query's result into a buffer, in command order (later
        draws, copies and maps see it).  ``index`` -1 writes whether the
        result is available (1 or 0); otherwise the value (for a query of
        several values, the ``index``-th), only when available -- after
        waiting for it when ``wait``.  The value is clamped to the
        ``result_type`` (llvmpipe's rules)."""
        self._check_alive()
        self._apply_get_query_result_resource(
            *checks.check_query_result_resource(query, wait, result_type, index, resource, offset)
        )

    def _apply_get_query_result_resource(
        self,
        query: Query,
        wait: bool,
        result_type: Any,
        index: int,
        resource: Resource,
        offset: int,
    ) -> None:
        fence = self.query_fence(query)
        if wait and not fence.signalled:
            fence.wait(None)
        ready = fence.signalled
        if index == -1:
            value = int(ready)
        elif not ready:
            return
        else:
            value = objects.query_value(query, index)
        data = objects.pack_query_value(value, result_type)
        self._sync_resource(resource, True, "get_query_result_resource")
        resource.storage[offset : offset + data.size] = data
        resource.mark_valid(offset, offset + data.size)

    async def get_query_result_async(self, query: Query) -> Any:
        """Await the query's result (asyncio or trio)."""
        fence = self.query_fence(checks.check_query_result(query))
        await fence
        return self.get_query_result(query, wait=True)[1]

    def render_condition(
        self, query: Query | None, condition: bool = False, mode: int = RenderCond.WAIT
    ) -> None:
        self._check_alive()
        self._apply_render_condition(*checks.check_render_condition(query, condition, mode))

    def _apply_render_condition(self, query: Query | None, condition: bool, mode: Any) -> None:
        self._render_cond = (query, condition, mode)

    def set_active_query_state(self, enable: bool) -> None:
        """Pause (False) or resume (True) every begun query but TIME_ELAPSED ones."""
        self._check_alive()
        self._apply_active_query_state(checks.check_bool("enable", enable))

    def _apply_active_query_state(self, enable: bool) -> None:
        if self._queries_paused == (not enable):
            return
        self._run_draws()  # the draws queued so far count (or not) as they were recorded
        self._queries_paused = not enable
        self._active_queries = [
            q for q in self._begun_queries if enable or q.type == QueryType.TIME_ELAPSED
        ]
        self._queries_changed()

    # ------------------------------------------------------------------ misc

    def get_device_reset_status(self) -> ResetStatus:
        with self._lock:
            status = self._reset_status
            self._reset_status = ResetStatus.NO_RESET
            self._reset_announced = False  # the next fault is a new reset
        return status

    def set_device_reset_callback(self, callback: Callable[[ResetStatus], None] | None) -> None:
        self._reset_callback = checks.check_callable("callback", callback, none_ok=True)

    def generate_mipmap(
        self,
        resource: Resource,
        format: Format,
        base_level: int,
        last_level: int,
        first_layer: int,
        last_layer: int,
    ) -> bool:
        """Fill levels base_level+1..last_level from the level above each, as
        llvmpipe does (util_gen_mipmap: a LINEAR blit per level); False when
        the format cannot be filtered and written (integer, stencil-only)."""
        from ..pipe.blit import mipmap_blits

        self._check_alive()
        blits = mipmap_blits(
            resource, format, base_level, last_level, first_layer, last_layer, self.screen
        )
        if blits is None:
            return False
        self._generate_mipmap(blits)
        return True

    def clear_texture(self, resource: Resource, level: int, box: Box, data: Any) -> None:
        """Fill ``box`` of a level with one texel in the resource's format
        (util_clear_texture's conversions), in order with the work before it."""
        from ..pipe.blit import check_clear_texture

        self._check_alive()
        self._clear_texture(check_clear_texture(resource, level, box, data))

    def _clear_texture(self, clear: Any) -> None:
        from .blit import ClearTextureJob

        self._submit_job(ClearTextureJob(clear), clear.resources)

    def _generate_mipmap(self, blits: list) -> None:
        """Run generate_mipmap's validated blits (the threaded context records this)."""
        for b in blits:
            self._blit(b)

    def blit(self, info: Any) -> None:
        """Blit a box of one texture into a box of another (context.rst "Blitting"),
        as llvmpipe does it: see gallium/numpipe/blit.py."""
        from ..pipe.blit import check_blit_info

        self._check_alive()
        self._blit(check_blit_info(info, self.screen))

    def _blit(self, b: Any) -> None:
        """Run a validated blit (blit.check_blit_info) in order with the work
        recorded before it; the threaded context records this call."""
        from .blit import BlitJob, CopyJob, plan_blit

        if b.kind == "none":
            return
        if b.render_condition and not self._render_condition_passes():
            return
        if b.kind == "copy":
            job: Any = CopyJob(b)
        else:
            plan = plan_blit(b)
            if plan is None:
                return
            job = BlitJob(plan)
        self._submit_job(job, b.resources)

    def _submit_job(self, job: Any, resources: Sequence[Resource]) -> None:
        """Queue a worker-pool job that reads and writes ``resources`` after
        everything recorded before it (blit.py, "Ordering")."""
        if any(r in self._queued for r in resources):
            self._run_draws()  # queued draws use them: their primitives go to the scene first
        scene = self._scene
        if scene is not None and any(r in scene.resources for r in resources):
            self._submit_scene()
        deps = [self._last_fence]
        for r in resources:
            deps += r.pending_fences()
        after = deps[0] if len(deps) == 1 else Fence.all_of(deps)
        seq = self._scene_seq
        job.seq = seq
        job.on_complete.append(self._scene_done)
        for r in resources:
            r.add_pending(job.fence)
        job.fence.set_error_source(lambda s=seq: self.take_error(upto=s))
        self._last_fence = job.fence
        self.screen.pool.submit(job, after=after)

    def emit_string_marker(self, string: str) -> None:
        self._check_alive()
        self._apply_emit_string_marker(checks.check_string_marker(string))

    def _apply_emit_string_marker(self, string: str) -> None:
        """(No trace to write it into.)"""

    def _apply_delete_state(self, cso: Any) -> None:
        """The driver's side of destroy_*_state (nothing to free: Python owns the CSO)."""

    def callback(self, fn: Callable[[Any], None], data: Any = None, asap: bool = False) -> None:
        """Run ``fn(data)`` now (pipe_context::callback; the threaded context queues it)."""
        self._check_alive()
        checks.check_callable("fn", fn)(data)

    def wait_idle(self, timeout_ns: int = PIPE_TIMEOUT_INFINITE) -> bool:
        return self.flush().finish(timeout_ns)


class _FenceMarker:
    """A timestamp taken when a fence signals (markers outside any scene)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.time_ns = 0

    def stamp(self) -> None:
        self.time_ns = self.clock()


def _clear_zs_box(target: Any, sl: tuple, clear_flags: int, depth: float, stencil: int) -> None:
    """clear_depth_stencil on one layer's rectangle ``sl``."""
    from ..util.format import depth_to_word

    layout = target.layout
    if layout.split:
        if clear_flags & Clear.DEPTH:
            target.words[sl] = np.float32(depth)
        if clear_flags & Clear.STENCIL and target.stencil is not None:
            target.stencil[sl] = stencil & 0xFF
        return
    words = target.words[sl]
    if layout.z_float:
        if clear_flags & Clear.DEPTH:
            words[...] = np.float32(depth)
        return
    value = words.astype(np.uint64)
    if clear_flags & Clear.DEPTH and layout.z_bits:
        z = int(depth_to_word(layout, np.float32(depth)))
        value = (value & ~np.uint64(layout.z_mask)) | np.uint64(z)
    if clear_flags & Clear.STENCIL and layout.s_bits:
        s = (int(stencil) & ((1 << layout.s_bits) - 1)) << layout.s_shift
        value = (value & ~np.uint64(layout.s_mask)) | np.uint64(s)
    words[...] = value.astype(words.dtype)


def _fb_samples(fb: FramebufferState) -> int:
    """The framebuffer's sample count: its surfaces' (all the same), else ``samples``."""
    for s in [*fb.cbufs, fb.zsbuf]:
        if s is not None:
            return max(1, s.texture.nr_samples)
    return max(1, fb.samples)


def _desc(surface: Surface):
    from ..util.format import describe

    return describe(surface.format)


def _fb_max_layer(fb: FramebufferState) -> int:
    """The last layer primitives may choose (lp_scene.c fb_max_layer): the
    fewest layers of the bound surfaces, less one (a buffer surface has one);
    0 without surfaces (a layer then changes nothing)."""
    spans = [
        0 if s.texture.target == TextureTarget.BUFFER else s.last_layer - s.first_layer
        for s in [*fb.cbufs, fb.zsbuf]
        if s is not None
    ]
    return max(0, min(spans, default=0))


def _fb_key(fb: FramebufferState) -> tuple:
    return (fb.width, fb.height, tuple(id(s) for s in fb.cbufs), id(fb.zsbuf))


def _color_target(surface: Surface, width: int, height: int):
    """The surface as the rasterizer writes it, in the surface's format, cropped
    to the framebuffer (clears and draws reach no pixel outside it)."""
    res = surface.texture
    target = make_color_target(res, surface.level, surface.first_layer, res.storage, _desc(surface))
    return _cropped(target, width, height)


def _cropped(target: Any, width: int, height: int) -> Any:
    """``target`` with its arrays cut to the framebuffer's ``width`` x ``height``
    (views: rows keep the surface's pitch, which every path handles)."""
    if target.raw.shape[0] <= height and target.raw.shape[1] <= width:
        return target
    cut = (slice(0, height), slice(0, width))
    return dataclasses.replace(
        target,
        raw=target.raw[cut],
        typed=None if target.typed is None else target.typed[cut],
        words=None if target.words is None else target.words[cut],
    )


_log = logging.getLogger("gallium.numpipe")


def _no_yield() -> None:
    """The direct context's yield point: nothing to hand over."""


# which part of a queued draw's state a stage's constants / textures belong to
_CONST_PART = {
    ShaderType.VERTEX: "vconsts",
    ShaderType.GEOMETRY: "gconsts",
    ShaderType.TESS_CTRL: "tcconsts",
    ShaderType.TESS_EVAL: "teconsts",
}
_TEXTURE_PART = {
    ShaderType.VERTEX: ("program",),
    ShaderType.GEOMETRY: ("program",),
    ShaderType.TESS_CTRL: ("program",),
    ShaderType.TESS_EVAL: ("program",),
}
_NO_TESS_CONSTS: tuple = ((), ())
# barriers after which the draw pipeline (this thread) reads what shaders wrote
_PIPELINE_READS = int(
    Barrier.VERTEX_BUFFER
    | Barrier.INDEX_BUFFER
    | Barrier.CONSTANT_BUFFER
    | Barrier.INDIRECT_BUFFER
    | Barrier.STREAMOUT_BUFFER
)
# bindless handles made by a context: bit 32 set, the top bit clear (the
# handles SAMP2HND / IMG2HND make for bound slots have it: gallium/tgsi/ops_tex.py)
_HANDLE_BASE = 1 << 32
_NO_CONSTS: tuple = ()


def _bind_slots(slots: dict, start: int, items: list) -> None:
    """Bind ``items`` at slots ``start``.. of ``slots`` (None unbinds)."""
    for i, item in enumerate(items):
        if item is None:
            slots.pop(start + i, None)
        else:
            slots[start + i] = item
