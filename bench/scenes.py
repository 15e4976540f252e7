"""The benchmark scenes: geometry, textures and shaders, identical for every driver.

This module is pure numpy (no gallium, no moderngl), so the Mesa runner can
import it from any interpreter that has numpy.  Each scene is one clear plus
one draw (or one dispatch) per frame on a ``size`` x ``size`` RGBA8 colour
buffer with a 24-bit depth buffer attached.  Vertices are clip-space
``(x, y, z, 1)`` followed by a vec4 attribute (colour, or texture coordinate in
``.xy``), 32 bytes per vertex, non-indexed triangle lists, generated from a
fixed seed, so every driver draws exactly the same triangles; vertex shaders
are pass-through.

Sizes are in pixels, not clip units: a "medium" triangle has ~30-px edges
whatever the framebuffer size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SHADERS = Path(__file__).resolve().parent / "shaders"
SEED = 20240605
MEDIUM_EDGE = 30.0  # px
SMALL_EDGE = 4.0  # px
TEXTURE_SIZE = 256  # texels; magnified 4x on a 1024 frame, so bilinear filtering matters
SAXPY_N = 1 << 20  # floats per buffer in the compute scene
SAXPY_BLOCK = 64


@dataclass(frozen=True)
class Scene:
    """A benchmark scene; ``build(size)`` makes its data."""

    name: str
    title: str
    program: str  # shader program under shaders/ (see dump_tgsi.PROGRAMS)
    # "draw", "compute", "many" (one draw per object: see _many), "tess" (PATCHES of four
    # control points) or "xfb" (the draw captured by stream output, rasterizer discard)
    kind: str = "draw"
    depth_test: bool = False  # LESS, depth writes on
    blend: bool = False  # SRC_ALPHA / INV_SRC_ALPHA (alpha: ONE / INV_SRC_ALPHA)
    textured: bool = False
    needs: str = ""  # the numpipe feature the scene waits for, if any
    description: str = ""
    size: int = 0  # a fixed framebuffer size (0: the run's --size)
    mixed: bool = False  # many: blend and fragment shader change between draws
    peers: tuple[str, ...] = ("llvmpipe", "softpipe")  # the Mesa drivers it runs on
    samples: int = 0  # > 1: a multisampled framebuffer, resolved into RGBA8 every frame

    def build(self, size: int) -> SceneData:
        return _BUILDERS[self.name](size)


@dataclass
class SceneData:
    """What one frame draws: vertices, and the work counted per frame."""

    vertices: np.ndarray  # (n, 8) float32, n = 3 * triangles
    triangles: int
    fragments: float  # pixels rasterized per frame (before depth test), for Mpixels/s
    texture: np.ndarray | None = None  # (h, w, 4) uint8, row 0 = t 0
    invocations: int = 0  # compute: invocations per dispatch
    buffers: dict[str, np.ndarray] = field(default_factory=dict)  # compute inputs
    # many: the object mesh's indices (u16) and each draw's transform as the
    # uniform's bytes (N, 4, 4) float32, column after column (GLSL mat4,
    # Gallium CONST[0][0..3])
    indices: np.ndarray | None = None
    transforms: np.ndarray | None = None

    @property
    def draws(self) -> int:
        return 1 if self.transforms is None else len(self.transforms)


def _full_screen_triangle(colors: np.ndarray, z: float = 0.0) -> np.ndarray:
    """One triangle covering clip [-1, 1]^2: (-1,-1), (3,-1), (-1,3)."""
    v = np.zeros((3, 8), np.float32)
    v[:, 0:2] = [(-1, -1), (3, -1), (-1, 3)]
    v[:, 2] = z
    v[:, 3] = 1
    v[:, 4:8] = colors
    return v


def _quad(attr: np.ndarray, z: float = 0.0) -> np.ndarray:
    """Two triangles covering clip [-1, 1]^2; ``attr`` is (4, 4) for corners
    (-1,-1), (1,-1), (1,1), (-1,1)."""
    corners = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], np.float32)
    order = [0, 1, 2, 0, 2, 3]
    v = np.zeros((6, 8), np.float32)
    v[:, 0:2] = corners[order]
    v[:, 2] = z
    v[:, 3] = 1
    v[:, 4:8] = attr[order]
    return v


def random_triangles(n: int, edge_px: float, size: int, seed: int) -> tuple[np.ndarray, float]:
    """``n`` triangles with edges of about ``edge_px`` pixels, inside the frame.

    Each triangle is an equilateral one of side ``edge_px`` (circumradius
    ``edge_px / sqrt(3)``) with its vertices' angles jittered by up to
    +-0.3 rad and radii by +-20%, rotated at random, centred uniformly so the
    whole triangle lies in the framebuffer.  Depth: a random plane per
    triangle (base in [-0.9, 0.9], +-0.05 per vertex), so the depth test
    rejects a realistic share of the overdraw.  Colours: random per vertex,
    alpha 1.  Returns the (3n, 8) vertices and the total area in pixels.
    """
    rng = np.random.default_rng(seed)
    r = edge_px / math.sqrt(3.0)
    margin = 1.25 * r
    centre = rng.uniform(margin, size - margin, (n, 2))
    theta0 = rng.uniform(0.0, 2 * math.pi, n)
    px = np.empty((n, 3, 2))
    for k in range(3):
        ang = theta0 + 2 * math.pi * k / 3 + rng.uniform(-0.3, 0.3, n)
        rad = r * rng.uniform(0.8, 1.2, n)
        px[:, k, 0] = centre[:, 0] + rad * np.cos(ang)
        px[:, k, 1] = centre[:, 1] + rad * np.sin(ang)
    v = np.zeros((n, 3, 8), np.float32)
    v[:, :, 0:2] = px / (size / 2.0) - 1.0
    v[:, :, 2] = rng.uniform(-0.9, 0.9, (n, 1)) + rng.uniform(-0.05, 0.05, (n, 3))
    v[:, :, 3] = 1
    v[:, :, 4:7] = rng.uniform(0.0, 1.0, (n, 3, 3))
    v[:, :, 7] = 1
    e1 = px[:, 1] - px[:, 0]
    e2 = px[:, 2] - px[:, 0]
    area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]).sum()
    return v.reshape(-1, 8), float(area)


def _fill(size: int) -> SceneData:
    colors = np.array([(1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1)], np.float32)
    return SceneData(_full_screen_triangle(colors), 1, float(size * size))


def _medium(size: int) -> SceneData:
    v, area = random_triangles(10_000, MEDIUM_EDGE, size, SEED + 1)
    return SceneData(v, 10_000, area)


def _small(size: int) -> SceneData:
    v, area = random_triangles(100_000, SMALL_EDGE, size, SEED + 2)
    return SceneData(v, 100_000, area)


def _blend(size: int) -> SceneData:
    rng = np.random.default_rng(SEED + 3)
    layers = []
    for _ in range(16):
        attr = np.empty((4, 4), np.float32)
        attr[:, 0:3] = rng.uniform(0.0, 1.0, (4, 3))
        attr[:, 3] = rng.uniform(0.25, 0.75)  # one alpha per layer
        layers.append(_quad(attr))
    return SceneData(np.concatenate(layers), 32, 16.0 * size * size)


def make_texture(size: int = TEXTURE_SIZE, seed: int = SEED + 4) -> np.ndarray:
    """A smooth pattern plus noise, so bilinear filtering has work to show."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    img = np.empty((size, size, 4), np.float64)
    img[..., 0] = 0.5 + 0.5 * np.sin(2 * math.pi * 3 * x)
    img[..., 1] = 0.5 + 0.5 * np.cos(2 * math.pi * 2 * y)
    img[..., 2] = (x + y) / 2
    img[..., 3] = 1.0
    img[..., 0:3] += rng.normal(0.0, 0.08, (size, size, 3))
    return np.clip(np.rint(img * 255), 0, 255).astype(np.uint8)


