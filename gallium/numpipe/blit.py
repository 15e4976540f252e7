"""Blits: ``pipe_context::blit`` computed as llvmpipe computes it.

llvmpipe answers ``blit`` with Mesa's u_blitter (lp_surface.c ``lp_blit``):
a same-format, unscaled, unmasked blit of boxes inside both resources is a
``resource_copy_region``; anything else draws a rectangle over the
destination box with a fragment shader that samples the source.  The pixels
that rectangle gives are what this module computes, directly on the
resources, without the draw path:

* *Geometry*: the rectangle's four corners are ``x / width * 2 - 1`` in clip
  space (float32), a triangle fan (0, 1, 2), (0, 2, 3) through the viewport
  that maps the destination level onto itself; corners outside the level
  go through the draw module's clipper (:mod:`gallium.draw.clip`).  The
  blitter's rasterizer state: half-pixel centres, the *bottom* edge rule,
  no culling; its scissor when the blit has one.
* *Coordinates*: each corner carries the source box corner
  (``x / level_width``, normalized unless the texel-fetch path or a RECT
  source applies) and the source layer; the triangles are set up as
  llvmpipe sets up linear inputs (:func:`gallium.draw.setup.setup_triangles`)
  and evaluated at each pixel as llvmpipe's fragment shader does it,
  ``fma(dady, y, fma(dadx, x, a0))`` with single roundings.
* *Sampling*: the blitter's ``TEX_LZ`` (clamp to edge, the blit's filter for
  scaled colour and depth blits, nearest otherwise) or, for unscaled nearest
  blits whose source box lies inside the level, ``FLR`` + ``TXF_LZ`` --
  both through :mod:`gallium.numpipe.sampler`, which reproduces llvmpipe's
  filtering bits.  Cube maps are sampled as 2D arrays (llvmpipe reports
  PIPE_CAP_SAMPLER_VIEW_TARGET).  Layers: one draw for a 1D/2D/RECT source,
  else one per destination layer, its source layer ``z + i * step`` (plus a
  half step for 3D sources, so that a minified 3D level averages its
  slices).
* *Writing*: the destination format's conversion (UNORM ``rint(x * max)``),
  the colour mask, ``alpha_blend`` (SRC_ALPHA / INV_SRC_ALPHA on colour and
  alpha) through :mod:`workers.fragment`, depth through the format's depth
  conversion, stencil as the fetched value; the window rectangles.

Ordering (theory of operation)
------------------------------
A blit is recorded like a draw that writes ``dst`` and reads ``src``: the
context runs its queued draws if they use either resource, and submits its
current scene if that scene references either resource, then submits a
:class:`BlitJob` to the screen's worker pool, to start once the context's
previous work and every fence pending on either resource (any context's) are
signalled.  The job's fence becomes the context's last fence and is added to
both resources' pending fences, so later scenes, maps and blits wait for it.
Nothing blocks the caller.  A job's units are row bands
of the destination layers, each written by one worker; when source and
destination are the same level of one resource, the job runs as one unit
that reads a copy of the source, so overlapping boxes give the same bytes
for any number of workers.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..draw import clip
from ..draw.setup import setup_triangles
from ..draw.viewport import viewport_transform
from ..pipe.enums import (
    PIPE_MAX_WINDOW_RECTANGLES,
    Bind,
    BlendFactor,
    BlendFunc,
    Format,
    Mask,
    MipFilter,
    TexFilter,
    TextureTarget,
    TexWrap,
)
from ..pipe.errors import UnsupportedError, add_origin_note, bad_type, bad_value, check_int
from ..pipe.fence import Fence
from ..pipe.state import BlitImage, BlitInfo, Box, RtBlendState, SamplerState, ScissorState
from ..tgsi.texture_api import TexRequest
from ..util.format import FormatDesc, depth_layout, depth_to_word, try_describe
from ..util.fp32 import fma32
from .resource import Resource
from .sampler import BoundView, TextureBindings

F32 = np.float32

# Box coordinates beyond this are refused: the rectangle's corners then stay
# inside the rasterizer's guard band and every fixed-point product is exact.
COORD_LIMIT = 1 << 20
# A unit of a blit job covers about this many destination pixels.
UNIT_PIXELS = 1 << 17

_LAYERED = {
    TextureTarget.TEXTURE_1D_ARRAY,
    TextureTarget.TEXTURE_2D_ARRAY,
    TextureTarget.TEXTURE_CUBE,
    TextureTarget.TEXTURE_CUBE_ARRAY,
}
# sources drawn once (u_blitter's do_blits, first branch)
_FLAT = {TextureTarget.TEXTURE_1D, TextureTarget.TEXTURE_2D, TextureTarget.TEXTURE_RECT}
_TGSI_TARGET = {
    TextureTarget.TEXTURE_1D: "1D",
    TextureTarget.TEXTURE_2D: "2D",
    TextureTarget.TEXTURE_RECT: "RECT",
    TextureTarget.TEXTURE_3D: "3D",
    TextureTarget.TEXTURE_1D_ARRAY: "1D_ARRAY",
    TextureTarget.TEXTURE_2D_ARRAY: "2D_ARRAY",
}
_STENCIL_ONLY = {
    Format.Z24_UNORM_S8_UINT: Format.X24S8_UINT,
    Format.S8_UINT_Z24_UNORM: Format.S8X24_UINT,
    Format.Z32_FLOAT_S8X24_UINT: Format.X32_S8X24_UINT,
    Format.S8_UINT: Format.S8_UINT,
}
_BLEND_OVER = RtBlendState(
    blend_enable=True,
    rgb_func=BlendFunc.ADD,
    rgb_src_factor=BlendFactor.SRC_ALPHA,
    rgb_dst_factor=BlendFactor.INV_SRC_ALPHA,
    alpha_func=BlendFunc.ADD,
    alpha_src_factor=BlendFactor.SRC_ALPHA,
    alpha_dst_factor=BlendFactor.INV_SRC_ALPHA,
)


# ----------------------------------------------------------------------------
# Validation (both contexts, at the call)
# ----------------------------------------------------------------------------


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
    lay = res.levels[level]
    layered = res.target in _LAYERED or (is_dst and res.target == TextureTarget.TEXTURE_3D)
    zlo, zhi = min(box.z, box.z + box.depth), max(box.z, box.z + box.depth)
    if layered:
        if zlo < 0 or zhi > lay.layers:
            raise bad_value(
                f"{arg}.box",
                f"must keep its layers [z, z + depth) inside the level's {lay.layers}",
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
    from .objects import _check_bool

    return _check_bool(arg, v)


def _box_inside(res: Resource, level: int, box: Box) -> bool:
    lay = res.levels[level]
    return (
        box.width > 0
        and box.height > 0
        and box.depth > 0
        and box.x >= 0
        and box.y >= 0
        and box.z >= 0
        and box.x + box.width <= lay.width
        and box.y + box.height <= lay.height
        and box.z + box.depth <= lay.layers
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
                f"blits between {ns}- and {nd}-sample resources are not supported by numpipe"
            )
        if ns > 1 and scaled and filt == TexFilter.LINEAR:
            raise UnsupportedError(
                "scaled blits from a multisample resource with LINEAR filtering (a bilinear "
                "resolve) are not supported by numpipe; use NEAREST or an unscaled resolve"
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
            "are not supported by numpipe"
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
            f"blit to {ddesc.name} on {dst.target.name}: numpipe cannot write that format"
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
                "numpipe cannot sample that format"
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


# ----------------------------------------------------------------------------
# The blitter's rectangle
# ----------------------------------------------------------------------------


@dataclass
class _Layer:
    """What one destination layer of a blit draws: its set-up triangles and
    the texture request's constant parts."""

    dst_layer: int
    tris: Any  # setup.TriangleSet of the rectangle (texcoord plane in inputs[:, 0])
    layer_coord: float | None  # the source layer (array) or r (3D), a constant


