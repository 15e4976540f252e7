"""Stream output (transform feedback) against Mesa's llvmpipe, bit for bit.

The scenes of tests/reference/xfb/xfb_scenes.py are replayed through the Gallium
calls Mesa's state tracker makes for their GL steps, with the TGSI and the
``pipe_stream_output_info`` Mesa made of their GLSL (tools/make_xfb_reference.py);
every byte of every transform feedback buffer and every query value must equal
llvmpipe's.  Then the rules the scenes do not reach: draw order across passes,
the threaded context's waits, errors at the call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gallium
from gallium import pipe

REF = Path(__file__).parent / "reference" / "xfb"
sys.path.insert(0, str(REF))
import xfb_scenes as xfb  # type: ignore[import-not-found]  # noqa: E402

sys.path.pop(0)

FS_RED = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: MOV OUT[0], IMM[0]
  1: END
"""
_QUERY = {
    "generated": pipe.QueryType.PRIMITIVES_GENERATED,
    "written": pipe.QueryType.PRIMITIVES_EMITTED,
    "overflow": pipe.QueryType.SO_OVERFLOW_ANY_PREDICATE,
    "stream_overflow": pipe.QueryType.SO_OVERFLOW_PREDICATE,
}


def _buffer(screen, ctx, data: bytes, fmt=pipe.Format.NONE):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER,
            format=fmt,
            width0=len(data),
            bind=pipe.Bind.STREAM_OUTPUT | pipe.Bind.VERTEX_BUFFER | pipe.Bind.INDEX_BUFFER,
        )
    )
    ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, np.frombuffer(data, np.uint8))
    return res


def read_buffer(ctx, res) -> bytes:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, 1, 1))
    out = bytes(np.array(data))
    ctx.transfer_unmap(xfer)
    return out


def _so_info(d: dict | None) -> pipe.StreamOutputInfo:
    if d is None:
        return pipe.StreamOutputInfo()
    return pipe.StreamOutputInfo(
        num_outputs=d["num_outputs"],
        stride=list(d["stride"]),
        output=[pipe.StreamOutput(**o) for o in d["output"]],
    )


