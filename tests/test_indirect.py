"""Indirect draws and query results written into buffers.

An indirect draw (``DrawInfo.indirect``) is the draws its commands describe,
read from the buffer when the draw is made, after every earlier call that
writes the buffer; ``get_query_result_resource`` writes a query's result into
a buffer in command order.  The checks: images and captured system values of
indirect draws equal those of the direct draws they describe, commands and
counts written by earlier GPU work (stream output, query results) are read
after that work, and bad arguments raise at the call on both contexts.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import read_rgba8

from gallium import pipe

W = H = 32
# colour from the draw id, instance id and vertex id; position from IN[0]
# moved right by 0.25 per instance
VS_IDS = """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2], GENERIC[1]
DCL OUT[3], GENERIC[2]
DCL SV[0], VERTEXID
DCL SV[1], INSTANCEID
DCL SV[2], DRAWID
DCL SV[3], BASEVERTEX
DCL SV[4], BASEINSTANCE
DCL TEMP[0..1]
IMM[0] FLT32 {0.25, 0.0625, 0.125, 1.0}
  0: I2F TEMP[0].x, SV[2].xxxx
  1: I2F TEMP[0].y, SV[1].xxxx
  2: I2F TEMP[0].z, SV[0].xxxx
  3: MUL TEMP[0].xyz, TEMP[0].xyzz, IMM[0].xyyy
  4: MOV TEMP[0].w, IMM[0].wwww
  5: MOV OUT[1], TEMP[0]
  6: I2F TEMP[1].x, SV[1].xxxx
  7: MAD TEMP[1].x, TEMP[1].xxxx, IMM[0].xxxx, IN[0].xxxx
  8: MOV TEMP[1].yzw, IN[0]
  9: MOV OUT[0], TEMP[1]
 10: MOV OUT[2].x, SV[0].xxxx
 11: MOV OUT[2].y, SV[1].xxxx
 12: MOV OUT[2].z, SV[2].xxxx
 13: MOV OUT[2].w, SV[3].xxxx
 14: MOV OUT[3].x, SV[4].xxxx
 15: END
