"""Driver objects: CSOs, surfaces, sampler views, transfers, queries.

Creating any of these is a pure function of its template (validated here, then
copied), so ``create_*`` may run on any thread while the context is busy on
another, which the threaded context relies on.  Objects are immutable after
creation except queries, whose result fields are written by the driver.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import itertools
import math
import numbers
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..pipe import enums as _enums
from ..pipe.enums import (
    PIPE_MAX_COLOR_BUFS,
    BlendFactor,
    BlendFunc,
    CompareFunc,
    Face,
    Format,
    PolygonMode,
    QueryType,
    ShaderType,
    StencilOp,
    Swizzle,
    TextureTarget,
    Transfer,
)
from ..pipe.errors import PipeTypeError, UnsupportedError, bad_type, bad_value, check_int
from ..pipe.fence import Fence
from ..pipe.state import (
    AlphaState,
    BlendState,
    Box,
    DepthState,
    DepthStencilAlphaState,
    RasterizerState,
    RtBlendState,
    SamplerState,
    SamplerViewTemplate,
    ShaderState,
    StencilState,
    SurfaceTemplate,
    VertexElement,
)
from ..tgsi.compiler import Kernel, compile_shader
from ..tgsi.limits import NUMPIPE
from ..tgsi.parser import parse
from ..tgsi.shader import Shader
from ..util.format import FormatDesc, try_describe

_ids = itertools.count(1)


def _check_enum(arg: str, enum_type: type, value: Any) -> Any:
    if not isinstance(value, numbers.Integral):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value)
    try:
        return enum_type(int(value))
    except (ValueError, TypeError):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value) from None


def _check_bool(arg: str, value: Any) -> bool:
    """A bool, or the integers 0 and 1 (a C one-bit field)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if not isinstance(value, numbers.Integral):
        raise bad_type(arg, "a bool", value)
    if value not in (0, 1):
        raise bad_value(arg, "must be a bool (or 0 or 1)", value)
    return bool(value)


def check_sequence(arg: str, value: Any, what: str = "a list or tuple") -> list:
    """A sequence argument (list, tuple or other iterable of items) as a list; None: empty."""
    if value is None:
        return []
    if isinstance(value, str | bytes | bytearray | np.ndarray | dict) or not hasattr(
        value, "__iter__"
    ):
        raise bad_type(arg, what, value)
    return list(value)


def check_fields(obj: Any, arg: str) -> None:
    """Check a state object's scalar fields against their declared types.

    ``bool`` fields take bools (or 0/1), ``int`` fields integers, ``float``
    fields real numbers and enum fields (``CompareFunc``, ``BlendFactor | int``
    ...) values of that pipe enum (None too where the type says ``| None``).
    Fields of other types (nested states, sequences) are the caller's to check.
    """
    for f in dataclasses.fields(obj):
        parts = [p.strip() for p in str(f.type).split("|")]
        value = getattr(obj, f.name)
        where = f"{arg}.{f.name}"
        if value is None and "None" in parts:
            continue
        if "int" in parts[1:] and isinstance(value, numbers.Integral):
            continue  # ``BlendFactor | int``: a zero-initialised C field is fine
        kind = parts[0]
        if kind == "bool":
            _check_bool(where, value)
        elif kind == "int":
            check_int(where, value)
        elif kind == "float":
            if not isinstance(value, numbers.Real):
                raise bad_type(where, "a number", value)
        else:
            enum_type = getattr(_enums, kind, None)
            if isinstance(enum_type, type) and issubclass(enum_type, enum.Enum):
                _check_enum(where, enum_type, value)


# ----------------------------------------------------------------------------
# CSOs
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BlendCSO:
    state: BlendState
    rt: tuple[RtBlendState, ...]  # PIPE_MAX_COLOR_BUFS entries, independent blend resolved
    uses_src1: bool
    id: int = field(default_factory=lambda: next(_ids))


