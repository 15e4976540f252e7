"""Tessellation against Mesa's llvmpipe: domain points, primitives and images.

Each case of tests/reference/tess/tess_scenes.py (every domain and spacing, both
windings, point mode, clamped, culled and all-one levels, default levels without
a control shader, a per-patch output after a barrier) draws two patches; the
evaluation shader's outputs are captured by stream output.  The captured words
-- every domain point (TESSCOORD, PRIMID) and position of every primitive, in
order -- equal those llvmpipe's transform feedback captured, bit for bit; the
primitive count equals its PRIMITIVES_GENERATED; the image its image (coverage
identical, colour within 1).  Then the tessellator's own invariants, the
statistics, and errors at the call.
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

REF = Path(__file__).parent / "reference" / "tess"
sys.path.insert(0, str(REF))
import tess_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

sys.path.pop(0)

FS_TC = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: MOV OUT[0].xyz, IN[0].xyzz
  1: MOV OUT[0].w, IMM[0].xxxx
  2: END
"""


def render(case, threaded: bool, workers: int = 1) -> tuple[bytes, int, np.ndarray, object]:
    """Draw a case's two patches; returns (captured bytes, primitives
    generated, image, pipeline statistics)."""
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    try:
        W, H = scenes.WIDTH, scenes.HEIGHT
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
                width0=W, height0=H, bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=W, height=H, cbufs=[surf]))
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
        )
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        # (GL 4's points are sprites: Mesa's state tracker sets
        # point_quad_rasterization, which picks llvmpipe's quad point rule)
        rast = pipe.RasterizerState(point_quad_rasterization=True)
        ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
        tgsi = case.tgsi()
        so = case.stream_output()
        info = pipe.StreamOutputInfo(
            num_outputs=so["num_outputs"],
            stride=so["stride"],
            output=[pipe.StreamOutput(**o) for o in so["output"]],
        )
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=tgsi["vs"])))
        if "tcs" in tgsi:
            ctx.bind_tcs_state(ctx.create_tcs_state(pipe.ShaderState(tokens=tgsi["tcs"])))
            ctx.set_constant_buffer(
                pipe.ShaderType.TESS_CTRL, 0, pipe.ConstantBuffer(user_buffer=case.constants())
            )
        else:
            ctx.set_tess_state(case.outer, case.inner)
        ctx.bind_tes_state(
            ctx.create_tes_state(pipe.ShaderState(tokens=tgsi["tes"], stream_output=info))
        )
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_TC)))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
            )
        )
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, case.control_points())])
        capture = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=1 << 16,
                bind=pipe.Bind.STREAM_OUTPUT,
            )
        )  # fmt: skip
        ctx.set_stream_output_targets([ctx.create_stream_output_target(capture, 0, 1 << 16)], [0])
        generated = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
        stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
        ctx.begin_query(generated)
        ctx.begin_query(stats)
        n = case.vertices_per_patch
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=2 * n, vertices_per_patch=n))
        ctx.end_query(stats)
        ctx.end_query(generated)
        count = ctx.get_query_result(generated, True)[1]
        statistics = ctx.get_query_result(stats, True)[1]
        data, xfer = ctx.transfer_map(
            capture, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 1 << 16, 1, 1)
        )
        captured = bytes(np.array(data))
        ctx.transfer_unmap(xfer)
        data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
        image = np.array(data[0])
        ctx.transfer_unmap(xfer)
        return captured, count, image, statistics
    finally:
        ctx.destroy()


def _reference(name: str) -> tuple[dict, np.ndarray]:
    ref = json.loads((REF / f"{name}.json").read_text())
    image = np.array(Image.open(REF / f"{name}.png"))
    return ref, image


@pytest.mark.parametrize("name", [c.name for c in scenes.CASES])
def test_tessellation_equals_llvmpipe(name):
    case = scenes.case_by_name(name)
    ref, want_image = _reference(name)
    captured, count, image, _ = render(case, threaded=False)
    assert count == ref["primitives_generated"]
    want = bytes.fromhex(ref["captured"])
    got = captured[: len(want)]
    if got != want:
        words = 4 * len(case.varyings())
        g = np.frombuffer(got, "<f4").reshape(-1, words)
        w = np.frombuffer(want, "<f4").reshape(-1, words)
        bad = np.flatnonzero((g != w).any(1))
        pytest.fail(
            f"{bad.size} of {w.shape[0]} captured vertices differ; first {bad[0]}: "
            f"got {g[bad[0]].tolist()} want {w[bad[0]].tolist()}"
        )
    assert set(captured[len(want) : len(want) + 64]) == {0}  # nothing more written
    covered = image[..., :3].any(-1)
    assert (covered == want_image[..., :3].any(-1)).all()
    diff = np.abs(image.astype(int) - want_image.astype(int)).max()
    assert diff <= 1


