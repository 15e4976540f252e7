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


# IN[0] position moved right by half the target per instance, IN[1] colour
VS_INSTANCED = """VERT
DCL IN[0]
DCL IN[1]
DCL SV[0], INSTANCEID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: I2F TEMP[0].x, SV[0].xxxx
  1: MOV TEMP[0].yzw, IMM[0].yyyy
  2: ADD OUT[0], IN[0], TEMP[0]
  3: MOV OUT[1], IN[1]
  4: END
"""


def test_primitive_ids_count_each_instance_from_zero(ctx, screen):
    """As llvmpipe (and GL) do: checked against its image of an instanced draw."""
    rt, _ = make_target(screen, ctx, 32, 8)
    bind_passthrough(ctx, vs=VS_INSTANCED, fs=PRIMID_FS_TGSI)
    c = [0.0, 0.0, 0.0, 1.0]
    tris = []
    for k in range(3):  # three thin triangles side by side in the left half
        x0 = -1 + k / 3
        tris += [[x0, -1, 0, 1, *c], [x0 + 0.3, -1, 0, 1, *c], [x0, 1, 0, 1, *c]]
    set_vertices(ctx, tris)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=9, instance_count=2))
    ctx.flush()
    red = read_rgba8(ctx, rt)[..., 0]
    left, right = red[:, :16], red[:, 16:]
    assert np.array_equal(left, right)
    assert sorted(set(left[left > 0].tolist())) == [42, 85]  # ids 1 and 2 (id 0 is black)
