"""pipe_context basics with exact expected values, on the direct and the threaded context.

Depth compare functions, transfers (READ and WRITE on buffers and 2D textures),
index buffers of every size from resources and user arrays, culling and front
face, scissor, blending off and standard alpha blending, buffer_subdata.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

import gallium
from gallium import pipe

W = H = 16
RED = (1.0, 0.0, 0.0, 1.0)
GREEN = (0.0, 1.0, 0.0, 1.0)


def quad(z: float, color, x0=-1.0, y0=-1.0, x1=1.0, y1=1.0) -> np.ndarray:
    """Two triangles (counter-clockwise in NDC) covering [x0, x1] x [y0, y1] at depth z."""
    pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
    return np.array([[x, y, z, 1, *color] for x, y in pts], np.float32)


def draw(ctx, verts, **kw):
    set_vertices(ctx, verts)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts), **kw))


def read_depth32(ctx, zs) -> np.ndarray:
    data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
    out = np.array(data[0]).view(np.float32)[..., 0]
    ctx.transfer_unmap(xfer)
    return out


# -- depth ---------------------------------------------------------------------------


F = pipe.CompareFunc
PASSES = {  # fragment depth vs stored depth 0.5: (at 0.25, at 0.5, at 0.75)
    F.NEVER: (False, False, False),
    F.LESS: (True, False, False),
    F.EQUAL: (False, True, False),
    F.LEQUAL: (True, True, False),
    F.GREATER: (False, False, True),
    F.NOTEQUAL: (True, False, True),
    F.GEQUAL: (False, True, True),
    F.ALWAYS: (True, True, True),
}


@pytest.mark.parametrize("func", list(PASSES), ids=lambda f: f.name)
def test_every_depth_compare_function(screen, ctx, func):
    rt, zs = make_target(screen, ctx, W, H, zs_format=pipe.Format.Z32_FLOAT)
    bind_passthrough(ctx)
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=func)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    for i, window_z in enumerate((0.25, 0.5, 0.75)):
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, 0, 0, 0), depth=0.5)
        draw(ctx, quad(2 * window_z - 1, GREEN))  # NDC z -> window z = (z + 1) / 2
        img = read_rgba8(ctx, rt)
        depth = read_depth32(ctx, zs)
        expect_pass = PASSES[func][i]
        want_rgba = [0, 255, 0, 255] if expect_pass else [0, 0, 0, 0]
        assert (img == want_rgba).all(), (func.name, window_z)
        assert (depth == np.float32(window_z if expect_pass else 0.5)).all(), (func.name, window_z)


def test_depth_writemask_off_tests_but_keeps_the_buffer(screen, ctx):
    rt, zs = make_target(screen, ctx, W, H, zs_format=pipe.Format.Z32_FLOAT)
    bind_passthrough(ctx)
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=False, func=F.LESS)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, 0, 0, 0), depth=0.5)
    draw(ctx, quad(-0.5, GREEN))  # window z 0.25: passes
    assert (read_rgba8(ctx, rt) == [0, 255, 0, 255]).all()
    assert (read_depth32(ctx, zs) == np.float32(0.5)).all()


def test_clears_store_each_depth_exactly(screen, ctx):
    """Every clear's depth reaches the buffer bit for bit, whatever the clears
    before it (the driver keeps the last words it computed): -0.0 and 0.0 are
    different words in a float buffer, and a UNORM24 buffer gets rint(z * (2**24 - 1))."""
    for fmt, depths, words in (
        (
            pipe.Format.Z32_FLOAT,
            (-0.0, 0.0, -0.0, 0.5, 1, 0.5),
            (0x80000000, 0, 0x80000000, 0x3F000000, 0x3F800000, 0x3F000000),
        ),
        (
            pipe.Format.Z24X8_UNORM,
            (0.5, 0.25, 1.0, 0.5, 0.0),
            (0x800000, 0x400000, 0xFFFFFF, 0x800000, 0),
        ),
    ):
        _, zs = make_target(screen, ctx, W, H, zs_format=fmt)
        for depth, word in zip(depths, words, strict=True):
            ctx.clear(pipe.Clear.DEPTH, depth=depth)
            ctx.flush()
            got = read_depth32(ctx, zs).view(np.uint32)
            if fmt == pipe.Format.Z24X8_UNORM:
                got = got & 0xFFFFFF
            assert (got == word).all(), (fmt.name, depth, hex(int(got[0, 0])))


# -- transfers -------------------------------------------------------------------------


def test_texture_write_then_read_is_byte_exact(screen, ctx):
    tex = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=13,
            height0=7,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
    )
    pattern = (np.arange(5 * 4 * 4, dtype=np.uint32) * 2654435761 % 251).astype(np.uint8)
    box = pipe.Box(3, 2, 0, 5, 4, 1)
    data, xfer = ctx.transfer_map(tex, 0, pipe.Transfer.WRITE, box)
    assert data.shape[:3] == (1, 4, 5)
    data[0] = pattern.reshape(4, 5, 4)
    ctx.transfer_unmap(xfer)
    whole, xfer = ctx.transfer_map(tex, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 13, 7, 1))
    got = np.array(whole[0])
    ctx.transfer_unmap(xfer)
    assert np.array_equal(got[2:6, 3:8], pattern.reshape(4, 5, 4))
    outside = np.ones(got.shape[:2], bool)
    outside[2:6, 3:8] = False
    assert (got[outside] == 0).all()  # a new texture reads as zeros, untouched around the box


def test_buffer_write_then_read_is_byte_exact(screen, ctx):
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, width0=64, bind=pipe.Bind.VERTEX_BUFFER
        )
    )
    data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.WRITE, pipe.Box(10, 0, 0, 20, 1, 1))
    assert data.shape == (20,)
    data[:] = np.arange(20, dtype=np.uint8) + 100
    ctx.transfer_unmap(xfer)
    ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 40, bytes([7, 8, 9]))
    whole, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 64, 1, 1))
    got = np.array(whole)
    ctx.transfer_unmap(xfer)
    want = np.zeros(64, np.uint8)
    want[10:30] = np.arange(20) + 100
    want[40:43] = [7, 8, 9]
    assert np.array_equal(got, want)


def test_a_box_outside_the_resource_is_refused_and_nothing_changes(screen, ctx):
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, width0=16, bind=pipe.Bind.VERTEX_BUFFER
        )
    )
    ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, bytes(range(16)))
    with pytest.raises(ValueError, match="box"):
        ctx.transfer_map(buf, 0, pipe.Transfer.WRITE, pipe.Box(8, 0, 0, 9, 1, 1))
    with pytest.raises(ValueError, match="offset/size"):
        ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 12, bytes(5))
    data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 16, 1, 1))
    assert bytes(data) == bytes(range(16))
    ctx.transfer_unmap(xfer)


# -- index buffers ------------------------------------------------------------------------


@pytest.mark.parametrize("index_size,dtype", [(1, np.uint8), (2, np.uint16), (4, np.uint32)])
@pytest.mark.parametrize("source", ["resource", "user"])
def test_indexed_draw_equals_the_unrolled_draw(screen, ctx, index_size, dtype, source):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    corners = np.array(
        [[-1, -1, 0, 1, *RED], [1, -1, 0, 1, *GREEN], [1, 1, 0, 1, *RED], [-1, 1, 0, 1, *GREEN]],
        np.float32,
    )
    indices = np.array([9, 9, 0, 1, 2, 0, 2, 3], dtype)  # two junk entries skipped by start
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw(ctx, corners[indices[2:]])
    unrolled = read_rgba8(ctx, rt)
    index: object = indices
    if source == "resource":
        index = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER, width0=indices.nbytes, bind=pipe.Bind.INDEX_BUFFER
            )
        )
        ctx.buffer_subdata(index, pipe.Transfer.WRITE, 0, indices)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    set_vertices(ctx, corners)
    ctx.draw_vbo(
        pipe.DrawInfo(
            mode=pipe.Prim.TRIANGLES, start=2, count=6, index_size=index_size, index=index
        )
    )
    indexed = read_rgba8(ctx, rt)
    assert (unrolled[..., 3] == 255).all()  # the quad covers the target
    assert np.array_equal(indexed, unrolled)


# -- rasterizer state ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "front_ccw,cull,drawn",
    [
        (True, pipe.Face.NONE, True),
        (True, pipe.Face.BACK, False),
        (True, pipe.Face.FRONT, True),
        (False, pipe.Face.BACK, True),
        (False, pipe.Face.FRONT, False),
        (False, pipe.Face.FRONT_AND_BACK, False),
    ],
)
def test_cull_mode_and_front_face(screen, ctx, front_ccw, cull, drawn):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    rast = pipe.RasterizerState(front_ccw=front_ccw, cull_face=cull)
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    # In memory-row space (row 0 = NDC y -1, y growing downward, where
    # front_ccw counts winding) the quad's triangles are clockwise.
    draw(ctx, quad(0.0, GREEN))
    img = read_rgba8(ctx, rt)
    assert (img == ([0, 255, 0, 255] if drawn else [0, 0, 0, 0])).all()


def test_scissor_limits_draws_to_its_rectangle(screen, ctx):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState(scissor=True)))
    ctx.set_scissor_states(0, [pipe.ScissorState(3, 5, 11, 9)])  # maxx/maxy exclusive
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))  # clears ignore the scissor
    draw(ctx, quad(0.0, GREEN))
    img = read_rgba8(ctx, rt)
    inside = np.zeros((H, W), bool)
    inside[5:9, 3:11] = True
    assert (img[inside] == [0, 255, 0, 255]).all()
    assert (img[~inside] == [0, 0, 0, 0]).all()


@pytest.mark.parametrize(
    "zs_format", [pipe.Format.Z32_FLOAT, pipe.Format.Z24_UNORM_S8_UINT], ids=lambda f: f.name
)
def test_a_clear_given_a_scissor_state_clears_only_its_rectangle(screen, ctx, zs_format):
    """context.rst: clear's scissor_state, when given, limits the clear to
    its rectangle (colour, depth and stencil alike); a rectangle reaching
    past the framebuffer is cut to it, an empty one clears nothing, and
    draws before and after stay in order."""
    rt, zs = make_target(screen, ctx, W, H, zs_format=zs_format)
    bind_passthrough(ctx)
    both = pipe.Clear.COLOR0 | pipe.Clear.DEPTH
    ctx.clear(both, color=(0, 0, 0, 0), depth=1.0)
    draw(ctx, quad(0.0, RED))  # no depth test: the depth stays 1.0
    ctx.clear(both, color=GREEN, depth=0.25, scissor_state=pipe.ScissorState(3, 5, 11, 9))
    ctx.clear(both, color=(0, 0, 1, 1), depth=0.75, scissor_state=pipe.ScissorState(12, 14, 99, 99))
    ctx.clear(both, color=(1, 1, 1, 1), depth=0.0, scissor_state=pipe.ScissorState(4, 4, 4, 9))
    img = read_rgba8(ctx, rt)
    green = np.zeros((H, W), bool)
    green[5:9, 3:11] = True
    blue = np.zeros((H, W), bool)
    blue[14:, 12:] = True
    assert (img[green] == [0, 255, 0, 255]).all()
    assert (img[blue] == [0, 0, 255, 255]).all()
    assert (img[~green & ~blue] == [255, 0, 0, 255]).all()
    data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
    words = np.array(data[0]).view(np.uint32)[..., 0]
    ctx.transfer_unmap(xfer)
    if zs_format == pipe.Format.Z32_FLOAT:
        depth = words.view(np.float32)
        want = {0.25: green, 0.75: blue, 1.0: ~green & ~blue}
    else:
        depth = words & 0xFFFFFF
        want = {round(d * 0xFFFFFF): m for d, m in [(0.25, green), (0.75, blue)]}
        want[0xFFFFFF] = ~green & ~blue
    for value, mask in want.items():
        assert (depth[mask] == np.asarray(value, depth.dtype)).all()
    # a draw after it tests against the scissored clears' depth: at depth
    # 0.375 it fails LESS over the green rectangle's 0.25, passes elsewhere
    # (over 0.75 and 1.0)
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    draw(ctx, quad(-0.25, (1.0, 1.0, 0.0, 1.0)))
    img = read_rgba8(ctx, rt)
    assert (img[green] == [0, 255, 0, 255]).all()
    assert (img[~green] == [255, 255, 0, 255]).all()


# -- blending ----------------------------------------------------------------------------------


def test_standard_alpha_blending_exact_values(screen, ctx):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    blend = pipe.RtBlendState(
        blend_enable=True,
        rgb_func=pipe.BlendFunc.ADD,
        rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
        rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
        alpha_func=pipe.BlendFunc.ADD,
        alpha_src_factor=pipe.BlendFactor.ONE,
        alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
    )
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[blend])))
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 1.0, 1.0))  # dst (0, 0, 255, 255)
    draw(ctx, quad(0.0, (1.0, 0.5, 0.0, 0.4)))  # src (255, 128, 0, 102)
    img = read_rgba8(ctx, rt)

    def mul8(a: int, b: int) -> int:  # llvmpipe's exact 8-bit product
        t = a * b
        return (t + (t >> 8) + 128) >> 8

    src, dst, a = (255, 128, 0, 102), (0, 0, 255, 255), 102
    want = [min(255, mul8(s, a) + mul8(d, 255 - a)) for s, d in zip(src[:3], dst[:3])]
    want.append(min(255, src[3] + mul8(dst[3], 255 - a)))
    assert want == [102, 51, 153, 255]
    assert (img == want).all()


def test_blending_off_writes_the_colour_and_colormask_keeps_channels(screen, ctx):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    ctx.bind_blend_state(
        ctx.create_blend_state(pipe.BlendState(rt=[pipe.RtBlendState(colormask=0b0101)]))
    )  # R and B only
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 1.0, 0.0, 1.0))
    draw(ctx, quad(0.0, (1.0, 0.0, 0.2, 0.0)))
    assert (read_rgba8(ctx, rt) == [255, 255, 51, 255]).all()


def test_a_checked_draw_info_is_a_private_copy_not_checked_twice(screen):
    """check_draw_info returns a validated private copy; given its own copy
    back (the threaded context's recorded one, on the driver thread) it
    returns it as it is, and the caller's object stays unchecked."""
    from gallium.pipe.checks import check_draw_info

    info = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3)
    checked = check_draw_info(info, screen.support)
    assert checked is not info and isinstance(checked, pipe.DrawInfo)
    assert check_draw_info(checked, screen.support) is checked
    info.count = -1  # the caller's object: checked again, and rejected
    with pytest.raises(ValueError, match=r"info\.count"):
        check_draw_info(info, screen.support)
    assert checked.count == 3


