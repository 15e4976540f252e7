"""Emitters for the 32-bit arithmetic, logic and conversion opcodes.

Float opcodes compute in float32 with one rounding per operation, as
tgsi_exec's C code does (MAD and the dot products round the product and the
sum separately; FMA rounds once).  Integer opcodes wrap modulo 2**32.  The
semantics follow ``spec/tgsi.rst``; where it is silent, says "TBD", or is
plainly wrong, they follow Mesa's ``tgsi_exec.c``, and each such place says
so below.  Undefined C behaviour (conversions out of range, division by
zero) follows what softpipe computes on x86-64, see :mod:`.runtime`.
"""

from __future__ import annotations

from typing import Any

from .codegen import componentwise, fold_add, register, replicated
from .shader import Instruction

# -- float arithmetic -----------------------------------------------------------
componentwise("MOV", "f", "f", "{0}")
componentwise("ADD", "ff", "f", fold_add)
componentwise("SUB", "ff", "f", "({0} - {1})")
componentwise("MUL", "ff", "f", "({0} * {1})")
componentwise("DIV", "ff", "f", "({0} / {1})")
componentwise("MAD", "fff", "f", lambda a, b, c: fold_add(f"({a} * {b})", c))
componentwise("FMA", "fff", "f", "rt.fma32({0}, {1}, {2})")
# tgsi.rst's LRP: src0*src1 + (1 - src0)*src2 (tgsi_exec rearranges it as
# src0*(src1 - src2) + src2, which rounds differently; the spec's form is kept).
componentwise("LRP", "fff", "f", "({0} * {1} + (_F32(1.0) - {0}) * {2})")
# MIN/MAX: fminf/fmaxf as tgsi_exec, so a NaN operand loses to a number
# (measured on softpipe: MIN(NaN, 1) = MAX(NaN, 1) = 1).
componentwise("MIN", "ff", "f", "np.fmin({0}, {1})")
componentwise("MAX", "ff", "f", "np.fmax({0}, {1})")
componentwise("CLAMP", "fff", "f", "rt.clamp({0}, {1}, {2})")
componentwise("ABS", "f", "f", "np.abs({0})")
componentwise("FRC", "f", "f", "({0} - np.floor({0}))")
componentwise("FLR", "f", "f", "np.floor({0})")
componentwise("CEIL", "f", "f", "np.ceil({0})")
componentwise("TRUNC", "f", "f", "np.trunc({0})")
# round() is round-half-to-even (tgsi_exec's _mesa_roundevenf).
componentwise("ROUND", "f", "f", "np.rint({0})")
componentwise("SSG", "f", "f", "rt.ssg({0})")
componentwise("CMP", "fff", "f", "np.where({0} < _F32(0.0), {1}, {2})")
componentwise("CND", "fff", "f", "np.where({2} > _F32(0.5), {0}, {1})")
componentwise("SLT", "ff", "f", "rt.b2f({0} < {1})")
componentwise("SGE", "ff", "f", "rt.b2f({0} >= {1})")
componentwise("SGT", "ff", "f", "rt.b2f({0} > {1})")
componentwise("SLE", "ff", "f", "rt.b2f({0} <= {1})")
componentwise("SEQ", "ff", "f", "rt.b2f({0} == {1})")
componentwise("SNE", "ff", "f", "rt.b2f({0} != {1})")
componentwise("FSLT", "ff", "u", "rt.b2u({0} < {1})")
componentwise("FSGE", "ff", "u", "rt.b2u({0} >= {1})")
componentwise("FSEQ", "ff", "u", "rt.b2u({0} == {1})")
componentwise("FSNE", "ff", "u", "rt.b2u({0} != {1})")
componentwise("LDEXP", "fi", "f", "np.ldexp({0}, {1})")
componentwise("DDX", "f", "f", "rt.ddx({0}, env.quad_shape, False)")
componentwise("DDY", "f", "f", "rt.ddy({0}, env.quad_shape, False)")
componentwise("DDX_FINE", "f", "f", "rt.ddx({0}, env.quad_shape, True)")
componentwise("DDY_FINE", "f", "f", "rt.ddy({0}, env.quad_shape, True)")