def make_blend(templ: BlendState) -> BlendCSO:
    if not isinstance(templ, BlendState):
        raise bad_type("state", "a pipe.BlendState", templ)
    check_fields(templ, "state")
    if not isinstance(templ.rt, list | tuple):
        raise bad_type("state.rt", "a list of pipe.RtBlendState", templ.rt)
    rts = list(templ.rt or [RtBlendState()])
    if len(rts) > PIPE_MAX_COLOR_BUFS:
        raise bad_value("state.rt", f"may hold at most {PIPE_MAX_COLOR_BUFS} entries", len(rts))
    uses_src1 = False
    checked = []
    for i, rt in enumerate(rts):
        if not isinstance(rt, RtBlendState):
            raise bad_type(f"state.rt[{i}]", "a pipe.RtBlendState", rt)
        check_fields(rt, f"state.rt[{i}]")
        if rt.blend_enable:
            for name in ("rgb_func", "alpha_func"):
                _check_enum(f"state.rt[{i}].{name}", BlendFunc, getattr(rt, name))
            for name in (
                "rgb_src_factor",
                "rgb_dst_factor",
                "alpha_src_factor",
                "alpha_dst_factor",
            ):
                f = _check_enum(f"state.rt[{i}].{name}", BlendFactor, getattr(rt, name))
                if f in (
                    BlendFactor.SRC1_COLOR,
                    BlendFactor.SRC1_ALPHA,
                    BlendFactor.INV_SRC1_COLOR,
                    BlendFactor.INV_SRC1_ALPHA,
                ):
                    uses_src1 = True
        if not 0 <= int(rt.colormask) <= 0xF:
            raise bad_value(
                f"state.rt[{i}].colormask", "must be a 4-bit PIPE_MASK_RGBA subset", rt.colormask
            )
        checked.append(copy.copy(rt))
    if templ.logicop_enable:
        raise UnsupportedError(
            "logic ops (state.logicop_enable) are not implemented by numpipe yet"
        )
    if templ.independent_blend_enable:
        full = checked + [RtBlendState()] * (PIPE_MAX_COLOR_BUFS - len(checked))
    else:
        full = [checked[0]] * PIPE_MAX_COLOR_BUFS
    return BlendCSO(copy.deepcopy(templ), tuple(full), uses_src1)


@dataclass(frozen=True)
class DepthStencilAlphaCSO:
    state: DepthStencilAlphaState
    id: int = field(default_factory=lambda: next(_ids))


def make_dsa(templ: DepthStencilAlphaState) -> DepthStencilAlphaCSO:
    if not isinstance(templ, DepthStencilAlphaState):
        raise bad_type("state", "a pipe.DepthStencilAlphaState", templ)
    d = templ.depth
    if not isinstance(d, DepthState):
        raise bad_type("state.depth", "a pipe.DepthState", d)
    check_fields(d, "state.depth")
    if not isinstance(templ.alpha, AlphaState):
        raise bad_type("state.alpha", "a pipe.AlphaState", templ.alpha)
    check_fields(templ.alpha, "state.alpha")
    if not isinstance(templ.stencil, list | tuple):
        raise bad_type("state.stencil", "two pipe.StencilState (front, back)", templ.stencil)
    stencil = list(templ.stencil)
    if len(stencil) != 2:
        raise bad_value(
            "state.stencil", "must hold exactly two StencilState (front, back)", len(stencil)
        )
    for i, s in enumerate(stencil):
        if not isinstance(s, StencilState):
            raise bad_type(f"state.stencil[{i}]", "a pipe.StencilState", s)
        check_fields(s, f"state.stencil[{i}]")
        if s.enabled:
            _check_enum(f"state.stencil[{i}].func", CompareFunc, s.func)
            for op in ("fail_op", "zpass_op", "zfail_op"):
                _check_enum(f"state.stencil[{i}].{op}", StencilOp, getattr(s, op))
            for m in ("valuemask", "writemask"):
                if not 0 <= int(getattr(s, m)) <= 0xFF:
                    raise bad_value(f"state.stencil[{i}].{m}", "must be in 0..255", getattr(s, m))
    if templ.alpha.enabled:
        _check_enum("state.alpha.func", CompareFunc, templ.alpha.func)
    if d.bounds_test:
        raise UnsupportedError("the depth bounds test is not implemented by numpipe yet")
    st = copy.deepcopy(templ)
    st.stencil = (stencil[0], stencil[1])
    return DepthStencilAlphaCSO(st)


