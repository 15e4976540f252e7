"""The shader limits (gallium/tgsi/limits.py) are the screen's caps and are
exactly what works: a program at every limit compiles and runs, one beyond
is refused at once, naming the limit, at the line and column of the number;
parsing is linear; an error quotes a bounded part of the text."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from conftest import get_screen

from gallium import pipe
from gallium.pipe.errors import PipeValueError
from gallium.tgsi import (
    NUMPIPE,
    ExecEnv,
    Instruction,
    Shader,
    ShaderLimitError,
    TgsiSyntaxError,
    compile_shader,
    parse,
)
from gallium.tgsi.runtime import MAX_LOOP_ITERATIONS

F32, U32 = np.float32, np.uint32
STAGES = [pipe.ShaderType.VERTEX, pipe.ShaderType.FRAGMENT, pipe.ShaderType.GEOMETRY]


def run(text: str, n: int = 4, inputs=None):
    """Outputs of a kernel over ``n`` lanes as float32 arrays {reg: [4 channels]}."""
    res = compile_shader(text)(ExecEnv(n=n, inputs=inputs or []))
    return {
        r: [np.broadcast_to(np.asarray(c), (n,)).view(F32) for c in chans]
        for r, chans in res.outputs.items()
    }


def refused(text: str, line: int, column: int, message: str) -> None:
    """``text`` is refused as the caps say, parsed with limits and compiled
    from text (TgsiSyntaxError at line/column) and as a parsed Shader
    (ShaderLimitError)."""
    with pytest.raises(TgsiSyntaxError) as info:
        compile_shader(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert str(info.value) == f"TGSI line {line}, column {column}: {message}"
    with pytest.raises(ShaderLimitError, match="^TGSI line .*" + _re(message) + "$"):
        compile_shader(parse(text))


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_the_caps_are_the_limits():
    screen = get_screen(0)
    expect = {
        pipe.ShaderCap.MAX_INSTRUCTIONS: 16384,
        pipe.ShaderCap.MAX_ALU_INSTRUCTIONS: 16384,
        pipe.ShaderCap.MAX_TEX_INSTRUCTIONS: 16384,
        pipe.ShaderCap.MAX_TEX_INDIRECTIONS: 16384,
        pipe.ShaderCap.MAX_CONTROL_FLOW_DEPTH: 80,
        pipe.ShaderCap.MAX_TEMPS: 4096,
        pipe.ShaderCap.MAX_INPUTS: 32,
        pipe.ShaderCap.MAX_OUTPUTS: 32,
        pipe.ShaderCap.MAX_CONST_BUFFER_SIZE: 65536,
        pipe.ShaderCap.MAX_CONST_BUFFERS: 16,
        pipe.ShaderCap.MAX_TEXTURE_SAMPLERS: 32,
        pipe.ShaderCap.MAX_SAMPLER_VIEWS: 32,
    }
    for stage in [*STAGES, pipe.ShaderType.COMPUTE]:
        for cap, value in expect.items():
            assert screen.get_shader_param(stage, cap) == value, (stage, cap)
    cs = pipe.ShaderType.COMPUTE
    assert screen.get_shader_param(cs, pipe.ShaderCap.MAX_SHADER_BUFFERS) == NUMPIPE.shader_buffers
    assert screen.get_shader_param(cs, pipe.ShaderCap.MAX_SHADER_IMAGES) == NUMPIPE.shader_images


# -- the 33-byte shader ------------------------------------------------------------------------

HUGE_RANGE = "FRAG\nDCL TEMP[0..4294967295]\nEND\n"
HUGE_MESSAGE = "TEMP[4294967295] is beyond PIPE_SHADER_CAP_MAX_TEMPS: numpipe has TEMP[0..4095]"


@pytest.mark.parametrize("threaded", [False, True])
def test_a_huge_declared_range_is_refused_at_the_call(threaded):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        tracemalloc.start()
        try:
            with pytest.raises(TgsiSyntaxError) as info:
                ctx.create_fs_state(pipe.ShaderState(tokens=HUGE_RANGE))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert str(info.value) == f"TGSI line 2, column 13: {HUGE_MESSAGE}"
        assert peak < 1 << 20  # nothing proportional to the range
        # a parsed Shader: the compiler's check, before generating anything
        with pytest.raises(ShaderLimitError) as info2:
            ctx.create_fs_state(pipe.ShaderState(tokens=parse(HUGE_RANGE)))
        assert str(info2.value) == f"TGSI line 2: {HUGE_MESSAGE}"
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    finally:
        ctx.destroy()


# -- every register file at its limit and one beyond ---------------------------------------------

# (header + declarations at the limit, a body using the last register, expected
# OUT[0], the declaration one beyond, the number the error points at, the message)
FILES = [
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL TEMP[0..4095]\nIMM[0] FLT32 {1.5, 2.5, 3.5, 4.5}",
        "MOV TEMP[4095], IMM[0]\nMOV OUT[0], TEMP[4095]",
        [1.5, 2.5, 3.5, 4.5],
        "DCL TEMP[4096]",
        "4096",
        "TEMP[4096] is beyond PIPE_SHADER_CAP_MAX_TEMPS: numpipe has TEMP[0..4095]",
    ),
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL IN[0..31], GENERIC[0], PERSPECTIVE",
        "MOV OUT[0], IN[31]",
        [31.0, 31.0, 31.0, 31.0],
        "DCL IN[32], GENERIC[32], PERSPECTIVE",
        "32",
        "IN[32] is beyond PIPE_SHADER_CAP_MAX_INPUTS: numpipe has IN[0..31]",
    ),
    (
        "VERT\nDCL OUT[0..31]\nIMM[0] FLT32 {1.0, 2.0, 3.0, 4.0}",
        "MOV OUT[31], IMM[0]\nMOV OUT[0], OUT[31]",
        [1.0, 2.0, 3.0, 4.0],
        "DCL OUT[32]",
        "32",
        "OUT[32] is beyond PIPE_SHADER_CAP_MAX_OUTPUTS: numpipe has OUT[0..31]",
    ),
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL CONST[15][0..4095]",
        "MOV OUT[0], CONST[15][4095]",
        [0.0, 0.0, 0.0, 0.0],  # (no buffer bound: reads 0)
        "DCL CONST[15][4096]",
        "4096",
        "CONST[4096] is beyond PIPE_SHADER_CAP_MAX_CONST_BUFFER_SIZE: numpipe has CONST[0..4095]",
    ),
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL CONST[15][0]",
        "MOV OUT[0], CONST[15][0]",
        [0.0, 0.0, 0.0, 0.0],
        "DCL CONST[16][0]",
        "16",
        "constant buffer 16 is beyond PIPE_SHADER_CAP_MAX_CONST_BUFFERS: numpipe has buffers 0..15",
    ),
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL SAMP[31]\nDCL SVIEW[31], 2D, FLOAT",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL SAMP[32]",
        "32",
        "SAMP[32] is beyond PIPE_SHADER_CAP_MAX_TEXTURE_SAMPLERS: numpipe has SAMP[0..31]",
    ),
    (
        "FRAG\nDCL OUT[0], COLOR\nDCL SVIEW[31], 2D, FLOAT",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL SVIEW[32], 2D, FLOAT",
        "32",
        "SVIEW[32] is beyond PIPE_SHADER_CAP_MAX_SAMPLER_VIEWS: numpipe has SVIEW[0..31]",
    ),
    (
        "COMP\nDCL OUT[0]\nDCL BUFFER[31]",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL BUFFER[32]",
        "32",
        "BUFFER[32] is beyond PIPE_SHADER_CAP_MAX_SHADER_BUFFERS: numpipe has BUFFER[0..31]",
    ),
    (
        "COMP\nDCL OUT[0]\nDCL IMAGE[31], 2D, PIPE_FORMAT_R32_UINT",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL IMAGE[32], 2D, PIPE_FORMAT_R32_UINT",
        "32",
        "IMAGE[32] is beyond PIPE_SHADER_CAP_MAX_SHADER_IMAGES: numpipe has IMAGE[0..31]",
    ),
    (
        "VERT\nDCL OUT[0]\nDCL ADDR[0..15]\nIMM[0] FLT32 {3.0, 0.0, 0.0, 0.0}",
        "ARL ADDR[15].x, IMM[0].xxxx\nI2F OUT[0], ADDR[15].xxxx",
        [3.0, 3.0, 3.0, 3.0],
        "DCL ADDR[16]",
        "16",
        "ADDR[16] is beyond numpipe's limit of address registers: numpipe has ADDR[0..15]",
    ),
    (
        "COMP\nDCL OUT[0]\nDCL SV[63], THREAD_ID",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL SV[64], BLOCK_ID",
        "64",
        "SV[64] is beyond numpipe's limit of system values: numpipe has SV[0..63]",
    ),
    (
        "COMP\nDCL OUT[0]\nDCL MEMORY[31], SHARED",
        "MOV OUT[0], IMM[0]",
        None,
        "DCL MEMORY[32], SHARED",
        "32",
        "MEMORY[32] is beyond numpipe's limit of memory registers: numpipe has MEMORY[0..31]",
    ),
]


@pytest.mark.parametrize(("head", "body", "want", "beyond", "token", "message"), FILES)
def test_each_register_file_at_its_limit_and_one_beyond(head, body, want, beyond, token, message):
    if "IMM[0]" in body and "IMM[0]" not in head:
        head += "\nIMM[0] FLT32 {0.0, 0.0, 0.0, 0.0}"
    text = f"{head}\n{body}\nEND\n"
    inputs = [[np.full(4, float(r), F32)] * 4 for r in range(32)]
    out = run(text, inputs=inputs)
    if want is not None:
        assert [float(c[0]) for c in out[0]] == want
    lines = head.count("\n") + 2
    refused(f"{head}\n{beyond}\n{body}\nEND\n", lines, beyond.index(token) + 1, message)


@pytest.mark.parametrize(
    ("operand", "column", "message"),
    [
        (
            "TEMP[4096]",
            5,
            "TEMP[4096] is beyond PIPE_SHADER_CAP_MAX_TEMPS: numpipe has TEMP[0..4095]",
        ),
        ("OUT[40]", 5, "OUT[40] is beyond PIPE_SHADER_CAP_MAX_OUTPUTS: numpipe has OUT[0..31]"),
        (
            "TEMP[0], CONST[99][0]",
            14,
            "constant buffer 99 is beyond PIPE_SHADER_CAP_MAX_CONST_BUFFERS: numpipe has "
            "buffers 0..15",
        ),
        (
            "TEMP[0], TEMP[ADDR[16].x+7]",
            14,
            "ADDR[16] is beyond numpipe's limit of address registers: numpipe has ADDR[0..15]",
        ),
    ],
)
def test_operands_beyond_the_limits_are_refused(operand, column, message):
    dst_src = operand if "," in operand else f"{operand}, IMM[0]"
    text = f"FRAG\nIMM[0] FLT32 {{0.0, 0.0, 0.0, 0.0}}\nMOV {dst_src}\nEND\n"
    refused(text, 3, column, message)


def test_immediates_at_the_limit_and_one_beyond():
    imms = "\n".join(f"IMM[{i}] FLT32 {{{i}.0, 0.0, 0.0, 0.0}}" for i in range(4096))
    text = f"VERT\nDCL OUT[0]\n{imms}\nMOV OUT[0], IMM[4095].xxxx\nEND\n"
    assert float(run(text)[0][0][0]) == 4095.0
    extra = "IMM[4096] FLT32 {1.0, 0.0, 0.0, 0.0}"
    bad = f"VERT\nDCL OUT[0]\n{imms}\n{extra}\nMOV OUT[0], IMM[0].xxxx\nEND\n"
    refused(bad, 4099, 1, "IMM[4096] is beyond numpipe's limit of 4096 immediates")


def test_a_register_declared_twice_is_refused():
    text = "FRAG\nDCL TEMP[0..3]\nDCL TEMP[3..5]\nEND\n"
    refused(text, 3, 5, "TEMP[3] is declared twice")
    # different constant buffers are different registers
    ok = "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0..3]\nDCL CONST[1][0..3]\n"
    ok += "MOV OUT[0], CONST[1][3]\nEND\n"
    assert [float(c[0]) for c in run(ok)[0]] == [0.0] * 4


# -- control flow at the limit -----------------------------------------------------------------

OPENERS = {
    "loop": ("BGNLOOP", "BRK\nENDLOOP"),
    "if": ("IF IN[0].xxxx", "ENDIF"),
    "uif": ("UIF IN[0].yyyy", "ENDIF"),
    "else": ("IF IN[0].zzzz\nELSE", "ENDIF"),
    "switch": ("SWITCH IMM[0].yyyy\nDEFAULT", "BRK\nENDSWITCH"),
}


def _nested(kinds: list[str]) -> str:
    """Each level adds 1 to TEMP[0].x before opening the next; OUT[0].x = the
    levels a lane entered."""
    head = [
        "FRAG",
        "DCL IN[0], GENERIC[0], PERSPECTIVE",
        "DCL OUT[0], COLOR",
        "DCL TEMP[0]",
        "IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}",
        "MOV TEMP[0], IMM[0].yyyy",
    ]
    opens = [OPENERS[k][0] + "\nADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx" for k in kinds]
    closes = [OPENERS[k][1] for k in reversed(kinds)]
    return "\n".join([*head, *opens, *closes, "MOV OUT[0], TEMP[0]", "END", ""])


_OPENING = {"BGNLOOP", "IF", "UIF", "SWITCH"}


def _kinds(depth: int, pattern: str) -> list[str]:
    order = list(OPENERS) if pattern == "mixed" else [pattern]
    return [order[i % len(order)] for i in range(depth)]


@pytest.mark.parametrize("pattern", ["loop", "if", "mixed"])
def test_control_flow_nests_to_the_cap_and_not_one_level_more(pattern):
    # lanes: x (IF) 1, 1, 0, 1; y (UIF) bits 1, 1, 1, 0; z (IF/ELSE: the ELSE is taken) 0
    x = np.array([1, 1, 0, 1], F32)
    y = np.array([1, 1, 1, 0], U32).view(F32)
    inputs = [[x, y, np.zeros(4, F32), np.ones(4, F32)]]
    text = _nested(_kinds(80, pattern))
    got = [float(v) for v in run(text, inputs=inputs)[0][0]]
    if pattern == "loop":
        want = [80.0] * 4
    elif pattern == "if":
        want = [80.0, 80.0, 0.0, 80.0]
    else:  # loop, if, uif, else, switch, ...: lane 2 stops at the first IF, lane 3 at the UIF
        want = [80.0, 80.0, 1.0, 2.0]
    assert got == want
    deeper = _nested(_kinds(81, pattern))
    opcode = OPENERS[_kinds(81, pattern)[80]][0].split()[0]
    openers = [i for i, t in enumerate(deeper.split("\n")) if t.split(" ")[0] in _OPENING]
    line = openers[80] + 1
    refused(
        deeper,
        line,
        1,
        f"{opcode} opens control flow 81 levels deep, beyond "
        "PIPE_SHADER_CAP_MAX_CONTROL_FLOW_DEPTH (80)",
    )


def test_eighty_nested_ifs_draw_through_the_pipeline():
    """The cap through a real draw: 80 nested IFs each add 1/128 to red."""
    from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

    lines = [
        "FRAG",
        "DCL IN[0], GENERIC[0], PERSPECTIVE",
        "DCL OUT[0], COLOR",
        "DCL TEMP[0]",
        "IMM[0] FLT32 {0.0078125, 0.0, 1.0, 0.0}",
        "MOV TEMP[0], IMM[0].yyyz",
    ]
    lines += ["IF IN[0].wwww", "ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx"] * 80
    lines += ["ENDIF"] * 80 + ["MOV OUT[0], TEMP[0]", "END"]
    screen = get_screen(2)
    for threaded in (False, True):
        ctx = screen.context_create(threaded=threaded)
        try:
            rt, _ = make_target(screen, ctx, 8, 8)
            bind_passthrough(ctx, fs="\n".join(lines))
            verts = np.array(
                [[-1, -1, 0, 1, 0, 0, 0, 1], [3, -1, 0, 1, 0, 0, 0, 1], [-1, 3, 0, 1, 0, 0, 0, 1]],
                F32,
            )
            set_vertices(ctx, verts)
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
            ctx.flush()
            # 80/128 = 0.625 -> rint(0.625 * 255) = 159
            assert (read_rgba8(ctx, rt) == [159, 0, 0, 255]).all()
        finally:
            ctx.destroy()


def test_every_loop_of_a_call_shares_one_iteration_budget():
    """Every ENDLOOP of a call counts against one budget (llvmpipe's loop
    limiter): K outer iterations of M inner ones pass K * (M + 1) ENDLOOPs;
    once the budget is spent each loop ends at its ENDLOOP, silently, and the
    program goes on from there."""

    def nested_loops(k: int, m: int) -> str:
        return f"""VERT