def replay(scene, ref: dict, threaded: bool, workers: int = 1) -> tuple[list[bytes], list]:
    """Run a scene's steps on numpipe as Mesa's state tracker issues them."""
    screen = gallium.create_screen(num_threads=workers)
    ctx = screen.context_create(threaded=threaded)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=64,
            height0=64,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=64, height=64, cbufs=[surf]))
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(32, 32, 0.5), translate=(32, 32, 0.5))])
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_RED)))
    programs = []
    for p in ref["programs"]:
        so = _so_info(p.get("stream_output"))
        vs_text = (REF / p["vs"]).read_text()
        gs = None
        if "gs" in p:
            vs = ctx.create_vs_state(pipe.ShaderState(tokens=vs_text))
            gs = ctx.create_gs_state(
                pipe.ShaderState(tokens=(REF / p["gs"]).read_text(), stream_output=so)
            )
        else:
            vs = ctx.create_vs_state(pipe.ShaderState(tokens=vs_text, stream_output=so))
        programs.append((vs, gs))
    f4 = pipe.Format.R32G32B32A32_FLOAT
    two = ctx.create_vertex_elements_state(
        [pipe.VertexElement(0, 0, 0, f4), pipe.VertexElement(16, 0, 0, f4)]
    )
    one = ctx.create_vertex_elements_state([pipe.VertexElement(0, 0, 0, f4)])
    vbo = _buffer(screen, ctx, scene.vertices.astype("<f4").tobytes())
    ibo = _buffer(screen, ctx, np.array(scene.indices or [0], "<u4").tobytes())
    bufs = [_buffer(screen, ctx, bytes([xfb.FILL]) * size) for size in scene.buffers]
    discard = False

    def rasterizer():
        ctx.bind_rasterizer_state(
            ctx.create_rasterizer_state(
                pipe.RasterizerState(
                    rasterizer_discard=discard, flatshade_first=scene.flatshade_first
                )
            )
        )

    rasterizer()
    tfo_targets: dict[int, list] = {}
    active: list = []
    streams_of = []  # per program: the stream of each buffer
    for p in ref["programs"]:
        so = p.get("stream_output") or {"output": []}
        streams_of.append({o["output_buffer"]: o["stream"] for o in so["output"]})
    prog = 0
    queries: dict[tuple, object] = {}
    results = []
    for step in scene.steps:
        op = step[0]
        if op == "program":
            prog = step[1]
            vs, gs = programs[prog]
            ctx.bind_vs_state(vs)
            ctx.bind_gs_state(gs)
            if len(step) > 2:
                ctx.bind_vertex_elements_state(one)
                ctx.set_vertex_buffers(0, [pipe.VertexBuffer(step[3], 0, bufs[step[2][1]])])
            else:
                ctx.bind_vertex_elements_state(two)
                ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, vbo)])
        elif op == "discard":
            discard = step[1]
            rasterizer()
        elif op == "begin":
            tfo = step[3] if len(step) > 3 else 0
            targets = [None] * (1 + max(b for b, *_ in step[2]))
            for binding, b, offset, size in step[2]:
                size = size or scene.buffers[b] - offset
                targets[binding] = ctx.create_stream_output_target(bufs[b], offset, size)
            tfo_targets[tfo] = targets
            active = targets
            ctx.set_stream_output_targets(targets, [0] * len(targets))
        elif op in ("pause", "end"):
            ctx.set_stream_output_targets([], [])
        elif op == "resume":
            ctx.set_stream_output_targets(active, [-1] * len(active))
        elif op == "draw":
            _, mode, first, count, inst = step
            ctx.draw_vbo(
                pipe.DrawInfo(mode=pipe.Prim[mode], start=first, count=count, instance_count=inst)
            )
        elif op == "draw_indexed":
            _, mode, first, count, inst = step
            ctx.draw_vbo(
                pipe.DrawInfo(
                    mode=pipe.Prim[mode], start=first, count=count, instance_count=inst,
                    index_size=4, index=ibo, primitive_restart=True, restart_index=0xFFFFFFFF,
                )
            )  # fmt: skip
        elif op == "draw_auto":
            _, mode, tfo, stream = step
            targets = tfo_targets[tfo]
            target = next(
                t
                for b, t in enumerate(targets)
                if t is not None and streams_of[prog].get(b, 0) == stream
            )
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim[mode], count_from_stream_output=target))
        elif op == "query":
            q = queries[step[1:]] = ctx.create_query(_QUERY[step[1]], step[2])
            ctx.begin_query(q)
        elif op == "end_query":
            q = queries[step[1:]]
            ctx.end_query(q)
            results.append(q)
        else:
            raise ValueError(step)
    out = [read_buffer(ctx, b) for b in bufs]
    values = []
    for q, (kind, index, _) in zip(results, ref["queries"]):
        ok, v = ctx.get_query_result(q, True)
        assert ok
        values.append([kind, index, int(v)])
    ctx.destroy()
    return out, values


@pytest.mark.parametrize("name", [s.name for s in xfb.SCENES])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_scene_equals_llvmpipe(name, threaded):
    scene = xfb.scene_by_name(name)
    ref = json.loads((REF / f"{name}.json").read_text())
    buffers, queries = replay(scene, ref, threaded)
    for b, (got, want) in enumerate(zip(buffers, ref["buffers"])):
        want = bytes.fromhex(want)
        if got != want:
            g = np.frombuffer(got, "<u4")
            w = np.frombuffer(want, "<u4")
            bad = np.flatnonzero(g != w)
            pytest.fail(
                f"buffer {b}: {bad.size} words differ, first at word {bad[0]}: "
                f"got {g[bad[:8]].view('<f4')} want {w[bad[:8]].view('<f4')}"
            )
    assert queries == ref["queries"]


def test_scenes_write_what_they_claim():
    """The references are not vacuous: each scene writes its buffers and
    the overflow scene overflows."""
    for s in xfb.SCENES:
        ref = json.loads((REF / f"{s.name}.json").read_text())
        for buf in ref["buffers"]:
            assert set(bytes.fromhex(buf)) != {xfb.FILL}, s.name
    over = json.loads((REF / "overflow.json").read_text())
    values = {k: v for k, _, v in over["queries"]}
    assert values == {"written": 3, "generated": 5, "overflow": 1, "stream_overflow": 1}


# -- rules beyond the scenes -----------------------------------------------------------

