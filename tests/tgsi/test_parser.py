"""The TGSI text parser against tgsi_text.c's grammar, and Shader.to_text()."""

from __future__ import annotations

import struct

import pytest

from gallium.tgsi import (
    Declaration,
    Immediate,
    Indirect,
    Instruction,
    Register,
    Shader,
    Src,
    TgsiSyntaxError,
    parse,
)
from gallium.tgsi.compiler import compile_shader

# Printed by Mesa 22.3's softpipe (SOFTPIPE_DEBUG=vs,fs,use_tgsi) for a GLSL 330
# program of ours with loops, continue/break, a uniform array, a varying array,
# texture offsets, a shadow lookup, discard and derivatives.
SOFTPIPE_VS = """VERT
PROPERTY NEXT_SHADER FRAG
DCL IN[0]
DCL SV[0], VERTEXID
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2].xyz, GENERIC[1]
DCL OUT[3].x, GENERIC[2]
DCL CONST[0][0..4]
DCL TEMP[0..2]
IMM[0] UINT32 {0, 2, 1092616192, 1}
IMM[1] UINT32 {3, 1073741824, 0, 0}
  0: MOV TEMP[0], IMM[0].xxxx
  1: MOV TEMP[1].x, IMM[0].xxxx
  2: BGNLOOP :0
  3:   ISGE TEMP[2].x, TEMP[1].xxxx, CONST[0][4].xxxx
  4:   UIF TEMP[2].xxxx :6
  5:     BRK
  6:   ENDIF
  7:   USNE TEMP[2].x, TEMP[1].xxxx, IMM[0].yyyy
  8:   UIF TEMP[2].xxxx :16
  9:     I2F TEMP[2].x, TEMP[1].xxxx
 10:     ADD TEMP[0], TEMP[0], TEMP[2].xxxx
 11:     FSLT TEMP[2].x, IMM[0].zzzz, TEMP[0].xxxx
 12:     UIF TEMP[2].xxxx :14
 13:       BRK
 14:     ENDIF
 15:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].wwww
 16:   ELSE :18
 17:     MOV TEMP[1].x, IMM[1].xxxx
 18:   ENDIF
 19: ENDLOOP :0
 20: MUL OUT[2].z, IMM[1].yyyy, IN[0].xxxx
 21: UMOD OUT[3].x, SV[0].xxxx, IMM[1].xxxx
 22: MUL TEMP[1], CONST[0][1], IN[0].yyyy
 23: MAD TEMP[1], CONST[0][0], IN[0].xxxx, TEMP[1]
 24: MAD TEMP[1], CONST[0][2], IN[0].zzzz, TEMP[1]
 25: MAD OUT[0], CONST[0][3], IN[0].wwww, TEMP[1]
 26: MOV OUT[1], TEMP[0]
 27: MOV OUT[2].x, IMM[0].xxxx
 28: MOV OUT[2].y, IN[0].xxzw
 29: END
"""

