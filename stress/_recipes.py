"""Frame recipes for the soak: deterministic frames of many kinds, and their references.

A *recipe* records one whole frame into a :class:`~stress._scene.Target`:
it binds every state it depends on (so recipes can follow one another on a
context in any order) and leaves no sampler view or geometry shader bound.
Its CSOs live in a *kit* made once per context (:meth:`make_kit`) and
destroyed with :meth:`Kit.destroy`; objects a frame makes for itself
(textures, index buffers, sampler views) it destroys before it returns, with
the frame's work still queued, as Gallium allows.

:func:`references` runs every recipe once on a direct context of its own
one-worker screen, inside an occlusion counter and a pipeline-statistics
query, and keeps the image and both results.  Every later frame of that
recipe, on any context, threaded or direct, at any point of a long run,
must give the same image and the same query results word for word
(DESIGN.md: the same calls give bit-identical output).

Nothing here is thread-aware: a kit belongs to the context that made it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import gallium
from gallium import pipe

from . import primitive_mix
from ._scene import (
    Pipeline,
    SceneSpec,
    Target,
    make_spec,
    record_frame,
    record_frame_start,
    record_opaque_draw,
    record_translucent_draw,
)

F32 = np.float32
RGBA8 = pipe.Format.R8G8B8A8_UNORM
QUERY_TYPES = (pipe.QueryType.OCCLUSION_COUNTER, pipe.QueryType.PIPELINE_STATISTICS)


class Kit:
    """The CSOs of one recipe on one context: ``destroy`` calls each one's destroy_*."""

    def __init__(self, screen, ctx) -> None:
        self.screen = screen
        self._made: list[tuple[str, object]] = []
        self._ctx = ctx

    def make(self, create: str, destroy: str, *args):
        obj = getattr(self._ctx, create)(*args)
        self._made.append((destroy, obj))
        return obj

    def destroy(self, ctx) -> None:
        for destroy, obj in reversed(self._made):
            getattr(ctx, destroy)(obj)
        self._made.clear()


class Recipe:
    name: str
    width: int
    height: int
    draws: int  # draw_vbo calls a frame

    def make_kit(self, screen, ctx) -> Kit:
        raise NotImplementedError

    def record(self, ctx, kit: Kit, target: Target) -> None:
        raise NotImplementedError


def _pipeline_kit(screen, ctx) -> Kit:
    kit = Kit(screen, ctx)
    p = Pipeline(ctx)
    kit.p = p
    for destroy, obj in (
        ("destroy_vs_state", p.vs),
        ("destroy_fs_state", p.fs),
        ("destroy_vertex_elements_state", p.velems),
        ("destroy_depth_stencil_alpha_state", p.dsa_opaque),
        ("destroy_depth_stencil_alpha_state", p.dsa_translucent),
        ("destroy_blend_state", p.blend_opaque),
        ("destroy_blend_state", p.blend_alpha),
        ("destroy_rasterizer_state", p.rast),
        ("destroy_rasterizer_state", p.rast_cull),
    ):
        kit._made.append((destroy, obj))
    return kit


class SceneRecipe(Recipe):
    """A seeded scene (stress/_scene.py): opaque triangles in a few draws, depth
    tested, then translucent ones blended; indexed or not, culled or not."""

    def __init__(self, name: str, spec: SceneSpec) -> None:
        self.name, self.spec = name, spec
        self.width, self.height = spec.width, spec.height
        self.draws = len(spec.opaque_draws) + 1

    def make_kit(self, screen, ctx) -> Kit:
        return _pipeline_kit(screen, ctx)

    def record(self, ctx, kit: Kit, target: Target) -> None:
        ctx.bind_gs_state(None)
        record_frame(ctx, kit.p, self.spec, target)


