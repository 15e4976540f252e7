"""The viewport transform: clip coordinates to window coordinates.

Two forms, as Mesa's draw module has them for llvmpipe:

* fused (``fused=True``): draw_llvm's, in the vertex shader's generated code,
  for a vertex shader that writes no VIEWPORT_INDEX and is followed by
  neither tessellation nor a geometry shader: ``x_w = fma(x_c * (1/w),
  scale, translate)`` in float32;
* plain (``fused=False``): draw_pt_post_vs.c's (draw_cliptest_tmp.h), which
  runs instead when a geometry or tessellation evaluation shader is the last
  vertex stage or the vertex shader writes VIEWPORT_INDEX: ``x_w = x_c * (1/w)
  * scale + translate``, each operation rounded to float32 (as the clipper
  transforms the vertices it makes: gallium/draw/clip.py).

``scale`` and ``translate`` are one viewport's or, for vertices that take
different viewports (a pass's draws, or viewport arrays: gallium/draw/layers.py),
one row per vertex.
"""

from __future__ import annotations

import numpy as np

from ..util.fp32 import F32, fma32
from ..util.ieee import ieee


@ieee
def viewport_transform(
    clip: np.ndarray, scale: object, translate: object, fused: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Clip coords (V, 4) -> window (V, 3) and 1/w (V,)."""
    clip = np.asarray(clip, F32)
    # (w = 0, infinities and NaN make infinities and NaN here, dropped at setup)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        oow = (F32(1.0) / clip[:, 3]).astype(F32, copy=False)
        # x, y and z at once (elementwise: the same roundings as one column at a time)
        xyz = (clip[:, :3] * oow[:, None]).astype(F32, copy=False)
        s = np.asarray(scale, F32)
        t = np.asarray(translate, F32)
        if fused:
            return fma32(xyz, s, t), oow
        return ((xyz * s).astype(F32, copy=False) + t).astype(F32, copy=False), oow


def depth_range(scale_z: float, translate_z: float, clip_halfz: bool) -> tuple[float, float]:
    """A viewport's depth range, where fragments clamp with depth clamping
    on (util_viewport_zmin_zmax in float32, then within [0, 1], where
    llvmpipe always restricts depth)."""
    s, t = F32(scale_z), F32(translate_z)
    near = t if clip_halfz else F32(t - s)
    far = F32(t + s)
    lo = float(min(max(min(near, far), 0.0), 1.0))
    hi = float(min(max(max(near, far), 0.0), 1.0))
    return lo, hi
