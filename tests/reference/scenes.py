"""Reference scenes rendered by Mesa's llvmpipe (tools/make_reference.py) and by numpipe.

Every scene is deterministic (fixed seeds) and fully described here: clip-space
vertices with a colour, the primitive mode, the fixed-function state, and the
same shaders twice, as GLSL for Mesa and as TGSI for numpipe.  Vertices are
given in clip space and the vertex shaders pass them through, so both drivers
start from bit-identical positions; the fill rule, snapping and interpolation
are then theirs.

State is expressed in Gallium terms.  For a GL user FBO (what moderngl
renders to) Mesa's state tracker sets ``bottom_edge_rule = 0`` and inverts
``front_ccw``; moderngl's read-back row 0 is NDC y = -1, exactly numpipe's row
0 (see tools/make_reference.py and README "Checking against Mesa").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

F32 = np.float32

VS_GLSL = """#version 330
in vec4 in_pos;
in vec4 in_color;
{flat}out vec4 v_color;
void main() {{ gl_Position = in_pos; v_color = in_color; }}
"""
FS_GLSL = """#version 330
{flat}in vec4 v_color;
out vec4 f_color;
void main() {{ f_color = v_color; }}
"""
# Points: the point size comes from the vertex (gl_PointSize / PSIZE, with
# GL_PROGRAM_POINT_SIZE: Gallium's point_size_per_vertex).
VS_GLSL_POINTS = """#version 330
in vec4 in_pos;
in vec4 in_color;
in float in_size;
{flat}out vec4 v_color;
void main() {{ gl_Position = in_pos; gl_PointSize = in_size; v_color = in_color; }}
"""
VS_TGSI_POINTS = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2], PSIZE
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IN[2].xxxx
  3: END
"""
VS_TGSI = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
"""
FS_TGSI = """FRAG
DCL IN[0], GENERIC[0], {interp}
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


@dataclass
class RefScene:
    name: str
    width: int
    height: int
    vertices: np.ndarray  # (N, 8) float32: clip x y z w, colour r g b a
    mode: str = "triangles"  # triangles | triangle_strip | triangle_fan
    indices: np.ndarray | None = None
    depth: str | None = None  # None or a compare function name ("less", ...)
    blend: bool = False  # standard alpha blending
    cull_back: bool = False  # GL front face ccw, cull back
    flat: bool = False
    clear_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    clear_depth: float = 1.0
    draws: list[tuple[int, int]] = field(default_factory=list)  # (first, count); empty: all
    sizes: np.ndarray | None = None  # (N,) float32 point sizes (mode "points")
    line_width: float = 1.0
    fs_glsl: str | None = None  # a fragment shader of its own (both forms, or neither)
    fs_tgsi: str | None = None
    gs_glsl: str | None = None  # a geometry shader (GLSL, and Mesa's TGSI of it)
    gs_tgsi: str | None = None

    def draw_list(self) -> list[tuple[int, int]]:
        if self.draws:
            return self.draws
        n = self.indices.size if self.indices is not None else self.vertices.shape[0]
        return [(0, n)]

    def glsl(self) -> tuple[str, str]:
        flat = "flat " if self.flat else ""
        vs = VS_GLSL_POINTS if self.sizes is not None else VS_GLSL
        return vs.format(flat=flat), self.fs_glsl or FS_GLSL.format(flat=flat)

    def tgsi(self) -> tuple[str, str]:
        vs = VS_TGSI_POINTS if self.sizes is not None else VS_TGSI
        fs = self.fs_tgsi or FS_TGSI.format(interp="CONSTANT" if self.flat else "PERSPECTIVE")
        return vs, fs

    def vertex_data(self) -> tuple[np.ndarray, str]:
        """The interleaved vertex buffer (float32) and its moderngl layout."""
        if self.sizes is None:
            return self.vertices.astype(F32), "4f 4f"
        data = np.concatenate([self.vertices, self.sizes[:, None]], axis=1)
        return data.astype(F32), "4f 4f 1f"


def _with_colors(
    pos: np.ndarray, rng: np.random.Generator, alpha: float | None = 1.0
) -> np.ndarray:
    n = pos.shape[0]
    col = rng.random((n, 4), dtype=np.float64).astype(F32)
    if alpha is not None:
        col[:, 3] = alpha
    return np.concatenate([pos.astype(F32), col], axis=1).astype(F32)


def gouraud_fullscreen() -> RefScene:
    pos = np.array([[-1, -1, 0, 1], [3, -1, 0, 1], [-1, 3, 0, 1]], F32)
    col = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]], F32)
    return RefScene("gouraud_fullscreen", 96, 80, np.concatenate([pos, col], axis=1))


