"""Many draws, one pass: random draw sequences with random state changes
between the draws render the same bytes, depth/stencil words and query
results whether the draw pipeline runs its queue in passes of many draws
(gallium/draw/pipeline.py) with multi-state raster commands
(workers/multistate.py), or draw by draw at each call with a raster command
per state run (the code before both existed) -- on the direct and the
threaded context, with one and two workers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import ADD, OVER, read_rgba8
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gallium.numpipe.scene as scene_mod
import workers.multistate as multistate
from gallium import pipe

W, H = 48, 40
NVERTS = 64

# transform by CONST[0][0] (scale) and CONST[0][1] (offset); INSTANCEID moves x
VS_CONST = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL SV[0], INSTANCEID
DCL CONST[0][0..1]
DCL TEMP[0..1]
IMM[0] FLT32 {0.125, 0.0, 0.0, 0.0}
  0: I2F TEMP[1].x, SV[0].xxxx
  1: MUL TEMP[1].x, TEMP[1].xxxx, IMM[0].xxxx
  2: MAD TEMP[0], IN[0], CONST[0][0], CONST[0][1]
  3: ADD TEMP[0].x, TEMP[0].xxxx, TEMP[1].xxxx
  4: MOV OUT[0], TEMP[0]
  5: MOV OUT[1], IN[1]
  6: END
"""
# the plain pass-through (no constants, no system values)
VS_PLAIN = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
# VS_CONST whose outputs are written to two stream output buffers
SO_INFO = pipe.StreamOutputInfo(
    num_outputs=3,
    stride=[6, 2, 0, 0],
    output=[
        pipe.StreamOutput(register_index=0, num_components=4, output_buffer=0, dst_offset=0),
        pipe.StreamOutput(register_index=1, num_components=2, output_buffer=0, dst_offset=4),
        pipe.StreamOutput(register_index=1, start_component=2, num_components=2, output_buffer=1),
    ],
)
SO_BYTES = 1536  # each stream output buffer (draws overflow it now and then)
# tessellation: each patch's levels from its PRIM_ID (or set_tess_state's,
# without the control shader), the evaluation shader's triangles interpolate
# POSITION and GENERIC[0] (fractional even spacing)
TCS_PASS = """TESS_CTRL
PROPERTY TCS_VERTICES_OUT 3
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[][0], POSITION
DCL OUT[][1], GENERIC[0]
DCL OUT[2], TESSOUTER
DCL OUT[3], TESSINNER
DCL SV[0], INVOCATIONID
DCL SV[1], PRIM_ID
DCL ADDR[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 2.0, 3.0, 2.5}
IMM[1] FLT32 {0.75, 0.0, 0.0, 0.0}
  0: UARL ADDR[0].x, SV[0].xxxx
  1: MOV OUT[ADDR[0].x][0], IN[ADDR[0].x][0]
  2: MOV OUT[ADDR[0].x][1], IN[ADDR[0].x][1]
  3: U2F TEMP[0].x, SV[1].xxxx
  4: MAD OUT[2], TEMP[0].xxxx, IMM[1].xxxx, IMM[0]
  5: MAD OUT[3], TEMP[0].xxxx, IMM[1].xxxx, IMM[0].wwww
  6: END
"""
TES_TRI = """TESS_EVAL
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL SV[0], TESSCOORD
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0..1]
  0: MUL TEMP[0], SV[0].xxxx, IN[0][0]
  1: MAD TEMP[0], SV[0].yyyy, IN[1][0], TEMP[0]
  2: MAD OUT[0], SV[0].zzzz, IN[2][0], TEMP[0]
  3: MUL TEMP[1], SV[0].xxxx, IN[0][1]
  4: MAD TEMP[1], SV[0].yyyy, IN[1][1], TEMP[1]
  5: MAD OUT[1], SV[0].zzzz, IN[2][1], TEMP[1]
  6: END
"""
FS_PASS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
# the colour times CONST[0][0]
FS_TINT = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL CONST[0][0]
  0: MUL OUT[0], IN[0], CONST[0][0]
  1: END
