"""The demo: a spinning cube over overlapping triangles, through the threaded context.

Run with ``make demo`` (``python -m gallium demo``).  Everything goes through the
public Gallium API: a ThreadedContext records the calls, ``await ctx.flush()``
waits for each frame without blocking the event loop, and the frames are
written as PNGs under ``out/``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import numpy as np

import gallium
from gallium import pipe
from gallium.util.image import read_texture_rgba8, write_png

# The vertex shader is what Mesa's GLSL compiler emits for
# ``gl_Position = mvp * vec4(pos, 1); v_color = color;`` (mvp in CONST[0][0..3]).
VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL CONST[0][0..3]
DCL TEMP[0]
  0: MUL TEMP[0], CONST[0][1], IN[0].yyyy
  1: MAD TEMP[0], CONST[0][0], IN[0].xxxx, TEMP[0]
  2: MAD TEMP[0], CONST[0][2], IN[0].zzzz, TEMP[0]
  3: ADD OUT[0], TEMP[0], CONST[0][3]
  4: MOV OUT[1], IN[1]
  5: END
"""
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def cube_geometry() -> tuple[np.ndarray, np.ndarray]:
    """24 vertices (4 per face, so faces get their own colours) and 36 indices."""
    faces = [
        ((0, 0, 1), (1, 0.35, 0.3)),
        ((0, 0, -1), (0.3, 1, 0.4)),
        ((1, 0, 0), (0.3, 0.5, 1)),
        ((-1, 0, 0), (1, 0.9, 0.3)),
        ((0, 1, 0), (0.9, 0.3, 1)),
        ((0, -1, 0), (0.3, 1, 1)),
    ]
    verts, idx = [], []
    for n, color in faces:
        n = np.array(n, float)
        a = np.array([n[1], n[2], n[0]])
        b = np.cross(n, a)
        base = len(verts)
        for i, (sa, sb) in enumerate([(-1, -1), (1, -1), (1, 1), (-1, 1)]):
            p = n + sa * a + sb * b
            shade = 0.55 + 0.45 * (i / 3)
            verts.append([*p, 1.0, *(np.array(color) * shade), 1.0])
        # wind counter-clockwise seen from outside (memory-row space, y down)
        idx += [base, base + 2, base + 1, base, base + 3, base + 2]
    return np.array(verts, np.float32), np.array(idx, np.uint16)


def background_triangles(count: int, rng: np.random.Generator) -> np.ndarray:
    centers = rng.uniform(-1.0, 1.0, (count, 1, 2))
    offs = rng.normal(0, 0.12, (count, 3, 2))
    xy = (centers + offs).reshape(-1, 2)
    z = np.repeat(rng.uniform(-0.6, 0.9, count), 3)
    colors = np.repeat(rng.uniform(0.15, 0.9, (count, 3)), 3, axis=0)
    verts = np.zeros((count * 3, 8), np.float32)
    verts[:, 0:2] = xy * 3.2
    verts[:, 2] = z * 3.2 - 6.0
    verts[:, 3] = 1
    verts[:, 4:7] = colors
    verts[:, 7] = 1
    return verts


def mvp_matrix(angle: float, aspect: float, model: bool = True) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    ry = np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1]])
    c2, s2 = np.cos(angle * 0.6), np.sin(angle * 0.6)
    rx = np.array([[1, 0, 0, 0], [0, c2, -s2, 0], [0, s2, c2, 0], [0, 0, 0, 1]])
    t = np.eye(4)
    t[2, 3] = -4.5
    f = 1 / np.tan(np.radians(55) / 2)
    near, far = 0.5, 30.0
    proj = np.array(
        [
            [f / aspect, 0, 0, 0],
            [0, f, 0, 0],
            [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0, 0, -1, 0],
        ]
    )
    m = proj @ t @ ry @ rx if model else proj
    # TGSI reads CONST[0][i] as column i of the matrix (GLSL's column-major mvp).
    return np.ascontiguousarray(m.T, dtype=np.float32)


