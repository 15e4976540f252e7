"""Fuzz of the context API: random calls with random, mostly wrong, arguments.

Every method of the context is called (``test_every_method_is_fuzzed`` keeps
it so), with junk, hostile sizes (2**31, 2**32, 2**63, -2**31 ...) and
destroyed objects (resources, surfaces, views, queries) among its arguments.
Every call either works or raises one of numpipe's documented errors
(``PipeValueError`` / ``PipeTypeError`` / ``UnsupportedError``, which are also
ValueError / TypeError / NotImplementedError) at the call -- never an
IndexError, AttributeError, OverflowError, a MemoryError, a numpy error or a
hang, on the direct and the threaded context alike.  Nothing bad is ever
recorded: the next flush raises nothing and no device reset is reported; and
afterwards the same context still draws a known frame bit for bit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gallium import pipe
from gallium.pipe.errors import PipeError

TRI = [[-1, -1, 0, 1, 0, 1, 0, 1], [3, -1, 0, 1, 0, 1, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]

# Anything an application might pass by mistake.
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-3, 300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(-3, 300), max_size=5).map(tuple),
    st.lists(st.floats(-2, 2), min_size=0, max_size=5).map(tuple),
    st.just(np.zeros(3, np.float32)),
    st.just(b"\x00" * 7),
)


class Ref:
    """A fuzz-env object named in a generated argument (resolved by _resolve)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"@{self.name}"


def R(*names: str):
    return st.sampled_from([Ref(n) for n in names])


# sizes and offsets a hostile caller passes: refused before anything is allocated
hostile = st.sampled_from([2**31 - 1, 2**31, 2**32, 2**32 + 1, 2**63 - 1, 2**64, -(2**31), -1])
# objects destroyed before the call (resolved by _resolve from the fuzz env)
dead = R("dead_buf", "dead_tex", "dead_surf", "destroyed_surf", "dead_view")
small = st.one_of(st.integers(-4, 70), junk)
size = st.one_of(small, hostile)
thing = st.one_of(junk, dead, R("buf", "rt", "surf", "query"))


def _box(b):
    return pipe.Box(*b)


boxes = st.tuples(*[size] * 6).map(_box)


# Stores into BUFFER[0] and reads INPUT and shared memory: what the compute fuzz binds.
COMPUTE_PROG = """COMP
DCL SV[0], THREAD_ID
DCL BUFFER[0]
DCL MEMORY[0], SHARED
DCL MEMORY[1], INPUT
DCL TEMP[0..1]
IMM[0] UINT32 {4, 0, 0, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: LOAD TEMP[1].x, MEMORY[1], IMM[0].yyyy
  2: STORE MEMORY[0].x, TEMP[0].xxxx, TEMP[1].xxxx
  3: BARRIER
  4: LOAD TEMP[1].x, MEMORY[0], TEMP[0].xxxx
  5: STORE BUFFER[0].x, TEMP[0].xxxx, TEMP[1].xxxx
  6: END
"""
# Loads and stores IMAGE[0] (whatever the fuzz bound there) and adds to it.
IMAGE_PROG = """COMP
DCL SV[0], THREAD_ID
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL TEMP[0..1]
IMM[0] UINT32 {1, 0, 0, 0}
  0: LOAD TEMP[1], IMAGE[0], SV[0], 2D, PIPE_FORMAT_R32_UINT
  1: STORE IMAGE[0], SV[0].yxzw, TEMP[1], 2D, PIPE_FORMAT_R32_UINT
  2: ATOMUADD TEMP[0].x, IMAGE[0], SV[0], IMM[0].xxxx, 2D, PIPE_FORMAT_R32_UINT
  3: END
"""