def random_triangles(seed: int = 1, count: int = 60, size: int = 128) -> RefScene:
    """Overlapping random triangles, positions on and off the 1/256 grid, no depth."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-1.1, 1.1, (count, 1, 2))
    offs = rng.normal(0, 0.25, (count, 3, 2))
    xy = (centers + offs).reshape(-1, 2)
    # a third snapped to pixel centres, a third to the 1/256 grid, a third arbitrary
    px = (xy * 0.5 + 0.5) * size
    third = count * 3 // 3
    px[: third // 3] = np.floor(px[: third // 3]) + 0.5
    px[third // 3 : 2 * third // 3] = np.round(px[third // 3 : 2 * third // 3] * 256) / 256
    xy = px / size * 2 - 1
    pos = np.concatenate([xy, np.zeros((xy.shape[0], 1)), np.ones((xy.shape[0], 1))], axis=1)
    return RefScene(f"random_triangles_{seed}", size, size, _with_colors(pos, rng))


def depth_overlap(seed: int = 7) -> RefScene:
    """Interpenetrating triangles at varied depths with a LESS depth test."""
    rng = np.random.default_rng(seed)
    count = 40
    centers = rng.uniform(-0.8, 0.8, (count, 1, 3))
    offs = rng.normal(0, 0.45, (count, 3, 3))
    xyz = (centers + offs).reshape(-1, 3)
    xyz[:, 2] = np.clip(xyz[:, 2], -0.99, 0.99)
    pos = np.concatenate([xyz, np.ones((xyz.shape[0], 1))], axis=1)
    return RefScene("depth_overlap", 112, 96, _with_colors(pos, rng), depth="less")


def alpha_blend(seed: int = 3) -> RefScene:
    """Translucent triangles over a coloured background (standard alpha blending)."""
    rng = np.random.default_rng(seed)
    count = 30
    centers = rng.uniform(-0.9, 0.9, (count, 1, 2))
    offs = rng.normal(0, 0.4, (count, 3, 2))
    xy = (centers + offs).reshape(-1, 2)
    pos = np.concatenate([xy, np.zeros((xy.shape[0], 1)), np.ones((xy.shape[0], 1))], axis=1)
    v = _with_colors(pos, rng, alpha=None)
    v[:, 7] = rng.uniform(0.2, 0.8, v.shape[0])
    return RefScene("alpha_blend", 100, 100, v, blend=True, clear_color=(0.2, 0.3, 0.4, 1.0))


def perspective_cube(angle: float = 0.6) -> RefScene:
    """A per-vertex-coloured cube in perspective, depth tested, back faces culled."""
    corners = np.array(
        [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64
    )
    faces = [
        (0, 1, 3, 2),
        (4, 6, 7, 5),
        (0, 4, 5, 1),
        (2, 3, 7, 6),
        (0, 2, 6, 4),
        (1, 5, 7, 3),
    ]
    mvp = cube_mvp(angle, 1.0)
    clip = (np.concatenate([corners, np.ones((8, 1))], axis=1) @ mvp.T).astype(F32)
    rng = np.random.default_rng(11)
    colors = rng.random((8, 4)).astype(F32)
    colors[:, 3] = 1
    tris = []
    for a, b, c, d in faces:
        tris += [(a, b, c), (a, c, d)]
    idx = np.array(tris, np.uint16).reshape(-1)
    verts = np.concatenate([clip, colors], axis=1).astype(F32)
    return RefScene(
        "perspective_cube",
        128,
        128,
        verts,
        indices=idx,
        depth="less",
        cull_back=True,
        clear_color=(0.1, 0.1, 0.12, 1.0),
    )


def near_clip(flat: bool = False) -> RefScene:
    """The cube close enough to the eye that the near plane and all four sides cut it.

    Exercises polygon clipping: new vertices on the near, left, right, top and
    bottom planes, fans around the first clipped vertex and, flat shaded, the
    provoking vertex's colour copied onto that first vertex.
    """
    corners = np.array(
        [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64
    )
    mvp = cube_mvp(0.9, 1.25, distance=1.9)
    clip = (np.concatenate([corners, np.ones((8, 1))], axis=1) @ mvp.T).astype(F32)
    rng = np.random.default_rng(13)
    colors = rng.random((8, 4)).astype(F32)
    colors[:, 3] = 1
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = []
    for a, b, c, d in faces:
        tris += [(a, b, c), (a, c, d)]
    return RefScene(
        "near_clip_flat" if flat else "near_clip",
        120,
        96,
        np.concatenate([clip, colors], axis=1).astype(F32),
        indices=np.array(tris, np.uint16).reshape(-1),
        depth="less",
        flat=flat,
        clear_color=(0.05, 0.05, 0.05, 1.0),
    )


def cube_mvp(angle: float, aspect: float, distance: float = 4.0) -> np.ndarray:
    """Perspective(60 degrees) * translate(0, 0, -distance) * rotate(angle)."""
    c, s = np.cos(angle), np.sin(angle)
    rot_y = np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1]])
    c2, s2 = np.cos(angle * 0.7), np.sin(angle * 0.7)
    rot_x = np.array([[1, 0, 0, 0], [0, c2, -s2, 0], [0, s2, c2, 0], [0, 0, 0, 1]])
    trans = np.eye(4)
    trans[2, 3] = -distance
    f = 1.0 / np.tan(np.radians(60) / 2)
    near, far = 0.5, 20.0
    proj = np.array(
        [
            [f / aspect, 0, 0, 0],
            [0, f, 0, 0],
            [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0, 0, -1, 0],
        ]
    )
    return proj @ trans @ rot_y @ rot_x


def strip_and_fan() -> RefScene:
    """A triangle strip then a triangle fan, flat shaded (provoking vertex last)."""
    rng = np.random.default_rng(5)
    xs = np.linspace(-0.9, 0.9, 8)
    strip = np.array([[x, -0.8 + 0.5 * (i % 2), 0, 1] for i, x in enumerate(xs)], F32)
    ang = np.linspace(0, 2 * np.pi, 9)
    fan = np.array(
        [[0.3, 0.4, 0, 1]] + [[0.3 + 0.45 * np.cos(a), 0.4 + 0.45 * np.sin(a), 0, 1] for a in ang],
        F32,
    )
    pos = np.concatenate([strip, fan])
    return RefScene(
        "strip_and_fan",
        96,
        96,
        _with_colors(pos, rng),
        mode="mixed",
        flat=True,
        draws=[(0, len(strip)), (len(strip), len(fan))],
    )


def points(seed: int = 11, count: int = 90) -> RefScene:
    """Points of sizes 0.3-20 px at random depths, some centres outside the
    clip volume (dropped, however wide), a LESS depth test."""
    rng = np.random.default_rng(seed)
    pos = np.ones((count, 4), F32)
    pos[:, 0:2] = rng.uniform(-1.2, 1.2, (count, 2))
    pos[:, 2] = rng.uniform(-0.9, 0.9, count)
    # a third of the centres on pixel centres, a third on the 1/256 grid
    w, h = 48, 40
    px = (pos[:, 0:2] * 0.5 + 0.5) * (w, h)
    third = count // 3
    px[:third] = np.floor(px[:third]) + 0.5
    px[third : 2 * third] = np.round(px[third : 2 * third] * 256) / 256
    pos[:, 0:2] = px / (w, h) * 2 - 1
    sizes = rng.choice([0.3, 1.0, 1.5, 2.0, 2.5, 3.0, 3.7, 5.0, 8.25, 12.6, 20.0], count)
    return RefScene(
        "points",
        w,
        h,
        _with_colors(pos, rng),
        mode="points",
        depth="less",
        sizes=sizes.astype(F32),
    )


# Round points: gl_PointCoord, discarded outside the inscribed circle.  The
# TGSI is what Mesa 22.3 compiles the GLSL to (SOFTPIPE_DEBUG=fs,use_tgsi).
SPRITE_FS_GLSL = """#version 330
in vec4 v_color;
out vec4 f_color;
void main() {
    vec2 d = gl_PointCoord - vec2(0.5);
    if (dot(d, d) > 0.25) discard;
    f_color = vec4(gl_PointCoord, v_color.b, 1.0);
}
"""
SPRITE_FS_TGSI = """FRAG
DCL IN[0].xy, PCOORD, PERSPECTIVE
DCL IN[1], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] UINT32 {3204448256, 1048576000, 1065353216, 0}
IMM[1] FLT32 {    1.0000,     0.0000,     0.0000,     0.0000}
  0: ADD TEMP[0].xy, IN[0].xyxx, IMM[0].xxxx
  1: DP2 TEMP[0].x, TEMP[0].xyxx, TEMP[0].xyxx
  2: FSLT TEMP[0].x, IMM[0].yyyy, TEMP[0].xxxx
  3: AND TEMP[0].x, TEMP[0].xxxx, IMM[1].xxxx
  4: KILL_IF -TEMP[0].xxxx
  5: MOV OUT[0].xy, IN[0].xyyy
  6: MOV OUT[0].z, IN[1].zyzz
  7: MOV OUT[0].w, IMM[0].zzzz
  8: END