def _texture(size: int) -> SceneData:
    uv = np.array([(0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 0, 0), (0, 1, 0, 0)], np.float32)
    return SceneData(_quad(uv), 2, float(size * size), texture=make_texture())


def _alu40(size: int) -> SceneData:
    colors = np.array([(0.9, 0.1, 0.2, 1), (0.1, 0.8, 0.3, 1), (0.2, 0.3, 0.9, 1)], np.float32)
    return SceneData(_full_screen_triangle(colors), 1, float(size * size))


# the objects of the many-draws scenes: cubes whose total area is about
# 1.5x the framebuffer for any count (side ~ 1/sqrt(N)), depth complexity
# like a real frame's
CUBE_SCALE_1000 = 0.032  # half the side of an average cube (clip units) at N = 1000


def cube_mesh() -> tuple[np.ndarray, np.ndarray]:
    """A unit cube: 8 vertices (x, y, z, 1, r, g, b, a) and 36 u16 indices,
    12 triangles wound counter-clockwise seen from outside (GL's front)."""
    p = np.array(
        [(x, y, z, 1.0) for z in (-1.0, 1.0) for y in (-1.0, 1.0) for x in (-1.0, 1.0)],
        np.float32,
    )
    rgb = (p[:, :3] + 1.0) / 2.0
    alpha = np.array([0.6, 0.7, 0.8, 0.9, 1.0, 0.9, 0.8, 0.7], np.float32)[:, None]
    v = np.concatenate([p, rgb * 0.8 + 0.1, alpha], axis=1).astype(np.float32)
    # each face as a quad, counter-clockwise from outside
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    idx = [i for a, b, c, d in faces for i in (a, b, c, a, c, d)]
    return v, np.array(idx, np.uint16)


