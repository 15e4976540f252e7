"""pipe_context::blit and generate_mipmap: exact results, ordering, errors.

tests/test_blit_reference.py compares against llvmpipe's own images; these
tests pin single behaviours with values worked out by hand (nearest texel
choice, flips, conversions, masks, scissor, window rectangles, blending,
depth and stencil, layers), the ordering with queued work, and the checks.
"""

from __future__ import annotations

import numpy as np
import pytest

import gallium
from gallium import pipe

RGBA8 = pipe.Format.R8G8B8A8_UNORM
F32 = np.float32


def tex(screen, w, h, fmt=RGBA8, target=pipe.TextureTarget.TEXTURE_2D, depth=1, layers=1,
        levels=1, bind=pipe.Bind.SAMPLER_VIEW | pipe.Bind.RENDER_TARGET):  # fmt: skip
    return screen.resource_create(
        pipe.ResourceTemplate(
            target=target, format=fmt, width0=w, height0=h, depth0=depth, array_size=layers,
            last_level=levels - 1, bind=bind,
        )
    )  # fmt: skip


def zs_tex(screen, w, h, fmt):
    return tex(screen, w, h, fmt, bind=pipe.Bind.DEPTH_STENCIL | pipe.Bind.SAMPLER_VIEW)


def upload(ctx, res, data, level=0, z=0):
    data = np.ascontiguousarray(data)
    d, h, w = (1, *data.shape[:2]) if data.ndim <= 3 else data.shape[:3]
    ctx.texture_subdata(res, level, pipe.Transfer.WRITE, pipe.Box(0, 0, z, w, h, d), data)


def read(ctx, res, level=0, z=0, depth=1):
    lay = res.levels[level]
    data, x = ctx.transfer_map(
        res, level, pipe.Transfer.READ, pipe.Box(0, 0, z, lay.width, lay.height, depth)
    )
    out = np.array(data if depth > 1 else data[0])
    ctx.transfer_unmap(x)
    return out


def blit(ctx, dst, dbox, src, sbox, **kw):
    dst_img = pipe.BlitImage(dst, kw.pop("dst_level", 0), pipe.Box(*dbox), kw.pop("dst_format", 0))
    src_img = pipe.BlitImage(src, kw.pop("src_level", 0), pipe.Box(*sbox), kw.pop("src_format", 0))
    ctx.blit(pipe.BlitInfo(dst=dst_img, src=src_img, **kw))


def ramp(w, h, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (h, w, 4)).astype(np.uint8)


# -- colour -----------------------------------------------------------------------


def test_unscaled_blit_copies_the_box(screen, ctx):
    src, dst = tex(screen, 8, 6), tex(screen, 8, 6)
    data, before = ramp(8, 6, 1), ramp(8, 6, 2)
    upload(ctx, src, data)
    upload(ctx, dst, before)
    blit(ctx, dst, (3, 2, 0, 4, 3, 1), src, (1, 1, 0, 4, 3, 1))
    expect = before.copy()
    expect[2:5, 3:7] = data[1:4, 1:5]
    assert np.array_equal(read(ctx, dst), expect)


def test_negative_source_sizes_flip(screen, ctx):
    src, dst = tex(screen, 5, 4), tex(screen, 5, 4)
    data = ramp(5, 4, 3)
    upload(ctx, src, data)
    blit(ctx, dst, (0, 0, 0, 5, 4, 1), src, (5, 4, 0, -5, -4, 1), filter=pipe.TexFilter.NEAREST)
    assert np.array_equal(read(ctx, dst), data[::-1, ::-1])


def test_nearest_upscale_repeats_texels(screen, ctx):
    # dst pixel centres fall at source texel coordinates i/2 + 0.25 and 0.75
    src, dst = tex(screen, 3, 2), tex(screen, 6, 4)
    data = ramp(3, 2, 4)
    upload(ctx, src, data)
    blit(ctx, dst, (0, 0, 0, 6, 4, 1), src, (0, 0, 0, 3, 2, 1), filter=pipe.TexFilter.NEAREST)
    assert np.array_equal(read(ctx, dst), data.repeat(2, 0).repeat(2, 1))