async def render(frames: int, size: int, out_dir: Path, workers: int | None) -> dict:
    screen = gallium.create_screen(num_threads=workers)
    ctx = screen.context_create()  # a ThreadedContext
    w = h = size
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=w,
            height0=h,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    zs = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.Z24_UNORM_S8_UINT,
            width0=w,
            height0=h,
            bind=pipe.Bind.DEPTH_STENCIL,
        )
    )
    cbuf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    zbuf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=pipe.Format.Z24_UNORM_S8_UINT))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[cbuf], zsbuf=zbuf))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS)))
    dsa = ctx.create_depth_stencil_alpha_state(
        pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
    )
    ctx.bind_depth_stencil_alpha_state(dsa)
    cull = ctx.create_rasterizer_state(
        pipe.RasterizerState(cull_face=pipe.Face.BACK, front_ccw=True)
    )
    no_cull = ctx.create_rasterizer_state(pipe.RasterizerState())
    ve = ctx.create_vertex_elements_state(
        [
            pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
        ]
    )
    ctx.bind_vertex_elements_state(ve)

    cube_verts, cube_idx = cube_geometry()
    rng = np.random.default_rng(2024)
    bg = background_triangles(300, rng)
    vbuf = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=cube_verts.nbytes + bg.nbytes,
            bind=pipe.Bind.VERTEX_BUFFER,
        )
    )
    ctx.buffer_subdata(vbuf, pipe.Transfer.WRITE, 0, cube_verts)
    ctx.buffer_subdata(vbuf, pipe.Transfer.WRITE, cube_verts.nbytes, bg)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
    n_cube = cube_verts.shape[0]

    triangles = 0
    written = []
    t0 = time.perf_counter()
    for frame in range(frames):
        angle = 0.35 + frame * (2 * np.pi / max(frames, 1))
        ctx.clear(
            pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0.05, 0.06, 0.09, 1.0), depth=1.0
        )
        # background triangles: projection only, no culling
        ctx.set_constant_buffer(
            pipe.ShaderType.VERTEX,
            0,
            pipe.ConstantBuffer(user_buffer=mvp_matrix(angle, w / h, False)),
        )
        ctx.bind_rasterizer_state(no_cull)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=n_cube, count=bg.shape[0]))
        # the cube: full model-view-projection, back faces culled
        ctx.set_constant_buffer(
            pipe.ShaderType.VERTEX, 0, pipe.ConstantBuffer(user_buffer=mvp_matrix(angle, w / h))
        )
        ctx.bind_rasterizer_state(cull)
        ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.TRIANGLES, start=0, count=cube_idx.size, index_size=2, index=cube_idx
            )
        )
        triangles += bg.shape[0] // 3 + cube_idx.size // 3
        await ctx.flush(pipe.Flush.END_OF_FRAME)
        if frame % max(1, frames // 4) == 0 or frame == frames - 1:
            img = read_texture_rgba8(ctx, rt)
            written.append(write_png(out_dir / f"frame_{frame:03d}.png", img))
        done = frame + 1
        elapsed = time.perf_counter() - t0
        bar = "#" * (24 * done // frames)
        line = f"  rendering [{bar:<24}] frame {done}/{frames}  {done / elapsed:5.1f} frames/s"
        if sys.stdout.isatty():
            sys.stdout.write("\r" + line)
        elif done % max(1, frames // 6) == 0 or done == frames:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    elapsed = time.perf_counter() - t0
    if sys.stdout.isatty():
        sys.stdout.write("\n")
    final = read_texture_rgba8(ctx, rt)
    written.append(write_png(out_dir / "cube.png", final))
    ctx.destroy()
    screen.destroy()
    return {
        "frames": frames,
        "seconds": elapsed,
        "fps": frames / elapsed,
        "tris_per_s": triangles / elapsed,
        "files": written,
        "size": size,
        "stats": ctx.stats.as_dict(),
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m gallium demo")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--out", default="out")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    print(f"numpipe demo: {args.frames} frames at {args.size}x{args.size}, threaded context")
    res = asyncio.run(render(args.frames, args.size, Path(args.out), args.workers))
    print(f"  {res['fps']:.1f} frames/s, {res['tris_per_s']:,.0f} triangles/s")
    st = res["stats"]
    print(
        f"  threaded context: {st['batches']} batches, {st['recorded_calls']} recorded calls, "
        f"{st['syncs']} syncs"
    )
    for f in res["files"]:
        print(f"  wrote {f}")
    return 0
