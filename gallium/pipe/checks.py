"""The contract's argument checks: every bad argument, refused at the call.

Each ``check_*`` function takes a call's arguments as the application passed
them and either raises or returns them validated and normalised (plain ints
and floats, private copies of anything mutable the caller still holds), in
the form the driver's unchecked entry points (``_apply_*``, see
:mod:`gallium.pipe.protocols`) take.  Every context runs them at the call on
the application's thread -- the driver's own direct context and a frontend
wrapping it alike -- so a bad argument raises there, with the same exception
type and message whichever context it was given to, and nothing bad is ever
recorded for later.

Errors (see :mod:`gallium.pipe.errors`): a wrong type is a
:class:`PipeTypeError`, a wrong value a :class:`PipeValueError`, each naming
the argument and the rule it broke; a destroyed object is a
:class:`PipeValueError` saying so; a valid request for something the driver
does not implement is an :class:`UnsupportedError`, decided from the screen's
caps (:class:`gallium.pipe.support.Support`).

The hot checks (state setters a frame calls thousands of times) take a fast
path for the common, well-formed argument before the general one; the fast
path accepts only what the general one would accept and returns the same.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import math
import numbers
import operator
import threading
from collections.abc import Collection
from typing import Any

import numpy as np

from . import enums as _enums
from .enums import (
    PIPE_MAX_ATTRIBS,
    PIPE_MAX_CLIP_PLANES,
    PIPE_MAX_COLOR_BUFS,
    PIPE_MAX_CONSTANT_BUFFERS,
    PIPE_MAX_SAMPLERS,
    PIPE_MAX_SHADER_BUFFERS,
    PIPE_MAX_SHADER_IMAGES,
    PIPE_MAX_SHADER_SAMPLER_VIEWS,
    PIPE_MAX_SO_BUFFERS,
    PIPE_MAX_VERTEX_STREAMS,
    PIPE_MAX_VIEWPORTS,
    PIPE_MAX_WINDOW_RECTANGLES,
    PIPE_TIMEOUT_INFINITE,
    BlendFactor,
    BlendFunc,
    Clear,
    CompareFunc,
    Face,
    Flush,
    Format,
    ImageAccess,
    LogicOp,
    MipFilter,
    PolygonMode,
    Prim,
    QueryType,
    QueryValueType,
    RenderCond,
    ShaderType,
    StencilOp,
    Swizzle,
    TexFilter,
    TextureTarget,
    TexWrap,
    Transfer,
)
from .errors import PipeTypeError, UnsupportedError, bad_type, bad_value, check_int
from .objects import (
    BlendCSO,
    ComputeCSO,
    DepthStencilAlphaCSO,
    Query,
    RasterizerCSO,
    Resource,
    SamplerCSO,
    SamplerView,
    ShaderCSO,
    StreamOutputTarget,
    Surface,
    TransferObject,
    VertexElementsCSO,
)
from .state import (
    AlphaState,
    BlendColor,
    BlendState,
    Box,
    ClipState,
    ConstantBuffer,
    DepthState,
    DepthStencilAlphaState,
    DrawIndirectInfo,
    DrawInfo,
    FramebufferState,
    GridInfo,
    ImageView,
    PolyStipple,
    RasterizerState,
    RtBlendState,
    SamplerState,
    SamplerViewTemplate,
    ScissorState,
    ShaderBuffer,
    StencilRef,
    StencilState,
    SurfaceTemplate,
    VertexBuffer,
    VertexElement,
    ViewportState,
)
from .support import Support

_U32 = 0xFFFFFFFF

# ----------------------------------------------------------------------------
# Scalars, enums, sequences, bytes
# ----------------------------------------------------------------------------


def check_enum(arg: str, enum_type: type, value: Any) -> Any:
    """``value`` as a member of the pipe enum ``enum_type`` (integers only)."""
    if not isinstance(value, numbers.Integral):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value)
    try:
        return enum_type(int(value))
    except (ValueError, TypeError):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value) from None


def _enum(arg: str, enum_type: type, value: Any) -> Any:
    try:
        return enum_type(value)
    except (ValueError, TypeError):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value) from None


def check_bool(arg: str, value: Any) -> bool:
    """A bool, or the integers 0 and 1 (a C one-bit field)."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
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
    if type(value) is list or type(value) is tuple:
        return list(value)
    if isinstance(value, str | bytes | bytearray | np.ndarray | dict) or not hasattr(
        value, "__iter__"
    ):
        raise bad_type(arg, what, value)
    return list(value)


def check_numbers(arg: str, values: Any, n: int) -> tuple:
    """``n`` real numbers (a pipe_color_union's floats or integers), as a tuple."""
    if not isinstance(values, list | tuple | np.ndarray):
        raise bad_type(arg, f"a sequence of {n} numbers", values)
    vals = tuple(values.tolist() if isinstance(values, np.ndarray) else values)
    if len(vals) != n:
        raise bad_value(arg, f"must have {n} components", values)
    if all(type(v) is float for v in vals):  # the common case, without the ABC checks
        return vals
    for i, v in enumerate(vals):
        if not isinstance(v, numbers.Real):
            raise bad_type(f"{arg}[{i}]", "a number", v)
    return tuple(v if isinstance(v, numbers.Integral) else float(v) for v in vals)


def check_fields(obj: Any, arg: str) -> None:
    """Check a state object's scalar fields against their declared types.

    ``bool`` fields take bools (or 0/1), ``int`` fields integers, ``float``
    fields real numbers and enum fields (``CompareFunc``, ``BlendFactor | int``
    ...) values of that pipe enum (None too where the type says ``| None``).
    Fields of other types (nested states, sequences) are the caller's to check.
    """
    for name, kind, int_ok, none_ok in _field_kinds(type(obj)):
        value = getattr(obj, name)
        if value is None and none_ok:
            continue
        if int_ok and isinstance(value, numbers.Integral):
            continue  # ``BlendFactor | int``: a zero-initialised C field is fine
        where = f"{arg}.{name}"
        if kind == "bool":
            check_bool(where, value)
        elif kind == "int":
            check_int(where, value)
        elif kind == "float":
            if not isinstance(value, numbers.Real):
                raise bad_type(where, "a number", value)
        else:
            enum_type = getattr(_enums, kind, None)
            if isinstance(enum_type, type) and issubclass(enum_type, enum.Enum):
                check_enum(where, enum_type, value)


_FIELD_KINDS: dict[type, list[tuple[str, str, bool, bool]]] = {}


def _field_kinds(cls: type) -> list[tuple[str, str, bool, bool]]:
    kinds = _FIELD_KINDS.get(cls)
    if kinds is None:
        kinds = []
        for f in dataclasses.fields(cls):
            parts = [p.strip() for p in str(f.type).split("|")]
            kinds.append((f.name, parts[0], "int" in parts[1:], "None" in parts))
        _FIELD_KINDS[cls] = kinds
    return kinds


def user_bytes(obj: Any, arg: str) -> np.ndarray:
    """The bytes of a user buffer (bytes-like object or numpy array), as a
    uint8 view of the caller's memory (copy it to keep it)."""
    if obj is None:
        raise bad_value(arg, "must not be None")
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            obj = np.ascontiguousarray(obj)
        return obj.reshape(-1).view(np.uint8)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise PipeTypeError(
            f"{arg} must be a Resource, bytes-like object or numpy array; got {type(obj).__name__}"
        ) from None
    return np.frombuffer(mv.cast("B"), dtype=np.uint8)


def check_callable(arg: str, fn: Any, none_ok: bool = False) -> Any:
    if fn is None and none_ok:
        return None
    if not callable(fn):
        raise bad_type(arg, "callable" + (" or None" if none_ok else ""), fn)
    return fn


def check_fence_timeout(timeout_ns: Any) -> int:
    """``fence_finish``'s timeout: nanoseconds in [0, PIPE_TIMEOUT_INFINITE]."""
    return check_int("timeout_ns", timeout_ns, 0, PIPE_TIMEOUT_INFINITE)


def check_flush_flags(flags: Any) -> Flush:
    v = check_int("flags", flags)
    try:
        return Flush(v)
    except ValueError:
        raise bad_value("flags", "must be pipe.Flush flags", v) from None


def check_barrier_flags(flags: Any) -> int:
    """texture_barrier / memory_barrier flags: an unsigned integer."""
    return check_int("flags", flags, 0, _U32)


def check_string_marker(string: Any) -> str:
    if not isinstance(string, str):
        raise bad_type("string", "a str", string)
    return string


# ----------------------------------------------------------------------------
# Driver objects
# ----------------------------------------------------------------------------


def check_resource(arg: str, res: Any, kind: str | None = None) -> Resource:
    """A live Resource; ``kind`` "buffer" or "texture" narrows it."""
    if not isinstance(res, Resource):
        what = {"buffer": "a buffer Resource", "texture": "a texture Resource"}.get(
            kind or "", "a Resource created by this screen"
        )
        raise bad_type(arg, what, res)
    if kind == "buffer" and not res.is_buffer:
        raise bad_type(arg, "a buffer Resource", res)
    if kind == "texture" and res.is_buffer:
        raise bad_type(arg, "a texture Resource", res)
    if res.destroyed:
        raise bad_value(arg, "has been destroyed (screen.resource_destroy)")
    return res


def check_level(res: Resource, level: Any, arg: str = "level") -> int:
    level = check_int(arg, level)
    if not 0 <= level <= res.last_level:
        raise bad_value(arg, f"must be in 0..{res.last_level} for this resource", level)
    return level


def check_box(res: Resource, level: Any, box: Any, arg: str = "box") -> Box:
    """``box`` inside mip level ``level`` of ``res`` (context.rst Transfers), as
    a private Box of plain ints."""
    level = check_level(res, level)
    if not isinstance(box, Box):
        raise bad_type(arg, "a pipe.Box", box)
    vals = [check_int(f"{arg}.{f}", getattr(box, f)) for f in _BOX]
    limits = res.level_extent(level)
    for axis in range(3):
        start, extent, limit = vals[axis], vals[axis + 3], limits[axis]
        if extent <= 0 or start < 0 or start + extent > limit:
            raise bad_value(
                arg,
                f"must lie inside level {level} ({limits[0]}x{limits[1]}x{limits[2]}); "
                f"the {'xyz'[axis]} range [{start}, {start + extent}) does not",
                box,
            )
    return Box(*vals)


_BOX = ("x", "y", "z", "width", "height", "depth")


def check_surface(arg: str, s: Any, none_ok: bool = False) -> Surface | None:
    if s is None and none_ok:
        return None
    if not isinstance(s, Surface):
        raise bad_type(arg, "a Surface" + (" or None" if none_ok else ""), s)
    if s.destroyed:
        raise bad_value(arg, "has been destroyed (surface_destroy)")
    if s.texture.destroyed:
        raise bad_value(arg, "is a surface of a destroyed resource")
    return s


