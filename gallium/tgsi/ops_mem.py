"""Emitters for memory, synchronisation, geometry-output and interpolation opcodes.

LOAD, STORE, ATOM* and RESQ on BUFFER, MEMORY and IMAGE become
:class:`~gallium.tgsi.memory_api.MemoryRequest` calls on ``ExecEnv.memory``
(operand layouts as tgsi_exec's ``exec_load``/``exec_store``/``exec_atomop``:
``LOAD dst, resource, address``, ``STORE resource, address, value``,
``ATOM* dst, resource, address, value[, new]`` where ATOMCAS stores ``new``
when the word equals ``value``).  Stores and atomics act only for lanes that
are executing, not killed and not helper invocations; memory qualifiers
(COHERENT, RESTRICT, VOLATILE) change nothing because every operation
completes, in lane order, before the next instruction starts.  LOAD from a
CONST register reads the bound constant buffer as bytes (tgsi_exec's
``TGSI_FILE_CONSTANT`` case).

BARRIER and MEMBAR are no-ops: the kernel runs all invocations of a block at
once, instruction by instruction, so the ordering they ask for already holds.
A driver must therefore run a block's invocations in one kernel call.

EMIT / ENDPRIM (geometry shaders) append :class:`~gallium.tgsi.compiler.GsEvent`
records to ``KernelResult.emitted``; see that class for the format.
"""

from __future__ import annotations

from typing import Any

from .codegen import register
from .memory_api import IMAGE_COORDS
from .shader import Instruction

_ATOMIC = {
    "ATOMUADD": "UADD",
    "ATOMXCHG": "XCHG",
    "ATOMCAS": "CAS",
    "ATOMAND": "AND",
    "ATOMOR": "OR",
    "ATOMXOR": "XOR",
    "ATOMUMIN": "UMIN",
    "ATOMUMAX": "UMAX",
    "ATOMIMIN": "IMIN",
    "ATOMIMAX": "IMAX",
    "ATOMFADD": "FADD",
    "ATOMINC_WRAP": "INC_WRAP",
    "ATOMDEC_WRAP": "DEC_WRAP",
}

_MEM_FILES = ("BUFFER", "MEMORY", "IMAGE")


def _bindless(reg: Any) -> bool:
    """A memory operand in a register holding a bindless image handle (.xy)."""
    from .ops_tex import HANDLE_FILES

    return reg.file in HANDLE_FILES


def _file(reg: Any) -> str:
    return "IMAGE" if _bindless(reg) else reg.file


def _resource(g: Any, inst: Instruction, reg: Any, files: tuple[str, ...]) -> str:
    if _bindless(reg):  # the image unit the grid's bindings give the handle (-1: none)
        if inst.opcode == "STORE":  # (the handle is in the destination register)
            lo, hi = g.read_reg(reg, 0, "u"), g.read_reg(reg, 1, "u")
        else:
            lo, hi = g.src(inst, 0, 0, "u"), g.src(inst, 0, 1, "u")
        unit = g.tmp("bl")
        g.emit(f"{unit} = rt.bindless_image_unit(env.memory, {lo}, {hi})")
        return unit
    if reg.file not in files:
        raise g.fail(inst, f"operates on {', '.join(files)} registers, not {reg.file}")
    if reg.indirect is None:
        return str(reg.index)
    return g.index_expr(reg.index, reg.indirect)


def _image_info(g: Any, inst: Instruction, reg: Any) -> tuple[str, str | None]:
    bound = reg.file == "IMAGE" and reg.indirect is None
    decl = g.declaration("IMAGE", reg.index) if bound else None
    target = inst.memory_texture or (decl.image_target if decl else None)
    if target is None or target == "UNKNOWN":
        raise g.fail(inst, "an IMAGE operation needs a texture target")
    if target not in IMAGE_COORDS:
        raise g.fail(inst, f"images have no {target} target")
    fmt = inst.memory_format or (decl.image_format if decl else None)
    return target, fmt


def _address_fields(g: Any, inst: Instruction, reg: Any, k: int) -> dict[str, str]:
    """Request fields for the address operand ``src[k]``."""
    if reg.file == "IMAGE" or _bindless(reg):
        target, fmt = _image_info(g, inst, reg)
        n = IMAGE_COORDS[target]
        coords = [g.src(inst, k, c, "i") for c in range(n)]
        fields = {"coords": "(" + ", ".join(coords) + ",)", "target": repr(target)}
        if fmt is not None:
            fields["format"] = repr(fmt)
        if target.endswith("MSAA"):
            fields["sample"] = g.src(inst, k, 3, "i")
        return fields
    return {"offset": g.src(inst, k, 0, "u")}


def _request(g: Any, op: str, file: str, unit: str, mask: str, fields: dict[str, str]) -> str:
    args = [f"op={op!r}", f"file={file!r}", f"unit={unit}", "n=n", f"mask={mask}"]
    args += [f"{k}={v}" for k, v in fields.items()]
    return f"_MemoryRequest({', '.join(args)})"


@register("LOAD")
def _load(g: Any, inst: Instruction) -> None:
    reg = inst.src[0].reg
    wm = inst.dst[0].writemask
    res = g.tmp("mem")
    if reg.file in ("CONST", "CONSTBUF"):
        b = reg.dimension if reg.dimension is not None else reg.index
        off = g.src(inst, 1, 0, "u")
        buf = f"rt.const_buf(env.consts, {b})"
        g.emit(f"{res} = rt.load_const_bytes({buf}, {off}, {wm}, {g.active()}, n)")
    else:
        unit = _resource(g, inst, reg, _MEM_FILES)
        fields = _address_fields(g, inst, reg, 1)
        fields["writemask"] = str(wm)
        req = _request(g, "load", _file(reg), unit, g.active(), fields)
        g.emit(f"{res} = rt.mem_exec(env.memory, {req})")
    g.write(inst, {c: (f"{res}[{c}]", "f") for c in range(4)})