class SmallDrawsRecipe(SceneRecipe):
    """The same scene with every triangle its own draw, the draw's state and the
    fragment constant set again before each: the draws queue and are run
    together, and the image must be the scene's own."""

    def __init__(self, name: str, spec: SceneSpec) -> None:
        super().__init__(name, spec)
        self.draws = (sum(c for _, c in spec.opaque_draws) + spec.translucent.shape[0]) // 3

    def record(self, ctx, kit: Kit, target: Target) -> None:
        spec, p = self.spec, kit.p
        ctx.bind_gs_state(None)
        record_frame_start(ctx, p, spec, target)
        tint = pipe.ConstantBuffer(user_buffer=spec.tint)
        for i, (first, count) in enumerate(spec.opaque_draws):
            for t in range(count // 3):
                ctx.set_constant_buffer(pipe.ShaderType.FRAGMENT, 0, tint)
                record_opaque_draw(ctx, p, spec, i, (first + 3 * t, 3))
        for t in range(spec.translucent.shape[0] // 3):
            ctx.set_constant_buffer(pipe.ShaderType.FRAGMENT, 0, tint)
            record_translucent_draw(ctx, p, spec, (3 * t, 3))


class PrimitiveRecipe(Recipe):
    """Wide sprite points, a line strip and a loop, and triangles through a
    geometry shader, all instanced and depth tested (stress/primitive_mix.py)."""

    def __init__(self, name: str, seed: int, width: int, height: int) -> None:
        self.name, self.width, self.height = name, width, height
        self.data = primitive_mix.frame_data(seed)
        self.draws = 4

    def make_kit(self, screen, ctx) -> Kit:
        kit = Kit(screen, ctx)
        kit.vs = kit.make("create_vs_state", "destroy_vs_state", _shader(primitive_mix.VS))
        kit.fs = kit.make("create_fs_state", "destroy_fs_state", _shader(primitive_mix.FS))
        kit.gs = kit.make("create_gs_state", "destroy_gs_state", _shader(primitive_mix.GS))
        kit.ve = kit.make(
            "create_vertex_elements_state", "destroy_vertex_elements_state", _xyzw_rgba()
        )
        kit.points = kit.make(
            "create_rasterizer_state",
            "destroy_rasterizer_state",
            pipe.RasterizerState(
                point_size_per_vertex=True, point_quad_rasterization=True, sprite_coord_enable=2
            ),
        )
        kit.lines = kit.make(
            "create_rasterizer_state",
            "destroy_rasterizer_state",
            pipe.RasterizerState(line_width=self.data["width"]),
        )
        kit.dsa = kit.make(
            "create_depth_stencil_alpha_state",
            "destroy_depth_stencil_alpha_state",
            pipe.DepthStencilAlphaState(
                depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
            ),
        )
        kit.blend = kit.make("create_blend_state", "destroy_blend_state", pipe.BlendState())
        return kit

    def record(self, ctx, kit: Kit, target: Target) -> None:
        d = self.data
        target.bind(ctx)
        ctx.bind_vs_state(kit.vs)
        ctx.bind_fs_state(kit.fs)
        ctx.bind_gs_state(None)
        ctx.bind_vertex_elements_state(kit.ve)
        ctx.bind_depth_stencil_alpha_state(kit.dsa)
        ctx.bind_blend_state(kit.blend)
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0, 0, 0, 1), depth=1.0)
        for key, mode, rast in (
            ("points", pipe.Prim.POINTS, kit.points),
            ("strip", pipe.Prim.LINE_STRIP, kit.lines),
            ("loop", pipe.Prim.LINE_LOOP, kit.lines),
        ):
            ctx.bind_rasterizer_state(rast)
            v = d[key]
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, v)])
            ctx.draw_vbo(
                pipe.DrawInfo(mode=mode, start=0, count=len(v), instance_count=d["instances"])
            )
        ctx.bind_rasterizer_state(kit.lines)
        ctx.bind_gs_state(kit.gs)
        v = d["tris"]
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, v)])
        ctx.draw_vbo(
            pipe.DrawInfo(
                mode=pipe.Prim.TRIANGLES, start=0, count=len(v), instance_count=d["instances"]
            )
        )
        ctx.bind_gs_state(None)