@dataclass
class _Plan:
    """Everything a blit job's units share (built once, read by every worker)."""

    blit: Blit
    layers: list[_Layer]
    region: tuple[int, int, int, int]  # inclusive x0, y0, x1, y1 of the draw region
    view: BoundView | None  # the source as sampled
    stencil_view: BoundView | None
    sampler: SamplerState
    target: str  # TGSI target of the request
    use_txf: bool
    normalized: bool
    src_storage: np.ndarray
    dst_storage: np.ndarray
    fast_resolve: bool = False  # UNORM8 words averaged directly (see _resolve_rows)


def _f32div(a: float, b: float) -> F32:
    return F32(F32(a) / F32(b))


def _texcoords(b: Blit, use_txf: bool) -> tuple[F32, F32, F32, F32]:
    """get_texcoords' x1, y1, x2, y2 of the source box (normalized unless the
    texel-fetch path or a RECT source)."""
    s = b.src_box
    x1, y1, x2, y2 = s.x, s.y, s.x + s.width, s.y + s.height
    normalized = not use_txf and b.src.target != TextureTarget.TEXTURE_RECT and _samples(b.src) == 1
    if not normalized:
        return F32(x1), F32(y1), F32(x2), F32(y2)
    lay = b.src.levels[b.src_level]
    w, h = lay.width, lay.height
    return _f32div(x1, w), _f32div(y1, h), _f32div(x2, w), _f32div(y2, h)