def check_query(query: Any) -> Query:
    if not isinstance(query, Query):
        raise bad_type("query", "a Query from create_query", query)
    if query.destroyed:
        raise bad_value("query", "has been destroyed (destroy_query)")
    return query


def destroy_surface(surface: Any) -> Surface:
    """Check a surface_destroy call; the surface counts as destroyed from now on."""
    if not isinstance(surface, Surface):
        raise bad_type("surface", "a Surface from create_surface", surface)
    if surface.destroyed:
        raise bad_value("surface", "has been destroyed (surface_destroy)")
    surface.destroyed = True
    return surface


def destroy_sampler_view(view: Any) -> SamplerView:
    """Check a sampler_view_destroy call; the view counts as destroyed from now on."""
    if not isinstance(view, SamplerView):
        raise bad_type("view", "a SamplerView from create_sampler_view", view)
    if view.destroyed:
        raise bad_value("view", "has been destroyed (sampler_view_destroy)")
    view.destroyed = True
    return view


def destroy_query(query: Any) -> Query:
    """Check a destroy_query call; the query counts as destroyed from now on."""
    q = check_query(query)
    q.destroyed = True
    q.active = False
    return q


def check_debug_callback(callback: Any) -> Any:
    return check_callable("callback", callback, none_ok=True)


def check_cso(arg: str, cso: Any, kind: type, what: str) -> Any:
    """A CSO of ``kind`` (destroy_* calls: None is refused)."""
    if not isinstance(cso, kind):
        raise bad_type(arg, what, cso)
    return cso


# ----------------------------------------------------------------------------
# CSO templates (create_*_state) and binds
# ----------------------------------------------------------------------------


def check_blend_state(
    templ: Any, support: Support
) -> tuple[BlendState, tuple[RtBlendState, ...], bool]:
    """create_blend_state's template: (a private copy, the PIPE_MAX_COLOR_BUFS
    per-target states with independent blend resolved, whether it reads SRC1)."""
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
                check_enum(f"state.rt[{i}].{name}", BlendFunc, getattr(rt, name))
            for name in (
                "rgb_src_factor",
                "rgb_dst_factor",
                "alpha_src_factor",
                "alpha_dst_factor",
            ):
                f = check_enum(f"state.rt[{i}].{name}", BlendFactor, getattr(rt, name))
                if f in _SRC1_FACTORS:
                    uses_src1 = True
        if not 0 <= int(rt.colormask) <= 0xF:
            raise bad_value(
                f"state.rt[{i}].colormask", "must be a 4-bit PIPE_MASK_RGBA subset", rt.colormask
            )
        checked.append(copy.copy(rt))
    if templ.logicop_enable and not support.logic_op:
        raise UnsupportedError(
            f"logic ops (state.logicop_enable) are not implemented by {support.driver} yet"
        )
    if templ.logicop_enable:
        check_enum("state.logicop_func", LogicOp, templ.logicop_func)
    if templ.independent_blend_enable:
        full = checked + [RtBlendState()] * (PIPE_MAX_COLOR_BUFS - len(checked))
    else:
        full = [checked[0]] * PIPE_MAX_COLOR_BUFS
    return copy.deepcopy(templ), tuple(full), uses_src1


_SRC1_FACTORS = frozenset(
    {
        BlendFactor.SRC1_COLOR,
        BlendFactor.SRC1_ALPHA,
        BlendFactor.INV_SRC1_COLOR,
        BlendFactor.INV_SRC1_ALPHA,
    }
)


def check_dsa_state(templ: Any, support: Support) -> DepthStencilAlphaState:
    """create_depth_stencil_alpha_state's template, as a private copy
    (``stencil`` a (front, back) tuple)."""
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
            check_enum(f"state.stencil[{i}].func", CompareFunc, s.func)
            for op in ("fail_op", "zpass_op", "zfail_op"):
                check_enum(f"state.stencil[{i}].{op}", StencilOp, getattr(s, op))
            for m in ("valuemask", "writemask"):
                if not 0 <= int(getattr(s, m)) <= 0xFF:
                    raise bad_value(f"state.stencil[{i}].{m}", "must be in 0..255", getattr(s, m))
    if templ.alpha.enabled:
        check_enum("state.alpha.func", CompareFunc, templ.alpha.func)
    if d.bounds_test and not support.depth_bounds_test:
        raise UnsupportedError(
            f"the depth bounds test is not implemented by {support.driver} yet "
            "(PIPE_CAP_DEPTH_BOUNDS_TEST is 0)"
        )
    st = copy.deepcopy(templ)
    st.stencil = (stencil[0], stencil[1])
    return st


def check_rasterizer_state(templ: Any, support: Support) -> tuple[RasterizerState, bool, bool]:
    """create_rasterizer_state's template: (a private copy, cull front, cull back)."""
    if not isinstance(templ, RasterizerState):
        raise bad_type("state", "a pipe.RasterizerState", templ)
    check_fields(templ, "state")
    cull = check_enum("state.cull_face", Face, templ.cull_face)
    driver = support.driver
    for name in ("fill_front", "fill_back"):
        mode = check_enum(f"state.{name}", PolygonMode, getattr(templ, name))
        culled = (name == "fill_front" and cull & Face.FRONT) or (
            name == "fill_back" and cull & Face.BACK
        )
        if culled or mode == PolygonMode.FILL:
            continue
        if mode == PolygonMode.FILL_RECTANGLE:
            if not support.fill_rectangle:
                raise UnsupportedError(
                    f"state.{name}=FILL_RECTANGLE is not supported by {driver} "
                    "(PIPE_CAP_POLYGON_MODE_FILL_RECTANGLE is 0)"
                )
        elif not support.polygon_modes:
            raise UnsupportedError(
                f"state.{name}={mode.name}: only PIPE_POLYGON_MODE_FILL is implemented"
            )
    if templ.multisample and not support.multisample:
        raise UnsupportedError(f"multisample rasterization is not implemented by {driver} yet")
    if templ.poly_stipple_enable and not support.polygon_stipple:
        raise UnsupportedError(f"polygon stipple is not implemented by {driver} yet")
    if (
        templ.offset_tri
        and (templ.offset_units or templ.offset_scale)
        and not support.polygon_offset
    ):
        raise UnsupportedError(f"polygon offset is not implemented by {driver} yet")
    if templ.light_twoside and not support.two_sided_lighting:
        raise UnsupportedError("two-sided lighting (light_twoside) is not implemented yet")
    for name in ("line_width", "point_size"):
        v = float(getattr(templ, name))
        if not (math.isfinite(v) and v >= 0.0):
            raise bad_value(f"state.{name}", "must be a finite number >= 0", v)
    for name in ("offset_units", "offset_scale"):
        v = float(getattr(templ, name))
        if not math.isfinite(v):
            raise bad_value(f"state.{name}", "must be a finite number", v)
    if math.isnan(float(templ.offset_clamp)):
        raise bad_value("state.offset_clamp", "must be a number (0: no clamp)", templ.offset_clamp)
    check_int("state.line_stipple_factor", templ.line_stipple_factor, 0, 255)
    check_int("state.line_stipple_pattern", templ.line_stipple_pattern, 0, 0xFFFF)
    check_int("state.clip_plane_enable", templ.clip_plane_enable, 0, 0xFF)
    check_int("state.sprite_coord_enable", templ.sprite_coord_enable, 0, 0xFFFFFFFF)
    return copy.deepcopy(templ), bool(cull & Face.FRONT), bool(cull & Face.BACK)


def check_sampler_state(templ: Any, support: Support) -> SamplerState:
    """create_sampler_state's template, as a private copy."""
    if not isinstance(templ, SamplerState):
        raise bad_type("state", "a pipe.SamplerState", templ)
    check_fields(templ, "state")
    for n in ("wrap_s", "wrap_t", "wrap_r"):
        check_enum(f"state.{n}", TexWrap, getattr(templ, n))
    check_enum("state.min_img_filter", TexFilter, templ.min_img_filter)
    check_enum("state.mag_img_filter", TexFilter, templ.mag_img_filter)
    check_enum("state.min_mip_filter", MipFilter, templ.min_mip_filter)
    if templ.compare_mode:
        check_enum("state.compare_func", CompareFunc, templ.compare_func)
    border = check_sequence("state.border_color", templ.border_color)
    if len(border) != 4:
        raise bad_value("state.border_color", "must have four components", templ.border_color)
    aniso = check_int("state.max_anisotropy", templ.max_anisotropy, 0, 16)
    if aniso > 1 and aniso > support.max_anisotropy:
        raise UnsupportedError(
            f"anisotropic filtering (state.max_anisotropy {aniso}) is not implemented by "
            f"{support.driver}; the screen reports PIPE_CAPF_MAX_TEXTURE_ANISOTROPY "
            f"{support.max_anisotropy:g}"
        )
    return copy.deepcopy(templ)


def check_vertex_elements(elements: Any) -> tuple[tuple[VertexElement, ...], tuple[Format, ...]]:
    """create_vertex_elements_state's elements: (private copies, their formats).
    Whether a format can be fetched is the driver's to say (a format table)."""
    if isinstance(elements, VertexElement):
        elements = [elements]
    if elements is None:
        raise bad_type("elements", "a sequence of pipe.VertexElement", elements)
    elems = check_sequence("elements", elements, "a sequence of pipe.VertexElement")
    if len(elems) > PIPE_MAX_ATTRIBS:
        raise bad_value("elements", f"may hold at most {PIPE_MAX_ATTRIBS} elements", len(elems))
    formats = []
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
        if ve.src_offset < 0 or ve.vertex_buffer_index < 0 or ve.instance_divisor < 0:
            raise bad_value(f"elements[{i}]", "offsets, buffer index and divisor must be >= 0", ve)
        formats.append(fmt)
    return tuple(copy.copy(e) for e in elems), tuple(formats)


def check_blend_cso(cso: Any) -> BlendCSO | None:
    """A blend CSO to bind (None: the default state)."""
    if cso is None or isinstance(cso, BlendCSO):
        return cso
    raise bad_type("cso", "a blend CSO from create_blend_state", cso)


def check_dsa_cso(cso: Any) -> DepthStencilAlphaCSO | None:
    if cso is None or isinstance(cso, DepthStencilAlphaCSO):
        return cso
    raise bad_type("cso", "a CSO from create_depth_stencil_alpha_state", cso)


def check_rasterizer_cso(cso: Any) -> RasterizerCSO | None:
    if cso is None or isinstance(cso, RasterizerCSO):
        return cso
    raise bad_type("cso", "a CSO from create_rasterizer_state", cso)


