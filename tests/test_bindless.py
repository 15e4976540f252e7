"""Bindless handles (context.rst "Bindless", tgsi.rst's bindless opcodes).

llvmpipe 22.3 has no bindless (PIPE_CAP_BINDLESS_TEXTURE 0), so these follow
the spec: ``create_texture_handle`` / ``create_image_handle`` make 64-bit
handles, ``make_*_handle_resident`` lets the draws and grids recorded while
resident use them, and a shader reads a handle from any register's .xy where
a SAMP operand (the TEX family) or an image (LOAD / STORE / ATOM* / RESQ,
compute programs) goes.  SAMP2HND / IMG2HND make handles for bound slots.  A
handle nothing answers (not resident, deleted, never made) samples zeros and
its image reads 0 and takes no stores.  Exact values on both contexts.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS, make_target, read_rgba8, set_vertices

from gallium import pipe
from gallium.pipe.errors import PipeTypeError, PipeValueError, UnsupportedError

FS = pipe.ShaderType.FRAGMENT
CS = pipe.ShaderType.COMPUTE
# 2x2 texels: red, green / blue, white (row 0 first)
TEXELS = np.array([[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255] * 4]], np.uint8)
# a quad over the 4x4 target with texture coordinates (0, 0)..(1, 1)
QUAD = [
    [-1, -1, 0, 1, 0, 0, 0, 0], [1, -1, 0, 1, 1, 0, 0, 0], [1, 1, 0, 1, 1, 1, 0, 0],
    [-1, -1, 0, 1, 0, 0, 0, 0], [1, 1, 0, 1, 1, 1, 0, 0], [-1, 1, 0, 1, 0, 1, 0, 0],
]  # fmt: skip
# the handle in CONST[0].xy
FS_HANDLE = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL CONST[0]
  0: TEX OUT[0], IN[0], CONST[0], 2D
  1: END
"""
FS_BOUND = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
  0: TEX OUT[0], IN[0], SAMP[0], 2D
  1: END
"""
FS_SAMP2HND = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL TEMP[0]
  0: SAMP2HND TEMP[0], SAMP[0], 2D
  1: TEX OUT[0], IN[0], TEMP[0], 2D
  2: END
"""
# two handles: CONST[0].xy left of s = 0.5, CONST[0].zw right of it
FS_TWO = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL CONST[0]
DCL TEMP[0..1]
IMM[0] FLT32 {0.5, 0.0, 0.0, 0.0}
  0: FSLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
  1: UCMP TEMP[1], TEMP[0].xxxx, CONST[0].xyxy, CONST[0].zwzw
  2: TEX OUT[0], IN[0], TEMP[1], 2D
  3: END