def _use_txf(b: Blit, filt: TexFilter) -> bool:
    """u_blitter's choice of FLR + TXF: unscaled, nearest, the box inside the level."""
    if _scaled(b.src_box, b.dst_box) or filt != TexFilter.NEAREST:
        return False
    box = b.src_box
    x, y, z, w, h, d = box.x, box.y, box.z, box.width, box.height, box.depth
    if w < 0:
        x, w = x + w, -w
    if h < 0:
        y, h = y + h, -h
    if d < 0:
        z, d = z + d, -d
    lay = b.src.levels[b.src_level]
    depth = lay.layers
    return (
        0 <= x < lay.width
        and 0 <= y < lay.height
        and 0 <= z < depth
        and 0 < x + w <= lay.width
        and 0 < y + h <= lay.height
        and 0 < z + d <= depth
    )


def _rectangle(b: Blit, coords: tuple, layer: int, region: tuple, zw: tuple[F32, F32]) -> Any:
    """Set up the blitter's rectangle over ``b.dst_box`` on destination layer
    ``layer`` with texture coordinates ``coords`` (x1, y1, x2, y2) and the
    constant ``zw``: blitter_set_rectangle, the fan's two triangles, the
    draw module's clipper and llvmpipe's triangle setup."""
    lay = b.dst.levels[b.dst_level]
    W, H = lay.width, lay.height
    d = b.dst_box
    x1, y1, x2, y2 = d.x, d.y, d.x + d.width, d.y + d.height
    fw, fh = F32(W), F32(H)
    two, one = F32(2.0), F32(1.0)

    def ndc(v: int, size: F32) -> F32:
        return F32(F32(F32(v) / size) * two - one)

    nx1, nx2, ny1, ny2 = ndc(x1, fw), ndc(x2, fw), ndc(y1, fh), ndc(y2, fh)
    pos = np.array([[nx1, ny1, 0, 1], [nx2, ny1, 0, 1], [nx2, ny2, 0, 1], [nx1, ny2, 0, 1]], F32)
    s1, t1, s2, t2 = coords
    z, w = zw
    attrs = np.array([[[s1, t1, z, w]], [[s2, t1, z, w]], [[s2, t2, z, w]], [[s1, t2, z, w]]], F32)
    half = F32(0.5)
    scale = (F32(half * fw), F32(half * fh), F32(1.0))
    translate = (F32(half * fw), F32(half * fh), F32(0.0))
    win, oow = viewport_transform(pos, scale, translate)
    tris = np.array([[0, 1, 2], [0, 2, 3]], np.int64)
    prims = np.zeros(2, np.int64)
    if (np.abs(pos[:, :2]) > 1).any():
        planes, active = clip.plane_table(True, True, False, [])
        geo = clip.clip_triangles(
            pos, win, oow, attrs, tris, prims, planes=planes, active=active,
            interp=["linear"], flatshade_first=False, scale=scale, translate=translate,
        )  # fmt: skip
        win, oow, attrs, tris = geo.win, geo.oow, geo.attrs, geo.tris
    return setup_triangles(
        win, oow, tris, attrs, ["linear"], region=region,
        half_pixel_center=True, bottom_edge_rule=True,
    )  # fmt: skip


def _region(b: Blit) -> tuple[int, int, int, int] | None:
    lay = b.dst.levels[b.dst_level]
    x0, y0, x1, y1 = 0, 0, lay.width - 1, lay.height - 1
    if b.scissor is not None:
        mx, my, Mx, My = b.scissor
        x0, y0, x1, y1 = max(x0, mx), max(y0, my), min(x1, Mx - 1), min(y1, My - 1)
    if x0 > x1 or y0 > y1:
        return None
    return x0, y0, x1, y1


