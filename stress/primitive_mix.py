"""Suite primitive_mix: points, lines and geometry shaders on several contexts at once.

Each thread owns a context (threaded, one of them direct) on the shared screen
and renders its own seeded frame over and over: wide points with sprite
coordinates, a line strip and a line loop 1-3 pixels wide, triangles through
a geometry shader that shrinks each one and adds a shifted copy for even
primitive ids, all depth tested, drawn instanced.  Every frame is compared
bit for bit with the same calls on a direct context of a separate one-worker
screen, rendered once up front: the new set-up paths run on the driver
threads and their triangles on the shared worker pool while the other
contexts do the same.
"""

from __future__ import annotations

import random

import numpy as np

import gallium
from gallium import pipe

from ._harness import Deadline, Report, run_threads
from ._scene import Target

NAME = "primitive_mix"
THREADS = 4
W, H = 72, 56

VS = """VERT
DCL IN[0]
DCL IN[1]
DCL SV[0], INSTANCEID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2], PSIZE
DCL TEMP[0]
IMM[0] FLT32 {0.1, 0.0, 5.0, 3.0}
  0: I2F TEMP[0].x, SV[0].xxxx
  1: MUL TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  2: MOV TEMP[0].yzw, IMM[0].yyyy
  3: ADD OUT[0], IN[0], TEMP[0]
  4: MOV OUT[1], IN[1]
  5: MAD OUT[2], IN[1].xxxx, IMM[0].zzzz, IMM[0].wwww
  6: END
"""
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL IN[1], GENERIC[1], LINEAR
DCL OUT[0], COLOR
DCL TEMP[0]
  0: MOV TEMP[0], IN[0]
  1: MAD TEMP[0].xy, IN[1].xyyy, IN[0].zzzz, TEMP[0].xyyy
  2: MOV OUT[0], TEMP[0]
  3: END
"""
# Each triangle shrunk towards its centre, and for even primitive ids a copy
# shifted right: ENDPRIM, a conditional second strip, PRIM_ID.
GS = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 6
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL SV[0], PRIM_ID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0..2]
IMM[0] FLT32 {0.3333333, 0.25, 0.15, 0.0}
IMM[1] UINT32 {1, 0, 0, 0}
  0: ADD TEMP[0], IN[0][0], IN[1][0]
  1: ADD TEMP[0], TEMP[0], IN[2][0]
  2: MUL TEMP[0], TEMP[0], IMM[0].xxxx
  3: LRP OUT[0], IMM[0].yyyy, TEMP[0], IN[0][0]
  4: MOV OUT[1], IN[0][1]
  5: EMIT IMM[1].yyyy
  6: LRP OUT[0], IMM[0].yyyy, TEMP[0], IN[1][0]
  7: MOV OUT[1], IN[1][1]
  8: EMIT IMM[1].yyyy
  9: LRP OUT[0], IMM[0].yyyy, TEMP[0], IN[2][0]
 10: MOV OUT[1], IN[2][1]
 11: EMIT IMM[1].yyyy
 12: ENDPRIM IMM[1].yyyy
 13: AND TEMP[1].x, SV[0].xxxx, IMM[1].xxxx
 14: USEQ TEMP[1].x, TEMP[1].xxxx, IMM[1].yyyy
 15: UIF TEMP[1].xxxx :0
 16:   MOV TEMP[2], IN[0][0]
 17:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].zzzz
 18:   MOV OUT[0], TEMP[2]
 19:   MOV OUT[1], IN[0][1].zyxw
 20:   EMIT IMM[1].yyyy
 21:   MOV TEMP[2], IN[1][0]
 22:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].zzzz
 23:   MOV OUT[0], TEMP[2]
 24:   MOV OUT[1], IN[1][1].zyxw
 25:   EMIT IMM[1].yyyy
 26:   MOV TEMP[2], IN[2][0]
 27:   ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].zzzz
 28:   MOV OUT[0], TEMP[2]
 29:   MOV OUT[1], IN[2][1].zyxw
 30:   EMIT IMM[1].yyyy
 31: ENDIF
 32: END
"""


def frame_data(seed: int) -> dict:
    rng = np.random.default_rng(seed)

    def verts(n):
        v = np.ones((n, 8), np.float32)
        v[:, 0:2] = rng.uniform(-1.1, 1.1, (n, 2))
        v[:, 2] = rng.uniform(-0.9, 0.9, n)
        v[:, 4:7] = rng.uniform(0, 1, (n, 3))
        return v

    return {
        "points": verts(int(rng.integers(5, 30))),
        "strip": verts(int(rng.integers(3, 20))),
        "loop": verts(int(rng.integers(3, 12))),
        "tris": verts(3 * int(rng.integers(2, 12))),
        "width": float(rng.integers(1, 4)),
        "instances": int(rng.integers(1, 3)),
    }