CALLS = {
    "set_blend_color": st.builds(pipe.BlendColor, color=junk).map(lambda c: ("set_blend_color", c)),
    "set_blend_color_junk": junk.map(lambda c: ("set_blend_color", c)),
    "set_stencil_ref": st.builds(pipe.StencilRef, ref_value=junk).map(
        lambda r: ("set_stencil_ref", r)
    ),
    "set_sample_mask": junk.map(lambda m: ("set_sample_mask", m)),
    "set_viewport_states": st.tuples(
        small, st.lists(st.builds(pipe.ViewportState, scale=junk, translate=junk), max_size=2)
    ).map(lambda a: ("set_viewport_states", *a)),
    "set_scissor_states": st.tuples(
        small,
        st.lists(
            st.builds(pipe.ScissorState, minx=small, miny=small, maxx=small, maxy=small), max_size=2
        ),
    ).map(lambda a: ("set_scissor_states", *a)),
    "set_vertex_buffers": st.tuples(
        small,
        st.lists(
            st.one_of(
                st.none(),
                st.builds(pipe.VertexBuffer, stride=small, buffer_offset=small, buffer=junk),
            ),
            max_size=2,
        ),
    ).map(lambda a: ("set_vertex_buffers", *a)),
    "set_constant_buffer": st.tuples(
        small,
        small,
        st.one_of(st.none(), st.builds(pipe.ConstantBuffer, user_buffer=junk, buffer_size=small)),
    ).map(lambda a: ("set_constant_buffer", *a)),
    "draw_vbo": st.builds(
        pipe.DrawInfo,
        mode=small,
        start=small,
        count=small,
        index_size=small,
        index=junk,
        instance_count=small,
    ).map(lambda d: ("draw_vbo", d)),
    "draw_vbo_junk": junk.map(lambda d: ("draw_vbo", d)),
    "clear": st.tuples(small, junk, small, small).map(lambda a: ("clear", *a)),
    "transfer_map": st.tuples(small, small, st.tuples(*[small] * 6).map(_box)).map(
        lambda a: ("transfer_map", *a)
    ),
    "buffer_subdata": st.tuples(small, small, junk).map(lambda a: ("buffer_subdata", *a)),
    "flush": small.map(lambda f: ("flush", f)),
    "create_blend_state": st.builds(
        pipe.BlendState,
        logicop_enable=small,
        rt=st.lists(
            st.builds(
                pipe.RtBlendState,
                blend_enable=small,
                rgb_func=small,
                rgb_src_factor=small,
                rgb_dst_factor=small,
                alpha_func=small,
                colormask=small,
            ),
            max_size=2,
        ),
    ).map(lambda b: ("create_and_bind", "blend", b)),
    "create_dsa_state": st.builds(
        pipe.DepthStencilAlphaState,
        depth=st.builds(pipe.DepthState, enabled=small, writemask=small, func=small),
        stencil=st.lists(
            st.builds(
                pipe.StencilState,
                enabled=small,
                func=small,
                fail_op=small,
                valuemask=small,
                writemask=small,
            ),
            min_size=0,
            max_size=3,
        ),
        alpha=st.builds(pipe.AlphaState, enabled=small, func=small, ref_value=junk),
    ).map(lambda d: ("create_and_bind", "dsa", d)),
    "create_rasterizer_state": st.builds(
        pipe.RasterizerState,
        cull_face=small,
        front_ccw=small,
        scissor=small,
        fill_front=small,
        clip_plane_enable=small,
        point_size=st.one_of(st.floats(allow_nan=True, allow_infinity=True), junk),
        line_width=st.one_of(st.floats(allow_nan=True, allow_infinity=True), junk),
        point_quad_rasterization=st.booleans(),
        sprite_coord_enable=small,
        point_size_per_vertex=st.booleans(),
    ).map(lambda r: ("create_and_bind", "rasterizer", r)),
    "create_sampler_state": st.builds(
        pipe.SamplerState,
        wrap_s=small,
        min_img_filter=small,
        min_mip_filter=small,
        compare_mode=small,
        lod_bias=junk,
        max_anisotropy=small,
    ).map(lambda r: ("create_and_bind", "sampler", r)),
    "create_sampler_view": st.builds(
        pipe.SamplerViewTemplate,
        format=small,
        target=small,
        swizzle_r=small,
    ).map(lambda t: ("create_sampler_view", t)),
    "create_surface": st.builds(
        pipe.SurfaceTemplate,
        format=small,
        level=small,
        first_layer=small,
        last_layer=small,
    ).map(lambda t: ("create_surface", t)),
    "set_framebuffer_state": st.builds(
        pipe.FramebufferState,
        width=small,
        height=small,
        layers=small,
        samples=small,
        cbufs=st.one_of(junk, st.lists(junk, max_size=2)),
        zsbuf=junk,
    ).map(lambda f: ("set_framebuffer_state", f)),
    "query": st.tuples(small, st.booleans()).map(lambda a: ("query", *a)),
    "resource_copy_region": st.tuples(
        small, small, small, small, small, st.tuples(*[small] * 6).map(_box)
    ).map(lambda a: ("resource_copy_region", *a)),
    "clear_render_target": st.tuples(junk, small, small, small, small).map(
        lambda a: ("clear_render_target", *a)
    ),
    "bind_sampler_states": st.tuples(small, small, st.one_of(junk, st.lists(junk, max_size=2))).map(
        lambda a: ("bind_sampler_states", *a)
    ),
    "set_sampler_views": st.tuples(small, small, st.one_of(junk, st.lists(junk, max_size=2))).map(
        lambda a: ("set_sampler_views", *a)
    ),
    "create_vertex_elements_state": st.one_of(
        junk,
        st.lists(
            st.builds(
                pipe.VertexElement,
                src_offset=small,
                instance_divisor=small,
                vertex_buffer_index=small,
                src_format=small,
            ),
            max_size=3,
        ),
    ).map(lambda e: ("create_vertex_elements_state", e)),
    "set_clip_state": st.builds(
        pipe.ClipState, ucp=st.one_of(junk, st.lists(junk, max_size=9))
    ).map(lambda c: ("set_clip_state", c)),
    "render_condition": st.tuples(junk, small, small).map(lambda a: ("render_condition", *a)),
    "texture_subdata": st.tuples(
        small, small, st.tuples(*[small] * 6).map(_box), junk, small, small
    ).map(lambda a: ("texture_subdata", *a)),
    "transfer_map_buffer": st.tuples(small, st.tuples(*[small] * 6).map(_box)).map(
        lambda a: ("transfer_map_buffer", *a)
    ),
    "set_polygon_stipple": junk.map(lambda p: ("set_polygon_stipple", p)),
    "get_query_result_junk": st.tuples(junk, junk).map(lambda a: ("get_query_result", *a)),
    "create_shader_junk": st.tuples(
        st.sampled_from(["create_vs_state", "create_fs_state", "create_gs_state"]),
        st.one_of(junk, st.builds(pipe.ShaderState, tokens=junk)),
    ).map(lambda a: ("create_shader", *a)),
    "compute_program": st.tuples(
        st.sampled_from([COMPUTE_PROG, IMAGE_PROG, "COMP\n  0: END\n", "FRAG\n  0: END\n", "junk"]),
        small,
        small,
        small,
    ).map(lambda a: ("compute_program", *a)),
    "set_shader_buffers": st.tuples(
        small,
        small,
        st.one_of(
            junk,
            st.lists(
                st.one_of(
                    junk,
                    st.builds(
                        pipe.ShaderBuffer,
                        buffer=st.one_of(junk, st.just("buf")),
                        buffer_offset=small,
                        buffer_size=small,
                    ),
                ),
                max_size=3,
            ),
        ),
    ).map(lambda a: ("set_shader_buffers", *a)),
    "set_shader_images": st.tuples(
        small,
        small,
        st.one_of(
            junk,
            st.lists(
                st.one_of(
                    junk,
                    st.builds(
                        pipe.ImageView,
                        resource=st.one_of(junk, st.sampled_from(["buf", "rt"])),
                        format=st.one_of(small, st.sampled_from(list(pipe.Format))),
                        access=small,
                        level=small,
                        first_layer=small,
                        last_layer=small,
                        buf_offset=small,
                        buf_size=small,
                    ),
                ),
                max_size=3,
            ),
        ),
    ).map(lambda a: ("set_shader_images", *a)),
    # grids stay small: up to 4 x 4 x 4 blocks of up to 4 x 4 x 4 (or junk)
    "launch_grid": st.builds(
        pipe.GridInfo,
        pc=st.one_of(st.just(0), small),
        input=st.one_of(st.none(), junk),
        work_dim=st.one_of(st.just(3), small),
        block=st.one_of(junk, st.tuples(*[st.integers(-1, 4)] * 3)),
        grid=st.one_of(junk, st.tuples(*[st.integers(-1, 4)] * 3)),
        indirect=st.one_of(st.none(), st.none(), junk, st.just("args")),
        indirect_offset=small,
    ).map(lambda g: ("launch_grid", g)),
    "launch_grid_junk": junk.map(lambda g: ("launch_grid", g)),
    "blit": st.builds(
        pipe.BlitInfo,
        dst=st.one_of(
            junk,
            st.builds(
                pipe.BlitImage,
                resource=st.one_of(junk, st.sampled_from(["rt", "buf"])),
                level=small,
                box=st.tuples(*[small] * 6).map(_box),
                format=st.one_of(small, st.sampled_from(list(pipe.Format))),
            ),
        ),
        src=st.builds(
            pipe.BlitImage,
            resource=st.one_of(junk, st.sampled_from(["rt", "buf"])),
            level=small,
            box=st.tuples(*[st.integers(-20, 20)] * 6).map(_box),
            format=small,
        ),
        mask=small,
        filter=small,
        scissor_enable=small,
        scissor=st.one_of(
            junk, st.builds(pipe.ScissorState, minx=small, miny=small, maxx=small, maxy=small)
        ),
        render_condition_enable=small,
        alpha_blend=small,
        window_rectangle_include=small,
        window_rectangles=st.one_of(junk, st.lists(junk, max_size=3)),
    ).map(lambda b: ("blit", b)),
    "clear_texture": st.tuples(small, st.tuples(*[small] * 6).map(_box), junk).map(
        lambda a: ("clear_texture", *a)
    ),
    "generate_mipmap": st.tuples(small, small, small, small, small).map(
        lambda a: ("generate_mipmap", *a)
    ),
    "set_window_rectangles": st.tuples(
        small,
        st.one_of(
            junk,
            st.lists(
                st.one_of(
                    junk,
                    st.builds(pipe.ScissorState, minx=small, miny=small, maxx=small, maxy=small),
                ),
                max_size=9,
            ),
        ),
    ).map(lambda a: ("set_window_rectangles", *a)),
    "set_min_samples": small.map(lambda n: ("set_min_samples", n)),
    "get_sample_position": st.tuples(small, small).map(lambda a: ("get_sample_position", *a)),
    "bind_junk": st.tuples(
        st.sampled_from(
            [
                "bind_blend_state",
                "bind_depth_stencil_alpha_state",
                "bind_rasterizer_state",
                "bind_vs_state",
                "bind_fs_state",
                "bind_vertex_elements_state",
                "bind_compute_state",
                "bind_gs_state",
            ]
        ),
        junk,
    ),
}

