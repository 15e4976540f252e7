"""Property tests of the TGSI parser: it never raises anything but
TgsiSyntaxError and never hangs, and Shader.to_text() round-trips; programs
of hostile sizes are refused at once (gallium/tgsi/limits.py)."""

from __future__ import annotations

import struct
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gallium.pipe.errors import UnsupportedError
from gallium.tgsi import (
    NUMPIPE,
    OPCODES,
    Declaration,
    Dst,
    Immediate,
    Indirect,
    Instruction,
    Property,
    Register,
    Shader,
    ShaderLimitError,
    Src,
    TexOffset,
    TgsiSyntaxError,
    compile_shader,
    parse,
)
from gallium.tgsi.compiler import ShaderCompileError
from gallium.tgsi.parser import MEMORY_OPCODES, SAMPLE_OPCODES
from gallium.tgsi.tokens import (
    INTERPOLATIONS,
    LOCATIONS,
    MEMORY_QUALIFIERS,
    MEMORY_TYPES,
    PRIMITIVES,
    RETURN_TYPES,
    TEXTURE_TARGETS,
)

FUZZ = settings(
    max_examples=300,
    deadline=timedelta(milliseconds=1000),
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)

SEEDS = [
    """VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL CONST[0][0..3]
DCL TEMP[0..1], ARRAY(1)
DCL ADDR[0]
IMM[0] FLT32 {1.0, -0.5, 1e-3, inf}
  0: ARL ADDR[0].x, IN[0].xxxx
  1: MAD TEMP[0], CONST[0][ADDR[0].x+1], IN[0].yyyy, -|TEMP[1].wzyx|
  2: UIF TEMP[0].xxxx :4
  3:   MOV_SAT OUT[0].xz, TEMP[ADDR[0].x](1)
  4: ENDIF
  5: END
""",
    """FRAG
PROPERTY FS_COORD_ORIGIN UPPER_LEFT
DCL IN[0], GENERIC[0], PERSPECTIVE, CENTROID
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D_ARRAY, FLOAT
IMM[0] INT32 {1, -1, 0, 0}
  0: TEX TEMP[0], IN[0], SAMP[0], 2D_ARRAY, IMM[0].xyz
  1: SWITCH IMM[0].xxxx
  2:   CASE IMM[0].yyyy
  3:     BRK
  4:   DEFAULT
  5: ENDSWITCH
  6: KILL_IF -TEMP[0].wwww
  7: END
""",
    """COMP
DCL SV[0], THREAD_ID
DCL BUFFER[0], ATOMIC
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL MEMORY[0], SHARED
IMM[0] UINT64 {1, 18446744073709551615}
  0: ATOMUADD TEMP[0].x, BUFFER[0], SV[0].xxxx, IMM[0].xxxx
  1: STORE IMAGE[0], SV[0].xyyy, TEMP[0], 2D, PIPE_FORMAT_R32_UINT, COHERENT
  2: BARRIER
  3: END
""",
    """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
DCL IN[][0], POSITION
DCL OUT[0], POSITION, STREAM(0, 0, 0, 0)
  0: MOV OUT[0], IN[1][0]
  1: EMIT IMM[0].xxxx
  2: END
""",
]


def _parse_or_syntax_error(text: str) -> None:
    try:
        shader = parse(text)
    except TgsiSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    # Whatever parses must print to text that parses to the same program.
    assert parse(shader.to_text()) == shader


@FUZZ
@given(st.text(alphabet=st.characters(min_codepoint=9, max_codepoint=126), max_size=300))
def test_random_text_only_raises_syntax_errors(text):
    _parse_or_syntax_error(text)
    _parse_or_syntax_error("FRAG\n" + text)


