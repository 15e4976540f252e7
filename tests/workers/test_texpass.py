"""One-TEX fragment shaders over axis-aligned rectangles (sampler.separable_texels).

The separable sampler filters a grid of columns x rows at once; it must give
every lane the bytes the per-lane sampler gives it.  The first part compares
the two directly on hand-made textures (filters, wraps, sizes, formats, view
swizzles, coordinates on and beyond the edges) and checks where it declines.
The second renders textured rectangles with the path on and off (same bytes
of colour and depth) and checks when the rasterizer takes it.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import (
    FS_TEX,
    OVER,
    PASS_VS,
    bind_depth_test,
    bind_passthrough,
    draw_and_read,
    make_target,
    texture_bindings,
)

import workers.raster as raster
from gallium import pipe
from gallium.numpipe.sampler import TextureBindings, separable_texels
from gallium.tgsi.texture_api import TexRequest
from workers.fragment import TexelWords, unorm8_bits

F32 = np.float32
T2D = pipe.TextureTarget.TEXTURE_2D
RGBA8 = pipe.Format.R8G8B8A8_UNORM
NEAREST, LINEAR = pipe.TexFilter.NEAREST, pipe.TexFilter.LINEAR
W = pipe.TexWrap
MIP = pipe.MipFilter


def bindings(img, *, fmt=RGBA8, levels=None, view=None, **sampler) -> TextureBindings:
    """A captured 2D texture (img, and levels: (h, w, 4) uint8) and one sampler
    (LINEAR unless overridden, CLAMP_TO_EDGE, no mipmapping)."""
    filters = {"min_img_filter": LINEAR, "mag_img_filter": LINEAR, **sampler}
    return texture_bindings(T2D, fmt, [lv[None] for lv in (levels or [img])], view=view, **filters)


def per_lane(tb, s_cols, t_rows) -> np.ndarray:
    """The per-lane sampler over the grid: (4, h, w) float32."""
    h, w = t_rows.size, s_cols.size
    s = np.tile(s_cols, h)
    t = np.repeat(t_rows, w)
    out = tb.execute(TexRequest(op="sample", unit=0, sampler=0, target="2D", n=h * w, s=s, t=t))
    return np.stack([np.asarray(c, F32) for c in out]).reshape(4, h, w)


def texture(h, w, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)


def coords(n, lo, hi, seed):
    """n coordinates from lo to hi, some exactly on texel centres and edges."""
    rng = np.random.default_rng(seed)
    v = np.linspace(lo, hi, n, dtype=F32)
    v[::7] = rng.uniform(lo, hi, v[::7].size).astype(F32)
    return v


CASES = [
    dict(size=(16, 16)),
    dict(size=(16, 16), min_img_filter=NEAREST, mag_img_filter=NEAREST),
    dict(size=(8, 32), wrap_s=W.REPEAT, wrap_t=W.REPEAT),
    dict(size=(8, 32), wrap_s=W.REPEAT, wrap_t=W.CLAMP_TO_EDGE, min_img_filter=NEAREST,
         mag_img_filter=NEAREST),
    dict(size=(5, 7)),  # non-power-of-two, clamped
    dict(size=(1, 1)),
    dict(size=(64, 4), view=pipe.SamplerViewTemplate(format=pipe.Format.B8G8R8A8_UNORM)),
    dict(size=(16, 16), view=pipe.SamplerViewTemplate(
        format=RGBA8, swizzle_r=pipe.Swizzle.ONE, swizzle_g=pipe.Swizzle.ZERO,
        swizzle_b=pipe.Swizzle.W, swizzle_a=pipe.Swizzle.X)),
    dict(size=(16, 16), fmt=pipe.Format.R8G8B8X8_UNORM),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize(
    "span", [(0.0, 1.0), (-0.3, 1.7), (0.2, 0.21)], ids=["unit", "beyond", "zoom"]
)
def test_separable_texels_equal_the_per_lane_sampler(case, span):
    case = dict(case)
    h, w = case.pop("size")
    tb = bindings(texture(h, w), **case)
    s_cols = coords(37, *span, seed=1)
    t_rows = coords(23, span[0] - 0.05, span[1] + 0.05, seed=2)
    res = separable_texels(tb, 0, 0, s_cols, t_rows)
    assert res is not None
    words, source = res
    expect = per_lane(tb, s_cols, t_rows)
    got = TexelWords(words, source)
    # the floats the per-lane path returns, bit for bit ...
    assert got.stack().tobytes() == expect.tobytes()
    # ... and the UNORM8 bytes a store makes of them
    bits = unorm8_bits(expect).astype(np.uint16) & 0xFF
    assert np.array_equal(got.unorm8_stack(), bits)


def test_unorm8_round_trip_of_every_byte():
    b = np.arange(256, dtype=np.uint8)
    floats = (b * F32(1.0 / 255.0)).astype(F32)
    assert np.array_equal(unorm8_bits(floats[None, :])[0] & 0xFF, b)


@pytest.mark.parametrize(
    "case",
    [
        dict(min_img_filter=NEAREST),  # min != mag: the LOD decides
        dict(wrap_s=W.MIRROR_REPEAT),
        dict(wrap_t=W.REPEAT, size=(6, 16)),  # non-power-of-two REPEAT
        dict(min_mip_filter=MIP.LINEAR, mips=True),
    ],
    ids=["min-mag", "mirror", "npot-repeat", "mipmapped"],
)
def test_separable_texels_decline(case):
    case = dict(case)
    h, w = case.pop("size", (16, 16))
    levels = None
    if case.pop("mips", False):
        levels = [texture(16, 16), texture(8, 8, 1), texture(4, 4, 2)]
    tb = bindings(texture(h, w), levels=levels, **case)
    assert separable_texels(tb, 0, 0, coords(8, 0, 1, 1), coords(8, 0, 1, 2)) is None


# ----------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------

# the same sample through a temporary: not a one-TEX shader
FS_TEX_TEMP = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
DCL TEMP[0]
  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D
  1: MOV OUT[0], TEMP[0]
  2: END
"""


