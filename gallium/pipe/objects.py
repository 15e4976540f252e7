"""The objects a driver hands out, as the contract sees them (``p_state.h``'s
``pipe_resource``, ``pipe_surface``, ``pipe_sampler_view``, ``pipe_transfer``,
``pipe_query`` and the CSO handles).

A driver's own objects subclass these, as Mesa's drivers embed
``struct pipe_resource`` in theirs.  The contract's checks
(:mod:`gallium.pipe.checks`) recognise a driver object by its base class and
read only the attributes written here, so that any context -- the driver's
own, or a frontend wrapping it (``threaded/``) -- refuses the same bad
arguments with the same error, without knowing which driver made them.

Every attribute listed in a class docstring is set by the driver when the
object is created and not changed afterwards, except where noted (the
``destroyed`` flags, a buffer's ``valid_range``, a query's application-side
``active``/``ended``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .enums import Format, QueryType, ShaderType, TextureTarget, Transfer
from .state import Box, ResourceTemplate


class Resource:
    """``pipe_resource``: a buffer or texture, shared by every context of its screen.

    Template fields (normalised by the screen: a buffer's ``height0``,
    ``depth0`` and ``array_size`` are 1): ``target``, ``format``, ``width0``,
    ``height0``, ``depth0``, ``array_size``, ``last_level``, ``nr_samples``,
    ``usage``, ``bind``, ``flags``.  ``block_bytes`` is the size of one texel
    (1 for a buffer); ``screen`` the screen that made it.

    ``destroyed`` becomes True at ``screen.resource_destroy``; every context
    refuses a destroyed resource at the call.

    ``valid_range`` is ``[start, end)``, the bytes of a buffer written so far
    by any context (Mesa's ``threaded_resource.valid_buffer_range``): bytes
    outside it hold nothing anyone wrote, so work queued before their first
    write does not see them (a frontend may write them without waiting for
    that work).  Every context that writes a buffer extends it with
    :meth:`mark_valid`, under ``lock``.

    ``tc`` belongs to a wrapping frontend (the threaded context keeps its
    per-resource facts there: storage swapped in but not yet executed, last
    recorded use per context); drivers never touch it.
    """

    def __init__(self, screen: Any, templ: ResourceTemplate, block_bytes: int) -> None:
        self.screen = screen
        self.target = TextureTarget(templ.target)
        self.format = Format(templ.format)
        self.width0 = int(templ.width0)
        self.height0 = int(templ.height0)
        self.depth0 = int(templ.depth0)
        self.array_size = int(templ.array_size)
        self.last_level = int(templ.last_level)
        self.nr_samples = int(templ.nr_samples)
        self.usage = templ.usage
        self.bind = templ.bind
        self.flags = int(templ.flags)
        self.block_bytes = int(block_bytes)
        self.destroyed = False
        self.lock = threading.Lock()
        self.valid_range: list[int] = [0, 0]
        self.tc: Any = None

    @property
    def is_buffer(self) -> bool:
        return self.target == TextureTarget.BUFFER

    def level_extent(self, level: int) -> tuple[int, int, int]:
        """(width, height, layers) of mip level ``level`` (no range check):
        a buffer is (width0, 1, 1); a 3D texture's layers are its depth."""
        if self.target == TextureTarget.BUFFER:
            return self.width0, 1, 1
        w = max(1, self.width0 >> level)
        h = max(1, self.height0 >> level)
        if self.target == TextureTarget.TEXTURE_3D:
            return w, h, max(1, self.depth0 >> level)
        return w, h, self.array_size

    def template(self) -> ResourceTemplate:
        """The (normalised) template this resource was made from."""
        return ResourceTemplate(
            target=self.target,
            format=self.format,
            width0=self.width0,
            height0=self.height0,
            depth0=self.depth0,
            array_size=self.array_size,
            last_level=self.last_level,
            nr_samples=self.nr_samples,
            usage=self.usage,
            bind=self.bind,
            flags=self.flags,
        )

    def mark_valid(self, start: int, end: int) -> None:
        """Extend ``valid_range`` by the bytes ``[start, end)`` (any thread)."""
        if end <= start:
            return
        with self.lock:
            lo, hi = self.valid_range
            if hi <= lo:
                self.valid_range = [start, end]
            else:
                self.valid_range = [min(lo, start), max(hi, end)]

    def pending_fences(self) -> list[Any]:
        """The fences of submitted work, of any context, that reads or writes
        this resource and has not completed (any thread).  The driver keeps
        them; this base knows of none."""
        return []

    def valid_overlaps(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` holds bytes someone has written."""
        lo, hi = self.valid_range
        return hi > lo and start < hi and end > lo


class Surface:
    """``pipe_surface``: a level and layer range of a texture to render into.

    ``texture``, ``format``, ``level``, ``first_layer``, ``last_layer``,
    ``width`` and ``height`` (of the level), ``context`` (the creating
    context), ``destroyed`` (set by ``surface_destroy``).
    """


class SamplerView:
    """``pipe_sampler_view``: a resource as shaders sample it.

    ``texture``, ``format``, ``target``, ``first_level``, ``last_level``,
    ``first_layer``, ``last_layer``, ``buf_offset``, ``buf_size``,
    ``context``, ``destroyed`` (set by ``sampler_view_destroy``).
    """


class Query:
    """``pipe_query``.

    ``type`` (a :class:`~gallium.pipe.enums.QueryType`), ``index``.  ``active``
    and ``ended`` are the application's view -- ``begin_query`` was called
    and ``end_query`` not yet; ``end_query`` has been called since the last
    ``begin_query`` -- kept by the contract's checks at the call (on whichever
    context the application calls), never by a driver thread.  ``destroyed``
    is set by ``destroy_query``.
    """

    type: QueryType
    index: int
    active: bool = False
    ended: bool = False
    destroyed: bool = False


class StreamOutputTarget:
    """``pipe_stream_output_target``: ``buffer``, ``buffer_offset``,
    ``buffer_size``, ``destroyed``."""


# -- CSO handles: what a create_*_state call returns ------------------------------


class CSO:
    """A constant state object.  ``state`` is the driver's private copy of the
    template it was made from (None for shaders made from a parsed program)."""

    state: Any


class BlendCSO(CSO):
    """Made by ``create_blend_state``."""


class DepthStencilAlphaCSO(CSO):
    """Made by ``create_depth_stencil_alpha_state``."""


class RasterizerCSO(CSO):
    """Made by ``create_rasterizer_state``; ``state`` is a ``pipe.RasterizerState``."""


class SamplerCSO(CSO):
    """Made by ``create_sampler_state``."""


class VertexElementsCSO(CSO):
    """Made by ``create_vertex_elements_state``: ``elements``, a tuple of
    ``pipe.VertexElement``."""


class ShaderCSO(CSO):
    """Made by ``create_{vs,fs,gs,tcs,tes}_state``.

    ``stage`` (a ``pipe.ShaderType``); ``inputs``, the frozenset of ``IN``
    registers the program declares; ``gs_input``, the
    ``GS_INPUT_PRIMITIVE`` property of a geometry program (``"POINTS"``,
    ``"LINES"``, ``"TRIANGLES"``, ``"LINES_ADJACENCY"`` or
    ``"TRIANGLES_ADJACENCY"``), None for other stages; ``tess_output``, the
    primitives the tessellator makes for a tessellation evaluation program
    (``"points"`` in point mode, else ``"lines"`` for isolines or
    ``"triangles"``), None for other stages; ``so``, the stream output info
    of a vertex, tessellation evaluation or geometry program made with a
    non-empty ``pipe_stream_output_info`` (in the driver's checked form),
    else None; ``memory_writes``, whether the program stores to or runs
    atomics on shader buffers or images; ``early_fragment_tests``, a
    fragment program's ``FS_EARLY_DEPTH_STENCIL`` property;
    ``sampler_pairs``, the (sampler view slot, sampler state slot) pairs
    the program filters with (see check_sampler_bindings).
    """

    stage: ShaderType


class ComputeCSO(CSO):
    """Made by ``create_compute_state``: ``fixed_block`` (the program's
    ``CS_FIXED_BLOCK_*`` size, or None), ``input_size`` (its
    ``req_input_mem`` bytes) and ``sampler_pairs`` (as ShaderCSO's)."""


# -- transfers --------------------------------------------------------------------


@dataclass
class TransferObject:
    """``pipe_transfer``: what a map covers; handed back to ``transfer_unmap``.

    ``data`` is the mapped numpy view.  ``staging`` is a frontend's copy that
    its ``transfer_unmap`` applies (None for a driver's own map); ``context``
    the context that mapped it.
    """

    resource: Any
    level: int
    usage: Transfer
    box: Box
    stride: int
    layer_stride: int
    data: Any = None
    unmapped: bool = False
    staging: Any = None
    context: Any = None


__all__ = [
    "CSO",
    "BlendCSO",
    "ComputeCSO",
    "DepthStencilAlphaCSO",
    "Query",
    "RasterizerCSO",
    "Resource",
    "SamplerCSO",
    "SamplerView",
    "ShaderCSO",
    "StreamOutputTarget",
    "Surface",
    "TransferObject",
    "VertexElementsCSO",
]
