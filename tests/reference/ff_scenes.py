"""Fixed-function reference scenes: polygon offset, fill modes, two-sided
colour, provoking vertex, colour clamps, depth clamp, ... rendered by Mesa's
llvmpipe through a GL 4.5 *compatibility* profile (tools/make_ff_reference.py:
some of this state -- two-sided colour, polygon and line stipple, point
smoothing, edge flags -- exists only there) and by numpipe (tests/ffrender.py).

A scene is given once, in GL's terms (what the tool calls), and
:func:`gallium_state` translates it into Gallium's as Mesa's state tracker
does for a user framebuffer object (st_atom_rasterizer.c): the winding is
inverted (``front_ccw``), ``bottom_edge_rule`` is off, the line-stipple
factor is GL's minus one, and row 0 of the framebuffer is NDC y = -1 (GL's
bottom row) in both drivers.  Vertices are given in clip space and passed
through, so both drivers start from the same positions.

The goldens are the colour buffer (PNG for RGBA8, .npy otherwise) and the
depth buffer's words (.npy: uint16 for Z16, the 24 depth bits of Z24S8 as
uint32, float32 for Z32F).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

F32 = np.float32

GLSL_VS = """#version 450 compatibility
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_color;
layout(location = 2) in vec4 in_back;
void main() {
    gl_Position = in_pos;
    gl_FrontColor = in_color;
    gl_BackColor = in_back;
}
"""
GLSL_FS = """#version 450 compatibility
void main() { gl_FragColor = gl_Color; }
"""
# the same shaders in TGSI: COLOR outputs (and BCOLOR), an EDGEFLAG output
# from IN[3].x when the scene has edge flags; the fragment shader reads
# COLOR with COLOR interpolation (flat when ``flatshade``)
TGSI_VS = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL IN[3]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
DCL OUT[2], BCOLOR
DCL OUT[3], EDGEFLAG
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IN[2]
  3: MOV OUT[3], IN[3].xxxx
  4: END
"""
TGSI_FS = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
# integer outputs for integer render targets: the colour times 400, as
# unsigned integers, or minus 150 as signed ones (GLSL: uvec4(c * 400.0),
# ivec4(c * 400.0) - 150)
GLSL_FS_UINT = """#version 450 compatibility
layout(location = 0) out uvec4 f;
void main() { f = uvec4(gl_Color * 400.0); }
"""
GLSL_FS_SINT = """#version 450 compatibility
layout(location = 0) out ivec4 f;
void main() { f = ivec4(gl_Color * 400.0) - ivec4(150); }
"""
TGSI_FS_UINT = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {400.0, 0.0, 0.0, 0.0}
  0: MUL TEMP[0], IN[0], IMM[0].xxxx
  1: F2U OUT[0], TEMP[0]
  2: END
"""
TGSI_FS_SINT = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {400.0, 0.0, 0.0, 0.0}
IMM[1] INT32 {-150, 0, 0, 0}
  0: MUL TEMP[0], IN[0], IMM[0].xxxx
  1: F2I TEMP[0], TEMP[0]
  2: UADD OUT[0], TEMP[0], IMM[1].xxxx
  3: END
"""


def vertex_shaders(psize: float | None) -> tuple[str, str]:
    """(GLSL, TGSI) vertex shaders; with ``psize``, also writing that point
    size (gl_PointSize / PSIZE)."""
    if psize is None:
        return GLSL_VS, TGSI_VS
    glsl = GLSL_VS.replace(
        "    gl_BackColor = in_back;\n",
        f"    gl_BackColor = in_back;\n    gl_PointSize = {psize!r};\n",
    )
    tgsi = TGSI_VS.replace(
        "DCL OUT[3], EDGEFLAG\n",
        f"DCL OUT[3], EDGEFLAG\nDCL OUT[4], PSIZE\nIMM[0] FLT32 {{{psize!r}, 0.0, 0.0, 0.0}}\n",
    ).replace("  4: END", "  4: MOV OUT[4], IMM[0].xxxx\n  5: END")
    return glsl, tgsi


