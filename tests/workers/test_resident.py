"""Blended rectangles a band keeps unpacked between layers (fragment.ResidentColour).

Each test renders a sequence of blended layers with the band cache on and
off and requires the same bytes; the scenarios force every way a kept
rectangle must land: a write to an overlapping but different rectangle, an
unblended write, a masked (depth-tested) write, a clear, a timestamp, the
end of the band.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import get_screen
from helpers import OVER, PASS_FS, PASS_VS, bind_passthrough, make_target, read_rgba8, set_vertices

import workers.fragment as fragment
import workers.raster as raster
from gallium import pipe


def layer(rng, x0=-1.0, y0=-1.0, x1=1.0, y1=1.0, z=0.5):
    """A quad (two triangles) with random corner colours."""
    c = rng.uniform(0, 1, (4, 4)).astype(np.float32)
    c[:, 3] = rng.uniform(0.2, 0.8)
    p = [(x0, y0), (x1, y0), (x0, y1), (x1, y1)]
    v = [[x, y, z, 1.0, *c[i]] for i, (x, y) in enumerate(p)]
    return np.array([v[0], v[1], v[2], v[2], v[1], v[3]], np.float32)


def render(steps, *, fmt=pipe.Format.R8G8B8A8_UNORM, colormask=0xF, threaded=False, workers=2):
    """``steps``: ("draw", verts, blend, depth) | ("clear",) | ("timestamp",)."""
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, 150, 140, fmt=fmt, zs_format=pipe.Format.Z32_FLOAT)
        bind_passthrough(ctx, vs=PASS_VS, fs=PASS_FS)
        blended = dataclasses.replace(OVER, colormask=colormask)
        states = {
            True: ctx.create_blend_state(pipe.BlendState(rt=[blended])),
            False: ctx.create_blend_state(pipe.BlendState(rt=[pipe.RtBlendState()])),
        }
        dsa = {
            True: ctx.create_depth_stencil_alpha_state(
                pipe.DepthStencilAlphaState(
                    depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
                )
            ),
            False: ctx.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState()),
        }
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.2, 0.4, 0.6, 0.8), depth=1.0)
        queries = []
        for step in steps:
            if step[0] == "clear":
                ctx.clear(pipe.Clear.COLOR0, color=(0.9, 0.1, 0.5, 0.3))
            elif step[0] == "timestamp":
                q = ctx.create_query(pipe.QueryType.TIMESTAMP)
                ctx.end_query(q)
                queries.append(q)
            else:
                _, verts, blend, depth = step
                ctx.bind_blend_state(states[blend])
                ctx.bind_depth_stencil_alpha_state(dsa[depth])
                set_vertices(ctx, verts)
                ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        ctx.flush()
        for q in queries:
            ctx.get_query_result(q, True)
        return read_rgba8(ctx, rt), read_rgba8(ctx, zs)
    finally:
        ctx.destroy()


def scenario(name, seed=3):
    rng = np.random.default_rng(seed)
    full = [("draw", layer(rng), True, False) for _ in range(5)]
    if name == "layers":
        return full
    if name == "overlap":  # a smaller blended quad over part of the kept rectangles
        return [*full[:3], ("draw", layer(rng, -0.3, -0.5, 0.6, 0.9), True, False), *full[3:]]
    if name == "opaque":  # an unblended layer in between
        return [*full[:2], ("draw", layer(rng, -0.5, -1, 1, 0.4), False, False), *full[2:]]
    if name == "depth":  # depth-tested layers: masked writes
        return full[:2] + [("draw", layer(rng, z=0.3 + 0.1 * k), True, True) for k in range(3)]
    if name == "clear":
        return [*full[:3], ("clear",), *full[3:]]
    if name == "timestamp":
        return [*full[:2], ("timestamp",), *full[2:]]
    raise ValueError(name)


def both_ways(monkeypatch, steps, **kw):
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)  # small targets: dense rectangles
    hits = []
    real_take = fragment.ResidentColour.take

    def take(self, target, idx):
        got = real_take(self, target, idx)
        hits.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(fragment.ResidentColour, "take", take)
        kept = render(steps, **kw)
    with monkeypatch.context() as m:
        m.setattr(fragment, "resident_colour", lambda: None)
        plain = render(steps, **kw)
    return kept, plain, sum(hits)


@pytest.mark.parametrize("name", ["layers", "overlap", "opaque", "depth", "clear", "timestamp"])
def test_kept_rectangles_land_as_direct_stores(monkeypatch, name):
    kept, plain, hits = both_ways(monkeypatch, scenario(name))
    assert hits >= 2  # later layers found the earlier ones' bytes
    assert kept[0].tobytes() == plain[0].tobytes()
    assert kept[1].tobytes() == plain[1].tobytes()


@pytest.mark.parametrize(
    "kw",
    [
        dict(colormask=0x7),  # alpha not written: the kept alpha stays the old one
        dict(fmt=pipe.Format.R8G8B8X8_UNORM),  # padding byte
        dict(fmt=pipe.Format.B8G8R8A8_UNORM, threaded=True),
        dict(workers=1),
    ],
    ids=["colormask-rgb", "rgbx", "bgra-tc", "one-worker"],
)
def test_kept_rectangles_formats_and_masks(monkeypatch, kw):
    kept, plain, hits = both_ways(monkeypatch, scenario("overlap"), **kw)
    assert hits >= 2
    assert kept[0].tobytes() == plain[0].tobytes()


def test_nothing_is_kept_outside_a_band():
    assert fragment.resident_colour() is None


FS_ALL_CBUFS = """FRAG
PROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def test_one_surface_bound_twice_blends_twice_per_layer(monkeypatch):
    """Two colour buffers over one surface: each layer blends into it twice,
    and what one buffer keeps the other must see."""
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)

    def run(kept: bool) -> np.ndarray:
        with monkeypatch.context() as m:
            if not kept:
                m.setattr(fragment, "resident_colour", lambda: None)
            screen = get_screen(2)
            ctx = screen.context_create(threaded=False)
            try:
                rt, _ = make_target(screen, ctx, 130, 128)
                surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
                ctx.set_framebuffer_state(
                    pipe.FramebufferState(width=130, height=128, cbufs=[surf, surf])
                )
                bind_passthrough(ctx, vs=PASS_VS, fs=FS_ALL_CBUFS)
                ctx.bind_blend_state(
                    ctx.create_blend_state(
                        pipe.BlendState(independent_blend_enable=False, rt=[OVER])
                    )
                )
                ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.COLOR1, color=(0.2, 0.4, 0.6, 0.8))
                rng = np.random.default_rng(9)
                for _ in range(4):
                    set_vertices(ctx, layer(rng))
                    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
                ctx.flush()
                return read_rgba8(ctx, rt)
            finally:
                ctx.destroy()

    assert run(True).tobytes() == run(False).tobytes()