def test_linear_halving_of_float_texels_averages_pairs(screen, ctx):
    # 2x minification samples exactly between texels: the mean of each 2x2
    fmt = pipe.Format.R32G32B32A32_FLOAT
    src, dst = tex(screen, 4, 4, fmt), tex(screen, 2, 2, fmt)
    data = (np.arange(64, dtype=F32) / 8).reshape(4, 4, 4)
    upload(ctx, src, data)
    blit(ctx, dst, (0, 0, 0, 2, 2, 1), src, (0, 0, 0, 4, 4, 1), filter=pipe.TexFilter.LINEAR)
    out = read(ctx, dst).view(F32).reshape(2, 2, 4)
    expect = data.reshape(2, 2, 2, 2, 4).mean(axis=(1, 3))
    assert np.array_equal(out, expect)


def test_unorm8_to_float_and_back_converts_exactly(screen, ctx):
    f32 = pipe.Format.R32G32B32A32_FLOAT
    a, b, c = tex(screen, 4, 4), tex(screen, 4, 4, f32), tex(screen, 4, 4)
    data = ramp(4, 4, 5)
    upload(ctx, a, data)
    blit(ctx, b, (0, 0, 0, 4, 4, 1), a, (0, 0, 0, 4, 4, 1))
    floats = read(ctx, b).view(F32).reshape(4, 4, 4)
    assert np.array_equal(floats, data.astype(F32) * F32(1 / 255))
    blit(ctx, c, (0, 0, 0, 4, 4, 1), b, (0, 0, 0, 4, 4, 1))
    assert np.array_equal(read(ctx, c), data)


def test_writes_formats_numpipe_does_not_render_to(screen, ctx):
    # R8G8 and B5G6R5 destinations convert as llvmpipe's colour store does:
    # 565 goes through 8-bit UNORM and drops low bits (rint(x * 255) >> 3)
    f32 = pipe.Format.R32G32B32A32_FLOAT
    src = tex(screen, 3, 1, f32)
    values = np.array([[[0.5, 0.25, 1.0, 1.0], [0.1, 0.9, 0.3, 0.0], [1.5, -1, 0.0, 0.5]]], F32)
    upload(ctx, src, values)
    rg = tex(screen, 3, 1, pipe.Format.R8G8_UNORM, bind=pipe.Bind.SAMPLER_VIEW)
    blit(ctx, rg, (0, 0, 0, 3, 1, 1), src, (0, 0, 0, 3, 1, 1))
    assert read(ctx, rg).reshape(3, 2).tolist() == [[128, 64], [26, 230], [255, 0]]
    b565 = tex(screen, 3, 1, pipe.Format.B5G6R5_UNORM, bind=pipe.Bind.SAMPLER_VIEW)
    blit(ctx, b565, (0, 0, 0, 3, 1, 1), src, (0, 0, 0, 3, 1, 1))
    words = read(ctx, b565).view(np.uint16).reshape(3)
    r8, g8, b8 = [[128, 26, 255], [64, 230, 0], [255, 76, 0]]
    assert words.tolist() == [
        (r >> 3) << 11 | (g >> 2) << 5 | b >> 3 for r, g, b in zip(r8, g8, b8)
    ]


def test_mask_keeps_other_channels(screen, ctx):
    src, dst = tex(screen, 4, 4), tex(screen, 4, 4)
    data, before = ramp(4, 4, 6), ramp(4, 4, 7)
    upload(ctx, src, data)
    upload(ctx, dst, before)
    blit(ctx, dst, (0, 0, 0, 4, 4, 1), src, (0, 0, 0, 4, 4, 1), mask=pipe.Mask.R | pipe.Mask.A)
    expect = before.copy()
    expect[..., [0, 3]] = data[..., [0, 3]]
    assert np.array_equal(read(ctx, dst), expect)