DCL OUT[0]
DCL TEMP[0..2]
IMM[0] UINT32 {{0, 1, {k}, {m}}}
MOV TEMP[0].x, IMM[0].xxxx
BGNLOOP
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  MOV TEMP[1].x, IMM[0].xxxx
  BGNLOOP
    UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy
    USGE TEMP[2].x, TEMP[1].xxxx, IMM[0].wwww
    UIF TEMP[2].xxxx
      BRK
    ENDIF
  ENDLOOP
  USGE TEMP[2].x, TEMP[0].xxxx, IMM[0].zzzz
  UIF TEMP[2].xxxx
    BRK
  ENDIF
ENDLOOP
UMUL OUT[0].x, TEMP[0].xxxx, TEMP[1].xxxx
END
"""

    def run(budget: int) -> int:
        kernel = compile_shader(nested_loops(7, 9))
        kernel._fn.__globals__["MAX_LOOP_ITERATIONS"] = budget  # this kernel only
        res = kernel(ExecEnv(n=2))
        return int(np.asarray(res.outputs[0][0]).view(U32).ravel()[0])

    assert MAX_LOOP_ITERATIONS == 65535
    assert run(MAX_LOOP_ITERATIONS) == 7 * 9
    assert run(7 * (9 + 1)) == 7 * 9  # the last ENDLOOP spends the budget: nothing cut
    # the 65th ENDLOOP is the 7th outer iteration's 5th inner one: the inner loop
    # stops with TEMP[1] = 5, the outer one BRKs at TEMP[0] = 7 as it would
    assert run(6 * (9 + 1) + 5) == 7 * 5
    # spent in the first outer iteration's inner loop, at TEMP[1] = 4: the
    # outer loop's first ENDLOOP ends it too (TEMP[0] = 1)
    assert run(4) == 1 * 4


# -- instructions at the limit ------------------------------------------------------------------


def _adds(count: int) -> str:
    """A program of ``count`` instructions: MOVs, ADDs and END."""
    body = ["MOV TEMP[0], IMM[0].yyyy"] + ["ADD TEMP[0], TEMP[0], IMM[0].xxxx"] * (count - 3)
    return "\n".join(
        [
            "VERT",
            "DCL OUT[0]",
            "DCL TEMP[0]",
            "IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}",
            *body,
            "MOV OUT[0], TEMP[0]",
            "END",
            "",
        ]
    )


@pytest.mark.slow
def test_a_program_of_max_instructions_compiles_and_runs():
    shader = parse(_adds(16384), NUMPIPE)
    assert len(shader.instructions) == 16384
    res = compile_shader(shader)(ExecEnv(n=4))
    assert [float(c) for c in res.outputs[0]] == [16381.0] * 4
    message = (
        "instruction 16385 is beyond PIPE_SHADER_CAP_MAX_INSTRUCTIONS: numpipe runs programs "
        "of at most 16384 instructions"
    )
    # refused at the 16385th instruction: what follows is never read
    with pytest.raises(TgsiSyntaxError) as info:
        compile_shader(_adds(16385) + "this is not TGSI " * 1000)
    assert str(info.value) == f"TGSI line 16389, column 1: {message}"
    too_long = Shader("VERT", instructions=(Instruction("NOP", line=7),) * 16385)
    with pytest.raises(ShaderLimitError) as info2:
        compile_shader(too_long)
    assert str(info2.value) == f"TGSI line 7: {message}"


# -- properties the driver bounds ----------------------------------------------------------------


def test_gs_invocations_and_fixed_blocks_are_bounded():
    gs = """GEOM
