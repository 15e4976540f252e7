"""Layered rendering and viewport arrays: reference scenes rendered by Mesa's
llvmpipe (tools/make_layer_reference.py).

Each scene draws into a 64x48 framebuffer of layered colour targets (a 2D array
texture; a 3D texture's slices in ``gs_route_3d``; two arrays of 4 and 3 layers
in ``mixed_targets``, where primitives clamp to the fewest), with a layered depth
buffer (Z32F array, test LESS) when ``depth``, and sixteen viewports
(``VIEWPORTS``: rectangles and depth ranges) with sixteen scissors
(``SCISSORS``, when ``scissor``).  The last vertex stage writes LAYER and
VIEWPORT_INDEX: a geometry shader that draws each triangle to three layers and
viewports (``route``), one that emits strips, point lists and line strips whose
vertices disagree (``strips``, ``gs_points``, ``gs_lines``), a vertex shader
that takes them from its instance (``vs_instanced``) or from each vertex
(``vs_vertex``, GL_ARB_shader_viewport_layer_array), a tessellation evaluation
shader that takes them from its patch (``tes``).  Values out of range (layer 4
and more, viewport 16 and more, negative ones) are among them.  The fragment
shader reads gl_Layer and gl_ViewportIndex (GL_ARB_fragment_layer_viewport)
into alpha, so that the values as written reach it.

The GLSL is Mesa's input: llvmpipe renders the goldens, softpipe
(``SOFTPIPE_DEBUG=use_tgsi`` under ``GALLIUM_TRACE``) gives the TGSI the tests
run (``<program>.<stage>.tgsi``), except for the tessellation program,
whose TGSI is written here (softpipe has no tessellation).  Goldens:
``<scene>.color.npy`` (targets, layers, 48, 64, 4) uint8, row 0 first (window
y 0: numpipe's row 0 too), ``<scene>.depth.npy`` (layers, 48, 64) float32.
GL's viewport (x, y, w, h) and depth range (n, f) reach Gallium as scale (w/2,
h/2, (f-n)/2) and translate (x + w/2, y + h/2, (n+f)/2); a scissor (x, y, w, h)
as (x, y, x+w, y+h): a user framebuffer is not flipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent
WIDTH, HEIGHT = 64, 48

# (x, y, w, h, near, far): overlapping, off-screen, reversed and flat depth ranges
VIEWPORTS = [
    (0, 0, 64, 48, 0.0, 1.0),
    (0, 0, 32, 24, 0.25, 0.75),
    (32, 0, 32, 24, 1.0, 0.0),
    (0, 24, 32, 24, 0.5, 0.5),
    (32, 24, 32, 24, 0.0, 0.5),
    (8, 6, 48, 36, 0.1, 0.9),
    (-16, -12, 64, 48, 0.0, 1.0),
    (40, 30, 40, 40, 0.3, 1.0),
    (4, 4, 16, 12, 0.0, 1.0),
    (20, 4, 20, 12, 0.2, 0.4),
    (44, 2, 18, 20, 0.9, 0.1),
    (2, 30, 24, 16, 0.0, 1.0),
    (26, 20, 12, 24, 0.5, 1.0),
    (40, 24, 22, 22, 0.0, 0.3),
    (10.5, 12.25, 30, 20, 0.0, 1.0),
    (60, 40, 4, 8, 0.0, 1.0),
]
# (x, y, w, h)
SCISSORS = [
    (0, 0, 64, 48),
    (2, 2, 28, 20),
    (32, 0, 32, 24),
    (0, 24, 20, 24),
    (36, 26, 28, 22),
    (0, 0, 40, 30),
    (10, 10, 44, 28),
    (30, 20, 34, 28),
    (0, 0, 64, 48),
    (22, 6, 10, 8),
    (44, 0, 20, 24),
    (0, 28, 30, 20),
    (24, 18, 16, 30),
    (40, 20, 24, 28),
    (12, 14, 20, 16),
    (56, 36, 8, 12),
]


def viewport_state(i: int) -> tuple[tuple, tuple]:
    """Viewport i as Gallium's (scale, translate), computed as st/mesa does
    (float32 halves, double depth terms rounded to float32)."""
    x, y, w, h, n, f = VIEWPORTS[i]
    f32 = np.float32
    hw, hh = f32(0.5) * f32(w), f32(0.5) * f32(h)
    scale = (float(hw), float(hh), float(f32(0.5 * (f - n))))
    translate = (float(f32(hw + f32(x))), float(f32(hh + f32(y))), float(f32(0.5 * (n + f))))
    return scale, translate


# -- GLSL --------------------------------------------------------------------------

# the vertex shader's access to gl_Layer / gl_ViewportIndex: llvmpipe has the ARB
# extension, softpipe (GL 3.3) the two AMD ones (the same TGSI outputs)
VS_LAYER_EXT = {
    "llvmpipe": "#extension GL_ARB_shader_viewport_layer_array : require\n",
    "softpipe": (
        "#extension GL_AMD_vertex_shader_layer : require\n"
        "#extension GL_AMD_vertex_shader_viewport_index : require\n"
    ),
}

VS_PASS = """#version 330
layout(location = 0) in vec4 pos;
layout(location = 1) in vec4 col;
layout(location = 2) in ivec2 li;
out vec4 vc;
flat out ivec2 vli;
void main() { gl_Position = pos; vc = col; vli = li; }
"""

VS_VERTEX = """#version 330
{ext}layout(location = 0) in vec4 pos;
layout(location = 1) in vec4 col;
layout(location = 2) in ivec2 li;
out vec4 fc;
void main() {{
    gl_Position = pos;
    fc = col;
    gl_Layer = li.x;
    gl_ViewportIndex = li.y;
}}
"""

VS_INSTANCED = """#version 330
{ext}layout(location = 0) in vec4 pos;
layout(location = 1) in vec4 col;
layout(location = 2) in ivec2 li;
out vec4 fc;
void main() {{
    float i = float(gl_InstanceID);
    gl_Position = pos + vec4(0.12 * i, -0.1 * i, 0.0, 0.0);
    fc = col;
    gl_Layer = gl_InstanceID;
    gl_ViewportIndex = (gl_InstanceID * 5 + li.y) % 16;
}}
"""

GS_ROUTE = """#version 330
#extension GL_ARB_viewport_array : require
layout(triangles) in;
layout(triangle_strip, max_vertices = 9) out;
in vec4 vc[];
flat in ivec2 vli[];
out vec4 fc;
void main() {
    for (int k = 0; k < 3; k++) {
        for (int v = 0; v < 3; v++) {
            gl_Position = gl_in[v].gl_Position;
            fc = vc[v] * vec4(1.0 - 0.3 * float(k), 1.0, 1.0 - 0.2 * float(k), 1.0);
            gl_Layer = vli[0].x + k;
            gl_ViewportIndex = (vli[0].y + 5 * k) % 16;
            EmitVertex();
        }
        EndPrimitive();
    }
}
"""

GS_STRIPS = """#version 330
#extension GL_ARB_viewport_array : require
layout(points) in;
layout(triangle_strip, max_vertices = 5) out;
in vec4 vc[];
flat in ivec2 vli[];
out vec4 fc;
const vec2 P[5] = vec2[5](vec2(-0.9, -0.8), vec2(-0.3, -0.9), vec2(-0.6, 0.2),
                          vec2(0.4, -0.2), vec2(0.1, 0.9));
