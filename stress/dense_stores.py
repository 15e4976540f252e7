"""Suite dense_stores: full-screen pass-through passes on several contexts at once.

K threads, each with its own context (threaded, one of them direct) on one
screen, render seeded frames into their own colour target -- RGBA8, BGRA8,
RGBA32F or RG32F, 256x192 to 384x128 -- over and over: a clear, a full-screen
triangle of three random corner colours (its rectangles take the interleaved
stores -- fragment.store_planes_interleaved, or store_mixed_interleaved where
its clipped halves' planes round differently, and store_planes_float32 or
store_mixed_float32 into float targets -- and drop the deferred clear),
a few smaller pass-through triangles over it, and in some
frames a second full-screen triangle blended over everything.  Every frame is
compared byte for byte with the same calls on a direct context of a separate
one-worker screen, rendered once up front with the channel-by-channel stores.
The suite fails if any frame differs or if no rectangle of an RGBA8/BGRA8
target took the interleaved stores (a vacuous run).
"""

from __future__ import annotations

import random
import threading

import numpy as np

import gallium
import workers.fragment as fragment
from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
from ._scene import OVER, VS

NAME = "dense_stores"
THREADS = 4
FORMATS = (
    pipe.Format.R8G8B8A8_UNORM,
    pipe.Format.B8G8R8A8_UNORM,
    pipe.Format.R32G32B32A32_FLOAT,
    pipe.Format.R32G32_FLOAT,
)
SIZES = ((256, 192), (320, 160), (288, 200), (384, 128))  # 64-row bands of >= 16k pixels: dense
FRAMES_PER_THREAD = 3

# the scenes' vertex shader (stress/_scene.py) and a pass-through colour
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def _full_screen(rng: np.random.Generator, alpha: float | None = None) -> np.ndarray:
    """The bench fill's triangle with random corner colours of 0 and 1: the
    two halves clipping makes get the same planes, so each band is one
    PlaneColour rectangle (other colours round differently in the two
    halves' planes, and a pair of different planes takes the
    MixedPlaneColour stores, channel by channel)."""
    col = rng.integers(0, 2, (3, 4)).astype(np.float64)
    if alpha is not None:
        col[:, 3] = alpha
    xy = np.array([[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]])
    return np.concatenate([xy, np.full((3, 1), 0.5), np.ones((3, 1)), col], 1).astype(np.float32)


def make_frame(seed: int) -> dict:
    """One frame's vertex data and choices, all from ``seed``."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    centres = rng.uniform(-0.8, 0.8, (n, 1, 2))
    xy = (centres + rng.normal(0, 0.25, (n, 3, 2))).reshape(-1, 2)
    small = np.concatenate(
        [xy, np.full((3 * n, 1), 0.5), np.ones((3 * n, 1)), rng.uniform(0, 1, (3 * n, 4))], 1
    ).astype(np.float32)
    return {
        "clear": tuple(float(v) for v in rng.uniform(0, 1, 4)),
        "background": _full_screen(rng),
        "small": small,
        "overlay": _full_screen(rng, alpha=0.5) if rng.random() < 0.5 else None,
    }


class Canvas:
    """A context's pipeline and one colour target (created on that context)."""

    def __init__(self, screen, ctx, fmt, width: int, height: int) -> None:
        self.ctx, self.fmt, self.width, self.height = ctx, fmt, width, height
        self.rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=fmt,
                width0=width,
                height0=height,
                bind=pipe.Bind.RENDER_TARGET,
            )
        )
        surf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=fmt))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=width, height=height, cbufs=[surf]))
        ctx.set_viewport_states(
            0,
            [
                pipe.ViewportState(
                    scale=(width / 2, height / 2, 0.5), translate=(width / 2, height / 2, 0.5)
                )
            ],
        )
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=FS)))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        self.opaque = ctx.create_blend_state(pipe.BlendState())
        self.over = ctx.create_blend_state(pipe.BlendState(rt=[OVER]))

    def _draw(self, verts: np.ndarray) -> None:
        self.ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, verts)])
        self.ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=verts.shape[0]))

    def frame(self, frame: dict) -> bytes:
        """Render ``frame`` and return the target's bytes (a sync point)."""
        ctx = self.ctx
        ctx.clear(pipe.Clear.COLOR0, color=frame["clear"])
        ctx.bind_blend_state(self.opaque)
        self._draw(frame["background"])
        self._draw(frame["small"])
        if frame["overlay"] is not None:
            ctx.bind_blend_state(self.over)
            self._draw(frame["overlay"])
        fence = ctx.flush()
        if not fence.wait(WAIT_LIMIT_S):
            raise TimeoutError(f"a frame's fence did not signal within {WAIT_LIMIT_S} s")
        box = pipe.Box(0, 0, 0, self.width, self.height, 1)
        data, xfer = ctx.transfer_map(self.rt, 0, pipe.Transfer.READ, box)
        out = np.array(data).tobytes()
        ctx.transfer_unmap(xfer)
        return out


