"""Textured reference scenes rendered by Mesa's llvmpipe (tools/make_tex_reference.py).

Every scene is one viewport-sized quad (two triangles: coverage is trivially
every pixel exactly once, and nothing is clipped) carrying a 4-component
texture-coordinate varying, drawn with a GLSL program that samples the scene's
textures.  A scene is described once, here, in API-neutral terms: texture
contents per level (deterministic seeds), filters, wrap modes and comparison
in GL spelling, and the GLSL.  The TGSI numpipe runs is not written by hand:
the generator captures it from softpipe (``SOFTPIPE_DEBUG=vs,fs,use_tgsi``)
and stores it next to the PNG as ``tex_<name>.tgsi``.

``sample`` says which texture request the fragment shader makes, in terms of
the varying's components, and ``post`` how the shader turns the result into
the colour it writes; tests/test_texture.py uses them to drive the sampler
directly with llvmpipe's own interpolated coordinates (see its docstring).

Texel data layout: ``levels[k]`` is the image of mip level k as
``(layers, height, width, 4)`` (uint8 for "rgba8"/"rgba8ui", int8 for
"rgba8_snorm", float32 for "rgba32f") or ``(layers, height, width)`` uint32 Z24
values for "depth24", uint16 5:6:5 words (red in the high bits) for "rgb565" and
uint8 for "r8"; layers are the cube faces (+X, -X, +Y, -Y, +Z, -Z) for
cube maps, the slices of arrays and the depth of 3D levels (1D textures have
one row); row 0 is t = 0 in both APIs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

F32 = np.float32
HERE = Path(__file__).resolve().parent

VS_GLSL = """#version 330
in vec4 in_pos;
in vec4 in_tc;
out vec4 v_tc;
void main() { gl_Position = in_pos; v_tc = in_tc; }
"""


@dataclass
class TexImage:
    """A texture bound to texture unit ``unit`` (sampler uniform ``tex<unit>``)."""

    target: str  # "1d", "2d", "3d", "cube", "2d_array"
    fmt: str  # "rgba8", "rgba8_snorm", "rgba8ui", "rgba32f", "rgb565", "r8", "depth24"
    levels: list[np.ndarray]
    min_filter: str = "linear"  # GL name without the GL_ prefix, lower case
    mag_filter: str = "linear"
    wrap: tuple[str, str, str] = ("repeat", "repeat", "repeat")
    border: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    compare: str | None = None  # GL compare func ("lequal", ...) for shadow samplers
    lod_bias: float = 0.0
    min_lod: float = -1000.0
    max_lod: float = 1000.0
    swizzle: tuple[str, str, str, str] = ("r", "g", "b", "a")  # GL_TEXTURE_SWIZZLE_RGBA
    unit: int = 0
    max_anisotropy: float = 1.0  # GL_TEXTURE_MAX_ANISOTROPY


@dataclass
class SampleSpec:
    """The texture request the fragment shader makes.  Coordinate fields name the
    component (0-3 = s t r q) of the varying that feeds them; ``offset`` is a
    constant texel offset; ``component`` the gathered channel."""

    op: str = "sample"  # "sample", "gather", "lod"
    target: str = "2D"  # TGSI target
    s: int = 0
    t: int | None = 1
    r: int | None = None
    layer: int | None = None
    ref: int | None = None
    lod: int | None = None
    bias: int | None = None
    offset: tuple[int, int, int] | None = None
    component: int = 0


@dataclass
class TexScene:
    name: str
    width: int
    height: int
    vertices: np.ndarray  # (6, 8) float32: clip x y z w, texcoord s t r q
    fs_glsl: str
    textures: list[TexImage] = field(default_factory=list)
    sample: SampleSpec | None = None  # None: the shader does more than one request
    post: str = "identity"  # identity | shadow | abs | uint | lod
    seamless: bool = True  # GL_TEXTURE_CUBE_MAP_SEAMLESS
    clear_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    @property
    def vs_glsl(self) -> str:
        return VS_GLSL

    @property
    def tgsi_path(self) -> Path:
        return HERE / f"tex_{self.name}.tgsi"

    @property
    def png_path(self) -> Path:
        return HERE / f"tex_{self.name}.png"

    def tgsi(self) -> tuple[str, str]:
        """(vertex, fragment) TGSI as captured from softpipe."""
        text = self.tgsi_path.read_text()
        vs, fs = text.split("\nFRAG\n", 1)
        return vs.strip() + "\n", "FRAG\n" + fs.strip() + "\n"


# ----------------------------------------------------------------------------
# Geometry: a quad covering the viewport
# ----------------------------------------------------------------------------

CORNERS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
QUAD = (0, 1, 2, 0, 2, 3)


def quad(tc_at: np.ndarray, w: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)) -> np.ndarray:
    """The viewport quad with texture coordinates ``tc_at`` (4, 4) at its corners
    (-1,-1), (1,-1), (1,1), (-1,1); ``w`` gives each corner a clip w (positions
    scaled so the quad stays the same on screen) for perspective-correct,
    non-affine coordinates."""
    out = np.zeros((6, 8), F32)
    for row, i in enumerate(QUAD):
        out[row, 0:2] = CORNERS[i] * w[i]
        out[row, 3] = w[i]
        out[row, 4:] = tc_at[i]
    return out


def affine_tc(origin, du, dv) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Corner texture coordinates for tc = origin + u*du + v*dv, where (u, v) in
    [0, 1]^2 spans the viewport."""
    o, a, b = (np.asarray(x, np.float64) for x in (origin, du, dv))
    uv = (CORNERS + 1.0) / 2.0
    return np.array([o + u * a + v * b for u, v in uv])