@register("STORE")
def _store(g: Any, inst: Instruction) -> None:
    d = inst.dst[0]
    reg = d.reg
    unit = _resource(g, inst, reg, _MEM_FILES)
    fields = _address_fields(g, inst, reg, 0)
    vals = [g.src(inst, 1, c, "u") for c in range(4)]
    fields["values"] = "[" + ", ".join(vals) + "]"
    fields["writemask"] = str(d.writemask)
    req = _request(g, "store", _file(reg), unit, g.effects(), fields)
    g.emit(f"rt.mem_exec(env.memory, {req})")


def _atomic(g: Any, inst: Instruction) -> None:
    reg = inst.src[0].reg
    unit = _resource(g, inst, reg, _MEM_FILES)
    fields = _address_fields(g, inst, reg, 1)
    if inst.opcode == "ATOMCAS":
        fields["compare"] = g.src(inst, 2, 0, "u")
        fields["values"] = f"[{g.src(inst, 3, 0, 'u')}]"
    else:
        fields["values"] = f"[{g.src(inst, 2, 0, 'u')}]"
    fields["atomic"] = repr(_ATOMIC[inst.opcode])
    res = g.tmp("mem")
    req = _request(g, "atomic", _file(reg), unit, g.effects(), fields)
    g.emit(f"{res} = rt.mem_exec(env.memory, {req})")
    g.write(inst, {c: (f"{res}[{c}]", "f") for c in range(4)})


for _name in _ATOMIC:
    register(_name)(_atomic)


@register("RESQ")
def _resq(g: Any, inst: Instruction) -> None:
    reg = inst.src[0].reg
    unit = _resource(g, inst, reg, _MEM_FILES)
    fields: dict[str, str] = {}
    if reg.file == "IMAGE" or _bindless(reg):
        target, _fmt = _image_info(g, inst, reg)
        fields["target"] = repr(target)
    res = g.tmp("mem")
    req = _request(g, "size", _file(reg), unit, g.active(), fields)
    g.emit(f"{res} = rt.mem_exec(env.memory, {req})")
    g.write(inst, {c: (f"{res}[{c}]", "f") for c in range(4)})


@register("BARRIER", "MEMBAR")
def _barrier(g: Any, inst: Instruction) -> None:
    # Every lane has finished all earlier instructions already (module docstring).
    pass


# -- geometry shader output ------------------------------------------------------------


def _stream(g: Any, inst: Instruction) -> str:
    return g.src(inst, 0, 0, "u") if inst.src else "_U32(0)"


@register("EMIT")
def _emit(g: Any, inst: Instruction) -> None:
    if g.shader.processor != "GEOM":
        raise g.fail(inst, "EMIT is only valid in geometry shaders")
    g.uses.add("gs")
    lanes = g.tmp("e")
    g.emit(f"{lanes} = {g.active()} & (_gs_count < _gs_max)")
    outs = ", ".join(f"{o}: [{', '.join(g.output_snapshot(o))}]" for o in g.outputs)
    g.emit(f"_emitted.append(_GsEvent('vertex', {_stream(g, inst)}, {lanes}, {{{outs}}}))")
    g.emit(f"_gs_count = _gs_count + {lanes}")
    g.emit(f"_gs_open = _gs_open | {lanes}")


@register("ENDPRIM")
def _endprim(g: Any, inst: Instruction) -> None:
    if g.shader.processor != "GEOM":
        raise g.fail(inst, "ENDPRIM is only valid in geometry shaders")
    g.uses.add("gs")
    lanes = g.tmp("e")
    g.emit(f"{lanes} = {g.active()} & _gs_open")
    g.emit(f"_emitted.append(_GsEvent('end', {_stream(g, inst)}, {lanes}, None))")
    g.emit(f"_gs_open = _gs_open & ~{lanes}")


# -- interpolation at a location -------------------------------------------------------


def _input_decl(g: Any, inst: Instruction):
    reg = inst.src[0].reg
    if reg.file != "IN":
        raise g.fail(inst, "interpolates an IN register")
    return g.declaration("IN", reg.index)


@register("INTERP_CENTROID", "INTERP_SAMPLE")
def _interp_centre(g: Any, inst: Instruction) -> None:
    # Single-sample rasterization: the centroid and sample 0 are the pixel
    # centre, where the input was interpolated (tgsi_exec does the same).
    _input_decl(g, inst)
    g.write(inst, {c: (g.src(inst, 0, c), "f") for c in range(4)})


@register("INTERP_OFFSET")
def _interp_offset(g: Any, inst: Instruction) -> None:
    decl = _input_decl(g, inst)
    mode = decl.interpolate if decl is not None else None
    if mode not in ("LINEAR", "CONSTANT"):
        raise g.unsupported(
            inst,
            f"INTERP_OFFSET of a {mode or 'PERSPECTIVE'} input (needs the interpolation "
            "coefficients; only LINEAR and CONSTANT inputs are supported)",
        )
    ox, oy = g.src(inst, 1, 0), g.src(inst, 1, 1)
    res = {}
    for c in range(4):
        v = g.src(inst, 0, c)
        if mode == "CONSTANT":
            res[c] = (v, "f")
        else:
            # A linear input is a plane in x and y: its fine derivatives are exact.
            res[c] = (
                f"({v} + {ox} * rt.ddx({v}, env.quad_shape, True)"
                f" + {oy} * rt.ddy({v}, env.quad_shape, True))",
                "f",
            )
    g.write(inst, res)