class _Frame:
    """One context's pipeline and target, and the calls of its frame."""

    def __init__(self, screen, ctx, data: dict) -> None:
        self.ctx, self.data = ctx, data
        self.target = Target(screen, ctx, W, H)
        self.vs = ctx.create_vs_state(pipe.ShaderState(tokens=VS))
        self.fs = ctx.create_fs_state(pipe.ShaderState(tokens=FS))
        self.gs = ctx.create_gs_state(pipe.ShaderState(tokens=GS))
        self.ve = ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
        self.points_rast = ctx.create_rasterizer_state(
            pipe.RasterizerState(
                point_size_per_vertex=True, point_quad_rasterization=True, sprite_coord_enable=2
            )
        )
        self.lines_rast = ctx.create_rasterizer_state(
            pipe.RasterizerState(line_width=data["width"])
        )
        self.dsa = ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
            )
        )

    def record(self) -> None:
        ctx, d = self.ctx, self.data
        self.target.bind(ctx)
        ctx.bind_vs_state(self.vs)
        ctx.bind_fs_state(self.fs)
        ctx.bind_vertex_elements_state(self.ve)
        ctx.bind_depth_stencil_alpha_state(self.dsa)
        ctx.clear(
            pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=1.0, stencil=0
        )
        for key, mode, rast in (
            ("points", pipe.Prim.POINTS, self.points_rast),
            ("strip", pipe.Prim.LINE_STRIP, self.lines_rast),
            ("loop", pipe.Prim.LINE_LOOP, self.lines_rast),
        ):
            ctx.bind_rasterizer_state(rast)
            v = d[key]
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
            ctx.draw_vbo(
                pipe.DrawInfo(mode=mode, start=0, count=len(v), instance_count=d["instances"])
            )
        ctx.bind_rasterizer_state(self.lines_rast)
        ctx.bind_gs_state(self.gs)
        v = d["tris"]
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=v)])
        ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.TRIANGLES, start=0, count=len(v), instance_count=d["instances"]
            )
        )
        ctx.bind_gs_state(None)

    def read(self) -> np.ndarray:
        return self.target.read(self.ctx)


def _reference(seed: int) -> np.ndarray:
    screen = gallium.create_screen(num_threads=1)
    ctx = screen.context_create(threaded=False)
    try:
        frame = _Frame(screen, ctx, frame_data(seed))
        frame.record()
        ctx.flush().wait(None)
        return frame.read()
    finally:
        ctx.destroy()
        screen.destroy()


def run(seconds: float, seed: int) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((1, 2, 3, 4))
    report.counters["pool_workers"] = workers
    seeds = [rng.getrandbits(32) for _ in range(THREADS)]
    refs = [_reference(s) for s in seeds]
    for i, ref in enumerate(refs):  # not vacuous: every frame draws something
        drawn = int(np.count_nonzero((ref[..., :3] != 0).any(axis=-1)))
        report.counters[f"ctx{i}_pixels"] = drawn
        if drawn < W * H // 20:
            report.fail(f"ctx{i}: the reference frame has only {drawn} pixels drawn")
    screen = gallium.create_screen(num_threads=workers)
    deadline = Deadline(seconds)
    frames = [0] * THREADS

    def body(i: int):
        def loop() -> None:
            ctx = screen.context_create(threaded=i > 0)
            try:
                frame = _Frame(screen, ctx, frame_data(seeds[i]))
                while deadline.running():
                    frame.record()
                    ctx.flush()
                    img = frame.read()
                    frames[i] += 1
                    report.add(iterations=1, frames=1)
                    if not np.array_equal(img, refs[i]):
                        bad = int(np.count_nonzero((img != refs[i]).any(axis=-1)))
                        report.fail(f"ctx{i}: frame {frames[i]}: {bad} pixels differ")
                        deadline.stop.set()
            finally:
                ctx.destroy()

        return loop

    try:
        run_threads(report, deadline, [(f"ctx{i}", body(i)) for i in range(THREADS)])
        for i, n in enumerate(frames):
            report.counters[f"ctx{i}_frames"] = n
            if n == 0 and report.ok:
                report.fail(f"ctx{i}: rendered no frame in {seconds}s")
    finally:
        screen.destroy()
    return report
