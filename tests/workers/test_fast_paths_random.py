"""Random scenes through every rasterizer shortcut at once, against none of them.

The shortcuts -- quads shaded as one rectangle (_pair), separable texturing
(_dense_texpass), blended rectangles kept between layers (ResidentColour),
hidden 4x4 tiles (_hidden_tiles) -- each have their own tests; here random
scenes mix them (shared edges, layers, depth functions, blending, colour
masks, textures, odd sizes, several draws per frame) and every frame must
come out byte for byte as with all of them switched off.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import (
    ADD,
    FS_TEX,
    OVER,
    PASS_FS,
    PASS_VS,
    bind_passthrough,
    make_target,
    read_rgba8,
)

import gallium.numpipe.scene as scene_mod
import workers.band as band_mod
import workers.fragment as fragment
import workers.multistate as multistate
import workers.raster as raster
from gallium import pipe

FUNCS = [None, pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GREATER,
         pipe.CompareFunc.GEQUAL]  # fmt: skip


def quad(rng, x0, y0, x1, y1, z, colours, flip):
    p = [(x0, y0), (x1, y0), (x0, y1), (x1, y1)]
    v = [[x, y, z[i], 1.0, *colours[i]] for i, (x, y) in enumerate(p)]
    order = (0, 1, 3, 0, 3, 2) if flip else (0, 1, 2, 2, 1, 3)
    return [v[i] for i in order]


def random_draw(rng, textured: bool) -> np.ndarray:
    """A draw: quads (some full-screen, affine or not), big and small triangles."""
    verts: list = []
    for _ in range(int(rng.integers(1, 4))):
        kind = rng.integers(0, 4)
        if kind == 0 or textured:  # a quad, full-screen or not
            full = rng.uniform() < 0.5
            x0, y0 = (-1.0, -1.0) if full else rng.uniform(-1.0, 0.0, 2)
            x1, y1 = (1.0, 1.0) if full else rng.uniform(0.1, 1.0, 2)
            if textured:  # texture coordinates in the colour slot, axis-aligned
                s0, t0, s1, t1 = rng.uniform(-0.3, 1.3, 4)
                cols = [(s0, t0, 0, 1), (s1, t0, 0, 1), (s0, t1, 0, 1), (s1, t1, 0, 1)]
            elif rng.uniform() < 0.5:  # affine: both triangles' planes may be equal
                c = rng.uniform(0, 1, 4)
                cols = [c, c, c, c]
            else:
                cols = rng.uniform(0, 1, (4, 4))
                if rng.uniform() < 0.5:  # one alpha: a uniform blend factor
                    cols[:, 3] = rng.uniform(0, 1)
            z = (
                rng.uniform(0.1, 0.9, 4)
                if rng.uniform() < 0.5
                else np.full(4, rng.uniform(0.1, 0.9))
            )
            verts += quad(rng, x0, y0, x1, y1, z, cols, bool(rng.integers(0, 2)))
        elif kind == 1:  # big triangles, some beyond the viewport (clipped in two)
            for _ in range(int(rng.integers(1, 4))):
                p = rng.uniform(-2.5, 2.5, (3, 2))
                for i in range(3):
                    verts.append([*p[i], rng.uniform(0.1, 0.9), 1.0, *rng.uniform(0, 1, 4)])
        else:  # many small triangles with few depths (ties)
            n = int(rng.integers(50, 300))
            c = rng.uniform(-1, 1, (n, 1, 2)) + rng.normal(0, 0.2, (n, 3, 2))
            z = np.repeat(rng.integers(1, 5, n) / 5.0, 3)
            col = np.repeat(rng.uniform(0, 1, (n, 4)), 3, axis=0)
            xy = c.reshape(-1, 2)
            for i in range(3 * n):
                verts.append([*xy[i], z[i], 1.0, *col[i]])
    out = np.array(verts, np.float32)
    if rng.uniform() < 0.15:  # a non-finite attribute or depth somewhere
        bad = rng.integers(0, len(out), 2)
        out[bad[0], 4 + int(rng.integers(0, 4))] = np.nan
        out[bad[1], 2] = [np.inf, -np.inf, np.nan][int(rng.integers(0, 3))]
    return out


def render(seed: int) -> tuple[bytes, bytes]:
    rng = np.random.default_rng(seed)
    screen = get_screen(int(rng.integers(1, 3)))
    ctx = screen.context_create(threaded=bool(rng.integers(0, 2)))
    try:
        w, h = int(rng.integers(60, 200)), int(rng.integers(60, 200))
        rt, zs = make_target(screen, ctx, w, h, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        tex = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=pipe.Format.R8G8B8A8_UNORM,
                width0=8,
                height0=8,
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        texels = rng.integers(0, 256, (8, 8, 4), dtype=np.uint8)
        ctx.texture_subdata(
            tex, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 8, 8, 1), texels, 32, 256
        )
        linear = pipe.TexFilter.LINEAR if rng.uniform() < 0.7 else pipe.TexFilter.NEAREST
        samp = pipe.SamplerState(
            min_img_filter=linear,
            mag_img_filter=linear,
            wrap_s=pipe.TexWrap.CLAMP_TO_EDGE,
            wrap_t=pipe.TexWrap.REPEAT,
        )
        ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [ctx.create_sampler_state(samp)])
        view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=tex.format))
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
        ctx.clear(
            pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL,
            color=tuple(rng.uniform(0, 1, 4)),
            depth=float(rng.choice([0.0, 0.5, 0.9, 1.0])),
            stencil=0x33,
        )
        for _ in range(int(rng.integers(1, 4))):
            textured = rng.uniform() < 0.3
            bind_passthrough(ctx, vs=PASS_VS, fs=FS_TEX if textured else PASS_FS)
            blend = [None, None, OVER, ADD][int(rng.integers(0, 4))]
            func = FUNCS[int(rng.integers(0, len(FUNCS)))]
            if blend is not None and rng.uniform() < 0.5:
                func = None  # blended layers without a depth test: kept rectangles
            depth = pipe.DepthState(
                enabled=func is not None,
                writemask=bool(rng.uniform() < 0.8),
                func=func or pipe.CompareFunc.ALWAYS,
            )
            ctx.bind_depth_stencil_alpha_state(
                ctx.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState(depth=depth))
            )
            mask = 0xF if rng.uniform() < 0.7 else int(rng.integers(1, 16))
            rt_blend = pipe.RtBlendState(colormask=mask) if blend is None else blend
            if blend is not None:
                rt_blend = pipe.RtBlendState(**{**_fields(blend), "colormask": mask})
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[rt_blend])))
            verts = random_draw(rng, textured)
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts)])
            # layers: the same draw more than once (kept rectangles)
            for _ in range(int(rng.integers(1, 3))):
                ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
            if rng.uniform() < 0.2:
                ctx.clear(pipe.Clear.COLOR0, color=(0.5, 0.25, 0.75, 1.0))
        ctx.flush()
        return read_rgba8(ctx, rt).tobytes(), read_rgba8(ctx, zs).tobytes()
    finally:
        ctx.destroy()


def _fields(rt: pipe.RtBlendState) -> dict:
    import dataclasses

    return {f.name: getattr(rt, f.name) for f in dataclasses.fields(rt)}


@pytest.mark.parametrize("seed", range(24))
def test_shortcuts_change_no_byte(monkeypatch, seed):
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 2048)  # small targets still go dense
    fast = render(seed)
    with monkeypatch.context() as m:
        m.setattr(raster, "_pair", lambda ts, t: None)
        m.setattr(raster, "_dense_texpass", lambda *a: False)
        m.setattr(raster, "_hidden_tiles", lambda *a: None)
        m.setattr(fragment, "resident_colour", lambda: None)
        m.setattr(band_mod, "DEFER_CLEARS", False)
        m.setattr(multistate, "_all_at_once", lambda *a: False)
        m.setattr(scene_mod, "MULTISTATE", False)
        plain = render(seed)
    assert fast[0] == plain[0]
    assert fast[1] == plain[1]
