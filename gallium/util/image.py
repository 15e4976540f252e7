"""Reading back surfaces and writing PNGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..pipe.enums import Transfer
from ..pipe.state import Box


def read_texture_rgba8(ctx: Any, resource: Any, level: int = 0) -> np.ndarray:
    """Map level 0, layer 0 of an RGBA8/BGRA8 texture and return a (H, W, 4) RGBA copy."""
    from .format import describe, unpack_rgba

    lay = resource.level_layout(level)
    data, xfer = ctx.transfer_map(
        resource, level, Transfer.READ, Box(0, 0, 0, lay.width, lay.height, 1)
    )
    try:
        raw = np.array(data[0])
    finally:
        ctx.transfer_unmap(xfer)
    desc = describe(resource.format)
    if desc.name == "R8G8B8A8_UNORM":
        return raw
    rgba = unpack_rgba(desc, raw)
    return np.rint(np.clip(rgba, 0, 1) * 255).astype(np.uint8)


def write_png(path: str | Path, rgba: np.ndarray, flip: bool = True) -> Path:
    """Write an RGBA8 image.  ``flip`` puts NDC y = +1 at the top, as a viewer expects
    (numpipe's row 0 is NDC y = -1, like a GL framebuffer)."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    img = np.ascontiguousarray(rgba[::-1] if flip else rgba)
    Image.fromarray(img, "RGBA").save(path)
    return path
