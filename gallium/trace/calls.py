"""The contract as the trace sees it: every recorded method and what it does.

One table, shared by the recorder (which op id a call records), the encoder
(which calls change bound state, create or destroy objects), the replayer
(what to do with each call) and the dump.  Method names are the pinned
``pipe_context`` / ``pipe_screen`` names (DESIGN.md); names starting with
``@`` are the recorder's own records.

Kinds:

* ``create``  -- returns a new object; its arguments are its definition.
* ``destroy`` -- argument 0 is the object destroyed.
* ``state``   -- sets bound state; ``KEYS`` says how it splits into keys.
* ``exec``    -- does work; replayed as recorded.
* ``flush``, ``map``, ``unmap``, ``flush_region``, ``fence`` -- replayed
  with their own rules (see replay.py).
* ``handle``  -- ``create_texture_handle`` / ``create_image_handle``: returns
  a bindless handle, a number the application writes where shaders read
  it; recorded with that number, which the replay must reproduce (replay.py).
* ``handle_delete``, ``resident`` -- argument 0 is a handle the context made;
  ``resident`` calls set its residency (the last one is bound state).
* ``info``    -- asks something (caps, query results); recorded with its
  answer, not replayed.
* ``opaque``  -- takes a Python callable; recorded, cannot be replayed.
* ``end``     -- destroys the context or the screen it is called on.
"""

from __future__ import annotations

from typing import Any

from ..pipe.enums import TextureTarget
from ..pipe.state import Box

CREATE, DESTROY, STATE, EXEC, FLUSH, MAP, UNMAP, FLUSH_REGION, FENCE, INFO, OPAQUE, END = (
    "create",
    "destroy",
    "state",
    "exec",
    "flush",
    "map",
    "unmap",
    "flush_region",
    "fence",
    "info",
    "opaque",
    "end",
)
HANDLE, HANDLE_DELETE, RESIDENT = "handle", "handle_delete", "resident"
PSEUDO = "pseudo"

_CSO = ("blend", "depth_stencil_alpha", "rasterizer", "sampler", "vs", "fs", "gs", "tcs", "tes")
_CSO_ALL = (*_CSO, "compute", "vertex_elements")

CONTEXT_METHODS: dict[str, str] = {
    **{f"create_{n}_state": CREATE for n in _CSO_ALL},
    "create_surface": CREATE,
    "create_sampler_view": CREATE,
    "create_stream_output_target": CREATE,
    "create_query": CREATE,
    **{f"destroy_{n}_state": DESTROY for n in _CSO_ALL},
    "surface_destroy": DESTROY,
    "sampler_view_destroy": DESTROY,
    "stream_output_target_destroy": DESTROY,
    "destroy_query": DESTROY,
    **{f"bind_{n}_state": STATE for n in _CSO_ALL if n != "sampler"},
    "bind_sampler_states": STATE,
    "set_blend_color": STATE,
    "set_stencil_ref": STATE,
    "set_sample_mask": STATE,
    "set_min_samples": STATE,
    "set_clip_state": STATE,
    "set_polygon_stipple": STATE,
    "set_scissor_states": STATE,
    "set_viewport_states": STATE,
    "set_window_rectangles": STATE,
    "set_tess_state": STATE,
    "set_shader_buffers": STATE,
    "set_shader_images": STATE,
    "set_stream_output_targets": STATE,
    "set_global_binding": STATE,
    "set_framebuffer_state": STATE,
    "set_vertex_buffers": STATE,
    "set_constant_buffer": STATE,
    "set_sampler_views": STATE,
    "render_condition": STATE,
    "set_active_query_state": STATE,
    "create_texture_handle": HANDLE,
    "create_image_handle": HANDLE,
    "delete_texture_handle": HANDLE_DELETE,
    "delete_image_handle": HANDLE_DELETE,
    "make_texture_handle_resident": RESIDENT,
    "make_image_handle_resident": RESIDENT,
    "draw_vbo": EXEC,
    "clear": EXEC,
    "clear_render_target": EXEC,
    "clear_depth_stencil": EXEC,
    "clear_buffer": EXEC,
    "clear_texture": EXEC,
    "resource_copy_region": EXEC,
    "blit": EXEC,
    "launch_grid": EXEC,
    "generate_mipmap": EXEC,
    "buffer_subdata": EXEC,
    "texture_subdata": EXEC,
    "begin_query": EXEC,
    "end_query": EXEC,
    "get_query_result_resource": EXEC,
    "texture_barrier": EXEC,
    "memory_barrier": EXEC,
    "flush_resource": EXEC,
    "invalidate_resource": EXEC,
    "emit_string_marker": EXEC,
    "flush": FLUSH,
    "transfer_map": MAP,
    "transfer_unmap": UNMAP,
    "transfer_flush_region": FLUSH_REGION,
    "fence_finish": FENCE,
    "get_query_result": INFO,
    "get_device_reset_status": INFO,
    "is_resource_referenced": INFO,
    "get_sample_position": INFO,
    "set_debug_callback": OPAQUE,
    "set_device_reset_callback": OPAQUE,
    "callback": OPAQUE,
    "destroy": END,
}

