"""Multisampling: caps, resources, per-sample coverage and shading, sample
masks, multisample textures, blits between sample counts.

Expected values are worked out from the sample positions (llvmpipe's 4x:
(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875); the
standard 2x: (0.75, 0.75), (0.25, 0.25)).  tests/test_msaa_reference.py
compares whole scenes with llvmpipe.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS

import gallium
from gallium import pipe

RGBA8 = pipe.Format.R8G8B8A8_UNORM
T2D = pipe.TextureTarget.TEXTURE_2D
RT = pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW
POS4 = [(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)]

FS_COLOR = """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def ms_texture(screen, w, h, samples=4, fmt=RGBA8, bind=RT, target=T2D, layers=1):
    return screen.resource_create(
        pipe.ResourceTemplate(target=target, format=fmt, width0=w, height0=h,
                              array_size=layers, nr_samples=samples, bind=bind)
    )  # fmt: skip


def samples_of(ctx, res, dtype=np.uint32):
    """Every sample plane of level 0 layer 0, after the queued work."""
    ctx.flush().wait()
    n = max(1, res.nr_samples)
    return np.stack([res.typed_view(dtype, 1, sample=s).copy() for s in range(n)])


def setup(ctx, res, fs=FS_COLOR, multisample=True, zs=None):
    w, h = res.width0, res.height0
    surf = ctx.create_surface(res, pipe.SurfaceTemplate(format=res.format))
    zsurf = None if zs is None else ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[surf], zsbuf=zsurf))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
    )
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(pipe.RasterizerState(multisample=multisample))
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )


def draw_tri(ctx, w, h, pts, colour=(1.0, 0.0, 0.0, 1.0)):
    """One triangle, its corners in pixels."""
    v = np.array([[2 * x / w - 1, 2 * y / h - 1, 0.5, 1, *colour] for x, y in pts], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))


def draw_rect(ctx, w, h, x0, y0, x1, y1, colour=(1.0, 0.0, 0.0, 1.0)):
    """Two triangles covering window x0..x1, y0..y1 (pixels, may be fractional)."""

    def ndc(x, y):
        return [2 * x / w - 1, 2 * y / h - 1, 0.5, 1, *colour]

    v = np.array([ndc(x0, y0), ndc(x1, y0), ndc(x1, y1), ndc(x0, y0), ndc(x1, y1), ndc(x0, y1)],
                 np.float32)  # fmt: skip
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))


RED = 0xFF0000FF  # RGBA8 (1, 0, 0, 1) as a little-endian word


def expected_planes(w, h, x0, y0, x1, y1, positions=POS4):
    """Which samples a rectangle covers: sample s of pixel (x, y) lies at
    (x + sx, y + sy); edges exactly on a sample fall to the fill rule."""
    out = np.zeros((len(positions), h, w), np.uint32)
    for s, (sx, sy) in enumerate(positions):
        xs = np.arange(w) + sx
        ys = np.arange(h) + sy
        inside = ((ys >= y0) & (ys < y1))[:, None] & ((xs >= x0) & (xs < x1))[None, :]
        out[s][inside] = RED
    return out


# -- screen and resources --------------------------------------------------------------


def test_caps_and_format_support(screen):
    assert screen.get_param(pipe.Cap.TEXTURE_MULTISAMPLE) == 1
    assert screen.get_param(pipe.Cap.SAMPLE_SHADING) == 1
    sup = screen.is_format_supported
    for n in (2, 4):
        assert sup(RGBA8, T2D, n, pipe.Bind.RENDER_TARGET)
        assert sup(pipe.Format.Z24_UNORM_S8_UINT, T2D, n, pipe.Bind.DEPTH_STENCIL)
        assert sup(RGBA8, pipe.TextureTarget.TEXTURE_2D_ARRAY, n, pipe.Bind.SAMPLER_VIEW)
    for n in (3, 8, 16):
        assert not sup(RGBA8, T2D, n, pipe.Bind.RENDER_TARGET)
    assert not sup(RGBA8, pipe.TextureTarget.TEXTURE_3D, 4, pipe.Bind.SAMPLER_VIEW)
    assert sup(RGBA8, T2D, 4, pipe.Bind.SHADER_IMAGE)
    assert not sup(pipe.Format.R16G16B16A16_FLOAT, T2D, 4, pipe.Bind.RENDER_TARGET)
    assert sup(pipe.Format.R16G16B16A16_FLOAT, T2D, 4, pipe.Bind.SAMPLER_VIEW)


