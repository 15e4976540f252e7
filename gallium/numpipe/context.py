"""The direct numpipe context: Gallium's ``pipe_context`` on the software rasterizer.

Theory of operation
-------------------
A :class:`NumpipeContext` is used by one thread at a time (the application's
thread when it is used directly, or the driver thread of a
``ThreadedContext``).  State calls store validated state.  ``draw_vbo`` runs
the whole vertex side on the calling thread (index reading, vertex fetch,
vertex shader, primitive assembly, clipping, viewport transform, triangle
setup) and records the set-up triangles, binned by band, into the current
:class:`~gallium.numpipe.scene.Scene` together with a snapshot of the fragment
state.  ``clear`` records a clear command.  ``flush`` hands the scene to the
screen's worker pool, chained after the previous scene, and returns the
scene's fence; rasterization of that scene overlaps with the recording of the
next one.

Synchronisation: ``transfer_map``, ``buffer_subdata``/``texture_subdata`` and
query results wait for the scenes that use the resource (flushing the current
scene first when it uses it), unless the usage flags say not to.  Creating
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
import numbers
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..draw import assemble, clip
from ..draw.fetch import BoundVertexBuffer, buffer_bytes, fetch_attributes, read_indices
from ..pipe.enums import (
    PIPE_MAX_CLIP_PLANES,
    PIPE_MAX_COLOR_BUFS,
    PIPE_MAX_CONSTANT_BUFFERS,
    PIPE_MAX_SAMPLERS,
    PIPE_MAX_SHADER_SAMPLER_VIEWS,
    PIPE_MAX_VIEWPORTS,
    PIPE_TIMEOUT_INFINITE,
    Bind,
    Clear,
    Flush,
    Format,
    Prim,
    QueryType,
    RenderCond,
    ResetStatus,
    ShaderType,
    SpriteCoord,
    Transfer,
)
from ..pipe.errors import (
    ContextDestroyedError,
    PipeTypeError,
    PipeValueError,
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
from .screen import MAX_LINE_WIDTH, MAX_POINT_WIDTH, MAX_TEXTURE_SIZE
from .setup import (
    FIXED_ONE,
    select_triangles,
    setup_triangles,
    subpixel_snap,
    viewport_transform,
)

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


def _enum(arg: str, enum_type: type, value: Any) -> Any:
    try:
        return enum_type(value)
    except (ValueError, TypeError):
        raise bad_value(arg, f"must be a pipe.{enum_type.__name__}", value) from None


_U32 = 0xFFFFFFFF


def check_flush_flags(flags: Any) -> Flush:
    v = check_int("flags", flags)
    try:
        return Flush(v)
    except ValueError:
        raise bad_value("flags", "must be pipe.Flush flags", v) from None


class _CheckedDrawInfo(DrawInfo):
    """A DrawInfo that check_draw_info made: a private copy, fields checked
    (the threaded context's recorded copy is not checked again on the driver
    thread)."""

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


def check_draw_info(info: Any) -> DrawInfo:
    """Validate a DrawInfo's fields; return a copy holding plain ints and bools.

    The index data itself (``index``) is checked where it is read, since a
    resource's contents may change until the draw runs.  A copy this
    function made is returned as it is.
    """
    if type(info) is _CheckedDrawInfo:
        return info
    if not isinstance(info, DrawInfo):
        raise bad_type("info", "a pipe.DrawInfo", info)
    if info.indirect is not None:
        raise UnsupportedError("indirect draws are not implemented by numpipe yet")
    if info.count_from_stream_output is not None:
        raise UnsupportedError("draw_auto (count_from_stream_output) is not implemented yet")
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
    if out.index_size and info.index is None:
        raise bad_value("info.index", "must be set when index_size is non-zero")
    out.primitive_restart = bool(check_int("info.primitive_restart", info.primitive_restart, 0, 1))
    out.has_user_indices = bool(check_int("info.has_user_indices", info.has_user_indices, 0, 1))
    return out


# PIPE_CLEAR_* bits as plain ints (a Flag's & and | build enum members: ~1-2 us each)
_CLEAR_ALL = int(Clear.COLOR | Clear.DEPTHSTENCIL)
_CLEAR_COLOR = int(Clear.COLOR)
_CLEAR_COLOR0 = int(Clear.COLOR0)
_CLEAR_DEPTH = int(Clear.DEPTH)
_CLEAR_STENCIL = int(Clear.STENCIL)


def check_clear(buffers: Any, color: Any, depth: Any, stencil: Any) -> tuple:
    """Validate clear()'s arguments: (bits, colour tuple or None, depth, stencil)."""
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
    return bits, col, d, st


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


def check_subdata(resource: Any, usage: Any, offset: Any, data: Any) -> tuple:
    """Validate buffer_subdata's arguments: (usage with WRITE, offset, data bytes).

    The bytes are a view of ``data`` (copy them to keep them); an empty write
    is valid and checks no range.
    """
    if not isinstance(resource, Resource) or not resource.is_buffer:
        raise bad_type("resource", "a buffer Resource", resource)
    u = check_int("usage", usage, 0)
    if u & ~objects.VALID_TRANSFER_BITS:
        raise bad_value("usage", "has bits that are not pipe.Transfer flags", hex(u))
    offset = check_int("offset", offset, 0)
    raw = _user_bytes(data, "data")
    if raw.size:
        resource.check_box(0, Box(offset, 0, 0, raw.size, 1, 1), "offset/size")
    return Transfer(u) | Transfer.WRITE, offset, raw


def check_constant_buffer(shader: Any, index: Any, cb: Any) -> tuple:
    """Validate set_constant_buffer's arguments: (stage, index, binding).

    The binding is None (unbind), ``(buffer resource, (offset, size))`` or
    ``(None, bytes)`` for user data (a view of the caller's data: the threaded
    context copies it).
    """
    stage = _enum("shader", ShaderType, check_int("shader", shader))
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
        if offset % 16:
            raise bad_value("cb.buffer_offset", "must be a non-negative multiple of 16", offset)
        size = size or (cb.buffer.width0 - offset)
        if offset + size > cb.buffer.width0 or size < 0:
            raise bad_value("cb.buffer_size", "must lie inside the buffer", cb.buffer_size)
        return stage, index, (cb.buffer, (offset, size))
    if cb.user_buffer is not None:
        data = _user_bytes(cb.user_buffer, "cb.user_buffer")
        data = data[offset : offset + size] if size else data[offset:]
        return stage, index, (None, data)
    return stage, index, None


def check_framebuffer_state(state: Any) -> FramebufferState:
    """Validate a framebuffer state; return a private copy (plain ints, a new list)."""
    if not isinstance(state, FramebufferState):
        raise bad_type("state", "a pipe.FramebufferState", state)
    width = check_int("state.width", state.width, 0, MAX_TEXTURE_SIZE)
    height = check_int("state.height", state.height, 0, MAX_TEXTURE_SIZE)
    layers = check_int("state.layers", state.layers, 0)
    samples = check_int("state.samples", state.samples, 0)
    cbufs = _sequence("state.cbufs", state.cbufs)
    if len(cbufs) > PIPE_MAX_COLOR_BUFS:
        raise bad_value(
            "state.cbufs", f"may hold at most {PIPE_MAX_COLOR_BUFS} surfaces", len(cbufs)
        )
    for i, s in enumerate(cbufs):
        if s is not None and not isinstance(s, Surface):
            raise bad_type(f"state.cbufs[{i}]", "a Surface or None", s)
        if s is not None:
            d = try_describe(s.format)
            if d is None or d.is_depth or d.is_stencil:
                raise bad_value(f"state.cbufs[{i}]", "must be a colour surface", s.format)
            if s.width < width or s.height < height:
                raise bad_value(f"state.cbufs[{i}]", f"must be at least {width}x{height}", s)
    zs = state.zsbuf
    if zs is not None:
        if not isinstance(zs, Surface):
            raise bad_type("state.zsbuf", "a Surface or None", zs)
        d = try_describe(zs.format)
        if d is None or not (d.is_depth or d.is_stencil):
            raise bad_value("state.zsbuf", "must be a depth/stencil surface", zs.format)
        if zs.width < width or zs.height < height:
            raise bad_value("state.zsbuf", f"must be at least {width}x{height}", zs)
    return FramebufferState(
        width=width, height=height, layers=layers, samples=samples, cbufs=cbufs, zsbuf=zs
    )


def check_surface_clear(dst: Any, dstx: Any, dsty: Any, width: Any, height: Any) -> Box:
    """The box a clear_render_target / clear_depth_stencil writes, checked."""
    if not isinstance(dst, Surface):
        raise bad_type("dst", "a Surface", dst)
    box = Box(dstx, dsty, dst.first_layer, width, height, dst.last_layer - dst.first_layer + 1)
    dst.texture.check_box(dst.level, box, "dstx/dsty/width/height")
    return Box(*(int(v) for v in (box.x, box.y, box.z, box.width, box.height, box.depth)))


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


def check_blend_cso(cso: Any) -> BlendCSO:
    """A blend CSO to bind (None: the default state)."""
    if cso is None:
        return objects.make_blend(BlendState())
    if not isinstance(cso, BlendCSO):
        raise bad_type("cso", "a blend CSO from create_blend_state", cso)
    return cso


def check_dsa_cso(cso: Any) -> DepthStencilAlphaCSO:
    if cso is None:
        return objects.make_dsa(DepthStencilAlphaState())
    if not isinstance(cso, DepthStencilAlphaCSO):
        raise bad_type("cso", "a CSO from create_depth_stencil_alpha_state", cso)
    return cso


def check_rasterizer_cso(cso: Any) -> RasterizerCSO:
    if cso is None:
        return objects.make_rasterizer(RasterizerState())
    if not isinstance(cso, RasterizerCSO):
        raise bad_type("cso", "a CSO from create_rasterizer_state", cso)
    return cso


def check_vertex_buffers(start_slot: Any, buffers: Any) -> list[tuple[int, VertexBuffer | None]]:
    """Validate a set_vertex_buffers call as a whole; return (slot, binding) pairs.

    A binding is None (unbind) or a VertexBuffer holding a PIPE_BUFFER
    resource or a private copy of the user's bytes (``is_user_buffer``).
    Nothing is bound unless every entry is valid.
    """
    from ..pipe.enums import PIPE_MAX_ATTRIBS

    buffers = list(buffers or [])
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
            stored = buf
        else:
            stored = _user_bytes(buf, f"buffers[{i}].buffer").copy()
        out.append(
            (
                slot,
                VertexBuffer(
                    int(vb.stride), int(vb.buffer_offset), stored, not isinstance(buf, Resource)
                ),
            )
        )
    return out