def check_vertex_elements_cso(cso: Any) -> VertexElementsCSO | None:
    if cso is None or isinstance(cso, VertexElementsCSO):
        return cso
    raise bad_type("cso", "a CSO from create_vertex_elements_state or None", cso)


def check_shader_cso(stage: ShaderType, cso: Any) -> ShaderCSO | None:
    """A shader CSO of ``stage`` to bind, or None."""
    if cso is not None and (not isinstance(cso, ShaderCSO) or cso.stage != stage):
        raise bad_type("cso", f"a {stage.name.lower()} shader CSO or None", cso)
    return cso


def check_compute_cso(cso: Any) -> ComputeCSO | None:
    if cso is not None and not isinstance(cso, ComputeCSO):
        raise bad_type("cso", "a compute state from create_compute_state, or None", cso)
    return cso


def check_tess_bind(stage: ShaderType, cso: Any, support: Support) -> ShaderCSO | None:
    """bind_tcs_state / bind_tes_state: a shader of ``stage`` or None; only
    None when the driver has no tessellation."""
    if cso is not None and not support.tessellation:
        raise UnsupportedError(f"tessellation shaders are not supported by {support.driver}")
    return check_shader_cso(stage, cso)


# ----------------------------------------------------------------------------
# Views and queries (create_* calls)
# ----------------------------------------------------------------------------


def check_surface_template(resource: Any, templ: Any, support: Support) -> SurfaceTemplate:
    """create_surface's arguments: a complete private template (format resolved).
    Whether the format can be rendered to is the driver's to say."""
    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if not isinstance(templ, SurfaceTemplate):
        raise bad_type("templ", "a pipe.SurfaceTemplate", templ)
    check_fields(templ, "templ")
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed (screen.resource_destroy)")
    if resource.is_buffer and not support.buffer_surfaces:
        raise UnsupportedError(f"buffer surfaces are not implemented by {support.driver} yet")
    fmt = templ.format if templ.format != Format.NONE else resource.format
    try:
        fmt = Format(fmt)
    except ValueError:
        raise bad_value("templ.format", "must be a pipe.Format", templ.format) from None
    level = check_int("templ.level", templ.level)
    if not 0 <= level <= resource.last_level:
        raise bad_value("templ.level", f"must be in 0..{resource.last_level}", templ.level)
    layers = resource.level_extent(level)[2]
    if not 0 <= templ.first_layer <= templ.last_layer < layers:
        raise bad_value(
            "templ.first_layer/last_layer",
            f"must satisfy 0 <= first <= last < {layers}",
            (templ.first_layer, templ.last_layer),
        )
    return SurfaceTemplate(
        format=fmt,
        level=level,
        first_layer=int(templ.first_layer),
        last_layer=int(templ.last_layer),
        writable=bool(templ.writable),
    )


def check_sampler_view_template(resource: Any, templ: Any) -> tuple[TextureTarget, Format]:
    """create_sampler_view's arguments: (the view's target, its format)."""
    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if not isinstance(templ, SamplerViewTemplate):
        raise bad_type("templ", "a pipe.SamplerViewTemplate", templ)
    check_fields(templ, "templ")
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed (screen.resource_destroy)")
    target = (
        resource.target
        if templ.target is None
        else check_enum("templ.target", TextureTarget, templ.target)
    )
    for n in ("swizzle_r", "swizzle_g", "swizzle_b", "swizzle_a"):
        check_enum(f"templ.{n}", Swizzle, getattr(templ, n))
    fmt = templ.format if templ.format != Format.NONE else resource.format
    try:
        fmt = Format(fmt)
    except ValueError:
        raise bad_value("templ.format", "must be a pipe.Format", fmt) from None
    last = resource.last_level if templ.last_level is None else templ.last_level
    if not 0 <= templ.first_level <= last <= resource.last_level:
        raise bad_value(
            "templ.first_level/last_level",
            f"must satisfy 0 <= first <= last <= {resource.last_level}",
            (templ.first_level, templ.last_level),
        )
    return target, fmt


def check_query_type(
    query_type: Any, index: Any, supported: Any, support: Support
) -> tuple[QueryType, int]:
    """create_query's arguments; ``supported`` is the query types the driver has."""
    qt = check_enum("query_type", QueryType, query_type)
    if qt not in supported:
        raise UnsupportedError(f"query type {qt.name} is not implemented by {support.driver} yet")
    if not isinstance(index, int) or index < 0:
        raise bad_value("index", "must be an int >= 0", index)
    if qt in _STREAM_QUERIES and index >= PIPE_MAX_VERTEX_STREAMS:
        raise bad_value(
            "index",
            f"must name a vertex stream (0..{PIPE_MAX_VERTEX_STREAMS - 1}) for {qt.name}",
            index,
        )
    return qt, index


# the queries whose index is a vertex stream
_STREAM_QUERIES = frozenset(
    {
        QueryType.PRIMITIVES_GENERATED,
        QueryType.PRIMITIVES_EMITTED,
        QueryType.SO_STATISTICS,
        QueryType.SO_OVERFLOW_PREDICATE,
    }
)


_RESULT_BYTES = {
    QueryValueType.I32: 4,
    QueryValueType.U32: 4,
    QueryValueType.I64: 8,
    QueryValueType.U64: 8,
}
# the values of a query of several (get_query_result_resource's index)
_QUERY_VALUES = {
    QueryType.PIPELINE_STATISTICS: 11,
    QueryType.SO_STATISTICS: 2,
    QueryType.TIMESTAMP_DISJOINT: 2,
}


def query_result_bytes(result_type: QueryValueType) -> int:
    """The bytes get_query_result_resource writes for ``result_type``."""
    return _RESULT_BYTES[result_type]


def check_query_result_resource(
    query: Any, wait: Any, result_type: Any, index: Any, resource: Any, offset: Any
) -> tuple:
    """get_query_result_resource's arguments: (query, wait, result type,
    index (-1: availability), buffer, offset)."""
    q = check_query(query)
    if q.type in (QueryType.GPU_FINISHED, QueryType.DRIVER_SPECIFIC):
        raise bad_value("query", "must be a query whose result a buffer can hold", q.type.name)
    if not q.ended:
        raise bad_value("query", "has not been ended (end_query)")
    rtype = _enum("result_type", QueryValueType, check_int("result_type", result_type))
    index = check_int("index", index, -1)
    values = _QUERY_VALUES.get(q.type, 1)
    if index >= values:
        raise bad_value(
            "index", f"must be -1 (availability) or below {values} for {q.type.name}", index
        )
    res = check_resource("resource", resource, "buffer")
    offset = check_int("offset", offset, 0)
    size = _RESULT_BYTES[rtype]
    if offset % 4 or offset + size > res.width0:
        raise bad_value(
            "offset", f"must be a multiple of 4 leaving {size} bytes inside the buffer", offset
        )
    return q, check_bool("wait", wait), rtype, index, res, offset


_NO_BEGIN = frozenset({QueryType.TIMESTAMP, QueryType.GPU_FINISHED})


def begin_query(query: Any) -> Query:
    """Check a begin_query call and record it in the query's application state."""
    q = check_query(query)
    if q.type in _NO_BEGIN:
        raise bad_value("query", f"{q.type.name} queries take no begin_query")
    if q.active:
        raise bad_value("query", "is already active (begin_query twice without end_query)")
    q.active = True
    q.ended = False
    return q


def end_query(query: Any) -> Query:
    """Check an end_query call and record it in the query's application state."""
    q = check_query(query)
    if q.type not in _NO_BEGIN and not q.active:
        raise bad_value("query", "is not active (end_query without begin_query)")
    q.active = False
    q.ended = True
    return q


def check_query_result(query: Any) -> Query:
    q = check_query(query)
    if not q.ended:
        raise bad_value("query", "has not been ended (end_query)")
    return q


def check_render_condition(query: Any, condition: Any, mode: Any) -> tuple:
    """render_condition's arguments: (query or None, bool, RenderCond)."""
    if query is not None:
        check_query(query)
    cond = check_bool("condition", condition)
    return query, cond, _enum("mode", RenderCond, check_int("mode", mode))


# ----------------------------------------------------------------------------
# Non-CSO state
# ----------------------------------------------------------------------------


def check_blend_color(color: Any) -> tuple[float, float, float, float]:
    """Validate a pipe.BlendColor; return its colour as an immutable tuple."""
    if type(color) is BlendColor:
        c = color.color
        if type(c) is tuple and len(c) == 4:
            r, g, b, a = c
            if type(r) is float and type(g) is float and type(b) is float and type(a) is float:
                return c
    elif not isinstance(color, BlendColor):
        raise bad_type("color", "a pipe.BlendColor", color)
    try:
        r, g, b, a = color.color
        return (float(r), float(g), float(b), float(a))
    except (TypeError, ValueError):
        raise bad_value("color.color", "must be four numbers", color.color) from None


def check_stencil_ref(ref: Any) -> tuple[int, int]:
    if type(ref) is StencilRef:
        v = ref.ref_value
        if type(v) is tuple and len(v) == 2:
            front, back = v
            if type(front) is int and type(back) is int and 0 <= front <= 255 and 0 <= back <= 255:
                return v
    elif not isinstance(ref, StencilRef):
        raise bad_type("ref", "a pipe.StencilRef", ref)
    try:
        front, back = ref.ref_value
        front, back = int(front), int(back)
    except (TypeError, ValueError):
        raise bad_value("ref.ref_value", "must be two integers", ref.ref_value) from None
    if not (0 <= front <= 255 and 0 <= back <= 255):
        raise bad_value("ref.ref_value", "must be two values in 0..255", ref.ref_value)
    return front, back


def check_sample_mask(mask: Any) -> int:
    if type(mask) is int:
        return mask & _U32
    if not isinstance(mask, int | np.integer) or isinstance(mask, bool):
        raise bad_type("mask", "an int sample mask", mask)
    return int(mask) & _U32


def check_min_samples(min_samples: Any, support: Support) -> int:
    """set_min_samples' count (0 means 1)."""
    n = check_int("min_samples", min_samples, 0, 32) or 1
    if n > 1 and not support.sample_shading:
        raise UnsupportedError(
            f"sample shading (min_samples {n}) is not supported by {support.driver}: "
            "PIPE_CAP_SAMPLE_SHADING is 0 (no multisampling)"
        )
    return n


def check_clip_state(state: Any) -> ClipState:
    """A private copy of a clip state: up to PIPE_MAX_CLIP_PLANES planes of 4 floats."""
    if not isinstance(state, ClipState):
        raise bad_type("state", "a pipe.ClipState", state)
    planes = check_sequence("state.ucp", state.ucp)
    if len(planes) > PIPE_MAX_CLIP_PLANES:
        raise bad_value("state.ucp", f"may hold at most {PIPE_MAX_CLIP_PLANES} planes", len(planes))
    ucp = [
        tuple(float(v) for v in check_numbers(f"state.ucp[{i}]", p, 4))
        for i, p in enumerate(planes)
    ]
    ucp += [(0.0, 0.0, 0.0, 0.0)] * (PIPE_MAX_CLIP_PLANES - len(ucp))
    return ClipState(ucp=ucp)


