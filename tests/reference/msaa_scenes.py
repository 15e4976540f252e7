"""Multisampled reference scenes rendered by Mesa's llvmpipe (tools/make_msaa_reference.py).

Each scene draws triangles (x, y, z in NDC, a colour per vertex)
into a 4-sample RGBA8 framebuffer (with a 4-sample depth/stencil buffer
when ``depth``), then resolves it with ``glBlitFramebuffer`` into a
single-sample texture, which the generator stores as
``tests/reference/msaa/<name>.npy`` (row 0 = NDC y -1 in both APIs).  The
fragment shader is given twice, as GLSL for Mesa and as TGSI for numpipe;
the tests draw the same triangles through numpipe's Gallium API and resolve
with ``pipe_context::blit``.

Colours are flat (``flat`` GLSL inputs, CONSTANT TGSI ones) wherever the
shader's result feeds a per-sample decision (alpha-to-coverage, the sample
id), so the comparison does not depend on where an input is interpolated;
the ``centroid`` scene gives every vertex its own colour, interpolated at
the centroid (slivers: where a pixel's centre lies outside the triangle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "msaa"

VS_GLSL = """#version 330
in vec3 in_pos;
in vec4 in_color;
{flat}out vec4 v_color;
void main() {{ gl_Position = vec4(in_pos, 1.0); v_color = in_color; }}
"""

FS_GLSL = {
    "color": "#version 330\nin vec4 v_color;\nout vec4 o;\nvoid main() { o = v_color; }\n",
    "flat": "#version 330\nflat in vec4 v_color;\nout vec4 o;\nvoid main() { o = v_color; }\n",
    "centroid": (
        "#version 330\ncentroid in vec4 v_color;\nout vec4 o;\nvoid main() { o = v_color; }\n"
    ),
    "sample_id": (
        "#version 400\nflat in vec4 v_color;\nout vec4 o;\n"
        "void main() { o = vec4(v_color.rgb * (float(gl_SampleID) + 1.0) * 0.25, 1.0); }\n"
    ),
    "sample_mask_in": (
        "#version 400\nflat in vec4 v_color;\nout vec4 o;\n"
        "void main() { o = vec4(v_color.rgb, float(bitCount(gl_SampleMaskIn[0])) * 0.25); }\n"
    ),
    "sample_mask_out": (
        "#version 400\nflat in vec4 v_color;\nout vec4 o;\n"
        "void main() { o = v_color; gl_SampleMask[0] = int(v_color.a * 15.0); }\n"
    ),
}

FS_TGSI = {
    "color": """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
""",
    "flat": """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
""",
    "centroid": """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE, CENTROID
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
""",
    "sample_id": """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL SV[0], SAMPLEID
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {1.0, 0.25, 0.0, 0.0}
  0: U2F TEMP[0].x, SV[0].xxxx
  1: ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  2: MUL TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  3: MUL OUT[0].xyz, IN[0].xyzz, TEMP[0].xxxx
  4: MOV OUT[0].w, IMM[0].xxxx
  5: END
""",
    "sample_mask_in": """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL SV[0], SAMPLEMASK
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 {0.25, 0.0, 0.0, 0.0}
  0: POPC TEMP[0].x, SV[0].xxxx
  1: U2F TEMP[0].x, TEMP[0].xxxx
  2: MUL OUT[0].w, TEMP[0].xxxx, IMM[0].xxxx
  3: MOV OUT[0].xyz, IN[0].xyzz
  4: END
""",
    "sample_mask_out": """FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL OUT[1], SAMPLEMASK
DCL TEMP[0]
IMM[0] FLT32 {15.0, 0.0, 0.0, 0.0}
  0: MOV OUT[0], IN[0]
  1: MUL TEMP[0].x, IN[0].wwww, IMM[0].xxxx
  2: F2I OUT[1].x, TEMP[0].xxxx
  3: END
