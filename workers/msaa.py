"""Multisampled rasterization: a scene's draws, one pass per sample.

Theory of operation
-------------------
A multisampled scene keeps, for every colour and depth/stencil surface, one
target per sample (``Scene.cbufs``/``zsbuf`` are sample 0's,
``Scene.sample_cbufs``/``sample_zs`` the others'; a resource stores its
samples one after another, as llvmpipe does).  llvmpipe rasterizes a
multisampled triangle by evaluating each edge function at every sample
position of a pixel (lp_rast_tri_tmp.h: ``c + sy * dcdy - sx * dcdx``), shades
the pixel once (or once per sample), then depth-tests, blends and writes each
sample with its own coverage.  Since samples never interact, this is the
same as drawing the scene once per sample into that sample's targets with
the triangles' edge constants moved to the sample position -- which is what
:func:`draw_samples` does, band by band, through the ordinary rasterizer
(``workers.raster._draw``) and all its paths:

* coverage: pass *s* tests ``c - dcdx * ox_s + dcdy * oy_s`` with ``(ox_s,
  oy_s)`` the sample's fixed-point offset from the point the set-up edge
  functions evaluate (:func:`sample_tris`); bounding boxes were widened to
  every pixel a sample of which the triangle may cover (context, at setup);
* depth: the depth plane moved to the sample position;
* shading: at the pixel centre (the set-up planes), so every pass computes
  the same colour for a pixel; with per-sample shading (``set_min_samples``
  > 1, or a shader reading SAMPLEID / SAMPLEPOS / SAMPLE-located inputs) the
  SAMPLE-located inputs and gl_FragCoord are taken at the sample;
* CENTROID inputs: at the lowest covered sample of a partly covered pixel
  (its coverage from the edge functions of every sample and the sample
  mask), else at the centre (:func:`centroid_offsets`);
* per-sample state: pass *s* is skipped when bit *s* of the sample mask is
  clear; alpha-to-coverage keeps sample *s* where alpha > s / N, a SAMPLEMASK
  output where its bit *s* is set (``raster._fragment_ops``).

Occlusion counts add up over the passes: samples passed, as llvmpipe counts
them.  A pass touches only its own sample's targets, and a band is still
done by one worker, so the bytes do not depend on worker count or order.
Without multisample rasterization (``rasterizer.multisample`` off) every pass
uses the pixel centre: each sample gets the single-sample result.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from gallium.draw.primitives import TriangleSet
from gallium.draw.setup import FIXED_ONE
from gallium.numpipe.scene import DrawCmd

F32 = np.float32
F64 = np.float64

# Standard sample positions within the pixel (x right, y down from its corner):
# llvmpipe's 4x (lp_rast.c lp_sample_pos_4x) and the D3D / GL standard 2x.
POSITIONS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.75, 0.75), (0.25, 0.25)),
    4: ((0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)),
}


def sample_position(count: int, index: int) -> tuple[float, float]:
    """Where sample ``index`` of ``count`` lies in a pixel (get_sample_position)."""
    return POSITIONS[max(1, count)][index]


def fixed_position(count: int, index: int) -> tuple[int, int]:
    """The sample position in 1/256 pixel (lp_scene.c: util_iround(pos * 256))."""
    x, y = sample_position(count, index)
    return round(x * FIXED_ONE), round(y * FIXED_ONE)


@dataclass(frozen=True)
class SampleState:
    """The multisample state a draw's fragments are processed with."""

    samples: int  # the framebuffer's
    multisample: bool  # rasterizer multisample: coverage and depth per sample position
    mask: int  # set_sample_mask, limited to the framebuffer's samples
    per_sample: bool  # the shader runs once per sample
    alpha_to_coverage: bool
    alpha_to_one: bool
    pixel_offset: float  # where set-up planes and edge functions evaluate (0.5: centre)
    mask_output: int | None = None  # SAMPLEMASK output register
    sample_slots: frozenset[int] = frozenset()  # inputs taken at the sample when per sample
    centroid_slots: frozenset[int] = frozenset()  # CENTROID inputs (multisampled only)

    def offset(self, s: int) -> tuple[float, float]:
        """Sample ``s``'s offset from the set-up evaluation point, in pixels."""
        if not self.multisample:
            return (0.5 - self.pixel_offset, 0.5 - self.pixel_offset)
        x, y = sample_position(self.samples, s)
        return (x - self.pixel_offset, y - self.pixel_offset)

    def fixed_offset(self, s: int) -> tuple[int, int]:
        """The same in 1/256 pixel (exact: positions are multiples of 1/16)."""
        ox, oy = self.offset(s)
        return round(ox * FIXED_ONE), round(oy * FIXED_ONE)


def _shift_plane(p: np.ndarray, dx: float, dy: float, axis: int = 1) -> np.ndarray:
    """Planes ``p`` ([a0, dadx, dady] on ``axis``) moved to evaluate at the
    set-up point plus (dx, dy) pixels."""
    out = p.copy()
    a0, ddx, ddy = (np.take(p, k, axis=axis).astype(F64) for k in range(3))
    idx = [slice(None)] * p.ndim
    idx[axis] = 0
    out[tuple(idx)] = (a0 + ddx * dx + ddy * dy).astype(F32)
    return out