def test_scissor_and_window_rectangles_clip_the_destination(screen, ctx):
    src, dst = tex(screen, 8, 8), tex(screen, 8, 8)
    data = ramp(8, 8, 8)
    upload(ctx, src, data)
    upload(ctx, dst, np.zeros((8, 8, 4), np.uint8))
    blit(ctx, dst, (0, 0, 0, 8, 8, 1), src, (0, 0, 0, 8, 8, 1),
         scissor_enable=True, scissor=pipe.ScissorState(1, 2, 7, 6),
         window_rectangles=[pipe.ScissorState(0, 0, 3, 8), pipe.ScissorState(5, 5, 8, 8)],
         window_rectangle_include=False)  # fmt: skip
    inside = np.zeros((8, 8), bool)
    inside[2:6, 1:7] = True  # scissor
    inside[:, 0:3] = False  # excluded rectangles
    inside[5:8, 5:8] = False
    assert np.array_equal(read(ctx, dst), np.where(inside[..., None], data, 0))
    upload(ctx, dst, np.zeros((8, 8, 4), np.uint8))
    blit(ctx, dst, (0, 0, 0, 8, 8, 1), src, (0, 0, 0, 8, 8, 1),
         window_rectangles=[pipe.ScissorState(2, 3, 4, 5)],
         window_rectangle_include=True)  # fmt: skip
    inside = np.zeros((8, 8), bool)
    inside[3:5, 2:4] = True
    assert np.array_equal(read(ctx, dst), np.where(inside[..., None], data, 0))


def _mul8(a, b):
    t = a.astype(np.int64) * b
    return (t + (t >> 8) + 128) >> 8


def test_alpha_blend_is_src_alpha_over(screen, ctx):
    src, dst = tex(screen, 4, 4), tex(screen, 4, 4)
    data, before = ramp(4, 4, 9), ramp(4, 4, 10)
    upload(ctx, src, data)
    upload(ctx, dst, before)
    blit(ctx, dst, (0, 0, 0, 4, 4, 1), src, (0, 0, 0, 4, 4, 1), alpha_blend=True)
    a = data[..., 3:4].astype(np.int64)
    expect = np.minimum(_mul8(data, a) + _mul8(before, 255 - a), 255)
    assert np.array_equal(read(ctx, dst), expect.astype(np.uint8))


# -- depth and stencil ----------------------------------------------------------------


def test_depth_and_stencil_masks(screen, ctx):
    fmt = pipe.Format.Z24_UNORM_S8_UINT
    src, dst = zs_tex(screen, 4, 4, fmt), zs_tex(screen, 4, 4, fmt)
    rng = np.random.default_rng(11)
    a = rng.integers(0, 1 << 32, (4, 4), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, (4, 4), dtype=np.uint64).astype(np.uint32)
    upload(ctx, src, a[..., None].view(np.uint8))
    upload(ctx, dst, b[..., None].view(np.uint8))
    box = (0, 0, 0, 4, 4, 1)
    blit(ctx, dst, box, src, box, mask=pipe.Mask.Z)
    words = read(ctx, dst).view(np.uint32)[..., 0]
    # depth goes through the blitter's float: z * fl32(1 / 0xffffff), then
    # rint(z * 0xffffff) -- not always the same word (as on llvmpipe)
    z = (a & 0xFFFFFF).astype(F32) * F32(1 / 0xFFFFFF)
    z24 = np.rint(z * F32(0xFFFFFF)).astype(np.uint32)
    assert np.count_nonzero(z24 != a & 0xFFFFFF) > 0
    assert np.array_equal(words, z24 | (b & 0xFF000000))
    blit(ctx, dst, box, src, box, mask=pipe.Mask.S)
    assert np.array_equal(read(ctx, dst).view(np.uint32)[..., 0], z24 | (a & 0xFF000000))
    # both, the same format, nearest: resource_copy_region's bytes
    blit(ctx, dst, box, src, box, mask=pipe.Mask.ZS, filter=pipe.TexFilter.NEAREST)
    assert np.array_equal(read(ctx, dst).view(np.uint32)[..., 0], a)