def test_resource_rules(screen):
    res = ms_texture(screen, 8, 8, layers=3, target=pipe.TextureTarget.TEXTURE_2D_ARRAY)
    assert res.nr_samples == 4 and res.size == 4 * res.sample_stride
    bad = [
        (dict(nr_samples=8), "nr_samples"),
        (dict(nr_samples=4, last_level=1), "last_level"),
        (dict(nr_samples=4, target=pipe.TextureTarget.TEXTURE_3D, depth0=2), "target"),
    ]
    for kw, words in bad:
        args = dict(target=T2D, format=RGBA8, width0=8, height0=8, bind=RT) | kw
        with pytest.raises(gallium.PipeValueError, match=words):
            screen.resource_create(pipe.ResourceTemplate(**args))


def test_sample_positions(ctx):
    assert [ctx.get_sample_position(4, i) for i in range(4)] == POS4
    assert [ctx.get_sample_position(2, i) for i in range(2)] == [(0.75, 0.75), (0.25, 0.25)]
    assert ctx.get_sample_position(1, 0) == (0.5, 0.5)
    with pytest.raises(gallium.PipeValueError, match="sample_count"):
        ctx.get_sample_position(8, 0)
    with pytest.raises(gallium.PipeValueError, match="sample_index"):
        ctx.get_sample_position(4, 4)


def test_framebuffer_surfaces_share_a_sample_count(screen, ctx):
    a, b = ms_texture(screen, 8, 8, 4), ms_texture(screen, 8, 8, 2)
    sa = ctx.create_surface(a, pipe.SurfaceTemplate(format=RGBA8))
    sb = ctx.create_surface(b, pipe.SurfaceTemplate(format=RGBA8))
    with pytest.raises(gallium.PipeValueError, match="sample count"):
        ctx.set_framebuffer_state(pipe.FramebufferState(width=8, height=8, cbufs=[sa, sb]))


# -- rasterization ---------------------------------------------------------------------


@pytest.mark.parametrize("samples", [2, 4])
def test_each_sample_is_covered_at_its_position(screen, ctx, samples):
    w, h = 16, 12
    res = ms_texture(screen, w, h, samples)
    setup(ctx, res)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    rect = (3.5, 2.25, 11.75, 9.5)  # edges between the samples of a pixel
    draw_rect(ctx, w, h, *rect)
    positions = [ctx.get_sample_position(samples, i) for i in range(samples)]
    got = samples_of(ctx, res)
    assert np.array_equal(got, expected_planes(w, h, *rect, positions))
    assert not np.array_equal(got[0], got[1])  # the samples really differ


def test_without_multisample_rasterization_every_sample_gets_the_centre(screen, ctx):
    w, h = 16, 12
    res = ms_texture(screen, w, h, 4)
    setup(ctx, res, multisample=False)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    rect = (3.5, 2.25, 11.75, 9.5)
    draw_rect(ctx, w, h, *rect)
    got = samples_of(ctx, res)
    centre = expected_planes(w, h, *rect, [(0.5, 0.5)])[0]
    assert all(np.array_equal(g, centre) for g in got)


def test_clear_writes_every_sample_and_maps_read_sample_0(screen, ctx):
    res = ms_texture(screen, 8, 8, 4)
    setup(ctx, res)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 1.0, 1.0))
    assert (samples_of(ctx, res) == 0xFFFF0000).all()
    draw_rect(ctx, 8, 8, 0, 0, 8, 0.5)  # row 0: samples 0 (y 0.125) and 1 (y 0.375)
    data, x = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 8, 8, 1))
    row0 = np.array(data[0, 0])
    ctx.transfer_unmap(x)
    assert (row0 == (255, 0, 0, 255)).all()
    planes = samples_of(ctx, res)
    assert (planes[:2, 0] == RED).all() and (planes[2:, 0] == 0xFFFF0000).all()


def test_sample_mask_limits_the_samples_written(screen, ctx):
    res = ms_texture(screen, 8, 8, 4)
    setup(ctx, res)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.set_sample_mask(0b0110)
    draw_rect(ctx, 8, 8, 0, 0, 8, 8)
    got = samples_of(ctx, res)
    assert [bool((g == RED).all()) for g in got] == [False, True, True, False]
    assert (got[0] == 0).all() and (got[3] == 0).all()


