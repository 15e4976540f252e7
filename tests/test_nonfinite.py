"""Non-finite and extreme vertex values under ``warnings.simplefilter("error")``.

Infinite, NaN and zero-w vertices are legal input: no numpy warning may
leave the driver (gallium/util/ieee.py), on the application's thread
(vertex pipeline, setup, num_threads=0 rasterization) or in a worker (a
warning there would become a device reset).  What is drawn is exact: a
primitive with a non-finite position is dropped and the others are drawn as
if it were absent; the rest draws the same bytes as with warnings ignored.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import get_screen
from helpers import FS_MUL_ONE, FS_TEX, OVER, bind_passthrough, make_target, read_rgba8

from gallium import pipe

W = H = 24
INF, NAN = np.inf, np.nan

# two triangles, the first one's vertex 0 is the one made bad
TRIS = np.array(
    [
        [-0.8, -0.8, 0.5, 1, 0.2, 0.3, 0.4, 1],
        [0.6, -0.7, 0.5, 1, 0.9, 0.6, 0.7, 1],
        [-0.1, 0.7, 0.5, 1, 0.1, 0.9, 0.2, 1],
        [0.1, 0.2, 0.25, 1, 0.7, 0.2, 0.5, 1],
        [0.9, 0.3, 0.25, 1, 0.3, 0.8, 0.1, 1],
        [0.5, 0.95, 0.25, 1, 0.6, 0.4, 0.9, 0.5],
    ],
    np.float32,
)


def _frame(screen, verts, mode, *, fs=None, float_target=False, drop_first=False, filt="error"):
    """Draw ``verts`` with ``mode`` under ``warnings.simplefilter(filt)``; the
    image bytes.  ``drop_first``: draw the same minus the first primitive."""
    fmt = pipe.Format.R32G32B32A32_FLOAT if float_target else pipe.Format.R8G8B8A8_UNORM
    with warnings.catch_warnings():
        warnings.simplefilter(filt)
        ctx = screen.context_create(threaded=False)
        try:
            rt, _ = make_target(screen, ctx, W, H, fmt=fmt, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
            bind_passthrough(ctx, fs=fs or FS_MUL_ONE)
            dsa = pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
            )
            ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
            ctx.bind_rasterizer_state(
                ctx.create_rasterizer_state(pipe.RasterizerState(point_size=3.0, line_width=2.0))
            )
            if float_target:
                ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[OVER])))
            if fs is FS_TEX:
                _bind_texture(screen, ctx)
            ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0.1, 0, 0.2, 1), depth=1)
            draws = _draws(mode, len(verts), drop_first)
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts)])
            for start, count, m in draws:
                ctx.draw_vbo(pipe.DrawInfo(mode=m, start=start, count=count))
            ctx.flush()
            image = read_rgba8(ctx, rt)
            assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        finally:
            ctx.destroy()
    return image


def _draws(mode, n, drop_first):
    if not drop_first:
        return [(0, n, mode)]
    if mode == pipe.Prim.TRIANGLES:
        return [(3, n - 3, mode)]
    if mode == pipe.Prim.POINTS:
        return [(1, n - 1, mode)]
    # a line loop of three vertices without vertex 0: the segment 1-2 only
    assert mode == pipe.Prim.LINE_LOOP and n == 3
    return [(1, 2, pipe.Prim.LINES)]


def _bind_texture(screen, ctx):
    tex = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=8,
            height0=8,
            last_level=3,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
    )
    rng = np.random.default_rng(5)
    for level in range(4):
        size = 8 >> level
        texels = rng.integers(0, 256, (size, size, 4), np.uint8)
        ctx.texture_subdata(tex, level, 0, pipe.Box(0, 0, 0, size, size, 1), texels, size * 4, 0)
    view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    sampler = pipe.SamplerState(
        min_img_filter=pipe.TexFilter.LINEAR,
        mag_img_filter=pipe.TexFilter.LINEAR,
        min_mip_filter=pipe.MipFilter.LINEAR,
        max_lod=10.0,
    )
    ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [ctx.create_sampler_state(sampler)])


def _verts(mode, comp, value):
    v = TRIS.copy() if mode == pipe.Prim.TRIANGLES else TRIS[:3].copy()
    v[0, comp] = value
    return v


MODES = [pipe.Prim.TRIANGLES, pipe.Prim.POINTS, pipe.Prim.LINE_LOOP]


@pytest.mark.parametrize("threads", [0, 2])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("value", [INF, -INF, NAN])
@pytest.mark.parametrize("comp", [0, 1, 2, 3], ids="xyzw".__getitem__)
def test_a_nonfinite_position_drops_its_primitive(threads, mode, value, comp):
    screen = get_screen(threads)
    got = _frame(screen, _verts(mode, comp, value), mode)
    want = _frame(screen, _verts(mode, comp, 0.5), mode, drop_first=True)
    assert got.any(axis=2).sum() == want.any(axis=2).sum() > 0
    assert np.array_equal(got, want)


EXTREME = [
    ("w=0", 3, 0.0),
    ("w=denormal", 3, 1e-45),
    ("w=-1", 3, -1.0),
    ("w=1e38", 3, 1e38),
    ("x=1e38", 0, 1e38),
    ("y=-1e38", 1, -1e38),
    ("z=1e38", 2, 1e38),
    ("z=-0", 2, -0.0),
]
ATTRIBUTES = [
    ("r=inf", 4, INF),
    ("g=-inf", 5, -INF),
    ("b=nan", 6, NAN),
    ("a=1e38", 7, 1e38),
    ("a=nan", 7, NAN),
]


@pytest.mark.parametrize("threads", [0, 2])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize(("name", "comp", "value"), EXTREME + ATTRIBUTES, ids=lambda x: x)
def test_extreme_values_draw_as_with_warnings_ignored(threads, mode, name, comp, value):
    screen = get_screen(threads)
    verts = _verts(mode, comp, value)
    got = _frame(screen, verts, mode)
    assert np.array_equal(got, _frame(screen, verts, mode, filt="ignore"))
    if comp >= 4:  # a colour does not move a pixel: the same coverage as finite colours
        normal = _frame(screen, _verts(mode, comp, 0.5), mode)
        assert np.array_equal(got.any(axis=2), normal.any(axis=2))


@pytest.mark.parametrize("threads", [0, 2])
@pytest.mark.parametrize(("name", "comp", "value"), ATTRIBUTES + EXTREME[:2], ids=lambda x: x)
@pytest.mark.parametrize("kind", ["texture", "float-blend"])
def test_textures_and_blending_take_nonfinite_values(threads, name, comp, value, kind):
    """Texture coordinates inf/NaN (LOD from NaN derivatives, wrap of inf) and
    inf/NaN colours blended into a float target."""
    screen = get_screen(threads)
    verts = _verts(pipe.Prim.TRIANGLES, comp, value)
    kw = {"fs": FS_TEX} if kind == "texture" else {"float_target": True}
    got = _frame(screen, verts, pipe.Prim.TRIANGLES, **kw)
    assert np.array_equal(got, _frame(screen, verts, pipe.Prim.TRIANGLES, filt="ignore", **kw))
