"""Driver objects: CSOs, surfaces, sampler views, transfers, queries.

Creating any of these is a pure function of its template (validated here, then
copied), so ``create_*`` may run on any thread while the context is busy on
another, which the threaded context relies on.  Objects are immutable after
creation except queries, whose result fields are written by the driver.
"""

from __future__ import annotations

import copy
import itertools
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..pipe import checks
from ..pipe import objects as contract
from ..pipe.checks import check_fields, check_sequence, check_transfer_usage
from ..pipe.enums import (
    Format,
    PolygonMode,
    QueryType,
    QueryValueType,
    ShaderType,
    Swizzle,
    TextureTarget,
)
from ..pipe.errors import UnsupportedError, bad_type, bad_value
from ..pipe.fence import Fence
from ..pipe.objects import TransferObject
from ..pipe.state import (
    BlendState,
    DepthStencilAlphaState,
    RasterizerState,
    RtBlendState,
    SamplerState,
    SamplerViewTemplate,
    ShaderState,
    SurfaceTemplate,
    VertexElement,
)
from ..pipe.support import Support
from ..tgsi.compiler import Kernel, compile_shader
from ..tgsi.limits import NUMPIPE
from ..tgsi.ops_tex import sampler_pairs
from ..tgsi.parser import parse
from ..tgsi.shader import Shader
from ..util.format import FormatDesc, try_describe

_ids = itertools.count(1)

# (kept importable from here: the checks live in gallium.pipe.checks)
VALID_TRANSFER_BITS = checks.VALID_TRANSFER_BITS
__all__ = ["TransferObject", "check_fields", "check_sequence", "check_transfer_usage"]


# ----------------------------------------------------------------------------
# CSOs
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BlendCSO(contract.BlendCSO):
    state: BlendState
    rt: tuple[RtBlendState, ...]  # PIPE_MAX_COLOR_BUFS entries, independent blend resolved
    uses_src1: bool
    id: int = field(default_factory=lambda: next(_ids))


def make_blend(templ: BlendState, support: Support) -> BlendCSO:
    return BlendCSO(*checks.check_blend_state(templ, support))


@dataclass(frozen=True)
class DepthStencilAlphaCSO(contract.DepthStencilAlphaCSO):
    state: DepthStencilAlphaState
    id: int = field(default_factory=lambda: next(_ids))


def make_dsa(templ: DepthStencilAlphaState, support: Support) -> DepthStencilAlphaCSO:
    return DepthStencilAlphaCSO(checks.check_dsa_state(templ, support))


@dataclass(frozen=True)
class RasterizerCSO(contract.RasterizerCSO):
    state: RasterizerState
    cull_front: bool
    cull_back: bool
    # llvmpipe's "need pipeline" (lp_state_rasterizer.c): the draw module's
    # stages, not the setup, offset and two-side polygons (gallium/draw/polygon.py)
    pipeline: bool = False
    id: int = field(default_factory=lambda: next(_ids))


def make_rasterizer(templ: RasterizerState, support: Support) -> RasterizerCSO:
    state, cull_front, cull_back = checks.check_rasterizer_state(templ, support)
    return RasterizerCSO(state, cull_front, cull_back, _needs_pipeline(state))


def _needs_pipeline(st: RasterizerState) -> bool:
    """llvmpipe's need_pipeline (lp_state_rasterizer.c): polygons drawn
    through the draw module's stages rather than its own setup."""
    return bool(
        st.fill_front != PolygonMode.FILL
        or st.fill_back != PolygonMode.FILL
        or st.point_smooth
        or st.line_smooth
        or st.line_stipple_enable
        or st.poly_stipple_enable
    )


@dataclass(frozen=True)
class SamplerCSO(contract.SamplerCSO):
    state: SamplerState
    id: int = field(default_factory=lambda: next(_ids))


def make_sampler(templ: SamplerState, support: Support) -> SamplerCSO:
    return SamplerCSO(checks.check_sampler_state(templ, support))


_STAGE_HEADER = {
    ShaderType.VERTEX: "VERT",
    ShaderType.FRAGMENT: "FRAG",
    ShaderType.GEOMETRY: "GEOM",
    ShaderType.TESS_CTRL: "TESS_CTRL",
    ShaderType.TESS_EVAL: "TESS_EVAL",
    ShaderType.COMPUTE: "COMP",
}