@dataclass(frozen=True)
class RasterizerCSO:
    state: RasterizerState
    cull_front: bool
    cull_back: bool
    id: int = field(default_factory=lambda: next(_ids))


def make_rasterizer(templ: RasterizerState) -> RasterizerCSO:
    if not isinstance(templ, RasterizerState):
        raise bad_type("state", "a pipe.RasterizerState", templ)
    check_fields(templ, "state")
    cull = _check_enum("state.cull_face", Face, templ.cull_face)
    for name in ("fill_front", "fill_back"):
        mode = _check_enum(f"state.{name}", PolygonMode, getattr(templ, name))
        if mode != PolygonMode.FILL:
            culled = (name == "fill_front" and cull & Face.FRONT) or (
                name == "fill_back" and cull & Face.BACK
            )
            if not culled:
                raise UnsupportedError(
                    f"state.{name}={mode.name}: only PIPE_POLYGON_MODE_FILL is implemented"
                )
    if templ.poly_stipple_enable:
        raise UnsupportedError("polygon stipple is not implemented by numpipe yet")
    if templ.offset_tri and (templ.offset_units or templ.offset_scale):
        raise UnsupportedError("polygon offset is not implemented by numpipe yet")
    if templ.light_twoside:
        raise UnsupportedError("two-sided lighting (light_twoside) is not implemented yet")
    for name in ("line_width", "point_size"):
        v = float(getattr(templ, name))
        if not (math.isfinite(v) and v >= 0.0):
            raise bad_value(f"state.{name}", "must be a finite number >= 0", v)
    st = copy.deepcopy(templ)
    return RasterizerCSO(st, bool(cull & Face.FRONT), bool(cull & Face.BACK))


@dataclass(frozen=True)
class SamplerCSO:
    state: SamplerState
    id: int = field(default_factory=lambda: next(_ids))


def make_sampler(templ: SamplerState) -> SamplerCSO:
    if not isinstance(templ, SamplerState):
        raise bad_type("state", "a pipe.SamplerState", templ)
    from ..pipe.enums import MipFilter, TexFilter, TexWrap

    check_fields(templ, "state")

    for n in ("wrap_s", "wrap_t", "wrap_r"):
        _check_enum(f"state.{n}", TexWrap, getattr(templ, n))
    _check_enum("state.min_img_filter", TexFilter, templ.min_img_filter)
    _check_enum("state.mag_img_filter", TexFilter, templ.mag_img_filter)
    _check_enum("state.min_mip_filter", MipFilter, templ.min_mip_filter)
    if templ.compare_mode:
        _check_enum("state.compare_func", CompareFunc, templ.compare_func)
    if len(tuple(templ.border_color)) != 4:
        raise bad_value("state.border_color", "must have four components", templ.border_color)
    return SamplerCSO(copy.deepcopy(templ))


_STAGE_HEADER = {
    ShaderType.VERTEX: "VERT",
    ShaderType.FRAGMENT: "FRAG",
    ShaderType.GEOMETRY: "GEOM",
    ShaderType.TESS_CTRL: "TESS_CTRL",
    ShaderType.TESS_EVAL: "TESS_EVAL",
    ShaderType.COMPUTE: "COMP",
}


@dataclass(frozen=True)
class ShaderCSO:
    stage: ShaderType
    shader: Shader
    kernel: Kernel
    state: ShaderState | None
    id: int = field(default_factory=lambda: next(_ids))


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
        if d.file in ("BUFFER", "IMAGE", "MEMORY"):
            raise UnsupportedError(
                f"{d.file} registers in {stage.name.lower()} shaders are not implemented by "
                "numpipe yet (compute programs have BUFFER and MEMORY)"
            )
    kernel = compile_shader(shader)
    return ShaderCSO(stage, shader, kernel, copy.deepcopy(state) if state is not None else None)


@dataclass(frozen=True)
class VertexElementsCSO:
    elements: tuple[VertexElement, ...]
    descs: tuple[FormatDesc, ...]
    id: int = field(default_factory=lambda: next(_ids))