"""


def point_sprites(seed: int = 12, count: int = 70) -> RefScene:
    """Round points from gl_PointCoord (sizes 3.3-17.7 px, arbitrary centres)."""
    rng = np.random.default_rng(seed)
    pos = np.ones((count, 4), F32)
    pos[:, 0:2] = rng.uniform(-1.1, 1.1, (count, 2))
    pos[:, 2] = 0.0
    sizes = rng.choice([3.3, 5.7, 7.3, 9.9, 13.1, 17.7], count)
    return RefScene(
        "point_sprites",
        64,
        48,
        _with_colors(pos, rng),
        mode="points",
        sizes=sizes.astype(F32),
        fs_glsl=SPRITE_FS_GLSL,
        fs_tgsi=SPRITE_FS_TGSI,
    )


def lines(seed: int = 13, count: int = 60) -> RefScene:
    """Random lines in perspective (w 0.5-2), some ends beyond the near or far
    plane or the viewport (clipped), a third of the ends on pixel centres or
    edges (the diamond rule's ties), a LESS depth test."""
    rng = np.random.default_rng(seed)
    w, h = 48, 40
    pos = np.ones((2 * count, 4), F32)
    xy = rng.uniform(-1.3, 1.3, (2 * count, 2))
    px = (xy * 0.5 + 0.5) * (w, h)
    third = 2 * count // 3
    px[:third] = np.round(px[:third] * 2) / 2
    xy = px / (w, h) * 2 - 1
    wv = rng.uniform(0.5, 2.0, 2 * count)
    pos[:, 0:2] = xy * wv[:, None]
    pos[:, 2] = rng.uniform(-1.5, 1.5, 2 * count) * wv
    pos[:, 3] = wv
    return RefScene("lines", w, h, _with_colors(pos, rng), mode="lines", depth="less")


def wide_line_strip(seed: int = 14, count: int = 40) -> RefScene:
    """A flat-shaded line strip 3 pixels wide, ends on the half-pixel grid."""
    rng = np.random.default_rng(seed)
    w, h = 56, 40
    px = np.round(rng.uniform(-4, (w + 4, h + 4), (count, 2)) * 2) / 2
    pos = np.ones((count, 4), F32)
    pos[:, 0:2] = px / (w, h) * 2 - 1
    pos[:, 2] = 0.0
    return RefScene(
        "wide_line_strip",
        w,
        h,
        _with_colors(pos, rng),
        mode="line_strip",
        flat=True,
        line_width=3.0,
    )


# gl_PrimitiveID in the fragment shader (TGSI: Mesa 22.3's, SOFTPIPE_DEBUG=fs).
PRIMID_FS_GLSL = """#version 330
in vec4 v_color;
out vec4 f_color;
void main() { f_color = vec4(float(gl_PrimitiveID % 7) / 6.0, v_color.g, v_color.b, 1.0); }
"""
PRIMID_FS_TGSI = """FRAG
DCL IN[0].x, PRIM_ID, CONSTANT
DCL IN[1], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] UINT32 {7, 1086324736, 1065353216, 0}
  0: UMOD TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
  1: I2F TEMP[0].x, TEMP[0].xxxx
  2: DIV OUT[0].x, TEMP[0].xxxx, IMM[0].yyyy
  3: MOV OUT[0].yz, IN[1].yyzz
  4: MOV OUT[0].w, IMM[0].zzzz
  5: END
"""


def primitive_id(seed: int = 15) -> RefScene:
    """Random triangles and a fan coloured by gl_PrimitiveID (adjacent
    triangles of different primitives are never one rectangle)."""
    base = random_triangles(seed, count=50, size=96)
    fan = np.array(
        [[0.0, 0.0, 0, 1]] + [[np.cos(a), np.sin(a), 0, 1] for a in np.linspace(0, 6.3, 12)],
        F32,
    )
    rng = np.random.default_rng(seed)
    verts = np.concatenate([base.vertices, _with_colors(fan, rng)])
    n = base.vertices.shape[0]
    return RefScene(
        "primitive_id",
        96,
        96,
        verts,
        mode="mixed_fan",
        draws=[(0, n), (n, fan.shape[0])],
        fs_glsl=PRIMID_FS_GLSL,
        fs_tgsi=PRIMID_FS_TGSI,
    )


# Geometry shaders: GLSL, and the TGSI Mesa 22.3 compiles it to
# (SOFTPIPE_DEBUG=gs,use_tgsi).  The fragment shader reads the GS's g_color.
GS_FS_GLSL = """#version 330
in vec4 g_color;
out vec4 f_color;
void main() { f_color = g_color; }
"""
# Each triangle shrunk towards its centre; even primitives also a shifted copy
# with the colours' channels reversed (ENDPRIM, a conditional second strip).
GS_TRIANGLES_GLSL = """#version 330
layout(triangles) in; layout(triangle_strip, max_vertices = 6) out;
in vec4 v_color[]; out vec4 g_color;
void main() {
  vec4 c = (gl_in[0].gl_Position + gl_in[1].gl_Position + gl_in[2].gl_Position) / 3.0;
  for (int i = 0; i < 3; i++) {
    gl_Position = mix(gl_in[i].gl_Position, c, 0.3);
    g_color = v_color[i];
    EmitVertex();
  }
  EndPrimitive();
  if (gl_PrimitiveIDIn % 2 == 0) {
    for (int i = 0; i < 3; i++) {
      gl_Position = gl_in[i].gl_Position + vec4(0.05, 0.02, 0.0, 0.0);
      g_color = vec4(v_color[i].bgr, 1.0);
      EmitVertex();
    }
    EndPrimitive();
  }
}
"""
GS_TRIANGLES_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 6
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL IN[][2], PRIM_ID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0..1]
IMM[0] UINT32 {1077936128, 1050253722, 0, 1}
IMM[1] UINT32 {1028443341, 1017370378, 0, 1065353216}
  0: ADD TEMP[0], IN[0][0], IN[1][0]
  1: ADD TEMP[0], TEMP[0], IN[2][0]
  2: DIV TEMP[0], TEMP[0], IMM[0].xxxx
  3: LRP TEMP[1], IMM[0].yyyy, TEMP[0], IN[0][0]
  4: MOV OUT[0], TEMP[1]
  5: MOV OUT[1], IN[0][1]
  6: EMIT IMM[0].zzzz
  7: LRP TEMP[1], IMM[0].yyyy, TEMP[0], IN[1][0]
  8: MOV OUT[0], TEMP[1]
  9: MOV OUT[1], IN[1][1]
 10: EMIT IMM[0].zzzz
 11: LRP TEMP[0], IMM[0].yyyy, TEMP[0], IN[2][0]
 12: MOV OUT[0], TEMP[0]
 13: MOV OUT[1], IN[2][1]
 14: EMIT IMM[0].zzzz
 15: ENDPRIM IMM[0].zzzz
 16: AND TEMP[0].x, IN[2].xxxx, IMM[0].wwww
 17: USEQ TEMP[0].x, TEMP[0].xxxx, IMM[0].zzzz
 18: UIF TEMP[0].xxxx :38
 19:   ADD TEMP[0], IN[0][0], IMM[1].xyzz
 20:   MOV OUT[0], TEMP[0]
 21:   MOV TEMP[0].xyz, IN[0][1].zyxw
 22:   MOV TEMP[0].w, IMM[1].wwww
 23:   MOV OUT[1], TEMP[0]
 24:   EMIT IMM[0].zzzz
 25:   ADD TEMP[0], IN[1][0], IMM[1].xyzz
 26:   MOV OUT[0], TEMP[0]
 27:   MOV TEMP[0].xyz, IN[1][1].zyxw
 28:   MOV TEMP[0].w, IMM[1].wwww
 29:   MOV OUT[1], TEMP[0]
 30:   EMIT IMM[0].zzzz
 31:   ADD TEMP[0], IN[2][0], IMM[1].xyzz
 32:   MOV OUT[0], TEMP[0]
 33:   MOV TEMP[0].xyz, IN[2][1].zyxw
 34:   MOV TEMP[0].w, IMM[1].wwww
 35:   MOV OUT[1], TEMP[0]
 36:   EMIT IMM[0].zzzz
 37:   ENDPRIM IMM[0].zzzz
 38: ENDIF
 39: END