TOKENS = [
    "DCL",
    "IMM",
    "PROPERTY",
    "TEMP",
    "IN",
    "OUT",
    "CONST",
    "ADDR",
    "SAMP",
    "SVIEW",
    "IMAGE",
    "[",
    "]",
    "(",
    ")",
    ".",
    ",",
    ":",
    "{",
    "}",
    "|",
    "-",
    "+",
    "..",
    " ",
    "\n",
    "0",
    "1",
    "99999999999999999999",
    "1e99999",
    "0x1p-99999",
    "nan(0x1)",
    "xyzw",
    "MOV",
    "TEX",
    "2D",
    "FLT32",
    "UINT64",
    "ARRAY(1)",
    "GENERIC[0]",
    "ADDR[0].x+",
    "_SAT",
    "_PRECISE",
]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 3))
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 20)))
        if kind == 0:
            text = text[:i] + text[j:]
        elif kind == 1:
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == 2:
            text = text[:i] + text[i:j] * 2 + text[j:]
        else:
            ch = draw(st.characters(min_codepoint=32, max_codepoint=126))
            text = text[:i] + ch + text[i + 1 :]
    return text


@FUZZ
@given(mutated())
def test_mutated_programs_only_raise_syntax_errors(text):
    _parse_or_syntax_error(text)


# -- generated valid shaders -----------------------------------------------------------


def _is_snan32(bits: int) -> bool:
    return bits >> 23 & 0xFF == 0xFF and bits & 0x7FFFFF and not bits >> 22 & 1


def _is_snan64(q: int) -> bool:
    return q >> 52 & 0x7FF == 0x7FF and q & ((1 << 52) - 1) and not q >> 51 & 1


words = st.integers(0, 0xFFFFFFFF)


@st.composite
def immediates(draw):
    kind = draw(st.sampled_from(["FLT32", "UINT32", "INT32", "FLT64", "UINT64", "INT64"]))
    if kind == "FLT32":
        bits = tuple(draw(words.filter(lambda b: not _is_snan32(b))) for _ in range(4))
    elif kind == "FLT64":
        qs = [draw(st.integers(0, 2**64 - 1).filter(lambda q: not _is_snan64(q))) for _ in range(2)]
        bits = struct.unpack("<4I", struct.pack("<2Q", *qs))
    else:
        bits = tuple(draw(words) for _ in range(4))
    return Immediate(kind, bits)


VALUE_FILES = ["TEMP", "IN", "OUT", "CONST", "ADDR", "IMM", "SV"]
swz4 = st.tuples(*[st.integers(0, 3)] * 4)


@st.composite
def registers(draw, files=VALUE_FILES):
    file = draw(st.sampled_from(files))
    indirect = None
    if draw(st.booleans()):
        indirect = Indirect(
            draw(st.sampled_from(["ADDR", "TEMP"])),
            draw(st.integers(0, 3)),
            draw(st.integers(0, 3)),
            draw(st.integers(0, 3)),
        )
        index = draw(st.integers(-(2**31), 2**31 - 1))
    else:
        index = draw(st.integers(0, 40))
    dimension = dim_ind = None
    if file == "CONST" and draw(st.booleans()):
        dimension = draw(st.integers(0, 7))
        if draw(st.booleans()):
            dim_ind = Indirect("ADDR", draw(st.integers(0, 1)), draw(st.integers(0, 3)))
    return Register(file, index, indirect, dimension, dim_ind)


@st.composite
def srcs(draw, files=VALUE_FILES):
    return Src(draw(registers(files)), draw(swz4), draw(st.booleans()), draw(st.booleans()))


@st.composite
def instructions(draw):
    name = draw(st.sampled_from(sorted(OPCODES)))
    info = OPCODES[name]
    nsrc = draw(st.sampled_from([info.fewest_src, info.num_src]))
    dst = tuple(
        Dst(draw(registers(["TEMP", "OUT", "ADDR", "BUFFER", "IMAGE"])), draw(st.integers(1, 15)))
        for _ in range(info.num_dst)
    )
    src = tuple(draw(srcs()) for _ in range(nsrc))
    texture = draw(st.sampled_from(TEXTURE_TARGETS)) if info.is_tex else None
    offsets: tuple = ()
    if (info.is_tex or name in SAMPLE_OPCODES) and draw(st.booleans()):
        offsets = tuple(
            TexOffset(
                Register("IMM", draw(st.integers(0, 9))), draw(st.tuples(*[st.integers(0, 3)] * 3))
            )
            for _ in range(draw(st.integers(1, 4)))
        )
    quals: tuple = ()
    mem_tex = mem_fmt = None
    if name in MEMORY_OPCODES:
        chosen = draw(st.sets(st.sampled_from(MEMORY_QUALIFIERS)))
        quals = tuple(q for q in MEMORY_QUALIFIERS if q in chosen)
        mem_tex = draw(st.none() | st.sampled_from(TEXTURE_TARGETS))
        mem_fmt = draw(
            st.none() | st.sampled_from(["PIPE_FORMAT_R32_FLOAT", "PIPE_FORMAT_R8G8B8A8_UNORM"])
        )
    label = draw(st.none() | st.integers(0, 200)) if info.is_branch else None
    return Instruction(
        name,
        dst,
        src,
        saturate=draw(st.booleans()),
        precise=draw(st.booleans()),
        texture=texture,
        tex_offsets=offsets,
        memory_qualifiers=quals,
        memory_texture=mem_tex,
        memory_format=mem_fmt,
        label=label,
    )


