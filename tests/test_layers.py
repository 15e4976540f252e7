"""Layered rendering and viewport arrays (LAYER and VIEWPORT_INDEX outputs,
gallium/draw/layers.py) against Mesa's llvmpipe, and their rules: the layer
and viewport of a primitive, the viewport its vertices are transformed in,
clamping, the caps, batching, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from layerref import H, W, read, reference, render, scenes, setup, tgsi

from gallium import pipe
from gallium.draw import layers
from gallium.draw.pipeline import Draw

SCENES = scenes.scenes()
REF_DIR = scenes.DATA
FS_RED = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: MOV OUT[0], IMM[0]
  1: END
"""


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_matches_llvmpipe(scene, threaded):
    """Every layer of every target: llvmpipe's coverage, colour within 1
    (measured: every scene identical but one pixel of the multisampled one),
    depth within 2e-6 (numpipe's depth planes differ from llvmpipe's by an
    ulp on some pixels whatever the layer, more on the steep planes of
    unclipped triangles crossing the near plane under depth clamping: see
    README; a depth clamp to the wrong viewport's range is off by 0.19)."""
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        got, depth = render(screen, ctx, scene)
    finally:
        ctx.destroy()
    want, want_depth = reference(scene)
    assert got.shape == want.shape
    for t in range(scene.targets):
        for layer in range(scene.layers if t == 0 else scene.second_layers):
            a, b = got[t, layer], want[t, layer]
            covered, expected = a.any(-1), b.any(-1)
            assert np.array_equal(covered, expected), (
                f"target {t} layer {layer}: {int((covered != expected).sum())} pixels "
                "differ in coverage"
            )
            assert int(np.abs(a.astype(int) - b.astype(int)).max()) <= 1, (t, layer)
    assert (depth is None) == (want_depth is None)
    if depth is not None:
        assert np.allclose(depth, want_depth, rtol=0, atol=2e-6)
        # (the depth test picked the same fragments: the colours above agree)


def test_scenes_draw_to_every_layer_and_many_viewports():
    """The goldens are real pictures: the routing scene fills every layer,
    its alpha (gl_Layer * 16 + gl_ViewportIndex + 1) names many viewports."""
    colour, _ = reference(scenes.scene_by_name("gs_route"))
    for layer in range(4):
        assert colour[0, layer].any(-1).sum() > 300
    alphas = set(np.unique(colour[0, ..., 3]).tolist()) - {0}
    assert len(alphas) >= 15
    clamped, _ = reference(scenes.scene_by_name("out_of_range"))
    # layer 7, 4 and -1 (unsigned) clamp to the last layer
    assert clamped[0, 3].any(-1).sum() > 100


@pytest.mark.parametrize("name", ["gs_route", "vs_vertex", "gs_points_lines", "msaa_route"])
def test_identical_bytes_threaded_direct_one_or_two_workers(name):
    scene = scenes.scene_by_name(name)
    images = []
    for workers, threaded in ((1, False), (2, False), (1, True), (2, True)):
        screen = get_screen(workers)
        ctx = screen.context_create(threaded=threaded)
        try:
            images.append(render(screen, ctx, scene))
        finally:
            ctx.destroy()
    for colour, depth in images[1:]:
        assert np.array_equal(colour, images[0][0])
        assert (depth is None and images[0][1] is None) or np.array_equal(depth, images[0][1])


@pytest.mark.parametrize("name", ["vs_points_lines", "gs_points_lines", "vs_vertex_first"])
def test_draws_one_by_one_render_what_passes_render(name):
    """Draws queued and run in passes (several draws a pass) against each
    draw run at its call."""
    scene = scenes.scene_by_name(name)
    out = []
    for batch in (True, False):
        screen = get_screen(2)
        ctx = screen.context_create(threaded=False)
        ctx.batch_draws = batch
        try:
            out.append(render(screen, ctx, scene)[0])
        finally:
            ctx.destroy()
    assert np.array_equal(out[0], out[1])