"""
# Points to quads (a four-vertex strip) sized by the primitive id.
GS_QUADS_GLSL = """#version 330
layout(points) in; layout(triangle_strip, max_vertices = 4) out;
in vec4 v_color[]; out vec4 g_color;
void main() {
  vec4 p = gl_in[0].gl_Position; float s = 0.05 + 0.01 * float(gl_PrimitiveIDIn % 5);
  gl_Position = p + vec4(-s, -s, 0, 0); g_color = v_color[0]; EmitVertex();
  gl_Position = p + vec4( s, -s, 0, 0); g_color = v_color[0].gbra; EmitVertex();
  gl_Position = p + vec4(-s,  s, 0, 0); g_color = v_color[0].brga; EmitVertex();
  gl_Position = p + vec4( s,  s, 0, 0); g_color = vec4(1.0); EmitVertex();
}
"""
GS_QUADS_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE POINTS
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 4
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL IN[][2], PRIM_ID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0..2]
IMM[0] UINT32 {5, 1008981770, 1028443341, 0}
IMM[1] UINT32 {1065353216, 0, 0, 0}
  0: UMOD TEMP[0].x, IN[2].xxxx, IMM[0].xxxx
  1: I2F TEMP[0].x, TEMP[0].xxxx
  2: MAD TEMP[0].x, IMM[0].yyyy, TEMP[0].xxxx, IMM[0].zzzz
  3: MOV TEMP[1].x, -TEMP[0].xxxx
  4: MOV TEMP[2].x, TEMP[1].xxxx
  5: MOV TEMP[2].y, IMM[0].wwww
  6: ADD TEMP[2], IN[0][0], TEMP[2].xxyy
  7: MOV OUT[0], TEMP[2]
  8: MOV OUT[1], IN[0][1]
  9: EMIT IMM[0].wwww
 10: MOV TEMP[2].x, TEMP[0].xxxx
 11: MOV TEMP[2].y, TEMP[1].xxxx
 12: MOV TEMP[2].z, IMM[0].wwww
 13: ADD TEMP[2], IN[0][0], TEMP[2].xyzz
 14: MOV OUT[0], TEMP[2]
 15: MOV TEMP[2], IN[0][1].yzxw
 16: MOV OUT[1], TEMP[2]
 17: EMIT IMM[0].wwww
 18: MOV TEMP[1].x, TEMP[1].xxxx
 19: MOV TEMP[1].y, TEMP[0].xxxx
 20: MOV TEMP[1].z, IMM[0].wwww
 21: ADD TEMP[1], IN[0][0], TEMP[1].xyzz
 22: MOV OUT[0], TEMP[1]
 23: MOV TEMP[1], IN[0][1].zxyw
 24: MOV OUT[1], TEMP[1]
 25: EMIT IMM[0].wwww
 26: MOV TEMP[0].x, TEMP[0].xxxx
 27: MOV TEMP[0].y, IMM[0].wwww
 28: ADD TEMP[0], IN[0][0], TEMP[0].xxyy
 29: MOV OUT[0], TEMP[0]
 30: MOV OUT[1], IMM[1].xxxx
 31: EMIT IMM[0].wwww
 32: END
"""
# A triangle's outline as a line strip.
GS_OUTLINE_GLSL = """#version 330
layout(triangles) in; layout(line_strip, max_vertices = 4) out;
in vec4 v_color[]; out vec4 g_color;
void main() {
  for (int i = 0; i < 4; i++) {
    gl_Position = gl_in[i % 3].gl_Position;
    g_color = v_color[i % 3];
    EmitVertex();
  }
}
"""
GS_OUTLINE_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE LINE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 4
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
IMM[0] UINT32 {0, 0, 0, 0}
  0: MOV OUT[0], IN[0][0]
  1: MOV OUT[1], IN[0][1]
  2: EMIT IMM[0].xxxx
  3: MOV OUT[0], IN[1][0]
  4: MOV OUT[1], IN[1][1]
  5: EMIT IMM[0].xxxx
  6: MOV OUT[0], IN[2][0]
  7: MOV OUT[1], IN[2][1]
  8: EMIT IMM[0].xxxx
  9: MOV OUT[0], IN[0][0]
 10: MOV OUT[1], IN[0][1]
 11: EMIT IMM[0].xxxx
 12: END
