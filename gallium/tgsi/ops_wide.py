"""Emitters for the double-precision and 64-bit integer opcodes.

A 64-bit value lives in a pair of 32-bit channels, low word first: the
``xy`` pair and the ``zw`` pair, as in Mesa.  An opcode computes the pairs
whose channels the destination's write mask touches and writes only the
channels in the mask.  (tgsi_exec writes a whole pair even for a one-channel
mask; shaders from Mesa's compiler always write whole pairs, where both
agree.)

* Comparisons (DSLT, U64SEQ, ...) return a 32-bit boolean, ``~0`` or ``0``,
  in the first channel of the pair that the write mask selects, as
  tgsi_exec and Mesa's GLSL compiler do.  The old ``spec/tgsi.rst`` text
  (``1.0F : 0.0F`` into the whole pair) predates them and is not followed.
* DFRACEXP writes the significand (a double) to its first destination and
  the exponent (an int32) to its second, as Mesa's GLSL compiler emits it
  (``frexp_sig`` to Dst[0], ``frexp_exp`` to Dst[1]); the spec's prose has
  the two destinations the other way round.
* D2F, D2I, D2U, U642F, I642F produce 32-bit results: the first written
  channel gets the ``xy`` pair's result, the second the ``zw`` pair's.
* F2D, I2D, U2D and the 32-to-64 integer conversions read ``src.x`` for the
  ``xy`` pair and ``src.y`` for ``zw``.
* DLDEXP and the 64-bit shifts read their 32-bit operand from ``x`` for the
  ``xy`` pair and ``z`` for ``zw``; shift counts use their low 6 bits.
* Out-of-range conversions follow the x86 rules of :mod:`.runtime`.
"""

from __future__ import annotations

from typing import Any

from .codegen import register
from .shader import Instruction

_TYPES = {"d": "_F64", "u64": "_U64", "i64": "_I64"}


def _pairs(inst: Instruction, dst_index: int = 0) -> list[int]:
    mask = inst.dst[dst_index].writemask if len(inst.dst) > dst_index else 0
    return [p for p in (0, 1) if mask >> (2 * p) & 3]


def _src64(g: Any, inst: Instruction, k: int, pair: int, kind: str) -> str:
    lo = g.src_raw(inst, k, 2 * pair, "u")
    hi = g.src_raw(inst, k, 2 * pair + 1, "u")
    expr = f"rt.pack64({lo}, {hi}, {_TYPES[kind]})"
    s = inst.src[k]
    if s.absolute:
        expr = f"np.abs({expr})"
    if s.negate:
        expr = f"(-{expr})" if kind != "u64" else f"(_U64(0) - {expr})"
    v = g.tmp("q")
    g.emit(f"{v} = {expr}")
    return v


def _write64(g: Any, inst: Instruction, values: dict[int, str], kind: str, dst: int = 0) -> None:
    res: dict[int, tuple[str, str]] = {}
    for pair, expr in values.items():
        v = g.tmp("q")
        if inst.saturate and kind == "d":
            expr = f"rt.dsat({expr})"
        g.emit(f"{v} = np.asarray({expr}, {_TYPES[kind]})")
        res[2 * pair] = (f"rt.lo32({v})", "u")
        res[2 * pair + 1] = (f"rt.hi32({v})", "u")
    g.write(inst, res, dst)


def _write_bool(g: Any, inst: Instruction, values: dict[int, str]) -> None:
    mask = inst.dst[0].writemask
    res: dict[int, tuple[str, str]] = {}
    for pair, expr in values.items():
        first = 2 * pair if mask >> (2 * pair) & 1 else 2 * pair + 1
        res[first] = (f"rt.b2u({expr})", "u")
    g.write(inst, res)


def _unary(name: str, kind: str, template: str, out_kind: str | None = None) -> None:
    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        vals = {}
        for p in _pairs(inst):
            vals[p] = template.format(_src64(g, inst, 0, p, kind))
        _write64(g, inst, vals, out_kind or kind)


def _binary(name: str, kind: str, template: str, boolean: bool = False) -> None:
    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        vals = {}
        for p in _pairs(inst):
            a = _src64(g, inst, 0, p, kind)
            b = _src64(g, inst, 1, p, kind)
            vals[p] = template.format(a, b)
        if boolean:
            _write_bool(g, inst, vals)
        else:
            _write64(g, inst, vals, kind)


def _ternary(name: str, kind: str, template: str) -> None:
    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        vals = {}
        for p in _pairs(inst):
            args = [_src64(g, inst, k, p, kind) for k in range(3)]
            vals[p] = template.format(*args)
        _write64(g, inst, vals, kind)


def _with_int32(name: str, kind: str, template: str) -> None:
    """64-bit first operand, 32-bit second read from x (xy pair) or z (zw pair)."""

    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        vals = {}
        for p in _pairs(inst):
            a = _src64(g, inst, 0, p, kind)
            b = g.src(inst, 1, 2 * p, "i")
            vals[p] = template.format(a, b)
        _write64(g, inst, vals, kind)


