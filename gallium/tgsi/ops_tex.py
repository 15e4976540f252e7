"""Emitters for texture instructions: TGSI operand layouts decoded into TexRequests.

The layouts follow Mesa's tgsi_exec.c (``exec_tex``, ``exec_txd``,
``exec_txf``, ``exec_txq``, ``exec_lodq``, ``exec_sample``): coordinates come
from ``src0`` in the order s, t, r, then the array layer; the shadow
reference sits in the component ``texture_api.shadow_ref_index`` names; the
LOD, bias or projector of TXL/TXB/TXP comes from ``src0.w`` (from ``src1.x``
for TEX2/TXB2/TXL2).  tgsi.rst's TXB says "bias = src.z", a typo for
``src0.w`` (tgsi_exec and every driver use w).

The SAMPLE* family (separate SVIEW and SAMP units) takes its target from the
``DCL SVIEW[n], target, type`` declaration and swizzles the result with the
SVIEW operand's swizzle, as tgsi_exec does.  LODQ writes only x and y, as
tgsi_exec does.  A sampler or view index that is indirectly addressed may
differ per lane: the request is then issued once per distinct unit.
"""

from __future__ import annotations

from typing import Any

from .codegen import register
from .shader import Instruction
from .texture_api import (
    ARRAY_TARGETS,
    SHADOW_OF,
    coord_count,
    coord_dim,
    shadow_ref_index,
)

_MSAA = ("2D_MSAA", "2D_ARRAY_MSAA")


# registers that may hold a bindless handle (a 64-bit value in .xy)
HANDLE_FILES = ("TEMP", "CONST", "IN", "IMM", "ADDR", "SV")
# the high word of a handle SAMP2HND / IMG2HND makes for a bound slot (the low
# word): context-made handles never have the top bit
TEX_SLOT_TAG = 0x80000000
IMG_SLOT_TAG = 0x80000001


# Opcodes that filter (they need sampler state): where their sampler operand
# is.  The TEX family's SAMP[i] names both the view and the sampler; the
# SAMPLE family reads SVIEW from source 1 and SAMP from source 2.
_TEX_SAMPLER_SRC = {
    "TEX": 1, "TXP": 1, "TXB": 1, "TXL": 1, "TEX2": 2, "TXB2": 2, "TXL2": 2,
    "TXD": 3, "TG4": 2, "LODQ": 1,
}  # fmt: skip
_SEPARATE_SAMPLER_OPS = frozenset(
    ("SAMPLE", "SAMPLE_B", "SAMPLE_L", "SAMPLE_C", "SAMPLE_C_LZ", "SAMPLE_D", "GATHER4", "LOD")
)


def sampler_pairs(shader: Any) -> frozenset[tuple[int, int]]:
    """The (sampler view slot, sampler state slot) pairs a program filters
    with: the state it needs bound wherever the view is.  An indirectly
    indexed operand stands for every slot its file declares; a bindless
    handle for none (it carries its own sampler)."""

    def slots(reg: Any) -> list[int]:
        if reg.file in HANDLE_FILES:
            return []
        if reg.indirect is None:
            return [reg.index]
        return [i for d in shader.declared(reg.file) for i in range(d.first, d.last + 1)]

    pairs: set[tuple[int, int]] = set()
    for inst in shader.instructions:
        op = inst.opcode
        k = _TEX_SAMPLER_SRC.get(op)
        if k is not None and k < len(inst.src):
            pairs.update((i, i) for i in slots(inst.src[k].reg))
        elif op in _SEPARATE_SAMPLER_OPS and len(inst.src) > 2:
            views, samplers = slots(inst.src[1].reg), slots(inst.src[2].reg)
            pairs.update((v, s) for v in views for s in samplers)
    return frozenset(pairs)


