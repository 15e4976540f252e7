"""Rasterizer state fields one by one, with exact expected values: discard,
line_last_pixel, the split depth-clip fields, the colour clamps, polygon
offset's units and clamp, fill modes' edge flags, two-sided colour.
(tests/test_ff_reference.py checks the same state against llvmpipe's images
and depth words.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import read_rgba8

from gallium import pipe
from gallium.pipe.errors import PipeTypeError, PipeValueError

W, H = 24, 16
VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
VS_TWOSIDE = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
DCL OUT[2], BCOLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IMM[0]
  3: END
"""
# the colour's alpha as the edge flag
VS_EDGEFLAG = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
DCL OUT[2], EDGEFLAG
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IN[1].wwww
  3: END
"""
FS = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def _setup(screen, ctx, rast, fmt=pipe.Format.R8G8B8A8_UNORM, zs=None, vs=VS):
    T = pipe.TextureTarget
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=T.TEXTURE_2D, format=fmt, width0=W, height0=H, bind=pipe.Bind.RENDER_TARGET
        )
    )
    zsurf = zres = None
    if zs is not None:
        zres = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D, format=zs, width0=W, height0=H, bind=pipe.Bind.DEPTH_STENCIL
            )
        )
        zsurf = ctx.create_surface(zres, pipe.SurfaceTemplate(format=zs))
    ctx.set_framebuffer_state(
        pipe.FramebufferState(
            width=W, height=H, cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=fmt))],
            zsbuf=zsurf,
        )
    )  # fmt: skip
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=vs)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
    return rt, zres


def _px(x: float, y: float, z: float = 0.0, w: float = 1.0) -> list[float]:
    """Clip coordinates of window position (x, y) (pixels; y = row)."""
    return [(x / W * 2 - 1) * w, (y / H * 2 - 1) * w, z * w, w]


def _draw(ctx, verts, colors, mode=pipe.Prim.TRIANGLES):
    data = np.array([[*v, *c] for v, c in zip(verts, colors)], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=data)])
    ctx.draw_vbo(pipe.DrawInfo(mode=mode, start=0, count=len(verts)))


RED, GREEN = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0)
TRI = [_px(2, 2), _px(20, 3), _px(6, 14)]  # clockwise on screen (rows grow downward)


def test_rasterizer_discard_counts_primitives_and_draws_nothing(ctx, screen):
    rt, _ = _setup(screen, ctx, pipe.RasterizerState(rasterizer_discard=True))
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 1.0, 1.0))
    gen = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    occ = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    for q in (gen, stats, occ):
        ctx.begin_query(q)
    _draw(ctx, TRI + TRI, [GREEN] * 6)
    for q in (gen, stats, occ):
        ctx.end_query(q)
    assert ctx.get_query_result(gen, True) == (True, 2)
    ok, st = ctx.get_query_result(stats, True)
    assert ok
    assert (st.ia_vertices, st.ia_primitives, st.vs_invocations) == (6, 2, 6)
    # (llvmpipe counts the clipper's invocations -- draw_stats_clipper_primitives
    # runs before the discard -- and no clipped primitive reaches its setup)
    assert (st.c_invocations, st.c_primitives, st.ps_invocations) == (2, 0, 0)
    assert ctx.get_query_result(occ, True) == (True, 0)
    assert (read_rgba8(ctx, rt) == [0, 0, 255, 255]).all()
    # discard off again: the same draw draws
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState()))
    _draw(ctx, TRI, [GREEN] * 3)
    assert (read_rgba8(ctx, rt) == [0, 255, 0, 255]).all(axis=-1).sum() > 50


def test_line_last_pixel_draws_the_end_pixel(ctx, screen):
    for last, want in ((False, list(range(3, 10))), (True, list(range(3, 11)))):
        rt, _ = _setup(screen, ctx, pipe.RasterizerState(line_last_pixel=last))
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, [_px(3.5, 5.5), _px(10.5, 5.5)], [GREEN] * 2, pipe.Prim.LINES)
        img = read_rgba8(ctx, rt)
        lit = np.argwhere(img[..., 1] == 255)
        assert lit[:, 0].tolist() == [5] * len(want), last
        assert lit[:, 1].tolist() == want, last


def _depth_words(ctx, zres):
    data, xfer = ctx.transfer_map(zres, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
    words = np.array(data[0]).view(np.float32)[..., 0]
    ctx.transfer_unmap(xfer)
    return words


@pytest.mark.parametrize(
    ("fields", "drawn", "depth"),
    [
        ({}, False, None),  # clipped at the near plane: nothing left
        ({"depth_clip": False}, True, 0.0),  # no clipping, depth clamped
        ({"depth_clip_near": False}, True, 0.0),  # near plane off, no clamp: z < 0 -> 0
        ({"depth_clip_near": False, "depth_clamp": False}, True, 0.0),
        ({"depth_clip": False, "depth_clip_near": True}, False, None),
    ],
)
def test_depth_clip_near_far_and_clamp(ctx, screen, fields, drawn, depth):
    """A triangle wholly in front of the near plane (z = -1.5 w): dropped by
    near clipping, drawn without it, its depth clamped to [0, 1] either way
    (llvmpipe restricts every fragment's depth to [0, 1])."""
    rt, zres = _setup(screen, ctx, pipe.RasterizerState(**fields), zs=pipe.Format.Z32_FLOAT)
    ctx.bind_depth_stencil_alpha_state(
        ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.ALWAYS)
            )
        )
    )
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.0, 0.0, 0.0, 1.0), depth=0.5)
    _draw(ctx, [_px(2, 2, -1.5), _px(20, 3, -1.5), _px(6, 14, -1.5)], [GREEN] * 3)
    img = read_rgba8(ctx, rt)
    covered = img[..., 1] == 255
    assert covered.any() == drawn
    words = _depth_words(ctx, zres)
    if drawn:
        assert np.unique(words[covered]).tolist() == [depth]
    assert np.unique(words[~covered]).tolist() == [0.5]


