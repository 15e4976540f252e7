"""Run a blit or mipmap case (tests/reference/blit_cases.py) through numpipe's Gallium API."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gallium import pipe

REF = Path(__file__).resolve().parent / "reference"
if str(REF) not in sys.path:
    sys.path.insert(0, str(REF))

from blit_cases import FORMATS, BlitCase, Image, gl_blit_to_pipe  # type: ignore[import-not-found]  # noqa: E402

TARGETS = {
    "2d": pipe.TextureTarget.TEXTURE_2D,
    "3d": pipe.TextureTarget.TEXTURE_3D,
    "2d_array": pipe.TextureTarget.TEXTURE_2D_ARRAY,
    "cube": pipe.TextureTarget.TEXTURE_CUBE,
}


def pipe_format(fmt: str) -> pipe.Format:
    return pipe.Format[FORMATS[fmt][2]]


def create(screen, ctx, img: Image, levels: int | None = None):
    """The texture of ``img`` with its data in the first ``levels`` levels (all)."""
    fmt = pipe_format(img.fmt)
    zs = img.fmt.startswith("depth")
    bind = pipe.Bind.SAMPLER_VIEW | (pipe.Bind.DEPTH_STENCIL if zs else 0)
    if screen.is_format_supported(fmt, TARGETS[img.target], 0, pipe.Bind.RENDER_TARGET):
        bind |= pipe.Bind.RENDER_TARGET
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=TARGETS[img.target],
            format=fmt,
            width0=img.width,
            height0=img.height,
            depth0=img.layers if img.target == "3d" else 1,
            array_size=1 if img.target == "3d" else img.layers,
            last_level=img.levels - 1,
            bind=bind,
        )
    )
    count = img.levels if levels is None else levels
    for level in range(count):
        w, h, d = img.level_size(level)
        data = img.level_data(level)
        if img.fmt == "depth24s8":
            # GL's UNSIGNED_INT_24_8 (z << 8 | s) as Z24_UNORM_S8_UINT words (s << 24 | z)
            data = (data >> np.uint32(8)) | ((data & np.uint32(0xFF)) << np.uint32(24))
        ctx.texture_subdata(
            res, level, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, w, h, d), np.ascontiguousarray(data)
        )
    return res


def read(ctx, res, img: Image, level: int) -> np.ndarray:
    """The level as the case's numpy layout (every layer)."""
    w, h, d = img.level_size(level)
    data, xfer = ctx.transfer_map(res, level, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, d))
    raw = np.array(data)
    ctx.transfer_unmap(xfer)
    like = img.level_data(level)
    out = raw.view(like.dtype).reshape(like.shape)
    if img.fmt == "depth24s8":
        out = ((out & np.uint32(0xFFFFFF)) << np.uint32(8)) | (out >> np.uint32(24))
    return out


def blit_info(case: BlitCase, src, dst) -> pipe.BlitInfo | None:
    p = gl_blit_to_pipe(case)
    if p is None:
        return None
    sc = p["scissor"]
    return pipe.BlitInfo(
        dst=pipe.BlitImage(
            dst, case.dst_level, pipe.Box(*p["dst_box"]), pipe.Format[p["dst_format"]]
        ),
        src=pipe.BlitImage(
            src, case.src_level, pipe.Box(*p["src_box"]), pipe.Format[p["src_format"]]
        ),
        mask=pipe.Mask[p["mask"]],
        filter=pipe.TexFilter.LINEAR if p["filter"] == "linear" else pipe.TexFilter.NEAREST,
        scissor_enable=sc is not None,
        scissor=pipe.ScissorState(*sc) if sc is not None else None,
    )


def run_blit(screen, ctx, case: BlitCase) -> np.ndarray:
    """The destination level after the case's blit."""
    src = create(screen, ctx, case.src)
    dst = create(screen, ctx, case.dst)
    info = blit_info(case, src, dst)
    if info is not None:
        ctx.blit(info)
    return read(ctx, dst, case.dst, case.dst_level)


def run_mipmap(screen, ctx, case) -> dict[str, np.ndarray]:
    """Every level after generate_mipmap of the case's texture (base level uploaded)."""
    img = case.image
    res = create(screen, ctx, img, levels=1)
    last_layer = 0 if img.target == "3d" else img.layers - 1
    ok = ctx.generate_mipmap(res, res.format, 0, img.levels - 1, 0, last_layer)
    assert ok is True
    return {f"{case.name}/{lv}": read(ctx, res, img, lv) for lv in range(img.levels)}


def texel_bytes(img: Image, texel: np.ndarray) -> np.ndarray:
    """A case's texel (GL layout) as the pipe format's bytes."""
    t = np.ascontiguousarray(texel)
    if img.fmt == "depth24s8":
        t = (t >> np.uint32(8)) | ((t & np.uint32(0xFF)) << np.uint32(24))
    return t.view(np.uint8)


def run_clear(screen, ctx, case) -> np.ndarray:
    """The level after clear_texture of the case's box."""
    res = create(screen, ctx, case.image)
    ctx.clear_texture(res, case.level, pipe.Box(*case.box), texel_bytes(case.image, case.texel))
    return read(ctx, res, case.image, case.level)