def test_a_draw_info_passed_again_unchanged_is_not_checked_again(screen):
    """The same DrawInfo with the same fields gets the same checked copy back
    (no second check); a changed field, user indices, a destroyed index
    buffer or an indirect draw make a new check."""
    from gallium.pipe.checks import check_draw_info

    sup = screen.support
    info = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3)
    first = check_draw_info(info, sup)
    assert check_draw_info(info, sup) is first
    info.count = 6
    second = check_draw_info(info, sup)
    assert second is not first and (second.count, first.count) == (6, 3)
    info.count = -1
    with pytest.raises(ValueError, match=r"info\.count"):
        check_draw_info(info, sup)
    # user indices: the caller may rewrite them between the calls
    idx = np.array([0, 1, 2], np.uint16)
    user = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3, index_size=2, index=idx)
    assert check_draw_info(user, sup) is not check_draw_info(user, sup)
    # an index buffer destroyed since
    buf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=6,
            bind=pipe.Bind.INDEX_BUFFER,
        )
    )  # fmt: skip
    indexed = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3, index_size=2, index=buf)
    assert check_draw_info(indexed, sup) is check_draw_info(indexed, sup)
    screen.resource_destroy(buf)
    with pytest.raises(ValueError, match="destroyed"):
        check_draw_info(indexed, sup)


