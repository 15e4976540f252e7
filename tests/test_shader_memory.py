"""Shader buffers and images in vertex and fragment shaders, against llvmpipe.

The scenes of tests/reference/memory/memory_scenes.py run Mesa's TGSI of their GLSL
(tools/make_memory_reference.py) on numpipe: an atomic counter of every covered
fragment (late depth test), of the fragments that pass an early depth test
(FS_EARLY_DEPTH_STENCIL), per-pixel buffer and image stores where the last primitive
drawn wins, atomics beside derivatives and discard (helper and discarded
invocations store nothing), and a vertex shader's stores and atomics.  Every word of
the buffer and the image equals llvmpipe's; the colour image too (coverage
identical, within 1).  Then the rules: the same bytes threaded or direct and with
one or two workers, fragment stores ordered against later maps and draws,
memory_barrier, and the caps.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import get_screen
from PIL import Image

from gallium import pipe

REF = Path(__file__).parent / "reference" / "memory"
sys.path.insert(0, str(REF))
import memory_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

sys.path.pop(0)

W, H = scenes.WIDTH, scenes.HEIGHT
# Mesa's STATE_FB_WPOS_Y_TRANSFORM for a user framebuffer (no flip: 1, 0, -1, height),
# which its TGSI reads as CONST[0][0] to turn FS_COORD_ORIGIN LOWER_LEFT into rows
WPOS_TRANSFORM = np.float32([1, 0, -1, H])
# Mesa 22.3's shader numbers in the trace -> Gallium stages
_STAGES = {"0": pipe.ShaderType.VERTEX, "4": pipe.ShaderType.FRAGMENT}


def _buffer(screen, ctx, nbytes: int, bind=pipe.Bind.SHADER_BUFFER):
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=nbytes, bind=bind
        )
    )
    ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, np.zeros(nbytes, np.uint8))
    return res


def _read(ctx, res) -> np.ndarray:
    if res.target == pipe.TextureTarget.BUFFER:
        box = pipe.Box(0, 0, 0, res.width0, 1, 1)
    else:
        box = pipe.Box(0, 0, 0, res.width0, res.height0, 1)
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, box)
    out = np.array(data)
    ctx.transfer_unmap(xfer)
    return out


def render(name: str, threaded: bool = False, workers: int = 1):
    """Run a scene; returns (buffer bytes, image texels, colour image)."""
    scene = scenes.scene_by_name(name)
    ref = json.loads((REF / f"{name}.json").read_text())
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    try:
        T = pipe.TextureTarget
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM, width0=W, height0=H,
                bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D, format=pipe.Format.Z24_UNORM_S8_UINT, width0=W, height0=H,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )  # fmt: skip
        ctx.set_framebuffer_state(
            pipe.FramebufferState(
                width=W, height=H,
                cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))],
                zsbuf=ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format)),
            )
        )  # fmt: skip
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
        )
        ctx.bind_depth_stencil_alpha_state(
            ctx.create_depth_stencil_alpha_state(
                pipe.DepthStencilAlphaState(
                    depth=pipe.DepthState(
                        enabled=scene.depth, writemask=True, func=pipe.CompareFunc.LESS
                    )
                )
            )
        )
        ctx.bind_vs_state(
            ctx.create_vs_state(pipe.ShaderState(tokens=(REF / f"{name}.vs.tgsi").read_text()))
        )
        ctx.bind_fs_state(
            ctx.create_fs_state(pipe.ShaderState(tokens=(REF / f"{name}.fs.tgsi").read_text()))
        )
        ctx.set_constant_buffer(
            pipe.ShaderType.FRAGMENT, 0, pipe.ConstantBuffer(user_buffer=WPOS_TRANSFORM)
        )
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
            )
        )
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, scene.vertices())])
        ssbo = _buffer(screen, ctx, 4 * scene.ssbo_words)
        for key in ref["slots"]["buffers"]:
            stage, slot = key.split(":")
            ctx.set_shader_buffers(
                _STAGES[stage], int(slot), [pipe.ShaderBuffer(ssbo, 0, ssbo.width0)]
            )
        image = None
        if scene.image:
            image = screen.resource_create(
                pipe.ResourceTemplate(
                    target=T.TEXTURE_2D, format=pipe.Format.R32_UINT, width0=W, height0=H,
                    bind=pipe.Bind.SHADER_IMAGE,
                )
            )  # fmt: skip
            ctx.texture_subdata(
                image, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, W, H, 1), bytes(4 * W * H)
            )
            for key in ref["slots"]["images"]:
                stage, slot = key.split(":")
                view = pipe.ImageView(image, pipe.Format.R32_UINT, 3, 0, 0, 0)
                ctx.set_shader_images(_STAGES[stage], int(slot), [view])
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=1.0)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=len(scene.triangles)))
        ctx.memory_barrier(pipe.Barrier.ALL)
        words = _read(ctx, ssbo).tobytes()
        texels = _read(ctx, image).tobytes() if image is not None else b""
        colour = _read(ctx, rt)[0]
        return words, texels, colour
    finally:
        ctx.destroy()


@pytest.mark.parametrize("name", [s.name for s in scenes.SCENES])
def test_equals_llvmpipe(name):
    ref = json.loads((REF / f"{name}.json").read_text())
    words, texels, colour = render(name)
    got = np.frombuffer(words, "<u4")
    want = np.frombuffer(bytes.fromhex(ref["buffer"]), "<u4")
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)
        pytest.fail(f"{bad.size} words differ, first {bad[:8]}: {got[bad[:8]]} != {want[bad[:8]]}")
    assert texels == bytes.fromhex(ref["image"])
    want_image = np.array(Image.open(REF / f"{name}.png"))
    assert (colour[..., :3].any(-1) == want_image[..., :3].any(-1)).all()
    assert np.abs(colour.astype(int) - want_image.astype(int)).max() <= 1


def test_references_are_not_vacuous():
    values = {}
    for s in scenes.SCENES:
        ref = json.loads((REF / f"{s.name}.json").read_text())
        values[s.name] = np.frombuffer(bytes.fromhex(ref["buffer"]), "<u4")
    late, early = int(values["fs_count_late"][0]), int(values["fs_count_early"][0])
    assert late > early > 500  # every covered fragment, then those that pass in turn
    assert set(values["fs_pixel_ids"].tolist()) == {0, 1, 2, 3}
    marks = values["fs_discard_derivatives"].reshape(H, W)
    assert set(marks.reshape(-1).tolist()) == {0, 2, 4, 6}  # 2 a fragment
    assert (marks[0::4, 0::4] == 0).all()  # ((x + y) & 3) == 0 discarded
    assert values["vs_writes"][63] == 9


@pytest.mark.parametrize("name", ["fs_count_early", "fs_pixel_ids", "fs_discard_derivatives"])
def test_the_same_words_threaded_and_with_two_workers(name):
    want = render(name)
    for threaded, workers in ((True, 1), (False, 2), (True, 2)):
        got = render(name, threaded, workers)
        assert got[0] == want[0] and got[1] == want[1]
        np.testing.assert_array_equal(got[2], want[2])


def test_caps_report_every_stage():
    screen = get_screen(1)
    for stage in (
        pipe.ShaderType.VERTEX,
        pipe.ShaderType.TESS_CTRL,
        pipe.ShaderType.TESS_EVAL,
        pipe.ShaderType.GEOMETRY,
        pipe.ShaderType.FRAGMENT,
    ):
        assert screen.get_shader_param(stage, pipe.ShaderCap.MAX_SHADER_BUFFERS) == 32
        assert screen.get_shader_param(stage, pipe.ShaderCap.MAX_SHADER_IMAGES) == 32


# -- rules beyond the scenes -------------------------------------------------------

FS_STORE_PIXEL = """FRAG
DCL IN[0], POSITION, LINEAR
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL TEMP[0..1]
IMM[0] UINT32 {8, 32, 0, 0}
IMM[1] FLT32 {0.5, 0.25, 0.0, 1.0}
  0: F2U TEMP[0].xy, IN[0].xyyy
  1: UMAD TEMP[0].x, TEMP[0].yyyy, IMM[0].yyyy, TEMP[0].xxxx
  2: UMUL TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  3: MOV TEMP[1], IN[0]
  4: STORE BUFFER[0].xy, TEMP[0].xxxx, TEMP[1].xyyy
  5: MOV OUT[0], IMM[1]
  6: END
