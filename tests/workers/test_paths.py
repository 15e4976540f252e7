"""Every fast path of the rasterizer gives the same bytes as the general path.

Each test renders one scene twice, the second time with a change that is
neutral for the image but forces a different path: an active occlusion query
(disables the closed-form depth winners), a never-taken KILL_IF (disables the
early depth test), a DDX term multiplied by zero (shades 2x2 quads instead of
single pixels), or a lowered/raised dense threshold (dense rectangles instead
of span lists).  The scenes have many overlapping triangles with exactly equal
depths, so ordering mistakes show.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS, make_target, read_rgba8, set_vertices

import workers.raster as raster
from gallium import pipe

FS_PLAIN = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
FS_KILL_NEVER = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 1.0, 1.0, 1.0}
  0: KILL_IF IMM[0]
  1: MOV OUT[0], IN[0]
  2: END
"""
FS_DDX_ZERO = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.0, 0.0, 0.0, 0.0}
  0: DDX TEMP[0], IN[0]
  1: MAD OUT[0], TEMP[0], IMM[0], IN[0]
  2: END
"""


def scene(seed: int, n: int, size: float, tie_levels: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.1, 1.1, (n, 1, 2))
    off = rng.normal(0, size, (n, 3, 2))
    xy = (c + off).reshape(-1, 2)
    # few distinct depth values: many exact ties between overlapping triangles
    z = np.repeat(rng.integers(0, tie_levels, n) / tie_levels * 1.6 - 0.8, 3)
    col = np.repeat(rng.uniform(0, 1, (n, 4)), 3, axis=0)
    return np.concatenate([xy, z[:, None], np.ones((3 * n, 1)), col], 1).astype(np.float32)


def render(screen, threaded, verts, fs_text, func, query=False, blend=False):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 96, 80, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs_text)))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=func)
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
        if blend:
            rt_blend = pipe.RtBlendState(
                blend_enable=True,
                rgb_func=pipe.BlendFunc.ADD,
                rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
                rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                alpha_func=pipe.BlendFunc.ADD,
                alpha_src_factor=pipe.BlendFactor.ONE,
                alpha_dst_factor=pipe.BlendFactor.ZERO,
            )
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[rt_blend])))
        clear_depth = 1.0 if func in (pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL) else 0.0
        ctx.clear(
            pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=clear_depth
        )
        set_vertices(ctx, verts)
        q = None
        if query:
            q = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
            ctx.begin_query(q)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
        if q is not None:
            ctx.end_query(q)
        ctx.flush()
        return read_rgba8(ctx, rt), ctx
    finally:
        ctx.destroy()


FUNCS = [pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GREATER,
         pipe.CompareFunc.GEQUAL]  # fmt: skip


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_closed_form_depth_winners_equal_sequential_layers(screen, func):
    verts = scene(1, 400, 0.12, tie_levels=4)
    fast, _ = render(screen, False, verts, FS_PLAIN, func)
    slow, _ = render(screen, False, verts, FS_PLAIN, func, query=True)
    assert (fast != [0, 0, 0, 255]).any(axis=-1).sum() > 3000  # a real scene
    assert np.array_equal(fast, slow)


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_early_depth_test_equals_late_depth_test(screen, func):
    verts = scene(2, 400, 0.12, tie_levels=3)
    early, _ = render(screen, False, verts, FS_PLAIN, func, blend=True)
    late, _ = render(screen, False, verts, FS_KILL_NEVER, func, blend=True)
    assert np.array_equal(early, late)


def test_quads_equal_single_pixels(screen):
    verts = scene(3, 300, 0.1, tie_levels=5)
    pixels, _ = render(screen, False, verts, FS_PLAIN, pipe.CompareFunc.LEQUAL, query=True)
    quads, _ = render(screen, False, verts, FS_DDX_ZERO, pipe.CompareFunc.LEQUAL, query=True)
    assert np.array_equal(pixels, quads)


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["all-dense", "all-sparse"])
def test_dense_rectangles_equal_span_lists(screen, monkeypatch, threshold):
    verts = scene(4, 60, 0.5, tie_levels=3)  # big triangles: dense by default
    default, _ = render(screen, False, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=True)
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", threshold)
    forced, _ = render(screen, True, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=True)
    assert np.array_equal(default, forced)
