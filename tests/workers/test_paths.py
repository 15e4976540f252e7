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

import math

import numpy as np
import pytest
from helpers import FS_MUL_ONE, PASS_VS, make_target, read_rgba8, set_vertices

import gallium.numpipe.scene as scene_mod
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


def render(screen, threaded, verts, fs_text, func, query=False, blend=False, width=96):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, width, 80, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
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


@pytest.mark.parametrize("width", [96, 101], ids=["rows-packed", "rows-padded"])
@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_closed_form_depth_winners_equal_sequential_layers(screen, func, width):
    # 101 pixels of 4 bytes: the depth rows are padded to 64 bytes
    verts = scene(1, 400, 0.12, tie_levels=4)
    fast, _ = render(screen, False, verts, FS_PLAIN, func, width=width)
    slow, _ = render(screen, False, verts, FS_PLAIN, func, query=True, width=width)
    assert (fast != [0, 0, 0, 255]).any(axis=-1).sum() > 3000  # a real scene
    assert np.array_equal(fast, slow)


@pytest.mark.parametrize("ratio", [0.0, math.inf], ids=["run-wide", "per-batch"])
def test_closed_form_depth_winners_take_padded_rows(screen, monkeypatch, ratio):
    calls = []
    per_batch = raster._winners_one_pass
    run_wide = raster._RunDepth.resolve
    monkeypatch.setattr(raster, "_winners_one_pass", lambda *a: calls.append(0) or per_batch(*a))
    monkeypatch.setattr(raster._RunDepth, "resolve", lambda *a: calls.append(1) or run_wide(*a))
    monkeypatch.setattr(raster, "RUN_DEPTH_MIN_RATIO", ratio)
    render(screen, False, scene(1, 400, 0.12, tie_levels=4), FS_PLAIN, FUNCS[0], width=101)
    assert set(calls) == {int(ratio == 0.0)}  # not the sequential fallback


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_early_depth_test_equals_late_depth_test(screen, func):
    verts = scene(2, 400, 0.12, tie_levels=3)
    early, _ = render(screen, False, verts, FS_MUL_ONE, func, blend=True)
    late, _ = render(screen, False, verts, FS_KILL_NEVER, func, blend=True)
    assert np.array_equal(early, late)


def test_quads_equal_single_pixels(screen):
    verts = scene(3, 300, 0.1, tie_levels=5)
    pixels, _ = render(screen, False, verts, FS_MUL_ONE, pipe.CompareFunc.LEQUAL, query=True)
    quads, _ = render(screen, False, verts, FS_DDX_ZERO, pipe.CompareFunc.LEQUAL, query=True)
    assert np.array_equal(pixels, quads)


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["all-dense", "all-sparse"])
def test_dense_rectangles_equal_span_lists(screen, monkeypatch, threshold):
    verts = scene(4, 60, 0.5, tie_levels=3)  # big triangles: dense by default
    default, _ = render(screen, False, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=True)
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", threshold)
    forced, _ = render(screen, True, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=True)
    assert np.array_equal(default, forced)


def _many_draws(screen, verts, fs_texts, blend_colors, blend_state=None):
    """One draw per triangle, FS i % len(fs_texts), blend colour i % len(...)."""
    ctx = screen.context_create(threaded=False)
    try:
        rt, _ = make_target(screen, ctx, 96, 80, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
        fss = [ctx.create_fs_state(pipe.ShaderState(tokens=t)) for t in fs_texts]
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
        if blend_state is not None:
            ctx.bind_blend_state(ctx.create_blend_state(blend_state))
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=1.0)
        set_vertices(ctx, verts)
        for i in range(len(verts) // 3):
            ctx.bind_fs_state(fss[i % len(fss)])
            ctx.set_blend_color(pipe.BlendColor(color=blend_colors[i % len(blend_colors)]))
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=3 * i, count=3))
        ctx.flush()
        # raster commands, and draws that joined the previous draw's command
        return read_rgba8(ctx, rt), (ctx.stats["draw_commands"], ctx.stats["merged_draws"])
    finally:
        ctx.destroy()


# The same fragment shader twice, as distinct kernels (an unused immediate differs).
FS_PLAIN_TWIN = FS_PLAIN.replace(
    "DCL OUT[0], COLOR", "DCL OUT[0], COLOR\nIMM[0] FLT32 {7, 7, 7, 7}"
)


def test_draws_that_shade_alike_are_merged_and_render_as_separate_commands(screen, monkeypatch):
    verts = scene(5, 240, 0.15, tie_levels=4).reshape(-1, 3, 8)
    # keep triangles inside the viewport and not degenerate: every draw draws
    xy = verts[:, :, :2].astype(np.float64)
    u, v = xy[:, 1] - xy[:, 0], xy[:, 2] - xy[:, 0]
    area = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    verts = verts[(np.abs(xy) < 0.95).all(axis=(1, 2)) & (np.abs(area) > 1e-3)].reshape(-1, 8)
    ntri = len(verts) // 3
    colors = [(0.1, 0.2, 0.3, 0.4), (0.9, 0.8, 0.7, 0.6)]  # unused: blending is off
    merged, (commands, n_merged) = _many_draws(screen, verts, [FS_PLAIN], colors)
    # alternating kernels: one multi-state command (workers/multistate.py)
    multi, (commands2, n_multi) = _many_draws(screen, verts, [FS_PLAIN, FS_PLAIN_TWIN], colors)
    monkeypatch.setattr(scene_mod, "MULTISTATE", False)
    separate, (commands3, n_separate) = _many_draws(
        screen, verts, [FS_PLAIN, FS_PLAIN_TWIN], colors
    )
    assert (commands, n_merged) == (1, ntri - 1)  # every draw joined the first one's command
    assert (commands2, n_multi) == (1, ntri - 1)
    assert (commands3, n_separate) == (ntri, 0)  # one command per draw
    assert ntri > 100
    assert (merged != [0, 0, 0, 255]).any(axis=-1).sum() > 3000
    assert np.array_equal(merged, multi)
    assert np.array_equal(merged, separate)