# framebuffer fetch (GL_EXT_shader_framebuffer_fetch, coherent in llvmpipe):
# half the colour already there plus half the fragment's (both products
# exact: the same value fused or not)
GLSL_FS_FBFETCH = """#version 450 compatibility
#extension GL_EXT_shader_framebuffer_fetch : require
layout(location = 0) inout vec4 f;
void main() { f = f * 0.5 + gl_Color * 0.5; }
"""
TGSI_FS_FBFETCH = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
DCL TEMP[0..1]
IMM[0] FLT32 {0.5, 0.0, 0.0, 0.0}
  0: FBFETCH TEMP[0], OUT[0]
  1: MUL TEMP[1], IN[0], IMM[0].xxxx
  2: MAD OUT[0], TEMP[0], IMM[0].xxxx, TEMP[1]
  3: END
"""
FRAGMENT_SHADERS = {
    "color": (GLSL_FS, TGSI_FS),
    "fbfetch": (GLSL_FS_FBFETCH, TGSI_FS_FBFETCH),
    "uint": (GLSL_FS_UINT, TGSI_FS_UINT),
    "sint": (GLSL_FS_SINT, TGSI_FS_SINT),
}


@dataclass
class FFScene:
    name: str
    positions: np.ndarray  # (N, 4) clip coordinates
    colors: np.ndarray  # (N, 4) front colours
    back: np.ndarray | None = None  # (N, 4) back colours (default: the front ones)
    edges: np.ndarray | None = None  # (N,) GL edge flags (default: all set)
    mode: str = "triangles"
    draws: list = field(default_factory=list)  # (first, count); empty: all
    width: int = 32
    height: int = 32
    color_format: str = "rgba8"
    clear_color: tuple = (0.0, 0.0, 0.0, 1.0)
    depth: str | None = None  # "z16" | "z24s8" | "z32f"
    depth_func: str = "less"
    clear_depth: float = 1.0
    depth_range: tuple = (0.0, 1.0)
    depth_clamp: bool = False
    # glPolygonOffset(factor, units) / glPolygonOffsetClamp(factor, units, clamp)
    offset: tuple | None = None
    offset_modes: tuple = ("fill",)  # GL_POLYGON_OFFSET_FILL / _LINE / _POINT
    polygon_mode: tuple = ("fill", "fill")  # front, back
    cull: str | None = None  # "front" | "back" | "front_and_back"
    front_face: str = "ccw"
    twoside: bool = False
    flat: bool = False
    provoking: str = "last"
    line_width: float = 1.0
    point_size: float = 1.0
    clamp_vertex_color: bool = False
    clamp_fragment_color: bool = False
    fs: str = "color"  # FRAGMENT_SHADERS key
    logic_op: str | None = None  # GL's name ("xor", ...)
    blend: bool = False  # standard alpha blending (a logic op overrides it)
    # glPolygonStipple: 32 rows from the bottom, bit 31 of a row the leftmost pixel
    poly_stipple: tuple | None = None
    line_stipple: tuple | None = None  # glLineStipple(factor, pattern)
    point_smooth: bool = False  # GL_POINT_SMOOTH
    line_smooth: bool = False  # GL_LINE_SMOOTH
    poly_smooth: bool = False  # GL_POLYGON_SMOOTH
    # the vertex shader writes this point size, GL_PROGRAM_POINT_SIZE on
    # (Gallium: point_size_per_vertex)
    program_point_size: float | None = None
    viewport: tuple | None = None  # glViewport(x, y, w, h); default the framebuffer
    note: str = ""

    def draw_list(self) -> list:
        return self.draws or [(0, self.positions.shape[0])]

    def vertex_data(self) -> np.ndarray:
        """(N, 16) float32 rows: position, colour, back colour, edge flag (x)."""
        n = self.positions.shape[0]
        back = self.colors if self.back is None else self.back
        edges = np.ones(n, F32) if self.edges is None else self.edges.astype(F32)
        out = np.zeros((n, 16), F32)
        out[:, 0:4] = self.positions
        out[:, 4:8] = self.colors
        out[:, 8:12] = back
        out[:, 12] = edges
        return out


def gallium_state(scene: FFScene, pipe) -> dict:
    """The Gallium rasterizer state (a pipe.RasterizerState) and viewport of a
    scene, as Mesa's state tracker derives them for a user FBO."""
    modes = {
        "fill": pipe.PolygonMode.FILL,
        "line": pipe.PolygonMode.LINE,
        "point": pipe.PolygonMode.POINT,
    }
    cull = {
        None: pipe.Face.NONE,
        "front": pipe.Face.FRONT,
        "back": pipe.Face.BACK,
        "front_and_back": pipe.Face.FRONT_AND_BACK,
    }[scene.cull]
    fill_front, fill_back = modes[scene.polygon_mode[0]], modes[scene.polygon_mode[1]]
    # st_atom_rasterizer.c: a culled face takes the other face's mode
    if cull & pipe.Face.FRONT:
        fill_front = fill_back
    if cull & pipe.Face.BACK:
        fill_back = fill_front
    rast = pipe.RasterizerState(
        front_ccw=scene.front_face != "ccw",  # (inverted on a user FBO)
        cull_face=cull,
        fill_front=fill_front,
        fill_back=fill_back,
        flatshade=scene.flat,
        flatshade_first=scene.provoking == "first",
        light_twoside=scene.twoside,
        clamp_vertex_color=scene.clamp_vertex_color,
        clamp_fragment_color=scene.clamp_fragment_color,
        line_width=scene.line_width,
        point_size=scene.point_size,
        depth_clip=not scene.depth_clamp,
        poly_stipple_enable=scene.poly_stipple is not None,
        point_smooth=scene.point_smooth,
        line_smooth=scene.line_smooth,
        poly_smooth=scene.poly_smooth,
        point_size_per_vertex=scene.program_point_size is not None,
    )
    if scene.line_stipple is not None:  # (GL's factor 1-256 is Gallium's 0-255)
        rast.line_stipple_enable = True
        rast.line_stipple_factor = scene.line_stipple[0] - 1
        rast.line_stipple_pattern = scene.line_stipple[1]
    if scene.offset is not None:
        factor, units, clamp = (*scene.offset, 0.0)[:3]
        rast.offset_tri = "fill" in scene.offset_modes
        rast.offset_line = "line" in scene.offset_modes
        rast.offset_point = "point" in scene.offset_modes
        rast.offset_scale, rast.offset_units, rast.offset_clamp = factor, units, clamp
    # (_mesa_get_viewport_xform: float arithmetic on the float depth range)
    n, f = F32(scene.depth_range[0]), F32(scene.depth_range[1])
    half = F32((f - n) / F32(2.0))
    x, y, w, h = scene.viewport or (0, 0, scene.width, scene.height)
    viewport = pipe.ViewportState(
        scale=(w / 2, h / 2, float(half)),
        translate=(x + w / 2, y + h / 2, float(F32(n + half))),
    )
    return {"rast": rast, "viewport": viewport}