def test_depth_clamp_to_the_viewport_range(ctx, screen):
    """depth_clip off: fragments clamp to the viewport's depth range [0.25, 0.75]."""
    rt, zres = _setup(screen, ctx, pipe.RasterizerState(depth_clip=False), zs=pipe.Format.Z32_FLOAT)
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.25), translate=(W / 2, H / 2, 0.5))]
    )
    ctx.bind_depth_stencil_alpha_state(
        ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.ALWAYS)
            )
        )
    )
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.0, 0.0, 0.0, 1.0), depth=0.0)
    _draw(ctx, [_px(0, 0, -3.0), _px(W, 0, -3.0), _px(0, H, 3.0)], [GREEN] * 3)
    words = _depth_words(ctx, zres)
    covered = read_rgba8(ctx, rt)[..., 1] == 255
    assert float(words[covered].min()) == 0.25 and float(words[covered].max()) == 0.75
    assert int((words[covered] == 0.25).sum()) == 101
    assert int((words[covered] == 0.75).sum()) == 19


def _floats(ctx, rt):
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
    out = np.array(data[0]).view(np.float32).reshape(H, W, 4)
    ctx.transfer_unmap(xfer)
    return out


@pytest.mark.parametrize("which", ["none", "vertex", "fragment"])
def test_colour_clamps_in_a_float_target(ctx, screen, which):
    rast = pipe.RasterizerState(
        clamp_vertex_color=which == "vertex", clamp_fragment_color=which == "fragment"
    )
    rt, _ = _setup(screen, ctx, rast, fmt=pipe.Format.R32G32B32A32_FLOAT)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    loud = (2.5, -0.75, 0.5, np.nan)  # one colour at every vertex: a constant plane
    _draw(ctx, TRI, [loud] * 3)
    img = _floats(ctx, rt)
    covered = (img != 0).any(axis=-1)
    got = img[covered]
    want = {
        "none": [2.5, -0.75, 0.5, np.nan],
        "vertex": [1.0, 0.0, 0.5, 0.0],  # (NaN clamps to 0, as llvmpipe's max/min)
        "fragment": [1.0, 0.0, 0.5, 0.0],
    }[which]
    assert covered.sum() > 50
    np.testing.assert_array_equal(got, np.tile(np.float32(want), (got.shape[0], 1)))


