"""Record on numpipe, replay on numpipe: the same bytes, in sequence and frame by frame."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

import gallium
from gallium import pipe, trace

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from recordings import read_rgba, record_cubes, traced_screen  # noqa: E402
from refrender import render  # noqa: E402
from scenes import all_scenes  # noqa: E402

SCENES = all_scenes()


@pytest.fixture(scope="module")
def scenes_trace(tmp_path_factory):
    """Every reference scene, each on a context of its own (threaded and direct in
    turn), one after the other in one trace."""
    path = tmp_path_factory.mktemp("trace") / "scenes.trace"
    screen = traced_screen(path)
    images = []
    for i, scene in enumerate(SCENES):
        ctx = screen.context_create(threaded=i % 2 == 0)
        images.append(render(screen, ctx, scene))
        ctx.destroy()
    screen.destroy()
    return path, images


def test_reference_scenes_replay_bit_identical_in_sequence(scenes_trace):
    path, images = scenes_trace
    reader = trace.TraceReader(path)
    # refrender flushes without END_OF_FRAME: each flush after rendering is a frame
    assert not reader.eof_marked
    assert len(reader.frames) == len(SCENES)
    for threaded in (True, False):
        got = list(trace.replay(path, threaded=threaded))
        assert len(got) == len(SCENES)
        for scene, want, img in zip(SCENES, images, got):
            assert img.shape == want.shape, scene.name
            assert np.array_equal(img, want), f"{scene.name} (threaded={threaded})"


def test_reference_scenes_replay_alone(scenes_trace):
    path, images = scenes_trace
    with trace.Replayer(path, threaded=False) as r:
        assert all(f.startable for f in r.reader.frames)
        for k in (len(SCENES) - 1, 7, 0, 13):  # later frames first: no help from earlier ones
            assert np.array_equal(r.frame(k).color, images[k]), SCENES[k].name


def test_demo_records_and_replays(tmp_path, monkeypatch):
    """``GALLIUM_TRACE`` around the demo; replayed frames equal the PNGs it wrote."""
    from PIL import Image

    from gallium import demo

    monkeypatch.setenv("GALLIUM_TRACE", str(tmp_path / "demo.trace"))
    import asyncio

    res = asyncio.run(demo.render(8, 64, tmp_path / "out", 2))
    monkeypatch.delenv("GALLIUM_TRACE")
    reader = trace.TraceReader(tmp_path / "demo.trace")
    assert reader.eof_marked and len(reader.frames) == 8
    frames = list(trace.replay(reader, threaded=True))
    written = {int(p.stem.split("_")[1]): p for p in res["files"] if p.stem.startswith("frame_")}
    assert sorted(written) == [0, 2, 4, 6, 7]
    for k, p in written.items():
        png = np.asarray(Image.open(p).convert("RGBA"))[::-1]  # the demo writes NDC +y up
        assert np.array_equal(frames[k], png), k
    with trace.Replayer(reader, threaded=False) as r:
        for k in (5, 2):
            assert np.array_equal(r.frame(k).color, frames[k])


def test_random_frames_alone_equal_sequence(tmp_path):
    path = tmp_path / "cubes.trace"
    images = record_cubes(path, 16, clear_every=3)  # two of three frames draw over the last
    with trace.Replayer(path) as r:
        seq = [f.color for f in r.frames()]
        assert all(np.array_equal(a, b) for a, b in zip(seq, images))
        rng = random.Random(22)
        for k in rng.sample(range(16), 6):
            assert np.array_equal(r.frame(k).color, images[k]), k
        # a range starting in the middle: its first frame from its snapshot, the rest in sequence
        got = [f.color for f in r.frames("9:13")]
        assert [np.array_equal(a, b) for a, b in zip(got, images[9:13])] == [True] * 4


def test_frame_without_clear_reads_back_the_previous_frame(tmp_path):
    path = tmp_path / "cubes.trace"
    images = record_cubes(path, 4, clear_every=2)
    reader = trace.TraceReader(path)
    contents = {
        f.index: [
            c.args[0].tid
            for c in reader.calls(f.first)
            if c.name == "@content" and c.args[1] != "whole"
        ]
        for f in reader.frames
    }
    # frame 1 does not clear its colour buffer: its contents (and the vertex buffer's,
    # written by buffer_subdata in frame 0) are named before its draw; frame 2 clears
    # everything it draws into and needs only the vertex buffer
    rt_tid = next(c.result.tid for c in reader.calls(0) if c.name == "resource_create")
    assert rt_tid in contents[1] and rt_tid not in contents[2]
    assert len(contents[1]) == 2 and len(contents[2]) == 1
    with trace.Replayer(reader) as r:
        assert np.array_equal(r.frame(1).color, images[1])
        assert not np.array_equal(images[1], images[0])


def _textured_frames(path: Path, frames: int = 4) -> tuple[list[np.ndarray], list]:
    """Texture uploads, DISCARD maps of a dynamic vertex buffer, an occlusion query."""
    size = 32
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=True)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=size,
            height0=size,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    tex = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=8,
            height0=8,
            last_level=1,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
    )
    rng = np.random.default_rng(5)
    texels = rng.integers(0, 256, (8, 8, 4), dtype=np.uint8)
    ctx.texture_subdata(tex, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 8, 8, 1), texels)
    ctx.texture_subdata(tex, 1, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 4, 4, 1), texels[::2, ::2])
    view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    sampler = ctx.create_sampler_state(pipe.SamplerState())
    ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [sampler])
    cbuf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=size, height=size, cbufs=[cbuf]))
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(16, 16, 0.5), translate=(16, 16, 0.5))])
    ctx.bind_vs_state(
        ctx.create_vs_state(
            pipe.ShaderState(
                tokens=(
                    "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\n"
                    "  0: MOV OUT[0], IN[0]\n  1: MOV OUT[1], IN[1]\n  2: END\n"
                )
            )
        )
    )
    ctx.bind_fs_state(
        ctx.create_fs_state(
            pipe.ShaderState(
                tokens=(
                    "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n"
                    "DCL SVIEW[0], 2D, FLOAT\n  0: TEX OUT[0], IN[0], SAMP[0], 2D\n  1: END\n"
                )
            )
        )
    )
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )
    vbuf = screen.resource_create(
        pipe.ResourceTemplate(
            width0=6 * 32 * 2, bind=pipe.Bind.VERTEX_BUFFER, usage=pipe.Usage.STREAM
        )
    )
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
    query = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
    images, counts = [], []
    for f in range(frames):
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        x0, x1 = -0.8 + 0.1 * f, 0.4 + 0.1 * f
        quad = np.array(
            [
                [x0, -0.8, 0, 1, 0, 0, 0, 0],
                [x1, -0.8, 0, 1, 1, 0, 0, 0],
                [x1, 0.8, 0, 1, 1, 1, 0, 0],
                [x0, -0.8, 0, 1, 0, 0, 0, 0],
                [x1, 0.8, 0, 1, 1, 1, 0, 0],
                [x0, 0.8, 0, 1, 0, 1, 0, 0],
            ],
            np.float32,
        )
        # the whole buffer discarded, then its second half rewritten through DISCARD_RANGE
        data, xfer = ctx.transfer_map(
            vbuf,
            0,
            pipe.Transfer.WRITE | pipe.Transfer.DISCARD_WHOLE_RESOURCE,
            pipe.Box(0, 0, 0, vbuf.width0, 1, 1),
        )
        data[:] = 0
        data[: quad.nbytes] = quad.view(np.uint8).ravel()
        ctx.transfer_unmap(xfer)
        data, xfer = ctx.transfer_map(
            vbuf,
            0,
            pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE,
            pipe.Box(quad.nbytes, 0, 0, quad.nbytes, 1, 1),
        )
        half = quad.copy()
        half[:, :2] *= 0.5
        data[:] = half.view(np.uint8).ravel()
        ctx.transfer_unmap(xfer)
        ctx.begin_query(query)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=6, count=6))
        ctx.end_query(query)
        ctx.flush(pipe.Flush.END_OF_FRAME)
        counts.append(ctx.get_query_result(query, True))
        images.append(read_rgba(ctx, rt, size, size))
    ctx.destroy()
    screen.destroy()
    return images, counts


def test_texture_uploads_discard_maps_and_queries(tmp_path):
    path = tmp_path / "tex.trace"
    images, counts = _textured_frames(path)
    assert [ok for ok, _ in counts] == [True] * 4
    reader = trace.TraceReader(path)
    recorded = [c.result for c in reader.all_calls() if c.name == "get_query_result"]
    assert recorded == [tuple(c) for c in counts]  # the answers are kept in the trace
    maps = [c for c in reader.all_calls() if c.name == "transfer_map"]
    usages = [int(c.args[2]) for c in maps if int(c.args[2]) & int(pipe.Transfer.WRITE)]
    assert (
        usages
        == [
            int(pipe.Transfer.WRITE | pipe.Transfer.DISCARD_WHOLE_RESOURCE),
            int(pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE),
        ]
        * 4
    )
    for threaded in (True, False):
        got = list(trace.replay(path, threaded=threaded, verify=True))
        assert all(np.array_equal(a, b) for a, b in zip(got, images)), threaded
    with trace.Replayer(path) as r:
        for k in (3, 1):
            assert np.array_equal(r.frame(k).color, images[k])

    # the pixel centres each frame's two quads cover (no centre lies on an edge)
    def centres(lo: float, hi: float) -> int:
        return int(np.floor(hi * 16 + 16 - 0.5) - np.ceil(lo * 16 + 16 - 0.5) + 1)

    want = [
        centres(-0.8 + 0.1 * f, 0.4 + 0.1 * f) * centres(-0.8, 0.8)
        + centres((-0.8 + 0.1 * f) / 2, (0.4 + 0.1 * f) / 2) * centres(-0.4, 0.4)
        for f in range(4)
    ]
    assert want == [602, 614, 640, 614]
    assert [c[1] for c in counts] == want


def test_query_active_across_frames_replays_from_an_earlier_frame(tmp_path):
    path = tmp_path / "q.trace"
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=False)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=8,
            height0=8,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=8, height=8, cbufs=[surf]))
    q = ctx.create_query(pipe.QueryType.TIME_ELAPSED)
    images = []
    for f in range(3):
        if f == 1:
            ctx.begin_query(q)
        if f == 2:
            ctx.end_query(q)
        ctx.clear(pipe.Clear.COLOR0, color=(f / 4, 0.5, 0.25, 1.0))
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, rt, 8, 8))
    ctx.destroy()
    screen.destroy()
    reader = trace.TraceReader(path)
    assert [f.startable for f in reader.frames] == [True, True, False]
    assert "query #" in reader.frames[2].reasons[0]
    with trace.Replayer(reader) as r:
        assert r.start_frame(2, 2) == 1
        assert np.array_equal(r.frame(2).color, images[2])
        assert images[2][0, 0].tolist() == [128, 128, 64, 255]


def test_template_changed_after_the_call_is_recorded_as_it_was(tmp_path):
    path = tmp_path / "t.trace"
    screen = traced_screen(path)
    ctx = screen.context_create()
    color = pipe.BlendColor(color=(0.25, 0.5, 0.75, 1.0))
    ctx.set_blend_color(color)
    color.color = (1.0, 1.0, 1.0, 1.0)
    verts = np.arange(8, dtype=np.float32)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer=verts)])
    verts[:] = -1
    ctx.destroy()
    screen.destroy()
    got = {c.name: c for c in trace.TraceReader(path).all_calls()}
    assert got["set_blend_color"].args[0].color == (0.25, 0.5, 0.75, 1.0)
    assert got["set_vertex_buffers"].args[1][0].buffer.tolist() == list(range(8))


def test_objects_created_before_recording_are_adopted(tmp_path):
    base = gallium.create_screen(num_threads=1, trace=False)
    res = base.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=4,
            height0=4,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    pre = base.context_create(threaded=False)
    pre.clear_render_target(
        pre.create_surface(res, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM)),
        (0.0, 1.0, 0.0, 1.0),
        0,
        0,
        4,
        4,
    )
    pre.flush().wait(None)
    pre.destroy()
    screen = trace.record(base, tmp_path / "adopt.trace")
    ctx = screen.context_create(threaded=False)
    surf = ctx.create_surface(res, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=4, height=4, cbufs=[surf]))
    ctx.clear_render_target(surf, (1.0, 0.0, 0.0, 1.0), 0, 0, 2, 2)
    ctx.flush(pipe.Flush.END_OF_FRAME)
    want = read_rgba(ctx, res, 4, 4)
    ctx.destroy()
    screen.destroy()
    (got,) = trace.replay(tmp_path / "adopt.trace")
    assert np.array_equal(got, want)
    assert got[0, 0].tolist() == [255, 0, 0, 255] and got[3, 3].tolist() == [0, 255, 0, 255]


def _target(screen, ctx, size=16, bind=pipe.Bind.RENDER_TARGET):
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=size,
            height0=size,
            bind=bind,
        )
    )
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    return rt, surf


_VS = "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\n"
_VS += "  0: MOV OUT[0], IN[0]\n  1: MOV OUT[1], IN[1]\n  2: END\n"
_FS_TEX = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n"
_FS_TEX += "DCL SVIEW[0], 2D, FLOAT\n  0: TEX OUT[0], IN[0], SAMP[0], 2D\n  1: END\n"


def _pipeline(ctx, fs: str):
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
    )
    ctx.set_viewport_states(0, [pipe.ViewportState(scale=(8, 8, 0.5), translate=(8, 8, 0.5))])


def _triangle(k: int) -> np.ndarray:
    a = 0.7 * k
    pts = [(np.cos(a + j * 2.1), np.sin(a + j * 2.1)) for j in range(3)]
    return np.array(
        [[x, y, 0, 1, 0.5 + 0.5 * x, 0.5 + 0.5 * y, (k % 3) / 2, 1] for x, y in pts], np.float32
    )


def test_persistent_mapping_written_between_draws(tmp_path):
    """Bytes written through a PERSISTENT mapping without unmapping reach the replay."""
    path = tmp_path / "persistent.trace"
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=False)
    rt, surf = _target(screen, ctx)
    ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[surf]))
    _pipeline(ctx, FS_PASS)
    vbuf = screen.resource_create(pipe.ResourceTemplate(width0=96, bind=pipe.Bind.VERTEX_BUFFER))
    usage = pipe.Transfer.WRITE | pipe.Transfer.PERSISTENT | pipe.Transfer.COHERENT
    data, xfer = ctx.transfer_map(vbuf, 0, usage, pipe.Box(0, 0, 0, 96, 1, 1))
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
    images = []
    for k in range(4):
        data[:] = _triangle(k).view(np.uint8).ravel()  # no unmap: the mapping stays
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, rt, 16, 16))
    ctx.transfer_unmap(xfer)
    ctx.destroy()
    screen.destroy()
    reader = trace.TraceReader(path)
    assert sum(1 for c in reader.all_calls() if c.name == "@write") == 4
    assert len({im.tobytes() for im in images}) == 4  # four different triangles
    for threaded in (True, False):
        got = list(trace.replay(reader, threaded=threaded))
        assert all(np.array_equal(a, b) for a, b in zip(got, images))
    with trace.Replayer(reader) as r:  # the mapping is open at each frame's start: mapped again
        assert np.array_equal(r.frame(2).color, images[2])


FS_PASS = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n"
FS_PASS += "  0: MOV OUT[0], IN[0]\n  1: END\n"


def test_two_contexts_share_a_texture(tmp_path):
    """Context A renders into a texture, context B samples it (and B's frame ends
    the frame): frames alone need A's work read back where B first samples it."""
    path = tmp_path / "two.trace"
    screen = traced_screen(path)
    a = screen.context_create(threaded=True)
    b = screen.context_create(threaded=False)
    tex, tex_surf = _target(screen, a, bind=pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW)
    out, out_surf = _target(screen, b)
    a.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[tex_surf]))
    b.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[out_surf]))
    _pipeline(a, FS_PASS)
    _pipeline(b, _FS_TEX)
    view = b.create_sampler_view(tex, pipe.SamplerViewTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    b.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
    b.bind_sampler_states(
        pipe.ShaderType.FRAGMENT, 0, [b.create_sampler_state(pipe.SamplerState())]
    )
    quad = np.array(
        [[-1, -1, 0, 1, 0, 0, 0, 1], [1, -1, 0, 1, 1, 0, 0, 1], [1, 1, 0, 1, 1, 1, 0, 1],
         [-1, -1, 0, 1, 0, 0, 0, 1], [1, 1, 0, 1, 1, 1, 0, 1], [-1, 1, 0, 1, 0, 1, 0, 1]],
        np.float32,
    )  # fmt: skip
    b.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=quad)])
    images = []
    for k in range(5):
        if k % 2 == 0:  # A draws a new triangle into the texture every other frame
            a.set_vertex_buffers(
                0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=_triangle(k))]
            )
            if k == 0:
                a.clear(pipe.Clear.COLOR0, color=(0.2, 0.2, 0.2, 1))
            a.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
            a.flush().wait(None)
        b.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        b.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        b.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(b, out, 16, 16))
    a.destroy()
    b.destroy()
    screen.destroy()
    assert len({im.tobytes() for im in images}) == 3  # the texture changes at frames 0, 2, 4
    with trace.Replayer(path) as r:
        assert [f.startable for f in r.reader.frames] == [True] * 5
        for k in (4, 1, 3):
            assert np.array_equal(r.frame(k).color, images[k]), k
        seq = [f.color for f in r.frames()]
    assert all(np.array_equal(x, y) for x, y in zip(seq, images))