@st.composite
def declarations(draw, processor):
    file = draw(
        st.sampled_from(
            [
                "TEMP",
                "IN",
                "OUT",
                "CONST",
                "SV",
                "SAMP",
                "SVIEW",
                "IMAGE",
                "BUFFER",
                "MEMORY",
                "ADDR",
            ]
        )
    )
    first = draw(st.integers(0, 30))
    last = first + draw(st.integers(0, 5))
    kw: dict = {"usage_mask": draw(st.integers(1, 15))}
    if file == "CONST" and draw(st.booleans()):
        kw["dimension"] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        kw["array_id"] = draw(st.integers(-3, 9))
    vs_input = processor == "VERT" and file == "IN"
    if file == "SVIEW" and not vs_input:
        kw["sview_target"] = draw(st.sampled_from(TEXTURE_TARGETS))
        kw["return_types"] = draw(
            st.sampled_from(RETURN_TYPES).map(lambda t: (t,) * 4)
            | st.tuples(*[st.sampled_from(RETURN_TYPES)] * 4)
        )
    elif file == "IMAGE" and draw(st.booleans()):
        kw["image_target"] = draw(st.sampled_from(TEXTURE_TARGETS))
        kw["image_raw"] = draw(st.booleans())
        kw["image_writable"] = draw(st.booleans())
        kw["image_format"] = draw(st.none() | st.just("PIPE_FORMAT_R32G32_UINT"))
    elif file == "BUFFER":
        kw["atomic"] = draw(st.booleans())
    elif file == "MEMORY":
        kw["mem_type"] = draw(st.none() | st.sampled_from(MEMORY_TYPES))
    elif file in ("IN", "OUT", "SV", "TEMP") and not vs_input:
        if file == "TEMP":
            kw["local"] = draw(st.booleans())
        else:
            kw["semantic"] = draw(
                st.none() | st.sampled_from(["POSITION", "GENERIC", "COLOR", "TEXCOORD", "FACE"])
            )
            if kw["semantic"]:
                kw["semantic_index"] = draw(st.integers(0, 20))
    if file == "OUT" and processor == "GEOM" and draw(st.booleans()):
        kw["streams"] = draw(st.tuples(*[st.integers(0, 3)] * 4))
    if not vs_input and file in ("IN", "OUT"):
        # tgsi_text reads a lone ", COLOR" as the semantic, so COLOR
        # interpolation is only expressible after a semantic.
        interps = (
            INTERPOLATIONS if kw.get("semantic") else [i for i in INTERPOLATIONS if i != "COLOR"]
        )
        kw["interpolate"] = draw(st.none() | st.sampled_from(interps))
        kw["location"] = draw(st.none() | st.sampled_from(LOCATIONS))
        kw["invariant"] = draw(st.booleans())
    return Declaration(file, first, last, **kw)


