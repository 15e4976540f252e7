"""Tessellation scenes: the same program as GLSL (for Mesa) and as TGSI (for numpipe).

Each :class:`Case` draws two patches through a pass-through vertex shader, a
tessellation control shader that writes the levels ``outer + PRIMID * outer_step``
(and ``inner`` likewise) and a tessellation evaluation shader that places each
domain point inside its patch and outputs its TESSCOORD and PRIMID.
``tools/make_tess_reference.py`` runs the GLSL on llvmpipe (Mesa 22.3 has no
tessellation on softpipe, so there is no Mesa-made TGSI of these stages: the TGSI
here is written in the form Mesa's glsl_to_tgsi gives such programs), capturing
the evaluation shader's outputs with transform feedback -- every domain point of
every primitive, in llvmpipe's order, bit for bit -- with the count of primitives
generated and the 64x64 image (``<name>.json``, ``<name>.png``, row 0 = NDC
y -1).  ``tests/test_tessellation.py`` runs the TGSI on numpipe and compares.

Exactness: control points are multiples of 1/32 in [-1, 1] and domain points
multiples of 2^-16, so the evaluation shader's products and sums are exact
whatever instructions (fused or not) a compiler picks; levels are short binary
fractions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH = HEIGHT = 64
TRIANGLES, QUADS, ISOLINES = "triangles", "quads", "isolines"
EQUAL, ODD, EVEN = "equal_spacing", "fractional_odd_spacing", "fractional_even_spacing"
_PRIM_MODE = {TRIANGLES: 4, QUADS: 7, ISOLINES: 1}
_SPACING = {ODD: 0, EVEN: 1, EQUAL: 2}


@dataclass(frozen=True)
class Case:
    name: str
    domain: str
    spacing: str
    outer: tuple[float, float, float, float]
    inner: tuple[float, float] = (1.0, 1.0)
    outer_step: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    inner_step: tuple[float, float] = (0.0, 0.0)
    cw: bool = False
    point_mode: bool = False
    control: bool = True  # a control shader (else: the default levels)
    patch_sum: bool = False  # a per-patch output summed after a barrier

    @property
    def vertices_per_patch(self) -> int:
        return 3 if self.domain == TRIANGLES else 4

    def control_points(self) -> np.ndarray:
        """Two patches' control points (clip space, multiples of 1/32)."""
        if self.domain == TRIANGLES:
            pts = [(-30, -28), (-2, -30), (-16, 26), (2, -24), (30, -26), (28, 30)]
        else:
            pts = [(-30, -30), (-4, -28), (-6, 24), (-28, 26)]
            pts += [(2, -30), (30, -30), (28, 28), (4, 30)]
        out = np.zeros((len(pts), 4), np.float32)
        out[:, :2] = np.array(pts, np.float32) / 32
        out[:, 3] = 1
        return out

    def output(self) -> str:
        if self.point_mode:
            return "points"
        return "lines" if self.domain == ISOLINES else "triangles"

    # -- GLSL (Mesa) -----------------------------------------------------------------

    def glsl(self) -> dict[str, str]:
        vs = """#version 410 core
layout(location = 0) in vec4 in_pos;
void main() { gl_Position = in_pos; }
"""
        n = self.vertices_per_patch
        patch_decl = "patch out vec4 p_sum;\n" if self.patch_sum else ""
        patch_code = (
            "    barrier();\n    if (gl_InvocationID == 0)\n"
            "        p_sum = gl_out[0].gl_Position + gl_out[1].gl_Position"
            " + gl_out[2].gl_Position;\n"
            if self.patch_sum
            else ""
        )
        tcs = f"""#version 410 core
layout(vertices = {n}) out;
uniform vec4 u_outer;
uniform vec2 u_inner;
uniform vec4 u_outer_step;
uniform vec2 u_inner_step;
{patch_decl}void main() {{
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    float p = float(gl_PrimitiveID);
    vec4 o = u_outer + p * u_outer_step;
    vec2 i = u_inner + p * u_inner_step;
    gl_TessLevelOuter[0] = o.x;
    gl_TessLevelOuter[1] = o.y;
    gl_TessLevelOuter[2] = o.z;
    gl_TessLevelOuter[3] = o.w;
    gl_TessLevelInner[0] = i.x;
    gl_TessLevelInner[1] = i.y;
{patch_code}}}
"""
        layout = [self.domain, self.spacing, "cw" if self.cw else "ccw"]
        if self.point_mode:
            layout.append("point_mode")
        if self.domain == TRIANGLES:
            place = (
                "gl_in[0].gl_Position * gl_TessCoord.x + gl_in[1].gl_Position * gl_TessCoord.y"
                " + gl_in[2].gl_Position * gl_TessCoord.z"
            )
        else:
            place = (
                "gl_in[0].gl_Position + (gl_in[1].gl_Position - gl_in[0].gl_Position)"
                " * gl_TessCoord.x + (gl_in[3].gl_Position - gl_in[0].gl_Position)"
                " * gl_TessCoord.y"
            )
        tes = f"""#version 410 core
layout({", ".join(layout)}) in;
{"patch in vec4 p_sum;" if self.patch_sum else ""}
out vec4 v_tc;
{"out vec4 v_sum;" if self.patch_sum else ""}
void main() {{
    gl_Position = {place};
    v_tc = vec4(gl_TessCoord, float(gl_PrimitiveID));
    {"v_sum = p_sum;" if self.patch_sum else ""}
}}
"""
        fs = """#version 410 core
in vec4 v_tc;
out vec4 color;
void main() { color = vec4(v_tc.xyz, 1.0); }
"""
        out = {"vs": vs, "tes": tes, "fs": fs}
        if self.control:
            out["tcs"] = tcs
        return out

    def varyings(self) -> list[str]:
        return ["v_tc", "gl_Position"] + (["v_sum"] if self.patch_sum else [])

    # -- TGSI (numpipe) --------------------------------------------------------------

    def tgsi(self) -> dict[str, str]:
        n = self.vertices_per_patch
        vs = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n"
        tcs = [
            "TESS_CTRL",
            f"PROPERTY TCS_VERTICES_OUT {n}",
            "DCL IN[][0], POSITION",
            "DCL OUT[][0], POSITION",
            "DCL OUT[1], TESSOUTER",
            "DCL OUT[2], TESSINNER",
        ]
        if self.patch_sum:
            tcs.append("DCL OUT[3], PATCH[0]")
        tcs += [
            "DCL SV[0], INVOCATIONID",
            "DCL SV[1], PRIM_ID",
            "DCL CONST[0][0..3]",
            "DCL TEMP[0..1], LOCAL",
            "DCL ADDR[0]",
            "IMM[0] UINT32 {0, 0, 0, 0}",
            "  0: UARL ADDR[0].x, SV[0].xxxx",
            "  1: MOV OUT[ADDR[0].x][0], IN[ADDR[0].x][0]",
            "  2: U2F TEMP[0].x, SV[1].xxxx",
            "  3: MAD OUT[1], TEMP[0].xxxx, CONST[0][2], CONST[0][0]",
            "  4: MAD OUT[2].xy, TEMP[0].xxxx, CONST[0][3].xyyy, CONST[0][1].xyyy",
        ]
        if self.patch_sum:
            tcs += [
                "  5: BARRIER",
                "  6: USEQ TEMP[0].x, SV[0].xxxx, IMM[0].xxxx",
                "  7: UIF TEMP[0].xxxx",
                "  8:   ADD TEMP[1], OUT[0][0], OUT[1][0]",
                "  9:   ADD OUT[3], TEMP[1], OUT[2][0]",
                " 10: ENDIF",
                " 11: END",
            ]
        else:
            tcs.append("  5: END")
        tes = [
            "TESS_EVAL",
            f"PROPERTY TES_PRIM_MODE {_PRIM_MODE[self.domain]}",
            f"PROPERTY TES_SPACING {_SPACING[self.spacing]}",
            f"PROPERTY TES_VERTEX_ORDER_CW {int(self.cw)}",
            f"PROPERTY TES_POINT_MODE {int(self.point_mode)}",
            "DCL IN[][0], POSITION",
        ]
        if self.patch_sum:
            tes.append("DCL IN[1], PATCH[0]")
        tes += [
            "DCL SV[0], TESSCOORD",
            "DCL SV[1], PRIM_ID",
            "DCL OUT[0], POSITION",
            "DCL OUT[1], GENERIC[0]",
        ]
        if self.patch_sum:
            tes.append("DCL OUT[2], GENERIC[1]")
        tes.append("DCL TEMP[0..1], LOCAL")
        if self.domain == TRIANGLES:
            body = [
                "MUL TEMP[0], IN[0][0], SV[0].xxxx",
                "MAD TEMP[0], IN[1][0], SV[0].yyyy, TEMP[0]",
                "MAD TEMP[0], IN[2][0], SV[0].zzzz, TEMP[0]",
            ]
        else:
            body = [
                "ADD TEMP[1], IN[1][0], -IN[0][0]",
                "MAD TEMP[0], TEMP[1], SV[0].xxxx, IN[0][0]",
                "ADD TEMP[1], IN[3][0], -IN[0][0]",
                "MAD TEMP[0], TEMP[1], SV[0].yyyy, TEMP[0]",
            ]
        body += ["MOV OUT[0], TEMP[0]", "MOV OUT[1].xyz, SV[0].xyzz", "U2F OUT[1].w, SV[1].xxxx"]
        if self.patch_sum:
            body.append("MOV OUT[2], IN[1]")
        body.append("END")
        tes += [f"{k:3}: {line}" for k, line in enumerate(body)]
        out = {"vs": vs, "tes": "\n".join(tes) + "\n"}
        if self.control:
            out["tcs"] = "\n".join(tcs) + "\n"
        return out

    def constants(self) -> np.ndarray:
        """CONST[0][0..3] of the control shader (the GLSL uniforms)."""
        return np.array(
            [*self.outer, *self.inner, 0, 0, *self.outer_step, *self.inner_step, 0, 0], np.float32
        )

    def stream_output(self) -> dict:
        """The evaluation shader's captured outputs (GENERIC[0], POSITION,
        GENERIC[1]) as a pipe_stream_output_info."""
        outs = [
            {"register_index": 1, "num_components": 4, "dst_offset": 0},
            {"register_index": 0, "num_components": 4, "dst_offset": 4},
        ]
        if self.patch_sum:
            outs.append({"register_index": 2, "num_components": 4, "dst_offset": 8})
        return {"num_outputs": len(outs), "stride": [4 * len(outs), 0, 0, 0], "output": outs}


