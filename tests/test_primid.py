"""PRIM_ID as a fragment shader input (tests/test_reference.py has an llvmpipe
scene); here the two halves of a quad drawn as two triangles."""

from __future__ import annotations

import numpy as np
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices
from scenes import PRIMID_FS_TGSI

from gallium import pipe


def test_halves_of_a_quad_keep_their_own_primitive_ids(ctx, screen):
    rt, _ = make_target(screen, ctx, 256, 256)  # big: the dense path, where pairs merge
    bind_passthrough(ctx, fs=PRIMID_FS_TGSI)
    c = [0.0, 0.5, 0.25, 1.0]  # one colour: the halves' planes are the same
    quad = [[-1, -1, 0, 1, *c], [1, -1, 0, 1, *c], [1, 1, 0, 1, *c]]
    quad += [[-1, -1, 0, 1, *c], [1, 1, 0, 1, *c], [-1, 1, 0, 1, *c]]
    set_vertices(ctx, [[0, 0, 0, 1, *c]] * 3 + quad)  # a degenerate triangle first
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=9))
    ctx.flush()
    red = read_rgba8(ctx, rt)[..., 0]
    rows, cols = np.indices(red.shape)
    # primitive 1 below the diagonal (x > y), primitive 2 above: 1/6 and 2/6 of 255
    assert set(red[cols > rows].tolist()) == {42}
    assert set(red[cols < rows].tolist()) == {85}