# ----------------------------------------------------------------------------
# Texture contents
# ----------------------------------------------------------------------------


def _rgba8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    img = rng.integers(0, 256, (*shape, 4), dtype=np.uint8)
    img[..., 3] = rng.integers(128, 256, shape, dtype=np.uint8)
    return img


def mip_chain(
    seed: int,
    size: int,
    layers: int = 1,
    levels: int | None = None,
    height: int | None = None,
    depth3d: bool = False,
) -> list[np.ndarray]:
    """Independent random images per level, so every level choice shows.  With
    ``depth3d`` the layer count is a 3D depth and shrinks with the level."""
    rng = np.random.default_rng(seed)
    out = []
    h0 = size if height is None else height
    k = 0
    while (size >> k) >= 1 or (h0 >> k) >= 1 or (depth3d and (layers >> k) >= 1):
        if levels is not None and k >= levels:
            break
        w, h = max(1, size >> k), max(1, h0 >> k)
        d = max(1, layers >> k) if depth3d else layers
        out.append(_rgba8(rng, (d, h, w)))
        if w == 1 and h == 1 and (not depth3d or d == 1):
            break
        k += 1
    return out


def depth_levels(seed: int, size: int, layers: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 1 << 24, (layers, size, size), dtype=np.uint32)]


def _fs(body: str, decl: str = "uniform sampler2D tex0;", header: str = "#version 330") -> str:
    return f"""{header}
{decl}
in vec4 v_tc;
out vec4 f_color;
void main() {{ {body} }}
"""


SAMPLE2D = _fs("f_color = texture(tex0, v_tc.xy);")
GATHER = "#version 330\n#extension GL_ARB_texture_gather : require"

# A receding plane: the far corners have a large w, so the texture minifies
# strongly towards them and every mip level is used; near the bottom edge it
# is magnified.
FLOOR_W = (1.0, 1.3, 6.0, 4.5)


def _floor_tc(scale_s: float, scale_t: float) -> np.ndarray:
    return np.array(
        [
            [0.0, 0.0, 0, 0],
            [scale_s, 0.1, 0, 0],
            [scale_s * 1.1, scale_t, 0, 0],
            [-0.3, scale_t, 0, 0],
        ]
    )


# ----------------------------------------------------------------------------
# Scenes
# ----------------------------------------------------------------------------


