"""Line draws: segments set up as llvmpipe sets them up (tests/test_reference.py
compares two random scenes with its images); here the rules one by one."""

from __future__ import annotations

import numpy as np
from helpers import ADD, bind_passthrough, make_target, read_rgba8

from gallium import pipe
from gallium.draw import lines as ln

W, H = 32, 24


def setup(screen, ctx, **rast):
    rt, _ = make_target(screen, ctx, W, H)
    bind_passthrough(ctx)
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState(**rast)))
    return rt


def vert(px, py, color=(1.0, 0.0, 0.0, 1.0)):
    """A vertex at window position (px, py) in pixels (y = row)."""
    return [px / W * 2 - 1, py / H * 2 - 1, 0.0, 1.0, *color]


def draw(ctx, rt, verts, mode=pipe.Prim.LINES):
    data = np.asarray(verts, np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=data)])
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    ctx.draw_vbo(pipe.DrawInfo(mode=mode, start=0, count=len(data)))
    ctx.flush()
    return read_rgba8(ctx, rt)


def cov(img):
    return img[..., 0] > 0


def box(x0, x1, y0, y1):
    m = np.zeros((H, W), bool)
    m[y0:y1, x0:x1] = True
    return m


def test_diamond_exit_rule_ends(ctx, screen):
    rt = setup(screen, ctx)
    # from one pixel centre to another: the first pixel is drawn, the last is not
    assert np.array_equal(cov(draw(ctx, rt, [vert(2.5, 5.5), vert(8.5, 5.5)])), box(2, 8, 5, 6))
    assert np.array_equal(cov(draw(ctx, rt, [vert(8.5, 5.5), vert(2.5, 5.5)])), box(3, 9, 5, 6))
    assert np.array_equal(cov(draw(ctx, rt, [vert(5.5, 2.5), vert(5.5, 9.5)])), box(5, 6, 2, 9))
    # a diagonal: one pixel per column, start drawn, end not
    got = cov(draw(ctx, rt, [vert(2.5, 2.5), vert(7.5, 7.5)]))
    assert np.array_equal(got, np.eye(H, W, dtype=bool) & box(2, 7, 2, 7))


def test_width_rounds_to_whole_pixels(ctx, screen):
    rt = setup(screen, ctx, line_width=2.6)  # 3 pixels across the minor axis
    got = cov(draw(ctx, rt, [vert(2.5, 5.5), vert(8.5, 5.5)]))
    assert np.array_equal(got, box(2, 8, 4, 7))


def test_strip_and_loop_draw_each_pixel_once(ctx, screen):
    rt = setup(screen, ctx)
    ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[ADD])))
    c = (0.25, 0.0, 0.0, 0.25)
    square = [vert(4.5, 4.5, c), vert(12.5, 4.5, c), vert(12.5, 12.5, c), vert(4.5, 12.5, c)]
    strip = draw(ctx, rt, square, pipe.Prim.LINE_STRIP)
    loop = draw(ctx, rt, square, pipe.Prim.LINE_LOOP)
    for img in (strip, loop):
        assert set(np.unique(img[..., 0]).tolist()) == {0, 64}  # never blended twice
    # (the shapes llvmpipe draws, checked against its image: the strip's
    # segments each take their first pixel and leave their last; the loop's
    # closing edge, from (4.5, 12.5) up to (4.5, 4.5), leaves its first one)
    outline = box(4, 13, 4, 13) & ~box(5, 12, 5, 12)
    assert np.array_equal(cov(loop), outline & ~box(4, 5, 12, 13))
    assert np.array_equal(cov(strip), outline & ~box(4, 5, 5, 13))  # no closing edge
    assert cov(loop).sum() == cov(strip).sum() + 7 == 31


def test_clipped_at_the_viewport_and_far_plane(ctx, screen):
    rt = setup(screen, ctx)
    got = cov(draw(ctx, rt, [vert(-20.0, 3.5), vert(10.5, 3.5)]))
    assert np.array_equal(got, box(0, 10, 3, 4))
    beyond = [vert(2.5, 8.5), vert(20.5, 8.5)]
    beyond[1][2] = 3.0  # z/w = 3: the far plane cuts the line a third of the way, at 8.5
    got = cov(draw(ctx, rt, beyond))
    assert np.array_equal(got, box(2, 8, 8, 9))


def test_colour_along_the_line_and_primitives_generated(ctx, screen):
    rt = setup(screen, ctx)
    data = np.asarray([vert(2.5, 5.5, (0, 0, 0, 1)), vert(10.5, 5.5, (1, 0, 0, 1))], np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=data)])
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    ctx.begin_query(q)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.LINE_LOOP, start=0, count=2))
    ctx.end_query(q)
    img = read_rgba8(ctx, rt)
    assert ctx.get_query_result(q, True) == (True, 2)
    # red grows by 1/8 per pixel: 0, 32, 64, ... (the loop's way back draws 3..10)
    assert img[5, 3:10, 0].tolist() == [32, 64, 96, 128, 159, 191, 223]


def test_segments_of_each_mode():
    cuts = np.array([3])
    lines, prims = ln.segments(pipe.Prim.LINE_STRIP, 6, cuts)
    assert lines.tolist() == [[0, 1], [1, 2], [3, 4], [4, 5]] and prims.tolist() == [0, 1, 2, 3]
    lines, _ = ln.segments(pipe.Prim.LINE_LOOP, 6, cuts)
    assert lines.tolist() == [[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3]]
    lines, _ = ln.segments(pipe.Prim.LINES, 7, np.zeros(0, np.int64))
    assert lines.tolist() == [[0, 1], [2, 3], [4, 5]]


def test_adjacency_primitives():
    from gallium.draw import assemble

    none = np.zeros(0, np.int64)
    assert assemble.adjacency_primitives(pipe.Prim.LINES_ADJACENCY, 9, none).tolist() == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]
    strip = assemble.adjacency_primitives(pipe.Prim.LINE_STRIP_ADJACENCY, 6, none)
    assert strip.tolist() == [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]]
    tri, _ = assemble.triangles(pipe.Prim.TRIANGLES_ADJACENCY, 12, none, False)
    assert tri.tolist() == [[0, 2, 4], [6, 8, 10]]
    lines, _ = ln.segments(pipe.Prim.LINE_STRIP_ADJACENCY, 5, none)
    assert lines.tolist() == [[1, 2], [2, 3]]  # the middle pairs
    lines, _ = ln.segments(pipe.Prim.LINE_STRIP_ADJACENCY, 5, np.array([4]))
    assert lines.tolist() == [[1, 2]]  # a restart after vertex 3: one strip of four
    # (vertices 2i, 2i+2, 2i+4; adjacent 2i-2 or 1, 2i+6 or 2i+5 for the last, 2i+3)
    strip = assemble.adjacency_primitives(pipe.Prim.TRIANGLE_STRIP_ADJACENCY, 8, none)
    assert strip.tolist() == [[0, 1, 2, 6, 4, 3], [4, 0, 2, 5, 6, 7]]


def test_points_and_lines_snap_halves_away_from_zero():
    """llvmpipe's point and line setup rounds with util_iround (x86-64 build):
    float32 f + 0.5 truncated, unlike its triangle setup (round to even)."""
    from gallium.draw.setup import iround, subpixel_snap

    assert iround(np.float32([2048.5, 2049.5, -2.5, 0.49999997, -0.49999997])).tolist() == [
        2049,
        2050,
        -3,
        1,
        -1,
    ]
    assert subpixel_snap(np.float32([8.001953125])).tolist() == [2049]  # 2048.5 up
