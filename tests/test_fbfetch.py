"""FBFETCH: a fragment shader reads the colour of its pixel as the
triangles before it left it (tgsi.rst; llvmpipe's fetch is coherent: the
llvmpipe scenes fbfetch_* in tests/test_ff_reference.py match its images).
Exact values here: UNORM8 and integer targets, overlapping triangles of one
draw, a deferred clear, the shader's checks."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS, make_target, read_rgba8, set_vertices

from gallium import pipe
from gallium.tgsi.compiler import ShaderCompileError

FS_HALF = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.5, 0.5, 0.5, 0.5}
  0: FBFETCH TEMP[0], OUT[0]
  1: MAD OUT[0], TEMP[0], IMM[0], IN[0]
  2: END
"""
# integer bits: the pixel's value plus 3
FS_UINT = """FRAG
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] UINT32 {3, 3, 3, 3}
  0: FBFETCH TEMP[0], OUT[0]
  1: UADD OUT[0], TEMP[0], IMM[0]
  2: END
"""
QUAD = [
    [-1, -1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1],
    [-1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1],
]  # fmt: skip


def _bind(ctx, fs):
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * i, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for i in range(2)]
        )
    )


def test_caps(screen):
    assert screen.get_param(pipe.Cap.TGSI_FS_FBFETCH) == 1
    assert screen.get_param(pipe.Cap.TEXTURE_BARRIER) == 1


def test_overlapping_triangles_of_one_draw_read_each_other(ctx, screen):
    """The quad drawn twice in one draw over a clear of (0.4, 0.2, 0, 1):
    c1 = c0 / 2 + 0.1 stored as (77, 51, 26, 128), then c2 = c1 / 2 + 0.1."""
    rt, _ = make_target(screen, ctx, 8, 8)
    _bind(ctx, FS_HALF)
    ctx.clear(pipe.Clear.COLOR0, color=(0.4, 0.2, 0.0, 1.0))
    set_vertices(ctx, [[*p, 0.1, 0.1, 0.1, 0.0] for p in QUAD * 2])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=12))
    c1 = np.float32([77, 51, 26, 128]) / np.float32(255)
    want = np.rint((c1 * np.float32(0.5) + np.float32([0.1, 0.1, 0.1, 0.0])) * 255)
    assert (read_rgba8(ctx, rt) == want.astype(np.uint8)).all()


def test_integer_targets_fetch_the_bits(ctx, screen):
    fmt = pipe.Format.R32G32B32A32_UINT
    rt, _ = make_target(screen, ctx, 4, 4, fmt=fmt)
    _bind(ctx, FS_UINT)
    ctx.clear(pipe.Clear.COLOR0, color=(7, 1000, 2**31, 0))
    set_vertices(ctx, [[*p, 0, 0, 0, 0] for p in QUAD * 3])
    for _ in range(2):  # two draws of three passes each
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=18))
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 4, 4, 1))
    words = np.array(data[0]).view(np.uint32).reshape(4, 4, 4)
    ctx.transfer_unmap(xfer)
    assert (words == np.uint32([7 + 18, 1000 + 18, 2**31 + 18, 18])).all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("VERT\nDCL OUT[0], POSITION\nDCL TEMP[0]\n  0: FBFETCH TEMP[0], OUT[0]\n  1: END\n",
         "fragment shader"),
        ("FRAG\nDCL OUT[0], POSITION\nDCL TEMP[0]\n  0: FBFETCH TEMP[0], OUT[0]\n  1: END\n",
         "COLOR output"),
        ("FRAG\nDCL OUT[0], COLOR\nDCL TEMP[0..1]\n  0: FBFETCH TEMP[0], TEMP[1]\n  1: END\n",
         "OUT register"),
    ],
)  # fmt: skip
def test_fbfetch_is_checked_at_compile(text, message):
    from gallium.tgsi.compiler import compile_shader
    from gallium.tgsi.parser import parse

    with pytest.raises(ShaderCompileError, match=message):
        compile_shader(parse(text))