CASES: tuple[Case, ...] = (
    Case("tri_equal", TRIANGLES, EQUAL, (3.0, 4.0, 2.0, 0), (5.0, 0), (1.0, 0.0, 2.0, 0), (1.0, 0)),
    Case("tri_odd", TRIANGLES, ODD, (2.5, 3.75, 1.25, 0), (4.5, 0), (1.5, 0.5, 2.0, 0), (2.25, 0)),
    Case("tri_even", TRIANGLES, EVEN, (2.5, 5.0, 3.25, 0), (3.5, 0), (0.75, 1.5, 2.0, 0), (2.0, 0)),
    Case("tri_cw", TRIANGLES, EQUAL, (2.0, 3.0, 4.0, 0), (3.0, 0), cw=True),
    Case("tri_points", TRIANGLES, ODD, (1.5, 2.0, 3.0, 0), (2.5, 0), point_mode=True),
    Case("tri_ones", TRIANGLES, EQUAL, (1.0, 1.0, 1.0, 0), (1.0, 0), (0.5, 0.0, 0.0, 0)),
    Case("tri_culled", TRIANGLES, EQUAL, (0.0, 2.0, 3.0, 0), (2.0, 0), (2.0, 0.0, 0.0, 0)),
    Case(
        "tri_clamped",
        TRIANGLES,
        EVEN,
        (70.0, 0.25, 1.5, 0),
        (0.5, 0),
        (-60.0, 3.0, 0.0, 0),
        (2.75, 0),
    ),
    Case(
        "quad_equal",
        QUADS,
        EQUAL,
        (2.0, 3.0, 4.0, 5.0),
        (3.0, 2.0),
        (1.0, 0.0, 1.0, 0.0),
        (2.0, 1.0),
    ),
    Case(
        "quad_odd",
        QUADS,
        ODD,
        (3.5, 2.25, 4.75, 1.5),
        (2.5, 5.5),
        (0.5, 1.0, 0.25, 2.0),
        (1.75, 0.5),
    ),
    Case(
        "quad_even",
        QUADS,
        EVEN,
        (2.5, 4.25, 3.0, 6.5),
        (4.75, 3.5),
        (1.0, 0.5, 2.5, 0.0),
        (0.25, 2.0),
    ),
    Case("quad_cw", QUADS, ODD, (3.0, 4.0, 2.0, 5.0), (3.5, 4.5), cw=True),
    Case("quad_points", QUADS, EVEN, (2.0, 3.5, 2.5, 4.0), (3.0, 2.25), point_mode=True),
    Case(
        "quad_inner_one",
        QUADS,
        EQUAL,
        (4.0, 3.0, 5.0, 2.0),
        (1.0, 1.0),
        (0.0, 0.0, 0.0, 0.0),
        (0.0, 3.0),
    ),
    Case("iso_equal", ISOLINES, EQUAL, (3.0, 4.0, 0, 0), outer_step=(1.0, 2.0, 0, 0)),
    Case("iso_odd", ISOLINES, ODD, (2.5, 3.5, 0, 0), outer_step=(1.25, 1.75, 0, 0)),
    Case("iso_even", ISOLINES, EVEN, (4.0, 2.5, 0, 0), outer_step=(0.5, 2.25, 0, 0)),
    Case("iso_points", ISOLINES, EQUAL, (2.0, 3.0, 0, 0), point_mode=True),
    Case(
        "defaults", TRIANGLES, ODD, (3.5, 2.0, 4.25, 0), (2.75, 0), control=False
    ),  # (set_tess_state / GL_PATCH_DEFAULT_*_LEVEL)
    Case("patch_sum", TRIANGLES, EQUAL, (2.0, 2.0, 3.0, 0), (2.0, 0), patch_sum=True),
)


def case_by_name(name: str) -> Case:
    for c in CASES:
        if c.name == name:
            return c
    raise KeyError(name)