FS_SAMPLE_ID = """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL SV[0], SAMPLEID
DCL SV[1], SAMPLEPOS
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.25, 1.0, 0.0, 0.0}
  0: U2F TEMP[0].x, SV[0].xxxx
  1: MUL OUT[0].x, TEMP[0].xxxx, IMM[0].xxxx
  2: MOV OUT[0].yz, SV[1].xxyy
  3: MOV OUT[0].w, IMM[0].yyyy
  4: END
"""


def test_sample_shading_runs_the_shader_per_sample(screen, ctx):
    res = ms_texture(screen, 8, 8, 4)
    setup(ctx, res, fs=FS_SAMPLE_ID)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, 8, 8, 0, 0, 8, 8)
    got = samples_of(ctx, res).view(np.uint8).reshape(4, 8, 8, 4)
    for s, (sx, sy) in enumerate(POS4):
        expect = np.rint(np.float32([s * 0.25, sx, sy, 1.0]) * 255).astype(np.uint8)
        assert (got[s] == expect).all(), s


FS_SAMPLE_QUERIES = """FRAG
DCL SV[0], SAMPLEMASK
DCL OUT[0], COLOR
DCL TEMP[0..1]
IMM[0] UINT32 {3, 0, 0, 0}
IMM[1] FLT32 {0.0625, 0.25, 0.0, 0.0}
  0: U2F TEMP[0].x, SV[0].xxxx
  1: MUL OUT[0].x, TEMP[0].xxxx, IMM[1].xxxx
  2: SAMPLE_INFO TEMP[1], TEMP[0], TEMP[0]
  3: U2F TEMP[1].x, TEMP[1].xxxx
  4: MUL OUT[0].y, TEMP[1].xxxx, IMM[1].yyyy
  5: SAMPLE_POS TEMP[1], TEMP[0], IMM[0].xxxx
  6: MOV OUT[0].zw, TEMP[1].xxxy
  7: END
"""


def test_sample_mask_input_and_render_target_queries(screen, ctx):
    # not shading per sample: SAMPLEMASK is the samples of the pixel the
    # primitive covers, SAMPLE_INFO 1 and SAMPLE_POS the centre
    res = ms_texture(screen, 8, 8, 4)
    setup(ctx, res, fs=FS_SAMPLE_QUERIES)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    # one triangle inside the viewport (no clipping: one primitive), below
    # the line x + 8 y = 8: sample (x + sx, sy) is covered when it is
    draw_tri(ctx, 8, 8, [(0, 0), (8, 0), (0, 1)])
    got = samples_of(ctx, res).view(np.uint8).reshape(4, 8, 8, 4)
    for x in range(8):
        mask = sum(1 << k for k, (sx, sy) in enumerate(POS4) if x + sx + 8 * sy < 8)
        expect = np.rint(np.float32([mask * 0.0625, 0.25, 0.5, 0.5]) * 255).astype(np.uint8)
        for k in range(4):
            assert (got[k, 0, x] == (expect if mask >> k & 1 else 0)).all(), (x, k)
    assert len({sum(1 << k for k, (sx, sy) in enumerate(POS4) if x + sx + 8 * sy < 8)
                for x in range(8)}) > 3  # fmt: skip


FS_TXF_MS = """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL SAMP[0]
DCL SVIEW[0], 2D_MSAA, FLOAT
DCL OUT[0], COLOR
DCL TEMP[0..1]
IMM[0] INT32 {1, 2, 0, 3}
IMM[1] FLT32 {0.25, 0.0, 0.0, 0.0}
  0: TXF OUT[0].xyz, IMM[0].xyzw, SAMP[0], 2D_MSAA
  1: TXQS TEMP[0].x, SAMP[0], 2D_MSAA
  2: U2F TEMP[0].x, TEMP[0].xxxx
  3: MUL OUT[0].w, TEMP[0].xxxx, IMM[1].xxxx
  4: END
"""