def test_depth_scaled_nearest(screen, ctx):
    fmt = pipe.Format.Z32_FLOAT
    src, dst = zs_tex(screen, 2, 2, fmt), zs_tex(screen, 4, 4, fmt)
    z = np.array([[0.25, 0.5], [0.75, 1.0]], F32)
    upload(ctx, src, z[..., None].view(np.uint8))
    blit(ctx, dst, (0, 0, 0, 4, 4, 1), src, (0, 0, 0, 2, 2, 1), mask=pipe.Mask.Z,
         filter=pipe.TexFilter.NEAREST)  # fmt: skip
    assert np.array_equal(read(ctx, dst).view(F32)[..., 0], z.repeat(2, 0).repeat(2, 1))


# -- layers -----------------------------------------------------------------------------


def test_array_layers_cube_faces_and_3d_slices(screen, ctx):
    arr = tex(screen, 2, 2, target=pipe.TextureTarget.TEXTURE_2D_ARRAY, layers=4)
    cube = tex(screen, 2, 2, target=pipe.TextureTarget.TEXTURE_CUBE, layers=6)
    for z in range(6):
        if z < 4:
            upload(ctx, arr, np.full((2, 2, 4), 10 + z, np.uint8), z=z)
        upload(ctx, cube, np.full((2, 2, 4), 100 + z, np.uint8), z=z)
    # faces 1..3 of the cube into layers 0..2 of the array, layer 3 untouched
    blit(ctx, arr, (0, 0, 0, 2, 2, 3), cube, (0, 0, 1, 2, 2, 3))
    got = read(ctx, arr, depth=4)[:, 0, 0, 0]
    assert got.tolist() == [101, 102, 103, 13]
    # a 3D texture of 4 slices minified to 2: each slice is the mean of a pair
    f32 = pipe.Format.R32G32B32A32_FLOAT
    v = tex(screen, 2, 2, f32, target=pipe.TextureTarget.TEXTURE_3D, depth=4)
    w = tex(screen, 2, 2, f32, target=pipe.TextureTarget.TEXTURE_3D, depth=2)
    for z in range(4):
        upload(ctx, v, np.full((2, 2, 4), float(z), F32), z=z)
    blit(ctx, w, (0, 0, 0, 2, 2, 2), v, (0, 0, 0, 2, 2, 4), filter=pipe.TexFilter.LINEAR)
    got = read(ctx, w, depth=2).view(F32)[:, 0, 0, 0]
    assert got.tolist() == [0.5, 2.5]


def test_1d_textures_and_1d_array_layers(screen, ctx):
    t1 = pipe.TextureTarget.TEXTURE_1D
    src, dst = tex(screen, 4, 1, target=t1), tex(screen, 8, 1, target=t1)
    data = ramp(4, 1, 21)
    upload(ctx, src, data)
    # 4 texels to 8, flipped: each texel twice, last first
    blit(ctx, dst, (0, 0, 0, 8, 1, 1), src, (4, 0, 0, -4, 1, 1), filter=pipe.TexFilter.NEAREST)
    assert np.array_equal(read(ctx, dst), np.repeat(data[:, ::-1], 2, axis=1))
    # layers of 1D arrays through the box's z
    t1a = pipe.TextureTarget.TEXTURE_1D_ARRAY
    a, b = tex(screen, 4, 1, target=t1a, layers=3), tex(screen, 4, 1, target=t1a, layers=3)
    for z in range(3):
        upload(ctx, a, np.full((1, 4, 4), 10 + z, np.uint8), z=z)
        upload(ctx, b, np.zeros((1, 4, 4), np.uint8), z=z)
    blit(ctx, b, (0, 0, 1, 4, 1, 2), a, (0, 0, 0, 4, 1, 2))
    got = read(ctx, b, depth=3)[:, 0, :, 0]
    assert got.tolist() == [[0] * 4, [10] * 4, [11] * 4]