VS_PLUS_ONE = """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
IMM[0] FLT32 {1.0, 1.0, 1.0, 1.0}
  0: MOV OUT[0], IN[0]
  1: ADD OUT[1], IN[0], IMM[0]
  2: END
"""
SO_GENERIC0 = pipe.StreamOutputInfo(
    num_outputs=1,
    stride=[4, 0, 0, 0],
    output=[pipe.StreamOutput(register_index=1, num_components=4)],
)


def _so_context(threaded: bool, workers: int = 1):
    screen = gallium.create_screen(num_threads=workers)
    ctx = screen.context_create(threaded=threaded)
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(pipe.RasterizerState(rasterizer_discard=True))
    )
    ctx.bind_vs_state(
        ctx.create_vs_state(pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=SO_GENERIC0))
    )
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    return screen, ctx


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_draw_reads_what_the_draw_before_it_wrote(threaded):
    """Two draws of one program and one binding: the second reads, as its
    vertices, the primitives the first appended.  Queued together, they run
    in draw order (the second is not fetched before the first wrote)."""
    screen, ctx = _so_context(threaded)
    x = np.arange(24, dtype=np.float32)
    buf = _buffer(screen, ctx, bytes(2 * x.nbytes))
    t = ctx.create_stream_output_target(buf, 0, buf.width0)
    ctx.set_stream_output_targets([t], [0])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, x)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=6))
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, buf)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=6))
    got = np.frombuffer(read_buffer(ctx, buf), np.float32)
    ctx.destroy()
    np.testing.assert_array_equal(got, np.concatenate([x + 1, x + 2]))


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_draw_auto_counts_what_was_written_after_the_queued_draws(threaded):
    """draw_auto takes its count from the bytes written so far: those of
    every draw before it, appended across a pause (offsets -1)."""
    screen, ctx = _so_context(threaded)
    x = np.arange(64, dtype=np.float32)
    a = _buffer(screen, ctx, bytes(1024))
    b = _buffer(screen, ctx, bytes(1024))
    ta = ctx.create_stream_output_target(a, 16, 512)
    tb = ctx.create_stream_output_target(b, 0, 1024)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, x)])
    ctx.set_stream_output_targets([ta], [0])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=3))
    ctx.set_stream_output_targets([], [])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=5))  # not written
    ctx.set_stream_output_targets([ta], [-1])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=10, count=2))
    ctx.set_stream_output_targets([tb], [0])
    # 5 points of 16 bytes written into a: draw_auto with a stride of 16 draws 5
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 16, a)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count_from_stream_output=ta))
    q = ctx.create_query(pipe.QueryType.PRIMITIVES_EMITTED)
    ctx.begin_query(q)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 16, a)])  # stride 32: 80 // 32 = 2
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count_from_stream_output=ta))
    ctx.end_query(q)
    got = np.frombuffer(read_buffer(ctx, b), np.float32)[:28]
    emitted = ctx.get_query_result(q, True)[1]
    ctx.destroy()
    first = np.concatenate([x[:12] + 1, x[40:48] + 1])  # what a received
    assert emitted == 2
    np.testing.assert_array_equal(got, np.concatenate([first + 1, first[0:4] + 1, first[8:12] + 1]))


def test_threaded_write_map_waits_for_the_draw_that_writes_the_buffer():
    """A write-only map of a buffer a queued draw writes through stream
    output is not promoted to unsynchronized: the map's bytes land after the
    draw's."""
    screen, ctx = _so_context(threaded=True)
    buf = _buffer(screen, ctx, bytes(64))
    t = ctx.create_stream_output_target(buf, 0, 64)
    ctx.set_stream_output_targets([t], [0])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, np.ones(16, np.float32))])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=4))
    data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 4, 1, 1))
    data[:] = 7
    ctx.transfer_unmap(xfer)
    got = np.frombuffer(read_buffer(ctx, buf), np.float32)
    ctx.destroy()
    assert got[0] == np.frombuffer(bytes([7] * 4), np.float32)[0]
    np.testing.assert_array_equal(got[1:], np.full(15, 2, np.float32))