def test_multisample_texture_fetch_and_sample_count(screen, ctx):
    tex = ms_texture(screen, 4, 4, 4)
    setup(ctx, tex)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, 4, 4, 0, 0, 4, 4, (0.2, 0.4, 0.6, 1.0))
    ctx.set_sample_mask(0b1000)
    draw_rect(ctx, 4, 4, 0, 0, 4, 4, (1.0, 0.5, 0.25, 1.0))  # only sample 3
    ctx.set_sample_mask(0xF)
    out = screen.resource_create(pipe.ResourceTemplate(target=T2D, format=RGBA8, width0=2,
                                                       height0=2, bind=RT))  # fmt: skip
    setup(ctx, out, fs=FS_TXF_MS)
    view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=RGBA8))
    ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0,
                            [ctx.create_sampler_state(pipe.SamplerState())])  # fmt: skip
    draw_rect(ctx, 2, 2, 0, 0, 2, 2)
    got = samples_of(ctx, out).view(np.uint8).reshape(2, 2, 4)
    # texel (1, 2) sample 3, alpha = TXQS * 0.25 = 1
    assert (got == (255, 128, 64, 255)).all()


FS_MASK_OUT = """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL OUT[1], SAMPLEMASK
IMM[0] INT32 {9, 0, 0, 0}
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1].x, IMM[0].xxxx
  2: END
"""


def test_alpha_to_coverage_alpha_to_one_and_sample_mask_output(screen, ctx):
    res = ms_texture(screen, 8, 8, 4)
    setup(ctx, res)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(alpha_to_coverage=True,
                                                                alpha_to_one=True)))  # fmt: skip
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, 8, 8, 0, 0, 8, 8, (0.0, 1.0, 0.0, 0.6))  # alpha > 0, 0.25, 0.5; not 0.75
    got = samples_of(ctx, res)
    green = 0xFF00FF00  # alpha forced to 1
    assert [int(g[0, 0]) for g in got] == [green, green, green, 0]
    setup(ctx, res, fs=FS_MASK_OUT)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState()))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, 8, 8, 0, 0, 8, 8)
    got = samples_of(ctx, res)
    assert [int(g[4, 4]) for g in got] == [RED, 0, 0, RED]  # mask 0b1001


def test_single_sample_alpha_to_coverage_keeps_alpha_above_half(screen, ctx):
    res = ms_texture(screen, 4, 4, 0)
    setup(ctx, res)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(alpha_to_coverage=True)))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, 4, 4, 0, 0, 4, 2, (1.0, 0.0, 0.0, 0.5))  # not > 0.5: dropped
    draw_rect(ctx, 4, 4, 0, 2, 4, 4, (1.0, 0.0, 0.0, 0.75))
    got = samples_of(ctx, res)[0]
    assert (got[:2] == 0).all() and (got[2:] == 0xBF0000FF).all()