"""
NEAREST = pipe.SamplerState(wrap_s=pipe.TexWrap.CLAMP_TO_EDGE, wrap_t=pipe.TexWrap.CLAMP_TO_EDGE)


def _texture(screen, ctx, texels=TEXELS):
    h, w = texels.shape[:2]
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=w, height0=h, bind=pipe.Bind.SAMPLER_VIEW | pipe.Bind.SHADER_IMAGE,
        )
    )  # fmt: skip
    ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, w, h, 1), texels)
    return res


def _view(ctx, res):
    return ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=res.format))


def _handles(ctx, stage, *handles):
    words = np.array([[h & 0xFFFFFFFF, h >> 32] for h in handles], np.uint32).reshape(-1)
    words = np.pad(words, (0, 4 - words.size % 4 if words.size % 4 else 0))
    ctx.set_constant_buffer(stage, 0, pipe.ConstantBuffer(user_buffer=words))


def _draw(screen, ctx, fs):
    rt, _ = make_target(screen, ctx, 4, 4)
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * i, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for i in range(2)]
        )
    )
    set_vertices(ctx, QUAD)
    ctx.clear(pipe.Clear.COLOR0, color=(0.5, 0.5, 0.5, 0.5))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    return read_rgba8(ctx, rt)


def _expected():
    """The texture nearest-sampled over the 4x4 quad: each texel 2x2 pixels."""
    return np.repeat(np.repeat(TEXELS, 2, axis=0), 2, axis=1)


def test_caps(screen):
    assert screen.get_param(pipe.Cap.BINDLESS_TEXTURE) == 1
    assert screen.support.bindless


def test_a_resident_texture_handle_samples_as_a_bound_view(ctx, screen):
    res = _texture(screen, ctx)
    handle = ctx.create_texture_handle(_view(ctx, res), NEAREST)
    assert handle >> 32 == 1
    _handles(ctx, FS, handle)
    zero = np.zeros((4, 4, 4), np.uint8)
    assert (_draw(screen, ctx, FS_HANDLE) == zero).all()  # not resident: zeros
    ctx.make_texture_handle_resident(handle, True)
    assert (_draw(screen, ctx, FS_HANDLE) == _expected()).all()
    # the same as the view bound to unit 0, and as SAMP2HND's handle of that unit
    ctx.set_sampler_views(FS, 0, [_view(ctx, res)])
    ctx.bind_sampler_states(FS, 0, [ctx.create_sampler_state(NEAREST)])
    assert (_draw(screen, ctx, FS_BOUND) == _expected()).all()
    assert (_draw(screen, ctx, FS_SAMP2HND) == _expected()).all()
    ctx.make_texture_handle_resident(handle, False)
    assert (_draw(screen, ctx, FS_HANDLE) == zero).all()
    ctx.make_texture_handle_resident(handle, True)
    ctx.delete_texture_handle(handle)  # (deleting a resident handle ends its residency)
    assert (_draw(screen, ctx, FS_HANDLE) == zero).all()


def test_handles_per_lane(ctx, screen):
    """Two resident handles chosen per pixel: the left half samples one
    texture, the right half the other (its texels inverted)."""
    a = ctx.create_texture_handle(_view(ctx, _texture(screen, ctx)), NEAREST)
    b = ctx.create_texture_handle(_view(ctx, _texture(screen, ctx, 255 - TEXELS)), NEAREST)
    for h in (a, b):
        ctx.make_texture_handle_resident(h, True)
    _handles(ctx, FS, a, b)
    got = _draw(screen, ctx, FS_TWO)
    want = _expected()
    assert (got[:, :2] == want[:, :2]).all() and (got[:, 2:] == 255 - want[:, 2:]).all()


def test_queued_draws_keep_the_residency_of_their_call(ctx, screen):
    """A draw recorded while the handle is resident samples it even when it
    is made non-resident before the draw runs."""
    handle = ctx.create_texture_handle(_view(ctx, _texture(screen, ctx)), NEAREST)
    _handles(ctx, FS, handle)
    rt, _ = make_target(screen, ctx, 4, 4)
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_HANDLE)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * i, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for i in range(2)]
        )
    )
    set_vertices(ctx, QUAD)
    ctx.make_texture_handle_resident(handle, True)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    ctx.make_texture_handle_resident(handle, False)
    assert (read_rgba8(ctx, rt) == _expected()).all()


# Each invocation t of 4: loads texel (t, 0) through the handle in CONST[0].xy
# (an R32_UINT image; a LOAD of CONST itself reads the constant buffer, so the
# handle goes through a TEMP), stores it plus 100 through IMG2HND's handle of
# IMAGE[0] at (t, 0), and 7 through the handle in CONST[0].zw at (t, 1).
COMP = """COMP
DCL SV[0], THREAD_ID
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL CONST[0]
DCL TEMP[0..4]
IMM[0] UINT32 {100, 7, 1, 0}
  0: MOV TEMP[0], IMM[0].wwww
  1: MOV TEMP[0].x, SV[0].xxxx
  2: MOV TEMP[3], CONST[0]
  3: LOAD TEMP[1], TEMP[3], TEMP[0], 2D, PIPE_FORMAT_R32_UINT
  4: UADD TEMP[1], TEMP[1], IMM[0].xxxx
  5: IMG2HND TEMP[2], IMAGE[0]
  6: STORE TEMP[2], TEMP[0], TEMP[1], 2D, PIPE_FORMAT_R32_UINT
  7: MOV TEMP[4].xy, CONST[0].zwzw
  8: MOV TEMP[0].y, IMM[0].zzzz
  9: STORE TEMP[4], TEMP[0], IMM[0].yyyy, 2D, PIPE_FORMAT_R32_UINT
 10: END
