"""Small helpers shared by tests: build a render target, a pass-through pipeline, read back."""

from __future__ import annotations

import numpy as np

from gallium import pipe

PASS_VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
PASS_FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


# The pass-through colour through the shader kernel (not a pure pass-through,
# so no shortcut skips the kernel): same output as PASS_FS.
FS_MUL_ONE = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 1.0, 1.0, 1.0}
  0: MUL OUT[0], IN[0], IMM[0]
  1: END
"""
# Standard "over" blending: colour SRC_ALPHA / INV_SRC_ALPHA, alpha ONE / INV_SRC_ALPHA.
OVER = pipe.RtBlendState(
    blend_enable=True,
    rgb_func=pipe.BlendFunc.ADD,
    rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
    rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
    alpha_func=pipe.BlendFunc.ADD,
    alpha_src_factor=pipe.BlendFactor.ONE,
    alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
)
# Additive blending: ONE / ONE on every channel.
ADD = pipe.RtBlendState(
    blend_enable=True,
    rgb_func=pipe.BlendFunc.ADD,
    rgb_src_factor=pipe.BlendFactor.ONE,
    rgb_dst_factor=pipe.BlendFactor.ONE,
    alpha_func=pipe.BlendFunc.ADD,
    alpha_src_factor=pipe.BlendFactor.ONE,
    alpha_dst_factor=pipe.BlendFactor.ONE,
)


def make_target(screen, ctx, w, h, fmt=pipe.Format.R8G8B8A8_UNORM, zs_format=None):
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=fmt,
            width0=w,
            height0=h,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=fmt))
    zs = zsurf = None
    if zs_format is not None:
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=zs_format,
                width0=w,
                height0=h,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )
        zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs_format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[surf], zsbuf=zsurf))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    return rt, zs


def bind_passthrough(ctx, vs=PASS_VS, fs=PASS_FS):
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=vs)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
    ve = ctx.create_vertex_elements_state(
        [
            pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
        ]
    )
    ctx.bind_vertex_elements_state(ve)


# One TEX of the interpolated GENERIC[0] (s, t) into the colour.
FS_TEX = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
  0: TEX OUT[0], IN[0].xyyy, SAMP[0], 2D
  1: END
"""


def tied_triangles(seed: int, n: int, size: float, tie_levels: int) -> np.ndarray:
    """``n`` random small triangles (vertices ``size`` apart in clip space,
    pos + colour, 8 floats a vertex), each at one of ``tie_levels`` depths, so
    many fragments tie exactly."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, (n, 1, 2))
    xy = (c + rng.normal(0, size, (n, 3, 2))).reshape(-1, 2)
    z = np.repeat(rng.integers(0, tie_levels, n) / tie_levels * 1.6 - 0.8, 3)
    col = np.repeat(rng.uniform(0, 1, (n, 4)), 3, axis=0)
    return np.concatenate([xy, z[:, None], np.ones((3 * n, 1)), col], 1).astype(np.float32)


def record_tied_layers(ctx, first, second, tie_levels, clear_color=(0.1, 0.2, 0.3, 1.0)):
    """Record a scene of two layers of :func:`tied_triangles`: clear colour and
    depth (0.7); under an occlusion query the ``first`` (seed, count, size)
    triangles with depth test LESS; a timestamp; the ``second`` ones blended
    OVER, tested LEQUAL without depth writes.  Binds the pass-through shaders
    and leaves that blend and depth state bound.  Returns (occlusion query,
    timestamp query)."""
    bind_passthrough(ctx)
    bind_depth_test(ctx, pipe.CompareFunc.LESS)
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=clear_color, depth=0.7)
    occ = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    ctx.begin_query(occ)
    seed, n, size = first
    set_vertices(ctx, tied_triangles(seed, n, size, tie_levels=tie_levels))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3 * n))
    ctx.end_query(occ)
    stamp = ctx.create_query(pipe.QueryType.TIMESTAMP)
    ctx.end_query(stamp)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[OVER])))
    bind_depth_test(ctx, pipe.CompareFunc.LEQUAL, writemask=False)
    seed, n, size = second
    set_vertices(ctx, tied_triangles(seed, n, size, tie_levels=tie_levels))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3 * n))
    return occ, stamp


def set_vertices(ctx, verts):
    verts = np.asarray(verts, np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts)])


def bind_depth_test(ctx, func=pipe.CompareFunc.LESS, writemask=True):
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=writemask, func=func)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))


def draw_and_read(ctx, verts, rt, zs=None) -> list:
    """Draw ``verts`` as a triangle list, flush, and read the colour target
    back (and the depth target's bytes when given)."""
    set_vertices(ctx, verts)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
    ctx.flush()
    out = [read_rgba8(ctx, rt)]
    if zs is not None:
        out.append(read_rgba8(ctx, zs))
    return out


def read_rgba8(ctx, res):
    w, h = res.width0, res.height0
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
    out = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return out


def texture_bindings(target, fmt, levels, *, view=None, **sampler):
    """A captured texture: ``levels[k]`` shaped (layers or depth, height, width[, channels])
    in the format's channel type; ``sampler`` fields override a NEAREST /
    CLAMP_TO_EDGE / mip NONE sampler with max_lod 1000."""
    from conftest import get_screen

    from gallium.numpipe.sampler import TextureBindings

    screen = get_screen(1)
    ctx = screen.context_create(threaded=False)
    try:
        layers, h, w = np.asarray(levels[0]).shape[:3]
        res = screen.resource_create(
            pipe.ResourceTemplate(
                target=target,
                format=fmt,
                width0=w,
                height0=h,
                depth0=layers if target == pipe.TextureTarget.TEXTURE_3D else 1,
                array_size=1 if target == pipe.TextureTarget.TEXTURE_3D else layers,
                last_level=len(levels) - 1,
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        for level, img in enumerate(levels):
            img = np.ascontiguousarray(img)
            n, lh, lw = img.shape[:3]
            bpp = img[0, 0, 0].nbytes
            data = img.view(np.uint8)
            ctx.texture_subdata(
                res,
                level,
                pipe.Transfer.WRITE,
                pipe.Box(0, 0, 0, lw, lh, n),
                data,
                lw * bpp,
                lw * lh * bpp,
            )
        v = ctx.create_sampler_view(res, view or pipe.SamplerViewTemplate(format=fmt))
        state = dict(
            min_img_filter=pipe.TexFilter.NEAREST,
            mag_img_filter=pipe.TexFilter.NEAREST,
            min_mip_filter=pipe.MipFilter.NONE,
            wrap_s=pipe.TexWrap.CLAMP_TO_EDGE,
            wrap_t=pipe.TexWrap.CLAMP_TO_EDGE,
            wrap_r=pipe.TexWrap.CLAMP_TO_EDGE,
            max_lod=1000.0,
        )
        state.update(sampler)
        samp = ctx.create_sampler_state(pipe.SamplerState(**state))
        ctx.flush()
        return TextureBindings.capture([v], [samp])
    finally:
        ctx.destroy()
