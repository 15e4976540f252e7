"""POINTS draws: squares set up as llvmpipe sets them up (tests/test_reference.py
compares a random scene with llvmpipe's image); here the rules one by one."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_target, read_rgba8
from scenes import VS_TGSI_POINTS

from gallium import pipe
from gallium.pipe.errors import PipeValueError

# IN[0] position, IN[1] colour, IN[2].x point size (PSIZE)
VS = VS_TGSI_POINTS
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
W, H = 32, 24


def setup(screen, ctx, **rast):
    rt, _ = make_target(screen, ctx, W, H)
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(32, 0, 0, pipe.Format.R32_FLOAT),
            ]
        )
    )
    state = dict(point_size_per_vertex=True)
    state.update(rast)
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState(**state)))
    return rt


def point(px, py, size, color=(1.0, 0.0, 0.0, 1.0), z=0.0):
    """A vertex at window position (px, py) (pixels, y = row)."""
    return [px / W * 2 - 1, py / H * 2 - 1, z, 1.0, *color, size]


def draw(ctx, rt, verts, count=None, **info):
    data = np.asarray(verts, np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=36, buffer_offset=0, buffer=data)])
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    n = len(data) if count is None else count
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=n, **info))
    ctx.flush()
    return read_rgba8(ctx, rt)[..., 0] > 0


def box(x0, x1, y0, y1):
    m = np.zeros((H, W), bool)
    m[y0:y1, x0:x1] = True
    return m


def test_squares_at_pixel_centres_and_between(ctx, screen):
    rt = setup(screen, ctx, point_quad_rasterization=True)
    # odd sizes centred on a pixel centre cover size x size pixels around it
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 3.0)]), box(9, 12, 6, 9))
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 1.0)]), box(10, 11, 7, 8))
    # an even size centred on a pixel corner: size x size pixels
    assert np.array_equal(draw(ctx, rt, [point(10.0, 8.0, 4.0)]), box(8, 12, 6, 10))
    # an even size on a pixel centre: the edges cross pixel centres; the left and
    # top ones (bottom_edge_rule 0: rows counted down) take them, the others not
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 2.0)]), box(9, 11, 6, 8))
    # below one pixel: still one pixel (llvmpipe's minimum width)
    assert np.array_equal(draw(ctx, rt, [point(20.5, 3.5, 0.25)]), box(20, 21, 3, 4))


def test_legacy_points_without_quad_rasterization(ctx, screen):
    """point_quad_rasterization off: GL's legacy rule as llvmpipe draws it
    (lp_setup_point.c legacy_points): whole pixels around the pixel the
    centre falls in (odd widths) or the corner nearest to it (even ones),
    widths rounded to whole pixels (halves down)."""
    rt = setup(screen, ctx)
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 3.0)]), box(9, 12, 6, 9))
    # the quad rule gives box(9, 11, 6, 8) here: the edges on pixel centres
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 2.0)]), box(10, 12, 7, 9))
    assert np.array_equal(draw(ctx, rt, [point(10.0, 8.0, 4.0)]), box(8, 12, 6, 10))
    assert np.array_equal(draw(ctx, rt, [point(10.2, 7.9, 2.5)]), box(9, 11, 7, 9))
    assert np.array_equal(draw(ctx, rt, [point(10.2, 7.9, 2.6)]), box(9, 12, 6, 9))
    assert np.array_equal(draw(ctx, rt, [point(20.5, 3.5, 0.25)]), box(20, 21, 3, 4))


def test_size_from_the_rasterizer_unless_per_vertex(ctx, screen):
    rt = setup(screen, ctx, point_size_per_vertex=False, point_size=5.0)
    assert np.array_equal(draw(ctx, rt, [point(10.5, 7.5, 1.0)]), box(8, 13, 5, 10))


def test_clipped_by_the_centre_and_never_culled(ctx, screen):
    rt = setup(screen, ctx, cull_face=pipe.Face.FRONT_AND_BACK)
    # centre inside, square across the edge: drawn up to the edge
    got = draw(ctx, rt, [point(1.5, 1.5, 7.0)])
    assert np.array_equal(got, box(0, 5, 0, 5))
    # centre just outside (x = -0.5 px), however wide: dropped
    assert not draw(ctx, rt, [point(-0.5, 10.5, 9.0)]).any()
    # centre behind the far plane: dropped
    assert not draw(ctx, rt, [point(10.5, 10.5, 9.0, z=1.5)]).any()


def test_user_clip_plane_and_indices(ctx, screen):
    rt = setup(screen, ctx, clip_plane_enable=1)
    ctx.set_clip_state(pipe.ClipState(ucp=[(1.0, 0.0, 0.0, 0.0)] + [(0, 0, 0, 0)] * 7))
    verts = [point(8.5, 8.5, 1.0), point(24.5, 8.5, 1.0)]  # x < 0 and x > 0 in clip space
    assert np.array_equal(draw(ctx, rt, verts), box(24, 25, 8, 9))
    ctx.set_clip_state(pipe.ClipState())
    rt = setup(screen, ctx)
    verts = [point(2.5 + 3 * i, 4.5, 1.0) for i in range(6)]
    idx = np.array([5, 0xFFFF, 1, 3], np.uint16)
    got = draw(
        ctx, rt, verts, 4, index_size=2, index=idx, primitive_restart=True, restart_index=0xFFFF
    )
    want = box(17, 18, 4, 5) | box(5, 6, 4, 5) | box(11, 12, 4, 5)
    assert np.array_equal(got, want)


def test_constant_colour_instances_and_primitives_generated(ctx, screen):
    rt = setup(screen, ctx)
    data = np.asarray([point(10.5, 7.5, 5.0, (0.25, 0.5, 0.75, 1.0))], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=36, buffer_offset=0, buffer=data)])
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    ctx.begin_query(q)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=1, instance_count=3))
    ctx.end_query(q)
    img = read_rgba8(ctx, rt)
    assert ctx.get_query_result(q, True) == (True, 3)
    assert np.array_equal(img[box(8, 13, 5, 10)], np.tile([64, 128, 191, 255], (25, 1)))


# GENERIC[1] shows the sprite coordinates when sprite_coord_enable has bit 1.
FS_SPRITE = """FRAG
DCL IN[0], GENERIC[1], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


