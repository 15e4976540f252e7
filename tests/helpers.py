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


def set_vertices(ctx, verts):
    verts = np.asarray(verts, np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts)])


def read_rgba8(ctx, res):
    w, h = res.width0, res.height0
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
    out = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return out