def quad(corners, st, z=(0.5, 0.5, 0.5, 0.5), w=(1, 1, 1, 1)):
    """Two triangles over corners (x, y) with texture coordinates st (clip w applied)."""
    v = [
        [x * wi, y * wi, zi * wi, wi, s, t, 0, 1]
        for (x, y), (s, t), zi, wi in zip(corners, st, z, w)
    ]
    return np.array([v[0], v[1], v[2], v[2], v[1], v[3]], np.float32)


AXIS = quad(
    [(-1, -1), (1, -1), (-1, 1), (1, 1)], [(-0.2, 1.1), (1.3, 1.1), (-0.2, 0.0), (1.3, 0.0)]
)


def render(verts, *, w=96, h=80, fs=FS_TEX, fmt=RGBA8, blend=None, depth=False, threaded=False,
           tex_size=(8, 8), **sampler):  # fmt: skip
    screen = get_screen(2)
    tb = texture(*tex_size, seed=5)
    ctx = screen.context_create(threaded=threaded)
    try:
        zs_fmt = pipe.Format.Z32_FLOAT if depth else None
        rt, zs = make_target(screen, ctx, w, h, fmt=fmt, zs_format=zs_fmt)
        tex = screen.resource_create(
            pipe.ResourceTemplate(
                target=T2D,
                format=RGBA8,
                width0=tex_size[1],
                height0=tex_size[0],
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        box = pipe.Box(0, 0, 0, tex_size[1], tex_size[0], 1)
        ctx.texture_subdata(tex, 0, pipe.Transfer.WRITE, box, tb, tex_size[1] * 4, tb.nbytes)
        view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=RGBA8))
        state = dict(min_img_filter=LINEAR, mag_img_filter=LINEAR, min_mip_filter=MIP.NONE)
        state.update(sampler)
        ctx.bind_sampler_states(
            pipe.ShaderType.FRAGMENT, 0, [ctx.create_sampler_state(pipe.SamplerState(**state))]
        )
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
        bind_passthrough(ctx, vs=PASS_VS, fs=fs)
        if blend is not None:
            ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[blend])))
        if depth:
            bind_depth_test(ctx)
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.1, 0.2, 0.3, 0.4), depth=0.7)
        return draw_and_read(ctx, verts, rt, zs)
    finally:
        ctx.destroy()