"""


def gs_scene(name: str, gs: tuple[str, str], mode: str, seed: int) -> RefScene:
    """Random triangles (or points) through a geometry shader, 64x48."""
    rng = np.random.default_rng(seed)
    if mode in ("line_strip_adjacency", "triangles_adjacency", "triangle_strip_adjacency"):
        c = rng.uniform(-1, 1, (60, 2))
        pos = np.zeros((60, 4), F32)
        pos[:, :2] = c + rng.normal(0, 0.2, (60, 2))
        pos[:, 3] = 1.0
    elif mode == "points":
        pos = np.ones((60, 4), F32)
        pos[:, :3] = rng.uniform(-1.1, 1.1, (60, 3))
        pos[:, 2] = 0.0
    else:
        c = rng.uniform(-1, 1, (30, 1, 2))
        o = rng.normal(0, 0.3, (30, 3, 2))
        xy = (c + o).reshape(-1, 2)
        pos = np.zeros((xy.shape[0], 4), F32)
        pos[:, :2] = xy
        pos[:, 3] = 1.0
    return RefScene(
        name, 64, 48, _with_colors(pos, rng), mode=mode,
        fs_glsl=GS_FS_GLSL, gs_glsl=gs[0], gs_tgsi=gs[1],
    )  # fmt: skip


# Adjacency: a line strip with adjacency reversed through a geometry shader
# (all four vertices of each primitive), and triangles with adjacency as the
# triangle and, shrunk, the triangle of their adjacent vertices.
GS_LINES_ADJ_GLSL = """#version 330
layout(lines_adjacency) in; layout(line_strip, max_vertices = 4) out;
in vec4 v_color[]; out vec4 g_color;
void main() {
  for (int i = 0; i < 4; i++) {
    gl_Position = gl_in[i].gl_Position;
    g_color = v_color[3 - i];
    EmitVertex();
  }
}
"""
GS_LINES_ADJ_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE LINES_ADJACENCY
PROPERTY GS_OUTPUT_PRIMITIVE LINE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 4
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
IMM[0] UINT32 {0, 0, 0, 0}
  0: MOV OUT[0], IN[0][0]
  1: MOV OUT[1], IN[3][1]
  2: EMIT IMM[0].xxxx
  3: MOV OUT[0], IN[1][0]
  4: MOV OUT[1], IN[2][1]
  5: EMIT IMM[0].xxxx
  6: MOV OUT[0], IN[2][0]
  7: MOV OUT[1], IN[1][1]
  8: EMIT IMM[0].xxxx
  9: MOV OUT[0], IN[3][0]
 10: MOV OUT[1], IN[0][1]
 11: EMIT IMM[0].xxxx
 12: END
"""
GS_TRIANGLES_ADJ_GLSL = """#version 330
layout(triangles_adjacency) in; layout(triangle_strip, max_vertices = 6) out;
in vec4 v_color[]; out vec4 g_color;
void main() {
  for (int i = 0; i < 6; i += 2) {
    gl_Position = gl_in[i].gl_Position;
    g_color = v_color[i];
    EmitVertex();
  }
  EndPrimitive();
  for (int i = 1; i < 6; i += 2) {
    gl_Position = gl_in[i].gl_Position * vec4(0.5, 0.5, 1.0, 1.0);
    g_color = v_color[i].gbra;
    EmitVertex();
  }
}
"""
GS_TRIANGLES_ADJ_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES_ADJACENCY
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 6
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0]
IMM[0] UINT32 {0, 1056964608, 1065353216, 0}
  0: MOV OUT[0], IN[0][0]
  1: MOV OUT[1], IN[0][1]
  2: EMIT IMM[0].xxxx
  3: MOV OUT[0], IN[2][0]
  4: MOV OUT[1], IN[2][1]
  5: EMIT IMM[0].xxxx
  6: MOV OUT[0], IN[4][0]
  7: MOV OUT[1], IN[4][1]
  8: EMIT IMM[0].xxxx
  9: ENDPRIM IMM[0].xxxx
 10: MUL TEMP[0], IN[1][0], IMM[0].yyzz
 11: MOV OUT[0], TEMP[0]
 12: MOV TEMP[0], IN[1][1].yzxw
 13: MOV OUT[1], TEMP[0]
 14: EMIT IMM[0].xxxx
 15: MUL TEMP[0], IN[3][0], IMM[0].yyzz
 16: MOV OUT[0], TEMP[0]
 17: MOV TEMP[0], IN[3][1].yzxw
 18: MOV OUT[1], TEMP[0]
 19: EMIT IMM[0].xxxx
 20: MUL TEMP[0], IN[5][0], IMM[0].yyzz
 21: MOV OUT[0], TEMP[0]
 22: MOV TEMP[0], IN[5][1].yzxw
 23: MOV OUT[1], TEMP[0]
 24: EMIT IMM[0].xxxx
 25: END