void main() {
    for (int v = 0; v < 5; v++) {
        gl_Position = vec4(P[v] * 0.8 + gl_in[0].gl_Position.xy, gl_in[0].gl_Position.zw);
        fc = vec4(0.1 + 0.2 * float(v), vc[0].g, vc[0].b, 1.0);
        gl_Layer = (vli[0].x + 3 * v) % 5;
        gl_ViewportIndex = (vli[0].y + 7 * v) % 17;
        EmitVertex();
    }
    EndPrimitive();
}
"""

GS_POINTS = """#version 330
#extension GL_ARB_viewport_array : require
layout(points) in;
layout(points, max_vertices = 6) out;
in vec4 vc[];
flat in ivec2 vli[];
out vec4 fc;
void main() {
    for (int s = 0; s < 2; s++) {
        for (int v = 0; v < 3; v++) {
            float t = float(3 * s + v);
            gl_Position = gl_in[0].gl_Position + vec4(0.1 * t - 0.25, 0.07 * t - 0.2, 0.0, 0.0);
            fc = vec4(vc[0].rg, 0.15 * t, 1.0);
            gl_Layer = (vli[0].x + v) % 4;
            gl_ViewportIndex = (vli[0].y + 3 * v + 4 * s) % 16;
            EmitVertex();
        }
        EndPrimitive();
    }
}
"""

GS_LINES = """#version 330
#extension GL_ARB_viewport_array : require
layout(points) in;
layout(line_strip, max_vertices = 4) out;
in vec4 vc[];
flat in ivec2 vli[];
out vec4 fc;
const vec2 P[4] = vec2[4](vec2(-0.8, -0.7), vec2(0.7, -0.3), vec2(-0.5, 0.6), vec2(0.9, 0.8));
void main() {
    for (int v = 0; v < 4; v++) {
        gl_Position = vec4(P[v] * 0.7 + gl_in[0].gl_Position.xy, gl_in[0].gl_Position.zw);
        fc = vec4(vc[0].r, 0.25 * float(v), vc[0].b, 1.0);
        gl_Layer = (vli[0].x + v) % 4;
        gl_ViewportIndex = (vli[0].y + 5 * v) % 16;
        EmitVertex();
    }
    EndPrimitive();
}
"""

FS_LAYER = """#version 330
#extension GL_ARB_fragment_layer_viewport : require
in vec4 fc;
out vec4 o;
void main() { o = vec4(fc.rgb, float(gl_Layer * 16 + gl_ViewportIndex + 1) / 255.0); }
"""

FS_TWO = """#version 330
#extension GL_ARB_fragment_layer_viewport : require
in vec4 fc;
layout(location = 0) out vec4 o0;
layout(location = 1) out vec4 o1;
void main() {
    o0 = vec4(fc.rgb, float(gl_Layer * 16 + gl_ViewportIndex + 1) / 255.0);
    o1 = vec4(fc.bgr, float(gl_Layer + 1) / 8.0);
}
"""

# tessellation (llvmpipe only: GL 4.0; the TGSI below is numpipe's)
VS_TESS = """#version 400
layout(location = 0) in vec4 pos;
layout(location = 1) in vec4 col;
out vec4 vc;
void main() { gl_Position = pos; vc = col; }
"""

TES = """#version 400
#extension GL_ARB_shader_viewport_layer_array : require
layout(triangles, equal_spacing, ccw) in;
in vec4 vc[];
out vec4 fc;
void main() {
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
                + gl_TessCoord.z * gl_in[2].gl_Position;
    fc = gl_TessCoord.x * vc[0] + gl_TessCoord.y * vc[1] + gl_TessCoord.z * vc[2];
    gl_Layer = gl_PrimitiveID;
    gl_ViewportIndex = 3 * gl_PrimitiveID + 1;
}
"""

FS_TESS = """#version 400
#extension GL_ARB_fragment_layer_viewport : require
in vec4 fc;
out vec4 o;
void main() { o = vec4(fc.rgb, float(gl_Layer * 16 + gl_ViewportIndex + 1) / 255.0); }
"""

VS_TESS_TGSI = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""

TES_TGSI = """TESS_EVAL
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING 2
PROPERTY TES_VERTEX_ORDER_CW 0
PROPERTY TES_POINT_MODE 0
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL SV[0], TESSCOORD
DCL SV[1], PRIM_ID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2].x, LAYER
DCL OUT[3].x, VIEWPORT_INDEX
DCL TEMP[0..1], LOCAL
IMM[0] UINT32 {3, 1, 0, 0}
  0: MUL TEMP[0], IN[0][0], SV[0].xxxx
  1: MAD TEMP[0], IN[1][0], SV[0].yyyy, TEMP[0]
  2: MAD OUT[0], IN[2][0], SV[0].zzzz, TEMP[0]
  3: MUL TEMP[1], IN[0][1], SV[0].xxxx
  4: MAD TEMP[1], IN[1][1], SV[0].yyyy, TEMP[1]
  5: MAD OUT[1], IN[2][1], SV[0].zzzz, TEMP[1]
  6: MOV OUT[2].x, SV[1].xxxx
  7: UMAD OUT[3].x, SV[1].xxxx, IMM[0].xxxx, IMM[0].yyyy
  8: END