# The fixed-function state (issue 25) with valid and invalid values, and
# valid draws of every kind, so that random states are drawn with: a draw
# accepted at the call must never fail later.
_flag = st.one_of(st.booleans(), st.booleans(), junk)
_num = st.one_of(st.floats(-64, 64, width=32), st.floats(allow_nan=True, allow_infinity=True))
CALLS.update(
    {
        "create_rasterizer_state_ff": st.builds(
            pipe.RasterizerState,
            flatshade=_flag,
            light_twoside=_flag,
            clamp_vertex_color=_flag,
            clamp_fragment_color=_flag,
            cull_face=st.one_of(st.integers(0, 3), small),
            fill_front=st.one_of(st.integers(0, 3), small),
            fill_back=st.one_of(st.integers(0, 3), small),
            offset_point=_flag,
            offset_line=_flag,
            offset_tri=_flag,
            offset_units=_num,
            offset_scale=_num,
            offset_clamp=_num,
            offset_units_unscaled=_flag,
            poly_smooth=_flag,
            poly_stipple_enable=_flag,
            point_smooth=_flag,
            point_tri_clip=_flag,
            point_quad_rasterization=st.booleans(),
            point_size_per_vertex=st.booleans(),
            force_persample_interp=_flag,
            multisample=_flag,
            line_smooth=_flag,
            line_stipple_enable=_flag,
            line_stipple_factor=st.one_of(st.integers(0, 255), small),
            line_stipple_pattern=st.one_of(st.integers(0, 0xFFFF), small),
            line_last_pixel=_flag,
            flatshade_first=_flag,
            rasterizer_discard=_flag,
            depth_clip_near=st.one_of(st.none(), _flag),
            depth_clip_far=st.one_of(st.none(), _flag),
            depth_clamp=st.one_of(st.none(), _flag),
            line_width=st.one_of(st.floats(0, 12, width=32), junk),
            point_size=st.one_of(st.floats(0, 12, width=32), junk),
        ).map(lambda r: ("create_and_bind", "rasterizer", r)),
        "create_blend_state_ff": st.builds(
            pipe.BlendState,
            logicop_enable=_flag,
            logicop_func=st.one_of(st.integers(0, 15), small),
            dither=_flag,
            alpha_to_coverage=_flag,
            alpha_to_one=_flag,
            rt=st.lists(
                st.builds(
                    pipe.RtBlendState,
                    blend_enable=st.booleans(),
                    rgb_src_factor=st.integers(1, 0x19),
                    rgb_dst_factor=st.integers(1, 0x19),
                ),
                max_size=2,
            ),
        ).map(lambda b: ("create_and_bind", "blend", b)),
        "create_sampler_state_ff": st.builds(
            pipe.SamplerState,
            min_img_filter=st.integers(0, 1),
            mag_img_filter=st.integers(0, 1),
            min_mip_filter=st.integers(0, 2),
            max_anisotropy=st.one_of(st.integers(0, 16), small),
            seamless_cube_map=_flag,
            max_lod=_num,
        ).map(lambda r: ("create_and_bind", "sampler", r)),
        "set_polygon_stipple_ok": st.lists(
            st.integers(0, 2**32 - 1), min_size=32, max_size=32
        ).map(lambda rows: ("set_polygon_stipple", pipe.PolyStipple(stipple=rows))),
        # bindless handles: the env's live ones, junk, hostile numbers
        "create_texture_handle": st.tuples(
            st.one_of(junk, dead, R("view", "rt")),
            st.one_of(junk, st.builds(pipe.SamplerState, max_anisotropy=small, wrap_s=small)),
        ).map(lambda a: ("create_texture_handle", *a)),
        "make_texture_handle_resident": st.tuples(
            st.one_of(junk, hostile, R("thandle", "ihandle")), st.one_of(st.booleans(), junk)
        ).map(lambda a: ("make_texture_handle_resident", *a)),
        "delete_texture_handle": st.one_of(junk, hostile, R("ihandle")).map(
            lambda h: ("delete_texture_handle", h)
        ),
        "create_image_handle": st.one_of(
            junk,
            st.builds(pipe.ImageView, resource=st.one_of(junk, dead, R("rt", "buf")), format=small),
        ).map(lambda v: ("create_image_handle", v)),
        "make_image_handle_resident": st.tuples(
            st.one_of(junk, hostile, R("ihandle", "thandle")),
            st.one_of(st.integers(0, 3), junk),
            st.one_of(st.booleans(), junk),
        ).map(lambda a: ("make_image_handle_resident", *a)),
        "delete_image_handle": st.one_of(junk, hostile, R("thandle")).map(
            lambda h: ("delete_image_handle", h)
        ),
        "draw_ok": st.builds(
            pipe.DrawInfo,
            mode=st.sampled_from(
                [
                    pipe.Prim.POINTS, pipe.Prim.LINES, pipe.Prim.LINE_STRIP,
                    pipe.Prim.LINE_LOOP, pipe.Prim.TRIANGLES, pipe.Prim.TRIANGLE_STRIP,
                    pipe.Prim.TRIANGLE_FAN, pipe.Prim.QUADS, pipe.Prim.POLYGON,
                ]
            ),
            start=st.just(0),
            count=st.integers(1, 3),
        ).map(lambda d: ("draw_ok", d)),
    }
)  # fmt: skip
CALLS.update(
    {
        "transfer_map_hostile": st.tuples(
            R("buf", "rt", "dead_buf", "dead_tex"),
            small,
            st.sampled_from([1, 2, 1 | 4096, 2 | 256, 2 | 4096, 2 | 1024]),
            boxes,
        ).map(lambda a: ("transfer_map_any", *a)),
        "buffer_subdata_hostile": st.tuples(
            R("buf", "dead_buf", "rt"), small, size, st.just(b"\x01" * 8)
        ).map(lambda a: ("buffer_subdata_any", *a)),
        "clear_buffer": st.tuples(thing, size, size, st.one_of(junk, st.just(b"\x00" * 4))).map(
            lambda a: ("clear_buffer", *a)
        ),
        "texture_subdata_hostile": st.tuples(
            R("rt", "dead_tex", "buf"), small, small, boxes, junk, size, size
        ).map(lambda a: ("texture_subdata_any", *a)),
        "resource_copy_region_any": st.tuples(
            thing, small, size, size, size, thing, small, boxes
        ).map(lambda a: ("resource_copy_region*", *a)),
        "clear_render_target_any": st.tuples(thing, junk, size, size, size, size, junk).map(
            lambda a: ("clear_render_target*", *a)
        ),
        "clear_depth_stencil": st.tuples(
            thing, small, junk, small, size, size, size, size, junk
        ).map(lambda a: ("clear_depth_stencil", *a)),
        "set_vertex_buffers_dead": st.tuples(
            small,
            st.lists(st.builds(pipe.VertexBuffer, stride=size, buffer_offset=size, buffer=thing)),
        ).map(lambda a: ("set_vertex_buffers", *a)),
        "set_constant_buffer_any": st.tuples(
            small,
            small,
            st.builds(pipe.ConstantBuffer, buffer=thing, buffer_offset=size, buffer_size=size),
        ).map(lambda a: ("set_constant_buffer", *a)),
        "set_framebuffer_state_dead": st.builds(
            pipe.FramebufferState,
            width=size,
            height=size,
            cbufs=st.lists(thing, max_size=2),
            zsbuf=thing,
        ).map(lambda f: ("set_framebuffer_state", f)),
        "set_sampler_views_dead": st.tuples(small, small, st.lists(thing, max_size=2)).map(
            lambda a: ("set_sampler_views", *a)
        ),
        "create_sampler_view_any": st.tuples(thing, st.builds(pipe.SamplerViewTemplate)).map(
            lambda a: ("create_sampler_view", *a)
        ),
        "create_surface_any": st.tuples(thing, st.builds(pipe.SurfaceTemplate)).map(
            lambda a: ("create_surface", *a)
        ),
        "set_shader_buffers_dead": st.tuples(
            small,
            small,
            st.lists(
                st.builds(pipe.ShaderBuffer, buffer=thing, buffer_offset=size, buffer_size=size),
                max_size=2,
            ),
        ).map(lambda a: ("set_shader_buffers", *a)),
        "set_scissor_hostile": st.tuples(
            size,
            st.lists(st.builds(pipe.ScissorState, minx=size, miny=size, maxx=size, maxy=size)),
        ).map(lambda a: ("set_scissor_states", *a)),
        "draw_indexed_dead": st.builds(
            pipe.DrawInfo,
            mode=st.just(pipe.Prim.TRIANGLES),
            start=small,
            count=small,
            index_size=st.sampled_from([1, 2, 4]),
            index=thing,
        ).map(lambda d: ("draw_vbo", d)),
        "set_min_samples_hostile": size.map(lambda n: ("set_min_samples", n)),
        "set_window_rectangles_junk": st.tuples(
            junk, st.one_of(junk, st.lists(junk, max_size=2))
        ).map(lambda a: ("set_window_rectangles", *a)),
        "set_tess_state": st.tuples(junk, junk).map(lambda a: ("set_tess_state", *a)),
        "bind_tess": st.tuples(st.sampled_from(["bind_tcs_state", "bind_tes_state"]), thing),
        "set_stream_output_targets": st.tuples(
            st.one_of(junk, st.lists(thing, max_size=2)), st.one_of(junk, st.lists(size))
        ).map(lambda a: ("set_stream_output_targets", *a)),
        "blit_junk": thing.map(lambda b: ("blit*", b)),
        "flush_resource": thing.map(lambda r: ("flush_resource", r)),
        "invalidate_resource": thing.map(lambda r: ("invalidate_resource", r)),
        "emit_string_marker": junk.map(lambda m: ("emit_string_marker", m)),
        "barriers": st.tuples(st.sampled_from(["texture_barrier", "memory_barrier"]), size),
        "set_active_query_state": junk.map(lambda e: ("set_active_query_state", e)),
        "set_debug_callback": junk.map(lambda c: ("set_debug_callback", c)),
        "destroy_views": st.tuples(
            st.sampled_from(["surface_destroy", "sampler_view_destroy"]), thing
        ),
        "destroy_states": st.tuples(
            st.sampled_from(
                [
                    "destroy_blend_state",
                    "destroy_depth_stencil_alpha_state",
                    "destroy_rasterizer_state",
                    "destroy_sampler_state",
                    "destroy_vs_state",
                    "destroy_fs_state",
                    "destroy_gs_state",
                    "destroy_tcs_state",
                    "destroy_tes_state",
                    "destroy_compute_state",
                    "destroy_vertex_elements_state",
                ]
            ),
            thing,
        ),
        "query_any": st.tuples(
            st.sampled_from(["begin_query", "end_query", "destroy_query"]),
            st.one_of(thing, R("dead_query")),
        ),
        "set_global_binding": st.tuples(
            small,
            small,
            st.one_of(junk, st.lists(thing, max_size=2)),
            st.one_of(junk, st.lists(junk, max_size=2)),
        ).map(lambda a: ("set_global_binding", *a)),
        "get_query_result_resource": st.tuples(
            st.one_of(thing, R("dead_query")), junk, small, small, thing, size
        ).map(lambda a: ("get_query_result_resource", *a)),
        "render_condition_dead": st.tuples(R("dead_query", "query"), junk, small).map(
            lambda a: ("render_condition", *a)
        ),
        "transfer_junk": st.tuples(
            st.sampled_from(["transfer_unmap", "transfer_flush_region"]), junk
        ).map(lambda a: (a[0], a[1], pipe.Box()) if a[0] == "transfer_flush_region" else a),
        "callback_junk": junk.map(lambda f: ("callback", f, None)),
        "fence_finish_junk": st.tuples(junk, junk).map(lambda a: ("fence_finish", *a)),
        "is_resource_referenced": thing.map(lambda r: ("is_resource_referenced", r)),
        "create_misc": st.tuples(
            st.sampled_from(["create_query", "create_stream_output_target"]), junk
        ).map(lambda a: (a[0], a[1], 0, 0) if a[0] == "create_stream_output_target" else a),
        "set_clip_hostile": st.builds(
            pipe.ClipState, ucp=st.lists(st.lists(st.one_of(size, junk), max_size=5), max_size=9)
        ).map(lambda c: ("set_clip_state", c)),
        "generate_mipmap_any": st.tuples(thing, junk, small, small, small, small).map(
            lambda a: ("generate_mipmap*", *a)
        ),
        "set_device_reset_callback": junk.map(lambda c: ("set_device_reset_callback", c)),
        "stream_output_target_destroy": thing.map(lambda t: ("stream_output_target_destroy", t)),
        "create_tess": st.tuples(
            st.sampled_from(["create_tcs_state", "create_tes_state"]),
            st.one_of(junk, st.builds(pipe.ShaderState, tokens=junk)),
        ),
        "deletes": st.tuples(
            st.sampled_from(
                [
                    "delete_blend_state",
                    "delete_depth_stencil_alpha_state",
                    "delete_fs_state",
                    "delete_rasterizer_state",
                    "delete_sampler_state",
                    "delete_vertex_elements_state",
                    "delete_vs_state",
                ]
            ),
            thing,
        ),
        "async_calls": st.tuples(
            st.sampled_from(["transfer_map_async", "get_query_result_async"]),
            R("buf", "rt", "dead_buf", "query", "dead_query"),
            small,
            st.sampled_from([1, 2, 1 | 4096]),
            boxes,
        ),
        "set_polygon_stipple_any": st.builds(
            pipe.PolyStipple, stipple=st.one_of(junk, st.lists(size, max_size=33))
        ).map(lambda p: ("set_polygon_stipple", p)),
    }
)