TEX_VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
TEX_FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
  0: TEX OUT[0], IN[0].xyyy, SAMP[0], 2D
  1: END
"""
TEX_SIDE = 32


class TexturedRecipe(Recipe):
    """A texture made, uploaded and viewed for the frame alone: a repeating
    bilinear quad drawn as a strip, a fan through an index buffer made for the
    frame, a block of texels copied into the target, and a cleared rectangle;
    texture, view and index buffer are destroyed with the frame still queued."""

    def __init__(self, name: str, seed: int, width: int, height: int) -> None:
        self.name, self.width, self.height = name, width, height
        self.draws = 2
        rng = np.random.default_rng(seed)
        self.texels = rng.integers(0, 256, (TEX_SIDE, TEX_SIDE, 4), dtype=np.uint8)
        self.texels[..., 3] = 255
        quad = [(-0.9, -0.8, -0.5, -0.5), (0.8, -0.9, 1.5, -0.5), (-0.8, 0.9, -0.5, 1.5)]
        quad.append((0.9, 0.8, 1.5, 1.5))
        self.quad = _textured_vertices(quad)
        n = int(rng.integers(4, 9))
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        fan = [(0.1, 0.0, 0.5, 0.5)]
        fan += [(0.1 + 0.6 * np.cos(a), 0.6 * np.sin(a), np.cos(a), np.sin(a)) for a in angles]
        self.fan = _textured_vertices(fan)
        self.fan_indices = np.arange(len(fan), dtype=np.uint16)[::-1].copy()
        self.clear_color = tuple(float(c) for c in rng.uniform(0, 1, 4))
        self.copy_at = (int(rng.integers(0, width - 16)), int(rng.integers(0, height - 16)))
        self.clear_at = (int(rng.integers(0, width - 12)), int(rng.integers(0, height - 10)))

    def make_kit(self, screen, ctx) -> Kit:
        kit = Kit(screen, ctx)
        kit.vs = kit.make("create_vs_state", "destroy_vs_state", _shader(TEX_VS))
        kit.fs = kit.make("create_fs_state", "destroy_fs_state", _shader(TEX_FS))
        kit.ve = kit.make(
            "create_vertex_elements_state", "destroy_vertex_elements_state", _xyzw_rgba()
        )
        kit.sampler = kit.make(
            "create_sampler_state",
            "destroy_sampler_state",
            pipe.SamplerState(
                wrap_s=pipe.TexWrap.REPEAT,
                wrap_t=pipe.TexWrap.MIRROR_REPEAT,
                min_img_filter=pipe.TexFilter.LINEAR,
                mag_img_filter=pipe.TexFilter.LINEAR,
            ),
        )
        kit.rast = kit.make(
            "create_rasterizer_state", "destroy_rasterizer_state", pipe.RasterizerState()
        )
        kit.dsa = kit.make(
            "create_depth_stencil_alpha_state",
            "destroy_depth_stencil_alpha_state",
            pipe.DepthStencilAlphaState(),
        )
        kit.blend = kit.make("create_blend_state", "destroy_blend_state", pipe.BlendState())
        return kit

    def record(self, ctx, kit: Kit, target: Target) -> None:
        screen = kit.screen
        tex = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=RGBA8,
                width0=TEX_SIDE,
                height0=TEX_SIDE,
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        ctx.texture_subdata(
            tex,
            0,
            pipe.Transfer.WRITE,
            pipe.Box(0, 0, 0, TEX_SIDE, TEX_SIDE, 1),
            self.texels,
            TEX_SIDE * 4,
            self.texels.nbytes,
        )
        view = ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=RGBA8))
        ib = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER,
                format=pipe.Format.NONE,
                width0=self.fan_indices.nbytes,
                bind=pipe.Bind.INDEX_BUFFER,
            )
        )
        ctx.buffer_subdata(ib, pipe.Transfer.WRITE, 0, self.fan_indices)
        target.bind(ctx)
        ctx.bind_vs_state(kit.vs)
        ctx.bind_fs_state(kit.fs)
        ctx.bind_gs_state(None)
        ctx.bind_vertex_elements_state(kit.ve)
        ctx.bind_rasterizer_state(kit.rast)
        ctx.bind_depth_stencil_alpha_state(kit.dsa)
        ctx.bind_blend_state(kit.blend)
        ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [kit.sampler])
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=self.clear_color, depth=1.0)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, self.quad)])
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLE_STRIP, start=0, count=4))
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, self.fan)])
        n = len(self.fan_indices)
        ctx.draw_vbo(
            pipe.DrawInfo(mode=pipe.Prim.TRIANGLE_FAN, start=0, count=n, index_size=2, index=ib)
        )
        x, y = self.copy_at
        ctx.resource_copy_region(target.rt, 0, x, y, 0, tex, 0, pipe.Box(8, 8, 0, 16, 16, 1))
        x, y = self.clear_at
        ctx.clear_render_target(target.cbuf, self.clear_color[::-1], x, y, 12, 10)
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [None])
        ctx.sampler_view_destroy(view)
        screen.resource_destroy(tex)
        screen.resource_destroy(ib)


def _shader(text: str) -> pipe.ShaderState:
    return pipe.ShaderState(tokens=text)


def _xyzw_rgba() -> list[pipe.VertexElement]:
    return [
        pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
        pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
    ]


def _textured_vertices(points) -> np.ndarray:
    """(x, y, s, t) tuples as (n, 8) float32 rows: clip xyzw, then s, t, 0, 1."""
    out = np.zeros((len(points), 8), F32)
    for i, (x, y, s, t) in enumerate(points):
        out[i] = (x, y, 0.25, 1.0, s, t, 0.0, 1.0)
    return out


def make_recipes(rng, width: int, height: int) -> list[Recipe]:
    """The soak's frames at one size: two scenes, the first again as many small
    draws, a primitive mix and a textured frame, all seeded from ``rng``."""
    a = make_spec(rng.getrandbits(32), width, height, triangles=rng.randint(24, 40))
    b = make_spec(rng.getrandbits(32), width, height, triangles=rng.randint(8, 24))
    return [
        SceneRecipe("scene_a", a),
        SceneRecipe("scene_b", b),
        SmallDrawsRecipe("small_draws_a", a),
        PrimitiveRecipe("primitives", rng.getrandbits(32), width, height),
        TexturedRecipe("textured", rng.getrandbits(32), width, height),
    ]


@dataclass(frozen=True)
class Expected:
    """A recipe's reference: its image and its queries' results."""

    image: np.ndarray
    queries: tuple


def render(ctx, recipe: Recipe, kit: Kit, target: Target, queries) -> None:
    """Record ``recipe``'s frame inside ``queries`` (begun and ended around it)."""
    for q in queries:
        ctx.begin_query(q)
    recipe.record(ctx, kit, target)
    for q in queries:
        ctx.end_query(q)


def references(recipes: list[Recipe]) -> dict[str, Expected]:
    """Each recipe's image and query results, from a direct context of a
    one-worker screen of their own (destroyed before this returns)."""
    screen = gallium.create_screen(num_threads=1)
    ctx = screen.context_create(threaded=False)
    out: dict[str, Expected] = {}
    try:
        queries = [ctx.create_query(t) for t in QUERY_TYPES]
        for recipe in recipes:
            kit = recipe.make_kit(screen, ctx)
            target = Target(screen, ctx, recipe.width, recipe.height)
            render(ctx, recipe, kit, target, queries)
            ctx.flush().wait(None)
            image = target.read(ctx)
            image.setflags(write=False)
            results = tuple(ctx.get_query_result(q, wait=True)[1] for q in queries)
            out[recipe.name] = Expected(image, results)
            kit.destroy(ctx)
            target.destroy(screen, ctx)
        for q in queries:
            ctx.destroy_query(q)
    finally:
        ctx.destroy()
        screen.destroy()
    return out