@dataclass(frozen=True)
class ShaderCSO(contract.ShaderCSO):
    stage: ShaderType
    shader: Shader
    kernel: Kernel
    state: ShaderState | None
    id: int = field(default_factory=lambda: next(_ids))
    so: Any = None  # the checked stream output info (gallium/draw/so.py), or None

    @cached_property
    def inputs(self) -> frozenset[int]:
        return frozenset(self.kernel.input_decls)

    @cached_property
    def declares_memory(self) -> bool:
        """Whether the program declares shader buffers or images (asked at
        every draw whose fragment state changed)."""
        from .memory import declares_memory

        return declares_memory(self.shader)

    @cached_property
    def writes_memory(self) -> bool:
        """Whether the program stores to or atomically updates a buffer or image."""
        from .memory import writes_memory

        return writes_memory(self.shader)

    @cached_property
    def fs_inputs(self) -> list[tuple[int, str, int]]:
        """A fragment shader's inputs as the rasterizer feeds them (``IN``
        register, kind, attribute slot: gallium.draw.vs.link), worked out once
        and kept with the CSO, so it lives exactly as long as the shader."""
        from ..draw.vs import link

        return link({}, self.kernel, False)[0]

    @cached_property
    def gs_input(self) -> str | None:
        if self.stage != ShaderType.GEOMETRY:
            return None
        return self.shader.get_property("GS_INPUT_PRIMITIVE")

    @cached_property
    def memory_writes(self) -> bool:
        from .memory import writes_memory

        return writes_memory(self.shader)

    @cached_property
    def sampler_pairs(self) -> frozenset[tuple[int, int]]:
        return sampler_pairs(self.shader)

    @cached_property
    def early_fragment_tests(self) -> bool:
        return bool(self.shader.get_property("FS_EARLY_DEPTH_STENCIL", 0))

    @cached_property
    def tess_output(self) -> str | None:
        if self.stage != ShaderType.TESS_EVAL:
            return None
        if self.shader.get_property("TES_POINT_MODE", 0):
            return "points"
        return "lines" if self.shader.get_property("TES_PRIM_MODE") == 1 else "triangles"


_SO_STAGES = {
    ShaderType.VERTEX: "vertex",
    ShaderType.TESS_EVAL: "tess_eval",
    ShaderType.GEOMETRY: "geometry",
}


def make_shader(
    stage: ShaderType, tokens: Any, arg: str = "state.tokens", state: Any = None
) -> ShaderCSO:
    if isinstance(tokens, str):
        shader = parse(tokens, NUMPIPE)  # a limit broken: at its line and column
    elif isinstance(tokens, Shader):
        shader = tokens
    elif tokens is None:
        raise bad_value(arg, "must hold TGSI text or a parsed gallium.tgsi.Shader", None)
    else:
        raise bad_type(arg, "TGSI text (str) or a gallium.tgsi.Shader", tokens)
    want = _STAGE_HEADER[stage]
    if shader.processor != want:
        raise bad_value(
            arg, f"must be a {want} program for a {stage.name} shader", shader.processor
        )
    for d in shader.declarations:
        if d.file == "MEMORY":
            raise UnsupportedError(
                f"MEMORY registers in {stage.name.lower()} shaders are not supported "
                "(shared, private, input and global memory belong to compute programs)"
            )
    if stage != ShaderType.COMPUTE:
        from ..tgsi.ops_tex import HANDLE_FILES

        for inst in shader.instructions:
            mem = inst.opcode in ("LOAD", "RESQ") or inst.opcode.startswith("ATOM")
            reg = (
                inst.dst[0].reg if inst.opcode == "STORE" and inst.dst
                else inst.src[0].reg if mem and inst.src else None
            )  # fmt: skip
            if inst.opcode == "IMG2HND" or (reg is not None and reg.file in HANDLE_FILES):
                raise UnsupportedError(
                    f"images (bindless, TGSI line {inst.line}) in {stage.name.lower()} "
                    "shaders are not implemented by numpipe yet (compute programs have them; bound"
                    " images work in every stage)"
                )
    so = None
    if state is not None and stage in _SO_STAGES:
        from ..draw.so import check_info

        so = check_info(state.stream_output, shader, _SO_STAGES[stage])
    kernel = compile_shader(shader)
    return ShaderCSO(
        stage, shader, kernel, copy.deepcopy(state) if state is not None else None, so=so
    )


class StreamOutputTarget(contract.StreamOutputTarget):
    """``pipe_stream_output_target``: a range of a buffer that stream output
    writes, and the bytes written so far (``internal_offset``, advanced by
    the draw pipeline in draw order; see gallium/draw/so.py)."""

    def __init__(self, context: Any, buffer: Any, offset: int, size: int) -> None:
        self.id = next(_ids)
        self.context = context
        self.buffer = buffer
        self.buffer_offset = offset
        self.buffer_size = size
        self.internal_offset = 0
        self.destroyed = False

    @property
    def resource(self) -> Any:
        return self.buffer

    def __repr__(self) -> str:
        return (
            f"<StreamOutputTarget {self.id}: buffer {self.buffer.id} "
            f"[{self.buffer_offset}, +{self.buffer_size}) written {self.internal_offset}>"
        )