# -- doubles ----------------------------------------------------------------------
_binary("DADD", "d", "({0} + {1})")
_binary("DMUL", "d", "({0} * {1})")
_binary("DDIV", "d", "({0} / {1})")
_binary("DMAX", "d", "np.fmax({0}, {1})")
_binary("DMIN", "d", "np.fmin({0}, {1})")
_binary("DSLT", "d", "({0} < {1})", boolean=True)
_binary("DSGE", "d", "({0} >= {1})", boolean=True)
_binary("DSEQ", "d", "({0} == {1})", boolean=True)
_binary("DSNE", "d", "({0} != {1})", boolean=True)
_ternary("DMAD", "d", "({0} * {1} + {2})")
_ternary("DFMA", "d", "rt.fma64({0}, {1}, {2})")
_unary("DABS", "d", "np.abs({0})")
_unary("DNEG", "d", "(-{0})")
_unary("DRCP", "d", "(1.0 / {0})")
_unary("DSQRT", "d", "np.sqrt({0})")
_unary("DRSQ", "d", "(1.0 / np.sqrt({0}))")
_unary("DFRAC", "d", "({0} - np.floor({0}))")
_unary("DFLR", "d", "np.floor({0})")
_unary("DCEIL", "d", "np.ceil({0})")
_unary("DTRUNC", "d", "np.trunc({0})")
_unary("DROUND", "d", "np.rint({0})")
_unary("DSSG", "d", "rt.dssg({0})")
_with_int32("DLDEXP", "d", "np.ldexp({0}, {1})")


@register("DFRACEXP")
def _dfracexp(g: Any, inst: Instruction) -> None:
    pairs = sorted(set(_pairs(inst, 0)) | set(_pairs(inst, 1)))
    sig: dict[int, str] = {}
    exp: dict[int, tuple[str, str]] = {}
    emask = inst.dst[1].writemask if len(inst.dst) > 1 else 0
    for p in pairs:
        m, e = g.tmp("q"), g.tmp("q")
        g.emit(f"{m}, {e} = np.frexp({_src64(g, inst, 0, p, 'd')})")
        sig[p] = m
        chans = [c for c in (2 * p, 2 * p + 1) if emask >> c & 1]
        if chans:
            exp[chans[0]] = (f"np.asarray({e}, _I32)[()]", "i")
    # Both destinations are computed before either is written.
    if len(inst.dst) > 1 and exp:
        g.write(inst, exp, 1)
    if sig:
        _write64(g, inst, {p: sig[p] for p in _pairs(inst, 0)}, "d", 0)


# -- 64-bit integers ------------------------------------------------------------------
_binary("U64ADD", "u64", "({0} + {1})")
_binary("U64MUL", "u64", "({0} * {1})")
_binary("U64DIV", "u64", "rt.u64div({0}, {1})")
_binary("U64MOD", "u64", "rt.u64mod({0}, {1})")
_binary("I64DIV", "i64", "rt.i64div({0}, {1})")
_binary("I64MOD", "i64", "rt.i64mod({0}, {1})")
_binary("U64MIN", "u64", "np.minimum({0}, {1})")
_binary("U64MAX", "u64", "np.maximum({0}, {1})")
_binary("I64MIN", "i64", "np.minimum({0}, {1})")
_binary("I64MAX", "i64", "np.maximum({0}, {1})")
_binary("U64SEQ", "u64", "({0} == {1})", boolean=True)
_binary("U64SNE", "u64", "({0} != {1})", boolean=True)
_binary("U64SLT", "u64", "({0} < {1})", boolean=True)
_binary("U64SGE", "u64", "({0} >= {1})", boolean=True)
_binary("I64SLT", "i64", "({0} < {1})", boolean=True)
_binary("I64SGE", "i64", "({0} >= {1})", boolean=True)
_unary("I64ABS", "i64", "np.abs({0})")
_unary("I64NEG", "i64", "(_I64(0) - {0})")
_unary("I64SSG", "i64", "np.sign({0})")
_with_int32("U64SHL", "u64", "({0} << ({1}.astype(_U64) & _U64(63)))")
_with_int32("U64SHR", "u64", "({0} >> ({1}.astype(_U64) & _U64(63)))")
_with_int32("I64SHR", "i64", "({0} >> ({1}.astype(_I64) & _I64(63)))")

# 64-bit sources to 64-bit results of another kind.
_unary("D2U64", "d", "rt.f2u64({0})", "u64")
_unary("D2I64", "d", "rt.f2i64({0})", "i64")
_unary("U642D", "u64", "{0}.astype(_F64)", "d")
_unary("I642D", "i64", "{0}.astype(_F64)", "d")


def _narrow(name: str, kind: str, template: str, out: str) -> None:
    """64-bit source pairs to 32-bit results (tgsi_exec's exec_64_2_t)."""

    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        mask = inst.dst[0].writemask
        chans = [c for c in range(4) if mask >> c & 1][:2]
        res = {}
        for pair, chan in enumerate(chans):
            res[chan] = (template.format(_src64(g, inst, 0, pair, kind)), out)
        g.write(inst, res)


_narrow("D2F", "d", "{0}.astype(_F32)", "f")
_narrow("D2I", "d", "rt.f2i({0})", "i")
_narrow("D2U", "d", "rt.f2u({0})", "u")
_narrow("U642F", "u64", "{0}.astype(_F32)", "f")
_narrow("I642F", "i64", "{0}.astype(_F32)", "f")


def _widen(name: str, want: str, template: str, kind: str) -> None:
    """32-bit ``src.x`` / ``src.y`` to the xy / zw pairs (tgsi_exec's exec_t_2_64)."""

    @register(name)
    def emit(g: Any, inst: Instruction) -> None:
        vals = {}
        for p in _pairs(inst):
            vals[p] = template.format(g.src(inst, 0, p, want))
        _write64(g, inst, vals, kind)


_widen("F2D", "f", "np.asarray({0}, _F64)", "d")
_widen("I2D", "i", "np.asarray({0}, _F64)", "d")
_widen("U2D", "u", "np.asarray({0}, _F64)", "d")
_widen("F2I64", "f", "rt.f2i64({0})", "i64")
_widen("F2U64", "f", "rt.f2u64({0})", "u64")
_widen("I2I64", "i", "np.asarray({0}, _I64)", "i64")
# U2I64 zero-extends (tgsi_exec fetches the source as unsigned).
_widen("U2I64", "u", "np.asarray({0}, _I64)", "i64")