def make_vertex_elements(elements: Any) -> VertexElementsCSO:
    if isinstance(elements, VertexElement):
        elements = [elements]
    if elements is None:
        raise bad_type("elements", "a sequence of pipe.VertexElement", elements)
    elems = check_sequence("elements", elements, "a sequence of pipe.VertexElement")
    from ..pipe.enums import PIPE_MAX_ATTRIBS

    if len(elems) > PIPE_MAX_ATTRIBS:
        raise bad_value("elements", f"may hold at most {PIPE_MAX_ATTRIBS} elements", len(elems))
    descs = []
    for i, ve in enumerate(elems):
        if not isinstance(ve, VertexElement):
            raise bad_type(f"elements[{i}]", "a pipe.VertexElement", ve)
        check_fields(ve, f"elements[{i}]")
        try:
            fmt = Format(ve.src_format)
        except ValueError:
            raise bad_value(
                f"elements[{i}].src_format", "must be a pipe.Format", ve.src_format
            ) from None
        desc = try_describe(fmt)
        if desc is None or desc.is_depth or desc.is_stencil or desc.layout == "other":
            raise bad_value(f"elements[{i}].src_format", "must be a vertex format", fmt.name)
        if ve.src_offset < 0 or ve.vertex_buffer_index < 0 or ve.instance_divisor < 0:
            raise bad_value(f"elements[{i}]", "offsets, buffer index and divisor must be >= 0", ve)
        descs.append(desc)
    return VertexElementsCSO(tuple(copy.copy(e) for e in elems), tuple(descs))


# ----------------------------------------------------------------------------
# Surfaces and sampler views
# ----------------------------------------------------------------------------


class Surface:
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


def make_surface(context: Any, resource: Any, templ: SurfaceTemplate) -> Surface:
    from .resource import Resource

    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if not isinstance(templ, SurfaceTemplate):
        raise bad_type("templ", "a pipe.SurfaceTemplate", templ)
    check_fields(templ, "templ")
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed")
    if resource.is_buffer:
        raise UnsupportedError("buffer surfaces are not implemented by numpipe yet")
    fmt = templ.format if templ.format != Format.NONE else resource.format
    try:
        fmt = Format(fmt)
    except ValueError:
        raise bad_value("templ.format", "must be a pipe.Format", templ.format) from None
    if try_describe(fmt) is None or try_describe(fmt).block_bytes != resource.block_bytes:  # type: ignore[union-attr]
        raise bad_value(
            "templ.format",
            f"must have the same pixel size as the resource format {resource.format.name}",
            fmt.name,
        )
    if not 0 <= templ.level <= resource.last_level:
        raise bad_value("templ.level", f"must be in 0..{resource.last_level}", templ.level)
    layers = resource.levels[templ.level].layers
    if not 0 <= templ.first_layer <= templ.last_layer < layers:
        raise bad_value(
            "templ.first_layer/last_layer",
            f"must satisfy 0 <= first <= last < {layers}",
            (templ.first_layer, templ.last_layer),
        )
    t = SurfaceTemplate(
        format=fmt,
        level=templ.level,
        first_layer=templ.first_layer,
        last_layer=templ.last_layer,
        writable=templ.writable,
    )
    return Surface(context, resource, t)


class SamplerView:
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
    from .resource import Resource

    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if not isinstance(templ, SamplerViewTemplate):
        raise bad_type("templ", "a pipe.SamplerViewTemplate", templ)
    check_fields(templ, "templ")
    target = (
        resource.target
        if templ.target is None
        else _check_enum("templ.target", TextureTarget, templ.target)
    )
    for n in ("swizzle_r", "swizzle_g", "swizzle_b", "swizzle_a"):
        _check_enum(f"templ.{n}", Swizzle, getattr(templ, n))
    fmt = templ.format if templ.format != Format.NONE else resource.format
    desc = try_describe(fmt)
    if desc is None:
        raise bad_value("templ.format", "must be a format numpipe can sample", fmt)
    if desc.block_bytes != resource.block_bytes:
        raise bad_value(
            "templ.format",
            f"must be compatible with the resource format {resource.format.name} (same pixel size)",
            Format(fmt).name,
        )
    last = resource.last_level if templ.last_level is None else templ.last_level
    if not 0 <= templ.first_level <= last <= resource.last_level:
        raise bad_value(
            "templ.first_level/last_level",
            f"must satisfy 0 <= first <= last <= {resource.last_level}",
            (templ.first_level, templ.last_level),
        )
    return SamplerView(context, resource, templ, target)