SOFTPIPE_FS = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL IN[1].xyz, GENERIC[1], PERSPECTIVE
DCL IN[2].x, GENERIC[2], CONSTANT
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SAMP[1]
DCL SAMP[2]
DCL SVIEW[0], 2D, FLOAT
DCL SVIEW[1], SHADOW2D, FLOAT
DCL SVIEW[2], 2D_ARRAY, FLOAT
DCL CONST[0][0..4]
DCL TEMP[0..2], ARRAY(1), LOCAL
DCL TEMP[3..7]
DCL ADDR[0]
IMM[0] UINT32 {1065353216, 2, 3, 0}
IMM[1] UINT32 {1, 4294967295, 268435455, 1073741824}
IMM[2] FLT32 {    1.0000,     0.0000,     0.0000,     0.0000}
  0: MOV TEMP[0].x, IN[1].xyzz
  1: MOV TEMP[1].x, IN[1].yyzz
  2: MOV TEMP[2].x, IN[1].zyzz
  3: MOV TEMP[3].xy, IN[0].xyzz
  4: TEX TEMP[4], TEMP[3], SAMP[0], 2D
  5: MOV TEMP[5].xyz, IN[0].yxyz
  6: MOV TEMP[5].w, IMM[0].xxxx
  7: TXL TEMP[5], TEMP[5], SAMP[0], 2D
  8: ADD TEMP[4], TEMP[4], TEMP[5]
  9: TXF TEMP[5], IMM[0].yzyw, SAMP[0], 2D
 10: ADD TEMP[4], TEMP[4], TEMP[5]
 11: TEX TEMP[5].x, IN[0].xyzz, SAMP[1], SHADOW2D
 12: TEX TEMP[6], IN[0].xyzz, SAMP[2], 2D_ARRAY
 13: ADD TEMP[5], TEMP[5].xxxx, TEMP[6]
 14: TEX TEMP[3], TEMP[3], SAMP[0], 2D, IMM[1].xyx
 15: ADD TEMP[3], TEMP[5], TEMP[3]
 16: ADD TEMP[3], TEMP[4], TEMP[3]
 17: AND TEMP[4].x, IN[2].xxxx, IMM[1].zzzz
 18: UADD TEMP[5].x, IMM[0].wwww, IN[2].xxxx
 19: UARL ADDR[0].x, TEMP[5].xxxx
 20: MOV TEMP[5].x, TEMP[ADDR[0].x](1)
 21: UARL ADDR[0].x, TEMP[4].xxxx
 22: MOV TEMP[4], CONST[0][ADDR[0].x]
 23: MAD TEMP[3], TEMP[4], TEMP[5].xxxx, TEMP[3]
 24: ADD TEMP[4].x, TEMP[3].xxxx, IMM[0].xxxx
 25: MOV TEMP[4].yzw, TEMP[3].yyzw
 26: USEQ TEMP[5].x, IMM[0].wwww, IN[2].xxxx
 27: UCMP TEMP[3], TEMP[5].xxxx, TEMP[4], TEMP[3]
 28: ADD TEMP[4].y, TEMP[3].yyxx, IMM[1].wwww
 29: MOV TEMP[5].x, -TEMP[3].zxxx
 30: MUL TEMP[6].x, TEMP[3].zxxx, IMM[1].wwww
 31: FSLT TEMP[7].x, TEMP[3].zxxx, IMM[0].wwww
 32: UCMP TEMP[5].z, TEMP[7].xxxx, TEMP[5].xxxx, TEMP[6].xxxx
 33: MOV TEMP[5].xyw, TEMP[3]
 34: USGE TEMP[6].x, IMM[1].xxxx, IN[2].xxxx
 35: MOV TEMP[4].xzw, TEMP[3]
 36: UCMP TEMP[3], TEMP[6].xxxx, TEMP[4], TEMP[5]
 37: FSLT TEMP[4].x, TEMP[3].wxxx, IMM[0].wwww
 38: AND TEMP[4].x, TEMP[4].xxxx, IMM[2].xxxx
 39: KILL_IF -TEMP[4].xxxx
 40: DDX TEMP[4].xy, IN[0].xyzz
 41: MUL TEMP[5].x, IN[0].yxxx, CONST[0][4].xxxx
 42: DDY TEMP[5].x, TEMP[5].xxxx
 43: ADD TEMP[5].x, |TEMP[4].yxxx|, |TEMP[5].xxxx|
 44: ADD TEMP[4].x, TEMP[4].xxxx, TEMP[5].xxxx
 45: ADD TEMP[4].x, TEMP[3].xxxx, TEMP[4].xxxx
 46: TXQ TEMP[5].xy, IMM[0].wwww, SAMP[0], 2D
 47: I2F TEMP[5].xy, TEMP[5].xyyy
 48: MOV TEMP[5].z, IMM[0].wwww
 49: MOV TEMP[6].x, TEMP[4].xxxx
 50: MOV TEMP[6].yzw, TEMP[3].yyzw
 51: ADD TEMP[3], TEMP[6], TEMP[5].xyzz
 52: USHR TEMP[4].x, TEMP[4].xxxx, IMM[0].zzzz
 53: ADD OUT[0], TEMP[3], TEMP[4].xxxx
 54: END
"""

GEOM_TEXT = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 6
PROPERTY GS_INVOCATIONS 2
DCL IN[][0], POSITION
DCL IN[][1], GENERIC[3]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[3], STREAM(0, 0, 1, 1)
DCL SV[0], INVOCATIONID
IMM[0] UINT32 {0, 1, 0, 0}
  0: MOV OUT[0], IN[2][0]
  1: MOV OUT[1], IN[ADDR[0].x][1]
  2: EMIT IMM[0].xxxx
  3: ENDPRIM IMM[0].yyyy
  4: END
"""

