"""The parsed form of a TGSI program, and its printer.

A :class:`Shader` is plain immutable data: declarations, immediates,
properties and instructions in source order.  Two shaders compare equal when
their programs are the same, whatever the source spacing, case or labels were;
``Shader.to_text()`` prints text that ``parse()`` reads back to an equal shader
(floats are printed with as many digits as a float32 needs, so nothing is lost).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .tokens import OPCODES, OpcodeInfo

SWIZZLE_CHARS = "xyzw"


@dataclass(frozen=True, slots=True)
class Indirect:
    """An address operand inside brackets: ``ADDR[0].x`` in ``TEMP[ADDR[0].x+3](1)``.

    ``array_id`` is the ``(1)`` after the bracket: which declared array the
    indirect access stays inside (tgsi_text keeps it only for indirect access).
    """

    file: str
    index: int
    component: int = 0
    array_id: int = 0

    def to_text(self) -> str:
        return f"{self.file}[{self.index}].{SWIZZLE_CHARS[self.component]}"


@dataclass(frozen=True, slots=True)
class Register:
    """A register reference: file, index (the offset when indirect), and an
    optional first dimension (``CONST[1][4]`` has ``dimension=1``, ``index=4``)."""

    file: str
    index: int
    indirect: Indirect | None = None
    dimension: int | None = None
    dim_indirect: Indirect | None = None

    def to_text(self) -> str:
        out = self.file
        if self.dimension is not None:
            out += _bracket(self.dimension, self.dim_indirect)
        return out + _bracket(self.index, self.indirect)


def _bracket(index: int, indirect: Indirect | None) -> str:
    if indirect is None:
        return f"[{index}]"
    arr = f"({indirect.array_id})" if indirect.array_id else ""
    if index > 0:
        return f"[{indirect.to_text()}+{index}]{arr}"
    if index < 0:
        return f"[{indirect.to_text()}-{-index}]{arr}"
    return f"[{indirect.to_text()}]{arr}"


@dataclass(frozen=True, slots=True)
class Src:
    """A source operand: register, swizzle (indices 0..3), negate, absolute."""

    reg: Register
    swizzle: tuple[int, int, int, int] = (0, 1, 2, 3)
    negate: bool = False
    absolute: bool = False

    def to_text(self) -> str:
        body = self.reg.to_text()
        if self.swizzle != (0, 1, 2, 3):
            body += "." + "".join(SWIZZLE_CHARS[c] for c in self.swizzle)
        if self.absolute:
            body = f"|{body}|"
        if self.negate:
            body = "-" + body
        return body


@dataclass(frozen=True, slots=True)
class Dst:
    """A destination operand: register and write mask (bit 0 = x ... bit 3 = w)."""

    reg: Register
    writemask: int = 0xF

    def to_text(self) -> str:
        body = self.reg.to_text()
        if self.writemask != 0xF:
            body += "." + "".join(SWIZZLE_CHARS[c] for c in range(4) if self.writemask >> c & 1)
        return body


@dataclass(frozen=True, slots=True)
class TexOffset:
    """A texel offset operand of a texture instruction (three swizzled components)."""

    reg: Register
    swizzle: tuple[int, int, int] = (0, 1, 2)

    def to_text(self) -> str:
        body = self.reg.to_text()
        if self.swizzle != (0, 1, 2):
            body += "." + "".join(SWIZZLE_CHARS[c] for c in self.swizzle)
        return body


@dataclass(frozen=True, slots=True)
class Instruction:
    """One TGSI instruction.  ``line`` is where it was parsed (not compared)."""

    opcode: str
    dst: tuple[Dst, ...] = ()
    src: tuple[Src, ...] = ()
    saturate: bool = False
    precise: bool = False
    texture: str | None = None
    tex_offsets: tuple[TexOffset, ...] = ()
    memory_qualifiers: tuple[str, ...] = ()
    memory_texture: str | None = None
    memory_format: str | None = None
    label: int | None = None
    line: int = field(default=0, compare=False)

    @property
    def info(self) -> OpcodeInfo:
        return OPCODES[self.opcode]

    def to_text(self) -> str:
        name = self.opcode
        if self.saturate:
            name += "_SAT"
        if self.precise:
            name += "_PRECISE"
        operands = [d.to_text() for d in self.dst] + [s.to_text() for s in self.src]
        if self.texture is not None and self.info.is_tex:
            operands.append(self.texture)
        operands += [o.to_text() for o in self.tex_offsets]
        operands += list(self.memory_qualifiers)
        if self.memory_texture is not None:
            operands.append(self.memory_texture)
        if self.memory_format is not None:
            operands.append(self.memory_format)
        text = name + (" " + ", ".join(operands) if operands else "")
        if self.label is not None:
            text += f" :{self.label}"
        return text


@dataclass(frozen=True, slots=True)
class Declaration:
    """One ``DCL`` statement.  Only the fields its register file uses are set.

    tgsi_text reads ``, COLOR`` after a register as the COLOR semantic, so a
    declaration with COLOR interpolation needs a semantic to be printable.
    """

    file: str
    first: int
    last: int
    dimension: int | None = None  # ``DCL CONST[1][0..3]`` -> 1
    usage_mask: int = 0xF
    array_id: int = 0
    semantic: str | None = None
    semantic_index: int = 0
    local: bool = False
    interpolate: str | None = None
    location: str | None = None
    invariant: bool = False
    sview_target: str | None = None
    return_types: tuple[str, str, str, str] | None = None
    image_target: str | None = None
    image_raw: bool = False
    image_writable: bool = False
    image_format: str | None = None
    atomic: bool = False
    mem_type: str | None = None
    streams: tuple[int, int, int, int] | None = None
    line: int = field(default=0, compare=False)

    def to_text(self) -> str:
        rng = f"{self.first}" if self.first == self.last else f"{self.first}..{self.last}"
        out = f"DCL {self.file}"
        if self.dimension is not None:
            out += f"[{self.dimension}]"
        out += f"[{rng}]"
        if self.usage_mask != 0xF:
            out += "." + "".join(SWIZZLE_CHARS[c] for c in range(4) if self.usage_mask >> c & 1)
        if self.array_id:
            out += f", ARRAY({self.array_id})"
        if self.image_target is not None:
            out += f", {self.image_target}"
            if self.image_raw:
                out += ", RAW"
            if self.image_writable:
                out += ", WR"
            if self.image_format is not None:
                out += f", {self.image_format}"
        if self.sview_target is not None:
            out += f", {self.sview_target}"
            if self.return_types is not None:
                rt = self.return_types
                out += ", " + (rt[0] if len(set(rt)) == 1 else ", ".join(rt))
        if self.atomic:
            out += ", ATOMIC"
        if self.mem_type is not None:
            out += f", {self.mem_type}"
        if self.local:
            out += ", LOCAL"
        if self.semantic is not None:
            out += f", {self.semantic}"
            # As tgsi_dump: GENERIC and TEXCOORD always show their index.
            if self.semantic_index or self.semantic in ("GENERIC", "TEXCOORD"):
                out += f"[{self.semantic_index}]"
        if self.streams is not None:
            out += ", STREAM({}, {}, {}, {})".format(*self.streams)
        if self.interpolate is not None:
            out += f", {self.interpolate}"
        if self.location is not None:
            out += f", {self.location}"
        if self.invariant:
            out += ", INVARIANT"
        return out


@dataclass(frozen=True, slots=True)
class Immediate:
    """``IMM[n] TYPE {...}``: four 32-bit words, kept as raw bits.

    64-bit types (FLT64/UINT64/INT64) pack two values into the four words, low
    word first, as Mesa does.
    """

    type: str
    bits: tuple[int, int, int, int]
    line: int = field(default=0, compare=False)

    @property
    def values(self) -> tuple[float | int, ...]:
        """The typed values: four for 32-bit types, two for 64-bit types."""
        b = self.bits
        if self.type == "FLT32":
            return struct.unpack("<4f", struct.pack("<4I", *b))
        if self.type == "UINT32":
            return tuple(b)
        if self.type == "INT32":
            return struct.unpack("<4i", struct.pack("<4I", *b))
        raw = struct.pack("<4I", *b)
        fmt = {"FLT64": "<2d", "UINT64": "<2Q", "INT64": "<2q"}[self.type]
        return struct.unpack(fmt, raw)

    def to_text(self, index: int) -> str:
        if self.type == "FLT32":
            items = [_float_text(b, True) for b in self.bits]
        elif self.type == "FLT64":
            b = self.bits
            items = [_float_text(b[i] | (b[i + 1] << 32), False) for i in (0, 2)]
        else:
            items = [str(int(v)) for v in self.values]
        return f"IMM[{index}] {self.type} {{{', '.join(items)}}}"


def _float_text(bits: int, single: bool) -> str:
    """Shortest text that strtof/strtod read back to the same bits.

    A NaN prints as ``nan(0x<payload>)`` (glibc's strtof sets the low mantissa
    bits from it); a signalling NaN cannot be written in C float syntax and
    prints as the quiet NaN with its payload.
    """
    import numpy as np

    mant_bits = 23 if single else 52
    exp_mask = 0xFF if single else 0x7FF
    sign = "-" if bits >> (31 if single else 63) & 1 else ""
    exponent = bits >> mant_bits & exp_mask
    mantissa = bits & ((1 << mant_bits) - 1)
    if exponent == exp_mask:
        if mantissa == 0:
            return sign + "inf"
        payload = mantissa & ((1 << (mant_bits - 1)) - 1)
        return sign + (f"nan(0x{payload:x})" if payload else "nan")
    if single:
        value = np.array(bits, np.uint32).view(np.float32)[()]
    else:
        value = np.array(bits, np.uint64).view(np.float64)[()]
    v = float(value)
    if v == 0.0 or 1e-4 <= abs(v) < 1e7:
        return np.format_float_positional(value, unique=True, trim="0")
    return np.format_float_scientific(value, unique=True, trim="-")


@dataclass(frozen=True, slots=True)
class Property:
    """``PROPERTY NAME value``; ``value`` is an int or, for named values, a name."""

    name: str
    value: int | str
    line: int = field(default=0, compare=False)

    def to_text(self) -> str:
        return f"PROPERTY {self.name} {self.value}"


@dataclass(frozen=True, slots=True)
class Shader:
    """A whole TGSI program."""

    processor: str
    declarations: tuple[Declaration, ...] = ()
    immediates: tuple[Immediate, ...] = ()
    properties: tuple[Property, ...] = ()
    instructions: tuple[Instruction, ...] = ()

    def to_text(self) -> str:
        lines = [self.processor]
        lines += [p.to_text() for p in self.properties]
        lines += [d.to_text() for d in self.declarations]
        lines += [imm.to_text(i) for i, imm in enumerate(self.immediates)]
        width = len(str(max(len(self.instructions) - 1, 0)))
        lines += [f"{i:>{width + 2}}: {inst.to_text()}" for i, inst in enumerate(self.instructions)]
        return "\n".join(lines) + "\n"

    # Convenience lookups used by the compiler and the driver.

    def get_property(self, name: str, default: int | str | None = None) -> int | str | None:
        for p in self.properties:
            if p.name == name:
                return p.value
        return default

    def declared(self, file: str) -> list[Declaration]:
        return [d for d in self.declarations if d.file == file]

    def __str__(self) -> str:
        return self.to_text()