""",
}


@dataclass
class MsaaScene:
    name: str
    width: int
    height: int
    shader: str = "color"  # key of FS_GLSL / FS_TGSI
    depth: bool = False  # a 4-sample depth buffer, test LESS (z from the triangle's index)
    alpha_to_coverage: bool = False
    alpha_to_one: bool = False
    sample_mask: int | None = None  # glSampleMaski / set_sample_mask
    samples: int = 4
    seed: int = 0
    vertex_colours: bool = False  # a colour per vertex (else per triangle)
    extra: dict = field(default_factory=dict)

    @property
    def flat(self) -> bool:
        return self.shader not in ("color", "centroid")

    @property
    def qualifier(self) -> str:
        """The GLSL vertex shader output's qualifier."""
        return "flat " if self.flat else "centroid " if self.shader == "centroid" else ""

    def triangles(self) -> np.ndarray:
        """(n, 3, 7): per vertex x, y, z (NDC) and RGBA: a fan of slivers
        sharing edges, a strip of thin triangles, random triangles."""
        rng = np.random.default_rng(self.seed)
        out = []

        def colour(alpha=None):  # type: ignore[no-untyped-def]
            c = rng.uniform(0.1, 1.0, 4)
            c[3] = rng.uniform(0.0, 1.0) if alpha is None else alpha
            return c

        centre = rng.uniform(-0.2, 0.2, 2)
        n = 28
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        for i in range(n):
            a, b = angles[i], angles[(i + 1) % n]
            col = colour(
                None if self.alpha_to_coverage or self.shader == "sample_mask_out" else 1.0
            )
            pts = [
                centre,
                0.95 * np.array([np.cos(a), np.sin(a)]),
                0.95 * np.array([np.cos(b), np.sin(b)]),
            ]
            out.append([[*p, 0.0, *col] for p in pts])
        for i in range(16):  # slivers in a strip: shared edges, one pixel or less wide
            x = -0.9 + 0.11 * i
            col = colour(1.0 if not self.alpha_to_coverage else None)
            out.append([[x, -0.9, 0, *col], [x + 0.013, 0.9, 0, *col], [x + 0.02, -0.85, 0, *col]])
        for _ in range(12):
            p = rng.uniform(-1.0, 1.0, (3, 2))
            col = colour(1.0 if not self.alpha_to_coverage else None)
            out.append([[*q, 0.0, *col] for q in p])
        tris = np.array(out, np.float32)
        if self.vertex_colours:
            tris[:, :, 3:6] = rng.uniform(0.0, 1.0, (len(tris), 3, 3))
        if self.depth:
            # a depth per triangle, reversed draw order for some
            z = rng.uniform(-0.9, 0.9, len(tris)).astype(np.float32)
            tris[:, :, 2] = z[:, None] + rng.uniform(-0.05, 0.05, (len(tris), 3))
        return tris


def scenes() -> list[MsaaScene]:
    return [
        MsaaScene("slivers", 96, 80, seed=1),
        MsaaScene("slivers_flat", 80, 64, shader="flat", seed=2),
        MsaaScene("depth", 96, 80, depth=True, seed=3),
        MsaaScene("sample_shading", 80, 64, shader="sample_id", seed=4),
        MsaaScene("alpha_to_coverage", 80, 64, shader="flat", alpha_to_coverage=True, seed=5),
        MsaaScene(
            "alpha_to_one", 64, 64, shader="flat", alpha_to_coverage=True, alpha_to_one=True, seed=6
        ),
        MsaaScene("sample_mask", 64, 64, shader="flat", sample_mask=0b1010, seed=7),
        MsaaScene("sample_mask_in", 64, 64, shader="sample_mask_in", seed=8),
        MsaaScene("sample_mask_out", 64, 64, shader="sample_mask_out", seed=9),
        MsaaScene("centroid", 96, 80, shader="centroid", vertex_colours=True, seed=10),
    ]


def scene_by_name(name: str) -> MsaaScene:
    return next(s for s in scenes() if s.name == name)


def load(name: str) -> np.ndarray:
    return np.load(DATA / f"{name}.npy")
