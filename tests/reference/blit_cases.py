"""Blit and mipmap cases rendered by Mesa's llvmpipe (tools/make_blit_reference.py).

Each case is described once, here, in API-neutral terms: the textures (target,
format, size, contents from a seed), and the GL call --
``glBlitFramebuffer(src rect, dst rect, mask, filter)`` between one layer of
one level of each, or ``glGenerateMipmap``.  The generator runs the GL call
on llvmpipe (``LP_PERF=no_rast_linear``) and stores the destination texture's
bytes after it in ``tests/reference/blit/<family>.npz``; the tests make the
same textures through numpipe's Gallium API, issue the ``pipe_blit_info``
Mesa's state tracker derives from the GL call (:func:`gl_blit_to_pipe`, which
follows src/mesa/main/blit.c and ``_mesa_clip_blit``: the boxes are the
unclipped rectangles, the clipped destination becomes the scissor) or
``generate_mipmap``, and compare.

Texel data: ``Image.level_data(k)`` is ``(layers, height, width, channels)``
of the format's numpy type (uint8 for UNORM8, float16 / float32 for float
formats), or ``(layers, height, width)`` words for depth formats: uint16 for
"depth16", uint32 ``z24 << 8 | stencil`` for "depth24s8" (GL's
UNSIGNED_INT_24_8), float32 for "depth32f".  Layers are 3D slices, array
layers or cube faces (+X, -X, +Y, -Y, +Z, -Z); row 0 is GL's y = 0, which is
Gallium's row 0 of a user framebuffer too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

F32 = np.float32
HERE = Path(__file__).resolve().parent
DATA = HERE / "blit"

# format name -> (channels, numpy dtype of a channel or word, pipe format name)
FORMATS = {
    "rgba8": (4, np.uint8, "R8G8B8A8_UNORM"),
    "r8": (1, np.uint8, "R8_UNORM"),
    "rg8": (2, np.uint8, "R8G8_UNORM"),
    "rgba16f": (4, np.float16, "R16G16B16A16_FLOAT"),
    "rgba32f": (4, np.float32, "R32G32B32A32_FLOAT"),
    "r32f": (1, np.float32, "R32_FLOAT"),
    "rg32f": (2, np.float32, "R32G32_FLOAT"),
    "r16": (1, np.uint16, "R16_UNORM"),
    "rgba16": (4, np.uint16, "R16G16B16A16_UNORM"),
    "rgba8_snorm": (4, np.int8, "R8G8B8A8_SNORM"),
    "rgb10a2": (0, np.uint32, "R10G10B10A2_UNORM"),
    "rgb565": (0, np.uint16, "B5G6R5_UNORM"),
    "srgb8_a8": (4, np.uint8, "R8G8B8A8_SRGB"),
    "rgba8ui": (4, np.uint8, "R8G8B8A8_UINT"),
    "rgba16ui": (4, np.uint16, "R16G16B16A16_UINT"),
    "rgba8i": (4, np.int8, "R8G8B8A8_SINT"),
    "r32ui": (1, np.uint32, "R32_UINT"),
    "depth16": (0, np.uint16, "Z16_UNORM"),
    "depth24s8": (0, np.uint32, "Z24_UNORM_S8_UINT"),
    "depth32f": (0, np.float32, "Z32_FLOAT"),
}
# blit destinations of the random colour cases
DESTINATIONS = ("rgba8", "rgba32f", "r32f", "rg32f", "r8", "rg8", "rgba16f", "rgba16",
                "rgba8_snorm", "rgb10a2", "rgb565")  # fmt: skip
# the pipe format GL uses for a texture of an sRGB format without GL_FRAMEBUFFER_SRGB
LINEAR = {"R8G8B8A8_SRGB": "R8G8B8A8_UNORM"}


@dataclass
class Image:
    """A texture: ``layers`` are 3D slices, array layers or cube faces (6)."""

    target: str  # "2d", "3d", "2d_array", "cube"
    fmt: str
    width: int
    height: int
    layers: int = 1
    levels: int = 1
    seed: int = 0

    def level_size(self, level: int) -> tuple[int, int, int]:
        w = max(1, self.width >> level)
        h = max(1, self.height >> level)
        d = max(1, self.layers >> level) if self.target == "3d" else self.layers
        return w, h, d

    def level_data(self, level: int) -> np.ndarray:
        """The contents uploaded to ``level`` (deterministic from the seed)."""
        w, h, d = self.level_size(level)
        rng = np.random.default_rng(self.seed * 101 + level)
        chans, dt, _ = FORMATS[self.fmt]
        if self.fmt == "depth16":
            return rng.integers(0, 1 << 16, (d, h, w)).astype(np.uint16)
        if self.fmt == "depth24s8":
            z = rng.integers(0, 1 << 24, (d, h, w)).astype(np.uint32)
            s = rng.integers(0, 256, (d, h, w)).astype(np.uint32)
            return (z << 8) | s
        if self.fmt == "depth32f":
            return rng.random((d, h, w)).astype(np.float32)
        if chans == 0:  # packed words
            return rng.integers(0, np.iinfo(dt).max, (d, h, w), dtype=np.int64).astype(dt)
        if np.dtype(dt).kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(info.min, int(info.max) + 1, (d, h, w, chans)).astype(dt)
        # floats in [-0.25, 1.25): conversions to UNORM clamp on both sides
        return (rng.random((d, h, w, chans)) * 1.5 - 0.25).astype(dt)


@dataclass
class BlitCase:
    """``glBlitFramebuffer(src, dst, mask, filter)`` from one layer of a level
    of ``src`` into one layer of a level of ``dst`` (GL rectangles: x0, y0,
    x1, y1, either order)."""

    name: str
    src: Image
    dst: Image
    s: tuple[int, int, int, int]
    d: tuple[int, int, int, int]
    filter: str = "nearest"  # "nearest" / "linear"
    buffer: str = "color"  # "color", "depth", "stencil", "depth_stencil"
    src_level: int = 0
    dst_level: int = 0
    src_layer: int = 0
    dst_layer: int = 0
    srgb: bool = False  # GL_FRAMEBUFFER_SRGB enabled: sRGB formats convert


@dataclass
class MipmapCase:
    """``glGenerateMipmap`` of ``image`` (every level below the base one)."""

    name: str
    image: Image
    extra: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------
# What Mesa's state tracker hands the driver
# ----------------------------------------------------------------------------


def _clip_far(s0: int, s1: int, d0: int, d1: int, limit: int) -> tuple[int, int, int, int]:
    """clip_right_or_top: chop the destination at ``limit`` and the source in proportion."""
    if d1 > limit:
        t = F32(F32(limit - d0) / F32(d1 - d0))
        bias = F32(0.5) if s0 < s1 else F32(-0.5)
        return s0, s0 + int(F32(F32(t * F32(s1 - s0)) + bias)), d0, limit
    if d0 > limit:
        t = F32(F32(limit - d1) / F32(d0 - d1))
        bias = F32(-0.5) if s0 < s1 else F32(0.5)
        return s1 + int(F32(F32(t * F32(s0 - s1)) + bias)), s1, limit, d1
    return s0, s1, d0, d1


def _clip_near(s0: int, s1: int, d0: int, d1: int, limit: int) -> tuple[int, int, int, int]:
    """clip_left_or_bottom."""
    if d0 < limit:
        t = F32(F32(limit - d0) / F32(d1 - d0))
        bias = F32(0.5) if s0 < s1 else F32(-0.5)
        return s0 + int(F32(F32(t * F32(s1 - s0)) + bias)), s1, limit, d1
    if d1 < limit:
        t = F32(F32(limit - d1) / F32(d0 - d1))
        bias = F32(-0.5) if s0 < s1 else F32(0.5)
        return s0, s1 + int(F32(F32(t * F32(s0 - s1)) + bias)), d0, limit
    return s0, s1, d0, d1


def gl_clip(case: BlitCase) -> tuple | None:
    """``_mesa_clip_blit``: the clipped (src, dst) rectangles, or None when
    GL draws nothing."""
    sw, sh, _ = case.src.level_size(case.src_level)
    dw, dh, _ = case.dst.level_size(case.dst_level)
    sx0, sy0, sx1, sy1 = case.s
    dx0, dy0, dx1, dy1 = case.d
    for a0, a1, limit in ((dx0, dx1, dw), (dy0, dy1, dh), (sx0, sx1, sw), (sy0, sy1, sh)):
        if a0 == a1 or (a0 <= 0 and a1 <= 0) or (a0 >= limit and a1 >= limit):
            return None
    sx0, sx1, dx0, dx1 = _clip_far(sx0, sx1, dx0, dx1, dw)
    sy0, sy1, dy0, dy1 = _clip_far(sy0, sy1, dy0, dy1, dh)
    sx0, sx1, dx0, dx1 = _clip_near(sx0, sx1, dx0, dx1, 0)
    sy0, sy1, dy0, dy1 = _clip_near(sy0, sy1, dy0, dy1, 0)
    dx0, dx1, sx0, sx1 = _clip_far(dx0, dx1, sx0, sx1, sw)
    dy0, dy1, sy0, sy1 = _clip_far(dy0, dy1, sy0, sy1, sh)
    dx0, dx1, sx0, sx1 = _clip_near(dx0, dx1, sx0, sx1, 0)
    dy0, dy1, sy0, sy1 = _clip_near(dy0, dy1, sy0, sy1, 0)
    return (sx0, sy0, sx1, sy1), (dx0, dy0, dx1, dy1)


def gl_blit_to_pipe(case: BlitCase) -> dict | None:
    """The boxes, scissor, mask and filter of the ``pipe_blit_info`` that
    st_BlitFramebuffer makes of the case (None: nothing is blitted)."""
    clipped = gl_clip(case)
    if clipped is None:
        return None
    _, cd = clipped
    sx0, sy0, sx1, sy1 = case.s
    dx0, dy0, dx1, dy1 = case.d
    scissor = None
    if cd != (dx0, dy0, dx1, dy1):
        scissor = (min(cd[0], cd[2]), min(cd[1], cd[3]), max(cd[0], cd[2]), max(cd[1], cd[3]))
    if sy0 > sy1 and dy0 > dy1:
        sy0, sy1, dy0, dy1 = sy1, sy0, dy1, dy0
    if dx0 < dx1:
        dbx, dbw, sbx, sbw = dx0, dx1 - dx0, sx0, sx1 - sx0
    else:
        dbx, dbw, sbx, sbw = dx1, dx0 - dx1, sx1, sx0 - sx1
    if dy0 < dy1:
        dby, dbh, sby, sbh = dy0, dy1 - dy0, sy0, sy1 - sy0
    else:
        dby, dbh, sby, sbh = dy1, dy0 - dy1, sy1, sy0 - sy1
    mask = {"color": "RGBA", "depth": "Z", "stencil": "S", "depth_stencil": "ZS"}[case.buffer]
    formats = []
    for img in (case.src, case.dst):
        name = FORMATS[img.fmt][2]
        formats.append(name if case.srgb else LINEAR.get(name, name))
    return {
        "src_format": formats[0],
        "dst_format": formats[1],
        "src_box": (sbx, sby, case.src_layer, sbw, sbh, 1),
        "dst_box": (dbx, dby, case.dst_layer, dbw, dbh, 1),
        "scissor": scissor,
        "mask": mask,
        "filter": case.filter,
    }


def usable(case: BlitCase) -> bool:
    """Whether Mesa's clipping stays within its own assertions (degenerate
    rectangles whose clipped destination leaves the buffer are skipped)."""
    clipped = gl_clip(case)
    if clipped is None:
        return True
    (sx0, sy0, sx1, sy1), (dx0, dy0, dx1, dy1) = clipped
    sw, sh, _ = case.src.level_size(case.src_level)
    dw, dh, _ = case.dst.level_size(case.dst_level)
    return (
        all(0 <= v <= dw for v in (dx0, dx1))
        and all(0 <= v <= dh for v in (dy0, dy1))
        and all(0 <= v <= sw for v in (sx0, sx1))
        and all(0 <= v <= sh for v in (sy0, sy1))
        and dx0 != dx1
        and dy0 != dy1
    )


# ----------------------------------------------------------------------------
# The cases
# ----------------------------------------------------------------------------


def _rect(rng, size: int, overhang: int) -> tuple[int, int]:
    while True:
        a, b = (int(v) for v in rng.integers(-overhang, size + overhang + 1, 2))
        if a != b:
            return a, b


def color_cases() -> list[BlitCase]:
    """2D colour blits: every source format into every renderable one,
    scaled both ways, flipped, clipped, nearest and linear."""
    rng = np.random.default_rng(2023)
    sources = ["rgba8", "r8", "rg8", "rgba16f", "rgba32f", "r32f", "rg32f", "r16", "rgba16",
               "rgba8_snorm", "rgb10a2", "rgb565", "srgb8_a8"]  # fmt: skip
    cases = []
    fixed = [
        ("copy", (0, 0, 16, 12), (2, 3, 18, 15), "nearest"),
        ("up2_nearest", (0, 0, 8, 6), (0, 0, 16, 12), "nearest"),
        ("down2_nearest", (0, 0, 32, 24), (0, 0, 16, 12), "nearest"),
        ("down2_linear", (0, 0, 32, 24), (0, 0, 16, 12), "linear"),
        ("down3_nearest", (1, 2, 31, 23), (0, 0, 10, 7), "nearest"),
        ("up3_linear", (3, 1, 9, 8), (0, 0, 18, 21), "linear"),
        ("flip_x", (16, 0, 0, 12), (0, 0, 16, 12), "nearest"),
        ("flip_y_linear", (0, 12, 16, 0), (1, 1, 23, 19), "linear"),
        ("flip_both", (20, 20, 4, 2), (0, 0, 16, 18), "nearest"),
        ("dst_flipped", (0, 0, 16, 12), (16, 12, 0, 0), "linear"),
        ("overhang_src", (-5, -3, 25, 20), (0, 0, 20, 20), "linear"),
        ("overhang_dst", (0, 0, 16, 12), (-6, 4, 14, 30), "nearest"),
        ("overhang_dst_linear", (0, 0, 16, 12), (10, -7, 35, 18), "linear"),
        ("thin_row", (0, 5, 20, 6), (0, 0, 24, 9), "linear"),
    ]
    for i, (name, s, d, filt) in enumerate(fixed):
        src = Image("2d", "rgba8", 24, 24, seed=10 + i)
        dst = Image("2d", "rgba8", 24, 24, seed=40 + i)
        cases.append(BlitCase(name, src, dst, s, d, filt))
    i = 0
    for sf in sources:
        for df in DESTINATIONS:
            for _ in range(1):
                sw, sh = (int(v) for v in rng.integers(1, 33, 2))
                dw, dh = (int(v) for v in rng.integers(1, 33, 2))
                over = 0 if rng.random() < 0.6 else 4
                sx, sy = _rect(rng, sw, over), _rect(rng, sh, over)
                dx, dy = _rect(rng, dw, over), _rect(rng, dh, over)
                case = BlitCase(
                    f"r{i}_{sf}_{df}",
                    Image("2d", sf, sw, sh, seed=100 + i),
                    Image("2d", df, dw, dh, seed=200 + i),
                    (sx[0], sy[0], sx[1], sy[1]),
                    (dx[0], dy[0], dx[1], dy[1]),
                    "linear" if rng.random() < 0.5 else "nearest",
                )
                i += 1
                if usable(case):
                    cases.append(case)
    # integer formats: unsigned to unsigned, signed to signed (GL), nearest
    for j, (sf, df) in enumerate(
        [("rgba8ui", "rgba8ui"), ("rgba8ui", "rgba16ui"), ("rgba16ui", "rgba8ui"),
         ("r32ui", "rgba8ui"), ("rgba8i", "rgba8i"), ("rgba16ui", "r32ui")]
    ):  # fmt: skip
        cases.append(
            BlitCase(f"int{j}_{sf}_{df}", Image("2d", sf, 13, 9, seed=150 + j),
                     Image("2d", df, 17, 15, seed=160 + j), (13, 0, 0, 9), (1, 2, 17, 13))
        )  # fmt: skip
    # sRGB: decoded and encoded with GL_FRAMEBUFFER_SRGB, raw without
    for j, (sf, df, srgb) in enumerate(
        [("srgb8_a8", "srgb8_a8", True), ("srgb8_a8", "rgba32f", True),
         ("rgba32f", "srgb8_a8", True), ("rgba8", "srgb8_a8", True),
         ("srgb8_a8", "srgb8_a8", False)]
    ):  # fmt: skip
        cases.append(
            BlitCase(f"srgb{j}_{sf}_{df}_{int(srgb)}", Image("2d", sf, 16, 16, seed=170 + j),
                     Image("2d", df, 16, 16, seed=180 + j), (0, 0, 16, 16), (0, 0, 16, 16),
                     "nearest", srgb=srgb)
        )  # fmt: skip
        cases.append(
            BlitCase(f"srgb{j}_{sf}_{df}_{int(srgb)}_scaled", Image("2d", sf, 16, 16, seed=190 + j),
                     Image("2d", df, 16, 16, seed=195 + j), (0, 0, 16, 16), (1, 1, 12, 15),
                     "linear", srgb=srgb)
        )  # fmt: skip
    return cases


def depth_cases() -> list[BlitCase]:
    """Depth and stencil blits (GL: the same format on both sides, nearest)."""
    cases = []
    rects = [
        ((0, 0, 16, 16), (0, 0, 16, 16)),
        ((0, 0, 8, 8), (0, 0, 16, 16)),
        ((0, 0, 16, 16), (2, 1, 10, 9)),
        ((16, 0, 0, 16), (0, 3, 13, 16)),
        ((1, 15, 15, 1), (0, 0, 16, 16)),
        ((-4, -2, 20, 14), (0, 0, 16, 16)),
    ]
    for fmt, buffers in (
        ("depth16", ("depth",)),
        ("depth32f", ("depth",)),
        ("depth24s8", ("depth", "stencil", "depth_stencil")),
    ):
        for buf in buffers:
            for j, (s, d) in enumerate(rects):
                cases.append(
                    BlitCase(
                        f"{fmt}_{buf}_{j}",
                        Image("2d", fmt, 16, 16, seed=300 + j),
                        Image("2d", fmt, 16, 16, seed=400 + j),
                        s,
                        d,
                        "nearest",
                        buf,
                    )
                )
    return cases


def layer_cases() -> list[BlitCase]:
    """Blits from and into layers of 3D textures, arrays and cube maps, and
    between mip levels."""
    cases = []
    specs = [
        ("3d", "2d", 2, 0, (0, 0, 12, 10), (0, 0, 20, 20), "linear"),
        ("2d_array", "2d", 3, 0, (0, 0, 12, 10), (0, 0, 6, 5), "nearest"),
        ("cube", "2d", 4, 0, (0, 0, 12, 12), (2, 2, 22, 22), "linear"),
        ("2d", "3d", 0, 1, (0, 0, 12, 10), (0, 0, 12, 10), "nearest"),
        ("2d", "2d_array", 0, 2, (0, 0, 24, 24), (1, 1, 11, 9), "linear"),
        ("2d", "cube", 0, 5, (0, 0, 24, 24), (0, 12, 12, 0), "linear"),
        ("3d", "2d_array", 1, 3, (12, 0, 0, 10), (0, 0, 12, 10), "nearest"),
        ("cube", "cube", 1, 3, (0, 0, 12, 12), (3, 3, 9, 9), "linear"),
    ]
    for i, (st, dt, sl, dl, s, d, filt) in enumerate(specs):

        def image(target: str, seed: int) -> Image:
            if target == "2d":
                return Image("2d", "rgba8", 24, 24, seed=seed)
            if target == "cube":
                return Image("cube", "rgba8", 12, 12, 6, seed=seed)
            return Image(target, "rgba8", 12, 10, 4, seed=seed)

        cases.append(
            BlitCase(f"{st}_to_{dt}_{i}", image(st, 500 + i), image(dt, 600 + i), s, d, filt,
                     src_layer=sl, dst_layer=dl)
        )  # fmt: skip
    cases.append(
        BlitCase(
            "level1_to_level0",
            Image("2d", "rgba32f", 20, 14, levels=3, seed=700),
            Image("2d", "rgba8", 9, 13, levels=2, seed=701),
            (0, 0, 10, 7),
            (0, 0, 9, 13),
            "linear",
            src_level=1,
        )
    )
    return cases


def mipmap_cases() -> list[MipmapCase]:
    """glGenerateMipmap: odd sizes, every filterable colour format used here,
    2D, 3D, arrays and cube maps."""

    def full(w: int, h: int, d: int = 1, target: str = "2d") -> int:
        dims = (w, h, d) if target == "3d" else (w, h)
        return max(dims).bit_length()

    cases = []
    for i, (fmt, w, h) in enumerate(
        [("rgba8", 37, 23), ("rgba8", 64, 64), ("rgba8", 1, 17), ("r8", 19, 31), ("rg8", 15, 9),
         ("rgba16f", 21, 13), ("rgba32f", 29, 11), ("r32f", 7, 40), ("rg32f", 33, 5)]
    ):  # fmt: skip
        cases.append(
            MipmapCase(f"2d_{fmt}_{w}x{h}", Image("2d", fmt, w, h, 1, full(w, h), 800 + i))
        )
    cases.append(
        MipmapCase("3d_rgba8_9x7x5", Image("3d", "rgba8", 9, 7, 5, full(9, 7, 5, "3d"), 820))
    )
    cases.append(
        MipmapCase("3d_rgba32f_6x11x7", Image("3d", "rgba32f", 6, 11, 7, full(6, 11, 7, "3d"), 821))
    )
    cases.append(MipmapCase("array_rgba8_13x11x3", Image("2d_array", "rgba8", 13, 11, 3, 4, 822)))
    cases.append(MipmapCase("cube_rgba8_17", Image("cube", "rgba8", 17, 17, 6, 5, 823)))
    cases.append(MipmapCase("cube_rgba16f_10", Image("cube", "rgba16f", 10, 10, 6, 4, 824)))
    return cases


@dataclass
class ClearCase:
    """``glClearTexSubImage`` of a box of one level with one texel (the
    format's own bytes, ``Image.level_data`` layout: channels or a word)."""

    name: str
    image: Image
    level: int
    box: tuple[int, int, int, int, int, int]  # x, y, z, width, height, depth
    texel: np.ndarray


def clear_cases() -> list[ClearCase]:
    """clear_texture: colour formats (SNORM -128, a padding channel), depth
    and stencil (Z24 round trips), levels, layers."""

    def texel(fmt: str, values) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.asarray(values, FORMATS[fmt][1]).reshape(-1)

    cases = [
        ClearCase("rgba8", Image("2d", "rgba8", 13, 9, seed=900), 0, (2, 1, 0, 7, 5, 1),
                  texel("rgba8", [10, 200, 30, 255])),
        ClearCase("rgba8_snorm_min", Image("2d", "rgba8_snorm", 8, 8, seed=901), 0,
                  (0, 0, 0, 8, 3, 1), texel("rgba8_snorm", [-128, -127, 0, 127])),
        ClearCase("rgba32f_level1", Image("2d", "rgba32f", 16, 12, levels=3, seed=902), 1,
                  (1, 1, 0, 5, 4, 1), texel("rgba32f", [0.25, -1.5, 3.0, 1.0])),
        ClearCase("rgba16f", Image("2d", "rgba16f", 8, 8, seed=903), 0, (0, 0, 0, 8, 8, 1),
                  texel("rgba16f", [0.5, 65504.0, -2.0, 1.0])),
        ClearCase("rgb565", Image("2d", "rgb565", 9, 9, seed=904), 0, (3, 3, 0, 4, 4, 1),
                  texel("rgb565", [0xBEEF])),
        ClearCase("rgb10a2", Image("2d", "rgb10a2", 9, 9, seed=905), 0, (0, 3, 0, 9, 4, 1),
                  texel("rgb10a2", [0xDEADBEEF])),
        ClearCase("array_layers", Image("2d_array", "rgba8", 6, 6, 4, seed=906), 0,
                  (1, 1, 1, 4, 4, 2), texel("rgba8", [1, 2, 3, 4])),
        ClearCase("3d_slices", Image("3d", "rg32f", 5, 4, 6, seed=907), 0, (0, 0, 2, 5, 4, 3),
                  texel("rg32f", [7.5, -0.125])),
        ClearCase("depth16", Image("2d", "depth16", 8, 8, seed=908), 0, (0, 0, 0, 6, 6, 1),
                  texel("depth16", [12345])),
        ClearCase("depth32f", Image("2d", "depth32f", 8, 8, seed=909), 0, (2, 2, 0, 6, 6, 1),
                  texel("depth32f", [0.3])),
    ]  # fmt: skip
    rng = np.random.default_rng(910)
    for j in range(6):
        z = int(rng.integers(0, 1 << 24))
        word = np.uint32(z << 8 | int(rng.integers(0, 256)))
        cases.append(
            ClearCase(f"depth24s8_{j}", Image("2d", "depth24s8", 8, 8, seed=911 + j), 0,
                      (1, 0, 0, 7, 8, 1), texel("depth24s8", [word]))
        )  # fmt: skip
    return cases


FAMILIES = {
    "blit_color": color_cases,
    "blit_depth": depth_cases,
    "blit_layers": layer_cases,
}


def load(family: str) -> dict[str, np.ndarray]:
    with np.load(DATA / f"{family}.npz") as data:
        return {k: data[k] for k in data.files}