# -- scalar float functions (replicated) -------------------------------------------
replicated("RCP", "f", "f", "(_F32(1.0) / {0})", "x")
# RSQ: tgsi.rst's 1/sqrt(|x|) (today's tgsi_exec drops the absolute value;
# GLSL leaves inversesqrt of a negative number undefined, so both agree there).
replicated("RSQ", "f", "f", "(_F32(1.0) / np.sqrt(np.abs({0})))", "x")
replicated("SQRT", "f", "f", "np.sqrt({0})", "x")
replicated("EX2", "f", "f", "np.exp2({0})", "x")
replicated("LG2", "f", "f", "np.log2({0})", "x")
replicated("POW", "ff", "f", "np.power({0}, {1})", "x")
replicated("SIN", "f", "f", "np.sin({0})", "x")
replicated("COS", "f", "f", "np.cos({0})", "x")
replicated("RCC", "f", "f", "rt.rcc({0})", "x")
replicated("DP2", "ff", "f", "({0} * {2} + {1} * {3})", "xy")
replicated("DP3", "ff", "f", "({0} * {3} + {1} * {4} + {2} * {5})", "xyz")
replicated("DP4", "ff", "f", "({0} * {4} + {1} * {5} + {2} * {6} + {3} * {7})", "xyzw")
replicated("DPH", "ff", "f", "({0} * {4} + {1} * {5} + {2} * {6} + {7})", "xyzw")


@register("DP2A")
def _dp2a(g: Any, inst: Instruction) -> None:
    a = [g.src(inst, 0, c) for c in range(2)]
    b = [g.src(inst, 1, c) for c in range(2)]
    v = g.tmp()
    g.emit(f"{v} = ({a[0]} * {b[0]} + {a[1]} * {b[1]} + {g.src(inst, 2, 0)})")
    g.write(inst, {c: (v, "f") for c in range(4)})


@register("SFL")
def _sfl(g: Any, inst: Instruction) -> None:
    g.write(inst, {c: ("_F32(0.0)", "f") for c in range(4)})


@register("STR")
def _str(g: Any, inst: Instruction) -> None:
    g.write(inst, {c: ("_F32(1.0)", "f") for c in range(4)})


def _wants(inst: Instruction, chan: int) -> bool:
    return bool(inst.dst and inst.dst[0].writemask >> chan & 1)


@register("LIT")
def _lit(g: Any, inst: Instruction) -> None:
    # tgsi_exec's exec_lit: z = (x > 0) ? max(y, 0) ** clamp(w, -128, 128) : 0.
    res: dict[int, tuple[str, str]] = {0: ("_F32(1.0)", "f"), 3: ("_F32(1.0)", "f")}
    if _wants(inst, 1) or _wants(inst, 2):
        x = g.src(inst, 0, 0)
        res[1] = (f"np.fmax({x}, _F32(0.0))", "f")
        if _wants(inst, 2):
            y, w = g.src(inst, 0, 1), g.src(inst, 0, 3)
            p = g.tmp()
            g.emit(
                f"{p} = np.power(np.fmax({y}, _F32(0.0)), "
                f"np.fmax(np.fmin({w}, _F32(128.0)), _F32(-128.0)))"
            )
            res[2] = (f"np.where(_F32(0.0) < {x}, {p}, _F32(0.0))", "f")
    g.write(inst, res)


@register("EXP")
def _exp(g: Any, inst: Instruction) -> None:
    x = g.src(inst, 0, 0)
    f = g.tmp()
    g.emit(f"{f} = np.floor({x})")
    g.write(
        inst,
        {
            0: (f"np.exp2({f})", "f"),
            1: (f"({x} - {f})", "f"),
            2: (f"np.exp2({x})", "f"),
            3: ("_F32(1.0)", "f"),
        },
    )


@register("LOG")
def _log(g: Any, inst: Instruction) -> None:
    a, lg, fl = g.tmp(), g.tmp(), g.tmp()
    g.emit(f"{a} = np.abs({g.src(inst, 0, 0)})")
    g.emit(f"{lg} = np.log2({a})")
    g.emit(f"{fl} = np.floor({lg})")
    g.write(
        inst,
        {
            0: (fl, "f"),
            1: (f"({a} / np.exp2({fl}))", "f"),
            2: (lg, "f"),
            3: ("_F32(1.0)", "f"),
        },
    )


