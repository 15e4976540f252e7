"""Texture units with nothing bound, on the direct and the threaded context.

A sampler view slot with nothing bound reads zero for every texture
operation, as llvmpipe's does (lp_bld_sample_soa.c: format NONE, "all zero
as mandated by d3d10"; sizes too); a program that filters a bound view
with a sampler state slot that has nothing bound is refused at draw_vbo /
launch_grid, naming the slot (it used to fail in the worker, reported as a
device reset)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe
from gallium.pipe.errors import PipeValueError

FRAG = pipe.ShaderType.FRAGMENT
# TEX through SAMP[0] (view and sampler 0), SAMPLE through SVIEW[1] + SAMP[2],
# TXQ of SAMP[0]: their sum, and TXF of SVIEW[1] in alpha
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SAMP[2]
DCL SVIEW[1], 2D, FLOAT
DCL TEMP[0..3]
IMM[0] INT32 {0, 0, 0, 0}
  0: TEX TEMP[0], IN[0], SAMP[0], 2D
  1: SAMPLE TEMP[1], IN[0], SVIEW[1], SAMP[2]
  2: TXQ TEMP[2], IMM[0], SAMP[0], 2D
  3: I2F TEMP[2], TEMP[2]
  4: ADD TEMP[0], TEMP[0], TEMP[1]
  5: ADD TEMP[0], TEMP[0], TEMP[2]
  6: TXF TEMP[3], IMM[0], SAMP[0], 2D
  7: ADD OUT[0], TEMP[0], TEMP[3]
  8: END
"""
TRI = np.float32(
    [[-1, -1, 0, 1, 0.5, 0.5, 0, 1], [3, -1, 0, 1, 0.5, 0.5, 0, 1], [-1, 3, 0, 1, 0.5, 0.5, 0, 1]]
)


def _texture(screen, ctx, rgba):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=2, height0=2, bind=pipe.Bind.SAMPLER_VIEW,
        )
    )  # fmt: skip
    data = np.tile(np.uint8(rgba), (2, 2, 1))
    ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 2, 2, 1), data)
    return ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=res.format))


def _draw(ctx):
    ctx.clear(pipe.Clear.COLOR0, color=(0.5, 0.5, 0.5, 0.5))
    set_vertices(ctx, TRI)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))


def test_unbound_views_read_zero(screen, ctx):
    rt, _ = make_target(screen, ctx, 4, 4)
    bind_passthrough(ctx, fs=FS)
    _draw(ctx)  # nothing bound at all
    assert (read_rgba8(ctx, rt) == 0).all()
    # a sampler state alone changes nothing: the views read zero
    sampler = ctx.create_sampler_state(pipe.SamplerState())
    ctx.bind_sampler_states(FRAG, 0, [sampler, None, sampler])
    _draw(ctx)
    assert (read_rgba8(ctx, rt) == 0).all()
    # SVIEW[1] bound: its texel (0.2, 0.4, 0.6, 0.8) plus zeros for SAMP[0]'s view
    ctx.set_sampler_views(FRAG, 1, [_texture(screen, ctx, [51, 102, 153, 204])])
    _draw(ctx)
    assert (read_rgba8(ctx, rt) == [51, 102, 153, 204]).all()
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET


FS_FILTERS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SAMP[2]
DCL SVIEW[1], 2D, FLOAT
DCL TEMP[0..1]
  0: TEX TEMP[0], IN[0], SAMP[0], 2D
  1: SAMPLE TEMP[1], IN[0], SVIEW[1], SAMP[2]
  2: ADD OUT[0], TEMP[0], TEMP[1]
  3: END
"""


def test_a_filtered_view_without_its_sampler_state_is_refused_at_the_draw(screen, ctx):
    rt, _ = make_target(screen, ctx, 4, 4)
    bind_passthrough(ctx, fs=FS_FILTERS)
    view = _texture(screen, ctx, [10, 20, 30, 40])
    ctx.set_sampler_views(FRAG, 0, [view])
    ctx.clear(pipe.Clear.COLOR0, color=(0.5, 0.5, 0.5, 0.5))
    set_vertices(ctx, TRI)
    draw = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3)
    with pytest.raises(
        PipeValueError, match=r"sampler state 0 of the fragment stage must be bound"
    ):
        ctx.draw_vbo(draw)
    ctx.bind_sampler_states(FRAG, 0, [ctx.create_sampler_state(pipe.SamplerState())])
    ctx.draw_vbo(draw)  # TEX of view 0 plus SAMPLE of the unbound SVIEW[1] (zero)
    ctx.set_sampler_views(FRAG, 1, [view])  # SVIEW[1] bound, SAMP[2] not
    with pytest.raises(PipeValueError, match=r"filters sampler view 1 with SAMP\[2\]"):
        ctx.draw_vbo(draw)
    ctx.set_sampler_views(FRAG, 1, [None])  # unbound again: nothing needed
    ctx.draw_vbo(draw)
    ctx.flush().wait(10)
    # the refused draws lost nothing: the accepted ones are there, nothing reset
    assert (read_rgba8(ctx, rt) == [10, 20, 30, 40]).all()
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET


CS = """COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 1
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL BUFFER[0]
DCL SAMP[0]
DCL TEMP[0]
IMM[0] FLT32 {0.5, 0.5, 0.0, 0.0}
IMM[1] UINT32 {0, 0, 0, 0}
  0: TXL TEMP[0], IMM[0], SAMP[0], 2D
  1: STORE BUFFER[0].xyzw, IMM[1].xxxx, TEMP[0]
  2: END
"""


def test_compute_unbound_views_and_samplers(screen, ctx):
    comp = pipe.ShaderType.COMPUTE
    out = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.R8_UNORM, width0=16,
            bind=pipe.Bind.SHADER_BUFFER,
        )
    )  # fmt: skip
    ctx.buffer_subdata(out, pipe.Transfer.WRITE, 0, np.full(16, 0xFF, np.uint8))
    ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=CS)))
    ctx.set_shader_buffers(comp, 0, [pipe.ShaderBuffer(out, 0, 16)])
    grid = pipe.GridInfo(block=(1, 1, 1), grid=(1, 1, 1))
    ctx.launch_grid(grid)  # no view: zeros stored
    data, xfer = ctx.transfer_map(out, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 16, 1, 1))
    assert not np.array(data).any()
    ctx.transfer_unmap(xfer)
    ctx.set_sampler_views(comp, 0, [_texture(screen, ctx, [255, 0, 0, 255])])
    with pytest.raises(PipeValueError, match="sampler state 0 of the compute stage must be bound"):
        ctx.launch_grid(grid)
    ctx.bind_sampler_states(comp, 0, [ctx.create_sampler_state(pipe.SamplerState())])
    ctx.launch_grid(grid)
    data, xfer = ctx.transfer_map(out, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 16, 1, 1))
    assert np.array_equal(np.array(data).view(np.float32), [1.0, 0.0, 0.0, 1.0])
    ctx.transfer_unmap(xfer)
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