@pytest.mark.parametrize(("count", "instances"), [(2**31, 1), (3, 2**31 - 1), (2**13, 2**12)])
def test_a_draw_of_too_many_vertices_is_refused_at_the_call(screen, ctx, count, instances):
    """count x instance_count past numpipe's limit (MAX_DRAW_VERTICES) raises
    UnsupportedError at the call, on both contexts, before anything is
    allocated; nothing is reported later and the context still draws."""
    import tracemalloc

    from gallium.numpipe.context import MAX_DRAW_VERTICES

    assert count * instances > MAX_DRAW_VERTICES
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    tracemalloc.start()
    try:
        with pytest.raises(gallium.UnsupportedError, match="at most 16,777,216 vertices a call"):
            ctx.draw_vbo(
                pipe.DrawInfo(
                    mode=pipe.Prim.TRIANGLES, start=0, count=count, instance_count=instances
                )
            )
        assert tracemalloc.get_traced_memory()[1] < 1 << 20  # (peak: nothing big)
    finally:
        tracemalloc.stop()
    draw(ctx, quad(0.0, (1.0, 0.0, 0.0, 1.0)))
    ctx.flush().wait(10)
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    assert (read_rgba8(ctx, rt) == [255, 0, 0, 255]).all()


def test_clears_and_draws_stay_inside_a_framebuffer_smaller_than_its_surfaces(screen, ctx):
    """A 40x24 framebuffer over 64x64 surfaces: clear and draw change the
    framebuffer's pixels only (the colour and the depth/stencil surface), and
    a colour surface viewing the resource in another format is written in
    the surface's format."""
    T = pipe.TextureTarget.TEXTURE_2D
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=T, format=pipe.Format.R8G8B8A8_UNORM, width0=64, height0=64,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    zs = screen.resource_create(
        pipe.ResourceTemplate(
            target=T, format=pipe.Format.Z24_UNORM_S8_UINT, width0=64, height0=64,
            bind=pipe.Bind.DEPTH_STENCIL,
        )
    )  # fmt: skip
    box = pipe.Box(0, 0, 0, 64, 64, 1)
    ctx.texture_subdata(rt, 0, pipe.Transfer.WRITE, box, np.full((64, 64, 4), 7, np.uint8))
    ctx.texture_subdata(zs, 0, pipe.Transfer.WRITE, box, np.full((64, 64, 4), 9, np.uint8))
    bgra = pipe.Format.B8G8R8A8_UNORM  # the same bytes, the channels read the other way
    ctx.set_framebuffer_state(
        pipe.FramebufferState(
            width=40,
            height=24,
            cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=bgra))],
            zsbuf=ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format)),
        )
    )
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(20, 12, 0.5), translate=(20, 12, 0.5))])
    bind_passthrough(ctx)
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(1, 0, 0, 1), depth=0.5)
    # a triangle covering the whole framebuffer and beyond, blue
    set_vertices(ctx, np.float32([[-1, -1, 0, 1, 0, 0, 1, 1], [3, -1, 0, 1, 0, 0, 1, 1],
                                  [-1, 3, 0, 1, 0, 0, 1, 1]]))  # fmt: skip
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    ctx.flush().wait(10)
    img = read_rgba8(ctx, rt)
    inside, outside = (
        img[:24, :40],
        np.concatenate([img[24:].reshape(-1, 4), img[:24, 40:].reshape(-1, 4)]),
    )
    assert (inside == [255, 0, 0, 255]).all()  # blue through a BGRA view: byte 0 holds blue
    assert (outside == 7).all()
    data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, box)
    words = np.array(data[0]).view(np.uint32)[..., 0]
    ctx.transfer_unmap(xfer)
    assert (words[:24, :40] == round(0.5 * 0xFFFFFF)).all()  # cleared (stencil 0)
    assert (words[24:] == 0x09090909).all() and (words[:24, 40:] == 0x09090909).all()