def test_partial_clears_keep_what_they_do_not_cover(tmp_path):
    """A clear over part of a surface (a framebuffer smaller than the texture, depth
    without stencil) is no whole overwrite: frames alone load what it leaves."""
    path = tmp_path / "partial.trace"
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=True)
    rt, surf = _target(screen, ctx)
    zs = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.Z24_UNORM_S8_UINT,
            width0=16,
            height0=16,
            bind=pipe.Bind.DEPTH_STENCIL,
        )
    )
    zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=pipe.Format.Z24_UNORM_S8_UINT))
    images, depths = [], []
    for k in range(4):
        size = 16 if k == 0 else 8  # frame 0 clears everything, the others the corner
        ctx.set_framebuffer_state(
            pipe.FramebufferState(width=size, height=size, cbufs=[surf], zsbuf=zsurf)
        )
        if k == 0:
            ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(1, 0, 0, 1), stencil=7)
        else:
            ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, k / 4, 0, 1), depth=k / 8)
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, rt, 16, 16))
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 16, 16, 1))
        depths.append(np.array(data[0]))
        ctx.transfer_unmap(xfer)
    ctx.destroy()
    screen.destroy()
    assert images[3][0, 0].tolist() == [0, 191, 0, 255]
    assert images[3][15, 15].tolist() == [255, 0, 0, 255]
    reader = trace.TraceReader(path)
    contents = [
        [
            c.args[0].tid
            for c in reader.calls(f.first)
            if c.name == "@content" and c.args[1] != "whole"
        ]
        for f in reader.frames
    ]
    assert [len(c) for c in contents] == [0, 2, 2, 2]  # colour and depth/stencil, each frame
    with trace.Replayer(reader, targets=True) as r:
        for k in (3, 1, 2):
            img = r.frame(k)
            assert np.array_equal(img.color, images[k]), k
            assert np.array_equal(img.targets["zsbuf"][1], depths[k]), k


