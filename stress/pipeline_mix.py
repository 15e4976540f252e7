"""Suite pipeline_mix: stream output, tessellation, indirect draws, shader stores.

Each *pipeline* thread owns a threaded (or, for one of them, direct) context on
the shared screen and runs, over and over, one of:

* ``capture``: random vertices through a vertex shader that adds a
  per-draw constant, captured by stream output into a random range of a
  buffer in two or three draws, paused and resumed (offsets -1) between them,
  sometimes overflowing; then a draw from stream output (draw_auto) captures
  the captured vertices again into a second buffer.  Every word of both
  buffers and the PRIMITIVES_EMITTED / SO_OVERFLOW answers are compared with
  numpy's;
* ``tessellate``: two patches with random levels and spacing, their domain
  points captured by stream output; the captured TESSCOORDs and the primitive
  count must be the tessellator's (gallium/draw/tessellator.py), the
  positions the exact interpolation of the control points;
* ``indirect``: draw commands written by a first draw's stream output, read
  by an indirect draw (after it, in order) whose captured VERTEXID,
  INSTANCEID and DRAWID must be the commands';
* ``stores``: rectangles on pixel edges through a fragment shader that
  counts its fragments with an atomic and stores its rectangle's number into
  an image: the count must be their total area, the image the last
  rectangle over each pixel.

The contexts' passes and the scenes of two checked renderers (every frame
bit-exact, see _renderer.py) share the screen's worker pool and driver
threads interleave; none may change a word.
"""

from __future__ import annotations

import random

import numpy as np

import gallium
from gallium import pipe
from gallium.draw.tessellator import EQUAL, FRACTIONAL_EVEN, FRACTIONAL_ODD, TRIANGLES, tessellate

from ._harness import Deadline, Report, run_threads
from ._renderer import CheckedRenderer
from ._scene import ReferenceRenderer, make_spec

NAME = "pipeline_mix"
PIPELINE_THREADS = 3
RENDERERS = 2
CAPTURE_BYTES = 1 << 16

VS_ADD = """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL CONST[0][0]
  0: MOV OUT[0], IN[0]
  1: ADD OUT[1], IN[0], CONST[0][0]
  2: END
"""
VS_COPY = """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[0]
  2: END
"""
VS_IDS = """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL SV[0], VERTEXID
DCL SV[1], INSTANCEID
DCL SV[2], DRAWID
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1].x, SV[0].xxxx
  2: MOV OUT[1].y, SV[1].xxxx
  3: MOV OUT[1].z, SV[2].xxxx
  4: MOV OUT[1].w, IN[0].wwww
  5: END
"""
TCS = """TESS_CTRL
PROPERTY TCS_VERTICES_OUT 3
DCL IN[][0], POSITION
DCL OUT[][0], POSITION
DCL OUT[1], TESSOUTER
DCL OUT[2], TESSINNER
DCL SV[0], INVOCATIONID
DCL SV[1], PRIM_ID
DCL CONST[0][0..3]
DCL ADDR[0]
DCL TEMP[0]
  0: UARL ADDR[0].x, SV[0].xxxx
  1: MOV OUT[ADDR[0].x][0], IN[ADDR[0].x][0]
  2: U2F TEMP[0].x, SV[1].xxxx
  3: MAD OUT[1], TEMP[0].xxxx, CONST[0][2], CONST[0][0]
  4: MAD OUT[2].xy, TEMP[0].xxxx, CONST[0][3].xyyy, CONST[0][1].xyyy
  5: END
"""
TES = """TESS_EVAL
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING {spacing}
PROPERTY TES_VERTEX_ORDER_CW {cw}
PROPERTY TES_POINT_MODE 0
DCL IN[][0], POSITION
DCL SV[0], TESSCOORD
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0]
  0: MUL TEMP[0], IN[0][0], SV[0].xxxx
  1: MAD TEMP[0], IN[1][0], SV[0].yyyy, TEMP[0]
  2: MAD TEMP[0], IN[2][0], SV[0].zzzz, TEMP[0]
  3: MOV OUT[0], TEMP[0]
  4: MOV OUT[1], SV[0]
  5: END
"""


