"""Geometry shaders in the pipeline (tests/test_reference.py compares three
scenes with llvmpipe's images); here invocations, streams, queries, errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe
from gallium.pipe.errors import PipeValueError

# Each point becomes a 2x2-pixel quad per invocation, invocation i shifted i
# quads right and coloured (1, i/2, 0, 1); a third invocation emits to
# stream 1 only, which is not rasterized.
GS_INVOCATIONS = """GEOM
PROPERTY GS_INPUT_PRIMITIVE POINTS
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 4
PROPERTY GS_INVOCATIONS 3
DCL IN[][0], POSITION
DCL SV[0], INVOCATIONID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0..2]
IMM[0] FLT32 {0.25, 0.5, 1.0, 0.0}
IMM[1] UINT32 {2, 1, 0, 0}
  0: U2F TEMP[0].x, SV[0].xxxx
  1: MUL TEMP[1].x, TEMP[0].xxxx, IMM[0].xxxx
  2: MOV TEMP[2], IN[0][0]
  3: ADD TEMP[2].x, TEMP[2].xxxx, TEMP[1].xxxx
  4: MUL TEMP[0].y, TEMP[0].xxxx, IMM[0].yyyy
  5: MOV OUT[1], IMM[0].zwww
  6: MOV OUT[1].y, TEMP[0].yyyy
  7: MOV OUT[1].w, IMM[0].zzzz
  8: USEQ TEMP[1].y, SV[0].xxxx, IMM[1].xxxx
  9: UIF TEMP[1].yyyy :0
 10:   MOV OUT[0], TEMP[2]
 11:   EMIT IMM[1].yyyy
 12:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].xxxx
 13:   MOV OUT[0], TEMP[2]
 14:   EMIT IMM[1].yyyy
 15:   ADD TEMP[2].y, TEMP[2].yyyy, IMM[0].xxxx
 16:   MOV OUT[0], TEMP[2]
 17:   EMIT IMM[1].yyyy
 18: ELSE :0
 19:   MOV OUT[0], TEMP[2]
 20:   EMIT IMM[1].zzzz
 21:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].xxxx
 22:   MOV OUT[0], TEMP[2]
 23:   EMIT IMM[1].zzzz
 24:   ADD TEMP[2].y, TEMP[2].yyyy, IMM[0].xxxx
 25:   ADD TEMP[2].x, TEMP[2].xxxx, -IMM[0].xxxx
 26:   MOV OUT[0], TEMP[2]
 27:   EMIT IMM[1].zzzz
 28:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].xxxx
 29:   MOV OUT[0], TEMP[2]
 30:   EMIT IMM[1].zzzz
 31: ENDIF
 32: END
"""


def gs_state(ctx, text):
    return ctx.create_gs_state(pipe.ShaderState(tokens=text))


def test_invocations_and_streams(ctx, screen):
    rt, _ = make_target(screen, ctx, 16, 16)
    bind_passthrough(ctx)
    ctx.bind_gs_state(gs_state(ctx, GS_INVOCATIONS))
    # a point at window (4, 4): the quad of invocation i covers x 4+2i..5+2i, y 4..5
    set_vertices(ctx, [[4 / 8 - 1, 4 / 8 - 1, 0, 1, 1, 1, 1, 1]])
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    ctx.begin_query(q)
    ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 0.0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=1))
    ctx.end_query(q)
    img = read_rgba8(ctx, rt)
    assert ctx.get_query_result(q, True) == (True, 4)  # two strips of two triangles
    covered = img[..., 3] > 0
    want = np.zeros((16, 16), bool)
    want[4:6, 4:8] = True
    assert np.array_equal(covered, want)
    assert img[4, 4].tolist() == [255, 0, 0, 255]
    assert img[4, 6].tolist() == [255, 128, 0, 255]


def test_geometry_shader_errors(ctx, screen):
    make_target(screen, ctx, 8, 8)
    bind_passthrough(ctx)
    head = "GEOM\nPROPERTY GS_INPUT_PRIMITIVE {}\nPROPERTY GS_OUTPUT_PRIMITIVE {}\n"
    body = "DCL IN[][0], POSITION\nDCL OUT[0], POSITION\n  0: END\n"
    with pytest.raises(PipeValueError, match="GS_INPUT_PRIMITIVE"):
        gs_state(ctx, head.format("QUADS", "TRIANGLE_STRIP") + body)
    with pytest.raises(PipeValueError, match="GS_OUTPUT_PRIMITIVE"):
        gs_state(ctx, head.format("TRIANGLES", "TRIANGLES") + body)
    with pytest.raises(PipeValueError, match="GS_MAX_OUTPUT_VERTICES"):
        gs_state(ctx, head.format("TRIANGLES", "TRIANGLE_STRIP") + body)
    ok = head.format("TRIANGLES", "TRIANGLE_STRIP") + "PROPERTY GS_MAX_OUTPUT_VERTICES 3\n"
    ctx.bind_gs_state(gs_state(ctx, ok + body))
    set_vertices(ctx, [[0, 0, 0, 1, 1, 1, 1, 1]] * 3)
    with pytest.raises(PipeValueError, match=r"info\.mode must draw TRIANGLES"):
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=3))
        ctx.flush().wait(None)
    ctx.bind_gs_state(None)  # and the draw works without it
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=3))
    ctx.flush().wait(None)