# -- ordering ---------------------------------------------------------------------------


def test_blit_follows_queued_rendering_without_syncing(screen):
    ctx = screen.context_create(threaded=True)
    try:
        src, dst = tex(screen, 16, 16), tex(screen, 16, 16)
        s_src = ctx.create_surface(src, pipe.SurfaceTemplate(format=RGBA8))
        s_dst = ctx.create_surface(dst, pipe.SurfaceTemplate(format=RGBA8))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[s_src]))
        ctx.clear(pipe.Clear.COLOR0, color=(1.0, 0.0, 0.0, 1.0))  # queued in a scene
        syncs = ctx.stats.syncs
        box = (0, 0, 0, 16, 16, 1)
        blit(ctx, dst, box, src, box, filter=pipe.TexFilter.NEAREST)
        ctx.clear_render_target(s_src, (0.0, 1.0, 0.0, 1.0), 0, 0, 16, 16)  # after the blit
        blit(ctx, dst, (0, 0, 0, 8, 16, 1), src, (0, 0, 0, 8, 16, 1))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[s_dst]))
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 1.0, 1.0))  # clears what the blits wrote
        ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[s_src]))
        assert ctx.stats.syncs == syncs  # nothing waited so far
        fence = ctx.flush()
        assert fence.wait(10)
        assert np.array_equal(read(ctx, dst), np.full((16, 16, 4), (0, 0, 255, 255), np.uint8))
        assert np.array_equal(read(ctx, src), np.full((16, 16, 4), (0, 255, 0, 255), np.uint8))
    finally:
        ctx.destroy()


def _draw_rect(ctx, w, h, colour):
    """A draw (queued by the context) covering the whole w x h framebuffer."""
    from helpers import PASS_VS, bind_passthrough

    bind_passthrough(ctx, PASS_VS)
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    v = np.array([[x, y, 0.5, 1, *colour] for x, y in
                  [(-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)]], F32)  # fmt: skip
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))


@pytest.mark.parametrize("threaded", [False, True])
def test_blit_clear_texture_and_mipmaps_follow_queued_draws(screen, threaded):
    """Draws wait in the context's queue until something needs them: a blit,
    clear_texture or generate_mipmap of a resource they use comes after them,
    and a draw recorded after comes after it."""
    ctx = screen.context_create(threaded=threaded)
    try:
        src, dst = tex(screen, 16, 16, levels=2), tex(screen, 16, 16)
        s_src = ctx.create_surface(src, pipe.SurfaceTemplate(format=RGBA8))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[s_src]))
        _draw_rect(ctx, 16, 16, (1.0, 0.0, 0.0, 1.0))
        box = (0, 0, 0, 16, 16, 1)
        blit(ctx, dst, box, src, box, filter=pipe.TexFilter.NEAREST)  # sees the red draw
        assert ctx.generate_mipmap(src, RGBA8, 0, 1, 0, 0)  # level 1 red
        _draw_rect(ctx, 16, 16, (0.0, 1.0, 0.0, 1.0))  # after both
        ctx.clear_texture(src, 0, pipe.Box(0, 0, 0, 8, 8, 1), np.array([0, 0, 255, 255], np.uint8))
        blit(ctx, dst, (0, 0, 0, 4, 4, 1), src, (12, 12, 0, 4, 4, 1))  # green
        ctx.flush().wait()
        red, green, blue = (255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)
        want = np.full((16, 16, 4), red, np.uint8)
        want[:4, :4] = green
        assert np.array_equal(read(ctx, dst), want)
        want = np.full((16, 16, 4), green, np.uint8)
        want[:8, :8] = blue
        assert np.array_equal(read(ctx, src), want)
        assert np.array_equal(read(ctx, src, level=1), np.full((8, 8, 4), red, np.uint8))
    finally:
        ctx.destroy()