@register("DST")
def _dst(g: Any, inst: Instruction) -> None:
    g.write(
        inst,
        {
            0: ("_F32(1.0)", "f"),
            1: (f"({g.src(inst, 0, 1)} * {g.src(inst, 1, 1)})", "f"),
            2: (g.src(inst, 0, 2), "f"),
            3: (g.src(inst, 1, 3), "f"),
        },
    )


@register("XPD")
def _xpd(g: Any, inst: Instruction) -> None:
    a = [g.src(inst, 0, c) for c in range(3)]
    b = [g.src(inst, 1, c) for c in range(3)]
    g.write(
        inst,
        {
            0: (f"({a[1]} * {b[2]} - {b[1]} * {a[2]})", "f"),
            1: (f"({a[2]} * {b[0]} - {b[2]} * {a[0]})", "f"),
            2: (f"({a[0]} * {b[1]} - {b[0]} * {a[1]})", "f"),
            3: ("_F32(1.0)", "f"),
        },
    )


@register("SCS")
def _scs(g: Any, inst: Instruction) -> None:
    x = g.src(inst, 0, 0)
    g.write(
        inst,
        {
            0: (f"np.cos({x})", "f"),
            1: (f"np.sin({x})", "f"),
            2: ("_F32(0.0)", "f"),
            3: ("_F32(1.0)", "f"),
        },
    )


@register("NRM")
def _nrm(g: Any, inst: Instruction) -> None:
    # tgsi.rst divides by the squared length, a typo for the length: Mesa's
    # tgsi_exec multiplied by rsq(dot3), which is what "normalise" means.
    s = [g.src(inst, 0, c) for c in range(3)]
    r = g.tmp()
    g.emit(
        f"{r} = _F32(1.0) / np.sqrt(np.abs({s[0]} * {s[0]} + {s[1]} * {s[1]} + {s[2]} * {s[2]}))"
    )
    res = {c: (f"({s[c]} * {r})", "f") for c in range(3)}
    res[3] = ("_F32(1.0)", "f")
    g.write(inst, res)


@register("NRM4")
def _nrm4(g: Any, inst: Instruction) -> None:
    # Per component, as Mesa's tgsi_exec (the spec's "replicated src.x / dot4"
    # is the same typo as NRM's).
    s = [g.src(inst, 0, c) for c in range(4)]
    dot = " + ".join(f"{v} * {v}" for v in s)
    r = g.tmp()
    g.emit(f"{r} = _F32(1.0) / np.sqrt(np.abs({dot}))")
    g.write(inst, {c: (f"({s[c]} * {r})", "f") for c in range(4)})


@register("RFL")
def _rfl(g: Any, inst: Instruction) -> None:
    a = [g.src(inst, 0, c) for c in range(3)]
    b = [g.src(inst, 1, c) for c in range(3)]
    k = g.tmp()
    g.emit(
        f"{k} = _F32(2.0) * ({a[0]} * {b[0]} + {a[1]} * {b[1]} + {a[2]} * {b[2]}) / "
        f"({a[0]} * {a[0]} + {a[1]} * {a[1]} + {a[2]} * {a[2]})"
    )
    res = {c: (f"({k} * {a[c]} - {b[c]})", "f") for c in range(3)}
    res[3] = ("_F32(1.0)", "f")
    g.write(inst, res)


@register("X2D")
def _x2d(g: Any, inst: Instruction) -> None:
    a = [g.src(inst, 0, c) for c in range(2)]
    b = [g.src(inst, 1, c) for c in range(2)]
    m = [g.src(inst, 2, c) for c in range(4)]
    x = f"({a[0]} + {b[0]} * {m[0]} + {b[1]} * {m[1]})"
    y = f"({a[1]} + {b[0]} * {m[2]} + {b[1]} * {m[3]})"
    g.write(inst, {0: (x, "f"), 1: (y, "f"), 2: (x, "f"), 3: (y, "f")})


# -- packing (tgsi.rst: "TBD"; the NV_fragment_program definitions, PK2H as Mesa) --