COMP_TEXT = """COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 64
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL SV[0], THREAD_ID
DCL SV[1], BLOCK_ID
DCL BUFFER[0]
DCL BUFFER[1], ATOMIC
DCL IMAGE[0], 2D, PIPE_FORMAT_R32G32B32A32_FLOAT, WR
DCL IMAGE[1], 3D, RAW
DCL MEMORY[0], SHARED
DCL MEMORY[1], GLOBAL
DCL TEMP[0..3], LOCAL
IMM[0] UINT32 {4, 0, 0, 0}
IMM[1] INT64 {-5, 9223372036854775807}
IMM[2] UINT64 {18446744073709551615, 0x10}
IMM[3] FLT64 {0.1, -2.5}
  0: LOAD TEMP[0], BUFFER[0], SV[0].xxxx, COHERENT, VOLATILE
  1: STORE BUFFER[0].xy, SV[0].xxxx, TEMP[0]
  2: ATOMUADD TEMP[1].x, BUFFER[1], IMM[0].xxxx, IMM[0].xxxx
  3: ATOMCAS TEMP[1].x, MEMORY[0], IMM[0].yyyy, IMM[0].xxxx, IMM[0].yyyy
  4: LOAD TEMP[2], IMAGE[0], SV[0].xyyy, 2D, PIPE_FORMAT_R32G32B32A32_FLOAT
  5: STORE IMAGE[0], SV[0].xyyy, TEMP[2], 2D, PIPE_FORMAT_R32G32B32A32_FLOAT, RESTRICT
  6: RESQ TEMP[3], IMAGE[0]
  7: BARRIER
  8: MEMBAR IMM[0].xxxx
  9: DADD_SAT_PRECISE TEMP[3].xy, IMM[3].xyxy, IMM[3].zwzw
 10: END
"""

TESS_TEXT = """TESS_CTRL
PROPERTY TCS_VERTICES_OUT 3
DCL IN[][0], POSITION
DCL OUT[][0], POSITION
DCL OUT[1].x, TESSOUTER
DCL OUT[2], PATCH[0]
DCL SV[0], INVOCATIONID
  0: END
"""


def test_realistic_programs_parse_and_round_trip():
    for text in (SOFTPIPE_VS, SOFTPIPE_FS, GEOM_TEXT, COMP_TEXT, TESS_TEXT):
        shader = parse(text)
        again = parse(shader.to_text())
        assert again == shader
        assert again.to_text() == shader.to_text()


def test_softpipe_programs_compile():
    compile_shader(SOFTPIPE_VS)
    compile_shader(SOFTPIPE_FS)
    compile_shader(COMP_TEXT)


def test_declaration_fields():
    s = parse(SOFTPIPE_FS)
    d = {(x.file, x.first): x for x in s.declarations}
    assert d[("IN", 1)] == Declaration(
        "IN",
        1,
        1,
        usage_mask=0b0111,
        semantic="GENERIC",
        semantic_index=1,
        interpolate="PERSPECTIVE",
    )
    assert d[("IN", 2)].interpolate == "CONSTANT" and d[("IN", 2)].usage_mask == 1
    assert d[("SVIEW", 1)].sview_target == "SHADOW2D"
    assert d[("SVIEW", 1)].return_types == ("FLOAT",) * 4
    assert d[("CONST", 0)] == Declaration("CONST", 0, 4, dimension=0)
    assert d[("TEMP", 0)] == Declaration("TEMP", 0, 2, array_id=1, local=True)
    assert s.get_property("NEXT_SHADER") is None
    assert parse(SOFTPIPE_VS).get_property("NEXT_SHADER") == "FRAG"


