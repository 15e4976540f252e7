"""Deterministic scenes the stress suites render, and the reference images they must match.

A :class:`SceneSpec` is generated from a seed: opaque triangles drawn in a few
draw calls with a LESS depth test and depth writes, then translucent triangles
alpha-blended over them (depth tested, no depth writes), every fragment tinted
by a fragment-shader constant.  Some specs draw indexed, some cull back faces.
:func:`reference_image` draws a spec once on a direct context of a separate
one-worker screen; a stressed context must then reproduce that image bit for
bit (DESIGN.md: the same calls give bit-identical pixels for any worker count,
threaded or direct), however many other threads are rendering meanwhile.

Nothing here is thread-aware: a :class:`Pipeline` and a :class:`Target` belong
to the context (and so the thread) that created them.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import numpy as np

import gallium
from gallium import pipe

F32 = np.float32

VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
# The tint constant makes every frame depend on constant-buffer state too.
FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL CONST[0][0]
  0: MUL OUT[0], IN[0], CONST[0][0]
  1: END
"""


# source-alpha blending of the colour, alpha summed "over"
OVER = pipe.RtBlendState(
    blend_enable=True,
    rgb_func=pipe.BlendFunc.ADD,
    rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
    rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
    alpha_func=pipe.BlendFunc.ADD,
    alpha_src_factor=pipe.BlendFactor.ONE,
    alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
)


@dataclass(frozen=True)
class SceneSpec:
    """One frame's worth of geometry and state, fully determined by ``seed``."""

    seed: int
    width: int
    height: int
    opaque: np.ndarray  # (3 * n, 8) float32: clip xyzw, rgba
    opaque_draws: tuple[tuple[int, int], ...]  # (first vertex, count) per draw call
    translucent: np.ndarray  # (3 * m, 8)
    indices: np.ndarray | None  # uint16 indices for the opaque draws, or None
    tint: np.ndarray  # (4,) float32 fragment constant
    clear_color: tuple[float, float, float, float]
    cull_back: bool
    translucent_writes_depth: bool = False  # query scenes: every draw changes what it passes