def test_two_sided_colour_picks_bcolor_on_back_faces(ctx, screen):
    """light_twoside: back-facing triangles take BCOLOR (red here), in
    llvmpipe's setup (filled) and in the draw module's stages (with a polygon
    mode on the other face)."""
    for fill_back in (pipe.PolygonMode.FILL, pipe.PolygonMode.POINT):
        rast = pipe.RasterizerState(light_twoside=True, fill_back=fill_back)
        rt, _ = _setup(screen, ctx, rast, vs=VS_TWOSIDE)
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, TRI, [GREEN] * 3)  # clockwise: front (front_ccw off)
        front = read_rgba8(ctx, rt)
        assert (front[..., :3] == [0, 255, 0]).all(axis=-1).sum() > 50
        assert not (front[..., 0] == 255).any()
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, TRI[::-1], [GREEN] * 3)  # counter-clockwise: back
        back = read_rgba8(ctx, rt)
        red = (back[..., :3] == [255, 0, 0]).all(axis=-1)
        assert not (back[..., 1] == 255).any()
        if fill_back == pipe.PolygonMode.FILL:
            assert np.array_equal(red, (front[..., 1] == 255))
        else:  # one pixel (a 1-pixel legacy point) at each vertex
            assert sorted(map(tuple, np.argwhere(red).tolist())) == [(2, 2), (3, 20), (14, 6)]


def test_polygon_mode_line_draws_the_boundary_of_a_quad(ctx, screen):
    """QUADS in line mode: the four sides (each line leaves its last pixel
    to the next), never the diagonal (the decomposition's edge flags); with
    EDGEFLAG 0 on a vertex its outgoing side goes."""
    rast = pipe.RasterizerState(fill_front=pipe.PolygonMode.LINE, fill_back=pipe.PolygonMode.LINE)
    quad = [_px(3.5, 3.5), _px(15.5, 3.5), _px(15.5, 11.5), _px(3.5, 11.5)]
    for flags in ((1, 1, 1, 1), (1, 0, 1, 1)):
        rt, _ = _setup(screen, ctx, rast, vs=VS_EDGEFLAG)
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, quad, [(0.0, 1.0, 0.0, float(f)) for f in flags], pipe.Prim.QUADS)
        lit = read_rgba8(ctx, rt)[..., 1] == 255
        want = np.zeros((H, W), bool)
        want[3, 3:15] = want[11, 3:16] = want[3:12, 3] = True
        if flags[1]:  # the side from vertex 1 to vertex 2 (the top side's last pixel too)
            want[3:12, 15] = True
        assert np.array_equal(lit, want), flags