"""
VS_PASS = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n"
FS_RED = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: MOV OUT[0], IMM[0]
  1: END
"""


def _context(threaded: bool, workers: int = 1):
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=W, height0=H, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    ctx.set_framebuffer_state(
        pipe.FramebufferState(
            width=W,
            height=H,
            cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))],
        )
    )
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
    )
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS_PASS)))
    return screen, ctx, rt


FULL = np.float32([[-1, -1, 0, 1], [3, -1, 0, 1], [-1, 3, 0, 1]])


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_map_after_fragment_stores_sees_them(threaded):
    """No barrier: mapping the buffer waits for the scene whose fragment
    shader writes it (every pixel's centre, as two floats)."""
    screen, ctx, _ = _context(threaded, 2)
    buf = _buffer(screen, ctx, W * H * 8)
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_STORE_PIXEL)))
    ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(buf, 0, buf.width0)])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, FULL)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3))
    got = _read(ctx, buf).view(np.float32).reshape(H, W, 2)
    ctx.destroy()
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float32) + np.float32(0.5)
    np.testing.assert_array_equal(got[..., 0], xs)
    np.testing.assert_array_equal(got[..., 1], ys)


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_vertices_written_by_a_fragment_shader_after_a_barrier(threaded):
    """A fragment shader writes, per pixel, its centre into a buffer; after
    memory_barrier(VERTEX_BUFFER) the buffer is a later draw's vertex buffer
    (the draw pipeline reads it after the scene wrote it)."""
    screen, ctx, rt = _context(threaded, 2)
    buf = _buffer(screen, ctx, W * H * 8, pipe.Bind.SHADER_BUFFER | pipe.Bind.VERTEX_BUFFER)
    store = ctx.create_fs_state(pipe.ShaderState(tokens=FS_STORE_PIXEL))
    ctx.bind_fs_state(store)
    ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(buf, 0, buf.width0)])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, FULL)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3))
    ctx.memory_barrier(pipe.Barrier.VERTEX_BUFFER)
    # two pixels' (x, y) a vertex: the first pixel's centre, scaled into clip space
    vs = ctx.create_vs_state(
        pipe.ShaderState(
            tokens="""VERT
DCL IN[0]
DCL OUT[0], POSITION
IMM[0] FLT32 {0.0625, -1.0, 0.0, 1.0}
  0: MAD OUT[0].xy, IN[0].xyyy, IMM[0].xxxx, IMM[0].yyyy
  1: MOV OUT[0].zw, IMM[0].zzzw
  2: END
"""
        )
    )
    ctx.bind_vs_state(vs)
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_RED)))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, buf)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=W // 2))  # (row 0's pixels)
    image = _read(ctx, rt)[0]
    ctx.destroy()
    # point k is the centre pixel (2k, 0) wrote: (2k + 0.5, 0.5), pixel (2k, 0)
    red = image[..., 0] == 255
    want = np.zeros((H, W), bool)
    want[0, 0::2] = True
    np.testing.assert_array_equal(red, want)