"""


def adjacency_without_gs(seed: int = 26) -> RefScene:
    """Adjacency draws with no geometry shader: the lines and triangles alone
    (LINES_ADJACENCY's middle pair, TRIANGLES_ADJACENCY's vertices 0, 2, 4)."""
    rng = np.random.default_rng(seed)
    pos = np.zeros((96, 4), F32)
    pos[:, :2] = rng.uniform(-1.1, 1.1, (96, 2))
    pos[:, 3] = 1.0
    return RefScene(
        "adjacency_without_gs", 64, 48, _with_colors(pos, rng), mode="mixed_adjacency",
        draws=[(0, 48), (48, 48)],
    )  # fmt: skip


# Each of a triangle-with-adjacency's six input slots in its own colour, so
# that the order of the slots (not only the triangles) shows in the image.
GS_ADJ_SLOTS_GLSL = """#version 330
layout(triangles_adjacency) in; layout(triangle_strip, max_vertices = 6) out;
in vec4 v_color[]; out vec4 g_color;
const vec3 slot[6] = vec3[6](vec3(1, 0, 0), vec3(1, 1, 0), vec3(0, 1, 0),
                             vec3(0, 1, 1), vec3(0, 0, 1), vec3(1, 0, 1));
void main() {
  for (int i = 0; i < 6; i += 2) {
    gl_Position = gl_in[i].gl_Position;
    g_color = vec4(slot[i], v_color[i].a);
    EmitVertex();
  }
  EndPrimitive();
  for (int i = 1; i < 6; i += 2) {
    gl_Position = gl_in[i].gl_Position * vec4(0.5, 0.5, 1.0, 1.0);
    g_color = vec4(slot[i], v_color[i].a);
    EmitVertex();
  }
}
"""
GS_ADJ_SLOTS_TGSI = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES_ADJACENCY
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 6
PROPERTY GS_INVOCATIONS 1
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 0.0, 0.5, 0.0}
IMM[1] UINT32 {0, 0, 0, 0}
"""