def test_instruction_fields():
    s = parse(SOFTPIPE_FS)
    inst = s.instructions[20]  # MOV TEMP[5].x, TEMP[ADDR[0].x](1)
    assert inst.src[0].reg == Register("TEMP", 0, Indirect("ADDR", 0, 0, array_id=1))
    assert inst.dst[0].writemask == 1
    tex = s.instructions[14]  # TEX ..., 2D, IMM[1].xyx
    assert tex.texture == "2D" and tex.tex_offsets[0].swizzle == (0, 1, 0)
    kill = s.instructions[39]
    assert kill.src[0].negate and kill.src[0].swizzle == (0, 0, 0, 0)
    add = s.instructions[43]
    assert add.src[0].absolute and add.src[1].absolute
    vs = parse(SOFTPIPE_VS)
    assert vs.instructions[4].opcode == "UIF" and vs.instructions[4].label == 6
    assert vs.instructions[16].opcode == "ELSE" and vs.instructions[16].label == 18
    c = parse(COMP_TEXT)
    load = c.instructions[0]
    assert load.memory_qualifiers == ("COHERENT", "VOLATILE")
    img = c.instructions[4]
    assert (img.memory_texture, img.memory_format) == ("2D", "PIPE_FORMAT_R32G32B32A32_FLOAT")
    dadd = c.instructions[9]
    assert (dadd.opcode, dadd.saturate, dadd.precise) == ("DADD", True, True)


def test_geometry_and_tessellation_dimensions():
    g = parse(GEOM_TEXT)
    ins = [d for d in g.declarations if d.file == "IN"]
    # the vertex bracket is implied by the input primitive and not kept
    assert [(d.first, d.last, d.semantic, d.semantic_index) for d in ins] == [
        (0, 0, "POSITION", 0),
        (1, 1, "GENERIC", 3),
    ]
    assert [d for d in g.declarations if d.file == "OUT"][1].streams == (0, 0, 1, 1)
    mov = g.instructions[0]
    assert mov.src[0].reg == Register("IN", 0, dimension=2)
    ind = g.instructions[1]
    assert ind.src[0].reg == Register("IN", 1, dimension=0, dim_indirect=Indirect("ADDR", 0))
    t = parse(TESS_TEXT)
    outs = [d for d in t.declarations if d.file == "OUT"]
    assert outs[1].semantic == "TESSOUTER" and outs[1].usage_mask == 1
    assert outs[2].semantic == "PATCH" and (outs[2].first, outs[2].last) == (2, 2)
    with pytest.raises(TgsiSyntaxError):
        parse("VERT\nDCL IN[]\n")  # no implied size outside GEOM/TESS


def test_immediates_of_every_type():
    s = parse(COMP_TEXT)
    i64, u64, f64 = s.immediates[1:4]
    assert i64.values == (-5, 2**63 - 1)
    assert u64.values == (2**64 - 1, 16)
    assert f64.values == (0.1, -2.5)
    f = parse(
        "FRAG\nIMM[0] FLT32 {0x1p-149, -inf, 1e40, .5e-1}\nIMM INT32 {-1, +2, 2147483648, 0}\n"
    )
    assert f.immediates[0].bits == (
        1,
        0xFF800000,
        0x7F800000,
        struct.unpack("<I", struct.pack("<f", 0.05))[0],
    )
    assert f.immediates[1].values == (-1, 2, -(2**31), 0)  # C unsigned wrap-around
    # strtof rounds to nearest, ties to even: 1 + 2^-24 is exactly halfway
    h = parse(
        "FRAG\nIMM[0] FLT32 {1.000000059604644775390625, 16777217, "
        "340282356779733661637539395458142568448, 3.4028235677973366e38}\n"
    )
    # FLT_MAX + half an ulp exactly is a tie that rounds to even (infinity);
    # the same digits cut short stay below it
    assert h.immediates[0].bits == (0x3F800000, 0x4B800000, 0x7F800000, 0x7F7FFFFF)


def test_float_immediates_round_trip_bit_exactly():
    words = [
        0x00000001,
        0x80000000,
        0x7F7FFFFF,
        0x3DCCCCCD,
        0x7FC00123,
        0xFFC00000,
        0x00800000,
        0x4F000000,
    ]
    imms = tuple(Immediate("FLT32", tuple(words[i : i + 4])) for i in (0, 4))
    s = Shader("FRAG", immediates=imms)
    assert parse(s.to_text()) == s
    d = struct.unpack("<2I", struct.pack("<d", 5e-324)) + struct.unpack(
        "<2I", struct.pack("<d", -0.1)
    )
    s = Shader("FRAG", immediates=(Immediate("FLT64", d),))
    assert parse(s.to_text()) == s