SCREEN_METHODS: dict[str, str] = {
    "get_name": INFO,
    "get_vendor": INFO,
    "get_device_vendor": INFO,
    "get_param": INFO,
    "get_paramf": INFO,
    "get_shader_param": INFO,
    "get_compute_param": INFO,
    "is_format_supported": INFO,
    "can_create_resource": INFO,
    "get_timestamp": INFO,
    "get_driver_query_info": INFO,
    "get_driver_query_group_info": INFO,
    "get_disk_shader_cache": INFO,
    "fence_reference": INFO,
    "resource_create": CREATE,
    "context_create": CREATE,
    "resource_destroy": DESTROY,
    "resource_changed": EXEC,
    "screen_fence_finish": FENCE,  # pipe_screen::fence_finish (ctx, fence, timeout)
    "screen_destroy": END,
}

# The recorder's own records.
SCREEN_CREATE = "@screen"  # a screen was wrapped: (name,)
CONTENT = "@content"  # (resource, [level data...] | None): contents at a first touch
RELEASE = "@release"  # (tid,): the application let go of the object (garbage collected)
WRITE = "@write"  # (transfer, data): bytes written through a persistent mapping
ADOPT = "@adopt"  # (template,): a resource made before recording began, first used now

METHODS: tuple[str, ...] = (
    SCREEN_CREATE,
    CONTENT,
    RELEASE,
    WRITE,
    ADOPT,
    *CONTEXT_METHODS,
    *SCREEN_METHODS,
)
OPS: dict[str, int] = {name: i for i, name in enumerate(METHODS)}
KIND: dict[str, str] = {
    **CONTEXT_METHODS,
    **SCREEN_METHODS,
    SCREEN_CREATE: PSEUDO,
    CONTENT: PSEUDO,
    RELEASE: PSEUDO,
    WRITE: PSEUDO,
    ADOPT: CREATE,
}
# the name a screen method has on the screen object
SCREEN_ATTR = {"screen_fence_finish": "fence_finish", "screen_destroy": "destroy"}

# Parameter names of the methods whose arguments the trace interprets.
PARAMS: dict[str, tuple[str, ...]] = {
    "bind_sampler_states": ("shader", "start", "samplers"),
    "set_sampler_views": ("shader", "start", "views"),
    "set_shader_buffers": ("shader", "start", "buffers"),
    "set_shader_images": ("shader", "start", "images"),
    "set_scissor_states": ("start", "scissors"),
    "set_viewport_states": ("start", "viewports"),
    "set_vertex_buffers": ("start_slot", "buffers"),
    "set_constant_buffer": ("shader", "index", "cb"),
}

# How a state call splits into keys of bound state (see encoder.StateModel):
# "slots+shader": (shader, start, [items]) one key per (shader, slot);
# "slots": (start, [items]) one key per slot; "index": (shader, index, value);
# anything else is one key per method.
KEYS: dict[str, str] = {
    "bind_sampler_states": "slots+shader",
    "set_sampler_views": "slots+shader",
    "set_shader_buffers": "slots+shader",
    "set_shader_images": "slots+shader",
    "set_scissor_states": "slots",
    "set_viewport_states": "slots",
    "set_vertex_buffers": "slots",
    "set_constant_buffer": "index",
}


def level_boxes(templ: Any) -> list[Box]:
    """The whole-level box of every level of a resource made from ``templ``.

    Gallium's rules: minified width/height/depth, layers in z for arrays and
    cubes (6 for a cube, array_size for a cube array), a buffer is one level ``width0`` bytes wide.
    """
    target = TextureTarget(int(templ.target))
    w0 = max(1, int(templ.width0))
    if target == TextureTarget.BUFFER:
        return [Box(0, 0, 0, w0, 1, 1)]
    no_height = target in (TextureTarget.TEXTURE_1D, TextureTarget.TEXTURE_1D_ARRAY)
    h0 = 1 if no_height else max(1, int(templ.height0))
    d0 = max(1, int(templ.depth0)) if target == TextureTarget.TEXTURE_3D else 1
    layers = max(1, int(templ.array_size))
    if target == TextureTarget.TEXTURE_CUBE:
        layers = 6
    elif target not in (
        TextureTarget.TEXTURE_1D_ARRAY,
        TextureTarget.TEXTURE_2D_ARRAY,
        TextureTarget.TEXTURE_CUBE_ARRAY,
    ):
        layers = 1
    out = []
    for level in range(int(templ.last_level) + 1):
        w = max(1, w0 >> level)
        h = max(1, h0 >> level)
        z = max(1, d0 >> level) if target == TextureTarget.TEXTURE_3D else layers
        out.append(Box(0, 0, 0, w, h, z))
    return out