FS_BUFFER_TEXEL = """FRAG
DCL IN[0], POSITION, LINEAR
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], BUFFER, FLOAT
DCL TEMP[0]
  0: F2I TEMP[0].x, IN[0].xxxx
  1: TXF OUT[0], TEMP[0], SAMP[0], BUFFER
  2: END
"""


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_stream_output_into_a_texture_an_earlier_draw_samples(threaded):
    """A draw samples a buffer texture; a later draw writes the buffer through
    stream output.  The first draw's pixels show the buffer before the write."""
    screen = gallium.create_screen(num_threads=1)
    ctx = screen.context_create(threaded=threaded)
    old = np.arange(32, dtype=np.uint8) * 7
    tex = _buffer(screen, ctx, old.tobytes(), pipe.Format.R8G8B8A8_UNORM)
    view = ctx.create_sampler_view(
        tex,
        pipe.SamplerViewTemplate(
            format=pipe.Format.R8G8B8A8_UNORM, target=pipe.TextureTarget.BUFFER, buf_size=32
        ),
    )
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=8, height0=1, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=8, height=1, cbufs=[surf]))
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(4, 0.5, 0.5), translate=(4, 0.5, 0.5))])
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_BUFFER_TEXEL)))
    ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    ctx.bind_sampler_states(
        pipe.ShaderType.FRAGMENT, 0, [ctx.create_sampler_state(pipe.SamplerState())]
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS_PLUS_ONE)))
    vs_so = ctx.create_vs_state(pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=SO_GENERIC0))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    quad = np.float32([[-1, -1, 0, 1], [1, -1, 0, 1], [-1, 1, 0, 1], [1, 1, 0, 1]])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, quad)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLE_STRIP, count=4))
    ctx.bind_vs_state(vs_so)
    ctx.bind_rasterizer_state(
        ctx.create_rasterizer_state(pipe.RasterizerState(rasterizer_discard=True))
    )
    t = ctx.create_stream_output_target(tex, 0, 32)
    ctx.set_stream_output_targets([t], [0])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=2))
    ctx.flush().wait(None)
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 8, 1, 1))
    pixels = np.array(data).reshape(-1)
    ctx.transfer_unmap(xfer)
    written = read_buffer(ctx, tex)
    ctx.destroy()
    assert pixels.tolist() == old.tolist()
    assert written == (quad[:2] + 1).tobytes()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_overflow_predicate_as_render_condition(threaded):
    """SO_OVERFLOW_PREDICATE answers whether the stream overflowed, and a
    draw under it as render condition (``condition`` False: draw when the
    result is true, as llvmpipe's render_cond_cond != result) draws only
    after an overflow."""
    screen, ctx = _so_context(threaded)
    buf = _buffer(screen, ctx, bytes(48))
    t = ctx.create_stream_output_target(buf, 0, 48)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, np.ones(32, np.float32))])
    results = []
    for count in (3, 4):
        q = ctx.create_query(pipe.QueryType.SO_OVERFLOW_PREDICATE, 0)
        stats = ctx.create_query(pipe.QueryType.SO_STATISTICS, 0)
        ctx.set_stream_output_targets([t], [0])
        ctx.begin_query(q)
        ctx.begin_query(stats)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=count))
        ctx.end_query(stats)
        ctx.end_query(q)
        s = ctx.get_query_result(stats, True)[1]
        results.append(
            (
                ctx.get_query_result(q, True)[1],
                s.num_primitives_written,
                s.primitives_storage_needed,
            )
        )
        # drawn only if the stream overflowed: 8 points
        counter = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
        ctx.render_condition(q, False, pipe.RenderCond.WAIT)
        ctx.begin_query(counter)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=8))
        ctx.end_query(counter)
        ctx.render_condition(None, False, pipe.RenderCond.WAIT)
        results.append(ctx.get_query_result(counter, True)[1])
    ctx.destroy()
    assert results == [(False, 3, 3), 0, (True, 3, 4), 8]


def _bad_so(**fields):
    out = dict(register_index=1, num_components=4)
    out.update(fields)
    return pipe.StreamOutputInfo(num_outputs=1, stride=[4, 0, 0, 0], output=[out])


