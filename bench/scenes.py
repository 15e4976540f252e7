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
    kind: str = "draw"  # "draw" or "compute"
    depth_test: bool = False  # LESS, depth writes on
    blend: bool = False  # SRC_ALPHA / INV_SRC_ALPHA (alpha: ONE / INV_SRC_ALPHA)
    textured: bool = False
    needs: str = ""  # the numpipe feature the scene waits for, if any
    description: str = ""

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


def _compute(size: int) -> SceneData:
    rng = np.random.default_rng(SEED + 5)
    x = rng.uniform(-1, 1, SAXPY_N).astype(np.float32)
    y = rng.uniform(-1, 1, SAXPY_N).astype(np.float32)
    empty = np.zeros((0, 8), np.float32)
    return SceneData(empty, 0, 0.0, invocations=SAXPY_N, buffers={"x": x, "y": y})


_BUILDERS = {
    "fill": _fill,
    "medium": _medium,
    "small": _small,
    "blend": _blend,
    "texture": _texture,
    "alu40": _alu40,
    "compute": _compute,
}

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
            "compute",
            "compute: saxpy over 1M floats",
            "saxpy",
            kind="compute",
            needs="compute (launch_grid)",
            description=f"y = 2.5 x + y over {SAXPY_N:,} floats, {SAXPY_BLOCK} invocations per "
            "block (shaders/saxpy.comp)",
        ),
    )
}


def shader_source(program: str, stage: str) -> str:
    """GLSL (stage 'vert'/'frag'/'comp') or TGSI (stage 'vs'/'fs'/'cs') of ``program``."""
    glsl = {
        "color": {"vert": "color.vert", "frag": "color.frag"},
        "texture": {"vert": "texture.vert", "frag": "texture.frag"},
        "alu40": {"vert": "color.vert", "frag": "alu40.frag"},
        "saxpy": {"comp": "saxpy.comp"},
    }[program]
    if stage in glsl:
        return (SHADERS / glsl[stage]).read_text()
    return (SHADERS / f"{program}.{stage}.tgsi").read_text()