@dataclass(frozen=True)
class VertexElementsCSO(contract.VertexElementsCSO):
    elements: tuple[VertexElement, ...]
    descs: tuple[FormatDesc, ...]
    id: int = field(default_factory=lambda: next(_ids))


def make_vertex_elements(elements: Any) -> VertexElementsCSO:
    elems, formats = checks.check_vertex_elements(elements)
    descs = []
    for i, fmt in enumerate(formats):
        desc = try_describe(fmt)
        if desc is None or desc.is_depth or desc.is_stencil or desc.layout == "other":
            raise bad_value(f"elements[{i}].src_format", "must be a vertex format", fmt.name)
        descs.append(desc)
    return VertexElementsCSO(elems, tuple(descs))


# ----------------------------------------------------------------------------
# Surfaces and sampler views
# ----------------------------------------------------------------------------


class Surface(contract.Surface):
    """``pipe_surface``: a level/layer range of a resource used as a render target."""

    def __init__(self, context: Any, resource: Any, templ: SurfaceTemplate) -> None:
        self.id = next(_ids)
        self.context = context
        self.texture = resource
        self.format = Format(templ.format)
        self.level = templ.level
        self.first_layer = templ.first_layer
        self.last_layer = templ.last_layer
        lay = resource.level_layout(templ.level)
        self.width = lay.width
        self.height = lay.height
        self.writable = templ.writable
        self.destroyed = False

    @property
    def u(self) -> dict:
        return {
            "tex": {
                "level": self.level,
                "first_layer": self.first_layer,
                "last_layer": self.last_layer,
            }
        }

    def __repr__(self) -> str:
        return f"<Surface {self.format.name} {self.width}x{self.height} of {self.texture!r}>"


def make_surface(context: Any, resource: Any, templ: SurfaceTemplate, support: Support) -> Surface:
    t = checks.check_surface_template(resource, templ, support)
    desc = try_describe(t.format)
    if desc is None or desc.block_bytes != resource.block_bytes:
        raise bad_value(
            "templ.format",
            f"must have the same pixel size as the resource format {resource.format.name}",
            t.format.name,
        )
    return Surface(context, resource, t)


class SamplerView(contract.SamplerView):
    """``pipe_sampler_view``: a resource as a shader sees it through a sampler."""

    def __init__(
        self, context: Any, resource: Any, templ: SamplerViewTemplate, target: TextureTarget
    ):
        self.id = next(_ids)
        self.context = context
        self.texture = resource
        self.format = Format(templ.format if templ.format != Format.NONE else resource.format)
        self.target = target
        self.swizzle = (
            Swizzle(templ.swizzle_r),
            Swizzle(templ.swizzle_g),
            Swizzle(templ.swizzle_b),
            Swizzle(templ.swizzle_a),
        )
        self.first_level = templ.first_level
        self.last_level = resource.last_level if templ.last_level is None else templ.last_level
        layers = 1 if resource.is_buffer else resource.levels[0].layers
        self.first_layer = templ.first_layer
        self.last_layer = layers - 1 if templ.last_layer is None else templ.last_layer
        self.buf_offset = templ.buf_offset
        self.buf_size = templ.buf_size
        self.desc = try_describe(self.format)
        self.destroyed = False


def make_sampler_view(context: Any, resource: Any, templ: SamplerViewTemplate) -> SamplerView:
    target, fmt = checks.check_sampler_view_template(resource, templ)
    desc = try_describe(fmt)
    if desc is None:
        raise bad_value("templ.format", "must be a format numpipe can sample", fmt)
    if desc.block_bytes != resource.block_bytes:
        raise bad_value(
            "templ.format",
            f"must be compatible with the resource format {resource.format.name} (same pixel size)",
            fmt.name,
        )
    return SamplerView(context, resource, templ, target)


# ----------------------------------------------------------------------------
# Queries
# ----------------------------------------------------------------------------


@dataclass
class PipelineStatistics:
    """``pipe_query_data_pipeline_statistics``."""

    ia_vertices: int = 0
    ia_primitives: int = 0
    vs_invocations: int = 0
    gs_invocations: int = 0
    gs_primitives: int = 0
    c_invocations: int = 0
    c_primitives: int = 0
    ps_invocations: int = 0
    hs_invocations: int = 0
    ds_invocations: int = 0
    cs_invocations: int = 0


@dataclass
class SoStatistics:
    """``pipe_query_data_so_statistics``."""

    num_primitives_written: int = 0
    primitives_storage_needed: int = 0