def check_vertex_elements_cso(cso: Any) -> VertexElementsCSO | None:
    if cso is not None and not isinstance(cso, VertexElementsCSO):
        raise bad_type("cso", "a CSO from create_vertex_elements_state or None", cso)
    return cso


def check_blend_color(color: Any) -> tuple[float, float, float, float]:
    """Validate a pipe.BlendColor; return its colour as an immutable tuple."""
    if not isinstance(color, BlendColor):
        raise bad_type("color", "a pipe.BlendColor", color)
    try:
        r, g, b, a = color.color
        return (float(r), float(g), float(b), float(a))
    except (TypeError, ValueError):
        raise bad_value("color.color", "must be four numbers", color.color) from None


def check_stencil_ref(ref: Any) -> tuple[int, int]:
    if not isinstance(ref, StencilRef):
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
    if not isinstance(mask, int | np.integer) or isinstance(mask, bool):
        raise bad_type("mask", "an int sample mask", mask)
    return int(mask) & 0xFFFFFFFF


def check_scissor_states(start: Any, scissors: Any) -> tuple[int, tuple[ScissorState, ...]]:
    """Validate and copy scissors: the returned states are private to the driver."""
    scissors = _sequence("scissors", scissors)
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


_sequence = objects.check_sequence


def check_slots(shader: Any, start: Any, items: Any, limit: int, arg: str, kind: type) -> tuple:
    """A (shader, start, items) binding range: (stage, start, list of kind-or-None)."""
    stage = _enum("shader", ShaderType, check_int("shader", shader))
    items = _sequence(arg, items)
    start = check_int("start", start)
    if start < 0 or start + len(items) > limit:
        raise bad_value("start", f"plus the {arg} count must fit in {limit} slots", start)
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, kind):
            raise bad_type(f"{arg}[{i}]", f"a {kind.__name__} or None", x)
    return stage, start, items


def check_render_condition(query: Any, condition: Any, mode: Any) -> tuple:
    """render_condition's arguments: (query or None, bool, RenderCond)."""
    if query is not None and not isinstance(query, Query):
        raise bad_type("query", "a Query or None", query)
    cond = objects._check_bool("condition", condition)
    return query, cond, _enum("mode", RenderCond, check_int("mode", mode))


def check_clip_state(state: Any) -> ClipState:
    """A private copy of a clip state: up to PIPE_MAX_CLIP_PLANES planes of 4 floats."""
    if not isinstance(state, ClipState):
        raise bad_type("state", "a pipe.ClipState", state)
    planes = _sequence("state.ucp", state.ucp)
    if len(planes) > PIPE_MAX_CLIP_PLANES:
        raise bad_value("state.ucp", f"may hold at most {PIPE_MAX_CLIP_PLANES} planes", len(planes))
    ucp = [
        tuple(float(v) for v in check_numbers(f"state.ucp[{i}]", p, 4))
        for i, p in enumerate(planes)
    ]
    ucp += [(0.0, 0.0, 0.0, 0.0)] * (PIPE_MAX_CLIP_PLANES - len(ucp))
    return ClipState(ucp=ucp)


def check_shader_cso(stage: ShaderType, cso: Any) -> Any:
    """A shader CSO of ``stage`` to bind, or None."""
    if cso is not None and (not isinstance(cso, ShaderCSO) or cso.stage != stage):
        raise bad_type("cso", f"a {stage.name.lower()} shader CSO or None", cso)
    return cso


def check_viewport_states(start: Any, viewports: Any) -> tuple[int, tuple[ViewportState, ...]]:
    """Validate and copy viewports (scale and translate become float tuples)."""
    viewports = _sequence("viewports", viewports)
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