def test_a_used_blend_colour_keeps_draws_apart(screen, monkeypatch):
    quad = np.array(
        [[-1, -1, 0, 1, 1, 1, 1, 1], [1, -1, 0, 1, 1, 1, 1, 1], [-1, 1, 0, 1, 1, 1, 1, 1]],
        np.float32,
    )
    verts = np.concatenate([quad, quad * [-1, -1, 1, 1, 1, 1, 1, 1]]).astype(np.float32)
    blend = pipe.BlendState(
        rt=[
            pipe.RtBlendState(
                blend_enable=True,
                rgb_func=pipe.BlendFunc.ADD,
                rgb_src_factor=pipe.BlendFactor.CONST_COLOR,
                rgb_dst_factor=pipe.BlendFactor.ZERO,
                alpha_func=pipe.BlendFunc.ADD,
                alpha_src_factor=pipe.BlendFactor.ONE,
                alpha_dst_factor=pipe.BlendFactor.ZERO,
            )
        ]
    )
    colors = [(1.0, 0.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)]
    monkeypatch.setattr(scene_mod, "MULTISTATE", False)
    img, (commands, n_merged) = _many_draws(screen, verts, [FS_PLAIN], colors, blend)
    assert (commands, n_merged) == (2, 0)
    assert img[5, 5].tolist() == [255, 0, 0, 255]  # first triangle: the first colour
    assert img[75, 90].tolist() == [0, 0, 255, 255]  # second: the second colour


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_one_pass_depth_winners_equal_two_passes(func):
    """The packed depth-and-order key finds the same winner per pixel as the
    two-pass resolution: many fragments per pixel, ties among them and with
    the buffer."""
    rng = np.random.default_rng(int(func))
    n, pixels = 5000, 300
    key = rng.integers(0, pixels, n)
    zq = rng.integers(10, 14, n).astype(np.int64)  # few depths: many ties
    stored_px = rng.integers(9, 15, pixels).astype(np.int64)
    stored = stored_px[key]
    use_min = func in (pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL)
    take_last = func in (pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GEQUAL)
    best = np.full(pixels, raster._UNSET, np.int64)
    one = raster._winners_one_pass(best, key, zq, stored, use_min, take_last, n)
    # the scratch array is not cleared between users: leftovers must not matter
    best[:] = rng.integers(-(1 << 60), 1 << 60, pixels)
    two = raster._winners_two_passes(best, key, zq, stored, use_min, take_last, n)
    best[:] = rng.integers(-(1 << 60), 1 << 60, pixels)
    assert raster._winners_one_pass(best, key, zq, stored, use_min, take_last, n).tolist() == (
        one.tolist()
    )
    assert one.tolist() == two.tolist()
    # and against a sequential depth test, fragment by fragment
    depth = stored_px.copy()
    owner = np.full(pixels, -1)
    passes = {
        pipe.CompareFunc.LESS: np.less,
        pipe.CompareFunc.LEQUAL: np.less_equal,
        pipe.CompareFunc.GREATER: np.greater,
        pipe.CompareFunc.GEQUAL: np.greater_equal,
    }[func]
    for i in range(n):
        if passes(zq[i], depth[key[i]]):
            depth[key[i]] = zq[i]
            owner[key[i]] = i
    assert sorted(one.tolist()) == sorted(owner[owner >= 0].tolist())
    assert len(one) > 50


def test_flat_channels_of_pixel_lists_are_fills(screen, monkeypatch):
    """A channel that is one constant over every triangle of a draw (alpha 1,
    here also a shared blue) is stored as a fill on the pixel-list path;
    the bytes are those of the per-pixel planes, blended or not."""
    from workers.fragment import flat_unorm8

    verts = scene(7, 60, 0.08, 5)
    verts[:, 6] = 0.25  # blue: one value on every vertex
    verts[:, 7] = 1.0  # alpha
    seen = []
    real = raster.flat_unorm8

    def spy(cols):
        seen.append(real(cols))
        return seen[-1]

    monkeypatch.setattr(raster, "flat_unorm8", spy)
    for blend in (False, True):
        fast, _ = render(screen, False, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=blend)
        with monkeypatch.context() as m:
            m.setattr(raster, "flat_unorm8", lambda cols: (None,) * 4)
            plain, _ = render(screen, False, verts, FS_PLAIN, pipe.CompareFunc.LESS, blend=blend)
        assert fast.tobytes() == plain.tobytes()
    assert seen and all(f == (None, None, 64, 255) for f in seen)  # 0.25 * 255 + 0.5 -> 64
    # gradients of -0.0 count as flat; a NaN, a second value or a slope do not
    cols = np.zeros((4, 3, 3), np.float32)
    cols[0, 0] = 10.5
    cols[1, 0], cols[1, 1] = 10.5, -0.0
    cols[2, 0] = [10.5, np.nan, 10.5]
    cols[3, 0], cols[3, 2] = 300.0, [0.0, 1e-7, 0.0]
    assert flat_unorm8(cols) == (10, 10, None, None)
    cols[3, 2] = 0.0
    assert flat_unorm8(cols) == (10, 10, None, 255)  # clamped to 255.99, truncated
