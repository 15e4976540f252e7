"""Issue 24's calls through the trace recorder: stream output and draw_auto,
tessellation, indirect draws and get_query_result_resource, shader stores in a
fragment shader -- recorded, then replayed in sequence, equal to the frames
drawn while recording (and the buffers the GPU wrote)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gallium import pipe, trace

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from recordings import read_rgba, traced_screen  # noqa: E402

SIZE = 32
VS_SO = """VERT
DCL IN[0]
DCL OUT[0], POSITION
  0: MOV OUT[0], IN[0]
  1: END
"""
FS_COUNT = """FRAG
DCL OUT[0], COLOR
DCL BUFFER[0]
IMM[0] UINT32 {0, 1, 0, 0}
IMM[1] FLT32 {0.2, 0.6, 1.0, 1.0}
  0: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  1: MOV OUT[0], IMM[1]
  2: END
"""
FS_RED = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: MOV OUT[0], IMM[0]
  1: END
"""
TCS = """TESS_CTRL
PROPERTY TCS_VERTICES_OUT 3
DCL IN[][0], POSITION
DCL OUT[][0], POSITION
DCL OUT[1], TESSOUTER
DCL OUT[2], TESSINNER
DCL SV[0], INVOCATIONID
DCL ADDR[0]
IMM[0] FLT32 {3.0, 3.0, 3.0, 2.0}
  0: UARL ADDR[0].x, SV[0].xxxx
  1: MOV OUT[ADDR[0].x][0], IN[ADDR[0].x][0]
  2: MOV OUT[1], IMM[0]
  3: MOV OUT[2], IMM[0].wwww
  4: END
"""
TES = """TESS_EVAL
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING 2
DCL IN[][0], POSITION
DCL SV[0], TESSCOORD
DCL OUT[0], POSITION
DCL TEMP[0..1]
  0: MUL TEMP[0], SV[0].xxxx, IN[0][0]
  1: MAD TEMP[0], SV[0].yyyy, IN[1][0], TEMP[0]
  2: MAD TEMP[0], SV[0].zzzz, IN[2][0], TEMP[0]
  3: MOV OUT[0], TEMP[0]
  4: END
"""


def _buffer(screen, ctx, nbytes: int, data=None):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=pipe.Format.NONE,
            width0=nbytes,
            bind=pipe.Bind.STREAM_OUTPUT
            | pipe.Bind.VERTEX_BUFFER
            | pipe.Bind.SHADER_BUFFER
            | pipe.Bind.COMMAND_ARGS_BUFFER
            | pipe.Bind.QUERY_BUFFER,
        )
    )
    raw = np.zeros(nbytes, np.uint8) if data is None else np.frombuffer(data, np.uint8)
    ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, raw)
    return res


def _read(ctx, res) -> bytes:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, 1, 1))
    out = bytes(np.array(data))
    ctx.transfer_unmap(xfer)
    return out


def _record(path: Path, threaded: bool) -> tuple[list[np.ndarray], list[bytes]]:
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=threaded)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=SIZE, height0=SIZE, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=SIZE, height=SIZE, cbufs=[surf]))
    h = SIZE / 2
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(h, h, 0.5), translate=(h, h, 0.5))])
    so = pipe.StreamOutputInfo(
        num_outputs=1, stride=[4, 0, 0, 0], output=[pipe.StreamOutput(0, 0, 4, 0, 0, 0)]
    )
    vs_so = ctx.create_vs_state(pipe.ShaderState(tokens=VS_SO, stream_output=so))
    vs = ctx.create_vs_state(pipe.ShaderState(tokens=VS_SO))
    fs_count = ctx.create_fs_state(pipe.ShaderState(tokens=FS_COUNT))
    fs_red = ctx.create_fs_state(pipe.ShaderState(tokens=FS_RED))
    tcs = ctx.create_tcs_state(pipe.ShaderState(tokens=TCS))
    tes = ctx.create_tes_state(pipe.ShaderState(tokens=TES))
    discard = ctx.create_rasterizer_state(pipe.RasterizerState(rasterizer_discard=True))
    normal = ctx.create_rasterizer_state(pipe.RasterizerState())
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    capture = _buffer(screen, ctx, 16 * 64)
    target = ctx.create_stream_output_target(capture, 0, capture.width0)
    counter = _buffer(screen, ctx, 16)
    args = _buffer(screen, ctx, 16, np.uint32([3, 1, 0, 0]).tobytes())
    images, buffers = [], []
    for frame in range(3):
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        s = 0.3 + 0.2 * frame
        tris = np.float32(
            [
                [-s, -s, 0, 1],
                [s, -s, 0, 1],
                [0, s, 0, 1],
                [-s, s, 0, 1],
                [0, -s, 0, 1],
                [s, s, 0, 1],
            ]
        )
        # capture frame + 1 triangles (appended after the first frame), nothing rasterized
        ctx.bind_rasterizer_state(discard)
        ctx.bind_vs_state(vs_so)
        ctx.bind_fs_state(fs_red)
        ctx.set_stream_output_targets([target], [0 if frame == 0 else -1])
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, tris)])
        generated = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
        ctx.begin_query(generated)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3 * min(frame + 1, 2)))
        ctx.end_query(generated)
        ctx.set_stream_output_targets([], [])
        # the capture drawn again (draw_auto), counting its fragments in a buffer
        ctx.bind_rasterizer_state(normal)
        ctx.bind_vs_state(vs)
        ctx.bind_fs_state(fs_count)
        ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(counter, 0, 16)])
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, capture)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count_from_stream_output=target))
        # the query's count as an indirect draw's instance count, then a patch
        ctx.get_query_result_resource(generated, True, pipe.QueryValueType.U32, 0, args, 4)
        ctx.bind_fs_state(fs_red)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, tris[3:] * np.float32(0.5))])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, indirect=pipe.DrawIndirectInfo(
            buffer=args)))  # fmt: skip
        ctx.bind_tcs_state(tcs)
        ctx.bind_tes_state(tes)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3))
        ctx.bind_tcs_state(None)
        ctx.bind_tes_state(None)
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, rt, SIZE, SIZE))
        buffers.append(_read(ctx, counter) + _read(ctx, args) + _read(ctx, capture))
        ctx.destroy_query(generated)
    ctx.destroy()
    screen.destroy()
    return images, buffers


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_stream_output_tessellation_indirect_and_stores_replay(tmp_path, threaded):
    path = tmp_path / "features.trace"
    images, buffers = _record(path, threaded)
    # the frames drew something of each feature: the counter counted fragments,
    # the args buffer holds the query's count, the capture the triangles
    counts = [np.frombuffer(b[:4], np.uint32)[0] for b in buffers]
    assert 0 < counts[0] < counts[1] < counts[2]
    assert [np.frombuffer(b[16:32], np.uint32).tolist() for b in buffers] == [
        [3, 1, 0, 0],
        [3, 2, 0, 0],
        [3, 2, 0, 0],
    ]
    assert all((img[..., 0] == 255).any() and (img[..., 2] == 255).any() for img in images)
    names = {c.name for c in trace.TraceReader(path).all_calls()}
    assert {
        "create_stream_output_target",
        "set_stream_output_targets",
        "get_query_result_resource",
        "create_tcs_state",
        "bind_tes_state",
    } <= names
    for replay_threaded in (False, True):
        got = list(trace.replay(path, threaded=replay_threaded, verify=True))
        assert len(got) == 3
        assert all(np.array_equal(a, b) for a, b in zip(got, images)), replay_threaded