"""
# the system values as captured words: VERTEXID, INSTANCEID, DRAWID, BASEVERTEX, BASEINSTANCE
SO_IDS = pipe.StreamOutputInfo(
    num_outputs=2,
    stride=[5, 0, 0, 0],
    output=[
        pipe.StreamOutput(register_index=2, num_components=4),
        pipe.StreamOutput(register_index=3, num_components=1, dst_offset=4),
    ],
)
FS_PASS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def _buffer(screen, ctx, data: np.ndarray, bind=pipe.Bind.VERTEX_BUFFER):
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=raw.size, bind=bind
        )
    )
    ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, raw)
    return res


def _read(ctx, res) -> np.ndarray:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, 1, 1))
    out = np.array(data)
    ctx.transfer_unmap(xfer)
    return out


class Setup:
    """A context drawing triangles with VS_IDS, capturing its system values."""

    def __init__(self, threaded: bool, workers: int = 1) -> None:
        self.screen = screen = get_screen(workers)
        ctx = self.ctx = screen.context_create(threaded=threaded)
        self.rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
                width0=W, height0=H, bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        surf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=self.rt.format))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=W, height=H, cbufs=[surf]))
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
        )
        ctx.bind_vs_state(
            ctx.create_vs_state(pipe.ShaderState(tokens=VS_IDS, stream_output=SO_IDS))
        )
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_PASS)))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
            )
        )
        rng = np.random.default_rng(3)
        verts = np.zeros((40, 4), np.float32)
        verts[:, :2] = rng.integers(-30, 20, (40, 2)) / 32
        verts[:, 3] = 1
        self.vbuf = _buffer(screen, ctx, verts)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, self.vbuf)])
        self.index = _buffer(
            screen, ctx, rng.integers(2, 30, 64).astype(np.uint16), pipe.Bind.INDEX_BUFFER
        )
        self.captured = _buffer(screen, ctx, np.zeros(4000, np.uint8), pipe.Bind.STREAM_OUTPUT)
        ctx.set_stream_output_targets(
            [ctx.create_stream_output_target(self.captured, 0, 4000)], [0]
        )
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self.ctx.flush().wait(None)
        image = read_rgba8(self.ctx, self.rt)
        words = _read(self.ctx, self.captured).view("<i4").reshape(-1, 5)
        self.ctx.destroy()
        return image, words


# (count, instance_count, start, index_bias, start_instance) commands
COMMANDS = [(6, 2, 3, 1, 4), (3, 1, 10, 0, 0), (9, 3, 20, -2, 1), (0, 5, 0, 0, 0), (6, 1, 30, 5, 7)]


def _direct_draws(s: Setup, indexed: bool, commands, drawid_base=0) -> None:
    for i, (count, ninst, start, bias, start_inst) in enumerate(commands):
        info = pipe.DrawInfo(
            mode=pipe.Prim.TRIANGLES, start=start, count=count, instance_count=ninst,
            start_instance=start_inst, drawid=drawid_base + i,
        )  # fmt: skip
        if indexed:
            info.index_size, info.index, info.index_bias = 2, s.index, bias
        s.ctx.draw_vbo(info)


def _command_words(indexed: bool, commands, stride_words: int) -> np.ndarray:
    out = np.full((len(commands), stride_words), 0x5A5A5A5A, np.uint32)
    for i, (count, ninst, start, bias, start_inst) in enumerate(commands):
        row = [count, ninst, start, bias & 0xFFFFFFFF, start_inst] if indexed else [
            count, ninst, start, start_inst
        ]  # fmt: skip
        out[i, : len(row)] = row
    return out


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("indexed", [False, True], ids=["arrays", "indexed"])
def test_indirect_draws_equal_the_draws_they_describe(threaded, indexed):
    """A multi-draw with a stride, its count limited by a count buffer, after
    a single indirect draw: the same pixels and the same captured system
    values (DRAWID counting each indirect draw's commands from 0) as the
    direct draws."""
    want_draws = [COMMANDS[1], *COMMANDS[:4]]
    ref = Setup(threaded)
    _direct_draws(ref, indexed, [COMMANDS[1]])
    _direct_draws(ref, indexed, COMMANDS[:4])
    want = ref.result()

    s = Setup(threaded)
    words = _command_words(indexed, COMMANDS, 7)
    cmds = _buffer(s.screen, s.ctx, np.concatenate([np.zeros(3, np.uint32), words.reshape(-1)]))
    count = _buffer(s.screen, s.ctx, np.uint32([9, 4]))
    base = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, drawid=77)  # (drawid: replaced)
    if indexed:
        base.index_size, base.index = 2, s.index
    one = pipe.DrawInfo(**{f: getattr(base, f) for f in ("mode", "index_size", "index")})
    one.indirect = pipe.DrawIndirectInfo(offset=12 + 28, buffer=cmds)
    s.ctx.draw_vbo(one)
    base.indirect = pipe.DrawIndirectInfo(
        offset=12, stride=28, draw_count=5, buffer=cmds,
        indirect_draw_count=count, indirect_draw_count_offset=4,
    )  # fmt: skip
    s.ctx.draw_vbo(base)
    got = s.result()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    # the captured values are the commands' own (not vacuous)
    rows = got[1][: sum(c[0] * c[1] for c in want_draws)]
    assert sorted(set(rows[:, 2].tolist())) == [0, 1, 2]  # DRAWID
    assert rows[:3, 4].tolist() == [0, 0, 0] and rows[3:, 4].max() == 4  # BASEINSTANCE
    assert (got[0][..., :3] != 0).any()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_commands_written_by_stream_output_before_the_draw(threaded):
    """The command words come from an earlier draw's stream output, queued
    before the indirect draw with the same targets bound (nothing else runs
    the queue): the indirect draw reads them after that draw wrote them."""
    s = Setup(threaded)
    ctx, screen = s.ctx, s.screen
    cmds = _buffer(screen, ctx, np.zeros(16, np.uint32), pipe.Bind.STREAM_OUTPUT)
    # IN[0]'s bits to buffer 1: the vertex data are the command words
    passthrough = ctx.create_vs_state(
        pipe.ShaderState(
            tokens="VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n",
            stream_output=pipe.StreamOutputInfo(
                num_outputs=1, stride=[0, 4, 0, 0],
                output=[pipe.StreamOutput(register_index=0, num_components=4, output_buffer=1)],
            ),
        )
    )  # fmt: skip
    ids = ctx.create_vs_state(pipe.ShaderState(tokens=VS_IDS, stream_output=SO_IDS))
    ctx.set_stream_output_targets(
        [
            ctx.create_stream_output_target(s.captured, 0, 4000),
            ctx.create_stream_output_target(cmds, 0, 64),
        ],
        [0, 0],
    )
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(pipe.RasterizerState(rasterizer_discard=True))
    )
    ctx.bind_vs_state(passthrough)
    words = np.uint32([[6, 2, 3, 4], [3, 1, 10, 0]])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, words)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=2))
    ctx.bind_rasterizer_state(ctx.create_rasterizer_state(pipe.RasterizerState()))
    ctx.bind_vs_state(ids)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, s.vbuf)])
    ctx.draw_vbo(
        pipe.DrawInfo(
            mode=pipe.Prim.TRIANGLES,
            indirect=pipe.DrawIndirectInfo(stride=16, draw_count=2, buffer=cmds),
        )
    )
    got = s.result()

    ref = Setup(threaded)
    _direct_draws(ref, False, [(6, 2, 3, 0, 4), (3, 1, 10, 0, 0)])
    want = ref.result()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1][:6, 0].tolist() == [3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_query_results_written_into_a_buffer_in_order(threaded):
    """get_query_result_resource: the value as each result type (32-bit
    ones clamped), availability at index -1, a statistics value by index,
    and an indirect draw whose draw count is a query result written just
    before it."""
    s = Setup(threaded)
    ctx, screen = s.ctx, s.screen
    out = _buffer(screen, ctx, np.full(16, 0xEEEEEEEE, np.uint32), pipe.Bind.QUERY_BUFFER)
    prims = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    ctx.begin_query(prims)
    ctx.begin_query(stats)
    _direct_draws(s, False, [(9, 1, 0, 0, 0)])  # three triangles
    ctx.end_query(stats)
    ctx.end_query(prims)
    V = pipe.QueryValueType
    ctx.get_query_result_resource(prims, True, V.U32, 0, out, 0)
    ctx.get_query_result_resource(prims, True, V.U64, 0, out, 8)
    ctx.get_query_result_resource(prims, True, V.I32, -1, out, 16)
    ctx.get_query_result_resource(stats, True, V.U32, 2, out, 20)  # vs_invocations
    ctx.get_query_result_resource(stats, True, V.I64, 0, out, 24)  # ia_vertices
    # three triangles generated: the indirect draw's count is 3 of its 5 commands
    cmds = _buffer(screen, ctx, _command_words(False, COMMANDS, 4))
    ctx.draw_vbo(
        pipe.DrawInfo(
            mode=pipe.Prim.TRIANGLES,
            indirect=pipe.DrawIndirectInfo(
                stride=16, draw_count=5, buffer=cmds, indirect_draw_count=out
            ),
        )
    )
    got = s.result()
    words = _read_words(screen, threaded, out)
    assert words[:9].tolist() == [3, 0xEEEEEEEE, 3, 0, 1, 9, 9, 0, 0xEEEEEEEE]
    ref = Setup(threaded)
    _direct_draws(ref, False, [(9, 1, 0, 0, 0)])
    _direct_draws(ref, False, [(c[0], c[1], c[2], 0, c[4]) for c in COMMANDS[:3]])
    want = ref.result()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def _read_words(screen, threaded, res) -> np.ndarray:
    ctx = screen.context_create(threaded=threaded)
    try:
        return _read(ctx, res).view("<u4")
    finally:
        ctx.destroy()


def test_a_32_bit_result_is_clamped():
    from gallium.numpipe.objects import pack_query_value

    V = pipe.QueryValueType
    big = (1 << 40) + 5
    assert pack_query_value(big, V.U32).view("<u4").tolist() == [0xFFFFFFFF]
    assert pack_query_value(big, V.I32).view("<i4").tolist() == [0x7FFFFFFF]
    assert pack_query_value(big, V.U64).view("<u8").tolist() == [big]
    assert pack_query_value(7, V.I64).view("<i8").tolist() == [7]


def _bad(s: Setup, **indirect):
    fields = dict(buffer=_buffer(s.screen, s.ctx, np.zeros(8, np.uint32)))
    fields.update(indirect)
    return pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, indirect=pipe.DrawIndirectInfo(**fields))


BAD = [
    ("past the buffer", lambda s: _bad(s, offset=20), "commands must lie inside the buffer"),
    ("unaligned", lambda s: _bad(s, offset=2), "must be multiples of 4"),
    ("stride", lambda s: _bad(s, stride=8, draw_count=2), "must be at least the command size"),
    ("not a buffer", lambda s: _bad(s, buffer=np.zeros(8)), "buffer Resource"),
    (
        "count offset",
        lambda s: _bad(s, indirect_draw_count=s.index, indirect_draw_count_offset=126),
        "leaving a uint32 inside indirect_draw_count",
    ),
    (
        "with draw_auto",
        lambda s: pipe.DrawInfo(
            mode=pipe.Prim.POINTS,
            indirect=pipe.DrawIndirectInfo(buffer=s.index),
            count_from_stream_output=s.ctx.create_stream_output_target(s.captured, 0, 16),
        ),
        "must be None for a draw from stream output",
    ),
]


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize(("make", "match"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_indirect_draws_raise_at_the_call(threaded, make, match):
    s = Setup(threaded)
    with pytest.raises((ValueError, TypeError), match=match):
        s.ctx.draw_vbo(make(s))
    _direct_draws(s, False, [(3, 1, 0, 0, 0)])
    _, words = s.result()
    assert words[:3, 0].tolist() == [0, 1, 2]


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_bad_query_result_resource_calls_raise_at_the_call(threaded):
    s = Setup(threaded)
    ctx = s.ctx
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
    out = _buffer(s.screen, ctx, np.zeros(4, np.uint32))
    V = pipe.QueryValueType
    with pytest.raises(ValueError, match="has not been ended"):
        ctx.get_query_result_resource(q, True, V.U32, 0, out, 0)
    ctx.begin_query(q)
    ctx.end_query(q)
    with pytest.raises(ValueError, match="leaving 8 bytes inside the buffer"):
        ctx.get_query_result_resource(q, True, V.U64, 0, out, 12)
    with pytest.raises(ValueError, match=r"must be -1 \(availability\) or below 1"):
        ctx.get_query_result_resource(q, True, V.U32, 1, out, 0)
    with pytest.raises(ValueError, match=r"result_type must be a pipe\.QueryValueType"):
        ctx.get_query_result_resource(q, True, 9, 0, out, 0)
    ctx.get_query_result_resource(q, True, V.U32, -1, out, 4)
    s.result()
    assert _read_words(s.screen, threaded, out).tolist() == [0, 1, 0, 0]
