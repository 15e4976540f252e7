"""Render a layered-rendering reference scene (tests/reference/layers/layer_scenes.py)
through numpipe's Gallium API."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gallium import pipe

REF = Path(__file__).resolve().parent / "reference" / "layers"
if str(REF) not in sys.path:
    sys.path.insert(0, str(REF))

import layer_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

W, H = scenes.WIDTH, scenes.HEIGHT
RGBA8 = pipe.Format.R8G8B8A8_UNORM
MODES = {m.name: m for m in pipe.Prim}
MODES_FILL = {"fill": pipe.PolygonMode.FILL, "line": pipe.PolygonMode.LINE}
MODES_FILL["point"] = pipe.PolygonMode.POINT


def tgsi(scene: scenes.LayerScene, k: int) -> dict[str, str]:
    """Draw ``k``'s shaders as TGSI (captured from softpipe, or written)."""
    prog = scenes.PROGRAMS[scene.draws[k].program]
    if prog.tgsi is not None:
        return dict(prog.tgsi)
    out = {}
    for stage in ("vs", "gs", "fs"):
        path = REF / f"{scene.draws[k].program}.{stage}.tgsi"
        if path.exists():
            out[stage] = path.read_text()
    return out


def _texture(screen, target, fmt, depth: int, samples: int = 1, bind=pipe.Bind.RENDER_TARGET):
    three = target == pipe.TextureTarget.TEXTURE_3D
    cube = target in (pipe.TextureTarget.TEXTURE_CUBE, pipe.TextureTarget.TEXTURE_CUBE_ARRAY)
    return screen.resource_create(
        pipe.ResourceTemplate(
            target=target,
            format=fmt,
            width0=W,
            height0=W if cube else H,  # (square faces, larger than the framebuffer)
            depth0=depth if three else 1,
            array_size=1 if three else depth,
            nr_samples=samples,
            bind=bind | pipe.Bind.SAMPLER_VIEW,
        )
    )


def setup(screen, ctx, scene: scenes.LayerScene) -> dict:
    """Bind the scene's framebuffer and fixed state; returns its resources."""
    L = scene.layers
    target = pipe.TextureTarget.TEXTURE_2D_ARRAY
    if scene.texture == "3d":
        target = pipe.TextureTarget.TEXTURE_3D
    elif scene.texture == "cube":  # (numpipe only: the GL scenes draw arrays)
        target = (
            pipe.TextureTarget.TEXTURE_CUBE if L == 6 else pipe.TextureTarget.TEXTURE_CUBE_ARRAY
        )
    colour = _texture(screen, target, RGBA8, L, scene.samples)
    cbufs = [ctx.create_surface(colour, pipe.SurfaceTemplate(format=RGBA8, last_layer=L - 1))]
    res = {"colour": colour}
    if scene.second_layers:
        n = scene.second_layers
        second = _texture(screen, pipe.TextureTarget.TEXTURE_2D_ARRAY, RGBA8, n)
        cbufs.append(
            ctx.create_surface(second, pipe.SurfaceTemplate(format=RGBA8, last_layer=n - 1))
        )
        res["second"] = second
    zsurf = None
    if scene.depth:
        zfmt = pipe.Format.Z32_FLOAT
        zs = _texture(
            screen, pipe.TextureTarget.TEXTURE_2D_ARRAY, zfmt, L, scene.samples,
            bind=pipe.Bind.DEPTH_STENCIL,
        )  # fmt: skip
        zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=zfmt, last_layer=L - 1))
        res["depth"] = zs
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.set_framebuffer_state(
        pipe.FramebufferState(width=W, height=H, layers=L, cbufs=cbufs, zsbuf=zsurf)
    )
    ctx.set_viewport_states(0, [pipe.ViewportState(*scenes.viewport_state(i)) for i in range(16)])
    ctx.set_scissor_states(
        0, [pipe.ScissorState(x, y, x + w, y + h) for x, y, w, h in scenes.SCISSORS]
    )
    rast = pipe.RasterizerState(
        front_ccw=False,  # (a GL user framebuffer: Mesa inverts front_ccw)
        scissor=scene.scissor,
        flatshade_first=scene.first,
        point_size=scene.point_size,
        line_width=scene.line_width,
        point_quad_rasterization=True,
        sprite_coord_mode=pipe.SpriteCoord.LOWER_LEFT,
        multisample=scene.samples > 1,
        depth_clip=not scene.depth_clamp,
        fill_front=MODES_FILL[scene.polygon_mode],
        fill_back=MODES_FILL[scene.polygon_mode],
    )
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
    bits = pipe.Clear.COLOR0 | (pipe.Clear.COLOR1 if scene.second_layers else 0)
    ctx.clear(bits | (pipe.Clear.DEPTH if scene.depth else 0), color=(0, 0, 0, 0), depth=1.0)
    return res