def check_polygon_stipple(stipple: Any) -> PolyStipple:
    """A private copy of a stipple: 32 rows of 32-bit patterns."""
    if not isinstance(stipple, PolyStipple):
        raise bad_type("stipple", "a pipe.PolyStipple", stipple)
    rows = check_sequence("stipple.stipple", stipple.stipple)
    if len(rows) != 32:
        raise bad_value("stipple.stipple", "must hold 32 rows", len(rows))
    return PolyStipple([check_int(f"stipple.stipple[{i}]", r, 0, _U32) for i, r in enumerate(rows)])


def check_scissor_states(start: Any, scissors: Any) -> tuple[int, tuple[ScissorState, ...]]:
    """Validate and copy scissors: the returned states are private to the driver."""
    scissors = check_sequence("scissors", scissors)
    start = check_int("start", start)
    if start < 0 or start + len(scissors) > PIPE_MAX_VIEWPORTS:
        raise bad_value("start", f"plus the count must fit in {PIPE_MAX_VIEWPORTS}", start)
    out = []
    for i, s in enumerate(scissors):
        if not isinstance(s, ScissorState):
            raise bad_type(f"scissors[{i}]", "a pipe.ScissorState", s)
        box = [check_int(f"scissors[{i}].{f}", getattr(s, f), 0, 2**31 - 1) for f in _SCISSOR]
        out.append(ScissorState(*box))
    return start, tuple(out)


_SCISSOR = ("minx", "miny", "maxx", "maxy")


def check_viewport_states(start: Any, viewports: Any) -> tuple[int, tuple[ViewportState, ...]]:
    """Validate and copy viewports (scale and translate become float tuples)."""
    viewports = check_sequence("viewports", viewports)
    start = check_int("start", start)
    if start < 0 or start + len(viewports) > PIPE_MAX_VIEWPORTS:
        raise bad_value("start", f"plus the count must fit in {PIPE_MAX_VIEWPORTS}", start)
    out = []
    for i, v in enumerate(viewports):
        if not isinstance(v, ViewportState):
            raise bad_type(f"viewports[{i}]", "a pipe.ViewportState", v)
        try:
            scale = tuple(float(x) for x in v.scale)
            translate = tuple(float(x) for x in v.translate)
        except (TypeError, ValueError):
            raise bad_value(f"viewports[{i}]", "scale and translate must be numbers", v) from None
        if len(scale) != 3 or len(translate) != 3:
            raise bad_value(f"viewports[{i}]", "scale and translate need three components", v)
        out.append(ViewportState(scale, translate))  # type: ignore[arg-type]
    return start, tuple(out)


def check_window_rectangles(
    include: Any, rects: Any, support: Support
) -> tuple[bool, tuple[tuple[int, int, int, int], ...]]:
    """set_window_rectangles' arguments: (include, the rectangles as
    (minx, miny, maxx, maxy), max exclusive)."""
    inc = check_bool("include", include)
    if rects is None:
        rects = []
    if isinstance(rects, str | bytes | dict) or not hasattr(rects, "__iter__"):
        raise bad_type("rects", "a list of pipe.ScissorState", rects)
    rects = list(rects)
    if len(rects) > PIPE_MAX_WINDOW_RECTANGLES:
        limit = PIPE_MAX_WINDOW_RECTANGLES
        raise bad_value("rects", f"must hold at most {limit} (the cap's count)", len(rects))
    out = []
    for i, r in enumerate(rects):
        if not isinstance(r, ScissorState):
            raise bad_type(f"rects[{i}]", "a pipe.ScissorState", r)
        out.append(tuple(check_int(f"rects[{i}].{f}", getattr(r, f), 0, 2**31 - 1)
                         for f in _SCISSOR))  # fmt: skip
    if len(out) > support.max_window_rectangles:
        raise UnsupportedError(
            f"{len(out)} window rectangles: {support.driver} implements "
            f"{support.max_window_rectangles} (PIPE_CAP_MAX_WINDOW_RECTANGLES)"
        )
    return inc, tuple(out)  # type: ignore[return-value]


def check_tess_state(outer: Any, inner: Any, support: Support) -> tuple[tuple, tuple]:
    """set_tess_state's default levels: four outer and two inner floats (as
    float32 values: the levels are pipe floats)."""
    if not support.tessellation:
        raise UnsupportedError(f"tessellation is not supported by {support.driver}")
    o = check_numbers("default_outer_level", outer, 4)
    i = check_numbers("default_inner_level", inner, 2)
    return tuple(float(np.float32(v)) for v in o), tuple(float(np.float32(v)) for v in i)


def check_slots(shader: Any, start: Any, items: Any, limit: int, arg: str, kind: type) -> tuple:
    """A (shader, start, items) binding range: (stage, start, list of kind-or-None)."""
    stage = _enum("shader", ShaderType, check_int("shader", shader))
    items = check_sequence(arg, items)
    start = check_int("start", start)
    if start < 0 or start + len(items) > limit:
        raise bad_value("start", f"plus the {arg} count must fit in {limit} slots", start)
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, kind):
            raise bad_type(f"{arg}[{i}]", f"a {kind.__name__} or None", x)
    return stage, start, items


def check_sampler_states(shader: Any, start: Any, samplers: Any) -> tuple:
    return check_slots(shader, start, samplers, PIPE_MAX_SAMPLERS, "samplers", SamplerCSO)


def check_sampler_views(shader: Any, start: Any, views: Any) -> tuple:
    stage, start, views = check_slots(
        shader, start, views, PIPE_MAX_SHADER_SAMPLER_VIEWS, "views", SamplerView
    )
    for i, v in enumerate(views):
        if v is not None:
            if v.destroyed:
                raise bad_value(f"views[{i}]", "has been destroyed (sampler_view_destroy)")
            if v.texture.destroyed:
                raise bad_value(f"views[{i}]", "is a view of a destroyed resource")
    return stage, start, views


def check_constant_buffer(shader: Any, index: Any, cb: Any) -> tuple:
    """Validate set_constant_buffer's arguments: (stage, index, binding).

    The binding is None (unbind), ``(buffer resource, (offset, size))`` or
    ``(None, bytes)`` for user data (a view of the caller's data: the threaded
    context copies it).
    """
    if type(shader) is ShaderType:  # (the common case: no conversions)
        stage = shader
    else:
        stage = _enum("shader", ShaderType, check_int("shader", shader))
    if type(index) is not int:
        index = check_int("index", index)
    if not 0 <= index < PIPE_MAX_CONSTANT_BUFFERS:
        raise bad_value("index", f"must be in 0..{PIPE_MAX_CONSTANT_BUFFERS - 1}", index)
    if cb is None:
        return stage, index, None
    if not isinstance(cb, ConstantBuffer):
        raise bad_type("cb", "a pipe.ConstantBuffer or None", cb)
    offset = check_int("cb.buffer_offset", cb.buffer_offset, 0)
    size = check_int("cb.buffer_size", cb.buffer_size, 0)
    if cb.buffer is not None and cb.user_buffer is not None:
        raise bad_value("cb", "must set buffer or user_buffer, not both")
    if cb.buffer is not None:
        if not isinstance(cb.buffer, Resource):
            raise bad_type("cb.buffer", "a buffer Resource", cb.buffer)
        if not cb.buffer.is_buffer:
            raise bad_value("cb.buffer", "must be a PIPE_BUFFER resource")
        if cb.buffer.destroyed:
            raise bad_value("cb.buffer", "has been destroyed (screen.resource_destroy)")
        if offset % 16:
            raise bad_value("cb.buffer_offset", "must be a non-negative multiple of 16", offset)
        size = size or (cb.buffer.width0 - offset)
        if offset + size > cb.buffer.width0 or size < 0:
            raise bad_value("cb.buffer_size", "must lie inside the buffer", cb.buffer_size)
        return stage, index, (cb.buffer, (offset, size))
    if cb.user_buffer is not None:
        data = user_bytes(cb.user_buffer, "cb.user_buffer")
        data = data[offset : offset + size] if size else data[offset:]
        return stage, index, (None, data)
    return stage, index, None


def check_framebuffer_state(state: Any, support: Support) -> FramebufferState:
    """Validate a framebuffer state; return a private copy (plain ints, a new list)."""
    from ..util.format import try_describe

    if not isinstance(state, FramebufferState):
        raise bad_type("state", "a pipe.FramebufferState", state)
    limit = support.max_texture_size
    width = check_int("state.width", state.width, 0, limit)
    height = check_int("state.height", state.height, 0, limit)
    layers = check_int("state.layers", state.layers, 0)
    samples = check_int("state.samples", state.samples, 0)
    cbufs = check_sequence("state.cbufs", state.cbufs)
    if len(cbufs) > PIPE_MAX_COLOR_BUFS:
        raise bad_value(
            "state.cbufs", f"may hold at most {PIPE_MAX_COLOR_BUFS} surfaces", len(cbufs)
        )
    for i, s in enumerate(cbufs):
        if s is not None and not isinstance(s, Surface):
            raise bad_type(f"state.cbufs[{i}]", "a Surface or None", s)
        if s is not None:
            check_surface(f"state.cbufs[{i}]", s)
            d = try_describe(s.format)
            if d is None or d.is_depth or d.is_stencil:
                raise bad_value(f"state.cbufs[{i}]", "must be a colour surface", s.format)
            if s.width < width or s.height < height:
                raise bad_value(f"state.cbufs[{i}]", f"must be at least {width}x{height}", s)
    zs = state.zsbuf
    if zs is not None:
        if not isinstance(zs, Surface):
            raise bad_type("state.zsbuf", "a Surface or None", zs)
        check_surface("state.zsbuf", zs)
        d = try_describe(zs.format)
        if d is None or not (d.is_depth or d.is_stencil):
            raise bad_value("state.zsbuf", "must be a depth/stencil surface", zs.format)
        if zs.width < width or zs.height < height:
            raise bad_value("state.zsbuf", f"must be at least {width}x{height}", zs)
    counts = {max(1, s.texture.nr_samples) for s in [*cbufs, zs] if s is not None}
    if len(counts) > 1:
        raise bad_value(
            "state", "must have surfaces of one sample count", sorted(counts)
        )  # (pipe_framebuffer_state: every attachment has the framebuffer's samples)
    return FramebufferState(
        width=width, height=height, layers=layers, samples=samples, cbufs=cbufs, zsbuf=zs
    )