@pytest.mark.parametrize("name", ["tri_odd", "quad_even", "iso_odd", "patch_sum"])
def test_threaded_and_two_workers_give_the_same_bytes(name):
    case = scenes.case_by_name(name)
    want = render(case, threaded=False)
    for threaded, workers in ((True, 1), (False, 2), (True, 2)):
        got = render(case, threaded, workers)
        assert got[0] == want[0] and got[1] == want[1]
        np.testing.assert_array_equal(got[2], want[2])


def test_statistics_count_patches_and_domain_points():
    case = scenes.case_by_name("quad_equal")
    ref, _ = _reference("quad_equal")
    _, count, _, stats = render(case, threaded=False)
    # domain points: quad levels (2, 3, 4, 5 / 3, 2) and (3, 3, 5, 5 / 5, 3)
    from gallium.draw.tessellator import EQUAL, QUADS, tessellate

    points = sum(
        tessellate(QUADS, EQUAL, False, False, o, i)[0].size
        for o, i in (((2, 3, 4, 5), (3, 2)), ((3, 3, 5, 5), (5, 3)))
    )
    assert stats.hs_invocations == 2
    assert stats.ds_invocations == points
    assert stats.ia_primitives == 2 and stats.ia_vertices == 8 and stats.vs_invocations == 8
    assert stats.c_invocations == count == ref["primitives_generated"]


def _tess_context(threaded: bool, workers: int = 1, gs: str | None = None):
    case = scenes.case_by_name("tri_odd")
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=threaded)
    W, H = scenes.WIDTH, scenes.HEIGHT
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
            width0=W, height0=H, bind=pipe.Bind.RENDER_TARGET,
        )
    )  # fmt: skip
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=W, height=H, cbufs=[surf]))
    ctx.set_viewport_states(
        0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
    )
    tgsi = case.tgsi()
    ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=tgsi["vs"])))
    ctx.bind_tcs_state(ctx.create_tcs_state(pipe.ShaderState(tokens=tgsi["tcs"])))
    ctx.bind_tes_state(ctx.create_tes_state(pipe.ShaderState(tokens=tgsi["tes"])))
    if gs is not None:
        ctx.bind_gs_state(ctx.create_gs_state(pipe.ShaderState(tokens=gs)))
    ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_TC)))
    ctx.bind_vertex_elements_state(
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
    )
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, case.control_points())])
    return ctx, rt


def _levels(outer, inner):
    return pipe.ConstantBuffer(
        user_buffer=np.float32([*outer, *inner, 0, 0, 1, 0.5, 0.25, 0, 0.75, 0, 0, 0])
    )


def _image(ctx, rt):
    ctx.flush().wait(None)
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 64, 64, 1))
    out = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return out


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_many_tessellated_draws_in_one_pass_equal_draws_one_by_one(threaded):
    """Draws whose control constants (levels) differ, queued together (one
    pass: the control and evaluation kernels read the constants per lane),
    give the pixels of the same draws run one at a time."""
    draws = [((2.5, 3, 1.5, 0), (3.5, 0)), ((4, 1.25, 2, 0), (2.0, 0)), ((1, 1, 1, 0), (1, 0))]

    def run(batch: bool):
        ctx, rt = _tess_context(threaded)
        getattr(ctx, "pipe", ctx).batch_draws = batch
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        for outer, inner in draws:
            ctx.set_constant_buffer(pipe.ShaderType.TESS_CTRL, 0, _levels(outer, inner))
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=6, vertices_per_patch=3))
        stats = getattr(ctx, "pipe", ctx).stats["draw_passes"] if not threaded else None
        image = _image(ctx, rt)
        passes = getattr(ctx, "pipe", ctx).stats["draw_passes"]
        ctx.destroy()
        return image, passes, stats

    want, passes_alone, _ = run(False)
    got, passes, _ = run(True)
    np.testing.assert_array_equal(got, want)
    assert passes_alone == 3 and passes == 1
    assert len(np.unique(got.reshape(-1, 4), axis=0)) > 50


GS_SHRINK = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 3
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0]
IMM[0] FLT32 {0.75, 0.0, 0.0, 1.0}
  0: MUL TEMP[0], IN[0][0], IMM[0].xxxw
  1: MOV OUT[0], TEMP[0]
  2: MOV OUT[1], IN[0][1]
  3: EMIT IMM[0].yyyy
  4: MUL TEMP[0], IN[1][0], IMM[0].xxxw
  5: MOV OUT[0], TEMP[0]
  6: MOV OUT[1], IN[1][1]
  7: EMIT IMM[0].yyyy
  8: MUL TEMP[0], IN[2][0], IMM[0].xxxw
  9: MOV OUT[0], TEMP[0]
 10: MOV OUT[1], IN[2][1]
 11: EMIT IMM[0].yyyy
 12: END