def test_multisampled_frames_and_blit_resolves(tmp_path):
    """A 4x multisampled target resolved by blit into the frame's colour buffer: frames
    that clear it replay alone; one that draws over earlier samples cannot read them back
    (a mapping shows no samples) and replays from the frame that last cleared them."""
    path = tmp_path / "msaa.trace"
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=True)
    fmt_ = pipe.Format.R8G8B8A8_UNORM
    ms = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=fmt_, width0=16, height0=16,
            nr_samples=4, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    out, out_surf = _target(screen, ctx)
    ms_surf = ctx.create_surface(ms, pipe.SurfaceTemplate(format=fmt_))
    _pipeline(ctx, FS_PASS)
    box = pipe.Box(0, 0, 0, 16, 16, 1)
    resolve = pipe.BlitInfo(
        dst=pipe.BlitImage(out, 0, box, fmt_), src=pipe.BlitImage(ms, 0, box, fmt_)
    )
    images = []
    for k in range(4):
        if k == 1:  # frame 1 leaves the multisampled target alone
            ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[out_surf]))
            ctx.clear(pipe.Clear.COLOR0, color=(0.25, 0.25, 0.25, 1))
            ctx.flush(pipe.Flush.END_OF_FRAME)
            images.append(read_rgba(ctx, out, 16, 16))
            continue
        ctx.set_framebuffer_state(
            pipe.FramebufferState(width=16, height=16, samples=4, cbufs=[ms_surf])
        )
        if k != 2:  # frame 2 draws over frame 0's samples
            ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0.5, 1))
        tri = _triangle(k)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=tri)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.blit(resolve)
        ctx.set_framebuffer_state(pipe.FramebufferState(width=16, height=16, cbufs=[out_surf]))
        ctx.flush(pipe.Flush.END_OF_FRAME)
        images.append(read_rgba(ctx, out, 16, 16))
    ctx.destroy()
    screen.destroy()
    reader = trace.TraceReader(path)
    assert [f.startable for f in reader.frames] == [True, True, False, True]
    assert "could not be read back" in reader.frames[2].reasons[0]
    edges = {int(v) for v in images[0][..., 0].ravel()}
    assert len(edges - {0, 255}) > 0  # resolved edges: partly covered pixels
    with trace.Replayer(reader) as r:
        # frame 1 starts alone, but the target frame 2 reads was last made in frame 0:
        # started at frame 1 the replay meets it unloaded, and starts again at frame 0
        assert r.starts(2) == [1, 0, None]
        for k in (3, 2, 0, 1):
            assert np.array_equal(r.frame(k).color, images[k]), k
    assert all(np.array_equal(a, b) for a, b in zip(trace.replay(path, threaded=False), images))
