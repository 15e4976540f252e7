"""Format descriptions and pixel packing, in the spirit of Mesa's u_format.

A :class:`FormatDesc` is derived from the format's name (``R8G8B8A8_UNORM``:
four 8-bit unsigned-normalised channels, R first in memory) and says how many
bytes a pixel takes, which channels it has and how to turn pixels into RGBA
values and back.  The conversions follow llvmpipe where it matters for exact
results: float to UNORM is ``rint(fl32(clamp(x, 0, 1) * max))`` (round half to
even), UNORM to float is ``x / max``; Z24 depth is ``rint(fl32(z * 0xffffff))``.

Everything here is a pure function on numpy arrays: no state, thread safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..pipe.enums import Format, Swizzle

_COMPONENT = re.compile(r"([RGBAXLIZS])(\d+)")
_TYPES = ("UNORM", "SNORM", "UINT", "SINT", "FLOAT", "USCALED", "SSCALED", "SRGB", "FIXED")


@dataclass(frozen=True, slots=True)
class Channel:
    """One channel of a pixel: its letter, size in bits and numeric type."""

    name: str
    bits: int
    type: str  # UNORM, SNORM, UINT, SINT, FLOAT, USCALED, SSCALED, SRGB, FIXED, VOID
    shift: int  # bit offset from the least significant bit of the pixel (packed) or byte order


@dataclass(frozen=True, slots=True)
class FormatDesc:
    """How one ``pipe.Format`` lays out its pixels."""

    format: Format
    name: str
    block_bytes: int
    channels: tuple[Channel, ...]
    layout: str  # "array" (every channel its own 1/2/4 bytes), "packed", "other"
    # For each of R, G, B, A: index of the channel that feeds it, or -1 for 0, -2 for 1.
    swizzle: tuple[int, int, int, int]
    is_depth: bool
    is_stencil: bool
    is_integer: bool  # pure integer colour format (UINT / SINT): unpacks to ints
    is_signed_integer: bool

    @property
    def has_alpha(self) -> bool:
        return any(c.name == "A" for c in self.channels)

    @property
    def channel_dtype(self) -> np.dtype | None:
        """numpy dtype of one channel for array formats with uniform channels."""
        if self.layout != "array":
            return None
        c = self.channels[0]
        kind = {
            ("FLOAT", 16): np.float16,
            ("FLOAT", 32): np.float32,
            ("FLOAT", 64): np.float64,
        }.get((c.type, c.bits))
        if kind is not None:
            return np.dtype(kind)
        signed = c.type in ("SNORM", "SINT", "SSCALED", "FIXED")
        return np.dtype(f"{'i' if signed else 'u'}{c.bits // 8}")


class UnknownFormat(ValueError):
    pass


@cache
def describe(fmt: Format | int) -> FormatDesc:
    """The :class:`FormatDesc` of a format; raises UnknownFormat for formats
    whose layout numpipe cannot describe (compressed, YUV, odd packings)."""
    fmt = Format(fmt)
    name = fmt.name
    if fmt == Format.NONE:
        raise UnknownFormat("PIPE_FORMAT_NONE has no pixels")
    parts = name.split("_")
    comps_text = parts[0]
    comps = _COMPONENT.findall(comps_text)
    if not comps or "".join(a + b for a, b in comps) != comps_text:
        raise UnknownFormat(f"{name}: not a plain channel format")
    types = [p for p in parts[1:]]
    # "Z24_UNORM_S8_UINT": channel groups each with their own type.
    channels: list[tuple[str, int, str]] = []
    if len(types) == 1 and types[0] in _TYPES:
        for c, bits in comps:
            t = "VOID" if c == "X" else types[0]
            channels.append((c, int(bits), t))
    else:
        # Split into (components, type) groups: Z24 UNORM, S8 UINT / Z32 FLOAT, S8X24 UINT
        groups = [parts[0]] + [p for p in parts[1:]]
        pending: list[tuple[str, int]] = []
        i = 0
        while i < len(groups):
            g = groups[i]
            if g in _TYPES:
                for c, bits in pending:
                    channels.append((c, bits, "VOID" if c == "X" else g))
                pending = []
            else:
                found = _COMPONENT.findall(g)
                if not found or "".join(a + b for a, b in found) != g:
                    raise UnknownFormat(f"{name}: cannot parse {g!r}")
                pending += [(c, int(b)) for c, b in found]
            i += 1
        if pending:
            raise UnknownFormat(f"{name}: channels without a type")
    total_bits = sum(b for _, b, _ in channels)
    if total_bits % 8:
        raise UnknownFormat(f"{name}: {total_bits} bits is not a whole number of bytes")
    block = total_bits // 8
    uniform = len({b for _, b, _ in channels}) == 1 and channels[0][1] in (8, 16, 32, 64)
    layout = "array" if uniform else ("packed" if total_bits in (8, 16, 32) else "other")
    if name.startswith("Z32_FLOAT_S8X24"):
        layout = "other"
    shift = 0
    chans: list[Channel] = []
    for c, bits, t in channels:
        if t == "SRGB" and c == "A":
            t = "UNORM"  # sRGB encodes colour only: alpha is linear (u_format's srgb)
        chans.append(Channel(c, bits, t, shift))
        shift += bits
    names = [c.name for c in chans]
    is_depth = "Z" in names
    is_stencil = "S" in names
    swz = _rgba_swizzle(names)
    color_types = {c.type for c in chans if c.name not in ("X",)}
    is_int = bool(color_types) and color_types <= {"UINT", "SINT"} and not (is_depth or is_stencil)
    return FormatDesc(
        format=fmt,
        name=name,
        block_bytes=block,
        channels=tuple(chans),
        layout=layout,
        swizzle=swz,
        is_depth=is_depth,
        is_stencil=is_stencil,
        is_integer=is_int,
        is_signed_integer=is_int and "SINT" in color_types,
    )


def _rgba_swizzle(names: list[str]) -> tuple[int, int, int, int]:
    """Where R, G, B, A come from (tgsi.rst's table: missing RGB -> 0, A -> 1)."""
    ZERO, ONE = -1, -2
    idx = {n: i for i, n in enumerate(names)}
    if "L" in idx:
        lum = idx["L"]
        return (lum, lum, lum, idx.get("A", ONE))
    if "I" in idx:
        i = idx["I"]
        return (i, i, i, i)
    if "Z" in idx and "R" not in idx:
        z = idx["Z"]
        return (z, ZERO, ZERO, ONE)
    if "S" in idx and "R" not in idx:
        s = idx["S"]
        return (s, ZERO, ZERO, ONE)
    return (
        idx.get("R", ZERO),
        idx.get("G", ZERO),
        idx.get("B", ZERO),
        idx.get("A", ONE),
    )


def try_describe(fmt: Format | int) -> FormatDesc | None:
    try:
        return describe(fmt)
    except (UnknownFormat, ValueError):
        return None


# ----------------------------------------------------------------------------
# Channel conversions
# ----------------------------------------------------------------------------


def float_to_unorm(x: np.ndarray, bits: int) -> np.ndarray:
    """llvmpipe's rule: rint(fl32(clamp(x, 0, 1) * (2**bits - 1))), ties to even."""
    maxv = np.float32((1 << bits) - 1)
    x = np.asarray(x, dtype=np.float32)
    c = np.fmin(np.fmax(x, np.float32(0.0)), np.float32(1.0))  # NaN -> 0
    r = np.rint(c * maxv)
    dt = np.uint8 if bits <= 8 else (np.uint16 if bits <= 16 else np.uint32)
    if bits == 32:
        return np.clip(np.rint(c.astype(np.float64) * 4294967295.0), 0, 4294967295.0).astype(dt)
    return r.astype(dt)


def unorm_to_float(x: np.ndarray, bits: int) -> np.ndarray:
    maxv = (1 << bits) - 1
    if bits <= 16:
        return x.astype(np.float32) / np.float32(maxv)
    return (x.astype(np.float64) / maxv).astype(np.float32)


def float_to_snorm(x: np.ndarray, bits: int) -> np.ndarray:
    maxv = np.float32((1 << (bits - 1)) - 1)
    x = np.asarray(x, dtype=np.float32)
    c = np.fmin(np.fmax(x, np.float32(-1.0)), np.float32(1.0))
    r = np.rint(c * maxv)
    dt = {8: np.int8, 16: np.int16, 32: np.int32}[bits]
    return r.astype(dt)


def snorm_to_float(x: np.ndarray, bits: int) -> np.ndarray:
    maxv = (1 << (bits - 1)) - 1
    return np.maximum(x.astype(np.float32) / np.float32(maxv), np.float32(-1.0))


def srgb_to_linear(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    lo = x / np.float32(12.92)
    hi = np.power((x + np.float32(0.055)) / np.float32(1.055), np.float32(2.4))
    return np.where(x <= 0.04045, lo, hi).astype(np.float32)


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    x = np.fmin(np.fmax(np.asarray(x, np.float32), 0), 1)
    lo = x * np.float32(12.92)
    hi = np.float32(1.055) * np.power(x, np.float32(1 / 2.4)) - np.float32(0.055)
    return np.where(x <= 0.0031308, lo, hi).astype(np.float32)


# ----------------------------------------------------------------------------
# Whole-pixel conversions
# ----------------------------------------------------------------------------


def channel_values(desc: FormatDesc, pixels: np.ndarray) -> list[np.ndarray]:
    """Split raw pixels (``(..., block_bytes)`` uint8) into per-channel raw integers
    or floats, in the format's channel order."""
    shape = pixels.shape[:-1]
    if desc.layout == "array":
        dt = desc.channel_dtype
        assert dt is not None
        vals = np.ascontiguousarray(pixels).view(dt).reshape(*shape, len(desc.channels))
        return [vals[..., i] for i in range(len(desc.channels))]
    if desc.layout == "packed":
        word_t = {1: np.uint8, 2: np.uint16, 4: np.uint32}[desc.block_bytes]
        word = np.ascontiguousarray(pixels).view(word_t).reshape(shape)
        out = []
        for c in desc.channels:
            raw = (word.astype(np.uint64) >> c.shift) & ((1 << c.bits) - 1)
            if c.type in ("SNORM", "SINT", "SSCALED"):
                sign = 1 << (c.bits - 1)
                raw = raw.astype(np.int64)
                raw = np.where(raw & sign, raw - (1 << c.bits), raw)
            out.append(raw)
        return out
    if desc.name.startswith("Z32_FLOAT_S8X24"):
        flat = np.ascontiguousarray(pixels)
        z = flat[..., 0:4].copy().view(np.float32).reshape(shape)
        s = flat[..., 4].astype(np.uint32)
        return [z, s, np.zeros(shape, np.uint32)]
    raise UnknownFormat(f"{desc.name}: unsupported layout")


def _channel_to_value(c: Channel, raw: np.ndarray) -> np.ndarray:
    if c.type == "UNORM":
        return unorm_to_float(raw, c.bits)
    if c.type == "SRGB":
        return srgb_to_linear(unorm_to_float(raw, c.bits))
    if c.type == "SNORM":
        return snorm_to_float(raw, c.bits)
    if c.type == "FLOAT":
        return raw.astype(np.float32)
    if c.type in ("USCALED", "SSCALED"):
        return raw.astype(np.float32)
    if c.type == "FIXED":
        return (raw.astype(np.float64) / 65536.0).astype(np.float32)
    if c.type == "UINT":
        return raw.astype(np.uint32)
    if c.type == "SINT":
        return raw.astype(np.int32)
    return raw.astype(np.float32)


def unpack_rgba(desc: FormatDesc, pixels: np.ndarray) -> np.ndarray:
    """Raw pixels ``(..., block_bytes)`` -> RGBA ``(..., 4)``.

    Float for normalised / float formats (float32), ``uint32`` / ``int32`` for
    pure integer formats; missing channels are 0 (alpha 1), as tgsi.rst's
    texture table says.
    """
    raws = channel_values(desc, pixels)
    vals = [_channel_to_value(c, r) for c, r in zip(desc.channels, raws)]
    shape = pixels.shape[:-1]
    dt = np.float32
    if desc.is_integer:
        dt = np.int32 if desc.is_signed_integer else np.uint32
    out = np.empty((*shape, 4), dtype=dt)
    for i, src in enumerate(desc.swizzle):
        if src >= 0:
            out[..., i] = vals[src]
        else:
            out[..., i] = 0 if src == -1 else 1
    return out


def pack_rgba(desc: FormatDesc, rgba: np.ndarray) -> np.ndarray:
    """RGBA ``(..., 4)`` (float, or int for integer formats) -> raw ``(..., block_bytes)``."""
    rgba = np.asarray(rgba)
    shape = rgba.shape[:-1]
    inverse: dict[int, int] = {}
    for comp, src in enumerate(desc.swizzle):
        if src >= 0 and src not in inverse:
            inverse[src] = comp
    raws: list[np.ndarray] = []
    for i, c in enumerate(desc.channels):
        comp = inverse.get(i)
        if c.name == "X" or comp is None:
            v = np.zeros(shape, np.float32)
        else:
            v = rgba[..., comp]
        raws.append(_value_to_channel(c, v))
    return _assemble(desc, raws, shape)


def _value_to_channel(c: Channel, v: np.ndarray) -> np.ndarray:
    if c.type == "UNORM":
        return float_to_unorm(v, c.bits)
    if c.type == "SRGB":
        return float_to_unorm(linear_to_srgb(v), c.bits)
    if c.type == "SNORM":
        return float_to_snorm(v, c.bits)
    if c.type == "FLOAT":
        return np.asarray(v, np.float32).astype(
            {16: np.float16, 32: np.float32, 64: np.float64}[c.bits]
        )
    if c.type == "UINT":
        hi = (1 << c.bits) - 1
        return np.clip(np.asarray(v).astype(np.int64), 0, hi).astype(np.uint64)
    if c.type == "SINT":
        lo, hi = -(1 << (c.bits - 1)), (1 << (c.bits - 1)) - 1
        return np.clip(np.asarray(v).astype(np.int64), lo, hi)
    if c.type in ("USCALED", "SSCALED"):
        return np.rint(np.asarray(v, np.float64)).astype(np.int64)
    return np.zeros(np.shape(v), np.uint64)


def _assemble(desc: FormatDesc, raws: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    if desc.layout == "array":
        dt = desc.channel_dtype
        assert dt is not None
        out = np.empty((*shape, len(desc.channels)), dtype=dt)
        for i, r in enumerate(raws):
            out[..., i] = r
        return out.view(np.uint8).reshape(*shape, desc.block_bytes)
    if desc.layout == "packed":
        word = np.zeros(shape, np.uint64)
        for c, r in zip(desc.channels, raws):
            bits = np.asarray(r).astype(np.int64) & ((1 << c.bits) - 1)
            word |= bits.astype(np.uint64) << np.uint64(c.shift)
        word_t = {1: np.uint8, 2: np.uint16, 4: np.uint32}[desc.block_bytes]
        return word.astype(word_t).view(np.uint8).reshape(*shape, desc.block_bytes)
    if desc.name.startswith("Z32_FLOAT_S8X24"):
        out = np.zeros((*shape, 8), np.uint8)
        out[..., 0:4] = np.asarray(raws[0], np.float32).reshape(*shape, 1).view(np.uint8)
        out[..., 4] = np.asarray(raws[1]).astype(np.uint8)
        return out
    raise UnknownFormat(f"{desc.name}: unsupported layout")


# ----------------------------------------------------------------------------
# Render-target stores (llvmpipe's fragment output conversions)
# ----------------------------------------------------------------------------


def float_to_half_rtz(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 rounding toward zero, Inf and NaN kept
    (lp_build_float_to_half: vcvtps2ph with rounding mode 3)."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16)
        over = np.abs(h.astype(np.float32)) > np.abs(x)  # rounded away from zero
        h = np.where(over & np.isfinite(x), np.nextafter(h, np.float16(0)), h)
    return h.astype(np.float16)


def _linear_to_srgb8(x: np.ndarray, bits: int) -> np.ndarray:
    """The sRGB encode of a colour channel to ``bits`` bits.  llvmpipe
    approximates the power with fast reciprocal square roots
    (lp_build_linear_to_srgb, within 0.17 of the exact value before
    rounding); this is the exact curve, so results agree within 1."""
    c = np.fmin(np.fmax(np.asarray(x, np.float64), 0.0), 1.0)  # NaN -> 0
    enc = np.where(c <= 0.0031308, c * 12.92, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return np.rint(enc * ((1 << bits) - 1)).astype(np.int64)


def _scale_bits(v: np.ndarray, src_bits: int, dst_bits: int) -> np.ndarray:
    """llvmpipe's scale_bits (lp_state_fs.c) from a ``src_bits`` UNORM value
    to ``dst_bits``: a shift when few bits go, otherwise a multiply with
    rounding; 4-bit results through float."""
    if dst_bits >= src_bits:
        return v
    delta = src_bits - dst_bits
    if delta <= dst_bits:
        if dst_bits == 4:
            f = v.astype(np.float32) * np.float32(1.0 / ((1 << src_bits) - 1))
            return float_to_unorm(f, 4).astype(np.int64)
        return v >> delta
    return ((v >> dst_bits) * ((1 << dst_bits) - 1) + (1 << (delta - 1))) >> delta


def store_rgba(
    desc: FormatDesc, rgba: np.ndarray, old: np.ndarray | None = None, colormask: int = 0xF
) -> np.ndarray:
    """RGBA ``(..., 4)`` fragment colours (float32, or int32/uint32 values for
    integer formats) -> raw ``(..., block_bytes)`` pixels as llvmpipe's
    colour store writes them (generate_unswizzled_blend and
    convert_from_blend_type): UNORM/SNORM ``rint(clamp(x) * max)``, half
    floats rounded toward zero, packed UNORM formats through an 8- or 16-bit
    UNORM value scaled down by :func:`_scale_bits`, integers clamped to the
    channel, sRGB encoded (colour channels).  Channels not in ``colormask``
    keep their bits from ``old`` (the pixels before the store)."""
    rgba = np.asarray(rgba)
    shape = rgba.shape[:-1]
    comp_of: dict[int, int] = {}
    for comp, src in enumerate(desc.swizzle):
        if src >= 0 and src not in comp_of:
            comp_of[src] = comp
    old_raws = channel_values(desc, old) if old is not None else None
    packed = desc.layout == "packed"
    norm_bits = max(c.bits for c in desc.channels)
    blend_bits = 8 if norm_bits <= 8 else (16 if norm_bits <= 16 else 32)
    raws: list[np.ndarray] = []
    for i, c in enumerate(desc.channels):
        comp = comp_of.get(i)
        if c.type == "VOID" or comp is None or not colormask >> comp & 1:
            if old_raws is not None and c.type != "VOID":
                raws.append(np.asarray(old_raws[i]))
            else:
                raws.append(np.zeros(shape, np.int64))
            continue
        v = rgba[..., comp]
        if c.type == "SRGB":
            raws.append(_linear_to_srgb8(v, c.bits))
        elif c.type == "UNORM" and packed:
            raws.append(
                _scale_bits(float_to_unorm(v, blend_bits).astype(np.int64), blend_bits, c.bits)
            )
        elif c.type == "FLOAT" and c.bits == 16:
            raws.append(float_to_half_rtz(v))
        elif c.type == "UINT":
            hi = (1 << c.bits) - 1
            raws.append(np.minimum(np.asarray(v).astype(np.uint32), np.uint32(hi)).astype(np.int64))
        elif c.type == "SINT":
            lo, hi = -(1 << (c.bits - 1)), (1 << (c.bits - 1)) - 1
            raws.append(np.clip(np.asarray(v).astype(np.int32).astype(np.int64), lo, hi))
        else:
            raws.append(_value_to_channel(c, v))
    return _assemble(desc, raws, shape)


def logic_op_applies(desc: FormatDesc) -> bool:
    """Whether logic ops act on a colour format: integer and normalised
    fixed-point channels (llvmpipe's integer blend types); float and sRGB
    formats are written as if no logic op were enabled (llvmpipe's float
    blend type, as for sRGB there)."""
    return all(c.type not in ("FLOAT", "SRGB") for c in desc.channels if c.type != "VOID")


def logic_op(func: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """PIPE_LOGICOP_* ``func`` of integer arrays (lp_build_logicop)."""
    f = int(func)
    if f == 0:  # CLEAR
        return np.zeros_like(dst)
    if f == 15:  # SET
        return np.full_like(dst, -1)
    ops = {
        1: lambda s, d: ~(s | d),  # NOR
        2: lambda s, d: ~s & d,  # AND_INVERTED
        3: lambda s, d: ~s,  # COPY_INVERTED
        4: lambda s, d: s & ~d,  # AND_REVERSE
        5: lambda s, d: ~d,  # INVERT
        6: lambda s, d: s ^ d,  # XOR
        7: lambda s, d: ~(s & d),  # NAND
        8: lambda s, d: s & d,  # AND
        9: lambda s, d: ~(s ^ d),  # EQUIV
        10: lambda s, d: d,  # NOOP
        11: lambda s, d: ~s | d,  # OR_INVERTED
        12: lambda s, d: s,  # COPY
        13: lambda s, d: s | ~d,  # OR_REVERSE
        14: lambda s, d: s | d,  # OR
    }
    return ops[f](src, dst)


def store_logic_op(
    desc: FormatDesc, rgba: np.ndarray, old: np.ndarray, func: int, colormask: int = 0xF
) -> np.ndarray:
    """:func:`store_rgba` with a logic op: the fragment colours converted as
    the store converts them (UNORM ``rint(clamp(x) * max)``, integers clamped
    to the channel), combined channel by channel with the pixels ``old``
    (both as the channels' raw bits), channels outside ``colormask`` kept."""
    src = channel_values(desc, store_rgba(desc, rgba))
    dst = channel_values(desc, old)
    comp_of: dict[int, int] = {}
    for comp, ch in enumerate(desc.swizzle):
        if ch >= 0 and ch not in comp_of:
            comp_of[ch] = comp
    raws = []
    for i, c in enumerate(desc.channels):
        comp = comp_of.get(i)
        d = np.asarray(dst[i]).astype(np.int64)
        if c.type == "VOID" or comp is None or not colormask >> comp & 1:
            raws.append(d)
            continue
        v = logic_op(func, np.asarray(src[i]).astype(np.int64), d) & ((1 << c.bits) - 1)
        if c.type in ("SNORM", "SINT") and desc.layout == "array":  # back to the signed range
            v = np.where(v >= 1 << (c.bits - 1), v - (1 << c.bits), v)
        raws.append(v)
    return _assemble(desc, raws, rgba.shape[:-1])


# ----------------------------------------------------------------------------
# Depth / stencil
# ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DepthLayout:
    """How a depth/stencil format stores its values in one machine word.

    ``word`` is the numpy dtype of a pixel word (uint16 / uint32 / float32, or
    a (float32, uint32) pair for Z32_FLOAT_S8X24_UINT, flagged by ``split``).
    """

    word: np.dtype
    z_bits: int  # 0: no depth; 32 with z_float for float depth
    z_float: bool
    z_shift: int
    s_bits: int
    s_shift: int
    split: bool = False

    @property
    def z_mask(self) -> int:
        return ((1 << self.z_bits) - 1) << self.z_shift if not self.z_float else 0

    @property
    def s_mask(self) -> int:
        return ((1 << self.s_bits) - 1) << self.s_shift

    @property
    def z_at_top(self) -> bool:
        """Whether nothing lies above the depth field in a word, so that
        ``word >> z_shift`` is the depth (float depth: the whole word).
        Otherwise the stencil (Z24_UNORM_S8_UINT) or the padding (Z24X8_UNORM:
        its X bits hold whatever an upload or a copy put there) must be masked
        off before depths are compared."""
        return self.z_float or self.z_shift + self.z_bits == 8 * self.word.itemsize


@cache
def depth_layout(fmt: Format | int) -> DepthLayout:
    desc = describe(fmt)
    if not (desc.is_depth or desc.is_stencil):
        raise UnknownFormat(f"{desc.name} is not a depth/stencil format")
    if desc.name.startswith("Z32_FLOAT_S8X24"):
        return DepthLayout(np.dtype(np.float32), 32, True, 0, 8, 0, split=True)
    z = next((c for c in desc.channels if c.name == "Z"), None)
    s = next((c for c in desc.channels if c.name == "S"), None)
    word = {1: np.uint8, 2: np.uint16, 4: np.uint32}[desc.block_bytes]
    if z is not None and z.type == "FLOAT":
        return DepthLayout(np.dtype(np.float32), 32, True, 0, 0, 0)
    return DepthLayout(
        np.dtype(word),
        z.bits if z else 0,
        False,
        z.shift if z else 0,
        s.bits if s else 0,
        s.shift if s else 0,
    )


def depth_to_word(layout: DepthLayout, z: np.ndarray) -> np.ndarray:
    """Fragment depth (float32 in [0, 1] after clamping) -> stored depth value
    (already shifted into place, other bits zero).  UNORM depth uses llvmpipe's
    ``rint(fl32(z * (2**bits - 1)))``."""
    z = np.asarray(z, np.float32)
    if layout.z_float:
        return z
    maxv = np.float32((1 << layout.z_bits) - 1)
    c = np.fmin(np.fmax(z, np.float32(0.0)), np.float32(1.0))
    v = np.rint(c * maxv).astype(np.uint32)
    if layout.z_shift:
        v = v << np.uint32(layout.z_shift)
    return v.astype(layout.word) if layout.word != np.uint32 else v


def word_to_depth(layout: DepthLayout, word: np.ndarray) -> np.ndarray:
    if layout.z_float:
        return np.asarray(word, np.float32)
    raw = (word.astype(np.uint32) >> np.uint32(layout.z_shift)) & np.uint32(
        (1 << layout.z_bits) - 1
    )
    return (raw.astype(np.float64) / ((1 << layout.z_bits) - 1)).astype(np.float32)


SWIZZLE_IDENTITY = (Swizzle.X, Swizzle.Y, Swizzle.Z, Swizzle.W)
