"""Render a multisampled reference scene (tests/reference/msaa_scenes.py) through numpipe."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gallium import pipe

REF = Path(__file__).resolve().parent / "reference"
if str(REF) not in sys.path:
    sys.path.insert(0, str(REF))

from msaa_scenes import FS_TGSI, MsaaScene  # type: ignore[import-not-found]  # noqa: E402

VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
RGBA8 = pipe.Format.R8G8B8A8_UNORM


def render(screen, ctx, scene: MsaaScene, resolve: bool = True):
    """Draw the scene into a multisampled target; return the resolved RGBA8
    image (or the multisample resource when ``resolve`` is false)."""
    w, h, n = scene.width, scene.height, scene.samples
    bind = pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW
    ms = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=RGBA8, width0=w, height0=h,
            nr_samples=n, bind=bind,
        )
    )  # fmt: skip
    surf = ctx.create_surface(ms, pipe.SurfaceTemplate(format=RGBA8))
    zsurf = None
    if scene.depth:
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.Z24_UNORM_S8_UINT,
                width0=w, height0=h, nr_samples=n, bind=pipe.Bind.DEPTH_STENCIL,
            )
        )  # fmt: skip
        zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[surf], zsbuf=zsurf))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    # a GL user framebuffer: bottom edge rule off, multisampling on
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState(multisample=True)))
    ctx.bind_blend_state(
        ctx.create_blend_state(
            pipe.BlendState(
                alpha_to_coverage=scene.alpha_to_coverage, alpha_to_one=scene.alpha_to_one
            )
        )
    )
    dsa = pipe.DepthStencilAlphaState()
    if scene.depth:
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.set_sample_mask(0xFFFFFFFF if scene.sample_mask is None else scene.sample_mask)
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_TGSI[scene.shader])))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32_FLOAT),
                pipe.VertexElement(12, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )
    verts = np.ascontiguousarray(scene.triangles().reshape(-1, 7), np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=28, buffer_offset=0, buffer=verts)])
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, 0, 0, 0), depth=1.0)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
    ctx.set_sample_mask(0xFFFFFFFF)
    if not resolve:
        return ms
    out = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=RGBA8, width0=w, height0=h, bind=bind
        )
    )
    box = pipe.Box(0, 0, 0, w, h, 1)
    ctx.blit(
        pipe.BlitInfo(
            dst=pipe.BlitImage(out, 0, box), src=pipe.BlitImage(ms, 0, box),
            filter=pipe.TexFilter.NEAREST,
        )
    )  # fmt: skip
    data, xfer = ctx.transfer_map(out, 0, pipe.Transfer.READ, box)
    img = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return img