def test_per_sample_depth(screen, ctx):
    w, h = 8, 8
    res = ms_texture(screen, w, h, 4)
    zs = ms_texture(screen, w, h, 4, pipe.Format.Z32_FLOAT, pipe.Bind.DEPTH_STENCIL)
    setup(ctx, res, zs=zs)
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, 0, 0, 0), depth=1.0)
    # a plane of depth rising to the right: z = x / w in window coordinates
    corners = [(-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)]
    v = np.array([[x, y, x, 1, 1, 0, 0, 1] for x, y in corners], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    depth = samples_of(ctx, zs, np.float32)
    for s, (sx, _) in enumerate(POS4):
        expect = (np.arange(w) + sx) / w
        assert np.allclose(depth[s, 3], expect, atol=1e-6), s


# -- blits between sample counts -----------------------------------------------------------


def _blit(ctx, dst, src, w, h, **kw):
    box = pipe.Box(0, 0, 0, w, h, 1)
    ctx.blit(pipe.BlitInfo(dst=pipe.BlitImage(dst, 0, box), src=pipe.BlitImage(src, 0, box),
                           filter=pipe.TexFilter.NEAREST, **kw))  # fmt: skip


def test_resolve_averages_samples_and_both_paths_agree(screen, ctx):
    w, h = 16, 12
    res = ms_texture(screen, w, h, 4)
    setup(ctx, res)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
    draw_rect(ctx, w, h, 3.5, 2.25, 11.75, 9.5, (0.8, 0.3, 0.1, 1.0))
    plain = screen.resource_create(pipe.ResourceTemplate(target=T2D, format=RGBA8, width0=w,
                                                         height0=h, bind=RT))  # fmt: skip
    scissored = screen.resource_create(pipe.ResourceTemplate(target=T2D, format=RGBA8, width0=w,
                                                             height0=h, bind=RT))  # fmt: skip
    _blit(ctx, plain, res, w, h)  # the word-wise resolve
    _blit(ctx, scissored, res, w, h, scissor_enable=True,  # the blitter's general path
          scissor=pipe.ScissorState(0, 0, w, h))  # fmt: skip
    a = samples_of(ctx, plain).view(np.uint8).reshape(h, w, 4)
    b = samples_of(ctx, scissored).view(np.uint8).reshape(h, w, 4)
    assert np.array_equal(a, b)
    planes = samples_of(ctx, res).view(np.uint8).reshape(4, h, w, 4)
    unorm = planes.astype(np.float32) * np.float32(1 / 255)
    total = ((unorm[0] + unorm[1]).astype(np.float32) + unorm[2]).astype(np.float32) + unorm[3]
    mean = (total.astype(np.float32) * np.float32(0.25)).astype(np.float32)
    assert np.array_equal(a, np.rint(mean * np.float32(255)).astype(np.uint8))
    assert len(np.unique(a[..., 0])) > 3  # partly covered pixels mix


def test_blits_to_multisample_destinations(screen, ctx):
    w, h = 8, 8
    ms = ms_texture(screen, w, h, 4)
    setup(ctx, ms)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    draw_rect(ctx, w, h, 2.5, 0, 6, 8)
    # sample by sample, converting to float
    msf = ms_texture(screen, w, h, 4, pipe.Format.R32G32B32A32_FLOAT)
    _blit(ctx, msf, ms, w, h)
    src = samples_of(ctx, ms)
    ctx.flush().wait()
    f = np.stack([msf.typed_view(np.float32, 4, sample=s).copy() for s in range(4)])
    assert np.array_equal(f[..., 0] == 1.0, src == RED)
    # a single-sample source reaches every sample
    single = screen.resource_create(pipe.ResourceTemplate(target=T2D, format=RGBA8, width0=w,
                                                          height0=h, bind=RT))  # fmt: skip
    ctx.clear_texture(single, 0, pipe.Box(0, 0, 0, w, h, 1), bytes([9, 8, 7, 6]))
    _blit(ctx, ms, single, w, h, scissor_enable=True, scissor=pipe.ScissorState(0, 0, 4, 8))
    got = samples_of(ctx, ms)
    assert (got[:, :, :4] == 0x06070809).all() and np.array_equal(got[:, :, 4:], src[:, :, 4:])
    # resource_copy_region and an unscissored same-format blit copy every sample
    copy = ms_texture(screen, w, h, 4)
    ctx.resource_copy_region(copy, 0, 0, 0, 0, ms, 0, pipe.Box(0, 0, 0, w, h, 1))
    assert np.array_equal(samples_of(ctx, copy), got)
    copy2 = ms_texture(screen, w, h, 4)
    _blit(ctx, copy2, ms, w, h)
    assert np.array_equal(samples_of(ctx, copy2), got)


def test_unsupported_multisample_blits_raise_at_the_call(screen, ctx):
    a, b = ms_texture(screen, 8, 8, 4), ms_texture(screen, 8, 8, 2)
    single = screen.resource_create(pipe.ResourceTemplate(target=T2D, format=RGBA8, width0=4,
                                                          height0=4, bind=RT))  # fmt: skip
    with pytest.raises(gallium.UnsupportedError, match="4- and 2-sample"):
        _blit(ctx, b, a, 8, 8)
    box8, box4 = pipe.Box(0, 0, 0, 8, 8, 1), pipe.Box(0, 0, 0, 4, 4, 1)
    with pytest.raises(gallium.UnsupportedError, match="LINEAR"):
        ctx.blit(pipe.BlitInfo(dst=pipe.BlitImage(single, 0, box4), src=pipe.BlitImage(a, 0, box8),
                               filter=pipe.TexFilter.LINEAR))  # fmt: skip


def test_min_samples_is_checked_at_the_call(ctx):
    with pytest.raises(gallium.PipeValueError, match="min_samples"):
        ctx.set_min_samples(-1)
    ctx.set_min_samples(4)
    ctx.set_min_samples(1)


# Thread (x, y, s) of one 4x4x4 block stores x + 4y + 16s to sample s of
# texel (x, y) of IMAGE[0], loads sample s of IMAGE[1] into BUFFER[0], adds 1
# to sample s of IMAGE[2] (an atomic), and RESQ of IMAGE[0] goes to BUFFER[1].
CS_MS_IMAGES = """COMP
DCL SV[0], THREAD_ID
DCL IMAGE[0], 2D_MSAA, PIPE_FORMAT_R32_UINT, WR
DCL IMAGE[1], 2D_MSAA, PIPE_FORMAT_R32_UINT
DCL IMAGE[2], 2D_ARRAY_MSAA, PIPE_FORMAT_R32_UINT, WR
DCL BUFFER[0]
DCL BUFFER[1]
DCL TEMP[0..3]
IMM[0] UINT32 {4, 16, 2, 0}
IMM[1] UINT32 {1, 0, 0, 0}
  0: MOV TEMP[0].xy, SV[0].xyyy
  1: MOV TEMP[0].z, IMM[0].wwww
  2: MOV TEMP[0].w, SV[0].zzzz
  3: UMAD TEMP[1].x, SV[0].yyyy, IMM[0].xxxx, SV[0].xxxx
  4: UMAD TEMP[1].x, SV[0].zzzz, IMM[0].yyyy, TEMP[1].xxxx
  5: STORE IMAGE[0], TEMP[0], TEMP[1].xxxx, 2D_MSAA, PIPE_FORMAT_R32_UINT
  6: LOAD TEMP[2], IMAGE[1], TEMP[0], 2D_MSAA, PIPE_FORMAT_R32_UINT
  7: SHL TEMP[3].x, TEMP[1].xxxx, IMM[0].zzzz
  8: STORE BUFFER[0].x, TEMP[3].xxxx, TEMP[2].xxxx
  9: ATOMUADD TEMP[2].x, IMAGE[2], TEMP[0], IMM[1].xxxx, 2D_ARRAY_MSAA, PIPE_FORMAT_R32_UINT
 10: RESQ TEMP[3], IMAGE[0]
 11: STORE BUFFER[1].xyzw, IMM[0].wwww, TEMP[3]
 12: END
"""


@pytest.mark.parametrize("threaded", [False, True])
def test_multisample_images_in_compute(screen, threaded):
    u32 = pipe.Format.R32_UINT
    bind = pipe.Bind.SHADER_IMAGE | pipe.Bind.SAMPLER_VIEW
    assert screen.is_format_supported(u32, T2D, 4, bind)
    ctx = screen.context_create(threaded=threaded)
    try:
        out = ms_texture(screen, 4, 4, 4, fmt=u32, bind=bind)
        src = ms_texture(screen, 4, 4, 4, fmt=u32, bind=bind)
        arr = ms_texture(screen, 4, 4, 4, fmt=u32, bind=bind,
                         target=pipe.TextureTarget.TEXTURE_2D_ARRAY, layers=2)  # fmt: skip
        ctx.flush().wait()
        for s in range(4):
            src.typed_view(np.uint32, 1, sample=s)[...] = 1000 * (s + 1)
            for layer in range(2):
                arr.typed_view(np.uint32, 1, layer=layer, sample=s)[...] = 7
        loaded = screen.resource_create(pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=256,
            bind=pipe.Bind.SHADER_BUFFER))  # fmt: skip
        sizes = screen.resource_create(pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=16,
            bind=pipe.Bind.SHADER_BUFFER))  # fmt: skip
        ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=CS_MS_IMAGES)))
        ctx.set_shader_images(
            pipe.ShaderType.COMPUTE, 0,
            [pipe.ImageView(resource=r, format=u32, access=3) for r in (out, src, arr)],
        )  # fmt: skip
        ctx.set_shader_buffers(
            pipe.ShaderType.COMPUTE, 0,
            [pipe.ShaderBuffer(loaded, 0, 256), pipe.ShaderBuffer(sizes, 0, 16)],
        )  # fmt: skip
        ctx.launch_grid(pipe.GridInfo(block=(4, 4, 4), grid=(1, 1, 1)))
        ctx.flush().wait()
        for s in range(4):
            expect = np.arange(16, dtype=np.uint32).reshape(4, 4) + 16 * s
            assert np.array_equal(out.typed_view(np.uint32, 1, sample=s), expect)
            assert (arr.typed_view(np.uint32, 1, sample=s) == 8).all()  # layer 0: once each
            assert (arr.typed_view(np.uint32, 1, layer=1, sample=s) == 7).all()
        got = np.frombuffer(loaded.storage[:256].tobytes(), np.uint32)
        assert np.array_equal(got, np.repeat(1000 * np.arange(1, 5, dtype=np.uint32), 16))
        assert np.frombuffer(sizes.storage[:16].tobytes(), np.uint32).tolist() == [4, 4, 0, 4]
    finally:
        ctx.destroy()