@register("PK2H", "PK2US")
def _pk2(g: Any, inst: Instruction) -> None:
    fn = "rt.pk2h" if inst.opcode == "PK2H" else "rt.pk2us"
    v = g.tmp()
    g.emit(f"{v} = {fn}({g.src(inst, 0, 0)}, {g.src(inst, 0, 1)})")
    g.write(inst, {c: (v, "u") for c in range(4)})


@register("PK4B", "PK4UB")
def _pk4(g: Any, inst: Instruction) -> None:
    fn = "rt.pk4b" if inst.opcode == "PK4B" else "rt.pk4ub"
    v = g.tmp()
    args = ", ".join(g.src(inst, 0, c) for c in range(4))
    g.emit(f"{v} = {fn}({args})")
    g.write(inst, {c: (v, "u") for c in range(4)})


@register("UP2H", "UP2US")
def _up2(g: Any, inst: Instruction) -> None:
    # As tgsi_exec's exec_up2h: z and w repeat x and y.
    fn = "rt.up2h" if inst.opcode == "UP2H" else "rt.up2us"
    u = g.src(inst, 0, 0, "u")
    lo, hi = g.tmp(), g.tmp()
    g.emit(f"{lo} = {fn}({u}, False)")
    g.emit(f"{hi} = {fn}({u}, True)")
    g.write(inst, {0: (lo, "f"), 1: (hi, "f"), 2: (lo, "f"), 3: (hi, "f")})


@register("UP4B", "UP4UB")
def _up4(g: Any, inst: Instruction) -> None:
    fn = "rt.up4b" if inst.opcode == "UP4B" else "rt.up4ub"
    u = g.src(inst, 0, 0, "u")
    g.write(inst, {c: (f"{fn}({u}, {c})", "f") for c in range(4)})


# -- integer / bit operations -------------------------------------------------------
componentwise("UADD", "uu", "u", "({0} + {1})")
componentwise("UMUL", "uu", "u", "({0} * {1})")
componentwise("UMAD", "uuu", "u", "({0} * {1} + {2})")
componentwise("INEG", "i", "i", "(_I32(0) - {0})")
componentwise("IABS", "i", "i", "np.abs({0})")
componentwise("ISSG", "i", "i", "np.sign({0})")
componentwise("IMAX", "ii", "i", "np.maximum({0}, {1})")
componentwise("IMIN", "ii", "i", "np.minimum({0}, {1})")
componentwise("UMAX", "uu", "u", "np.maximum({0}, {1})")
componentwise("UMIN", "uu", "u", "np.minimum({0}, {1})")
componentwise("AND", "uu", "u", "({0} & {1})")
componentwise("OR", "uu", "u", "({0} | {1})")
componentwise("XOR", "uu", "u", "({0} ^ {1})")
componentwise("NOT", "u", "u", "(~{0})")
# Shift counts use their low 5 bits (tgsi_exec masks with 0x1f).  tgsi.rst's
# SHL/SHR shift every channel by src1.x, a typo: Mesa shifts per channel.
componentwise("SHL", "uu", "u", "({0} << ({1} & _U32(31)))")
componentwise("USHR", "uu", "u", "({0} >> ({1} & _U32(31)))")
componentwise("ISHR", "ii", "i", "({0} >> ({1} & _I32(31)))")
componentwise("SHR", "ii", "i", "({0} >> ({1} & _I32(31)))")
componentwise("USEQ", "uu", "u", "rt.b2u({0} == {1})")
componentwise("USNE", "uu", "u", "rt.b2u({0} != {1})")
componentwise("USLT", "uu", "u", "rt.b2u({0} < {1})")
componentwise("USGE", "uu", "u", "rt.b2u({0} >= {1})")
componentwise("ISLT", "ii", "u", "rt.b2u({0} < {1})")
componentwise("ISGE", "ii", "u", "rt.b2u({0} >= {1})")
componentwise("UCMP", "uff", "f", "np.where({0} != _U32(0), {1}, {2})")
componentwise("I2F", "i", "f", "{0}.astype(_F32)")
componentwise("U2F", "u", "f", "{0}.astype(_F32)")
componentwise("F2I", "f", "i", "rt.f2i({0})")
componentwise("F2U", "f", "u", "rt.f2u({0})")
componentwise("ARL", "f", "i", "rt.f2i(np.floor({0}))")
# ARR: tgsi.rst says round(); tgsi_exec computes floor(x + 0.5).
componentwise("ARR", "f", "i", "rt.f2i(np.floor({0} + _F32(0.5)))")
componentwise("UARL", "i", "i", "{0}")
componentwise("IDIV", "ii", "i", "rt.idiv({0}, {1})")
componentwise("MOD", "ii", "i", "rt.imod({0}, {1})")
componentwise("UDIV", "uu", "u", "rt.udiv({0}, {1})")
componentwise("UMOD", "uu", "u", "rt.umod({0}, {1})")
componentwise("IMUL_HI", "ii", "i", "rt.imul_hi({0}, {1})")
componentwise("UMUL_HI", "uu", "u", "rt.umul_hi({0}, {1})")
# SAD sits among the integer opcodes of the Compute ISA; like the drivers that
# implemented it, it works on unsigned words.
componentwise("SAD", "uuu", "u", "rt.usad({0}, {1}, {2})")
componentwise("IBFE", "iii", "i", "rt.ibfe({0}, {1}, {2})")
componentwise("UBFE", "uuu", "u", "rt.ubfe({0}, {1}, {2})")
componentwise("BFI", "uuuu", "u", "rt.bfi({0}, {1}, {2}, {3})")
componentwise("BREV", "u", "u", "rt.brev({0})")
componentwise("POPC", "u", "u", "rt.popc({0})")
componentwise("LSB", "u", "i", "rt.lsb({0})")
componentwise("IMSB", "i", "i", "rt.imsb({0})")
componentwise("UMSB", "u", "i", "rt.umsb({0})")