def check_vertex_buffers(start_slot: Any, buffers: Any) -> list[tuple[int, VertexBuffer | None]]:
    """Validate a set_vertex_buffers call as a whole; return (slot, binding) pairs.

    A binding is None (unbind) or a VertexBuffer holding a PIPE_BUFFER
    resource or a private copy of the user's bytes (``is_user_buffer``).
    Nothing is bound unless every entry is valid.
    """
    buffers = check_sequence("buffers", buffers)
    if (
        not isinstance(start_slot, int)
        or start_slot < 0
        or start_slot + len(buffers) > PIPE_MAX_ATTRIBS
    ):
        raise bad_value(
            "start_slot", f"plus the count must fit in {PIPE_MAX_ATTRIBS} slots", start_slot
        )
    out: list[tuple[int, VertexBuffer | None]] = []
    for i, vb in enumerate(buffers):
        slot = start_slot + i
        if vb is None:
            out.append((slot, None))
            continue
        if not isinstance(vb, VertexBuffer):
            raise bad_type(f"buffers[{i}]", "a pipe.VertexBuffer or None", vb)
        buf = vb.buffer
        if buf is None:
            out.append((slot, None))
            continue
        for name in ("stride", "buffer_offset"):
            v = getattr(vb, name)
            if not isinstance(v, int | np.integer) or isinstance(v, bool) or v < 0:
                raise bad_value(f"buffers[{i}].{name}", "must be an integer >= 0", v)
        if isinstance(buf, Resource):
            if not buf.is_buffer:
                raise bad_value(f"buffers[{i}].buffer", "must be a PIPE_BUFFER resource", buf)
            if buf.destroyed:
                raise bad_value(f"buffers[{i}].buffer", "has been destroyed")
            stored = buf
        else:
            stored = user_bytes(buf, f"buffers[{i}].buffer").copy()
        out.append(
            (
                slot,
                VertexBuffer(
                    int(vb.stride), int(vb.buffer_offset), stored, not isinstance(buf, Resource)
                ),
            )
        )
    return out


def _check_binding_list(shader: Any, start: Any, items: Any, limit: int, kind: type, arg: str):
    """The stage, start slot and item sequence of a set_shader_buffers /
    set_shader_images call (items themselves are checked by the caller)."""
    try:
        stage = ShaderType(shader)
    except (ValueError, TypeError):
        raise bad_value("shader", "must be a pipe.ShaderType", shader) from None
    if stage == ShaderType.TYPES:
        raise bad_value("shader", "must be a shader stage", stage.name)
    start = check_int("start", start, 0, limit)
    if items is None:
        items = []
    if isinstance(items, kind) or not hasattr(items, "__len__"):
        raise bad_type(arg, f"a sequence of pipe.{kind.__name__} or None", items)
    if start + len(items) > limit:
        raise bad_value(arg, f"start + len({arg}) must be <= {limit}", len(items))
    return stage, start, items


def check_shader_buffers(shader: Any, start: Any, buffers: Any) -> tuple:
    """Validate ``set_shader_buffers``: (stage, start, [ShaderBuffer copy or None])."""
    stage, start, buffers = _check_binding_list(
        shader, start, buffers, PIPE_MAX_SHADER_BUFFERS, ShaderBuffer, "buffers"
    )
    out: list[ShaderBuffer | None] = []
    for i, b in enumerate(buffers):
        arg = f"buffers[{i}]"
        if b is None or (isinstance(b, ShaderBuffer) and b.buffer is None):
            out.append(None)
            continue
        if not isinstance(b, ShaderBuffer):
            raise bad_type(arg, "a pipe.ShaderBuffer or None", b)
        res = b.buffer
        if not isinstance(res, Resource) or not res.is_buffer:
            raise bad_type(f"{arg}.buffer", "a buffer Resource created by this screen", res)
        if res.destroyed:
            raise bad_value(f"{arg}.buffer", "has been destroyed")
        off = check_int(f"{arg}.buffer_offset", b.buffer_offset, 0)
        if off % 4:
            raise bad_value(
                f"{arg}.buffer_offset",
                "must be a multiple of 4 (PIPE_CAP_SHADER_BUFFER_OFFSET_ALIGNMENT)",
                off,
            )
        size = check_int(f"{arg}.buffer_size", b.buffer_size, 0)
        if off + size > res.width0:
            raise bad_value(
                arg,
                f"buffer_offset + buffer_size must be <= the buffer's {res.width0} bytes",
                off + size,
            )
        out.append(ShaderBuffer(res, off, size))
    return stage, start, out


def check_shader_images(shader: Any, start: Any, images: Any) -> tuple:
    """Validate ``set_shader_images``: (stage, start, [ImageView copy or None])."""
    from ..util.format import try_describe

    stage, start, images = _check_binding_list(
        shader, start, images, PIPE_MAX_SHADER_IMAGES, ImageView, "images"
    )
    out: list[ImageView | None] = []
    for i, v in enumerate(images):
        arg = f"images[{i}]"
        if v is None or (isinstance(v, ImageView) and v.resource is None):
            out.append(None)
            continue
        if not isinstance(v, ImageView):
            raise bad_type(arg, "a pipe.ImageView or None", v)
        res = v.resource
        if not isinstance(res, Resource):
            raise bad_type(f"{arg}.resource", "a Resource created by this screen", res)
        if res.destroyed:
            raise bad_value(f"{arg}.resource", "has been destroyed")
        try:
            fmt = Format(v.format)
        except (ValueError, TypeError):
            raise bad_value(f"{arg}.format", "must be a pipe.Format", v.format) from None
        desc = try_describe(fmt)
        if (
            desc is None
            or desc.is_depth
            or desc.is_stencil
            or desc.layout not in ("array", "packed")
            or fmt == Format.NONE
        ):
            raise bad_value(f"{arg}.format", "must be a colour format images can hold", fmt.name)
        if res.is_buffer:
            off = check_int(f"{arg}.buf_offset", v.buf_offset, 0)
            size = check_int(f"{arg}.buf_size", v.buf_size, 0)
            if off % desc.block_bytes or size % desc.block_bytes:
                raise bad_value(
                    arg,
                    f"buf_offset and buf_size must be multiples of {fmt.name}'s "
                    f"{desc.block_bytes} bytes",
                    (off, size),
                )
            if off + size > res.width0:
                raise bad_value(
                    arg,
                    f"buf_offset + buf_size must be <= the buffer's {res.width0} bytes",
                    off + size,
                )
        else:
            if desc.block_bytes != res.block_bytes:
                raise bad_value(
                    f"{arg}.format",
                    f"must have the resource's texel size ({res.block_bytes} bytes)",
                    fmt.name,
                )
            level = check_int(f"{arg}.level", v.level, 0, res.last_level)
            layers = res.level_extent(level)[2]
            first = check_int(f"{arg}.first_layer", v.first_layer, 0, layers - 1)
            check_int(f"{arg}.last_layer", v.last_layer, first, layers - 1)
        out.append(
            ImageView(
                res,
                fmt,
                int(v.access),
                int(v.level),
                int(v.first_layer),
                int(v.last_layer),
                int(v.buf_offset),
                int(v.buf_size),
            )
        )
    return stage, start, out


def check_stream_output_target(resource: Any, offset: Any, size: Any) -> tuple[Resource, int, int]:
    """create_stream_output_target's arguments: (buffer, buffer_offset, buffer_size)."""
    if not isinstance(resource, Resource) or not resource.is_buffer:
        raise bad_type("resource", "a buffer Resource", resource)
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed")
    offset = check_int("buffer_offset", offset, 0)
    size = check_int("buffer_size", size, 0)
    if offset % 4 or size % 4:
        raise bad_value("buffer_offset/buffer_size", "must be multiples of 4", (offset, size))
    if offset + size > resource.width0:
        raise bad_value(
            "buffer_offset + buffer_size",
            f"must lie inside the buffer ({resource.width0} bytes)",
            offset + size,
        )
    return resource, offset, size


def destroy_stream_output_target(target: Any) -> StreamOutputTarget:
    """stream_output_target_destroy: marks the target destroyed (queued work
    and bindings that hold it keep writing it)."""
    if not isinstance(target, StreamOutputTarget):
        raise bad_type("target", "a target from create_stream_output_target", target)
    target.destroyed = True
    return target


def check_stream_output_targets(targets: Any, offsets: Any, support: Support) -> tuple:
    """set_stream_output_targets: (targets, offsets) tuples, one offset per
    target: -1 (or (unsigned)-1, as C callers spell it) appends, otherwise a
    multiple of 4 that becomes the target's bytes written so far."""
    targets = tuple(check_sequence("targets", targets))
    offsets = tuple(check_sequence("offsets", offsets))
    if targets and not support.max_stream_output_buffers:
        raise UnsupportedError(f"stream output is not implemented by {support.driver} yet")
    limit = min(PIPE_MAX_SO_BUFFERS, support.max_stream_output_buffers or PIPE_MAX_SO_BUFFERS)
    if len(targets) > limit:
        raise bad_value("targets", f"may hold at most {limit} targets", len(targets))
    if len(offsets) != len(targets):
        raise bad_value("offsets", f"must hold one offset per target ({len(targets)})", offsets)
    out = []
    for i, (t, off) in enumerate(zip(targets, offsets)):
        if t is not None:
            if not isinstance(t, StreamOutputTarget):
                raise bad_type(
                    f"targets[{i}]", "a target from create_stream_output_target or None", t
                )
            if t.destroyed:
                raise bad_value(f"targets[{i}]", "has been destroyed")
        off = check_int(f"offsets[{i}]", off, -1, _U32)
        if off == _U32:
            off = -1
        if off > 0 and off % 4:
            raise bad_value(f"offsets[{i}]", "must be -1 (append) or a multiple of 4", off)
        out.append(off)
    return targets, tuple(out)


def check_global_binding(
    first: Any, count: Any, resources: Any, handles: Any, support: Support
) -> tuple:
    """set_global_binding: (first, count, buffers or None, handles or None).

    ``resources`` None unbinds slots ``first`` to ``first + count - 1``;
    otherwise it holds at least ``count`` buffers (None unbinds that slot)
    and ``handles`` as many 1-D writable uint32 numpy arrays (``uint32_t *``):
    the driver adds each buffer's GLOBAL address to ``handle[0]``."""
    if not support.max_global_buffers:
        raise UnsupportedError(f"GLOBAL memory is not implemented by {support.driver}")
    limit = support.max_global_buffers
    first = check_int("first", first, 0, limit)
    count = check_int("count", count, 0, limit - first)
    if resources is None:
        if handles is not None:
            raise bad_value("handles", "must be None when resources is None", handles)
        return first, count, None, None
    resources = check_sequence("resources", resources)
    handles = check_sequence("handles", handles)
    if len(resources) < count or len(handles) < count:
        raise bad_value(
            "resources/handles", f"must hold at least count ({count}) entries",
            (len(resources), len(handles)),
        )  # fmt: skip
    out_res, out_handles = [], []
    for i in range(count):
        res, h = resources[i], handles[i]
        if res is None:
            out_res.append(None)
            out_handles.append(None)
            continue
        res = check_resource(f"resources[{i}]", res, "buffer")
        if res.width0 > support.max_global_buffer_bytes:
            raise UnsupportedError(
                f"resources[{i}]: {support.driver} maps buffers of at most "
                f"{support.max_global_buffer_bytes} bytes into GLOBAL memory ({res.width0})"
            )
        if not (
            isinstance(h, np.ndarray)
            and h.dtype == np.uint32
            and h.ndim == 1
            and h.size >= 1
            and h.flags.writeable
        ):
            raise bad_type(f"handles[{i}]", "a writable 1-D numpy uint32 array (uint32_t *)", h)
        out_res.append(res)
        out_handles.append(h)
    return first, count, tuple(out_res), tuple(out_handles)


