"""Suite compute_mix: compute grids on several contexts at once, next to rendering.

Each *compute* thread owns a threaded (or, for one of them, direct) context
on the shared screen and launches, over and over, grids of random size of two
programs on its own buffers, with fresh random inputs uploaded each time:

* ``mirror``: each block of 64 loads its slice of ``x`` into SHARED memory,
  waits at a BARRIER, and writes ``x`` of its mirror invocation (63 - t)
  times a constant (CONST[0][0], a different value per context and grid);
* ``histogram``: each invocation adds 1 to ``counts[x & 15]`` with
  ATOMUADD and writes the value it got back, so its output is the number of
  earlier invocations (in invocation order) with the same bucket.

Every result is read back and compared word for word with numpy.  The grids
of all contexts and the scenes of two checked renderers (every frame
bit-exact, see _renderer.py) share the screen's worker pool, so grid calls
and bands interleave on the same workers; none may change a word.
"""

from __future__ import annotations

import random

import numpy as np

import gallium
from gallium import pipe

from ._harness import Deadline, Report, run_threads
from ._renderer import CheckedRenderer
from ._scene import ReferenceRenderer, make_spec

NAME = "compute_mix"
COMPUTE_THREADS = 3
RENDERERS = 2

MIRROR = """COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 64
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL SV[0], THREAD_ID
DCL SV[1], BLOCK_ID
DCL BUFFER[0]
DCL BUFFER[1]
DCL MEMORY[0], SHARED
DCL CONST[0][0]
DCL TEMP[0..2]
IMM[0] UINT32 {4, 63, 64, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: UMAD TEMP[0].y, SV[1].xxxx, IMM[0].zzzz, SV[0].xxxx
  2: UMUL TEMP[0].y, TEMP[0].yyyy, IMM[0].xxxx
  3: LOAD TEMP[1].x, BUFFER[1], TEMP[0].yyyy
  4: STORE MEMORY[0].x, TEMP[0].xxxx, TEMP[1].xxxx
  5: BARRIER
  6: INEG TEMP[2].x, SV[0].xxxx
  7: UADD TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy
  8: UMUL TEMP[2].x, TEMP[2].xxxx, IMM[0].xxxx
  9: LOAD TEMP[1].x, MEMORY[0], TEMP[2].xxxx
 10: MUL TEMP[1].x, TEMP[1].xxxx, CONST[0][0].xxxx
 11: STORE BUFFER[0].x, TEMP[0].yyyy, TEMP[1].xxxx
 12: END
"""

HISTOGRAM = """COMP
DCL SV[0], THREAD_ID
DCL SV[1], BLOCK_ID
DCL BUFFER[0]
DCL BUFFER[1]
DCL BUFFER[2]
DCL TEMP[0..2]
IMM[0] UINT32 {4, 15, 1, 32}
  0: UMAD TEMP[0].x, SV[1].xxxx, IMM[0].wwww, SV[0].xxxx
  1: UMUL TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  2: LOAD TEMP[1].x, BUFFER[1], TEMP[0].xxxx
  3: AND TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy
  4: UMUL TEMP[1].x, TEMP[1].xxxx, IMM[0].xxxx
  5: ATOMUADD TEMP[2].x, BUFFER[2], TEMP[1].xxxx, IMM[0].zzzz
  6: STORE BUFFER[0].x, TEMP[0].xxxx, TEMP[2].xxxx
  7: END
"""

# Up to 384k invocations: several kernel calls (both programs are short:
# compute.COMPUTE_LANES_SHORT = 256k), shared by the workers or, with atomics, not.
MAX_MIRROR_BLOCKS = 6000  # of 64 invocations
MAX_HISTOGRAM_BLOCKS = 12000  # of 32 invocations