def cube_transforms(n: int, seed: int) -> np.ndarray:
    """``n`` clip-space transforms (projection times model), each as the
    uniform's bytes: rotation, scale ~ 1/sqrt(n), a position in the frame,
    a mild perspective (w = 1 + z/4)."""
    rng = np.random.default_rng(seed)
    proj = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0.5, 0], [0, 0, 0.25, 1]], np.float64)
    out = np.empty((n, 4, 4), np.float32)
    base = CUBE_SCALE_1000 * math.sqrt(1000.0 / n)
    for i in range(n):
        ax, ay, az = rng.uniform(0.0, 2 * math.pi, 3)
        cx, sx, cy, sy, cz, sz = (math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay),
                                  math.cos(az), math.sin(az))  # fmt: skip
        rot = (
            np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
            @ np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
            @ np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
        )
        model = np.eye(4)
        model[:3, :3] = rot * (base * rng.uniform(0.7, 1.3))
        model[:3, 3] = (rng.uniform(-0.9, 0.9), rng.uniform(-0.9, 0.9), rng.uniform(-0.8, 0.8))
        out[i] = (proj @ model).T  # column after column
    return out


def _many(n: int):
    def build(size: int) -> SceneData:
        v, idx = cube_mesh()
        return SceneData(v, 12 * n, 0.0, indices=idx, transforms=cube_transforms(n, SEED + 6 + n))

    return build


TESS_GRID = 8  # patches a side
TESS_LEVEL = 28  # every level: 2 * 28^2 = 1,568 triangles a patch


def _tess(size: int) -> SceneData:
    """An 8x8 grid of quad patches over clip [-0.95, 0.95]^2, four control
    points each (corner order (x0,y0), (x1,y0), (x1,y1), (x0,y1)), with random
    depths and colours."""
    rng = np.random.default_rng(SEED + 7)
    n = TESS_GRID
    edges = np.linspace(-0.95, 0.95, n + 1, dtype=np.float32)
    z = rng.uniform(0.1, 0.9, (n + 1, n + 1)).astype(np.float32)
    color = rng.uniform(0, 1, (n + 1, n + 1, 4)).astype(np.float32)
    color[..., 3] = 1
    v = np.zeros((n * n * 4, 8), np.float32)
    k = 0
    for j in range(n):
        for i in range(n):
            for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1)):
                v[k, 0:4] = (edges[i + di], edges[j + dj], z[j + dj, i + di], 1)
                v[k, 4:8] = color[j + dj, i + di]
                k += 1
    tris = n * n * 2 * TESS_LEVEL * TESS_LEVEL
    return SceneData(v, tris, float((0.95 * size) ** 2))