@pytest.fixture
def counted(monkeypatch):
    """Counts the separable samples taken; everything dense, so small targets take the path."""
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 0)
    calls = []
    real = raster.separable_texels

    def spy(*args):
        res = real(*args)
        calls.append(res is not None)
        return res

    monkeypatch.setattr(raster, "separable_texels", spy)
    return calls


def both_ways(monkeypatch, calls, verts, **kw):
    """(bytes with the path, bytes without, separable samples taken)."""
    on = render(verts, **kw)
    taken = sum(calls)
    with monkeypatch.context() as m:
        m.setattr(raster, "_dense_texpass", lambda *a: False)
        off = render(verts, **kw)
    return on, off, taken


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(min_img_filter=NEAREST, mag_img_filter=NEAREST, wrap_s=W.REPEAT, wrap_t=W.REPEAT),
        dict(blend=OVER, depth=True),
        dict(fmt=pipe.Format.B8G8R8A8_UNORM),  # other byte order: through the byte stacks
        dict(fmt=pipe.Format.R32G32B32A32_FLOAT),
        dict(
            threaded=True,
            tex_size=(5, 7),
            w=128,
            h=64,
            wrap_s=W.CLAMP_TO_EDGE,
            wrap_t=W.CLAMP_TO_EDGE,
        ),
    ],
    ids=["rgba8", "nearest-repeat", "blend-depth", "bgra8", "float32", "tc-npot"],
)
def test_axis_aligned_textured_quad_same_bytes(monkeypatch, counted, kw):
    on, off, taken = both_ways(monkeypatch, counted, AXIS, **kw)
    assert taken >= 1
    for a, b in zip(on, off):
        assert a.tobytes() == b.tobytes()


def test_scissor_and_depth_with_a_sloped_plane(monkeypatch, counted):
    verts = quad(
        [(-0.9, -0.8), (0.7, -0.8), (-0.9, 0.95), (0.7, 0.95)],
        [(0, 0), (1, 0), (0, 1), (1, 1)],
        z=(0.1, 0.9, 0.3, 0.6),
    )
    on, off, taken = both_ways(monkeypatch, counted, verts, depth=True, w=101, h=77)
    assert taken >= 2
    for a, b in zip(on, off):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    "verts,kw",
    [
        # rotated texture coordinates: s varies with y
        (quad([(-1, -1), (1, -1), (-1, 1), (1, 1)], [(0, 0), (0, 1), (1, 0), (1, 1)]), {}),
        # perspective: w differs per vertex
        (
            quad(
                [(-1, -1), (1, -1), (-1, 1), (1, 1)],
                [(0, 0), (1, 0), (0, 1), (1, 1)],
                w=(1, 2, 1, 2),
            ),
            {},
        ),
        (AXIS, dict(fs=FS_TEX_TEMP)),
        (AXIS, dict(min_img_filter=NEAREST)),  # min != mag: the sampler declines
    ],
    ids=["rotated", "perspective", "not-one-tex", "min-mag"],
)
def test_other_textured_quads_take_the_kernel(monkeypatch, counted, verts, kw):
    on, off, taken = both_ways(monkeypatch, counted, verts, **kw)
    assert taken == 0
    for a, b in zip(on, off):
        assert a.tobytes() == b.tobytes()