def sample_tris(ts: TriangleSet, ms: SampleState, s: int) -> TriangleSet:
    """The triangles as pass ``s`` rasterizes them: edge constants and depth
    moved to sample ``s`` (and the per-sample inputs, when shading per sample)."""
    sx, sy = ms.fixed_offset(s)
    dx, dy = ms.offset(s)
    out = dataclasses.replace(ts)  # (a new object: the per-set caches start empty)
    out.c = ts.c - ts.dcdx * sx + ts.dcdy * sy
    out.z = _shift_plane(ts.z, dx, dy)
    # multisampled shading is at the pixel centre (lp_bld_interp: x + 0.5)
    # even when the set-up planes evaluate at the corner (half_pixel_center off)
    centre = 0.5 - ms.pixel_offset if ms.multisample else 0.0
    if centre:
        out.inputs = _shift_plane(ts.inputs, centre, centre, axis=2)
        out.oow = _shift_plane(ts.oow, centre, centre)
    if ms.per_sample and ms.sample_slots:
        inputs = out.inputs.copy()
        for slot in ms.sample_slots:
            inputs[:, slot] = _shift_plane(ts.inputs[:, slot], dx, dy)
        out.inputs = inputs
        out.oow_sample = _shift_plane(ts.oow, dx, dy)  # type: ignore[attr-defined]
    # the edge constants of every sample, for SAMPLEMASK inputs
    consts = []
    for k in range(ms.samples):
        kx, ky = ms.fixed_offset(k)
        consts.append(ts.c - ts.dcdx * kx + ts.dcdy * ky)
    out.sample_c = np.stack(consts)  # type: ignore[attr-defined]
    return out


_lock = threading.Lock()


def sample_command(cmd: DrawCmd, s: int) -> DrawCmd:
    """Draw command ``cmd`` as pass ``s`` runs it (made once; the bins are shared)."""
    cache = cmd.__dict__.get("_samples")
    if cache is None:
        with _lock:
            cache = cmd.__dict__.setdefault("_samples", {})
    got = cache.get(s)
    if got is None:
        ms = cmd.state.msaa
        state = dataclasses.replace(cmd.state, sample=s)
        got = DrawCmd(state, [], sample_tris(cmd.tris, ms, s), cmd.band_start, cmd.band_tris)
        got.boxes = cmd.boxes
        with _lock:
            got = cache.setdefault(s, got)
    return got


def sample_scene(scene: Any, s: int) -> Any:
    """``scene`` with sample ``s``'s targets as its framebuffer (made once)."""
    if s == 0:
        return scene
    views = scene.__dict__.get("_sample_views")
    if views is None:
        with _lock:
            views = scene.__dict__.setdefault("_sample_views", {})
    got = views.get(s)
    if got is None:
        import copy

        got = copy.copy(scene)
        got.cbufs = scene.sample_cbufs[s - 1]
        got.zsbuf = scene.sample_zs[s - 1]
        with _lock:
            got = views.setdefault(s, got)
    return got


def draw_samples(scene: Any, cmd: DrawCmd, ids: np.ndarray, y0: int, y1: int, band: int) -> None:
    """Rasterize a draw's triangles ``ids`` in a band, once per sample."""
    from .raster import _draw

    ms: SampleState = cmd.state.msaa
    for s in range(scene.samples):
        if ms is not None and not ms.mask >> s & 1:
            continue
        if ms is None:
            _draw(sample_scene(scene, s), cmd, ids, y0, y1, band)
        else:
            _draw(sample_scene(scene, s), sample_command(cmd, s), ids, y0, y1, band)


def coverage_mask(ts: Any, tri: np.ndarray, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """The samples of each lane's pixel its triangle covers (SAMPLEMASK input):
    bit k set when every edge is positive at sample k (``ts.sample_c``)."""
    sc = ts.sample_c  # (N, M, 3)
    dx = ts.dcdx[tri] << 8  # (n, 3)
    dy = ts.dcdy[tri] << 8
    mask = np.zeros(tri.shape, np.int64)
    for k in range(sc.shape[0]):
        e = sc[k][tri] - dx * px[:, None] + dy * py[:, None]
        mask |= (e > 0).all(axis=1).astype(np.int64) << k
    return mask


def centroid_offsets(ms: SampleState, cover: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where CENTROID inputs are interpolated, as (x, y) offsets in pixels
    from the pixel centre, for pixels whose samples ``cover`` covers
    (lp_bld_interp.c calc_centroid_offsets): the lowest covered sample of a
    partly covered pixel, the centre of a fully covered (or uncovered) one.
    None when every pixel is at its centre."""
    n = ms.samples
    full = (1 << n) - 1
    partial = (cover != 0) & (cover != full)
    if not partial.any():
        return None
    lowest = np.array([0] + [(m & -m).bit_length() - 1 for m in range(1, full + 1)], np.intp)
    pos = np.array(POSITIONS[n], F32) - F32(0.5)
    k = lowest[cover & full]
    ox = np.where(partial, pos[k, 0], F32(0.0))
    oy = np.where(partial, pos[k, 1], F32(0.0))
    return ox, oy