@st.composite
def shaders(draw):
    processor = draw(st.sampled_from(["VERT", "FRAG", "COMP", "TESS_EVAL"]))
    props = draw(
        st.lists(
            st.sampled_from(
                [
                    Property("GS_OUTPUT_PRIMITIVE", "LINE_STRIP"),
                    Property("GS_INPUT_PRIMITIVE", draw(st.sampled_from(PRIMITIVES))),
                    Property("FS_COORD_PIXEL_CENTER", "INTEGER"),
                    Property("CS_FIXED_BLOCK_WIDTH", draw(st.integers(0, 2**32 - 1))),
                    Property("NEXT_SHADER", "GEOM"),
                ]
            ),
            max_size=3,
        )
    )
    return Shader(
        processor,
        declarations=tuple(draw(st.lists(declarations(processor), max_size=6))),
        immediates=tuple(draw(st.lists(immediates(), max_size=4))),
        properties=tuple(props),
        instructions=tuple(draw(st.lists(instructions(), max_size=8))),
    )


@settings(
    max_examples=300,
    deadline=timedelta(milliseconds=1000),
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(shaders())
def test_generated_shaders_round_trip(shader):
    text = shader.to_text()
    again = parse(text)
    assert again == shader, text


# -- hostile sizes ---------------------------------------------------------------------------

HOSTILE = st.sampled_from(
    [0, 1, 15, 16, 31, 32, 33, 63, 64, 4095, 4096, 4097, 16383, 16384, 65535, 65536,
     2**31 - 1, 2**31, 2**32 - 1, 2**32, 10**20]
)  # fmt: skip
HOSTILE_FILES = ["TEMP", "IN", "OUT", "CONST", "SAMP", "SVIEW", "BUFFER", "IMAGE", "ADDR",
                 "SV", "MEMORY", "IMM", "HWATOMIC", "NULL"]  # fmt: skip


@st.composite
def hostile_programs(draw):
    """Programs whose numbers are limits, one past them, or absurd: declared
    ranges, 2-D declarations, operands, nesting far past the limit."""
    proc = draw(st.sampled_from(["VERT", "FRAG", "GEOM", "COMP"]))
    lines = [proc]
    for _ in range(draw(st.integers(0, 6))):
        file = draw(st.sampled_from(HOSTILE_FILES[:-2]))
        first = draw(HOSTILE)
        rng = f"{first}..{draw(HOSTILE)}" if draw(st.booleans()) else f"{first}"
        dim = f"[{draw(HOSTILE)}]" if draw(st.booleans()) else ""
        lines.append(f"DCL {file}{dim}[{rng}]")
    lines.append("IMM[0] FLT32 {1.0, 0.0, 0.5, 2.0}")
    depth = draw(st.sampled_from([0, 1, 79, 80, 81, 200]))
    opener = draw(st.sampled_from(["BGNLOOP", "IF IMM[0].xxxx", "UIF IMM[0].yyyy"]))
    closer = "BRK\nENDLOOP" if opener == "BGNLOOP" else "ENDIF"
    lines += [opener] * depth
    for _ in range(draw(st.integers(0, 4))):
        dst = f"{draw(st.sampled_from(['TEMP', 'OUT', 'ADDR']))}[{draw(HOSTILE)}]"
        src = f"{draw(st.sampled_from(HOSTILE_FILES))}[{draw(HOSTILE)}]"
        if draw(st.booleans()):
            src = f"CONST[{draw(HOSTILE)}][{draw(HOSTILE)}]"
        lines.append(f"MOV {dst}, {src}")
    lines += [closer] * depth
    lines.append("END")
    return "\n".join(lines) + "\n"


@settings(
    max_examples=300,
    deadline=timedelta(seconds=3),
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(hostile_programs())
def test_hostile_sizes_are_refused_at_once_or_compiled(text):
    """With the screen's limits a program is refused at parse time (a
    TgsiSyntaxError at a line and column) or compiles; a program parsed without
    limits is refused by the compiler with a ShaderLimitError before anything is
    generated.  Nothing else escapes: no MemoryError, no RecursionError, no
    SyntaxError of the generated code."""
    try:
        shader = parse(text, NUMPIPE)
    except TgsiSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        shader = None
    if shader is not None:
        try:
            compile_shader(shader)
        except (ShaderCompileError, UnsupportedError):
            pass  # (a program that is not valid TGSI, within the limits)
    try:
        loose = parse(text)
    except TgsiSyntaxError:
        return
    try:
        compile_shader(loose)
    except ShaderLimitError:
        assert shader is None  # exactly what the parser refused with limits
    except (ShaderCompileError, UnsupportedError):
        pass