def triangles_of_draws(spec: SceneSpec) -> list[list[tuple[int, int]]]:
    """Per draw call (opaque ones, then the translucent one): its triangles as
    ``(start, count=3)`` sub-draws, in the order the draw emits them."""
    out = [[(first + 3 * t, 3) for t in range(count // 3)] for first, count in spec.opaque_draws]
    out.append([(3 * t, 3) for t in range(spec.translucent.shape[0] // 3)])
    return out


def make_spec(
    seed: int,
    width: int = 96,
    height: int = 80,
    triangles: int = 24,
    translucent_writes_depth: bool = False,
) -> SceneSpec:
    """Random overlapping triangles at random depths (positions partly off-grid)."""
    rng = np.random.default_rng(seed)
    n = max(3, triangles)
    centres = rng.uniform(-1.05, 1.05, (n, 1, 3))
    offs = rng.normal(0, 0.4, (n, 3, 3))
    xyz = (centres + offs).reshape(-1, 3)
    xyz[:, 2] = np.clip(xyz[:, 2], -0.95, 0.95)
    # a third of the vertices on pixel centres, so fill-rule ties are exercised
    px = (xyz[:, :2] * 0.5 + 0.5) * (width, height)
    k = xyz.shape[0] // 3
    px[:k] = np.floor(px[:k]) + 0.5
    xyz[:, :2] = px / (width, height) * 2 - 1
    col = rng.uniform(0.05, 1.0, (xyz.shape[0], 4))
    col[:, 3] = 1.0
    opaque = np.concatenate([xyz, np.ones((xyz.shape[0], 1)), col], axis=1).astype(F32)
    m = max(1, n // 3)
    tc = rng.uniform(-0.9, 0.9, (m, 1, 2))
    to = rng.normal(0, 0.5, (m, 3, 2))
    txy = (tc + to).reshape(-1, 2)
    tz = np.repeat(rng.uniform(-0.5, 0.9, m), 3)[:, None]
    tcol = rng.uniform(0.0, 1.0, (txy.shape[0], 4))
    tcol[:, 3] = rng.uniform(0.2, 0.8, txy.shape[0])
    translucent = np.concatenate([txy, tz, np.ones((txy.shape[0], 1)), tcol], axis=1).astype(F32)
    cuts = sorted(set(int(c) * 3 for c in rng.integers(1, n, size=2)))
    bounds = [0, *cuts, 3 * n]
    draws = tuple((a, b - a) for a, b in itertools.pairwise(bounds) if b > a)
    indices = None
    if rng.random() < 0.5:
        # indexed: the same triangles through a shuffled vertex array
        perm = rng.permutation(opaque.shape[0])
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(perm.size)
        opaque = opaque[perm]
        indices = inverse.astype(np.uint16)
    tint = np.array([*rng.uniform(0.6, 1.0, 3), 1.0], F32)
    clear = tuple(float(v) for v in (*rng.uniform(0, 0.3, 3), 1.0))
    return SceneSpec(
        seed=seed,
        width=width,
        height=height,
        opaque=opaque,
        opaque_draws=draws,
        translucent=translucent,
        indices=indices,
        tint=tint,
        clear_color=clear,  # type: ignore[arg-type]
        cull_back=bool(rng.random() < 0.3),
        translucent_writes_depth=translucent_writes_depth,
    )


class Pipeline:
    """The CSOs a context needs to draw any :class:`SceneSpec` (created on that context)."""

    def __init__(self, ctx) -> None:
        self.vs = ctx.create_vs_state(pipe.ShaderState(tokens=VS))
        self.fs = ctx.create_fs_state(pipe.ShaderState(tokens=FS))
        self.velems = ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
        self.dsa_opaque = ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
            )
        )
        self.dsa_translucent = ctx.create_depth_stencil_alpha_state(
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=False, func=pipe.CompareFunc.LESS)
            )
        )
        self.blend_opaque = ctx.create_blend_state(pipe.BlendState())
        self.blend_alpha = ctx.create_blend_state(pipe.BlendState(rt=[OVER]))
        self.rast = ctx.create_rasterizer_state(pipe.RasterizerState())
        self.rast_cull = ctx.create_rasterizer_state(pipe.RasterizerState(cull_face=pipe.Face.BACK))

    def bind(self, ctx) -> None:
        ctx.bind_vs_state(self.vs)
        ctx.bind_fs_state(self.fs)
        ctx.bind_vertex_elements_state(self.velems)


class Target:
    """An RGBA8 colour buffer plus a Z32_FLOAT depth buffer, and their surfaces."""

    def __init__(self, screen, ctx, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=pipe.Format.R8G8B8A8_UNORM,
                width0=width,
                height0=height,
                bind=pipe.Bind.RENDER_TARGET,
            )
        )
        self.zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=pipe.Format.Z32_FLOAT,
                width0=width,
                height0=height,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )
        self.cbuf = ctx.create_surface(
            self.rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM)
        )
        self.zsbuf = ctx.create_surface(self.zs, pipe.SurfaceTemplate(format=pipe.Format.Z32_FLOAT))

    def bind(self, ctx) -> None:
        w, h = self.width, self.height
        ctx.set_framebuffer_state(
            pipe.FramebufferState(width=w, height=h, cbufs=[self.cbuf], zsbuf=self.zsbuf)
        )
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
        )

    def destroy(self, screen, ctx) -> None:
        """Destroy the surfaces (on ``ctx``, their context) and both resources."""
        ctx.surface_destroy(self.cbuf)
        ctx.surface_destroy(self.zsbuf)
        screen.resource_destroy(self.rt)
        screen.resource_destroy(self.zs)

    def read(self, ctx) -> np.ndarray:
        """The colour buffer as a (height, width, 4) uint8 copy (a sync point)."""
        return read_rgba8(ctx, self.rt)

    def read_depth(self, ctx) -> np.ndarray:
        """The depth buffer as a (height, width) float32 copy (a sync point)."""
        data, xfer = ctx.transfer_map(
            self.zs, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, self.width, self.height, 1)
        )
        out = np.array(data[0]).view(np.float32).reshape(self.height, self.width)
        ctx.transfer_unmap(xfer)
        return out


def read_rgba8(ctx, res) -> np.ndarray:
    data, xfer = ctx.transfer_map(
        res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, res.height0, 1)
    )
    out = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return out


