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
import numbers
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workers.job import SceneJob

from ..draw.fetch import BoundVertexBuffer, check_index_range
from ..draw.pipeline import GEOMETRY, LINES, POINTS, Draw, DrawPipeline, VertexProgram, kind_of
from ..draw.vs import link as link_outputs
from ..draw.vs import sprite_slots
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
    Transfer,
)
from ..pipe.errors import (
    ContextDestroyedError,
    PipeTypeError,
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
# The vertices one draw may have (count x instances): a draw's vertex pipeline
# holds a few hundred bytes a vertex at once (ids, fetched inputs, shader
# outputs, set-up triangles), so this bounds one draw to a few GiB.
MAX_DRAW_VERTICES = 1 << 24
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
    if out.count * out.instance_count > MAX_DRAW_VERTICES:
        raise UnsupportedError(
            f"numpipe draws at most {MAX_DRAW_VERTICES:,} vertices a call (info.count x "
            f"info.instance_count = {out.count * out.instance_count:,}): split the draw"
        )
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
    counts = {max(1, s.texture.nr_samples) for s in [*cbufs, zs] if s is not None}
    if len(counts) > 1:
        raise bad_value(
            "state", "must have surfaces of one sample count", sorted(counts)
        )  # (pipe_framebuffer_state: every attachment has the framebuffer's samples)
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


def check_min_samples(min_samples: Any) -> int:
    """set_min_samples' count: 1 to the largest sample count (4)."""
    return check_int("min_samples", min_samples, 0, 32) or 1


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
        self._min_samples = 1
        self._window: tuple[bool, tuple] = (False, ())  # window rectangles: exclude none
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
        # The draw queue (see draw_vbo and _queued_draw).  batch_draws off:
        # every draw runs alone at once (the same pixels; for tests).
        self.batch_draws = os.environ.get("NUMPIPE_DRAW_BATCH", "1") != "0"
        self._binner = Binner(self)
        self._draws = DrawPipeline(self._binner, lambda: self.yield_point())
        self._draws_epoch = 0  # runs of the queue
        self._queued_epoch = 0  # the run after which _queued was last filled
        self._queued: set[Any] = set()  # resources the queued draws read or write
        self._snap: dict[str, Any] = dict.fromkeys(
            (
                "program",
                "vbufs",
                "vconsts",
                "gconsts",
                "frag",
                "fbase",
                "ftex",
                "viewport",
                "region",
            )
        )
        self._fs_inputs: dict[int, tuple] = {}  # id(fs CSO) -> (CSO, its inputs' layout)
        self._snap_deps: dict[str, list] = {}
        self._snap_resources: dict[str, list] = {}
        self._programs: dict[tuple, VertexProgram] = {}  # interned
        self._frags: dict[tuple, FragmentBase] = {}  # interned
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
        self._snap["fbase"] = self._snap["frag"] = None

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
        self._snap["fbase"] = self._snap["frag"] = None

    def destroy_depth_stencil_alpha_state(self, cso: DepthStencilAlphaCSO) -> None:
        if not isinstance(cso, DepthStencilAlphaCSO):
            raise bad_type("cso", "a CSO from create_depth_stencil_alpha_state", cso)

    def create_rasterizer_state(self, state: RasterizerState) -> RasterizerCSO:
        return objects.make_rasterizer(state)

    def bind_rasterizer_state(self, cso: RasterizerCSO | None) -> None:
        self._check_alive()
        self._apply_rasterizer(check_rasterizer_cso(cso))

    def _apply_rasterizer(self, cso: RasterizerCSO) -> None:
        old = self._rast.state
        self._rast = cso
        self._invalidate("program", "region")
        new = cso.state
        if (old.multisample, old.half_pixel_center) != (new.multisample, new.half_pixel_center):
            # (the multisample state: FragmentBase.sample_opts)
            self._snap["fbase"] = self._snap["frag"] = None

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
        self._invalidate(*_TEXTURE_PART.get(stage, ("ftex", "fbase", "frag")))

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
        self._invalidate("program")

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
        self._invalidate(*_TEXTURE_PART.get(stage, ("ftex", "fbase", "frag")))

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
        self._snap["fbase"] = self._snap["frag"] = None

    def set_stencil_ref(self, ref: StencilRef) -> None:
        self._check_alive()
        self._apply_stencil_ref(check_stencil_ref(ref))

    def _apply_stencil_ref(self, ref: tuple[int, int]) -> None:
        self._stencil_ref = ref
        self._snap["fbase"] = self._snap["frag"] = None

    def set_sample_mask(self, mask: int) -> None:
        self._check_alive()
        self._apply_sample_mask(check_sample_mask(mask))

    def _apply_sample_mask(self, mask: int) -> None:
        self._sample_mask = mask
        self._snap["fbase"] = self._snap["frag"] = None

    def set_min_samples(self, min_samples: int) -> None:
        """More than 1: shade once per sample of a multisampled framebuffer."""
        self._check_alive()
        self._apply_min_samples(check_min_samples(min_samples))

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
        self._clip = check_clip_state(state)
        self._invalidate("program")

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
        self._invalidate("region")

    def set_viewport_states(self, start: int, viewports: Sequence[ViewportState]) -> None:
        self._check_alive()
        self._apply_viewport_states(*check_viewport_states(start, viewports))

    def _apply_viewport_states(self, start: int, viewports: tuple[ViewportState, ...]) -> None:
        for i, vp in enumerate(viewports):
            self._viewports[start + i] = vp
        self._invalidate("viewport")

    def set_window_rectangles(self, include: bool, rects: Sequence[ScissorState]) -> None:
        """Clip later draws to (or away from) up to 8 rectangles (window.py)."""
        from .window import check_window_rectangles

        self._check_alive()
        self._apply_window_rectangles(*check_window_rectangles(include, rects))

    def _apply_window_rectangles(self, include: bool, rects: tuple) -> None:
        self._window = (include, rects)
        self._snap["fbase"] = self._snap["frag"] = None

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
        stage, index, binding = check_constant_buffer(shader, index, cb)
        if binding is not None and binding[0] is None:  # user bytes: draws read them later
            binding = (None, binding[1].copy())
        self._apply_constant_buffer(stage, index, binding)

    def _apply_constant_buffer(self, stage: ShaderType, index: int, binding: Any) -> None:
        """Bind a validated constant buffer (see check_constant_buffer; user
        bytes are the context's own: copied by the caller)."""
        self._invalidate(_CONST_PART.get(stage, "frag"))
        slots = self._constbufs.setdefault(stage, {})
        if binding is None:
            slots.pop(index, None)
        else:
            slots[index] = binding

    def set_framebuffer_state(self, state: FramebufferState) -> None:
        self._check_alive()
        new = check_framebuffer_state(state)
        if _fb_key(new) != _fb_key(self._fb) and (self._scene is not None or self._draws.queue):
            self._submit_scene()
        if _fb_samples(new) != _fb_samples(self._fb):
            self._invalidate("program")  # (VertexProgram.multisample)
        self._fb = new
        self._invalidate("region", "fbase", "frag")

    def set_vertex_buffers(self, start_slot: int, buffers: Sequence[VertexBuffer | None]) -> None:
        self._check_alive()
        self._apply_vertex_buffers(check_vertex_buffers(start_slot, buffers))

    def _apply_vertex_buffers(self, bindings: list[tuple[int, VertexBuffer | None]]) -> None:
        """Bind validated, private vertex buffers (see check_vertex_buffers)."""
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
            scene.resources |= resources
            scene.seq = self._scene_seq  # type: ignore[attr-defined]
            self._scene = scene
        return self._scene

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
        cmd = ClearCmd(colors, depth_word, sval, keep)
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
        sl = (slice(dsty, dsty + height), slice(dstx, dstx + width))
        for layer in range(dst.first_layer, dst.last_layer + 1):  # every layer of the surface
            target = make_depth_target(dst.texture, dst.level, layer, dst.texture.storage)
            _clear_zs_box(target, sl, clear_flags, depth, stencil)

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
        draw = self._prepare_draw(info)
        if draw is None:
            return
        self.stats["draws"] += 1
        if self._draws.add(draw) or not self.batch_draws:
            self._run_draws()

    def _prepare_draw(self, info: DrawInfo) -> Draw | None:
        """Validate a draw against the bound state; return it as a queued
        :class:`~gallium.draw.pipeline.Draw`, or None when there is nothing
        to draw.  Everything that could make the draw fail is checked here,
        so that a draw that was accepted runs."""
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
            if isinstance(info.index, Resource):
                index_data = info.index.storage
            else:  # user indices: the draw runs later, the caller may reuse them
                index_data = _user_bytes(info.index, "info.index").copy()
            check_index_range(index_data, info.index_size, info.start, info.count)
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
        gs = self._shaders[ShaderType.GEOMETRY]
        kind = kind_of(mode, gs is not None)
        rast = self._rast.state
        if mode == Prim.TRIANGLE_STRIP_ADJACENCY:
            raise UnsupportedError("TRIANGLE_STRIP_ADJACENCY is not implemented by numpipe yet")
        if kind == POINTS and rast.point_smooth:
            raise UnsupportedError("smooth (antialiased) points are not implemented by numpipe")
        if kind == LINES:
            if rast.line_smooth:
                raise UnsupportedError("smooth (antialiased) lines are not implemented by numpipe")
            if rast.line_stipple_enable:
                raise UnsupportedError("line stipple is not implemented by numpipe yet")
        if kind == GEOMETRY:
            from ..draw.gs import check_input_mode

            check_input_mode(gs.shader, mode)
        if info.count == 0 or info.instance_count == 0:
            return None
        if not self._render_condition_passes():
            return None
        if rast.rasterizer_discard:
            return None
        return self._queued_draw(info, index_data, kind)

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
        return Draw(
            info, index_data, prog, buffers, consts, gs_consts, viewport, region, frag,
            self._counting, kind,
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
        rast = self._rast.state
        last = gs if gs is not None else vs
        _, link = link_outputs(last.kernel.output_decls, fs.kernel, rast.flatshade)
        sprite = sprite_slots(fs.kernel, rast)
        ucps = tuple(tuple(self._clip.ucp[i]) for i in range(8) if rast.clip_plane_enable >> i & 1)
        vtex, vkey = self._stage_textures(ShaderType.VERTEX, resources, deps)
        gtex, gkey = (
            self._stage_textures(ShaderType.GEOMETRY, resources, deps) if gs else (None, ())
        )
        # (by identity: CSOs compare by value, and the program keeps them alive)
        multisample = bool(rast.multisample) and _fb_samples(self._fb) > 1
        key = (id(vs), id(gs), id(self._velems), id(self._rast), ucps, tuple(link), sprite)
        key += (vkey, gkey, multisample)
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
                link=tuple(link),
                sprite=sprite,
                vs_textures=vtex,
                gs_textures=gtex,
                max_point_size=MAX_POINT_WIDTH,
                max_line_width=MAX_LINE_WIDTH,
                keep=(self._velems, self._rast),
                multisample=multisample,
            )
        return prog

    def _stage_textures(self, stage: ShaderType, resources: list, deps: list) -> tuple:
        """(TextureBindings of a stage or None, a key that identifies them)."""
        views = self._views.get(stage, [])
        samplers = self._samplers.get(stage, [])
        if not views and not samplers:
            return None, ()
        for v in views:
            if v is not None:
                resources.append(v.texture)
                deps.append((v.texture, v.texture.storage))
        key = (
            tuple((id(v), id(v.texture.storage)) if v is not None else None for v in views),
            tuple(id(s) for s in samplers),
        )
        return self._texture_bindings(stage), key

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

    def _part_viewport(self, resources: list, deps: list) -> tuple:
        vp = self._viewports[0]
        return (tuple(float(v) for v in vp.scale), tuple(float(v) for v in vp.translate))

    def _part_region(self, resources: list, deps: list) -> tuple:
        """The framebuffer, intersected with the scissor when enabled (inclusive)."""
        fb = self._fb
        region = (0, 0, fb.width - 1, fb.height - 1)
        if self._rast.state.scissor:
            sc = self._scissors[0]
            region = (
                max(0, int(sc.minx)),
                max(0, int(sc.miny)),
                min(fb.width, int(sc.maxx)) - 1,
                min(fb.height, int(sc.maxy)) - 1,
            )
        for s in [*self._fb.cbufs, self._fb.zsbuf]:
            if s is not None:
                resources.append(s.texture)
        return region

    def _part_frag(self, resources: list, deps: list) -> FragmentSnapshot:
        """The fragment side of a draw: the constant buffers of the fragment
        stage on the rest (``fbase``), made apart so that a constant set per
        draw makes only this small object."""
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
        return FragmentSnapshot(base, tuple(consts))

    def _part_fbase(self, resources: list, deps: list) -> FragmentBase:
        """Everything of a draw's fragment side but the constants (interned:
        a frame switching between a few states has a few of these)."""
        fs = self._shaders[ShaderType.FRAGMENT]
        ftex = self._snap["ftex"]
        if ftex is None:
            ftex = self._make_part("ftex")
        textures, tkey = ftex
        counters = tuple(q.counter for q in self._active_queries if q.counter is not None)
        stat_queries = tuple(
            q for q in self._active_queries if q.type == QueryType.PIPELINE_STATISTICS
        )
        rast = self._rast.state
        sample_opts = (self._min_samples, bool(rast.multisample), bool(rast.half_pixel_center))
        key = (  # (by identity: the base keeps the objects alive)
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
        )
        base = self._frags.get(key)
        if base is None:
            if len(self._frags) >= 256:
                self._frags.clear()
            known = self._fs_inputs.get(id(fs))
            if known is None or known[0] is not fs:
                known = self._fs_inputs[id(fs)] = (fs, link_outputs({}, fs.kernel, False)[0])
            base = self._frags[key] = FragmentBase(
                fs=fs,
                fs_inputs=known[1],
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
            )
        return base

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

        return TextureBindings.capture(self._views.get(stage, []), self._samplers.get(stage, []))

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
        self._frags.clear()
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
        self.screen.pool.submit(SceneJob(scene), after=prev)
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
        return resource in self._queued or (
            self._scene is not None and resource in self._scene.resources
        )

    def _sync_resource(
        self, resource: Resource, write: bool, reason: str, dontblock: bool = False
    ) -> bool:
        """Wait until no submitted or recorded work uses ``resource``.

        Returns False (without waiting) if ``dontblock`` and it would block.
        """
        if self._uses_resource(resource):
            if dontblock:
                return False
            self._run_draws()  # (the draws may not touch it: then the scene need not go)
            if self._scene is not None and resource in self._scene.resources:
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
            self._queries_changed()
        query.destroyed = True

    def begin_query(self, query: Query) -> bool:
        self._check_alive()
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if query.type in (QueryType.TIMESTAMP, QueryType.GPU_FINISHED):
            raise bad_value("query", f"{query.type.name} queries take no begin_query")
        if query.active:
            raise bad_value("query", "is already active (begin_query twice without end_query)")
        if query.type in (QueryType.PRIMITIVES_GENERATED, QueryType.PIPELINE_STATISTICS):
            self._run_draws()  # queued draws may still count into its last interval
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
        self._queries_changed()
        return True

    def _queries_changed(self) -> None:
        self._counting = counting_queries(self._active_queries)
        self._snap["fbase"] = self._snap["frag"] = None  # (counters, statistics queries)

    def end_query(self, query: Query) -> bool:
        self._check_alive()
        if not isinstance(query, Query):
            raise bad_type("query", "a Query from create_query", query)
        if query.type not in (QueryType.TIMESTAMP, QueryType.GPU_FINISHED) and not query.active:
            raise bad_value("query", "is not active (end_query without begin_query)")
        query.active = False
        if query in self._active_queries:
            self._active_queries.remove(query)
            self._queries_changed()
        query.ended = True
        if query.type in (QueryType.TIMESTAMP, QueryType.TIME_ELAPSED):
            query.end_marker = self._time_marker()  # type: ignore[attr-defined]
        if self._draws.queue:  # their primitives go into the current scene
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
        return True

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
        """Fill levels base_level+1..last_level from the level above each, as
        llvmpipe does (util_gen_mipmap: a LINEAR blit per level); False when
        the format cannot be filtered and written (integer, stencil-only)."""
        from .blit import mipmap_blits

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
        from .blit import check_clear_texture

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
        from .blit import check_blit_info

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
        job.fence.set_error_source(lambda s=seq: self._take_error(upto=s))
        self._last_fence = job.fence
        self.screen.pool.submit(job, after=after)

    def emit_string_marker(self, string: str) -> None:
        pass

    def callback(self, fn: Callable[[Any], None], data: Any = None, asap: bool = False) -> None:
        """Run ``fn(data)`` now (pipe_context::callback; the threaded context queues it)."""
        self._check_alive()
        fn(data)

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


def _no_yield() -> None:
    """The direct context's yield point: nothing to hand over."""


# which part of a queued draw's state a stage's constants / textures belong to
_CONST_PART = {ShaderType.VERTEX: "vconsts", ShaderType.GEOMETRY: "gconsts"}
_TEXTURE_PART = {ShaderType.VERTEX: ("program",), ShaderType.GEOMETRY: ("program",)}
_NO_CONSTS: tuple = ()


def _bind_slots(slots: dict, start: int, items: list) -> None:
    """Bind ``items`` at slots ``start``.. of ``slots`` (None unbinds)."""
    for i, item in enumerate(items):
        if item is None:
            slots.pop(start + i, None)
        else:
            slots[start + i] = item