def test_offset_units_unscaled_and_clamp_in_a_z16_buffer(ctx, screen):
    """A constant-depth triangle (no slope): offset_units scaled by the
    format's resolvable step (2/65535 per unit in Z16) or, with
    offset_units_unscaled, added as they are; offset_clamp caps it."""
    cases = [
        ({"offset_units": 3.0}, round((0.5 + 6 / 65535) * 65535)),
        ({"offset_units": 3.0, "offset_clamp": 2 / 65535}, round((0.5 + 2 / 65535) * 65535)),
        ({"offset_units": 0.001, "offset_units_unscaled": True}, round(0.501 * 65535)),
        ({"offset_units": 3.0, "offset_tri": False}, round(0.5 * 65535)),
    ]
    for fields, want in cases:
        rast = pipe.RasterizerState(**{"offset_tri": True, **fields})
        rt, zres = _setup(screen, ctx, rast, zs=pipe.Format.Z16_UNORM)
        ctx.bind_depth_stencil_alpha_state(
            ctx.create_depth_stencil_alpha_state(
                pipe.DepthStencilAlphaState(
                    depth=pipe.DepthState(
                        enabled=True, writemask=True, func=pipe.CompareFunc.ALWAYS
                    )
                )
            )
        )
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.0, 0.0, 0.0, 1.0), depth=1.0)
        _draw(ctx, TRI, [GREEN] * 3)
        covered = read_rgba8(ctx, rt)[..., 1] == 255
        data, xfer = ctx.transfer_map(zres, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
        words = np.array(data[0]).view(np.uint16)[..., 0]
        ctx.transfer_unmap(xfer)
        assert np.unique(words[covered]).tolist() == [want], fields


FS_LOWER_LEFT = """FRAG
PROPERTY FS_COORD_ORIGIN LOWER_LEFT
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


@pytest.mark.parametrize("origin", ["upper", "lower"])
def test_polygon_stipple_anchored_to_the_window(ctx, screen, origin):
    """A full-screen quad with a stipple of one bit per row (row r lights
    column r, from the word's top bit): the lit pixels are the pattern at
    (x mod 32, y mod 32), y counted from the bottom when the fragment
    shader's origin is the lower left."""
    rt, _ = _setup(screen, ctx, pipe.RasterizerState(poly_stipple_enable=True))
    if origin == "lower":
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_LOWER_LEFT)))
    ctx.set_polygon_stipple(pipe.PolyStipple(stipple=[1 << (31 - r) for r in range(32)]))
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
    quad = [_px(0, 0), _px(W, 0), _px(W, H), _px(0, 0), _px(W, H), _px(0, H)]
    _draw(ctx, quad, [GREEN] * 6)
    lit = read_rgba8(ctx, rt)[..., 1] == 255
    ys, xs = np.mgrid[0:H, 0:W]
    row = ys if origin == "upper" else H - 1 - ys
    assert np.array_equal(lit, xs % 32 == row % 32)


def test_polygon_stipple_arguments(ctx):
    with pytest.raises(PipeTypeError, match="stipple"):
        ctx.set_polygon_stipple([0] * 32)
    with pytest.raises(PipeValueError, match=r"stipple\.stipple.*32 rows"):
        ctx.set_polygon_stipple(pipe.PolyStipple(stipple=[0] * 31))
    with pytest.raises(PipeValueError, match=r"stipple\.stipple\[3\]"):
        ctx.set_polygon_stipple(pipe.PolyStipple(stipple=[0, 0, 0, 1 << 32] + [0] * 28))


@pytest.mark.parametrize(
    ("mode", "factor", "pattern", "want"),
    [
        # one bit a pixel along x from the line's start: 0x00FF lights 8, skips 8
        (pipe.Prim.LINES, 0, 0x00FF, [*range(2, 10), *range(18, 22)]),
        (pipe.Prim.LINES, 1, 0x0003, [2, 3, 4, 5]),  # two pixels a bit
        # a strip's second segment continues the count: its first pixel (13)
        # is the pattern's 12th, lit
        (pipe.Prim.LINE_STRIP, 0, 0x0F0F, [2, 3, 4, 5, 10, 11, 12, 13, 18, 19, 20, 21]),
    ],
)
def test_line_stipple_pixels(ctx, screen, mode, factor, pattern, want):
    rast = pipe.RasterizerState(
        line_stipple_enable=True, line_stipple_factor=factor, line_stipple_pattern=pattern
    )
    rt, _ = _setup(screen, ctx, rast)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
    if mode == pipe.Prim.LINES:
        verts = [_px(2.5, 5.5), _px(22.5, 5.5)]
    else:  # two segments: 11 and 10 pixels long
        verts = [_px(2.5, 5.5), _px(13.5, 5.5), _px(23.5, 5.5)]
    _draw(ctx, verts, [GREEN] * len(verts), mode)
    lit = np.argwhere(read_rgba8(ctx, rt)[..., 1] == 255)
    assert lit[:, 0].tolist() == [5] * len(want)
    assert lit[:, 1].tolist() == want