def _adj_slots_body() -> str:
    """GS_ADJ_SLOTS_GLSL's body in TGSI: slots 0, 2, 4 as a triangle, then 1,
    3, 5 (halved) as another, each vertex in its slot's colour."""
    colour = {0: "xyyy", 1: "xxyy", 2: "yxyy", 3: "yxxx", 4: "yyxx", 5: "xyxx"}
    lines = []
    for k, i in enumerate((0, 2, 4, 1, 3, 5)):
        if k == 3:
            lines.append("ENDPRIM IMM[1].xxxx")
        if i % 2:
            lines += [f"MUL TEMP[0], IN[{i}][0], IMM[0].zzxx", "MOV OUT[0], TEMP[0]"]
        else:
            lines.append(f"MOV OUT[0], IN[{i}][0]")
        lines += [
            f"MOV OUT[1].xyz, IMM[0].{colour[i]}",
            f"MOV OUT[1].w, IN[{i}][1].wwww",
            "EMIT IMM[1].xxxx",
        ]
    lines.append("END")
    return "".join(f"{k:3}: {line}\n" for k, line in enumerate(lines))


GS_ADJ_SLOTS_TGSI += _adj_slots_body()


def strip_adjacency_without_gs(seed: int = 28) -> RefScene:
    """A TRIANGLE_STRIP_ADJACENCY draw with no geometry shader: the strip's
    triangles (vertices 2i, 2i+2, 2i+4), in the draw module's order and
    winding (back faces culled: a wrong winding drops the wrong ones)."""
    rng = np.random.default_rng(seed)
    pos = np.zeros((40, 4), F32)
    t = np.arange(40)
    pos[:, 0] = -1.0 + t * 0.05 + rng.normal(0, 0.03, 40)
    pos[:, 1] = np.where(t % 4 < 2, 0.5, -0.5) + rng.normal(0, 0.2, 40)
    pos[:, 3] = 1.0
    return RefScene(
        "strip_adjacency_without_gs", 64, 48, _with_colors(pos, rng),
        mode="triangle_strip_adjacency", cull_back=True,
    )  # fmt: skip