def test_shading_is_at_the_pixel_centre_without_half_pixel_centres(screen, ctx):
    # a horizontal ramp interpolated with half_pixel_center off: multisampled
    # pixels are still shaded at x + 0.5 (llvmpipe), single-sampled at x
    w = 8
    res = ms_texture(screen, w, 1, 4)
    setup(ctx, res, fs=FS_COLOR.replace("CONSTANT", "LINEAR"))
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(pipe.RasterizerState(multisample=True, half_pixel_center=False))
    )
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    v = np.array([[-1, -3, 0.5, 1, 0, 0, 0, 1], [3, 1, 0.5, 1, 2, 0, 0, 1],
                  [-1, 1, 0.5, 1, 0, 0, 0, 1]], np.float32)  # fmt: skip
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    red = samples_of(ctx, res).view(np.uint8).reshape(4, w, 4)[0, :, 0]
    # red = window x / w (the ramp: 0 at x = 0, 1 at x = w)
    assert red.tolist() == np.rint((np.arange(w) + 0.5) / w * 255).astype(int).tolist()


FS_WHERE = """FRAG
DCL IN[0], GENERIC[0], {interp}{location}
DCL IN[1], GENERIC[1], {interp}{location}
DCL OUT[0], COLOR
  0: MOV OUT[0].xy, IN[0].xyxx
  1: MOV OUT[0].zw, IN[1].xxxy
  2: END
"""