GS_STORE = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE POINTS
PROPERTY GS_MAX_OUTPUT_VERTICES 1
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL SV[0], PRIM_ID
DCL OUT[0], POSITION
DCL BUFFER[0]
DCL TEMP[0..1]
IMM[0] UINT32 {4, 100, 0, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: UADD TEMP[1].x, SV[0].xxxx, IMM[0].yyyy
  2: STORE BUFFER[0].x, TEMP[0].xxxx, TEMP[1].xxxx
  3: MOV OUT[0], IN[0][0]
  4: EMIT IMM[0].zzzz
  5: END
"""
TES_COUNT = """TESS_EVAL
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING 2
PROPERTY TES_VERTEX_ORDER_CW 0
PROPERTY TES_POINT_MODE 0
DCL IN[][0], POSITION
DCL SV[0], TESSCOORD
DCL OUT[0], POSITION
DCL BUFFER[0]
DCL TEMP[0]
IMM[0] UINT32 {0, 1, 0, 0}
  0: MUL TEMP[0], IN[0][0], SV[0].xxxx
  1: MAD TEMP[0], IN[1][0], SV[0].yyyy, TEMP[0]
  2: MAD OUT[0], IN[2][0], SV[0].zzzz, TEMP[0]
  3: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  4: END
"""


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_geometry_and_evaluation_shaders_store(threaded):
    """A geometry shader stores each input primitive's id; an evaluation
    shader counts its invocations with an atomic (the statistics' count)."""
    screen, ctx, _ = _context(threaded)
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_RED)))
    buf = _buffer(screen, ctx, 64)
    ctx.bind_gs_state(ctx.create_gs_state(pipe.ShaderState(tokens=GS_STORE)))
    ctx.set_shader_buffers(pipe.ShaderType.GEOMETRY, 0, [pipe.ShaderBuffer(buf, 0, 64)])
    tris = np.tile(FULL * np.float32([0.5, 0.5, 1, 1]), (5, 1))
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, tris)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=15))
    ctx.bind_gs_state(None)
    counter = _buffer(screen, ctx, 4)
    ctx.bind_tes_state(ctx.create_tes_state(pipe.ShaderState(tokens=TES_COUNT)))
    ctx.set_shader_buffers(pipe.ShaderType.TESS_EVAL, 0, [pipe.ShaderBuffer(counter, 0, 4)])
    ctx.set_tess_state((3, 4, 5, 0), (6, 0))
    stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    ctx.begin_query(stats)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=6, vertices_per_patch=3))
    ctx.end_query(stats)
    ids = _read(ctx, buf).view("<u4")
    count = int(_read(ctx, counter).view("<u4")[0])
    points = ctx.get_query_result(stats, True)[1].ds_invocations
    ctx.destroy()
    assert ids[:5].tolist() == [100, 101, 102, 103, 104] and not ids[5:].any()
    assert count == points > 20


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("case", ["multisampled", "alpha-early"])
def test_what_fragment_stores_cannot_do_raises_at_the_call(threaded, case):
    """Fragment stores on a multisampled framebuffer (each sample's pass
    would store again) and the alpha test after FS_EARLY_DEPTH_STENCIL's
    tests: UnsupportedError at draw_vbo on either context, nothing drawn, no
    reset; the same draw without the cause runs."""
    screen = get_screen(1)
    ctx = screen.context_create(threaded=threaded)
    try:
        samples = 4 if case == "multisampled" else 1
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
                width0=W, height0=H, nr_samples=samples, bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.Z24_UNORM_S8_UINT,
                width0=W, height0=H, nr_samples=samples, bind=pipe.Bind.DEPTH_STENCIL,
            )
        )  # fmt: skip
        ctx.set_framebuffer_state(
            pipe.FramebufferState(
                width=W, height=H, samples=samples,
                cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))],
                zsbuf=ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format)),
            )
        )  # fmt: skip
        name = "fs_count_early"
        ctx.bind_vs_state(
            ctx.create_vs_state(pipe.ShaderState(tokens=(REF / f"{name}.vs.tgsi").read_text()))
        )
        ctx.bind_fs_state(
            ctx.create_fs_state(pipe.ShaderState(tokens=(REF / f"{name}.fs.tgsi").read_text()))
        )
        alpha = pipe.AlphaState(enabled=case == "alpha-early", func=pipe.CompareFunc.ALWAYS)
        depth = pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        ctx.bind_depth_stencil_alpha_state(
            ctx.create_depth_stencil_alpha_state(
                pipe.DepthStencilAlphaState(depth=depth, alpha=alpha)
            )
        )
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
            )
        )
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, np.zeros(48, np.float32))])
        ssbo = _buffer(screen, ctx, 64)
        ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(ssbo, 0, 64)])
        says = "fragment shader stores and atomics on a multisampled framebuffer"
        if case == "alpha-early":
            says = "the alpha test with FS_EARLY_DEPTH_STENCIL on a fragment shader with stores"
        with pytest.raises(pipe.UnsupportedError, match=says):
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3))
        ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, None)
        ctx.bind_fs_state(
            ctx.create_fs_state(pipe.ShaderState(tokens="FRAG\n  0: END\n"))
        )  # (no stores: the same state draws)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3))
        ctx.flush().wait(None)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        assert not _read(ctx, ssbo).any()
    finally:
        ctx.destroy()


FS_COUNT_ONLY = """FRAG
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL TEMP[0]
IMM[0] UINT32 {0, 1, 0, 0}
IMM[1] FLT32 {0.0, 1.0, 0.0, 1.0}
  0: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  1: MOV OUT[0], IMM[1]
  2: END
"""


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_an_atomic_counter_across_bands_on_two_workers(threaded):
    """Bands of one scene run on two workers at once: their atomics on one
    counter never lose an update (every covered pixel of a 256x256 frame)."""
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    n = 256
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=n, height0=n, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    ctx.set_framebuffer_state(
        pipe.FramebufferState(
            width=n,
            height=n,
            cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))],
        )
    )
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(n / 2, n / 2, 0.5), translate=(n / 2, n / 2, 0.5))]
    )
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS_PASS)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_COUNT_ONLY)))
    counter = _buffer(screen, ctx, 4)
    ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(counter, 0, 4)])
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, FULL)])
    for _ in range(3):
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3))
    count = int(_read(ctx, counter).view("<u4")[0])
    ctx.destroy()
    assert count == 3 * n * n
