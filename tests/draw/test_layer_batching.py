"""Layered rendering in passes of many draws: random draw sequences whose
programs write LAYER and VIEWPORT_INDEX (vertex shaders per vertex and per
instance, a geometry shader routing triangles), with random viewports,
scissors and rasterizer states between the draws, render the same bytes on
every layer whether the draw pipeline runs its queue in passes of many draws
with multi-state commands, or draw by draw at each call with a command per
state run -- on the direct and the threaded context, with one and two workers."""

from __future__ import annotations

import numpy as np
from conftest import get_screen
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from layerref import REF

import gallium.numpipe.scene as scene_mod
import workers.multistate as multistate
from gallium import pipe

W, H, L = 40, 32, 3
NVERTS = 48


def _tgsi(program: str, stage: str) -> str:
    return (REF / f"{program}.{stage}.tgsi").read_text()


VS_PLAIN = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
FS_PASS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
# (vertex shader, geometry shader or None): per-vertex values, per-instance
# values, a geometry shader routing each triangle to three layers and
# viewports, and a program that writes neither
PROGRAMS = [("vs_vertex", None), ("vs_instanced", None), ("route", "route"), ("plain", None)]
TRIANGLE_MODES = [pipe.Prim.TRIANGLES, pipe.Prim.TRIANGLE_STRIP, pipe.Prim.TRIANGLE_FAN]
MODES = [*TRIANGLE_MODES, pipe.Prim.QUADS, pipe.Prim.POINTS, pipe.Prim.LINES, pipe.Prim.LINE_STRIP]
RASTERIZERS = [
    pipe.RasterizerState(),
    pipe.RasterizerState(scissor=True),
    pipe.RasterizerState(scissor=True, flatshade_first=True, point_size=3.0, line_width=2.0),
    pipe.RasterizerState(cull_face=pipe.Face.BACK, flatshade_first=True),
]
LESS = pipe.CompareFunc.LESS
DSAS = [
    pipe.DepthStencilAlphaState(),
    pipe.DepthStencilAlphaState(depth=pipe.DepthState(enabled=True, writemask=True, func=LESS)),
]

_draw = st.tuples(
    st.just("draw"),
    st.sampled_from(MODES),
    st.integers(0, NVERTS - 12),  # start
    st.integers(1, 12),  # count
    st.integers(1, 3),  # instances
    st.booleans(),  # indexed
)
_first = st.one_of(st.just(0), st.integers(1, 15))  # (viewport 0 changes or stays)
_op = st.one_of(
    _draw,
    _draw,
    _draw,
    st.tuples(st.just("program"), st.integers(0, len(PROGRAMS) - 1)),
    st.tuples(st.just("fs"), st.integers(0, 1)),
    st.tuples(st.just("viewports"), st.integers(0, 2**16), _first),
    st.tuples(st.just("viewports"), st.integers(0, 2**16), _first),
    st.tuples(st.just("scissors"), st.integers(0, 2**16), _first),
    st.tuples(st.just("scissors"), st.integers(0, 2**16), _first),
    st.tuples(st.just("rast"), st.integers(0, len(RASTERIZERS) - 1)),
    st.tuples(st.just("dsa"), st.integers(0, len(DSAS) - 1)),
    st.tuples(st.just("clear"), st.floats(0, 1, width=32)),
    st.tuples(st.just("flush")),
)


def _vertices(rng) -> tuple[np.ndarray, np.ndarray]:
    v = np.zeros((NVERTS, 8), np.float32)
    v[:, 0:2] = rng.uniform(-1.3, 1.3, (NVERTS, 2))
    v[:, 2] = rng.uniform(-0.3, 1.1, NVERTS)
    v[:, 3] = rng.choice([1.0, 1.0, 1.25], NVERTS)
    v[:, 4:8] = rng.uniform(0.1, 1, (NVERTS, 4))
    li = rng.integers(-2, 20, (NVERTS, 2)).astype(np.int32)  # out of range now and then
    return v, li