def _grid_triangles(rng: np.random.Generator, n: int, zlo: float, zhi: float) -> np.ndarray:
    p = np.zeros((3 * n, 4), F32)
    p[:, 0:2] = rng.uniform(-1.1, 1.1, (3 * n, 2))
    p[:, 2] = rng.uniform(zlo, zhi, 3 * n)
    p[:, 3] = 1.0
    return p


def _colors(rng: np.random.Generator, n: int) -> np.ndarray:
    c = rng.uniform(0.05, 1.0, (n, 4)).astype(F32)
    c[:, 3] = 1.0
    return c


def _offset_scenes() -> list[FFScene]:
    """Polygon offset: depth words into Z16, Z24 and Z32F, slopes and units,
    clamps both ways, filled (llvmpipe's setup) and in the draw module's
    stages (a back face drawn as lines makes llvmpipe use them for every
    polygon)."""
    out = []
    tri = np.array(
        [
            [-0.9, -0.8, 0.1, 1],
            [0.8, -0.6, 0.7, 1],
            [-0.2, 0.9, -0.3, 1],
            [-0.5, 0.7, 0.9, 1],
            [0.9, 0.4, -0.8, 1],
            [0.2, -0.9, 0.3, 1],
        ],
        F32,
    )
    cols = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]] * 2, F32)
    for fmt in ("z16", "z24s8", "z32f"):
        for label, off in (
            ("slope", (1.5, 3.0)),
            ("units", (0.0, -40.0)),
            ("clamp", (2.0, 50.0, 0.002)),
            ("negclamp", (-3.0, -50.0, -0.003)),
        ):
            out.append(
                FFScene(
                    f"offset_{label}_{fmt}",
                    tri,
                    cols,
                    depth=fmt,
                    depth_func="always",
                    offset=off,
                )
            )
        # the draw module's offset: every polygon through its stages, the
        # back face (here none is back-facing) drawn as lines
        out.append(
            FFScene(
                f"offset_stages_{fmt}",
                tri,
                cols,
                depth=fmt,
                depth_func="always",
                offset=(1.5, 3.0),
                polygon_mode=("fill", "line"),
            )
        )
    rng = np.random.default_rng(25)
    pos = _grid_triangles(rng, 12, -0.4, 1.3)
    out.append(
        FFScene(
            "offset_many_z24",
            pos,
            _colors(rng, pos.shape[0]),
            depth="z24s8",
            depth_func="lequal",
            offset=(-2.0, -8.0),
            width=48,
            height=40,
        )
    )
    return out