"""

# (the fragment shader softpipe makes of FS_LAYER, for a GENERIC[0] input)
FS_TESS_TGSI = """FRAG
DCL IN[0].x, LAYER, CONSTANT
DCL IN[1].x, VIEWPORT_INDEX, CONSTANT
DCL IN[2], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] UINT32 {4, 1, 1132396544, 0}
  0: SHL TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
  1: UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  2: UADD TEMP[0].x, TEMP[0].xxxx, IN[1].xxxx
  3: I2F TEMP[0].x, TEMP[0].xxxx
  4: DIV OUT[0].w, TEMP[0].xxxx, IMM[0].zzzz
  5: MOV OUT[0].xyz, IN[2].xyzz
  6: END
"""


@dataclass
class Program:
    vs: str
    fs: str = FS_LAYER
    gs: str | None = None
    tes: str | None = None
    tgsi: dict | None = None  # written TGSI by stage (no softpipe capture)

    def glsl(self, driver: str) -> dict[str, str]:
        out = {"vs": self.vs.format(ext=VS_LAYER_EXT[driver]) if "{ext}" in self.vs else self.vs}
        out["fs"] = self.fs
        if self.gs is not None:
            out["gs"] = self.gs
        if self.tes is not None:
            out["tes"] = self.tes
        return out


PROGRAMS = {
    "route": Program(VS_PASS, gs=GS_ROUTE),
    "route_two": Program(VS_PASS, fs=FS_TWO, gs=GS_ROUTE),
    "strips": Program(VS_PASS, gs=GS_STRIPS),
    "gs_points": Program(VS_PASS, gs=GS_POINTS),
    "gs_lines": Program(VS_PASS, gs=GS_LINES),
    "vs_vertex": Program(VS_VERTEX),
    "vs_instanced": Program(VS_INSTANCED),
    "tes": Program(
        VS_TESS,
        fs=FS_TESS,
        tes=TES,
        tgsi={"vs": VS_TESS_TGSI, "tes": TES_TGSI, "fs": FS_TESS_TGSI},
    ),
}


@dataclass
class Draw:
    program: str
    mode: str  # a tools/glcalls.py MODES name
    vertices: np.ndarray  # (N, 8) float32: position, colour
    li: np.ndarray  # (N, 2) int32: the attribute ``li`` (layer, viewport)
    indices: np.ndarray | None = None  # uint16
    instances: int = 1
    patch_vertices: int = 0
    tess_levels: tuple = (2.0, 2.0, 2.0, 2.0, 2.0, 2.0)  # outer 4, inner 2


@dataclass
class LayerScene:
    name: str
    draws: list[Draw]
    layers: int = 4
    depth: bool = False
    scissor: bool = True
    first: bool = False  # glProvokingVertex(GL_FIRST_VERTEX_CONVENTION)
    samples: int = 1
    point_size: float = 1.0
    line_width: float = 1.0
    depth_clamp: bool = False  # GL_DEPTH_CLAMP (depth_clip off)
    polygon_mode: str = "fill"  # glPolygonMode(GL_FRONT_AND_BACK, ...): fill, line, point
    # the colour target's texture: a 2D array ("array") or a 3D texture ("3d")
    texture: str = "array"
    # a second colour target (FS_TWO): a 2D array of this many layers
    second_layers: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def targets(self) -> int:
        return 2 if self.second_layers else 1


def _v(rows: list) -> np.ndarray:
    return np.array(rows, np.float32).reshape(-1, 8)


def _li(rows: list) -> np.ndarray:
    return np.array(rows, np.int32).reshape(-1, 2)


def _route_triangles(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Triangles for the routing geometry shader: big and small ones, some
    crossing the frustum's sides and near plane, some with w != 1."""
    rng = np.random.default_rng(seed)
    rows, li = [], []
    fixed = [
        [(-0.9, -0.8, 0.2, 1.0), (0.8, -0.6, -0.4, 1.0), (-0.1, 0.9, 0.6, 1.0)],
        [(-1.6, -0.3, 0.0, 1.0), (0.4, -1.5, 0.5, 1.0), (0.6, 1.4, -0.5, 1.0)],
        [(-0.5, -0.5, -1.6, 1.0), (0.9, 0.1, 0.3, 1.0), (-0.2, 0.7, 0.9, 1.0)],
        [(-0.6, -0.7, 0.1, 2.0), (1.4, -0.2, 0.4, 1.5), (0.2, 1.2, -0.3, 1.2)],
    ]
    for t in range(10):
        tri = (
            fixed[t]
            if t < len(fixed)
            else [(*rng.uniform(-1, 1, 2), rng.uniform(-0.9, 0.9), 1.0) for _ in range(3)]
        )
        for p in tri:
            rows.append([*p, *rng.uniform(0.15, 1.0, 3), 1.0])
        li += [[t % 2, (3 * t) % 16]] * 3
    return _v(rows), _li(li)


