"""The viewport transform: clip coordinates to window coordinates.

As draw_llvm does it for unclipped vertices: ``x_w = fma(x_c * (1/w), scale,
translate)`` in float32 (new vertices made by the clipper are transformed
there, in plain float32: gallium/draw/clip.py).  ``scale`` and ``translate``
are one viewport's or, for the vertices of a pass whose draws use different
viewports, one row per vertex.
"""

from __future__ import annotations

import numpy as np

from ..util.fp32 import F32, fma32
from ..util.ieee import ieee


@ieee
def viewport_transform(
    clip: np.ndarray, scale: tuple[float, float, float], translate: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Clip coords (V, 4) -> window (V, 3) and 1/w (V,), as draw_llvm does:
    ``x_w = fma(x_c * (1/w), scale, translate)``."""
    clip = np.asarray(clip, F32)
    # (w = 0, infinities and NaN make infinities and NaN here, dropped at setup)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        oow = (F32(1.0) / clip[:, 3]).astype(F32, copy=False)
        # x, y and z at once (elementwise: the same roundings as one column at a time)
        xyz = (clip[:, :3] * oow[:, None]).astype(F32, copy=False)
        return fma32(xyz, np.asarray(scale, F32), np.asarray(translate, F32)), oow