def _fan_positions(n: int, cx: float, cy: float, r: float, z0: float, dz: float) -> np.ndarray:
    a = np.linspace(0.3, 0.3 + 2 * np.pi, n, endpoint=False)
    p = np.zeros((n, 4), F32)
    p[:, 0] = cx + r * np.cos(a)
    p[:, 1] = cy + r * 0.9 * np.sin(a)
    p[:, 2] = z0 + dz * np.sin(3 * a)
    p[:, 3] = 1.0
    return p


def _fill_mode_scenes() -> list[FFScene]:
    """Polygons drawn as lines and points (draw_pipe_unfilled.c): every
    primitive kind's boundary edges (quads and polygons hide their inner
    edges), either provoking vertex, edge flags from the vertices, a
    polygon half outside the frustum (no edge along the clip plane),
    front and back faces in different modes, flat and two-sided colour,
    offset on lines and points, wide lines and big points."""
    rng = np.random.default_rng(2025)
    out = []
    strip = np.zeros((8, 4), F32)
    strip[:, 0] = np.repeat(np.linspace(-0.85, 0.8, 4), 2) + rng.uniform(-0.05, 0.05, 8)
    strip[:, 1] = np.tile([-0.7, 0.6], 4) + rng.uniform(-0.1, 0.1, 8)
    strip[:, 2] = rng.uniform(-0.5, 0.5, 8)
    strip[:, 3] = 1.0
    fan = _fan_positions(7, 0.05, -0.05, 0.85, 0.0, 0.4)
    tris = _grid_triangles(rng, 4, -0.6, 0.6)
    for mode, pos in (
        ("triangles", tris),
        ("triangle_strip", strip),
        ("triangle_fan", np.concatenate([[[0.0, 0.0, 0.1, 1.0]], fan])),
        ("quads", strip[[0, 1, 3, 2, 4, 5, 7, 6]]),
        ("quad_strip", strip),
        ("polygon", fan),
    ):
        cols = _colors(rng, pos.shape[0])
        for provoking in ("last", "first"):
            out.append(
                FFScene(
                    f"lines_{mode}_{provoking}",
                    pos,
                    cols,
                    mode=mode,
                    polygon_mode=("line",) * 2,
                    provoking=provoking,
                    flat=provoking == "first",
                )
            )
        out.append(
            FFScene(
                f"points_{mode}", pos, cols, mode=mode, polygon_mode=("point",) * 2, point_size=3.0
            )
        )
    edges = np.array([1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1], F32)
    out.append(
        FFScene(
            "lines_edge_flags",
            tris,
            _colors(rng, 12),
            edges=edges,
            polygon_mode=("line", "point"),
            point_size=2.0,
        )
    )
    big = np.array(
        [
            [-1.6, -0.7, 0.2, 1],
            [1.5, -0.9, 0.0, 1],
            [0.1, 1.7, -0.2, 1],
            [-0.3, -0.2, 1.4, 1],
            [0.6, 0.1, -0.3, 1],
            [0.2, 0.7, -1.6, 1],
        ],
        F32,
    )
    out.append(
        FFScene(
            "lines_clipped",
            big,
            _colors(rng, 6),
            polygon_mode=("line", "line"),
            depth="z24s8",
            depth_func="always",
        )
    )
    out.append(
        FFScene(
            "points_clipped", big, _colors(rng, 6), polygon_mode=("point", "point"), point_size=4.0
        )
    )
    # front filled, back as lines; back faces culled; wide lines, offset lines and points
    mixed = _grid_triangles(rng, 10, -0.8, 0.8)
    out.append(
        FFScene(
            "mixed_fill_line",
            mixed,
            _colors(rng, 30),
            polygon_mode=("fill", "line"),
            depth="z24s8",
            line_width=2.0,
            width=48,
            height=40,
        )
    )
    out.append(
        FFScene(
            "mixed_point_fill_cull",
            mixed,
            _colors(rng, 30),
            polygon_mode=("point", "fill"),
            cull="back",
            point_size=2.5,
            width=48,
            height=40,
        )
    )
    for fmt in ("z16", "z32f"):
        out.append(
            FFScene(
                f"offset_lines_{fmt}",
                mixed,
                _colors(rng, 30),
                polygon_mode=("line", "point"),
                offset=(2.0, 4.0),
                offset_modes=("line", "point"),
                depth=fmt,
                depth_func="always",
                point_size=2.0,
                width=40,
                height=40,
            )
        )
    # two-sided colour: back faces take the back colours (filled by
    # llvmpipe's setup, and through the draw module's stages when some
    # polygons are lines)
    back = _colors(rng, 30)
    for label, pm, flat in (
        ("fill", ("fill", "fill"), False),
        ("flat", ("fill", "fill"), True),
        ("lines", ("line", "fill"), False),
    ):
        out.append(
            FFScene(
                f"twoside_{label}",
                mixed,
                _colors(rng, 30),
                back=back,
                twoside=True,
                polygon_mode=pm,
                flat=flat,
                width=48,
                height=40,
            )
        )
    out.append(
        FFScene(
            "twoside_cw_front",
            mixed,
            _colors(rng, 30),
            back=back,
            twoside=True,
            front_face="cw",
            provoking="first",
            flat=True,
            width=48,
            height=40,
        )
    )
    return out


