"""Every TGSI opcode against its formula on edge values.

Expected values are computed independently of numpipe: with Python's float
arithmetic rounded to float32 through ``struct`` (for +, -, *, /, sqrt a
double result rounded to float32 is the correctly rounded float32 result),
with ``math``, or by hand.  Each table runs twice: with per-lane values
(array code paths) and with immediates (uniform, numpy-scalar code paths).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from gallium.pipe.errors import UnsupportedError
from gallium.tgsi.compiler import ExecEnv, compile_shader

NAN = float("nan")
INF = float("inf")
INT_MIN = -(2**31)


# -- bit helpers -----------------------------------------------------------------------


def f2b(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def b2f(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def f32(x: float) -> float:
    """Round a Python float to the nearest float32 value."""
    return b2f(f2b(x))


def d2w(x: float) -> tuple[int, int]:
    q = struct.unpack("<Q", struct.pack("<d", x))[0]
    return q & 0xFFFFFFFF, q >> 32


def w2d(lo: int, hi: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", (hi << 32) | lo))[0]


def q2w(x: int) -> tuple[int, int]:
    x &= (1 << 64) - 1
    return x & 0xFFFFFFFF, x >> 32


def bits_of(value, kind: str) -> int:
    """The 32-bit word of a test value: kind 'f' float, 'i'/'u' integer."""
    if kind == "f":
        return f2b(value)
    return int(value) & 0xFFFFFFFF


def same(got_bits: int, expected, kind: str) -> bool:
    if kind == "f":
        if isinstance(expected, float) and math.isnan(expected):
            return math.isnan(b2f(got_bits))
        return got_bits == f2b(expected)
    return got_bits == int(expected) & 0xFFFFFFFF


# -- running a one-instruction shader over lanes or immediates --------------------------


def run_lanes(text: str, inputs: list[list[int]], n: int, **env) -> dict[int, np.ndarray]:
    """Run TGSI text; ``inputs[r][c]`` are per-lane 32-bit words. Returns OUT words."""
    ins = []
    for regs in inputs:
        ins.append(
            [np.array([w & 0xFFFFFFFF for w in ch], np.uint32).view(np.float32) for ch in regs]
        )
    res = compile_shader(text)(ExecEnv(n=n, inputs=ins, **env))
    out = {}
    for reg, chans in res.outputs.items():
        out[reg] = np.stack(
            [np.broadcast_to(np.asarray(c, np.float32), (n,)).view(np.uint32) for c in chans]
        )
    return out


def check_table(opcode: str, types: str, out_kind: str, cases: list) -> None:
    """``cases``: (args tuple, expected) pairs for a component-wise opcode."""
    nsrc = len(types)
    # 1) per-lane: case k in lane k, every source in all four channels.
    n = len(cases)
    inputs = []
    for j in range(nsrc):
        lane_words = [bits_of(c[0][j], types[j]) for c in cases]
        inputs.append([lane_words] * 4)
    srcs = ", ".join(f"IN[{j}]" for j in range(nsrc))
    text = (
        f"FRAG\nDCL IN[0..{max(nsrc - 1, 0)}]\nDCL OUT[0]\n  0: {opcode} OUT[0], {srcs}\n  1: END\n"
    )
    out = run_lanes(text, inputs, n)[0]
    for k, (args, expected) in enumerate(cases):
        for c in range(4):
            got = int(out[c][k])
            assert same(got, expected, out_kind), (opcode, args, hex(got), expected, "lane")
    # 2) uniform: the same cases through immediates, 32 (PIPE_SHADER_CAP_MAX_OUTPUTS)
    # a program.
    for first in range(0, n, 32):
        chunk = cases[first : first + 32]
        imms, lines = [], []
        for k, (args, _expected) in enumerate(chunk):
            words = [bits_of(a, t) for a, t in zip(args, types)]
            imm = ", ".join(str(w) for w in words + [0] * (4 - nsrc))
            imms.append(f"IMM[{k}] UINT32 {{{imm}}}")
            ops = ", ".join(f"IMM[{k}].{'xyzw'[j] * 4}" for j in range(nsrc))
            lines.append(f"{opcode} OUT[{k}], {ops}")
        body = "\n".join(f"  {i}: {line}" for i, line in enumerate([*lines, "END"]))
        text = f"FRAG\nDCL OUT[0..{len(chunk) - 1}]\n" + "\n".join(imms) + "\n" + body + "\n"
        out = run_lanes(text, [], 1)
        for k, (args, expected) in enumerate(chunk):
            for c in range(4):
                got = int(out[k][c][0])
                assert same(got, expected, out_kind), (opcode, args, hex(got), expected, "uniform")


# -- float arithmetic -----------------------------------------------------------------

DENORM = b2f(1)  # 2**-149
FMAX = b2f(0x7F7FFFFF)

FLOAT_TABLES = {
    "ADD": (
        "ff",
        [
            ((1.5, 2.25), 3.75),
            ((INF, -INF), NAN),
            ((-0.0, -0.0), -0.0),
            ((-0.0, 0.0), 0.0),
            ((DENORM, DENORM), b2f(2)),
            ((FMAX, FMAX), INF),
            ((1.0, 2.0**-24), 1.0),  # halfway: ties to even
            ((1.0, 3 * 2.0**-25), f32(1.0 + 3 * 2.0**-25)),
            ((NAN, 1.0), NAN),
        ],
    ),
    "SUB": ("ff", [((5.0, 7.5), -2.5), ((INF, INF), NAN), ((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0)]),
    "MUL": (
        "ff",
        [
            ((3.0, -2.5), -7.5),
            ((INF, 0.0), NAN),
            ((-2.0, 0.0), -0.0),
            ((1e-38, 1e-10), f32(f32(1e-38) * f32(1e-10))),
            ((FMAX, 2.0), INF),
            ((2.0**-100, 2.0**-100), 0.0),
        ],
    ),
    "DIV": (
        "ff",
        [
            ((1.0, 0.0), INF),
            ((-1.0, 0.0), -INF),
            ((0.0, 0.0), NAN),
            ((1.0, 3.0), f32(1.0 / 3.0)),
            ((-0.0, 5.0), -0.0),
            ((INF, INF), NAN),
        ],
    ),
    "MIN": (
        "ff",
        [
            ((NAN, 1.0), 1.0),
            ((1.0, NAN), 1.0),
            ((-INF, 5.0), -INF),
            ((3.0, 2.0), 2.0),
            ((DENORM, 0.0), 0.0),
        ],
    ),
    "MAX": (
        "ff",
        [((NAN, 1.0), 1.0), ((1.0, NAN), 1.0), ((-INF, 5.0), 5.0), ((DENORM, 0.0), DENORM)],
    ),
    "ABS": ("f", [((-0.0,), 0.0), ((-INF,), INF), ((-3.5,), 3.5), ((-DENORM,), DENORM)]),
    "FRC": ("f", [((1.25,), 0.25), ((-1.25,), 0.75), ((-0.0,), 0.0), ((INF,), NAN), ((3.0,), 0.0)]),
    "FLR": (
        "f",
        [((-1.5,), -2.0), ((2.5,), 2.0), ((-0.0,), -0.0), ((-DENORM,), -1.0), ((INF,), INF)],
    ),
    "CEIL": ("f", [((-1.5,), -1.0), ((-0.5,), -0.0), ((DENORM,), 1.0), ((2.0,), 2.0)]),
    "TRUNC": ("f", [((-1.7,), -1.0), ((1.7,), 1.0), ((-0.3,), -0.0), ((NAN,), NAN)]),
    "ROUND": (
        "f",
        [
            ((2.5,), 2.0),
            ((3.5,), 4.0),
            ((-2.5,), -2.0),
            ((0.5,), 0.0),
            ((-0.5,), -0.0),
            ((1.5,), 2.0),
            ((2.6,), 3.0),
        ],
    ),
    "SSG": (
        "f",
        [
            ((-3.0,), -1.0),
            ((0.0,), 0.0),
            ((-0.0,), 0.0),
            ((NAN,), 0.0),
            ((INF,), 1.0),
            ((-DENORM,), -1.0),
        ],
    ),
    "SLT": ("ff", [((1.0, 2.0), 1.0), ((2.0, 2.0), 0.0), ((NAN, 1.0), 0.0), ((-0.0, 0.0), 0.0)]),
    "SGE": ("ff", [((2.0, 2.0), 1.0), ((1.0, 2.0), 0.0), ((NAN, NAN), 0.0), ((-0.0, 0.0), 1.0)]),
    "SGT": ("ff", [((3.0, 2.0), 1.0), ((2.0, 2.0), 0.0), ((NAN, 1.0), 0.0)]),
    "SLE": ("ff", [((2.0, 2.0), 1.0), ((3.0, 2.0), 0.0), ((NAN, 1.0), 0.0)]),
    "SEQ": ("ff", [((2.0, 2.0), 1.0), ((-0.0, 0.0), 1.0), ((NAN, NAN), 0.0)]),
    "SNE": ("ff", [((2.0, 2.0), 0.0), ((NAN, NAN), 1.0), ((1.0, 2.0), 1.0)]),
    "CMP": (
        "fff",
        [
            ((-1.0, 10.0, 20.0), 10.0),
            ((0.0, 10.0, 20.0), 20.0),
            ((-0.0, 10.0, 20.0), 20.0),
            ((NAN, 10.0, 20.0), 20.0),
            ((-INF, 10.0, 20.0), 10.0),
        ],
    ),
    "CND": (
        "fff",
        [((10.0, 20.0, 0.5), 20.0), ((10.0, 20.0, 0.6), 10.0), ((10.0, 20.0, NAN), 20.0)],
    ),
    "CLAMP": (
        "fff",
        [
            ((5.0, 0.0, 1.0), 1.0),
            ((-5.0, 0.0, 1.0), 0.0),
            ((0.25, 0.0, 1.0), 0.25),
            ((NAN, 0.0, 1.0), NAN),  # tgsi.rst: (x < y) ? y : (x > z) ? z : x
        ],
    ),
    "LRP": ("fff", [((0.25, 4.0, 8.0), 7.0), ((1.0, 3.0, 9.0), 3.0), ((0.0, 3.0, 9.0), 9.0)]),
    "MAD": (
        "fff",
        [
            ((2.0, 3.0, 4.0), 10.0),
            # (1 + 2^-12)^2 rounds to 1 + 2^-11 before the add: two roundings give 0.
            ((1 + 2.0**-12, 1 + 2.0**-12, -(1 + 2.0**-11)), 0.0),
            ((INF, 0.0, 1.0), NAN),
            ((2.0, 3.0, -6.0), 0.0),
        ],
    ),
    "FMA": (
        "fff",
        [
            ((2.0, 3.0, 4.0), 10.0),
            # Fused: the exact product survives, 2^-24.
            ((1 + 2.0**-12, 1 + 2.0**-12, -(1 + 2.0**-11)), 2.0**-24),
            ((INF, 0.0, 1.0), NAN),
            ((2.0**100, 2.0**100, 1.0), INF),
            # 2^-150 + 2^-149 = 1.5 * 2^-149: a tie, to even = 2^-148.
            ((2.0**-75, 2.0**-75, DENORM), b2f(2)),
            ((1e30, 1e30, -INF), -INF),
        ],
    ),
    "LDEXP": (
        "fi",
        [
            ((1.5, 3), 12.0),
            ((1.0, -149), DENORM),
            ((1.0, 128), INF),
            ((3.0, -150), b2f(2)),  # 1.5 * 2^-149 ties to even
            ((-0.0, 5), -0.0),
        ],
    ),
    "FSLT": ("ff", [((1.0, 2.0), 0xFFFFFFFF), ((NAN, 2.0), 0), ((2.0, 2.0), 0)]),
    "FSGE": ("ff", [((2.0, 2.0), 0xFFFFFFFF), ((NAN, 2.0), 0), ((-0.0, 0.0), 0xFFFFFFFF)]),
    "FSEQ": ("ff", [((2.0, 2.0), 0xFFFFFFFF), ((NAN, NAN), 0), ((-0.0, 0.0), 0xFFFFFFFF)]),
    "FSNE": ("ff", [((2.0, 2.0), 0), ((NAN, NAN), 0xFFFFFFFF)]),
}

FLOAT_OUT_KIND = {"FSLT": "u", "FSGE": "u", "FSEQ": "u", "FSNE": "u"}


@pytest.mark.parametrize("opcode", sorted(FLOAT_TABLES))
def test_float_componentwise(opcode):
    types, cases = FLOAT_TABLES[opcode]
    check_table(opcode, types, FLOAT_OUT_KIND.get(opcode, "f"), cases)


SCALAR_TABLES = {
    "RCP": (
        "f",
        [((0.0,), INF), ((-0.0,), -INF), ((4.0,), 0.25), ((INF,), 0.0), ((3.0,), f32(1 / 3))],
    ),
    # tgsi.rst: 1 / sqrt(|x|)
    "RSQ": ("f", [((4.0,), 0.5), ((-4.0,), 0.5), ((0.0,), INF), ((-0.0,), INF), ((INF,), 0.0)]),
    "SQRT": ("f", [((16.0,), 4.0), ((-1.0,), NAN), ((-0.0,), -0.0), ((2.0,), f32(math.sqrt(2)))]),
    "EX2": (
        "f",
        [
            ((3.0,), 8.0),
            ((-INF,), 0.0),
            ((INF,), INF),
            ((-126.0,), 2.0**-126),
            ((-149.0,), DENORM),
            ((128.0,), INF),
            ((0.0,), 1.0),
        ],
    ),
    "LG2": (
        "f",
        [
            ((8.0,), 3.0),
            ((0.0,), -INF),
            ((-1.0,), NAN),
            ((INF,), INF),
            ((1.0,), 0.0),
            ((DENORM,), -149.0),
        ],
    ),
    "SIN": ("f", [((0.0,), 0.0), ((-0.0,), -0.0), ((INF,), NAN)]),
    "COS": ("f", [((0.0,), 1.0), ((INF,), NAN)]),
    "RCC": (
        "f",
        [
            ((0.0,), f32(1.884467e019)),
            ((2.0,), 0.5),
            ((1e-30,), f32(1.884467e019)),
            ((-1e30,), f32(-5.42101e-020)),
            ((-4.0,), -0.25),
        ],
    ),
}


def _replicated_check(opcode, types, cases, srcs_of):
    n = len(cases)
    inputs = []
    for j in range(len(types)):
        inputs.append([[bits_of(c[0][j], types[j]) for c in cases]] * 4)
    text = f"FRAG\nDCL IN[0..3]\nDCL OUT[0]\n  0: {opcode} OUT[0].yw, {srcs_of}\n  1: END\n"
    out = run_lanes(text, inputs, n)[0]
    for k, (args, expected) in enumerate(cases):
        # Replicated into y and w; x and z are not in the write mask and stay 0.
        for c in (1, 3):
            assert same(int(out[c][k]), expected, "f"), (opcode, args, hex(int(out[c][k])))
        assert out[0][k] == 0 and out[2][k] == 0


@pytest.mark.parametrize("opcode", sorted(SCALAR_TABLES))
def test_scalar_replicated(opcode):
    types, cases = SCALAR_TABLES[opcode]
    _replicated_check(opcode, types, cases, "IN[0].xxxx")
    check_table(opcode, types, "f", cases)


def test_pow_special_values():
    cases = [
        ((2.0, 10.0), 1024.0),
        ((0.0, 0.0), 1.0),
        ((-8.0, 1 / 3), NAN),
        ((INF, -1.0), 0.0),
        ((0.0, -1.0), INF),
        ((-2.0, 3.0), -8.0),
        ((NAN, 0.0), 1.0),
    ]
    _replicated_check("POW", "ff", cases, "IN[0].xxxx, IN[1].xxxx")
    check_table("POW", "ff", "f", cases)


def ulps(a: float, b: float) -> int:
    return abs(np.int64(f2b(a) ^ 0) - np.int64(f2b(b) ^ 0)) if a * b >= 0 else 1 << 31


@pytest.mark.parametrize(
    "opcode,fn,x",
    [
        ("SIN", math.sin, 1.0),
        ("SIN", math.sin, -2.5),
        ("COS", math.cos, 1.0),
        ("COS", math.cos, 3.0),
        ("EX2", lambda v: 2.0**v, 0.3),
        ("LG2", math.log2, 10.0),
        ("LG2", math.log2, 0.7),
    ],
)
def test_transcendentals_within_one_ulp(opcode, fn, x):
    """Non-exact results: within 1 ulp of the true value of the float32 input."""
    xf = f32(x)
    out = run_lanes(
        f"FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: {opcode} OUT[0], IN[0]\n  1: END\n",
        [[[f2b(xf)]] * 4],
        1,
    )[0]
    got = b2f(int(out[0][0]))
    assert ulps(got, f32(fn(xf))) <= 1, (got, fn(xf))


# -- dot products and vector formulas ---------------------------------------------------


def run_vec(text: str, vectors: list[tuple[float, ...]]) -> list[float]:
    inputs = [[[f2b(v[c])] for c in range(4)] for v in vectors]
    out = run_lanes(text, inputs, 1)[0]
    return [b2f(int(out[c][0])) for c in range(4)]


def one(op: str, nsrc: int) -> str:
    srcs = ", ".join(f"IN[{j}]" for j in range(nsrc))
    return f"FRAG\nDCL IN[0..3]\nDCL OUT[0]\n  0: {op} OUT[0], {srcs}\n  1: END\n"


def test_dot_products():
    a, b = (1.0, 2.0, 3.0, 4.0), (5.0, 6.0, 7.0, 8.0)
    assert run_vec(one("DP2", 2), [a, b]) == [17.0] * 4
    assert run_vec(one("DP3", 2), [a, b]) == [38.0] * 4
    assert run_vec(one("DP4", 2), [a, b]) == [70.0] * 4
    assert run_vec(one("DPH", 2), [a, b]) == [46.0] * 4  # 5 + 12 + 21 + 8
    assert run_vec(one("DP2A", 3), [a, b, (5.0, 0, 0, 0)]) == [22.0] * 4
    r = run_vec(one("DP3", 2), [(INF, 0, 0, 0), (0.0, 1, 1, 1)])
    assert all(math.isnan(v) for v in r)


def test_lit():
    assert run_vec(one("LIT", 1), [(2.0, 4.0, 0.0, 0.5)]) == [1.0, 2.0, 2.0, 1.0]
    assert run_vec(one("LIT", 1), [(-1.0, 4.0, 0.0, 0.5)]) == [1.0, 0.0, 0.0, 1.0]
    # w clamps to 128: 2^200 would be inf, 2^128 overflows float32 anyway -> inf;
    # with y = 0.5 the clamp is visible: 0.5^128 = 2^-128 (a float32 denormal).
    assert run_vec(one("LIT", 1), [(1.0, 0.5, 0.0, 200.0)]) == [1.0, 1.0, 2.0**-128, 1.0]
    assert run_vec(one("LIT", 1), [(1.0, -1.0, 0.0, 2.0)]) == [1.0, 1.0, 0.0, 1.0]


def test_exp_log():
    assert run_vec(one("EXP", 1), [(3.0, 0, 0, 0)]) == [8.0, 0.0, 8.0, 1.0]
    x, y, z, w = run_vec(one("EXP", 1), [(-1.5, 0, 0, 0)])
    assert (x, y, w) == (0.25, 0.5, 1.0)
    assert ulps(z, f32(2.0**-1.5)) <= 1
    assert run_vec(one("LOG", 1), [(8.0, 0, 0, 0)]) == [3.0, 1.0, 3.0, 1.0]
    x, y, z, w = run_vec(one("LOG", 1), [(-10.0, 0, 0, 0)])
    assert (x, y, w) == (3.0, 1.25, 1.0)
    assert ulps(z, f32(math.log2(10.0))) <= 1


def test_vector_formulas():
    assert run_vec(one("DST", 2), [(9.0, 2.0, 3.0, 9.0), (9.0, 4.0, 9.0, 5.0)]) == [1, 8, 3, 5]
    assert run_vec(one("XPD", 2), [(1.0, 2.0, 3.0, 0), (4.0, 5.0, 6.0, 0)]) == [-3, 6, -3, 1]
    assert run_vec(one("SCS", 1), [(0.0, 9, 9, 9)]) == [1.0, 0.0, 0.0, 1.0]
    s = f32(1.0 / f32(math.sqrt(25.0)))
    assert run_vec(one("NRM", 1), [(3.0, 4.0, 0.0, 9.0)]) == [f32(3 * s), f32(4 * s), 0.0, 1.0]
    assert run_vec(one("NRM4", 1), [(1.0, 1.0, 1.0, 1.0)]) == [0.5] * 4
    assert run_vec(one("RFL", 2), [(0.0, 0.0, 2.0, 0), (1.0, 2.0, 3.0, 0)]) == [-1, -2, 3, 1]
    assert run_vec(one("X2D", 3), [(1, 2, 0, 0), (3, 4, 0, 0), (5, 6, 7, 8)]) == [40, 55, 40, 55]


def test_sfl_str():
    # The legacy set-on-false/true opcodes take (and ignore) two sources.
    text = (
        "FRAG\nDCL IN[0]\nDCL OUT[0..1]\n"
        "  0: SFL OUT[0], IN[0], IN[0]\n  1: STR OUT[1], IN[0], IN[0]\n  2: END\n"
    )
    out = run_lanes(text, [[[f2b(NAN)]] * 4], 1)
    assert [b2f(int(w[0])) for w in out[0]] == [0.0] * 4
    assert [b2f(int(w[0])) for w in out[1]] == [1.0] * 4


# -- packing ------------------------------------------------------------------------------


def test_pack_unpack():
    def word(op, vec):
        out = run_lanes(one(op, 1), [[[f2b(v)] for v in vec]], 1)[0]
        return [int(out[c][0]) for c in range(4)]

    assert word("PK2H", (1.0, -2.0, 0, 0)) == [0xC0003C00] * 4
    assert word("PK2H", (65520.0, 0.0, 0, 0)) == [0x00007C00] * 4  # rounds to half inf
    assert word("PK2US", (0.5, 1.0, 0, 0)) == [0xFFFF8000] * 4  # 32767.5 -> 32768
    assert word("PK4UB", (0.0, 0.5, 1.0, 2.0)) == [0xFFFF8000] * 4
    # bias-128: round(127 x + 128), x clamped to [-128/127, 1]
    assert word("PK4B", (-1.0, 0.0, 1.0, -2.0)) == [0x00FF8001] * 4

    def unpack(op, w):
        out = run_lanes(one(op, 1), [[[w]] * 4], 1)[0]
        return [b2f(int(out[c][0])) for c in range(4)]

    assert unpack("UP2H", 0xC0003C00) == [1.0, -2.0, 1.0, -2.0]
    assert unpack("UP2US", 0xFFFF8000) == [f32(32768 / 65535), 1.0, f32(32768 / 65535), 1.0]
    assert unpack("UP4UB", 0x00FF8001) == [f32(1 / 255), f32(128 / 255), 1.0, 0.0]
    assert unpack("UP4B", 0x00FF8001) == [-1.0, 0.0, 1.0, f32(-128 / 127)]


# -- integers --------------------------------------------------------------------------

INT_TABLES = {
    "UADD": ("uu", "u", [((0xFFFFFFFF, 1), 0), ((2**31, 2**31), 0), ((5, 7), 12)]),
    "UMUL": ("uu", "u", [((0x10000, 0x10000), 0), ((0xFFFFFFFF, 0xFFFFFFFF), 1), ((7, 6), 42)]),
    "UMAD": ("uuu", "u", [((2**31, 2, 5), 5), ((3, 4, 0xFFFFFFFF), 11)]),
    "INEG": ("i", "i", [((INT_MIN,), INT_MIN), ((5,), -5), ((0,), 0)]),
    "IABS": ("i", "i", [((INT_MIN,), INT_MIN), ((-7,), 7), ((7,), 7)]),
    "ISSG": ("i", "i", [((-5,), -1), ((0,), 0), ((7,), 1), ((INT_MIN,), -1)]),
    "IMAX": ("ii", "i", [((-1, 1), 1), ((INT_MIN, 2**31 - 1), 2**31 - 1)]),
    "IMIN": ("ii", "i", [((-1, 1), -1), ((INT_MIN, 2**31 - 1), INT_MIN)]),
    "UMAX": ("uu", "u", [((0xFFFFFFFF, 1), 0xFFFFFFFF), ((3, 9), 9)]),
    "UMIN": ("uu", "u", [((0xFFFFFFFF, 1), 1), ((3, 9), 3)]),
    "AND": ("uu", "u", [((0xF0F0, 0xFF00), 0xF000)]),
    "OR": ("uu", "u", [((0xF0F0, 0xFF00), 0xFFF0)]),
    "XOR": ("uu", "u", [((0xF0F0, 0xFF00), 0x0FF0), ((0xFFFFFFFF, 1), 0xFFFFFFFE)]),
    "NOT": ("u", "u", [((0,), 0xFFFFFFFF), ((0x12345678,), 0xEDCBA987)]),
    # Shift counts use their low five bits.
    "SHL": (
        "uu",
        "u",
        [((1, 31), 0x80000000), ((1, 32), 1), ((1, 33), 2), ((3, 0xFFFFFFFF), 0x80000000)],
    ),
    "USHR": ("uu", "u", [((0x80000000, 31), 1), ((0x80000000, 32), 0x80000000), ((0xF0, 36), 0xF)]),
    "ISHR": ("ii", "i", [((INT_MIN, 31), -1), ((-8, 33), -4), ((-8, 32), -8), ((64, 3), 8)]),
    "SHR": ("ii", "i", [((-8, 1), -4), ((-8, 33), -4)]),
    "USEQ": ("uu", "u", [((5, 5), 0xFFFFFFFF), ((5, 6), 0)]),
    "USNE": ("uu", "u", [((5, 5), 0), ((5, 6), 0xFFFFFFFF)]),
    "USLT": ("uu", "u", [((0, 0xFFFFFFFF), 0xFFFFFFFF), ((0xFFFFFFFF, 0), 0)]),
    "USGE": ("uu", "u", [((0xFFFFFFFF, 0), 0xFFFFFFFF), ((0, 1), 0)]),
    "ISLT": ("ii", "u", [((-1, 0), 0xFFFFFFFF), ((0, -1), 0)]),
    "ISGE": ("ii", "u", [((0, -1), 0xFFFFFFFF), ((INT_MIN, 0), 0)]),
    "UCMP": (
        "uff",
        "f",
        [((0, 1.0, 2.0), 2.0), ((0x80000000, 1.0, 2.0), 1.0), ((1, NAN, 2.0), NAN)],
    ),
    "I2F": (
        "i",
        "f",
        [((INT_MIN,), -(2.0**31)), ((16777217,), 16777216.0), ((-1,), -1.0), ((0,), 0.0)],
    ),
    "U2F": (
        "u",
        "f",
        [((0xFFFFFFFF,), 4294967296.0), ((16777217,), 16777216.0), ((2**31,), 2.0**31)],
    ),
    # Measured on softpipe (x86 cvttss2si "integer indefinite").
    "F2I": (
        "f",
        "i",
        [
            ((NAN,), INT_MIN),
            ((INF,), INT_MIN),
            ((-INF,), INT_MIN),
            ((3e9,), INT_MIN),
            ((-2147483648.0,), INT_MIN),
            ((2147483520.0,), 2147483520),
            ((-1.5,), -1),
            ((-0.5,), 0),
            ((1e20,), INT_MIN),
            ((2.5,), 2),
            ((-0.0,), 0),
        ],
    ),
    "F2U": (
        "f",
        "u",
        [
            ((NAN,), 0x80000000),
            ((INF,), 0),
            ((-INF,), 0x80000000),
            ((3e9,), 3000000000),
            ((-3e9,), 0x80000000),
            ((2147483648.0,), 0x80000000),
            ((4294967296.0,), 0),
            ((4294967040.0,), 0xFFFFFF00),
            ((-1.5,), 0xFFFFFFFF),
            ((-2.5,), 0xFFFFFFFE),
            ((1e20,), 0),
            ((-1e20,), 0x80000000),
            ((5e9,), 0),
            ((1.5,), 1),
        ],
    ),
    "ARL": ("f", "i", [((-0.5,), -1), ((1.9,), 1), ((NAN,), INT_MIN), ((-3.0,), -3)]),
    # tgsi_exec: floor(x + 0.5)
    "ARR": ("f", "i", [((2.5,), 3), ((-2.5,), -2), ((1.4,), 1), ((-1.6,), -2)]),
    "UARL": ("i", "i", [((-7,), -7), ((12,), 12)]),
    "IDIV": (
        "ii",
        "i",
        [
            ((7, 0), 0),
            ((-7, 2), -3),
            ((7, -2), -3),
            ((INT_MIN, -1), INT_MIN),
            ((-7, 0), 0),
            ((9, 3), 3),
        ],
    ),
    "MOD": (
        "ii",
        "i",
        [((7, 0), -1), ((-7, 2), -1), ((7, -2), 1), ((INT_MIN, -1), 0), ((9, 4), 1)],
    ),
    "UDIV": (
        "uu",
        "u",
        [((7, 0), 0xFFFFFFFF), ((0xFFFFFFFF, 2), 0x7FFFFFFF), ((0, 0), 0xFFFFFFFF)],
    ),
    "UMOD": ("uu", "u", [((7, 0), 0xFFFFFFFF), ((0xFFFFFFFF, 10), 5)]),
    "IMUL_HI": (
        "ii",
        "i",
        [((2**31 - 1, 2**31 - 1), 0x3FFFFFFF), ((-1, 1), -1), ((INT_MIN, INT_MIN), 2**30)],
    ),
    "UMUL_HI": ("uu", "u", [((0xFFFFFFFF, 0xFFFFFFFF), 0xFFFFFFFE), ((2**16, 2**16), 1)]),
    "SAD": ("uuu", "u", [((3, 10, 1), 8), ((10, 3, 0xFFFFFFFF), 6)]),
    "IBFE": (
        "iii",
        "i",
        [
            ((0xF0, 4, 4), -1),
            ((0x70, 4, 4), 7),
            ((0x70, 4, 0), 0),
            ((-5, 0, 32), -5),
            ((INT_MIN, 31, 1), -1),
            ((-1, 28, 8), -1),
            ((0x12345678, 8, 8), 0x56),
        ],
    ),
    "UBFE": (
        "uuu",
        "u",
        [
            ((0xF0, 4, 4), 15),
            ((0xABCD1234, 8, 16), 0xCD12),
            ((0xDEADBEEF, 0, 32), 0xDEADBEEF),
            ((0xFF, 0, 0), 0),
            ((0x80000000, 31, 1), 1),
            ((0xF0000000, 28, 8), 0xF),
        ],
    ),
    "BFI": (
        "uuuu",
        "u",
        [
            ((0xFFFFFFFF, 0, 4, 8), 0xFFFFF00F),
            ((0, 0xFF, 28, 8), 0xF0000000),
            ((0x1234, 0x5678, 0, 32), 0x5678),
            ((0x1234, 0xFFFF, 3, 0), 0x1234),
        ],
    ),
    "BREV": ("u", "u", [((1,), 0x80000000), ((0x12345678,), 0x1E6A2C48), ((0,), 0)]),
    "POPC": ("u", "u", [((0xFFFFFFFF,), 32), ((0,), 0), ((0x80000001,), 2)]),
    "LSB": ("u", "i", [((0,), -1), ((8,), 3), ((0x80000000,), 31), ((6,), 1)]),
    "UMSB": ("u", "i", [((0,), -1), ((1,), 0), ((0xFFFFFFFF,), 31), ((0x10,), 4)]),
    "IMSB": (
        "i",
        "i",
        [((-1,), -1), ((0,), -1), ((1,), 0), ((INT_MIN,), 30), ((-2,), 0), ((0x7FFFFFFF,), 30)],
    ),
}


@pytest.mark.parametrize("opcode", sorted(INT_TABLES))
def test_integer_componentwise(opcode):
    types, out_kind, cases = INT_TABLES[opcode]
    check_table(opcode, types, out_kind, cases)


def test_int_ops_reference_matches_python():
    """A wider sweep of IDIV/MOD/UDIV/UMOD/IMUL_HI against C semantics in Python."""
    rng = np.random.default_rng(7)
    a = [int(v) for v in rng.integers(-(2**31), 2**31, 64)] + [INT_MIN, -1, 0, 1]
    b = [int(v) for v in rng.integers(-300, 300, 64)] + [-1, 0, 7, -7]

    def cdiv(x, y):
        if y == 0:
            return 0
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    cases_div = [((x, y), cdiv(x, y)) for x, y in zip(a, b)]
    check_table("IDIV", "ii", "i", cases_div)
    cases_mod = [((x, y), -1 if y == 0 else x - cdiv(x, y) * y) for x, y in zip(a, b)]
    check_table("MOD", "ii", "i", cases_mod)
    ua = [x & 0xFFFFFFFF for x in a]
    ub = [y & 0xFFFFFFFF for y in b]
    check_table("UDIV", "uu", "u", [((x, y), x // y if y else 0xFFFFFFFF) for x, y in zip(ua, ub)])
    check_table("UMOD", "uu", "u", [((x, y), x % y if y else 0xFFFFFFFF) for x, y in zip(ua, ub)])
    check_table("IMUL_HI", "ii", "i", [((x, y), (x * y) >> 32) for x, y in zip(a, b)])
    check_table("UMUL_HI", "uu", "u", [((x, y), (x * y) >> 32) for x, y in zip(ua, ub)])


def test_bitfield_sweep_against_glsl_definition():
    rng = np.random.default_rng(11)
    cases_u, cases_i, cases_bfi = [], [], []
    for _ in range(60):
        x = int(rng.integers(0, 2**32))
        off = int(rng.integers(0, 32))
        bits = int(rng.integers(1, 33 - off))
        field = (x >> off) & ((1 << bits) - 1)
        cases_u.append(((x, off, bits), field))
        signed = field - (1 << bits) if field >> (bits - 1) & 1 else field
        cases_i.append(((x - (1 << 32) if x >= 2**31 else x, off, bits), signed))
        ins = int(rng.integers(0, 2**32))
        m = ((1 << bits) - 1) << off
        cases_bfi.append(((x, ins, off, bits), (x & ~m | (ins << off) & m) & 0xFFFFFFFF))
    check_table("UBFE", "uuu", "u", cases_u)
    check_table("IBFE", "iii", "i", cases_i)
    check_table("BFI", "uuuu", "u", cases_bfi)
    words = [int(v) for v in rng.integers(0, 2**32, 40)]
    check_table("BREV", "u", "u", [((w,), int(f"{w:032b}"[::-1], 2)) for w in words])
    check_table("POPC", "u", "u", [((w,), bin(w).count("1")) for w in words])
    check_table("UMSB", "u", "i", [((w,), w.bit_length() - 1) for w in words])
    check_table("LSB", "u", "i", [((w,), (w & -w).bit_length() - 1) for w in words])


# -- doubles and 64-bit integers ----------------------------------------------------------


def run64(op: str, args: list, kinds: str, out: str, writemask: str = "xy"):
    """Run a 64-bit opcode on the xy pair; args are doubles ('d'), ints ('q'),
    or 32-bit words ('w', given as (x, y, z, w) words)."""
    inputs = []
    for a, k in zip(args, kinds):
        if k == "d":
            lo, hi = d2w(a)
            words = (lo, hi, lo, hi)
        elif k == "q":
            lo, hi = q2w(a)
            words = (lo, hi, lo, hi)
        else:
            words = a
        inputs.append([[w] for w in words])
    srcs = ", ".join(f"IN[{j}]" for j in range(len(args)))
    text = f"FRAG\nDCL IN[0..3]\nDCL OUT[0]\n  0: {op} OUT[0].{writemask}, {srcs}\n  1: END\n"
    o = run_lanes(text, inputs, 1)[0]
    words = [int(o[c][0]) for c in range(4)]
    if out == "d":
        return w2d(words[0], words[1])
    if out == "q":
        return words[0] | words[1] << 32
    return words


def same_d(got: float, exp: float) -> bool:
    if math.isnan(exp):
        return math.isnan(got)
    return struct.pack("<d", got) == struct.pack("<d", exp)


DOUBLE_CASES = [
    ("DADD", [1.5, 2.25], 3.75),
    ("DADD", [INF, -INF], NAN),
    ("DMUL", [3.0, -0.5], -1.5),
    ("DMUL", [-2.0, 0.0], -0.0),
    ("DDIV", [1.0, 0.0], INF),
    ("DDIV", [1.0, 3.0], 1.0 / 3.0),
    ("DMAX", [NAN, 1.0], 1.0),
    ("DMIN", [NAN, 1.0], 1.0),
    ("DMIN", [-INF, 1.0], -INF),
    ("DMAD", [2.0, 3.0, 4.0], 10.0),
    ("DMAD", [1 + 2.0**-27, 1 + 2.0**-27, -(1 + 2.0**-26)], 0.0),
    ("DFMA", [1 + 2.0**-27, 1 + 2.0**-27, -(1 + 2.0**-26)], 2.0**-54),
    ("DFMA", [INF, 0.0, 1.0], NAN),
    ("DRCP", [4.0], 0.25),
    ("DRCP", [-0.0], -INF),
    ("DSQRT", [2.0], math.sqrt(2.0)),
    ("DSQRT", [-1.0], NAN),
    ("DRSQ", [4.0], 0.5),
    ("DFRAC", [-1.25], 0.75),
    ("DFLR", [-1.5], -2.0),
    ("DCEIL", [-0.5], -0.0),
    ("DTRUNC", [-1.7], -1.0),
    ("DROUND", [2.5], 2.0),
    ("DROUND", [3.5], 4.0),
    ("DSSG", [-0.0], 0.0),
    ("DSSG", [-5.0], -1.0),
    ("DSSG", [NAN], 0.0),
    ("DABS", [-0.0], 0.0),
    ("DNEG", [0.0], -0.0),
]


@pytest.mark.parametrize("op,args,expected", DOUBLE_CASES)
def test_double_arithmetic(op, args, expected):
    got = run64(op, args, "d" * len(args), "d")
    assert same_d(got, expected), (op, args, got)


def test_double_zw_pair_and_writemask():
    a, b = d2w(1.25), d2w(-3.5)
    o = run_lanes(
        "FRAG\nDCL IN[0..1]\nDCL OUT[0]\n  0: DADD OUT[0].zw, IN[0], IN[1]\n  1: END\n",
        [[[a[0]], [a[1]], [a[0]], [a[1]]], [[b[0]], [b[1]], [b[0]], [b[1]]]],
        1,
    )[0]
    assert int(o[0][0]) == 0 and int(o[1][0]) == 0  # xy untouched
    assert w2d(int(o[2][0]), int(o[3][0])) == -2.25


@pytest.mark.parametrize(
    "op,a,b,expected",
    [
        ("DSLT", 1.0, 2.0, 0xFFFFFFFF),
        ("DSLT", NAN, 2.0, 0),
        ("DSGE", 2.0, 2.0, 0xFFFFFFFF),
        ("DSEQ", NAN, NAN, 0),
        ("DSEQ", -0.0, 0.0, 0xFFFFFFFF),
        ("DSNE", NAN, NAN, 0xFFFFFFFF),
    ],
)
def test_double_comparisons_write_one_boolean(op, a, b, expected):
    # As Mesa: a 32-bit ~0/0 in the first channel of the pair the mask selects.
    words = run64(op, [a, b], "dd", "w", writemask="x")
    assert words == [expected, 0, 0, 0]
    words = run64(op, [a, b], "dd", "w", writemask="y")
    assert words == [0, expected, 0, 0]


def test_ldexp_and_fracexp():
    two = [d2w(1.5)[0], d2w(1.5)[1], 0, 0]
    assert run64("DLDEXP", [two, (4, 0, 0, 0)], "ww", "d") == 24.0
    assert run64("DLDEXP", [two, (-1075, 0, 0, 0)], "ww", "d") == 5e-324  # 0.75 ulp rounds up
    assert run64("DLDEXP", [two, (-1076, 0, 0, 0)], "ww", "d") == 0.0
    text = "FRAG\nDCL IN[0]\nDCL OUT[0..1]\n  0: DFRACEXP OUT[0].xy, OUT[1].x, IN[0]\n  1: END\n"
    for value, sig, exp in [
        (12.0, 0.75, 4),
        (0.0, 0.0, 0),
        (-0.375, -0.75, -1),
        (5e-324, 0.5, -1073),
    ]:
        lo, hi = d2w(value)
        o = run_lanes(text, [[[lo], [hi], [0], [0]]], 1)
        assert w2d(int(o[0][0][0]), int(o[0][1][0])) == sig
        assert np.int32(o[1][0][0].view(np.int32)) == exp


def test_double_conversions():
    # F2D / I2D / U2D read x for the xy pair.
    assert run64("F2D", [(f2b(0.1), 0, 0, 0)], "w", "d") == float(np.float32(0.1))
    assert run64("I2D", [(-5 & 0xFFFFFFFF, 0, 0, 0)], "w", "d") == -5.0
    assert run64("U2D", [(0xFFFFFFFF, 0, 0, 0)], "w", "d") == 4294967295.0
    # D2F / D2I / D2U write the first written channel from the xy pair.
    assert run64("D2F", [0.1], "d", "w", writemask="x")[0] == 0x3DCCCCCD
    assert run64("D2F", [1e300], "d", "w", writemask="x")[0] == f2b(INF)
    assert run64("D2I", [-1.9], "d", "w", writemask="x")[0] == 0xFFFFFFFF
    assert run64("D2I", [3e9], "d", "w", writemask="x")[0] == 0x80000000
    assert run64("D2U", [-1.0], "d", "w", writemask="x")[0] == 0xFFFFFFFF
    assert run64("D2U", [4294967295.0], "d", "w", writemask="x")[0] == 0xFFFFFFFF
    # Two results: x from the xy pair, z (second written channel) from zw.
    a, b = d2w(2.5), d2w(-7.0)
    o = run_lanes(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: D2I OUT[0].xz, IN[0]\n  1: END\n",
        [[[a[0]], [a[1]], [b[0]], [b[1]]]],
        1,
    )[0]
    assert [int(o[c][0]) for c in range(4)] == [2, 0, (-7) & 0xFFFFFFFF, 0]


INT64_CASES = [
    ("U64ADD", [2**64 - 1, 1], 0),
    ("U64MUL", [2**32, 2**32], 0),
    ("U64MUL", [3, 5], 15),
    ("I64DIV", [-7, 2], -3),
    ("I64DIV", [5, 0], 0),
    ("I64DIV", [-(2**63), -1], -(2**63)),
    ("U64DIV", [5, 0], 2**64 - 1),
    ("U64DIV", [2**64 - 1, 2], 2**63 - 1),
    ("I64MOD", [-7, 2], -1),
    ("I64MOD", [5, 0], -1),
    ("U64MOD", [5, 0], 2**64 - 1),
    ("U64MOD", [17, 5], 2),
    ("I64MIN", [-1, 1], -1),
    ("I64MAX", [-1, 1], 1),
    ("U64MIN", [2**64 - 1, 1], 1),
    ("U64MAX", [2**64 - 1, 1], 2**64 - 1),
    ("I64ABS", [-(2**63)], -(2**63)),
    ("I64ABS", [-5], 5),
    ("I64NEG", [5], -5),
    ("I64SSG", [-9], -1),
    ("I64SSG", [0], 0),
    ("U642D", [2**64 - 1], None),
    ("I642D", [-3], None),
]


@pytest.mark.parametrize("op,args,expected", INT64_CASES)
def test_int64_arithmetic(op, args, expected):
    if op in ("U642D", "I642D"):
        got = run64(op, args, "q" * len(args), "d")
        assert got == float(args[0])
        return
    got = run64(op, args, "q" * len(args), "q")
    assert got == expected & (2**64 - 1)


@pytest.mark.parametrize(
    "op,a,count,expected",
    [
        ("U64SHL", 1, 63, 2**63),
        ("U64SHL", 1, 64, 1),
        ("U64SHR", 2**63, 63, 1),
        ("I64SHR", -8, 65, -4),
        ("I64SHR", -(2**63), 63, -1),
    ],
)
def test_int64_shifts_mask_six_bits(op, a, count, expected):
    lo, hi = q2w(a)
    got = run64(op, [(lo, hi, 0, 0), (count, 0, 0, 0)], "ww", "q")
    assert got == expected & (2**64 - 1)


@pytest.mark.parametrize(
    "op,a,b,expected",
    [
        ("U64SEQ", 5, 5, 0xFFFFFFFF),
        ("U64SNE", 5, 5, 0),
        ("U64SLT", 1, 2**64 - 1, 0xFFFFFFFF),
        ("I64SLT", -1, 0, 0xFFFFFFFF),
        ("U64SGE", 1, 2**64 - 1, 0),
        ("I64SGE", 0, -1, 0xFFFFFFFF),
    ],
)
def test_int64_comparisons(op, a, b, expected):
    assert run64(op, [a, b], "qq", "w", writemask="x") == [expected, 0, 0, 0]


def test_int64_conversions():
    assert run64("F2I64", [(f2b(-1.5), 0, 0, 0)], "w", "q") == 2**64 - 1
    assert run64("F2I64", [(f2b(NAN), 0, 0, 0)], "w", "q") == 2**63
    assert run64("F2U64", [(f2b(-1.0), 0, 0, 0)], "w", "q") == 2**64 - 1
    assert run64("F2U64", [(f2b(2.0**63), 0, 0, 0)], "w", "q") == 2**63
    assert run64("U2I64", [(0xFFFFFFFF, 0, 0, 0)], "w", "q") == 0xFFFFFFFF
    assert run64("I2I64", [(0xFFFFFFFF, 0, 0, 0)], "w", "q") == 2**64 - 1
    assert run64("D2I64", [-2.5], "d", "q") == 2**64 - 2
    assert run64("D2U64", [1e19], "d", "q") == 10**19
    assert run64("U642F", [2**64 - 1], "q", "w", writemask="x")[0] == f2b(2.0**64)
    assert run64("I642F", [-1], "q", "w", writemask="x")[0] == f2b(-1.0)


# -- operand modifiers, write masks, swizzles, saturate -----------------------------------


def test_swizzle_and_writemask():
    vec = [[f2b(v)] for v in (1.0, 2.0, 3.0, 4.0)]
    o = run_lanes("FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: MOV OUT[0], IN[0].wzyx\n  1: END\n", [vec], 1)
    assert [b2f(int(o[0][c][0])) for c in range(4)] == [4.0, 3.0, 2.0, 1.0]
    o = run_lanes(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: MOV OUT[0].xz, IN[0].yyww\n  1: END\n", [vec], 1
    )
    assert [b2f(int(o[0][c][0])) for c in range(4)] == [2.0, 0.0, 4.0, 0.0]


def test_mov_keeps_every_bit():
    words = [0x7FC00123, 0x80000000, 0x00000001, 0xFF800000]
    o = run_lanes(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: MOV OUT[0], IN[0]\n  1: END\n", [[[w] for w in words]], 1
    )
    assert [int(o[0][c][0]) for c in range(4)] == words


def test_float_negate_and_absolute():
    vec0 = [[f2b(v)] for v in (1.0, 0.0, -3.0, NAN)]
    text = (
        "FRAG\nDCL IN[0]\nDCL OUT[0..2]\n"
        "  0: MOV OUT[0], -IN[0]\n  1: MOV OUT[1], |IN[0]|\n  2: MOV OUT[2], -|IN[0]|\n  3: END\n"
    )
    o = run_lanes(text, [vec0], 1)
    assert [int(o[0][c][0]) for c in range(3)] == [f2b(-1.0), f2b(-0.0), f2b(3.0)]
    assert int(o[0][3][0]) == 0xFFC00000  # the sign of NaN flips, payload kept
    assert [b2f(int(o[1][c][0])) for c in range(3)] == [1.0, 0.0, 3.0]
    assert [int(o[2][c][0]) for c in range(3)] == [f2b(-1.0), f2b(-0.0), f2b(-3.0)]


def test_integer_negate_and_absolute():
    a = [[5], [INT_MIN & 0xFFFFFFFF], [0xFFFFFFFB], [3]]
    text = (
        "FRAG\nDCL IN[0..1]\nDCL OUT[0..2]\n"
        "  0: UADD OUT[0], IN[1], -IN[0]\n"  # uint negate: 0 - x
        "  1: IMAX OUT[1], -IN[0], IN[1]\n"  # int negate wraps INT_MIN
        "  2: IMAX OUT[2], |IN[0]|, IN[1]\n"
        "  3: END\n"
    )
    b = [[7], [0], [0], [0]]
    o = run_lanes(text, [a, b], 1)
    assert [int(o[0][c][0]) for c in range(4)] == [2, INT_MIN & 0xFFFFFFFF, 5, 0xFFFFFFFD]
    assert [np.uint32(o[1][c][0]).view(np.int32) for c in range(4)] == [7, 0, 5, 0]
    assert [np.uint32(o[2][c][0]).view(np.int32) for c in range(4)] == [7, 0, 5, 3]


def test_saturate():
    vec = [[f2b(v)] for v in (-1.0, 0.5, 2.0, NAN)]
    o = run_lanes("FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: MOV_SAT OUT[0], IN[0]\n  1: END\n", [vec], 1)
    assert [b2f(int(o[0][c][0])) for c in range(4)] == [0.0, 0.5, 1.0, 0.0]
    o = run_lanes(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: ADD_SAT OUT[0], IN[0], IN[0]\n  1: END\n", [vec], 1
    )
    assert [b2f(int(o[0][c][0])) for c in range(4)] == [0.0, 1.0, 1.0, 0.0]
    # _SAT does not touch integer results (it clamps floats only).
    words = [[0xFFFFFFFF], [7], [0], [2]]
    o = run_lanes(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\n  0: UADD_SAT OUT[0], IN[0], IN[0]\n  1: END\n", [words], 1
    )
    assert [int(o[0][c][0]) for c in range(4)] == [0xFFFFFFFE, 14, 0, 4]


def test_source_read_before_write():
    vec = [[f2b(v)] for v in (1.0, 2.0, 3.0, 4.0)]
    text = (
        "FRAG\nDCL IN[0]\nDCL OUT[0]\nDCL TEMP[0]\n"
        "  0: MOV TEMP[0], IN[0]\n  1: MOV TEMP[0], TEMP[0].yxwz\n"
        "  2: MOV OUT[0], TEMP[0]\n  3: END\n"
    )
    o = run_lanes(text, [vec], 1)
    assert [b2f(int(o[0][c][0])) for c in range(4)] == [2.0, 1.0, 4.0, 3.0]


def test_arl_feeds_indirect_addressing_and_ara():
    text = (
        "FRAG\nDCL IN[0]\nDCL OUT[0]\nDCL ADDR[0]\n"
        "  0: UARL ADDR[0], IN[0]\n  1: ARA ADDR[0].xy, ADDR[0]\n"
        "  2: MOV OUT[0], ADDR[0]\n  3: END\n"
    )
    o = run_lanes(text, [[[1], [2], [3], [4]]], 1)
    assert [int(o[0][c][0]) for c in range(4)] == [4, 6, 3, 4]


def test_pusha_popa():
    text = (
        "FRAG\nDCL IN[0..1]\nDCL OUT[0..1]\nDCL ADDR[0]\n"
        "  0: PUSHA IN[0]\n  1: PUSHA IN[1]\n  2: POPA ADDR[0]\n  3: MOV OUT[0], ADDR[0]\n"
        "  4: POPA ADDR[0]\n  5: MOV OUT[1], ADDR[0]\n  6: END\n"
    )
    o = run_lanes(text, [[[1], [2], [3], [4]], [[5], [6], [7], [8]]], 1)
    assert [int(o[0][c][0]) for c in range(4)] == [5, 6, 7, 8]
    assert [int(o[1][c][0]) for c in range(4)] == [1, 2, 3, 4]


def test_unsupported_opcodes_name_themselves():
    with pytest.raises(UnsupportedError, match="VOTE_ANY"):
        compile_shader("COMP\nDCL TEMP[0]\n  0: VOTE_ANY TEMP[0], TEMP[0]\n  1: END\n")
    with pytest.raises(UnsupportedError, match="READ_FIRST"):
        compile_shader("COMP\nDCL TEMP[0]\n  0: READ_FIRST TEMP[0], TEMP[0]\n  1: END\n")