def draw(screen, ctx, scene: scenes.LayerScene, k: int, shaders: dict) -> None:
    """Draw ``k`` of the scene (its shaders made once per program in ``shaders``)."""
    d = scene.draws[k]
    got = shaders.get(d.program)
    if got is None:
        text = tgsi(scene, k)
        make = {
            "vs": ctx.create_vs_state,
            "gs": ctx.create_gs_state,
            "tes": ctx.create_tes_state,
            "fs": ctx.create_fs_state,
        }
        got = shaders[d.program] = {s: make[s](pipe.ShaderState(tokens=t)) for s, t in text.items()}
    ctx.bind_vs_state(got["vs"])
    ctx.bind_gs_state(got.get("gs"))
    ctx.bind_tes_state(got.get("tes"))
    ctx.bind_fs_state(got["fs"])
    elements = [
        pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
        pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
    ]
    if "li" in scenes.PROGRAMS[d.program].vs:
        elements.append(pipe.VertexElement(0, 0, 1, pipe.Format.R32G32_SINT))
    ctx.bind_vertex_elements_state(ctx.create_vertex_elements_state(elements))
    ctx.set_vertex_buffers(
        0,
        [
            pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=d.vertices),
            pipe.VertexBuffer(stride=8, buffer_offset=0, buffer=d.li),
        ],
    )
    info = pipe.DrawInfo(
        mode=MODES[d.mode], start=0, count=d.vertices.shape[0], instance_count=d.instances
    )
    if d.indices is not None:
        info.index_size, info.index, info.count = 2, d.indices, d.indices.size
    if d.patch_vertices:
        info.vertices_per_patch = d.patch_vertices
        ctx.set_tess_state(d.tess_levels[:4], d.tess_levels[4:])
    ctx.draw_vbo(info)


def read(ctx, res, layers: int) -> np.ndarray:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, layers))
    out = np.array(data)[:, :H]
    ctx.transfer_unmap(xfer)
    return out


def render(screen, ctx, scene: scenes.LayerScene) -> tuple[np.ndarray, np.ndarray | None]:
    """Draw the scene; returns (colour (targets, layers, H, W, 4), depth (layers, H, W) or None),
    a multisampled colour target resolved layer by layer with ``blit``."""
    res = setup(screen, ctx, scene)
    shaders: dict = {}
    for k in range(len(scene.draws)):
        draw(screen, ctx, scene, k, shaders)
    L = scene.layers
    colour = res["colour"]
    if scene.samples > 1:
        resolved = _texture(screen, pipe.TextureTarget.TEXTURE_2D_ARRAY, RGBA8, L)
        for layer in range(L):
            box = pipe.Box(0, 0, layer, W, H, 1)
            ctx.blit(
                pipe.BlitInfo(
                    dst=pipe.BlitImage(resolved, 0, box, RGBA8),
                    src=pipe.BlitImage(colour, 0, box, RGBA8),
                    mask=pipe.Mask.RGBA,
                    filter=pipe.TexFilter.NEAREST,
                )
            )
        colour = resolved
    out = np.zeros((scene.targets, L, H, W, 4), np.uint8)
    out[0] = read(ctx, colour, L)
    if scene.second_layers:
        out[1, : scene.second_layers] = read(ctx, res["second"], scene.second_layers)
    depth = None
    if scene.depth:
        depth = read(ctx, res["depth"], L).view(np.float32).reshape(L, H, W)
    return out, depth


def reference(scene: scenes.LayerScene) -> tuple[np.ndarray, np.ndarray | None]:
    colour = np.load(REF / f"{scene.name}.color.npy")
    path = REF / f"{scene.name}.depth.npy"
    return colour, (np.load(path) if path.exists() else None)