@register("ARA")
def _ara(g: Any, inst: Instruction) -> None:
    # tgsi.rst: "TBD"; NV_vertex_program2's ARA adds the address components
    # pairwise: x = x + z, y = y + w (z and w are left alone).
    s = [g.src(inst, 0, c, "i") for c in range(4)]
    g.write(inst, {0: (f"({s[0]} + {s[2]})", "i"), 1: (f"({s[1]} + {s[3]})", "i")})


@register("PUSHA")
def _pusha(g: Any, inst: Instruction) -> None:
    g.uses.add("astack")
    vals = ", ".join(g.src(inst, 0, c) for c in range(4))
    g.emit(f"_astack.append(({vals}))")


@register("POPA")
def _popa(g: Any, inst: Instruction) -> None:
    # Popping an empty stack reads zeros.
    g.uses.add("astack")
    v = g.tmp()
    g.emit(f"{v} = _astack.pop() if _astack else (_F32(0.0),) * 4")
    g.write(inst, {c: (f"{v}[{c}]", "f") for c in range(4)})


@register("NOP")
def _nop(g: Any, inst: Instruction) -> None:
    pass


# -- fragment kill ----------------------------------------------------------------


@register("KILL", "KILP", "DEMOTE")
def _kill(g: Any, inst: Instruction) -> None:
    g.uses.add("kill")
    lanes = g.active()
    g.emit(f"_kill = {lanes}.copy() if _kill is None else (_kill | {lanes})")


@register("KILL_IF", "KIL")
def _kill_if(g: Any, inst: Instruction) -> None:
    g.uses.add("kill")
    conds = " | ".join(f"({g.src(inst, 0, c)} < _F32(0.0))" for c in range(4))
    hit = g.tmp("k")
    g.emit(f"{hit} = {g.active()} & ({conds})")
    g.emit(f"_kill = {hit} if _kill is None else (_kill | {hit})")


@register("READ_HELPER")
def _read_helper(g: Any, inst: Instruction) -> None:
    v = g.tmp()
    g.emit(f"{v} = rt.b2u(env.helper_mask) if env.helper_mask is not None else _U32(0)")
    g.write(inst, {c: (v, "u") for c in range(4)})


@register("CLOCK")
def _clock(g: Any, inst: Instruction) -> None:
    lo, hi = g.tmp(), g.tmp()
    g.emit(f"{lo}, {hi} = rt.clock64()")
    g.write(inst, {0: (lo, "u"), 1: (hi, "u")})