def test_blit_result_visible_to_the_next_map(screen, ctx):
    src, dst = tex(screen, 64, 64), tex(screen, 32, 32)
    s_src = ctx.create_surface(src, pipe.SurfaceTemplate(format=RGBA8))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=64, height=64, cbufs=[s_src]))
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.5, 1.0, 1.0))
    blit(ctx, dst, (0, 0, 0, 32, 32, 1), src, (0, 0, 0, 64, 64, 1))
    assert np.array_equal(read(ctx, dst), np.full((32, 32, 4), (0, 128, 255, 255), np.uint8))


def test_overlapping_boxes_in_one_level_read_the_old_texels(screen, ctx):
    res = tex(screen, 8, 1)
    data = ramp(8, 1, 12)
    upload(ctx, res, data)
    # (the scissor keeps the blit off the copy path: the blitter's own texel reads)
    blit(ctx, res, (2, 0, 0, 6, 1, 1), res, (0, 0, 0, 6, 1, 1), filter=pipe.TexFilter.NEAREST,
         scissor_enable=True, scissor=pipe.ScissorState(0, 0, 8, 1))  # fmt: skip
    expect = data.copy()
    expect[:, 2:8] = data[:, 0:6]
    assert np.array_equal(read(ctx, res), expect)


def test_render_condition(screen, ctx):
    src, dst = tex(screen, 4, 4), tex(screen, 4, 4)
    upload(ctx, src, np.full((4, 4, 4), 200, np.uint8))
    upload(ctx, dst, np.zeros((4, 4, 4), np.uint8))
    q = ctx.create_query(pipe.QueryType.OCCLUSION_PREDICATE)
    ctx.begin_query(q)
    ctx.end_query(q)  # nothing drawn: the predicate is false
    ctx.render_condition(q, False, pipe.RenderCond.WAIT)
    box = (0, 0, 0, 4, 4, 1)
    blit(ctx, dst, box, src, box, render_condition_enable=True)
    assert read(ctx, dst).max() == 0
    blit(ctx, dst, box, src, box, render_condition_enable=False)
    assert read(ctx, dst).min() == 200
    ctx.render_condition(None)


# -- errors ------------------------------------------------------------------------------


def _info(dst, src, dbox=(0, 0, 0, 4, 4, 1), sbox=(0, 0, 0, 4, 4, 1), **kw):
    return pipe.BlitInfo(
        dst=pipe.BlitImage(dst, 0, pipe.Box(*dbox)),
        src=pipe.BlitImage(src, 0, pipe.Box(*sbox)),
        **kw,
    )