def _view(res: Resource, storage: np.ndarray, desc: FormatDesc, level: int) -> BoundView:
    """util_blitter_default_src_texture: one level, every layer, cubes as 2D arrays."""
    target = res.target
    if target in (TextureTarget.TEXTURE_CUBE, TextureTarget.TEXTURE_CUBE_ARRAY):
        target = TextureTarget.TEXTURE_2D_ARRAY
    layers = res.levels[level].layers
    return BoundView(
        resource=res,
        storage=storage,
        desc=desc,
        target=target,
        swizzle=(0, 1, 2, 3),
        first_level=level,
        last_level=level,
        first_layer=0,
        last_layer=layers - 1,
        buf_offset=0,
        buf_size=0,
    )


def plan_blit(b: Blit) -> _Plan | None:
    """Build what the job's units share (driver thread); None: nothing to draw."""
    region = _region(b)
    if region is None:
        return None
    src, sdesc = b.src, b.src_desc
    filt = b.filter
    if b.src_desc.is_stencil or not _scaled(b.src_box, b.dst_box):
        filt = TexFilter.NEAREST
    use_txf = _use_txf(b, filt) and _samples(src) == 1
    view_target = _view(src, src.storage, sdesc, b.src_level).target
    coords = _texcoords(b, use_txf)
    layers: list[_Layer] = []
    dbox, sbox = b.dst_box, b.src_box
    zero = F32(0.0)
    if src.target in _FLAT:
        layers.append(_Layer(dbox.z, _rectangle(b, coords, dbox.z, region, (zero, zero)), None))
    else:
        src_depth = abs(sbox.depth)
        step = F32(F32(src_depth) / F32(dbox.depth))
        center = (
            F32(0.5 / dbox.depth * src_depth) if src.target == TextureTarget.TEXTURE_3D else zero
        )
        if sbox.depth < 0:
            step, center = -step, -center
        for i in range(dbox.depth):
            src_z = F32(F32(F32(i) * step) + center)
            layer = F32(F32(sbox.z) + src_z)
            if view_target == TextureTarget.TEXTURE_3D:
                lcoord = layer if use_txf else F32(layer / F32(src.levels[b.src_level].layers))
                zw = (lcoord, zero)
            elif view_target == TextureTarget.TEXTURE_1D_ARRAY:
                lcoord = layer
                zw = (zero, zero)
            else:  # 2D arrays (and cube maps as 2D arrays)
                lcoord = layer
                zw = (layer, zero)
            c = coords
            if view_target == TextureTarget.TEXTURE_1D_ARRAY:
                c = (coords[0], layer, coords[2], layer)
            layers.append(_Layer(dbox.z + i, _rectangle(b, c, dbox.z + i, region, zw), lcoord))
    normalized = not use_txf and src.target != TextureTarget.TEXTURE_RECT and _samples(src) == 1
    sampler = SamplerState(
        wrap_s=TexWrap.CLAMP_TO_EDGE,
        wrap_t=TexWrap.CLAMP_TO_EDGE,
        wrap_r=TexWrap.CLAMP_TO_EDGE,
        min_img_filter=filt,
        mag_img_filter=filt,
        min_mip_filter=MipFilter.NONE,
        normalized_coords=normalized,
    )
    src_storage = src.storage
    dst_storage = b.dst.storage
    stencil_view = None
    view = None
    if b.kind == "color" or b.write_depth:
        view = _view(src, src_storage, sdesc, b.src_level)
    if b.write_stencil:
        sd = try_describe(_STENCIL_ONLY[sdesc.format])
        stencil_view = _view(src, src_storage, sd, b.src_level)  # type: ignore[arg-type]
    return _Plan(
        fast_resolve=_fast_resolve(b),
        blit=b,
        layers=[ly for ly in layers if ly.tris.count],
        region=region,
        view=view,
        stencil_view=stencil_view,
        sampler=sampler,
        target=_TGSI_TARGET[view_target],
        use_txf=use_txf,
        normalized=normalized,
        src_storage=src_storage,
        dst_storage=dst_storage,
    )


# ----------------------------------------------------------------------------
# Rasterizing the rectangle (a few triangles) over a band of rows
# ----------------------------------------------------------------------------