class NumpipeContext:
    """``pipe_context`` of the numpipe software driver (used by one thread at a time)."""

    def __init__(self, screen: Any, priv: Any = None, flags: int = 0) -> None:
        self.screen = screen
        self.priv = priv
        self.flags = flags
        self.destroyed = False
        # bound CSOs
        self._blend: BlendCSO = objects.make_blend(BlendState())
        self._dsa: DepthStencilAlphaCSO = objects.make_dsa(DepthStencilAlphaState())
        self._rast: RasterizerCSO = objects.make_rasterizer(RasterizerState())
        self._shaders: dict[ShaderType, ShaderCSO | None] = {
            s: None for s in ShaderType if s != ShaderType.TYPES
        }
        self._velems: VertexElementsCSO | None = None
        self._samplers: dict[ShaderType, list[SamplerCSO | None]] = {}
        self._compute: Any = None  # compute.ComputeCSO
        self._ssbos: dict[ShaderType, dict[int, Any]] = {}  # slot -> pipe.ShaderBuffer
        self._images: dict[ShaderType, dict[int, Any]] = {}  # slot -> pipe.ImageView
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
        self._clip = ClipState()
        self._render_cond: tuple[Query | None, bool, RenderCond] = (None, False, RenderCond.WAIT)
        # scenes
        self._scene: Scene | None = None
        self._scene_seq = 0
        self._last_fence: Fence = Fence.completed("initial")
        # queries
        self._active_queries: list[Query] = []
        # errors / reset
        self._lock = threading.Lock()
        self._errors: list[tuple[int, BaseException]] = []
        self._reset_status = ResetStatus.NO_RESET
        self._reset_callback: Callable[[ResetStatus], None] | None = None
        self._reset_pending_callback = False
        self._reset_announced = False  # the callback fired for the current reset
        self._debug_callback: Any = None
        # Set by a ThreadedContext: the thread that executes recorded calls.
        # Sync-point error reporting belongs to the application side, never to it.
        self.driver_thread_id: int | None = None
        # Called between the vertex pipeline's stages; a ThreadedContext sets
        # it to hand the GIL to a waiting event loop (see threaded.context).
        self.yield_point: Callable[[], None] = _no_yield
        self.stats = {
            "draws": 0,
            "triangles": 0,
            "scenes": 0,
            "clears": 0,
            "syncs": 0,
            "merged_draws": 0,  # draws rasterized as part of the previous draw's command
            "draw_commands": 0,  # raster commands the draws became
        }

    # ------------------------------------------------------------------ basics

    def _check_alive(self) -> None:
        if self.destroyed:
            raise ContextDestroyedError("this context has been destroyed")

    def destroy(self) -> None:
        """Flush outstanding work, wait for it, and release the context."""
        if self.destroyed:
            return
        try:
            fence = self.flush()
            fence.wait(None)
        finally:
            self.destroyed = True

    # ------------------------------------------------------------------ CSOs

    def create_blend_state(self, state: BlendState) -> BlendCSO:
        return objects.make_blend(state)

    def bind_blend_state(self, cso: BlendCSO | None) -> None:
        self._check_alive()
        self._apply_blend(check_blend_cso(cso))

    def _apply_blend(self, cso: BlendCSO) -> None:
        self._blend = cso

    def destroy_blend_state(self, cso: BlendCSO) -> None:
        if not isinstance(cso, BlendCSO):
            raise bad_type("cso", "a blend CSO from create_blend_state", cso)

    def create_depth_stencil_alpha_state(
        self, state: DepthStencilAlphaState
    ) -> DepthStencilAlphaCSO:
        return objects.make_dsa(state)

    def bind_depth_stencil_alpha_state(self, cso: DepthStencilAlphaCSO | None) -> None:
        self._check_alive()
        self._apply_dsa(check_dsa_cso(cso))

    def _apply_dsa(self, cso: DepthStencilAlphaCSO) -> None:
        self._dsa = cso

    def destroy_depth_stencil_alpha_state(self, cso: DepthStencilAlphaCSO) -> None:
        if not isinstance(cso, DepthStencilAlphaCSO):
            raise bad_type("cso", "a CSO from create_depth_stencil_alpha_state", cso)

    def create_rasterizer_state(self, state: RasterizerState) -> RasterizerCSO:
        return objects.make_rasterizer(state)

    def bind_rasterizer_state(self, cso: RasterizerCSO | None) -> None:
        self._check_alive()
        self._apply_rasterizer(check_rasterizer_cso(cso))

    def _apply_rasterizer(self, cso: RasterizerCSO) -> None:
        self._rast = cso

    def destroy_rasterizer_state(self, cso: RasterizerCSO) -> None:
        if not isinstance(cso, RasterizerCSO):
            raise bad_type("cso", "a CSO from create_rasterizer_state", cso)

    def create_sampler_state(self, state: SamplerState) -> SamplerCSO:
        return objects.make_sampler(state)

    def bind_sampler_states(
        self, shader: ShaderType, start: int, samplers: Sequence[SamplerCSO | None]
    ) -> None:
        self._check_alive()
        stage, start, samplers = check_slots(
            shader, start, samplers, PIPE_MAX_SAMPLERS, "samplers", SamplerCSO
        )
        slots = self._samplers.setdefault(stage, [])
        while len(slots) < start + len(samplers):
            slots.append(None)
        slots[start : start + len(samplers)] = samplers

    def destroy_sampler_state(self, cso: SamplerCSO) -> None:
        if not isinstance(cso, SamplerCSO):
            raise bad_type("cso", "a CSO from create_sampler_state", cso)

    def _create_shader(self, stage: ShaderType, state: ShaderState) -> ShaderCSO:
        if not isinstance(state, ShaderState):
            raise bad_type("state", "a pipe.ShaderState", state)
        return objects.make_shader(stage, state.tokens, "state.tokens", state)

    def _bind_shader(self, stage: ShaderType, cso: ShaderCSO | None) -> None:
        self._check_alive()
        self._shaders[stage] = check_shader_cso(stage, cso)

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
        from .geometry import check_geometry_shader

        check_geometry_shader(cso.shader)
        return cso

    def bind_gs_state(self, cso: ShaderCSO | None) -> None:
        self._bind_shader(ShaderType.GEOMETRY, cso)

    def destroy_gs_state(self, cso: ShaderCSO) -> None:
        self._destroy_shader(ShaderType.GEOMETRY, cso)

    def create_tcs_state(self, state: ShaderState) -> ShaderCSO:
        raise UnsupportedError("tessellation shaders are not supported by numpipe")

    def create_tes_state(self, state: ShaderState) -> ShaderCSO:
        raise UnsupportedError("tessellation shaders are not supported by numpipe")

    def bind_tcs_state(self, cso: Any) -> None:
        if cso is not None:
            raise UnsupportedError("tessellation shaders are not supported by numpipe")

    def bind_tes_state(self, cso: Any) -> None:
        if cso is not None:
            raise UnsupportedError("tessellation shaders are not supported by numpipe")

    def create_compute_state(self, state: ComputeState) -> Any:
        from .compute import make_compute

        return make_compute(state)

    def bind_compute_state(self, cso: Any) -> None:
        from .compute import check_compute_cso

        self._check_alive()
        self._compute = check_compute_cso(cso)

    def destroy_compute_state(self, cso: Any) -> None:
        from .compute import ComputeCSO

        if not isinstance(cso, ComputeCSO):
            raise bad_type("cso", "a compute state from create_compute_state", cso)

    def launch_grid(self, info: Any) -> None:
        """Run a grid of the bound compute program (see gallium/numpipe/compute.py).

        ``info`` is a ``pipe.GridInfo`` or what :func:`compute.check_grid_info`
        made of one (the threaded context validates on the caller's thread).
        """
        from .compute import (
            ComputeJob,
            Grid,
            buffer_views,
            check_grid_info,
            image_units,
            indirect_grid,
        )

        self._check_alive()
        grid = info if isinstance(info, Grid) else check_grid_info(info)
        cso = self._compute
        if cso is None:
            raise bad_value(
                "compute state", "must be bound (bind_compute_state) before launch_grid"
            )
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
        job = ComputeJob(
            cso,
            grid.block,
            dims,
            buffer_views(self._ssbos.get(ShaderType.COMPUTE, {})),
            consts,
            self._texture_bindings(ShaderType.COMPUTE),
            grid.input,
            label=f"grid {seq}",
            images=image_units(self._images.get(ShaderType.COMPUTE, {})),
        )
        prev = self._last_fence
        self._last_fence = job.fence
        self.screen.pool.submit(job, after=prev)
        job.fence.wait(None)
        if job.errors:
            with self._lock:
                for err in job.errors:
                    self._errors.append((seq, err))
                self._mark_reset_locked()

    def create_vertex_elements_state(self, elements: Sequence[Any]) -> VertexElementsCSO:
        return objects.make_vertex_elements(elements)

    def bind_vertex_elements_state(self, cso: VertexElementsCSO | None) -> None:
        self._check_alive()
        self._apply_vertex_elements(check_vertex_elements_cso(cso))

    def _apply_vertex_elements(self, cso: VertexElementsCSO | None) -> None:
        self._velems = cso

    def destroy_vertex_elements_state(self, cso: VertexElementsCSO) -> None:
        if not isinstance(cso, VertexElementsCSO):
            raise bad_type("cso", "a CSO from create_vertex_elements_state", cso)

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
        surf = objects.make_surface(self, resource, templ)
        desc = try_describe(surf.format)
        if desc is not None and (desc.is_depth or desc.is_stencil):
            if not resource.bind & Bind.DEPTH_STENCIL:
                raise bad_value("resource", "must have PIPE_BIND_DEPTH_STENCIL for a depth surface")
        elif not resource.bind & Bind.RENDER_TARGET:
            raise bad_value("resource", "must have PIPE_BIND_RENDER_TARGET for a colour surface")
        return surf

    def surface_destroy(self, surface: Surface) -> None:
        if not isinstance(surface, Surface):
            raise bad_type("surface", "a Surface from create_surface", surface)
        surface.destroyed = True

    def create_sampler_view(self, resource: Resource, templ: SamplerViewTemplate) -> SamplerView:
        return objects.make_sampler_view(self, resource, templ)

    def sampler_view_destroy(self, view: SamplerView) -> None:
        if not isinstance(view, SamplerView):
            raise bad_type("view", "a SamplerView from create_sampler_view", view)
        view.destroyed = True

    def set_sampler_views(
        self, shader: ShaderType, start: int, views: Sequence[SamplerView | None]
    ) -> None:
        self._check_alive()
        stage, start, views = check_slots(
            shader, start, views, PIPE_MAX_SHADER_SAMPLER_VIEWS, "views", SamplerView
        )
        slots = self._views.setdefault(stage, [])
        while len(slots) < start + len(views):
            slots.append(None)
        slots[start : start + len(views)] = views

    def create_stream_output_target(self, resource: Resource, offset: int, size: int) -> Any:
        raise UnsupportedError("stream output is not implemented by numpipe yet")

    def stream_output_target_destroy(self, target: Any) -> None:
        raise UnsupportedError("stream output is not implemented by numpipe yet")

    def set_stream_output_targets(self, targets: Sequence[Any], offsets: Sequence[int]) -> None:
        if targets:
            raise UnsupportedError("stream output is not implemented by numpipe yet")

    # ------------------------------------------------------------------ non-CSO state

    def set_blend_color(self, color: BlendColor) -> None:
        self._check_alive()
        self._apply_blend_color(check_blend_color(color))

    def _apply_blend_color(self, color: tuple[float, float, float, float]) -> None:
        self._blend_color = color

    def set_stencil_ref(self, ref: StencilRef) -> None:
        self._check_alive()
        self._apply_stencil_ref(check_stencil_ref(ref))

    def _apply_stencil_ref(self, ref: tuple[int, int]) -> None:
        self._stencil_ref = ref

    def set_sample_mask(self, mask: int) -> None:
        self._check_alive()
        self._apply_sample_mask(check_sample_mask(mask))

    def _apply_sample_mask(self, mask: int) -> None:
        self._sample_mask = mask

    def set_min_samples(self, min_samples: int) -> None:
        self._check_alive()
        if min_samples > 1:
            raise UnsupportedError("sample shading is not supported (no multisampling)")

    def set_clip_state(self, state: ClipState) -> None:
        self._check_alive()
        self._clip = check_clip_state(state)

    def set_polygon_stipple(self, stipple: PolyStipple) -> None:
        self._check_alive()
        if not isinstance(stipple, PolyStipple):
            raise bad_type("stipple", "a pipe.PolyStipple", stipple)

    def set_scissor_states(self, start: int, scissors: Sequence[ScissorState]) -> None:
        self._check_alive()
        self._apply_scissor_states(*check_scissor_states(start, scissors))

    def _apply_scissor_states(self, start: int, scissors: tuple[ScissorState, ...]) -> None:
        for i, sc in enumerate(scissors):
            self._scissors[start + i] = sc

    def set_viewport_states(self, start: int, viewports: Sequence[ViewportState]) -> None:
        self._check_alive()
        self._apply_viewport_states(*check_viewport_states(start, viewports))

    def _apply_viewport_states(self, start: int, viewports: tuple[ViewportState, ...]) -> None:
        for i, vp in enumerate(viewports):
            self._viewports[start + i] = vp

    def set_window_rectangles(self, include: bool, rects: Sequence[ScissorState]) -> None:
        self._check_alive()
        if rects:
            raise UnsupportedError("window rectangles are not implemented by numpipe")

    def set_tess_state(self, default_outer_level: Any, default_inner_level: Any) -> None:
        raise UnsupportedError("tessellation is not supported by numpipe")

    def set_debug_callback(self, callback: Any) -> None:
        self._debug_callback = callback

    def set_shader_buffers(self, shader: ShaderType, start: int, buffers: Sequence[Any]) -> None:
        from .compute import check_shader_buffers

        self._check_alive()
        self._apply_shader_buffers(*check_shader_buffers(shader, start, buffers))

    def _apply_shader_buffers(self, stage: ShaderType, start: int, buffers: list) -> None:
        """Bind validated shader buffers (see compute.check_shader_buffers)."""
        _bind_slots(self._ssbos.setdefault(stage, {}), start, buffers)

    def set_shader_images(self, shader: ShaderType, start: int, images: Sequence[Any]) -> None:
        from .compute import check_shader_images

        self._check_alive()
        self._apply_shader_images(*check_shader_images(shader, start, images))

    def _apply_shader_images(self, stage: ShaderType, start: int, images: list) -> None:
        """Bind validated image views (see compute.check_shader_images)."""
        _bind_slots(self._images.setdefault(stage, {}), start, images)

    def set_constant_buffer(
        self, shader: ShaderType, index: int, cb: ConstantBuffer | None
    ) -> None:
        self._check_alive()
        self._apply_constant_buffer(*check_constant_buffer(shader, index, cb))

    def _apply_constant_buffer(self, stage: ShaderType, index: int, binding: Any) -> None:
        """Bind a validated constant buffer (see check_constant_buffer)."""
        slots = self._constbufs.setdefault(stage, {})
        if binding is None:
            slots.pop(index, None)
        else:
            slots[index] = binding

    def set_framebuffer_state(self, state: FramebufferState) -> None:
        self._check_alive()
        new = check_framebuffer_state(state)
        if _fb_key(new) != _fb_key(self._fb) and self._scene is not None:
            self._submit_scene()
        self._fb = new

    def set_vertex_buffers(self, start_slot: int, buffers: Sequence[VertexBuffer | None]) -> None:
        self._check_alive()
        self._apply_vertex_buffers(check_vertex_buffers(start_slot, buffers))

    def _apply_vertex_buffers(self, bindings: list[tuple[int, VertexBuffer | None]]) -> None:
        """Bind validated, private vertex buffers (see check_vertex_buffers)."""
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
                if hit is None or hit[0] is not s or hit[1] is not res.storage:
                    hit = (s, res.storage, _color_target(s))
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
            scene.resources |= resources
            scene.seq = self._scene_seq  # type: ignore[attr-defined]
            self._scene = scene
        return self._scene

    def _render_condition_passes(self) -> bool:
        query, condition, mode = self._render_cond
        if query is None:
            return True
        wait = mode in (RenderCond.WAIT, RenderCond.BY_REGION_WAIT)
        ok, value = self.get_query_result(query, wait)
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
        bits, color, depth, stencil = check_clear(buffers, color, depth, stencil)
        if not self._render_condition_passes():
            return
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
        scene.add_clear(ClearCmd(colors, depth_word, sval, keep))
        self.stats["clears"] += 1

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
        box = check_surface_clear(dst, dstx, dsty, width, height)
        color = check_numbers("color", color, 4)
        if render_condition_enabled and not self._render_condition_passes():
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
        box = check_surface_clear(dst, dstx, dsty, width, height)
        clear_flags, depth, stencil = check_clear_flags_zs(clear_flags, depth, stencil)
        if render_condition_enabled and not self._render_condition_passes():
            return
        dstx, dsty, width, height = box.x, box.y, box.width, box.height
        self._sync_resource(dst.texture, write=True, reason="clear_depth_stencil")
        target = make_depth_target(dst.texture, dst.level, dst.first_layer, dst.texture.storage)
        layout = target.layout
        sl = (slice(dsty, dsty + height), slice(dstx, dstx + width))
        from ..util.format import depth_to_word

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

    def clear_buffer(self, resource: Resource, offset: int, size: int, value: Any) -> None:
        self._check_alive()
        if not isinstance(resource, Resource) or not resource.is_buffer:
            raise bad_type("resource", "a buffer Resource", resource)
        pattern = _user_bytes(value, "clear_value")
        if pattern.size == 0 or size % pattern.size:
            raise bad_value("size", "must be a multiple of the clear value size", size)
        resource.check_box(0, Box(offset, 0, 0, size, 1, 1), "offset/size")
        self._sync_resource(resource, write=True, reason="clear_buffer")
        resource.storage[offset : offset + size] = np.tile(pattern, size // pattern.size)

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
        for name, r in (("dst", dst), ("src", src)):
            if not isinstance(r, Resource):
                raise bad_type(name, "a Resource", r)
        if dst.block_bytes != src.block_bytes:
            raise bad_value("dst", "must have the same pixel size as src (compatible formats)")
        src.check_box(src_level, src_box, "src_box")
        dbox = Box(dstx, dsty, dstz, src_box.width, src_box.height, src_box.depth)
        dst.check_box(dst_level, dbox, "dstx/dsty/dstz")
        self._sync_resource(src, write=False, reason="resource_copy_region")
        self._sync_resource(dst, write=True, reason="resource_copy_region")
        if src.is_buffer:
            data = src.storage[src_box.x : src_box.x + src_box.width].copy()
            dst.storage[dstx : dstx + src_box.width] = data
            return
        sv = src.level_view(src_level, src_box.z, src_box.depth)[
            :, src_box.y : src_box.y + src_box.height, src_box.x : src_box.x + src_box.width
        ].copy()
        dv = dst.level_view(dst_level, dstz, src_box.depth)
        dv[:, dsty : dsty + src_box.height, dstx : dstx + src_box.width] = sv

    def draw_vbo(self, info: DrawInfo) -> None:
        """Draw primitives (context.rst "Drawing")."""
        self._check_alive()
        prepared = self._prepare_draw(info)
        if prepared is None:
            return
        self.stats["draws"] += 1
        info, mode, vs, fs, index_data = prepared
        gs = self._shaders[ShaderType.GEOMETRY]
        if gs is not None:
            parts = self._front_end_gs(info, mode, index_data, vs, gs, fs)
        elif mode == Prim.POINTS:
            parts = self._front_end_points(info, index_data, vs, fs)
        elif mode in _LINE_DRAW_MODES:
            parts = self._front_end_lines(info, mode, index_data, vs, fs)
        else:
            parts = self._front_end([(info, mode, index_data)], vs, fs)
        for ts, state_fs in parts:
            self._add_to_scene(ts, state_fs)

    def _prepare_draw(self, info: DrawInfo) -> tuple | None:
        """Validate a draw against the bound state (no side effects).

        Returns (the validated copy of info, mode, vs, fs, index bytes), or
        None when there is nothing to draw.
        """
        info = check_draw_info(info)
        mode = info.mode
        vs = self._shaders[ShaderType.VERTEX]
        fs = self._shaders[ShaderType.FRAGMENT]
        if vs is None:
            raise bad_value("vertex shader", "must be bound (bind_vs_state) before draw_vbo")
        if fs is None:
            raise bad_value("fragment shader", "must be bound (bind_fs_state) before draw_vbo")
        if self._fb.width <= 0 or self._fb.height <= 0:
            raise bad_value("framebuffer", "must be set (width and height > 0) before draw_vbo")
        index_data = None
        if info.index_size:
            index_data = (
                buffer_bytes(info.index)
                if isinstance(info.index, Resource)
                else _user_bytes(info.index, "info.index")
            )
        nverts_in = vs.kernel.input_decls
        if nverts_in and self._velems is None:
            raise bad_value("vertex elements", "must be bound: the vertex shader reads inputs")
        if self._velems is not None:
            for i in nverts_in:
                if i >= len(self._velems.elements):
                    bound = len(self._velems.elements)
                    raise bad_value(
                        "vertex elements",
                        f"must provide IN[{i}] of the vertex shader ({bound} bound)",
                    )
        if info.count == 0 or info.instance_count == 0:
            return None
        if not self._render_condition_passes():
            return None
        if self._rast.state.rasterizer_discard:
            return None
        return info, mode, vs, fs, index_data

    # -- draws recorded back to back (threaded context) ---------------------------

    GROUPABLE_CALLS = frozenset(
        {
            "_apply_blend_color",
            "_apply_stencil_ref",
            "_apply_blend",
            "_apply_dsa",
            "_apply_vertex_buffers",
        }
    )

    def draw_group(self, items: list[tuple[Any, tuple]]) -> bool:
        """Run recorded calls ``items`` — draw_vbo calls, and between them only
        state that does not reach the vertex pipeline (GROUPABLE_CALLS) — with
        one vertex pipeline pass for all the draws.

        Vertex fetch, the vertex shader, clipping and setup work per vertex and
        per triangle, so running them once over the concatenated draws gives
        each draw exactly the triangles it would get alone; the fragment state
        is then captured per draw, in order, with the state calls applied
        between.  Returns False, having done nothing, when the group does not
        qualify (a draw that would fail, instancing, primitive restart,
        vertex shaders reading system values, statistics queries); the caller
        then runs the calls one by one.
        """
        self._check_alive()
        draws = []
        vs = fs = None
        vbufs = self._vbufs  # the vertex buffers each draw will see, without binding them yet
        for fn, args in items:
            name = getattr(fn, "__name__", "")
            if name == "_apply_vertex_buffers":
                vbufs = dict(vbufs)
                for slot, vb in args[0]:
                    if vb is None:
                        vbufs.pop(slot, None)
                    else:
                        vbufs[slot] = vb
                continue
            if name in self.GROUPABLE_CALLS:
                continue
            info = args[0]
            try:
                prepared = self._prepare_draw(info)
            except Exception:
                return False
            if prepared is None:
                return False
            info, mode, vs, fs, index_data = prepared
            if (
                mode != Prim.TRIANGLES
                or info.instance_count != 1
                or (info.primitive_restart and info.index_size)
            ):
                return False
            draws.append((info, mode, index_data, vbufs))
        if (
            len(draws) < 2
            or vs.kernel.system_value_decls
            or self._shaders[ShaderType.GEOMETRY] is not None
        ):
            return False
        if any(
            q.type in (QueryType.PRIMITIVES_GENERATED, QueryType.PIPELINE_STATISTICS)
            for q in self._active_queries
        ):
            return False
        try:
            # changes nothing until the draws are added below: on an error
            # (an index range past the buffer, say) the caller replays the
            # calls one by one, so each error surfaces exactly as it would
            results = iter(self._front_end(draws, vs, fs))
        except Exception:
            return False
        for fn, args in items:
            if getattr(fn, "__name__", "") in self.GROUPABLE_CALLS:
                fn(*args)
                continue
            self.stats["draws"] += 1
            ts, state_fs = next(results)
            self._add_to_scene(ts, state_fs)
            self.yield_point()
        return True

    def _front_end(self, draws: list, vs: ShaderCSO, fs: ShaderCSO) -> list:
        """Vertex pipeline of one draw, or of several non-instanced TRIANGLES
        draws at once: index read, fetch, vertex shader, assembly, clipping,
        setup.  Returns one (TriangleSet, fs) per draw, in order."""
        rast = self._rast.state
        ids_parts, tri_parts, prim_parts, tag_parts = [], [], [], []
        local_tris = []
        nstream_total = 0
        grouped = len(draws) > 1
        for d, (info, mode, index_data, *_) in enumerate(draws):
            ids_d, cuts = read_indices(
                index_data,
                info.index_size,
                info.start,
                info.count,
                info.index_bias if info.index_size else 0,
                bool(info.primitive_restart and info.index_size),
                info.restart_index,
            )
            tri_d, prim_d = assemble.triangles(mode, ids_d.size, cuts, rast.flatshade_first)
            ids_parts.append(ids_d)
            local_tris.append(tri_d)
            tri_parts.append(tri_d + nstream_total)
            prim_parts.append(prim_d)
            if grouped:
                tag_parts.append(np.full(prim_d.size, d, np.int64))
            nstream_total += ids_d.size
        info = draws[0][0]
        ids = ids_parts[0] if not grouped else np.concatenate(ids_parts)
        tri_stream = tri_parts[0] if not grouped else np.concatenate(tri_parts)
        prim_stream = prim_parts[0] if not grouped else np.concatenate(prim_parts)
        nstream = ids.size
        elements = list(self._velems.elements) if self._velems is not None else []
        # A group whose draws see different vertex buffers (or start instances)
        # fetches each draw's vertices on its own and runs the rest at once.
        apart = grouped and any(
            (d[3] if len(d) > 3 else self._vbufs)
            is not (draws[0][3] if len(draws[0]) > 3 else self._vbufs)
            or d[0].start_instance != info.start_instance
            for d in draws[1:]
        )
        ninst = info.instance_count
        if apart:
            fetched_parts, vid_parts, tris_by_draw = [], [], []
            base = 0
            for d, (info_d, _, _, vb_d) in enumerate(draws):
                uniq_d, inv_d = _unique_ids(ids_parts[d], info_d.index_size)
                fetched_parts.append(
                    fetch_attributes(
                        elements,
                        _bound_buffers(vb_d),
                        uniq_d,
                        np.zeros(uniq_d.size, np.int64),
                        info_d.start_instance,
                    )
                )
                vid_parts.append(uniq_d)
                tris_by_draw.append(inv_d[local_tris[d]] + base)
                base += uniq_d.size
            vids = np.concatenate(vid_parts)
            iids = np.zeros(vids.size, np.int64)
            nu = vids.size
            inverse = None
            fetched = [
                [np.concatenate([part[e][c] for part in fetched_parts]) for c in range(4)]
                for e in range(len(elements))
            ]
        else:
            uniq, inverse = _unique_ids(ids, any(d[0].index_size for d in draws))
            nu = uniq.size
            if ninst == 1:
                vids, iids = uniq, np.zeros(nu, np.int64)
            else:
                vids = np.tile(uniq, ninst)
                iids = np.repeat(np.arange(ninst, dtype=np.int64), nu)
            fetched = fetch_attributes(
                elements, _bound_buffers(self._vbufs), vids, iids, info.start_instance
            )
        self.yield_point()
        n = vids.size
        _, pos, fs_inputs, attrs, interp = self._vertex_stage(vs, fs, fetched, vids, iids, info)
        # triangles per instance, instance after instance
        if apart:
            tris = np.concatenate(tris_by_draw)
            prims = prim_stream
        elif ninst == 1:
            tris = inverse[tri_stream]
            prims = prim_stream
        else:
            per = [i * nu + inverse[tri_stream] for i in range(ninst)]
            tris = np.concatenate(per)
            prims = np.tile(prim_stream, ninst)  # primitive ids count each instance from 0
        if grouped:  # tag each triangle with its draw: (draw << 32) | primitive id
            prims = (np.concatenate(tag_parts) << 32) | prims.astype(np.int64)
        ntri_in = tris.shape[0]
        ts, nclipped = self._triangle_stage(pos, attrs, interp, tris, prims, grouped)
        self.yield_point()
        for q in self._active_queries:  # (never active for a group)
            if q.type == QueryType.PRIMITIVES_GENERATED:
                q.primitives += prim_stream.size and (int(prim_stream.max()) + 1) * ninst
            elif q.type == QueryType.PIPELINE_STATISTICS:
                st = q.stats
                st.ia_vertices += nstream * ninst
                st.ia_primitives += ntri_in
                st.vs_invocations += n
                st.c_invocations += ntri_in
                st.c_primitives += nclipped
        if not grouped:
            return [(ts, fs_inputs)]
        wide = ts.prim_id.astype(np.int64)  # (an empty set comes back as int32)
        tag = wide >> 32
        ts.prim_id = (wide & 0xFFFFFFFF).astype(np.int32)
        order = np.argsort(tag, kind="stable")
        bounds = np.searchsorted(tag[order], np.arange(len(draws) + 1))
        return [
            (select_triangles(ts, order[bounds[d] : bounds[d + 1]]), fs_inputs)
            for d in range(len(draws))
        ]

    def _triangle_stage(self, pos, attrs, interp, tris, prims, wide: bool = False) -> tuple:
        """Viewport transform, clipping and setup of triangles ``tris`` over
        vertices ``pos`` (clip space) with inputs ``attrs``: (TriangleSet, the
        number of triangles clipping left)."""
        rast = self._rast.state
        # viewport transform (fused, as the draw module's vertex stage), then clipping
        vp = self._viewports[0]
        win, oow = viewport_transform(pos, vp.scale, vp.translate)
        ucps = [self._clip.ucp[i] for i in range(8) if rast.clip_plane_enable >> i & 1]
        planes, active = clip.plane_table(True, rast.depth_clip, rast.clip_halfz, ucps)
        geo = clip.clip_triangles(
            pos,
            win,
            oow,
            attrs,
            tris,
            prims,
            planes=planes,
            active=active,
            interp=interp,
            flatshade_first=rast.flatshade_first,
            scale=vp.scale,
            translate=vp.translate,
        )
        win, oow, attrs, tris, prims = geo.win, geo.oow, geo.attrs, geo.tris, geo.prim_ids
        self.yield_point()
        ts = setup_triangles(
            win,
            oow,
            tris,
            attrs,
            interp,
            region=self._draw_region(rast),
            half_pixel_center=rast.half_pixel_center,
            bottom_edge_rule=rast.bottom_edge_rule,
            front_ccw=rast.front_ccw,
            cull_front=self._rast.cull_front,
            cull_back=self._rast.cull_back,
            flatshade_first=rast.flatshade_first,
            prim_ids=prims,
            wide_prim_ids=wide,
        )
        return ts, tris.shape[0]

    def _vertex_stage(self, vs, fs, fetched, vids, iids, info) -> tuple:
        """Run the vertex shader over vertices ``vids`` (instances ``iids``);
        returns (result, positions (n, 4), FragmentState inputs, the fragment
        shader's inputs per vertex (n, K, 4), their interpolation modes)."""
        from ..tgsi.compiler import ExecEnv

        n = vids.size
        # the system values the shader declares (most declare none)
        sysvals = {}
        for name in set(vs.kernel.system_value_decls.values()):
            if name == "VERTEXID":
                sysvals[name] = _sv_int(vids)
            elif name == "VERTEXID_NOBASE":
                sysvals[name] = _sv_int(vids - (info.index_bias if info.index_size else 0))
            elif name == "INSTANCEID":
                sysvals[name] = _sv_int(iids)
            elif name == "BASEVERTEX":
                base = info.index_bias if info.index_size else info.start
                sysvals[name] = _sv_int(np.full(n, base))
            elif name == "BASEINSTANCE":
                sysvals[name] = _sv_int(np.full(n, info.start_instance))
            elif name == "DRAWID":
                sysvals[name] = _sv_int(np.full(n, info.drawid))
        res = vs.kernel(
            ExecEnv(
                n=n,
                inputs=fetched,
                consts=self._const_arrays(ShaderType.VERTEX),
                system_values=sysvals,
                textures=self._texture_bindings(ShaderType.VERTEX),
            )
        )
        self.yield_point()
        pos_reg = vs.kernel.output_index("POSITION")
        if pos_reg is None:
            pos = np.zeros((n, 4), F32)
        else:
            # (np.stack costs ~5x more on a few vertices)
            pos = np.array([_bcast(c, n) for c in res.outputs[pos_reg]], F32).T.copy()
        # fragment shader linkage
        fs_inputs, link = self._link(vs, fs)
        attrs = np.zeros((n, len(link), 4), F32)
        interp = []
        for slot, (vs_reg, mode_name) in enumerate(link):
            interp.append(mode_name)
            if vs_reg is not None and vs_reg in res.outputs:
                attrs[:, slot] = np.array([_bcast(c, n, F32) for c in res.outputs[vs_reg]]).T
        return res, pos, fs_inputs, attrs, interp

    def _draw_vertices(self, info: DrawInfo, index_data: Any, vs, fs) -> tuple:
        """Index read, fetch and vertex shader of one (instanced) draw: (ids,
        restart cuts, each stream entry's vertex among the distinct ones, their
        count, instances, then _vertex_stage's results over every instance)."""
        ids, cuts = read_indices(
            index_data,
            info.index_size,
            info.start,
            info.count,
            info.index_bias if info.index_size else 0,
            bool(info.primitive_restart and info.index_size),
            info.restart_index,
        )
        uniq, inverse = _unique_ids(ids, info.index_size)
        nu, ninst = uniq.size, info.instance_count
        vids = np.tile(uniq, ninst)
        iids = np.repeat(np.arange(ninst, dtype=np.int64), nu)
        elements = list(self._velems.elements) if self._velems is not None else []
        fetched = fetch_attributes(
            elements, _bound_buffers(self._vbufs), vids, iids, info.start_instance
        )
        self.yield_point()
        staged = self._vertex_stage(vs, fs, fetched, vids, iids, info)
        return (ids, cuts, inverse, nu, ninst, *staged)

    def _front_end_points(self, info: DrawInfo, index_data: Any, vs, fs) -> list:
        """The vertex pipeline of a POINTS draw.

        Each vertex is a point of ``point_size`` pixels (or the vertex shader's
        PSIZE with ``point_size_per_vertex``), at least one.  A point whose
        centre lies outside the clip volume (or a user clip plane) is dropped,
        as GL clips points; the others become a square, as llvmpipe sets them
        up: the centre snapped to 1/256 pixel, the snapped width halved down
        on the left and top, the square's edges under the triangle fill rule
        (left and top edges in, right and bottom out).  Here the square is two
        triangles, front-facing whatever the winding rules, never culled,
        every attribute constant over it (the vertex's values) except the
        sprite coordinates: a PCOORD input, and with ``point_quad_rasterization``
        the GENERIC inputs ``sprite_coord_enable`` names, run (s, t, 0, 1)
        from 0 to 1 across the point, with llvmpipe's coefficients
        (``s = (0.5 - ds*(x - offset)) + ds*px``, ds = 1 / the snapped width,
        t likewise down the rows, or up them for PIPE_SPRITE_COORD_LOWER_LEFT)."""
        rast = self._rast.state
        if rast.point_smooth:
            raise UnsupportedError("smooth (antialiased) points are not implemented by numpipe")
        ids, _, inverse, nu, ninst, res, pos, fs_inputs, attrs, interp = self._draw_vertices(
            info, index_data, vs, fs
        )
        n = pos.shape[0]
        # the points, instance after instance, and their primitive ids
        pts = np.concatenate([i * nu + inverse for i in range(ninst)])
        prims = np.tile(np.arange(ids.size, dtype=np.int64), ninst)  # from 0 per instance
        psize_reg = vs.kernel.output_index("PSIZE")
        psize = None
        if rast.point_size_per_vertex and psize_reg is not None:
            psize = _bcast(res.outputs[psize_reg][0], n, F32)
        ts, m = self._point_stage(pos, attrs, interp, pts, prims, psize, fs)
        for q in self._active_queries:
            if q.type == QueryType.PRIMITIVES_GENERATED:
                q.primitives += ids.size * ninst
            elif q.type == QueryType.PIPELINE_STATISTICS:
                st = q.stats
                st.ia_vertices += ids.size * ninst
                st.ia_primitives += ids.size * ninst
                st.vs_invocations += n
                st.c_invocations += ids.size * ninst
                st.c_primitives += m
        return [(ts, fs_inputs)]

    def _point_stage(self, pos, attrs, interp, pts, prims, psize, fs) -> tuple:
        """Clipping and setup of points at vertices ``pts`` (see
        _front_end_points); ``psize`` the per-vertex sizes or None for the
        rasterizer's: (TriangleSet, the number of points clipping left)."""
        rast = self._rast.state
        if psize is not None:
            size = psize[pts]
        else:
            size = np.full(pts.size, F32(rast.point_size), F32)
        size = np.minimum(size, F32(MAX_POINT_WIDTH))  # (NaN stays NaN: dropped below)
        # clip: the centre against the active planes
        ucps = [self._clip.ucp[i] for i in range(8) if rast.clip_plane_enable >> i & 1]
        planes, active = clip.plane_table(True, rast.depth_clip, rast.clip_halfz, ucps)
        centre = pos[pts]
        keep = np.isfinite(centre).all(axis=1) & np.isfinite(size)
        with np.errstate(invalid="ignore", over="ignore"):
            for p in active:
                keep &= clip.plane_distance(centre, planes[p]) >= 0
        pts, prims, size = pts[keep], prims[keep], size[keep]
        vp = self._viewports[0]
        win, oow = viewport_transform(pos, vp.scale, vp.translate)
        m = pts.size
        # the square's corners in 1/256 pixels, exactly as llvmpipe's point setup
        po = F32(0.5) if rast.half_pixel_center else F32(0.0)
        fxy = subpixel_snap((win[pts, :2] - po).astype(F32))
        fw = np.maximum(subpixel_snap(size), FIXED_ONE)
        lo = fxy - (fw // 2)[:, None]
        hi = lo + fw[:, None]
        cx = np.stack([lo[:, 0], hi[:, 0], hi[:, 0], lo[:, 0]], 1)  # corners 0..3
        cy = np.stack([lo[:, 1], lo[:, 1], hi[:, 1], hi[:, 1]], 1)
        win4 = np.empty((m, 4, 3), F32)
        win4[..., 0] = cx.astype(F32) / F32(FIXED_ONE) + po
        win4[..., 1] = cy.astype(F32) / F32(FIXED_ONE) + po
        win4[..., 2] = win[pts, 2][:, None]
        oow4 = np.repeat(oow[pts], 4)
        attrs4 = np.repeat(attrs[pts], 4, axis=0)
        base = 4 * np.arange(m, dtype=np.int64)[:, None]
        tris = (base[:, :, None] + np.array([[0, 1, 2], [0, 2, 3]])[None]).reshape(-1, 3)
        sprite = self._sprite_slots(fs, rast)
        ts = setup_triangles(
            win4.reshape(-1, 3),
            oow4,
            tris,
            attrs4,
            [
                "constant" if mode == "constant" and k not in sprite else "linear"
                for k, mode in enumerate(interp)
            ],
            region=self._draw_region(rast),
            half_pixel_center=rast.half_pixel_center,
            bottom_edge_rule=rast.bottom_edge_rule,
            front_ccw=False,  # the corners wind clockwise: front-facing
            prim_ids=np.arange(2 * m, dtype=np.int64),  # (each triangle's point: id // 2)
            wide_prim_ids=True,
        )
        point = ts.prim_id.astype(np.int64) // 2
        ts.prim_id = prims[point].astype(np.int32)
        if sprite and ts.count:
            ds = (F32(FIXED_ONE) / fw.astype(F32)).astype(F32)
            dt = -ds if rast.sprite_coord_mode == SpriteCoord.LOWER_LEFT else ds
            s0 = F32(0.5) - ds * (win[pts, 0] - po)
            t0 = F32(0.5) - dt * (win[pts, 1] - po)
            coef = np.zeros((m, 3, 4), F32)
            coef[:, 0, 0], coef[:, 1, 0] = s0, ds
            coef[:, 0, 1], coef[:, 2, 1] = t0, dt
            coef[:, 0, 3] = 1.0
            for slot in sprite:
                ts.inputs[:, slot] = coef[point]
        return ts, m

    def _front_end_gs(self, info: DrawInfo, mode: Prim, index_data: Any, vs, gs, fs) -> list:
        """The vertex pipeline with a geometry shader: the draw's primitives
        (of the shader's input type) after the vertex shader go through the
        geometry kernel, one lane per primitive and invocation; its stream-0
        vertices, in lane order, become the output strips, which are clipped
        and set up like a draw of that type (gallium/numpipe/geometry.py)."""
        from . import geometry as geo
        from . import lines as ln

        rast = self._rast.state
        ids, cuts, inverse, nu, ninst, vres, vpos, _, _, _ = self._draw_vertices(
            info, index_data, vs, fs
        )
        prims_in = geo.input_primitives(gs.shader, mode, ids.size, cuts, rast.flatshade_first)
        verts = np.concatenate([i * nu + inverse[prims_in] for i in range(ninst)])
        # gl_PrimitiveIDIn counts the primitives of each instance from 0
        prim_ids = np.tile(np.arange(prims_in.shape[0], dtype=np.int64), ninst)
        self.yield_point()
        out = geo.run_geometry(gs, vs, vres, vpos, verts, prim_ids, self._const_arrays,
                               self._texture_bindings)  # fmt: skip
        self.yield_point()
        fs_inputs, link = self._link(gs, fs)
        n = out.pos.shape[0]
        attrs = np.zeros((n, len(link), 4), F32)
        interp = []
        for slot, (reg, mode_name) in enumerate(link):
            interp.append(mode_name)
            if reg is not None and reg in out.outputs:
                attrs[:, slot] = out.outputs[reg]
        kind = gs.shader.get_property("GS_OUTPUT_PRIMITIVE")
        if kind == "TRIANGLE_STRIP":
            tris, _ = assemble.triangles(Prim.TRIANGLE_STRIP, n, out.cuts, rast.flatshade_first)
            ts, nout = self._triangle_stage(out.pos, attrs, interp, tris, out.prim[tris[:, 0]])
        elif kind == "LINE_STRIP":
            segs, _ = ln.segments(Prim.LINE_STRIP, n, out.cuts)
            flat = attrs[segs[:, 0] if rast.flatshade_first else segs[:, 1]]
            order = np.arange(segs.shape[0], dtype=np.int64)
            ts, nout = self._line_stage(out.pos, attrs, interp, segs, order, flat)
            ts.prim_id = out.prim[segs[ts.prim_id.astype(np.int64), 0]].astype(np.int32)
        else:  # POINTS
            psize = out.outputs.get(gs.kernel.output_index("PSIZE"))
            size = None if psize is None or not rast.point_size_per_vertex else psize[:, 0]
            pts = np.arange(n, dtype=np.int64)
            ts, nout = self._point_stage(out.pos, attrs, interp, pts, out.prim, size, fs)
        for q in self._active_queries:
            if q.type == QueryType.PRIMITIVES_GENERATED:
                q.primitives += out.primitives
            elif q.type == QueryType.PIPELINE_STATISTICS:
                st = q.stats
                st.ia_vertices += ids.size * ninst
                st.ia_primitives += verts.shape[0]
                st.vs_invocations += vpos.shape[0]
                st.gs_invocations += out.invocations
                st.gs_primitives += out.primitives
                st.c_invocations += out.primitives
                st.c_primitives += nout
        return [(ts, fs_inputs)]

    def _front_end_lines(self, info: DrawInfo, mode: Prim, index_data: Any, vs, fs) -> list:
        """The vertex pipeline of a LINES / LINE_STRIP / LINE_LOOP draw: the
        segments are clipped as Mesa's draw module clips lines and set up as
        llvmpipe sets them up (gallium/numpipe/lines.py)."""
        from . import lines as ln

        rast = self._rast.state
        if rast.line_smooth:
            raise UnsupportedError("smooth (antialiased) lines are not implemented by numpipe")
        if rast.line_stipple_enable:
            raise UnsupportedError("line stipple is not implemented by numpipe yet")
        ids, cuts, inverse, nu, ninst, _, pos, fs_inputs, attrs, interp = self._draw_vertices(
            info, index_data, vs, fs
        )
        n = pos.shape[0]
        seg, prim = ln.segments(mode, ids.size, cuts)
        lines = np.concatenate([i * nu + inverse[seg] for i in range(ninst)]).reshape(-1, 2)
        prims = np.tile(prim, ninst)  # primitive ids count each instance from 0
        flat = attrs[lines[:, 0] if rast.flatshade_first else lines[:, 1]]
        nin = lines.shape[0]
        order = np.arange(nin, dtype=np.int64)  # (unique, for the clipper's bookkeeping)
        ts, nout = self._line_stage(pos, attrs, interp, lines, order, flat)
        ts.prim_id = prims[ts.prim_id.astype(np.int64)].astype(np.int32)
        for q in self._active_queries:
            if q.type == QueryType.PRIMITIVES_GENERATED:
                q.primitives += nin
            elif q.type == QueryType.PIPELINE_STATISTICS:
                st = q.stats
                st.ia_vertices += ids.size * ninst
                st.ia_primitives += nin
                st.vs_invocations += n
                st.c_invocations += nin
                st.c_primitives += nout
        return [(ts, fs_inputs)]

    def _line_stage(self, pos, attrs, interp, lines, prims, flat) -> tuple:
        """Viewport transform, clipping and setup of segments ``lines`` (see
        _front_end_lines; ``flat`` each segment's provoking-vertex inputs):
        (TriangleSet, the number of segments clipping left)."""
        from . import lines as ln

        rast = self._rast.state
        vp = self._viewports[0]
        win, oow = viewport_transform(pos, vp.scale, vp.translate)
        ucps = [self._clip.ucp[i] for i in range(8) if rast.clip_plane_enable >> i & 1]
        planes, active = clip.plane_table(True, rast.depth_clip, rast.clip_halfz, ucps)
        before = prims
        pos, win, oow, attrs, lines, prims = ln.clip_lines(
            pos, win, oow, attrs, lines, prims,
            planes=planes, active=active, interp=interp, scale=vp.scale, translate=vp.translate,
        )  # fmt: skip
        flat = flat[np.searchsorted(before, prims)]  # prims are unique and ascending
        self.yield_point()
        ts = ln.setup_lines(
            win, oow, lines, attrs, interp,
            width=min(rast.line_width, MAX_LINE_WIDTH), region=self._draw_region(rast),
            half_pixel_center=rast.half_pixel_center, bottom_edge_rule=rast.bottom_edge_rule,
            prim_ids=prims, flat_values=flat,
        )  # fmt: skip
        return ts, lines.shape[0]

    def _draw_region(self, rast) -> tuple[int, int, int, int]:
        """The framebuffer, intersected with the scissor when enabled (inclusive)."""
        fb = self._fb
        region = (0, 0, fb.width - 1, fb.height - 1)
        if rast.scissor:
            sc = self._scissors[0]
            region = (
                max(0, sc.minx),
                max(0, sc.miny),
                min(fb.width, sc.maxx) - 1,
                min(fb.height, sc.maxy) - 1,
            )
        return region

    def _sprite_slots(self, fs, rast) -> list[int]:
        """Attribute slots (see _link) that take point sprite coordinates."""
        slots = []
        attr = 0
        for _, d in sorted(fs.kernel.input_decls.items()):
            if d.semantic in ("POSITION", "FACE"):
                continue
            if d.semantic == "PCOORD" or (
                rast.point_quad_rasterization
                and d.semantic == "GENERIC"
                and d.semantic_index < 32
                and rast.sprite_coord_enable >> d.semantic_index & 1
            ):
                slots.append(attr)
            attr += 1
        return slots

    def _add_to_scene(self, ts, fs_inputs: list) -> None:
        """Capture the fragment state for a draw's triangles and add them to the scene."""
        self.stats["triangles"] += ts.count
        if ts.count == 0 or (self._sample_mask & 1) == 0:
            return
        for q in self._active_queries:
            if q.type == QueryType.PIPELINE_STATISTICS:
                # every covered fragment invokes the shader (numpipe skips the
                # work for fragments an early depth test rejects, but counts them)
                from workers.raster import covered_pixels

                q.stats.ps_invocations += covered_pixels(ts)
        fs = self._shaders[ShaderType.FRAGMENT]
        scene = self._current_scene()
        state = self._fragment_state(fs, fs_inputs, scene)
        if scene.add_draw(state, ts):
            self.stats["merged_draws"] += 1
        else:
            self.stats["draw_commands"] += 1

    def _link(self, vs: ShaderCSO, fs: ShaderCSO) -> tuple[list, list]:
        """Match FS inputs to VS outputs by semantic.

        Returns ``(fs_inputs, link)``: ``fs_inputs`` is the FragmentState input
        list, ``link[slot] = (vs_output_register, interpolation)``.
        """
        rast = self._rast.state
        vs_out = {(d.semantic, d.semantic_index): reg for reg, d in vs.kernel.output_decls.items()}
        fs_inputs = []
        link = []
        for reg, d in sorted(fs.kernel.input_decls.items()):
            sem = d.semantic
            if sem == "POSITION":
                fs_inputs.append((reg, "pos", 0))
                continue
            if sem == "FACE":
                fs_inputs.append((reg, "face", 0))
                continue
            if sem == "PRIM_ID":  # the primitive's index in its draw (an integer)
                fs_inputs.append((reg, "primid", 0))
                continue
            mode = d.interpolate
            if mode is None:
                mode = "COLOR" if sem in ("COLOR", "BCOLOR") else "PERSPECTIVE"
            if mode == "COLOR":
                mode = "CONSTANT" if rast.flatshade else "PERSPECTIVE"
            source = vs_out.get((sem, d.semantic_index))
            fs_inputs.append((reg, "attr", len(link)))
            link.append((source, mode.lower()))
        return fs_inputs, link

    def _const_arrays(self, stage: ShaderType) -> list[Any]:
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

        return TextureBindings.capture(self._views.get(stage, []), self._samplers.get(stage, []))

    def _fragment_state(self, fs: ShaderCSO, fs_inputs: list, scene: Scene) -> Any:
        from workers.fragment import FragmentState, passthrough_slots, texpass_info

        kern = fs.kernel
        nc = len(scene.cbufs)
        all_cbufs = fs.shader.get_property("FS_COLOR0_WRITES_ALL_CBUFS", 0)
        color_outputs: list[int | None] = []
        for i in range(nc):
            reg = kern.output_index("COLOR", 0 if all_cbufs else i)
            color_outputs.append(reg)
        depth_out = kern.output_index("POSITION")
        stencil_out = kern.output_index("STENCIL")
        consts = []
        for idx, arr in enumerate(self._const_arrays(ShaderType.FRAGMENT)):
            if arr is None:
                consts.append(None)
                continue
            res = self._constbufs[ShaderType.FRAGMENT][idx][0]
            # User constants were copied at bind time.  A buffer's constants
            # are copied now (they are small): the rasterizer reads them after
            # this call returns, and a later write to the buffer (buffer_subdata,
            # a threaded context's in-order upload) must not reach this draw.
            consts.append(arr.copy() if res is not None else arr)
        counters = tuple(q.counter for q in self._active_queries if q.counter is not None)
        textures = self._texture_bindings(ShaderType.FRAGMENT)
        if textures is not None:
            scene.resources.update(textures.resources())
        blend = self._blend
        origin = fs.shader.get_property("FS_COORD_ORIGIN", "UPPER_LEFT")
        center = fs.shader.get_property("FS_COORD_PIXEL_CENTER", "HALF_INTEGER")
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
            blend_color=self._blend_color,
            dsa=self._dsa.state,
            stencil_ref=self._stencil_ref,
            coord_lower_left=origin == "LOWER_LEFT",
            coord_integer_center=center == "INTEGER",
            fb_height=self._fb.height,
            counters=counters,
            needs_quads=_needs_quads(fs.shader),
            passthrough=passthrough_slots(kern, fs_inputs),
            texpass=texpass_info(kern, fs_inputs),
        )
        dsa = self._dsa.state
        st.early_z = bool(
            scene.zsbuf is not None
            and dsa.depth.enabled
            and not dsa.stencil[0].enabled
            and not dsa.alpha.enabled
            and depth_out is None
            and stencil_out is None
            and not kern.uses_kill
        )
        if blend.uses_src1:
            st.src1_output = kern.output_index("COLOR", 1)  # type: ignore[attr-defined]
        return st

    # ------------------------------------------------------------------ flush and sync

    def _submit_scene(self) -> Fence:
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
        scene.fence.set_error_source(lambda s=seq: self._take_error(upto=s))
        self.stats["scenes"] += 1
        prev = self._last_fence
        self._last_fence = scene.fence
        for q in list(self._pending_query_scenes(scene)):
            q.fence = scene.fence
            q.pending_scene = None
        self.screen.pool.submit(scene, after=prev)
        return scene.fence

    def _pending_query_scenes(self, scene: Scene):
        return [q for q in getattr(scene, "queries", [])]

    def _scene_done(self, scene: Scene) -> None:
        if scene.errors:
            with self._lock:
                for err in scene.errors:
                    self._errors.append((scene.seq, err))  # type: ignore[attr-defined]
                self._mark_reset_locked()

    def _mark_reset_locked(self) -> None:
        """An error happened (caller holds the lock): a reset to report.

        The callback fires once per reset episode: from the first error's
        report until the application reads ``get_device_reset_status``, more
        errors add to the same reset instead of announcing new ones.
        """
        self._reset_status = ResetStatus.GUILTY_CONTEXT_RESET
        if not self._reset_announced:
            self._reset_pending_callback = True

    def _take_error(self, upto: int | None = None) -> BaseException | None:
        """Remove and return the oldest unreported error (of scenes up to ``upto``)."""
        with self._lock:
            found = next(
                (i for i, (seq, _) in enumerate(self._errors) if upto is None or seq <= upto),
                None,
            )
            if found is None:
                return None
            _, err = self._errors.pop(found)
        self._fire_reset_callback()
        return err

    def _fire_reset_callback(self) -> None:
        cb = None
        with self._lock:
            if self._reset_pending_callback and self._reset_callback is not None:
                cb = self._reset_callback
                self._reset_pending_callback = False
                self._reset_announced = True
        if cb is not None:
            cb(ResetStatus.GUILTY_CONTEXT_RESET)

    def record_error(self, exc: BaseException, where: str) -> None:
        """Keep an exception raised on a thread other than the application's."""
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
        err = self._take_error()
        if err is not None:
            raise err

    def flush(self, flags: int = 0) -> Fence:
        """Submit recorded work; return a fence signalled when it completes."""
        self._check_alive()
        flags = check_flush_flags(flags)
        self.raise_pending_error()
        fence = self._submit_scene()
        return fence

    def flush_resource(self, resource: Resource) -> None:
        self._check_alive()
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource", resource)

    def texture_barrier(self, flags: int = 0) -> None:
        self._check_alive()
        self._submit_scene()

    def memory_barrier(self, flags: int) -> None:
        self._check_alive()
        self._submit_scene()

    def _uses_resource(self, resource: Resource) -> bool:
        return self._scene is not None and resource in self._scene.resources

    def _sync_resource(
        self, resource: Resource, write: bool, reason: str, dontblock: bool = False
    ) -> bool:
        """Wait until no submitted or recorded work uses ``resource``.

        Returns False (without waiting) if ``dontblock`` and it would block.
        """
        if self._uses_resource(resource):
            if dontblock:
                return False
            self._submit_scene()
        fences = resource.pending_fences()
        if fences and dontblock:
            return False
        for f in fences:
            f.wait(None)
        self.raise_pending_error()
        return True

    def transfer_map(
        self, resource: Resource, level: int, usage: int, box: Box
    ) -> tuple[np.ndarray | None, TransferObject | None]:
        """Map a box of a resource; returns (data, transfer)."""
        self._check_alive()
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource created by this screen", resource)
        if resource.destroyed:
            raise bad_value("resource", "has been destroyed")
        if not isinstance(box, Box):
            raise bad_type("box", "a pipe.Box", box)
        usage = objects.check_transfer_usage(usage)
        resource.check_box(level, box)
        if not usage & Transfer.UNSYNCHRONIZED:
            ok = self._sync_resource(
                resource,
                bool(usage & Transfer.WRITE),
                "transfer_map",
                bool(usage & Transfer.DONTBLOCK),
            )
            if not ok:
                return None, None
        return self.map_box(resource, level, usage, box)

    def map_box(self, resource: Resource, level: int, usage: Transfer, box: Box, storage=None):
        """The mapping itself (no synchronisation)."""
        store = resource.storage if storage is None else storage
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
        objects.check_flush_region(transfer)

    def transfer_unmap(self, transfer: TransferObject) -> None:
        objects.close_transfer(transfer)
        res = transfer.resource
        if res.is_buffer and transfer.usage & Transfer.WRITE:
            with res.lock:
                lo, hi = res.tc_valid_range
                start, end = transfer.box.x, transfer.box.x + transfer.box.width
                res.tc_valid_range = [min(lo, start) if hi > lo else start, max(hi, end)]

    def buffer_subdata(self, resource: Resource, usage: int, offset: int, data: Any) -> None:
        """Write ``data`` into a buffer at ``offset`` (map + copy + unmap in one)."""
        self._check_alive()
        usage, offset, raw = check_subdata(resource, usage, offset, data)
        if raw.size == 0:
            return
        if not usage & Transfer.UNSYNCHRONIZED:
            self._sync_resource(resource, True, "buffer_subdata")
        resource.storage[offset : offset + raw.size] = raw
        with resource.lock:
            lo, hi = resource.tc_valid_range
            resource.tc_valid_range = [
                min(lo, offset) if hi > lo else offset,
                max(hi, offset + raw.size),
            ]

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
        if not isinstance(resource, Resource) or resource.is_buffer:
            raise bad_type("resource", "a texture Resource", resource)
        resource.check_box(level, box)
        bb = resource.block_bytes
        row = box.width * bb
        stride = stride or row
        layer_stride = layer_stride or stride * box.height
        raw = _user_bytes(data, "data")
        need = (box.depth - 1) * layer_stride + (box.height - 1) * stride + row
        if stride < row or layer_stride < stride * box.height or raw.size < need:
            raise bad_value(
                "data",
                f"must hold {box.depth} layers of {box.height} rows of {row} bytes "
                f"(stride {stride}, layer_stride {layer_stride}, {need} bytes)",
                raw.size,
            )
        self._sync_resource(resource, True, "texture_subdata")
        src = np.lib.stride_tricks.as_strided(
            raw, shape=(box.depth, box.height, row), strides=(layer_stride, stride, 1)
        )
        view = resource.level_view(level, box.z, box.depth)
        view[:, box.y : box.y + box.height, box.x : box.x + box.width] = src.reshape(
            box.depth, box.height, box.width, bb
        )

    def invalidate_resource(self, resource: Resource) -> None:
        self._check_alive()
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource", resource)

    def is_resource_referenced(self, resource: Resource, level: int = 0, layer: int = 0) -> int:
        if self._uses_resource(resource):
            return 3  # PIPE_REFERENCED_FOR_READ | WRITE
        return 3 if resource.busy else 0

    # ------------------------------------------------------------------ queries

    def create_query(self, query_type: QueryType, index: int = 0) -> Query:
        return objects.make_query(query_type, index, self)

    def destroy_query(self, query: Query) -> None:
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if query in self._active_queries:
            self._active_queries.remove(query)
        query.destroyed = True

    def begin_query(self, query: Query) -> bool:
        self._check_alive()
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if query.type in (QueryType.TIMESTAMP, QueryType.GPU_FINISHED):
            raise bad_value("query", f"{query.type.name} queries take no begin_query")
        if query.active:
            raise bad_value("query", "is already active (begin_query twice without end_query)")
        query.active = True
        query.ended = False
        query.fence = None
        query.pending_scene = None
        query.stats = objects.PipelineStatistics()
        query.primitives = 0
        if query.type in (
            QueryType.OCCLUSION_COUNTER,
            QueryType.OCCLUSION_PREDICATE,
            QueryType.OCCLUSION_PREDICATE_CONSERVATIVE,
        ):
            query.counter = OcclusionCounter()
        if query.type == QueryType.TIME_ELAPSED:
            query.begin_marker = self._time_marker()  # type: ignore[attr-defined]
        self._active_queries.append(query)
        return True

    def end_query(self, query: Query) -> bool:
        self._check_alive()
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if query.type not in (QueryType.TIMESTAMP, QueryType.GPU_FINISHED) and not query.active:
            raise bad_value("query", "is not active (end_query without begin_query)")
        query.active = False
        if query in self._active_queries:
            self._active_queries.remove(query)
        query.ended = True
        if query.type in (QueryType.TIMESTAMP, QueryType.TIME_ELAPSED):
            query.end_marker = self._time_marker()  # type: ignore[attr-defined]
        if self._scene is not None and not self._scene.empty:
            if not hasattr(self._scene, "queries"):
                self._scene.queries = []  # type: ignore[attr-defined]
            self._scene.queries.append(query)  # type: ignore[attr-defined]
            query.pending_scene = self._scene
            query.fence = None
        else:
            query.pending_scene = None
            query.fence = self._last_fence
        return True

    def _time_marker(self) -> Any:
        """A timestamp marker after everything recorded so far.

        In a scene it is a marker command (stamped by every band); without a
        framebuffer to build a scene on, the marker stamps when the previous
        scene completes.
        """
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
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if not query.ended:
            raise bad_value("query", "has not been ended (end_query)")
        fence = self.query_fence(query)
        if not fence.signalled:
            if not wait:
                return False, None
            fence.wait(None)
        else:
            self.raise_pending_error()
        return True, query.result()

    async def get_query_result_async(self, query: Query) -> Any:
        """Await the query's result (asyncio or trio)."""
        fence = self.query_fence(query)
        await fence
        return self.get_query_result(query, wait=True)[1]

    def render_condition(
        self, query: Query | None, condition: bool = False, mode: int = RenderCond.WAIT
    ) -> None:
        self._check_alive()
        self._render_cond = check_render_condition(query, condition, mode)

    def set_active_query_state(self, enable: bool) -> None:
        self._check_alive()

    # ------------------------------------------------------------------ misc

    def get_device_reset_status(self) -> ResetStatus:
        with self._lock:
            status = self._reset_status
            self._reset_status = ResetStatus.NO_RESET
            self._reset_announced = False  # the next error is a new reset
        return status

    def set_device_reset_callback(self, callback: Callable[[ResetStatus], None] | None) -> None:
        self._reset_callback = callback

    def generate_mipmap(
        self,
        resource: Resource,
        format: Format,
        base_level: int,
        last_level: int,
        first_layer: int,
        last_layer: int,
    ) -> bool:
        return False

    def blit(self, info: Any) -> None:
        raise UnsupportedError("blit is not implemented by numpipe yet (use resource_copy_region)")

    def emit_string_marker(self, string: str) -> None:
        pass

    def callback(self, fn: Callable[[Any], None], data: Any = None, asap: bool = False) -> None:
        """Run ``fn(data)`` now (pipe_context::callback; the threaded context queues it)."""
        self._check_alive()
        fn(data)

    def wait_idle(self, timeout_ns: int = PIPE_TIMEOUT_INFINITE) -> bool:
        return self.flush().finish(timeout_ns)


# Opcodes that make a fragment shader look at its neighbours in the 2x2 quad.
_QUAD_OPCODES = frozenset(
    {"DDX", "DDY", "DDX_FINE", "DDY_FINE", "TEX", "TXB", "TXP", "TEX2", "TXB2", "LODQ"}
    | {"SAMPLE", "SAMPLE_B", "SAMPLE_C", "INTERP_OFFSET", "INTERP_SAMPLE", "INTERP_CENTROID"}
)


def _needs_quads(shader: Any) -> bool:
    return any(inst.opcode in _QUAD_OPCODES for inst in shader.instructions)


class _FenceMarker:
    """A timestamp taken when a fence signals (markers outside any scene)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.time_ns = 0

    def stamp(self) -> None:
        self.time_ns = self.clock()


def _fb_key(fb: FramebufferState) -> tuple:
    return (fb.width, fb.height, tuple(id(s) for s in fb.cbufs), id(fb.zsbuf))


def _color_target(surface: Surface):
    res = surface.texture
    target = make_color_target(res, surface.level, surface.first_layer, res.storage)
    if surface.format != res.format:
        from ..util.format import describe

        target.desc = describe(surface.format)
    return target


def _user_bytes(obj: Any, arg: str) -> np.ndarray:
    if obj is None:
        raise bad_value(arg, "must not be None")
    if isinstance(obj, np.ndarray):
        return np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise PipeTypeError(
            f"{arg} must be a Resource, bytes-like object or numpy array; got {type(obj).__name__}"
        ) from None
    return np.frombuffer(mv.cast("B"), dtype=np.uint8)


def _bcast(v: Any, n: int, dtype: Any = None) -> np.ndarray:
    a = np.asarray(v)
    if dtype is not None and a.dtype != dtype:
        a = a.view(dtype) if a.dtype.itemsize == 4 and a.dtype.kind in "iu" else a.astype(dtype)
    if a.ndim == 0:
        return np.full(n, a, dtype=a.dtype)
    return a


def _sv_int(values: np.ndarray) -> list[np.ndarray]:
    v = values.astype(np.int32)
    return [v, v, v, v]


_ = (time, PipeValueError)


def _no_yield() -> None:
    """The direct context's yield point: nothing to hand over."""


# draws set up as lines (adjacency modes: the middle two vertices of each primitive)
_LINE_DRAW_MODES = (
    Prim.LINES,
    Prim.LINE_STRIP,
    Prim.LINE_LOOP,
    Prim.LINES_ADJACENCY,
    Prim.LINE_STRIP_ADJACENCY,
)


def _bind_slots(slots: dict, start: int, items: list) -> None:
    """Bind ``items`` at slots ``start``.. of ``slots`` (None unbinds)."""
    for i, item in enumerate(items):
        if item is None:
            slots.pop(start + i, None)
        else:
            slots[start + i] = item


def _unique_ids(ids: np.ndarray, indexed: Any) -> tuple[np.ndarray, np.ndarray]:
    """The distinct vertex ids of a stream and each stream entry's position
    among them (indexed draws repeat vertices; others do not)."""
    if indexed and ids.size:
        return np.unique(ids, return_inverse=True)
    return ids, np.arange(ids.size)


def _bound_buffers(vbufs: dict) -> dict:
    out = {}
    for slot, vb in vbufs.items():
        data = vb.buffer.storage if isinstance(vb.buffer, Resource) else vb.buffer
        out[slot] = BoundVertexBuffer(data, vb.stride, vb.buffer_offset)
    return out