def _expected_histogram(x: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each invocation's returned value, the final counts) for HISTOGRAM."""
    bucket = (x & 15).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    sorted_b = bucket[order]
    first = np.searchsorted(sorted_b, sorted_b, side="left")
    rank = np.empty_like(bucket)
    rank[order] = np.arange(bucket.size) - first
    old = (start[bucket].astype(np.int64) + rank).astype(np.uint32)
    counts = start + np.bincount(bucket, minlength=16).astype(np.uint32)
    return old, counts


class ComputeThread:
    def __init__(self, name, report, deadline, screen, seed: int, threaded: bool) -> None:
        self.name = name
        self.report = report
        self.deadline = deadline
        self.screen = screen
        self.rng = np.random.default_rng(seed)
        self.threaded = threaded
        self.grids = 0

    def _buffer(self, ctx, nbytes: int):
        return self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER,
                format=pipe.Format.NONE,
                width0=nbytes,
                bind=pipe.Bind.SHADER_BUFFER,
            )
        )

    def _read(self, ctx, res) -> np.ndarray:
        n = res.width0
        data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, n, 1, 1))
        out = np.array(data).view(np.uint32)
        ctx.transfer_unmap(xfer)
        return out

    def run(self) -> None:
        ctx = self.screen.context_create(threaded=self.threaded)
        try:
            self._loop(ctx)
        finally:
            ctx.destroy()

    def _loop(self, ctx) -> None:
        rng = self.rng
        cap = MAX_HISTOGRAM_BLOCKS * 32 * 4
        x, out = self._buffer(ctx, cap), self._buffer(ctx, cap)
        counts = self._buffer(ctx, 64)
        mirror = ctx.create_compute_state(pipe.ComputeState(prog=MIRROR, req_local_mem=256))
        histogram = ctx.create_compute_state(pipe.ComputeState(prog=HISTOGRAM))
        while self.deadline.running():
            if rng.random() < 0.5:
                blocks = int(rng.integers(1, MAX_MIRROR_BLOCKS + 1))
                n = blocks * 64
                xs = rng.standard_normal(n).astype(np.float32)
                k = np.float32(rng.uniform(-4, 4))
                ctx.buffer_subdata(x, pipe.Transfer.WRITE, 0, xs)
                ctx.set_constant_buffer(
                    pipe.ShaderType.COMPUTE,
                    0,
                    pipe.ConstantBuffer(user_buffer=np.array([k, 0, 0, 0], np.float32)),
                )
                ctx.bind_compute_state(mirror)
                ctx.set_shader_buffers(
                    pipe.ShaderType.COMPUTE,
                    0,
                    [pipe.ShaderBuffer(out, 0, cap), pipe.ShaderBuffer(x, 0, 4 * n)],
                )
                ctx.launch_grid(pipe.GridInfo(block=(64, 1, 1), grid=(blocks, 1, 1)))
                want = (xs.reshape(blocks, 64)[:, ::-1] * k).astype(np.float32).reshape(-1)
                got = self._read(ctx, out)[:n]
                what = f"mirror of {blocks} blocks, k={k!r}"
                self._compare(got, want.view(np.uint32), what)
            else:
                blocks = int(rng.integers(1, MAX_HISTOGRAM_BLOCKS + 1))
                n = blocks * 32
                xs = rng.integers(0, 2**32, n, dtype=np.uint32)
                start = rng.integers(0, 1000, 16, dtype=np.uint32)
                ctx.buffer_subdata(x, pipe.Transfer.WRITE, 0, xs)
                ctx.buffer_subdata(counts, pipe.Transfer.WRITE, 0, start)
                ctx.bind_compute_state(histogram)
                ctx.set_shader_buffers(
                    pipe.ShaderType.COMPUTE,
                    0,
                    [
                        pipe.ShaderBuffer(out, 0, cap),
                        pipe.ShaderBuffer(x, 0, 4 * n),
                        pipe.ShaderBuffer(counts, 0, 64),
                    ],
                )
                ctx.launch_grid(pipe.GridInfo(block=(32, 1, 1), grid=(blocks, 1, 1)))
                old, final = _expected_histogram(xs, start)
                what = f"histogram of {blocks} blocks"
                self._compare(self._read(ctx, out)[:n], old, what + " (returned values)")
                self._compare(self._read(ctx, counts)[:16], final, what + " (counts)")
            self.grids += 1
            self.report.add(iterations=1, frames=1)

    def _compare(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            self.report.fail(
                f"{self.name}: {what}: {bad.size} words differ, first at {int(bad[0])}: "
                f"{int(got[bad[0]]):#x} != {int(want[bad[0]]):#x}"
            )
            self.deadline.stop.set()


def run(seconds: float, seed: int) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((1, 2, 3, 4))
    report.counters["pool_workers"] = workers
    screen = gallium.create_screen(num_threads=workers)
    reference = ReferenceRenderer()
    try:
        specs = [make_spec(rng.getrandbits(32), 64, 64, triangles=16) for _ in range(2)]
        reference.warm(specs)
        deadline = Deadline(seconds)
        computes = [
            ComputeThread(f"compute{i}", report, deadline, screen, rng.getrandbits(32), i > 0)
            for i in range(COMPUTE_THREADS)
        ]
        renderers = [
            CheckedRenderer(
                f"render{i}", report, deadline, screen, reference, specs, rng.getrandbits(32)
            )
            for i in range(RENDERERS)
        ]
        bodies = [(c.name, c.run) for c in computes] + [(r.name, r.run) for r in renderers]
        run_threads(report, deadline, bodies)
        for c in computes:
            report.counters[f"{c.name}_grids"] = c.grids
            if c.grids == 0 and report.ok:
                report.fail(f"{c.name}: launched no grid in {seconds}s")
    finally:
        reference.close()
        screen.destroy()
    return report