def _clamp_scenes() -> list[FFScene]:
    """Depth clamping (GL_DEPTH_CLAMP: no near/far clipping, fragment depth
    clamped to the depth range), and the vertex and fragment colour clamps
    into a float target (colours beyond [0, 1])."""
    rng = np.random.default_rng(7)
    out = []
    deep = np.array(
        [
            [-0.9, -0.9, -1.6, 1],
            [0.9, -0.7, 0.4, 1],
            [0.1, 0.95, 1.7, 1],
            [-0.8, 0.6, 2.5, 1.5],
            [0.7, 0.9, -2.2, 1.2],
            [0.5, -0.95, 0.0, 1],
        ],
        F32,
    )
    for fmt in ("z16", "z32f"):
        for label, dr in (("full", (0.0, 1.0)), ("range", (0.2, 0.7)), ("reversed", (0.9, 0.3))):
            out.append(
                FFScene(
                    f"depth_clamp_{label}_{fmt}",
                    deep,
                    _colors(rng, 6),
                    depth=fmt,
                    depth_func="always",
                    depth_clamp=True,
                    depth_range=dr,
                )
            )
    out.append(
        FFScene(
            "depth_clip_range_z16",
            deep,
            _colors(rng, 6),
            depth="z16",
            depth_func="always",
            depth_range=(0.2, 0.7),
        )
    )
    loud = rng.uniform(-0.8, 2.2, (6, 4)).astype(F32)
    for vert, frag in ((False, False), (True, False), (False, True)):
        out.append(
            FFScene(
                f"clamp_color_v{int(vert)}_f{int(frag)}",
                deep[[0, 1, 2, 5, 4, 3]],
                loud,
                color_format="rgba32f",
                clamp_vertex_color=vert,
                clamp_fragment_color=frag,
            )
        )
    return out