# ----------------------------------------------------------------------------
# Drawing, clearing, compute
# ----------------------------------------------------------------------------


class _CheckedDrawInfo(DrawInfo):
    """A DrawInfo that check_draw_info made: a private copy, fields checked
    (a recorded copy is not checked again when it is executed)."""

    __slots__ = ()


_DRAW_FIELDS = tuple(f.name for f in dataclasses.fields(DrawInfo))
_DRAW_U32_FIELDS = (
    "start",
    "count",
    "instance_count",
    "start_instance",
    "drawid",
    "restart_index",
    "min_index",
    "max_index",
)


_draw_fields = operator.attrgetter(*_DRAW_FIELDS)
# Per thread: the last DrawInfo checked, its fields then, and the copy made.
_last_draw = threading.local()


def check_draw_info(info: Any, support: Support) -> DrawInfo:
    """Validate a DrawInfo's fields; return a copy holding plain ints and bools.

    The index data itself (``index``) is checked where it is read, since a
    resource's contents may change until the draw runs.  A copy this
    function made is returned as it is.  The same DrawInfo passed again with
    the same fields (applications reuse theirs draw after draw) gets the same
    copy back without checking again -- unless its indices are user memory,
    which the caller may have rewritten, or its index buffer has been
    destroyed since, or it is indirect or draws a stream output's count (their
    objects may have changed in place); nothing changes a checked copy.
    """
    if type(info) is _CheckedDrawInfo:
        return info
    last = getattr(_last_draw, "memo", None)
    if last is not None and last[0] is info and last[1] is support:
        fields = _draw_fields(info)
        if fields == last[2] and not getattr(last[3].index, "destroyed", False):
            return last[3]
    out = _check_draw_info(info, support)
    if (
        type(info) is DrawInfo
        and (not out.index_size or isinstance(out.index, Resource))
        and out.indirect is None
        and out.count_from_stream_output is None
    ):
        _last_draw.memo = (info, support, _draw_fields(info), out)
    return out


def _check_draw_info(info: Any, support: Support) -> DrawInfo:
    if not isinstance(info, DrawInfo):
        raise bad_type("info", "a pipe.DrawInfo", info)
    if info.indirect is not None and not support.draw_indirect:
        raise UnsupportedError(f"indirect draws are not implemented by {support.driver} yet")
    so_target = info.count_from_stream_output
    if so_target is not None:
        if not support.max_stream_output_buffers:
            raise UnsupportedError(
                f"draw_auto (count_from_stream_output) is not implemented by {support.driver} yet"
            )
        if not isinstance(so_target, StreamOutputTarget):
            raise bad_type(
                "info.count_from_stream_output",
                "a stream output target from create_stream_output_target",
                so_target,
            )
        if so_target.destroyed:
            raise bad_value("info.count_from_stream_output", "has been destroyed")
        if info.index_size:
            raise bad_value(
                "info.index_size", "must be 0 for a draw from stream output (draw_auto)"
            )
    out = _CheckedDrawInfo.__new__(_CheckedDrawInfo)
    for name in _DRAW_FIELDS:
        setattr(out, name, getattr(info, name))
    mode = info.mode
    if type(mode) is not Prim:
        out.mode = _enum("info.mode", Prim, check_int("info.mode", mode))
    for name in _DRAW_U32_FIELDS:
        v = getattr(info, name)
        if type(v) is not int or not 0 <= v <= _U32:  # (the common case needs no call)
            setattr(out, name, check_int(f"info.{name}", v, 0, _U32))
    out.index_bias = check_int("info.index_bias", info.index_bias, -(2**31), 2**31 - 1)
    out.vertices_per_patch = check_int("info.vertices_per_patch", info.vertices_per_patch, 0)
    out.index_size = check_int("info.index_size", info.index_size)
    if out.index_size not in (0, 1, 2, 4):
        raise bad_value("info.index_size", "must be 0, 1, 2 or 4", out.index_size)
    if out.index_size:
        index = info.index
        if index is None:
            raise bad_value("info.index", "must be set when index_size is non-zero")
        if isinstance(index, Resource):
            if not index.is_buffer:
                raise bad_type("info.index", "a buffer Resource or user index data", index)
            if index.destroyed:
                raise bad_value("info.index", "has been destroyed (screen.resource_destroy)")
            size = index.width0
        else:
            size = user_bytes(index, "info.index").size
        first = out.start * out.index_size
        if first + out.count * out.index_size > size:
            raise bad_value(
                "info.start/count",
                f"index range [{out.start}, {out.start + out.count}) must lie inside the "
                f"index buffer ({size // out.index_size} indices)",
            )
    if info.indirect is not None:
        if so_target is not None:
            raise bad_value(
                "info.indirect", "must be None for a draw from stream output (draw_auto)"
            )
        out.indirect = check_draw_indirect_info(info.indirect, out.index_size)
    out.primitive_restart = bool(check_int("info.primitive_restart", info.primitive_restart, 0, 1))
    out.has_user_indices = bool(check_int("info.has_user_indices", info.has_user_indices, 0, 1))
    limit = support.max_draw_vertices
    if limit and out.count * out.instance_count > limit:
        raise UnsupportedError(
            f"{support.driver} draws at most {limit:,} vertices a call (info.count x "
            f"info.instance_count = {out.count * out.instance_count:,}): split the draw"
        )
    return out


def check_draw_indirect_info(indirect: Any, index_size: int) -> DrawIndirectInfo:
    """Validate ``DrawInfo.indirect``; returns a private copy.

    The commands (uint32 ``count, instance_count, start, start_instance``, or
    ``count, instance_count, start, index_bias, start_instance`` for indexed
    draws) and the draw count are read when the draw runs; here their places
    must lie inside their buffers.
    """
    if not isinstance(indirect, DrawIndirectInfo):
        raise bad_type("info.indirect", "a pipe.DrawIndirectInfo", indirect)
    buf = indirect.buffer
    if not isinstance(buf, Resource) or not buf.is_buffer:
        raise bad_type("info.indirect.buffer", "a buffer Resource created by this screen", buf)
    if buf.destroyed:
        raise bad_value("info.indirect.buffer", "has been destroyed")
    size = 20 if index_size else 16
    offset = check_int("info.indirect.offset", indirect.offset, 0, _U32)
    stride = check_int("info.indirect.stride", indirect.stride, 0, _U32)
    draw_count = check_int("info.indirect.draw_count", indirect.draw_count, 0, _U32)
    if offset % 4 or stride % 4:
        raise bad_value("info.indirect.offset/stride", "must be multiples of 4", (offset, stride))
    if draw_count > 1 and stride < size:
        raise bad_value(
            "info.indirect.stride",
            f"must be at least the command size ({size} bytes) for draw_count > 1",
            stride,
        )
    if draw_count and offset + (draw_count - 1) * stride + size > buf.width0:
        raise bad_value(
            "info.indirect",
            f"commands must lie inside the buffer ({buf.width0} bytes): offset + "
            f"(draw_count - 1) * stride + {size}",
            offset + (draw_count - 1) * stride + size,
        )
    out = DrawIndirectInfo(offset=offset, stride=stride, draw_count=draw_count, buffer=buf)
    count_buf = indirect.indirect_draw_count
    if count_buf is not None:
        if not isinstance(count_buf, Resource) or not count_buf.is_buffer:
            raise bad_type(
                "info.indirect.indirect_draw_count", "a buffer Resource or None", count_buf
            )
        if count_buf.destroyed:
            raise bad_value("info.indirect.indirect_draw_count", "has been destroyed")
        count_off = check_int(
            "info.indirect.indirect_draw_count_offset", indirect.indirect_draw_count_offset, 0
        )
        if count_off % 4 or count_off + 4 > count_buf.width0:
            raise bad_value(
                "info.indirect.indirect_draw_count_offset",
                "must be a multiple of 4 leaving a uint32 inside indirect_draw_count",
                count_off,
            )
        out.indirect_draw_count = count_buf
        out.indirect_draw_count_offset = count_off
    return out


_LINE_MODES = frozenset({Prim.LINES, Prim.LINE_STRIP, Prim.LINE_LOOP})
_LINE_DRAW_MODES = _LINE_MODES | {Prim.LINES_ADJACENCY, Prim.LINE_STRIP_ADJACENCY}
_TRIANGLE_MODES = frozenset(
    {
        Prim.TRIANGLES,
        Prim.TRIANGLE_STRIP,
        Prim.TRIANGLE_FAN,
        Prim.QUADS,
        Prim.QUAD_STRIP,
        Prim.POLYGON,
    }
)
_ADJACENCY_MODES = frozenset(
    {
        Prim.LINES_ADJACENCY,
        Prim.LINE_STRIP_ADJACENCY,
        Prim.TRIANGLES_ADJACENCY,
        Prim.TRIANGLE_STRIP_ADJACENCY,
    }
)
# the draw modes a geometry shader of each input primitive accepts
_GS_INPUT_MODES = {
    "POINTS": frozenset({Prim.POINTS}),
    "LINES": _LINE_MODES,
    "TRIANGLES": _TRIANGLE_MODES,
    "LINES_ADJACENCY": frozenset({Prim.LINES_ADJACENCY, Prim.LINE_STRIP_ADJACENCY}),
    "TRIANGLES_ADJACENCY": frozenset({Prim.TRIANGLES_ADJACENCY, Prim.TRIANGLE_STRIP_ADJACENCY}),
}