PROPERTY GS_INPUT_PRIMITIVE POINTS
PROPERTY GS_OUTPUT_PRIMITIVE POINTS
PROPERTY GS_MAX_OUTPUT_VERTICES 1
PROPERTY GS_INVOCATIONS @
DCL IN[][0], POSITION
DCL OUT[0], POSITION
IMM[0] UINT32 {0, 0, 0, 0}
  0: MOV OUT[0], IN[0][0]
  1: EMIT IMM[0].xxxx
  2: END
"""
    screen = get_screen(0)
    ctx = screen.context_create(threaded=False)
    try:
        ctx.create_gs_state(pipe.ShaderState(tokens=gs.replace("@", "32")))
        with pytest.raises(PipeValueError) as info:
            ctx.create_gs_state(pipe.ShaderState(tokens=gs.replace("@", "33")))
        assert str(info.value) == (
            "state.tokens may declare PROPERTY GS_INVOCATIONS up to 32 (llvmpipe's "
            "PIPE_CAP_MAX_GS_INVOCATIONS); got 33"
        )
        cs = "COMP\nPROPERTY CS_FIXED_BLOCK_WIDTH @\nPROPERTY CS_FIXED_BLOCK_HEIGHT 1\n"
        cs += "PROPERTY CS_FIXED_BLOCK_DEPTH 1\nEND\n"
        ctx.create_compute_state(pipe.ComputeState(prog=cs.replace("@", "1024")))
        with pytest.raises(PipeValueError) as info:
            ctx.create_compute_state(pipe.ComputeState(prog=cs.replace("@", "1025")))
        assert str(info.value) == (
            "state.prog declares CS_FIXED_BLOCK_WIDTH 1025; it must be in [1, 1024] "
            "(PIPE_COMPUTE_CAP_MAX_BLOCK_SIZE); got 1025"
        )
    finally:
        ctx.destroy()


# -- linear parsing, bounded messages ---------------------------------------------------------


class _CountingText(str):
    """TGSI text that counts the characters ``count`` and ``rfind`` scan."""

    scanned = 0

    def count(self, sub, start=0, end=None):
        end = len(self) if end is None else end
        _CountingText.scanned += max(0, end - start)
        return str.count(self, sub, start, end)

    def rfind(self, sub, start=0, end=None):
        end = len(self) if end is None else end
        _CountingText.scanned += max(0, end - start)
        return str.rfind(self, sub, start, end)


def test_line_numbers_cost_one_pass_over_the_text():
    """10,000 statements: the line numbers of every statement (and of an
    error at the end) scan each character about once, not once per line."""
    body = "\n".join(f"  {i}: ADD TEMP[0], TEMP[0], IMM[0].xxxx" for i in range(10_000))
    text = _CountingText(f"VERT\nDCL TEMP[0]\nIMM[0] FLT32 {{1.0, 0.0, 0.0, 0.0}}\n{body}\nEND\n")
    _CountingText.scanned = 0
    shader = parse(text)
    assert len(shader.instructions) == 10_001
    assert shader.instructions[-2].line == 10_003
    assert _CountingText.scanned <= len(text)
    _CountingText.scanned = 0
    with pytest.raises(TgsiSyntaxError) as info:
        parse(_CountingText(text + "BAD"))
    assert (info.value.line, info.value.column) == (10_005, 1)
    assert _CountingText.scanned <= 2 * len(text)


@pytest.mark.parametrize(
    ("tail", "column", "start"),
    [
        ("  " + "X" * 10_000_000, 3, "unknown statement `" + "X" * 32 + "...' "),
        ("PROPERTY " + "Y" * 10_000_000, 10, "unknown property `" + "Y" * 32 + "...' "),
    ],
)
def test_a_ten_megabyte_token_gives_a_short_message(tail, column, start):
    text = "FRAG\nDCL TEMP[0]\n" + tail + "\nEND\n"
    with pytest.raises(TgsiSyntaxError) as info:
        parse(text)
    assert (info.value.line, info.value.column) == (3, column)
    message = str(info.value)
    assert message.startswith(f"TGSI line 3, column {column}: {start}(10000000 characters)")
    assert len(message) < 200