"""
# discards fragments whose red is below 0.3 (no early depth test)
FS_KILL = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.3, 0.0, 0.0, 0.0}
  0: SLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
  1: KILL_IF -TEMP[0].xxxx
  2: MOV OUT[0], IN[0]
  3: END
"""
FS_PRIMID = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL IN[1].x, PRIM_ID, CONSTANT
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.0625, 0.0, 0.0, 0.0}
  0: U2F TEMP[0].x, IN[1].xxxx
  1: MUL TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  2: MOV TEMP[0].yzw, IN[0]
  3: MOV OUT[0], TEMP[0]
  4: END
"""
FRAGMENT_SHADERS = [FS_PASS, FS_TINT, FS_KILL, FS_PRIMID]
BLENDS = [
    pipe.RtBlendState(),
    OVER,
    ADD,
    pipe.RtBlendState(colormask=pipe.Mask.R | pipe.Mask.A),
    # a logic op (over blending)
    pipe.BlendState(logicop_enable=True, logicop_func=pipe.LogicOp.XOR, rt=[OVER]),
]
LESS, LEQUAL, GREATER, ALWAYS = (
    pipe.CompareFunc.LESS,
    pipe.CompareFunc.LEQUAL,
    pipe.CompareFunc.GREATER,
    pipe.CompareFunc.ALWAYS,
)
DSAS = [
    pipe.DepthStencilAlphaState(),
    pipe.DepthStencilAlphaState(depth=pipe.DepthState(enabled=True, writemask=True, func=LESS)),
    pipe.DepthStencilAlphaState(depth=pipe.DepthState(enabled=True, writemask=True, func=LEQUAL)),
    pipe.DepthStencilAlphaState(depth=pipe.DepthState(enabled=True, writemask=False, func=GREATER)),
    pipe.DepthStencilAlphaState(depth=pipe.DepthState(enabled=True, writemask=True, func=ALWAYS)),
    pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=LESS),
        stencil=(
            pipe.StencilState(
                enabled=True,
                func=pipe.CompareFunc.GEQUAL,
                fail_op=pipe.StencilOp.KEEP,
                zpass_op=pipe.StencilOp.INCR,
                zfail_op=pipe.StencilOp.KEEP,
                valuemask=0xFF,
                writemask=0xFF,
            ),
            pipe.StencilState(),
        ),
    ),
    pipe.DepthStencilAlphaState(
        depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.GEQUAL)
    ),
]
RASTERIZERS = [
    pipe.RasterizerState(),
    pipe.RasterizerState(cull_face=pipe.Face.BACK),
    pipe.RasterizerState(flatshade=True, point_size=3.0, line_width=2.0),
    pipe.RasterizerState(scissor=True, front_ccw=True, point_size=1.5),
    # polygon offset in llvmpipe's setup; the first vertex provokes
    pipe.RasterizerState(offset_tri=True, offset_units=4.0, offset_scale=1.5, flatshade_first=True),
    # the draw module's polygon stages: fill modes, offset per vertex, two-sided colour
    pipe.RasterizerState(
        fill_front=pipe.PolygonMode.LINE,
        fill_back=pipe.PolygonMode.POINT,
        offset_line=True,
        offset_point=True,
        offset_units=-3.0,
        offset_clamp=-0.001,
        point_size=2.0,
        light_twoside=True,
    ),
    pipe.RasterizerState(
        depth_clip=False,
        clamp_vertex_color=True,
        clamp_fragment_color=True,
        line_last_pixel=True,
        fill_back=pipe.PolygonMode.LINE,
        line_width=3.0,
    ),
    pipe.RasterizerState(rasterizer_discard=True),
    pipe.RasterizerState(poly_stipple_enable=True, fill_back=pipe.PolygonMode.LINE),
    pipe.RasterizerState(
        line_stipple_enable=True,
        line_stipple_factor=1,
        line_stipple_pattern=0x3F0F,
        fill_front=pipe.PolygonMode.LINE,
        line_width=2.0,
    ),
    # smooth points and lines (the draw module's aa stages), polygons drawn as them
    pipe.RasterizerState(
        point_smooth=True,
        line_smooth=True,
        point_size=3.0,
        line_width=2.5,
        fill_front=pipe.PolygonMode.POINT,
        fill_back=pipe.PolygonMode.LINE,
    ),
]
MODES = [
    pipe.Prim.TRIANGLES,
    pipe.Prim.TRIANGLE_STRIP,
    pipe.Prim.TRIANGLE_FAN,
    pipe.Prim.POINTS,
    pipe.Prim.LINES,
    pipe.Prim.LINE_STRIP,
    pipe.Prim.QUADS,
]
QUERY_TYPES = [
    pipe.QueryType.OCCLUSION_COUNTER,
    pipe.QueryType.PRIMITIVES_GENERATED,
    pipe.QueryType.PIPELINE_STATISTICS,
    pipe.QueryType.PRIMITIVES_EMITTED,
    pipe.QueryType.SO_STATISTICS,
    pipe.QueryType.SO_OVERFLOW_ANY_PREDICATE,
]

_f = st.floats(-1.5, 1.5, width=32)
_draw = st.tuples(
    st.just("draw"),
    st.sampled_from(MODES),
    st.integers(0, NVERTS - 12),  # start
    st.integers(1, 12),  # count
    st.sampled_from([0, 0, 1, 2, 4]),  # index size
    st.integers(1, 3),  # instances
    st.integers(0, 4),  # index bias
    st.booleans(),  # user (True) or resource indices
)
_op = st.one_of(
    _draw,
    _draw,
    _draw,
    st.tuples(st.just("vs"), st.integers(0, 2)),
    st.tuples(st.just("so"), st.sampled_from(["begin", "append", "off"])),
    st.tuples(st.just("tess"), st.sampled_from(["off", "tes", "tcs"])),
    st.tuples(st.just("draw_auto"), st.sampled_from(MODES), st.integers(1, 2)),
    st.tuples(st.just("vconst"), st.lists(_f, min_size=8, max_size=8), st.booleans()),
    st.tuples(st.just("fs"), st.integers(0, len(FRAGMENT_SHADERS) - 1)),
    st.tuples(st.just("fconst"), st.lists(st.floats(0, 1, width=32), min_size=4, max_size=4)),
    st.tuples(st.just("blend"), st.integers(0, len(BLENDS) - 1)),
    st.tuples(st.just("dsa"), st.integers(0, len(DSAS) - 1)),
    st.tuples(st.just("rast"), st.integers(0, len(RASTERIZERS) - 1)),
    st.tuples(st.just("stencil_ref"), st.integers(0, 3)),
    st.tuples(st.just("scissor"), st.integers(0, W // 2), st.integers(0, H // 2)),
    st.tuples(st.just("viewport"), st.floats(0.5, 1.0, width=32)),
    st.tuples(st.just("vbuf"), st.integers(0, 3)),
    st.tuples(st.just("subdata"), st.integers(0, NVERTS - 4), st.integers(0, 2**31)),
    st.tuples(st.just("clear"), st.floats(0, 1, width=32)),
    st.tuples(st.just("query"), st.integers(0, len(QUERY_TYPES) - 1)),
    st.tuples(st.just("flush")),
)


def _vertices(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = np.zeros((NVERTS, 8), np.float32)
    v[:, 0:2] = rng.uniform(-1.2, 1.2, (NVERTS, 2))
    v[:, 2] = rng.uniform(-0.2, 1.1, NVERTS)  # some beyond the far plane
    v[:, 3] = rng.choice([1.0, 1.0, 1.5], NVERTS)
    v[:, 4:8] = rng.uniform(0, 1, (NVERTS, 4))
    return v


def _render(screen, threaded: bool, batch: bool, ops: list) -> tuple:
    """Run ``ops`` on a new context; returns the colour and depth/stencil
    bytes and every query's result, in order."""
    ctx = screen.context_create(threaded=threaded)
    getattr(ctx, "pipe", ctx).batch_draws = batch
    res = []
    try:
        T = pipe.TextureTarget
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D,
                format=pipe.Format.R8G8B8A8_UNORM,
                width0=W,
                height0=H,
                bind=pipe.Bind.RENDER_TARGET,
            )
        )
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D,
                format=pipe.Format.Z24_UNORM_S8_UINT,
                width0=W,
                height0=H,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )
        ctx.set_framebuffer_state(
            pipe.FramebufferState(
                width=W,
                height=H,
                cbufs=[ctx.create_surface(rt, pipe.SurfaceTemplate(format=rt.format))],
                zsbuf=ctx.create_surface(zs, pipe.SurfaceTemplate(format=zs.format)),
            )
        )
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))]
        )
        vss = [ctx.create_vs_state(pipe.ShaderState(tokens=t)) for t in (VS_CONST, VS_PLAIN)]
        vss.append(ctx.create_vs_state(pipe.ShaderState(tokens=VS_CONST, stream_output=SO_INFO)))
        fss = [ctx.create_fs_state(pipe.ShaderState(tokens=t)) for t in FRAGMENT_SHADERS]
        tcs = ctx.create_tcs_state(pipe.ShaderState(tokens=TCS_PASS))
        tes = ctx.create_tes_state(pipe.ShaderState(tokens=TES_TRI))
        ctx.set_tess_state((2.0, 1.5, 3.0, 1.0), (2.0, 1.0))
        tessellating = False
        blends = [
            ctx.create_blend_state(b if isinstance(b, pipe.BlendState) else pipe.BlendState(rt=[b]))
            for b in BLENDS
        ]
        dsas = [ctx.create_depth_stencil_alpha_state(d) for d in DSAS]
        rasts = [ctx.create_rasterizer_state(r) for r in RASTERIZERS]
        ctx.set_polygon_stipple(
            pipe.PolyStipple(stipple=[(0x0F0F0F0F << (r % 4)) & 0xFFFFFFFF for r in range(32)])
        )
        ctx.bind_vs_state(vss[0])
        ctx.bind_fs_state(fss[0])
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        B = pipe.TextureTarget.BUFFER
        vbufs = []
        for seed in (1, 2):
            data = _vertices(seed)
            buf = screen.resource_create(
                pipe.ResourceTemplate(
                    target=B, format=pipe.Format.NONE, width0=data.nbytes,
                    bind=pipe.Bind.VERTEX_BUFFER,
                )
            )  # fmt: skip
            ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, data)
            vbufs.append(buf)
        so_bufs = []
        for _ in range(2):
            buf = screen.resource_create(
                pipe.ResourceTemplate(
                    target=B, format=pipe.Format.NONE, width0=SO_BYTES,
                    bind=pipe.Bind.STREAM_OUTPUT | pipe.Bind.VERTEX_BUFFER,
                )
            )  # fmt: skip
            ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.zeros(SO_BYTES, np.uint8))
            so_bufs.append(buf)
        so_targets = [ctx.create_stream_output_target(b, 0, SO_BYTES) for b in so_bufs]
        user_verts = _vertices(3)
        rng = np.random.default_rng(7)
        types = {1: np.uint8, 2: np.uint16, 4: np.uint32}
        indices = {size: rng.integers(0, NVERTS - 8, NVERTS).astype(t) for size, t in types.items()}
        ibufs = {}
        for size, idx in indices.items():
            ibufs[size] = screen.resource_create(
                pipe.ResourceTemplate(
                    target=B, format=pipe.Format.NONE, width0=idx.nbytes,
                    bind=pipe.Bind.INDEX_BUFFER,
                )
            )  # fmt: skip
            ctx.buffer_subdata(ibufs[size], pipe.Transfer.WRITE, 0, idx)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbufs[0])])
        VERT, FRAG = pipe.ShaderType.VERTEX, pipe.ShaderType.FRAGMENT
        ctx.set_constant_buffer(
            VERT, 0, pipe.ConstantBuffer(user_buffer=np.float32([1, 1, 1, 1, 0, 0, 0, 0]))
        )
        ctx.set_constant_buffer(FRAG, 0, pipe.ConstantBuffer(user_buffer=np.float32([1, 1, 1, 1])))
        cbuf = screen.resource_create(
            pipe.ResourceTemplate(
                target=B, format=pipe.Format.NONE, width0=32, bind=pipe.Bind.CONSTANT_BUFFER
            )
        )
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=1.0)
        queries = []
        open_query = None
        for op in ops:
            kind = op[0]
            if kind == "draw":
                _, mode, start, count, isize, ninst, bias, user = op
                info = pipe.DrawInfo(mode=mode, start=start, count=count, instance_count=ninst)
                if tessellating:
                    info.mode, info.vertices_per_patch = pipe.Prim.PATCHES, 3
                if isize:
                    info.index_size = isize
                    info.index = indices[isize] if user else ibufs[isize]
                    info.index_bias = bias
                ctx.draw_vbo(info)
            elif kind == "vs":
                ctx.bind_vs_state(vss[op[1]])
            elif kind == "so":
                if op[1] == "off":
                    ctx.set_stream_output_targets([], [])
                else:
                    ctx.set_stream_output_targets(so_targets, [0 if op[1] == "begin" else -1] * 2)
            elif kind == "draw_auto":
                info = pipe.DrawInfo(mode=op[1], instance_count=op[2])
                if tessellating:
                    info.mode, info.vertices_per_patch = pipe.Prim.PATCHES, 3
                info.count_from_stream_output = so_targets[0]
                ctx.draw_vbo(info)
            elif kind == "tess":
                tessellating = op[1] != "off"
                ctx.bind_tcs_state(tcs if op[1] == "tcs" else None)
                ctx.bind_tes_state(tes if tessellating else None)
            elif kind == "vconst":
                data = np.float32(op[1])
                if op[2]:  # through a buffer resource, written in place
                    ctx.buffer_subdata(cbuf, pipe.Transfer.WRITE, 0, data)
                    cb = pipe.ConstantBuffer(buffer=cbuf, buffer_offset=0, buffer_size=32)
                else:
                    cb = pipe.ConstantBuffer(user_buffer=data)
                ctx.set_constant_buffer(VERT, 0, cb)
            elif kind == "fs":
                ctx.bind_fs_state(fss[op[1]])
            elif kind == "fconst":
                ctx.set_constant_buffer(FRAG, 0, pipe.ConstantBuffer(user_buffer=np.float32(op[1])))
            elif kind == "blend":
                ctx.bind_blend_state(blends[op[1]])
            elif kind == "dsa":
                ctx.bind_depth_stencil_alpha_state(dsas[op[1]])
            elif kind == "rast":
                ctx.bind_rasterizer_state(rasts[op[1]])
            elif kind == "stencil_ref":
                ctx.set_stencil_ref(pipe.StencilRef(ref_value=(op[1], 0)))
            elif kind == "scissor":
                x, y = op[1], op[2]
                ctx.set_scissor_states(0, [pipe.ScissorState(x, y, x + W // 2, y + H // 2)])
            elif kind == "viewport":
                vp = pipe.ViewportState(
                    scale=(W / 2 * float(op[1]), H / 2, 0.5), translate=(W / 2, H / 2, 0.5)
                )
                ctx.set_viewport_states(0, [vp])
            elif kind == "vbuf":
                buf = [vbufs[0], vbufs[1], user_verts, so_bufs[0]][op[1]]
                ctx.set_vertex_buffers(
                    0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=buf)]
                )
            elif kind == "subdata":  # new vertices for a buffer queued draws read
                data = _vertices(op[2] % 1000)[:4]
                ctx.buffer_subdata(vbufs[0], pipe.Transfer.WRITE, 32 * op[1], data)
            elif kind == "clear":
                g = float(op[1])
                ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(g, 0.5, 0.25, 1), depth=g)
            elif kind == "query":
                if open_query is not None:
                    ctx.end_query(open_query)
                    queries.append(open_query)
                    open_query = None
                else:
                    open_query = ctx.create_query(QUERY_TYPES[op[1]])
                    ctx.begin_query(open_query)
            elif kind == "flush":
                ctx.flush()
        if open_query is not None:
            ctx.end_query(open_query)
            queries.append(open_query)
        ctx.flush().wait(None)
        for q in queries:
            ok, value = ctx.get_query_result(q, wait=True)
            res.append((q.type if hasattr(q, "type") else None, ok, _plain(value)))
        color = read_rgba8(ctx, rt).tobytes()
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, W, H, 1))
        depth = np.array(data).tobytes()
        ctx.transfer_unmap(xfer)
        for buf in so_bufs:
            data, xfer = ctx.transfer_map(
                buf, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, SO_BYTES, 1, 1)
            )
            res.append(np.array(data).tobytes())
            ctx.transfer_unmap(xfer)
        return color, depth, res
    finally:
        ctx.destroy()