def test_caps_are_llvmpipes():
    screen = get_screen(1)
    assert screen.get_param(pipe.Cap.MAX_VIEWPORTS) == 16
    assert screen.get_param(pipe.Cap.TGSI_VS_LAYER_VIEWPORT) == 1
    assert screen.get_param(pipe.Cap.TGSI_TES_LAYER_VIEWPORT) == 1
    assert screen.get_param(pipe.Cap.VIEWPORT_SUBPIXEL_BITS) == 8


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_viewport_and_scissor_slots_are_checked_at_the_call(threaded):
    ctx = get_screen(1).context_create(threaded=threaded)
    try:
        vp = pipe.ViewportState(scale=(1, 1, 1), translate=(0, 0, 0))
        sc = pipe.ScissorState(0, 0, 4, 4)
        ctx.set_viewport_states(0, [vp] * 16)  # all sixteen
        ctx.set_scissor_states(15, [sc])
        for call, item in ((ctx.set_viewport_states, vp), (ctx.set_scissor_states, sc)):
            with pytest.raises(ValueError, match=r"start.*must fit in 16"):
                call(15, [item, item])
            with pytest.raises(ValueError, match=r"start.*must fit in 16"):
                call(16, [item])
            with pytest.raises(ValueError, match="start"):
                call(-1, [item])
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        ctx.flush()
    finally:
        ctx.destroy()


# -- rules ---------------------------------------------------------------------------


def _one_scene_draw(ctx, screen, scene, k=0):
    from layerref import draw

    draw(screen, ctx, scene, k, {})


def test_a_program_without_layer_output_draws_the_first_layer_only():
    """A layered framebuffer and a program that writes no LAYER: layer 0
    (each surface's first) is drawn, the others keep their clear."""
    scene = scenes.LayerScene(
        "plain", [scenes.Draw("route", "TRIANGLES", *scenes._route_triangles(3))], scissor=False
    )
    screen = get_screen(1)
    ctx = screen.context_create(threaded=False)
    try:
        res = setup(screen, ctx, scene)
        text = tgsi(scenes.scene_by_name("gs_route"), 0)
        plain_vs = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=plain_vs)))
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=text["fs"])))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        verts = scene.draws[0].vertices
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=verts.shape[0]))
        colour = read(ctx, res["colour"], 4)
    finally:
        ctx.destroy()
    assert colour[0].any(-1).sum() > 1000
    # (the fragment shader reads gl_Layer and gl_ViewportIndex as 0: alpha 1/255)
    assert set(np.unique(colour[0][..., 3]).tolist()) == {0, 1}
    assert not colour[1:].any()


def test_out_of_range_values_clamp_as_llvmpipe():
    """Viewport 16 and more (and negative, read unsigned) is viewport 0;
    layers beyond the last go to the last; the fragment shader still reads
    the values as written."""
    assert layers.clamp_viewport(np.array([0, 15, 16, 100, 2**32 - 1])).tolist() == [0, 15, 0, 0, 0]
    scene = scenes.scene_by_name("out_of_range")
    screen = get_screen(1)
    ctx = screen.context_create(threaded=False)
    try:
        colour, _ = render(screen, ctx, scene)
    finally:
        ctx.destroy()
    alpha = {layer: set(np.unique(colour[0, layer][..., 3]).tolist()) - {0} for layer in range(4)}
    # (layer, viewport) written -> alpha = (16 * layer + viewport + 1) & 255
    written = [(7, 1), (-1, 20), (2, -3), (4, 100), (3, 15), (-(2**31), 16)]
    want = {0: set(), 1: set(), 2: set(), 3: set()}
    for layer, vp in written:
        a = (16 * layer + vp + 1) & 0xFFFFFFFF
        if a <= 255 and not (layer == 3 and vp == 15):  # (viewport 15 is outside the scissor)
            want[min(layer & 0xFFFFFFFF, 3)].add(a)
    assert alpha == want