def check_draw_state(
    info: DrawInfo,
    vs: ShaderCSO | None,
    fs: ShaderCSO | None,
    gs: ShaderCSO | None,
    velems: VertexElementsCSO | None,
    rasterizer: RasterizerState,
    fb: FramebufferState,
    support: Support,
    so_targets: tuple = (),
    tcs: ShaderCSO | None = None,
    tes: ShaderCSO | None = None,
    dsa: DepthStencilAlphaState | None = None,
) -> None:
    """A checked draw against the state bound for it (what any driver needs).

    With ``rasterizer_discard`` nothing reaches the fragment stage: stream
    output and queries need neither a fragment shader nor a framebuffer.
    ``so_targets`` are the bound stream output targets, ``tcs``/``tes`` the
    bound tessellation shaders, ``dsa`` the bound depth/stencil/alpha state
    (None: the default)."""
    if vs is None:
        raise bad_value("vertex shader", "must be bound (bind_vs_state) before draw_vbo")
    discard = rasterizer.rasterizer_discard
    if fs is None and not discard:
        raise bad_value("fragment shader", "must be bound (bind_fs_state) before draw_vbo")
    if (fb.width <= 0 or fb.height <= 0) and not discard:
        raise bad_value("framebuffer", "must be set (width and height > 0) before draw_vbo")
    if fs is not None and not discard and fs.memory_writes:
        if _samples(fb) > 1:
            raise UnsupportedError(
                "fragment shader stores and atomics on a multisampled framebuffer are not "
                f"implemented by {support.driver} yet"
            )
        if fs.early_fragment_tests and dsa is not None and dsa.alpha.enabled:
            raise UnsupportedError(
                "the alpha test with FS_EARLY_DEPTH_STENCIL on a fragment shader with stores "
                f"is not implemented by {support.driver}"
            )
    inputs = vs.inputs
    if inputs:
        if velems is None:
            raise bad_value("vertex elements", "must be bound: the vertex shader reads inputs")
        n = len(velems.elements)
        if max(inputs) >= n:
            missing = min(i for i in inputs if i >= n)
            raise bad_value(
                "vertex elements", f"must provide IN[{missing}] of the vertex shader ({n} bound)"
            )
    mode = info.mode
    if mode == Prim.PATCHES and not support.tessellation:
        raise UnsupportedError(
            f"info.mode PATCHES: tessellation is not supported by {support.driver}"
        )
    tess_output = _check_tessellation(info, tcs, tes, support)
    if mode == Prim.TRIANGLE_STRIP_ADJACENCY and not support.triangle_strip_adjacency:
        raise UnsupportedError(
            f"TRIANGLE_STRIP_ADJACENCY is not implemented by {support.driver} yet"
        )
    last = tes if tes is not None else vs
    if (
        gs is None
        and mode in _ADJACENCY_MODES
        and last.so is not None
        and any(t is not None for t in so_targets)
    ):
        raise bad_value(
            "info.mode",
            "must not be an adjacency mode for stream output without a geometry shader",
            mode.name,
        )
    if tess_output is not None:
        mode = _TESS_AS_MODE[tess_output]  # (what the later stages draw)
    if gs is not None:
        inp = gs.gs_input
        if mode not in _GS_INPUT_MODES.get(inp, ()):
            rule = f"must draw {inp} for the bound geometry shader ({inp} input)"
            if tess_output is not None:
                rule += f": the tessellator makes {tess_output}"
            raise bad_value("info.mode", rule, mode.name)
    elif mode == Prim.POINTS:
        if rasterizer.point_smooth and not support.smooth_points:
            raise UnsupportedError(
                f"smooth (antialiased) points are not implemented by {support.driver}"
            )
    elif mode in _LINE_DRAW_MODES:
        if rasterizer.line_smooth and not support.smooth_lines:
            raise UnsupportedError(
                f"smooth (antialiased) lines are not implemented by {support.driver}"
            )
        if rasterizer.line_stipple_enable and not support.line_stipple:
            raise UnsupportedError(f"line stipple is not implemented by {support.driver} yet")


def _samples(fb: FramebufferState) -> int:
    """A framebuffer's sample count: its surfaces' (all the same), else ``samples``."""
    for surf in [*fb.cbufs, fb.zsbuf]:
        if surf is not None:
            return max(1, surf.texture.nr_samples)
    return max(1, fb.samples)


MAX_PATCH_VERTICES = 32  # PIPE_CAP_MAX_PATCH_VERTICES... (GL_MAX_PATCH_VERTICES)
# the draw mode the stages after the tessellator see
_TESS_AS_MODE = {"points": Prim.POINTS, "lines": Prim.LINES, "triangles": Prim.TRIANGLES}


def _check_tessellation(
    info: DrawInfo, tcs: ShaderCSO | None, tes: ShaderCSO | None, support: Support
) -> str | None:
    """A draw's mode against the bound tessellation shaders; returns the
    tessellator's output primitives (points, lines, triangles) or None."""
    if tes is None:
        if tcs is not None:
            raise bad_value(
                "tessellation evaluation shader",
                "must be bound (bind_tes_state) with a tessellation control shader",
            )
        if info.mode == Prim.PATCHES:
            raise bad_value(
                "info.mode", "PATCHES needs a tessellation evaluation shader (bind_tes_state)"
            )
        return None
    if info.mode != Prim.PATCHES:
        raise bad_value(
            "info.mode", "must be PATCHES while tessellation shaders are bound", info.mode.name
        )
    if not 1 <= info.vertices_per_patch <= MAX_PATCH_VERTICES:
        raise bad_value(
            "info.vertices_per_patch",
            f"must be between 1 and {MAX_PATCH_VERTICES} for PATCHES",
            info.vertices_per_patch,
        )
    if info.primitive_restart and info.index_size:
        raise UnsupportedError(
            f"primitive restart with PATCHES is not supported by {support.driver} "
            "(PIPE_CAP_PRIMITIVE_RESTART_FOR_PATCHES is 0)"
        )
    return tes.tess_output


# PIPE_CLEAR_* bits as plain ints (a Flag's & and | build enum members: ~1-2 us each)
_CLEAR_ALL = int(Clear.COLOR | Clear.DEPTHSTENCIL)
_CLEAR_COLOR = int(Clear.COLOR)
_CLEAR_DEPTH = int(Clear.DEPTH)
_CLEAR_STENCIL = int(Clear.STENCIL)


def check_clear(buffers: Any, color: Any, depth: Any, stencil: Any, scissor: Any = None) -> tuple:
    """Validate clear()'s arguments: (bits, colour tuple or None, depth, stencil, scissor)."""
    bits = check_int("buffers", buffers)
    if bits & ~_CLEAR_ALL:
        raise bad_value("buffers", "has bits that are not PIPE_CLEAR_* flags", hex(bits))
    col = None
    if bits & _CLEAR_COLOR:
        if color is None:
            raise bad_value("color", "is required when clearing colour buffers")
        col = check_numbers("color", color, 4)
    d = 1.0
    if bits & _CLEAR_DEPTH:
        d = depth if type(depth) is float else check_numbers("depth", (depth,), 1)[0]
        if not 0.0 <= d <= 1.0:
            raise bad_value("depth", "must be in [0, 1]", depth)
    # an unsigned value of which the stencil buffer keeps the low 8 bits (as Mesa masks it)
    st = check_int("stencil", stencil, 0, _U32) & 0xFF if bits & _CLEAR_STENCIL else 0
    if scissor is not None:
        if not isinstance(scissor, ScissorState):
            raise bad_type("scissor_state", "a pipe.ScissorState or None", scissor)
        scissor = ScissorState(
            *[check_int(f"scissor_state.{f}", getattr(scissor, f), 0, 2**31 - 1) for f in _SCISSOR]
        )
    return bits, col, d, st, scissor


def check_surface_clear(dst: Any, dstx: Any, dsty: Any, width: Any, height: Any) -> Box:
    """The box a clear_render_target / clear_depth_stencil writes, checked."""
    check_surface("dst", dst)
    box = Box(dstx, dsty, dst.first_layer, width, height, dst.last_layer - dst.first_layer + 1)
    return check_box(dst.texture, dst.level, box, "dstx/dsty/width/height")


def check_clear_render_target(
    dst: Any, color: Any, dstx: Any, dsty: Any, width: Any, height: Any, cond: Any
) -> tuple:
    """(dst, colour, box, render-condition flag)."""
    box = check_surface_clear(dst, dstx, dsty, width, height)
    return dst, check_numbers("color", color, 4), box, check_bool("render_condition_enabled", cond)


def check_clear_flags_zs(clear_flags: Any, depth: Any, stencil: Any) -> tuple[int, float, int]:
    """clear_depth_stencil's flags (DEPTH/STENCIL bits), depth in [0, 1], stencil's low byte."""
    flags = check_int("clear_flags", clear_flags)
    if flags & ~int(Clear.DEPTHSTENCIL):
        raise bad_value("clear_flags", "may hold only PIPE_CLEAR_DEPTH and STENCIL", hex(flags))
    d = check_numbers("depth", (depth,), 1)[0]
    if flags & Clear.DEPTH and not 0.0 <= d <= 1.0:
        raise bad_value("depth", "must be in [0, 1]", depth)
    st = check_int("stencil", stencil, 0, _U32) & 0xFF if flags & Clear.STENCIL else 0
    return flags, float(d), st


def check_clear_depth_stencil(
    dst: Any,
    clear_flags: Any,
    depth: Any,
    stencil: Any,
    dstx: Any,
    dsty: Any,
    width: Any,
    height: Any,
    cond: Any,
) -> tuple:
    """(dst, flags, depth, stencil, box, render-condition flag)."""
    box = check_surface_clear(dst, dstx, dsty, width, height)
    flags, d, st = check_clear_flags_zs(clear_flags, depth, stencil)
    return dst, flags, d, st, box, check_bool("render_condition_enabled", cond)


def check_clear_buffer(resource: Any, offset: Any, size: Any, value: Any) -> tuple:
    """(buffer, offset, size, a private copy of the clear value's bytes)."""
    check_resource("resource", resource, "buffer")
    offset = check_int("offset", offset, 0)
    size = check_int("size", size, 0)
    pattern = user_bytes(value, "clear_value")
    if pattern.size == 0 or size % pattern.size:
        raise bad_value("size", "must be a multiple of the clear value size", size)
    if size:
        check_box(resource, 0, Box(offset, 0, 0, size, 1, 1), "offset/size")
    return resource, offset, size, pattern.copy()


def check_copy_region(
    dst: Any,
    dst_level: Any,
    dstx: Any,
    dsty: Any,
    dstz: Any,
    src: Any,
    src_level: Any,
    src_box: Any,
) -> tuple:
    """resource_copy_region: (dst, dst_level, dst box, src, src_level, src box)."""
    check_resource("dst", dst)
    check_resource("src", src)
    if dst.block_bytes != src.block_bytes:
        raise bad_value("dst", "must have the same pixel size as src (compatible formats)")
    if dst.is_buffer != src.is_buffer:
        raise bad_value("dst", "must be a buffer exactly when src is one")
    sbox = check_box(src, src_level, src_box, "src_box")
    dbox = Box(dstx, dsty, dstz, sbox.width, sbox.height, sbox.depth)
    dbox = check_box(dst, dst_level, dbox, "dstx/dsty/dstz")
    return dst, int(dst_level), dbox, src, int(src_level), sbox