"""


def test_a_geometry_shader_reads_the_tessellators_triangles():
    """With a geometry shader after tessellation, its input is the
    evaluation shader's triangles: its invocations and primitives count
    them, and its (shrunken) output is what is drawn."""
    ctx, rt = _tess_context(False, gs=GS_SHRINK)
    ctx.set_constant_buffer(pipe.ShaderType.TESS_CTRL, 0, _levels((3, 2, 2, 0), (3, 0)))
    stats = ctx.create_query(pipe.QueryType.PIPELINE_STATISTICS)
    ctx.begin_query(stats)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3))
    ctx.end_query(stats)
    s = ctx.get_query_result(stats, True)[1]
    shrunk = _image(ctx, rt)
    ctx.destroy()
    ctx, rt = _tess_context(False)
    ctx.set_constant_buffer(pipe.ShaderType.TESS_CTRL, 0, _levels((3, 2, 2, 0), (3, 0)))
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3))
    full = _image(ctx, rt)
    ctx.destroy()
    from gallium.draw.tessellator import FRACTIONAL_ODD, TRIANGLES, tessellate

    tris = tessellate(TRIANGLES, FRACTIONAL_ODD, False, False, (3, 2, 2, 0), (3, 0))[2].size // 3
    assert s.gs_invocations == tris == s.gs_primitives and s.hs_invocations == 1
    assert 0 < shrunk[..., :3].any(-1).sum() < full[..., :3].any(-1).sum()


TES_LINES = scenes.case_by_name("iso_equal").tgsi()["tes"]


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize(
    ("setup", "info", "match"),
    [
        (None, dict(mode=pipe.Prim.TRIANGLES, count=3), "must be PATCHES while tessellation"),
        (None, dict(mode=pipe.Prim.PATCHES, count=3), "vertices_per_patch must be between 1"),
        (None, dict(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=33), "between 1 and 32"),
        ("no_tes", dict(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3), "PATCHES needs"),
        ("tcs_only", dict(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3), "must be bound"),
        ("gs_mismatch", dict(mode=pipe.Prim.PATCHES, count=3, vertices_per_patch=3), "must draw"),
    ],
    ids=["not-patches", "no-vertices", "too-many", "no-tes", "tcs-only", "gs-input"],
)
def test_bad_tessellated_draws_raise_at_the_call(threaded, setup, info, match):
    ctx, _ = _tess_context(threaded)
    tes = ctx.create_tes_state(pipe.ShaderState(tokens=TES_LINES))
    if setup in ("no_tes", "tcs_only"):
        ctx.bind_tes_state(None)
    if setup == "no_tes":
        ctx.bind_tcs_state(None)
    if setup == "gs_mismatch":  # a triangle geometry shader after isolines
        ctx.bind_tes_state(tes)
        ctx.bind_gs_state(ctx.create_gs_state(pipe.ShaderState(tokens=GS_SHRINK)))
    try:
        with pytest.raises(ValueError, match=match):
            ctx.draw_vbo(pipe.DrawInfo(**info))
        ctx.flush().wait(None)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    finally:
        ctx.destroy()


def test_bad_tessellation_shaders_raise_at_creation():
    ctx = get_screen(1).context_create(threaded=False)
    try:
        with pytest.raises(ValueError, match="TCS_VERTICES_OUT between 1 and 32"):
            ctx.create_tcs_state(pipe.ShaderState(tokens="TESS_CTRL\n  0: END\n"))
        with pytest.raises(ValueError, match=r"TES_PRIM_MODE 1 \(isolines\), 4"):
            ctx.create_tes_state(pipe.ShaderState(tokens="TESS_EVAL\n  0: END\n"))
        with pytest.raises(ValueError, match="default_inner_level must have 2"):
            ctx.set_tess_state((1, 1, 1, 1), (1,))
    finally:
        ctx.destroy()


def test_caps_report_tessellation():
    screen = get_screen(1)
    for stage in (pipe.ShaderType.TESS_CTRL, pipe.ShaderType.TESS_EVAL):
        assert screen.get_shader_param(stage, pipe.ShaderCap.MAX_INSTRUCTIONS) > 0
    assert screen.get_param(pipe.Cap.MAX_SHADER_PATCH_VARYINGS) == 30