LOGIC_OPS = (
    "clear", "and", "and_reverse", "copy", "and_inverted", "noop", "xor", "or", "nor",
    "equiv", "invert", "or_reverse", "copy_inverted", "or_inverted", "nand", "set",
)  # fmt: skip


def _logic_scenes() -> list[FFScene]:
    """Integer render targets (values clamped to the channel on store) and
    every logic op on an RGBA8 UNORM target (over blending) and on integer
    targets: two overlapping triangles over a clear colour."""
    rng = np.random.default_rng(11)
    pos = np.array(
        [[-0.9, -0.85, 0, 1], [0.85, -0.5, 0, 1], [-0.3, 0.9, 0, 1],
         [-0.7, 0.5, 0, 1], [0.2, -0.95, 0, 1], [0.95, 0.7, 0, 1]], F32
    )  # fmt: skip
    cols = _colors(rng, 6)
    cols[:, 3] = rng.uniform(0.2, 0.9, 6)
    out = []
    for fmt, fs, clear in (
        ("rgba8ui", "uint", (40.0, 200.0, 7.0, 255.0)),
        ("rgba8i", "sint", (-40.0, 100.0, -128.0, 5.0)),
        ("r32ui", "uint", (123456.0, 0.0, 0.0, 0.0)),
    ):
        out.append(
            FFScene(f"int_target_{fmt}", pos, cols, color_format=fmt, fs=fs, clear_color=clear)
        )
        for op in ("xor", "and_inverted", "nand", "or_reverse"):
            out.append(
                FFScene(
                    f"logic_{op}_{fmt}",
                    pos,
                    cols,
                    color_format=fmt,
                    fs=fs,
                    clear_color=clear,
                    logic_op=op,
                )
            )
    for op in LOGIC_OPS:
        out.append(
            FFScene(
                f"logic_{op}_rgba8",
                pos,
                cols,
                clear_color=(0.25, 0.6, 0.8, 0.5),
                logic_op=op,
                blend=op in ("xor", "copy"),
            )
        )
    return out