SUPPORTED_QUERIES = {
    QueryType.PRIMITIVES_EMITTED,
    QueryType.SO_STATISTICS,
    QueryType.SO_OVERFLOW_PREDICATE,
    QueryType.SO_OVERFLOW_ANY_PREDICATE,
    QueryType.OCCLUSION_COUNTER,
    QueryType.OCCLUSION_PREDICATE,
    QueryType.OCCLUSION_PREDICATE_CONSERVATIVE,
    QueryType.TIMESTAMP,
    QueryType.TIME_ELAPSED,
    QueryType.PRIMITIVES_GENERATED,
    QueryType.GPU_FINISHED,
    QueryType.PIPELINE_STATISTICS,
    QueryType.TIMESTAMP_DISJOINT,
}


class Query(contract.Query):
    """``pipe_query``.  Result fields are written by the driver; readers wait on
    ``fence`` (the fence of the scene that held ``end_query``)."""

    def __init__(self, query_type: QueryType, index: int, context: Any = None) -> None:
        self.id = next(_ids)
        self.type = query_type
        self.index = index
        self.context = context
        self.active = False
        self.ended = False
        self.counter: Any = None  # OcclusionCounter
        self.stats = PipelineStatistics()
        self.primitives = 0
        self.so_generated = [0, 0, 0, 0]  # per vertex stream (stream output queries)
        self.so_written = [0, 0, 0, 0]
        self.begin_marker: Any = None  # scene MarkerCmd or fence marker (TIME_ELAPSED)
        self.end_marker: Any = None  # (TIMESTAMP, TIME_ELAPSED)
        self.fence: Fence | None = None
        self.pending_scene: Any = None  # unflushed scene holding end_query
        self.lock = threading.Lock()
        self.destroyed = False

    def result(self) -> Any:
        t = self.type
        if t == QueryType.OCCLUSION_COUNTER:
            return self.counter.count if self.counter is not None else 0
        if t in (QueryType.OCCLUSION_PREDICATE, QueryType.OCCLUSION_PREDICATE_CONSERVATIVE):
            return bool(self.counter is not None and self.counter.count)
        if t == QueryType.TIMESTAMP:
            return self.end_marker.time_ns
        if t == QueryType.TIME_ELAPSED:
            return max(0, self.end_marker.time_ns - self.begin_marker.time_ns)
        if t == QueryType.PRIMITIVES_GENERATED:
            return self.primitives
        if t == QueryType.GPU_FINISHED:
            return True
        if t == QueryType.PRIMITIVES_EMITTED:
            return self.so_written[self.index]
        if t == QueryType.SO_STATISTICS:
            return SoStatistics(self.so_written[self.index], self.so_generated[self.index])
        if t == QueryType.SO_OVERFLOW_PREDICATE:
            return self.so_generated[self.index] > self.so_written[self.index]
        if t == QueryType.SO_OVERFLOW_ANY_PREDICATE:
            return any(g > w for g, w in zip(self.so_generated, self.so_written))
        if t == QueryType.PIPELINE_STATISTICS:
            return copy.copy(self.stats)
        if t == QueryType.TIMESTAMP_DISJOINT:
            return (1_000_000_000, False)
        raise UnsupportedError(f"query type {t.name} is not implemented")


_STAT_FIELDS = (
    "ia_vertices",
    "ia_primitives",
    "vs_invocations",
    "gs_invocations",
    "gs_primitives",
    "c_invocations",
    "c_primitives",
    "ps_invocations",
    "hs_invocations",
    "ds_invocations",
    "cs_invocations",
)


def query_value(query: Query, index: int) -> int:
    """A query's result as the integer a buffer receives (value ``index`` of
    a query of several values; get_query_result_resource)."""
    value = query.result()
    if query.type == QueryType.PIPELINE_STATISTICS:
        return int(getattr(value, _STAT_FIELDS[index]))
    if query.type == QueryType.SO_STATISTICS:
        return int(value.num_primitives_written if index == 0 else value.primitives_storage_needed)
    if query.type == QueryType.TIMESTAMP_DISJOINT:
        return int(value[index])
    return int(value)


def pack_query_value(value: int, result_type: QueryValueType) -> np.ndarray:
    """The bytes of a query value as ``result_type`` (clamped to 32 bits)."""
    if result_type == QueryValueType.I32:
        return np.array([min(value, 0x7FFFFFFF)], "<i4").view(np.uint8)
    if result_type == QueryValueType.U32:
        return np.array([min(value, 0xFFFFFFFF)], "<u4").view(np.uint8)
    dtype = "<i8" if result_type == QueryValueType.I64 else "<u8"
    return np.array([value & 0xFFFFFFFFFFFFFFFF], "<u8").view(dtype).view(np.uint8)


def make_query(query_type: Any, index: int, context: Any, support: Support) -> Query:
    qt, index = checks.check_query_type(query_type, index, SUPPORTED_QUERIES, support)
    return Query(qt, index, context)


def is_integer_format(fmt: Format) -> bool:
    d = try_describe(fmt)
    return bool(d and d.is_integer)