# ----------------------------------------------------------------------------
# Transfers
# ----------------------------------------------------------------------------


@dataclass
class TransferObject:
    """``pipe_transfer``: what a map covers; handed back to ``transfer_unmap``."""

    resource: Any
    level: int
    usage: Transfer
    box: Box
    stride: int
    layer_stride: int
    data: Any = None
    unmapped: bool = False
    staging: Any = None  # threaded context: staging copy applied at unmap
    context: Any = None


VALID_TRANSFER_BITS = int(
    Transfer.READ
    | Transfer.WRITE
    | Transfer.MAP_DIRECTLY
    | Transfer.DISCARD_RANGE
    | Transfer.DONTBLOCK
    | Transfer.UNSYNCHRONIZED
    | Transfer.FLUSH_EXPLICIT
    | Transfer.DISCARD_WHOLE_RESOURCE
    | Transfer.PERSISTENT
    | Transfer.COHERENT
)


def check_flush_region(transfer: Any) -> None:
    """transfer_flush_region's argument: a transfer mapped with FLUSH_EXPLICIT."""
    if not isinstance(transfer, TransferObject):
        raise bad_type("transfer", "a transfer from transfer_map", transfer)
    if not transfer.usage & Transfer.FLUSH_EXPLICIT:
        raise bad_value("transfer", "was not mapped with PIPE_TRANSFER_FLUSH_EXPLICIT")


def close_transfer(transfer: Any) -> None:
    """Check transfer_unmap's argument and mark it unmapped."""
    if not isinstance(transfer, TransferObject):
        raise bad_type("transfer", "a transfer from transfer_map", transfer)
    if transfer.unmapped:
        raise bad_value("transfer", "has already been unmapped")
    transfer.unmapped = True


def check_transfer_usage(usage: Any) -> Transfer:
    if not isinstance(usage, numbers.Integral):
        raise PipeTypeError(f"usage must be pipe.Transfer flags; got {type(usage).__name__}")
    u = int(usage)
    if u & ~VALID_TRANSFER_BITS:
        raise bad_value("usage", "has bits that are not pipe.Transfer flags", hex(u))
    usage = Transfer(u)
    if not usage & (Transfer.READ | Transfer.WRITE):
        raise bad_value("usage", "must include PIPE_TRANSFER_READ or PIPE_TRANSFER_WRITE", usage)
    if usage & Transfer.READ:
        for bit in (
            Transfer.DISCARD_RANGE,
            Transfer.DISCARD_WHOLE_RESOURCE,
            Transfer.UNSYNCHRONIZED,
            Transfer.FLUSH_EXPLICIT,
        ):
            if usage & bit:
                raise bad_value(
                    "usage", f"cannot combine PIPE_TRANSFER_READ with {bit.name}", usage
                )
    return usage


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


SUPPORTED_QUERIES = {
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


class Query:
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
        if t == QueryType.PIPELINE_STATISTICS:
            return copy.copy(self.stats)
        if t == QueryType.TIMESTAMP_DISJOINT:
            return (1_000_000_000, False)
        raise UnsupportedError(f"query type {t.name} is not implemented")


def make_query(query_type: Any, index: int, context: Any) -> Query:
    qt = _check_enum("query_type", QueryType, query_type)
    if qt not in SUPPORTED_QUERIES:
        raise UnsupportedError(f"query type {qt.name} is not implemented by numpipe yet")
    if not isinstance(index, int) or index < 0:
        raise bad_value("index", "must be an int >= 0", index)
    return Query(qt, index, context)


def is_integer_format(fmt: Format) -> bool:
    d = try_describe(fmt)
    return bool(d and d.is_integer)