def test_strip_and_tessellation_leads():
    """The vertex each output vertex takes its viewport transform from."""
    assert layers.strip_leads(7, np.array([3, 4])).tolist() == [0, 0, 0, 3, 4, 4, 4]
    # two patches of 7 domain points (levels 2): point j of the run takes point j - j % 3's
    point_patch = np.repeat([0, 1], 7)

    class _Info:
        index_size = 0
        vertices_per_patch = 3

    class _D:
        info = _Info()

    leads = layers.tess_leads(point_patch, np.array([0, 1]), np.array([0, 0]), [_D()], 3)
    assert leads.tolist() == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 9, 12, 12]
    # a new instance (patch id 0 again) starts a new run
    leads = layers.tess_leads(point_patch, np.array([0, 0]), np.array([0, 0]), [_D()], 3)
    assert leads.tolist() == [0, 0, 0, 3, 3, 3, 6, 7, 7, 7, 10, 10, 10, 13]


@pytest.mark.parametrize("first", [False, True])
def test_quad_triangles_take_their_quads_first_vertex(first):
    """A vertex shader's quads are assembled whole by the draw module: both
    triangles of a quad are transformed in the viewport of the quad's first
    vertex (draw_decompose_tmp.h's QUAD order)."""
    from gallium.draw import assemble

    class _Rast:
        flatshade_first = first

    class _Prog:
        rast = _Rast()

    for mode, lead in ((pipe.Prim.QUADS, [0, 0, 4, 4]), (pipe.Prim.QUAD_STRIP, [2, 2, 4, 4])):
        if mode == pipe.Prim.QUAD_STRIP and first:
            lead = [3, 3, 5, 5]
        tris, _ = assemble.triangles(mode, 8 if mode == pipe.Prim.QUADS else 6, np.zeros(0), first)
        info = pipe.DrawInfo(mode=mode)
        d = Draw(info, None, _Prog(), {}, (), (), None, None, None)
        got = layers.triangle_leads([d], tris, np.zeros(tris.shape[0], np.int64))
        assert got.tolist() == lead, (mode, first)