BAD_CALLS = [
    (
        "register not declared",
        lambda ctx, buf: ctx.create_vs_state(
            pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=_bad_so(register_index=5))
        ),
        "register_index must name an OUT register",
    ),
    (
        "past the stride",
        lambda ctx, buf: ctx.create_vs_state(
            pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=_bad_so(dst_offset=1))
        ),
        r"dst_offset plus num_components must fit in stride\[0\]",
    ),
    (
        "stream outside a geometry shader",
        lambda ctx, buf: ctx.create_vs_state(
            pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=_bad_so(stream=1))
        ),
        "stream must be 0 outside a geometry shader",
    ),
    (
        "components past the register",
        lambda ctx, buf: ctx.create_vs_state(
            pipe.ShaderState(tokens=VS_PLUS_ONE, stream_output=_bad_so(start_component=2))
        ),
        "num_components must fit in the register",
    ),
    (
        "target outside the buffer",
        lambda ctx, buf: ctx.create_stream_output_target(buf, 32, 64),
        r"buffer_offset \+ buffer_size must lie inside the buffer",
    ),
    (
        "unaligned target",
        lambda ctx, buf: ctx.create_stream_output_target(buf, 2, 16),
        "must be multiples of 4",
    ),
    (
        "a texture as target",
        lambda ctx, buf: ctx.create_stream_output_target(object(), 0, 16),
        "resource must be a buffer Resource",
    ),
    (
        "offsets not matching targets",
        lambda ctx, buf: ctx.set_stream_output_targets(
            [ctx.create_stream_output_target(buf, 0, 16)], []
        ),
        "offsets must hold one offset per target",
    ),
    (
        "five targets",
        lambda ctx, buf: ctx.set_stream_output_targets([None] * 5, [0] * 5),
        "targets may hold at most 4 targets",
    ),
    (
        "unaligned offset",
        lambda ctx, buf: ctx.set_stream_output_targets(
            [ctx.create_stream_output_target(buf, 0, 16)], [6]
        ),
        r"offsets\[0\] must be -1 \(append\) or a multiple of 4",
    ),
    (
        "indexed draw_auto",
        lambda ctx, buf: ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.POINTS,
                index_size=2,
                index=np.zeros(4, np.uint16),
                count_from_stream_output=ctx.create_stream_output_target(buf, 0, 16),
            )
        ),
        "index_size must be 0 for a draw from stream output",
    ),
    (
        "draw_auto from junk",
        lambda ctx, buf: ctx.draw_vbo(
            pipe.DrawInfo(mode=pipe.Prim.POINTS, count_from_stream_output=buf)
        ),
        "count_from_stream_output must be a stream output target",
    ),
]


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize(
    ("call", "match"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_bad_stream_output_calls_raise_at_the_call(threaded, call, match):
    """Each bad call raises a named error at the call, on both contexts, and
    the context still writes stream output afterwards."""
    screen, ctx = _so_context(threaded)
    buf = _buffer(screen, ctx, bytes(64))
    with pytest.raises((ValueError, TypeError), match=match):
        call(ctx, buf)
    t = ctx.create_stream_output_target(buf, 0, 64)
    ctx.set_stream_output_targets([t], [0])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, np.zeros(8, np.float32))])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=2))
    got = np.frombuffer(read_buffer(ctx, buf), np.float32)
    ctx.destroy()
    np.testing.assert_array_equal(got, np.r_[np.ones(8, np.float32), np.zeros(8, np.float32)])
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET


def test_caps_report_stream_output():
    screen = gallium.create_screen(num_threads=1)
    caps = {c: screen.get_param(c) for c in (
        pipe.Cap.MAX_STREAM_OUTPUT_BUFFERS,
        pipe.Cap.MAX_VERTEX_STREAMS,
        pipe.Cap.STREAM_OUTPUT_PAUSE_RESUME,
        pipe.Cap.QUERY_SO_OVERFLOW,
    )}  # fmt: skip
    assert set(caps.values()) == {4, 1}
    assert screen.is_format_supported(
        pipe.Format.NONE, pipe.TextureTarget.BUFFER, 0, pipe.Bind.STREAM_OUTPUT
    )


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_draw_auto_from_a_target_still_bound_counts_the_queued_draws(threaded):
    """draw_auto from the target the bound binding still writes: its count
    is the bytes the queued draw before it wrote (the queue runs first), and
    it appends its own primitives after them."""
    screen, ctx = _so_context(threaded)
    x = np.arange(12, dtype=np.float32)
    buf = _buffer(screen, ctx, bytes(256))
    t = ctx.create_stream_output_target(buf, 0, 256)
    ctx.set_stream_output_targets([t], [0])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, x)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=3))
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, buf)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count_from_stream_output=t))
    got = np.frombuffer(read_buffer(ctx, buf), np.float32)[:28]
    ctx.destroy()
    np.testing.assert_array_equal(got, np.concatenate([x + 1, x + 2, np.zeros(4, np.float32)]))