ALLOWED = (PipeError,)
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))  # per test; raise it to dig deeper


class FuzzEnv(dict):
    """The fuzzed context's fixtures (a short repr keeps failure reports readable)."""

    def __repr__(self) -> str:
        return "<fuzz env>"


def _resolve(value, env):
    """Replace the '@name' placeholders of a generated argument by env objects
    (one level into lists and state templates)."""
    if isinstance(value, Ref):
        return env[value.name]
    if isinstance(value, list):
        return [_resolve(v, env) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if isinstance(v, Ref | list):
                setattr(value, f.name, _resolve(v, env))
    return value


def _call(ctx, env, name, *args):
    args = tuple(_resolve(a, env) for a in args)
    if name == "transfer_map_any":
        t = ctx.transfer_map(*args)
        if t[1] is not None:
            ctx.transfer_unmap(t[1])
    elif name == "buffer_subdata_any":
        res, usage, offset, data = args
        ctx.buffer_subdata(res, usage, offset, data)
    elif name == "texture_subdata_any":
        ctx.texture_subdata(*args)
    elif name == "transfer_map_async":
        res, level, usage, box = args
        _, xfer = asyncio.run(ctx.transfer_map_async(res, level, usage, box))
        if xfer is not None:
            ctx.transfer_unmap(xfer)
    elif name == "get_query_result_async":
        asyncio.run(ctx.get_query_result_async(args[0]))
    elif name.endswith("*"):  # the method itself, with all its generated arguments
        getattr(ctx, name[:-1])(*args)
    elif name == "fence_finish":
        ctx.screen.fence_finish(ctx, *args)
        if hasattr(ctx, "fence_finish"):
            ctx.fence_finish(*args)
    elif name == "transfer_map":  # (level, usage, box) on the target
        level, usage, box = args
        t = ctx.transfer_map(env["rt"], level, usage, box)
        ctx.transfer_unmap(t)
    elif name == "buffer_subdata":
        usage, offset, data = args
        ctx.buffer_subdata(env["buf"], usage, offset, data)
    elif name == "draw_ok":  # a valid draw of the fuzz's triangle with whatever state is bound
        set_vertices(ctx, TRI)
        ctx.draw_vbo(*args)
    elif name == "create_and_bind":
        kind, state = args
        if kind == "blend":
            ctx.bind_blend_state(ctx.create_blend_state(state))
        elif kind == "dsa":
            ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(state))
        elif kind == "rasterizer":
            ctx.bind_rasterizer_state(ctx.create_rasterizer_state(state))
        else:
            ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [ctx.create_sampler_state(state)])
    elif name == "create_vertex_elements_state":
        ctx.bind_vertex_elements_state(ctx.create_vertex_elements_state(args[0]))
    elif name == "texture_subdata":
        level, usage, box, data, stride, layer_stride = args
        ctx.texture_subdata(env["rt"], level, usage, box, data, stride, layer_stride)
    elif name == "transfer_map_buffer":
        usage, box = args
        data, t = ctx.transfer_map(env["buf"], 0, usage, box)
        if t is not None:
            ctx.transfer_unmap(t)
    elif name == "create_shader":
        kind, state = args
        getattr(ctx, kind)(state)
    elif name == "create_sampler_view":
        view = ctx.create_sampler_view(env["rt"], args[0])
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    elif name == "compute_program":
        prog, local, private, inp = args
        state = pipe.ComputeState(
            prog=prog, req_local_mem=local, req_private_mem=private, req_input_mem=inp
        )
        ctx.bind_compute_state(ctx.create_compute_state(state))
    elif name == "set_shader_buffers":
        shader, start, buffers = args
        if isinstance(buffers, list):
            buffers = [
                pipe.ShaderBuffer(env["buf"], b.buffer_offset, b.buffer_size)
                if isinstance(b, pipe.ShaderBuffer) and isinstance(b.buffer, str)
                else b
                for b in buffers
            ]
        ctx.set_shader_buffers(shader, start, buffers)
    elif name == "set_shader_images":
        shader, start, images = args
        if isinstance(images, list):
            for v in images:
                if isinstance(v, pipe.ImageView) and isinstance(v.resource, str):
                    v.resource = env[v.resource]
        ctx.set_shader_images(shader, start, images)
    elif name == "launch_grid":
        info = args[0]
        if isinstance(info, pipe.GridInfo) and isinstance(info.indirect, str):
            info.indirect = env["args"]
        ctx.launch_grid(info)
    elif name == "blit":
        info = args[0]
        if isinstance(info, pipe.BlitInfo):
            for img in (info.dst, info.src):
                if (
                    isinstance(img, pipe.BlitImage)
                    and isinstance(img.resource, str)
                    and img.resource in ("rt", "buf")
                ):
                    img.resource = env[img.resource]
        ctx.blit(info)
    elif name == "clear_texture":
        ctx.clear_texture(env["rt"], *args)
    elif name == "generate_mipmap":
        ctx.generate_mipmap(env["rt"], *args)
    elif name == "create_surface":
        ctx.create_surface(env["rt"], args[0])
    elif name == "query":
        qtype, wait = args
        q = ctx.create_query(qtype)
        ctx.begin_query(q)
        ctx.end_query(q)
        ctx.get_query_result(q, wait)
        ctx.destroy_query(q)
    elif name == "resource_copy_region":
        level, x, y, z, src_level, box = args
        ctx.resource_copy_region(env["rt"], level, x, y, z, env["rt"], src_level, box)
    elif name == "clear_render_target":
        color, x, y, w, h = args
        ctx.clear_render_target(env["surf"], color, x, y, w, h)
    else:
        getattr(ctx, name)(*args)


