"""Bindless handles through gallium.trace: recorded, replayed with the recorded numbers.

One program over five frames (tests/test_bindless.py's shaders): a draw samples
two texture handles chosen per pixel (FS_TWO: the left half the first handle in
CONST[0].xy, the right half the second in .zw) and a grid loads through one
image handle and stores through IMG2HND's handle of its bound image and through
a second image handle (COMP).  Handles are made, made resident and not, and
deleted across the frames; frame images are the colour buffer (cbuf0) and, with
``targets=True``, the two R32_UINT images as cbuf1 and cbuf2, compared byte for
byte with what the recording read back.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from gallium import pipe, trace
from gallium.trace import dump
from gallium.trace import format as fmt

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from helpers import PASS_VS, read_rgba8, set_vertices  # noqa: E402
from recordings import traced_screen  # noqa: E402
from test_bindless import COMP, FS_TWO, NEAREST, QUAD, TEXELS, _expected  # noqa: E402

FS = pipe.ShaderType.FRAGMENT
CS = pipe.ShaderType.COMPUTE
R32 = pipe.Format.R32_UINT
RW = pipe.ImageAccess.READ_WRITE
B0 = 255 - TEXELS  # texture B, then B1 after frame 4's upload
B1 = TEXELS ^ 0x0F
C = TEXELS[::-1].copy()
ZERO = np.zeros((4, 2, 4), np.uint8)
FRAMES = 5


def _two(left, right) -> np.ndarray:
    """FS_TWO's image: the left half from texels ``left``, the right from ``right``
    (None: a handle nothing answers, zeros)."""
    out = np.zeros((4, 4, 4), np.uint8)
    if left is not None:
        out[:, :2] = _expected_of(left)[:, :2]
    if right is not None:
        out[:, 2:] = _expected_of(right)[:, 2:]
    return out


def _expected_of(texels) -> np.ndarray:
    return np.repeat(np.repeat(texels, 2, axis=0), 2, axis=1)


def _texture(screen, ctx, texels):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=2, height0=2, bind=pipe.Bind.SAMPLER_VIEW,
        )
    )  # fmt: skip
    ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 2, 2, 1), texels)
    return res


def _image(screen, ctx, values=None):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=R32, width0=4, height0=4,
            bind=pipe.Bind.SHADER_IMAGE | pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    if values is not None:
        _upload(ctx, res, values)
    return res


def _upload(ctx, res, values):
    v = np.asarray(values, np.uint32)
    ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 4, 4, 1), v)


def _words(ctx, res) -> np.ndarray:
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 4, 4, 1))
    out = np.array(data[0]).view(np.uint32).reshape(4, 4).copy()
    ctx.transfer_unmap(xfer)
    return out


def _consts(ctx, stage, *handles):
    words = np.array([[h & 0xFFFFFFFF, h >> 32] for h in handles], np.uint32).reshape(-1)
    ctx.set_constant_buffer(stage, 0, pipe.ConstantBuffer(user_buffer=words))


def record(path: Path, threaded: bool) -> dict:
    """Record the five frames (module doc); returns what the recording read back and the
    handles it was given."""
    screen = traced_screen(path)
    ctx = screen.context_create(threaded=threaded)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=4, height0=4, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    src = _image(screen, ctx, [[1, 2, 3, 4]] + [[0] * 4] * 3)
    dst = _image(screen, ctx, np.zeros((4, 4)))
    side = _image(screen, ctx, np.zeros((4, 4)))
    surfs = [
        ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM)),
        ctx.create_surface(dst, pipe.SurfaceTemplate(format=R32)),
        ctx.create_surface(side, pipe.SurfaceTemplate(format=R32)),
    ]
    ctx.set_framebuffer_state(pipe.FramebufferState(width=4, height=4, cbufs=surfs))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(2, 2, 0.5), translate=(2, 2, 0.5))]
    )  # fmt: skip
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_TWO)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(16 * i, 0, 0, pipe.Format.R32G32B32A32_FLOAT) for i in range(2)]
        )
    )
    set_vertices(ctx, QUAD)
    ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=COMP)))
    ctx.set_shader_images(CS, 0, [pipe.ImageView(resource=dst, format=R32)])
    tex_a, tex_b = _texture(screen, ctx, TEXELS), _texture(screen, ctx, B0)
    view = lambda res: ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=res.format))  # noqa: E731
    got: dict = {"color": [], "dst": [], "side": [], "handles": {}}
    h = got["handles"]
    for f in range(FRAMES):
        if f == 0:
            h["a"] = ctx.create_texture_handle(view(tex_a), NEAREST)
            h["b"] = ctx.create_texture_handle(view(tex_b), NEAREST)
            h["src"] = ctx.create_image_handle(pipe.ImageView(resource=src, format=R32))
            h["side"] = ctx.create_image_handle(pipe.ImageView(resource=side, format=R32))
            for k in ("a", "b"):
                ctx.make_texture_handle_resident(h[k], True)
            ctx.make_image_handle_resident(h["src"], RW, True)
            _consts(ctx, FS, h["a"], h["b"])
            _consts(ctx, CS, h["src"], h["side"])
        elif f == 1:
            ctx.make_texture_handle_resident(h["b"], False)
            ctx.make_image_handle_resident(h["side"], RW, True)
            _upload(ctx, src, [[5, 6, 7, 8]] + [[0] * 4] * 3)
        elif f == 2:
            ctx.delete_texture_handle(h["a"])
            tex_c = _texture(screen, ctx, C)
            view_c = view(tex_c)
            h["c"] = ctx.create_texture_handle(view_c, NEAREST)
            ctx.make_texture_handle_resident(h["c"], True)
            ctx.make_image_handle_resident(h["side"], RW, False)
            _consts(ctx, FS, h["c"], h["b"])
        elif f == 3:
            ctx.make_texture_handle_resident(h["b"], True)
            ctx.delete_image_handle(h["side"])
            h["d"] = ctx.create_texture_handle(view(tex_a), NEAREST)
            ctx.make_texture_handle_resident(h["d"], True)
            _consts(ctx, FS, h["d"], h["b"])
        else:
            ctx.texture_subdata(tex_b, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 2, 2, 1), B1)
            ctx.make_image_handle_resident(h["src"], RW, False)
        ctx.clear(pipe.Clear.COLOR0, color=(0.5, 0.5, 0.5, 0.5))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        ctx.launch_grid(pipe.GridInfo(block=(4, 1, 1), grid=(1, 1, 1)))
        if f == 3:  # c stays resident: frame 4's snapshot makes its view and texture again
            ctx.sampler_view_destroy(view_c)
            screen.resource_destroy(tex_c)
            del view_c, tex_c
        ctx.flush(pipe.Flush.END_OF_FRAME)
        got["color"].append(read_rgba8(ctx, rt))
        got["dst"].append(_words(ctx, dst))
        got["side"].append(_words(ctx, side))
    ctx.destroy()
    screen.destroy()
    return got


def _rows(row0, row1=(0, 0, 0, 0)) -> list:
    return [list(row0), list(row1), [0] * 4, [0] * 4]


# what each frame shows (the recording is checked against these exact values)
WANT_COLOR = [
    _two(TEXELS, B0), _two(TEXELS, None), _two(C, None), _two(TEXELS, B0), _two(TEXELS, B1),
]  # fmt: skip
WANT_DST = [
    _rows([101, 102, 103, 104]),
    _rows([105, 106, 107, 108]),
    _rows([105, 106, 107, 108]),
    _rows([105, 106, 107, 108]),
    _rows([100] * 4),
]
WANT_SIDE = [_rows([0] * 4)] + [_rows([0] * 4, [7] * 4)] * 4


@pytest.fixture(scope="module", params=[False, True], ids=["direct", "threaded"])
def recorded(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("bindless") / "bindless.trace"
    got = record(path, threaded=request.param)
    return path, got


def test_the_recording_renders_what_the_program_asks(recorded):
    _, got = recorded
    h = got["handles"]
    made = [h[k] for k in ("a", "b", "src", "side", "c", "d")]
    assert made == [(1 << 32) | n for n in range(1, 7)]  # numpipe's numbers, in order
    for f in range(FRAMES):
        assert np.array_equal(got["color"][f], WANT_COLOR[f]), f
        assert got["dst"][f].tolist() == WANT_DST[f], f
        assert got["side"][f].tolist() == WANT_SIDE[f], f
    assert np.array_equal(_expected_of(TEXELS), _expected())


def _check(img, got, f: int) -> None:
    assert np.array_equal(img.color, got["color"][f]), f"frame {f} colour"
    for name, key in (("cbuf1", "dst"), ("cbuf2", "side")):
        fmt_, raw = img.targets[name]
        assert fmt_ == R32
        assert raw.tobytes() == got[key][f].tobytes(), f"frame {f} {key}"


@pytest.mark.parametrize("threaded", [False, True], ids=["on-direct", "on-threaded"])
def test_replay_in_sequence_is_bit_identical(recorded, threaded):
    path, got = recorded
    with trace.Replayer(path, threaded=threaded, targets=True) as r:
        assert r.frame_count == FRAMES
        for f, img in enumerate(r.frames()):
            _check(img, got, f)


@pytest.mark.parametrize("threaded", [False, True], ids=["on-direct", "on-threaded"])
def test_each_frame_alone_starts_from_its_own_snapshot(recorded, threaded):
    path, got = recorded
    with trace.Replayer(path, threaded=threaded, targets=True) as r:
        assert all(f.startable for f in r.reader.frames)
        for f in (4, 2, 0, 3, 1):  # never the frame after the last one (that continues)
            img = r.frame(f)
            assert r.started_from == f, f"frame {f} fell back to {r.started_from}"
            _check(img, got, f)


def test_calls_are_recorded_with_their_handles(recorded):
    path, got = recorded
    h = got["handles"]
    reader = trace.TraceReader(path)
    rec = [
        (c.name, c.args[-1] if c.name.startswith("make_") else None, c.result)
        for c in reader.all_calls()
        if "handle" in c.name
    ]
    tex, img = "create_texture_handle", "create_image_handle"
    res_t, res_i = "make_texture_handle_resident", "make_image_handle_resident"
    assert [(n, r) for n, _, r in rec if n.startswith("create_")] == [
        (tex, h["a"]), (tex, h["b"]), (img, h["src"]), (img, h["side"]), (tex, h["c"]),
        (tex, h["d"]),
    ]  # fmt: skip
    assert [n for n, _, _ in rec] == [
        tex, tex, img, img, res_t, res_t, res_i,  # frame 0
        res_t, res_i,  # 1
        "delete_texture_handle", tex, res_t, res_i,  # 2
        res_t, "delete_image_handle", tex, res_t,  # 3
        res_i,  # 4
    ]  # fmt: skip
    info = dump.info(reader)
    assert re.search(r"^  create_texture_handle +4$", info, re.M)
    assert re.search(r"^  make_image_handle_resident +4$", info, re.M)
    text = "\n".join(dump.dump(reader, frame=4))
    # frame 4 starts with a, side deleted; b, src, c, d live; c made from a destroyed view
    assert "#   context #2 has made 6 bindless handle(s); live:" in text
    for k, n in (("b", 2), ("src", 3), ("c", 5), ("d", 6)):
        assert re.search(rf"#     {h[k]:#x} = #2\.create_\w+_handle\(.*\)  \(#{n}\)", text), k
    # c's view and texture, destroyed in frame 3, made again for the handle
    assert len(re.findall(r"\(destroyed, still used\)", text)) == 2
    assert f"#2.make_texture_handle_resident({h['b']}, True)" in text
    assert f"#2.make_image_handle_resident({h['src']}, ImageAccess.READ_WRITE, True)" in text
    reader.close()


# -------------------------------------------------------------------------- mismatches


def _first_call(reader, name: str, nth: int = 0):
    return [c for c in reader.all_calls() if c.name == name][nth]


def test_a_driver_numbering_handles_otherwise_is_a_clear_error(recorded, monkeypatch):
    """A context that makes other numbers than the recording got: the replay stops at the
    first create call, naming it and its record; a frame alone falls back to the start of
    the trace (its snapshot cannot be restored either) and stops there too."""
    import gallium.numpipe.context as npctx

    path, _ = recorded
    reader = trace.TraceReader(path)
    first = _first_call(reader, "create_texture_handle")
    monkeypatch.setattr(npctx, "_HANDLE_BASE", 1 << 33)
    message = (
        f"call {first.index} (create_texture_handle) in the record at offset {first.offset}: "
        "the replaying context made handle 0x200000001 where the recording got 0x100000001"
    )
    for threaded in (False, True):
        with pytest.raises(trace.HandleMismatchError, match=re.escape(message)):
            list(trace.replay(reader, threaded=threaded))
        with trace.Replayer(reader, threaded=threaded) as r:
            with pytest.raises(trace.HandleMismatchError, match=re.escape(message)):
                r.frame(3)
            assert r.started_from is None
    reader.close()


def _zigzag(v: int) -> bytes:
    return fmt.encode_value(v)


def _edit(data: bytes, offset: int, old: bytes, new: bytes) -> bytes:
    """The trace with the first ``old`` in the body of the record at ``offset`` replaced by
    ``new`` (same length), the record framed and checksummed again: a hand edit."""
    rtype, flags, length, _ = fmt.parse_record_header(data[offset : offset + 12], offset)
    raw = fmt.unpack_body(data[offset + 12 : offset + 12 + length], flags, offset)
    assert len(old) == len(new) and old in raw
    record = fmt.frame_record(rtype, *fmt.pack_body(bytes(raw).replace(old, new, 1), 6))
    return data[:offset] + record + data[offset + 12 + length :]


def test_a_hand_edited_handle_in_a_call_is_a_clear_error(recorded, tmp_path):
    path, got = recorded
    h = got["handles"]
    data = path.read_bytes()
    with trace.TraceReader(path) as reader:
        call = _first_call(reader, "create_texture_handle", 2)  # c, in frame 2
    assert call.result == h["c"]
    forged = (1 << 32) | 9
    edited = _edit(data, call.offset, _zigzag(h["c"]), _zigzag(forged))
    message = (
        f"call {call.index} (create_texture_handle) in the record at offset {call.offset}: "
        f"the replaying context made handle {h['c']:#x} where the recording got {forged:#x}"
    )
    for threaded in (False, True):
        with pytest.raises(trace.HandleMismatchError, match=re.escape(message)):
            list(trace.replay(edited, threaded=threaded))
    # frames before it still replay; frame 3 alone restores c from frame 3's snapshot
    # (which holds the true number), so it does not meet the forged call
    with trace.Replayer(edited, threaded=False, targets=True) as r:
        _check(r.frame(1), got, 1)
        _check(r.frame(3), got, 3)
        assert r.started_from == 3


def test_a_snapshot_whose_handle_cannot_be_made_again_falls_back(recorded):
    """Frame 3's snapshot edited to hold another number for handle b: restoring it makes
    the true number, which is not the one stored, so frame 3 starts from frame 2 instead --
    and is still the recorded frame, byte for byte."""
    path, got = recorded
    h = got["handles"]
    data = path.read_bytes()
    with trace.TraceReader(path) as reader:
        offset = reader.segments[reader.frames[3].first].start_offset
    edited = _edit(data, offset, _zigzag(h["b"]), _zigzag((1 << 32) | 7))
    for threaded in (False, True):
        with trace.Replayer(edited, threaded=threaded, targets=True) as r:
            _check(r.frame(3), got, 3)
            assert r.started_from == 2