def test_every_file_and_semantic_parses():
    files = [
        "CONST",
        "IN",
        "OUT",
        "TEMP",
        "SAMP",
        "ADDR",
        "SV",
        "BUFFER",
        "MEMORY",
        "IMAGE",
        "SVIEW",
        "CONSTBUF",
        "HWATOMIC",
    ]
    lines = []
    for i, f in enumerate(files):
        extra = {"IMAGE": ", 2D", "SVIEW": ", 2D, FLOAT", "SV": ", INSTANCEID"}.get(f, "")
        lines.append(f"DCL {f}[{i}]{extra}")
    s = parse("COMP\n" + "\n".join(lines) + "\n")
    assert [d.file for d in s.declarations] == files
    sems = [
        "POSITION",
        "COLOR",
        "BCOLOR",
        "FOG",
        "PSIZE",
        "GENERIC",
        "NORMAL",
        "FACE",
        "EDGEFLAG",
        "PRIM_ID",
        "CLIPDIST",
        "CLIPVERTEX",
        "TEXCOORD",
        "PCOORD",
        "VIEWPORT_INDEX",
        "LAYER",
        "SAMPLEMASK",
        "TESSOUTER",
        "TESSINNER",
        "PATCH",
        "STENCIL",
    ]
    text = "FRAG\n" + "\n".join(
        f"DCL OUT[{i}], {s}[{i}], LINEAR, CENTROID, INVARIANT" for i, s in enumerate(sems)
    )
    s = parse(text + "\n")
    assert [d.semantic for d in s.declarations] == sems
    assert all(
        d.interpolate == "LINEAR" and d.location == "CENTROID" and d.invariant
        for d in s.declarations
    )
    assert parse(s.to_text()) == s


def test_every_property_parses():
    text = """FRAG
PROPERTY GS_INPUT_PRIMITIVE LINES_ADJACENCY
PROPERTY GS_OUTPUT_PRIMITIVE POINTS
PROPERTY FS_COORD_ORIGIN LOWER_LEFT
PROPERTY FS_COORD_PIXEL_CENTER INTEGER
PROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1
PROPERTY FS_DEPTH_LAYOUT 2
PROPERTY VS_PROHIBIT_UCPS 1
PROPERTY VS_WINDOW_SPACE_POSITION 1
PROPERTY TES_PRIM_MODE 4
PROPERTY TES_SPACING 1
PROPERTY TES_VERTEX_ORDER_CW 0
PROPERTY TES_POINT_MODE 0
PROPERTY NUM_CLIPDIST_ENABLED 2
PROPERTY NUM_CULLDIST_ENABLED 1
PROPERTY FS_EARLY_DEPTH_STENCIL 1
PROPERTY FS_POST_DEPTH_COVERAGE 1
PROPERTY NEXT_SHADER TESS_CTRL
PROPERTY LAYER_VIEWPORT_RELATIVE 1
PROPERTY FS_BLEND_EQUATION_ADVANCED 3
PROPERTY LEGACY_MATH_RULES 1
"""
    s = parse(text)
    assert len(s.properties) == 20
    assert s.get_property("GS_INPUT_PRIMITIVE") == "LINES_ADJACENCY"
    assert s.get_property("NEXT_SHADER") == "TESS_CTRL"
    assert s.get_property("FS_DEPTH_LAYOUT") == 2
    assert parse(s.to_text()) == s


def test_case_insensitivity_and_spacing():
    a = parse(
        "frag\ndcl in[0] , generic [ 3 ] , perspective\n"
        "  0 : mov_sat out[ 0 ].xZ , - | in[0] . wzyx |\n"
    )
    assert a.instructions[0] == Instruction(
        "MOV",
        dst=(parse("FRAG\n MOV OUT[0].xz, IN[0]\n").instructions[0].dst[0],),
        src=(Src(Register("IN", 0), (3, 2, 1, 0), negate=True, absolute=True),),
        saturate=True,
    )
    assert a.declarations[0].semantic_index == 3


def test_labels_are_optional_and_not_compared():
    with_labels = parse("FRAG\n  0: MOV OUT[0], IN[0]\n  7: END\n")
    without = parse("FRAG\nMOV OUT[0], IN[0]\nEND\n")
    assert with_labels == without


def test_sview_return_types():
    s = parse(
        "FRAG\nDCL SVIEW[0], 2D, UINT\nDCL SVIEW[1], 3D, SINT, SINT, FLOAT, UNORM\n"
        "DCL SVIEW[2], CUBE, SNORM, UINT\n"
    )
    assert s.declarations[0].return_types == ("UINT",) * 4
    assert s.declarations[1].return_types == ("SINT", "SINT", "FLOAT", "UNORM")
    # fewer than four names: all take the first (as tgsi_text)
    assert s.declarations[2].return_types == ("SNORM",) * 4