def _references(plans: list) -> dict:
    """Each (format, size, seed)'s bytes on a direct context of a one-worker
    screen, with the channel-by-channel stores (no interleaved ones): the
    stressed frames' interleaved stores must give their bytes."""
    screen = gallium.create_screen(num_threads=1, processes=False)
    out = {}
    minimum, fragment.INTERLEAVED_MIN_PIXELS = fragment.INTERLEAVED_MIN_PIXELS, 1 << 40
    try:
        for fmt, (w, h), seeds in plans:
            ctx = screen.context_create(threaded=False)
            try:
                canvas = Canvas(screen, ctx, fmt, w, h)
                for seed in seeds:
                    out[(fmt, w, h, seed)] = canvas.frame(make_frame(seed))
            finally:
                ctx.destroy()
    finally:
        fragment.INTERLEAVED_MIN_PIXELS = minimum
        screen.destroy()
    return out


def run(seconds: float, seed: int, threads: int = THREADS) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((1, 2, 3))
    report.counters["pool_workers"] = workers
    plans = []
    for _ in range(threads):
        seeds = [rng.getrandbits(32) for _ in range(FRAMES_PER_THREAD)]
        plans.append((rng.choice(FORMATS), rng.choice(SIZES), seeds))
    want = _references(plans)
    taken = {"unorm8": 0, "mixed": 0, "float": 0, "mixed_float": 0}
    lock = threading.Lock()
    names = (
        "store_planes_interleaved",
        "store_mixed_interleaved",
        "store_planes_float32",
        "store_mixed_float32",
    )
    real = tuple(getattr(fragment, name) for name in names)

    def counting(kind, fn):  # (the reference renders ran without them)
        def spy(*args):
            done = fn(*args)
            if done:
                with lock:
                    taken[kind] += 1
            return done

        return spy

    for name, kind, fn in zip(names, taken, real):
        setattr(fragment, name, counting(kind, fn))
    screen = gallium.create_screen(num_threads=workers, processes=rng.random() < 0.5)
    deadline = Deadline(seconds)
    direct = rng.randrange(threads)

    def renderer(i: int, fmt, size, seeds):
        def body():
            ctx = screen.context_create(threaded=i != direct)
            try:
                canvas = Canvas(screen, ctx, fmt, *size)
                k = 0
                while deadline.running():
                    s = seeds[k % len(seeds)]
                    got = canvas.frame(make_frame(s))
                    report.add(iterations=1, frames=1)
                    if got != want[(fmt, *size, s)]:
                        report.fail(
                            f"thread {i} ({fmt.name} {size[0]}x{size[1]}, frame seed {s}): "
                            "the bytes differ from the reference (channel stores, one worker)"
                        )
                    k += 1
            finally:
                ctx.destroy()

        return body

    try:
        jobs = [
            (f"dense{i}", renderer(i, fmt, size, seeds))
            for i, (fmt, size, seeds) in enumerate(plans)
        ]
        run_threads(report, deadline, jobs)
    finally:
        for name, fn in zip(names, real):
            setattr(fragment, name, fn)
        screen.destroy()
    for kind, n in taken.items():
        report.counters[f"interleaved_{kind}"] = n
    report.counters["formats"] = "/".join(sorted({fmt.name.split("_")[0] for fmt, _, _ in plans}))
    unorm8 = any("FLOAT" not in fmt.name for fmt, _, _ in plans)
    if report.ok and report.frames_checked and unorm8 and not taken["unorm8"] + taken["mixed"]:
        report.fail("no rectangle of an RGBA8/BGRA8 target took the interleaved stores")
    return report