def _plain(value):
    if hasattr(value, "__dataclass_fields__"):
        return tuple(sorted(vars(value).items()))
    return value


def _reference(ops, monkeypatch) -> tuple:
    """Draw by draw at each call, a raster command per state run."""
    with monkeypatch.context() as m:
        m.setattr(scene_mod, "MULTISTATE", False)
        m.setattr(multistate, "_all_at_once", lambda *a: False)
        return _render(get_screen(1), False, False, ops)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(_op, min_size=4, max_size=40))
def test_passes_of_many_draws_render_what_draws_one_by_one_render(ops, monkeypatch):
    want = _reference(ops, monkeypatch)
    for workers, threaded in ((2, False), (1, True), (2, True)):
        got = _render(get_screen(workers), threaded, True, ops)
        assert got[2] == want[2], (workers, threaded)  # the queries, stream output
        assert got[1] == want[1], (workers, threaded)  # depth and stencil
        assert got[0] == want[0], (workers, threaded)  # colour


@pytest.mark.parametrize(
    ("dsa", "resolvable"),
    [(1, True), (2, True), (6, True), (4, False)],
    ids=["less", "lequal", "gequal", "always-run-by-run"],
)
def test_a_multistate_frame_renders_what_commands_of_their_own_render(monkeypatch, dsa, resolvable):
    """Frames of 150 draws alternating opaque, blended and colour-masked
    states on every draw, half of them flat (every depth equal: ties), with a
    depth function the at-once path takes or one it does not: the
    multi-state command's bytes equal separate commands'."""
    rng = np.random.default_rng(5)
    ops = [("dsa", dsa), ("clear", 0.0 if dsa == 6 else 1.0)]
    for i in range(150):
        ops.append(("blend", i % 4))  # (not the logic op: the at-once path refuses it)
        if i % 7 == 0:
            ops.append(("fs", (i // 7) % 2))
        # a colour uniform per draw: states alike but for constants, shaded
        # together with the constants read per lane
        ops.append(("fconst", rng.uniform(0.2, 1, 4).astype(np.float32).tolist()))
        m = rng.uniform(-1, 1, 8).astype(np.float32)
        m[0:2] += 1.5
        if i % 2:  # z = 0.5 at every vertex, w = 1
            m[2], m[3], m[6], m[7] = 0.0, 0.0, 0.5, 1.0
        ops.append(("vconst", m.tolist(), False))
        ops.append(("draw", pipe.Prim.TRIANGLES, int(rng.integers(0, 40)), 12, 0, 1, 0, False))
    calls, lanes = [], []
    real, real_lane = multistate._resolve, multistate._lane_state
    monkeypatch.setattr(multistate, "_resolve", lambda *a: (calls.append(1), real(*a))[1])
    monkeypatch.setattr(
        multistate, "_lane_state", lambda *a: (lanes.append(len(a[1])), real_lane(*a))[1]
    )
    got = _render(get_screen(2), False, True, ops)
    assert (len(calls) > 0) == resolvable
    assert (max(lanes, default=0) > 10) == resolvable  # groups of many states
    monkeypatch.undo()
    want = _reference(ops, monkeypatch)
    assert got == want
    colours = np.frombuffer(got[0], np.uint8).reshape(-1, 4)
    assert len({tuple(c) for c in colours}) > 100  # a real picture