@pytest.mark.parametrize(
    "text,line,column,expected",
    [
        ("FRAGMENT\n", 1, 1, "one of VERT"),
        ("FRAG\nFOO TEMP[0]\n", 2, 1, "an opcode"),
        ("FRAG\n  0: MOVE TEMP[0], IN[0]\n", 2, 6, "an opcode"),
        ("FRAG\nMOV TEMP[0] IN[0]\n", 2, 13, "`,'"),
        ("FRAG\nMOV TEMP[0], IN[0\n", 3, 1, "`]'"),
        ("FRAG\nMOV TEMP[0], FOO[0]\n", 2, 14, "register file"),
        ("FRAG\nMOV TEMP[0].q, IN[0]\n", 2, 13, "write mask"),
        ("FRAG\nMOV TEMP[0], IN[0].xy\n", 2, 22, "swizzle component"),
        ("FRAG\nMOV TEMP[0], |IN[0]\n", 3, 1, "`|'"),
        ("FRAG\nMOV TEMP[ADDR[0].q], IN[0]\n", 2, 18, "indirect register swizzle"),
        ("FRAG\nTEX TEMP[0], IN[0], SAMP[0], 9D\n", 2, 30, "texture target"),
        ("FRAG\nDCL TEMP[3..1]\n", 2, 15, "first <= last"),
        ("FRAG\nDCL TEMP[0], FOO\n", 2, 14, "semantic, interpolate attribute, or invariant"),
        ("FRAG\nDCL SVIEW[0], 2D, COLOR\n", 2, 19, "type name"),
        ("FRAG\nIMM[1] FLT32 {0, 0, 0, 0}\n", 2, 5, "IMM[0]"),
        ("FRAG\nIMM[0] FLT33 {0, 0, 0, 0}\n", 2, 8, "immediate type"),
        ("FRAG\nIMM[0] FLT32 {0, 0, 0}\n", 2, 22, "`,'"),
        ("FRAG\nIMM[0] FLT32 {0, x, 0, 0}\n", 2, 18, "immediate constant"),
        ("FRAG\nIMM[0] UINT32 {0, -1, 0, 0}\n", 2, 19, "immediate constant"),
        ("FRAG\nPROPERTY FOO 1\n", 2, 10, "a property name"),
        ("FRAG\nPROPERTY FS_COORD_ORIGIN MIDDLE\n", 2, 26, "UPPER_LEFT"),
        ("FRAG\nPROPERTY GS_MAX_OUTPUT_VERTICES x\n", 2, 33, "unsigned integer"),
        ("FRAG\nMOV TEMP[0],IN[0]END\n", 2, 18, "white space"),
        ("FRAG\nUIF TEMP[0].xxxx :x\n", 2, 19, "a label"),
        ("FRAG\nLOAD TEMP[0], BUFFER[0], TEMP[1], SOMETHING\n", 2, 35, "memory qualifier"),
        ("FRAG\nMOV,\n", 2, 4, "white space"),
    ],
)
def test_errors_carry_line_column_and_expectation(text, line, column, expected):
    with pytest.raises(TgsiSyntaxError) as exc:
        parse(text)
    err = exc.value
    assert (err.line, err.column) == (line, column), str(err)
    assert expected in str(err)


def test_parse_rejects_non_text():
    with pytest.raises(TypeError):
        parse(b"FRAG\n")  # type: ignore[arg-type]


def test_sat_and_precise_suffixes_print_back():
    for name in ("MOV_SAT", "MOV_PRECISE", "MOV_SAT_PRECISE"):
        s = parse(f"FRAG\n{name} OUT[0], IN[0]\n")
        assert s.instructions[0].to_text().startswith(name + " ")
    with pytest.raises(TgsiSyntaxError):
        parse("FRAG\nMOV_PRECISE_SAT OUT[0], IN[0]\n")  # suffix order as tgsi_text


def test_legacy_emit_without_operand():
    s = parse("GEOM\nEMIT\nENDPRIM\nEND\n")
    assert [i.opcode for i in s.instructions] == ["EMIT", "ENDPRIM", "END"]
    assert s.instructions[0].src == ()
