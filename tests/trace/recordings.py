"""Recording helpers shared by the trace tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import gallium
from gallium import pipe, trace
from gallium.demo import VS, cube_geometry, mvp_matrix


def traced_screen(path: Path, num_threads: int = 2):
    return trace.record(gallium.create_screen(num_threads=num_threads, trace=False), path)


def read_rgba(ctx, res, w: int, h: int) -> np.ndarray:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
    img = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return img


FS_COLOR = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def record_cubes(
    path: Path, frames: int, size: int = 48, threaded: bool = True, clear_every: int = 1
) -> list[np.ndarray]:
    """A small demo-like trace: a spinning cube over a few triangles, END_OF_FRAME
    flushes; frames whose index is not a multiple of ``clear_every`` do not clear
    (they draw over the previous frame's pixels).  Returns each frame's image."""
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=threaded)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=size,
            height0=size,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    zs = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.Z24_UNORM_S8_UINT,
            width0=size,
            height0=size,
            bind=pipe.Bind.DEPTH_STENCIL,
        )
    )
    cbuf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    zbuf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=pipe.Format.Z24_UNORM_S8_UINT))
    ctx.set_framebuffer_state(
        pipe.FramebufferState(width=size, height=size, cbufs=[cbuf], zsbuf=zbuf)
    )
    half = size / 2
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(half, half, 0.5), translate=(half, half, 0.5))]
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_COLOR)))
    ctx.bind_depth_stencil_alpha_state(
        ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LEQUAL)
            )
        )
    )
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )
    verts, idx = cube_geometry()
    vbuf = screen.resource_create(
        pipe.ResourceTemplate(width0=verts.nbytes, bind=pipe.Bind.VERTEX_BUFFER)
    )
    ctx.buffer_subdata(vbuf, pipe.Transfer.WRITE, 0, verts[:12])
    ctx.buffer_subdata(vbuf, pipe.Transfer.WRITE, verts[:12].nbytes, verts[12:])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
    images = []
    info = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=idx.size, index_size=2, index=idx)
    for f in range(frames):
        if f % clear_every == 0:
            ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0.1, 0.1, 0.2, 1.0))
        else:
            ctx.clear(pipe.Clear.DEPTHSTENCIL, depth=1.0)
        ctx.set_constant_buffer(
            pipe.ShaderType.VERTEX,
            0,
            pipe.ConstantBuffer(user_buffer=mvp_matrix(0.3 + 0.45 * f, 1.0)),
        )
        info.start = 0  # the same template object, changed between calls
        ctx.draw_vbo(info)
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, rt, size, size))
    ctx.destroy()
    screen.destroy()
    return images