@pytest.mark.parametrize("mode", [pipe.SpriteCoord.UPPER_LEFT, pipe.SpriteCoord.LOWER_LEFT])
def test_sprite_coordinates(ctx, screen, mode):
    rt = setup(
        screen, ctx, point_quad_rasterization=True, sprite_coord_enable=0b10, sprite_coord_mode=mode
    )
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_SPRITE)))
    draw(ctx, rt, [point(10.0, 8.0, 4.0)])
    img = read_rgba8(ctx, rt)[6:10, 8:12]
    ramp = np.array([32, 96, 159, 223])  # (k + 0.5) / 4 as UNORM8
    assert np.array_equal(img[..., 0], np.tile(ramp, (4, 1)))
    t = ramp if mode == pipe.SpriteCoord.UPPER_LEFT else ramp[::-1]
    assert np.array_equal(img[..., 1], np.tile(t[:, None], (1, 4)))
    assert (img[..., 2] == 0).all() and (img[..., 3] == 255).all()
    # without point_quad_rasterization GENERIC[1] is the vertex shader's (none: 0)
    rt = setup(screen, ctx, sprite_coord_enable=0b10)
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_SPRITE)))
    draw(ctx, rt, [point(10.0, 8.0, 4.0)])
    assert not read_rgba8(ctx, rt)[6:10, 8:12].any()


def test_sizes_are_checked_and_capped(ctx, screen):
    for field, value in (("point_size", float("nan")), ("line_width", -1.0)):
        with pytest.raises(PipeValueError, match=f"state.{field} must be a finite number"):
            ctx.create_rasterizer_state(pipe.RasterizerState(**{field: value}))
    assert screen.get_paramf(pipe.CapF.MAX_POINT_WIDTH) == 255.0
    rt = setup(screen, ctx)
    # a per-vertex size of 1000 draws 255 pixels wide: the whole 32x24 target here
    assert draw(ctx, rt, [point(16.0, 12.0, 1000.0)]).all()
    # a NaN size drops the point
    assert not draw(ctx, rt, [point(16.0, 12.0, float("nan"))]).any()


def test_points_outside_the_scissor_with_sprite_coordinates(ctx, screen):
    """A point the scissor rejects entirely is dropped by setup; the sprite
    coordinates of the others still go to their own points."""
    rt = setup(screen, ctx, scissor=True, point_quad_rasterization=True, sprite_coord_enable=0b10)
    ctx.set_scissor_states(0, [pipe.ScissorState(0, 0, 16, 24)])
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_SPRITE)))
    draw(ctx, rt, [point(24.0, 8.0, 4.0), point(10.0, 8.0, 4.0)])
    img = read_rgba8(ctx, rt)
    assert not img[:, 16:].any()
    assert img[6:10, 8:12, 0].tolist() == [[32, 96, 159, 223]] * 4