def _xfb(size: int) -> SceneData:
    """The small scene's 100,000 triangles, captured (position and colour)."""
    v, _ = random_triangles(100_000, SMALL_EDGE, size, SEED + 8)
    return SceneData(v, 100_000, 0.0)


XFB_COMPONENTS = 8  # captured floats a vertex: gl_Position, v_color


def _compute(size: int) -> SceneData:
    rng = np.random.default_rng(SEED + 5)
    x = rng.uniform(-1, 1, SAXPY_N).astype(np.float32)
    y = rng.uniform(-1, 1, SAXPY_N).astype(np.float32)
    empty = np.zeros((0, 8), np.float32)
    return SceneData(empty, 0, 0.0, invocations=SAXPY_N, buffers={"x": x, "y": y})


_BUILDERS = {
    "fill": _fill,
    "msaa": _fill,
    "msaa-medium": _medium,
    "medium": _medium,
    "small": _small,
    "blend": _blend,
    "texture": _texture,
    "alu40": _alu40,
    "compute": _compute,
    "tess": _tess,
    "xfb": _xfb,
    "many-100": _many(100),
    "many": _many(1000),
    "many-10000": _many(10_000),
    "many-mixed": _many(1000),
}

_MANY_TEXT = (
    "512x512; {n} cubes (12 indexed triangles each, one index and vertex buffer for all), "
    "each with its own transform: one set_constant_buffer (a uniform) and one draw_vbo per "
    "cube, depth test LESS, back faces culled"
)


