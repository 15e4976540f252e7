"""The contract at the call (issue 21 item 3): one layer of checks, two contexts.

Every bad argument, unsupported feature and destroyed object raises at the
call with the same exception type and message on the direct and the
threaded context; nothing of it is recorded, no device reset is reported,
and the context draws a known frame afterwards.  Before issue 21, 30 of 33
such calls were accepted by the threaded context and came out at the next
flush as a guilty-context reset.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

import gallium
from gallium import pipe
from gallium.pipe.errors import PipeError, PipeTypeError, PipeValueError

ROOT = Path(__file__).resolve().parents[2]
TRI = [[-1, -1, 0, 1, 0, 1, 0, 1], [3, -1, 0, 1, 0, 1, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]
VS_NEEDS_3 = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: ADD OUT[1], IN[1], IN[2]
  2: END
"""
GS_TRIS = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 3
DCL IN[][0], POSITION
DCL OUT[0], POSITION
IMM[0] UINT32 {0, 0, 0, 0}
  0: MOV OUT[0], IN[0][0]
  1: EMIT IMM[0].xxxx
  2: END
"""
COMP_FIXED = """COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 4
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL BUFFER[0]
  0: END
"""
BUF = pipe.TextureTarget.BUFFER
T2D = pipe.TextureTarget.TEXTURE_2D
RGBA8 = pipe.Format.R8G8B8A8_UNORM
W, R = pipe.Transfer.WRITE, pipe.Transfer.READ


class Env:
    """What the bad calls use, made on the context under test."""

    def __init__(self, screen, ctx):
        self.screen, self.ctx = screen, ctx
        self.rt, _ = make_target(screen, ctx, 16, 16)
        self.surf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=RGBA8))
        bind_passthrough(ctx)
        set_vertices(ctx, TRI)
        self.buf = self.buffer(64)
        self.tex = screen.resource_create(
            pipe.ResourceTemplate(
                target=T2D, format=RGBA8, width0=8, height0=8, bind=pipe.Bind.SAMPLER_VIEW
            )
        )
        self.dead = self.buffer(64)  # destroyed below
        self.dead_tex = screen.resource_create(
            pipe.ResourceTemplate(
                target=T2D, format=RGBA8, width0=8, height0=8, bind=pipe.Bind.RENDER_TARGET
            )
        )
        self.dead_surf = ctx.create_surface(self.dead_tex, pipe.SurfaceTemplate(format=RGBA8))
        self.dead_view = ctx.create_sampler_view(self.tex, pipe.SamplerViewTemplate())
        ctx.sampler_view_destroy(self.dead_view)
        self.destroyed_surf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=RGBA8))
        ctx.surface_destroy(self.destroyed_surf)
        screen.resource_destroy(self.dead)
        screen.resource_destroy(self.dead_tex)
        self.vs_needs_3 = ctx.create_vs_state(pipe.ShaderState(tokens=VS_NEEDS_3))
        self.gs = ctx.create_gs_state(pipe.ShaderState(tokens=GS_TRIS))
        self.dead_query = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        ctx.destroy_query(self.dead_query)
        self.query = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        self.fixed = ctx.create_compute_state(pipe.ComputeState(prog=COMP_FIXED))

    def buffer(self, size):
        return self.screen.resource_create(
            pipe.ResourceTemplate(target=BUFFER_T, width0=size, bind=pipe.Bind.VERTEX_BUFFER)
        )


BUFFER_T = BUF


def _span(x, width):
    return pipe.Box(x, 0, 0, width, 1, 1)


def _draw(mode=pipe.Prim.TRIANGLES, **kw):
    kw.setdefault("count", 3)
    return pipe.DrawInfo(mode=mode, **kw)


def _with(bind, cso, restore, call):
    """Bind ``cso``, make ``call``, and put ``restore`` back whatever happens."""

    def run(e):
        getattr(e.ctx, bind)(cso(e))
        try:
            call(e)
        finally:
            getattr(e.ctx, bind)(restore(e))

    run.records_binds = True
    return run


# (name, exception type, start of the message, the call)
BAD_CALLS = [
    # -- resource contents: ranges and destroyed resources (issue 21 item 3) --------
    ("resource_copy_region outside the destination", PipeValueError,
     "dstx/dsty/dstz must lie inside level 0 (64x1x1)",
     lambda e: e.ctx.resource_copy_region(e.buf, 0, 48, 0, 0, e.buf, 0, _span(0, 32))),
    ("resource_copy_region outside the source", PipeValueError,
     "src_box must lie inside level 0 (64x1x1)",
     lambda e: e.ctx.resource_copy_region(e.buf, 0, 0, 0, 0, e.buf, 0, _span(48, 32))),
    ("resource_copy_region from a destroyed resource", PipeValueError,
     "src has been destroyed",
     lambda e: e.ctx.resource_copy_region(e.buf, 0, 0, 0, 0, e.dead, 0, _span(0, 8))),
    ("resource_copy_region buffer into texture", PipeValueError,
     "dst must have the same pixel size as src",
     lambda e: e.ctx.resource_copy_region(e.tex, 0, 0, 0, 0, e.buf, 0, pipe.Box(0, 0, 0, 8, 1, 1))),
    ("clear_buffer past the end", PipeValueError, "offset/size must lie inside level 0",
     lambda e: e.ctx.clear_buffer(e.buf, 32, 64, np.zeros(4, np.uint8))),
    ("clear_buffer of a destroyed buffer", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.clear_buffer(e.dead, 0, 16, np.zeros(4, np.uint8))),
    ("clear_buffer of a texture", PipeTypeError, "resource must be a buffer Resource",
     lambda e: e.ctx.clear_buffer(e.tex, 0, 16, np.zeros(4, np.uint8))),
    ("clear_buffer with a size not a multiple of the value", PipeValueError,
     "size must be a multiple of the clear value size",
     lambda e: e.ctx.clear_buffer(e.buf, 0, 6, np.zeros(4, np.uint8))),
    ("buffer_subdata past the end", PipeValueError, "offset/size must lie inside level 0",
     lambda e: e.ctx.buffer_subdata(e.buf, W, 60, bytes(16))),
    ("buffer_subdata of a destroyed buffer", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.buffer_subdata(e.dead, W, 0, bytes(16))),
    ("texture_subdata outside the level", PipeValueError, "box must lie inside level 0 (8x8x1)",
     lambda e: e.ctx.texture_subdata(e.tex, 0, W, pipe.Box(4, 4, 0, 8, 8, 1), bytes(256))),
    ("texture_subdata with too little data", PipeValueError, "data must hold 1 layers",
     lambda e: e.ctx.texture_subdata(e.tex, 0, W, pipe.Box(0, 0, 0, 8, 8, 1), bytes(255))),
    ("texture_subdata of a level that is not there", PipeValueError, "level must be in 0..0",
     lambda e: e.ctx.texture_subdata(e.tex, 1, W, pipe.Box(0, 0, 0, 1, 1, 1), bytes(4))),
    ("transfer_map of a destroyed resource", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.transfer_map(e.dead, 0, R, pipe.Box(0, 0, 0, 8, 1, 1))),
    ("transfer_map(WRITE) of a destroyed buffer", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.transfer_map(e.dead, 0, W, pipe.Box(0, 0, 0, 8, 1, 1))),
    ("transfer_map READ|DISCARD_RANGE", PipeValueError,
     "usage cannot combine PIPE_TRANSFER_READ with DISCARD_RANGE",
     lambda e: e.ctx.transfer_map(e.buf, 0, R | pipe.Transfer.DISCARD_RANGE,
                                  pipe.Box(0, 0, 0, 8, 1, 1))),
    ("transfer_unmap of something else", PipeTypeError, "transfer must be a transfer",
     lambda e: e.ctx.transfer_unmap("xfer")),
    ("clear_render_target outside the surface", PipeValueError,
     "dstx/dsty/width/height must lie inside level 0 (16x16x1)",
     lambda e: e.ctx.clear_render_target(e.surf, (1, 0, 0, 1), 8, 8, 16, 4)),
    ("clear_render_target of a destroyed surface", PipeValueError, "dst has been destroyed",
     lambda e: e.ctx.clear_render_target(e.destroyed_surf, (1, 0, 0, 1), 0, 0, 4, 4)),
    ("clear_depth_stencil with colour flags", PipeValueError,
     "clear_flags may hold only PIPE_CLEAR_DEPTH and STENCIL",
     lambda e: e.ctx.clear_depth_stencil(e.surf, pipe.Clear.COLOR0, 1.0, 0, 0, 0, 4, 4)),
    ("flush_resource of a destroyed resource", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.flush_resource(e.dead)),
    ("invalidate_resource of a destroyed resource", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.invalidate_resource(e.dead)),
    # -- bindings --------------------------------------------------------------------
    ("set_vertex_buffers with a destroyed buffer", PipeValueError,
     "buffers[0].buffer has been destroyed",
     lambda e: e.ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, e.dead)])),
    ("set_constant_buffer with a destroyed buffer", PipeValueError, "cb.buffer has been destroyed",
     lambda e: e.ctx.set_constant_buffer(pipe.ShaderType.FRAGMENT, 0, pipe.ConstantBuffer(e.dead))),
    ("set_shader_buffers with a destroyed buffer", PipeValueError,
     "buffers[0].buffer has been destroyed",
     lambda e: e.ctx.set_shader_buffers(pipe.ShaderType.COMPUTE, 0,
                                        [pipe.ShaderBuffer(e.dead, 0, 16)])),
    ("set_sampler_views with a destroyed view", PipeValueError, "views[0] has been destroyed",
     lambda e: e.ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [e.dead_view])),
    ("set_framebuffer_state with a surface of a destroyed resource", PipeValueError,
     "state.cbufs[0] is a surface of a destroyed resource",
     lambda e: e.ctx.set_framebuffer_state(pipe.FramebufferState(8, 8, cbufs=[e.dead_surf]))),
    ("set_framebuffer_state with a destroyed surface", PipeValueError,
     "state.cbufs[0] has been destroyed",
     lambda e: e.ctx.set_framebuffer_state(pipe.FramebufferState(8, 8,
                                                                 cbufs=[e.destroyed_surf]))),
    ("create_sampler_view of a destroyed resource", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.create_sampler_view(e.dead_tex, pipe.SamplerViewTemplate())),
    ("create_surface of a destroyed resource", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.create_surface(e.dead_tex, pipe.SurfaceTemplate(format=RGBA8))),
    ("surface_destroy twice", PipeValueError, "surface has been destroyed",
     lambda e: e.ctx.surface_destroy(e.destroyed_surf)),
    ("sampler_view_destroy twice", PipeValueError, "view has been destroyed",
     lambda e: e.ctx.sampler_view_destroy(e.dead_view)),
    ("set_tess_state('x', None)", PipeTypeError, "default_outer_level must be a sequence of 4",
     lambda e: e.ctx.set_tess_state("x", None)),
    ("bind_tcs_state of a non-shader", PipeTypeError,
     "cso must be a tess_ctrl shader CSO or None",
     lambda e: e.ctx.bind_tcs_state(object())),
    ("bind_tes_state of a geometry shader", PipeTypeError,
     "cso must be a tess_eval shader CSO or None",
     lambda e: e.ctx.bind_tes_state(e.gs)),
    ("set_window_rectangles with 9", PipeValueError,
     "rects must hold at most 8 (the cap's count)",
     lambda e: e.ctx.set_window_rectangles(True, [pipe.ScissorState(0, 0, 4, 4)] * 9)),
    ("set_min_samples(64)", PipeValueError, "min_samples must be in [0, 32]",
     lambda e: e.ctx.set_min_samples(64)),
    ("create_sampler_state with anisotropy 17", PipeValueError,
     "state.max_anisotropy must be in [0, 16]",
     lambda e: e.ctx.create_sampler_state(pipe.SamplerState(max_anisotropy=17))),
    ("blit(None)", PipeTypeError, "info must be a pipe.BlitInfo",
     lambda e: e.ctx.blit(None)),
    ("blit from a destroyed texture", PipeValueError, "info.src.resource has been destroyed",
     lambda e: e.ctx.blit(pipe.BlitInfo(
         dst=pipe.BlitImage(e.tex, 0, pipe.Box(0, 0, 0, 4, 4, 1), RGBA8),
         src=pipe.BlitImage(e.dead_tex, 0, pipe.Box(0, 0, 0, 4, 4, 1), RGBA8)))),
    ("clear_texture of a destroyed texture", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.clear_texture(e.dead_tex, 0, pipe.Box(0, 0, 0, 1, 1, 1), bytes(4))),
    ("generate_mipmap of a destroyed texture", PipeValueError, "resource has been destroyed",
     lambda e: e.ctx.generate_mipmap(e.dead_tex, RGBA8, 0, 0, 0, 0)),
    ("set_stream_output_targets", PipeTypeError,
     "targets[0] must be a target from create_stream_output_target or None",
     lambda e: e.ctx.set_stream_output_targets([object()], [0])),
    ("set_stream_output_targets with a misaligned offset", PipeValueError,
     "offsets[0] must be -1 (append) or a multiple of 4",
     lambda e: e.ctx.set_stream_output_targets(
         [e.ctx.create_stream_output_target(e.buf, 0, 16)], [6])),
    ("draw_vbo from stream output with indices", PipeValueError,
     "info.index_size must be 0 for a draw from stream output",
     lambda e: e.ctx.draw_vbo(_draw(index_size=2, index=e.buf,
                                    count_from_stream_output=e.ctx.create_stream_output_target(
                                        e.buf, 0, 16)))),
    ("set_polygon_stipple(None)", PipeTypeError, "stipple must be a pipe.PolyStipple",
     lambda e: e.ctx.set_polygon_stipple(None)),
    ("set_debug_callback(42)", PipeTypeError, "callback must be callable or None",
     lambda e: e.ctx.set_debug_callback(42)),
    ("set_active_query_state('yes')", PipeTypeError, "enable must be a bool",
     lambda e: e.ctx.set_active_query_state("yes")),
    ("texture_barrier(-1)", PipeValueError, "flags must be in [0, 4294967295]",
     lambda e: e.ctx.texture_barrier(-1)),
    ("emit_string_marker(b'x')", PipeTypeError, "string must be a str",
     lambda e: e.ctx.emit_string_marker(b"x")),
    ("callback(None)", PipeTypeError, "fn must be callable",
     lambda e: e.ctx.callback(None)),
    # -- queries ---------------------------------------------------------------------------
    ("end_query without begin_query", PipeValueError, "query is not active",
     lambda e: e.ctx.end_query(e.query)),
    ("begin_query of a destroyed query", PipeValueError, "query has been destroyed",
     lambda e: e.ctx.begin_query(e.dead_query)),
    ("get_query_result before end_query", PipeValueError, "query has not been ended",
     lambda e: e.ctx.get_query_result(e.query, True)),
    ("get_query_result_resource before end_query", PipeValueError, "query has not been ended",
     lambda e: e.ctx.get_query_result_resource(e.query, True, pipe.QueryValueType.U32, 0,
                                               e.buf, 0)),
    ("render_condition on a destroyed query", PipeValueError, "query has been destroyed",
     lambda e: e.ctx.render_condition(e.dead_query, False, 0)),
    # -- draws against the bound state ----------------------------------------------------------
    ("draw with a VS reading IN[2] and two vertex elements", PipeValueError,
     "vertex elements must provide IN[2] of the vertex shader (2 bound)",
     _with("bind_vs_state", lambda e: e.vs_needs_3, lambda e: e.ctx.created_vs,
           lambda e: e.ctx.draw_vbo(_draw()))),
    ("a bad index range", PipeValueError,
     "info.start/count index range [2, 5) must lie inside the index buffer (4 indices)",
     lambda e: e.ctx.draw_vbo(_draw(start=2, index_size=2, index=np.arange(4, dtype=np.uint16)))),
    ("an index range past a resource", PipeValueError,
     "info.start/count index range [30, 33) must lie inside the index buffer (32 indices)",
     lambda e: e.ctx.draw_vbo(_draw(start=30, index_size=2, index=e.buf))),
    ("a destroyed index buffer", PipeValueError, "info.index has been destroyed",
     lambda e: e.ctx.draw_vbo(_draw(index_size=2, index=e.dead))),
    ("an indirect draw past its buffer", PipeValueError,
     "info.indirect commands must lie inside the buffer (64 bytes)",
     lambda e: e.ctx.draw_vbo(_draw(indirect=pipe.DrawIndirectInfo(offset=56, buffer=e.buf)))),
    ("index_size 3", PipeValueError, "info.index_size must be 0, 1, 2 or 4",
     lambda e: e.ctx.draw_vbo(_draw(index_size=3, index=bytes(9)))),
    ("a draw the geometry shader does not take", PipeValueError,
     "info.mode must draw TRIANGLES for the bound geometry shader (TRIANGLES input)",
     _with("bind_gs_state", lambda e: e.gs, lambda e: None,
           lambda e: e.ctx.draw_vbo(_draw(pipe.Prim.POINTS, count=1)))),
    ("TRIANGLE_STRIP_ADJACENCY against a TRIANGLES geometry shader", PipeValueError,
     "info.mode must draw TRIANGLES for the bound geometry shader (TRIANGLES input)",
     _with("bind_gs_state", lambda e: e.gs, lambda e: None,
           lambda e: e.ctx.draw_vbo(_draw(pipe.Prim.TRIANGLE_STRIP_ADJACENCY, count=6)))),
    ("PATCHES", PipeValueError, "info.mode PATCHES needs a tessellation evaluation shader",
     lambda e: e.ctx.draw_vbo(_draw(pipe.Prim.PATCHES, vertices_per_patch=3))),
    ("launch_grid with no compute state", PipeValueError, "compute state must be bound",
     lambda e: e.ctx.launch_grid(pipe.GridInfo(block=(4, 1, 1), grid=(1, 1, 1)))),
    ("launch_grid against the program's fixed block", PipeValueError,
     "info.block must equal the program's CS_FIXED_BLOCK_* size (4, 1, 1)",
     _with("bind_compute_state", lambda e: e.fixed, lambda e: None,
           lambda e: e.ctx.launch_grid(pipe.GridInfo(block=(2, 1, 1), grid=(1, 1, 1))))),
    ("launch_grid with a destroyed indirect buffer", PipeValueError,
     "info.indirect has been destroyed",
     lambda e: e.ctx.launch_grid(pipe.GridInfo(block=(1, 1, 1), indirect=e.dead))),
    ("flush(1.5)", PipeTypeError, "flags must be an integer; got float",
     lambda e: e.ctx.flush(1.5)),
]  # fmt: skip


def _outcome(screen, threaded, name):
    """(exception type, message) of the named bad call on a fresh context, checking
    that it raised at the call, recorded nothing and left no reset behind."""
    ctx = screen.context_create(threaded=threaded)
    try:
        env = Env(screen, ctx)
        ctx.created_vs = ctx._bound["vs"] if threaded else ctx._shaders[pipe.ShaderType.VERTEX]
        ctx.flush().wait(10)
        recorded = ctx.stats.recorded_calls if threaded else None
        call = next(c for n, *_, c in BAD_CALLS if n == name)
        with pytest.raises(PipeError) as info:
            call(env)
        if threaded and not getattr(call, "records_binds", False):
            assert ctx.stats.recorded_calls == recorded  # nothing of it was recorded
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush().wait(10)  # no deferred error either
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        assert (read_rgba8(ctx, env.rt) == [0, 255, 0, 255]).all()
        if threaded:
            assert ctx.stats.driver_errors == 0
        return type(info.value), str(info.value)
    finally:
        ctx.destroy()


@pytest.mark.parametrize("name", [c[0] for c in BAD_CALLS])
def test_a_bad_call_raises_at_the_call_alike_on_both_contexts(screen, name):
    _, error, says, _ = next(c for c in BAD_CALLS if c[0] == name)
    direct = _outcome(screen, False, name)
    threaded = _outcome(screen, True, name)
    assert direct == threaded
    assert direct[0] is error, direct
    assert direct[1].startswith(says), direct[1]


def test_threaded_imports_nothing_from_the_driver():
    """threaded/ wraps the contract (gallium.pipe), not numpipe; the screen and
    the threaded context do not import each other."""
    for path in sorted((ROOT / "threaded").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mod = "." * node.level + (node.module or "")
            elif isinstance(node, ast.Import):
                mod = ",".join(a.name for a in node.names)
            else:
                continue
            assert "numpipe" not in mod and "workers" not in mod, (path.name, mod)
            assert not mod.startswith("gallium") or mod.startswith("gallium.pipe"), mod
    screen_src = (ROOT / "gallium" / "numpipe" / "screen.py").read_text()
    assert "threaded" not in {
        getattr(n, "module", None) or "" for n in ast.walk(ast.parse(screen_src))
    }
    assert "import threaded" not in screen_src and "from threaded" not in screen_src
    # and at run time: importing the frontend loads none of the driver
    code = (
        "import sys, threaded; "
        "bad = [m for m in sys.modules if m.startswith(('gallium.numpipe', 'workers'))]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


def test_support_follows_the_caps(screen):
    s = screen.support
    assert s.max_window_rectangles == screen.get_param(pipe.Cap.MAX_WINDOW_RECTANGLES) == 8
    assert s.sample_shading is bool(screen.get_param(pipe.Cap.SAMPLE_SHADING)) is True
    assert s.multisample is bool(screen.get_param(pipe.Cap.TEXTURE_MULTISAMPLE)) is True
    assert s.max_anisotropy == screen.get_paramf(pipe.CapF.MAX_TEXTURE_ANISOTROPY) == 16.0
    assert s.tessellation is True
    assert screen.get_shader_param(pipe.ShaderType.TESS_CTRL, pipe.ShaderCap.MAX_INSTRUCTIONS) > 0
    assert s.max_texture_size == 16384
    assert s.driver == "numpipe"


def test_the_contract_objects_are_what_drivers_make(screen, ctx):
    rt, _ = make_target(screen, ctx, 4, 4)
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=RGBA8))
    assert isinstance(rt, pipe.Resource) and isinstance(surf, pipe.Surface)
    assert isinstance(ctx.create_blend_state(pipe.BlendState()), pipe.BlendCSO)
    view = ctx.create_sampler_view(rt, pipe.SamplerViewTemplate())
    assert isinstance(view, pipe.SamplerView)
    assert isinstance(ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER), pipe.Query)
    assert rt.level_extent(0) == (4, 4, 1)
    assert rt.template().width0 == 4


def test_create_screen_composes_driver_and_frontend():
    screen = gallium.create_screen(num_threads=0)
    try:
        from threaded import ThreadedContext

        ctx = screen.context_create()
        assert isinstance(ctx, ThreadedContext)
        ctx.destroy()
        info = screen.get_driver_query_info(0)
        assert info.name == "tc-batches"
    finally:
        screen.destroy()
