"""Render a fixed-function reference scene (tests/reference/ff_scenes.py)
through numpipe's Gallium API; load the goldens tools/make_ff_reference.py
stored."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gallium import pipe

REF = Path(__file__).resolve().parent / "reference"
if str(REF) not in sys.path:
    sys.path.insert(0, str(REF))

from ff_scenes import FRAGMENT_SHADERS, FFScene, gallium_state, vertex_shaders  # noqa: E402

FF = REF / "ff"
MODES = {
    "points": pipe.Prim.POINTS,
    "lines": pipe.Prim.LINES,
    "line_loop": pipe.Prim.LINE_LOOP,
    "line_strip": pipe.Prim.LINE_STRIP,
    "triangles": pipe.Prim.TRIANGLES,
    "triangle_strip": pipe.Prim.TRIANGLE_STRIP,
    "triangle_fan": pipe.Prim.TRIANGLE_FAN,
    "quads": pipe.Prim.QUADS,
    "quad_strip": pipe.Prim.QUAD_STRIP,
    "polygon": pipe.Prim.POLYGON,
}
FUNCS = {
    "never": pipe.CompareFunc.NEVER,
    "less": pipe.CompareFunc.LESS,
    "lequal": pipe.CompareFunc.LEQUAL,
    "greater": pipe.CompareFunc.GREATER,
    "always": pipe.CompareFunc.ALWAYS,
}
DEPTH_FORMATS = {
    "z16": pipe.Format.Z16_UNORM,
    "z24s8": pipe.Format.Z24_UNORM_S8_UINT,
    "z32f": pipe.Format.Z32_FLOAT,
}
COLOR_FORMATS = {
    "rgba8": pipe.Format.R8G8B8A8_UNORM,
    "rgba32f": pipe.Format.R32G32B32A32_FLOAT,
    "rgba8ui": pipe.Format.R8G8B8A8_UINT,
    "rgba8i": pipe.Format.R8G8B8A8_SINT,
    "r32ui": pipe.Format.R32_UINT,
}
# GL's names of the logic ops, in Gallium's terms
LOGIC_OPS = {
    "clear": pipe.LogicOp.CLEAR, "and": pipe.LogicOp.AND,
    "and_reverse": pipe.LogicOp.AND_REVERSE, "copy": pipe.LogicOp.COPY,
    "and_inverted": pipe.LogicOp.AND_INVERTED, "noop": pipe.LogicOp.NOOP,
    "xor": pipe.LogicOp.XOR, "or": pipe.LogicOp.OR, "nor": pipe.LogicOp.NOR,
    "equiv": pipe.LogicOp.EQUIV, "invert": pipe.LogicOp.INVERT,
    "or_reverse": pipe.LogicOp.OR_REVERSE, "copy_inverted": pipe.LogicOp.COPY_INVERTED,
    "or_inverted": pipe.LogicOp.OR_INVERTED, "nand": pipe.LogicOp.NAND, "set": pipe.LogicOp.SET,
}  # fmt: skip


def render(screen, ctx, scene: FFScene) -> tuple[np.ndarray, np.ndarray | None]:
    """Draw ``scene``; return (colour (H, W, 4), depth words (H, W) or None)."""
    w, h = scene.width, scene.height
    T = pipe.TextureTarget
    cfmt = COLOR_FORMATS[scene.color_format]
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=T.TEXTURE_2D, format=cfmt, width0=w, height0=h, bind=pipe.Bind.RENDER_TARGET
        )
    )
    zsurf = zs = None
    if scene.depth:
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D, format=DEPTH_FORMATS[scene.depth], width0=w, height0=h,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )  # fmt: skip
        zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format))
    cbuf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=cfmt))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[cbuf], zsbuf=zsurf))
    st = gallium_state(scene, pipe)
    ctx.set_viewport_states(0, [st["viewport"]])
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(st["rast"]))
    if scene.poly_stipple is not None:
        ctx.set_polygon_stipple(pipe.PolyStipple(stipple=list(scene.poly_stipple)))
    vs = vertex_shaders(scene.program_point_size)[1]
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=vs)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FRAGMENT_SHADERS[scene.fs][1])))
    if scene.logic_op is not None or scene.blend:
        rt_blend = pipe.RtBlendState()
        if scene.blend:
            rt_blend = pipe.RtBlendState(
                blend_enable=True,
                rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
                rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                alpha_src_factor=pipe.BlendFactor.ONE,
                alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
            )
        blend = pipe.BlendState(
            logicop_enable=scene.logic_op is not None,
            logicop_func=LOGIC_OPS.get(scene.logic_op, pipe.LogicOp.CLEAR),
            rt=[rt_blend],
        )
        ctx.bind_blend_state(ctx.create_blend_state(blend))
    if scene.depth:
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=FUNCS[scene.depth_func])
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * i, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for i in range(4)]
        )
    )
    data = scene.vertex_data()
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=64, buffer_offset=0, buffer=data)])
    bits = pipe.Clear.COLOR0 | (pipe.Clear.DEPTHSTENCIL if scene.depth else 0)
    clear = scene.clear_color
    if scene.color_format not in ("rgba8", "rgba32f"):  # (the union's integers)
        clear = tuple(int(v) for v in clear)
    ctx.clear(bits, color=clear, depth=scene.clear_depth, stencil=0)
    for first, count in scene.draw_list():
        ctx.draw_vbo(pipe.DrawInfo(mode=MODES[scene.mode], start=first, count=count))
    ctx.flush().wait(None)
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
    color_raw = np.array(data[0])
    ctx.transfer_unmap(xfer)
    depth_raw = None
    if zs is not None:
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
        depth_raw = np.array(data[0])
        ctx.transfer_unmap(xfer)
    return decode(scene, color_raw, depth_raw)


def decode(
    scene: FFScene, color: np.ndarray, raw: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The colour buffer's bytes (H, W, bytes per pixel) as GL reads them
    back, and the depth buffer's as depth words (None without one)."""
    h, w = color.shape[:2]
    if scene.color_format == "rgba32f":
        color = color.view(np.float32).reshape(h, w, 4)
    elif scene.color_format in ("rgba8ui", "rgba8i"):  # as GL reads them: 32-bit channels
        color = color.view(np.int8 if scene.color_format == "rgba8i" else np.uint8)
        color = color.astype(np.int32 if scene.color_format == "rgba8i" else np.uint32)
    elif scene.color_format == "r32ui":  # (R, 0, 0, 1)
        r = color.view(np.uint32)[..., 0]
        color = np.zeros((h, w, 4), np.uint32)
        color[..., 0], color[..., 3] = r, 1
    depth = None
    if raw is not None:
        if scene.depth == "z16":
            depth = raw.view(np.uint16)[..., 0]
        elif scene.depth == "z24s8":
            depth = raw.view(np.uint32)[..., 0] & 0xFFFFFF
        else:
            depth = raw.view(np.float32)[..., 0]
    return color, depth


def load(scene: FFScene) -> tuple[np.ndarray, np.ndarray | None]:
    """The golden colour and depth words of ``scene``."""
    if scene.color_format == "rgba8":
        from PIL import Image

        color = np.asarray(Image.open(FF / f"{scene.name}.png").convert("RGBA"))
    else:
        color = np.load(FF / f"{scene.name}.color.npy")
    depth = np.load(FF / f"{scene.name}.depth.npy") if scene.depth else None
    return color, depth