# counts its fragments (ATOMUADD) and stores its rectangle's number (primitive id
# / 2) + 1 at its pixel
FS_STORES = """FRAG
DCL IN[0], POSITION, LINEAR
DCL IN[1].x, PRIM_ID, CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL TEMP[0..1]
IMM[0] UINT32 {0, 1, 0, 0}
IMM[1] FLT32 {0.0, 1.0, 0.0, 1.0}
  0: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  1: F2I TEMP[1].xy, IN[0].xyyy
  2: USHR TEMP[0].x, IN[1].xxxx, IMM[0].yyyy
  3: UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  4: STORE IMAGE[0], TEMP[1], TEMP[0].xxxx, 2D, PIPE_FORMAT_R32_UINT
  5: MOV OUT[0], IMM[1]
  6: END
"""
STORE_SIZE = 256  # the stores round's framebuffer and image (several bands), pixels a side


def _so(*outputs: tuple[int, int]) -> pipe.StreamOutputInfo:
    """Four components of each (register, dword offset) into buffer 0."""
    return pipe.StreamOutputInfo(
        num_outputs=len(outputs),
        stride=[4 * len(outputs), 0, 0, 0],
        output=[
            pipe.StreamOutput(register_index=r, num_components=4, dst_offset=d) for r, d in outputs
        ],
    )