def test_bad_blits_raise_at_the_call(screen, ctx):
    a, b = tex(screen, 4, 4), tex(screen, 4, 4)
    buf = screen.resource_create(pipe.ResourceTemplate(width0=64, bind=pipe.Bind.VERTEX_BUFFER))
    z = zs_tex(screen, 4, 4, pipe.Format.Z32_FLOAT)
    ui = tex(screen, 4, 4, pipe.Format.R8G8B8A8_UINT, bind=pipe.Bind.SAMPLER_VIEW)
    cases = [
        (None, gallium.PipeTypeError, "info"),
        (pipe.BlitInfo(dst=b, src=a), gallium.PipeTypeError, "info.dst"),
        (_info(buf, a), gallium.PipeValueError, "info.dst.resource"),
        (_info(b, a, dbox=(0, 0, 0, 0, 4, 1)), gallium.PipeValueError, "info.dst.box"),
        (_info(b, a, sbox=(0, 0, 0, 4, 0, 1)), gallium.PipeValueError, "info.src.box"),
        (_info(b, a, dbox=(0, 0, 1, 4, 4, 1)), gallium.PipeValueError, "info.dst.box"),
        (_info(b, a, sbox=(0, 0, 0, 1 << 22, 4, 1)), gallium.PipeValueError, "info.src.box"),
        (_info(b, a, mask=0x40), gallium.PipeValueError, "info.mask"),
        (_info(b, a, filter=7), gallium.PipeValueError, "info.filter"),
        (_info(b, a, scissor_enable=True), gallium.PipeTypeError, "info.scissor"),
        (_info(b, a, scissor_enable=True, scissor=pipe.ScissorState(3, 0, 1, 4)),
         gallium.PipeValueError, "info.scissor"),
        (_info(b, a, window_rectangles=[pipe.ScissorState()] * 9), gallium.PipeValueError,
         "info.window_rectangles"),
        (_info(z, a, mask=pipe.Mask.Z), gallium.UnsupportedError, "colour and depth"),
        (_info(b, ui), gallium.PipeValueError, "integer"),
        (pipe.BlitInfo(dst=pipe.BlitImage(b, 1, pipe.Box(0, 0, 0, 1, 1, 1)),
                       src=pipe.BlitImage(a, 0, pipe.Box(0, 0, 0, 1, 1, 1))),
         gallium.PipeValueError, "info.dst.level"),
        (pipe.BlitInfo(dst=pipe.BlitImage(b, 0, pipe.Box(0, 0, 0, 1, 1, 1), pipe.Format.R16_UNORM),
                       src=pipe.BlitImage(a, 0, pipe.Box(0, 0, 0, 1, 1, 1))),
         gallium.PipeValueError, "info.dst.format"),
    ]  # fmt: skip
    for info, exc, words in cases:
        with pytest.raises(exc, match=words):
            ctx.blit(info)
    # the context is unharmed: a good blit still works
    upload(ctx, a, np.full((4, 4, 4), 7, np.uint8))
    ctx.blit(_info(b, a))
    assert read(ctx, b).min() == 7


# -- generate_mipmap ---------------------------------------------------------------------


def test_generate_mipmap_fills_every_level(screen, ctx):
    f32 = pipe.Format.R32G32B32A32_FLOAT
    res = tex(screen, 4, 4, f32, levels=3)
    data = (np.arange(64, dtype=F32) / 4).reshape(4, 4, 4)
    upload(ctx, res, data)
    assert ctx.generate_mipmap(res, f32, 0, 2, 0, 0) is True
    l1 = read(ctx, res, level=1).view(F32).reshape(2, 2, 4)
    assert np.array_equal(l1, data.reshape(2, 2, 2, 2, 4).mean(axis=(1, 3)))
    l2 = read(ctx, res, level=2).view(F32).reshape(1, 1, 4)
    assert np.array_equal(l2[0, 0], l1.mean(axis=(0, 1)))


def test_generate_mipmap_answers_without_a_sync(screen):
    ctx = screen.context_create(threaded=True)
    try:
        res = tex(screen, 8, 8, levels=4)
        ints = tex(screen, 8, 8, pipe.Format.R8G8B8A8_UINT, levels=2, bind=pipe.Bind.SAMPLER_VIEW)
        stencil = tex(screen, 8, 8, pipe.Format.S8_UINT, levels=2, bind=pipe.Bind.SAMPLER_VIEW)
        syncs = ctx.stats.syncs
        assert ctx.generate_mipmap(res, RGBA8, 0, 3, 0, 0) is True
        assert ctx.generate_mipmap(ints, ints.format, 0, 1, 0, 0) is False  # not filterable
        assert ctx.generate_mipmap(stencil, stencil.format, 0, 1, 0, 0) is False
        assert ctx.stats.syncs == syncs
        with pytest.raises(gallium.PipeValueError, match="last_level"):
            ctx.generate_mipmap(res, RGBA8, 2, 1, 0, 0)
        with pytest.raises(gallium.PipeValueError, match="first_layer"):
            ctx.generate_mipmap(res, RGBA8, 0, 3, 1, 1)
        with pytest.raises(gallium.PipeValueError, match="format"):
            ctx.generate_mipmap(res, pipe.Format.R16_UNORM, 0, 3, 0, 0)
    finally:
        ctx.destroy()