"""


def _uint_image(screen, ctx, values):
    values = np.asarray(values, np.uint32)
    h, w = values.shape
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R32_UINT, width0=w,
            height0=h, bind=pipe.Bind.SHADER_IMAGE,
        )
    )  # fmt: skip
    ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, w, h, 1), values)
    return res


def _words(ctx, res):
    box = pipe.Box(0, 0, 0, res.width0, res.height0, 1)
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, box)
    out = np.array(data[0]).view(np.uint32).reshape(res.height0, res.width0).copy()
    ctx.transfer_unmap(xfer)
    return out


def test_image_handles_in_compute(ctx, screen):
    src = _uint_image(screen, ctx, [[1, 2, 3, 4], [0, 0, 0, 0]])
    dst = _uint_image(screen, ctx, np.zeros((2, 4)))
    side = _uint_image(screen, ctx, np.zeros((2, 4)))
    r32 = pipe.Format.R32_UINT
    h_src = ctx.create_image_handle(pipe.ImageView(resource=src, format=r32))
    h_side = ctx.create_image_handle(pipe.ImageView(resource=side, format=r32))
    ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=COMP)))
    ctx.set_shader_images(CS, 0, [pipe.ImageView(resource=dst, format=r32)])
    _handles(ctx, CS, h_src, h_side)
    ctx.launch_grid(pipe.GridInfo(block=(4, 1, 1), grid=(1, 1, 1)))
    # nothing resident: loads read 0, the handle's stores are dropped
    assert _words(ctx, dst).tolist() == [[100] * 4, [0] * 4]
    assert not _words(ctx, side).any()
    for h in (h_src, h_side):
        ctx.make_image_handle_resident(h, pipe.ImageAccess.READ_WRITE, True)
    ctx.launch_grid(pipe.GridInfo(block=(4, 1, 1), grid=(1, 1, 1)))
    assert _words(ctx, dst).tolist() == [[101, 102, 103, 104], [0] * 4]
    assert _words(ctx, side).tolist() == [[0] * 4, [7] * 4]
    ctx.delete_image_handle(h_side)
    ctx.delete_image_handle(h_src)


def test_handle_arguments_are_checked_at_the_call(ctx, screen):
    res = _texture(screen, ctx)
    view = _view(ctx, res)
    with pytest.raises(PipeValueError, match="live texture handle"):
        ctx.make_texture_handle_resident(12345, True)
    h = ctx.create_texture_handle(view, NEAREST)
    with pytest.raises(PipeValueError, match="live image handle"):
        ctx.make_image_handle_resident(h, 1, True)  # (a texture handle)
    ctx.delete_texture_handle(h)
    with pytest.raises(PipeValueError, match="live texture handle"):
        ctx.delete_texture_handle(h)
    with pytest.raises(PipeTypeError, match="view"):
        ctx.create_texture_handle(res, NEAREST)
    with pytest.raises(PipeValueError, match="max_anisotropy"):
        ctx.create_texture_handle(view, pipe.SamplerState(max_anisotropy=17))
    with pytest.raises(PipeTypeError, match="image"):
        ctx.create_image_handle(None)
    img = ctx.create_image_handle(pipe.ImageView(resource=res, format=res.format))
    with pytest.raises(PipeValueError, match="access"):
        ctx.make_image_handle_resident(img, 4, True)
    other = screen.context_create()
    try:
        with pytest.raises(PipeValueError, match="of this context"):
            other.make_image_handle_resident(img, 1, True)
    finally:
        other.destroy()
    ctx.sampler_view_destroy(view)
    with pytest.raises(PipeValueError, match="destroyed"):
        ctx.create_texture_handle(view, NEAREST)


def test_bindless_images_in_graphics_shaders_are_refused(ctx):
    fs = """FRAG
DCL OUT[0], COLOR
DCL CONST[0]
DCL TEMP[0..1]
  0: MOV TEMP[0], CONST[0]
  1: LOAD TEMP[1], TEMP[0], TEMP[0], 2D, PIPE_FORMAT_R32_UINT
  2: MOV OUT[0], TEMP[1]
  3: END
"""
    with pytest.raises(UnsupportedError, match="images"):
        ctx.create_fs_state(pipe.ShaderState(tokens=fs))