def all_scenes() -> list[RefScene]:
    return [
        gouraud_fullscreen(),
        random_triangles(1),
        random_triangles(2, count=200, size=160),
        depth_overlap(),
        alpha_blend(),
        perspective_cube(),
        strip_and_fan(),
        near_clip(),
        near_clip(flat=True),
        points(),
        point_sprites(),
        lines(),
        wide_line_strip(),
        primitive_id(),
        gs_scene("gs_triangles", (GS_TRIANGLES_GLSL, GS_TRIANGLES_TGSI), "triangle_strip", 21),
        gs_scene("gs_quads", (GS_QUADS_GLSL, GS_QUADS_TGSI), "points", 22),
        gs_scene("gs_outline", (GS_OUTLINE_GLSL, GS_OUTLINE_TGSI), "triangles", 23),
        gs_scene(
            "gs_lines_adjacency", (GS_LINES_ADJ_GLSL, GS_LINES_ADJ_TGSI), "line_strip_adjacency", 24
        ),
        gs_scene(
            "gs_triangles_adjacency",
            (GS_TRIANGLES_ADJ_GLSL, GS_TRIANGLES_ADJ_TGSI),
            "triangles_adjacency",
            25,
        ),
        adjacency_without_gs(),
        gs_scene(
            "gs_triangle_strip_adjacency",
            (GS_ADJ_SLOTS_GLSL, GS_ADJ_SLOTS_TGSI),
            "triangle_strip_adjacency",
            27,
        ),
        strip_adjacency_without_gs(),
    ]


def scene_by_name(name: str) -> RefScene:
    for s in all_scenes():
        if s.name == name:
            return s
    raise KeyError(name)


def draw_mode(scene: RefScene, draw_index: int) -> str:
    if scene.mode == "mixed":
        return ("triangle_strip", "triangle_fan")[draw_index]
    if scene.mode == "mixed_fan":
        return ("triangles", "triangle_fan")[draw_index]
    if scene.mode == "mixed_adjacency":
        return ("lines_adjacency", "triangles_adjacency")[draw_index]
    return scene.mode