@pytest.mark.parametrize("interp", ["LINEAR", "PERSPECTIVE"])
@pytest.mark.parametrize("location", ["", "CENTROID"])
def test_centroid_inputs_at_the_lowest_covered_sample(screen, ctx, interp, location):
    # inputs equal to the window position (scaled by w for perspective):
    # the colour tells where the shader's inputs were interpolated
    f32 = pipe.Format.R32G32B32A32_FLOAT
    res = ms_texture(screen, 8, 8, 4, fmt=f32)
    fs = FS_WHERE.format(interp=interp, location=f", {location}" if location else "")
    setup(ctx, res, fs=fs)
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * k, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for k in range(3)]
        )
    )
    vs = PASS_VS.replace("DCL IN[1]", "DCL IN[1]\nDCL IN[2]")
    vs = vs.replace("DCL OUT[1], GENERIC[0]", "DCL OUT[1], GENERIC[0]\nDCL OUT[2], GENERIC[1]")
    vs = vs.replace("  2: END", "  2: MOV OUT[2], IN[2]\n  3: END")
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=vs)))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    pts = [(0.0, 0.0), (8.0, 0.0), (0.0, 7.3)]
    ws = [1.0, 2.0, 4.0] if interp == "PERSPECTIVE" else [1.0, 1.0, 1.0]
    verts = []
    for (x, y), w in zip(pts, ws):
        verts.append([w * (x / 4 - 1), w * (y / 4 - 1), 0.5 * w, w, x, y, 0, 0, w, 0, 0, 0])
    v = np.array(verts, np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=48, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    ctx.flush().wait()
    got = np.stack([res.typed_view(np.float32, 4, sample=s).copy() for s in range(4)])

    def expect(px, py):  # the inputs at window point (px, py)
        b = np.array([1 - px / 8 - py / 7.3, px / 8, py / 7.3])  # screen barycentrics
        attrs = np.array([p for p in pts])
        if interp == "LINEAR":
            return b @ attrs
        q = b / np.array(ws)
        return (q @ attrs) / q.sum()

    checked = 0
    for y in range(8):
        for x in range(8):
            # the samples inside x / 8 + y / 7.3 < 1 (none lies on the edge)
            cover = [(x + sx) / 8 + (y + sy) / 7.3 < 1 for sx, sy in POS4]
            if not any(cover):
                continue
            px, py = x + 0.5, y + 0.5
            if location and not all(cover):
                px, py = x + POS4[cover.index(True)][0], y + POS4[cover.index(True)][1]
            for s in range(4):
                if cover[s]:
                    np.testing.assert_allclose(got[s, y, x, :2], expect(px, py), atol=1e-4)
                    checked += 1
    assert checked > 40