def test_smooth_point_coverage(ctx, screen):
    """A size-4 point at (12, 8): radius 2, k = (1 - 1/2)^2 = 1/4; (s, t)
    at a pixel centre is its offset / 2.  The corners (d = 1.125) are killed,
    the inner four (d = 0.125 <= k) get (1 - d) / (1 - k) -- Mesa 22.3's NIR
    lowering applies the falloff inside k -- and the edges (k < d <= 1) 1."""
    rast = pipe.RasterizerState(point_smooth=True, point_size=4.0)
    rt, _ = _setup(screen, ctx, rast, fmt=pipe.Format.R32G32B32A32_FLOAT)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    _draw(ctx, [_px(12, 8)], [(1.0, 1.0, 1.0, 1.0)], pipe.Prim.POINTS)
    alpha = _floats(ctx, rt)[..., 3]
    inner = np.float32(np.float32(1.0) / np.float32(0.75)) * np.float32(0.875)
    want = np.zeros((H, W), np.float32)
    want[6:10, 10:14] = 1.0
    want[[6, 6, 9, 9], [10, 13, 10, 13]] = 0.0
    want[7:9, 11:13] = inner
    np.testing.assert_array_equal(alpha, want)


def test_smooth_point_under_multisample_is_square(ctx, screen):
    """The aa stages run only without ``multisample`` (draw_pipe_validate.c)."""
    rast = pipe.RasterizerState(point_smooth=True, point_size=4.0, multisample=True)
    rt, _ = _setup(screen, ctx, rast, fmt=pipe.Format.R32G32B32A32_FLOAT)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    _draw(ctx, [_px(12, 8)], [(1.0, 1.0, 1.0, 1.0)], pipe.Prim.POINTS)
    want = np.zeros((H, W), np.float32)
    want[6:10, 10:14] = 1.0
    np.testing.assert_array_equal(_floats(ctx, rt)[..., 3], want)


def test_smooth_line_coverage(ctx, screen):
    """A width-1 line from (2.25, 5.25) to (21.75, 5.25): a rectangle 1
    either side and half a pixel past each end; alpha = sat(1 - |across|)
    * sat(hl - |along|) with hl = 19.5 / 2 + 0.5: 0.75 on row 5, 0.25 on
    row 4, times 0.75 at the end columns (to the last bits of the set-up
    planes' evaluation: the llvmpipe scenes of tests/test_ff_reference.py
    check those bits)."""
    rast = pipe.RasterizerState(line_smooth=True)
    rt, _ = _setup(screen, ctx, rast, fmt=pipe.Format.R32G32B32A32_FLOAT)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    _draw(ctx, [_px(2.25, 5.25), _px(21.75, 5.25)], [(1.0, 1.0, 1.0, 1.0)] * 2, pipe.Prim.LINES)
    want = np.zeros((H, W), np.float32)
    want[5, 2:22], want[4, 2:22] = 0.75, 0.25
    want[4:6, [2, 21]] *= 0.75
    np.testing.assert_allclose(_floats(ctx, rt)[..., 3], want, rtol=0, atol=2e-6)


def test_point_tri_clip_keeps_points_whose_centre_leaves_the_viewport(ctx, screen):
    """point_tri_clip (d3d-style, draw_pipe_clip.c clip_point_guard_xy): a
    6-pixel point centred 1 pixel left of the framebuffer draws its right
    part; without it the centre's clip drops the point."""
    for tri_clip, want in ((False, 0), (True, 2 * 6)):
        rast = pipe.RasterizerState(
            point_size=6.0, point_quad_rasterization=True, point_tri_clip=tri_clip
        )
        rt, _ = _setup(screen, ctx, rast)
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, [_px(-1.0, 8.0)], [GREEN], pipe.Prim.POINTS)
        lit = read_rgba8(ctx, rt)[..., 1] == 255
        assert int(lit.sum()) == want
        if want:
            assert lit[5:11, 0:2].all()