def _unit(g: Any, inst: Instruction, k: int, files: tuple[str, ...]) -> str:
    """The register index of a SAMP / SVIEW operand, per lane when indirect;
    for a sampler operand in another register, a bindless texture handle in
    its .xy: the unit the draw's bindings give the handle
    (runtime.bindless_unit; -1 for none)."""
    if k >= len(inst.src):
        raise g.fail(inst, f"needs a {' or '.join(files)} operand (source {k})")
    reg = inst.src[k].reg
    if "SAMP" in files and reg.file in HANDLE_FILES:
        lo, hi = g.src(inst, k, 0, "u"), g.src(inst, k, 1, "u")
        unit = g.tmp("bl")
        g.emit(f"{unit} = rt.bindless_unit(env.textures, {lo}, {hi})")
        return unit
    if reg.file not in files:
        raise g.fail(inst, f"source {k} must be a {' or '.join(files)} register, not {reg.file}")
    if reg.indirect is None:
        return str(reg.index)
    return g.index_expr(reg.index, reg.indirect)


def _offsets(g: Any, inst: Instruction) -> str | None:
    if not inst.tex_offsets:
        return None
    if len(inst.tex_offsets) > 1:
        raise g.unsupported(
            inst, "texture instructions with more than one texel offset (textureGatherOffsets)"
        )
    off = inst.tex_offsets[0]
    parts = [g.read_reg(off.reg, c, "i") for c in off.swizzle]
    return "(" + ", ".join(parts) + ")"


def _target(g: Any, inst: Instruction) -> str:
    if inst.texture is None or inst.texture == "UNKNOWN":
        raise g.fail(inst, "needs a texture target")
    return inst.texture


def _coords(
    g: Any, inst: Instruction, target: str, proj: bool = False, ref_src1: bool = False
) -> dict[str, str]:
    """Name the coordinate components of src0 for ``target``."""
    comps = [g.src(inst, 0, c, "f") for c in range(4)]
    dim = coord_dim(target)
    ref_i = shadow_ref_index(target)
    if proj:
        q = g.tmp("q")
        g.emit(f"{q} = {comps[3]}")
        divide = set(range(min(dim, 3)))
        if ref_i is not None and ref_i < 3:
            divide.add(ref_i)
        for c in sorted(divide):
            v = g.tmp("p")
            g.emit(f"{v} = {comps[c]} / {q}")
            comps[c] = v
    n = coord_count(target)
    out = {"s": comps[0]}
    if n >= 2:
        out["t"] = comps[1]
    if n >= 3:
        out["r"] = comps[2]
    if target in ARRAY_TARGETS:
        out["layer"] = comps[n]
    if ref_i is not None and ref_i < 4:
        out["ref"] = comps[ref_i]
    elif ref_i == 4 and ref_src1:
        out["ref"] = g.src(inst, 1, 0, "f")
    return out


def _derivs(g: Any, inst: Instruction, k: int, target: str) -> tuple[str, str]:
    n = coord_count(target)
    ddx = "[" + ", ".join(g.src(inst, k, c, "f") for c in range(n)) + "]"
    ddy = "[" + ", ".join(g.src(inst, k + 1, c, "f") for c in range(n)) + "]"
    return ddx, ddy


def _call(
    g: Any,
    inst: Instruction,
    op: str,
    unit: str,
    sampler: str,
    target: str,
    fields: dict[str, str],
    swizzle: tuple[int, int, int, int] = (0, 1, 2, 3),
    chans: tuple[int, ...] = (0, 1, 2, 3),
) -> None:
    args = [f"op={op!r}", "unit=0", "sampler=0", f"target={target!r}", "n=n"]
    args += [f"{k}={v}" for k, v in fields.items()]
    args.append("quad_shape=env.quad_shape")
    res = g.tmp("tex")
    g.emit(
        f"{res} = rt.tex_exec(env.textures, _TexRequest({', '.join(args)}), "
        f"{unit}, {sampler}, {g.mask})"
    )
    g.write(inst, {c: (f"{res}[{swizzle[c]}]", "f") for c in chans})