def _good_frame(ctx, env):
    ctx.set_framebuffer_state(env["fb"])
    ctx.set_viewport_states(0, [env["vp"]])
    ctx.set_scissor_states(0, [pipe.ScissorState(0, 0, 16, 16)])
    ctx.set_sample_mask(0xFFFFFFFF)
    ctx.set_window_rectangles(False, [])
    ctx.set_min_samples(1)
    ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [])
    ctx.render_condition(None, False, 0)
    ctx.set_clip_state(pipe.ClipState())
    ctx.bind_gs_state(None)
    ctx.bind_tcs_state(None)
    ctx.bind_tes_state(None)
    ctx.set_stream_output_targets([], [])
    for setter in (
        ctx.bind_blend_state,
        ctx.bind_depth_stencil_alpha_state,
        ctx.bind_rasterizer_state,
    ):
        setter(None)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    ctx.flush().wait(10)
    return read_rgba8(ctx, env["rt"])


@pytest.fixture(scope="module", params=[False, True], ids=["direct", "threaded"])
def fuzz_env(request):
    from conftest import get_screen

    screen = get_screen(2)
    ctx = screen.context_create(threaded=request.param)
    rt, _ = make_target(screen, ctx, 16, 16)
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=64,
            bind=pipe.Bind.VERTEX_BUFFER,
        )
    )
    args = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=16,
            bind=pipe.Bind.COMMAND_ARGS_BUFFER,
        )
    )
    ctx.buffer_subdata(args, pipe.Transfer.WRITE, 0, np.array([2, 1, 3, 1], np.uint32))
    dead_buf = screen.resource_create(
        pipe.ResourceTemplate(target=pipe.TextureTarget.BUFFER, width0=64, bind=buf.bind)
    )
    dead_tex = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=rt.format,
            width0=8,
            height0=8,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    dead_surf = ctx.create_surface(dead_tex, pipe.SurfaceTemplate(format=rt.format))
    destroyed_surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
    ctx.surface_destroy(destroyed_surf)
    dead_view = ctx.create_sampler_view(rt, pipe.SamplerViewTemplate())
    ctx.sampler_view_destroy(dead_view)
    dead_query = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.destroy_query(dead_query)
    screen.resource_destroy(dead_buf)
    screen.resource_destroy(dead_tex)
    env = FuzzEnv(
        {
            "dead_buf": dead_buf,
            "dead_tex": dead_tex,
            "dead_surf": dead_surf,
            "destroyed_surf": destroyed_surf,
            "dead_view": dead_view,
            "dead_query": dead_query,
            "query": ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER),
            "args": args,
            "surf": ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format)),
            "rt": rt,
            "buf": buf,
            "fb": ctx._bound["fb"] if request.param else ctx._fb,
            "vp": pipe.ViewportState(scale=(8, 8, 0.5), translate=(8, 8, 0.5)),
            "view": (view := ctx.create_sampler_view(rt, pipe.SamplerViewTemplate())),
            "thandle": ctx.create_texture_handle(view, pipe.SamplerState()),
            "ihandle": ctx.create_image_handle(pipe.ImageView(resource=rt, format=rt.format)),
        }
    )
    env["expected"] = _good_frame(ctx, env)
    assert (env["expected"] == [0, 255, 0, 255]).all()
    yield ctx, env
    ctx.destroy()


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls=st.lists(st.one_of(*CALLS.values()), min_size=1, max_size=8))
def test_random_calls_raise_only_documented_errors(fuzz_env, calls):
    ctx, env = fuzz_env
    for name, *args in calls:
        try:
            _call(ctx, env, name, *args)
        except ALLOWED:
            pass
    # every bad call raised at the call: nothing bad was recorded, nothing is
    # raised later and no device reset is reported
    ctx.flush().wait(10)
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    assert np.array_equal(_good_frame(ctx, env), env["expected"])


