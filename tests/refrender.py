"""Render a reference scene (tests/reference/scenes.py) through numpipe's Gallium API."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gallium import pipe

REF = Path(__file__).resolve().parent / "reference"
if str(REF) not in sys.path:
    sys.path.insert(0, str(REF))

from scenes import RefScene, draw_mode  # type: ignore[import-not-found]  # noqa: E402

_MODES = {
    "triangles": pipe.Prim.TRIANGLES,
    "triangle_strip": pipe.Prim.TRIANGLE_STRIP,
    "triangle_fan": pipe.Prim.TRIANGLE_FAN,
    "points": pipe.Prim.POINTS,
    "lines": pipe.Prim.LINES,
    "line_strip": pipe.Prim.LINE_STRIP,
    "line_loop": pipe.Prim.LINE_LOOP,
    "lines_adjacency": pipe.Prim.LINES_ADJACENCY,
    "line_strip_adjacency": pipe.Prim.LINE_STRIP_ADJACENCY,
    "triangles_adjacency": pipe.Prim.TRIANGLES_ADJACENCY,
    "triangle_strip_adjacency": pipe.Prim.TRIANGLE_STRIP_ADJACENCY,
}
_FUNCS = {
    "less": pipe.CompareFunc.LESS,
    "lequal": pipe.CompareFunc.LEQUAL,
    "greater": pipe.CompareFunc.GREATER,
    "always": pipe.CompareFunc.ALWAYS,
}


def render(screen, ctx, scene: RefScene, zs_format=pipe.Format.Z24_UNORM_S8_UINT) -> np.ndarray:
    """Draw ``scene`` on ``ctx`` and return the RGBA8 image (row 0 = NDC y -1)."""
    w, h = scene.width, scene.height
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=w,
            height0=h,
            bind=pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW,
        )
    )
    cbuf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    zsurf = None
    if scene.depth:
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
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[cbuf], zsbuf=zsurf))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    vs_text, fs_text = scene.tgsi()
    vs = ctx.create_vs_state(pipe.ShaderState(tokens=vs_text))
    fs = ctx.create_fs_state(pipe.ShaderState(tokens=fs_text))
    ctx.bind_vs_state(vs)
    ctx.bind_fs_state(fs)
    if scene.gs_tgsi is not None:
        ctx.bind_gs_state(ctx.create_gs_state(pipe.ShaderState(tokens=scene.gs_tgsi)))
    rast = pipe.RasterizerState(
        cull_face=pipe.Face.BACK if scene.cull_back else pipe.Face.NONE,
        front_ccw=False,  # GL ccw on a user FBO is Gallium cw (Mesa inverts front_ccw)
        flatshade=scene.flat,
        point_size_per_vertex=scene.sizes is not None,  # GL_PROGRAM_POINT_SIZE
        line_width=scene.line_width,
        # GL 3.3 points are sprites; GL's upper-left point-coordinate origin is
        # Gallium's lower left on a user FBO (rows counted up from GL's bottom)
        point_quad_rasterization=True,
        sprite_coord_mode=pipe.SpriteCoord.LOWER_LEFT,
    )
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
    if scene.depth:
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=_FUNCS[scene.depth])
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    if scene.blend:
        blend = pipe.BlendState(
            rt=[
                pipe.RtBlendState(
                    blend_enable=True,
                    rgb_func=pipe.BlendFunc.ADD,
                    rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
                    rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                    alpha_func=pipe.BlendFunc.ADD,
                    alpha_src_factor=pipe.BlendFactor.ONE,
                    alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                )
            ]
        )
        ctx.bind_blend_state(ctx.create_blend_state(blend))
    data, _ = scene.vertex_data()
    elements = [
        pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
        pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
    ]
    if scene.sizes is not None:
        elements.append(pipe.VertexElement(32, 0, 0, pipe.Format.R32_FLOAT))
    ctx.bind_vertex_elements_state(ctx.create_vertex_elements_state(elements))
    vbuf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=data.nbytes,
            bind=pipe.Bind.VERTEX_BUFFER,
        )
    )
    ctx.buffer_subdata(vbuf, pipe.Transfer.WRITE, 0, data)
    stride = data.shape[1] * 4
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=stride, buffer_offset=0, buffer=vbuf)])
    clear = pipe.Clear.COLOR0 | (pipe.Clear.DEPTHSTENCIL if scene.depth else 0)
    ctx.clear(clear, color=scene.clear_color, depth=scene.clear_depth, stencil=0)
    for i, (first, count) in enumerate(scene.draw_list()):
        info = pipe.DrawInfo(mode=_MODES[draw_mode(scene, i)], start=first, count=count)
        if scene.indices is not None:
            info.index_size = scene.indices.itemsize
            info.index = scene.indices
        ctx.draw_vbo(info)
    ctx.flush()
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
    img = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return img


def load_reference(name: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(REF / f"{name}.png").convert("RGBA"))