def test_point_size_per_vertex_scissors_to_the_viewport(ctx, screen):
    """llvmpipe's "fake viewport scissor" (lp_setup.c): while the rasterizer
    has point_size_per_vertex, every primitive is also scissored to the
    viewport's rectangle -- here a 4-pixel-wide line crossing the edge of a
    viewport 4 pixels in from the framebuffer's left.  (tests/
    test_ff_reference.py's vp_scissor scenes are llvmpipe's images.)"""
    for per_vertex in (False, True):
        rast = pipe.RasterizerState(line_width=4.0, point_size_per_vertex=per_vertex)
        rt, _ = _setup(screen, ctx, rast)
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(10.0, H / 2, 0.5), translate=(14.0, H / 2, 0.5))]
        )
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        # (viewport x 4..24: clip x -1 is window 4; the line is vertical at x = 4)
        _draw(ctx, [[-1.0, -0.5, 0.0, 1.0], [-1.0, 0.5, 0.0, 1.0]], [GREEN] * 2, pipe.Prim.LINES)
        cols = np.flatnonzero((read_rgba8(ctx, rt)[..., 1] == 255).any(axis=0))
        assert cols.tolist() == ([4, 5] if per_vertex else [2, 3, 4, 5])


FS_LINEAR = """FRAG
DCL IN[0], GENERIC[0], LINEAR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


@pytest.mark.parametrize("force", [False, True])
def test_force_persample_interp_interpolates_at_each_sample(ctx, screen, force):
    """force_persample_interp: every input at its sample's position (red =
    x / 8 across an 8x8 target: sample s of column x gets (x + sx) / 8),
    as a SAMPLE-located input would; off, every sample gets the centre's."""
    from test_msaa import POS4, ms_texture, samples_of
    from test_msaa import setup as ms_setup

    res = ms_texture(screen, 8, 8, 4)
    ms_setup(ctx, res, fs=FS_LINEAR)
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(
            pipe.RasterizerState(multisample=True, force_persample_interp=force)
        )
    )
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    corners = [(0, 0, 0.0), (8, 0, 1.0), (8, 8, 1.0), (0, 0, 0.0), (8, 8, 1.0), (0, 8, 0.0)]
    v = np.array([[x / 4 - 1, y / 4 - 1, 0.5, 1, r, 0, 0, 1] for x, y, r in corners], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
    red = samples_of(ctx, res).view(np.uint8).reshape(4, 8, 8, 4)[..., 0]
    for s, (sx, _) in enumerate(POS4):
        at = (np.arange(8) + (sx if force else 0.5)) / 8
        want = np.rint(np.float32(at) * 255).astype(np.uint8)
        assert (red[s] == want[None, :]).all(), s


def test_line_stipple_of_all_ones_draws_the_whole_line(ctx, screen):
    """Pattern 0xFFFF lights every pixel: the line as without the stipple
    (a strip with no unlit pixel once made the pipeline fail)."""
    verts = [_px(2.5, 5.5), _px(13.5, 9.5), _px(23.5, 2.5)]
    images = []
    for enable in (False, True):
        rast = pipe.RasterizerState(line_stipple_enable=enable, line_stipple_pattern=0xFFFF)
        rt, _ = _setup(screen, ctx, rast)
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        _draw(ctx, verts, [GREEN] * 3, pipe.Prim.LINE_STRIP)
        images.append(read_rgba8(ctx, rt))
    assert (images[0][..., 1] == 255).sum() > 20
    assert (images[0] == images[1]).all()


def test_alpha_to_one_with_a_depth_test(ctx, screen):
    """alpha_to_one sets every colour output's alpha to 1 (llvmpipe applies it
    with any sample count), also on the early depth test's paths."""
    rt, _ = _setup(
        screen, ctx, pipe.RasterizerState(), fmt=pipe.Format.R32G32B32A32_FLOAT,
        zs=pipe.Format.Z24_UNORM_S8_UINT,
    )  # fmt: skip
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(alpha_to_one=True)))
    dsa = pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
    )
    ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 0), depth=1.0)
    _draw(ctx, TRI, [(0.25, 0.5, 0.75, 0.3)] * 3)
    img = _floats(ctx, rt)
    covered = img[..., 0] != 0
    assert covered.sum() > 50
    assert (img[covered] == np.float32([0.25, 0.5, 0.75, 1.0])).all()
