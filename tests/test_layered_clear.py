"""Clears of layered surfaces and clear_texture: every layer, in order, checked."""

from __future__ import annotations

import numpy as np
import pytest

import gallium
from gallium import pipe

RGBA8 = pipe.Format.R8G8B8A8_UNORM


def _array(screen, fmt, layers, bind, w=8, h=8, target=pipe.TextureTarget.TEXTURE_2D_ARRAY):
    return screen.resource_create(
        pipe.ResourceTemplate(
            target=target, format=fmt, width0=w, height0=h, array_size=layers, bind=bind
        )
    )


def _layers(ctx, res, n, w=8, h=8):
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, n))
    out = np.array(data)
    ctx.transfer_unmap(xfer)
    return out


def test_clear_covers_every_layer_of_layered_surfaces(screen, ctx):
    rt = _array(screen, RGBA8, 5, pipe.Bind.RENDER_TARGET)
    zs = _array(screen, pipe.Format.Z24_UNORM_S8_UINT, 5, pipe.Bind.DEPTH_STENCIL)
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=RGBA8, first_layer=1, last_layer=3))
    zsurf = ctx.create_surface(
        zs, pipe.SurfaceTemplate(format=zs.format, first_layer=2, last_layer=4)
    )
    ctx.set_framebuffer_state(
        pipe.FramebufferState(width=8, height=8, layers=3, cbufs=[surf], zsbuf=zsurf)
    )
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH | pipe.Clear.STENCIL,
              color=(1.0, 0.5, 0.0, 1.0), depth=0.5, stencil=7)  # fmt: skip
    colours = _layers(ctx, rt, 5)
    assert (colours[0] == 0).all() and (colours[4] == 0).all()
    assert (colours[1:4] == np.array([255, 128, 0, 255], np.uint8)).all()
    words = _layers(ctx, zs, 5).view(np.uint32)[..., 0]
    z = np.uint32(round(0.5 * 0xFFFFFF))
    assert (words[:2] == 0).all()
    assert (words[2:] == (np.uint32(7) << np.uint32(24)) | z).all()
    # a stencil-only clear keeps every layer's depth
    ctx.clear(pipe.Clear.STENCIL, stencil=3)
    words = _layers(ctx, zs, 5).view(np.uint32)[..., 0]
    assert (words[2:] == (np.uint32(3) << np.uint32(24)) | z).all()
    # a scissored clear: the rectangle of every layer
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.STENCIL, color=(0.0, 0.0, 1.0, 1.0), stencil=9,
              scissor_state=pipe.ScissorState(2, 1, 5, 7))  # fmt: skip
    rect = np.zeros((8, 8), bool)
    rect[1:7, 2:5] = True
    colours = _layers(ctx, rt, 5)
    assert (colours[0] == 0).all() and (colours[4] == 0).all()
    assert (colours[1:4][:, rect] == np.array([0, 0, 255, 255], np.uint8)).all()
    assert (colours[1:4][:, ~rect] == np.array([255, 128, 0, 255], np.uint8)).all()
    words = _layers(ctx, zs, 5).view(np.uint32)[..., 0]
    assert (words[:2] == 0).all()
    assert (words[2:][:, rect] == (np.uint32(9) << np.uint32(24)) | z).all()
    assert (words[2:][:, ~rect] == (np.uint32(3) << np.uint32(24)) | z).all()


def test_clear_depth_stencil_and_render_target_cover_every_layer(screen, ctx):
    zs = _array(screen, pipe.Format.Z32_FLOAT, 4, pipe.Bind.DEPTH_STENCIL)
    zsurf = ctx.create_surface(
        zs, pipe.SurfaceTemplate(format=zs.format, first_layer=0, last_layer=2)
    )
    ctx.clear_depth_stencil(zsurf, pipe.Clear.DEPTH, 0.25, 0, 1, 2, 5, 4)
    z = _layers(ctx, zs, 4).view(np.float32)[..., 0]
    expect = np.zeros((8, 8), np.float32)
    expect[2:6, 1:6] = 0.25
    assert all(np.array_equal(z[i], expect) for i in range(3))
    assert (z[3] == 0).all()
    rt = _array(screen, RGBA8, 6, pipe.Bind.RENDER_TARGET, target=pipe.TextureTarget.TEXTURE_CUBE)
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=RGBA8, first_layer=3, last_layer=5))
    ctx.clear_render_target(surf, (0.0, 0.0, 1.0, 1.0), 0, 0, 8, 8)
    faces = _layers(ctx, rt, 6)
    assert (faces[:3] == 0).all() and (faces[3:] == (0, 0, 255, 255)).all()


def test_clear_texture_fills_the_box_in_order(screen):
    ctx = screen.context_create(threaded=True)
    try:
        rt = _array(screen, RGBA8, 3, pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW)
        surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=RGBA8, last_layer=2))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=8, height=8, cbufs=[surf]))
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 1.0, 0.0, 1.0))  # queued, every layer
        syncs = ctx.stats.syncs
        ctx.clear_texture(rt, 0, pipe.Box(2, 3, 1, 4, 2, 2), bytes([9, 8, 7, 6]))
        assert ctx.stats.syncs == syncs
        out = _layers(ctx, rt, 3)
        expect = np.zeros((3, 8, 8, 4), np.uint8)
        expect[...] = (0, 255, 0, 255)
        expect[1:3, 3:5, 2:6] = (9, 8, 7, 6)
        assert np.array_equal(out, expect)
    finally:
        ctx.destroy()


def test_clear_texture_checks_its_arguments(screen, ctx):
    rt = _array(screen, RGBA8, 2, pipe.Bind.SAMPLER_VIEW)
    buf = screen.resource_create(pipe.ResourceTemplate(width0=16, bind=pipe.Bind.VERTEX_BUFFER))
    box = pipe.Box(0, 0, 0, 2, 2, 1)
    cases = [
        ((None, 0, box, b"1234"), gallium.PipeTypeError, "resource"),
        ((buf, 0, box, b"1234"), gallium.PipeValueError, "resource"),
        ((rt, 1, box, b"1234"), gallium.PipeValueError, "level"),
        ((rt, 0, pipe.Box(0, 0, 1, 2, 2, 2), b"1234"), gallium.PipeValueError, "box"),
        ((rt, 0, box, b"123"), gallium.PipeValueError, "data"),
        ((rt, 0, box, None), gallium.PipeValueError, "data"),
        ((rt, 0, box, 5), gallium.PipeTypeError, "data"),
    ]
    for args, exc, words in cases:
        with pytest.raises(exc, match=words):
            ctx.clear_texture(*args)
    ctx.clear_texture(rt, 0, box, np.array([1, 2, 3, 4], np.uint8))
    assert (_layers(ctx, rt, 1, 8, 8)[0, :2, :2] == (1, 2, 3, 4)).all()