# what the fuzz does not call: it would end the fuzzed context, or it only
# waits (and is called by every example's end)
NOT_FUZZED = {"destroy", "sync", "wait_idle", "ready_async", "is_busy", "get_device_reset_status"}


def test_every_method_is_fuzzed():
    """Every public method of both contexts is called by the fuzz above."""
    from gallium.numpipe.context import NumpipeContext
    from threaded import ThreadedContext

    src = Path(__file__).read_text()
    called = set(re.findall(r'"(\w+)\*?"', src)) | set(re.findall(r"\.(\w+)\(", src))
    for cls in (NumpipeContext, ThreadedContext):
        public = {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))} - {
            "draw_group",
            "query_fence",
            "raise_pending_error",
            "record_error",
            "take_error",
        }
        assert public - called - NOT_FUZZED == set(), cls.__name__


SCREEN_CALLS = st.one_of(
    st.builds(
        pipe.ResourceTemplate,
        target=small,
        format=small,
        width0=small,
        height0=small,
        depth0=small,
        array_size=small,
        last_level=small,
        nr_samples=small,
        bind=small,
        usage=small,
        flags=small,
    ).map(lambda t: ("resource_create", t)),
    junk.map(lambda t: ("resource_create", t)),
    small.map(lambda c: ("get_param", c)),
    small.map(lambda c: ("get_paramf", c)),
    st.tuples(small, small, small, small).map(lambda a: ("is_format_supported", *a)),
    st.tuples(small, small).map(lambda a: ("get_shader_param", *a)),
    junk.map(lambda r: ("resource_destroy", r)),
    st.tuples(junk, small).map(lambda a: ("fence_finish", *a)),
    small.map(lambda i: ("get_driver_query_info", i)),
)


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls=st.lists(SCREEN_CALLS, min_size=1, max_size=6))
def test_random_screen_calls_raise_only_documented_errors(calls):
    import gallium

    screen = gallium.create_screen(num_threads=1)
    try:
        for name, *args in calls:
            try:
                if name == "fence_finish":
                    screen.fence_finish(None, *args)
                else:
                    result = getattr(screen, name)(*args)
                    if name == "resource_create":
                        screen.resource_destroy(result)
            except ALLOWED:
                pass
        # the screen still works
        ctx = screen.context_create(threaded=False)
        rt, _ = make_target(screen, ctx, 4, 4)
        ctx.clear(pipe.Clear.COLOR0, color=(1, 0, 0, 1))
        ctx.flush().wait(10)
        assert (read_rgba8(ctx, rt) == [255, 0, 0, 255]).all()
        ctx.destroy()
    finally:
        screen.destroy()