def test_a_layered_multisampled_framebuffer_keeps_layers_and_samples_apart():
    """Every sample of every layer is its own: the resolved layers equal
    llvmpipe's (test_matches_llvmpipe) and a layer's samples are only
    written by its primitives."""
    scene = scenes.scene_by_name("msaa_route")
    screen = get_screen(2)
    ctx = screen.context_create(threaded=False)
    try:
        res = setup(screen, ctx, scene)
        _one_scene_draw(ctx, screen, scene)
        ctx.flush().wait(None)
        raw = res["colour"]
        data, xfer = ctx.transfer_map(raw, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 3))
        first = np.array(data)  # (sample 0 of each layer)
        ctx.transfer_unmap(xfer)
    finally:
        ctx.destroy()
    for layer in range(3):
        alphas = set(np.unique(first[layer][..., 3]).tolist()) - {0}
        # (the fragment shader's alpha holds the layer written: 3 goes to the last, 2)
        assert alphas and all(min((a - 1) // 16, 2) == layer for a in alphas), (layer, alphas)


def test_band_processes_draw_every_layer_as_threads_do(monkeypatch):
    """A layered scene's bands in band processes (the other layers' targets,
    every sample's, travel with the scene): the bytes of worker threads."""
    import gallium
    from workers import bandproc

    monkeypatch.setattr(bandproc, "MIN_WORK_MS", 0.0)  # (small scenes go too)
    # (3 layers of 4 samples of 64x48: a shared block, so the scene can go)
    scene = scenes.scene_by_name("msaa_route")
    out = []
    for processes in (True, False):
        screen = gallium.create_screen(num_threads=2, processes=processes)
        try:
            ctx = screen.context_create(threaded=False)
            units = sum(screen.pool.process_units)
            try:
                out.append(render(screen, ctx, scene))
            finally:
                ctx.destroy()
            went = sum(screen.pool.process_units) - units
            assert (went > 0) == processes, went
        finally:
            screen.destroy()
    assert np.array_equal(out[0][0], out[1][0])
    want, _ = reference(scene)
    assert int(np.abs(out[0][0].astype(int) - want.astype(int)).max()) <= 1


@pytest.mark.parametrize("include", [True, False], ids=["include", "exclude"])
def test_window_rectangles_cut_every_layer(include):
    """Window rectangles apply to the primitives of every layer."""
    scene = scenes.scene_by_name("gs_route_first")
    screen = get_screen(2)
    images = []
    for window in (False, True):
        ctx = screen.context_create(threaded=window)
        try:
            if window:
                ctx.set_window_rectangles(include, [pipe.ScissorState(10, 6, 40, 30)])
            images.append(render(screen, ctx, scene)[0])
        finally:
            ctx.destroy()
    plain, cut = images
    inside = np.zeros((H, W), bool)
    inside[6:30, 10:40] = True
    keep = inside if include else ~inside
    assert np.array_equal(cut[:, :, keep], plain[:, :, keep])
    assert not cut[:, :, ~keep].any()
    assert all(plain[0, layer][keep].any() for layer in range(4))


@pytest.mark.parametrize("writes_viewport", [False, True])
def test_points_are_clipped_in_x_and_y_with_viewport_arrays(writes_viewport):
    """point_tri_clip leaves a point whose centre is outside the viewport
    unclipped in x and y (its visible part drawn) -- but llvmpipe's draw
    module clips points normally once the program chooses among viewports
    (lp_state_derived.c: bypass_clip_points needs a single viewport)."""
    screen = get_screen(1)
    ctx = screen.context_create(threaded=False)
    try:
        scene = scenes.LayerScene("points", [], scissor=False)
        res = setup(screen, ctx, scene)
        text = (REF_DIR / "vs_vertex.vs.tgsi").read_text()
        if not writes_viewport:  # (the same program without its VIEWPORT_INDEX output)
            text = text.replace("DCL OUT[2].x, VIEWPORT_INDEX\n", "DCL OUT[2].x, GENERIC[5]\n")
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=text)))
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS_RED)))
        rast = pipe.RasterizerState(point_size=8.0, point_tri_clip=True, front_ccw=False)
        ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(0, 0, 1, pipe.Format.R32G32_SINT),
                ]
            )
        )
        # viewport 0 is the whole framebuffer: a point 1/16 of it past the right edge
        vert = np.array([[1.0625, 0.0, 0.5, 1.0, 1, 0, 0, 1]], np.float32)
        li = np.array([[0, 0]], np.int32)
        ctx.set_vertex_buffers(
            0,
            [
                pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vert),
                pipe.VertexBuffer(stride=8, buffer_offset=0, buffer=li),
            ],
        )
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, start=0, count=1))
        drawn = int(read(ctx, res["colour"], 1)[0].any(-1).sum())
    finally:
        ctx.destroy()
    # (x = 66 +- 4 px: columns 62 and 63 of the 8x8 square are on screen)
    assert drawn == (0 if writes_viewport else 16)


@pytest.mark.parametrize("layers", [6, 12], ids=["cube", "cube-array"])
def test_cube_faces_are_layers(layers):
    """A cube (array) surface's faces are its layers: a geometry shader
    routing to them draws what it draws into a 2D array of as many layers."""
    import dataclasses

    base = scenes.scene_by_name("gs_route_first")
    images = []
    for texture in ("array", "cube"):
        scene = dataclasses.replace(base, layers=layers, texture=texture)
        screen = get_screen(2)
        ctx = screen.context_create(threaded=texture == "cube")
        try:
            images.append(render(screen, ctx, scene)[0])
        finally:
            ctx.destroy()
    assert np.array_equal(images[0], images[1])
    assert all(images[0][0, layer].any() for layer in range(4))  # (layers 0..3 drawn)