def _strip_points() -> tuple[np.ndarray, np.ndarray]:
    rows = [
        [0.0, 0.0, 0.1, 1, 0.8, 0.3, 0.2, 1],
        [0.3, 0.2, 0.3, 1, 0.2, 0.9, 0.4, 1],
        [-0.2, -0.1, 0.5, 1, 0.5, 0.5, 0.9, 1],
    ]
    return _v(rows), _li([[0, 1], [2, 6], [1, 11]])


def _vertex_mesh() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shared vertices whose layers and viewports differ within triangles,
    some of them outside the frustum, and out-of-range values."""
    pos = [
        (-0.9, -0.9, 0.1, 1),
        (-0.5, 0.8, 0.2, 1),
        (-0.2, -0.7, 0.4, 1),
        (0.1, 0.9, 0.0, 1),
        (0.4, -1.3, 0.3, 1),
        (0.8, 0.6, -0.2, 1),
        (1.5, -0.2, 0.5, 1),
        (0.9, -0.8, 0.7, 1),
    ]
    rng = np.random.default_rng(7)
    rows = [[*p, *rng.uniform(0.2, 1.0, 3), 1.0] for p in pos]
    li = [[0, 1], [1, 2], [2, 5], [3, 7], [1, 0], [7, 4], [0, 16], [-1, 9]]
    strip = np.array([0, 1, 2, 3, 4, 5, 6, 7], np.uint16)
    return _v(rows), _li(li), strip


def _fan() -> tuple[np.ndarray, np.ndarray]:
    rows = [
        [0.0, 0.0, 0.3, 1, 0.9, 0.9, 0.2, 1],
        [0.9, 0.0, 0.3, 1, 0.2, 0.5, 0.9, 1],
        [0.7, 0.8, 0.3, 1, 0.6, 0.2, 0.7, 1],
        [-0.2, 1.1, 0.3, 1, 0.3, 0.8, 0.4, 1],
        [-0.9, 0.4, 0.3, 1, 0.8, 0.4, 0.6, 1],
        [-0.8, -0.9, 0.3, 1, 0.4, 0.9, 0.9, 1],
    ]
    return _v(rows), _li([[2, 4], [0, 5], [3, 9], [1, 1], [2, 13], [0, 14]])


def _out_of_range() -> tuple[np.ndarray, np.ndarray]:
    rows, li = [], []
    values = [(7, 1), (-1, 20), (2, -3), (4, 100), (3, 15), (-2147483648, 16)]
    for t, (layer, vp) in enumerate(values):
        x = -0.9 + 0.3 * t
        for p in ((x, -0.8), (x + 0.35, -0.5), (x + 0.1, 0.7)):
            rows.append([*p, 0.5, 1, 0.3 + 0.1 * t, 0.9 - 0.1 * t, 0.5, 1])
            li.append([layer, vp])
    return _v(rows), _li(li)


def _points_lines() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    rows = [
        [*rng.uniform(-1.05, 1.05, 2), rng.uniform(-0.5, 0.5), 1.0, *rng.uniform(0.2, 1, 3), 1.0]
        for _ in range(24)
    ]
    li = [[k % 5, (5 * k + 2) % 18] for k in range(24)]
    return _v(rows), _li(li)


def _patches() -> tuple[np.ndarray, np.ndarray]:
    """Three triangle patches; every coordinate and colour a multiple of 1/32
    (the tessellator's domain points are multiples of 2^-16: the evaluation
    shader's products and sums are exact, fused or not)."""
    q = [
        [-29, -29, 6, 32, 32, 0, 0, 32], [29, -26, 6, 32, 0, 32, 0, 32],
        [0, 29, 6, 32, 0, 0, 32, 32], [-22, -16, 13, 32, 32, 32, 0, 32],
        [26, 0, 13, 32, 0, 32, 32, 32], [-19, 26, 13, 32, 32, 0, 32, 32],
        [-13, -26, 19, 32, 16, 16, 32, 32], [10, -19, 19, 32, 32, 16, 16, 32],
        [0, 16, 19, 32, 16, 32, 16, 32],
    ]  # fmt: skip
    return _v(np.array(q, np.float32) / 32), _li([[0, 0]] * 9)


def scenes() -> list[LayerScene]:
    route_v, route_li = _route_triangles(3)
    strip_v, strip_li = _strip_points()
    mesh_v, mesh_li, mesh_strip = _vertex_mesh()
    fan_v, fan_li = _fan()
    oor_v, oor_li = _out_of_range()
    pl_v, pl_li = _points_lines()
    patch_v, patch_li = _patches()
    inst_v, inst_li = route_v[:12], route_li[:12]
    vertex_draws = [
        Draw("vs_vertex", "TRIANGLE_STRIP", mesh_v, mesh_li, mesh_strip),
        Draw("vs_vertex", "TRIANGLE_FAN", fan_v, fan_li),
    ]
    out = [
        LayerScene("gs_route", [Draw("route", "TRIANGLES", route_v, route_li)], depth=True),
        LayerScene("gs_route_first", [Draw("route", "TRIANGLES", route_v, route_li)], first=True),
        LayerScene("gs_strips", [Draw("strips", "POINTS", strip_v, strip_li)]),
        LayerScene("gs_strips_first", [Draw("strips", "POINTS", strip_v, strip_li)], first=True),
        LayerScene(
            "gs_points_lines",
            [
                Draw("gs_points", "POINTS", pl_v[:6], pl_li[:6]),
                Draw("gs_lines", "POINTS", pl_v[6:10], pl_li[6:10]),
            ],
            point_size=3.0,
        ),
        LayerScene(
            "vs_instanced",
            [Draw("vs_instanced", "TRIANGLES", inst_v, inst_li, np.arange(12, dtype=np.uint16), 5)],
            depth=True,
            scissor=False,
        ),
        LayerScene("vs_vertex", vertex_draws),
        LayerScene("vs_vertex_first", vertex_draws, first=True),
        LayerScene("out_of_range", [Draw("vs_vertex", "TRIANGLES", oor_v, oor_li)]),
        LayerScene(
            "vs_points_lines",
            [
                Draw("vs_vertex", "POINTS", pl_v[:12], pl_li[:12]),
                Draw("vs_vertex", "LINE_STRIP", pl_v[12:18], pl_li[12:18]),
                Draw("vs_vertex", "LINES", pl_v[18:24], pl_li[18:24]),
            ],
            point_size=5.0,
            line_width=3.0,
        ),
        LayerScene(
            "vs_lines_first",
            [Draw("vs_vertex", "LINE_LOOP", pl_v[:10], pl_li[:10])],
            first=True,
        ),
        LayerScene(
            "tes_patches",
            [Draw("tes", "PATCHES", patch_v, patch_li, patch_vertices=3)],
            scissor=False,
        ),
        LayerScene(
            "tes_patches_level3",
            [Draw("tes", "PATCHES", patch_v, patch_li, patch_vertices=3, tess_levels=(3.0,) * 6)],
            scissor=False,
        ),
        LayerScene(
            "msaa_route",
            [Draw("route", "TRIANGLES", route_v, route_li)],
            layers=3,
            samples=4,
            # (llvmpipe's multisampled scissor lets samples of the column and
            # row before a scissor's left and top edges through: not followed)
            scissor=False,
        ),
        LayerScene(
            "mixed_targets",
            [Draw("route_two", "TRIANGLES", route_v, route_li + np.array([1, 0], np.int32))],
            second_layers=3,
        ),
        LayerScene("gs_route_3d", [Draw("route", "TRIANGLES", route_v, route_li)], texture="3d"),
        # fragments clamp to their viewport's depth range (near and far unclipped)
        LayerScene(
            "gs_route_depth_clamp",
            # (the triangles crossing the near plane go to viewports of narrow ranges)
            [Draw("route", "TRIANGLES", route_v, route_li + np.array([0, 1], np.int32))],
            depth=True,
            depth_clamp=True,
        ),
        # the draw module's polygon stages: each triangle's edges as lines, its
        # vertices as points, in its viewport, scissor and layer
        LayerScene(
            "gs_route_polygon_lines",
            [Draw("route", "TRIANGLES", route_v, route_li)],
            polygon_mode="line",
        ),
        LayerScene("vs_vertex_polygon_points", vertex_draws, polygon_mode="point", point_size=3.0),
    ]
    return out


def scene_by_name(name: str) -> LayerScene:
    return next(s for s in scenes() if s.name == name)