SCENES: dict[str, Scene] = {
    s.name: s
    for s in (
        Scene(
            "fill",
            "full-screen Gouraud triangle",
            "color",
            description="one triangle with clip vertices (-1,-1), (3,-1), (-1,3) and red/green/"
            "blue corners; no depth test",
        ),
        Scene(
            "medium",
            "10k medium triangles, depth test",
            "color",
            depth_test=True,
            description="10,000 random triangles with ~30 px edges (area ~390 px each, ~3.7x "
            "overdraw), depth test LESS",
        ),
        Scene(
            "small",
            "100k small triangles, depth test",
            "color",
            depth_test=True,
            description="100,000 random triangles with ~4 px edges (area ~7 px each), depth "
            "test LESS",
        ),
        Scene(
            "blend",
            "16 full-screen blended layers",
            "color",
            blend=True,
            description="16 full-screen quads (32 triangles, one draw), Gouraud colours, alpha "
            "0.25-0.75 per layer, SRC_ALPHA/INV_SRC_ALPHA",
        ),
        Scene(
            "texture",
            "full-screen bilinear textured quad",
            "texture",
            textured=True,
            needs="texture sampling",
            description=f"a {TEXTURE_SIZE}x{TEXTURE_SIZE} RGBA8 texture on a full-screen quad "
            "(4x magnified), LINEAR min/mag, no mipmaps, CLAMP_TO_EDGE",
        ),
        Scene(
            "alu40",
            "40-instruction fragment shader",
            "alu40",
            needs="TGSI ALU opcodes",
            description="the fill triangle with a 40-instruction TGSI fragment shader "
            "(shaders/alu40.frag as compiled by Mesa: SIN/COS/EX2/POW/RSQ/SQRT/DP3/LRP/FRC/...)",
        ),
        Scene(
            "msaa",
            "4x MSAA full-screen triangle, resolved",
            "color",
            samples=4,
            needs="multisampling",
            peers=("llvmpipe",),  # (softpipe has no 4x)
            description="the fill triangle into a 4-sample RGBA8 colour and depth buffer, then "
            "a resolve blit (glBlitFramebuffer / pipe blit) into a single-sample RGBA8 buffer",
        ),
        Scene(
            "msaa-medium",
            "4x MSAA 10k medium triangles, depth test, resolved",
            "color",
            depth_test=True,
            samples=4,
            needs="multisampling",
            peers=("llvmpipe",),
            description="the medium scene into 4-sample buffers, then a resolve blit",
        ),
        Scene(
            "compute",
            "compute: saxpy over 1M floats",
            "saxpy",
            kind="compute",
            needs="compute (launch_grid)",
            description=f"y = 2.5 x + y over {SAXPY_N:,} floats, {SAXPY_BLOCK} invocations per "
            "block (shaders/saxpy.comp)",
        ),
        Scene(
            "tess",
            "tessellation: 64 quad patches to 100k triangles",
            "tess",
            kind="tess",
            depth_test=True,
            needs="tessellation",
            peers=("llvmpipe",),
            description=f"{TESS_GRID}x{TESS_GRID} quad patches of 4 control points (position, "
            f"colour) over the frame; a control shader sets every level to {TESS_LEVEL} (equal "
            "spacing), the evaluation shader interpolates bilinearly: ~100,000 triangles, depth "
            "test LESS (shaders/tess.*)",
        ),
        Scene(
            "xfb",
            "stream output: 100k triangles captured",
            "color",
            kind="xfb",
            needs="stream output",
            peers=("llvmpipe",),
            description="the small scene's 100,000 triangles through the pass-through vertex "
            "shader with rasterizer discard, gl_Position and the colour captured interleaved "
            "(9.6 MB a frame); the frame binds the target at offset 0, draws, and waits",
        ),
        *(
            Scene(
                name,
                title,
                "mvp",
                kind="many",
                depth_test=True,
                size=512,
                mixed=mixed,
                peers=("llvmpipe",),
                description=description,
            )
            for name, title, mixed, description in (
                ("many-100", "100 cubes, a draw each", False, _MANY_TEXT.format(n="100")),
                ("many", "1,000 cubes, a draw each", False, _MANY_TEXT.format(n="1,000")),
                ("many-10000", "10,000 cubes, a draw each", False, _MANY_TEXT.format(n="10,000")),
                (
                    "many-mixed",
                    "1,000 cubes, state changes between draws",
                    True,
                    _MANY_TEXT.format(n="1,000")
                    + "; every other draw blends (SRC_ALPHA / INV_SRC_ALPHA), every fifth draw "
                    "switches between two fragment shaders",
                ),
            )
        ),
    )
}


def shader_source(program: str, stage: str) -> str:
    """GLSL (stage 'vert'/'tesc'/'tese'/'frag'/'comp') or TGSI (stage
    'vs'/'tcs'/'tes'/'fs'/'cs') of ``program``.  The tessellation stages' TGSI
    is written by hand (Mesa 22.3's softpipe has no tessellation to dump it)."""
    glsl = {
        "color": {"vert": "color.vert", "frag": "color.frag"},
        "texture": {"vert": "texture.vert", "frag": "texture.frag"},
        "alu40": {"vert": "color.vert", "frag": "alu40.frag"},
        "saxpy": {"comp": "saxpy.comp"},
        "mvp": {"vert": "mvp.vert", "frag": "color.frag"},
        "mvp-tint": {"vert": "mvp.vert", "frag": "tint.frag"},
        "tess": {
            "vert": "tess.vert",
            "tesc": "tess.tesc",
            "tese": "tess.tese",
            "frag": "color.frag",
        },
    }[program]
    if program == "tess" and stage in ("vs", "fs"):  # (shared with the color program)
        return (SHADERS / f"color.{stage}.tgsi").read_text()
    if stage in glsl:
        return (SHADERS / glsl[stage]).read_text()
    return (SHADERS / f"{program}.{stage}.tgsi").read_text()
