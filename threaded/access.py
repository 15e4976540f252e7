"""What each recorded call reads and writes: the one table the no-stall rules use.

The threaded context decides whether a map or an upload may skip waiting for
queued work (rule 5 of :mod:`threaded.context`) from two facts per resource:
its *last recorded use* by this context (a resource is busy until a flush
recorded after that use has completed) and, for buffers, its *valid range*
(the bytes anyone has written: ``Resource.valid_range``).  Both must be
updated for every recorded call that touches a resource, or a later write is
promoted past work that still reads or writes the same bytes (issue 21:
``clear_buffer`` did not mark its bytes, so a later ``buffer_subdata`` landed
before the clear).

So no call is recorded without an entry here.  :data:`CALLS` maps every call
the threaded context records to the driver entry point that executes it
(``pipe._apply_*`` of :mod:`gallium.pipe.protocols`) and its :class:`Access`:
the resources it reads, the resources (and byte ranges of buffers) it
writes, and whether it uses the bound state (draws, clears, grids).  The
context looks its driver functions up here once, and marks uses and valid
ranges from here at the call (:meth:`ThreadedContext._record_call`); a call
missing from the table cannot be recorded at all.

Ranges are ``(resource, start, end)``; ``end`` None means the whole resource
(textures have no valid range; writing one only makes it busy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gallium.pipe.checks import query_result_bytes

Range = tuple[Any, int, int | None]


def _none(*_args: Any) -> tuple:
    return ()


@dataclass(frozen=True, slots=True)
class Access:
    """How one recorded call touches resources (see the module docstring)."""

    driver: str  # the driver entry point that executes the call
    reads: Callable[..., Iterable[Any]] = _none  # recorded args -> resources read
    writes: Callable[..., Iterable[Range]] = _none  # recorded args -> ranges written
    bound: str | None = None  # "draw", "clear" or "compute": uses the bound resources

    @property
    def touches_resources(self) -> bool:
        return self.reads is not _none or self.writes is not _none or self.bound is not None


def _whole(res: Any) -> Range:
    return (res, 0, None)


def _span(res: Any, start: int, size: int) -> Range:
    return (res, start, start + size)


def _box_range(res: Any, box: Any) -> Range:
    return (res, box.x, box.x + box.width) if res.is_buffer else (res, 0, None)


STATE = Access  # a state call: nothing touched when recorded (draws use what it binds)

CALLS: dict[str, Access] = {
    # -- CSO binds and deletes, non-CSO state ------------------------------------
    "bind_blend_state": STATE("_apply_blend"),
    "bind_depth_stencil_alpha_state": STATE("_apply_dsa"),
    "bind_rasterizer_state": STATE("_apply_rasterizer"),
    "bind_sampler_states": STATE("_apply_sampler_states"),
    "bind_shader": STATE("_apply_shader"),
    "bind_compute_state": STATE("_apply_compute"),
    "bind_vertex_elements_state": STATE("_apply_vertex_elements"),
    "delete_state": STATE("_apply_delete_state"),
    "surface_destroy": STATE("_apply_surface_destroy"),
    "sampler_view_destroy": STATE("_apply_sampler_view_destroy"),
    "set_blend_color": STATE("_apply_blend_color"),
    "set_stencil_ref": STATE("_apply_stencil_ref"),
    "set_sample_mask": STATE("_apply_sample_mask"),
    "set_min_samples": STATE("_apply_min_samples"),
    "set_clip_state": STATE("_apply_clip_state"),
    "set_polygon_stipple": STATE("_apply_polygon_stipple"),
    "delete_texture_handle": STATE("_apply_delete_texture_handle"),
    "make_texture_handle_resident": STATE("_apply_make_texture_handle_resident"),
    "delete_image_handle": STATE("_apply_delete_image_handle"),
    "make_image_handle_resident": STATE("_apply_make_image_handle_resident"),
    "set_scissor_states": STATE("_apply_scissor_states"),
    "set_viewport_states": STATE("_apply_viewport_states"),
    "set_window_rectangles": STATE("_apply_window_rectangles"),
    "set_tess_state": STATE("_apply_tess_state"),
    "set_debug_callback": STATE("_apply_debug_callback"),
    "set_shader_buffers": STATE("_apply_shader_buffers"),
    "set_shader_images": STATE("_apply_shader_images"),
    "set_stream_output_targets": STATE("_apply_stream_output_targets"),
    "set_framebuffer_state": STATE("_apply_framebuffer_state"),
    "set_vertex_buffers": STATE("_apply_vertex_buffers"),
    "set_constant_buffer": STATE("_apply_constant_buffer"),
    "set_sampler_views": STATE("_apply_sampler_views"),
    "render_condition": STATE("_apply_render_condition"),
    "set_active_query_state": STATE("_apply_active_query_state"),
    "begin_query": STATE("_apply_begin_query"),
    "end_query": STATE("_apply_end_query"),
    "destroy_query": STATE("_apply_destroy_query"),
    "emit_string_marker": STATE("_apply_emit_string_marker"),
    "texture_barrier": STATE("_apply_texture_barrier"),
    "memory_barrier": STATE("_apply_memory_barrier"),
    # -- drawing and compute: the bound resources -------------------------------------
    "draw_vbo": Access("_apply_draw_vbo", reads=lambda info: _draw_reads(info), bound="draw"),
    "clear": Access("_apply_clear", bound="clear"),
    "launch_grid": Access(
        "_apply_launch_grid",
        reads=lambda grid: () if grid.indirect is None else (grid.indirect,),
        bound="compute",
    ),
    # -- resource contents ----------------------------------------------------------------
    "buffer_subdata": Access(
        "_apply_buffer_subdata", writes=lambda res, usage, off, data: (_span(res, off, data.size),)
    ),
    "texture_subdata": Access("_apply_texture_subdata", writes=lambda res, *_: (_whole(res),)),
    "clear_buffer": Access(
        "_apply_clear_buffer", writes=lambda res, off, size, pattern: (_span(res, off, size),)
    ),
    "clear_render_target": Access(
        "_apply_clear_render_target", writes=lambda dst, *_: (_whole(dst.texture),)
    ),
    "clear_depth_stencil": Access(
        "_apply_clear_depth_stencil", writes=lambda dst, *_: (_whole(dst.texture),)
    ),
    "resource_copy_region": Access(
        "_apply_resource_copy_region",
        reads=lambda dst, dl, dbox, src, sl, sbox: (src,),
        writes=lambda dst, dl, dbox, src, sl, sbox: (_box_range(dst, dbox),),
    ),
    "blit": Access("_blit", reads=lambda b: (b.src,), writes=lambda b: (_whole(b.dst),)),
    "clear_texture": Access("_clear_texture", writes=lambda c: (_whole(c.resource),)),
    "generate_mipmap": Access(
        "_generate_mipmap", writes=lambda blits: tuple(_whole(b.dst) for b in blits[:1])
    ),
    "get_query_result_resource": Access(
        "_apply_get_query_result_resource",
        writes=lambda q, wait, rtype, index, res, off: (
            _span(res, off, query_result_bytes(rtype)),
        ),
    ),
    "flush_resource": Access("_apply_flush_resource", reads=lambda res: (res,)),
    "invalidate_resource": Access("_apply_invalidate_resource", writes=lambda res: (_whole(res),)),
    # (new storage: busy from now on, and its valid range is emptied, not filled)
    "replace_buffer_storage": Access(
        "_apply_replace_buffer_storage", reads=lambda dst, src: (dst,)
    ),
}


def _draw_reads(info: Any) -> tuple:
    """A draw's index buffer and an indirect draw's command buffers."""
    index = info.index if info.index_size else None
    out = (index,) if index is not None and hasattr(index, "is_buffer") else ()
    ind = info.indirect
    if ind is not None:
        out += (ind.buffer,)
        if ind.indirect_draw_count is not None:
            out += (ind.indirect_draw_count,)
    return out