@register("TEX", "TXP", "TXB", "TXL")
def _tex(g: Any, inst: Instruction) -> None:
    op = inst.opcode
    target = _target(g, inst)
    fields = _coords(g, inst, target, proj=op == "TXP")
    if op == "TXB":
        fields["bias"] = g.src(inst, 0, 3)
    elif op == "TXL":
        fields["lod"] = g.src(inst, 0, 3)
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    unit = _unit(g, inst, 1, ("SAMP", "SVIEW"))
    _call(g, inst, "sample", unit, unit, target, fields)


@register("TEX2", "TXB2", "TXL2")
def _tex2(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    op = inst.opcode
    fields = _coords(g, inst, target, ref_src1=op == "TEX2")
    if op == "TXB2":
        fields["bias"] = g.src(inst, 1, 0)
    elif op == "TXL2":
        fields["lod"] = g.src(inst, 1, 0)
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    unit = _unit(g, inst, 2, ("SAMP", "SVIEW"))
    _call(g, inst, "sample", unit, unit, target, fields)


@register("TXD")
def _txd(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    fields = _coords(g, inst, target)
    fields["ddx"], fields["ddy"] = _derivs(g, inst, 1, target)
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    unit = _unit(g, inst, 3, ("SAMP", "SVIEW"))
    _call(g, inst, "sample", unit, unit, target, fields)


@register("TG4")
def _tg4(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    fields = _coords(g, inst, target, ref_src1=True)
    if "ref" not in fields:
        # The component is read as raw bits, as softpipe's sampler does.
        fields["component"] = f"({g.src(inst, 1, 0, 'u')} & _U32(3))"
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    unit = _unit(g, inst, 2, ("SAMP", "SVIEW"))
    _call(g, inst, "gather", unit, unit, target, fields)


@register("LODQ")
def _lodq(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    fields = _coords(g, inst, target)
    fields.pop("ref", None)
    unit = _unit(g, inst, 1, ("SAMP", "SVIEW"))
    _call(g, inst, "lod", unit, unit, target, fields, chans=(0, 1))


def _fetch_fields(g: Any, inst: Instruction, target: str) -> dict[str, str]:
    comp = [g.src(inst, 0, c, "i") for c in range(4)]
    n = coord_count(target)
    fields = {"s": comp[0]}
    if n >= 2:
        fields["t"] = comp[1]
    if n >= 3:
        fields["r"] = comp[2]
    if target in ARRAY_TARGETS:
        fields["layer"] = comp[n]
    if target in _MSAA:
        fields["sample"] = comp[3]
    elif target != "BUFFER":
        fields["lod"] = comp[3]
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    return fields


@register("TXF")
def _txf(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    fields = _fetch_fields(g, inst, target)
    unit = _unit(g, inst, 1, ("SAMP", "SVIEW"))
    _call(g, inst, "fetch", unit, unit, target, fields)


@register("TXQ")
def _txq(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    unit = _unit(g, inst, 1, ("SAMP", "SVIEW"))
    _call(g, inst, "size", unit, unit, target, {"lod": g.src(inst, 0, 0, "i")})


@register("TXQS")
def _txqs(g: Any, inst: Instruction) -> None:
    target = _target(g, inst)
    unit = _unit(g, inst, 0, ("SAMP", "SVIEW"))
    _call(g, inst, "samples", unit, unit, target, {})


# -- the SAMPLE family: separate sampler view and sampler units -----------------------


def _sview_target(g: Any, inst: Instruction, k: int) -> str:
    reg = inst.src[k].reg if k < len(inst.src) else None
    if reg is None or reg.file != "SVIEW":
        raise g.fail(inst, f"source {k} must be an SVIEW register")
    decl = g.declaration("SVIEW", reg.index)
    if decl is None or decl.sview_target is None:
        raise g.fail(inst, f"SVIEW[{reg.index}] has no DCL SVIEW with a texture target")
    return decl.sview_target


def _swizzle(inst: Instruction, k: int) -> tuple[int, int, int, int]:
    return inst.src[k].swizzle


@register("SAMPLE", "SAMPLE_B", "SAMPLE_L", "SAMPLE_C", "SAMPLE_C_LZ", "SAMPLE_D", "GATHER4")
def _sample(g: Any, inst: Instruction) -> None:
    op = inst.opcode
    target = _sview_target(g, inst, 1)
    fields = _coords(g, inst, target)
    if op in ("SAMPLE_C", "SAMPLE_C_LZ"):
        fields["ref"] = g.src(inst, 3, 0)
        target = SHADOW_OF.get(target, target)
        if op == "SAMPLE_C_LZ":
            fields["lod"] = "_F32(0.0)"
    elif op == "SAMPLE_B":
        fields["bias"] = g.src(inst, 3, 0)
    elif op == "SAMPLE_L":
        fields["lod"] = g.src(inst, 3, 0)
    elif op == "SAMPLE_D":
        fields["ddx"], fields["ddy"] = _derivs(g, inst, 3, target)
    off = _offsets(g, inst)
    if off:
        fields["offset"] = off
    unit = _unit(g, inst, 1, ("SVIEW",))
    sampler = _unit(g, inst, 2, ("SAMP",))
    kind = "gather" if op == "GATHER4" else "sample"
    _call(g, inst, kind, unit, sampler, target, fields, swizzle=_swizzle(inst, 1))


@register("SAMPLE_I", "SAMPLE_I_MS")
def _sample_i(g: Any, inst: Instruction) -> None:
    target = _sview_target(g, inst, 1)
    fields = _fetch_fields(g, inst, target)
    if inst.opcode == "SAMPLE_I_MS":
        fields.pop("lod", None)
        fields["sample"] = g.src(inst, 2, 0, "i")
    unit = _unit(g, inst, 1, ("SVIEW",))
    _call(g, inst, "fetch", unit, unit, target, fields, swizzle=_swizzle(inst, 1))


@register("SVIEWINFO")
def _sviewinfo(g: Any, inst: Instruction) -> None:
    # As tgsi_exec (exec_txq): no swizzle of the result.
    target = _sview_target(g, inst, 1)
    unit = _unit(g, inst, 1, ("SVIEW",))
    _call(g, inst, "size", unit, unit, target, {"lod": g.src(inst, 0, 0, "i")})


@register("LOD")
def _lod(g: Any, inst: Instruction) -> None:
    # tgsi_exec's exec_lodq for LOD: result channels swizzled by the SVIEW
    # operand; swizzle components z and w read 0.
    target = _sview_target(g, inst, 1)
    fields = _coords(g, inst, target)
    fields.pop("ref", None)
    unit = _unit(g, inst, 1, ("SVIEW",))
    sampler = _unit(g, inst, 2, ("SAMP",))
    res = g.tmp("tex")
    args = ", ".join(
        ["op='lod'", "unit=0", "sampler=0", f"target={target!r}", "n=n"]
        + [f"{k}={v}" for k, v in fields.items()]
        + ["quad_shape=env.quad_shape"]
    )
    g.emit(f"{res} = rt.tex_exec(env.textures, _TexRequest({args}), {unit}, {sampler}, {g.mask})")
    sw = _swizzle(inst, 1)
    g.write(inst, {c: (f"{res}[{sw[c]}]" if sw[c] < 2 else "_F32(0.0)", "f") for c in range(4)})


# -- multisample queries --------------------------------------------------------------


@register("SAMPLE_INFO")
def _sample_info(g: Any, inst: Instruction) -> None:
    """``SAMPLE_INFO dst, source``: (sample count, 0, 0, 0) of a sampler view
    (as TXQS) or, for any other source, of the render target when shading
    per sample (1 otherwise), the source's swizzle applied."""
    reg = inst.src[0].reg if inst.src else None
    res = g.tmp("info")
    if reg is not None and reg.file in ("SVIEW", "SAMP"):
        unit = _unit(g, inst, 0, ("SVIEW", "SAMP"))
        g.emit(
            f"{res} = rt.tex_exec(env.textures, _TexRequest(op='samples', unit=0, sampler=0, "
            f"target='2D_MSAA', n=n), {unit}, {unit}, {g.mask})"
        )
    else:
        g.emit(f"{res} = rt.sample_info(env.system_values)")
    sw = _swizzle(inst, 0)
    g.write(inst, {c: (f"{res}[{sw[c]}]", "i") for c in range(4)})


@register("SAMPLE_POS")
def _sample_pos(g: Any, inst: Instruction) -> None:
    """``SAMPLE_POS dst, source, sample_index``: (x, y, 0, 0) in [0, 1) of the
    sample of a sampler view's resource or, for any other source, of the
    render target when shading per sample ((0.5, 0.5) otherwise)."""
    reg = inst.src[0].reg if inst.src else None
    index = g.src(inst, 1, 0, "i")
    res = g.tmp("pos")
    if reg is not None and reg.file in ("SVIEW", "SAMP"):
        unit = _unit(g, inst, 0, ("SVIEW", "SAMP"))
        g.emit(
            f"{res} = rt.tex_exec(env.textures, _TexRequest(op='sample_pos', unit=0, sampler=0, "
            f"target='2D_MSAA', n=n, sample={index}), {unit}, {unit}, {g.mask})"
        )
    else:
        g.emit(f"{res} = rt.sample_pos(env.system_values, {index}, n)")
    sw = _swizzle(inst, 0)
    g.write(inst, {c: (f"{res}[{sw[c]}]", "f") for c in range(4)})


# -- framebuffer fetch ------------------------------------------------------------------


@register("FBFETCH")
def _fbfetch(g: Any, inst: Instruction) -> None:
    """``FBFETCH dst, OUT[i]``: the colour of the fragment's pixel in the
    colour buffer of COLOR output ``i`` (its semantic index; every buffer's
    is 0's under FS_COLOR0_WRITES_ALL_CBUFS) as it was before this
    invocation -- floats for normalised and float formats, integer bits for
    integer ones (tgsi.rst).  The rasterizer answers it
    (workers/raster.py ``_fbfetch``)."""
    if g.shader.processor != "FRAG":
        raise g.fail(inst, "FBFETCH is a fragment shader instruction")
    reg = inst.src[0].reg if inst.src else None
    if reg is None or reg.file != "OUT":
        raise g.fail(inst, "FBFETCH reads an OUT register")
    index = None
    for d in g.shader.declarations:
        if d.file == "OUT" and d.first <= reg.index <= d.last and d.semantic == "COLOR":
            index = d.semantic_index + (reg.index - d.first)
    if index is None:
        raise g.fail(inst, f"FBFETCH needs a COLOR output; OUT[{reg.index}] is not one")
    res = g.tmp("fb")
    g.emit(f"{res} = rt.fbfetch(env.system_values, {index}, n)")
    sw = _swizzle(inst, 0)
    g.write(inst, {c: (f"{res}[{sw[c]}]", "f") for c in range(4)})


# -- bindless handles of bound slots ------------------------------------------------------


def _slot_handle(g: Any, inst: Instruction, file: str, tag: int) -> None:
    reg = inst.src[0].reg if inst.src else None
    if reg is None or reg.file != file:
        raise g.fail(inst, f"source 0 must be a {file} register")
    if reg.indirect is None:
        lo = f"_U32({reg.index})"
    else:
        lo = f"_as({g.index_expr(reg.index, reg.indirect)}, _U32)"
    g.write(
        inst, {0: (lo, "u"), 1: (f"_U32({tag})", "u"), 2: ("_U32(0)", "u"), 3: ("_U32(0)", "u")}
    )


@register("SAMP2HND")
def _samp2hnd(g: Any, inst: Instruction) -> None:
    """``SAMP2HND dst, SAMP[i]``: a bindless handle (.xy) for sampler unit i
    (its view and sampler state) of the stage."""
    _slot_handle(g, inst, "SAMP", TEX_SLOT_TAG)


@register("IMG2HND")
def _img2hnd(g: Any, inst: Instruction) -> None:
    """``IMG2HND dst, IMAGE[i]``: a bindless handle (.xy) for image unit i."""
    _slot_handle(g, inst, "IMAGE", IMG_SLOT_TAG)