def _viewports(seed: int, first: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(16 - first):
        w, h = rng.uniform(8, W), rng.uniform(8, H)
        x, y = rng.uniform(-8, W - 4), rng.uniform(-8, H - 4)
        n, f = rng.uniform(0, 1, 2)
        out.append(
            pipe.ViewportState(
                scale=(w / 2, h / 2, (f - n) / 2), translate=(x + w / 2, y + h / 2, (n + f) / 2)
            )
        )
    return out


def _scissors(seed: int, first: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(16 - first):
        x0, y0 = int(rng.integers(0, W - 2)), int(rng.integers(0, H - 2))
        out.append(
            pipe.ScissorState(x0, y0, int(rng.integers(x0, W + 4)), int(rng.integers(y0, H + 4)))
        )
    return out


def _render(screen, threaded: bool, batch: bool, ops: list) -> tuple[bytes, bytes]:
    ctx = screen.context_create(threaded=threaded)
    getattr(ctx, "pipe", ctx).batch_draws = batch
    try:
        T = pipe.TextureTarget.TEXTURE_2D_ARRAY
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=T, format=pipe.Format.R8G8B8A8_UNORM, width0=W, height0=H,
                array_size=L, bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=T, format=pipe.Format.Z24_UNORM_S8_UINT, width0=W, height0=H,
                array_size=L, bind=pipe.Bind.DEPTH_STENCIL,
            )
        )  # fmt: skip
        ctx.set_framebuffer_state(
            pipe.FramebufferState(
                width=W,
                height=H,
                layers=L,
                cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(rt.format, last_layer=L - 1))],
                zsbuf=ctx.create_surface(zs, pipe.SurfaceTemplate(zs.format, last_layer=L - 1)),
            )
        )
        ctx.set_viewport_states(0, _viewports(1, 0))
        ctx.set_scissor_states(0, _scissors(2, 0))
        vss, gss = [], []
        for vs_name, gs_name in PROGRAMS:
            text = VS_PLAIN if vs_name == "plain" else _tgsi(vs_name, "vs")
            vss.append(ctx.create_vs_state(pipe.ShaderState(tokens=text)))
            gss.append(
                None
                if gs_name is None
                else ctx.create_gs_state(pipe.ShaderState(tokens=_tgsi(gs_name, "gs")))
            )
        fss = [
            ctx.create_fs_state(pipe.ShaderState(tokens=_tgsi("route", "fs"))),
            ctx.create_fs_state(pipe.ShaderState(tokens=FS_PASS)),
        ]
        rasts = [ctx.create_rasterizer_state(r) for r in RASTERIZERS]
        dsas = [ctx.create_depth_stencil_alpha_state(d) for d in DSAS]
        F4 = pipe.Format.R32G32B32A32_FLOAT
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, F4),
                    pipe.VertexElement(16, 0, 0, F4),
                    pipe.VertexElement(0, 0, 1, pipe.Format.R32G32_SINT),
                ]
            )
        )
        verts, li = _vertices(np.random.default_rng(3))
        ctx.set_vertex_buffers(
            0,
            [
                pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=verts),
                pipe.VertexBuffer(stride=8, buffer_offset=0, buffer=li),
            ],
        )
        indices = np.random.default_rng(4).integers(0, NVERTS, NVERTS).astype(np.uint16)
        program = 0
        ctx.bind_vs_state(vss[0])
        ctx.bind_fs_state(fss[0])
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 0), depth=1.0)
        for op in ops:
            kind = op[0]
            if kind == "draw":
                _, mode, start, count, ninst, indexed = op
                if gss[program] is not None and mode not in TRIANGLE_MODES:
                    mode = pipe.Prim.TRIANGLES  # (the geometry shader takes triangles)
                info = pipe.DrawInfo(mode=mode, start=start, count=count, instance_count=ninst)
                if indexed:
                    info.index_size, info.index = 2, indices
                ctx.draw_vbo(info)
            elif kind == "program":
                program = op[1]
                ctx.bind_vs_state(vss[program])
                ctx.bind_gs_state(gss[program])
            elif kind == "fs":
                ctx.bind_fs_state(fss[op[1]])
            elif kind == "viewports":
                ctx.set_viewport_states(op[2], _viewports(op[1], op[2]))
            elif kind == "scissors":
                ctx.set_scissor_states(op[2], _scissors(op[1], op[2]))
            elif kind == "rast":
                ctx.bind_rasterizer_state(rasts[op[1]])
            elif kind == "dsa":
                ctx.bind_depth_stencil_alpha_state(dsas[op[1]])
            elif kind == "clear":
                g = float(op[1])
                ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(g, 0.5, 0.25, 1), depth=g)
            elif kind == "flush":
                ctx.flush()
        ctx.flush().wait(None)
        box = pipe.Box(0, 0, 0, W, H, L)
        data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, box)
        colour = np.array(data).tobytes()
        ctx.transfer_unmap(xfer)
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, box)
        depth = np.array(data).tobytes()
        ctx.transfer_unmap(xfer)
        return colour, depth
    finally:
        ctx.destroy()


_TRIS = ("draw", pipe.Prim.TRIANGLES, 0, 12, 1, False)
_POINTS = ("draw", pipe.Prim.POINTS, 0, 12, 2, False)
_LINES = ("draw", pipe.Prim.LINE_STRIP, 12, 12, 1, True)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(_op, min_size=4, max_size=30))
# viewports (but the first) or scissors changing between draws of one program
@example(ops=[_TRIS, ("viewports", 5, 1), _TRIS, ("program", 1), _TRIS, ("viewports", 6, 3), _TRIS])
@example(ops=[("rast", 1), _POINTS, ("scissors", 7, 1), _POINTS, ("program", 2), _TRIS])
@example(ops=[("rast", 2), _LINES, ("scissors", 8, 2), _LINES, ("viewports", 9, 1), _LINES])
def test_layered_passes_render_what_draws_one_by_one_render(ops, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(scene_mod, "MULTISTATE", False)
        m.setattr(multistate, "_all_at_once", lambda *a: False)
        want = _render(get_screen(1), False, False, ops)
    for workers, threaded in ((2, False), (1, True), (2, True)):
        got = _render(get_screen(workers), threaded, True, ops)
        assert got[1] == want[1], (workers, threaded)  # depth and stencil, every layer
        assert got[0] == want[0], (workers, threaded)  # colour, every layer


def test_a_layered_sequence_draws_on_every_layer():
    """The sequences draw real pictures: one draws on all three layers."""
    ops = [("draw", pipe.Prim.TRIANGLES, 0, 12, 3, False), ("program", 2)]
    ops += [("draw", pipe.Prim.TRIANGLE_STRIP, 12, 12, 1, True), ("program", 1)]
    ops += [("draw", pipe.Prim.TRIANGLES, 24, 12, 3, False)]
    colour, _ = _render(get_screen(1), False, True, ops)
    img = np.frombuffer(colour, np.uint8).reshape(L, H, W, 4)
    drawn = img.any(-1).sum(axis=(1, 2))
    assert (drawn > 0).all() and drawn.sum() > 500, drawn.tolist()
