"""The contract's checks of blit, clear_texture and generate_mipmap.

``blit`` takes a ``pipe.BlitInfo`` whose validity depends on both resources'
formats, targets and sample counts; ``clear_texture`` one texel of the
resource's format; ``generate_mipmap`` a format that can be filtered and
written.  Each check returns a private, checked description of the work
(:class:`Blit`, :class:`TextureClear`, a list of blits), which every context
hands to its driver's unchecked entry point (``_blit``, ``_clear_texture``,
``_generate_mipmap``), so the direct and the threaded context refuse the same
calls with the same errors, at the call.  What the screen can sample and
render is asked of the screen (``is_format_supported``); the rules of which
blits become copies, resolves or draws are u_blitter's, as llvmpipe applies
them (lp_surface.c ``lp_blit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..util.format import FormatDesc, depth_layout, try_describe
from .checks import check_bool, check_box
from .enums import (
    PIPE_MAX_WINDOW_RECTANGLES,
    Bind,
    Format,
    Mask,
    TexFilter,
    TextureTarget,
)
from .errors import UnsupportedError, bad_type, bad_value, check_int
from .objects import Resource
from .state import BlitImage, BlitInfo, Box, ScissorState

F32 = np.float32

# Box coordinates beyond this are refused: the rectangle's corners then stay
# inside the rasterizer's guard band and every fixed-point product is exact.
COORD_LIMIT = 1 << 20

_LAYERED = {
    TextureTarget.TEXTURE_1D_ARRAY,
    TextureTarget.TEXTURE_2D_ARRAY,
    TextureTarget.TEXTURE_CUBE,
    TextureTarget.TEXTURE_CUBE_ARRAY,
}
# sources drawn once (u_blitter's do_blits, first branch)
_FLAT = {TextureTarget.TEXTURE_1D, TextureTarget.TEXTURE_2D, TextureTarget.TEXTURE_RECT}
_STENCIL_ONLY = {
    Format.Z24_UNORM_S8_UINT: Format.X24S8_UINT,
    Format.S8_UINT_Z24_UNORM: Format.S8X24_UINT,
    Format.Z32_FLOAT_S8X24_UINT: Format.X32_S8X24_UINT,
    Format.S8_UINT: Format.S8_UINT,
}


@dataclass(frozen=True)
class Blit:
    """A validated blit: private copies of everything the job reads."""

    dst: Resource
    dst_level: int
    dst_box: Box
    dst_desc: FormatDesc
    src: Resource
    src_level: int
    src_box: Box
    src_desc: FormatDesc
    mask: int
    filter: TexFilter
    scissor: tuple[int, int, int, int] | None  # minx, miny, maxx, maxy (max exclusive)
    render_condition: bool
    alpha_blend: bool
    window_include: bool
    window_rects: tuple[tuple[int, int, int, int], ...]
    # what the blit does: "copy" (resource_copy_region), "color", "zs", "none"
    kind: str
    write_depth: bool = False
    write_stencil: bool = False
    # multisampling: "" (none), "resolve" (average the source's samples),
    # "sample0" (a multisample source's first sample: integers, depth, stencil),
    # "per_sample" (sample s to sample s), "replicate" (to every destination sample)
    samples_mode: str = ""

    @property
    def resources(self) -> tuple[Resource, Resource]:
        return (self.src, self.dst)


def _check_image(img: Any, arg: str, is_dst: bool) -> tuple[Resource, int, Box, FormatDesc]:
    if not isinstance(img, BlitImage):
        raise bad_type(arg, "a pipe.BlitImage", img)
    res = img.resource
    if not isinstance(res, Resource):
        raise bad_type(f"{arg}.resource", "a Resource created by this screen", res)
    if res.destroyed:
        raise bad_value(f"{arg}.resource", "has been destroyed")
    if res.is_buffer:
        raise bad_value(f"{arg}.resource", "must be a texture (blit takes no buffers)")
    level = check_int(f"{arg}.level", img.level, 0, res.last_level)
    box = img.box
    if not isinstance(box, Box):
        raise bad_type(f"{arg}.box", "a pipe.Box", box)
    vals = {f: check_int(f"{arg}.box.{f}", getattr(box, f)) for f in ("x", "y", "z")}
    vals.update(
        {f: check_int(f"{arg}.box.{f}", getattr(box, f)) for f in ("width", "height", "depth")}
    )
    box = Box(**vals)
    for lo, size, axis in (
        (box.x, box.width, "x"),
        (box.y, box.height, "y"),
        (box.z, box.depth, "z"),
    ):
        if not (-COORD_LIMIT <= lo <= COORD_LIMIT and -COORD_LIMIT <= lo + size <= COORD_LIMIT):
            raise bad_value(
                f"{arg}.box", f"must keep its {axis} range within +-{COORD_LIMIT}", img.box
            )
    if is_dst:
        if box.width <= 0 or box.height <= 0 or box.depth <= 0:
            raise bad_value(f"{arg}.box", "must have positive width, height and depth", img.box)
    elif box.width == 0 or box.height == 0 or box.depth == 0:
        raise bad_value(
            f"{arg}.box", "must have nonzero width, height and depth (negative flips)", img.box
        )
    layers = res.level_extent(level)[2]
    layered = res.target in _LAYERED or (is_dst and res.target == TextureTarget.TEXTURE_3D)
    zlo, zhi = min(box.z, box.z + box.depth), max(box.z, box.z + box.depth)
    if layered:
        if zlo < 0 or zhi > layers:
            raise bad_value(
                f"{arg}.box",
                f"must keep its layers [z, z + depth) inside the level's {layers}",
                img.box,
            )
    elif res.target != TextureTarget.TEXTURE_3D and (box.z != 0 or box.depth != 1):
        raise bad_value(f"{arg}.box", f"must have z 0 and depth 1 on a {res.target.name}", img.box)
    fmt = img.format
    try:
        fmt = Format(res.format if fmt == Format.NONE else fmt)
    except (ValueError, TypeError):
        raise bad_value(f"{arg}.format", "must be a pipe.Format", img.format) from None
    desc = try_describe(fmt)
    if desc is None or desc.block_bytes != res.block_bytes:
        raise bad_value(
            f"{arg}.format",
            f"must be a format of the same pixel size as the resource's {res.format.name}",
            fmt.name,
        )
    if res.target in (TextureTarget.TEXTURE_1D, TextureTarget.TEXTURE_1D_ARRAY) and (
        box.y != 0 or box.height != 1
    ):
        raise bad_value(f"{arg}.box", "must have y 0 and height 1 on a 1D texture", img.box)
    return res, level, box, desc


def _check_rect(arg: str, r: Any) -> tuple[int, int, int, int]:
    if not isinstance(r, ScissorState):
        raise bad_type(arg, "a pipe.ScissorState", r)
    v = tuple(
        check_int(f"{arg}.{f}", getattr(r, f), 0, 1 << 16) for f in ("minx", "miny", "maxx", "maxy")
    )
    return v  # type: ignore[return-value]


def _bool(arg: str, v: Any) -> bool:
    return check_bool(arg, v)


def _box_inside(res: Resource, level: int, box: Box) -> bool:
    width, height, layers = res.level_extent(level)
    return (
        box.width > 0
        and box.height > 0
        and box.depth > 0
        and box.x >= 0
        and box.y >= 0
        and box.z >= 0
        and box.x + box.width <= width
        and box.y + box.height <= height
        and box.z + box.depth <= layers
    )


def _colorspace(d: FormatDesc) -> str:
    if d.is_depth or d.is_stencil:
        return "zs"
    return "srgb" if any(c.type == "SRGB" for c in d.channels) else "rgb"


def formats_compatible(src: FormatDesc, dst: FormatDesc) -> bool:
    """util_is_format_compatible: whether ``dst`` reads the bytes of ``src`` as the
    same values (the same format, or ``dst`` an X variant of ``src``)."""
    if src.format == dst.format:
        return True
    if src.layout not in ("array", "packed") or dst.layout not in ("array", "packed"):
        return False
    if (
        src.block_bytes != dst.block_bytes
        or len(src.channels) != len(dst.channels)
        or _colorspace(src) != _colorspace(dst)
    ):
        return False
    if any(a.bits != b.bits for a, b in zip(src.channels, dst.channels)):
        return False
    for comp in range(4):
        s = dst.swizzle[comp]
        if s >= 0:
            if src.swizzle[comp] != s:
                return False
            if src.channels[s].type != dst.channels[s].type:
                return False
    return True


def _mask_of(desc: FormatDesc) -> int:
    """util_format_get_mask: the channels (RGBA, Z, S) the format stores."""
    if desc.is_depth or desc.is_stencil:
        return (Mask.Z if desc.is_depth else 0) | (Mask.S if desc.is_stencil else 0)
    m = 0
    for comp in range(4):
        if desc.swizzle[comp] >= 0:
            m |= 1 << comp
    return m


def blit_writable(desc: FormatDesc) -> bool:
    """Colour formats a blit writes: those llvmpipe renders to
    (llvmpipe_is_format_supported with PIPE_BIND_RENDER_TARGET): plain RGB
    layouts (sRGB with at least three channels), no 3-channel formats but
    32-bit ones, no scaled, fixed or 64-bit channels.  Blits convert with
    :func:`gallium.util.format.pack_rgba`, which writes every one of them."""
    if desc.is_depth or desc.is_stencil or desc.layout not in ("array", "packed"):
        return False
    chans = [c for c in desc.channels if c.type != "VOID"]
    if not chans or any(c.type in ("USCALED", "SSCALED", "FIXED") for c in chans):
        return False
    if any(c.bits == 64 for c in chans):
        return False
    if any(c.type == "SRGB" for c in chans) and len(desc.channels) < 3:
        return False
    if desc.layout == "array" and len(desc.channels) == 3 and desc.block_bytes != 12:
        return False
    return desc.format != Format.R11G11B10_FLOAT


def _samples(res: Resource) -> int:
    return max(1, int(getattr(res, "nr_samples", 0) or 0))


def check_blit_info(info: Any, screen: Any) -> Blit:
    """Validate a ``pipe.BlitInfo`` (both contexts, at the call): a private,
    checked description of the blit, or a named error."""
    if not isinstance(info, BlitInfo):
        raise bad_type("info", "a pipe.BlitInfo", info)
    dst, dlevel, dbox, ddesc = _check_image(info.dst, "info.dst", True)
    src, slevel, sbox, sdesc = _check_image(info.src, "info.src", False)
    if src.screen is not dst.screen:
        raise bad_value("info.src.resource", "must belong to the screen of info.dst.resource")
    mask = check_int("info.mask", info.mask, 0, int(Mask.RGBAZS))
    try:
        filt = TexFilter(check_int("info.filter", info.filter))
    except ValueError:
        raise bad_value("info.filter", "must be a pipe.TexFilter", info.filter) from None
    scissor_enable = _bool("info.scissor_enable", info.scissor_enable)
    scissor = _check_rect("info.scissor", info.scissor) if scissor_enable else None
    if scissor is not None and (scissor[0] > scissor[2] or scissor[1] > scissor[3]):
        raise bad_value("info.scissor", "must have minx <= maxx and miny <= maxy", info.scissor)
    render_cond = _bool("info.render_condition_enable", info.render_condition_enable)
    alpha_blend = _bool("info.alpha_blend", info.alpha_blend)
    include = _bool("info.window_rectangle_include", info.window_rectangle_include)
    rects = info.window_rectangles or []
    if isinstance(rects, str | bytes) or not hasattr(rects, "__iter__"):
        raise bad_type("info.window_rectangles", "a list of pipe.ScissorState", rects)
    rects = list(rects)
    if len(rects) > PIPE_MAX_WINDOW_RECTANGLES:
        raise bad_value(
            "info.window_rectangles", f"must hold at most {PIPE_MAX_WINDOW_RECTANGLES}", len(rects)
        )
    wrects = tuple(_check_rect(f"info.window_rectangles[{i}]", r) for i, r in enumerate(rects))
    common = dict(
        dst=dst, dst_level=dlevel, dst_box=dbox, dst_desc=ddesc,
        src=src, src_level=slevel, src_box=sbox, src_desc=sdesc,
        mask=mask, filter=filt, scissor=scissor, render_condition=render_cond,
        alpha_blend=alpha_blend, window_include=include, window_rects=wrects,
    )  # fmt: skip
    ns, nd = _samples(src), _samples(dst)
    flat_src = src.target in _FLAT
    if flat_src and dbox.depth != 1:
        raise bad_value(
            "info.dst.box",
            f"must have depth 1 when the source is a {src.target.name} (one layer is written)",
            info.dst.box,
        )
    # util_try_blit_via_copy_region
    fmask = _mask_of(ddesc)
    if (
        src.format == sdesc.format
        and dst.format == ddesc.format
        and formats_compatible(sdesc, ddesc)
        and (mask & fmask) == fmask
        and filt == TexFilter.NEAREST
        and not scissor_enable
        and not wrects
        and not alpha_blend
        and (sbox.width, sbox.height, sbox.depth) == (dbox.width, dbox.height, dbox.depth)
        and _box_inside(src, slevel, sbox)
        and _box_inside(dst, dlevel, dbox)
        and ns == nd
    ):
        return Blit(kind="copy", **common)  # type: ignore[arg-type]
    mode = ""
    if ns > 1 or nd > 1:
        scaled = _scaled(sbox, dbox)
        if ns > 1 and nd > 1 and ns != nd:
            raise UnsupportedError(
                f"blits between {ns}- and {nd}-sample resources are not supported by "
                f"{screen.get_name()}"
            )
        if ns > 1 and scaled and filt == TexFilter.LINEAR:
            raise UnsupportedError(
                "scaled blits from a multisample resource with LINEAR filtering (a bilinear "
                f"resolve) are not supported by {screen.get_name()}; use NEAREST or an unscaled "
                "resolve"
            )
        if ns > 1 and nd > 1:
            if scaled:
                raise UnsupportedError("scaled multisample-to-multisample blits are not supported")
            mode = "per_sample"
        elif ns > 1:
            zs_or_int = sdesc.is_depth or sdesc.is_stencil or sdesc.is_integer
            mode = "sample0" if zs_or_int else "resolve"
        else:
            mode = "replicate"
    common["samples_mode"] = mode
    src_zs = sdesc.is_depth or sdesc.is_stencil
    dst_zs = ddesc.is_depth or ddesc.is_stencil
    dst_color = bool(mask & Mask.RGBA) and not dst_zs
    write_depth = bool(mask & Mask.Z) and ddesc.is_depth
    write_stencil = bool(mask & Mask.S) and ddesc.is_stencil
    if not (dst_color or write_depth or write_stencil):
        common.pop("samples_mode")
        return Blit(kind="none", **common)  # type: ignore[arg-type]
    if src_zs != dst_zs:
        raise UnsupportedError(
            f"blits between colour and depth/stencil formats ({sdesc.name} -> {ddesc.name}) "
            f"are not supported by {screen.get_name()}"
        )
    if dst_color and sdesc.is_integer != ddesc.is_integer:
        raise bad_value(
            "info.dst.format",
            f"must be an integer format exactly when info.src.format is ({sdesc.name} -> "
            f"{ddesc.name})",
        )
    if write_depth and not sdesc.is_depth:
        raise bad_value("info.mask", f"asks for depth but {sdesc.name} has none", mask)
    if write_stencil and not sdesc.is_stencil:
        raise bad_value("info.mask", f"asks for stencil but {sdesc.name} has none", mask)
    # util_blitter_is_blit_supported: the destination renderable, the source sampleable
    if dst_zs:
        ok = screen.is_format_supported(ddesc.format, dst.target, 0, int(Bind.DEPTH_STENCIL))
    else:
        ok = blit_writable(ddesc)
    if not ok:
        raise UnsupportedError(
            f"blit to {ddesc.name} on {dst.target.name}: {screen.get_name()} cannot write "
            "that format"
        )
    sample_formats = [sdesc.format]
    if write_stencil:
        sample_formats.append(_STENCIL_ONLY[sdesc.format])
    for f in sample_formats:
        if not screen.is_format_supported(
            f, src.target, 0 if ns == 1 else ns, int(Bind.SAMPLER_VIEW)
        ):
            raise UnsupportedError(
                f"blit from {Format(f).name} on {src.target.name}: "
                f"{screen.get_name()} cannot sample that format"
            )
    if sdesc.is_integer and filt == TexFilter.LINEAR and _scaled(sbox, dbox):
        raise bad_value("info.filter", "must be NEAREST for a scaled blit of integer formats")
    kind = "zs" if dst_zs else "color"
    return Blit(kind=kind, write_depth=write_depth, write_stencil=write_stencil, **common)  # type: ignore[arg-type]


def _scaled(sbox: Box, dbox: Box) -> bool:
    return (dbox.width, dbox.height, dbox.depth) != (
        abs(sbox.width),
        abs(sbox.height),
        abs(sbox.depth),
    )


def mipmap_blits(
    resource: Any,
    format: Any,
    base_level: Any,
    last_level: Any,
    first_layer: Any,
    last_layer: Any,
    screen: Any,
) -> list[Blit] | None:
    """The blits of ``generate_mipmap`` (util_gen_mipmap: each level from the
    one above it, LINEAR, every 3D slice or layers first..last), or None when
    the format cannot be filtered and written (the call returns False).
    Bad arguments raise, naming the argument."""
    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed")
    if resource.is_buffer:
        raise bad_value("resource", "must be a texture (buffers have no mip levels)")
    try:
        fmt = Format(check_int("format", format))
    except ValueError:
        raise bad_value("format", "must be a pipe.Format", format) from None
    fmt = resource.format if fmt == Format.NONE else fmt
    desc = try_describe(fmt)
    if desc is None or desc.block_bytes != resource.block_bytes:
        raise bad_value(
            "format", f"must have the pixel size of the resource's {resource.format.name}", fmt
        )
    base = check_int("base_level", base_level, 0, resource.last_level)
    last = check_int("last_level", last_level, base, resource.last_level)
    layers = resource.level_extent(base)[2]
    is_3d = resource.target == TextureTarget.TEXTURE_3D
    first = check_int("first_layer", first_layer, 0, 0 if is_3d else layers - 1)
    check_int("last_layer", last_layer, first, 0 if is_3d else layers - 1)
    lastl = int(last_layer)
    zs = desc.is_depth or desc.is_stencil
    if _samples(resource) > 1 or (desc.is_integer and not zs) or (zs and not desc.is_depth):
        return None
    if zs:
        ok = screen.is_format_supported(fmt, resource.target, 0, int(Bind.DEPTH_STENCIL))
    else:
        ok = blit_writable(desc)
    if not ok or not screen.is_format_supported(fmt, resource.target, 0, int(Bind.SAMPLER_VIEW)):
        return None
    blits = []
    for level in range(base + 1, last + 1):
        (sw, sh, sl), (dw, dh, dl) = resource.level_extent(level - 1), resource.level_extent(level)
        if is_3d:
            sbox = Box(0, 0, 0, sw, sh, sl)
            dbox = Box(0, 0, 0, dw, dh, dl)
        else:
            n = lastl + 1 - first
            sbox = Box(0, 0, first, sw, sh, n)
            dbox = Box(0, 0, first, dw, dh, n)
        blits.append(
            Blit(
                dst=resource, dst_level=level, dst_box=dbox, dst_desc=desc,
                src=resource, src_level=level - 1, src_box=sbox, src_desc=desc,
                mask=int(Mask.Z if zs else Mask.RGBA),
                filter=TexFilter.LINEAR, scissor=None, render_condition=False,
                alpha_blend=False, window_include=False, window_rects=(),
                kind="zs" if zs else "color",
                write_depth=zs,
            )
        )  # fmt: skip
    return blits


@dataclass(frozen=True)
class TextureClear:
    """A validated clear_texture: the box and the texel bytes to fill it with."""

    resource: Resource
    level: int
    box: Box
    texel: np.ndarray  # (block_bytes,) uint8

    @property
    def resources(self) -> tuple[Resource]:
        return (self.resource,)


def _z_of(desc: FormatDesc, raw: np.ndarray) -> float:
    """util_format_unpack_z_float of one texel."""
    layout = depth_layout(desc.format)
    if layout.split or layout.z_float:
        return float(raw[:4].view(np.float32)[0])
    word = int.from_bytes(raw.tobytes(), "little")
    z = (word >> layout.z_shift) & ((1 << layout.z_bits) - 1)
    if layout.z_bits == 16:
        return float(F32(F32(z) * F32(1.0 / 0xFFFF)))  # z16_unorm_to_z32_float
    return float(F32(z * (1.0 / 0xFFFFFF)))  # z24_unorm_to_z32_float (a double scale)


def _pack_z(desc: FormatDesc, z: float) -> int:
    """util_pack_z (z a double): lrint(z * max), 0 at or below 0, max at or above 1."""
    layout = depth_layout(desc.format)
    if layout.z_float:
        return int(np.float32(z).view(np.uint32))
    top = (1 << layout.z_bits) - 1
    v = 0 if z <= 0.0 else top if z >= 1.0 else int(np.rint(z * top))
    return v << layout.z_shift


def clear_texel(desc: FormatDesc, raw: np.ndarray) -> np.ndarray:
    """The texel util_clear_texture writes for ``raw`` (the caller's texel):
    colours unpacked to RGBA and packed again (padding bits cleared, SNORM
    -128 becomes -127), depth and stencil unpacked and packed with
    util_pack_z_stencil's rounding."""
    if not (desc.is_depth or desc.is_stencil):
        from ..util.format import pack_rgba, unpack_rgba

        return pack_rgba(desc, unpack_rgba(desc, raw.reshape(1, -1)))[0]
    layout = depth_layout(desc.format)
    stencil = 0
    if layout.s_bits:
        if layout.split:
            stencil = int(raw[4])
        else:
            word = int.from_bytes(raw.tobytes(), "little")
            stencil = (word >> layout.s_shift) & 0xFF
    if layout.split:
        out = np.zeros(8, np.uint8)
        out[:4] = np.array([_pack_z(desc, _z_of(desc, raw))], np.uint32).view(np.uint8)
        out[4] = stencil
        return out
    word = _pack_z(desc, _z_of(desc, raw)) if layout.z_bits else 0
    word |= stencil << layout.s_shift if layout.s_bits else 0
    return np.frombuffer(word.to_bytes(desc.block_bytes, "little"), np.uint8).copy()


def check_clear_texture(resource: Any, level: Any, box: Any, data: Any) -> TextureClear:
    """Validate clear_texture's arguments (both contexts, at the call)."""
    if not isinstance(resource, Resource):
        raise bad_type("resource", "a Resource created by this screen", resource)
    if resource.destroyed:
        raise bad_value("resource", "has been destroyed")
    if resource.is_buffer:
        raise bad_value("resource", "must be a texture (clear_buffer clears buffers)")
    level = check_int("level", level, 0, resource.last_level)
    box = check_box(resource, level, box)
    if data is None:
        raise bad_value("data", "must be one texel of the resource's format, not None")
    if isinstance(data, np.ndarray):
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    else:
        try:
            raw = np.frombuffer(memoryview(data).cast("B"), np.uint8)
        except TypeError:
            raise bad_type("data", "a bytes-like object or numpy array", data) from None
    bb = resource.block_bytes
    if raw.size != bb:
        raise bad_value(
            "data", f"must be one texel of {resource.format.name}: {bb} bytes", f"{raw.size} bytes"
        )
    desc = try_describe(resource.format)
    return TextureClear(resource, level, box, clear_texel(desc, raw.copy()))