class PipelineThread:
    def __init__(self, name, report, deadline, screen, seed: int, threaded: bool) -> None:
        self.name = name
        self.report = report
        self.deadline = deadline
        self.screen = screen
        self.rng = np.random.default_rng(seed)
        self.threaded = threaded
        self.rounds = {"capture": 0, "tessellate": 0, "indirect": 0, "stores": 0}

    def _buffer(self, nbytes: int, fill: int = 0):
        res = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER,
                format=pipe.Format.NONE,
                width0=nbytes,
                bind=pipe.Bind.STREAM_OUTPUT | pipe.Bind.VERTEX_BUFFER,
            )
        )
        self.ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, np.full(nbytes, fill, np.uint8))
        return res

    def _read(self, res) -> np.ndarray:
        ctx = self.ctx
        n = res.width0
        data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, n, 1, 1))
        out = np.array(data)
        ctx.transfer_unmap(xfer)
        return out

    def run(self) -> None:
        self.ctx = ctx = self.screen.context_create(threaded=self.threaded)
        try:
            ctx.bind_vertex_elements_state(
                ctx.create_vertex_elements_state(
                    [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
                )
            )
            self.discard = ctx.create_rasterizer_state(
                pipe.RasterizerState(rasterizer_discard=True)
            )
            ctx.bind_rasterizer_state(self.discard)
            self.vs_add = ctx.create_vs_state(
                pipe.ShaderState(tokens=VS_ADD, stream_output=_so((1, 0)))
            )
            self.vs_copy = ctx.create_vs_state(
                pipe.ShaderState(tokens=VS_COPY, stream_output=_so((1, 0)))
            )
            self.vs_ids = ctx.create_vs_state(
                pipe.ShaderState(tokens=VS_IDS, stream_output=_so((1, 0)))
            )
            self.tcs = ctx.create_tcs_state(pipe.ShaderState(tokens=TCS))
            self.tes = {
                (sp, cw): ctx.create_tes_state(
                    pipe.ShaderState(
                        tokens=TES.format(spacing=sp, cw=cw), stream_output=_so((1, 0), (0, 4))
                    )
                )
                for sp in (FRACTIONAL_ODD, FRACTIONAL_EVEN, EQUAL)
                for cw in (0, 1)
            }
            self._stores_setup()
            while self.deadline.running():
                what = self.rng.choice(["capture", "tessellate", "indirect", "stores"])
                getattr(self, "_" + what)()
                self.rounds[what] += 1
                self.report.add(iterations=1, frames=1)
        finally:
            ctx.destroy()

    # -- stream output, appended, overflowing, drawn again --------------------------

    def _capture(self) -> None:
        ctx, rng = self.ctx, self.rng
        ctx.bind_vs_state(self.vs_add)
        ctx.bind_tcs_state(None)
        ctx.bind_tes_state(None)
        offset = 16 * int(rng.integers(0, 8))
        size = 16 * int(rng.integers(8, 200))
        buf = self._buffer(offset + size + 64, fill=0xCD)
        again = self._buffer(4096, fill=0xCD)
        target = ctx.create_stream_output_target(buf, offset, size)
        want = np.frombuffer(bytes([0xCD]) * buf.width0, np.uint8).copy()
        room = size // 16
        written = 0
        emitted = ctx.create_query(pipe.QueryType.PRIMITIVES_EMITTED)
        overflow = ctx.create_query(pipe.QueryType.SO_OVERFLOW_PREDICATE)
        ctx.begin_query(emitted)
        ctx.begin_query(overflow)
        made = 0
        for k in range(int(rng.integers(2, 4))):
            n = int(rng.integers(1, 80))
            verts = rng.integers(-64, 64, (n, 4)).astype(np.float32) / 16
            add = (rng.integers(-8, 8, 4) / 4).astype(np.float32)
            ctx.set_constant_buffer(pipe.ShaderType.VERTEX, 0, pipe.ConstantBuffer(user_buffer=add))
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, verts)])
            ctx.set_stream_output_targets([target], [0 if k == 0 else -1])
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=n))
            ctx.set_stream_output_targets([], [])  # pause
            fit = min(n, room - written)
            out = (verts[:fit] + add).astype(np.float32).view(np.uint8).reshape(-1)
            at = offset + 16 * written
            want[at : at + out.size] = out
            written += fit
            made += n
        ctx.end_query(overflow)
        ctx.end_query(emitted)
        # draw the captured points again (draw_auto), captured into `again`
        ctx.set_constant_buffer(
            pipe.ShaderType.VERTEX, 0, pipe.ConstantBuffer(user_buffer=np.zeros(4, np.float32))
        )
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, offset, buf)])
        ctx.set_stream_output_targets([ctx.create_stream_output_target(again, 0, 4096)], [0])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count_from_stream_output=target))
        ctx.set_stream_output_targets([], [])
        got = self._read(buf)
        self._compare(got, want, f"capture of {made} points into {size} bytes at {offset}")
        redrawn = self._read(again)[: 16 * written]
        self._compare(redrawn, want[offset : offset + 16 * written], "draw_auto of the capture")
        answers = (ctx.get_query_result(emitted, True)[1], ctx.get_query_result(overflow, True)[1])
        if answers != (written, made > written):
            self._fail(f"queries {answers} != {(written, made > written)}")

    # -- tessellation ---------------------------------------------------------------

    def _tessellate(self) -> None:
        ctx, rng = self.ctx, self.rng
        spacing = int(rng.choice([FRACTIONAL_ODD, FRACTIONAL_EVEN, EQUAL]))
        cw = int(rng.integers(0, 2))
        ctx.bind_vs_state(self.vs_add)
        ctx.bind_tcs_state(self.tcs)
        ctx.bind_tes_state(self.tes[(spacing, cw)])
        # CONST[0][0..3]: outer, inner, and the second patch's additions to them
        levels = (rng.integers(2, 40, 16) / 4).astype(np.float32)
        levels[8:] = (rng.integers(0, 12, 8) / 4).astype(np.float32)
        levels[[6, 7, 14, 15]] = 0
        ctx.set_constant_buffer(
            pipe.ShaderType.TESS_CTRL, 0, pipe.ConstantBuffer(user_buffer=levels)
        )
        ctx.set_constant_buffer(
            pipe.ShaderType.VERTEX, 0, pipe.ConstantBuffer(user_buffer=np.zeros(4, np.float32))
        )
        points = rng.integers(-32, 32, (6, 4)).astype(np.float32) / 32
        points[:, 3] = 1
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, points)])
        buf = self._buffer(CAPTURE_BYTES)
        ctx.set_stream_output_targets([ctx.create_stream_output_target(buf, 0, CAPTURE_BYTES)], [0])
        generated = ctx.create_query(pipe.QueryType.PRIMITIVES_GENERATED)
        ctx.begin_query(generated)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=6, vertices_per_patch=3))
        ctx.end_query(generated)
        ctx.set_stream_output_targets([], [])
        rows = []
        for p in range(2):
            outer = levels[0:4] + p * levels[8:12]
            inner = levels[4:6] + p * levels[12:14]
            u, v, idx = tessellate(TRIANGLES, spacing, bool(cw), False, outer, inner)
            w = (np.float32(1) - u) - v
            tc = np.stack([u, v, w, np.zeros_like(u)], 1)[idx]
            corner = points[3 * p : 3 * p + 3]
            pos = corner[0] * tc[:, 0:1] + corner[1] * tc[:, 1:2] + corner[2] * tc[:, 2:3]
            rows.append(np.concatenate([tc, pos], 1).astype(np.float32))
        want = np.concatenate(rows).view(np.uint8).reshape(-1)
        got = self._read(buf)
        count = ctx.get_query_result(generated, True)[1]
        if count * 3 * 32 != want.size:
            self._fail(f"tessellated {count} triangles, the tessellator makes {want.size // 96}")
        self._compare(got[: want.size], want, f"tessellation spacing {spacing} cw {cw}")

    # -- commands from stream output --------------------------------------------------

    def _indirect(self) -> None:
        ctx, rng = self.ctx, self.rng
        ctx.bind_tcs_state(None)
        ctx.bind_tes_state(None)
        draws = int(rng.integers(1, 4))
        cmds = np.zeros((draws, 4), np.uint32)
        for d in range(draws):
            cmds[d] = (rng.integers(1, 6), rng.integers(1, 3), rng.integers(0, 10), 0)
        cmd_buf = self._buffer(16 * draws)
        ctx.bind_vs_state(self.vs_copy)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, cmds.view(np.float32))])
        ctx.set_stream_output_targets(
            [ctx.create_stream_output_target(cmd_buf, 0, 16 * draws)], [0]
        )
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.POINTS, count=draws))  # the words, as they are
        ctx.set_stream_output_targets([], [])
        ctx.bind_vs_state(self.vs_ids)
        positions = np.ones((16, 4), np.float32)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, positions)])
        out = self._buffer(4096)
        ctx.set_stream_output_targets([ctx.create_stream_output_target(out, 0, 4096)], [0])
        ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.POINTS,
                indirect=pipe.DrawIndirectInfo(stride=16, draw_count=draws, buffer=cmd_buf),
            )
        )
        ctx.set_stream_output_targets([], [])
        want = []
        for d, (count, ninst, start, _) in enumerate(cmds.tolist()):
            for i in range(ninst):
                for v in range(start, start + count):
                    want.append([v, i, d, 0x3F800000])
        want = np.array(want, np.uint32).view(np.uint8).reshape(-1)
        self._compare(self._read(out)[: want.size], want, f"indirect draws {cmds.tolist()}")

    # -- fragment shader stores ----------------------------------------------------

    def _stores_setup(self) -> None:
        ctx, n = self.ctx, STORE_SIZE
        self.rt = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R8G8B8A8_UNORM,
                width0=n, height0=n, bind=pipe.Bind.RENDER_TARGET,
            )
        )  # fmt: skip
        self.image = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=pipe.Format.R32_UINT,
                width0=n, height0=n, bind=pipe.Bind.SHADER_IMAGE,
            )
        )  # fmt: skip
        surf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=self.rt.format))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=n, height=n, cbufs=[surf]))
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(n / 2, n / 2, 0.5), translate=(n / 2, n / 2, 0.5))]
        )
        self.fs_stores = ctx.create_fs_state(pipe.ShaderState(tokens=FS_STORES))
        self.drawing = ctx.create_rasterizer_state(pipe.RasterizerState())

    def _stores(self) -> None:
        """Rectangles on pixel edges (two triangles each): the fragment
        shader's counter must end at their total area, the image hold the
        last rectangle drawn over each pixel."""
        ctx, rng, n = self.ctx, self.rng, STORE_SIZE
        ctx.bind_tcs_state(None)
        ctx.bind_tes_state(None)
        ctx.bind_vs_state(self.vs_copy)
        ctx.bind_fs_state(self.fs_stores)
        ctx.bind_rasterizer_state(self.drawing)
        counter = self._buffer(4)
        ctx.texture_subdata(
            self.image, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, n, n, 1), bytes(4 * n * n)
        )
        ctx.set_shader_buffers(pipe.ShaderType.FRAGMENT, 0, [pipe.ShaderBuffer(counter, 0, 4)])
        view = pipe.ImageView(self.image, pipe.Format.R32_UINT, 3, 0, 0, 0)
        ctx.set_shader_images(pipe.ShaderType.FRAGMENT, 0, [view])
        rects = int(rng.integers(1, 12))
        verts, want, area = [], np.zeros((n, n), np.uint32), 0
        for r in range(rects):
            x0, x1 = sorted(rng.choice(n + 1, 2, replace=False).tolist())
            y0, y1 = sorted(rng.choice(n + 1, 2, replace=False).tolist())
            c = [
                (x * 2 / n - 1, y * 2 / n - 1) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
            ]
            for k in (0, 1, 2, 0, 2, 3):
                verts.append([*c[k], 0, 1])
            want[y0:y1, x0:x1] = r + 1
            area += (x1 - x0) * (y1 - y0)
        tri = np.array(verts, np.float32)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, tri)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=tri.shape[0]))
        ctx.bind_rasterizer_state(self.discard)
        count = int(self._read(counter).view(np.uint32)[0])
        if count != area:
            self._fail(f"fragment counter {count} != covered area {area}")
        data, xfer = ctx.transfer_map(self.image, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, n, n, 1))
        got = np.array(data[0]).view(np.uint32).reshape(n, n)
        ctx.transfer_unmap(xfer)
        self._compare(got.view(np.uint8), want.view(np.uint8), f"{rects} rectangles' ids")

    def _compare(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            self._fail(f"{what}: {bad.size} bytes differ, first at {int(bad[0])}")

    def _fail(self, message: str) -> None:
        self.report.fail(f"{self.name}: {message}")
        self.deadline.stop.set()


def run(seconds: float, seed: int) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((1, 2, 3))
    report.counters["pool_workers"] = workers
    screen = gallium.create_screen(num_threads=workers)
    reference = ReferenceRenderer()
    try:
        specs = [make_spec(rng.getrandbits(32), 64, 64, triangles=16) for _ in range(2)]
        reference.warm(specs)
        deadline = Deadline(seconds)
        threads = [
            PipelineThread(f"pipeline{i}", report, deadline, screen, rng.getrandbits(32), i > 0)
            for i in range(PIPELINE_THREADS)
        ]
        renderers = [
            CheckedRenderer(
                f"render{i}", report, deadline, screen, reference, specs, rng.getrandbits(32)
            )
            for i in range(RENDERERS)
        ]
        bodies = [(t.name, t.run) for t in threads] + [(r.name, r.run) for r in renderers]
        run_threads(report, deadline, bodies)
        for t in threads:
            for what, n in t.rounds.items():
                report.counters[f"{t.name}_{what}"] = n
            if sum(t.rounds.values()) == 0 and report.ok:
                report.fail(f"{t.name}: ran nothing in {seconds}s")
    finally:
        reference.close()
        screen.destroy()
    return report