def check_grid_info(info: Any, support: Support) -> Any:
    """Validate a ``pipe.GridInfo``; copies ``input``.  Returns a :class:`Grid`."""
    if not isinstance(info, GridInfo):
        raise bad_type("info", "a pipe.GridInfo", info)
    check_int("info.work_dim", info.work_dim, 1, 3)
    if check_int("info.pc", info.pc, 0) != 0:
        raise bad_value("info.pc", "must be 0 (a TGSI program has one entry point)", info.pc)
    block = _triple("info.block", info.block, 1, support.max_block_size)
    if block[0] * block[1] * block[2] > support.max_threads_per_block:
        raise bad_value(
            "info.block",
            f"may hold at most {support.max_threads_per_block} invocations (x * y * z)",
            block,
        )
    indirect = info.indirect
    off = 0
    if indirect is not None:
        if not isinstance(indirect, Resource) or not indirect.is_buffer:
            raise bad_type("info.indirect", "a buffer Resource created by this screen", indirect)
        if indirect.destroyed:
            raise bad_value("info.indirect", "has been destroyed")
        off = check_int("info.indirect_offset", info.indirect_offset, 0)
        if off % 4 or off + 12 > indirect.width0:
            raise bad_value(
                "info.indirect_offset",
                "must be a multiple of 4 leaving three uint32 (12 bytes) inside info.indirect",
                off,
            )
        grid = (0, 0, 0)
    else:
        grid = _triple("info.grid", info.grid, 0, support.max_grid_size)
    data = None
    if info.input is not None:
        try:
            data = np.frombuffer(memoryview(info.input).cast("B"), np.uint8).copy()
        except TypeError:
            raise bad_type(
                "info.input", "bytes-like data (bytes, bytearray, numpy array)", info.input
            ) from None
        if data.size > support.max_input_size:
            raise bad_value(
                "info.input", f"may hold at most {support.max_input_size} bytes", data.size
            )
    return Grid(block, grid, indirect, off, data)


@dataclasses.dataclass(frozen=True)
class Grid:
    """A validated ``pipe.GridInfo``."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int]  # (0, 0, 0) with ``indirect``: read at launch
    indirect: Any
    indirect_offset: int
    input: np.ndarray | None  # a copy of ``GridInfo.input``'s bytes


def _triple(arg: str, value: Any, lo: int, hi: tuple) -> tuple[int, int, int]:
    if not isinstance(value, tuple | list) or len(value) != 3:
        raise bad_type(arg, "three ints (x, y, z)", value)
    return tuple(check_int(f"{arg}[{i}]", v, lo, hi[i]) for i, v in enumerate(value))  # type: ignore[return-value]


def draw_stages(shaders: Any, discard: bool) -> list[tuple[ShaderType, Any]]:
    """(stage, CSO) of the programs a draw runs, from ``shaders`` (ShaderType
    -> bound CSO or None): the fragment program not under rasterizer discard,
    the control program only beside an evaluation program."""
    tes = shaders.get(ShaderType.TESS_EVAL)
    out = []
    for stage, cso in shaders.items():
        if cso is None or stage == ShaderType.COMPUTE:
            continue
        if (stage == ShaderType.FRAGMENT and discard) or (
            stage == ShaderType.TESS_CTRL and tes is None
        ):
            continue
        out.append((stage, cso))
    return out


def check_sampler_bindings(
    stage: ShaderType, cso: Any, views: Collection[int], samplers: Collection[int], call: str
) -> None:
    """A program that filters a bound sampler view needs the sampler state it
    names bound too (``views`` and ``samplers``: the stage's bound slots).
    An unbound view needs nothing: every texture operation on it reads zero,
    as llvmpipe's (D3D10's rule)."""
    for view, sampler in cso.sampler_pairs:
        if view in views and sampler not in samplers:
            raise bad_value(
                f"sampler state {sampler} of the {stage.name.lower()} stage",
                f"must be bound (bind_sampler_states) before {call}: the "
                f"{stage.name.lower()} shader filters sampler view {view} with SAMP[{sampler}]",
            )


def check_launch(grid: Grid, cso: ComputeCSO | None) -> None:
    """A checked grid against the bound compute program."""
    if cso is None:
        raise bad_value("compute state", "must be bound (bind_compute_state) before launch_grid")
    if cso.fixed_block is not None and grid.block != cso.fixed_block:
        raise bad_value(
            "info.block",
            f"must equal the program's CS_FIXED_BLOCK_* size {cso.fixed_block}",
            grid.block,
        )
    if cso.input_size and (grid.input is None or grid.input.size < cso.input_size):
        raise bad_value(
            "info.input",
            f"must hold the program's req_input_mem ({cso.input_size}) bytes",
            None if grid.input is None else grid.input.size,
        )


# ----------------------------------------------------------------------------
# Transfers and uploads
# ----------------------------------------------------------------------------

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


def check_transfer_map(resource: Any, level: Any, usage: Any, box: Any) -> tuple:
    """transfer_map's arguments: (resource, level, usage, private box)."""
    check_resource("resource", resource)
    if not isinstance(box, Box):
        raise bad_type("box", "a pipe.Box", box)
    usage = check_transfer_usage(usage)
    box = check_box(resource, level, box)
    return resource, int(level), usage, box


def check_transfer(transfer: Any) -> TransferObject:
    """transfer_unmap's argument: a transfer still mapped (marked unmapped here)."""
    if not isinstance(transfer, TransferObject):
        raise bad_type("transfer", "a transfer from transfer_map", transfer)
    if transfer.unmapped:
        raise bad_value("transfer", "has already been unmapped")
    transfer.unmapped = True
    return transfer


def check_flush_region(transfer: Any, box: Any) -> Box:
    """transfer_flush_region's arguments: a mapped FLUSH_EXPLICIT transfer, a box
    relative to the mapped box and inside it."""
    if not isinstance(transfer, TransferObject):
        raise bad_type("transfer", "a transfer from transfer_map", transfer)
    if transfer.unmapped:
        raise bad_value("transfer", "has already been unmapped")
    if not transfer.usage & Transfer.FLUSH_EXPLICIT:
        raise bad_value("transfer", "was not mapped with PIPE_TRANSFER_FLUSH_EXPLICIT")
    if not isinstance(box, Box):
        raise bad_type("box", "a pipe.Box", box)
    m = transfer.box
    vals = [check_int(f"box.{f}", getattr(box, f)) for f in _BOX]
    for axis, size in enumerate((m.width, m.height, m.depth)):
        start, extent = vals[axis], vals[axis + 3]
        if extent < 0 or start < 0 or start + extent > size:
            raise bad_value("box", "must lie inside the mapped box (relative to it)", box)
    return Box(*vals)


def check_subdata(resource: Any, usage: Any, offset: Any, data: Any) -> tuple:
    """Validate buffer_subdata's arguments: (usage with WRITE, offset, data bytes).

    The bytes are a view of ``data`` (copy them to keep them); an empty write
    is valid and checks no range.
    """
    check_resource("resource", resource, "buffer")
    u = check_int("usage", usage, 0)
    if u & ~VALID_TRANSFER_BITS:
        raise bad_value("usage", "has bits that are not pipe.Transfer flags", hex(u))
    offset = check_int("offset", offset, 0)
    raw = user_bytes(data, "data")
    if raw.size:
        check_box(resource, 0, Box(offset, 0, 0, raw.size, 1, 1), "offset/size")
    return Transfer(u) | Transfer.WRITE, offset, raw


def check_texture_subdata(
    resource: Any, level: Any, usage: Any, box: Any, data: Any, stride: Any, layer_stride: Any
) -> tuple:
    """texture_subdata: (resource, level, usage, box, data bytes (a view of the
    caller's), row stride, layer stride)."""
    check_resource("resource", resource, "texture")
    u = check_int("usage", usage, 0)
    if u & ~VALID_TRANSFER_BITS:
        raise bad_value("usage", "has bits that are not pipe.Transfer flags", hex(u))
    box = check_box(resource, level, box)
    row = box.width * resource.block_bytes
    stride = check_int("stride", stride, 0) or row
    layer_stride = check_int("layer_stride", layer_stride, 0) or stride * box.height
    raw = user_bytes(data, "data")
    need = (box.depth - 1) * layer_stride + (box.height - 1) * stride + row
    if stride < row or layer_stride < stride * box.height or raw.size < need:
        raise bad_value(
            "data",
            f"must hold {box.depth} layers of {box.height} rows of {row} bytes "
            f"(stride {stride}, layer_stride {layer_stride}, {need} bytes)",
            raw.size,
        )
    return resource, int(level), Transfer(u) | Transfer.WRITE, box, raw, stride, layer_stride


# -- bindless handles (context.rst "Bindless") -------------------------------------------


def _bindless(support: Support) -> None:
    if not support.bindless:
        raise UnsupportedError(
            f"bindless handles are not implemented by {support.driver} "
            "(PIPE_CAP_BINDLESS_TEXTURE is 0)"
        )


def check_texture_handle(view: Any, state: Any, support: Support) -> tuple:
    """create_texture_handle: (the view, a private copy of the sampler state)."""
    _bindless(support)
    if not isinstance(view, SamplerView):
        raise bad_type("view", "a SamplerView from create_sampler_view", view)
    if view.destroyed:
        raise bad_value("view", "has been destroyed (sampler_view_destroy)")
    if view.texture.destroyed:
        raise bad_value("view", "is a view of a destroyed resource")
    return view, check_sampler_state(state, support)


def check_image_handle(image: Any, support: Support) -> ImageView:
    """create_image_handle: a private copy of the image view (as
    set_shader_images takes one)."""
    _bindless(support)
    if not isinstance(image, ImageView) or image.resource is None:
        raise bad_type("image", "a pipe.ImageView of a resource", image)
    _, _, views = check_shader_images(ShaderType.COMPUTE, 0, [image])
    return views[0]


def check_handle(handle: Any, live: Any, kind: str) -> int:
    """A handle this context made and has not deleted (``live``: its
    handles of ``kind``, "texture" or "image")."""
    h = check_int("handle", handle, 0, 2**64 - 1)
    if h not in live:
        raise bad_value(
            "handle", f"must be a live {kind} handle of this context (create_{kind}_handle)", h
        )
    return h


def check_image_access(access: Any) -> int:
    """make_image_handle_resident's access: PIPE_IMAGE_ACCESS_* bits."""
    a = check_int("access", access, 0)
    if a & ~int(ImageAccess.READ_WRITE):
        raise bad_value("access", "may hold only PIPE_IMAGE_ACCESS_READ and WRITE", hex(a))
    return a