def _scenes() -> list[TexScene]:
    out: list[TexScene] = []

    def add(name, w, h, verts, fs, textures, sample, post="identity", **kw):  # type: ignore[no-untyped-def]
        out.append(TexScene(name, w, h, verts, fs, textures, sample, post, **kw))

    # -- 2D magnification -------------------------------------------------------
    tc = affine_tc((-0.3, -0.2, 0, 0), (1.6, 0.1, 0, 0), (-0.05, 1.45, 0, 0))
    tex = TexImage("2d", "rgba8", mip_chain(1, 8, levels=1), "nearest", "nearest")
    add("nearest_mag", 64, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())

    tc = affine_tc((-0.1, -0.15, 0, 0), (1.2, 0.05, 0, 0), (0.03, 1.25, 0, 0))
    tex = TexImage("2d", "rgba8", mip_chain(2, 8, levels=1), wrap=("clamp_to_edge",) * 3)
    add("linear_mag", 72, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())

    tc = affine_tc((-0.7, -0.4, 0, 0), (2.3, 0.2, 0, 0), (0.1, 2.1, 0, 0))
    npot = [_rgba8(np.random.default_rng(3), (1, 5, 6))]
    tex = TexImage("2d", "rgba8", npot, "linear", "linear")
    add("npot_repeat", 64, 56, quad(tc), SAMPLE2D, [tex], SampleSpec())

    # -- 2D minification with mipmaps ---------------------------------------------
    floor = quad(_floor_tc(6.0, 9.0), FLOOR_W)
    tex = TexImage("2d", "rgba8", mip_chain(4, 64), "linear_mipmap_linear", "linear")
    add("trilinear", 96, 96, floor, SAMPLE2D, [tex], SampleSpec())
    tex = TexImage("2d", "rgba8", mip_chain(5, 64), "nearest_mipmap_nearest", "nearest")
    add("mip_nearest", 96, 96, floor, SAMPLE2D, [tex], SampleSpec())
    small_floor = quad(_floor_tc(1.5, 2.0), FLOOR_W)
    tex = TexImage("2d", "rgba8", mip_chain(6, 16), "linear_mipmap_nearest", "nearest")
    add("mip_mixed", 80, 80, small_floor, SAMPLE2D, [tex], SampleSpec())

    # -- anisotropic filtering (llvmpipe's elliptical weighted average) ---------------
    for name, seed, size, minf, aniso in (
        ("aniso16_trilinear", 30, 64, "linear_mipmap_linear", 16.0),
        ("aniso4_mip_nearest", 31, 32, "nearest_mipmap_nearest", 4.0),
        ("aniso2_no_mips", 32, 16, "linear", 2.0),
    ):
        tex = TexImage("2d", "rgba8", mip_chain(seed, size), minf, "linear", max_anisotropy=aniso)
        if minf == "linear":
            tex.levels = tex.levels[:1]
        add(name, 64, 64, quad(_floor_tc(3.0, 5.0), FLOOR_W), SAMPLE2D, [tex], SampleSpec())

    tc = affine_tc((0.0, 0.0, 0.0, -1.5), (2.5, 0.0, 0.0, 3.0), (0.0, 2.2, 0.0, 0.0))
    tex = TexImage("2d", "rgba8", mip_chain(7, 64), "linear_mipmap_linear", "linear", lod_bias=0.5)
    add(
        "lod_bias",
        64,
        64,
        quad(tc),
        _fs("f_color = texture(tex0, v_tc.xy, v_tc.w);"),
        [tex],
        SampleSpec(bias=3),
    )

    tc = affine_tc((-0.1, 0.0, -0.7, 0.0), (1.4, 0.0, 7.5, 0.0), (0.0, 1.2, 0.0, 0.0))
    tex = TexImage("2d", "rgba8", mip_chain(8, 32), "nearest_mipmap_linear", "linear")
    add(
        "explicit_lod",
        64,
        64,
        quad(tc),
        _fs("f_color = textureLod(tex0, v_tc.xy, v_tc.z);"),
        [tex],
        SampleSpec(lod=2),
    )

    tc = affine_tc((-0.2, -0.1, 0, 0), (1.3, 0.0, 0, 0), (0.0, 1.4, 0, 0))
    tex = TexImage("2d", "rgba8", mip_chain(9, 8, levels=1), "linear", "linear")
    add(
        "offset",
        64,
        64,
        quad(tc),
        _fs("f_color = textureOffset(tex0, v_tc.xy, ivec2(-2, 3));"),
        [tex],
        SampleSpec(offset=(-2, 3, 0)),
    )

    # -- formats that fit 8 bits but are not RGBA8 (8-bit path, texels widened) -------
    rng = np.random.default_rng(28)
    tc = affine_tc((-0.1, -0.2, 0, 0), (1.3, 0.1, 0, 0), (0.05, 1.4, 0, 0))
    tex = TexImage("2d", "rgb565", [rng.integers(0, 1 << 16, (1, 8, 8), dtype=np.uint16)])
    add("rgb565", 64, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())
    r8 = [np.ascontiguousarray(img[..., 0]) for img in mip_chain(29, 32)]
    tex = TexImage("2d", "r8", r8, "linear_mipmap_linear", "linear")
    add("r8_trilinear", 64, 64, quad(_floor_tc(3.0, 4.0), FLOOR_W), SAMPLE2D, [tex], SampleSpec())

    # -- other wrap modes and formats (float filtering path) ------------------------
    rng = np.random.default_rng(10)
    tc = affine_tc((-1.2, -0.7, 0, 0), (3.1, 0.3, 0, 0), (0.2, 2.6, 0, 0))
    tex = TexImage(
        "2d", "rgba32f", [rng.random((1, 8, 8, 4), dtype=np.float32)], wrap=("mirrored_repeat",) * 3
    )
    add("float_mirror", 64, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())

    tc = affine_tc((-0.4, -0.3, 0, 0), (1.8, 0.0, 0, 0), (0.0, 1.7, 0, 0))
    tex = TexImage(
        "2d",
        "rgba8",
        mip_chain(11, 8, levels=1),
        wrap=("clamp_to_border",) * 3,
        border=(0.25, 0.5, 1.0, 0.75),
    )
    add("border", 64, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())

    tc = affine_tc((-1.3, -0.6, 0, 0), (2.7, 0.1, 0, 0), (0.2, 2.1, 0, 0))
    tex = TexImage(
        "2d",
        "rgba8",
        mip_chain(12, 8, levels=1),
        "nearest",
        "nearest",
        wrap=("mirror_clamp_to_edge", "clamp_to_border", "repeat"),
        border=(1.0, 0.0, 0.5, 1.0),
    )
    add("wrap_nearest", 64, 64, quad(tc), SAMPLE2D, [tex], SampleSpec())

    snorm = np.random.default_rng(13).integers(-128, 128, (1, 8, 8, 4), dtype=np.int8)
    tc = affine_tc((-0.2, -0.1, 0, 0), (1.4, 0.1, 0, 0), (0.0, 1.3, 0, 0))
    tex = TexImage("2d", "rgba8_snorm", [snorm], wrap=("clamp_to_edge",) * 3)
    add(
        "snorm",
        64,
        64,
        quad(tc),
        _fs("f_color = abs(texture(tex0, v_tc.xy));"),
        [tex],
        SampleSpec(),
        "abs",
    )

    tc = affine_tc((-0.3, -0.2, 0, 0), (1.6, 0.0, 0, 0), (0.0, 1.5, 0, 0))
    tex = TexImage("2d", "rgba8ui", mip_chain(14, 8, levels=1), "nearest", "nearest")
    add(
        "uint",
        64,
        64,
        quad(tc),
        _fs("f_color = vec4(texture(tex0, v_tc.xy)) / 255.0;", "uniform usampler2D tex0;"),
        [tex],
        SampleSpec(),
        "uint",
    )

    # -- other targets ------------------------------------------------------------
    tc = affine_tc((-0.2, 0.0, 0, 0), (3.5, 0.0, 0, 0), (0.5, 0.0, 0, 0))
    tex = TexImage("1d", "rgba8", mip_chain(15, 16, height=1), "linear_mipmap_linear", "linear")
    add(
        "tex1d",
        64,
        48,
        quad(tc, (1.0, 2.5, 3.5, 1.2)),
        _fs("f_color = texture(tex0, v_tc.x);", "uniform sampler1D tex0;"),
        [tex],
        SampleSpec(target="1D", t=None),
    )

    tc = affine_tc((-0.1, -0.1, 0.05, 0), (1.9, 0.2, 0.9, 0), (0.1, 1.7, 0.2, 0))
    tex = TexImage(
        "3d", "rgba8", mip_chain(16, 8, layers=8, depth3d=True), "linear_mipmap_linear", "linear"
    )
    add(
        "tex3d",
        64,
        64,
        quad(tc, (1.0, 1.5, 2.5, 1.8)),
        _fs("f_color = texture(tex0, v_tc.xyz);", "uniform sampler3D tex0;"),
        [tex],
        SampleSpec(target="3D", r=2),
    )

    tc = affine_tc((-0.2, 0.1, -0.8, 0), (1.3, 0.2, 5.4, 0), (0.1, 1.1, 0.0, 0))
    tex = TexImage("2d_array", "rgba8", mip_chain(17, 8, layers=4, levels=1))
    add(
        "array2d",
        64,
        64,
        quad(tc),
        _fs("f_color = texture(tex0, v_tc.xyz);", "uniform sampler2DArray tex0;"),
        [tex],
        SampleSpec(target="2D_ARRAY", layer=2),
    )

    cube_dirs = affine_tc((-1.0, -1.0, 0.7, 0), (2.6, 0.4, -1.5, 0), (0.3, 2.4, -0.4, 0))
    cube_fs = _fs("f_color = texture(tex0, v_tc.xyz);", "uniform samplerCube tex0;")
    cube_spec = SampleSpec(target="CUBE", r=2)
    tex = TexImage(
        "cube", "rgba8", mip_chain(18, 16, layers=6), "linear_mipmap_linear", "linear",
        wrap=("clamp_to_edge",) * 3,
    )  # fmt: skip
    add("cube", 80, 80, quad(cube_dirs), cube_fs, [tex], cube_spec)
    tex = TexImage(
        "cube", "rgba8", mip_chain(19, 16, layers=6), "nearest_mipmap_nearest", "nearest"
    )
    add("cube_nearest", 80, 80, quad(cube_dirs, (1.0, 2.0, 3.0, 1.5)), cube_fs, [tex], cube_spec)
    tex = TexImage("cube", "rgba8", mip_chain(20, 8, layers=6, levels=1), "linear", "linear")
    add("cube_flat", 80, 80, quad(cube_dirs), cube_fs, [tex], cube_spec, seamless=False)

    # -- shadow comparison ----------------------------------------------------------
    shadow_fs = "float s = texture(tex0, v_tc.xyz); f_color = vec4(s, s * 0.5, 1.0 - s, 1.0);"
    tc = affine_tc((-0.05, 0.0, 0.1, 0), (1.1, 0.0, 0.5, 0), (0.0, 1.05, 0.3, 0))
    tex = TexImage(
        "2d", "depth24", depth_levels(21, 8), wrap=("clamp_to_edge",) * 3, compare="lequal"
    )
    add(
        "shadow",
        64,
        64,
        quad(tc),
        _fs(shadow_fs, "uniform sampler2DShadow tex0;"),
        [tex],
        SampleSpec(target="SHADOW2D", ref=2),
        "shadow",
    )
    tex = TexImage(
        "2d",
        "depth24",
        depth_levels(22, 8),
        "nearest",
        "nearest",
        wrap=("clamp_to_edge",) * 3,
        compare="greater",
    )
    add(
        "shadow_nearest",
        64,
        64,
        quad(tc),
        _fs(shadow_fs, "uniform sampler2DShadow tex0;"),
        [tex],
        SampleSpec(target="SHADOW2D", ref=2),
        "shadow",
    )
    dirs = affine_tc((-1.0, -1.0, 0.8, 0.3), (2.4, 0.3, -1.4, 0.5), (0.2, 2.2, -0.3, 0.2))
    tex = TexImage("cube", "depth24", depth_levels(23, 8, layers=6), compare="less")
    add(
        "shadow_cube",
        72,
        72,
        quad(dirs),
        _fs(
            "float s = texture(tex0, v_tc); f_color = vec4(s, s * 0.5, 1.0 - s, 1.0);",
            "uniform samplerCubeShadow tex0;",
        ),
        [tex],
        SampleSpec(target="SHADOWCUBE", r=2, ref=3),
        "shadow",
    )

    # -- gather, lod query, fetch / size ------------------------------------------------
    tc = affine_tc((-0.2, -0.1, 0, 0), (1.3, 0.1, 0, 0), (0.0, 1.25, 0, 0))
    tex = TexImage(
        "2d",
        "rgba8",
        mip_chain(24, 8, levels=1),
        wrap=("clamp_to_edge", "repeat", "repeat"),
        swizzle=("g", "b", "r", "one"),
    )
    add(
        "gather",
        64,
        64,
        quad(tc),
        _fs("f_color = textureGather(tex0, v_tc.xy);", header=GATHER),
        [tex],
        SampleSpec(op="gather"),
    )
    tex = TexImage("2d", "rgba8", mip_chain(26, 64, levels=5), "linear_mipmap_linear", "linear")
    add(
        "query_lod",
        64,
        64,
        floor,
        _fs(
            "vec2 l = textureQueryLOD(tex0, v_tc.xy); f_color = vec4(l * 0.125 + 0.25, 0.0, 1.0);",
            header="#version 330\n#extension GL_ARB_texture_query_lod : require",
        ),
        [tex],
        SampleSpec(op="lod"),
        "lod",
    )

    body = (
        "ivec2 sz = textureSize(tex0, 1); "
        "ivec2 p = ivec2(gl_FragCoord.xy) & (sz - 1); "
        "vec4 c = texelFetch(tex0, p, 1); "
        "f_color = vec4(c.rgb, float(textureSize(tex0, 0).x) / 64.0);"
    )
    tex = TexImage("2d", "rgba8", mip_chain(27, 16, levels=3), "nearest_mipmap_nearest", "nearest")
    add("fetch_size", 48, 40, quad(np.zeros((4, 4))), _fs(body), [tex], None)
    return out


def all_scenes() -> list[TexScene]:
    return _scenes()


def scene_by_name(name: str) -> TexScene:
    for s in all_scenes():
        if s.name == name:
            return s
    raise KeyError(name)