def cover_rows(ts: Any, ya: int, yb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The pixels of rows [ya, yb) that the triangles cover, over their
    bounding box: (row numbers, column numbers, the covering triangle of each
    pixel or -1)."""
    b = ts.bbox
    y0 = max(int(b[:, 1].min()), ya)
    y1 = min(int(b[:, 3].max()), yb - 1)
    x0 = int(b[:, 0].min())
    x1 = int(b[:, 2].max())
    if y0 > y1 or x0 > x1:
        return None
    ys = np.arange(y0, y1 + 1, dtype=np.int64)
    xs = np.arange(x0, x1 + 1, dtype=np.int64)
    owner = np.full((ys.size, xs.size), -1, np.int8)
    for t in range(ts.count):
        covered = None
        for e in range(3):
            dx = int(ts.dcdx[t, e]) << 8
            dy = int(ts.dcdy[t, e]) << 8
            edge = (int(ts.c[t, e]) + dy * ys)[:, None] - (dx * xs)[None, :]
            inside = edge > 0
            covered = inside if covered is None else covered & inside
        owner[covered] = t
    return ys, xs, owner


def interpolate(
    ts: Any, slot: int, chans: list[int], ys: np.ndarray, xs: np.ndarray, owner: np.ndarray
) -> list[np.ndarray]:
    """Each channel's value at every covered pixel, as llvmpipe's fragment
    shader interpolates a linear input: ``fma(dady, y, fma(dadx, x, a0))``
    (float32 with single roundings; x, y the integer pixel coordinates)."""
    fx = xs.astype(np.float64)[None, :]
    fy = ys.astype(np.float64)[:, None]
    out = []
    for ch in chans:
        v = np.zeros(owner.shape, F32)
        for t in range(ts.count):
            sel = owner == t
            if not sel.any():
                continue
            a0, dadx, dady = (ts.inputs[t, slot, k, ch] for k in range(3))
            row = fma32(F32(dadx), fx, F32(a0))  # (1, w)
            val = fma32(F32(dady), fy, row)  # (h, w)
            np.copyto(v, val, where=sel)
        out.append(v)
    return out


# ----------------------------------------------------------------------------
# The job
# ----------------------------------------------------------------------------


class BlitJob:
    """A blit on the worker pool: units are row bands of destination layers
    (see the module docstring for the ordering)."""

    def __init__(self, plan: _Plan, label: str = "blit") -> None:
        self.plan = plan
        self.fence = Fence(label=label)
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self.on_complete: list[Any] = []
        b = plan.blit
        x0, y0, x1, y1 = plan.region
        width = x1 - x0 + 1
        rows = max(1, UNIT_PIXELS // max(1, width))
        self.units: list[tuple[int, int, int]] = []  # (layer index, row a, row b)
        self.snapshot = b.src is b.dst and b.src_level == b.dst_level
        for li, _ in enumerate(plan.layers):
            for ya in range(y0, y1 + 1, rows):
                self.units.append((li, ya, min(ya + rows, y1 + 1)))
        self._src_copy: np.ndarray | None = None

    def unit_count(self) -> int:
        if not self.units:
            return 0
        return 1 if self.snapshot else len(self.units)

    def run_unit(self, unit: int, worker: int) -> None:
        if self.snapshot:
            # source and destination share a level: read a copy, one unit
            plan = dataclasses.replace(self.plan)
            store = plan.src_storage.copy()
            plan.src_storage = store
            if plan.view is not None:
                plan.view = dataclasses.replace(plan.view, storage=store)
            if plan.stencil_view is not None:
                plan.stencil_view = dataclasses.replace(plan.stencil_view, storage=store)
            for li, ya, yb in self.units:
                _run_band(plan, li, ya, yb)
            return
        li, ya, yb = self.units[unit]
        _run_band(self.plan, li, ya, yb)

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        add_origin_note(exc, f"a blit worker (unit {unit})")
        with self._lock:
            self.errors.append(exc)

    def complete(self) -> None:
        for cb in self.on_complete:
            try:
                cb(self)
            except BaseException as exc:  # pragma: no cover - defensive
                self.unit_failed(-1, exc)
        self.fence.signal()


class CopyJob(BlitJob):
    """A blit that is a resource_copy_region (one unit: a byte copy)."""

    def __init__(self, blit: Blit, label: str = "blit copy") -> None:
        self.blit = blit
        self.fence = Fence(label=label)
        self.errors = []
        self._lock = threading.Lock()
        self.on_complete = []
        self.src_storage = blit.src.storage
        self.dst_storage = blit.dst.storage

    def unit_count(self) -> int:
        return 1

    def run_unit(self, unit: int, worker: int) -> None:
        b = self.blit
        s, d = b.src_box, b.dst_box
        for k in range(_samples(b.src)):  # (lp_resource_copy_ms: every sample)
            sv = b.src.level_view(b.src_level, s.z, s.depth, storage=self.src_storage, sample=k)
            sv = sv[:, s.y : s.y + s.height, s.x : s.x + s.width].copy()
            dv = b.dst.level_view(b.dst_level, d.z, d.depth, storage=self.dst_storage, sample=k)
            dv[:, d.y : d.y + d.height, d.x : d.x + d.width] = sv


def _fast_resolve(b: Blit) -> bool:
    """An unscaled, unflipped resolve between the same 4 x 8-bit UNORM format,
    inside both levels, with nothing masked, scissored or blended: every
    pixel is the average of its source samples, computed on words."""
    from .scene import make_color_target

    d, s = b.dst_box, b.src_box
    return (
        b.samples_mode == "resolve"
        and b.kind == "color"
        and b.src_desc.format == b.dst_desc.format
        and make_color_target(b.src, b.src_level, 0, b.src.storage, b.src_desc).kind == "unorm8"
        and (s.width, s.height, s.depth) == (d.width, d.height, d.depth)
        and _box_inside(b.src, b.src_level, s)
        and _box_inside(b.dst, b.dst_level, d)
        and b.mask & 0xF == 0xF
        and b.scissor is None
        and not b.window_rects
        and not b.window_include
        and not b.alpha_blend
    )


# fl32(k / 255) for every byte: the UNORM8 texel as TXF returns it
_UNORM8 = (np.arange(256, dtype=F32) * F32(1.0 / 255)).astype(F32)


def _resolve_rows(plan: _Plan, li: int, ya: int, yb: int) -> None:
    """The blitter's resolve (util_make_fs_msaa_resolve: the samples summed
    in float, times 1/N, stored as UNORM8) on whole words: a pixel whose
    samples are one word keeps it (the float arithmetic gives the same bytes
    back for every byte value), the others go through the float sums."""
    b = plan.blit
    d, s = b.dst_box, b.src_box
    dz = plan.layers[li].dst_layer
    sz = s.z + (dz - d.z)
    rows = slice(ya - d.y + s.y, yb - d.y + s.y)
    cols = slice(s.x, s.x + s.width)
    n = _samples(b.src)
    words = [
        b.src.typed_view(np.uint32, 1, b.src_level, sz, storage=plan.src_storage, sample=k)[
            rows, cols
        ]
        for k in range(n)
    ]
    out = b.dst.typed_view(np.uint32, 1, b.dst_level, dz, storage=plan.dst_storage)[
        ya:yb, d.x : d.x + d.width
    ]
    same = words[0] == words[1]
    for w in words[2:]:
        same &= words[0] == w
    np.copyto(out, words[0], where=same)
    if same.all():
        return
    ys, xs = np.nonzero(~same)
    total = None
    for w in words:
        v = np.take(_UNORM8, w[ys, xs][:, None].view(np.uint8))  # (m, 4) floats
        total = v if total is None else (total + v).astype(F32)
    mean = (total * F32(1.0 / n)).astype(F32)
    from ..util.format import float_to_unorm

    out[ys, xs] = float_to_unorm(mean, 8).view(np.uint32)[:, 0]


def _window_mask(b: Blit, ys: np.ndarray, xs: np.ndarray) -> np.ndarray | None:
    """Pixels the window rectangles let through (None: all)."""
    if not b.window_rects and not b.window_include:
        return None
    inside = np.zeros((ys.size, xs.size), bool)
    for mx, my, Mx, My in b.window_rects:
        inside |= ((ys >= my) & (ys < My))[:, None] & ((xs >= mx) & (xs < Mx))[None, :]
    return inside if b.window_include else ~inside


def _run_band(plan: _Plan, li: int, ya: int, yb: int) -> None:
    b = plan.blit
    if plan.fast_resolve:
        _resolve_rows(plan, li, ya, yb)
        return
    layer = plan.layers[li]
    ts = layer.tris
    cov = cover_rows(ts, ya, yb)
    if cov is None:
        return
    ys, xs, owner = cov
    alive = owner >= 0
    win = _window_mask(b, ys, xs)
    if win is not None:
        alive &= win
    if not alive.any():
        return
    lanes = np.nonzero(alive.reshape(-1))[0]
    n = int(lanes.size)
    chans = [0, 1]
    s, t = (v.reshape(-1)[lanes] for v in interpolate(ts, 0, chans, ys, xs, owner))
    py = np.broadcast_to(ys[:, None], alive.shape).reshape(-1)[lanes]
    px = np.broadcast_to(xs[None, :], alive.shape).reshape(-1)[lanes]
    mode = b.samples_mode
    ns, nd = _samples(b.src), _samples(b.dst)

    def fetch(sample: int | None) -> tuple[Any, Any]:
        values = stencil = None
        if plan.view is not None:
            values = _sample(plan, plan.view, layer, s, t, n, sample)
        if plan.stencil_view is not None:
            stencil = _sample(plan, plan.stencil_view, layer, s, t, n, sample)[0]
        return values, stencil

    if mode == "resolve":  # util_make_fs_msaa_resolve: sum the samples, times 1/N
        values = None
        for k in range(ns):
            v, _ = fetch(k)
            values = v if values is None else [np.add(a, c, dtype=F32) for a, c in zip(values, v)]
        values = [(v * F32(1.0 / ns)).astype(F32) for v in values]
        writes = [(0, values, None)]
    elif mode == "per_sample":
        writes = [(k, *fetch(k)) for k in range(nd)]
    else:
        values, stencil = fetch(0 if mode == "sample0" else None)
        writes = [(k, values, stencil) for k in range(nd)]  # (replicate: every sample)
    for sample, values, stencil in writes:
        if b.kind == "color":
            _write_color(plan, layer.dst_layer, py, px, values, sample)
        else:
            z = values[0] if values else None
            _write_zs(plan, layer.dst_layer, py, px, z, stencil, sample)


def _sample(
    plan: _Plan, view: BoundView, layer: _Layer, s, t, n: int, sample: int | None = None
) -> list[np.ndarray]:
    """The blitter's texture instruction for ``n`` pixels (``sample``: the
    texel fetch of that sample of a multisample source)."""
    target = plan.target
    units = TextureBindings([view], [plan.sampler])
    fields: dict[str, Any] = {}
    lc = layer.layer_coord
    if sample is not None:
        # util_make_fs_blit_msaa_* / _msaa_resolve: FLR, F2I, clamp to the
        # level, TXF of the sample
        lay = view.resource.levels[view.first_level]
        fields["s"] = np.clip(np.floor(s), 0, lay.width - 1).astype(np.int32)
        fields["t"] = np.clip(np.floor(t), 0, lay.height - 1).astype(np.int32)
        if target == "2D_ARRAY":
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        req = TexRequest(
            op="fetch", unit=0, sampler=0, target=target + "_MSAA", n=n,
            sample=np.full(n, sample, np.int32), **fields,
        )  # fmt: skip
        return [np.asarray(c) for c in units.execute(req)]
    if plan.use_txf:
        # FLR of the coordinates the shader's write mask covers, F2I of all
        xi = np.floor(s).astype(np.int32)
        fields["s"] = xi
        if target in ("1D_ARRAY",):
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        elif target != "1D":
            fields["t"] = np.floor(t).astype(np.int32)
        if target == "3D":
            fields["r"] = np.full(n, int(np.floor(F32(lc))), np.int32)
        elif target == "2D_ARRAY":
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        fields["lod"] = np.zeros(n, np.int32)
        req = TexRequest(op="fetch", unit=0, sampler=0, target=target, n=n, **fields)
    else:
        fields["s"] = s
        if target == "1D_ARRAY":
            fields["layer"] = np.full(n, F32(lc), F32)
        elif target != "1D":
            fields["t"] = t
        if target == "3D":
            fields["r"] = np.full(n, F32(lc), F32)
        elif target == "2D_ARRAY":
            fields["layer"] = np.full(n, F32(lc), F32)
        req = TexRequest(op="sample", unit=0, sampler=0, target=target, n=n, lod=F32(0.0), **fields)
    return [np.asarray(c) for c in units.execute(req)]


class _WriteState:
    """What workers.fragment.write_color reads of a fragment state."""

    blend_color = (0.0, 0.0, 0.0, 0.0)


def _write_color(
    plan: _Plan, layer: int, py, px, values: list[np.ndarray], sample: int = 0
) -> None:
    from workers.fragment import write_color

    from .scene import make_color_target

    b = plan.blit
    target = make_color_target(
        b.dst, b.dst_level, layer, plan.dst_storage, desc=b.dst_desc, sample=sample
    )
    colormask = b.mask & int(Mask.RGBA)
    rt = _BLEND_OVER if b.alpha_blend else RtBlendState()
    rt = dataclasses.replace(rt, colormask=colormask)
    n = py.size
    if b.src_desc.is_integer:
        ints = np.stack([np.broadcast_to(v, (n,)) for v in values]).astype(np.int64)
        if b.src_desc.is_signed_integer and not b.dst_desc.is_signed_integer:
            ints = np.maximum(ints, 0)  # the blitter's IMAX(x, 0)
        elif b.dst_desc.is_signed_integer and not b.src_desc.is_signed_integer:
            ints = np.minimum(ints & 0xFFFFFFFF, 0x7FFFFFFF)  # UMIN(x, 2**31 - 1)
        color = (ints & 0xFFFFFFFF).astype(np.uint32).view(F32)
    else:
        color = np.stack([np.broadcast_to(np.asarray(v, F32), (n,)) for v in values])
    write_color(target, (py, px), False, None, color, rt, _WriteState())


def _write_zs(plan: _Plan, layer: int, py, px, z, stencil, sample: int = 0) -> None:
    b = plan.blit
    res = b.dst
    layout = depth_layout(b.dst_desc.format)
    raw = res.level_view(b.dst_level, layer, 1, storage=plan.dst_storage, sample=sample)[0]
    if layout.split:
        if b.write_depth:
            zview = raw[..., 0:4].view(np.float32)[..., 0]
            zview[py, px] = np.asarray(z, np.float32)
        if b.write_stencil:
            raw[py, px, 4] = np.asarray(stencil).astype(np.uint8)
        return
    words = res.typed_view(
        layout.word, 1, b.dst_level, layer, storage=plan.dst_storage, sample=sample
    )
    old = words[py, px].astype(np.uint64)
    keep = (1 << (8 * layout.word.itemsize)) - 1
    new = np.zeros(py.size, np.uint64)
    if layout.z_float:
        if b.write_depth:
            words[py, px] = np.asarray(z, np.float32)
        return
    if b.write_depth and layout.z_bits:
        keep &= ~layout.z_mask
        new |= np.asarray(depth_to_word(layout, np.asarray(z, np.float32))).astype(np.uint64)
    if b.write_stencil and layout.s_bits:
        keep &= ~layout.s_mask
        sv = np.asarray(stencil).astype(np.uint64) & np.uint64((1 << layout.s_bits) - 1)
        new |= sv << np.uint64(layout.s_shift)
    words[py, px] = ((old & np.uint64(keep)) | new).astype(layout.word)


# ----------------------------------------------------------------------------
# generate_mipmap: util_gen_mipmap's blits
# ----------------------------------------------------------------------------


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
    layers = resource.levels[base].layers
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
        src, dst = resource.levels[level - 1], resource.levels[level]
        if is_3d:
            sbox = Box(0, 0, 0, src.width, src.height, src.layers)
            dbox = Box(0, 0, 0, dst.width, dst.height, dst.layers)
        else:
            n = lastl + 1 - first
            sbox = Box(0, 0, first, src.width, src.height, n)
            dbox = Box(0, 0, first, dst.width, dst.height, n)
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


# ----------------------------------------------------------------------------
# clear_texture: util_clear_texture's texel, filled like a blit's job
# ----------------------------------------------------------------------------


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
    resource.check_box(level, box)
    box = Box(*(int(v) for v in (box.x, box.y, box.z, box.width, box.height, box.depth)))
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
    return TextureClear(resource, level, box, clear_texel(resource.desc, raw.copy()))


class ClearTextureJob(BlitJob):
    """clear_texture on the worker pool (one unit: a fill of the box)."""

    def __init__(self, clear: TextureClear, label: str = "clear_texture") -> None:
        self.clear = clear
        self.fence = Fence(label=label)
        self.errors = []
        self._lock = threading.Lock()
        self.on_complete = []
        self.storage = clear.resource.storage

    def unit_count(self) -> int:
        return 1

    def run_unit(self, unit: int, worker: int) -> None:
        c = self.clear
        b = c.box
        for sample in range(_samples(c.resource)):
            view = c.resource.level_view(c.level, b.z, b.depth, storage=self.storage, sample=sample)
            view[:, b.y : b.y + b.height, b.x : b.x + b.width] = c.texel