def _stipple_scenes() -> list[FFScene]:
    """Polygon stipple, anchored to the window: filled triangles (a depth
    test behind them sees only the pattern's fragments), and with some
    polygons drawn as lines: the draw module binds its stipple shader at a
    draw's first filled triangle without flushing the primitives before it,
    so a draw with a filled triangle is stippled whole, lines too, and a
    draw of lines alone is not."""
    rng = np.random.default_rng(12)
    rows = tuple(int(v) for v in rng.integers(0, 1 << 32, 32, dtype=np.uint64))
    checker = tuple(0x33333333 if (r // 2) % 2 else 0xCCCCCCCC for r in range(32))
    out = []
    tris = _grid_triangles(rng, 6, -0.8, 0.8)
    out.append(
        FFScene(
            "stipple_fill",
            tris,
            _colors(rng, 18),
            poly_stipple=rows,
            width=48,
            height=40,
            depth="z24s8",
            depth_func="lequal",
        )
    )
    out.append(
        FFScene(
            "stipple_checker",
            tris[:9],
            _colors(rng, 9),
            poly_stipple=checker,
            width=40,
            height=36,
            flat=True,
        )
    )
    mixed = _grid_triangles(rng, 10, -0.8, 0.8)
    out.append(
        FFScene(
            "stipple_mixed_lines",
            mixed,
            _colors(rng, 30),
            poly_stipple=rows,
            polygon_mode=("fill", "line"),
            line_width=3.0,
            width=48,
            height=40,
        )
    )
    out.append(
        FFScene(
            "stipple_lines_only",
            mixed,
            _colors(rng, 30),
            poly_stipple=rows,
            polygon_mode=("line", "line"),
            line_width=2.0,
            width=48,
            height=40,
        )
    )
    return out


def _line_stipple_scenes() -> list[FFScene]:
    """Line stipple (draw_pipe_stipple.c): one bit per pixel of the major
    axis, ``factor`` pixels a bit, the counter running on along strips and
    loops (LINES start over at every line), lines cut into the lit runs;
    wide lines, lines crossing the viewport's edge, and polygon edges (the
    pattern starting over at each polygon)."""
    rng = np.random.default_rng(13)
    out = []
    pts = np.zeros((12, 4), F32)
    pts[:, 0:2] = rng.uniform(-1.15, 1.15, (12, 2))
    pts[:, 2] = rng.uniform(-0.5, 0.5, 12)
    pts[:, 3] = 1.0
    cols = _colors(rng, 12)
    for mode, stip in (
        ("lines", (1, 0xF0F0)),
        ("line_strip", (2, 0x3F07)),
        ("line_loop", (3, 0xAAAA)),
        ("line_strip", (1, 0x00FF)),
    ):
        out.append(
            FFScene(
                f"stipple_{mode}_{stip[0]}_{stip[1]:04x}",
                pts,
                cols,
                mode=mode,
                line_stipple=stip,
                width=48,
                height=40,
            )
        )
    out.append(
        FFScene(
            "stipple_wide_strip",
            pts,
            cols,
            mode="line_strip",
            line_width=3.0,
            line_stipple=(2, 0xE4E4),
            width=48,
            height=40,
            flat=True,
            provoking="first",
        )
    )
    fan = _fan_positions(7, 0.0, 0.0, 0.9, 0.0, 0.3)
    out.append(
        FFScene(
            "stipple_polygon_edges",
            fan,
            _colors(rng, 7),
            mode="polygon",
            polygon_mode=("line", "line"),
            line_stipple=(1, 0x0F3F),
        )
    )
    tris = _grid_triangles(rng, 6, -0.6, 0.6)
    out.append(
        FFScene(
            "stipple_triangle_edges",
            tris,
            _colors(rng, 18),
            polygon_mode=("line", "fill"),
            line_stipple=(2, 0x33CC),
            width=48,
            height=40,
        )
    )
    return out


def _smooth_scenes() -> list[FFScene]:
    """Smooth points and lines (draw_pipe_aapoint.c, draw_pipe_aaline.c and
    the coverage of nir_draw_helpers.c): sizes and widths below, at and above
    the stages' thresholds, blended (the coverage is the alpha), lines of
    every direction and length (a short one's own length rule), strips,
    polygons drawn as smooth lines and points, flat colour; and
    GL_POLYGON_SMOOTH, which llvmpipe ignores (triangles as without it)."""
    rng = np.random.default_rng(31)
    out = []
    pts = np.zeros((14, 4), F32)
    pts[:, 0:2] = rng.uniform(-0.95, 0.95, (14, 2))
    pts[:, 2] = rng.uniform(-0.5, 0.5, 14)
    pts[:, 3] = 1.0
    pcols = rng.uniform(0.2, 1.0, (14, 4)).astype(F32)
    for size in (1.0, 2.0, 3.5, 7.0):
        for blend in (True, False):
            out.append(
                FFScene(
                    f"smooth_points_{size:g}_{'blend' if blend else 'opaque'}".replace(".", "_"),
                    pts,
                    pcols,
                    mode="points",
                    point_size=size,
                    point_smooth=True,
                    blend=blend,
                    depth="z24s8",
                    width=48,
                    height=40,
                )
            )
    ends = np.zeros((16, 4), F32)
    ang = np.linspace(0.1, 2 * np.pi + 0.1, 8, endpoint=False)
    ends[0::2, 0] = 0.1 * np.cos(ang)
    ends[0::2, 1] = 0.1 * np.sin(ang)
    ends[1::2, 0] = 0.9 * np.cos(ang)
    ends[1::2, 1] = 0.85 * np.sin(ang)
    ends[:, 2] = rng.uniform(-0.5, 0.5, 16)
    ends[:, 3] = 1.0
    ends[14:16, 0:2] = [[0.3, -0.2], [0.31, -0.195]]  # a short segment
    lcols = rng.uniform(0.2, 1.0, (16, 4)).astype(F32)
    for width in (1.0, 1.5, 4.0):
        out.append(
            FFScene(
                f"smooth_lines_{width:g}".replace(".", "_"),
                ends,
                lcols,
                mode="lines",
                line_width=width,
                line_smooth=True,
                blend=True,
                depth="z16",
                width=48,
                height=40,
            )
        )
    strip = np.zeros((9, 4), F32)
    strip[:, 0:2] = rng.uniform(-1.1, 1.1, (9, 2))
    strip[:, 2] = rng.uniform(-0.5, 0.5, 9)
    strip[:, 3] = 1.0
    out.append(
        FFScene(
            "smooth_line_strip_flat",
            strip,
            rng.uniform(0.2, 1.0, (9, 4)).astype(F32),
            mode="line_strip",
            line_width=2.0,
            line_smooth=True,
            blend=True,
            flat=True,
            provoking="first",
            width=48,
            height=40,
        )
    )
    fan = _fan_positions(7, 0.0, 0.0, 0.8, 0.0, 0.3)
    fcols = _colors(rng, 7)
    out.append(
        FFScene(
            "smooth_polygon_lines",
            fan,
            fcols,
            mode="polygon",
            polygon_mode=("line", "line"),
            line_smooth=True,
            blend=True,
        )
    )
    out.append(
        FFScene(
            "smooth_polygon_points",
            fan,
            fcols,
            mode="polygon",
            polygon_mode=("point", "point"),
            point_size=4.0,
            point_smooth=True,
            blend=True,
        )
    )
    tris = _grid_triangles(rng, 5, -0.6, 0.6)
    out.append(
        FFScene(
            "smooth_polygon_ignored",
            tris,
            _colors(rng, 15),
            poly_smooth=True,
            blend=True,
            depth="z24s8",
        )
    )
    return out


def _viewport_scissor_scenes() -> list[FFScene]:
    """llvmpipe's "fake viewport scissor": with point_size_per_vertex
    (GL_PROGRAM_POINT_SIZE) every primitive is also scissored to the
    viewport's rectangle (lp_setup.c), so wide lines and big points crossing
    its edges are cut there; without it they are not."""
    rng = np.random.default_rng(47)
    out = []
    pts = np.zeros((10, 4), F32)
    pts[:, 0:2] = rng.uniform(-1.15, 1.15, (10, 2))
    pts[:, 2] = rng.uniform(-0.5, 0.5, 10)
    pts[:, 3] = 1.0
    cols = _colors(rng, 10)
    for mode, psize in (("lines", 6.0), ("line_strip", 6.0), ("points", 7.0), ("points", None)):
        tag = "psize" if psize is not None else "plain"
        out.append(
            FFScene(
                f"vp_scissor_{mode}_{tag}",
                pts,
                cols,
                mode=mode,
                line_width=5.0,
                point_size=7.0,
                program_point_size=psize,
                viewport=(7, 5, 29, 27),
                width=48,
                height=40,
            )
        )
    return out


def _fbfetch_scenes() -> list[FFScene]:
    """Framebuffer fetch: overlapping triangles of one draw and of several
    draws, each fragment reading what the ones before it left (llvmpipe's
    coherent fetch), into RGBA8 and RGBA32F, and under blending."""
    rng = np.random.default_rng(59)
    pos = _grid_triangles(rng, 14, -0.5, 0.5)
    cols = rng.uniform(0.0, 1.0, (pos.shape[0], 4)).astype(F32)
    out = []
    for fmt in ("rgba8", "rgba32f"):
        out.append(
            FFScene(f"fbfetch_one_draw_{fmt}", pos, cols, fs="fbfetch", color_format=fmt,
                    clear_color=(0.3, 0.6, 0.1, 0.8), width=40, height=36)
        )  # fmt: skip
    out.append(
        FFScene("fbfetch_draws_blended", pos, cols, fs="fbfetch", blend=True,
                draws=[(3 * i, 3) for i in range(14)], clear_color=(0.3, 0.6, 0.1, 0.8),
                width=40, height=36)
    )  # fmt: skip
    return out


def all_scenes() -> list[FFScene]:
    return (
        _offset_scenes() + _fill_mode_scenes() + _clamp_scenes() + _logic_scenes()
        + _stipple_scenes() + _line_stipple_scenes() + _smooth_scenes()
        + _viewport_scissor_scenes() + _fbfetch_scenes()
    )  # fmt: skip


def scene_by_name(name: str) -> FFScene:
    for s in all_scenes():
        if s.name == name:
            return s
    raise KeyError(name)