def record_opaque_draw(
    ctx, p: Pipeline, spec: SceneSpec, i: int, part: tuple[int, int] | None = None
) -> None:
    """Record opaque draw call ``i`` of ``spec`` (state for it included); ``part``
    draws only that ``(start, count)`` range of it instead."""
    first, count = spec.opaque_draws[i] if part is None else part
    ctx.bind_depth_stencil_alpha_state(p.dsa_opaque)
    ctx.bind_blend_state(p.blend_opaque)
    ctx.bind_rasterizer_state(p.rast_cull if spec.cull_back else p.rast)
    if spec.indices is not None:
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, spec.opaque)])
        ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.TRIANGLES,
                start=first,
                count=count,
                index_size=2,
                index=spec.indices,
            )
        )
    else:
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, spec.opaque)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=first, count=count))


def record_translucent_draw(
    ctx, p: Pipeline, spec: SceneSpec, part: tuple[int, int] | None = None
) -> None:
    start, count = (0, spec.translucent.shape[0]) if part is None else part
    dsa = p.dsa_opaque if spec.translucent_writes_depth else p.dsa_translucent
    ctx.bind_depth_stencil_alpha_state(dsa)
    ctx.bind_blend_state(p.blend_alpha)
    ctx.bind_rasterizer_state(p.rast)
    ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, spec.translucent)])
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=start, count=count))


def record_frame_start(ctx, p: Pipeline, spec: SceneSpec, target: Target) -> None:
    """Framebuffer, pipeline, tint constant and the clear that begin every frame."""
    target.bind(ctx)
    p.bind(ctx)
    ctx.set_constant_buffer(pipe.ShaderType.FRAGMENT, 0, pipe.ConstantBuffer(user_buffer=spec.tint))
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=spec.clear_color, depth=1.0)


def record_frame(ctx, p: Pipeline, spec: SceneSpec, target: Target) -> None:
    """Record one whole frame of ``spec`` into ``target`` (no flush)."""
    record_frame_start(ctx, p, spec, target)
    for i in range(len(spec.opaque_draws)):
        record_opaque_draw(ctx, p, spec, i)
    record_translucent_draw(ctx, p, spec)


class ReferenceRenderer:
    """Renders specs on a direct context of its own one-worker screen (thread safe)."""

    def __init__(self) -> None:
        self.screen = gallium.create_screen(num_threads=1)
        self._lock = threading.Lock()
        self._cache: dict[tuple[int, int, int, bool], np.ndarray] = {}
        self._ctx = None
        self._pipeline: Pipeline | None = None
        self._targets: dict[tuple[int, int], Target] = {}

    def _context(self):
        if self._ctx is None:
            self._ctx = self.screen.context_create(threaded=False)
            self._pipeline = Pipeline(self._ctx)
        return self._ctx

    def target(self, width: int, height: int) -> Target:
        ctx = self._context()
        key = (width, height)
        if key not in self._targets:
            self._targets[key] = Target(self.screen, ctx, width, height)
        return self._targets[key]

    def image(self, spec: SceneSpec) -> np.ndarray:
        """The reference image of ``spec`` (rendered once, then cached)."""
        key = (spec.seed, spec.width, spec.height, spec.translucent_writes_depth)
        with self._lock:
            if key not in self._cache:
                ctx = self._context()
                target = self.target(spec.width, spec.height)
                assert self._pipeline is not None
                record_frame(ctx, self._pipeline, spec, target)
                ctx.flush().wait(None)
                img = target.read(ctx)
                img.setflags(write=False)
                self._cache[key] = img
            return self._cache[key]

    def warm(self, specs: list[SceneSpec]) -> None:
        """Render the references of ``specs`` now (before a suite's clock starts)."""
        for spec in specs:
            self.image(spec)

    def close(self) -> None:
        with self._lock:
            if self._ctx is not None:
                self._ctx.destroy()
                self._ctx = None
            self.screen.destroy()


def describe_mismatch(got: np.ndarray, want: np.ndarray) -> str:
    """A short account of how two images differ (for failure reports)."""
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    bad = np.argwhere((got != want).any(axis=-1))
    if bad.size == 0:
        return "identical"
    y, x = (int(v) for v in bad[0])
    diff = int(np.abs(got.astype(np.int16) - want.astype(np.int16)).max())
    return (
        f"{len(bad)} pixels differ (max channel diff {diff}); first at (x={x}, y={y}): "
        f"got {got[y, x].tolist()} want {want[y, x].tolist()}"
    )


def covered_fraction(img: np.ndarray, spec: SceneSpec) -> float:
    """Share of pixels not equal to the clear colour (guards against vacuous scenes)."""
    clear = np.rint(np.asarray(spec.clear_color, F32) * 255).astype(np.uint8)
    return float((img != clear).any(axis=-1).mean())
